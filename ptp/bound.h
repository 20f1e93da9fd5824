/* bound.h — a host's clock error over time, from its sync journal: for any
 * moment, whether the host was in sync and how far from PTP time its clock
 * could be. The correlator asks it for both ends of every one-way sample.
 *
 * bound_open() reads the journal as it is; lookups are binary searches, so
 * callers may ask in any order (a day at one sample a second is 86,400
 * samples per clock, 2 MB in memory). A moment is judged by the last
 * sample of the stamp's clock at or before it: a sample older than max_age
 * (the daemon stopped, the journal has a gap) makes the moment out of
 * sync, since nothing vouches for it.
 *
 * A journal that is still written (tapless correlate --follow) is followed
 * with bound_refresh(), which reads only what was appended, and through
 * rotations; bound_forget() drops the samples no later moment needs, so
 * memory stays bounded over days.
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
	BOUND_HOLDOVER,		/* nothing measured since the last fresh
				 * sample: its bound, grown by the drift
				 * limit, still holds */
};

/* A holdover sample's bound grows by this much per second when its clock
 * had no "rules" event giving the drift limit (a journal of an older
 * writer, edited by hand): tapless-syncd's largest default. */
#define BOUND_DEFAULT_DRIFT_PPB 100000

/* A bound_*() message: journal_open()'s, or the path and why. */
#define BOUND_ERRBUF JOURNAL_ERRBUF

/* Read path to its end. Bad lines are skipped and counted
 * (bound_bad_lines(); the first one's message in bound_error()); a last
 * line without its newline is not read (bound_torn()). The file stays
 * open for bound_refresh(). Returns 0, or -errno with err naming the
 * path when it cannot be read. */
int bound_open(struct bound **out, const char *path, int64_t max_age_ns,
	       char err[BOUND_ERRBUF]);
void bound_destroy(struct bound *b);

/* Read what was appended to the journal since the last read, from where
 * that one ended: a last line without its newline (the writer was writing
 * it) is read again, whole or still torn, and bad lines are counted as by
 * bound_open(). When path names another file than the one held (the
 * writer rotated it: journal_writer_rotate()), the one held is read to its
 * end first (a rotated or removed file still can be); when the one held is
 * shorter than what was read of it (truncated), it is dropped. Either way
 * the file at path is then read from its beginning, header included, and
 * held instead. Samples already read are kept, and samples older
 * than the newest of their clock are sorted in: they judge the moments
 * from their time on, as bound_open() of the whole file would have them.
 * Returns the number of samples read (>= 0), or -errno with err naming
 * the path when it cannot be opened now (-ENOENT between a removal and
 * the next file: a later refresh picks that one up), the samples read
 * from the file held being kept all the same. */
int bound_refresh(struct bound *b, char err[BOUND_ERRBUF]);

/* Free the samples that no lookup at or after before_ns needs: of each
 * clock's samples at or before it, only the last is kept. Lookups before
 * before_ns are then judged wrongly (as before the journal began). The
 * utc_offset event is not a sample and keeps its effect. */
void bound_forget(struct bound *b, int64_t before_ns);

/* State of clock ("sys", "phc0") at t (UTC ns). When the journal has no
 * samples for that clock but has exactly one clock, that one is used; a
 * journal with no samples at all makes every moment out of sync.
 * *bound_ns is set for BOUND_IN_SYNC and BOUND_HOLDOVER, or -1 when the
 * sample gave none. In holdover the bound is the sample's grown from the
 * sample's time to t at the clock's drift limit (the drift_ppb of the
 * clock's last "rules" event before the sample, tapless-journal(5)): the
 * clock ran on unmeasured for all of it. */
enum bound_state bound_at(const struct bound *b, const char *clock, int64_t t,
			  int64_t *bound_ns);

/* bound_at(), the bound split in two: *fresh_ns is what the last fresh
 * sample said (the clock's own error when it was measured), *bound_ns -
 * *fresh_ns what holdover added since. In sync both are the sample's
 * bound; in holdover *fresh_ns is that of the in-sync sample the holdover
 * began from (the holdover sample's own when the journal, as kept, has
 * none). Both -1 when *bound_ns would be. */
enum bound_state bound_at_split(const struct bound *b, const char *clock,
				int64_t t, int64_t *bound_ns,
				int64_t *fresh_ns);

/* For a clock phc2sys keeps on a reference (journal state "phc2sys": a
 * PHC on the PTP port's, the system clock on a PHC), its offset from that
 * reference at t, clock - reference, as phc2sys's readings say: on the
 * line through the fresh in-sync readings either side of t, or the last
 * one's when there is none after. Such a reading is of two clocks of one
 * host, exact to its width, so a stamp of the clock less it is on the
 * reference's time. *part_ns is what the correction takes out of
 * bound_at()'s bound at t: syncd's chained bound holds the last reading's
 * |offset| whole, and a point on the line is off the reading by how far
 * the line moved, so |offset| less that (negative when the line moved
 * further: the bound grows), never more than the bound. Returns 0, or
 * -ENOENT when the clock is not kept so, or not in sync at t. */
int bound_offset_at(const struct bound *b, const char *clock, int64_t t,
		    int64_t *offset_ns, int64_t *part_ns);

/* Whether the journal has samples of clock by that name (bound_at() takes
 * a journal's only clock for any name: this does not). */
bool bound_has_clock(const struct bound *b, const char *clock);

/* The time (UTC ns) of the newest sample of clock, the same clock as
 * bound_at() would take: 0 with *t_ns set, or -ENOENT when there is none.
 * A journal whose newest sample stays old has stopped growing. */
int bound_newest(const struct bound *b, const char *clock, int64_t *t_ns);

/* The times (UTC ns) of the oldest and the newest sample held, over every
 * clock: 0 with *first_ns and *last_ns set, or -ENOENT when there is none.
 * A moment outside [first, last + max_age] is out of sync whatever the
 * clock: the journal does not cover it. */
int bound_span(const struct bound *b, int64_t *first_ns, int64_t *last_ns);

/* The TAI - UTC offset the journal recorded (the last utc_offset event
 * read), in seconds: 0 with *s set, or -ENOENT. */
int bound_utc_offset(const struct bound *b, int *s);

/* Samples read since open, over every refresh and file (samples of clocks
 * beyond the 16 kept not counted), and samples held now (after forgets). */
unsigned bound_samples(const struct bound *b);
unsigned bound_kept(const struct bound *b);
unsigned bound_events(const struct bound *b);
/* Samples read that were in holdover. */
unsigned bound_holdover_samples(const struct bound *b);
unsigned bound_bad_lines(const struct bound *b);
bool bound_torn(const struct bound *b);
const char *bound_error(const struct bound *b);	/* "" when none */
const char *bound_host(const struct bound *b);	/* from the header */

#endif
