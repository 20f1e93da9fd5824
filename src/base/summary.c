/* summary.c — see summary.h. */
#include "base/summary.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/print.h"

static int summary_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

uint64_t summary_nearest_rank(uint64_t n, double pct)
{
	/* The 1e-9 keeps a product that lands a rounding above a whole
	 * number (99.9 / 100 * 1000) on it. */
	double r = ceil(pct / 100.0 * (double)n - 1e-9);
	uint64_t rank = r < 1 ? 1 : (uint64_t)r;

	return rank > n ? n : rank;
}

int64_t summary_rank(const int64_t *sorted, size_t n, double pct)
{
	return sorted[summary_nearest_rank(n, pct) - 1];
}

void summary_of(int64_t *v, size_t n, struct summary *s)
{
	double sum = 0, sq = 0, mean;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), summary_cmp);
	s->n = n;
	s->min = v[0];
	s->max = v[n - 1];
	s->p50 = summary_rank(v, n, 50);
	s->p90 = summary_rank(v, n, 90);
	s->p99 = summary_rank(v, n, 99);
	s->p999 = summary_rank(v, n, 99.9);
	/* Differences from the minimum, taken in integers, before anything
	 * becomes a double: near 1.7e18 (nanoseconds since 1970) a double's
	 * step is 256 ns. Then two passes (mean, then squared deviations). */
	for (size_t i = 0; i < n; i++)
		sum += (double)(v[i] - s->min);
	mean = sum / (double)n;
	s->mean = (double)s->min + mean;
	for (size_t i = 0; i < n; i++) {
		double d = (double)(v[i] - s->min) - mean;

		sq += d * d;
	}
	s->sd = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
}

/* The object, with its text line or (text false) none. */
static void summary_object(struct printer *p, const char *key,
			   const struct summary *s, bool text)
{
	print_object_begin(p, key);
	print_uint(p, "count", text ? "n %llu" : NULL, s->n);
	if (s->n) {
		print_int(p, "min", text ? "  min %lld" : NULL, s->min);
		print_double(p, "mean", text ? "  mean %.1f" : NULL, s->mean);
		print_int(p, "p50", text ? "  p50 %lld" : NULL, s->p50);
		print_int(p, "p90", text ? "  p90 %lld" : NULL, s->p90);
		print_int(p, "p99", text ? "  p99 %lld" : NULL, s->p99);
		print_int(p, "p999", text ? "  p99.9 %lld" : NULL, s->p999);
		print_int(p, "max", text ? "  max %lld" : NULL, s->max);
		print_double(p, "sd", text ? "  sd %.1f ns\n" : NULL, s->sd);
	} else {
		static const char *const keys[] = {
			"min", "mean", "p50", "p90", "p99", "p999", "max", "sd",
		};

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			print_null(p, keys[i], NULL);
		if (text)
			print_text(p, "\n");
	}
	print_object_end(p);
}

void summary_print(struct printer *p, const char *key, const struct summary *s)
{
	summary_object(p, key, s, true);
}

void summary_print_data(struct printer *p, const char *key,
			const struct summary *s)
{
	summary_object(p, key, s, false);
}
