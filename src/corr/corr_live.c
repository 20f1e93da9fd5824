/* corr_live.c — the correlator, live (corr_follow_step(); see corr.h and
 * tapless-correlate(8), "Following"): hosts' files read as they grow, in
 * time order across hosts as far as every live host's data reaches,
 * results kept per interval besides the totals, and what only a live view
 * sees (a host that stops, a journal out of sync, a new session, a capd
 * restart) reported as events and flagged on the figures around it.
 *
 * How far to read. A packet of host A stamped t may be correlated once no
 * other host can still bring something earlier: each host that has nothing
 * waiting must have shown its capture complete up to t — by a heartbeat
 * (an ISB capd writes with that promise, tapless-pcapng(5)) or by a packet
 * at or after t. A host that shows nothing new for cfg.stall_ns of wall
 * clock is stalled: no longer waited for (reported, and its figures
 * flagged), until its data comes again. So the order is the offline one
 * (corr_run()) whenever no host stalls, and the results over the same
 * files the same.
 *
 * Intervals are of the results' timescale (stamps), aligned to multiples
 * of cfg.interval_ns. A sample belongs to the interval open when it is
 * made: the one holding the stamp of its later end, or, for the few made
 * late (a TCP hole filled, a message leaving the window unmatched), the
 * next one open. So every sample is in exactly one interval, and the
 * intervals' counts add up to the totals.
 *
 * Memory: one histogram per interval result, reused; fixed buckets for the
 * metrics; the rest is the correlator's, bounded by its window. Per-flow
 * results (a hop's metric series for one flow) would grow with every
 * connection ever seen: they are held for cfg.flow_series at most, and
 * let go with their flow's last stream (corr_flow_expire(), after
 * CORR_LIVE_STREAM_IDLE_NS of quiet).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hist.h"
#include "base/metrics.h"
#include "base/nstime.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "files/capset.h"
#include "ptp/bound.h"
#include "stamp/ts.h"
#include "corr/corr_private.h"

/* Bucket bounds of the metrics' histograms: 1-2-5 from 100 ns to 10 ms,
 * the range of one-way and tick-to-trade latency on a trading network
 * (tapless-correlate(8) states them). */
const int64_t corr_live_le_ns[CORR_LIVE_BUCKETS] = {
	100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000,
	200000, 500000, 1000000, 2000000, 5000000, 10000000,
};

/* A gap in the data longer than this many intervals is not filled with
 * empty intervals: the next opens where the data is. */
#define CORR_LIVE_MAX_EMPTY 60
/* A stream quiet this long (in stamps) is let go: four times FIX's usual
 * heartbeat interval of 30 s, so a live session is never. */
#define CORR_LIVE_STREAM_IDLE_NS (120 * NS_PER_S)
/* Journal samples kept behind what a host's data has passed: more than
 * TAI - UTC, by which lookups of TAI stamps come earlier. */
#define CORR_LIVE_FORGET_SLACK_NS (60 * NS_PER_S)

static const char *const corr_event_names[CORR_EV_KINDS] = {
	"stalled", "resumed", "out_of_sync", "in_sync", "session", "restart",
	"files_missed", "damaged", "drops", "holdover",
};

/* ---- results ---- */

/* A result's live part: interval=true for one printed each interval
 * (all flows), false for a flow's, which has its metrics' buckets only,
 * not a histogram (kilobytes), for a follower may hold thousands. */
static struct corr_live_stat *corr_live_stat_create(bool interval)
{
	struct corr_live_stat *l = xcalloc(1, sizeof(*l));

	if (interval)
		l->iv = hist_create();
	return l;
}

static void corr_live_stat_free(void *ext)
{
	struct corr_live_stat *l = ext;

	if (!l)
		return;
	hist_destroy(l->iv);
	free(l);
}

/* The result of that key in set with its live part, made on first use. */
static struct corr_live_stat *corr_live_of(struct corr_stats_set *set,
					   const struct corr_sample *x,
					   uint32_t flow)
{
	struct corr_stat *s = corr_stat(set, x->from, x->to, flow, NO_BUCKET,
					x->kind, x->sw);

	if (!s->ext)
		s->ext = corr_live_stat_create(flow == ALL_FLOWS);
	return s->ext;
}

static void corr_live_add(struct corr_live_stat *l, int64_t v, int sync,
			  int64_t bound)
{
	if (sync == SYNC_OUT) {
		l->iv_out++;
		l->out++;
		return;
	}
	if (sync == SYNC_HOLD) {
		l->iv_hold++;
		l->hold++;
	}
	if (l->iv)
		hist_add(l->iv, v);
	if (bound >= 0) {
		l->iv_bound_known++;
		if (bound > l->iv_bound_max)
			l->iv_bound_max = bound;
	}
	l->n++;
	/* A histogram's sum may not go below zero (OpenMetrics): a sample
	 * below zero (clock error beyond the latency) is observed as 0. It
	 * falls in every bucket either way. */
	if (v > 0)
		l->sum_s += (double)v / 1e9;
	for (int k = CORR_LIVE_BUCKETS - 1; k >= 0 && v <= corr_live_le_ns[k]; k--)
		l->le[k]++;
}

static void corr_live_reset(struct corr_stats_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct corr_live_stat *l = set->v[i].ext;

		if (!l)
			continue;
		if (l->iv)
			hist_reset(l->iv);
		l->iv_out = l->iv_hold = l->iv_bound_known = 0;
		l->iv_bound_max = 0;
	}
}

/* ---- events ---- */

static void corr_live_event(struct corr *c, enum corr_event_kind kind,
			    const struct corr_host *h, int64_t t,
			    const char *detail, uint64_t count)
{
	struct corr_event ev = {
		.kind = kind, .name = corr_event_names[kind],
		.host = h ? h->name : "", .time_ns = t,
		.detail = detail ? detail : "", .count = count,
	};

	if (c->cfg.on_event)
		c->cfg.on_event(c->cfg.arg, &ev);
}

static void corr_live_session(struct corr *c, struct corr_stream *s,
			      const struct corr_fields *f, int64_t ts)
{
	struct corr_flow *fl = &c->flows[s->flow];
	char d[256];

	(void)f;
	if (fl->session[0])
		snprintf(d, sizeof(d), "%s, session %s", fl->name, fl->session);
	else
		snprintf(d, sizeof(d), "%s", fl->name);
	corr_live_event(c, CORR_EV_SESSION, s->h, ts, d, 0);
}

int64_t corr_live_now(const struct corr *c, int64_t real_ns)
{
	if (c->target_scale == TS_SCALE_TAI)
		return real_ns + (int64_t)(c->utc_known ? c->utc_offset :
					   TAI_UTC_S) * NS_PER_S;
	return real_ns;
}

/* ---- the sink ---- */

/* Hop from -> to's live part for x's flow, made on first use while fewer
 * than cfg.flow_series exist: else NULL, and the flow counted in
 * flows_over_limit (once). */
static struct corr_live_stat *corr_live_flow(struct corr *c,
					     const struct corr_sample *x)
{
	if (!corr_stat_find(&c->live_hops, x->from, x->to, x->flow, NO_BUCKET,
			    -1, NULL)) {
		if (c->flow_series >= c->cfg.flow_series) {
			/* Its samples still count in the hop's "all". */
			if (x->flow < c->nflows &&
			    !c->flows[x->flow].over_limit) {
				c->flows[x->flow].over_limit = true;
				c->flows_over_limit++;
			}
			return NULL;
		}
		c->flow_series++;
	}
	return corr_live_of(&c->live_hops, x, x->flow);
}

/* A sample into its figure's result (all flows) and, a hop's, into its
 * flow's. Rate buckets are for the offline tables: none here. */
static void corr_live_sample(struct corr *c, const struct corr_sample *x)
{
	struct corr_stats_set *set = x->set == CORR_SET_HOPS ? &c->live_hops :
				     x->set == CORR_SET_TXNS ? &c->live_txns :
				     &c->live_switches;
	struct corr_live_stat *fl;

	/* App to wire is in the results at the end only, for now
	 * (tapless-correlate(8), APP TO WIRE). */
	if (x->set == CORR_SET_APP)
		return;
	corr_live_add(corr_live_of(set, x, ALL_FLOWS), x->v, x->sync,
		      x->bound);
	if (x->set == CORR_SET_HOPS && (fl = corr_live_flow(c, x)))
		corr_live_add(fl, x->v, x->sync, x->bound);
}

static void corr_live_open(struct corr *c)
{
	struct corr_stats_set *sets[] = {
		&c->live_hops, &c->live_txns, &c->live_switches,
	};

	for (unsigned i = 0; i < 3; i++) {
		corr_stats_init(sets[i]);
		sets[i]->bare = true;
		sets[i]->ext_free = corr_live_stat_free;
	}
}

static void corr_live_close_sets(struct corr *c)
{
	corr_stats_free(&c->live_hops);
	corr_stats_free(&c->live_txns);
	corr_stats_free(&c->live_switches);
}

/* A flow's last stream expired: its per-flow results go, their room is
 * for the flows that come. */
static void corr_live_flow_idle(struct corr *c, uint32_t flow)
{
	c->flow_series -= corr_stats_drop_flow(&c->live_hops, flow);
}

const struct corr_sink corr_live_sink = {
	.open = corr_live_open,
	.close = corr_live_close_sets,
	.sample = corr_live_sample,
	.session = corr_live_session,
	.flow_idle = corr_live_flow_idle,
};

/* ---- intervals ---- */

static void corr_live_close(struct corr *c)
{
	if (c->cfg.on_interval)
		c->cfg.on_interval(c->cfg.arg, c, c->iv_start, c->iv_end);
	corr_live_reset(&c->live_hops);
	corr_live_reset(&c->live_txns);
	corr_live_reset(&c->live_switches);
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];
		struct corr_host_live *l = &h->live;

		l->iv_packets = h->packets;
		l->iv_messages = h->messages;
		l->iv_only_here = h->only_here;
		l->iv_late = l->late;
		/* States go on being flagged while they last. */
		l->iv_flags = (l->stalled ? CORR_FLAG_STALLED : 0) |
			      (l->sync == SYNC_OUT ? CORR_FLAG_OUT_OF_SYNC : 0) |
			      (l->sync == SYNC_HOLD ? CORR_FLAG_HOLDOVER : 0);
	}
}

static int64_t corr_live_floor(int64_t t, int64_t step)
{
	int64_t q = t / step;

	if (t < 0 && q * step != t)
		q--;
	return q * step;
}

/* Data up to t is in: close every interval that ended at or before it. */
static void corr_live_advance(struct corr *c, int64_t t)
{
	int64_t step = c->cfg.interval_ns;

	if (!c->iv_open) {
		c->iv_open = true;
		c->iv_start = corr_live_floor(t, step);
		c->iv_end = c->iv_start + step;
		return;
	}
	if (t < c->iv_end)
		return;
	corr_live_close(c);
	if (t - c->iv_end >= CORR_LIVE_MAX_EMPTY * step) {
		c->iv_start = corr_live_floor(t, step);
	} else {
		c->iv_start = c->iv_end;
		while (t >= c->iv_start + step) {
			c->iv_end = c->iv_start + step;
			corr_live_close(c);
			c->iv_start += step;
		}
	}
	c->iv_end = c->iv_start + step;
}

/* ---- hosts ---- */

static void corr_live_flag(struct corr_host *h, unsigned flag)
{
	h->live.iv_flags |= flag;
}

/* What h's files showed since the last look: its horizon, whether it is
 * alive, and the events of its files and journal. */
static void corr_live_host(struct corr *c, struct corr_host *h, int64_t now)
{
	struct corr_host_live *l = &h->live;
	const struct capset_follow_stats *fst = capset_follow_stats(h->cs);
	struct cap_stats st;
	/* Events are dated by the data; a host that never had any, by the
	 * clock. */
	int64_t hb, t = l->horizon ? l->horizon : corr_live_now(c, now);
	unsigned file;
	uint32_t iface;

	capset_stats(h->cs, &st);
	/* The heartbeat's interface is looked up only while no packet waits:
	 * a new interface can move the table h->next_if points into. */
	if (!h->have_next && capset_heartbeat(h->cs, &hb, &file, &iface)) {
		const struct corr_iface *f = corr_iface(c, h, file, iface,
							TS_SCALE_UNKNOWN);

		if (f->usable && hb + f->delta_ns > l->horizon)
			l->horizon = hb + f->delta_ns;
	}
	if (h->have_next && h->next_ts > l->horizon)
		l->horizon = h->next_ts;
	if (!l->seen_real || st.packets + st.heartbeats != l->seen_packets) {
		l->seen_packets = st.packets + st.heartbeats;
		l->seen_real = now;
	}
	if (!l->ended && !l->stalled && now - l->seen_real > c->cfg.stall_ns) {
		char d[96];

		l->stalled = true;
		corr_live_flag(h, CORR_FLAG_STALLED);
		snprintf(d, sizeof(d), "no new data for %lld ms",
			 (long long)((now - l->seen_real) / NS_PER_MS));
		corr_live_event(c, CORR_EV_STALLED, h, t, d, 0);
	} else if (l->stalled && l->ended) {
		l->stalled = false;	/* read to its end at the stop: no news */
	} else if (l->stalled && now - l->seen_real <= c->cfg.stall_ns) {
		l->stalled = false;
		corr_live_event(c, CORR_EV_RESUMED, h, l->horizon,
				"new data came", 0);
	}
	if (fst && fst->restarts != l->fst.restarts) {
		corr_live_flag(h, CORR_FLAG_RESTART);
		corr_live_event(c, CORR_EV_RESTART, h, l->horizon,
				"a new tapless-capd run: its data has a gap "
				"before this", fst->restarts - l->fst.restarts);
	}
	if (fst && fst->missed != l->fst.missed) {
		corr_live_flag(h, CORR_FLAG_MISSED);
		corr_live_event(c, CORR_EV_FILES_MISSED, h, l->horizon,
				"files removed before they were read",
				fst->missed - l->fst.missed);
	}
	if (fst)
		l->fst = *fst;
	if (capset_damaged(h->cs) != l->damaged) {
		corr_live_flag(h, CORR_FLAG_DAMAGED);
		corr_live_event(c, CORR_EV_DAMAGED, h, l->horizon,
				capset_last_error(h->cs),
				capset_damaged(h->cs) - l->damaged);
		l->damaged = capset_damaged(h->cs);
	}
	if (st.drops > l->drops) {
		corr_live_flag(h, CORR_FLAG_DROPS);
		corr_live_event(c, CORR_EV_DROPS, h, l->horizon,
				"the capture dropped frames", st.drops - l->drops);
		l->drops = st.drops;
	}
}

/* The journal's word on h at t (the watermark): a change is an event. */
static void corr_live_sync(struct corr *c, struct corr_host *h, int64_t t)
{
	struct corr_host_live *l = &h->live;
	const struct corr_iface *f = h->last_if;
	enum bound_state st;
	int64_t b;
	int sync;

	if (!h->bound || !f)
		return;
	st = bound_at(h->bound, f->clock, t + f->journal_ns, &b);
	sync = corr_sync_of(st);
	if (sync == l->sync)
		return;
	if (sync == SYNC_OUT) {
		corr_live_flag(h, CORR_FLAG_OUT_OF_SYNC);
		corr_live_event(c, CORR_EV_OUT_OF_SYNC, h, t,
				"the sync journal says out of sync", 0);
	} else if (sync == SYNC_HOLD) {
		corr_live_flag(h, CORR_FLAG_HOLDOVER);
		corr_live_event(c, CORR_EV_HOLDOVER, h, t,
				"the sync journal says holdover: the bound "
				"grows until a fresh measurement", 0);
	} else if (sync == SYNC_IN && (l->sync == SYNC_OUT ||
					l->sync == SYNC_HOLD)) {
		corr_live_event(c, CORR_EV_IN_SYNC, h, t, "", 0);
	}
	l->sync = sync;
}

/* Whether host h may hand over its next packet: no other host that is
 * waited for could still bring an earlier one. */
static bool corr_live_may(const struct corr *c, const struct corr_host *h)
{
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *o = c->hosts[i];

		if (o == h || o->have_next || o->live.ended || o->live.stalled)
			continue;
		if (o->live.horizon < h->next_ts)
			return false;
	}
	return true;
}

static struct corr_host *corr_live_earliest(struct corr *c)
{
	struct corr_host *best = NULL;

	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		if (h->have_next && (!best || h->next_ts < best->next_ts))
			best = h;
	}
	return best;
}

static void corr_live_one(struct corr *c, struct corr_host *h)
{
	if (c->iv_open && h->next_ts < c->iv_start) {
		h->live.late++;	/* its interval was closed: counted now */
		corr_live_flag(h, CORR_FLAG_LATE);
	}
	corr_live_advance(c, h->next_ts);
	if (h->next_ts > h->live.horizon)
		h->live.horizon = h->next_ts;
	corr_packet(c, h);
	corr_fetch(c, h);
}

/* What the journals and files gained: each host's next packet, if one
 * came. stop: the writers are done, read to the end. */
static int corr_live_read(struct corr *c, bool stop, char err[CORR_ERRBUF])
{
	char jerr[JOURNAL_ERRBUF];	/* a journal between rotations: later */

	if (!c->nhosts) {
		snprintf(err, CORR_ERRBUF, "no inputs");
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		if (h->bound)
			(void)bound_refresh(h->bound, jerr);
		if (stop)
			capset_stop(h->cs);
		if (!h->have_next && (stop || !h->live.ended))
			corr_fetch(c, h);
	}
	return 0;
}

int corr_follow_step(struct corr *c, int64_t now, char err[CORR_ERRBUF])
{
	struct corr_host *h;
	int64_t w = INT64_MAX;
	bool any = false;

	if (corr_live_read(c, false, err))
		return -EINVAL;
	for (unsigned i = 0; i < c->nhosts; i++)
		corr_live_host(c, c->hosts[i], now);
	while ((h = corr_live_earliest(c)) && corr_live_may(c, h)) {
		corr_live_one(c, h);
		if (!h->have_next && !h->live.ended)
			corr_live_host(c, h, now);
	}
	/* Everything before the watermark is in from every host waited for;
	 * with none (all stalled or done), the clock says how far. */
	for (unsigned i = 0; i < c->nhosts; i++) {
		h = c->hosts[i];
		if (h->live.ended || h->live.stalled)
			continue;
		any = true;
		if ((h->have_next ? h->next_ts : h->live.horizon) < w)
			w = h->have_next ? h->next_ts : h->live.horizon;
	}
	if (!any)
		w = corr_live_now(c, now) - c->cfg.stall_ns;
	if (w > c->watermark)
		c->watermark = w;
	for (unsigned i = 0; i < c->nhosts; i++) {
		int64_t upto = c->watermark;

		h = c->hosts[i];
		/* No watermark before every host waited for has shown data:
		 * no journal is asked about the time 0. */
		if (c->watermark)
			corr_live_sync(c, h, c->watermark);
		/* A journal forgets only what this host's data has passed:
		 * a watermark the clock moved on (every host stalled) may be
		 * far ahead of stamps still to come (files copied in late,
		 * captures replayed); lookups of TAI stamps are TAI - UTC
		 * earlier still. */
		if (h->max_ts < upto)
			upto = h->max_ts;
		if (h->bound && upto)
			bound_forget(h->bound, upto - c->cfg.window_ns -
				     c->cfg.sync_max_age_ns -
				     CORR_LIVE_FORGET_SLACK_NS);
	}
	if (c->iv_open)
		corr_live_advance(c, c->watermark);
	if (c->watermark > CORR_LIVE_STREAM_IDLE_NS + c->cfg.window_ns)
		corr_flow_expire(c, c->watermark - CORR_LIVE_STREAM_IDLE_NS -
				 c->cfg.window_ns);
	return 0;
}

void corr_follow_hooks(struct corr *c,
		       void (*on_interval)(void *, struct corr *, int64_t,
					   int64_t),
		       void (*on_event)(void *, const struct corr_event *),
		       void *arg)
{
	c->cfg.on_interval = on_interval;
	c->cfg.on_event = on_event;
	c->cfg.arg = arg;
}

int corr_follow_stop(struct corr *c, int64_t now, char err[CORR_ERRBUF])
{
	struct corr_host *h;

	if (corr_live_read(c, true, err))
		return -EINVAL;
	while ((h = corr_live_earliest(c)))
		corr_live_one(c, h);
	for (unsigned i = 0; i < c->nhosts; i++)
		corr_live_host(c, c->hosts[i], now);
	corr_finish(c);
	if (c->iv_open)
		corr_live_close(c);
	c->iv_open = false;
	return 0;
}

/* ---- the stream ---- */

static void corr_live_flags(struct printer *p, unsigned flags)
{
	static const char *const names[] = {
		"stalled", "out_of_sync", "restart", "files_missed", "damaged",
		"drops", "late", "holdover",
	};

	print_array_begin(p, "flags");
	for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (flags & (1u << k))
			print_str(p, NULL, " [%s]", names[k]);
	print_array_end(p);
}

/* A result's interval. The text is one line; the data has the shapes the
 * offline results have (tapless-correlate(8), JSON): the figures of the
 * samples in sync as "latency_ns" (summary_print()), the bound as
 * "sync_error_bound_ns", the samples left out in "out_of_sync". */
static void corr_live_figures(struct printer *p, const struct corr_live_stat *l)
{
	struct summary s;

	hist_summary(l->iv, &s);
	print_text(p, " n %llu", (unsigned long long)s.n);
	if (s.n)
		print_text(p, " min %lld p50 %lld p90 %lld p99 %lld p99.9 %lld "
			   "max %lld mean %.1f", (long long)s.min,
			   (long long)s.p50, (long long)s.p90,
			   (long long)s.p99, (long long)s.p999,
			   (long long)s.max, s.mean);
	summary_print_data(p, "latency_ns", &s);
	if (l->iv_bound_known)
		print_int(p, "sync_error_bound_ns", " bound %lld",
			  l->iv_bound_max);
	else
		print_null(p, "sync_error_bound_ns", NULL);
	print_object_begin(p, "out_of_sync");
	print_uint(p, "messages", " out of sync %llu", l->iv_out);
	print_object_end(p);
	print_uint(p, "holdover", l->iv_hold ? " holdover %llu" : NULL,
		   l->iv_hold);
}

static struct printer *corr_live_line(const struct corr *c, FILE *out,
				      int fmt, const char *type)
{
	struct printer *p = print_create(out, (enum print_format)fmt, 0);

	print_str(p, "type", "%s", type);
	/* Text: the interval's end, so that a line says when it was. */
	print_time(p, "start_ns", NULL, c->iv_start);
	print_time(p, "end_ns", " %s", c->iv_end);
	/* When it was written, on the same timescale: its lag behind the
	 * data is there for anyone to see. */
	print_int(p, "emitted_ns", NULL,
		  corr_live_now(c, nstime_now(CLOCK_REALTIME)));
	return p;
}

static void corr_live_print_set(const struct corr *c, FILE *out, int fmt,
				const struct corr_stats_set *set,
				const char *type)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct corr_stat *s = &set->v[i];
		const struct corr_host *a = c->hosts[s->from], *b = c->hosts[s->to];
		struct printer *p;

		const struct corr_live_stat *l = s->ext;

		if (!l || !l->iv)
			continue;
		p = corr_live_line(c, out, fmt, type);
		if (s->kind >= 0) {
			print_str(p, "kind", " %s", corr_txn_names[s->kind]);
			print_str(p, "host", " at %s", a->name);
		} else {
			if (s->sw)
				print_str(p, "switch", " %s", s->sw);
			print_str(p, "from", " %s", a->name);
			print_str(p, "to", "->%s", b->name);
		}
		corr_live_figures(p, l);
		corr_live_flags(p, a->live.iv_flags | b->live.iv_flags);
		print_text(p, "\n");
		(void)print_destroy(p);
	}
}

static const char *corr_live_state(const struct corr_host *h)
{
	return h->live.stalled ? "stalled" : h->live.ended ? "ended" : "live";
}

void corr_print_interval(const struct corr *c, FILE *out, int fmt)
{
	corr_live_print_set(c, out, fmt, &c->live_hops, "hop");
	corr_live_print_set(c, out, fmt, &c->live_txns, "txn");
	corr_live_print_set(c, out, fmt, &c->live_switches, "switch");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];
		const struct corr_host_live *l = &h->live;
		struct printer *p = corr_live_line(c, out, fmt, "host");

		print_str(p, "host", " %s", h->name);
		print_str(p, "state", " %s", corr_live_state(h));
		print_uint(p, "packets", " packets %llu", h->packets - l->iv_packets);
		print_uint(p, "messages", " messages %llu",
			   h->messages - l->iv_messages);
		print_uint(p, "unmatched", " unmatched %llu",
			   h->only_here - l->iv_only_here);
		print_uint(p, "late", " late %llu", l->late - l->iv_late);
		print_int(p, "horizon_ns", NULL, l->horizon);
		print_str(p, "sync", " sync %s", corr_sync_name(l->sync));
		print_uint(p, "drops", " drops %llu", l->drops);
		corr_live_flags(p, l->iv_flags);
		print_text(p, "\n");
		(void)print_destroy(p);
	}
	struct printer *p = corr_live_line(c, out, fmt, "flows");

	print_uint(p, "series", " per-flow series %llu", c->flow_series);
	print_uint(p, "series_limit", " of %llu", c->cfg.flow_series);
	print_uint(p, "flows_over_limit", ", flows over the limit %llu",
		   c->flows_over_limit);
	print_text(p, "\n");
	(void)print_destroy(p);
}

void corr_print_hosts(const struct corr *c, struct printer *p)
{
	int64_t now = corr_live_now(c, nstime_now(CLOCK_REALTIME));

	print_array_begin(p, "hosts");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];
		const struct corr_host_live *l = &h->live;

		print_object_begin(p, NULL);
		print_str(p, "host", "host %s", h->name);
		print_str(p, "state", " %s", corr_live_state(h));
		print_int(p, "horizon_ns", NULL, l->horizon);
		if (l->horizon)
			print_double(p, "age_s", ", data %.3f s old",
				     (double)(now - l->horizon) / 1e9);
		else
			print_null(p, "age_s", ", data age %s");
		print_str(p, "sync", ", sync %s", corr_sync_name(l->sync));
		print_uint(p, "packets", ", %llu packets", h->packets);
		print_uint(p, "messages", ", %llu messages", h->messages);
		print_uint(p, "unmatched", ", %llu unmatched", h->only_here);
		print_uint(p, "drops", ", %llu dropped", l->drops);
		print_uint(p, "files", ", %llu files", (unsigned long long)l->fst.files);
		print_uint(p, "restarts", ", %llu capd restarts\n",
			   (unsigned long long)l->fst.restarts);
		print_object_end(p);
	}
	print_array_end(p);
}

/* ---- figures for alert rules ---- */

static const struct corr_host *corr_live_host_named(const struct corr *c,
						    const char *name, size_t n)
{
	for (unsigned i = 0; i < c->nhosts; i++)
		if (strlen(c->hosts[i]->name) == n &&
		    !memcmp(c->hosts[i]->name, name, n))
			return c->hosts[i];
	return NULL;
}

static int corr_live_stat_value(const struct hist *hv,
				const struct corr_live_stat *l,
				const char *stat, double *v)
{
	struct summary s;

	if (!strcmp(stat, "holdover")) {
		*v = (double)l->iv_hold;
		return 0;
	}
	if (!strcmp(stat, "out_of_sync")) {
		*v = (double)l->iv_out;
		return 0;
	}
	if (!strcmp(stat, "bound")) {
		*v = (double)l->iv_bound_max;
		return l->iv_bound_known ? 0 : -ENOENT;
	}
	hist_summary(hv, &s);
	if (!strcmp(stat, "count")) {
		*v = (double)s.n;
		return 0;
	}
	if (!s.n)
		return -ENOENT;
	if (!strcmp(stat, "min"))
		*v = (double)s.min;
	else if (!strcmp(stat, "max"))
		*v = (double)s.max;
	else if (!strcmp(stat, "mean"))
		*v = s.mean;
	else if (!strcmp(stat, "p50"))
		*v = (double)s.p50;
	else if (!strcmp(stat, "p90"))
		*v = (double)s.p90;
	else if (!strcmp(stat, "p99"))
		*v = (double)s.p99;
	else if (!strcmp(stat, "p99.9"))
		*v = (double)s.p999;
	else
		return -ENOENT;
	return 0;
}

int corr_interval_value(const struct corr *c, const char *subject,
			const char *stat, double *v)
{
	const char *arrow = strstr(subject, "->"), *at = strchr(subject, '@');
	const struct corr_host *a = NULL, *b = NULL;
	const struct corr_stats_set *set = &c->live_txns;
	const char *sw = NULL;
	int kind = -1;

	if (!strncmp(subject, "host:", 5)) {
		a = corr_live_host_named(c, subject + 5, strlen(subject + 5));
		if (!a)
			return -ENOENT;
		if (!strcmp(stat, "age"))
			*v = (double)(corr_live_now(c, nstime_now(CLOCK_REALTIME)) -
				      a->live.horizon);
		else if (!strcmp(stat, "unmatched"))
			*v = (double)(a->only_here - a->live.iv_only_here);
		else if (!strcmp(stat, "count"))
			*v = (double)(a->messages - a->live.iv_messages);
		else
			return -ENOENT;
		return 0;
	}
	if (!strncmp(subject, "switch:", 7)) {
		set = &c->live_switches;
		sw = subject + 7;
	} else if (arrow) {
		set = &c->live_hops;
		a = corr_live_host_named(c, subject, (size_t)(arrow - subject));
		b = corr_live_host_named(c, arrow + 2, strlen(arrow + 2));
		if (!a || !b)
			return -ENOENT;
	} else {
		size_t n = at ? (size_t)(at - subject) : strlen(subject);

		for (int k = 0; k < TXN_KINDS; k++)
			if (strlen(corr_txn_names[k]) == n &&
			    !memcmp(corr_txn_names[k], subject, n))
				kind = k;
		if (kind < 0)
			return -ENOENT;
		if (at && !(a = corr_live_host_named(c, at + 1, strlen(at + 1))))
			return -ENOENT;
	}
	/* Every result the subject covers (a kind at all hosts, a switch on
	 * every path), merged. */
	struct hist *m = hist_create();
	struct corr_live_stat sum = { .iv = m };
	bool found = false;
	int ret;

	for (size_t i = 0; i < set->n; i++) {
		const struct corr_stat *s = &set->v[i];

		const struct corr_live_stat *l = s->ext;

		if (!l || !l->iv)
			continue;
		if (sw && (!s->sw || strcmp(s->sw, sw)))
			continue;
		if (kind >= 0 && s->kind != kind)
			continue;
		if (a && a->idx != s->from)
			continue;
		if (b && b->idx != s->to)
			continue;
		found = true;
		hist_merge(m, l->iv);
		sum.iv_out += l->iv_out;
		sum.iv_hold += l->iv_hold;
		sum.iv_bound_known += l->iv_bound_known;
		if (l->iv_bound_max > sum.iv_bound_max)
			sum.iv_bound_max = l->iv_bound_max;
	}
	ret = found ? corr_live_stat_value(m, &sum, stat, v) : -ENOENT;
	hist_destroy(m);
	return ret;
}

/* ---- metrics ---- */

/* corr_live_le_ns in seconds, as literals: a bound computed in a loop
 * may be a digit off in the last place and be written with 17 digits. */
static const double corr_live_le_s[CORR_LIVE_BUCKETS] = {
	1e-07, 2e-07, 5e-07, 1e-06, 2e-06, 5e-06, 1e-05, 2e-05, 5e-05, 0.0001,
	0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01,
};

static void corr_live_hist(FILE *out, const char *name,
			   const char *const *labels,
			   const struct corr_live_stat *l)
{
	metrics_histogram(out, name, labels, corr_live_le_s, l->le,
			  CORR_LIVE_BUCKETS, l->n, l->sum_s);
}

/* A counter per hop (flow "all"): its samples out of sync, or (hold)
 * those in holdover. */
static void corr_live_hop_counter(FILE *out, enum metrics_format fmt,
				  const struct corr *c,
				  const char *name, const char *help,
				  bool hold)
{
	char total[96];

	metrics_family(out, fmt, name, METRICS_COUNTER, help, NULL);
	snprintf(total, sizeof(total), "%s_total", name);
	for (size_t i = 0; i < c->live_hops.n; i++) {
		const struct corr_stat *s = &c->live_hops.v[i];
		const char *lab[] = {
			"from", c->hosts[s->from]->name, "to", c->hosts[s->to]->name,
			NULL,
		};

		const struct corr_live_stat *l = s->ext;

		if (l && s->flow == ALL_FLOWS)
			metrics_sample(out, total, lab, (double)(hold ?
				       l->hold : l->out));
	}
}

int corr_metrics(const struct corr *c, FILE *out, int fmtv)
{
	enum metrics_format fmt = (enum metrics_format)fmtv;
	int64_t now = corr_live_now(c, nstime_now(CLOCK_REALTIME));

	metrics_family(out, fmt, "tapless_hop_latency_seconds",
		       METRICS_HISTOGRAM, "one-way latency of each hop: RX "
		       "stamp at 'to' minus TX stamp at 'from' (samples in sync or "
		       "in holdover; flow=\"all\" for every flow)", "seconds");
	for (size_t i = 0; i < c->live_hops.n; i++) {
		const struct corr_stat *s = &c->live_hops.v[i];
		const char *lab[] = {
			"from", c->hosts[s->from]->name, "to", c->hosts[s->to]->name,
			"flow", s->flow == ALL_FLOWS ? "all" : c->flows[s->flow].name,
			NULL,
		};

		if (s->ext)
			corr_live_hist(out, "tapless_hop_latency_seconds", lab,
				       s->ext);
	}
	metrics_family(out, fmt, "tapless_transaction_latency_seconds",
		       METRICS_HISTOGRAM, "transaction latency at one host "
		       "(tick_to_trade, fill_to_sell, order_to_ack, order_to_fill)",
		       "seconds");
	for (size_t i = 0; i < c->live_txns.n; i++) {
		const struct corr_stat *s = &c->live_txns.v[i];
		const char *lab[] = {
			"host", c->hosts[s->from]->name,
			"kind", corr_txn_names[s->kind], NULL,
		};

		if (s->ext)
			corr_live_hist(out, "tapless_transaction_latency_seconds",
				       lab, s->ext);
	}
	metrics_family(out, fmt, "tapless_switch_latency_seconds",
		       METRICS_HISTOGRAM, "latency of the switch on each path "
		       "(one-way minus cable and serialisation)", "seconds");
	for (size_t i = 0; i < c->live_switches.n; i++) {
		const struct corr_stat *s = &c->live_switches.v[i];
		const char *lab[] = {
			"switch", s->sw, "from", c->hosts[s->from]->name,
			"to", c->hosts[s->to]->name, NULL,
		};

		if (s->ext)
			corr_live_hist(out, "tapless_switch_latency_seconds", lab,
				       s->ext);
	}
	metrics_family(out, fmt, "tapless_flow_series", METRICS_GAUGE,
		       "per-flow series of tapless_hop_latency_seconds held "
		       "(at most --flow-series; a flow's go once it is idle)",
		       NULL);
	metrics_sample(out, "tapless_flow_series", NULL,
		       (double)c->flow_series);
	metrics_family(out, fmt, "tapless_flows_over_limit", METRICS_COUNTER,
		       "flows whose samples found the per-flow series full "
		       "(counted in flow=\"all\" only)", NULL);
	metrics_sample(out, "tapless_flows_over_limit_total", NULL,
		       (double)c->flows_over_limit);
	corr_live_hop_counter(out, fmt, c, "tapless_hop_out_of_sync_samples",
			      "hop samples left out: an end was out of sync",
			      false);
	corr_live_hop_counter(out, fmt, c, "tapless_hop_holdover_samples",
			      "hop samples kept with a bound grown in "
			      "holdover: an end was in holdover, none out of "
			      "sync", true);

	static const struct {
		const char *name, *help;
		enum metrics_type type;
		const char *unit;
	} fam[] = {
		{ "tapless_messages", "FIX messages seen at the host", METRICS_COUNTER, NULL },
		{ "tapless_unmatched_messages", "messages no other host saw within the window", METRICS_COUNTER, NULL },
		{ "tapless_capture_drops", "frames the host's capture dropped (capd's statistics)", METRICS_COUNTER, NULL },
		{ "tapless_late_packets", "packets that came after their interval was closed", METRICS_COUNTER, NULL },
		{ "tapless_capture_restarts", "new tapless-capd runs seen in the host's files", METRICS_COUNTER, NULL },
		{ "tapless_data_age_seconds", "how old the host's newest data is (heartbeat or packet)", METRICS_GAUGE, "seconds" },
		{ "tapless_host_stalled", "1 while the host's data has stopped arriving", METRICS_GAUGE, NULL },
		{ "tapless_host_in_sync", "the host's journal at the watermark: 1 in sync, 2 in holdover, 0 out, -1 no journal", METRICS_GAUGE, NULL },
	};
	for (unsigned k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		char name[96];

		metrics_family(out, fmt, fam[k].name, fam[k].type, fam[k].help,
			       fam[k].unit);
		snprintf(name, sizeof(name), "%s%s", fam[k].name,
			 fam[k].type == METRICS_COUNTER ? "_total" : "");
		for (unsigned i = 0; i < c->nhosts; i++) {
			const struct corr_host *h = c->hosts[i];
			const char *lab[] = { "host", h->name, NULL };
			double v = 0;

			switch (k) {
			case 0: v = (double)h->messages; break;
			case 1: v = (double)h->only_here; break;
			case 2: v = (double)h->live.drops; break;
			case 3: v = (double)h->live.late; break;
			case 4: v = (double)h->live.fst.restarts; break;
			case 5: v = h->live.horizon ?
				    (double)(now - h->live.horizon) / 1e9 : NAN;
				break;
			case 6: v = h->live.stalled; break;
			case 7: v = h->live.sync == SYNC_IN ? 1 :
				    h->live.sync == SYNC_HOLD ? 2 :
				    h->live.sync == SYNC_OUT ? 0 : -1;
				break;
			}
			metrics_sample(out, name, lab, v);
		}
	}
	return ferror(out) ? -EIO : 0;
}
