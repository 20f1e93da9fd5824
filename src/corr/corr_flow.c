/* corr_flow.c — flows and streams (see corr_private.h): a flow (its
 * 5-tuple) is numbered and named once for all hosts; a stream is one
 * host's view of a flow in one direction, reassembled into FIX messages by
 * its fixstream.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fix/fixstream.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

static size_t corr_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* A flow as a map key, zero-padded; host and dir 0 but for streams. */
struct corr_flow_key {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint8_t family, proto, host, dir;
};

static void corr_flow_key(struct corr_flow_key *k, const struct frame_flow *f,
			  uint8_t host, uint8_t dir)
{
	size_t n = corr_addr_len(f->family);

	memset(k, 0, sizeof(*k));
	memcpy(k->src, f->src, n);
	memcpy(k->dst, f->dst, n);
	k->sport = f->sport;
	k->dport = f->dport;
	k->family = (uint8_t)f->family;
	k->proto = f->proto;
	k->host = host;
	k->dir = dir;
}

struct hmap *corr_stream_map(void)
{
	struct hmap *m;

	/* Fixed sizes: cannot fail. */
	hmap_create(&m, sizeof(struct corr_flow_key),
		    sizeof(struct corr_stream *), 128, false);
	return m;
}

void corr_flow_maps_init(struct corr *c)
{
	hmap_create(&c->flow_map, sizeof(struct corr_flow_key),
		    sizeof(uint32_t), 128, false);
	c->stream_map = corr_stream_map();
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
	struct corr_flow_key k;
	uint32_t *id;
	void *v;

	corr_flow_key(&k, f, 0, 0);
	if (hmap_add(c->flow_map, &k, &v) == 0)
		return *(uint32_t *)v;
	id = v;
	if (c->nflows == c->cap_flows) {
		c->cap_flows = c->cap_flows ? c->cap_flows * 2 : 64;
		c->flows = xrealloc(c->flows, c->cap_flows * sizeof(*c->flows));
	}
	memset(&c->flows[c->nflows], 0, sizeof(c->flows[0]));
	c->flows[c->nflows].f = *f;
	corr_flow_name(f, c->flows[c->nflows].name,
		       sizeof(c->flows[c->nflows].name));
	*id = (uint32_t)c->nflows;
	return (uint32_t)c->nflows++;
}

struct corr_stream *corr_stream_get(struct corr *c, struct corr_host *h,
				    const struct frame_flow *f, uint8_t dir,
				    const struct corr_stream_make *mk,
				    bool *made)
{
	struct corr_flow_key k;
	struct corr_stream *s = h->last_stream;
	void *v;

	*made = false;
	if (s && s->dir == dir && corr_flow_eq(&s->key, f))
		return s;
	corr_flow_key(&k, f, (uint8_t)h->idx, dir);
	if (hmap_add(mk->map, &k, &v) == 0) {
		memcpy(&s, v, sizeof(s));
		return h->last_stream = s;
	}
	s = xcalloc(1, sizeof(*s));
	memcpy(v, &s, sizeof(s));
	s->c = c;
	s->h = h;
	s->dir = dir;
	s->key = *f;
	s->proto = f->proto;
	s->fs = fixstream_create(f->proto == IPPROTO_TCP, mk->scratch,
				 c->cfg.hold_ns, mk->on_msg, s);
	fixstream_on_lost(s->fs, mk->on_lost);
	*made = true;
	return h->last_stream = s;
}

void corr_stream_add(struct corr *c, struct corr_stream *s)
{
	s->flow = corr_flow_id(c, &s->key);
	s->kept = true;
	c->flows[s->flow].hosts |= 1ull << s->h->idx;
	c->flows[s->flow].streams++;
	if (c->nstreams == c->cap_streams) {
		c->cap_streams = c->cap_streams ? c->cap_streams * 2 : 64;
		c->streams = xrealloc(c->streams,
				      c->cap_streams * sizeof(*c->streams));
	}
	c->streams[c->nstreams++] = s;
}

struct corr_stream *corr_stream(struct corr *c, struct corr_host *h,
				const struct frame_flow *f, uint8_t dir)
{
	const struct corr_stream_make mk = {
		c->stream_map, c->scratch, corr_on_msg, corr_txn_lost
	};
	bool made;
	struct corr_stream *s = corr_stream_get(c, h, f, dir, &mk, &made);

	if (made)
		corr_stream_add(c, s);
	return s;
}

/* Live, over days: a stream whose last packet is older than before (its
 * connection closed, or quiet far longer than a FIX heartbeat interval)
 * gives what it holds, folds its counters into its host's and is freed,
 * so memory follows the connections open, not all there ever were. Its
 * flow keeps its number (results and the window refer to it); should the
 * flow come back, a new stream starts, resuming at the next whole message
 * as a capture that starts mid-stream does. A flow's last stream gone,
 * the sinks are told (the live view lets its per-flow series go). */
void corr_flow_expire(struct corr *c, int64_t before)
{
	size_t i = 0;

	while (i < c->nstreams) {
		struct corr_stream *s = c->streams[i];
		struct corr_flow_key k;

		if (s->last_ts >= before) {
			i++;
			continue;
		}
		fixstream_finish(s->fs);
		corr_txn_holes(c, s);	/* its holes given up */
		corr_stream_fold(s);
		corr_flow_key(&k, &s->key, (uint8_t)s->h->idx, s->dir);
		hmap_del(c->stream_map, &k);
		if (s->h->last_stream == s)
			s->h->last_stream = NULL;
		fixstream_destroy(s->fs);
		if (!--c->flows[s->flow].streams)
			corr_emit_flow_idle(c, s->flow);
		free(s);
		c->streams[i] = c->streams[--c->nstreams];
	}
}
