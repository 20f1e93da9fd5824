/* corr_traffic.h — the traffic as a second opinion on the clocks: the
 * correlator's own (corr_match.c feeds it every hop sample), apart so that
 * its arithmetic is tested on its own (tests/unit/test_corr_traffic.c).
 *
 * A one-way sample a→b is (b's RX stamp − a's TX stamp) = true delay +
 * (offset_b − offset_a), and no true delay is below its cable's. So over
 * a window, with d_ab the least one-way a→b less its cable and d_ba the
 * least b→a less its cable:
 *
 *	offset_b − offset_a ∈ [ −d_ba, +d_ab ]
 *
 * without PTP. Both sides assume the offset held over the window. The
 * journals claim |offset_b − offset_a| ≤ bound_a + bound_b; a window whose
 * traffic interval misses [−claim, +claim] (claim: the smallest bound sum
 * of its samples, the journals' tightest word in it) is flagged, and one
 * whose interval is empty (−d_ba > +d_ab: the samples themselves disagree,
 * as when a clock stepped in the window) is counted inconsistent. Around
 * each loop of three hosts the offsets sum to 0: a loop that cannot close
 * once each pair is narrowed to its journals' claim names the host whose
 * claims, left out, let it close.
 *
 * Memory: per pair of hosts a few open windows (the one being filled and
 * those samples may still come late to), at most CORR_TRAFFIC_KEEP flagged
 * windows in full and a histogram of widths; nothing per sample. A sample
 * costs O(1); closing a window costs O(pairs + loops), once per window.
 */
#ifndef TAPLESS_CORR_TRAFFIC_H
#define TAPLESS_CORR_TRAFFIC_H

#include <stdbool.h>
#include <stdint.h>

struct corr_traffic;
struct printer;

#define CORR_TRAFFIC_HOSTS 64	/* hosts at most (CORR_MAX_HOSTS) */
#define CORR_TRAFFIC_KEEP 100	/* flagged windows kept in full, per pair */
#define CORR_TRAFFIC_SLOTS 16	/* windows open at once, at most */

/* An interval of offset_b − offset_a in ns (a < b, the hosts' indexes). A
 * side without samples to bound it (no a→b sample bounds hi, no b→a one
 * lo) is absent: the interval is open that way. */
struct corr_traffic_iv {
	int64_t lo, hi;
	bool has_lo, has_hi;
};

/* [−d_ba, +d_ab] from the least one-way delays less their cables, each
 * side only when its direction had a sample. */
struct corr_traffic_iv corr_traffic_interval(bool have_ab, int64_t d_ab,
					     bool have_ba, int64_t d_ba);
/* Whether iv holds no offset at all (both sides, lo > hi). */
bool corr_traffic_empty(const struct corr_traffic_iv *iv);
bool corr_traffic_contains(const struct corr_traffic_iv *iv, int64_t v);
/* x + y (a side absent in either is absent in the sum), and −x. */
struct corr_traffic_iv corr_traffic_add(const struct corr_traffic_iv *x,
					const struct corr_traffic_iv *y);
struct corr_traffic_iv corr_traffic_neg(const struct corr_traffic_iv *x);
/* iv ∩ [−claim, +claim]; claim < 0 (no journal's word): iv itself. */
struct corr_traffic_iv corr_traffic_narrow(const struct corr_traffic_iv *iv,
					   int64_t claim);
/* By how much iv misses [−claim, +claim]: > 0 that many ns apart, <= 0
 * they meet. INT64_MIN when there is nothing to miss (claim < 0, or iv
 * open both ways). */
int64_t corr_traffic_miss(const struct corr_traffic_iv *iv, int64_t claim);

/* A loop of hosts x < y < z in one window: iv[0] of offset_y − offset_x,
 * iv[1] of offset_z − offset_y, iv[2] of offset_z − offset_x (each its
 * pair's interval, as the pair orders its hosts), claim[k] the pair's
 * journals' claim (−1: none). Around the loop iv[0] + iv[1] − iv[2]
 * must hold 0. */
struct corr_traffic_loop {
	bool closes_traffic;	/* it does, from the traffic alone */
	bool closes;		/* and with each pair narrowed to its claim */
	unsigned blame;		/* when not closes but closes_traffic: bit 0,
				 * 1, 2 for x, y, z, set when leaving that
				 * host's two pairs unnarrowed closes it */
};
void corr_traffic_loop_check(const struct corr_traffic_iv iv[3],
			     const int64_t claim[3],
			     struct corr_traffic_loop *out);

/* Windows of window_ns on the samples' timescale (aligned to multiples of
 * it); a sample may come up to late_ns after samples of later windows
 * (the matching window: a message waits that long for its peers) and
 * still count, within CORR_TRAFFIC_SLOTS windows; a later one is counted
 * as late. window_ns > 0. */
struct corr_traffic *corr_traffic_create(int64_t window_ns, int64_t late_ns);
void corr_traffic_destroy(struct corr_traffic *t);
/* One one-way sample from → to (host indexes < CORR_TRAFFIC_HOSTS,
 * different), from's TX stamp at ts: its one-way delay less the least its
 * path allows (cable, serialisation), and the sum of both hosts' clock
 * bounds (−1: unknown, out of sync, no journal). */
void corr_traffic_sample(struct corr_traffic *t, unsigned from, unsigned to,
			 int64_t ts, int64_t over_cable, int64_t bound);
/* The end of the input: every window still open is closed. */
void corr_traffic_flush(struct corr_traffic *t);

/* What a pair (a < b) came to, for the printer and the tests. */
struct corr_traffic_pair_stats {
	uint64_t windows;	/* with a sample either way */
	uint64_t both;		/* with samples both ways */
	uint64_t flagged;	/* missing the journals' claim */
	uint64_t inconsistent;	/* empty intervals */
	uint64_t late;		/* samples after their window closed */
	bool have_tightest;	/* a two-way, consistent window */
	struct corr_traffic_iv tightest;
	int64_t tightest_start;
	int64_t median_width;	/* of the two-way, consistent windows;
				 * -1: none */
	unsigned kept;		/* flagged or inconsistent windows held */
};
/* false when the pair had no sample. */
bool corr_traffic_pair(const struct corr_traffic *t, unsigned a, unsigned b,
		       struct corr_traffic_pair_stats *s);

struct corr_traffic_loops {
	uint64_t checked;	/* loops of three whose pairs all had samples
				 * in a window, by window */
	uint64_t failed;	/* not closing, with the claims or without */
	uint64_t open;		/* of those, not closing on the traffic */
	int suspect;		/* the one host every loop that failed with
				 * the claims blames; -1: none */
	uint64_t blamed[CORR_TRAFFIC_HOSTS];	/* loops blaming each host */
};
void corr_traffic_loops(const struct corr_traffic *t,
			struct corr_traffic_loops *l);

/* The "traffic" object: per pair, then the loops; names[i] is host i's. */
void corr_traffic_print(const struct corr_traffic *t,
			const char *const *names, unsigned nhosts,
			struct printer *p);

#endif
