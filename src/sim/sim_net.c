/* sim_net.c — sim's network: each NIC sends one frame at a time, frames
 * cross the cables and the switch (swmodel's latency figures) to a FIFO
 * egress, the receive stack may delay the stamp; TCP on top: segments cut
 * at the MSS, retransmissions, reordering, pure ACKs and non-FIX noise
 * drawn per segment, and the receiver's in-order delivery, which is when
 * the application reacts.
 */
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/rng.h"
#include "base/xalloc.h"
#include "files/frame.h"
#include "sim/sim_private.h"
#include "sim/swmodel.h"

#define RTO_PS (200 * 1000 * PS_PER_NS)	/* retransmission after 200 us */
#define KERNEL_PS (2000 * PS_PER_NS)	/* handshake answers */
#define ACK_DELAY_PS (500 * PS_PER_NS)	/* pure ACK after data, + exp */
#define ACK_JITTER_NS 500.0

static int64_t wire_ps(const struct sim *s, uint32_t flen)
{
	/* Frame (padded to 60) + FCS + preamble + inter-frame gap. */
	return (int64_t)((flen < 60 ? 60 : flen) + 4 + 8 + 12) * s->ps_per_byte;
}

static int64_t nic_tx(struct sim *s, int hi, uint32_t flen)
{
	struct host *h = &s->h[hi];
	int64_t tx = s->now > h->nic_free_ps ? s->now : h->nic_free_ps;

	h->nic_free_ps = tx + wire_ps(s, flen);
	return tx;
}

/* Arrival of the frame's first bit at host dst's NIC. */
static int64_t path_arrival(struct sim *s, int dst, int64_t tx, uint32_t flen)
{
	int64_t a = tx + s->cables_ps;

	if (s->c->sw != SIM_SWITCH_NONE) {
		double r = rng_tnormal(&s->net, sim_switches[s->c->sw]->latency_ns,
				       sim_switches[s->c->sw]->jitter_ns);

		a += llround(r * PS_PER_NS);
		if (sim_switches[s->c->sw]->mode == SWMODEL_STORE_FORWARD)
			a += (int64_t)((flen < 60 ? 60 : flen) + 4) * s->ps_per_byte;
	}
	if (a < s->egress_free[dst])
		a = s->egress_free[dst];
	s->egress_free[dst] = a + wire_ps(s, flen);
	return a;
}

/* When the receiving host stamps it (and its stack hands it up). */
static int64_t rx_instant(struct sim *s, int dst, int64_t wire)
{
	struct host *h = &s->h[dst];
	int64_t r = wire;

	if (!s->c->stack_delay_ns && !s->c->stack_jitter_ns)
		return wire;
	r += s->c->stack_delay_ns * PS_PER_NS +
	     llround(rng_exp(&s->app, (double)s->c->stack_jitter_ns) * PS_PER_NS);
	if (r < h->stack_last_ps)
		r = h->stack_last_ps;
	h->stack_last_ps = r;
	return r;
}

/* Send a frame built in s->fbuf from host src to the other; returns where
 * it was stamped at each end. */
static void wire_send(struct sim *s, int src, uint32_t flen, struct stamp_at *tx,
		      struct stamp_at *rx, const struct seg *g, bool txtag,
		      bool rxtag)
{
	int dst = 1 - src;
	int64_t t = nic_tx(s, src, flen), w, r;
	struct stamp_at dummy[2];

	if (!tx)
		tx = &dummy[0];
	if (!rx)
		rx = &dummy[1];
	tx->ps = tx->wire_ps = t;
	tx->stamp = sim_host_stamp(&s->h[src], t, sim_start_ns(s));
	tx->set = true;
	sim_emit(s, src, PCAPNG_DIR_OUT, t, t, tx->stamp, s->fbuf, flen, g, txtag,
		 tx);
	w = path_arrival(s, dst, t, flen);
	r = rx_instant(s, dst, w);
	rx->ps = r;
	rx->wire_ps = w;
	rx->stamp = sim_host_stamp(&s->h[dst], r, sim_start_ns(s));
	rx->set = true;
	sim_emit(s, dst, PCAPNG_DIR_IN, r, w, rx->stamp, s->fbuf, flen, g, rxtag,
		 rx);
}

/* ------------------------------------------------------------- TCP flows */

void sim_flow_init(struct sim *s, int conn, int dir, uint16_t client_port,
		   uint16_t server_port)
{
	struct flow *f = &s->f[sim_flow_index(conn, dir)];
	int client = SIM_ALGO, server = SIM_VENUE;

	f->conn = conn;
	f->src = dir == DIR_C2S ? client : server;
	f->dst = 1 - f->src;
	f->ff.family = AF_INET;
	f->ff.proto = IPPROTO_TCP;
	memcpy(f->ff.src, sim_addr[f->src], 4);
	memcpy(f->ff.dst, sim_addr[f->dst], 4);
	f->ff.sport = dir == DIR_C2S ? client_port : server_port;
	f->ff.dport = dir == DIR_C2S ? server_port : client_port;
	f->isn = (uint32_t)rng_next(&s->misc);
	f->fix_seq = 1;
	f->sender = f->src == SIM_ALGO ? "ALGO" : "VENUE";
	f->target = f->src == SIM_ALGO ? "VENUE" : "ALGO";
}

static struct flow *flow_reverse(struct sim *s, const struct flow *f)
{
	return &s->f[(f - s->f) ^ 1];
}

/* The receiver's next expected byte at now (what it acknowledges). */
static uint64_t rcv_ack(struct sim *s, struct flow *f)
{
	size_t i = 0;

	while (i < f->rqn && f->rq[i].t_ps <= s->now && f->rq[i].off <= f->rcv_nxt) {
		if (f->rq[i].end > f->rcv_nxt)
			f->rcv_nxt = f->rq[i].end;
		i++;
	}
	if (i) {
		memmove(f->rq, f->rq + i, (f->rqn - i) * sizeof(*f->rq));
		f->rqn -= i;
	}
	return f->rcv_nxt;
}

static void rcv_insert(struct sim *s, struct flow *f, uint64_t off,
		       uint64_t end, int64_t t)
{
	size_t i;

	rcv_ack(s, f);
	if (end <= f->rcv_nxt)
		return;
	if (f->rqn == f->rqcap) {
		f->rqcap = f->rqcap ? f->rqcap * 2 : 16;
		f->rq = xrealloc(f->rq, f->rqcap * sizeof(*f->rq));
	}
	for (i = f->rqn; i && f->rq[i - 1].off > off; i--)
		f->rq[i] = f->rq[i - 1];
	f->rq[i].off = off;
	f->rq[i].end = end;
	f->rq[i].t_ps = t;
	f->rqn++;
}

static void unc_add(struct flow *f, struct seg *g)
{
	if (f->uncn == f->unccap) {
		f->unccap = f->unccap ? f->unccap * 2 : 8;
		f->unc = xrealloc(f->unc, f->unccap * sizeof(*f->unc));
	}
	f->unc[f->uncn++] = g;
}

static void unc_remove(struct flow *f, const struct seg *g)
{
	for (size_t i = 0; i < f->uncn; i++)
		if (f->unc[i] == g) {
			f->unc[i] = f->unc[--f->uncn];
			return;
		}
}

void sim_react_add(struct flow *f, uint64_t end, int type, uint32_t arg,
		   int side)
{
	if (f->pn == f->pcap) {
		size_t ncap = f->pcap ? f->pcap * 2 : 8;
		struct react *n = xmalloc(ncap * sizeof(*n));

		for (size_t i = 0; i < f->pn; i++)
			n[i] = f->pend[(f->ph + i) % f->pcap];
		free(f->pend);
		f->pend = n;
		f->pcap = ncap;
		f->ph = 0;
	}
	f->pend[(f->ph + f->pn++) % f->pcap] =
		(struct react){ end, (uint8_t)type, (uint8_t)side, arg };
}

static int64_t reaction_ps(struct sim *s, int64_t base_ns, int64_t exp_ns)
{
	return base_ns * PS_PER_NS + llround(rng_exp(&s->app, (double)exp_ns) * PS_PER_NS);
}

/* Deliver to the application the messages now complete on f. */
static void react_check(struct sim *s, struct flow *f)
{
	uint64_t min_unc = UINT64_MAX;

	for (size_t i = 0; i < f->uncn; i++)
		if (f->unc[i]->off < min_unc)
			min_unc = f->unc[i]->off;
	while (f->pn) {
		struct react *r = &f->pend[f->ph];
		const struct sim_config *c = s->c;
		int64_t d = f->last_commit_ps;

		if (r->end > f->snd_nxt || r->end > min_unc)
			break;
		switch (r->type) {
		case R_LOGON:
			sim_ev_push(s, d + reaction_ps(s, c->venue_reaction_ns,
						       c->venue_reaction_exp_ns),
				EV_LOGON_REPLY, (int)r->arg, 0, NULL);
			break;
		case R_BID:
			sim_ev_push(s, d + reaction_ps(s, c->algo_reaction_ns,
						       c->algo_reaction_exp_ns),
				EV_BUY, 0, r->arg, NULL);
			break;
		case R_ORDER:
			sim_ev_push(s, d + reaction_ps(s, c->venue_reaction_ns,
						       c->venue_reaction_exp_ns),
				EV_REPORTS, r->side, r->arg, NULL);
			break;
		case R_FILL:
			sim_ev_push(s, d + reaction_ps(s, c->algo_reaction_ns,
						       c->algo_reaction_exp_ns),
				EV_SELL, 0, r->arg, NULL);
			break;
		}
		f->ph = (f->ph + 1) % f->pcap;
		f->pn--;
	}
}

static struct seg *seg_copy(struct sim *s, const struct seg *g)
{
	struct seg *n = s->segfree;

	if (n)
		s->segfree = n->next;
	else
		n = xmalloc(sizeof(*n) + s->frame_cap);
	memcpy(n, g, sizeof(*n));
	memcpy(n->frame, s->fbuf, g->flen);
	return n;
}

void sim_seg_free(struct sim *s, struct seg *g)
{
	g->next = s->segfree;
	s->segfree = g;
}

/* The first copy of g reached its receiver at wire (NIC) and rx (stamp);
 * frame is its bytes. */
static void seg_commit(struct sim *s, struct seg *g, int64_t wire, int64_t rx,
		       const uint8_t *frame)
{
	struct flow *f = &s->f[g->flow];
	struct host *B = &s->h[f->dst];

	g->rx1.ps = rx;
	g->rx1.wire_ps = wire;
	g->rx1.stamp = sim_host_stamp(B, rx, sim_start_ns(s));
	g->rx1.set = true;
	sim_emit(s, f->dst, PCAPNG_DIR_IN, rx, wire, g->rx1.stamp, frame,
		 g->flen, g, true, &g->rx1);
	unc_remove(f, g);
	f->last_commit_ps = rx;
	rcv_insert(s, f, g->off, g->off + g->len, rx);
	if (!g->retrans)
		sim_hop_truth(s, g, &g->tx1, &g->rx1);
	if (rng_chance(&s->fault, s->c->pure_acks))
		sim_ev_push(s, rx + ACK_DELAY_PS +
			llround(rng_exp(&s->fault, ACK_JITTER_NS) * PS_PER_NS),
			EV_ACK, (int)g->flow, 0, NULL);
	react_check(s, f);
}

static void noise_packet(struct sim *s, int src)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: tapless\r\n\r\n";
	struct host *h = &s->h[src];
	struct frame_flow ff = { .family = AF_INET };
	uint8_t pay[256];
	size_t len;
	int n;

	memcpy(ff.src, sim_addr[src], 4);
	memcpy(ff.dst, sim_addr[1 - src], 4);
	s->noise_toggle = !s->noise_toggle;
	if (s->noise_toggle) {
		ff.proto = IPPROTO_UDP;
		ff.sport = 9998;
		ff.dport = 9999;
		len = 16 + rng_next(&s->fault) % 185;
		for (size_t i = 0; i < len; i++)
			pay[i] = (uint8_t)rng_next(&s->fault);
		n = frame_build(s->fbuf, s->frame_cap, &ff, 0, 0, 0, pay, len);
	} else {
		ff.proto = IPPROTO_TCP;
		ff.sport = 40080;
		ff.dport = 8080;
		len = sizeof(get) - 1;
		n = frame_build(s->fbuf, s->frame_cap, &ff, 1 + h->noise_seq, 1, 0,
				get, len);
		h->noise_seq += (uint32_t)len;
	}
	if (n > 0) {
		wire_send(s, src, (uint32_t)n, NULL, NULL, NULL, false, false);
		s->fl.non_fix++;
	}
}

/* Send messages m[0..nm) in one write on flow fi: cut at the MSS, stamped,
 * faults drawn per segment. more_follows: another data segment comes on
 * this flow right after (so this one may be overtaken by it). */
void sim_flow_send(struct sim *s, int fi, const struct msgref *m,
		   unsigned nm, bool more_follows)
{
	struct flow *f = &s->f[fi], *rf = flow_reverse(s, f);
	const struct sim_config *c = s->c;
	size_t total = 0, moff[2], o = 0;

	for (unsigned i = 0; i < nm; i++) {
		moff[i] = total;
		memcpy(s->sendbuf + total, m[i].buf, m[i].len);
		total += m[i].len;
		s->fix_messages++;
		if (m[i].len > c->mss || (total - 1) / c->mss != moff[i] / c->mss)
			s->fl.split++;
	}
	while (o < total) {
		size_t l = total - o < c->mss ? total - o : c->mss;
		struct seg g = { .flow = fi, .off = f->snd_nxt, .len = (uint32_t)l };
		struct seg *prev = f->held, *keep = NULL;
		bool last = o + l == total, hold = false, spurious = false;
		unsigned inmsg = 0;
		uint64_t ack = rcv_ack(s, rf);
		int64_t w = 0, r = 0;
		int n;

		for (unsigned i = 0; i < nm; i++) {
			if (moff[i] < o + l && moff[i] + m[i].len > o)
				inmsg++;
			if (moff[i] >= o && moff[i] < o + l && g.nstart < SEG_STARTS) {
				g.start[g.nstart] = m[i].meta;
				g.start[g.nstart].len = (uint32_t)m[i].len;
				g.start[g.nstart++].end = f->snd_nxt - o + moff[i] + m[i].len;
			}
		}
		if (inmsg > 1)
			s->fl.coalesced++;
		n = frame_build(s->fbuf, s->frame_cap, &f->ff,
				f->isn + 1 + (uint32_t)f->snd_nxt,
				rf->isn + 1 + (uint32_t)ack, 0, s->sendbuf + o, l);
		if (n < 0) {
			sim_sys(s, n, "building a frame");
			return;
		}
		g.flen = (uint32_t)n;
		f->snd_nxt += l;
		/* First transmission. */
		{
			int64_t t = nic_tx(s, f->src, g.flen);
			struct host *A = &s->h[f->src];

			g.tx1.ps = g.tx1.wire_ps = t;
			g.tx1.stamp = sim_host_stamp(A, t, sim_start_ns(s));
			g.tx1.set = true;
			sim_emit(s, f->src, PCAPNG_DIR_OUT, t, t, g.tx1.stamp, s->fbuf,
				 g.flen, &g, true, &g.tx1);
		}
		if (rng_chance(&s->fault, c->retransmit)) {
			g.retrans = true;
			g.lost = s->lost_toggle = !s->lost_toggle;
			s->fl.retransmitted++;
			if (g.lost)
				s->fl.lost++;
		} else if ((!last || more_follows) && !prev &&
			   rng_chance(&s->fault, c->reorder)) {
			hold = true;
		}
		if (!hold) {
			w = path_arrival(s, f->dst, g.tx1.ps, g.flen);
			r = rx_instant(s, f->dst, w);
		}
		if (hold) {
			f->held = keep = seg_copy(s, &g);
			unc_add(f, keep);
		} else if (g.lost) {
			keep = seg_copy(s, &g);
			unc_add(f, keep);
			sim_ev_push(s, g.tx1.ps + RTO_PS, EV_RETRANS, 0, 0, keep);
		} else {
			spurious = g.retrans;
			if (spurious) {
				keep = seg_copy(s, &g);
				seg_commit(s, keep, w, r, keep->frame);
				sim_ev_push(s, g.tx1.ps + RTO_PS, EV_RETRANS, 0, 0, keep);
			} else {
				seg_commit(s, &g, w, r, s->fbuf);
			}
		}
		/* The segment held back arrives right after this one. */
		if (prev) {
			f->held = NULL;
			w = path_arrival(s, f->dst, prev->tx1.ps, prev->flen);
			r = rx_instant(s, f->dst, w);
			seg_commit(s, prev, w, r, prev->frame);
			s->fl.reordered++;
			sim_seg_free(s, prev);
		}
		if (rng_chance(&s->fault, c->noise))
			noise_packet(s, f->src);
		o += l;
	}
}

void sim_ev_retrans(struct sim *s, struct seg *g)
{
	struct flow *f = &s->f[g->flow];
	struct stamp_at tx2, rx2;
	const struct stamp_at *txc, *rxc;

	memcpy(s->fbuf, g->frame, g->flen);
	if (g->lost) {
		/* Only this copy reaches the receiver. */
		int64_t t = nic_tx(s, f->src, g->flen), w, r;

		tx2.ps = tx2.wire_ps = t;
		tx2.stamp = sim_host_stamp(&s->h[f->src], t, sim_start_ns(s));
		tx2.set = true;
		/* A first copy dropped from the capture was read in its place
		 * (as a hole): this one is not the messages' first. */
		sim_emit(s, f->src, PCAPNG_DIR_OUT, t, t, tx2.stamp, g->frame,
			 g->flen, g, !g->tx1.capt && !g->tx1.drop, &tx2);
		w = path_arrival(s, f->dst, t, g->flen);
		r = rx_instant(s, f->dst, w);
		seg_commit(s, g, w, r, g->frame);
		rxc = &g->rx1;
	} else {
		wire_send(s, f->src, g->flen, &tx2, &rx2, g,
			  !g->tx1.capt && !g->tx1.drop, !g->rx1.capt && !g->rx1.drop);
		rxc = g->rx1.capt ? &g->rx1 : &rx2;
	}
	txc = g->tx1.capt ? &g->tx1 : &tx2;
	sim_hop_truth(s, g, txc, rxc);
	sim_seg_free(s, g);
}

/* A pure ACK from the receiver of flow fi. */
void sim_ev_ack(struct sim *s, int fi)
{
	struct flow *f = &s->f[fi], *rf = flow_reverse(s, f);
	uint64_t ack = rcv_ack(s, f);
	int n = frame_build(s->fbuf, s->frame_cap, &rf->ff,
			    rf->isn + 1 + (uint32_t)rf->snd_nxt,
			    f->isn + 1 + (uint32_t)ack, FRAME_TCP_ACK, "", 0);

	if (n < 0) {
		sim_sys(s, n, "building a frame");
		return;
	}
	wire_send(s, rf->src, (uint32_t)n, NULL, NULL, NULL, false, false);
	s->fl.pure_acks++;
}

/* The three-way handshake of connection conn: step 0 SYN, 1 SYN-ACK, 2 ACK. */
void sim_ev_ctrl(struct sim *s, int conn, int step)
{
	struct flow *c2s = &s->f[sim_flow_index(conn, DIR_C2S)];
	struct flow *s2c = &s->f[sim_flow_index(conn, DIR_S2C)];
	struct flow *f = step == 1 ? s2c : c2s;
	struct stamp_at rx;
	uint32_t seq, ack;
	uint8_t flags;
	int n;

	switch (step) {
	case 0: seq = c2s->isn; ack = 0; flags = FRAME_TCP_SYN; break;
	case 1: seq = s2c->isn; ack = c2s->isn + 1; flags = FRAME_TCP_SYN | FRAME_TCP_ACK; break;
	default: seq = c2s->isn + 1; ack = s2c->isn + 1; flags = FRAME_TCP_ACK; break;
	}
	n = frame_build(s->fbuf, s->frame_cap, &f->ff, seq, ack, flags, "", 0);
	if (n < 0) {
		sim_sys(s, n, "building a frame");
		return;
	}
	wire_send(s, f->src, (uint32_t)n, NULL, &rx, NULL, false, false);
	if (step < 2)
		sim_ev_push(s, rx.ps + KERNEL_PS, EV_CTRL, conn, (uint32_t)step + 1, NULL);
}
