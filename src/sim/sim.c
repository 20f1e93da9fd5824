/* sim.c — see sim.h and tapless-sim(1).
 *
 * A discrete-event simulation in true time (picoseconds since the start,
 * UTC). Applications (the venue publishing market data and answering
 * orders, the algo trading) send FIX messages on two TCP connections; each
 * send is cut into segments of at most MSS bytes; a segment leaves its NIC
 * when the NIC is free (frames never overlap on a link), crosses the cables
 * and the switch, and arrives at the other NIC no earlier than the previous
 * frame on that link has finished (the switch's egress is FIFO). The sender's
 * capture gets the frame at its TX instant, the receiver's at its arrival,
 * each stamped by the host's clock model. A tap on a host gets both at their
 * instants on the wire (before any receive stack delay), stamped by the
 * tap's clock, through the same kind of queue as a host's.
 *
 * Events are handled in time order and every frame they create has a time at
 * or after the event's, so a record can be written once no future record of
 * its host can have a smaller stamp: each host keeps a small heap of records
 * ordered by stamp, flushed up to (now + the host's lowest clock error).
 *
 * The receiving application sees bytes in order (TCP): a message is
 * delivered when every segment up to its end has arrived. Because arrivals
 * are FIFO per link, the segments of a flow arrive in the order they are
 * committed, so a message is delivered at the arrival of the last segment
 * committed when it becomes complete.
 *
 * This file: the defaults and names of sim.h, errors, the event queue and
 * the run; the model's parts are in the files sim_private.h lists.
 */
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"
#include "base/heap.h"
#include "base/hist.h"
#include "base/mkpath.h"
#include "base/rng.h"
#include "base/xalloc.h"
#include "files/frame.h"
#include "sim/sim_private.h"
#include "sim/swmodel.h"

#define MSS_MAX 8960

const char *const sim_hosts[SIM_HOSTS] = { "algo", "venue" };
const uint8_t sim_addr[SIM_HOSTS][4] = { { 198, 18, 0, 1 }, { 198, 18, 0, 2 } };

/* The switch models are swmodel's presets (the FTTC figures, shared with
 * tapless-swemu); "none" is back to back. */
static const struct swmodel_preset sim_no_switch = { .name = "none" };
const struct swmodel_preset *const sim_switches[SIM_SWITCH_COUNT] = {
	[SIM_SWITCH_NONE] = &sim_no_switch,
	[SIM_SWITCH_ARISTA_7124SX] = &swmodel_presets[SWMODEL_ARISTA_7124SX],
	[SIM_SWITCH_MELLANOX_SX1036] = &swmodel_presets[SWMODEL_MELLANOX_SX1036],
	[SIM_SWITCH_GNODAL_GS7200] = &swmodel_presets[SWMODEL_GNODAL_GS7200],
};

const char *const sim_formats[SIM_FMT_COUNT] = { "pcapng", "pcap", "pcap-us" };

int sim_switch_from_name(const char *name)
{
	for (int i = 0; i < SIM_SWITCH_COUNT; i++)
		if (!strcmp(name, sim_switches[i]->name))
			return i;
	return -1;
}

void sim_config_init(struct sim_config *c)
{
	static const double offset[SIM_HOSTS] = { 20, -15 };

	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->rates[0] = 1000;
	c->nrates = 1;
	c->duration_s = 5;
	c->symbols = "AAPL,MSFT,GOOG";
	c->algo_reaction_ns = 3000;
	c->algo_reaction_exp_ns = 500;
	c->venue_reaction_ns = 2000;
	c->venue_reaction_exp_ns = 300;
	c->coalesce = 0.5;
	c->sw = SIM_SWITCH_ARISTA_7124SX;
	c->cable_m = 2;
	c->speed_bps = 10000000000LL;
	c->start_s = 1763900000;
	c->mss = 1448;
	c->pure_acks = 0.1;
	c->journal_interval_s = 1;
	c->qty = 100;
	for (int h = 0; h < SIM_HOSTS; h++) {
		struct sim_host_config *hc = &c->host[h];

		hc->clock.offset_ns = offset[h];
		hc->clock.wander_ns = 10;
		hc->clock.period_s = 60;
		hc->clock.noise_ns = 2;
		hc->clock.quantum_ps = 8 * PS_PER_NS;
		hc->tai = true;
		hc->format = SIM_FMT_PCAPNG;
	}
	/* An Endace DAG: GPS-disciplined, 7.5 ns clock. */
	c->tap_clock.period_s = 60;
	c->tap_clock.quantum_ps = 7500;
}

int sim_fail(char err[SIM_ERRBUF], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, SIM_ERRBUF, -EINVAL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The first system error: kept with its message, the run stops. */
int sim_sys(struct sim *s, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (s->err)
		return s->err;
	s->err = err;
	if (s->errmsg) {
		va_start(ap, fmt);
		errbuf_vset(s->errmsg, SIM_ERRBUF, err, fmt, ap);
		va_end(ap);
		n = strlen(s->errmsg);
		errbuf_set(s->errmsg + n, SIM_ERRBUF - n, err, ": %s",
			   strerror(-err));
	}
	return err;
}

/* ---------------------------------------------------------------- events */

void sim_ev_push(struct sim *s, int64_t t, int type, int a, uint32_t b,
		 struct seg *g)
{
	struct event e = { t < s->now ? s->now : t, s->evorder++, (uint8_t)type,
			   (uint8_t)a, b, g };

	heap_push(s->ev, &e);
}

static bool ev_before(const void *a, const void *b, void *ctx)
{
	const struct event *x = a, *y = b;

	(void)ctx;
	return x->t < y->t || (x->t == y->t && x->order < y->order);
}

static struct event ev_pop(struct sim *s)
{
	struct event top;

	heap_pop(s->ev, &top);
	return top;
}

static int sim_check(const struct sim_config *c, char err[SIM_ERRBUF])
{
	if (!c->out_dir || !*c->out_dir)
		return sim_fail(err, "--output: an output directory is needed");
	if (!c->nrates)
		return sim_fail(err, "--rates: no rate given");
	for (unsigned i = 0; i < c->nrates; i++)
		if (c->rates[i] < 1 || c->rates[i] > 10000000)
			return sim_fail(err, "rate %" PRId64 " out of range "
					"(1 to 10000000)", c->rates[i]);
	if (c->messages <= 0 && !(c->duration_s > 0))
		return sim_fail(err, "--duration: must be above 0");
	for (unsigned i = 0; i < c->nrates && c->messages <= 0; i++)
		if (llround((double)c->rates[i] * c->duration_s) < 1)
			return sim_fail(err, "--duration: %g s at %" PRId64
					"/s is no message", c->duration_s, c->rates[i]);
	if (c->mss < 16 || c->mss > MSS_MAX)
		return sim_fail(err, "--mss: %u out of range (16 to %d)",
				c->mss, MSS_MAX);
	if ((int)c->sw < 0 || (int)c->sw >= SIM_SWITCH_COUNT)
		return sim_fail(err, "--switch: unknown model");
	if (!(c->journal_interval_s >= 0.001))
		return sim_fail(err, "--journal-interval: at least 0.001 s");
	if (c->speed_bps <= 0 || (8 * PS_PER_S) % c->speed_bps)
		return sim_fail(err, "--speed: not a speed whose bit time is "
				"a whole number of picoseconds");
	for (int h = 0; h <= SIM_HOSTS; h++) {
		const struct sim_clock *k = h < SIM_HOSTS ? &c->host[h].clock :
							    &c->tap_clock;

		if (!(k->period_s > 0) || k->quantum_ps < 1 || !(k->noise_ns >= 0) ||
		    !(fabs(k->rate_ppb) <= 1e6))
			return sim_fail(err, "--clock %s: period must be above "
					"0, quantum at least 0.001, noise not negative, "
					"|rate| at most 1e6 ppb",
					h < SIM_HOSTS ? sim_hosts[h] : "tap");
	}
	if (c->qty < 1)
		return sim_fail(err, "--qty: at least 1");
	if (c->truth_samples && c->no_truth_stats)
		return sim_fail(err, "--truth-samples: not with --no-truth-stats");
	for (int h = 0; h < SIM_HOSTS; h++)
		if (!(c->host[h].capture_drop >= 0 && c->host[h].capture_drop < 1))
			return sim_fail(err, "--capture-drop %s=%g: a probability "
					"from 0 to below 1", sim_hosts[h],
					c->host[h].capture_drop);
	return 0;
}

/* ------------------------------------------------------------------ run */

static void sim_loop(struct sim *s)
{
	while (heap_count(s->ev) && !s->err) {
		struct event e = ev_pop(s);

		s->now = e.t;
		switch (e.type) {
		case EV_MD: sim_ev_md(s); break;
		case EV_CTRL: sim_ev_ctrl(s, e.a, (int)e.b); break;
		case EV_LOGON: sim_ev_logon(s, e.a, DIR_C2S); break;
		case EV_LOGON_REPLY: sim_ev_logon(s, e.a, DIR_S2C); break;
		case EV_BUY: sim_ev_order(s, e.b, 0); break;
		case EV_SELL: sim_ev_order(s, e.b, 1); break;
		case EV_REPORTS: sim_ev_reports(s, e.b, e.a); break;
		case EV_ACK: sim_ev_ack(s, e.a); break;
		case EV_RETRANS: sim_ev_retrans(s, e.seg); break;
		}
		for (int h = 0; h < SIM_HOSTS; h++) {
			if (heap_count(s->h[h].q))
				sim_host_flush(s, &s->h[h], false);
			if (heap_count(s->tap[h].q))
				sim_host_flush(s, &s->tap[h], false);
		}
	}
	for (int h = 0; h < SIM_HOSTS; h++) {
		sim_host_flush(s, &s->h[h], true);
		if (s->tap[h].tap)
			sim_host_flush(s, &s->tap[h], true);
	}
}

static void sim_free(struct sim *s)
{
	for (int h = 0; h < 2 * SIM_HOSTS; h++) {
		struct host *x = h < SIM_HOSTS ? &s->h[h] : &s->tap[h - SIM_HOSTS];

		struct rec *r;

		while (x->q && heap_pop(x->q, &r)) {
			r->next = s->recfree;
			s->recfree = r;
		}
		heap_destroy(x->q);
		free(x->path);
		free(x->tmp);
	}
	while (s->recfree) {
		struct rec *r = s->recfree;

		s->recfree = r->next;
		free(r);
	}
	for (struct event e; s->ev && heap_pop(s->ev, &e); )
		if (e.seg)
			sim_seg_free(s, e.seg);
	for (int i = 0; i < CONNS * 2; i++) {
		struct flow *f = &s->f[i];

		if (f->held)
			sim_seg_free(s, f->held);
		free(f->rq);
		free(f->unc);
		free(f->pend);
		free(s->trk[i].ooo);
		free(s->trk[i].pend);
	}
	while (s->segfree) {
		struct seg *g = s->segfree;

		s->segfree = g->next;
		free(g);
	}
	heap_destroy(s->ev);
	for (unsigned b = 0; s->b && b < s->nb; b++)
		for (int d = 0; d < D_COUNT; d++) {
			free(s->b[b].d[d].v);
			hist_destroy(s->b[b].d[d].h);
		}
	for (int h = 0; h < SIM_HOSTS; h++)
		for (int d = 0; d < REF_DISTS; d++) {
			free(s->ref[h].d[d].v);
			hist_destroy(s->ref[h].d[d].h);
		}
	for (int t = 0; t < TR_COUNT; t++)
		free(s->txl[t].v);
	free(s->hopl.v);
	free(s->b);
	free(s->tr);
	free(s->fbuf);
}

int sim_run(const struct sim_config *c, struct sim_result *res,
	    char err[SIM_ERRBUF])
{
	struct sim *s;
	char *path;
	int rc;

	if (res)
		memset(res, 0, sizeof(*res));
	rc = sim_check(c, err);
	if (rc)
		return rc;
	s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->errmsg = err;
	fix_utc_cache_init(&s->utc);
	rc = sim_symbols(s, c->symbols ? c->symbols : "", err);
	if (rc) {
		free(s);
		return rc;
	}
	rng_seed(&s->net, c->seed, 1);
	rng_seed(&s->app, c->seed, 2);
	rng_seed(&s->fault, c->seed, 3);
	rng_seed(&s->misc, c->seed, 4);
	s->frame_cap = FRAME_MAX_HEADER + (c->mss > 256 ? c->mss : 256) + 64;
	s->fbuf = xmalloc(s->frame_cap);
	s->ps_per_byte = 8 * PS_PER_S / c->speed_bps;
	s->ncables = c->sw == SIM_SWITCH_NONE ? 1 : 2;
	s->cables_ps = s->ncables * llround(c->cable_m * NS_PER_M * PS_PER_NS);
	s->nb = c->nrates + 1;
	s->b = xcalloc(s->nb, sizeof(*s->b));
	/* Fixed sizes and orders: these cannot fail. */
	heap_create(&s->ev, sizeof(struct event), 0, ev_before, NULL);
	for (int h = 0; h < 2 * SIM_HOSTS; h++)
		heap_create(h < SIM_HOSTS ? &s->h[h].q : &s->tap[h - SIM_HOSTS].q,
			    sizeof(struct rec *), 0, sim_rec_less, NULL);
	for (int h = 0; h < SIM_HOSTS; h++) {
		sim_host_init(s, h);
		/* A stream of its own per host: the drops change nothing else,
		 * and one host's drops are independent of the other's. */
		rng_seed(&s->h[h].droprng, c->seed, 30 + (uint64_t)h);
		if (c->tap[h])
			sim_tap_init(s, h);
	}
	sim_flow_init(s, CONN_MD, DIR_C2S, 40001, 9001);
	sim_flow_init(s, CONN_MD, DIR_S2C, 40001, 9001);
	sim_flow_init(s, CONN_ORD, DIR_C2S, 40002, 9002);
	sim_flow_init(s, CONN_ORD, DIR_S2C, 40002, 9002);

	rc = mkpath_p(c->out_dir, 0755);
	if (rc) {
		sim_sys(s, rc, "%s", c->out_dir);
		goto out;
	}
	for (int h = 0; h < SIM_HOSTS && !s->err; h++) {
		sim_host_open(s, &s->h[h]);
		if (c->tap[h] && !s->err)
			sim_tap_open(s, &s->tap[h]);
	}
	if (s->err)
		goto out;

	sim_fttc_start(s);
	sim_loop(s);

	for (int h = 0; h < SIM_HOSTS; h++) {
		sim_host_close(s, &s->h[h], s->err != 0);
		sim_host_close(s, &s->tap[h], s->err != 0);
	}
	if (s->err)
		goto out;
	for (int h = 0; h < SIM_HOSTS && !s->err; h++) {
		char jn[32];

		sim_host_span(s, &s->h[h]);
		snprintf(jn, sizeof(jn), "%s.journal", sim_hosts[h]);
		path = sim_path_join(c->out_dir, jn);
		sim_write_journal(s, &s->h[h], path);
		free(path);
	}
	if (!s->err) {
		path = sim_path_join(c->out_dir, "topology");
		sim_write_topology(s, path);
		free(path);
	}
	if (!s->err) {
		path = sim_path_join(c->out_dir, "truth.json");
		sim_write_truth(s, path);
		free(path);
	}
	if (!s->err && c->truth_samples) {
		path = sim_path_join(c->out_dir, "truth-samples");
		sim_write_truth_samples(s, path);
		free(path);
	}
	if (res && !s->err) {
		res->md_messages = s->md_n;
		res->trades = s->ntr;
		res->fix_messages = s->fix_messages;
		for (int h = 0; h < SIM_HOSTS; h++) {
			res->packets[h] = s->h[h].packets;
			snprintf(res->file[h], sizeof(res->file[h]), "%s", s->h[h].file);
			res->tap_packets[h] = s->tap[h].packets;
			res->capture_dropped[h] = s->h[h].dropped;
			snprintf(res->tap_file[h], sizeof(res->tap_file[h]), "%s",
				 s->tap[h].file);
		}
	}
out:
	for (int h = 0; h < SIM_HOSTS; h++) {
		sim_host_close(s, &s->h[h], true);
		sim_host_close(s, &s->tap[h], true);
	}
	rc = s->err;
	sim_free(s);
	free(s);
	return rc;
}
