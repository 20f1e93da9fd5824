/* backoff.h — the pauses between attempts to reach a server that is down:
 * a ceiling that doubles from min to max, and each pause drawn at random
 * between half the ceiling and all of it ("equal jitter").
 *
 * The draw is why this exists: exporters restarted together (a host's
 * reboot, a fleet's deployment, the server coming back after an outage)
 * would otherwise knock at the same instants, 100 ms, 200 ms, 400 ms ...
 * after it, all of them together, for as long as it is down. Half the
 * ceiling is kept so that the pauses still grow: a server is never asked
 * more often than once per min/2. Seeded by the caller: a test gives a
 * fixed seed and gets the same pauses on every machine.
 */
#ifndef TAPLESS_BACKOFF_H
#define TAPLESS_BACKOFF_H

#include <stdint.h>

#include "base/rng.h"

struct backoff {
	int64_t min_ns, max_ns;
	int64_t ceil_ns;	/* the next pause's ceiling */
	struct rng rng;
};

/* Ceilings from min_ns (> 0) doubling to max_ns (>= min_ns). */
void backoff_init(struct backoff *b, int64_t min_ns, int64_t max_ns,
		  uint64_t seed);

/* The next pause, in [ceiling / 2, ceiling], and the ceiling doubled
 * (to max_ns at most). */
int64_t backoff_next(struct backoff *b);

/* The ceiling back to min_ns: the server answered. */
void backoff_reset(struct backoff *b);

#endif
