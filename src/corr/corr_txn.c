/* corr_txn.c — transactions at one host (see corr_private.h): the FTTC
 * rules (tick-to-trade, fill-to-sell, order-to-ack, order-to-fill) from
 * the triggers kept per symbol and the orders awaiting their reports, and
 * the market data rate that puts samples in their rate bucket.
 *
 * Stamp order. Tick-to-trade and fill-to-sell pair an order with the
 * latest trigger before it by stamp. Streams hand messages out in the
 * order reassembly releases them, and a hole in an inbound stream (a
 * segment lost on the wire and resent, or a frame the capture dropped)
 * holds every later message of that stream back; and a hole is only
 * known once a later segment comes. So an order is only paired once every
 * inbound stream of its host that carries its kind of trigger has shown
 * data stamped past the order and holds nothing from before it behind a
 * hole (corr_txn_ready(); until then it waits, in h->pend, looked at
 * again after each packet). A hole that is given up (the capture never
 * had those bytes) is remembered with the time span its bytes were on
 * the wire in: an
 * order whose latest known trigger is older than such a span that began
 * before the order may have been triggered by a message in it, and is
 * counted as trigger_lost, never paired with the older trigger.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fix/fix.h"
#include "fix/fixstream.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

const char *const corr_txn_names[TXN_KINDS] = {
	"tick_to_trade", "fill_to_sell", "order_to_ack", "order_to_fill",
};

/* A market data message at the host: its rate bucket becomes the centre
 * nearest, on a log scale, to the rate of its last CORR_RATE_RING market
 * data messages. Worked out here, once per market data message; every
 * sample then reads h->bucket. */
void corr_md_seen(const struct corr *c, struct corr_host *h, int64_t ts)
{
	int64_t span;
	double rate, best = INFINITY;

	h->md_ts[h->md_head] = ts;
	h->md_head = (h->md_head + 1) % CORR_RATE_RING;
	if (h->md_n < CORR_RATE_RING)
		h->md_n++;
	if (!c->cfg.by_rate || h->md_n < 2)
		return;
	span = ts - h->md_ts[(h->md_head + CORR_RATE_RING - h->md_n) %
			     CORR_RATE_RING];
	if (span <= 0)
		return;
	rate = (double)(h->md_n - 1) * 1e9 / (double)span;
	for (unsigned i = 0; i < c->cfg.nrates; i++) {
		double d = fabs(log(rate / c->cfg.rates[i]));

		if (d < best) {
			best = d;
			h->bucket = (int)i;
		}
	}
}

/* Insert ts in stamp order (at the end but for triggers a hole held
 * back), and let go of those older than keep_ns before the newest, the
 * latest CORR_RING aside. */
static void corr_ring_add(struct corr_ring *r, int64_t ts, int64_t keep_ns)
{
	size_t i;

	while (r->end - r->start > CORR_RING &&
	       r->ts[r->start] < r->ts[r->end - 1] - keep_ns) {
		if (r->ts[r->start] > r->gone)
			r->gone = r->ts[r->start];
		r->start++;
	}
	if (r->end == r->cap) {
		size_t n = r->end - r->start;

		if (!r->cap || r->start < r->cap / 2) {
			r->cap = r->cap ? r->cap * 2 : CORR_RING * 2;
			r->ts = xrealloc(r->ts, r->cap * sizeof(*r->ts));
		}
		if (n)
			memmove(r->ts, r->ts + r->start, n * sizeof(*r->ts));
		r->start = 0;
		r->end = n;
	}
	for (i = r->end; i > r->start && r->ts[i - 1] > ts; i--)
		;
	memmove(r->ts + i + 1, r->ts + i, (r->end - i) * sizeof(*r->ts));
	r->ts[i] = ts;
	r->end++;
}

/* The latest stamp before ts, or 0. */
static int64_t corr_ring_before(const struct corr_ring *r, int64_t ts)
{
	size_t lo = r->start, hi = r->end;

	while (lo < hi) {		/* the first at or after ts */
		size_t mid = lo + (hi - lo) / 2;

		if (r->ts[mid] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > r->start ? r->ts[lo - 1] : 0;
}

static struct corr_sym *corr_sym(struct corr_host *h, const char *s,
				 size_t len)
{
	struct corr_sym *y;
	char key[sizeof(y->name)] = { 0 };
	void *v;

	if (len >= sizeof(key))
		len = sizeof(key) - 1;
	memcpy(key, s, len);
	if (!h->syms)	/* fixed sizes: cannot fail */
		hmap_create(&h->syms, sizeof(key), sizeof(y), 32, false);
	if (hmap_add(h->syms, key, &v) == 0) {
		memcpy(&y, v, sizeof(y));
		return y;
	}
	y = xcalloc(1, sizeof(*y));
	memcpy(y->name, key, sizeof(key));
	memcpy(v, &y, sizeof(y));
	return y;
}

/* An order by ClOrdID hash. Finished orders keep their slot until they
 * age out of the window, so that probing never stops short of a live
 * order placed past them. */
static struct corr_order *corr_order(struct corr *c, struct corr_host *h,
				     uint64_t key, int64_t ts)
{
	struct corr_order *o, *victim = NULL;
	size_t k = key & (CORR_ORDERS - 1);

	for (unsigned i = 0; i < 16; i++, k = (k + 1) & (CORR_ORDERS - 1)) {
		o = &h->orders[k];
		if (o->key == key && o->created >= ts - c->cfg.window_ns)
			return o;
		if (!o->key || o->created < ts - c->cfg.window_ns) {
			if (!victim || victim->key)
				victim = o;
		} else if (!victim || (victim->key &&
				       o->created < victim->created)) {
			victim = o;
		}
	}
	memset(victim, 0, sizeof(*victim));
	victim->key = key;
	victim->created = ts;
	return victim;
}

static void corr_txn_sample_at(struct corr *c, struct corr_host *h,
			       int kind, int64_t ts, int64_t v, int b)
{
	struct corr_sample x = {
		.set = CORR_SET_TXNS, .from = (uint16_t)h->idx,
		.to = (uint16_t)h->idx, .flow = ALL_FLOWS, .bucket = b,
		.kind = kind, .ts = ts, .v = v, .sync = SYNC_NONE, .bound = -1,
	};

	corr_emit(c, &x);
	c->measured = true;
}

static void corr_txn_sample(struct corr *c, struct corr_host *h, int kind,
			    int64_t ts, int64_t v)
{
	corr_txn_sample_at(c, h, kind, ts, v, h->bucket);
}

/* ---- stamp order ---- */

static struct corr_loss *corr_loss_of(struct corr_host *h, uint32_t flow)
{
	for (unsigned i = 0; i < h->nlosses; i++)
		if (h->losses[i].flow == flow)
			return &h->losses[i];
	h->losses = xrealloc(h->losses, (h->nlosses + 1) * sizeof(*h->losses));
	memset(&h->losses[h->nlosses], 0, sizeof(h->losses[0]));
	h->losses[h->nlosses].flow = flow;
	return &h->losses[h->nlosses++];
}

void corr_txn_lost(void *arg, int64_t lo, int64_t hi, uint64_t bytes)
{
	struct corr_stream *s = arg;
	struct corr_host *h = s->h;
	struct corr_loss *l = corr_loss_of(h, s->flow);
	struct corr_lost *r;

	l->holes++;
	l->bytes += bytes;
	if (s->dir != DIR_IN)
		return;		/* the host's own orders: not seen at all */
	if (h->nlost == CORR_LOST_RING) {
		r = &h->lost[h->lost_head];
		if (r->hi > h->lost_horizon) {
			h->lost_horizon = r->hi;
			h->lost_horizon_flow = r->flow;
		}
	} else {
		h->nlost++;
	}
	r = &h->lost[h->lost_head];
	h->lost_head = (h->lost_head + 1) % CORR_LOST_RING;
	r->lo = lo;
	r->hi = hi;
	r->flow = s->flow;
	r->carried = s->carried ? s->carried : ~0u;
}

/* Whether lost bytes may have held a trigger of the order's kind later
 * than trig; *flow: the flow that lost them. */
static bool corr_lost_hides(const struct corr_host *h, int kind, int64_t trig,
			    int64_t ts, uint32_t *flow)
{
	for (unsigned i = 0; i < h->nlost; i++) {
		const struct corr_lost *r = &h->lost[i];

		if ((r->carried & (1u << kind)) && r->lo < ts && r->hi > trig) {
			*flow = r->flow;
			return true;
		}
	}
	/* The ring let a region go that may have held it: not cleared. */
	*flow = h->lost_horizon_flow;
	return h->lost_horizon > trig;
}

static void corr_txn_eval(struct corr *c, struct corr_host *h,
			  const struct corr_pend *o)
{
	int64_t trig = o->trig;
	const struct corr_ring *ring = o->kind == TXN_TICK_TO_TRADE ? &o->y->md :
				       &o->y->fill;
	uint32_t flow;

	if (ring->gone > trig && ring->gone < o->ts) {
		/* Held back longer than its triggers are kept: its latest
		 * trigger may be one let go. */
		h->trigger_lost[o->kind]++;
		h->pend_full++;
		return;
	}
	if (corr_lost_hides(h, o->kind, trig, o->ts, &flow)) {
		h->trigger_lost[o->kind]++;
		corr_loss_of(h, flow)->affected++;
		return;
	}
	if (trig)
		corr_txn_sample_at(c, h, o->kind, o->ts, o->ts - trig, o->bucket);
	else
		h->no_trigger[o->kind]++;
}

/* Another inbound stream of h than x, carrying kind, has data stamped
 * past ts: the capture is alive for that kind of trigger. */
static bool corr_kind_alive(const struct corr *c, const struct corr_host *h,
			    const struct corr_stream *x, int kind, int64_t ts)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		const struct corr_stream *s = c->streams[i];

		if (s != x && s->h == h && s->dir == DIR_IN &&
		    (s->carried & (1u << kind)) && s->last_ts >= ts)
			return true;
	}
	return false;
}

/* Whether every inbound stream of h that carries the order's triggers
 * has shown all it holds from before the order's stamp: no open hole
 * from before it, and data stamped past it. A hole is only known once
 * a later segment comes, so a stream that has shown nothing past the
 * order yet may still be missing its trigger: a capture that stalled
 * looks just like a quiet stream until then. No time limit stands in for
 * that segment (a stall outlasts any). A stream stops holding orders
 * back when its sender ended it (FIN, RST), or when it has been silent
 * for the matching window before the order while another stream of its
 * kind shows the capture alive past it (a connection gone without a
 * FIN captured); else a FIX session's heartbeats bound the wait, the
 * end of the input ends it, and CORR_PEND_MAX bounds the memory. */
static bool corr_txn_ready(const struct corr *c, const struct corr_host *h,
			   const struct corr_pend *o)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		const struct corr_stream *s = c->streams[i];

		if (s->h != h || s->dir != DIR_IN ||
		    !(s->carried & (1u << o->kind)))
			continue;
		if (s->hole && s->hole_lo < o->ts)
			return false;
		if (s->last_ts < o->ts && !s->ended &&
		    !(s->last_ts < o->ts - c->cfg.window_ns &&
		      corr_kind_alive(c, h, s, o->kind, o->ts)))
			return false;
	}
	return true;
}

/* Pair the waiting orders nothing holds back any more. */
static void corr_txn_release(struct corr *c, struct corr_host *h)
{
	size_t keep = 0;

	for (size_t i = 0; i < h->npend; i++) {
		if (corr_txn_ready(c, h, &h->pend[i]))
			corr_txn_eval(c, h, &h->pend[i]);
		else
			h->pend[keep++] = h->pend[i];
	}
	h->npend = keep;
}

bool corr_stream_hole(const struct corr_stream *s, int64_t *lo)
{
	*lo = 0;
	return s->dir == DIR_IN && fixstream_hole(s->fs, lo);
}

void corr_txn_holes_at(struct corr *c, struct corr_stream *s, bool hole,
		       int64_t lo)
{
	s->hole = hole;
	s->hole_lo = lo;
	if (s->h->npend)
		corr_txn_release(c, s->h);
}

void corr_txn_holes(struct corr *c, struct corr_stream *s)
{
	int64_t lo;
	bool hole = corr_stream_hole(s, &lo);

	corr_txn_holes_at(c, s, hole, lo);
}

void corr_txn_flush(struct corr *c, struct corr_host *h)
{
	for (size_t i = 0; i < h->npend; i++)
		corr_txn_eval(c, h, &h->pend[i]);
	h->npend = 0;
}

/* A trigger of kind for y at ts, released now: a waiting order after it
 * whose latest trigger so far is older takes it. */
static void corr_txn_trigger(struct corr_host *h, struct corr_sym *y, int kind,
			     int64_t ts)
{
	for (size_t i = 0; i < h->npend; i++) {
		struct corr_pend *o = &h->pend[i];

		if (o->y == y && o->kind == kind && ts < o->ts && ts > o->trig)
			o->trig = ts;
	}
}

/* An order at ts: paired now, or once no hole holds its trigger back. */
static void corr_txn_order(struct corr *c, struct corr_host *h, int kind,
			   struct corr_sym *y, int64_t ts)
{
	struct corr_pend o = { .ts = ts, .y = y, .kind = kind,
			       .bucket = h->bucket };

	o.trig = corr_ring_before(kind == TXN_TICK_TO_TRADE ? &y->md : &y->fill,
				  ts);
	if (corr_txn_ready(c, h, &o)) {
		corr_txn_eval(c, h, &o);
		return;
	}
	if (h->npend == CORR_PEND_MAX) {
		/* Cannot wait longer: counted, never paired by guess. */
		h->trigger_lost[kind]++;
		h->pend_full++;
		return;
	}
	if (h->npend == h->cap_pend) {
		h->cap_pend = h->cap_pend ? h->cap_pend * 2 : 64;
		h->pend = xrealloc(h->pend, h->cap_pend * sizeof(*h->pend));
	}
	h->pend[h->npend++] = o;
}

static void corr_order_check(struct corr *c, struct corr_host *h,
			     struct corr_order *o)
{
	if (o->tx && o->ack && !(o->done & 1)) {
		corr_txn_sample(c, h, TXN_ORDER_TO_ACK, o->tx, o->ack - o->tx);
		o->done |= 1;
	}
	if (o->tx && o->fill && !(o->done & 2)) {
		corr_txn_sample(c, h, TXN_ORDER_TO_FILL, o->tx,
				 o->fill - o->tx);
		o->done |= 2;
	}
}

void corr_fields(const struct fix_msg *m, struct corr_fields *f)
{
	memset(f, 0, sizeof(*f));
	for (uint32_t i = 0; i < m->nfields; i++) {
		int k;

		switch (m->f[i].tag) {
		case 35: k = F_35; break;
		case 49: k = F_49; break;
		case 56: k = F_56; break;
		case 34: k = F_34; break;
		case 11: k = F_11; break;
		case 55: k = F_55; break;
		case 54: k = F_54; break;
		case 39: k = F_39; break;
		case 52: k = F_52; break;
		case 60: k = F_60; break;
		default: continue;
		}
		if (!f->v[k]) {
			f->v[k] = m->buf + m->f[i].off;
			f->len[k] = m->f[i].len;
		}
	}
}

bool corr_is(const struct corr_fields *f, int k, const char *s)
{
	size_t n = strlen(s);

	return f->v[k] && f->len[k] == n && !memcmp(f->v[k], s, n);
}

void corr_txn(struct corr *c, struct corr_host *h, uint8_t dir,
	      int64_t ts, const struct fix_msg *m,
	      const struct corr_fields *f)
{
	struct corr_sym *y;

	if (corr_is(f, F_35, "X") && dir == DIR_IN) {
		/* Each bid entry (269=0) with its symbol triggers. */
		int type = -1;

		for (uint32_t i = 0; i < m->nfields; i++) {
			const struct fix_field *x = &m->f[i];

			if (x->tag == 269)
				type = x->len == 1 && m->buf[x->off] == '0';
			else if (x->tag == 55 && type == 1) {
				y = corr_sym(h, m->buf + x->off, x->len);
				corr_ring_add(&y->md, ts, 2 * c->cfg.hold_ns);
				if (h->npend)
					corr_txn_trigger(h, y, TXN_TICK_TO_TRADE,
							 ts);
				type = -1;
			}
		}
		return;
	}
	if (corr_is(f, F_35, "D") && dir == DIR_OUT) {
		if (f->v[F_55] && (corr_is(f, F_54, "1") || corr_is(f, F_54, "2"))) {
			bool buy = corr_is(f, F_54, "1");

			y = corr_sym(h, f->v[F_55], f->len[F_55]);
			corr_txn_order(c, h, buy ? TXN_TICK_TO_TRADE :
				       TXN_FILL_TO_SELL, y, ts);
		}
		if (f->v[F_11]) {
			struct corr_order *o = corr_order(
				c, h, hmap_hash(f->v[F_11], f->len[F_11]),
				ts);

			if (!o->tx)
				o->tx = ts;
			corr_order_check(c, h, o);
		}
		return;
	}
	if (corr_is(f, F_35, "8") && dir == DIR_IN && f->v[F_11]) {
		bool ack = corr_is(f, F_39, "0"), fill = corr_is(f, F_39, "2");
		struct corr_order *o;

		if (!ack && !fill)
			return;
		if (fill && corr_is(f, F_54, "1") && f->v[F_55]) {
			y = corr_sym(h, f->v[F_55], f->len[F_55]);
			corr_ring_add(&y->fill, ts, 2 * c->cfg.hold_ns);
			if (h->npend)
				corr_txn_trigger(h, y, TXN_FILL_TO_SELL, ts);
		}
		o = corr_order(c, h, hmap_hash(f->v[F_11], f->len[F_11]),
			       ts);
		if (ack && !o->ack)
			o->ack = ts;
		if (fill && !o->fill)
			o->fill = ts;
		corr_order_check(c, h, o);
	}
}

/* The caller's transaction callback (cfg.on_txn: tapless export's
 * records), each transaction as it is found. */
static void corr_txn_cb_take(struct corr *c, const struct corr_sample *x)
{
	if (x->set == CORR_SET_TXNS)
		c->cfg.on_txn(c->cfg.rec_arg, x->from, corr_txn_names[x->kind],
			      x->ts, x->v);
}

const struct corr_sink corr_txn_cb_sink = { .sample = corr_txn_cb_take };
