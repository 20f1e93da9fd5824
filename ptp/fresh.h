/* fresh.h — whether ptp4l measured a clock since the sample before.
 *
 * ptp4l's data sets keep their last figures while nothing is measured:
 * 0/0 before the first Sync, the figures from before an outage while the
 * master is gone or its Sync does not arrive. A sample may count toward
 * sync only when it rests on a new measurement; this module judges that
 * from ptp4l's own evidence, one sample after the other (tapless-syncd(8),
 * "Fresh measurements"):
 *
 *   - TIME_STATUS_NP's ingress time of the last Sync the servo took moved
 *     since the sample before, and is not 0 (its placeholder, and what it
 *     resets to after a step);
 *   - a mean path delay is measured (not 0, its placeholder);
 *   - after the port began to follow (start, restart, relock),
 *     TIME_STATUS_NP's offset moved once from what it held then: ptp4l
 *     moves the ingress time before it can compute an offset, so until
 *     then the offset is a placeholder or from before;
 *   - without TIME_STATUS_NP (a ptp4l that refuses it), the followed
 *     port's Sync counter (and Follow_Up counter, two-step) of
 *     PORT_STATS_NP rose instead.
 *
 * Pure computation: no I/O, no allocation.
 */
#ifndef TAPLESS_FRESH_H
#define TAPLESS_FRESH_H

#include <stdbool.h>
#include <stdint.h>

/* What one sample's answers held. */
struct fresh_input {
	int port;		/* the port that follows a master, -1: none */
	bool have_ts;		/* TIME_STATUS_NP answered */
	int64_t ingress_ns, ts_offset_ns;
	bool ts_refused;	/* ptp4l does not know TIME_STATUS_NP */
	bool have_stats;	/* PORT_STATS_NP of that port answered */
	uint64_t rx_sync, rx_follow_up;
	bool have_cds;		/* CURRENT_DATA_SET answered */
	int64_t delay_ns;
};

/* What is carried from one sample to the next. Zeroed, then
 * fresh_reset(), to start (or after ptp4l restarted). */
struct fresh {
	int64_t prev_ingress;
	bool prev_ingress_known;
	int64_t offset_base;
	bool offset_base_known, offset_live;
	uint64_t prev_rx_sync, prev_rx_fup;
	int prev_rx_port;
	int rx_moved;		/* the counters rose since the sample before:
				 * 1, 0, or -1 not known */
};

/* A new ptp4l: its offsets start from its placeholder. */
void fresh_reset(struct fresh *f);

/* Judge one sample's answers (in sample order): true when they rest on a
 * measurement taken since the sample before. A sample with no port
 * following only sets where to count from. */
bool fresh_judge(struct fresh *f, const struct fresh_input *in);

#endif
