/* corr_flow.c — flows and streams (see corr_private.h): a flow (its
 * 5-tuple) is numbered and named once for all hosts; a stream is one
 * host's view of a flow in one direction, reassembled into FIX messages by
 * its fixstream.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "fix/fixstream.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

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
