/* test_txmatch.c — keyed sender stamps find their captured frame: TCP by
 * the stamped byte, UDP by length and hash, in either order of arrival;
 * what never pairs is counted, and memory stays bounded. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "files/frame.h"
#include "live/txmatch.h"
#include "unit.h"

#define MS 1000000LL

struct seen {
	unsigned n;
	unsigned slot;
	uint64_t tag;
	int64_t ts;
	uint32_t seq;		/* TCP sequence of the paired frame */
	uint32_t caplen;
	uint8_t frame[2048];
};

static void on_match(void *arg, unsigned slot, uint64_t tag,
		     const uint8_t *frame, uint32_t caplen, uint32_t origlen,
		     const struct txsock_rec *r)
{
	struct seen *s = arg;
	struct frame_info fi;

	ck_assert_uint_ge(origlen, caplen);
	ck_assert_uint_le(caplen, sizeof(s->frame));
	ck_assert_int_eq(frame_parse(frame, caplen, FRAME_LINK_ETHERNET, &fi), 0);
	s->n++;
	s->slot = slot;
	s->tag = tag;
	s->ts = r->ts_ns;
	s->seq = fi.seq;
	s->caplen = caplen;
	memcpy(s->frame, frame, caplen);
}

static struct frame_flow flow(uint8_t proto, uint16_t sport)
{
	struct frame_flow f = { .family = AF_INET, .proto = proto,
				.sport = sport, .dport = 9001 };

	inet_pton(AF_INET, "198.18.0.1", f.src);
	inet_pton(AF_INET, "198.18.0.2", f.dst);
	return f;
}

static uint32_t frame(uint8_t *buf, const struct frame_flow *f, uint32_t seq,
		      const char *payload)
{
	int n = frame_build(buf, 2048, f, seq, 1, 0, payload, strlen(payload));

	ck_assert_int_gt(n, 0);
	return (uint32_t)n;
}

static struct txsock_rec stamp(const struct frame_flow *f, uint32_t seq,
			       int64_t ts)
{
	struct txsock_rec r = { .ts_ns = ts, .flags = TXSOCK_F_KEYED, .phc = -1 };

	r.key.flow = *f;
	r.key.seq = seq;
	return r;
}

static struct txmatch *make(struct seen *s, size_t arena)
{
	struct txmatch_config cfg = { .hold_ns = 100 * MS, .arena_bytes = arena,
				      .max_stamps = 8, .max_flows = 4,
				      .on_match = on_match, .arg = s };
	struct txmatch *m;

	ck_assert_int_eq(txmatch_create(&m, &cfg), 0);
	return m;
}

START_TEST(tcp_either_order)
{
	struct frame_flow f = flow(IPPROTO_TCP, 40000), other = flow(IPPROTO_TCP, 40001);
	struct seen s = { 0 };
	struct txmatch *m = make(&s, 0);
	struct txmatch_stats st;
	uint8_t buf[2048];
	uint32_t n;

	/* Frame first: bytes 1000..1009; the stamp names the last, 1009. */
	n = frame(buf, &f, 1000, "8=FIX.4.4|");
	txmatch_frame(m, 2, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	/* Another flow's frame with the same numbers is not it. */
	n = frame(buf, &other, 1000, "8=FIX.4.4|");
	txmatch_frame(m, 3, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	struct txsock_rec r = stamp(&f, 1009, 555);
	txmatch_stamp(m, &r, 2 * MS);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.slot, 2);
	ck_assert_uint_eq(s.tag, 0);	/* untagged */
	ck_assert_int_eq(s.ts, 555);
	ck_assert_uint_eq(s.seq, 1000);

	/* Stamp first (the sender was quicker than the capture). */
	r = stamp(&f, 1019, 777);
	txmatch_stamp(m, &r, 3 * MS);
	ck_assert_uint_eq(s.n, 1);
	n = frame(buf, &f, 1010, "35=D|11=1|");
	txmatch_frame_tagged(m, 2, FRAME_LINK_ETHERNET, buf, n, n, 4 * MS, 41);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.tag, 41);	/* the frame's, handed back */
	ck_assert_int_eq(s.ts, 777);
	ck_assert_uint_eq(s.seq, 1010);

	/* A stamp of a byte inside the frame pairs too (merged sends). */
	n = frame(buf, &f, 1020, "35=8|39=0|");
	txmatch_frame_tagged(m, 2, FRAME_LINK_ETHERNET, buf, n, n, 5 * MS, 42);
	r = stamp(&f, 1024, 888);
	txmatch_stamp(m, &r, 5 * MS);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.tag, 42);
	ck_assert_uint_eq(s.seq, 1020);
	/* A second stamp of the same frame is a duplicate, not a pair. */
	r = stamp(&f, 1029, 889);
	txmatch_stamp(m, &r, 5 * MS);
	ck_assert_uint_eq(s.n, 3);

	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.frames, 4);
	ck_assert_uint_eq(st.stamps, 4);
	ck_assert_uint_eq(st.matched, 3);
	ck_assert_uint_eq(st.duplicates, 1);
	ck_assert_uint_eq(st.unmatched, 0);
	txmatch_destroy(m);
}
END_TEST

START_TEST(tcp_wraps_and_retransmits)
{
	struct frame_flow f = flow(IPPROTO_TCP, 40000);
	struct seen s = { 0 };
	struct txmatch *m = make(&s, 0);
	struct txmatch_stats st;
	uint8_t buf[2048];
	uint32_t n;

	/* Sequence numbers wrap inside the frame: 0xfffffffc .. 3. */
	n = frame(buf, &f, 0xfffffffcu, "abcdefgh");
	txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	/* Its retransmission, later: the stamp goes to the newest copy. */
	txmatch_frame(m, 1, FRAME_LINK_ETHERNET, buf, n, n, 2 * MS);
	struct txsock_rec r = stamp(&f, 3, 10);
	txmatch_stamp(m, &r, 3 * MS);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.slot, 1);
	/* The byte after the frame is not in it. */
	r = stamp(&f, 4, 11);
	txmatch_stamp(m, &r, 3 * MS);
	ck_assert_uint_eq(s.n, 1);
	txmatch_expire(m, 1000 * MS);
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.duplicates, 0);
	ck_assert_uint_eq(st.unmatched, 1);
	txmatch_destroy(m);
}
END_TEST

START_TEST(udp_by_hash)
{
	struct frame_flow f = flow(IPPROTO_UDP, 5000);
	struct seen s = { 0 };
	struct txmatch *m = make(&s, 0);
	struct txmatch_stats st;
	uint8_t buf[2048];
	const char *p = "35=X|268=1|";
	uint32_t n;

	/* Two identical datagrams: two stamps, one each (newest first). */
	n = frame(buf, &f, 0, p);
	txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 2 * MS);
	struct txsock_rec r = { .ts_ns = 1, .flags = TXSOCK_F_KEYED, .phc = -1 };
	r.key.flow = f;
	r.key.len = (uint32_t)strlen(p);
	r.key.hash = txsock_hash(TXSOCK_HASH_INIT, p, strlen(p));
	txmatch_stamp(m, &r, 3 * MS);
	r.ts_ns = 2;
	txmatch_stamp(m, &r, 3 * MS);
	ck_assert_uint_eq(s.n, 2);
	/* A third finds none left and waits; another payload never pairs. */
	r.ts_ns = 3;
	txmatch_stamp(m, &r, 3 * MS);
	r.key.hash ^= 1;
	txmatch_stamp(m, &r, 3 * MS);
	ck_assert_uint_eq(s.n, 2);
	txmatch_expire(m, 50 * MS);
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.unmatched, 0);
	txmatch_expire(m, 200 * MS);
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.unmatched, 2);
	ck_assert_uint_eq(st.matched, 2);
	txmatch_destroy(m);
}
END_TEST

START_TEST(bounded)
{
	struct frame_flow f = flow(IPPROTO_TCP, 40000);
	struct seen s = { 0 };
	struct txmatch *m = make(&s, 4096);
	struct txmatch_stats st;
	uint8_t buf[2048];
	char payload[1001];
	uint32_t n, seq = 1;

	/* 4096 bytes hold three ~1 kB frames: the oldest are evicted as new
	 * ones come, and their stamps wait, then count as unmatched. */
	memset(payload, 'x', 1000);
	payload[1000] = 0;
	for (int i = 0; i < 20; i++, seq += 1000) {
		n = frame(buf, &f, seq, payload);
		txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	}
	struct txsock_rec r = stamp(&f, seq - 1, 1);	/* the newest */
	txmatch_stamp(m, &r, 1 * MS);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.seq, seq - 1000);
	ck_assert_mem_eq(s.frame, buf, n);	/* its bytes, not a neighbour's */
	r = stamp(&f, 1, 2);	/* the first: long gone */
	txmatch_stamp(m, &r, 1 * MS);
	ck_assert_uint_eq(s.n, 1);
	/* Stamps beyond max_stamps waiting are dropped and counted. */
	for (int i = 0; i < 10; i++) {
		r = stamp(&f, 100000000u + (uint32_t)i, 3);
		txmatch_stamp(m, &r, 1 * MS);
	}
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.stamps_full, 3);
	/* Flows beyond max_flows: frames not kept, counted. */
	for (uint16_t p = 1; p <= 8; p++) {
		struct frame_flow g = flow(IPPROTO_TCP, (uint16_t)(50000 + p));

		n = frame(buf, &g, 1, "x");
		txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 1 * MS);
	}
	txmatch_stats(m, &st);
	ck_assert_uint_gt(st.flows_full, 0);
	/* Once everything expired, flows are forgotten and new ones fit. */
	txmatch_expire(m, 1000 * MS);
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.unmatched, 8);
	struct frame_flow g = flow(IPPROTO_TCP, 60000);
	n = frame(buf, &g, 1, "y");
	txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, 1001 * MS);
	r = stamp(&g, 1, 4);
	txmatch_stamp(m, &r, 1001 * MS);
	ck_assert_uint_eq(s.n, 2);
	/* Other stages are counted, never paired. */
	r.key.stage = TXSOCK_STAGE_SCHED;
	txmatch_stamp(m, &r, 1001 * MS);
	txmatch_stats(m, &st);
	ck_assert_uint_eq(st.other_stages, 1);
	txmatch_destroy(m);
}
END_TEST

START_TEST(arena_wrap_many)
{
	struct frame_flow f = flow(IPPROTO_TCP, 40000);
	struct seen s = { 0 };
	struct txmatch *m = make(&s, 8192);
	uint8_t buf[2048];
	char payload[700];
	uint32_t seq = 7;

	/* Frames of varied sizes wrap the arena many times; each stamp right
	 * after its frame always finds that frame's own bytes. */
	for (unsigned i = 0; i < 2000; i++) {
		size_t len = 1 + (i * 37) % (sizeof(payload) - 1);
		uint32_t n;

		memset(payload, 'a' + (char)(i % 26), len);
		payload[len] = 0;
		n = frame(buf, &f, seq, payload);
		txmatch_frame(m, 0, FRAME_LINK_ETHERNET, buf, n, n, (int64_t)i);
		struct txsock_rec r = stamp(&f, seq + (uint32_t)len - 1, i);
		txmatch_stamp(m, &r, (int64_t)i);
		ck_assert_uint_eq(s.n, i + 1);
		ck_assert_uint_eq(s.caplen, n);
		ck_assert_mem_eq(s.frame, buf, n);
		seq += (uint32_t)len;
	}
	txmatch_destroy(m);
}
END_TEST

START_TEST(bad_config)
{
	struct txmatch_config cfg = { .arena_bytes = 100 };
	struct txmatch *m;

	ck_assert_int_eq(txmatch_create(&m, &cfg), -EINVAL);
}
END_TEST

static Suite *txmatch_suite(void)
{
	Suite *s = suite_create("txmatch");
	TCase *tc = tcase_create("txmatch");

	tcase_add_test(tc, tcp_either_order);
	tcase_add_test(tc, tcp_wraps_and_retransmits);
	tcase_add_test(tc, udp_by_hash);
	tcase_add_test(tc, bounded);
	tcase_add_test(tc, arena_wrap_many);
	tcase_add_test(tc, bad_config);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(txmatch_suite)
