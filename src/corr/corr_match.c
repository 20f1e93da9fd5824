/* corr_match.c — matching across hosts (see corr_private.h): the window
 * of messages waiting for their peers, found by flow and sequence number
 * or by FIX session keys; a match of a send and a receive is a sample of
 * the hop, and of the switch on its path when the topology names one.
 */
#include <math.h>
#include <string.h>

#include "files/calib.h"
#include "files/topo.h"
#include "corr/corr_private.h"
#include "corr/corr_traffic.h"

static uint32_t corr_k1_bucket(const struct corr *c, uint32_t flow,
			       uint32_t seq)
{
	uint64_t k = ((uint64_t)flow << 32) | seq;

	return (uint32_t)(hmap_hash(&k, sizeof(k)) & (c->nbuckets - 1));
}

static void corr_chain_remove(uint32_t *bucket, struct corr_entry *ring,
			      bool second, uint32_t idx)
{
	uint32_t *p = bucket;

	while (*p) {
		struct corr_entry *e = &ring[*p - 1];

		if (*p - 1 == idx) {
			*p = second ? e->next2 : e->next1;
			return;
		}
		p = second ? &e->next2 : &e->next1;
	}
}

static void corr_entry_unlink(struct corr *c, uint32_t idx)
{
	struct corr_entry *e = &c->ring[idx];

	corr_chain_remove(&c->bucket1[corr_k1_bucket(c, e->flow, e->seq)],
			  c->ring, false, idx);
	if (e->k2)
		corr_chain_remove(&c->bucket2[e->k2 & (c->nbuckets - 1)],
				  c->ring, true, idx);
	e->live = false;
}

static void corr_pair(struct corr *c, struct corr_entry *e,
		      const struct corr_obs *o);

/* The same FIX message on another flow (NAT, a gateway): an entry nobody
 * matched by flow and sequence, paired by its session keys with another
 * such entry from another host. Tried only when the entry leaves the
 * window, so that matching by flow had every chance first, and only
 * between flows neither host's capture has the other of: two sessions
 * between the same hosts often share their CompIDs, and their Logons
 * (34=1) would otherwise pair up across sessions. */
static bool corr_pair_by_session(struct corr *c, struct corr_entry *e)
{
	uint32_t i = c->bucket2[e->k2 & (c->nbuckets - 1)];
	const struct corr_obs *a = &e->obs[0];

	while (i) {
		struct corr_entry *x = &c->ring[i - 1];

		if (x != e && x->live && !x->paired && x->k2 == e->k2 &&
		    x->flow != e->flow && x->obs[0].host != a->host &&
		    !(c->flows[x->flow].hosts & (1ull << a->host)) &&
		    !(c->flows[e->flow].hosts & (1ull << x->obs[0].host))) {
			corr_pair(c, x, a);
			x->paired = true;
			corr_entry_unlink(c, i - 1);
			c->by_session++;
			return true;
		}
		i = x->next2;
	}
	return false;
}

/* An entry leaves: if only one host ever saw it, that is unmatched. */
static void corr_entry_expire(struct corr *c, uint32_t idx)
{
	struct corr_entry *e = &c->ring[idx];

	if (!e->live)
		return;
	if (!e->paired && !(e->k2 && corr_pair_by_session(c, e)))
		c->hosts[e->obs[0].host]->only_here++;
	corr_entry_unlink(c, idx);
}

static void corr_expire(struct corr *c, int64_t now)
{
	while (c->ring_count) {
		struct corr_entry *e = &c->ring[c->ring_head];

		if (e->live && e->created >= now - c->cfg.window_ns)
			break;
		corr_entry_expire(c, c->ring_head);
		c->ring_head = (c->ring_head + 1) % c->ring_cap;
		c->ring_count--;
	}
}

static struct corr_entry *corr_entry_new(struct corr *c, uint32_t flow,
					 uint32_t seq, uint64_t k2, int64_t ts,
					 uint32_t *idx_out)
{
	uint32_t idx, b;
	struct corr_entry *e;

	if (c->ring_count == c->ring_cap) {
		/* Full: the oldest goes early, and we say so. */
		if (c->ring[c->ring_head].live)
			c->window_overflow++;
		corr_entry_expire(c, c->ring_head);
		c->ring_head = (c->ring_head + 1) % c->ring_cap;
		c->ring_count--;
	}
	idx = (c->ring_head + c->ring_count) % c->ring_cap;
	c->ring_count++;
	e = &c->ring[idx];
	*e = (struct corr_entry){
		.flow = flow, .seq = seq, .k2 = k2, .created = ts, .live = true,
	};
	b = corr_k1_bucket(c, flow, seq);
	e->next1 = c->bucket1[b];
	c->bucket1[b] = idx + 1;
	if (k2) {
		b = (uint32_t)(k2 & (c->nbuckets - 1));
		e->next2 = c->bucket2[b];
		c->bucket2[b] = idx + 1;
	}
	*idx_out = idx;
	return e;
}

static struct corr_entry *corr_entry_find(struct corr *c, uint32_t flow,
					  uint32_t seq, uint32_t *idx_out)
{
	uint32_t i = c->bucket1[corr_k1_bucket(c, flow, seq)];

	while (i) {
		struct corr_entry *e = &c->ring[i - 1];

		if (e->flow == flow && e->seq == seq) {
			*idx_out = i - 1;
			return e;
		}
		i = e->next1;
	}
	return NULL;
}

static const struct topo_path *corr_path(struct corr *c, unsigned a,
					 unsigned b)
{
	if (!c->cfg.topo)
		return NULL;
	if (!c->path_known[a][b])
		c->path_known[a][b] =
			topo_path(c->cfg.topo, c->hosts[a]->name,
				  c->hosts[b]->name, &c->path[a][b]) ? -1 : 1;
	return c->path_known[a][b] > 0 ? &c->path[a][b] : NULL;
}

/* One sample of the hop tx → rx: each stamp on its clock's reference by
 * the offset phc2sys read (corr_obs_clock()), and brought to the wire by
 * its host's calibration (stamp - offset), whose spreads are the bound's
 * stamp term when both ends have one. */
static void corr_hop_sample(struct corr *c, const struct corr_obs *tx,
			    const struct corr_obs *rx)
{
	const struct calib_term *ct = corr_calib(c->hosts[tx->host], tx->dir,
						 tx->hw);
	const struct calib_term *cr = corr_calib(c->hosts[rx->host], rx->dir,
						 rx->hw);
	int64_t lat = (rx->ts - rx->clk - (cr ? cr->offset_ns : 0)) -
		      (tx->ts - tx->clk - (ct ? ct->offset_ns : 0));
	struct corr_terms t;
	int sync;
	int64_t bound = corr_hop_bound(tx, rx, ct && cr ? ct->spread_ns +
				       cr->spread_ns : -1, &sync, &t);
	struct corr_sample x = {
		.set = CORR_SET_HOPS, .from = tx->host, .to = rx->host,
		.flow = tx->flow, .bucket = tx->bucket, .kind = -1,
		.ts = tx->ts, .v = lat, .sync = sync, .bound = bound,
		.terms = &t,
	};
	const struct topo_path *p;

	corr_emit(c, &x);
	c->measured = true;
	p = corr_path(c, tx->host, rx->host);
	/* The traffic's word on the clocks: the delay less the least the
	 * path allows (its cables, and serialisation into a store-and-
	 * forward switch), rounded so as never to claim more. Every
	 * sample, in sync or not: the traffic needs no PTP. */
	{
		double least = 0;

		if (p) {
			least = p->prop_ns;
			if (p->sw && p->store_forward)
				least += topo_serialisation_ns(rx->wire,
							       p->speed_bps);
		}
		corr_traffic_sample(c->traffic, tx->host, rx->host, tx->ts,
				    lat - (int64_t)floor(least), bound);
	}
	if (p && p->sw) {
		double sw = (double)lat - p->prop_ns;

		if (p->store_forward)
			sw -= topo_serialisation_ns(rx->wire, p->speed_bps);
		x.set = CORR_SET_SWITCHES;
		x.sw = p->sw;
		x.v = (int64_t)llround(sw);
		corr_emit(c, &x);
	}
}

/* Samples from o with each observation e already has. */
static void corr_pair(struct corr *c, struct corr_entry *e,
		      const struct corr_obs *o)
{
	for (unsigned i = 0; i < e->nobs; i++) {
		struct corr_obs *p = &e->obs[i];
		struct corr_obs a = *p, b = *o;

		/* Two observation points make no hop: each stamps the
		 * frame as its own link sees it, so their roles need not
		 * follow the frame's way (a switch's two port captures
		 * mark it in at one, out at the other: the reverse of
		 * its path). Their hops with the hosts say it all. */
		if (c->hosts[a.host]->tap && c->hosts[b.host]->tap)
			continue;
		/* A capture that does not say direction takes the role the
		 * other end's leaves: a message has one sender. */
		if (a.dir == DIR_UNKNOWN && b.dir != DIR_UNKNOWN)
			a.dir = b.dir == DIR_OUT ? DIR_IN : DIR_OUT;
		else if (b.dir == DIR_UNKNOWN && a.dir != DIR_UNKNOWN)
			b.dir = a.dir == DIR_OUT ? DIR_IN : DIR_OUT;
		if (a.dir == DIR_OUT && b.dir == DIR_IN)
			corr_hop_sample(c, &a, &b);
		else if (b.dir == DIR_OUT && a.dir == DIR_IN)
			corr_hop_sample(c, &b, &a);
		else if (a.dir == DIR_UNKNOWN)
			c->dir_unknown_pairs++;
	}
}

void corr_match(struct corr *c, struct corr_obs *o, uint32_t seq,
		uint64_t k2)
{
	struct corr_entry *e;
	uint32_t idx;

	corr_expire(c, o->ts);
	e = corr_entry_find(c, o->flow, seq, &idx);
	if (!e) {
		e = corr_entry_new(c, o->flow, seq, k2, o->ts, &idx);
		e->obs[e->nobs++] = *o;
		return;
	}
	for (unsigned i = 0; i < e->nobs; i++) {
		if (e->obs[i].host == o->host) {
			/* Seen here already: a second capture of one host,
			 * or a resend of the same FIX message. */
			c->hosts[o->host]->duplicates++;
			return;
		}
	}
	if (e->nobs == CORR_MAX_OBS) {
		c->extra_obs++;
		return;
	}
	corr_pair(c, e, o);
	e->obs[e->nobs++] = *o;
	e->paired = true;
	/* Every host has seen it: nothing more can match. */
	if (e->nobs >= c->nhosts)
		corr_entry_unlink(c, idx);
}

/* The end of the input: every entry leaves the window, oldest first. */
void corr_match_drain(struct corr *c)
{
	corr_expire(c, INT64_MAX);
	/* Whatever still waits has had its chance. */
	while (c->ring_count) {
		corr_entry_expire(c, c->ring_head);
		c->ring_head = (c->ring_head + 1) % c->ring_cap;
		c->ring_count--;
	}
}
