/* phccheck.h — how well a PTP hardware clock can be read, for tapless
 * validate: what a PHC read costs and how uncertain it is, its offset to
 * CLOCK_REALTIME and how steady that is over the run, the frequency
 * adjustment it reports, whether reads ever go backwards, and the
 * resolution its readings actually step in.
 *
 * Reads the clock only (O_RDONLY): never adjusts it.
 */
#ifndef TAPLESS_PHCCHECK_H
#define TAPLESS_PHCCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "phc.h"
#include "summary.h"

struct printer;
struct verdict_check;
struct verdict_limits;

#define PHCCHECK_MAX 32

struct phccheck_config {
	int index;		/* /dev/ptp<index> */
	double duration_s;	/* how long to watch the offset; default 2 */
	unsigned samples;	/* offset readings over the duration; default 100 */
	unsigned reads;		/* back-to-back reads for cost, monotonicity
				 * and resolution; default 10000 */
};

struct phccheck_result {
	int index;
	char clock_name[64];	/* PTP_CLOCK_GETCAPS name, or "" */
	char ifaces[160];	/* interfaces whose stamps come from it,
				 * comma-separated, or "" */
	int max_adj_ppb;	/* from the capabilities */
	enum phc_method method;	/* how offsets were taken */
	struct summary read_cost_ns;	/* clock_gettime() on the PHC */
	struct summary window_ns;	/* sys bracket widths (0 for PRECISE) */
	unsigned offsets;		/* offset readings taken */
	double offset_ns;		/* PHC - REALTIME at the first reading */
	double offset_drift_ppb;	/* slope of the offset over the run */
	double offset_sd_ns;		/* SD about the fitted line */
	double freq_ppb;		/* frequency adjustment read back */
	uint64_t reads;			/* back-to-back reads made */
	uint64_t backwards;		/* reads earlier than the one before */
	int64_t resolution_ns;		/* greatest common step of reads */
};

/* The PHC indexes on this host (/dev/ptp*), sorted, at most max. Returns the
 * count (0 when there are none) or -errno. */
int phccheck_list(int *index, int max);

/* Defaults for cfg->index. */
void phccheck_config_init(struct phccheck_config *cfg, int index);

/* Measure. Returns 0 or -errno (err names the device and the call). */
int phccheck_run(const struct phccheck_config *cfg, struct phccheck_result *res,
		 char *err, size_t len);

/* Items for the phc.* limits. */
void phccheck_judge(const struct phccheck_result *res,
		    const struct verdict_limits *lim, struct verdict_check *c);

/* One object of figures (in an array), text as a short block. */
void phccheck_print(struct printer *p, const struct phccheck_result *res);

/* The greatest common divisor of the differences between consecutive
 * values of v[0..n) (ignoring zero differences): the step a clock's readings
 * come in. 0 when no two values differ. Pure. */
int64_t phccheck_gcd_step(const int64_t *v, size_t n);

#endif
