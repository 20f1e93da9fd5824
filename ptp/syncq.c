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
	bool in_sync, holdover, fresh;
};

struct syncq {
	struct syncq_params p;
	struct syncq_entry *ring;	/* the last hour */
	size_t cap, head, n;		/* head: next slot */
	int64_t spread[SYNCQ_SPREAD];	/* recent offsets */
	int64_t spread_ts[SYNCQ_SPREAD];	/* and when they were taken */
	unsigned nspread, spread_head;
	unsigned good;			/* good fresh samples in a row */
	int64_t fresh_ns, fresh_bound;	/* the last fresh in-sync sample:
					 * what holdover grows from */
	int64_t delay_prev;		/* the last fresh delay, or NONE */
	uint64_t delay_changes;
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
	q->fresh_ns = SYNCQ_NONE;
	q->delay_prev = SYNCQ_NONE;
	return q;
}

void syncq_destroy(struct syncq *q)
{
	if (!q)
		return;
	free(q->ring);
	free(q);
}

/* The servo's figures start over (a new master, a lost one): the clock
 * itself was not touched, so a holdover goes on. */
static void syncq_restart(struct syncq *q)
{
	q->nspread = 0;
	q->spread_head = 0;
	q->good = 0;
}

void syncq_reset(struct syncq *q)
{
	syncq_restart(q);
	q->fresh_ns = SYNCQ_NONE;
}

/* The last fresh bound grown to t at the drift limit, rounded up. */
static int64_t syncq_grown(const struct syncq *q, int64_t t)
{
	double age = t > q->fresh_ns ? (double)(t - q->fresh_ns) : 0;

	return q->fresh_bound + (int64_t)ceil(age * (double)q->p.drift_ppb / 1e9);
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

/* A free-running clock is never steered: its offset from the master moves
 * only with its oscillator, along a line over seconds. Through the recent
 * fresh offsets (at least SYNCQ_FIT_MIN) a least-squares line says where
 * the clock is at the newest one far better than that one noisy reading:
 * its value there, 3 standard errors of that value (the residuals' SD
 * times sqrt(1/n + (t - mean t)^2 / Sxx)), and how far the line moves in
 * a sample interval, until the next reading. A steered clock jumps with
 * every correction, so no line holds it. False when the times give no
 * line (all one instant). */
static bool syncq_fit(const struct syncq *q, double *b)
{
	unsigned n = q->nspread;
	unsigned newest = (q->spread_head + SYNCQ_SPREAD - 1) % SYNCQ_SPREAD;
	double t[SYNCQ_SPREAD];
	double tm = 0, om = 0, sxx = 0, sxy = 0, ss = 0, slope, x, se;

	if (n < SYNCQ_FIT_MIN)
		return false;
	/* Seconds before the newest: small numbers, no cancellation. */
	for (unsigned i = 0; i < n; i++) {
		t[i] = (double)(q->spread_ts[i] - q->spread_ts[newest]) / 1e9;
		tm += t[i];
		om += (double)q->spread[i];
	}
	tm /= n;
	om /= n;
	for (unsigned i = 0; i < n; i++) {
		sxx += (t[i] - tm) * (t[i] - tm);
		sxy += (t[i] - tm) * ((double)q->spread[i] - om);
	}
	if (!(sxx > 0))
		return false;
	slope = sxy / sxx;
	for (unsigned i = 0; i < n; i++) {
		double r = (double)q->spread[i] - (om + slope * (t[i] - tm));

		ss += r * r;
	}
	x = om - slope * tm;		/* the line at the newest, t = 0 */
	se = sqrt(ss / (n - 2)) * sqrt(1.0 / n + tm * tm / sxx);
	*b = fabs(x) + 3 * se + fabs(slope) *
		(double)(q->p.interval_ns > 0 ? q->p.interval_ns : 1000000000) / 1e9;
	return true;
}

/* Each fresh delay is compared with the one before it, not with a
 * reference that stays put: a slow drift is no change, a jump is one. */
static void syncq_delay_seen(struct syncq *q, int64_t delay)
{
	int64_t prev = q->delay_prev, diff, pct;

	q->delay_prev = delay;
	if (prev == SYNCQ_NONE)
		return;
	diff = llabs(delay - prev);
	pct = llabs(prev) * SYNCQ_DELAY_CHANGE_PCT / 100;
	if (diff > SYNCQ_DELAY_CHANGE_NS && diff > pct)
		q->delay_changes++;
}

void syncq_add(struct syncq *q, const struct syncq_sample *s,
	       struct syncq_verdict *v)
{
	struct syncq_entry *e = &q->ring[q->head];
	bool following = s->state == SYNCQ_FOLLOWING ||
		(s->state == SYNCQ_CALIBRATING && q->p.free_running);

	v->in_sync = v->holdover = false;
	v->bound_ns = SYNCQ_NONE;
	if (s->state == SYNCQ_GRANDMASTER) {
		v->bound_ns = 0;
		v->in_sync = true;
		/* Following a master later starts from nothing. */
		syncq_restart(q);
		q->fresh_ns = s->ts_ns;
		q->fresh_bound = 0;
	} else if (following && s->fresh && s->offset_ns != SYNCQ_NONE) {
		double b;

		q->spread[q->spread_head] = s->offset_ns;
		q->spread_ts[q->spread_head] = s->ts_ns;
		q->spread_head = (q->spread_head + 1) % SYNCQ_SPREAD;
		if (q->nspread < SYNCQ_SPREAD)
			q->nspread++;
		if (!q->p.free_running || !syncq_fit(q, &b))
			b = fabs((double)s->offset_ns) + 3 * syncq_spread_sd(q);
		b += (double)q->p.asym_ns;
		if (s->delay_ns != SYNCQ_NONE)
			b += q->p.asym_fraction * fabs((double)s->delay_ns);
		v->bound_ns = (int64_t)ceil(b);
		if (v->bound_ns <= q->p.threshold_ns) {
			if (q->good < q->p.settle)
				q->good++;
		} else {
			q->good = 0;
		}
		v->in_sync = q->good >= q->p.settle;
		/* A fresh figure replaces what holdover grew from: one out
		 * of sync leaves nothing to grow. */
		q->fresh_ns = v->in_sync ? s->ts_ns : SYNCQ_NONE;
		q->fresh_bound = v->bound_ns;
	} else {
		/* Nothing measured: the clock runs on from its last fresh
		 * figure, if it had one. Settling is not undone by a missed
		 * Sync, only by a master lost. */
		if (!following)
			syncq_restart(q);
		if (q->fresh_ns != SYNCQ_NONE) {
			v->bound_ns = syncq_grown(q, s->ts_ns);
			v->holdover = v->bound_ns <= q->p.threshold_ns;
		}
		/* Grown past the threshold, the clock left sync: it must
		 * settle again on fresh samples. */
		if (!v->holdover)
			q->good = 0;
	}
	v->fresh_ns = q->fresh_ns;
	if (s->fresh && s->delay_ns != SYNCQ_NONE)
		syncq_delay_seen(q, s->delay_ns);
	e->ts_ns = s->ts_ns;
	e->offset_ns = s->state == SYNCQ_GRANDMASTER ? 0 : s->offset_ns;
	e->delay_ns = s->delay_ns;
	e->bound_ns = v->bound_ns;
	e->state = s->state;
	e->in_sync = v->in_sync;
	e->holdover = v->holdover;
	e->fresh = s->fresh || s->state == SYNCQ_GRANDMASTER;
	q->head = (q->head + 1) % q->cap;
	if (q->n < q->cap)
		q->n++;
}

enum syncq_clock_state syncq_clock_state(bool in_sync, bool holdover)
{
	if (in_sync)
		return SYNCQ_LOCKED;
	return holdover ? SYNCQ_HOLDOVER : SYNCQ_FREERUN;
}

const char *syncq_clock_state_name(enum syncq_clock_state st)
{
	return st == SYNCQ_LOCKED ? "LOCKED" :
	       st == SYNCQ_HOLDOVER ? "HOLDOVER" : "FREERUN";
}

uint64_t syncq_delay_changes(const struct syncq *q)
{
	return q->delay_changes;
}

bool syncq_last(const struct syncq *q, struct syncq_sample *s,
		struct syncq_verdict *v)
{
	const struct syncq_entry *e;

	if (!q->n)
		return false;
	e = &q->ring[(q->head + q->cap - 1) % q->cap];
	s->ts_ns = e->ts_ns;
	s->state = e->state;
	s->offset_ns = e->offset_ns;
	s->delay_ns = e->delay_ns;
	s->fresh = e->fresh;
	v->in_sync = e->in_sync;
	v->holdover = e->holdover;
	v->bound_ns = e->bound_ns;
	v->fresh_ns = q->fresh_ns;	/* as the last syncq_add() left it */
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

void syncq_derived_bound(struct syncq_verdict *v,
			 const struct syncq_verdict *ref, int64_t width_ns,
			 int64_t threshold_ns)
{
	if ((ref->in_sync || ref->holdover) && v->bound_ns != SYNCQ_NONE &&
	    ref->bound_ns != SYNCQ_NONE) {
		v->bound_ns += ref->bound_ns + width_ns;
		if (ref->holdover && v->in_sync) {
			v->in_sync = false;
			v->holdover = true;
		}
		v->fresh_ns = ref->fresh_ns;
	} else {
		v->in_sync = v->holdover = false;
		v->bound_ns = SYNCQ_NONE;
	}
	if (v->bound_ns != SYNCQ_NONE && v->bound_ns > threshold_ns)
		v->in_sync = v->holdover = false;
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
		if (e->holdover)
			st->holdover++;
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
