/* phccheck.h — how well a PTP hardware clock can be read, for tapless
 * validate: what a PHC read costs and how uncertain it is, its offset to
 * CLOCK_REALTIME and how steady that is over the run, the frequency
 * adjustment it reports, whether reads ever go backwards, and the
 * resolution its readings actually step in.
 *
 * Reads the clock only (O_RDONLY): never adjusts it.
 *
 * The measurement is split so the parts that need no PHC can be tested on
 * any host: phccheck_reads() runs the back-to-back read loop on any clockid
 * (CLOCK_MONOTONIC in the tests), phccheck_offsets() turns offset readings
 * into the figures, phccheck_gcd_step() and phccheck_judge() are pure.
 */
#ifndef TAPLESS_PHCCHECK_H
#define TAPLESS_PHCCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>	/* clockid_t */

#include "stamp/phc.h"
#include "base/summary.h"

struct printer;
struct verdict_check;
struct verdict_limits;

/* A phccheck_run() message: the device, the call and why. */
#define PHCCHECK_ERRBUF 512

#define PHCCHECK_MAX 32

/* Offset readings ask phc_sys_offset() for this many sys-phc-sys samples
 * and keep the narrowest, as phc2sys does by default (-N 5). */
#define PHCCHECK_BURST 5

struct phccheck_config {
	int index;		/* /dev/ptp<index> */
	double duration_s;	/* how long to watch the offset; default 2;
				 * (0, 3600] */
	unsigned samples;	/* offset readings over the duration, the
				 * first at the start and the last at the
				 * end; default 100; 3 .. 1000000 */
	unsigned reads;		/* back-to-back reads for cost, monotonicity
				 * and resolution; default 10000;
				 * 2 .. 10000000 */
};

struct phccheck_result {
	int index;
	char clock_name[64];	/* the driver's name for the clock, from
				 * /sys/class/ptp/ptpN/clock_name (the
				 * GETCAPS struct has no name), or "" */
	char ifaces[160];	/* interfaces of this network namespace whose
				 * stamps come from it, comma-separated,
				 * "..." at the end when they do not fit;
				 * or "" */
	int max_adj_ppb;	/* from the capabilities */
	enum phc_method method;	/* how offsets were taken */
	struct summary read_cost_ns;	/* clock_gettime() on the PHC, timed
					 * with CLOCK_MONOTONIC */
	struct summary window_ns;	/* sys bracket widths (0 for PRECISE),
					 * the narrowest of each reading's
					 * PHCCHECK_BURST samples */
	unsigned offsets;		/* offset readings taken */
	unsigned offsets_skipped;	/* readings lost to CLOCK_REALTIME
					 * steps (phc_sys_offset -EAGAIN) */
	double offset_ns;		/* PHC - REALTIME at the first reading */
	double offset_drift_ppb;	/* slope of the offset over the run,
					 * fitted against CLOCK_REALTIME;
					 * NAN below 2 readings */
	double offset_sd_ns;		/* SD about the fitted line; NAN below
					 * 3 readings */
	double freq_ppb;		/* frequency adjustment read back;
					 * NAN when freq_err */
	int freq_err;			/* 0, or -errno of clock_adjtime():
					 * -EACCES from kernels that refuse
					 * even a read on a read-only PHC */
	uint64_t reads;			/* back-to-back reads made */
	uint64_t backwards;		/* reads earlier than the one before */
	int64_t max_backstep_ns;	/* the largest such step back, or 0 */
	int64_t resolution_ns;		/* greatest common step of reads; 0
					 * when the clock never moved */
};

/* The PHC indexes on this host (/dev/ptp<N>, N in decimal without leading
 * zeros), sorted; the lowest max of them when there are more. Returns how
 * many it stored (0 when there are none) or -errno. */
int phccheck_list(int *index, int max);

/* The same for the entries of another directory (tests). */
int phccheck_list_dir(const char *dir, int *index, int max);

/* Defaults for cfg->index. */
void phccheck_config_init(struct phccheck_config *cfg, int index);

/* Measure: capabilities, cfg->reads back-to-back reads, cfg->samples offset
 * readings spread over cfg->duration_s (so it takes that long), the
 * frequency adjustment, and which interfaces use the clock. Needs read
 * access to /dev/ptpN. Returns 0 or -errno (err names the device and the
 * call): -EINVAL for a configuration out of range, -ENOENT for no such
 * device, -EAGAIN when CLOCK_REALTIME was stepped during every reading. */
int phccheck_run(const struct phccheck_config *cfg, struct phccheck_result *res,
		 char err[PHCCHECK_ERRBUF]);

/* The read loop of phccheck_run() on any clock: n back-to-back
 * clock_gettime(clk) calls, each timed by the CLOCK_MONOTONIC reads
 * interleaved with them (so a cost includes one CLOCK_MONOTONIC read).
 * Fills res->reads, read_cost_ns, backwards, max_backstep_ns and
 * resolution_ns; nothing else. Allocates its two arrays once. Returns 0,
 * -EINVAL for n < 2, or -errno of clock_gettime() (-EINVAL: no such
 * clock). */
int phccheck_reads(clockid_t clk, unsigned n, struct phccheck_result *res);

/* The offset figures of phccheck_run() from readings o[0..n), in the order
 * taken: res->method (of the last), offsets, window_ns, offset_ns,
 * offset_drift_ppb (least squares against sys_ns) and offset_sd_ns; nothing
 * else. Pure but for one allocation. */
void phccheck_offsets(const struct phc_offset *o, size_t n,
		      struct phccheck_result *res);

/* Items for the phc.* limits, added to c (which the caller initialised):
 * the narrowest read window (for PRECISE a pass note instead: no window),
 * the offset SD, |frequency adjustment| (a skip item when it could not be
 * read for want of permission or support), backwards reads, resolution (a
 * fail when the clock never moved), and a pass note with the offset to
 * CLOCK_REALTIME and its drift. */
void phccheck_judge(const struct phccheck_result *res,
		    const struct verdict_limits *lim, struct verdict_check *c);

/* One object of figures (in an array), text as a short block. Every key is
 * always written (null when not measured), so CSV rows line up. */
void phccheck_print(struct printer *p, const struct phccheck_result *res);

/* The greatest common divisor of the differences between consecutive
 * values of v[0..n) (ignoring zero differences): the step a clock's readings
 * come in. 0 when no two values differ; INT64_MAX if the step is larger.
 * Pure. */
int64_t phccheck_gcd_step(const int64_t *v, size_t n);

#endif
