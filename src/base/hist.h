/* hist.h — a latency distribution kept in bounded memory, for streams too
 * long to keep every sample (the correlator's hops and transactions).
 *
 * Values are integer nanoseconds, negative ones too (a one-way latency
 * between badly synchronised clocks can be). Every value with |v| < 16384
 * has a bin of its own: percentiles there are exact nearest-rank values, as
 * summary_of() gives. Beyond, each power of two is split into 1024 bins, so
 * a percentile is the lower edge of its bin: at most 1/1024 (under 0.1 %)
 * below the true sample. Count, min, max and mean are exact; SD is computed
 * from exact sums.
 *
 * Memory grows with the range of values seen, not their number: bins are
 * allocated in pages the first time a value falls in them (at most about
 * 1 MB for values spanning the whole int64 range).
 */
#ifndef TAPLESS_HIST_H
#define TAPLESS_HIST_H

#include <stdint.h>

struct hist;
struct summary;

#define HIST_EXACT_NS 16384	/* |v| below this: percentiles exact */

struct hist *hist_create(void);
void hist_destroy(struct hist *h);

void hist_add(struct hist *h, int64_t v);
/* Empty it, keeping its pages (a histogram per interval is reused, not
 * allocated anew each time). */
void hist_reset(struct hist *h);
/* Add everything src holds to dst. */
void hist_merge(struct hist *dst, const struct hist *src);
uint64_t hist_count(const struct hist *h);

/* The summary (nearest-rank percentiles, sample SD), as summary_of() would
 * give for the same samples when they all lie within ±HIST_EXACT_NS. */
void hist_summary(const struct hist *h, struct summary *s);

/* The largest amount by which a percentile of this histogram may be below
 * the true sample: 0 when every sample was in the exact range. */
int64_t hist_error_ns(const struct hist *h);

/* Walk the non-empty bins in increasing order: fn(lo, hi, count, arg) for
 * the bin [lo, hi]. Returns what the last fn call returned if non-zero
 * (stopping there), else 0. */
int hist_foreach(const struct hist *h,
		 int (*fn)(int64_t lo, int64_t hi, uint64_t count, void *arg),
		 void *arg);

#endif
