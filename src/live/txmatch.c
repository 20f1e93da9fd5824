/* txmatch.c — keyed sender stamps joined to captured frames; see txmatch.h. */
#include "live/txmatch.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/xalloc.h"
#include "files/frame.h"

/* A flow walk stops here: a stamp whose frame is further back than this
 * many frames of its flow is not worth the time (and is counted). */
#define WALK_MAX 65536

/* A kept outbound frame. Frames are kept in arrival order in a ring of
 * serials (1, 2, ...); each links to the previous frame of its flow. */
struct tm_frame {
	uint64_t prev;		/* serial of the flow's previous frame, 0 */
	int64_t at_ns;		/* when kept */
	size_t off;		/* its bytes in the arena */
	uint32_t caplen, origlen;
	uint32_t seq, span;	/* TCP: first payload byte, payload bytes */
	uint32_t len;		/* UDP: payload length */
	uint64_t hash;		/* UDP: txsock_hash() of the payload */
	unsigned slot;
	uint64_t tag;		/* the caller's (txmatch_frame_tagged) */
	bool stamped;
};

/* The flow key, zero-padded (hmap compares bytes). */
struct tm_fkey {
	uint8_t family, proto;
	uint16_t sport, dport;
	uint8_t pad[2];
	uint8_t src[16], dst[16];
};

struct tm_flow {
	uint64_t newest;	/* serial of its newest frame, 0 */
	unsigned pending;	/* its stamps waiting for a frame */
};

/* A stamp that came before its frame, in arrival order. */
struct tm_pending {
	struct txsock_rec r;
	int64_t at_ns;
	bool live;		/* false once matched */
};

struct txmatch {
	struct txmatch_config cfg;
	struct hmap *flows;	/* tm_fkey → tm_flow */

	struct tm_frame *fr;	/* ring of nfr, serials [first, next) */
	size_t nfr;
	uint64_t first, next;
	uint8_t *arena;		/* frame bytes, a FIFO ring of arena_bytes */
	size_t wpos;

	struct tm_pending *pend;	/* ring of max_stamps, [phead, ptail) */
	uint64_t phead, ptail;

	struct txmatch_stats st;
};

static void fkey_of(struct tm_fkey *k, const struct frame_flow *f)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)f->family;
	k->proto = f->proto;
	k->sport = f->sport;
	k->dport = f->dport;
	memcpy(k->src, f->src, sizeof(k->src));
	memcpy(k->dst, f->dst, sizeof(k->dst));
}

int txmatch_create(struct txmatch **out, const struct txmatch_config *cfg)
{
	struct txmatch *m = xcalloc(1, sizeof(*m));
	int err;

	m->cfg = *cfg;
	if (!m->cfg.hold_ns)
		m->cfg.hold_ns = 1000000000LL;
	if (!m->cfg.arena_bytes)
		m->cfg.arena_bytes = 32u << 20;
	if (!m->cfg.max_stamps)
		m->cfg.max_stamps = 65536;
	if (!m->cfg.max_flows)
		m->cfg.max_flows = 4096;
	if (m->cfg.arena_bytes < 4096 || m->cfg.hold_ns < 0) {
		free(m);
		return -EINVAL;
	}
	err = hmap_create(&m->flows, sizeof(struct tm_fkey),
			  sizeof(struct tm_flow), m->cfg.max_flows, true);
	if (err) {
		free(m);
		return err;
	}
	/* One entry per 128 arena bytes: small frames (a FIX message, an
	 * ACK-carrying segment) run out of entries about when the arena
	 * runs out of bytes. */
	m->nfr = m->cfg.arena_bytes / 128;
	m->fr = xcalloc(m->nfr, sizeof(*m->fr));
	m->arena = xmalloc(m->cfg.arena_bytes);
	m->pend = xcalloc(m->cfg.max_stamps, sizeof(*m->pend));
	m->first = m->next = 1;
	*out = m;
	return 0;
}

void txmatch_destroy(struct txmatch *m)
{
	if (!m)
		return;
	hmap_destroy(m->flows);
	free(m->fr);
	free(m->arena);
	free(m->pend);
	free(m);
}

static struct tm_frame *frame_at(const struct txmatch *m, uint64_t serial)
{
	return &m->fr[serial % m->nfr];
}

/* Room for caplen contiguous bytes, evicting the oldest frames as needed.
 * Returns the offset, or (size_t)-1 for a frame larger than the arena. The
 * write position never catches up with the oldest frame while it wraps
 * (strict inequalities), so equal positions always mean "empty". */
static size_t arena_room(struct txmatch *m, uint32_t caplen)
{
	size_t cap = m->cfg.arena_bytes, off;

	if (caplen >= cap)
		return (size_t)-1;
	for (;;) {
		size_t tail;

		if (m->first == m->next) {
			m->wpos = 0;
			break;
		}
		tail = frame_at(m, m->first)->off;
		if (m->wpos >= tail) {
			if (cap - m->wpos >= caplen)
				break;
			if (tail > caplen) {
				m->wpos = 0;
				break;
			}
		} else if (tail - m->wpos > caplen) {
			break;
		}
		m->first++;	/* evict the oldest */
	}
	off = m->wpos;
	m->wpos += caplen;
	return off;
}

static bool frame_fits(const struct tm_frame *f, const struct txsock_key *k)
{
	if (k->flow.proto == IPPROTO_TCP)
		return (uint32_t)(k->seq - f->seq) < f->span;
	return !f->stamped && f->len == k->len && f->hash == k->hash;
}

/* The pair is made: hand it on (a TCP frame stamped twice, by the stamps
 * of two transmissions keyed alike, is counted and left as it is). */
static void make_pair(struct txmatch *m, struct tm_frame *f,
		      const struct txsock_rec *r)
{
	if (f->stamped) {
		m->st.duplicates++;
		return;
	}
	f->stamped = true;
	m->st.matched++;
	if (m->cfg.on_match)
		m->cfg.on_match(m->cfg.arg, f->slot, f->tag, m->arena + f->off,
				f->caplen, f->origlen, r);
}

static bool flow_room(struct txmatch *m, const struct tm_fkey *k,
		      struct tm_flow **fl)
{
	struct hmap_iter it;
	struct tm_flow *v;

	if (hmap_add(m->flows, k, (void **)fl) >= 0)
		return true;
	/* Full: forget flows with nothing kept and nothing waiting. */
	for (hmap_iter_init(m->flows, &it); (v = hmap_iter_next(m->flows, &it));)
		if (v->newest < m->first && !v->pending)
			hmap_iter_del(m->flows, &it);
	return hmap_add(m->flows, k, (void **)fl) >= 0;
}

void txmatch_frame(struct txmatch *m, unsigned slot, int linktype,
		   const uint8_t *frame, uint32_t caplen, uint32_t origlen,
		   int64_t now_ns)
{
	txmatch_frame_tagged(m, slot, linktype, frame, caplen, origlen, now_ns, 0);
}

void txmatch_frame_tagged(struct txmatch *m, unsigned slot, int linktype,
			  const uint8_t *frame, uint32_t caplen,
			  uint32_t origlen, int64_t now_ns, uint64_t tag)
{
	struct frame_info fi;
	struct tm_fkey k;
	struct tm_flow *fl;
	struct tm_frame *f;
	uint64_t serial;
	size_t off;

	if (frame_parse(frame, caplen, linktype, &fi) || !fi.payload_wire)
		return;
	/* A UDP payload cut by the snap length has no hash to match. */
	if (fi.flow.proto == IPPROTO_UDP && fi.payload_len < fi.payload_wire)
		return;
	fkey_of(&k, &fi.flow);
	if (!flow_room(m, &k, &fl)) {
		m->st.flows_full++;
		return;
	}
	if (m->next - m->first == m->nfr)
		m->first++;
	off = arena_room(m, caplen);
	if (off == (size_t)-1)
		return;
	/* The arena may have evicted frames: the flow pointer stays valid
	 * (no map change since flow_room). */
	serial = m->next++;
	f = frame_at(m, serial);
	memset(f, 0, sizeof(*f));
	f->prev = fl->newest;
	f->at_ns = now_ns;
	f->off = off;
	f->caplen = caplen;
	f->origlen = origlen;
	f->slot = slot;
	f->tag = tag;
	if (fi.flow.proto == IPPROTO_TCP) {
		f->seq = fi.seq;
		f->span = fi.payload_wire;
	} else {
		f->len = fi.payload_wire;
		f->hash = txsock_hash(TXSOCK_HASH_INIT, fi.payload, fi.payload_len);
	}
	memcpy(m->arena + off, frame, caplen);
	fl->newest = serial;
	m->st.frames++;
	if (!fl->pending)
		return;
	/* Stamps that came first, oldest first. */
	for (uint64_t p = m->phead; p < m->ptail && fl->pending; p++) {
		struct tm_pending *w = &m->pend[p % m->cfg.max_stamps];
		struct tm_fkey wk;

		if (!w->live)
			continue;
		fkey_of(&wk, &w->r.key.flow);
		if (memcmp(&wk, &k, sizeof(k)) || !frame_fits(f, &w->r.key))
			continue;
		w->live = false;
		fl->pending--;
		make_pair(m, f, &w->r);
	}
}

void txmatch_stamp(struct txmatch *m, const struct txsock_rec *r,
		   int64_t now_ns)
{
	struct tm_fkey k;
	struct tm_flow *fl;
	struct tm_pending *w;
	uint64_t s;
	unsigned steps = 0;

	if (!(r->flags & TXSOCK_F_KEYED))
		return;
	if (r->key.stage != TXSOCK_STAGE_SND) {
		m->st.other_stages++;
		return;
	}
	m->st.stamps++;
	fkey_of(&k, &r->key.flow);
	fl = hmap_find(m->flows, &k);
	/* Newest first: a retransmission's stamp belongs to the copy that
	 * left last. */
	for (s = fl ? fl->newest : 0; s >= m->first && s && steps < WALK_MAX;
	     steps++) {
		struct tm_frame *f = frame_at(m, s);

		if (frame_fits(f, &r->key)) {
			make_pair(m, f, r);
			return;
		}
		s = f->prev;
	}
	if (m->ptail - m->phead == m->cfg.max_stamps) {
		m->st.stamps_full++;
		return;
	}
	if (!fl && !flow_room(m, &k, &fl)) {
		m->st.stamps_full++;
		return;
	}
	w = &m->pend[m->ptail++ % m->cfg.max_stamps];
	w->r = *r;
	w->r.frame = NULL;
	w->at_ns = now_ns;
	w->live = true;
	fl->pending++;
}

void txmatch_expire(struct txmatch *m, int64_t now_ns)
{
	int64_t before = now_ns - m->cfg.hold_ns;

	while (m->first < m->next && frame_at(m, m->first)->at_ns < before)
		m->first++;
	if (m->first == m->next)
		m->wpos = 0;
	while (m->phead < m->ptail) {
		struct tm_pending *w = &m->pend[m->phead % m->cfg.max_stamps];
		struct tm_fkey k;
		struct tm_flow *fl;

		if (w->live && w->at_ns >= before)
			break;
		if (w->live) {
			m->st.unmatched++;
			fkey_of(&k, &w->r.key.flow);
			fl = hmap_find(m->flows, &k);
			if (fl && fl->pending)
				fl->pending--;
		}
		m->phead++;
	}
}

void txmatch_stats(const struct txmatch *m, struct txmatch_stats *st)
{
	*st = m->st;
}
