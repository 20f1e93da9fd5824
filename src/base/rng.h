/* rng.h — the seeded pseudo-random draws of the simulator and the switch
 * emulator: xoshiro256**, seeded through splitmix64, so the same seed gives
 * the same draws on every machine. One generator per purpose (a stream),
 * so that turning one kind of draw on does not move the others.
 */
#ifndef TAPLESS_RNG_H
#define TAPLESS_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
	double spare;		/* the second gaussian of a polar pair */
	bool has_spare;
};

/* Seed stream `stream` of `seed` (stream 0 is the seed alone). */
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform on [0, 1). */
double rng_unit(struct rng *r);
/* True with probability p (never when p <= 0). */
bool rng_chance(struct rng *r, double p);
/* Exponential of the mean (0 when mean <= 0). */
double rng_exp(struct rng *r, double mean);
/* Standard normal (Marsaglia's polar method). */
double rng_gauss(struct rng *r);
/* Normal, truncated at 4 SD (drawn again beyond). */
double rng_tnormal(struct rng *r, double mean, double sd);

#endif
