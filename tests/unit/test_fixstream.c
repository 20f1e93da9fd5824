/* test_fixstream.c — a stream of FIX messages cut into segments at random
 * boundaries (fixed seed) comes back as the same messages, once each, in
 * order, with the sequence number of their first byte (across the 2^32
 * wrap) and the stamps of the segments that first carried their first and
 * last bytes: in order, shuffled, with retransmissions; and what cannot be
 * recovered (a hole, a capture joined midway, a bad checksum, junk, a
 * snaplen cut) is counted where fixstream.h says and costs only the
 * messages it touches. */
#include <stdbool.h>

#include "fix/fix.h"
#include "fix/fixstream.h"
#include "files/frame.h"
#include "unit.h"

#define MAXMSG 8000
#define MAXBYTES (8u << 20)
#define MAXITEMS 40000
#define WIRE_EXTRA 66		/* Ethernet + IPv4 + TCP with options */
#define ISN 0xfffff000u		/* the sequence numbers wrap after 4 KiB */
#define NONE INT64_MIN

static uint32_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* The stream: messages k = 0..n-1 at off[k], len[k]; junk between some. */
struct stream {
	uint8_t b[MAXBYTES];
	uint32_t len;
	uint32_t off[MAXMSG], mlen[MAXMSG];
	int n;
	uint32_t junk_bytes;
	unsigned junk_runs;
};

static struct stream st;

/* No tag ends in 8 and no value holds '=', so "8=" only starts messages:
 * resynchronising after a hole skips exactly the rest of a message. */
static uint32_t make_msg(int k, char *out, size_t cap, bool big)
{
	static char filler[6000];
	struct fix_writer w;
	const char *m;
	size_t len, nf = big ? 5000 : rnd() % 400;

	for (size_t i = 0; i < nf; i++)
		filler[i] = (char)('a' + (k + i) % 26);
	fix_begin(&w, out, cap, "FIX.4.4", k % 3 ? "D" : "8");
	fix_add_str(&w, 49, "CLIENT");
	fix_add_str(&w, 56, "VENUE");
	fix_add_int(&w, 34, k + 1);
	fix_add_int(&w, 11, 1000000 + k * 7);
	fix_add_str(&w, 55, "EURUSD");
	fix_add_fixed(&w, 44, 108765 + k, 5);
	fix_add(&w, 1, filler, nf);
	m = fix_end(&w, &len);
	ck_assert_ptr_nonnull(m);
	if (m != out)
		memmove(out, m, len);
	return (uint32_t)len;
}

/* n messages; junk_every > 0: junk before every junk_every-th; bad >= 0:
 * that message's CheckSum is wrong. */
static void build(int n, int junk_every, int bad)
{
	static const char junk[] = "JUNK8-junk\r\n";

	ck_assert_int_le(n, MAXMSG);
	memset(&st, 0, sizeof(st));
	for (int k = 0; k < n; k++) {
		if (junk_every && k && k % junk_every == 0) {
			memcpy(st.b + st.len, junk, sizeof(junk) - 1);
			st.len += sizeof(junk) - 1;
			st.junk_bytes += sizeof(junk) - 1;
			st.junk_runs++;
		}
		ck_assert_uint_lt(st.len + 8000, MAXBYTES);
		st.off[k] = st.len;
		st.mlen[k] = make_msg(k, (char *)st.b + st.len, 8000,
				      k % 37 == 5);
		if (k == bad) {
			/* "10=NNN\x01": change the last digit. */
			uint8_t *d = st.b + st.len + st.mlen[k] - 2;

			*d = *d == '9' ? '0' : (uint8_t)(*d + 1);
		}
		st.len += st.mlen[k];
	}
	st.n = n;
}

/* One segment as captured: bytes [off, off + len) of the stream, of which
 * caplen were captured. */
struct item {
	uint32_t off, len, caplen;
	int64_t ts;
};

static struct item items[MAXITEMS];

/* Cut [from, st.len) into segments of 1..maxseg bytes (a few tiny). */
static int cut(uint32_t from, uint32_t maxseg)
{
	int n = 0;

	for (uint32_t off = from; off < st.len; n++) {
		uint32_t len = rnd() % 10 == 0 ? 1 + rnd() % 3 : 1 + rnd() % maxseg;

		if (len > st.len - off)
			len = st.len - off;
		ck_assert_int_lt(n, MAXITEMS);
		items[n] = (struct item){ .off = off, .len = len, .caplen = len };
		off += len;
	}
	return n;
}

/* Stamps in arrival order, 1 µs apart. */
static void stamp(struct item *it, int n)
{
	for (int i = 0; i < n; i++)
		it[i].ts = 1000000 + 1000LL * i;
}

static uint32_t wire_of(int64_t ts)
{
	return (uint32_t)(ts / 1000) + WIRE_EXTRA;
}

/* The ref a segment is fed with: its stamp's, so that it can be checked. */
static uint64_t ref_of(int64_t ts)
{
	return (uint64_t)ts * 3 + 7;
}

/* What came out. */
struct got {
	int k;
	uint32_t seq;
	int64_t ts_first, ts_last;
	uint32_t wire_first, wire_last;
	uint64_t ref_first;
	bool after_finish;
};

static struct got got[MAXMSG * 2];
static int ngot;
static bool finishing;
/* For each byte of the stream, the stamp of the first segment to carry
 * it in the capture (NONE: none did). */
static int64_t first_ts[MAXBYTES];

static void on_msg(void *arg, const struct fixstream_msg *m)
{
	const struct stream *s = arg;
	int64_t k;

	ck_assert_int_eq(fix_get_int(m->fix, 34, &k), 0);
	k--;
	ck_assert(k >= 0 && k < s->n);
	ck_assert_uint_eq(m->fix->len, s->mlen[k]);
	ck_assert(!memcmp(m->fix->buf, s->b + s->off[k], s->mlen[k]));
	ck_assert_int_lt(ngot, MAXMSG * 2);
	got[ngot++] = (struct got){
		.k = (int)k, .seq = m->seq, .ts_first = m->ts_first, .ref_first = m->ref_first,
		.ts_last = m->ts_last, .wire_first = m->wire_first,
		.wire_last = m->wire_last, .after_finish = finishing,
	};
}

static struct fix_msg scratch;

static struct fixstream *start(bool tcp, int64_t hold_ns)
{
	struct fixstream *fs = fixstream_create(tcp, &scratch, hold_ns, on_msg,
						&st);

	ck_assert_ptr_nonnull(fs);
	ngot = 0;
	finishing = false;
	for (uint32_t i = 0; i < MAXBYTES; i++)
		first_ts[i] = NONE;
	return fs;
}

static void syn(struct fixstream *fs)
{
	fixstream_segment(fs, ISN, FRAME_TCP_SYN, NULL, 0, 0, 999000, 74, 0);
}

/* Feed it[0..n) in that order; returns how many carried bytes an earlier
 * one had carried (the retransmissions fixstream must count). */
static unsigned feed(struct fixstream *fs, uint32_t seq0,
		     const struct item *it, int n)
{
	unsigned dups = 0;

	for (int i = 0; i < n; i++) {
		bool dup = false;

		for (uint32_t b = it[i].off; b < it[i].off + it[i].caplen; b++) {
			if (first_ts[b] == NONE)
				first_ts[b] = it[i].ts;
			else
				dup = true;
		}
		dups += dup;
		fixstream_segment(fs, seq0 + it[i].off, FRAME_TCP_ACK,
				  st.b + it[i].off, it[i].caplen, it[i].len,
				  it[i].ts, wire_of(it[i].ts), ref_of(it[i].ts));
	}
	return dups;
}

static void finish(struct fixstream *fs)
{
	finishing = true;
	fixstream_finish(fs);
}

/* Every message k not in lost[] came out, once, in order, with its first
 * byte's sequence number and the stamps of the first segments to carry
 * its first and last bytes. */
static void expect_msgs(uint32_t seq0, const bool *lost)
{
	int j = 0;

	for (int k = 0; k < st.n; k++) {
		const struct got *g;
		uint32_t a = st.off[k], z = st.off[k] + st.mlen[k] - 1;

		if (lost && lost[k])
			continue;
		ck_assert_msg(j < ngot, "message %d missing (%d out)", k, ngot);
		g = &got[j++];
		ck_assert_int_eq(g->k, k);
		ck_assert_uint_eq(g->seq, seq0 + a);
		ck_assert_int_ne(first_ts[a], NONE);
		ck_assert_int_eq(g->ts_first, first_ts[a]);
		ck_assert_int_eq(g->ts_last, first_ts[z]);
		ck_assert_uint_eq(g->wire_first, wire_of(first_ts[a]));
		ck_assert_uint_eq(g->ref_first, ref_of(first_ts[a]));
		ck_assert_uint_eq(g->wire_last, wire_of(first_ts[z]));
	}
	ck_assert_int_eq(j, ngot);
}

static void expect_clean(const struct fixstream_stats *s)
{
	ck_assert_uint_eq(s->lost_bytes, 0);
	ck_assert_uint_eq(s->skipped_bytes, 0);
	ck_assert_uint_eq(s->midstream_bytes, 0);
	ck_assert_uint_eq(s->bad_checksum, 0);
	ck_assert_uint_eq(s->bad_framing, 0);
	ck_assert_uint_eq(s->truncated, 0);
}

START_TEST(in_order)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	int n;

	rnd_state = 1;
	build(300, 0, -1);
	ck_assert_uint_gt(st.len, 0x1000);	/* past the wrap */
	n = cut(0, 300);
	stamp(items, n);
	fs = start(true, 1000000000);
	syn(fs);
	ck_assert_uint_eq(feed(fs, ISN + 1, items, n), 0);
	ck_assert_int_eq(ngot, 300);		/* all out before the end */
	finish(fs);
	expect_msgs(ISN + 1, NULL);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->segments, (unsigned)n);
	ck_assert_uint_eq(s->bytes, st.len);
	ck_assert_uint_eq(s->messages, 300);
	ck_assert_uint_eq(s->retransmits, 0);
	ck_assert_uint_eq(s->out_of_order, 0);
	expect_clean(s);
	ck_assert_int_eq(fixstream_last_ts(fs), items[n - 1].ts);
	fixstream_destroy(fs);
}
END_TEST

/* Item i moves to somewhere in [i, i + window): sorted by i + random. */
static void shuffle(struct item *it, int n, unsigned window)
{
	static uint32_t key[MAXITEMS];

	for (int i = 0; i < n; i++)
		key[i] = (uint32_t)i + rnd() % window;
	for (int i = 1; i < n; i++) {	/* insertion sort: stable */
		struct item x = it[i];
		uint32_t kx = key[i];
		int j = i;

		for (; j > 0 && key[j - 1] > kx; j--) {
			it[j] = it[j - 1];
			key[j] = key[j - 1];
		}
		it[j] = x;
		key[j] = kx;
	}
}

static void run_shuffled(bool restamp)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	int n;

	rnd_state = restamp ? 2 : 3;
	build(300, 0, -1);
	n = cut(0, 300);
	/* Stamped before shuffling: each segment keeps its stamp, as when
	 * two capture queues deliver frames out of order; or after: the
	 * network reordered them before the tap. */
	stamp(items, n);
	shuffle(items, n, 6);
	if (restamp)
		stamp(items, n);
	fs = start(true, 1000000000);
	syn(fs);
	ck_assert_uint_eq(feed(fs, ISN + 1, items, n), 0);
	ck_assert_int_eq(ngot, 300);
	finish(fs);
	expect_msgs(ISN + 1, NULL);
	s = fixstream_stats(fs);
	ck_assert_uint_gt(s->out_of_order, 0);
	ck_assert_uint_eq(s->retransmits, 0);
	ck_assert_uint_eq(s->bytes, st.len);
	expect_clean(s);
	fixstream_destroy(fs);
}

START_TEST(shuffled_keep_stamps)
{
	run_shuffled(false);
}
END_TEST

START_TEST(shuffled_restamped)
{
	run_shuffled(true);
}
END_TEST

/* After some segments, a later copy of a stretch already sent (whole
 * segments, parts, several coalesced), as TCP resends. */
static int add_retransmits(struct item *out, const struct item *in, int n,
			   int every)
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		ck_assert_int_lt(m + 2, MAXITEMS);
		out[m++] = in[i];
		if (rnd() % every)
			continue;
		int j = i - (int)(rnd() % 6);
		int k = j + (int)(rnd() % 4);

		if (j < 0)
			j = 0;
		if (k > i)
			k = i;
		/* Shuffled, in[j..k] may not be contiguous: the stretch
		 * from the first byte to the last, new bytes too. */
		uint32_t a = in[j].off, z = in[j].off + in[j].len;
		for (int x = j + 1; x <= k; x++) {
			if (in[x].off < a)
				a = in[x].off;
			if (in[x].off + in[x].len > z)
				z = in[x].off + in[x].len;
		}
		/* Sometimes a piece only, misaligned with the originals. */
		if (rnd() % 3 == 0 && z - a > 2) {
			a += rnd() % ((z - a) / 2);
			z -= rnd() % ((z - a) / 2);
		}
		out[m++] = (struct item){ .off = a, .len = z - a, .caplen = z - a };
	}
	return m;
}

static struct item items2[MAXITEMS];

static void run_retransmits(unsigned window)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	unsigned dups;
	int n, m;

	rnd_state = 4 + window;
	build(300, 0, -1);
	n = cut(0, 300);
	if (window > 1)
		shuffle(items, n, window);
	m = add_retransmits(items2, items, n, 3);
	stamp(items2, m);
	fs = start(true, 1000000000);
	syn(fs);
	dups = feed(fs, ISN + 1, items2, m);
	ck_assert_uint_gt(dups, 50);
	ck_assert_int_eq(ngot, 300);
	finish(fs);
	expect_msgs(ISN + 1, NULL);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->retransmits, dups);
	ck_assert_uint_eq(s->segments, (unsigned)m);
	ck_assert_uint_eq(s->bytes, st.len);
	expect_clean(s);
	fixstream_destroy(fs);
}

START_TEST(retransmits_in_order)
{
	run_retransmits(1);
}
END_TEST

/* Retransmissions that overlap segments still held for a hole: where two
 * held ones overlap, the one that came first gives the stamp. */
START_TEST(retransmits_shuffled)
{
	run_retransmits(8);
}
END_TEST

/* A hand-made case: a segment held after a hole, then a resend of the
 * hole and that segment together: the held one's stamp stays. */
START_TEST(retransmit_over_held)
{
	struct fixstream *fs;
	struct item it[3];

	rnd_state = 5;
	build(3, 0, -1);
	uint32_t cut1 = st.off[1] + 10, cut2 = st.off[2] + 5;
	it[0] = (struct item){ 0, cut1, cut1, 1000 };
	it[1] = (struct item){ cut2, st.len - cut2, st.len - cut2, 2000 };
	it[2] = (struct item){ cut1, st.len - cut1, st.len - cut1, 3000 };
	fs = start(true, 1000000000);
	syn(fs);
	ck_assert_uint_eq(feed(fs, ISN + 1, it, 3), 1);
	expect_msgs(ISN + 1, NULL);
	ck_assert_int_eq(got[2].ts_first, 3000);
	ck_assert_int_eq(got[2].ts_last, 2000);
	ck_assert_uint_eq(fixstream_stats(fs)->retransmits, 1);
	ck_assert_uint_eq(fixstream_stats(fs)->out_of_order, 1);
	fixstream_destroy(fs);
}
END_TEST

/* Messages touching bytes [a, z) of the stream. */
static uint64_t mark_lost(bool *lost, uint32_t a, uint32_t z)
{
	uint64_t bytes = 0;

	for (int k = 0; k < st.n; k++) {
		lost[k] = st.off[k] < z && st.off[k] + st.mlen[k] > a;
		if (lost[k])
			bytes += st.mlen[k];
	}
	return bytes;
}

/* Segment h is never captured. hold_ns short: the hole is given up as
 * soon as a held segment is older than that; long: at the end. */
/* Holes given up, as fixstream_on_lost() reports them. */
static struct { int64_t lo, hi; uint64_t bytes; } holes[8];
static int nholes;

static void on_lost(void *arg, int64_t lo, int64_t hi, uint64_t bytes)
{
	(void)arg;
	ck_assert_int_lt(nholes, 8);
	holes[nholes].lo = lo;
	holes[nholes].hi = hi;
	holes[nholes++].bytes = bytes;
}

static void run_hole(bool short_hold)
{
	int64_t lo;
	uint32_t cut_first = 0;
	bool cuts = false;
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint64_t lost_bytes;
	int n, h, before = 0;

	rnd_state = short_hold ? 6 : 7;
	build(60, 0, -1);
	n = cut(0, 300);
	stamp(items, n);
	h = n - 30;
	lost_bytes = mark_lost(lost, items[h].off, items[h].off + items[h].len);
	ck_assert_uint_gt(lost_bytes, 0);
	for (int k = 0; k < st.n && st.off[k] + st.mlen[k] <= items[h].off; k++)
		before++;
	/* The held segments after the hole stay under the limits. */
	ck_assert_int_lt(n - h - 1, FIXSTREAM_HOLD_SEGS);
	/* The message the hole cuts, if any: where it starts. */
	for (int k = 0; k < st.n; k++)
		if (st.off[k] < items[h].off &&
		    st.off[k] + st.mlen[k] > items[h].off) {
			cut_first = st.off[k];
			cuts = true;
		}
	fs = start(true, short_hold ? 5000 : 1000000000);
	fixstream_on_lost(fs, on_lost);
	nholes = 0;
	syn(fs);
	feed(fs, ISN + 1, items, h);
	ck_assert(!fixstream_hole(fs, &lo));
	feed(fs, ISN + 1, items + h + 1, n - h - 1);
	s = fixstream_stats(fs);
	if (short_hold) {
		ck_assert_int_gt(ngot, before + 5);
		ck_assert(!fixstream_hole(fs, &lo));
	} else {
		ck_assert_int_eq(ngot, before);
		ck_assert_uint_eq(s->lost_bytes, 0);
		/* Open: every message first stamped before lo is out. */
		ck_assert(fixstream_hole(fs, &lo));
		ck_assert_int_eq(nholes, 0);
	}
	finish(fs);
	ck_assert(!fixstream_hole(fs, &lo));
	/* Given up once: the span its bytes were on the wire in, from the
	 * cut message's first byte (or the last bytes before the hole) to
	 * the first byte after it. */
	ck_assert_int_eq(nholes, 1);
	/* Its bytes, and those of the message it cut before it (the rest
	 * of that message is skipped afterwards: lost_bytes counts it). */
	ck_assert_uint_eq(holes[0].bytes, items[h].len +
			  (cuts ? items[h].off - cut_first : 0));
	ck_assert_int_eq(holes[0].hi, items[h + 1].ts);
	ck_assert_int_lt(holes[0].lo, items[h].ts);
	for (int i = 0; i < h; i++)
		if (cuts ? items[i].off <= cut_first &&
			  items[i].off + items[i].len > cut_first : i == h - 1)
			ck_assert_int_eq(holes[0].lo, items[i].ts);
	if (!short_hold)
		ck_assert_int_eq(holes[0].lo, lo);
	expect_msgs(ISN + 1, lost);
	ck_assert_uint_eq(s->lost_bytes, lost_bytes);
	ck_assert_uint_gt(s->out_of_order, 0);
	ck_assert_uint_eq(s->messages, (unsigned)ngot);
	ck_assert_uint_eq(s->skipped_bytes, 0);
	ck_assert_uint_eq(s->midstream_bytes, 0);
	ck_assert_uint_eq(s->bad_framing, 0);
	ck_assert_uint_eq(s->truncated, 0);
	fixstream_destroy(fs);
}

START_TEST(hole_hold_time)
{
	run_hole(true);
}
END_TEST

START_TEST(hole_at_finish)
{
	run_hole(false);
}
END_TEST

/* A hole that never fills with a long hold time: given up when the held
 * segments (64) or bytes (256 KiB) run out, before the end. */
static int run_hole_overflow(uint32_t maxseg, int nmsg)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint64_t lost_bytes;
	int n, h = 3;

	rnd_state = 8;
	build(nmsg, 0, -1);
	n = cut(0, maxseg);
	stamp(items, n);
	lost_bytes = mark_lost(lost, items[h].off, items[h].off + items[h].len);
	fs = start(true, INT64_MAX);
	syn(fs);
	feed(fs, ISN + 1, items, h);
	feed(fs, ISN + 1, items + h + 1, n - h - 1);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->lost_bytes, lost_bytes);
	ck_assert(got[ngot - 1].k > nmsg / 2);
	finish(fs);
	expect_msgs(ISN + 1, lost);
	fixstream_destroy(fs);
	return n - h - 1;	/* segments after the hole */
}

START_TEST(hole_too_many_segments)
{
	/* Too few bytes to fill the arena. */
	ck_assert_int_ge(run_hole_overflow(100, 1000), FIXSTREAM_HOLD_SEGS);
	ck_assert_uint_lt(st.len, FIXSTREAM_HOLD_BYTES);
}
END_TEST

START_TEST(hole_too_many_bytes)
{
	/* Segments of 20 KB on average: too few to reach the segment limit. */
	ck_assert_int_lt(run_hole_overflow(40000, 7000), FIXSTREAM_HOLD_SEGS);
	ck_assert_uint_gt(st.len, 2 * FIXSTREAM_HOLD_BYTES);
}
END_TEST

/* The capture starts in the middle of a message, without the SYN. */
START_TEST(midstream)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint32_t from, seq0 = 0x7ffffff0u;
	int n, k1;

	rnd_state = 9;
	build(100, 0, -1);
	from = st.off[4] + st.mlen[4] / 2;
	n = cut(from, 200);
	stamp(items, n);
	for (int k = 0; k < st.n; k++)
		lost[k] = k <= 4;
	k1 = 5;
	fs = start(true, 1000000000);
	/* seq0 + from is the first sequence number seen. */
	feed(fs, seq0, items, n);
	finish(fs);
	expect_msgs(seq0, lost);
	ck_assert_int_eq(got[0].k, k1);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->midstream_bytes, st.off[k1] - from);
	ck_assert_uint_eq(s->messages, (unsigned)(100 - k1));
	ck_assert_uint_eq(s->lost_bytes, 0);
	ck_assert_uint_eq(s->skipped_bytes, 0);
	ck_assert_uint_eq(s->bad_framing, 0);
	fixstream_destroy(fs);
}
END_TEST

START_TEST(bad_checksum)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	int n;

	rnd_state = 10;
	build(50, 0, 20);
	n = cut(0, 300);
	stamp(items, n);
	for (int k = 0; k < st.n; k++)
		lost[k] = k == 20;
	fs = start(true, 1000000000);
	syn(fs);
	feed(fs, ISN + 1, items, n);
	finish(fs);
	expect_msgs(ISN + 1, lost);
	ck_assert_int_eq(got[20].k, 21);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->bad_checksum, 1);
	ck_assert_uint_eq(s->messages, 49);
	ck_assert_uint_eq(s->bad_framing, 0);
	ck_assert_uint_eq(s->skipped_bytes, 0);
	ck_assert_uint_eq(s->lost_bytes, 0);
	fixstream_destroy(fs);
}
END_TEST

START_TEST(junk_between)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	int n;

	rnd_state = 11;
	build(100, 9, -1);
	ck_assert_uint_eq(st.junk_runs, 11);
	n = cut(0, 300);
	stamp(items, n);
	fs = start(true, 1000000000);
	syn(fs);
	feed(fs, ISN + 1, items, n);
	finish(fs);
	expect_msgs(ISN + 1, NULL);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->skipped_bytes, st.junk_bytes);
	ck_assert_uint_eq(s->bad_framing, st.junk_runs);
	ck_assert_uint_eq(s->messages, 100);
	ck_assert_uint_eq(s->midstream_bytes, 0);
	ck_assert_uint_eq(s->lost_bytes, 0);
	fixstream_destroy(fs);
}
END_TEST

/* A segment cut by the capture's snaplen: the bytes cut off are lost at
 * once (with the messages they touch), not after the hold time. */
START_TEST(tcp_snaplen)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint64_t lost_bytes;
	int n, h;

	rnd_state = 12;
	build(60, 0, -1);
	n = cut(0, 300);
	stamp(items, n);
	for (h = n / 2; items[h].len < 20; h++)
		;
	items[h].caplen = items[h].len / 2;
	lost_bytes = mark_lost(lost, items[h].off + items[h].caplen,
			       items[h].off + items[h].len);
	fs = start(true, INT64_MAX);
	syn(fs);
	feed(fs, ISN + 1, items, n);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->truncated, 1);
	ck_assert_uint_eq(s->lost_bytes, lost_bytes);
	ck_assert_uint_eq(s->out_of_order, 0);
	ck_assert(!got[ngot - 1].after_finish);
	finish(fs);
	expect_msgs(ISN + 1, lost);
	ck_assert_uint_eq(s->truncated, 1);
	fixstream_destroy(fs);
}
END_TEST

/* A message the capture ends in the middle of is truncated. */
START_TEST(tcp_ends_midway)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	int n;

	rnd_state = 13;
	build(10, 0, -1);
	st.len = st.off[9] + st.mlen[9] / 2;
	n = cut(0, 100);
	stamp(items, n);
	for (int k = 0; k < st.n; k++)
		lost[k] = k == 9;
	fs = start(true, 1000000000);
	syn(fs);
	feed(fs, ISN + 1, items, n);
	ck_assert_uint_eq(fixstream_stats(fs)->truncated, 0);
	finish(fs);
	ck_assert_uint_eq(fixstream_stats(fs)->truncated, 1);
	expect_msgs(ISN + 1, lost);
	fixstream_destroy(fs);
}
END_TEST

/* The same SYN again changes nothing; a new ISN is a new connection. */
START_TEST(syn_again)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint32_t isn2 = 12345;

	rnd_state = 14;
	build(4, 0, -1);
	struct item a = { 0, st.off[2], st.off[2], 5000 };
	struct item b = { st.off[2], st.off[3] - st.off[2] + 10, 0, 6000 };
	b.caplen = b.len;
	fs = start(true, 1000000000);
	syn(fs);
	feed(fs, ISN + 1, &a, 1);
	syn(fs);		/* a retransmitted SYN */
	feed(fs, ISN + 1, &b, 1);
	ck_assert_int_eq(ngot, 3);
	/* A new connection: the old one's pending message is cut short;
	 * the new one starts over at message 0. */
	fixstream_segment(fs, isn2, FRAME_TCP_SYN, NULL, 0, 0, 7000, 74, 0);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->truncated, 1);
	struct item c = { 0, st.off[1], st.off[1], 8000 };
	for (uint32_t i = 0; i < st.len; i++)
		first_ts[i] = NONE;
	ngot = 0;
	feed(fs, isn2 + 1, &c, 1);
	ck_assert_int_eq(ngot, 1);
	ck_assert_int_eq(got[0].k, 0);
	ck_assert_uint_eq(got[0].seq, isn2 + 1);
	ck_assert_int_eq(got[0].ts_first, 8000);
	ck_assert_uint_eq(s->retransmits, 0);
	fixstream_destroy(fs);
}
END_TEST

/* The sequence numbers jump by more than any window without a SYN: a new
 * connection whose SYN the capture missed is joined midway, not taken for
 * retransmissions (a jump back) or a hole of gigabytes (forward). */
static void run_jump(uint32_t jump)
{
	static bool lost[MAXMSG];
	struct fixstream *fs;
	const struct fixstream_stats *s;
	uint32_t seq0b = ISN + 1 + jump, from;
	int n;

	rnd_state = 16;
	build(20, 0, -1);
	n = cut(0, 100);
	stamp(items, n);
	int h = 0;
	while (items[h].off + items[h].len <= st.off[5] + 10)
		h++;
	fs = start(true, 1000000000);
	syn(fs);
	feed(fs, ISN + 1, items, h + 1);	/* to inside message 5 */
	for (int k = 0; k < st.n; k++)
		lost[k] = k >= 5;
	expect_msgs(ISN + 1, lost);
	/* The new connection, from the middle of message 2. */
	from = st.off[2] + st.mlen[2] / 2;
	n = cut(from, 100);
	stamp(items, n);
	for (int i = 0; i < n; i++)
		items[i].ts += 1000000000;
	for (uint32_t i = 0; i < st.len; i++)
		first_ts[i] = NONE;
	ngot = 0;
	feed(fs, seq0b, items, n);
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->truncated, 1);	/* the old message 5 */
	ck_assert_uint_eq(s->midstream_bytes, st.off[3] - from);
	ck_assert_uint_eq(s->retransmits, 0);
	ck_assert_uint_eq(s->lost_bytes, 0);
	ck_assert_uint_eq(s->out_of_order, 0);
	for (int k = 0; k < st.n; k++)
		lost[k] = k < 3;
	expect_msgs(seq0b, lost);
	fixstream_destroy(fs);
}

START_TEST(seq_jump_back)
{
	run_jump(0x90000000u);
}
END_TEST

START_TEST(seq_jump_forward)
{
	run_jump(0x50000000u);
}
END_TEST

/* UDP: each datagram on its own, two messages each. */
START_TEST(udp)
{
	struct fixstream *fs;
	const struct fixstream_stats *s;
	int64_t ts = 1000;

	rnd_state = 15;
	build(40, 0, 31);	/* message 31's checksum is bad */
	fs = start(false, 0);
	for (int d = 0; d < 20; d++, ts += 1000) {
		uint32_t a = st.off[2 * d];
		uint32_t len = st.off[2 * d + 1] + st.mlen[2 * d + 1] - a;

		fixstream_segment(fs, 0, 0, st.b + a, len, len, ts, len + 42, ref_of(ts));
	}
	ck_assert_int_eq(ngot, 39);
	for (int i = 0; i < ngot; i++) {
		const struct got *g = &got[i];
		int k = i < 31 ? i : i + 1;
		int d = k / 2;

		ck_assert_int_eq(g->k, k);
		ck_assert_uint_eq(g->seq, st.off[k] - st.off[2 * d]);
		ck_assert_int_eq(g->ts_first, 1000 + 1000 * d);
		ck_assert_uint_eq(g->ref_first, ref_of(g->ts_first));
		ck_assert_int_eq(g->ts_last, g->ts_first);
		ck_assert_uint_eq(g->wire_first, st.off[2 * d + 1] +
				  st.mlen[2 * d + 1] - st.off[2 * d] + 42);
		ck_assert_uint_eq(g->wire_last, g->wire_first);
	}
	s = fixstream_stats(fs);
	ck_assert_uint_eq(s->messages, 39);
	ck_assert_uint_eq(s->bad_checksum, 1);
	ck_assert_uint_eq(s->segments, 20);
	ck_assert_uint_eq(s->truncated, 0);
	/* A datagram ending in the middle of its second message, and one
	 * cut by the snaplen there: the first message of each comes out. */
	ngot = 0;
	uint32_t half = st.off[1] + st.mlen[1] / 2;
	fixstream_segment(fs, 0, 0, st.b, half, half, ts, half + 42, 0);
	ck_assert_uint_eq(s->truncated, 1);
	uint32_t wire = st.off[1] + st.mlen[1];
	fixstream_segment(fs, 0, 0, st.b, half, wire, ts + 1, wire + 42, 0);
	ck_assert_uint_eq(s->truncated, 2);
	ck_assert_int_eq(ngot, 2);
	ck_assert_int_eq(got[0].k, 0);
	ck_assert_int_eq(got[1].k, 0);
	ck_assert_int_eq(got[1].ts_first, ts + 1);
	/* Nothing carries over from one datagram to the next: the rest of
	 * message 1 alone is not a message. */
	ngot = 0;
	fixstream_segment(fs, 0, 0, st.b + half, wire - half, wire - half,
			  ts + 2, 100, 0);
	finish(fs);
	ck_assert_int_eq(ngot, 0);
	ck_assert_uint_eq(s->messages, 41);
	ck_assert_uint_eq(s->bad_framing, 1);
	fixstream_destroy(fs);
}
END_TEST

static Suite *fixstream_suite(void)
{
	Suite *s = suite_create("fixstream");
	TCase *tc = tcase_create("fixstream");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, in_order);
	tcase_add_test(tc, shuffled_keep_stamps);
	tcase_add_test(tc, shuffled_restamped);
	tcase_add_test(tc, retransmits_in_order);
	tcase_add_test(tc, retransmits_shuffled);
	tcase_add_test(tc, retransmit_over_held);
	tcase_add_test(tc, hole_hold_time);
	tcase_add_test(tc, hole_at_finish);
	tcase_add_test(tc, hole_too_many_segments);
	tcase_add_test(tc, hole_too_many_bytes);
	tcase_add_test(tc, midstream);
	tcase_add_test(tc, bad_checksum);
	tcase_add_test(tc, junk_between);
	tcase_add_test(tc, tcp_snaplen);
	tcase_add_test(tc, tcp_ends_midway);
	tcase_add_test(tc, syn_again);
	tcase_add_test(tc, seq_jump_back);
	tcase_add_test(tc, seq_jump_forward);
	tcase_add_test(tc, udp);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(fixstream_suite)
