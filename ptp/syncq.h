/* syncq.h — the sync quality of one clock: from its samples (offset from
 * the master, mean path delay, port state, and whether they rest on a new
 * measurement), whether it is in sync and how far from PTP time it can be,
 * and statistics over the last minutes.
 *
 * The bound of a sample is what the journal promises the correlator:
 *
 *   |offset| + 3 SD(last SYNCQ_SPREAD fresh offsets)   what the servo left
 *   + asymmetry_allowance + asymmetry_fraction * delay   what PTP cannot see
 *
 * A free-running clock (measured, never steered) moves along a line: with
 * SYNCQ_FIT_MIN fresh offsets or more, the first two terms are the line
 * fitted through them, at the newest (|value| + 3 standard errors of it),
 * plus what its slope adds in one sample interval. One reading's noise is
 * then not counted twice, once in |offset| and again in the SD.
 *
 * PTP measures offset assuming both directions take the same time; an
 * asymmetric path shifts the clock by half the difference, invisibly. The
 * worst case is the whole path delay (fraction 1); the default 0.1 takes the
 * directions to differ by at most a fifth, and an operator who calibrated
 * the path says so with asymmetry_allowance.
 *
 * Fresh or not in sync. A sample is fresh when ptp4l measured the clock
 * since the sample before (a new Sync went through its servo: the caller
 * decides, from ptp4l's own evidence). Only fresh offsets enter the spread
 * and only fresh samples count toward `settle`: sixteen copies of one stale
 * offset have an SD of zero, and would shrink the bound of a clock nobody
 * measures.
 *
 * A clock is in sync when its last sample is fresh, its port follows a
 * master (SLAVE; UNCALIBRATED too when free running, where the servo never
 * locks by design), the bound is within the threshold, and that has held
 * for `settle` fresh samples in a row since the last fault. A clock that is
 * itself the grandmaster is PTP time by definition: in sync, bound 0.
 *
 * Holdover. A sample that is not fresh, of a clock whose last fresh sample
 * was in sync, is in holdover: not in sync, with the bound
 *
 *   last fresh bound + drift_ppb * (now - time of the last fresh sample)
 *
 * which only grows until the next fresh sample (as fbclock's window of
 * uncertainty does). A holdover bound past the threshold is out of sync,
 * its bound still given. The port leaving SLAVE (the grandmaster gone)
 * keeps the holdover going: the clock runs on as it was steered. A fault
 * (syncq_reset(): a step, ptp4l restarted, the configuration reloaded)
 * ends it: nothing from before counts.
 */
#ifndef TAPLESS_SYNCQ_H
#define TAPLESS_SYNCQ_H

#include <stdbool.h>
#include <stdint.h>

#define SYNCQ_SPREAD 16		/* offsets the spread is taken over */
#define SYNCQ_FIT_MIN 8		/* free running: offsets a line needs */
#define SYNCQ_NONE INT64_MIN	/* a value not known (JOURNAL_NONE) */
/* A change of the mean path delay between two fresh measurements larger
 * than both of these is counted (syncq_delay_changes()): a re-routed path,
 * a new master, a congested switch. 100 ns is above a software-stamped
 * path's jitter from one Delay_Resp to the next; 10 % keeps long paths
 * quiet while the delay drifts. */
#define SYNCQ_DELAY_CHANGE_NS 100
#define SYNCQ_DELAY_CHANGE_PCT 10

struct syncq;

struct syncq_params {
	int64_t threshold_ns;	/* sync_threshold */
	int64_t asym_ns;	/* asymmetry_allowance */
	double asym_fraction;	/* asymmetry_fraction */
	bool free_running;
	unsigned settle;	/* good samples in a row before in sync */
	int64_t interval_ns;	/* between samples: sizes the 60-min ring */
	int64_t drift_ppb;	/* holdover: growth of the bound, ns per s */
};

enum syncq_state {
	SYNCQ_LOST,		/* no master, ptp4l down, port faulty */
	SYNCQ_CALIBRATING,	/* UNCALIBRATED */
	SYNCQ_FOLLOWING,	/* SLAVE */
	SYNCQ_GRANDMASTER,	/* this clock is the domain's grandmaster */
};

struct syncq_sample {
	int64_t ts_ns;
	enum syncq_state state;
	int64_t offset_ns;	/* or SYNCQ_NONE */
	int64_t delay_ns;	/* or SYNCQ_NONE */
	bool fresh;		/* offset and delay measured since the
				 * sample before (always for a grandmaster) */
};

/* What a sample was judged. */
struct syncq_verdict {
	bool in_sync;
	bool holdover;		/* not in sync; the grown bound holds */
	int64_t bound_ns;	/* SYNCQ_NONE when nothing can be promised */
	int64_t fresh_ns;	/* time of the last fresh in-sync sample the
				 * holdover grows from, or SYNCQ_NONE */
};

/* A clock's state as the PTP operator's monitoring names it (the values
 * of openshift_ptp_clock_state): derived from a verdict, never judged
 * anew. */
enum syncq_clock_state {
	SYNCQ_FREERUN = 0,	/* neither in sync nor in holdover */
	SYNCQ_LOCKED = 1,	/* in sync */
	SYNCQ_HOLDOVER = 2,	/* in holdover */
};

struct syncq_stats {
	uint64_t samples;	/* in the window */
	uint64_t in_sync;	/* of which in sync */
	uint64_t holdover;	/* of which in holdover */
	uint64_t measured;	/* with an offset */
	double offset_mean, offset_sd;
	int64_t offset_min, offset_max;
	double delay_mean, delay_sd;
	int64_t delay_min, delay_max;
	uint64_t delays;	/* with a delay */
	int64_t bound_max;	/* worst bound while in sync, or SYNCQ_NONE */
};

struct syncq *syncq_create(const struct syncq_params *p);
void syncq_destroy(struct syncq *q);

/* Judge s (in time order) into *v and keep it for the statistics. */
void syncq_add(struct syncq *q, const struct syncq_sample *s,
	       struct syncq_verdict *v);

/* A fault (ptp4l restarted, clock stepped): the spread starts over, the
 * clock needs `settle` fresh good samples again, and no holdover grows
 * from before. */
void syncq_reset(struct syncq *q);

/* Statistics of the samples in (now - span, now]. The ring holds 60
 * minutes at the configured interval; a longer span sees only that. */
void syncq_window(const struct syncq *q, int64_t now_ns, int64_t span_ns,
		  struct syncq_stats *st);

/* The state of a clock whose verdict says in_sync and holdover: LOCKED
 * when in sync, HOLDOVER when in holdover, FREERUN otherwise (nothing
 * measured yet, the master lost, out of sync, a holdover grown past the
 * threshold). The caller passes in_sync false when something since the
 * verdict denies it (tapless-syncd: ptp4l down or silent, links down). */
enum syncq_clock_state syncq_clock_state(bool in_sync, bool holdover);
/* "FREERUN", "LOCKED", "HOLDOVER". */
const char *syncq_clock_state_name(enum syncq_clock_state st);

/* Path delay changes seen by syncq_add() since syncq_create(): fresh
 * samples whose delay differs from the previous fresh delay by more than
 * SYNCQ_DELAY_CHANGE_NS and more than SYNCQ_DELAY_CHANGE_PCT percent of
 * it. A fault (syncq_reset()) does not clear the previous delay: the path
 * is the same after a step. */
uint64_t syncq_delay_changes(const struct syncq *q);

/* The last sample judged, and its verdict: false when there is none. */
bool syncq_last(const struct syncq *q, struct syncq_sample *s,
		struct syncq_verdict *v);

/* Derived clocks: a clock phc2sys keeps on a reference PHC that a ptp4l
 * steers (the system clock, or another PHC). No ptp4l reports on it, so it
 * is measured: each clock is read against CLOCK_REALTIME (phc_sys_offset(),
 * stamp/phc.h) and the readings are compared. Its samples go through
 * syncq_add() like any other (state SYNCQ_FOLLOWING, no delay; the
 * asymmetry terms do not apply, so its syncq has them 0); the verdict is
 * then chained to the reference's. Both steps are pure computation. */
struct syncq_reading {
	int64_t offset_ns;	/* PHC - CLOCK_REALTIME */
	int64_t window_ns;	/* the sys bracket it was read in: the true
				 * offset is within half of it */
};

/* The derived clock's offset from where phc2sys should hold it, and the
 * width the readings add to its bound:
 * - a PHC (own): offset own - ref, width ref.window/2 + own.window/2;
 * - the system clock (own NULL): a PHC keeps PTP's timescale (TAI), sys
 *   UTC, so sys belongs at ref PHC - (TAI - UTC): offset
 *   -ref.offset + utc_offset_s * 1e9, width ref.window/2.
 * Returns 0, or -EAGAIN for the system clock while TAI - UTC is not known
 * (utc_offset_s < 0): there is nothing to judge it against yet, and
 * *offset_ns, *width_ns are left as they were. */
int syncq_derived_offset(const struct syncq_reading *ref,
			 const struct syncq_reading *own, int utc_offset_s,
			 int64_t *offset_ns, int64_t *width_ns);

/* Chain the derived clock's verdict (*v as syncq_add() gave it) to its
 * reference's: it is as good as the reference plus its own reading, so the
 * bound becomes own + ref's + width_ns. A reference in holdover puts the
 * clock in holdover (not in sync). When the reference is neither in sync
 * nor in holdover, or the own bound is SYNCQ_NONE, nothing vouches for
 * the clock: out of sync, bound SYNCQ_NONE. A chained bound over
 * threshold_ns is out of sync (the bound is kept). Never makes an
 * out-of-sync clock in sync. */
void syncq_derived_bound(struct syncq_verdict *v,
			 const struct syncq_verdict *ref, int64_t width_ns,
			 int64_t threshold_ns);

#endif
