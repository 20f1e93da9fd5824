/* rng.c — see rng.h. */
#include "base/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	r->has_spare = false;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

bool rng_chance(struct rng *r, double p)
{
	return p > 0 && rng_unit(r) < p;
}

double rng_exp(struct rng *r, double mean)
{
	return mean > 0 ? -mean * log1p(-rng_unit(r)) : 0;
}

double rng_gauss(struct rng *r)
{
	double u, v, q, m;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	do {
		u = 2 * rng_unit(r) - 1;
		v = 2 * rng_unit(r) - 1;
		q = u * u + v * v;
	} while (q >= 1 || q == 0);
	m = sqrt(-2 * log(q) / q);
	r->spare = v * m;
	r->has_spare = true;
	return u * m;
}

double rng_tnormal(struct rng *r, double mean, double sd)
{
	double z;

	do
		z = rng_gauss(r);
	while (fabs(z) > 4);
	return mean + sd * z;
}
