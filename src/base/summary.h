/* summary.h — a latency distribution summarised the way every tapless
 * report shows it: count, min, mean, p50, p90, p99, p99.9, max, SD.
 *
 * Percentiles are exact, nearest-rank (the smallest sample with at least p%
 * of the samples at or below it), so they are always a measured value.
 */
#ifndef TAPLESS_SUMMARY_H
#define TAPLESS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct printer;

struct summary {
	uint64_t n;
	int64_t min, max;
	int64_t p50, p90, p99, p999;
	double mean, sd;	/* sd: sample standard deviation (n - 1) */
};

/* Summarise v[0..n). Sorts v in place. n == 0 gives all zeros. */
void summary_of(int64_t *v, size_t n, struct summary *s);

/* The nearest rank of percentile pct (0 < pct <= 100) among n > 0
 * values, 1-based: ceil(pct/100 n), at least 1, at most n, with 99.9 % of
 * 1000 rank 999, not 1000 by rounding. The one definition of a
 * percentile in tapless: summaries, histograms (hist.h) and the report
 * take their quantiles through it. */
uint64_t summary_nearest_rank(uint64_t n, double pct);

/* Nearest-rank percentile (0 < pct <= 100) of sorted v[0..n), n > 0. */
int64_t summary_rank(const int64_t *sorted, size_t n, double pct);

/* Print as an object under key: {"count", "min", "mean", "p50", "p90",
 * "p99", "p999", "max", "sd"}, in nanoseconds; text as one line. With
 * n == 0 the figures are null. */
void summary_print(struct printer *p, const char *key, const struct summary *s);
/* The same object with nothing in the text, for a caller whose text
 * line has another layout (the live stream's): every latency figure has
 * this one shape in JSON. */
void summary_print_data(struct printer *p, const char *key,
			const struct summary *s);

#endif
