/* backoff.c — see backoff.h. */
#include "export/backoff.h"

void backoff_init(struct backoff *b, int64_t min_ns, int64_t max_ns,
		  uint64_t seed)
{
	b->min_ns = min_ns > 0 ? min_ns : 1;
	b->max_ns = max_ns > b->min_ns ? max_ns : b->min_ns;
	b->ceil_ns = b->min_ns;
	rng_seed(&b->rng, seed, 0);
}

int64_t backoff_next(struct backoff *b)
{
	int64_t half = b->ceil_ns / 2;
	/* Uniform on [0, ceil - half]: for spans of seconds (2^33 ns at
	 * most) the modulo's bias is below 2^-30, nothing to a pause. */
	uint64_t span = (uint64_t)(b->ceil_ns - half) + 1;
	int64_t pause = half + (int64_t)(rng_next(&b->rng) % span);

	b->ceil_ns = b->ceil_ns > b->max_ns / 2 ? b->max_ns : b->ceil_ns * 2;
	return pause;
}

void backoff_reset(struct backoff *b)
{
	b->ceil_ns = b->min_ns;
}
