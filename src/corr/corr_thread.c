/* corr_thread.c — hosts decoded on threads of their own (cfg.threads):
 * each such host's thread reads its files, parses frames, reassembles
 * its streams and parses their FIX messages; the correlator's thread
 * takes what they found in time order across hosts, as corr_run() takes
 * packets, and does everything that looks across hosts (flow numbers,
 * transactions, matching, results). The output is the one thread's, byte
 * for byte: every step that touches shared state happens on the
 * correlator's thread in the order one thread would have taken it.
 *
 * A host's thread writes records into batches, handed over whole:
 *   PKT   a packet, with its stamp (the merge's key) and its stream;
 *         after it, for a packet fed to its stream:
 *   MSG   a message the segment completed: its stamps, its bytes and
 *         where the fields the correlator reads are (corr_txn.c)
 *   LOST  bytes its stream gave up
 *   END   the stream's hole state after the segment
 *   IFACE the host met an interface not worked out yet: it waits while
 *         the correlator's thread does that (corr_iface(): the common
 *         timescale and the warnings depend on the order), when one
 *         thread would have, on taking the host's packet before
 *   DONE  its files are read.
 * A host has THR_BATCHES batches: when the correlator falls behind, its
 * thread waits for one to come back. Nothing is allocated per packet.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"
#include "files/frame.h"
#include "fix/fix.h"
#include "fix/fixstream.h"

#define THR_BATCHES 8
#define THR_BATCH (1u << 20)	/* bytes: a few thousand messages */

enum { REC_PKT = 1, REC_MSG, REC_LOST, REC_END, REC_IFACE, REC_DONE };

struct thr_rec {
	uint32_t kind, size;	/* size: of the whole record, 8-aligned */
};

struct thr_pkt {
	struct thr_rec r;
	int64_t ts;
	struct corr_stream *s;	/* NULL: no stream (not IP, no payload) */
	const struct corr_iface *ifc;
	uint8_t made, skip, tcp_flags;
};

/* Followed by nf struct fix_field, then len bytes: the values of the
 * fields the rules look at (corr_fields(); off[k] UINT32_MAX: absent),
 * and of the fields listed, only for market data, whose entries
 * corr_txn() walks; offsets are into those bytes. The message's own bytes
 * stay behind: a fifth of its size crosses between the cores. m.seq is
 * its key already (corr_msg_seq()). */
struct thr_msg {
	struct thr_rec r;
	struct corr_stream *s;
	struct fixstream_msg m;	/* but for m.fix, which is rebuilt */
	uint32_t len, nf;
	uint32_t off[CORR_FIELDS], flen[CORR_FIELDS];
};

struct thr_lost {
	struct thr_rec r;
	struct corr_stream *s;
	int64_t lo, hi;
	uint64_t bytes;
};

struct thr_end {
	struct thr_rec r;
	struct corr_stream *s;
	int64_t lo;
	uint8_t hole;
};

struct thr_iface {
	struct thr_rec r;
	unsigned file, id;
	int tap_scale;
};

struct thr_batch {
	unsigned char *buf;
	size_t len, cap;
};

struct corr_thr {
	struct corr *c;
	struct corr_host *h;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct thr_batch b[THR_BATCHES];
	/* Under mu: batches written and not yet read (a FIFO), and free. */
	unsigned full[THR_BATCHES], full_head, nfull;
	unsigned freeb[THR_BATCHES], nfree;
	bool stop;			/* the run was aborted */
	const struct corr_iface *reply;	/* IFACE's answer */
	bool replied;
	/* The host's thread: its batch being written (-1: none), its streams,
	 * the fields of the message being recorded. */
	int wb;
	struct corr_stream_make mk;
	struct fix_field fields[FIX_MAX_FIELDS];
	/* The correlator's thread: the batch being read (-1: none), the
	 * next packet, a message rebuilt for corr_on_msg(). */
	int rb;
	size_t roff;
	struct thr_pkt hd;
	struct fix_msg *msg;
};

/* ---- the host's thread ---- */

/* A free batch to write into, or false when the run was aborted. */
static bool thr_take(struct corr_thr *t)
{
	pthread_mutex_lock(&t->mu);
	while (!t->nfree && !t->stop)
		pthread_cond_wait(&t->cv, &t->mu);
	if (!t->stop) {
		t->wb = (int)t->freeb[--t->nfree];
		t->b[t->wb].len = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return !t->stop;
}

/* The batch written so far, to the correlator. */
static void thr_publish(struct corr_thr *t)
{
	if (t->wb < 0)
		return;
	pthread_mutex_lock(&t->mu);
	t->full[(t->full_head + t->nfull++) % THR_BATCHES] = (unsigned)t->wb;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	t->wb = -1;
}

/* Room for a record of kind and size in the batch being written; NULL
 * when the run was aborted. A record bigger than a batch (a message of
 * over a megabyte) grows its batch: rare, and kept for the next. */
static void *thr_put(struct corr_thr *t, uint32_t kind, size_t size)
{
	struct thr_batch *b;
	struct thr_rec *r;

	size = (size + 7) & ~(size_t)7;
	if (t->wb >= 0 && t->b[t->wb].len + size > t->b[t->wb].cap)
		thr_publish(t);
	if (t->wb < 0 && !thr_take(t))
		return NULL;
	b = &t->b[t->wb];
	if (size > b->cap) {
		b->cap = size;
		b->buf = xrealloc(b->buf, b->cap);
	}
	r = (struct thr_rec *)(void *)(b->buf + b->len);
	r->kind = kind;
	r->size = (uint32_t)size;
	b->len += size;
	return r;
}

/* The fields corr_txn() walks in a market data message: kept in their
 * order, the others left out. */
static bool thr_field_kept(uint32_t tag)
{
	return tag == 55 || tag == 269;
}

static void thr_on_msg(void *arg, const struct fixstream_msg *m)
{
	struct corr_stream *s = arg;
	struct corr_thr *t = s->h->thr;
	const struct fix_msg *fm = m->fix;
	struct corr_fields f;
	struct thr_msg *x;
	uint32_t nf = 0, o = 0;
	size_t need = 0;
	char *out;

	if (!t) {	/* the files are read: corr_finish()'s flush */
		corr_on_msg(arg, m);
		return;
	}
	corr_fields(fm, &f);
	for (int k = 0; k < CORR_FIELDS; k++)
		need += f.v[k] ? f.len[k] : 0;
	if (corr_is(&f, F_35, "X"))
		for (uint32_t i = 0; i < fm->nfields; i++)
			if (thr_field_kept(fm->f[i].tag)) {
				t->fields[nf++] = fm->f[i];
				need += fm->f[i].len;
			}
	x = thr_put(t, REC_MSG, sizeof(*x) + nf * sizeof(struct fix_field) +
		    need);
	if (!x)
		return;
	x->s = s;
	x->m = *m;
	x->m.fix = NULL;
	x->m.seq = corr_msg_seq(s, m);
	out = (char *)((struct fix_field *)(void *)(x + 1) + nf);
	for (int k = 0; k < CORR_FIELDS; k++) {
		x->off[k] = f.v[k] ? o : UINT32_MAX;
		x->flen[k] = f.len[k];
		if (f.v[k]) {
			memcpy(out + o, f.v[k], f.len[k]);
			o += f.len[k];
		}
	}
	for (uint32_t i = 0; i < nf; i++) {
		memcpy(out + o, fm->buf + t->fields[i].off, t->fields[i].len);
		t->fields[i].off = o;
		o += t->fields[i].len;
	}
	memcpy(x + 1, t->fields, nf * sizeof(struct fix_field));
	x->len = o;
	x->nf = nf;
}

static void thr_on_lost(void *arg, int64_t lo, int64_t hi, uint64_t bytes)
{
	struct corr_stream *s = arg;
	struct corr_thr *t = s->h->thr;
	struct thr_lost *x;

	if (!t) {
		corr_txn_lost(arg, lo, hi, bytes);
		return;
	}
	x = thr_put(t, REC_LOST, sizeof(*x));
	if (!x)
		return;
	x->s = s;
	x->lo = lo;
	x->hi = hi;
	x->bytes = bytes;
}

/* An interface met for the first time, worked out by the correlator's
 * thread; NULL when the run was aborted. */
static const struct corr_iface *thr_ask(struct corr_thr *t,
					const struct capset_packet *p)
{
	struct thr_iface *x = thr_put(t, REC_IFACE, sizeof(*x));
	const struct corr_iface *f;

	if (!x)
		return NULL;
	x->file = p->file;
	x->id = p->pkt.iface;
	x->tap_scale = p->pkt.timescale;
	thr_publish(t);
	pthread_mutex_lock(&t->mu);
	while (!t->replied && !t->stop)
		pthread_cond_wait(&t->cv, &t->mu);
	f = t->stop ? NULL : t->reply;
	t->replied = false;
	pthread_mutex_unlock(&t->mu);
	return f;
}

/* corr_fetch() on the host's thread: 1 a packet, 0 the end, -1 aborted. */
static int thr_fetch(struct corr_thr *t)
{
	struct corr_host *h = t->h;

	for (;;) {
		const struct corr_iface *f;

		if (capset_next(h->cs, &h->next) != 1)
			return 0;
		f = corr_iface_find(h, h->next.file, h->next.pkt.iface);
		if (!f && !(f = thr_ask(t, &h->next)))
			return -1;
		if (!f->usable) {
			h->skipped_scale++;
			continue;
		}
		h->next_if = (struct corr_iface *)f;
		h->next_ts = h->next.pkt.ts_ns + f->delta_ns;
		return 1;
	}
}

static void *thr_main(void *arg)
{
	struct corr_thr *t = arg;
	struct corr_host *h = t->h;
	int rc;

	while ((rc = thr_fetch(t)) == 1) {
		struct frame_info fi;
		bool made, skip;
		struct corr_stream *s = corr_packet_host(t->c, h, &t->mk, &fi,
							 &made, &skip);
		struct thr_pkt *p = thr_put(t, REC_PKT, sizeof(*p));
		struct thr_end *e;

		if (!p)
			return NULL;
		p->ts = h->next_ts;
		p->s = s;
		p->ifc = h->next_if;
		p->made = made;
		p->skip = skip;
		p->tcp_flags = s ? fi.tcp_flags : 0;
		if (!s || skip)
			continue;
		corr_packet_feed(h, s, &fi);
		if (!(e = thr_put(t, REC_END, sizeof(*e))))
			return NULL;
		e->s = s;
		e->hole = corr_stream_hole(s, &e->lo);
	}
	if (rc == 0 && thr_put(t, REC_DONE, sizeof(struct thr_rec)))
		thr_publish(t);
	return NULL;
}

/* ---- the correlator's thread ---- */

/* The host's next record, waiting for its batch. */
static const struct thr_rec *thr_next(struct corr_thr *t)
{
	const struct thr_rec *r;

	if (t->rb >= 0 && t->roff == t->b[t->rb].len) {
		pthread_mutex_lock(&t->mu);
		t->freeb[t->nfree++] = (unsigned)t->rb;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		t->rb = -1;
	}
	if (t->rb < 0) {
		pthread_mutex_lock(&t->mu);
		while (!t->nfull)
			pthread_cond_wait(&t->cv, &t->mu);
		t->rb = (int)t->full[t->full_head];
		t->full_head = (t->full_head + 1) % THR_BATCHES;
		t->nfull--;
		pthread_mutex_unlock(&t->mu);
		t->roff = 0;
	}
	r = (const struct thr_rec *)(const void *)(t->b[t->rb].buf + t->roff);
	t->roff += r->size;
	return r;
}

void corr_thr_head(struct corr *c, struct corr_host *h)
{
	struct corr_thr *t = h->thr;

	for (;;) {
		const struct thr_rec *r = thr_next(t);

		if (r->kind == REC_IFACE) {
			const struct thr_iface *x = (const void *)r;
			const struct corr_iface *f =
				corr_iface(c, h, x->file, x->id, x->tap_scale);

			pthread_mutex_lock(&t->mu);
			t->reply = f;
			t->replied = true;
			pthread_cond_broadcast(&t->cv);
			pthread_mutex_unlock(&t->mu);
			continue;
		}
		if (r->kind == REC_PKT) {
			memcpy(&t->hd, r, sizeof(t->hd));
			h->merge_ts = t->hd.ts;
			h->have_next = true;
		} else {	/* REC_DONE */
			h->have_next = false;
		}
		return;
	}
}

static void thr_msg(struct corr_thr *t, const struct thr_msg *x)
{
	const struct fix_field *f = (const void *)(x + 1);
	const char *buf = (const char *)(f + x->nf);
	struct fixstream_msg m = x->m;
	struct corr_fields cf;

	t->msg->buf = buf;
	t->msg->len = x->len;
	t->msg->nfields = x->nf;
	memcpy(t->msg->f, f, x->nf * sizeof(*f));
	m.fix = t->msg;
	for (int k = 0; k < CORR_FIELDS; k++) {
		cf.v[k] = x->off[k] == UINT32_MAX ? NULL : buf + x->off[k];
		cf.len[k] = x->flen[k];
	}
	corr_msg(x->s, &m, &cf);
}

void corr_thr_apply(struct corr *c, struct corr_host *h)
{
	struct corr_thr *t = h->thr;
	struct corr_stream *s = t->hd.s;

	if (!s)
		return;
	if (t->hd.made)
		corr_stream_add(c, s);
	if (t->hd.skip)
		return;
	corr_packet_head(s, t->hd.ifc, t->hd.ts, t->hd.tcp_flags);
	for (;;) {
		const struct thr_rec *r = thr_next(t);

		if (r->kind == REC_MSG) {
			thr_msg(t, (const void *)r);
		} else if (r->kind == REC_LOST) {
			const struct thr_lost *x = (const void *)r;

			corr_txn_lost(x->s, x->lo, x->hi, x->bytes);
		} else {	/* REC_END */
			const struct thr_end *x = (const void *)r;

			if (s->dir == DIR_IN || h->npend)
				corr_txn_holes_at(c, s, x->hole, x->lo);
			return;
		}
	}
}

static void thr_free(struct corr_thr *t);

void corr_thr_start(struct corr *c)
{
	unsigned n;

	if (c->cfg.threads < 2 || c->cfg.follow || c->cfg.on_record)
		return;
	/* The correlator's thread is one of them, and reads the hosts left
	 * over. On two cores, two hosts' 2 M-message sim files: two threads
	 * 12-16 % faster in wall time than one, three (a thread per host
	 * besides it) no faster, the parsed messages crossing between the
	 * cores costing what the parallel parsing gains (tapless correlate
	 * --threads N under /usr/bin/time; see issue 36's closing note). */
	n = c->cfg.threads - 1 < c->nhosts ? c->cfg.threads - 1 : c->nhosts;
	for (unsigned i = 0; i < n; i++) {
		struct corr_host *h = c->hosts[i];
		struct corr_thr *t = xcalloc(1, sizeof(*t));

		t->c = c;
		t->h = h;
		pthread_mutex_init(&t->mu, NULL);
		pthread_cond_init(&t->cv, NULL);
		for (unsigned k = 0; k < THR_BATCHES; k++) {
			t->b[k].cap = THR_BATCH;
			t->b[k].buf = xmalloc(THR_BATCH);
			t->freeb[t->nfree++] = k;
		}
		t->wb = t->rb = -1;
		/* The host's own scratch: its streams parse into it, on its
		 * thread and in corr_finish() (it lives as long as they). */
		if (!h->scratch)
			h->scratch = xmalloc(sizeof(*h->scratch));
		t->mk.map = corr_stream_map();
		t->mk.scratch = h->scratch;
		t->mk.on_msg = thr_on_msg;
		t->mk.on_lost = thr_on_lost;
		t->msg = xmalloc(sizeof(*t->msg));
		h->thr = t;
		if (pthread_create(&t->tid, NULL, thr_main, t)) {
			/* No thread: this host is read on the correlator's. */
			h->thr = NULL;
			thr_free(t);
		}
	}
}

static void thr_free(struct corr_thr *t)
{
	for (unsigned k = 0; k < THR_BATCHES; k++)
		free(t->b[k].buf);
	hmap_destroy(t->mk.map);
	free(t->msg);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

void corr_thr_stop(struct corr *c)
{
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];
		struct corr_thr *t = h->thr;
		struct hmap_iter it;
		void *v;

		if (!t)
			continue;
		/* Read to its end, the thread has returned; aborted, it may
		 * wait for a batch or an answer. */
		pthread_mutex_lock(&t->mu);
		t->stop = true;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->tid, NULL);
		h->thr = NULL;
		h->last_stream = NULL;
		/* Streams the correlator never met (an aborted run) are the
		 * thread's to free; the others are the correlator's. */
		for (hmap_iter_init(t->mk.map, &it);
		     (v = hmap_iter_next(t->mk.map, &it)); ) {
			struct corr_stream *s;

			memcpy(&s, v, sizeof(s));
			if (!s->kept) {
				fixstream_destroy(s->fs);
				free(s);
			}
		}
		thr_free(t);
	}
}
