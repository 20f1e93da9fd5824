/* hist.c — see hist.h.
 *
 * Bins are indexed by magnitude, one index space per sign: magnitudes below
 * HIST_EXACT_NS map to themselves; above, index = HIST_EXACT_NS + 1024 per
 * octave past 2^14 + the top 10 bits after the leading one. Pages of 256
 * bins are allocated on first use, with a count per page so walks skip
 * empty ones.
 */
#include "base/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/summary.h"
#include "base/xalloc.h"

#define HIST_EXACT_BITS 14
#define HIST_SUB_BITS 10
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BINS (HIST_EXACT_NS + (64 - HIST_EXACT_BITS) * HIST_SUB)
#define HIST_PAGE 256
#define HIST_PAGES (HIST_BINS / HIST_PAGE)

struct hist_side {
	uint64_t *page[HIST_PAGES];
	uint64_t page_count[HIST_PAGES];
};

struct hist {
	struct hist_side side[2];	/* 0: v < 0 (by magnitude), 1: v >= 0 */
	uint64_t n;
	int64_t min, max;
	int64_t shift;			/* first value: sums are around it */
	__int128 sum;
	long double sumsq;
	int64_t max_width;		/* widest bin any sample fell in, - 1 */
};

static unsigned hist_index(uint64_t m)
{
	unsigned o;

	if (m < HIST_EXACT_NS)
		return (unsigned)m;
	o = 63u - (unsigned)__builtin_clzll(m);
	return HIST_EXACT_NS + (o - HIST_EXACT_BITS) * HIST_SUB +
	       (unsigned)((m >> (o - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* The magnitudes [lo, hi] of bin idx. The top octave holds one magnitude
 * only, 2^63 (INT64_MIN): its bin is cut there, so that lo and hi are
 * always magnitudes an int64 can have (and bins never span signs). */
static void hist_bounds(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned o, sub;

	if (idx < HIST_EXACT_NS) {
		*lo = *hi = idx;
		return;
	}
	o = (idx - HIST_EXACT_NS) / HIST_SUB + HIST_EXACT_BITS;
	sub = (idx - HIST_EXACT_NS) % HIST_SUB;
	*lo = (1ull << o) + ((uint64_t)sub << (o - HIST_SUB_BITS));
	*hi = *lo + (1ull << (o - HIST_SUB_BITS)) - 1;
	if (o == 63)
		*hi = *lo;
}

struct hist *hist_create(void)
{
	return xcalloc(1, sizeof(struct hist));
}

void hist_reset(struct hist *h)
{
	for (int s = 0; s < 2; s++)
		for (unsigned p = 0; p < HIST_PAGES; p++)
			if (h->side[s].page_count[p]) {
				memset(h->side[s].page[p], 0,
				       HIST_PAGE * sizeof(uint64_t));
				h->side[s].page_count[p] = 0;
			}
	h->n = 0;
	h->min = h->max = h->shift = 0;
	h->sum = 0;
	h->sumsq = 0;
	h->max_width = 0;
}

void hist_destroy(struct hist *h)
{
	if (!h)
		return;
	for (int s = 0; s < 2; s++)
		for (unsigned p = 0; p < HIST_PAGES; p++)
			free(h->side[s].page[p]);
	free(h);
}

static void hist_add_n(struct hist *h, int64_t v, uint64_t count)
{
	int pos = v >= 0;
	/* The magnitude in unsigned arithmetic: -INT64_MIN overflows int64. */
	uint64_t m = pos ? (uint64_t)v : 0 - (uint64_t)v;
	unsigned idx = hist_index(m), pg = idx / HIST_PAGE;
	struct hist_side *s = &h->side[pos];
	uint64_t lo, hi;

	if (!s->page[pg])
		s->page[pg] = xcalloc(HIST_PAGE, sizeof(uint64_t));
	s->page[pg][idx % HIST_PAGE] += count;
	s->page_count[pg] += count;
	if (idx >= HIST_EXACT_NS) {
		hist_bounds(idx, &lo, &hi);
		if ((int64_t)(hi - lo) > h->max_width)
			h->max_width = (int64_t)(hi - lo);
	}
}

void hist_add(struct hist *h, int64_t v)
{
	long double d;

	if (!h->n) {
		h->min = h->max = h->shift = v;
	} else {
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	h->n++;
	h->sum += (__int128)v - h->shift;
	d = (long double)v - (long double)h->shift;
	h->sumsq += d * d;
	hist_add_n(h, v, 1);
}

uint64_t hist_count(const struct hist *h)
{
	return h->n;
}

int64_t hist_error_ns(const struct hist *h)
{
	return h->max_width;
}

/* Visit bins in increasing value order: negatives from the largest
 * magnitude down, then non-negatives up. */
static int hist_walk(const struct hist *h,
		     int (*fn)(int64_t lo, int64_t hi, uint64_t count, void *arg),
		     void *arg)
{
	const struct hist_side *neg = &h->side[0], *pos = &h->side[1];
	uint64_t lo, hi;
	int ret;

	for (unsigned p = HIST_PAGES; p-- > 0;) {
		if (!neg->page_count[p])
			continue;
		for (unsigned i = HIST_PAGE; i-- > 0;) {
			uint64_t c = neg->page[p][i];

			if (!c)
				continue;
			hist_bounds(p * HIST_PAGE + i, &lo, &hi);
			ret = fn((int64_t)(0 - hi), (int64_t)(0 - lo), c, arg);
			if (ret)
				return ret;
		}
	}
	for (unsigned p = 0; p < HIST_PAGES; p++) {
		if (!pos->page_count[p])
			continue;
		for (unsigned i = 0; i < HIST_PAGE; i++) {
			uint64_t c = pos->page[p][i];

			if (!c)
				continue;
			hist_bounds(p * HIST_PAGE + i, &lo, &hi);
			ret = fn((int64_t)lo, (int64_t)hi, c, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int hist_foreach(const struct hist *h,
		 int (*fn)(int64_t lo, int64_t hi, uint64_t count, void *arg),
		 void *arg)
{
	return hist_walk(h, fn, arg);
}

struct hist_merge_ctx {
	struct hist *dst;
};

static int hist_merge_bin(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct hist_merge_ctx *c = arg;

	(void)hi;
	/* lo and hi share a bin: adding lo lands in the same one. */
	hist_add_n(c->dst, lo, count);
	return 0;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	struct hist_merge_ctx c = { dst };

	if (!src->n)
		return;
	hist_walk(src, hist_merge_bin, &c);
	if (!dst->n) {
		dst->min = src->min;
		dst->max = src->max;
		dst->shift = src->shift;
		dst->sum = src->sum;
		dst->sumsq = src->sumsq;
	} else {
		/* Re-centre src's sums on dst's shift: with k = src->shift -
		 * dst->shift, sum' = sum + n k, sumsq' = sumsq + 2 k sum +
		 * n k^2. */
		long double k = (long double)src->shift - (long double)dst->shift;
		long double n = (long double)src->n;

		dst->sumsq += src->sumsq + 2 * k * (long double)src->sum +
			      n * k * k;
		dst->sum += src->sum +
			    (__int128)src->n * ((__int128)src->shift - dst->shift);
		if (src->min < dst->min)
			dst->min = src->min;
		if (src->max > dst->max)
			dst->max = src->max;
	}
	dst->n += src->n;
	if (src->max_width > dst->max_width)
		dst->max_width = src->max_width;
}

struct hist_rank_ctx {
	uint64_t want[4];	/* ranks, 1-based, increasing */
	int64_t *out[4];
	unsigned next;
	uint64_t seen;
};

static int hist_rank_bin(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct hist_rank_ctx *c = arg;

	(void)hi;
	c->seen += count;
	while (c->next < 4 && c->want[c->next] <= c->seen)
		*c->out[c->next++] = lo;
	return c->next == 4;
}

void hist_summary(const struct hist *h, struct summary *s)
{
	struct hist_rank_ctx c = { .next = 0 };
	long double mean, var;

	memset(s, 0, sizeof(*s));
	if (!h->n)
		return;
	s->n = h->n;
	s->min = h->min;
	s->max = h->max;
	c.want[0] = summary_nearest_rank(h->n, 50);
	c.want[1] = summary_nearest_rank(h->n, 90);
	c.want[2] = summary_nearest_rank(h->n, 99);
	c.want[3] = summary_nearest_rank(h->n, 99.9);
	c.out[0] = &s->p50;
	c.out[1] = &s->p90;
	c.out[2] = &s->p99;
	c.out[3] = &s->p999;
	hist_walk(h, hist_rank_bin, &c);
	/* A bin's lower edge may lie below the smallest sample in it. */
	int64_t *p[] = { &s->p50, &s->p90, &s->p99, &s->p999 };
	for (unsigned i = 0; i < 4; i++) {
		if (*p[i] < h->min)
			*p[i] = h->min;
		if (*p[i] > h->max)
			*p[i] = h->max;
	}
	mean = (long double)h->sum / (long double)h->n;
	s->mean = (double)((long double)h->shift + mean);
	if (h->n > 1) {
		var = (h->sumsq - (long double)h->n * mean * mean) /
		      (long double)(h->n - 1);
		s->sd = var > 0 ? (double)sqrtl(var) : 0;
	}
}
