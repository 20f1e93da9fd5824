/* fixstream.c — see fixstream.h.
 *
 * Bytes in sequence order are parsed straight from the segment when no
 * message is pending (the common case: whole messages in one segment); only
 * the tail of a message cut by a segment boundary is copied, into buf, with
 * a mark per segment saying which stamp its bytes carry.
 *
 * Every byte takes the stamp of the first segment in the capture to carry
 * it: a segment arriving now yields to those held (they came before), and
 * held segments that overlap are taken in their order of arrival, each cut
 * where another one starts.
 */
#include "fix/fixstream.h"

#include <stdlib.h>
#include <string.h>

#include "fix/fix.h"
#include "files/frame.h"
#include "base/xalloc.h"

#define FIXSTREAM_MARKS 64
/* No TCP window is wider than 2^30 bytes (RFC 7323, window scale 14): a
 * segment farther than that from the next byte expected belongs to a new
 * connection on the same addresses and ports whose SYN was not captured. */
#define FIXSTREAM_MAX_WINDOW (1 << 30)

/* Where skipped bytes go: before the first message of a capture they are
 * the middle of a stream we joined late; after a hole, the rest of a
 * message whose start was lost; otherwise they are bad data. */
enum fixstream_sync { SYNC_START, SYNC_HOLE, SYNC_OK, SYNC_SKIPPING };

struct fixstream_mark {
	uint32_t seq;		/* first byte this stamp covers */
	uint32_t wire;
	int64_t ts;
	uint64_t ref;		/* the caller's, for the segment */
};

struct fixstream_held {
	uint32_t seq, len, off;	/* bytes not used yet, at arena + off */
	uint32_t wire;
	uint32_t order;		/* arrival: where held segments overlap, the
				 * first to arrive gives the bytes their stamp */
	bool dup;		/* some of its bytes came in another segment */
	int64_t ts;
	uint64_t ref;
};

struct fixstream {
	bool tcp;
	bool started;
	bool syn;		/* a SYN was seen: isn is its sequence number */
	uint32_t isn;
	enum fixstream_sync sync;
	uint32_t next;		/* next sequence number expected */
	int64_t hold_ns;
	int64_t last_ts;
	int64_t in_ts;		/* stamp of the last bytes taken in order */
	fixstream_lost_fn on_lost;
	/* The pending partial message: bytes [next - len, next). */
	char *buf;
	uint32_t len, cap;
	struct fixstream_mark marks[FIXSTREAM_MARKS];
	unsigned nmarks;
	/* Segments after a hole. */
	struct fixstream_held *held;	/* FIXSTREAM_HOLD_SEGS, with the arena */
	unsigned nheld;
	uint32_t arrivals;
	uint8_t *arena;
	uint32_t arena_used;
	struct fix_msg *scratch;
	fixstream_fn fn;
	void *arg;
	struct fixstream_stats st;
};

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

struct fixstream *fixstream_create(bool tcp, struct fix_msg *scratch,
				   int64_t hold_ns, fixstream_fn fn, void *arg)
{
	struct fixstream *s = xcalloc(1, sizeof(*s));

	s->tcp = tcp;
	s->scratch = scratch;
	s->hold_ns = hold_ns;
	s->fn = fn;
	s->arg = arg;
	/* Datagrams each start afresh: nothing is joined midway. */
	s->sync = tcp ? SYNC_START : SYNC_OK;
	return s;
}

void fixstream_destroy(struct fixstream *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s->arena);
	free(s->held);
	free(s);
}

void fixstream_on_lost(struct fixstream *s, fixstream_lost_fn fn)
{
	s->on_lost = fn;
}

/* Where missing bytes may start: the first byte of the message in
 * progress, else after the last bytes taken. */
static int64_t hole_lo(const struct fixstream *s)
{
	return s->len && s->nmarks ? s->marks[0].ts : s->in_ts;
}

bool fixstream_hole(const struct fixstream *s, int64_t *lo)
{
	if (!s->nheld)
		return false;
	*lo = hole_lo(s);
	return true;
}

const struct fixstream_stats *fixstream_stats(const struct fixstream *s)
{
	return &s->st;
}

int64_t fixstream_last_ts(const struct fixstream *s)
{
	return s->last_ts;
}

/* The mark covering sequence number q: the last one at or before it. */
static const struct fixstream_mark *mark_of(const struct fixstream *s,
					    uint32_t q)
{
	for (unsigned i = s->nmarks; i-- > 1;)
		if (seq_diff(q, s->marks[i].seq) >= 0)
			return &s->marks[i];
	return &s->marks[0];
}

static void add_mark(struct fixstream *s, uint32_t seq, int64_t ts,
		     uint32_t wire, uint64_t ref)
{
	if (s->nmarks == FIXSTREAM_MARKS) {
		/* A message in more than 64 segments: the first mark (its
		 * first byte) and the newest stay exact; drop the second. */
		memmove(&s->marks[1], &s->marks[2],
			(FIXSTREAM_MARKS - 2) * sizeof(s->marks[0]));
		s->nmarks--;
	}
	s->marks[s->nmarks++] = (struct fixstream_mark){ seq, wire, ts, ref };
}

static void skip_bytes(struct fixstream *s, uint64_t n)
{
	switch (s->sync) {
	case SYNC_START:
		s->st.midstream_bytes += n;
		break;
	case SYNC_HOLE:
		s->st.lost_bytes += n;
		break;
	case SYNC_OK:
		s->st.bad_framing++;
		s->sync = SYNC_SKIPPING;
		/* fall through */
	case SYNC_SKIPPING:
		s->st.skipped_bytes += n;
		break;
	}
}

/* Parse whole messages from p[0..n), whose first byte has sequence number
 * seq0; returns how many bytes were used (the rest is an incomplete
 * message, or junk that may yet start one). */
static uint32_t parse(struct fixstream *s, const char *p, uint32_t n,
		      uint32_t seq0)
{
	uint32_t off = 0;

	while (off < n) {
		struct fixstream_msg m;
		const struct fixstream_mark *mk;
		enum fix_error why;
		size_t skip;
		int len = fix_frame(p + off, n - off, FIXSTREAM_MAX_MSG, &skip,
				    &why);

		if (len == 0)
			break;
		if (len < 0) {
			skip_bytes(s, skip);
			off += (uint32_t)skip;
			continue;
		}
		if (fix_parse(s->scratch, p + off, (size_t)len, &why) < 0) {
			if (why == FIX_E_CHECKSUM)
				s->st.bad_checksum++;
			else
				s->st.bad_framing++;
			off += (uint32_t)len;
			continue;
		}
		s->sync = SYNC_OK;
		m.fix = s->scratch;
		m.seq = seq0 + off;
		mk = mark_of(s, m.seq);
		m.ts_first = mk->ts;
		m.wire_first = mk->wire;
		m.ref_first = mk->ref;
		mk = mark_of(s, m.seq + (uint32_t)len - 1);
		m.ts_last = mk->ts;
		m.wire_last = mk->wire;
		s->st.messages++;
		s->fn(s->arg, &m);
		off += (uint32_t)len;
	}
	return off;
}

static void buf_reserve(struct fixstream *s, uint32_t need)
{
	if (need <= s->cap)
		return;
	s->cap = s->cap ? s->cap : 2048;
	while (s->cap < need)
		s->cap *= 2;
	s->buf = xrealloc(s->buf, s->cap);
}

/* Bytes at sequence s->next, in order. */
static void append(struct fixstream *s, const uint8_t *data, uint32_t n,
		   int64_t ts, uint32_t wire, uint64_t ref)
{
	uint32_t seq = s->next, used, base;

	s->st.bytes += n;
	s->next += n;
	s->in_ts = ts;
	if (!s->len) {
		/* Fast path: parse in place; keep only an unfinished tail. */
		s->nmarks = 0;
		add_mark(s, seq, ts, wire, ref);
		used = parse(s, (const char *)data, n, seq);
		if (used < n) {
			buf_reserve(s, n - used);
			memcpy(s->buf, data + used, n - used);
			s->len = n - used;
		}
		return;
	}
	buf_reserve(s, s->len + n);
	memcpy(s->buf + s->len, data, n);
	base = seq - s->len;
	s->len += n;
	add_mark(s, seq, ts, wire, ref);
	used = parse(s, s->buf, s->len, base);
	if (!used)
		return;
	memmove(s->buf, s->buf + used, s->len - used);
	s->len -= used;
	base += used;
	/* Keep the mark covering the new first byte and those after it. */
	unsigned k = 0;
	while (k + 1 < s->nmarks && seq_diff(s->marks[k + 1].seq, base) <= 0)
		k++;
	if (k) {
		memmove(s->marks, s->marks + k,
			(s->nmarks - k) * sizeof(s->marks[0]));
		s->nmarks -= k;
	}
	/* A pending tail longer than any message can be is junk. */
	if (s->len > FIXSTREAM_MAX_MSG + 64) {
		skip_bytes(s, s->len);
		s->len = 0;
		s->nmarks = 0;
	}
}

static void held_remove(struct fixstream *s, unsigned i)
{
	s->held[i] = s->held[--s->nheld];
	if (!s->nheld)
		s->arena_used = 0;
}

/* The distance from s->next to the nearest held segment after it, or limit
 * when none is nearer. */
static uint32_t held_gap(const struct fixstream *s, uint32_t limit)
{
	for (unsigned i = 0; i < s->nheld; i++) {
		int32_t d = seq_diff(s->held[i].seq, s->next);

		if (d > 0 && (uint32_t)d < limit)
			limit = (uint32_t)d;
	}
	return limit;
}

/* Take in held segments that now join the stream. Where held segments
 * overlap, each byte is taken from the one that arrived first: it carried
 * the byte's first transmission. */
static void drain(struct fixstream *s)
{
	while (s->nheld) {
		struct fixstream_held *h;
		const uint8_t *p;
		int c = -1;
		uint32_t n, wire;
		int64_t ts;
		uint64_t ref;

		for (unsigned i = 0; i < s->nheld;) {
			int32_t d;

			h = &s->held[i];
			d = seq_diff(s->next, h->seq);
			if (d > 0) {
				/* Its first bytes came in another segment. */
				h->dup = true;
				if ((uint32_t)d >= h->len) {
					s->st.retransmits++;
					held_remove(s, i);
					continue;
				}
				h->seq += (uint32_t)d;
				h->off += (uint32_t)d;
				h->len -= (uint32_t)d;
			}
			i++;
		}
		for (unsigned i = 0; i < s->nheld; i++)
			if (s->held[i].seq == s->next &&
			    (c < 0 || (int32_t)(s->held[i].order -
						s->held[c].order) < 0))
				c = (int)i;
		if (c < 0)
			break;
		/* Up to where another held segment starts: it may have come
		 * before this one. */
		h = &s->held[c];
		n = held_gap(s, h->len);
		p = s->arena + h->off;
		ts = h->ts;
		wire = h->wire;
		ref = h->ref;
		h->seq += n;
		h->off += n;
		h->len -= n;
		if (!h->len) {
			if (h->dup)
				s->st.retransmits++;
			held_remove(s, (unsigned)c);
		}
		/* The arena is not written until the next hold(). */
		append(s, p, n, ts, wire, ref);
	}
}

/* Give up the holes before sequence number q: their bytes, and the
 * messages they cut, are lost; parsing resumes at the next "8=". */
static void give_up_to(struct fixstream *s, uint32_t q)
{
	while (seq_diff(q, s->next) > 0) {
		uint32_t to = q;
		int64_t hi = s->last_ts;

		for (unsigned i = 0; i < s->nheld; i++)
			if (seq_diff(s->held[i].seq, to) < 0)
				to = s->held[i].seq;
		for (unsigned i = 0; i < s->nheld; i++)
			if (s->held[i].seq == to && s->held[i].ts < hi)
				hi = s->held[i].ts;
		if (s->on_lost)
			s->on_lost(s->arg, hole_lo(s), hi,
				   (uint64_t)seq_diff(to, s->next) + s->len);
		s->st.lost_bytes += (uint32_t)seq_diff(to, s->next);
		/* The message in progress lost its middle. */
		s->st.lost_bytes += s->len;
		s->len = 0;
		s->nmarks = 0;
		s->next = to;
		s->sync = SYNC_HOLE;
		drain(s);
	}
}

/* The earliest held segment's sequence number; nheld > 0. */
static uint32_t held_first(const struct fixstream *s)
{
	uint32_t first = s->held[0].seq;

	for (unsigned i = 1; i < s->nheld; i++)
		if (seq_diff(s->held[i].seq, first) < 0)
			first = s->held[i].seq;
	return first;
}

/* Give up the hole before the earliest held segment. */
static void give_up(struct fixstream *s)
{
	if (s->nheld)
		give_up_to(s, held_first(s));
}

/* Bytes [seq, seq + n) of a segment arriving now, seq at or before
 * s->next: the bytes not seen yet are used, except those a held segment
 * (which arrived before) carries. */
static void take(struct fixstream *s, uint32_t seq, const uint8_t *data,
		 uint32_t n, int64_t ts, uint32_t wire, uint64_t ref)
{
	bool dup = false;

	while (n) {
		uint32_t d = (uint32_t)seq_diff(s->next, seq), k;

		if (d) {
			dup = true;
			if (d >= n)
				break;
			seq += d;
			data += d;
			n -= d;
		}
		k = held_gap(s, n);
		append(s, data, k, ts, wire, ref);
		seq += k;
		data += k;
		n -= k;
		drain(s);
	}
	if (dup)
		s->st.retransmits++;
}

static int held_by_off(const void *a, const void *b)
{
	const struct fixstream_held *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/* Room for n more bytes in the arena, packing it first when segments used
 * in whole or in part left gaps. */
static bool arena_room(struct fixstream *s, uint32_t n)
{
	uint32_t used = 0;

	if (s->arena_used + n <= FIXSTREAM_HOLD_BYTES)
		return true;
	qsort(s->held, s->nheld, sizeof(s->held[0]), held_by_off);
	for (unsigned i = 0; i < s->nheld; i++) {
		memmove(s->arena + used, s->arena + s->held[i].off,
			s->held[i].len);
		s->held[i].off = used;
		used += s->held[i].len;
	}
	s->arena_used = used;
	return used + n <= FIXSTREAM_HOLD_BYTES;
}

/* A segment after a hole (seq after s->next). */
static void hold(struct fixstream *s, uint32_t seq, const uint8_t *data,
		 uint32_t n, int64_t ts, uint32_t wire, uint64_t ref)
{
	for (unsigned i = 0; i < s->nheld; i++) {
		const struct fixstream_held *h = &s->held[i];

		if (seq_diff(seq, h->seq) >= 0 &&
		    seq_diff(seq + n, h->seq + h->len) <= 0) {
			s->st.retransmits++;
			return;
		}
	}
	if (n > FIXSTREAM_HOLD_BYTES) {
		/* Cannot be held: the holes before it are lost for sure. */
		give_up_to(s, seq);
		take(s, seq, data, n, ts, wire, ref);
		return;
	}
	/* Full: give up the earliest hole, which may be the one just before
	 * this segment. */
	while (s->nheld == FIXSTREAM_HOLD_SEGS ||
	       (s->nheld && !arena_room(s, n))) {
		if (seq_diff(seq, held_first(s)) < 0)
			give_up_to(s, seq);
		else
			give_up(s);
		if (seq_diff(seq, s->next) <= 0)
			break;
	}
	if (seq_diff(seq, s->next) <= 0) {
		take(s, seq, data, n, ts, wire, ref);
		return;
	}
	if (!s->arena) {
		/* Only streams that ever see a hole pay for holding. */
		s->arena = xmalloc(FIXSTREAM_HOLD_BYTES);
		s->held = xmalloc(FIXSTREAM_HOLD_SEGS * sizeof(*s->held));
	}
	memcpy(s->arena + s->arena_used, data, n);
	s->held[s->nheld++] = (struct fixstream_held){
		.seq = seq, .len = n, .off = s->arena_used, .wire = wire,
		.order = s->arrivals++, .ts = ts, .ref = ref,
	};
	s->arena_used += n;
	s->st.out_of_order++;
}

void fixstream_segment(struct fixstream *s, uint32_t seq, uint8_t tcp_flags,
		       const uint8_t *payload, uint32_t caplen,
		       uint32_t wire_payload, int64_t ts, uint32_t wire_len,
		       uint64_t ref)
{
	uint32_t n = caplen < wire_payload ? caplen : wire_payload;

	if (ts > s->last_ts)
		s->last_ts = ts;
	if (caplen < wire_payload)
		s->st.truncated++;
	if (!s->tcp) {
		uint32_t used;

		if (!n)
			return;
		s->st.segments++;
		s->st.bytes += n;
		s->nmarks = 0;
		add_mark(s, 0, ts, wire_len, ref);
		used = parse(s, (const char *)payload, n, 0);
		/* Each datagram stands alone: no tail carries over. */
		if (used < n && caplen >= wire_payload)
			s->st.truncated++;
		return;
	}
	if (tcp_flags & FRAME_TCP_SYN) {
		/* A new connection on this flow (not the same SYN again):
		 * end the old one, start clean at ISN + 1. */
		if (!s->syn || seq != s->isn) {
			if (s->started)
				fixstream_finish(s);
			s->started = true;
			s->syn = true;
			s->isn = seq;
			s->next = seq + 1;
			s->sync = SYNC_OK;
		}
		seq++;
	}
	if (!n)
		return;
	s->st.segments++;
	if (s->started && (seq_diff(seq, s->next) > FIXSTREAM_MAX_WINDOW ||
			   seq_diff(seq, s->next) < -FIXSTREAM_MAX_WINDOW)) {
		/* Otherwise its segments would all be taken for
		 * retransmissions, or wait behind a hole of gigabytes. */
		fixstream_finish(s);
		s->started = false;
		s->syn = false;
	}
	if (!s->started) {
		/* Joined midway: resume at the first message start. */
		s->started = true;
		s->next = seq;
		s->sync = SYNC_START;
	}
	if (seq_diff(seq, s->next) > 0)
		hold(s, seq, payload, n, ts, wire_len, ref);
	else
		take(s, seq, payload, n, ts, wire_len, ref);
	/* The bytes the capture cut off will not come: when the stream
	 * stopped there, give them up now rather than after the hold time. */
	if (caplen < wire_payload && s->next == seq + n)
		give_up_to(s, seq + wire_payload);
	/* A hole open longer than the hold time will not fill. */
	while (s->nheld) {
		int64_t oldest = s->held[0].ts, age;

		for (unsigned i = 1; i < s->nheld; i++)
			if (s->held[i].ts < oldest)
				oldest = s->held[i].ts;
		if (!__builtin_sub_overflow(s->last_ts, oldest, &age) &&
		    age <= s->hold_ns)
			break;
		give_up(s);
	}
}

void fixstream_finish(struct fixstream *s)
{
	while (s->nheld)
		give_up(s);
	if (s->len) {
		/* A message the capture ended in the middle of. */
		s->st.truncated++;
		s->len = 0;
		s->nmarks = 0;
	}
}
