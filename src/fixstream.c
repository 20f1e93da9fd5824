/* fixstream.c — see fixstream.h.
 *
 * Bytes in sequence order are parsed straight from the segment when no
 * message is pending (the common case: whole messages in one segment); only
 * the tail of a message cut by a segment boundary is copied, into buf, with
 * a mark per segment saying which stamp its bytes carry.
 */
#include "fixstream.h"

#include <stdlib.h>
#include <string.h>

#include "fix.h"
#include "frame.h"
#include "xalloc.h"

#define FIXSTREAM_MARKS 64

/* Where skipped bytes go: before the first message of a capture they are
 * the middle of a stream we joined late; after a hole, the rest of a
 * message whose start was lost; otherwise they are bad data. */
enum fixstream_sync { SYNC_START, SYNC_HOLE, SYNC_OK, SYNC_SKIPPING };

struct fixstream_mark {
	uint32_t seq;		/* first byte this stamp covers */
	uint32_t wire;
	int64_t ts;
};

struct fixstream_held {
	uint32_t seq, len, off;	/* off: into the arena */
	uint32_t wire;
	int64_t ts;
};

struct fixstream {
	bool tcp;
	bool started;
	enum fixstream_sync sync;
	uint32_t next;		/* next sequence number expected */
	int64_t hold_ns;
	int64_t last_ts;
	/* The pending partial message: bytes [next - len, next). */
	char *buf;
	uint32_t len, cap;
	struct fixstream_mark marks[FIXSTREAM_MARKS];
	unsigned nmarks;
	/* Segments after a hole. */
	struct fixstream_held held[FIXSTREAM_HOLD_SEGS];
	unsigned nheld;
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
	free(s);
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
		     uint32_t wire)
{
	if (s->nmarks == FIXSTREAM_MARKS) {
		/* A message in more than 64 segments: the first mark (its
		 * first byte) and the newest stay exact; drop the second. */
		memmove(&s->marks[1], &s->marks[2],
			(FIXSTREAM_MARKS - 2) * sizeof(s->marks[0]));
		s->nmarks--;
	}
	s->marks[s->nmarks++] = (struct fixstream_mark){ seq, wire, ts };
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
		   int64_t ts, uint32_t wire)
{
	uint32_t seq = s->next, used, base;

	s->st.bytes += n;
	s->next += n;
	if (!s->len) {
		/* Fast path: parse in place; keep only an unfinished tail. */
		s->nmarks = 0;
		add_mark(s, seq, ts, wire);
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
	add_mark(s, seq, ts, wire);
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

/* Take in held segments that now join the stream. */
static void drain(struct fixstream *s)
{
	bool again = true;

	while (again && s->nheld) {
		again = false;
		for (unsigned i = 0; i < s->nheld; i++) {
			struct fixstream_held h = s->held[i];
			int32_t d = seq_diff(h.seq, s->next);

			if (d > 0)
				continue;
			s->held[i] = s->held[--s->nheld];
			if (d + (int64_t)h.len > 0)
				append(s, s->arena + h.off + (uint32_t)-d,
				       h.len - (uint32_t)-d, h.ts, h.wire);
			else
				s->st.retransmits++;
			again = true;
			break;
		}
	}
	if (!s->nheld)
		s->arena_used = 0;
}

/* Give up the hole before the earliest held segment. */
static void give_up(struct fixstream *s)
{
	unsigned first = 0;

	if (!s->nheld)
		return;
	for (unsigned i = 1; i < s->nheld; i++)
		if (seq_diff(s->held[i].seq, s->held[first].seq) < 0)
			first = i;
	s->st.lost_bytes += (uint32_t)seq_diff(s->held[first].seq, s->next);
	/* The message in progress lost its middle: drop it and resume at
	 * the next message start. */
	s->st.lost_bytes += s->len;
	s->len = 0;
	s->nmarks = 0;
	s->next = s->held[first].seq;
	s->sync = SYNC_HOLE;
	drain(s);
}

static void hold(struct fixstream *s, uint32_t seq, const uint8_t *data,
		 uint32_t n, int64_t ts, uint32_t wire)
{
	for (unsigned i = 0; i < s->nheld; i++) {
		if (s->held[i].seq == seq && s->held[i].len >= n) {
			s->st.retransmits++;
			return;
		}
	}
	if (n > FIXSTREAM_HOLD_BYTES) {
		/* Cannot be held: the hole before it is lost for sure. */
		s->st.lost_bytes += (uint32_t)seq_diff(seq, s->next);
		s->st.lost_bytes += s->len;
		s->len = 0;
		s->nmarks = 0;
		s->next = seq;
		s->sync = SYNC_HOLE;
		append(s, data, n, ts, wire);
		drain(s);
		return;
	}
	while (s->nheld && (s->nheld == FIXSTREAM_HOLD_SEGS ||
			    s->arena_used + n > FIXSTREAM_HOLD_BYTES))
		give_up(s);
	if (seq_diff(seq, s->next) <= 0) {
		/* Giving up moved the stream to (or past) this segment. */
		int32_t d = seq_diff(seq, s->next);

		if (d + (int64_t)n > 0)
			append(s, data + (uint32_t)-d, n - (uint32_t)-d, ts,
			       wire);
		drain(s);
		return;
	}
	if (!s->arena)
		s->arena = xmalloc(FIXSTREAM_HOLD_BYTES);
	memcpy(s->arena + s->arena_used, data, n);
	s->held[s->nheld++] = (struct fixstream_held){
		.seq = seq, .len = n, .off = s->arena_used, .wire = wire,
		.ts = ts,
	};
	s->arena_used += n;
	s->st.out_of_order++;
}

void fixstream_segment(struct fixstream *s, uint32_t seq, uint8_t tcp_flags,
		       const uint8_t *payload, uint32_t caplen,
		       uint32_t wire_payload, int64_t ts, uint32_t wire_len)
{
	uint32_t n = caplen < wire_payload ? caplen : wire_payload;
	int32_t d;

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
		add_mark(s, 0, ts, wire_len);
		used = parse(s, (const char *)payload, n, 0);
		/* Each datagram stands alone: no tail carries over. */
		if (used < n && caplen >= wire_payload)
			s->st.truncated++;
		return;
	}
	if (tcp_flags & FRAME_TCP_SYN) {
		/* A new connection on this flow: start clean at ISN + 1. */
		s->started = true;
		s->next = seq + 1;
		s->len = 0;
		s->nmarks = 0;
		s->nheld = 0;
		s->arena_used = 0;
		s->sync = SYNC_OK;
		seq++;
	}
	if (!n)
		return;
	s->st.segments++;
	if (!s->started) {
		s->started = true;
		s->next = seq;
	}
	d = seq_diff(seq, s->next);
	if (d + (int64_t)n <= 0) {
		s->st.retransmits++;
		return;
	}
	if (d < 0) {
		/* Partly seen before: only the new bytes count. */
		s->st.retransmits++;
		payload += (uint32_t)-d;
		n -= (uint32_t)-d;
		d = 0;
	}
	if (d > 0) {
		hold(s, seq, payload, n, ts, wire_len);
	} else {
		append(s, payload, n, ts, wire_len);
		drain(s);
	}
	/* A hole open longer than the hold time will not fill. */
	while (s->nheld) {
		int64_t oldest = s->held[0].ts;

		for (unsigned i = 1; i < s->nheld; i++)
			if (s->held[i].ts < oldest)
				oldest = s->held[i].ts;
		if (s->last_ts - oldest <= s->hold_ns)
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
