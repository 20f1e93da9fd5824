/* sim_truth.c — the truth sim computes as it runs: one-way latencies per
 * hop (stamped and true), the switch's, the algo's transactions measured
 * on its capture read back in file order as a reader would; their
 * summaries, and truth.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/wholefile.h"
#include "base/xalloc.h"
#include "files/pcapng.h"
#include "sim/sim_private.h"
#include "sim/swmodel.h"

/* Nearest nanosecond of a picosecond count, halves up. */
static int64_t ps_to_ns(int64_t ps)
{
	return sim_floordiv(ps + PS_PER_NS / 2, PS_PER_NS);
}

static const char *const tr_names[TR_COUNT] = {
	"tick_to_trade", "fill_to_sell", "order_to_ack", "order_to_fill",
};

void sim_dist_add(const struct sim *s, struct dist *d, int64_t v)
{
	if (s->c->no_truth_stats) {
		if (!d->h)
			d->h = hist_create();
		hist_add(d->h, v);
		return;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = v;
}

static struct bucket *sim_bucket(struct sim *s, int b)
{
	return &s->b[b < 0 ? s->c->nrates : (unsigned)b];
}

static void hop_list_add(struct hop_list *l, const struct hop_sample *h)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = *h;
}

/* One-way truth of the messages starting in segment g, from the copies
 * stamped first at each end. */
void sim_hop_truth(struct sim *s, const struct seg *g,
		   const struct stamp_at *tx, const struct stamp_at *rx)
{
	const struct flow *f = &s->f[g->flow];
	const struct host *A = &s->h[f->src], *B = &s->h[f->dst];
	int64_t st, tr_ps, sw_ps;
	bool sync;

	if (!tx->capt || !rx->capt || !g->nstart)
		return;
	st = (rx->stamp - B->tai_ns) - (tx->stamp - A->tai_ns);
	tr_ps = rx->ps - tx->ps;
	sw_ps = rx->wire_ps - tx->ps - s->cables_ps;
	if (sim_switches[s->c->sw]->mode == SWMODEL_STORE_FORWARD)
		sw_ps -= (int64_t)(g->flen < 60 ? 64 : g->flen + 4) * s->ps_per_byte;
	sync = sim_journal_lookup(s, A, tx->stamp - A->tai_ns) &&
	       sim_journal_lookup(s, B, rx->stamp - B->tai_ns);
	for (unsigned i = 0; i < g->nstart; i++) {
		struct bucket *b = sim_bucket(s, g->start[i].bucket);

		if (s->c->truth_samples)
			hop_list_add(&s->hopl, &(struct hop_sample){
				.tx_utc = tx->stamp - A->tai_ns,
				.rx_utc = rx->stamp - B->tai_ns,
				.true_ps = tr_ps, .sw_ps = sw_ps,
				.from = (uint8_t)f->src, .sync = sync });
		if (!sync) {
			sim_dist_add(s, &b->d[D_HOP_OUT + f->src], st);
			continue;
		}
		sim_dist_add(s, &b->d[D_HOP_ST + f->src], st);
		sim_dist_add(s, &b->d[D_HOP_TR + f->src], ps_to_ns(tr_ps));
		if (s->c->sw != SIM_SWITCH_NONE)
			sim_dist_add(s, &b->d[D_SW + f->src], ps_to_ns(sw_ps));
		{
			double e = fabs((double)(st * PS_PER_NS - tr_ps)) / PS_PER_NS;

			if (!b->has_err[f->src] || e > b->maxerr[f->src])
				b->maxerr[f->src] = e;
			b->has_err[f->src] = true;
		}
	}
}

/* One entry of truth.json's per-sample list (not kept with histograms). */
static void txn_list_add(struct sim *s, int which, int64_t ts, int64_t v,
			 bool trigger)
{
	struct txn_list *l = &s->txl[which];

	if (s->c->no_truth_stats)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = (struct txn_sample){ ts, v, trigger };
}

/* A transaction at the algo: from a (earlier) to z, both in its capture;
 * ts is the order's stamp. */
static void tr_truth(struct sim *s, int which, int bucket,
		     const struct stamp_at *a, const struct stamp_at *z,
		     int64_t ts)
{
	struct bucket *b = sim_bucket(s, bucket);

	if (!a->set || !z->set)
		return;
	sim_dist_add(s, &b->d[D_TR_ST + which], z->stamp - a->stamp);
	sim_dist_add(s, &b->d[D_TR_TR + which], ps_to_ns(z->ps - a->ps));
	txn_list_add(s, which, ts, z->stamp - a->stamp, true);
}

static void latest_add(struct latest *l, const struct stamp_at *at,
		       int64_t trade, bool lost)
{
	l->v[l->head].at = *at;
	l->v[l->head].trade = trade;
	l->v[l->head].lost = lost;
	l->head = (l->head + 1) % LATEST_RING;
	if (l->n < LATEST_RING)
		l->n++;
}

/* The latest one stamped strictly before stamp, or NULL. */
static const struct stamp_at *latest_before(const struct latest *l,
					    int64_t stamp, int64_t *trade,
					    bool *lost)
{
	const struct stamp_at *best = NULL;

	for (unsigned i = 0; i < l->n; i++) {
		unsigned k = (l->head + LATEST_RING - 1 - i) % LATEST_RING;

		if (l->v[k].at.stamp < stamp &&
		    (!best || l->v[k].at.stamp > best->stamp)) {
			best = &l->v[k].at;
			*trade = l->v[k].trade;
			*lost = l->v[k].lost;
		}
	}
	return best;
}

/* An order taken at the algo measured from the latest trigger before it
 * (kind TR_TICK or TR_FILL_SELL): in the figures when that trigger is
 * whole in the capture; else counted as trigger_lost, and listed with the
 * latency it would have had. */
static void tr_trigger(struct sim *s, int kind, struct trade *t,
		       const struct latest *l, const struct mstart *m,
		       const struct stamp_at *at)
{
	const struct stamp_at *from;
	int64_t trade = -1;
	bool lost = false;

	from = latest_before(l, at->stamp, &trade, &lost);
	if (!from)
		return;
	if (lost) {
		sim_bucket(s, t->bucket)->trigger_lost[kind]++;
		txn_list_add(s, kind, at->stamp, at->stamp - from->stamp, false);
		return;
	}
	tr_truth(s, kind, t->bucket, from, at, at->stamp);
	if (kind == TR_TICK && trade != (int64_t)m->trade)
		sim_bucket(s, t->bucket)->not_trigger++;
}

/* Message m of the algo's capture is taken (its first byte stamped at):
 * whole, or, when lost, with bytes in frames --capture-drop left out (at
 * is then the stamp its first byte's frame had or would have had). A lost
 * message is never measured, but a lost bid or fill is still the latest
 * one before the orders after it. */
static void tr_message(struct sim *s, bool in, const struct mstart *m,
		       const struct stamp_at *at, bool lost)
{
	struct trade *t;

	if (m->kind == MK_MD || m->kind == MK_TRIGGER) {
		if (in)
			latest_add(&s->bid[m->sym], at,
				   m->kind == MK_TRIGGER ? (int64_t)m->trade : -1,
				   lost);
		return;
	}
	if (m->kind < MK_ORDER)
		return;
	t = &s->tr[m->trade];
	if (m->kind == MK_ORDER && !in && !t->tx[m->side].set &&
	    !t->tx_lost[m->side]) {
		/* An order not in the file is no transaction at all. */
		if (lost) {
			t->tx_lost[m->side] = true;
			return;
		}
		t->tx[m->side] = *at;
		if (m->side == 0)
			tr_trigger(s, TR_TICK, t, &s->bid[m->sym], m, at);
		else
			tr_trigger(s, TR_FILL_SELL, t, &s->fill[m->sym], m, at);
		if (t->ack[m->side].set)
			tr_truth(s, TR_ACK, t->bucket, &t->tx[m->side],
				 &t->ack[m->side], at->stamp);
		if (t->fill[m->side].set)
			tr_truth(s, TR_FILL, t->bucket, &t->tx[m->side],
				 &t->fill[m->side], at->stamp);
	} else if (m->kind == MK_NEW && in && !lost && !t->ack[m->side].set) {
		t->ack[m->side] = *at;
		if (t->tx[m->side].set)
			tr_truth(s, TR_ACK, t->bucket, &t->tx[m->side], at,
				 t->tx[m->side].stamp);
	} else if (m->kind == MK_FILL && in && !t->fill[m->side].set) {
		if (m->side == 0)
			latest_add(&s->fill[m->sym], at, m->trade, lost);
		if (lost)
			return;
		t->fill[m->side] = *at;
		if (t->tx[m->side].set)
			tr_truth(s, TR_FILL, t->bucket, &t->tx[m->side], at,
				 t->tx[m->side].stamp);
	}
}

/* Whether bytes [off, end) of k's flow met a frame left out of the file. */
static bool trk_dropped(const struct trk *k, uint64_t off, uint64_t end)
{
	for (unsigned i = 0; i < k->ndrop; i++)
		if (k->drop[i].off < end && off < k->drop[i].end)
			return true;
	return false;
}

/* One frame of the algo's capture, in file order: the messages it makes
 * whole. */
void sim_tr_record(struct sim *s, const struct rec *r)
{
	struct trk *k = &s->trk[r->flow];
	uint64_t end = r->off + r->plen;
	bool in = r->dir == PCAPNG_DIR_IN;

	for (unsigned i = 0; i < r->ntag; i++) {
		struct trk_msg *p;
		size_t j;

		if (k->pn == k->pcap) {
			size_t ncap = k->pcap ? k->pcap * 2 : 64;
			struct trk_msg *n = xmalloc(ncap * sizeof(*n));

			for (size_t x = 0; x < k->pn; x++)
				n[x] = k->pend[(k->ph + x) % k->pcap];
			free(k->pend);
			k->pend = n;
			k->pcap = ncap;
			k->ph = 0;
		}
		/* In order of their ends, nearly always at the back. */
		for (j = k->pn; j > 0; j--) {
			struct trk_msg *q = &k->pend[(k->ph + j - 1) % k->pcap];

			if (q->end <= r->tag[i].end)
				break;
			k->pend[(k->ph + j) % k->pcap] = *q;
		}
		p = &k->pend[(k->ph + j) % k->pcap];
		p->end = r->tag[i].end;
		p->m = r->tag[i];
		p->at = (struct stamp_at){ .stamp = r->stamp, .ps = r->t_ps,
					   .capt = true, .set = true };
		k->pn++;
	}
	/* A frame left out of the file: its bytes are a hole the reader
	 * gives up at once, and the messages it meets are lost. */
	if (r->dropped) {
		k->drop[k->drop_head].off = r->off;
		k->drop[k->drop_head].end = end;
		k->drop_head = (k->drop_head + 1) % DROP_RING;
		if (k->ndrop < DROP_RING)
			k->ndrop++;
	}
	/* Reassembly: bytes before the first frame seen are not known. */
	if (!k->started) {
		k->started = true;
		k->cont = r->off;
	}
	if (r->off > k->cont) {
		size_t j;

		if (k->nooo == k->cooo) {
			k->cooo = k->cooo ? k->cooo * 2 : 16;
			k->ooo = xrealloc(k->ooo, k->cooo * sizeof(*k->ooo));
		}
		for (j = k->nooo; j > 0 && k->ooo[j - 1].off > r->off; j--)
			k->ooo[j] = k->ooo[j - 1];
		k->ooo[j].off = r->off;
		k->ooo[j].end = end;
		k->nooo++;
	} else if (end > k->cont) {
		size_t j = 0;

		k->cont = end;
		while (j < k->nooo && k->ooo[j].off <= k->cont) {
			if (k->ooo[j].end > k->cont)
				k->cont = k->ooo[j].end;
			j++;
		}
		if (j) {
			memmove(k->ooo, k->ooo + j, (k->nooo - j) * sizeof(*k->ooo));
			k->nooo -= j;
		}
	}
	while (k->pn && k->pend[k->ph].end <= k->cont) {
		struct trk_msg p = k->pend[k->ph];

		k->ph = (k->ph + 1) % k->pcap;
		k->pn--;
		tr_message(s, in, &p.m, &p.at,
			   k->ndrop && trk_dropped(k, p.end - p.m.len, p.end));
	}
}

/* Summary of the samples of n distributions together. */
void sim_dists_summary(const struct sim *s, const struct dist *const *d,
		       unsigned n, struct summary *out)
{
	size_t total = 0;
	int64_t *v;

	if (s->c->no_truth_stats) {
		struct hist *h = hist_create();

		for (unsigned i = 0; i < n; i++)
			if (d[i]->h)
				hist_merge(h, d[i]->h);
		hist_summary(h, out);
		hist_destroy(h);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		total += d[i]->n;
	/* One holds them all: no copy. */
	for (unsigned i = 0; i < n; i++)
		if (d[i]->n == total) {
			summary_of(d[i]->v, total, out);
			return;
		}
	v = xmalloc((total ? total : 1) * sizeof(*v));
	total = 0;
	for (unsigned i = 0; i < n; i++) {
		if (d[i]->n)
			memcpy(v + total, d[i]->v, d[i]->n * sizeof(*v));
		total += d[i]->n;
	}
	summary_of(v, total, out);
	free(v);
}

/* Summary of distribution di over bucket bi, or every bucket (bi < 0). */
static void dist_summary(struct sim *s, int di, int bi, struct summary *out)
{
	const struct dist *d[SIM_MAX_RATES + 1];	/* a bucket per rate, and one spare */
	unsigned n = 0;

	for (unsigned i = 0; i < s->nb; i++)
		if (bi < 0 || (unsigned)bi == i)
			d[n++] = &s->b[i].d[di];
	sim_dists_summary(s, d, n, out);
}

static void sim_print_hops(struct printer *p, struct sim *s, int bi, int64_t rate)
{
	print_array_begin(p, "hops");
	for (int a = 0; a < SIM_HOSTS; a++) {
		struct summary in_st, in_tr, out_st;
		double maxerr = 0;
		bool has = false;

		dist_summary(s, D_HOP_ST + a, bi, &in_st);
		dist_summary(s, D_HOP_TR + a, bi, &in_tr);
		dist_summary(s, D_HOP_OUT + a, bi, &out_st);
		for (unsigned i = 0; i < s->nb; i++) {
			if ((bi >= 0 && (unsigned)bi != i) || !s->b[i].has_err[a])
				continue;
			if (!has || s->b[i].maxerr[a] > maxerr)
				maxerr = s->b[i].maxerr[a];
			has = true;
		}
		print_object_begin(p, NULL);
		print_str(p, "from", NULL, sim_hosts[a]);
		print_str(p, "to", NULL, sim_hosts[1 - a]);
		print_str(p, "flow", NULL, "all");
		print_uint(p, "messages", NULL, in_st.n + out_st.n);
		print_object_begin(p, "in_sync");
		print_uint(p, "messages", NULL, in_st.n);
		summary_print(p, "stamped_ns", &in_st);
		summary_print(p, "true_ns", &in_tr);
		print_object_end(p);
		print_object_begin(p, "out_of_sync");
		print_uint(p, "messages", NULL, out_st.n);
		summary_print(p, "stamped_ns", &out_st);
		print_object_end(p);
		if (has)
			print_double(p, "max_abs_error_ns", NULL, round(maxerr * 1000) / 1000);
		else
			print_null(p, "max_abs_error_ns", NULL);
		if (rate > 0)
			print_int(p, "rate", NULL, rate);
		print_object_end(p);
	}
	print_array_end(p);
}

static void sim_print_transactions(struct printer *p, struct sim *s, int bi)
{
	print_array_begin(p, "transactions");
	for (int t = 0; t < TR_COUNT; t++) {
		struct summary st, tr;

		dist_summary(s, D_TR_ST + t, bi, &st);
		dist_summary(s, D_TR_TR + t, bi, &tr);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, tr_names[t]);
		print_str(p, "host", NULL, "algo");
		print_uint(p, "count", NULL, st.n);
		summary_print(p, "stamped_ns", &st);
		summary_print(p, "true_ns", &tr);
		if (t == TR_TICK) {
			uint64_t n = 0;

			for (unsigned i = 0; i < s->nb; i++)
				if (bi < 0 || (unsigned)bi == i)
					n += s->b[i].not_trigger;
			print_uint(p, "latest_bid_not_trigger", NULL, n);
		}
		if (t == TR_TICK || t == TR_FILL_SELL) {
			uint64_t n = 0;

			for (unsigned i = 0; i < s->nb; i++)
				if (bi < 0 || (unsigned)bi == i)
					n += s->b[i].trigger_lost[t];
			print_uint(p, "trigger_lost", NULL, n);
		}
		/* Every sample, to join with the correlator's one by one (the
		 * totals only: a sample does not say its rate). */
		if (bi < 0 && !s->c->no_truth_stats) {
			const struct txn_list *l = &s->txl[t];
			int64_t tai = s->h[SIM_ALGO].tai_ns;

			print_array_begin(p, "samples");
			for (size_t i = 0; i < l->n; i++) {
				print_object_begin(p, NULL);
				print_int(p, "ts", NULL, l->v[i].ts);
				print_int(p, "ts_utc", NULL, l->v[i].ts - tai);
				print_int(p, "latency_ns", NULL, l->v[i].latency_ns);
				print_bool(p, "trigger_captured", NULL, l->v[i].trigger);
				print_object_end(p);
			}
			print_array_end(p);
		}
		print_object_end(p);
	}
	print_array_end(p);
}

static void sim_print_switches(struct printer *p, struct sim *s, int bi)
{
	print_array_begin(p, "switches");
	for (int a = 0; s->c->sw != SIM_SWITCH_NONE && a < SIM_HOSTS; a++) {
		struct summary sw;

		dist_summary(s, D_SW + a, bi, &sw);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, "sw1");
		print_str(p, "model", NULL, sim_switches[s->c->sw]->name);
		print_str(p, "kind", NULL,
			  swmodel_mode_name(sim_switches[s->c->sw]->mode));
		print_str(p, "from", NULL, sim_hosts[a]);
		print_str(p, "to", NULL, sim_hosts[1 - a]);
		print_uint(p, "messages", NULL, sw.n);
		summary_print(p, "true_ns", &sw);
		print_object_end(p);
	}
	print_array_end(p);
}

int sim_write_truth(struct sim *s, const char *path)
{
	const struct sim_config *c = s->c;
	struct wholefile w;
	struct printer *p;
	char speed[32];
	int err = wholefile_open(&w, path);

	if (err) {
		sim_sys(s, err, "%s", w.tmp);
		wholefile_close(&w, true);
		return err;
	}
	sim_speed_text(c->speed_bps, speed, sizeof(speed));
	p = print_create(w.f, PRINT_JSON, PRINT_PRETTY);
	print_uint(p, "seed", NULL, c->seed);
	print_array_begin(p, "rates");
	for (unsigned i = 0; i < c->nrates; i++)
		print_int(p, NULL, NULL, c->rates[i]);
	print_array_end(p);
	print_uint(p, "messages", NULL, s->md_n);
	print_uint(p, "trades", NULL, s->ntr);
	print_uint(p, "fix_messages", NULL, s->fix_messages);
	print_int(p, "start_ns", NULL, sim_start_ns(s));
	print_int(p, "end_ns", NULL, sim_start_ns(s) + s->last_ps / PS_PER_NS);
	print_str(p, "topology", NULL, "topology");
	print_str(p, "switch", NULL, sim_switches[c->sw]->name);
	print_double(p, "cable_m", NULL, c->cable_m);
	print_double(p, "ns_per_m", NULL, NS_PER_M);
	print_str(p, "speed", NULL, speed);
	print_array_begin(p, "hosts");
	for (int i = 0; i < SIM_HOSTS; i++) {
		struct host *h = &s->h[i];
		const struct sim_clock *k = &h->cfg->clock;
		char jn[32];

		snprintf(jn, sizeof(jn), "%s.journal", sim_hosts[i]);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, sim_hosts[i]);
		print_str(p, "file", NULL, h->file);
		print_str(p, "journal", NULL, jn);
		print_str(p, "format", NULL, sim_formats[h->cfg->format]);
		print_int(p, "stamp_resolution_ns", NULL, h->res_ns);
		print_str(p, "timescale", NULL, h->cfg->tai ? "tai" : "utc");
		{
			char a[16];

			snprintf(a, sizeof(a), "%u.%u.%u.%u", sim_addr[i][0],
				 sim_addr[i][1], sim_addr[i][2], sim_addr[i][3]);
			print_str(p, "address", NULL, a);
		}
		print_object_begin(p, "clock");
		print_double(p, "offset_ns", NULL, k->offset_ns);
		if (k->rate_ppb != 0)
			print_double(p, "rate_ppb", NULL, k->rate_ppb);
		print_double(p, "wander_ns", NULL, k->wander_ns);
		print_double(p, "period_s", NULL, k->period_s);
		print_double(p, "noise_ns", NULL, k->noise_ns);
		print_double(p, "quantum_ns", NULL, (double)k->quantum_ps / PS_PER_NS);
		print_double(p, "phase_rad", NULL, round(h->phase * 1e6) / 1e6);
		print_double(p, "clock_error_ns", NULL, h->cfg->clock_error_ns);
		print_object_end(p);
		print_int(p, "capture_start_ns", NULL,
			  sim_start_ns(s) + h->cap_start_ps / PS_PER_NS);
		print_array_begin(p, "unsync");
		for (unsigned u = 0; u < h->cfg->nunsync; u++) {
			print_object_begin(p, NULL);
			print_double(p, "from_s", NULL, h->cfg->unsync[u].from_s);
			print_double(p, "to_s", NULL, h->cfg->unsync[u].to_s);
			print_object_end(p);
		}
		print_array_end(p);
		print_uint(p, "packets", NULL, h->packets);
		print_double(p, "capture_drop", NULL, h->cfg->capture_drop);
		print_object_end(p);
	}
	print_array_end(p);
	print_object_begin(p, "capture_dropped");
	for (int i = 0; i < SIM_HOSTS; i++)
		print_uint(p, sim_hosts[i], NULL, s->h[i].dropped);
	print_object_end(p);
	sim_print_hops(p, s, -1, c->nrates == 1 ? c->rates[0] : 0);
	sim_print_transactions(p, s, -1);
	sim_print_switches(p, s, -1);
	print_object_begin(p, "faults");
	print_uint(p, "retransmitted_segments", NULL, s->fl.retransmitted);
	print_uint(p, "lost_then_retransmitted", NULL, s->fl.lost);
	print_uint(p, "coalesced_segments", NULL, s->fl.coalesced);
	print_uint(p, "split_messages", NULL, s->fl.split);
	print_uint(p, "reordered", NULL, s->fl.reordered);
	print_uint(p, "pure_acks", NULL, s->fl.pure_acks);
	print_uint(p, "non_fix_packets", NULL, s->fl.non_fix);
	print_object_end(p);
	if (c->nrates > 1) {
		print_array_begin(p, "by_rate");
		for (unsigned r = 0; r < c->nrates; r++) {
			print_object_begin(p, NULL);
			print_int(p, "rate", NULL, c->rates[r]);
			sim_print_hops(p, s, (int)r, c->rates[r]);
			sim_print_transactions(p, s, (int)r);
			sim_print_switches(p, s, (int)r);
			print_object_end(p);
		}
		print_array_end(p);
	}
	if (c->tap[SIM_ALGO] || c->tap[SIM_VENUE])
		sim_print_reference(p, s);
	err = print_destroy(p) ? -EIO : 0;
	err = wholefile_close(&w, err != 0) ?: err;
	if (err)
		sim_sys(s, err, "%s", path);
	return err;
}

/* truth-samples: a line per hop message, in the order the messages
 * arrived (tapless-sim(1), FILES). */
int sim_write_truth_samples(struct sim *s, const char *path)
{
	struct wholefile w;
	int err = wholefile_open(&w, path);

	if (err) {
		sim_sys(s, err, "%s", w.tmp);
		wholefile_close(&w, true);
		return err;
	}
	fprintf(w.f, "# tapless sim truth samples\n"
		"# from to tx_ns rx_ns latency_ns true_ps switch_ps sync\n");
	for (size_t i = 0; i < s->hopl.n; i++) {
		const struct hop_sample *h = &s->hopl.v[i];

		fprintf(w.f, "%s %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " ",
			sim_hosts[h->from], sim_hosts[1 - h->from], h->tx_utc,
			h->rx_utc, h->rx_utc - h->tx_utc, h->true_ps);
		if (s->c->sw != SIM_SWITCH_NONE)
			fprintf(w.f, "%" PRId64, h->sw_ps);
		else
			fputc('-', w.f);
		fprintf(w.f, " %d\n", h->sync);
	}
	err = wholefile_close(&w, false);
	if (err)
		sim_sys(s, err, "%s", path);
	return err;
}
