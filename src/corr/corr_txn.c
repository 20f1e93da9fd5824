/* corr_txn.c — transactions at one host (see corr_private.h): the FTTC
 * rules (tick-to-trade, fill-to-sell, order-to-ack, order-to-fill) from
 * the triggers kept per symbol and the orders awaiting their reports, and
 * the market data rate that puts samples in their rate bucket.
 */
#include <math.h>
#include <string.h>

#include "fix/fix.h"
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

static void corr_ring_add(struct corr_ring *r, int64_t ts)
{
	r->ts[r->head] = ts;
	r->head = (r->head + 1) % CORR_RING;
	if (r->n < CORR_RING)
		r->n++;
}

/* The latest stamp before ts, or 0. */
static int64_t corr_ring_before(const struct corr_ring *r, int64_t ts)
{
	int64_t best = 0;

	for (unsigned i = 0; i < r->n; i++) {
		int64_t v = r->ts[(r->head + CORR_RING - 1 - i) % CORR_RING];

		if (v < ts && v > best)
			best = v;
	}
	return best;
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

static void corr_txn_sample(struct corr *c, struct corr_host *h, int kind,
			    int64_t ts, int64_t v)
{
	int b = h->bucket;

	if (c->cfg.samples)
		corr_sample_line(c, corr_txn_names[kind], h->name, h->name, ts,
				 v, SYNC_NONE, -1, b, "-");
	if (c->cfg.on_txn)
		c->cfg.on_txn(c->cfg.rec_arg, h->idx, corr_txn_names[kind], ts,
			      v);

	corr_stat_add(corr_stat(&c->txns, (uint16_t)h->idx, (uint16_t)h->idx,
				ALL_FLOWS, NO_BUCKET, kind, NULL), v, SYNC_NONE,
		      -1);
	if (b != NO_BUCKET)
		corr_stat_add(corr_stat(&c->txns, (uint16_t)h->idx,
					(uint16_t)h->idx, ALL_FLOWS, b, kind,
					NULL), v, SYNC_NONE, -1);
	c->measured = true;
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
				corr_ring_add(&y->md, ts);
				type = -1;
			}
		}
		return;
	}
	if (corr_is(f, F_35, "D") && dir == DIR_OUT) {
		if (f->v[F_55] && (corr_is(f, F_54, "1") || corr_is(f, F_54, "2"))) {
			bool buy = corr_is(f, F_54, "1");
			int kind = buy ? TXN_TICK_TO_TRADE : TXN_FILL_TO_SELL;
			int64_t trig;

			y = corr_sym(h, f->v[F_55], f->len[F_55]);
			trig = corr_ring_before(buy ? &y->md : &y->fill, ts);
			if (trig)
				corr_txn_sample(c, h, kind, ts, ts - trig);
			else
				h->no_trigger[kind]++;
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
			corr_ring_add(&y->fill, ts);
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
