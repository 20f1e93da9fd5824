/* bound.h — a host's clock error over time, from its sync journal: for any
 * moment, whether the host was in sync and how far from PTP time its clock
 * could be. The correlator asks it for both ends of every one-way sample.
 *
 * The journal is read whole at open (a day at one sample a second is 86,400
 * samples per clock, a few megabytes in memory); lookups are binary searches, so callers may ask in any
 * order. A moment is judged by the last sample of the stamp's clock at or
 * before it: a sample older than max_age (the daemon stopped, the journal
 * has a gap) makes the moment out of sync, since nothing vouches for it.
 */
#ifndef TAPLESS_BOUND_H
#define TAPLESS_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "ptp/journal.h"

struct bound;

enum bound_state {
	BOUND_UNKNOWN,		/* no journal, or nothing about this clock */
	BOUND_IN_SYNC,
	BOUND_OUT_OF_SYNC,
};

/* Read path. Bad lines are skipped and counted (bound_bad_lines(); the
 * first one's message in bound_error()). Returns 0, or -errno with errbuf
 * naming the path when it cannot be read. */
int bound_open(struct bound **out, const char *path, int64_t max_age_ns,
	       char errbuf[JOURNAL_ERRBUF]);
void bound_destroy(struct bound *b);

/* State of clock ("sys", "phc0") at t (UTC ns). When the journal has no
 * samples for that clock but has exactly one clock, that one is used; a
 * journal with no samples at all makes every moment out of sync.
 * *bound_ns is set for BOUND_IN_SYNC, or -1 when the sample gave none. */
enum bound_state bound_at(const struct bound *b, const char *clock, int64_t t,
			  int64_t *bound_ns);

/* The TAI - UTC offset the journal recorded (event utc_offset), in
 * seconds: 0 with *s set, or -ENOENT. */
int bound_utc_offset(const struct bound *b, int *s);

unsigned bound_samples(const struct bound *b);
unsigned bound_events(const struct bound *b);
unsigned bound_bad_lines(const struct bound *b);
bool bound_torn(const struct bound *b);
const char *bound_error(const struct bound *b);	/* "" when none */
const char *bound_host(const struct bound *b);	/* from the header */

#endif
