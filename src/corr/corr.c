/* corr.c — see corr.h. The correlator's life (configuration, hosts,
 * journals, the end) and its run loop; the rest is in the files named
 * below, their shared insides in corr_private.h.
 *
 * The pieces, in the order a packet meets them:
 * - hosts: each a capset (its files merged in time order) whose next
 *   packet waits, stamp already on the common timescale (corr_time.c);
 *   the host with the earliest one goes next.
 * - streams: per (host, direction, flow) a fixstream (corr_flow.c); its
 *   messages come back through corr_on_msg() with the stamps of their
 *   first/last bytes.
 * - transactions: per host, the triggers (market data, fills, orders) of
 *   the FTTC rules, kept in small rings per symbol and a table of orders
 *   (corr_txn.c).
 * - matching: messages waiting for their peers at other hosts, in a ring
 *   of entries in creation order (so expiry is from the head) indexed by
 *   two hash chains (flow + sequence; FIX session keys) (corr_match.c).
 * - results: histograms per hop, per flow, per transaction and per switch
 *   (corr_stats.c), printed by corr_print.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ptp/bound.h"
#include "files/capset.h"
#include "fix/fix.h"
#include "fix/fixstream.h"
#include "files/frame.h"
#include "base/hist.h"
#include "base/print.h"
#include "base/summary.h"
#include "files/topo.h"
#include "stamp/ts.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

#define CORR_JUMP_NS 1000000000LL	/* a step back this big is a jump */

static const double corr_fttc_rates[] = {
	500, 1000, 5000, 12000, 20000, 50000, 71000, 100000,
};

const char *const corr_txn_names[TXN_KINDS] = {
	"tick_to_trade", "fill_to_sell", "order_to_ack", "order_to_fill",
};

void corr_warn(struct corr *c, const char *fmt, ...)
{
	char buf[768];
	va_list ap;

	if (c->nwarn == CORR_MAX_WARNINGS) {
		c->warn_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->warn[c->nwarn++] = xstrdup(buf);
}

/* ---- configuration and hosts ---- */

void corr_config_init(struct corr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = 1000000000LL;
	cfg->hold_ns = 200000000LL;
	cfg->nrates = sizeof(corr_fttc_rates) / sizeof(corr_fttc_rates[0]);
	memcpy(cfg->rates, corr_fttc_rates, sizeof(corr_fttc_rates));
	cfg->sync_max_age_ns = 3000000000LL;
	cfg->max_pending = 1u << 18;
}

int corr_create(struct corr **out, const struct corr_config *cfg)
{
	struct corr *c;
	uint32_t cap = 1024;

	*out = NULL;
	if (cfg->window_ns <= 0 || cfg->max_pending < 16 || !cfg->nrates)
		return -EINVAL;
	c = xcalloc(1, sizeof(*c));
	c->cfg = *cfg;
	c->utc_known = cfg->utc_offset_known;
	c->utc_offset = cfg->utc_offset_s;
	corr_map_init(&c->flow_map, 256);
	corr_map_init(&c->stream_map, 256);
	c->scratch = xmalloc(sizeof(*c->scratch));
	c->ring_cap = cfg->max_pending;
	c->ring = xcalloc(c->ring_cap, sizeof(*c->ring));
	/* Most entries live microseconds (matched as soon as the peer's
	 * copy comes); a table a sixteenth the ring's size keeps chains short
	 * and fits in cache, where a bigger one would miss on every look. */
	while (cap < c->ring_cap / 16)
		cap *= 2;
	c->nbuckets = cap;
	c->bucket1 = xcalloc(cap, sizeof(uint32_t));
	c->bucket2 = xcalloc(cap, sizeof(uint32_t));
	corr_stats_init(&c->hops);
	corr_stats_init(&c->txns);
	corr_stats_init(&c->switches);
	*out = c;
	return 0;
}

static struct corr_host *corr_host_by_name(const struct corr *c,
					   const char *name)
{
	for (unsigned i = 0; i < c->nhosts; i++)
		if (!strcmp(c->hosts[i]->name, name))
			return c->hosts[i];
	return NULL;
}

int corr_add_host(struct corr *c, const char *name, const char *const *paths,
		  unsigned npaths, char err[CORR_ERRBUF])
{
	struct corr_host *h;
	char cerr[CAP_ERRBUF];
	int ret;

	if (corr_host_by_name(c, name)) {
		snprintf(err, CORR_ERRBUF, "host '%s' given twice", name);
		return -EEXIST;
	}
	if (c->nhosts == CORR_MAX_HOSTS) {
		snprintf(err, CORR_ERRBUF, "more than %d hosts", CORR_MAX_HOSTS);
		return -E2BIG;
	}
	if (!*name || strlen(name) >= sizeof(h->name)) {
		snprintf(err, CORR_ERRBUF, "host name '%s' is empty or too long",
			 name);
		return -EINVAL;
	}
	h = xcalloc(1, sizeof(*h));
	ret = capset_open(&h->cs, paths, npaths, cerr);
	if (ret) {
		snprintf(err, CORR_ERRBUF, "%.63s: %s", name, cerr);
		free(h);
		return ret;
	}
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->idx = c->nhosts;
	h->forced_scale = -1;
	h->bucket = NO_BUCKET;
	corr_map_init(&h->syms, 64);
	h->orders = xcalloc(CORR_ORDERS, sizeof(*h->orders));
	c->hosts[c->nhosts++] = h;
	return 0;
}

int corr_set_journal(struct corr *c, const char *host, const char *path,
		     char err[CORR_ERRBUF])
{
	struct corr_host *h = corr_host_by_name(c, host);
	char jerr[JOURNAL_ERRBUF];
	int ret, off;

	if (!h) {
		snprintf(err, CORR_ERRBUF,
			 "sync journal for '%s', which is not an input host",
			 host);
		return -ENOENT;
	}
	if (h->bound) {
		snprintf(err, CORR_ERRBUF, "two sync journals for '%s'", host);
		return -EEXIST;
	}
	ret = bound_open(&h->bound, path, c->cfg.sync_max_age_ns, jerr);
	if (ret) {
		snprintf(err, CORR_ERRBUF, "%s", jerr);
		return ret;
	}
	h->journal = xstrdup(path);
	if (bound_bad_lines(h->bound))
		corr_warn(c, "%s: %u bad lines in the sync journal skipped, "
			  "the first: %s", host, bound_bad_lines(h->bound),
			  bound_error(h->bound));
	if (!bound_samples(h->bound))
		corr_warn(c, "%s: sync journal %s has no samples: every sample "
			  "of this host counts as out of sync", host, path);
	if (!c->utc_known && !bound_utc_offset(h->bound, &off)) {
		c->utc_known = true;
		c->utc_offset = off;
	}
	return 0;
}

int corr_set_timescale(struct corr *c, const char *host, int timescale)
{
	struct corr_host *h = corr_host_by_name(c, host);

	if (!h)
		return -ENOENT;
	if (timescale != TS_SCALE_UTC && timescale != TS_SCALE_TAI)
		return -EINVAL;
	h->forced_scale = timescale;
	return 0;
}

/* Fetch the host's next usable packet. */
static void corr_fetch(struct corr *c, struct corr_host *h)
{
	for (;;) {
		if (capset_next(h->cs, &h->next) != 1) {
			h->have_next = false;
			return;
		}
		h->next_if = corr_iface(c, h, h->next.file, h->next.pkt.iface);
		if (!h->next_if->usable) {
			h->skipped_scale++;
			continue;
		}
		h->next_ts = h->next.pkt.ts_ns + h->next_if->delta_ns;
		h->have_next = true;
		return;
	}
}

static size_t corr_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static uint64_t corr_flow_hash(const struct frame_flow *f, uint64_t extra)
{
	uint8_t k[40];
	size_t n = corr_addr_len(f->family);

	memcpy(k, f->src, n);
	memcpy(k + n, f->dst, n);
	memcpy(k + 2 * n, &f->sport, 2);
	memcpy(k + 2 * n + 2, &f->dport, 2);
	k[2 * n + 4] = f->proto;
	return corr_hash_bytes(k, 2 * n + 5, extra);
}

static bool corr_flow_eq(const struct frame_flow *a, const struct frame_flow *b)
{
	size_t n = corr_addr_len(a->family);

	return a->family == b->family && a->proto == b->proto &&
	       a->sport == b->sport && a->dport == b->dport &&
	       !memcmp(a->src, b->src, n) && !memcmp(a->dst, b->dst, n);
}

static void corr_flow_name(const struct frame_flow *f, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	inet_ntop(f->family, f->src, s, sizeof(s));
	inet_ntop(f->family, f->dst, d, sizeof(d));
	if (f->family == AF_INET6)
		snprintf(buf, len, "%s [%s]:%u>[%s]:%u",
			 f->proto == IPPROTO_TCP ? "tcp" : "udp", s, f->sport,
			 d, f->dport);
	else
		snprintf(buf, len, "%s %s:%u>%s:%u",
			 f->proto == IPPROTO_TCP ? "tcp" : "udp", s, f->sport,
			 d, f->dport);
}

static uint32_t corr_flow_id(struct corr *c, const struct frame_flow *f)
{
	uint64_t h = corr_flow_hash(f, 0);
	size_t i = (size_t)-1;
	void *v;

	while ((v = corr_map_next(&c->flow_map, h, &i))) {
		uint32_t id = (uint32_t)(uintptr_t)v - 1;

		if (corr_flow_eq(&c->flows[id].f, f))
			return id;
	}
	if (c->nflows == c->cap_flows) {
		c->cap_flows = c->cap_flows ? c->cap_flows * 2 : 64;
		c->flows = xrealloc(c->flows, c->cap_flows * sizeof(*c->flows));
	}
	c->flows[c->nflows].f = *f;
	corr_flow_name(f, c->flows[c->nflows].name,
		       sizeof(c->flows[c->nflows].name));
	corr_map_put(&c->flow_map, h, (void *)(uintptr_t)(c->nflows + 1));
	return (uint32_t)c->nflows++;
}

struct corr_stream *corr_stream(struct corr *c, struct corr_host *h,
				const struct frame_flow *f, uint8_t dir)
{
	uint64_t hash;
	size_t i = (size_t)-1;
	struct corr_stream *s = h->last_stream;

	if (s && s->dir == dir && corr_flow_eq(&s->key, f))
		return s;
	hash = corr_flow_hash(f, ((uint64_t)h->idx << 8) | dir);
	while ((s = corr_map_next(&c->stream_map, hash, &i)))
		if (s->h == h && s->dir == dir && corr_flow_eq(&s->key, f))
			return h->last_stream = s;
	s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->h = h;
	s->dir = dir;
	s->key = *f;
	s->proto = f->proto;
	s->flow = corr_flow_id(c, f);
	c->flows[s->flow].hosts |= 1ull << h->idx;
	s->fs = fixstream_create(f->proto == IPPROTO_TCP, c->scratch,
				 c->cfg.hold_ns, corr_on_msg, s);
	corr_map_put(&c->stream_map, hash, s);
	if (c->nstreams == c->cap_streams) {
		c->cap_streams = c->cap_streams ? c->cap_streams * 2 : 64;
		c->streams = xrealloc(c->streams,
				      c->cap_streams * sizeof(*c->streams));
	}
	c->streams[c->nstreams++] = s;
	return h->last_stream = s;
}

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

static uint32_t corr_k1_bucket(const struct corr *c, uint32_t flow,
			       uint32_t seq)
{
	return (uint32_t)(corr_mix(((uint64_t)flow << 32) | seq) &
			  (c->nbuckets - 1));
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
	memset(e, 0, sizeof(*e));
	e->flow = flow;
	e->seq = seq;
	e->k2 = k2;
	e->created = ts;
	e->live = true;
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

/* One sample of the hop tx → rx. */
static void corr_hop_sample(struct corr *c, const struct corr_obs *tx,
			    const struct corr_obs *rx)
{
	int sync;
	int64_t lat = rx->ts - tx->ts, bound = corr_hop_bound(tx, rx, &sync);
	const struct topo_path *p;
	if (c->cfg.samples)
		corr_sample_line(c, "hop", c->hosts[tx->host]->name,
				 c->hosts[rx->host]->name, tx->ts, lat, sync,
				 bound, tx->bucket, "-");
	corr_stat_add(corr_stat(&c->hops, tx->host, rx->host, ALL_FLOWS,
				NO_BUCKET, -1, NULL), lat, sync, bound);
	corr_stat_add(corr_stat(&c->hops, tx->host, rx->host, tx->flow,
				NO_BUCKET, -1, NULL), lat, sync, bound);
	if (tx->bucket != NO_BUCKET)
		corr_stat_add(corr_stat(&c->hops, tx->host, rx->host, ALL_FLOWS,
					tx->bucket, -1, NULL), lat, sync,
			      bound);
	c->measured = true;
	p = corr_path(c, tx->host, rx->host);
	if (p && p->sw) {
		double sw = (double)lat - p->prop_ns;

		if (p->store_forward)
			sw -= topo_serialisation_ns(rx->wire, p->speed_bps);
		int64_t v = (int64_t)llround(sw);

		if (c->cfg.samples)
			corr_sample_line(c, "switch", c->hosts[tx->host]->name,
					 c->hosts[rx->host]->name, tx->ts, v,
					 sync, bound, tx->bucket, p->sw);
		corr_stat_add(corr_stat(&c->switches, tx->host, rx->host,
					ALL_FLOWS, NO_BUCKET, -1, p->sw), v,
			      sync, bound);
		if (tx->bucket != NO_BUCKET)
			corr_stat_add(corr_stat(&c->switches, tx->host, rx->host,
						ALL_FLOWS, tx->bucket, -1, p->sw),
				      v, sync, bound);
	}
}

/* Samples from o with each observation e already has. */
static void corr_pair(struct corr *c, struct corr_entry *e,
		      const struct corr_obs *o)
{
	for (unsigned i = 0; i < e->nobs; i++) {
		struct corr_obs *p = &e->obs[i];
		struct corr_obs a = *p, b = *o;

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
	uint64_t hash;
	size_t i = (size_t)-1;
	struct corr_sym *y;

	if (len >= sizeof(y->name))
		len = sizeof(y->name) - 1;
	hash = corr_hash_bytes(s, len, 0);
	while ((y = corr_map_next(&h->syms, hash, &i)))
		if (!strncmp(y->name, s, len) && !y->name[len])
			return y;
	y = xcalloc(1, sizeof(*y));
	memcpy(y->name, s, len);
	corr_map_put(&h->syms, hash, y);
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
				c, h, corr_hash_bytes(f->v[F_11], f->len[F_11], 0),
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
		o = corr_order(c, h, corr_hash_bytes(f->v[F_11], f->len[F_11], 0),
			       ts);
		if (ack && !o->ack)
			o->ack = ts;
		if (fill && !o->fill)
			o->fill = ts;
		corr_order_check(c, h, o);
	}
}

/* ---- one message, one packet ---- */

void corr_on_msg(void *arg, const struct fixstream_msg *m)
{
	struct corr_stream *s = arg;
	struct corr *c = s->c;
	struct corr_host *h = s->h;
	struct corr_fields f;
	struct corr_obs o;
	int64_t ts = c->cfg.last_byte ? m->ts_last : m->ts_first;
	uint32_t seq = m->seq;
	uint64_t k2 = 0;

	h->messages++;
	corr_fields(m->fix, &f);
	if (corr_is(&f, F_35, "X"))
		corr_md_seen(c, h, ts);
	if (s->dir != DIR_UNKNOWN)
		corr_txn(c, h, s->dir, ts, m->fix, &f);
	else
		h->dir_unknown++;

	memset(&o, 0, sizeof(o));
	o.ts = ts;
	o.host = (uint16_t)h->idx;
	o.dir = s->dir;
	o.flow = s->flow;
	o.wire = c->cfg.last_byte ? m->wire_last : m->wire_first;
	o.bucket = h->bucket;
	corr_obs_bound(h, s->ifc, &o);
	if (s->proto != IPPROTO_TCP)
		seq = (uint32_t)corr_hash_bytes(m->fix->buf, m->fix->len, 0);
	/* Session keys only where a flow is in one capture alone (see
	 * corr_entry_new()): most messages never need them. */
	uint64_t fh = c->flows[s->flow].hosts;
	if (!(fh & (fh - 1)) && f.v[F_49] && f.v[F_56] && f.v[F_34] &&
	    f.v[F_35]) {
		uint64_t x = 0;

		for (int k = F_35; k <= F_34; k++)
			x = corr_hash_bytes(f.v[k], f.len[k], x + (uint64_t)k);
		k2 = x;
	}
	corr_match(c, &o, seq, k2);
}

static uint8_t corr_direction(struct corr *c, struct corr_host *h,
			      const struct cap_packet *pkt,
			      const struct frame_flow *f)
{
	if (pkt->dir == PCAPNG_DIR_IN || pkt->dir == PCAPNG_DIR_OUT) {
		h->dir_flags = true;
		return pkt->dir == PCAPNG_DIR_IN ? DIR_IN : DIR_OUT;
	}
	if (c->cfg.topo) {
		bool src = topo_owns(c->cfg.topo, h->name, f->family, f->src);
		bool dst = topo_owns(c->cfg.topo, h->name, f->family, f->dst);

		if (src != dst) {
			h->dir_addr = true;
			return src ? DIR_OUT : DIR_IN;
		}
	}
	return DIR_UNKNOWN;
}

static void corr_packet(struct corr *c, struct corr_host *h)
{
	const struct cap_packet *pkt = &h->next.pkt;
	struct frame_info fi;
	struct corr_stream *s;
	int64_t ts = h->next_ts;
	int ret;

	h->packets++;
	if (ts < h->max_ts - CORR_JUMP_NS)
		h->clock_jumps++;
	if (ts > h->max_ts)
		h->max_ts = ts;
	ret = frame_parse(pkt->data, pkt->caplen, h->next_if->linktype, &fi);
	if (ret == -EPROTONOSUPPORT) {
		h->non_ip++;
		return;
	}
	if (ret) {
		h->bad_frames++;
		return;
	}
	if (!fi.payload_wire && !(fi.tcp_flags & FRAME_TCP_SYN)) {
		h->no_payload++;
		return;
	}
	s = corr_stream(c, h, &fi.flow, corr_direction(c, h, pkt, &fi.flow));
	/* The sending program's stamp is taken in the driver (or by the
	 * NIC), the packet socket's before the frame reaches the driver:
	 * once a flow's sender stamps its frames, the packet socket's copies
	 * of them are left out (the first frames, before the sender's copy
	 * of one came, keep the packet socket's stamp). */
	if (s->dir == DIR_OUT) {
		if (h->next_if->sender)
			s->sender_seen = true;
		else if (s->sender_seen) {
			h->tap_tx_skipped++;
			return;
		}
	}
	s->ifc = h->next_if;
	fixstream_segment(s->fs, fi.seq, fi.tcp_flags, fi.payload,
			  fi.payload_len, fi.payload_wire, ts, pkt->origlen);
}

/* Link events tapless-capd wrote into a host's captures (a link down or
 * removed, tapless-pcapng(5)): gaps after them are not quiet links. */
static void corr_warn_links(struct corr *c, const struct corr_host *h)
{
	uint64_t down = 0, up = 0;
	int64_t first = 0;

	for (unsigned k = 0; k < capset_files(h->cs); k++) {
		struct cap_stats st;

		cap_stats(capset_reader(h->cs, k), &st);
		if (st.link_down && (!down || st.first_link_down_ns < first))
			first = st.first_link_down_ns;
		down += st.link_down;
		up += st.link_up;
	}
	if (down)
		corr_warn(c, "%s: link down %llu times, up %llu times (first "
			  "down at %lld.%09lld): gaps in its capture there are "
			  "link events, not quiet links", h->name,
			  (unsigned long long)down, (unsigned long long)up,
			  (long long)(first / 1000000000),
			  (long long)(first % 1000000000));
}

static int corr_host_cmp(const struct corr_host *a, const struct corr_host *b)
{
	return a->next_ts < b->next_ts ? -1 : a->next_ts > b->next_ts;
}

int corr_run(struct corr *c, char err[CORR_ERRBUF])
{
	struct corr_host *heap[CORR_MAX_HOSTS];
	unsigned n = 0;

	if (!c->nhosts) {
		snprintf(err, CORR_ERRBUF, "no inputs");
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nhosts; i++) {
		corr_fetch(c, c->hosts[i]);
		if (c->hosts[i]->have_next)
			heap[n++] = c->hosts[i];
	}
	/* A few hosts: a sorted array, re-placing the one that moved. */
	for (;;) {
		struct corr_host *h;
		unsigned best = 0;

		if (!n)
			break;
		for (unsigned i = 1; i < n; i++)
			if (corr_host_cmp(heap[i], heap[best]) < 0)
				best = i;
		h = heap[best];
		corr_packet(c, h);
		corr_fetch(c, h);
		if (!h->have_next)
			heap[best] = heap[--n];
	}
	for (size_t i = 0; i < c->nstreams; i++)
		fixstream_finish(c->streams[i]->fs);
	corr_match_drain(c);
	for (size_t i = 0; i < c->nstreams; i++) {
		const struct fixstream_stats *fs = fixstream_stats(c->streams[i]->fs);
		struct corr_stream_stats *t = &c->streams[i]->h->st;

		t->segments += fs->segments;
		t->bytes += fs->bytes;
		t->messages += fs->messages;
		t->retransmits += fs->retransmits;
		t->out_of_order += fs->out_of_order;
		t->lost_bytes += fs->lost_bytes;
		t->skipped_bytes += fs->skipped_bytes;
		t->midstream_bytes += fs->midstream_bytes;
		t->bad_checksum += fs->bad_checksum;
		t->bad_framing += fs->bad_framing;
		t->truncated += fs->truncated;
	}
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		if (capset_damaged(h->cs))
			corr_warn(c, "%s: %s", h->name, capset_error(h->cs));
		corr_warn_links(c, h);
		if (!h->packets)
			corr_warn(c, "%s: no packets", h->name);
		else if (!h->messages)
			corr_warn(c, "%s: no FIX messages in %llu packets",
				  h->name, (unsigned long long)h->packets);
		else if (c->nhosts > 1 && h->only_here == h->messages)
			corr_warn(c, "%s: none of its %llu FIX messages was seen "
				  "by another host", h->name,
				  (unsigned long long)h->messages);
		if (h->clock_jumps)
			corr_warn(c, "%s: stamps went back by more than 1 s %llu "
				  "times (a clock step?)", h->name,
				  (unsigned long long)h->clock_jumps);
		if (h->st.bad_checksum || h->st.bad_framing)
			corr_warn(c, "%s: %llu FIX messages with a bad checksum "
				  "and %llu badly framed were skipped", h->name,
				  (unsigned long long)h->st.bad_checksum,
				  (unsigned long long)h->st.bad_framing);
	}
	corr_time_warn(c);
	if (c->warn_dropped) {
		/* The last slot says how many did not fit. */
		free(c->warn[CORR_MAX_WARNINGS - 1]);
		c->nwarn--;
		corr_warn(c, "... and %u more warnings", c->warn_dropped + 1);
	}
	if (c->window_overflow)
		corr_warn(c, "%llu messages left the matching window early "
			  "(more than %u waiting): raise --max-pending or "
			  "lower --window",
			  (unsigned long long)c->window_overflow,
			  c->cfg.max_pending);
	return 0;
}

bool corr_measured(const struct corr *c)
{
	return c->measured;
}

uint64_t corr_direction_unknown(const struct corr *c)
{
	return c->dir_unknown_pairs;
}

unsigned corr_warnings(const struct corr *c)
{
	return c->nwarn;
}

const char *corr_warning(const struct corr *c, unsigned i)
{
	return i < c->nwarn ? c->warn[i] : NULL;
}

/* ---- output ---- */

static void corr_print_latency(struct printer *p, const char *key,
			       const struct hist *h)
{
	struct summary s;

	hist_summary(h, &s);
	summary_print(p, key, &s);
}

static void corr_print_rate(struct printer *p, const struct corr *c, int b)
{
	if (b == NO_BUCKET)
		return;
	print_double(p, "rate", "  rate %.0f/s", c->cfg.rates[b]);
}

static void corr_print_bound(struct printer *p, const struct corr_stat *s)
{
	/* A bound only when every in-sync sample had one. */
	if (s->bound_known && !s->bound_unknown) {
		print_int(p, "sync_error_bound_ns", "  bound %lld ns", s->bound_max);
		print_double(p, "sync_error_bound_mean_ns", NULL,
			     s->bound_sum / (double)s->bound_known);
	} else {
		print_null(p, "sync_error_bound_ns", "  bound %s");
		print_null(p, "sync_error_bound_mean_ns", NULL);
	}
}

static void corr_print_out_of_sync(struct printer *p, const struct corr_stat *s)
{
	print_object_begin(p, "out_of_sync");
	print_uint(p, "messages", "  out of sync: %llu", hist_count(s->out));
	if (hist_count(s->out)) {
		print_text(p, "\n     ");
		corr_print_latency(p, "latency_ns", s->out);
	}
	else
		print_text(p, "\n");
	print_object_end(p);
}

static void corr_print_inputs(const struct corr *c, struct printer *p)
{
	print_text(p, "inputs\n");
	print_array_begin(p, "inputs");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];
		const char *scale = "-";
		bool assumed = false;

		for (unsigned k = 0; k < h->nifs; k++) {
			const char *s = corr_scale_name(h->ifs[k].scale);

			assumed |= h->ifs[k].assumed;
			scale = (k == 0 || !strcmp(scale, s)) ? s : "mixed";
		}
		print_object_begin(p, NULL);
		print_str(p, "host", "  %-10s", h->name);
		print_array_begin(p, "files");
		for (unsigned k = 0; k < capset_files(h->cs); k++)
			print_str(p, NULL, NULL, cap_path(capset_reader(h->cs, k)));
		print_array_end(p);
		print_uint(p, "packets", " %llu packets", h->packets);
		print_uint(p, "fix_messages", ", %llu FIX messages", h->messages);
		print_str(p, "timescale", ", timescale %s", scale);
		int64_t res = 0;
		for (unsigned k = 0; k < h->nifs; k++)
			if (h->ifs[k].resolution_ns > res)
				res = h->ifs[k].resolution_ns;
		print_int(p, "resolution_ns", res > 1 ? ", %lld ns stamps" : NULL, res);
		print_bool(p, "timescale_assumed", NULL, assumed);
		print_str(p, "direction", ", direction from %s",
			  h->dir_flags && h->dir_addr ? "flags+addresses" :
			  h->dir_flags ? "epb_flags" : h->dir_addr ? "addresses" :
			  "peers");
		print_uint(p, "seen_only_here", ", %llu seen only here", h->only_here);
		print_uint(p, "duplicates", NULL, h->duplicates);
		print_uint(p, "non_ip", NULL, h->non_ip);
		print_uint(p, "bad_frames", NULL, h->bad_frames);
		print_uint(p, "skipped_timescale", NULL, h->skipped_scale);
		print_uint(p, "clock_jumps", NULL, h->clock_jumps);
		print_uint(p, "tap_tx_skipped", h->tap_tx_skipped ?
			   ", %llu sent frames with the sender's stamp instead" :
			   NULL, h->tap_tx_skipped);
		print_str(p, "error", NULL,
			  capset_damaged(h->cs) ? capset_error(h->cs) : NULL);
		print_object_begin(p, "streams");
		print_uint(p, "segments", NULL, h->st.segments);
		print_uint(p, "retransmits", ", %llu retransmits", h->st.retransmits);
		print_uint(p, "out_of_order", NULL, h->st.out_of_order);
		print_uint(p, "lost_bytes", NULL, h->st.lost_bytes);
		print_uint(p, "skipped_bytes", NULL, h->st.skipped_bytes);
		print_uint(p, "midstream_bytes", NULL, h->st.midstream_bytes);
		print_uint(p, "bad_checksum", ", %llu bad checksums",
			   h->st.bad_checksum);
		print_uint(p, "bad_framing", NULL, h->st.bad_framing);
		print_uint(p, "truncated", NULL, h->st.truncated);
		print_object_end(p);
		if (h->bound) {
			int off;

			print_object_begin(p, "journal");
			print_str(p, "path", "\n             journal %s", h->journal);
			print_uint(p, "samples", ", %llu samples",
				   bound_samples(h->bound));
			print_uint(p, "bad_lines", ", %llu bad lines",
				   bound_bad_lines(h->bound));
			print_bool(p, "torn_tail", NULL, bound_torn(h->bound));
			if (!bound_utc_offset(h->bound, &off))
				print_int(p, "utc_offset_s", NULL, off);
			else
				print_null(p, "utc_offset_s", NULL);
			print_object_end(p);
		} else {
			print_null(p, "journal", NULL);
		}
		print_text(p, "\n");
		print_object_end(p);
	}
	print_array_end(p);
}

static void corr_print_hops(const struct corr *c, struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->hops);

	print_text(p, "\none-way latency per hop (ns)\n");
	print_array_begin(p, "hops");
	for (size_t i = 0; i < c->hops.n; i++) {
		const struct corr_stat *s = &v[i];

		print_object_begin(p, NULL);
		print_str(p, "from", "  %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "flow", "  %s", s->flow == ALL_FLOWS ? "all" :
			  c->flows[s->flow].name);
		corr_print_rate(p, c, s->bucket);
		/* All matched; the figures are of those in sync. */
		print_uint(p, "messages", "  %llu messages",
			   hist_count(s->h) + hist_count(s->out));
		corr_print_bound(p, s);
		print_text(p, "\n   ");
		corr_print_latency(p, "latency_ns", s->h);
		print_text(p, "   ");
		corr_print_out_of_sync(p, s);
		print_object_end(p);
	}
	print_array_end(p);
	free(v);
}

static void corr_print_txns(const struct corr *c, struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->txns);

	print_text(p, "\ntransactions at one host (ns; clock error cancels)\n");
	print_array_begin(p, "transactions");
	for (size_t i = 0; i < c->txns.n; i++) {
		const struct corr_stat *s = &v[i];

		print_object_begin(p, NULL);
		print_str(p, "name", "  %-14s", corr_txn_names[s->kind]);
		print_str(p, "host", " at %s", c->hosts[s->from]->name);
		corr_print_rate(p, c, s->bucket);
		print_uint(p, "count", "  %llu\n   ", hist_count(s->h));
		corr_print_latency(p, "latency_ns", s->h);
		if (s->bucket == NO_BUCKET && (s->kind == TXN_TICK_TO_TRADE ||
						s->kind == TXN_FILL_TO_SELL))
			print_uint(p, "no_trigger", NULL,
				   c->hosts[s->from]->no_trigger[s->kind]);
		print_object_end(p);
	}
	print_array_end(p);
	free(v);
}

static const struct corr_stat *corr_find_hop(const struct corr *c,
					     const char *from, const char *to)
{
	for (size_t i = 0; i < c->hops.n; i++) {
		const struct corr_stat *s = &c->hops.v[i];

		if (s->flow == ALL_FLOWS && s->bucket == NO_BUCKET &&
		    !strcmp(c->hosts[s->from]->name, from) &&
		    !strcmp(c->hosts[s->to]->name, to))
			return s;
	}
	return NULL;
}

static void corr_print_switches(const struct corr *c, const struct corr *base,
				struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->switches);

	print_text(p, "\nswitch latency (ns)\n");
	print_array_begin(p, "switches");
	for (size_t i = 0; i < c->switches.n; i++) {
		const struct corr_stat *s = &v[i];
		struct summary sm;

		hist_summary(s->h, &sm);
		print_object_begin(p, NULL);
		print_str(p, "name", "  %s", s->sw);
		print_str(p, "from", " %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "method", "  (%s)", "topology");
		corr_print_rate(p, c, s->bucket);
		/* The samples behind the figures; out of sync apart. */
		print_uint(p, "messages", "  %llu messages", sm.n);
		if (sm.n > 1)
			print_double(p, "ci95_ns", "  mean ±%.1f (95%%)",
				     1.96 * sm.sd / sqrt((double)sm.n));
		else
			print_null(p, "ci95_ns", NULL);
		corr_print_bound(p, s);
		print_text(p, "\n   ");
		corr_print_latency(p, "latency_ns", s->h);
		print_text(p, "   ");
		corr_print_out_of_sync(p, s);
		print_object_end(p);
	}
	/* Through-switch minus back-to-back, hop by hop, as the FTTC report
	 * measured switches. */
	for (size_t i = 0; base && i < c->hops.n; i++) {
		const struct corr_stat *s = &c->hops.v[i], *b;
		const struct topo_path *tp = NULL;
		struct summary st, sb;

		if (s->flow != ALL_FLOWS || s->bucket != NO_BUCKET)
			continue;
		b = corr_find_hop(base, c->hosts[s->from]->name,
				  c->hosts[s->to]->name);
		if (!b)
			continue;
		hist_summary(s->h, &st);
		hist_summary(b->h, &sb);
		if (!st.n || !sb.n)
			continue;
		if (c->cfg.topo && c->path_known[s->from][s->to] > 0)
			tp = &c->path[s->from][s->to];
		print_object_begin(p, NULL);
		print_str(p, "name", "  %s", tp && tp->sw ? tp->sw : "switch");
		print_str(p, "from", " %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "method", "  (%s)", "baseline");
		print_uint(p, "messages", "  %llu messages", st.n);
		print_uint(p, "baseline_messages", ", %llu back-to-back", sb.n);
		print_double(p, "ci95_ns", "  mean ±%.1f (95%%)",
			     1.96 * sqrt(st.sd * st.sd / (double)st.n +
					 sb.sd * sb.sd / (double)sb.n));
		corr_print_bound(p, s);
		print_object_begin(p, "latency_ns");
		print_uint(p, "count", NULL, st.n);
		print_double(p, "mean", "\n    mean %.1f", st.mean - sb.mean);
		print_double(p, "p50", "  p50 %.0f", (double)(st.p50 - sb.p50));
		print_double(p, "sd", "  sd %.1f ns\n",
			     sqrt(fmax(0, st.sd * st.sd - sb.sd * sb.sd)));
		print_object_end(p);
		print_object_end(p);
	}
	print_array_end(p);
	free(v);
}

static void corr_print_unmatched(const struct corr *c, struct printer *p)
{
	uint64_t only = 0, dup = 0;

	for (unsigned i = 0; i < c->nhosts; i++) {
		only += c->hosts[i]->only_here;
		dup += c->hosts[i]->duplicates;
	}
	print_text(p, "\nunmatched\n");
	print_object_begin(p, "unmatched");
	print_uint(p, "seen_at_one_host", "  %llu messages seen at one host only",
		   only);
	print_uint(p, "duplicates", ", %llu seen twice at one host", dup);
	print_uint(p, "direction_unknown_pairs",
		   ", %llu pairs of unknown direction", c->dir_unknown_pairs);
	print_uint(p, "window_overflow", ", %llu left the window early",
		   c->window_overflow);
	print_uint(p, "beyond_hosts", NULL, c->extra_obs);
	print_uint(p, "matched_by_session", ", %llu matched by FIX session keys",
		   c->by_session);
	print_array_begin(p, "hosts");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];

		print_object_begin(p, NULL);
		print_str(p, "host", "\n  %s:", h->name);
		print_uint(p, "seen_only_here", " %llu only here", h->only_here);
		print_uint(p, "direction_unknown", ", %llu of unknown direction",
			   h->dir_unknown);
		print_object_begin(p, "no_trigger");
		for (int k = 0; k < TXN_KINDS; k++)
			if (k == TXN_TICK_TO_TRADE || k == TXN_FILL_TO_SELL)
				print_uint(p, corr_txn_names[k],
					   k == TXN_TICK_TO_TRADE ?
					   ", %llu orders without a trigger" :
					   " + %llu", h->no_trigger[k]);
		print_object_end(p);
		print_object_end(p);
	}
	print_array_end(p);
	print_text(p, "\n");
	print_object_end(p);
}

/* One FTTC row: a figure per rate bucket, from the entries of one kind. */
static void corr_fttc_row(const struct corr *c, struct printer *p,
			  const struct corr_stats_set *set, const char *label,
			  int kind, const char *sw, unsigned host, unsigned to,
			  int what)
{
	print_text(p, "  %-22s", label);
	for (unsigned b = 0; b < c->cfg.nrates; b++) {
		const struct corr_stat *s = NULL;
		struct summary sm;

		for (size_t i = 0; i < set->n && !s; i++)
			if (set->v[i].bucket == (int)b && set->v[i].kind == kind &&
			    set->v[i].from == host && set->v[i].to == to &&
			    (!sw || (set->v[i].sw && !strcmp(set->v[i].sw, sw))))
				s = &set->v[i];
		if (!s || !hist_count(s->h)) {
			print_text(p, " %9s", "-");
			continue;
		}
		hist_summary(s->h, &sm);
		if (what == 0)
			print_text(p, " %9.3f", sm.mean / 1000.0);
		else if (what == 1)
			print_text(p, " %9.3f", sm.sd / 1000.0);
		else
			print_text(p, " %9llu", (unsigned long long)sm.n);
	}
	print_text(p, "\n");
}

/* The FTTC report's tables: BUY and SELL (and switches) by market data
 * rate, in microseconds. Text only: JSON and CSV have every figure
 * already, each entry with its "rate". */
static void corr_print_fttc(const struct corr *c, struct printer *p)
{
	char label[64];

	if (!c->cfg.by_rate || print_format(p) != PRINT_TEXT)
		return;
	print_text(p, "\nby market data rate (us)\n  %-22s", "messages/s");
	for (unsigned b = 0; b < c->cfg.nrates; b++)
		print_text(p, " %9.0f", c->cfg.rates[b]);
	print_text(p, "\n");
	for (unsigned h = 0; h < c->nhosts; h++) {
		bool any = false;

		for (size_t i = 0; i < c->txns.n; i++)
			any |= c->txns.v[i].from == h && c->txns.v[i].bucket >= 0;
		if (!any)
			continue;
		snprintf(label, sizeof(label), "BUY  (%.14s)", c->hosts[h]->name);
		corr_fttc_row(c, p, &c->txns, label, TXN_TICK_TO_TRADE, NULL, h, h, 0);
		snprintf(label, sizeof(label), "SELL (%.14s)", c->hosts[h]->name);
		corr_fttc_row(c, p, &c->txns, label, TXN_FILL_TO_SELL, NULL, h, h, 0);
		corr_fttc_row(c, p, &c->txns, "SD B", TXN_TICK_TO_TRADE, NULL, h, h, 1);
		corr_fttc_row(c, p, &c->txns, "SD S", TXN_FILL_TO_SELL, NULL, h, h, 1);
	}
	for (size_t i = 0; i < c->switches.n; i++) {
		const struct corr_stat *s = &c->switches.v[i];
		char dir[48];

		/* A row group per switch and direction: the two directions
		 * differ by twice the clocks' offset. */
		if (s->bucket != NO_BUCKET)
			continue;
		snprintf(dir, sizeof(dir), "%.10s>%.10s", c->hosts[s->from]->name,
			 c->hosts[s->to]->name);
		snprintf(label, sizeof(label), "%.10s %s", s->sw, dir);
		corr_fttc_row(c, p, &c->switches, label, -1, s->sw, s->from,
			      s->to, 0);
		corr_fttc_row(c, p, &c->switches, "  SD", -1, s->sw, s->from,
			      s->to, 1);
		corr_fttc_row(c, p, &c->switches, "  packets", -1, s->sw,
			      s->from, s->to, 2);
	}
}

void corr_print(const struct corr *c, const struct corr *baseline,
		struct printer *p)
{
	corr_print_inputs(c, p);
	corr_print_hops(c, p);
	corr_print_txns(c, p);
	corr_print_fttc(c, p);
	corr_print_switches(c, baseline, p);
	corr_print_unmatched(c, p);
	print_int(p, "histogram_error_ns", NULL, corr_hist_error(c));
	print_array_begin(p, "warnings");
	for (unsigned i = 0; i < c->nwarn; i++)
		print_str(p, NULL, NULL, c->warn[i]);
	print_array_end(p);
}

void corr_destroy(struct corr *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		capset_close(h->cs);
		bound_destroy(h->bound);
		free(h->journal);
		free(h->ifs);
		for (size_t k = 0; k < h->syms.cap; k++)
			if (h->syms.hash[k])
				free(h->syms.val[k]);
		corr_map_free(&h->syms);
		free(h->orders);
		free(h);
	}
	for (size_t i = 0; i < c->nstreams; i++) {
		fixstream_destroy(c->streams[i]->fs);
		free(c->streams[i]);
	}
	free(c->streams);
	free(c->flows);
	corr_map_free(&c->flow_map);
	corr_map_free(&c->stream_map);
	free(c->scratch);
	free(c->ring);
	free(c->bucket1);
	free(c->bucket2);
	corr_stats_free(&c->hops);
	corr_stats_free(&c->txns);
	corr_stats_free(&c->switches);
	for (unsigned i = 0; i < c->nwarn; i++)
		free(c->warn[i]);
	free(c);
}
