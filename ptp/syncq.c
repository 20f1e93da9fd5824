/* syncq.c — sync quality of one clock. See syncq.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/syncq.h"
#include "base/xalloc.h"

#define SYNCQ_HOUR_NS (3600LL * 1000000000)

struct syncq_entry {
	int64_t ts_ns, offset_ns, delay_ns, bound_ns;
	enum syncq_state state;
	bool in_sync;
};

struct syncq {
	struct syncq_params p;
	struct syncq_entry *ring;	/* the last hour */
	size_t cap, head, n;		/* head: next slot */
	int64_t spread[SYNCQ_SPREAD];	/* recent offsets */
	unsigned nspread, spread_head;
	unsigned good;			/* good samples in a row */
};

struct syncq *syncq_create(const struct syncq_params *p)
{
	struct syncq *q = xcalloc(1, sizeof(*q));
	int64_t iv = p->interval_ns > 0 ? p->interval_ns : 1000000000;

	q->p = *p;
	/* One more than an hour's worth, so a full 60-minute window is
	 * there even when samples come a little faster than promised. */
	q->cap = (size_t)(SYNCQ_HOUR_NS / iv) + 64;
	q->ring = xcalloc(q->cap, sizeof(*q->ring));
	return q;
}

void syncq_destroy(struct syncq *q)
{
	if (!q)
		return;
	free(q->ring);
	free(q);
}

void syncq_reset(struct syncq *q)
{
	q->nspread = 0;
	q->spread_head = 0;
	q->good = 0;
}

static double syncq_spread_sd(const struct syncq *q)
{
	double mean = 0, ss = 0;

	if (q->nspread < 2)
		return 0;
	for (unsigned i = 0; i < q->nspread; i++)
		mean += (double)q->spread[i];
	mean /= q->nspread;
	for (unsigned i = 0; i < q->nspread; i++) {
		double d = (double)q->spread[i] - mean;

		ss += d * d;
	}
	return sqrt(ss / (q->nspread - 1));
}

void syncq_add(struct syncq *q, const struct syncq_sample *s, bool *in_sync,
	       int64_t *bound_ns)
{
	struct syncq_entry *e = &q->ring[q->head];
	bool following = s->state == SYNCQ_FOLLOWING ||
		(s->state == SYNCQ_CALIBRATING && q->p.free_running);
	int64_t bound = SYNCQ_NONE;
	bool ok = false;

	if (s->state == SYNCQ_GRANDMASTER) {
		bound = 0;
		ok = true;
		/* Following a master later starts from nothing. */
		syncq_reset(q);
	} else if (following && s->offset_ns != SYNCQ_NONE) {
		double b;

		q->spread[q->spread_head] = s->offset_ns;
		q->spread_head = (q->spread_head + 1) % SYNCQ_SPREAD;
		if (q->nspread < SYNCQ_SPREAD)
			q->nspread++;
		b = fabs((double)s->offset_ns) + 3 * syncq_spread_sd(q) +
			(double)q->p.asym_ns;
		if (s->delay_ns != SYNCQ_NONE)
			b += q->p.asym_fraction * fabs((double)s->delay_ns);
		bound = (int64_t)ceil(b);
		if (bound <= q->p.threshold_ns) {
			if (q->good < q->p.settle)
				q->good++;
		} else {
			q->good = 0;
		}
		ok = q->good >= q->p.settle;
	} else {
		syncq_reset(q);
	}
	e->ts_ns = s->ts_ns;
	e->offset_ns = s->state == SYNCQ_GRANDMASTER ? 0 : s->offset_ns;
	e->delay_ns = s->delay_ns;
	e->bound_ns = bound;
	e->state = s->state;
	e->in_sync = ok;
	q->head = (q->head + 1) % q->cap;
	if (q->n < q->cap)
		q->n++;
	*in_sync = ok;
	*bound_ns = bound;
}

bool syncq_last(const struct syncq *q, struct syncq_sample *s, bool *in_sync,
		int64_t *bound_ns)
{
	const struct syncq_entry *e;

	if (!q->n)
		return false;
	e = &q->ring[(q->head + q->cap - 1) % q->cap];
	s->ts_ns = e->ts_ns;
	s->state = e->state;
	s->offset_ns = e->offset_ns;
	s->delay_ns = e->delay_ns;
	*in_sync = e->in_sync;
	*bound_ns = e->bound_ns;
	return true;
}

int syncq_derived_offset(const struct syncq_reading *ref,
			 const struct syncq_reading *own, int utc_offset_s,
			 int64_t *offset_ns, int64_t *width_ns)
{
	if (own) {
		/* clock - reference PHC, both read against sys. */
		*offset_ns = own->offset_ns - ref->offset_ns;
		*width_ns = ref->window_ns / 2 + own->window_ns / 2;
		return 0;
	}
	if (utc_offset_s < 0)
		return -EAGAIN;
	*offset_ns = -ref->offset_ns + utc_offset_s * 1000000000LL;
	*width_ns = ref->window_ns / 2;
	return 0;
}

void syncq_derived_bound(bool *in_sync, int64_t *bound_ns, bool ref_in_sync,
			 int64_t ref_bound_ns, int64_t width_ns,
			 int64_t threshold_ns)
{
	if (ref_in_sync && *bound_ns != SYNCQ_NONE) {
		*bound_ns += ref_bound_ns + width_ns;
	} else {
		*in_sync = false;
		*bound_ns = SYNCQ_NONE;
	}
	if (*bound_ns != SYNCQ_NONE && *bound_ns > threshold_ns)
		*in_sync = false;
}

/* Welford's running mean and variance: stable for offsets of a few ns
 * around a mean that can be microseconds. */
struct syncq_acc {
	uint64_t n;
	double mean, m2;
	int64_t min, max;
};

static void syncq_acc_add(struct syncq_acc *a, int64_t v)
{
	double d = (double)v - a->mean;

	if (!a->n || v < a->min)
		a->min = v;
	if (!a->n || v > a->max)
		a->max = v;
	a->n++;
	a->mean += d / (double)a->n;
	a->m2 += d * ((double)v - a->mean);
}

static double syncq_acc_sd(const struct syncq_acc *a)
{
	return a->n > 1 ? sqrt(a->m2 / (double)(a->n - 1)) : 0;
}

void syncq_window(const struct syncq *q, int64_t now_ns, int64_t span_ns,
		  struct syncq_stats *st)
{
	struct syncq_acc off = { 0 }, del = { 0 };

	memset(st, 0, sizeof(*st));
	st->bound_max = SYNCQ_NONE;
	for (size_t k = 0; k < q->n; k++) {
		const struct syncq_entry *e =
			&q->ring[(q->head + q->cap - 1 - k) % q->cap];

		if (e->ts_ns > now_ns)
			continue;
		if (e->ts_ns <= now_ns - span_ns)
			break;		/* older ones are older still */
		st->samples++;
		if (e->in_sync) {
			st->in_sync++;
			if (e->bound_ns != SYNCQ_NONE && e->bound_ns > st->bound_max)
				st->bound_max = e->bound_ns;
		}
		if (e->offset_ns != SYNCQ_NONE)
			syncq_acc_add(&off, e->offset_ns);
		if (e->delay_ns != SYNCQ_NONE)
			syncq_acc_add(&del, e->delay_ns);
	}
	st->measured = off.n;
	st->offset_mean = off.mean;
	st->offset_sd = syncq_acc_sd(&off);
	st->offset_min = off.n ? off.min : SYNCQ_NONE;
	st->offset_max = off.n ? off.max : SYNCQ_NONE;
	st->delays = del.n;
	st->delay_mean = del.mean;
	st->delay_sd = syncq_acc_sd(&del);
	st->delay_min = del.n ? del.min : SYNCQ_NONE;
	st->delay_max = del.n ? del.max : SYNCQ_NONE;
}
