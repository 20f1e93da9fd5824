/* test_tapfmt_exalink.c — the ExaLINK Fusion decoder against a model
 * clock: frames whose FCS is replaced by the count of a ~350 MHz counter,
 * keyframes every second mapping the count to UTC; stamps within a tick
 * of the model, across the 32-bit wrap, in the compat and append modes;
 * frames before any keyframe and malformed keyframes turned away with
 * their reason; never a byte read outside the capture. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/bytes.h"
#include "files/frame.h"
#include "files/tapfmt.h"
#include "stamp/ts.h"
#include "unit.h"

#define NS 1000000000LL
#define T0 (1763900000LL * NS)	/* 2025-11-23, a whole second */
#define TICK_PS 2858		/* a tick at 350 MHz, rounded up */
/* The capture server's clock: its record stamps are this far off. */
#define RECORD_OFF (3 * 1000000LL)

/* The device's counter: count c0 at T0, running at hz. */
struct model {
	uint64_t c0, hz;
	bool compat;		/* frames carry the 31-bit compat form */
};

static uint64_t model_count(const struct model *m, int64_t t)
{
	__int128 dt = t - T0, q = dt * (__int128)m->hz / NS;

	if (dt * (__int128)m->hz % NS < 0)
		q--;
	return m->c0 + (uint64_t)(int64_t)q;
}

/* The 32 bits a frame carries for count c. */
static uint32_t model_field(const struct model *m, uint64_t c)
{
	uint32_t t = (uint32_t)c & 0x7fffffffu;

	if (!m->compat)
		return (uint32_t)c;
	return (t & ~0x7fu) << 1 | (t & 0x7fu);
}

static uint32_t crc32_eth(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* A keyframe (EtherType 0x88B5) as the device sends it: 78 bytes. */
static uint32_t keyframe(uint8_t *b, uint64_t utc, uint64_t count,
			 uint64_t freq, uint8_t version)
{
	static const uint8_t hdr[14] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5 };

	memset(b, 0, 78);
	memcpy(b, hdr, 14);
	bytes_put_le32(b + 14, 0x464b5845u);
	b[18] = version;
	bytes_put_be64(b + 22, utc);
	bytes_put_be64(b + 30, count);
	bytes_put_be64(b + 38, freq);
	bytes_put_be64(b + 46, count);
	return 78;
}

/* A compat keyframe: IPv4 0.0.0.0 -> 255.255.255.255, protocol 253, 62
 * bytes of fields. */
static uint32_t compat_keyframe(uint8_t *b, uint64_t utc, uint64_t count,
				uint64_t skew_num)
{
	static const uint8_t hdr[34] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1,
		0x08, 0x00, 0x45, 0, 0, 82, 0, 0, 0, 0, 64, 253, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

	memset(b, 0, 100);
	memcpy(b, hdr, 34);
	bytes_put_be64(b + 34, count);
	bytes_put_be64(b + 42, utc);
	bytes_put_be64(b + 58, skew_num);
	bytes_put_be64(b + 66, 1);
	bytes_put_be64(b + 74, count);
	b[94] = 2;
	return 100;
}

/* A UDP frame whose last 4 bytes (where its FCS would be) are the
 * counter field v; append adds a correct FCS after them. */
static uint32_t data_frame(uint8_t *b, size_t cap, uint32_t v, bool append)
{
	struct frame_flow fl = { .family = AF_INET, .proto = IPPROTO_UDP,
				 .sport = 40001, .dport = 9001 };
	int n;

	inet_pton(AF_INET, "198.18.0.1", fl.src);
	inet_pton(AF_INET, "198.18.0.2", fl.dst);
	n = frame_build(b, cap, &fl, 0, 0, 0, "8=FIX.4.4\x01", 10);
	ck_assert_int_gt(n, 0);
	bytes_put_be32(b + n, v);
	n += 4;
	if (append) {
		bytes_put_le32(b + n, crc32_eth(b, (size_t)n));
		n += 4;
	}
	return (uint32_t)n;
}

struct rig {
	uint8_t state[512];
	char why[TAPFMT_WHYBUF];
	struct tapfmt_stamp s;
};

static int feed(struct rig *r, const uint8_t *b, uint32_t len, int64_t record)
{
	struct tapfmt_frame f = { .data = b, .caplen = len, .origlen = len,
				  .trailer_off = len, .record_ns = record };

	ck_assert_uint_le(tapfmt_exalink_ops.state_size, sizeof(r->state));
	r->why[0] = 0;
	memset(&r->s, 0xa5, sizeof(r->s));
	return tapfmt_exalink_ops.decode(r->state, &f, &r->s, r->why);
}

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
}

/* The keyframe of the model at t. */
static void feed_key(struct rig *r, const struct model *m, int64_t t,
		     uint64_t freq)
{
	uint8_t b[128];
	uint32_t n = m->compat ? compat_keyframe(b, (uint64_t)t, model_count(m, t), 1) :
		keyframe(b, (uint64_t)t, model_count(m, t), freq, 1);

	ck_assert_int_eq(feed(r, b, n, t + RECORD_OFF), TAPFMT_CONSUMED);
}

/* Error of the stamp of a frame sent at t, in ps. */
static int64_t stamp_err(struct rig *r, const struct model *m, int64_t t,
			 bool append)
{
	uint8_t b[256];
	uint32_t n = data_frame(b, sizeof(b) - 8,
				model_field(m, model_count(m, t)), append);

	ck_assert_int_eq(feed(r, b, n, t + RECORD_OFF), TAPFMT_STAMPED);
	ck_assert_uint_le(r->s.ps, 999);
	ck_assert_uint_eq(r->s.tail_len, append ? 8 : 4);
	ck_assert_uint_eq(r->s.head_len, 0);
	ck_assert_int_eq(r->s.timescale, TS_SCALE_UTC);
	return (r->s.ts_ns - t) * 1000 + r->s.ps;
}

/* Keyframes each second for 5 s carrying the counter's true rate (2.3 ppm
 * off 350 MHz); a frame every 7.3 ms: each within a tick of its time
 * (the counter floors, so the stamp is up to a tick early). */
START_TEST(within_a_tick)
{
	struct model m = { .c0 = 0x17e4402739aull, .hz = 350000800 };
	struct rig r;
	int64_t worst = 0;
	int frames = 0;

	rig_init(&r);
	for (int k = 0; k < 5; k++) {
		feed_key(&r, &m, T0 + k * NS, m.hz);
		for (int64_t t = T0 + k * NS + 1234; t < T0 + (k + 1) * NS;
		     t += 7300001) {
			int64_t e = stamp_err(&r, &m, t, false);

			ck_assert_msg(e <= 0 && e > -TICK_PS, "frame at +%lld ns: "
				      "%lld ps", (long long)(t - T0), (long long)e);
			if (e < worst)
				worst = e;
			frames++;
		}
	}
	ck_assert_int_gt(frames, 600);
	ck_assert_int_lt(worst, -1000);	/* the tick's floor is seen */
}
END_TEST

/* As the device does (Cisco's samples): keyframes say freq 350000000
 * whatever the counter's true rate. From the second keyframe on, the
 * rate between the two is used: within a tick again. Before it, freq is
 * all there is: 2.3 ppm off, 2.3 us after a second. */
START_TEST(nominal_freq)
{
	struct model m = { .c0 = 123456789, .hz = 350000800 };
	struct rig r;

	rig_init(&r);
	feed_key(&r, &m, T0, 350000000);
	int64_t e = stamp_err(&r, &m, T0 + NS - 1000, false);

	ck_assert_msg(e > 2200000 && e < 2400000, "first second: %lld ps",
		      (long long)e);
	for (int k = 1; k < 4; k++) {
		feed_key(&r, &m, T0 + k * NS, 350000000);
		for (int64_t t = T0 + k * NS; t < T0 + (k + 1) * NS; t += 99999989) {
			e = stamp_err(&r, &m, t, false);
			ck_assert_msg(e <= 0 && e > -TICK_PS, "+%lld ns: %lld ps",
				      (long long)(t - T0), (long long)e);
		}
	}
	/* A keyframe after a gap (lost ones): the pair is too far apart,
	 * freq again. */
	feed_key(&r, &m, T0 + 7 * NS, 350000000);
	e = stamp_err(&r, &m, T0 + 7 * NS + NS / 2, false);
	ck_assert_msg(e > 1000000, "after a gap: %lld ps", (long long)e);
}
END_TEST

/* The 32-bit count wraps 0.3 s after a keyframe, and again in the next
 * second's: the frames either side are placed within a tick. A frame
 * stamped just before the keyframe but captured after it is placed
 * before it (the nearest way), not 12 s later. */
START_TEST(wrap)
{
	struct model m = { .hz = 350000000 };
	struct rig r;
	uint8_t b[256];
	uint32_t n;

	/* Count 2^32 * 5 - 0.3 s worth at T0 + 1 s. */
	m.c0 = (5ull << 32) - 105000000 - 350000000;
	rig_init(&r);
	feed_key(&r, &m, T0, m.hz);
	feed_key(&r, &m, T0 + NS, m.hz);
	ck_assert_uint_gt((uint32_t)model_count(&m, T0 + NS), 0xf0000000u);
	for (int64_t t = T0 + NS; t < T0 + 2 * NS; t += 1000003) {
		int64_t e = stamp_err(&r, &m, t, false);

		ck_assert_msg(e <= 0 && e > -TICK_PS, "+%lld ns: %lld ps",
			      (long long)(t - T0), (long long)e);
	}
	ck_assert_uint_lt((uint32_t)model_count(&m, T0 + 2 * NS - 1), 0x10000000u);
	/* 41 ns before the keyframe at T0 + 2 s: count -14.35, floored to
	 * -15, is -42.857 ns: -43 ns and 142 ps. */
	feed_key(&r, &m, T0 + 2 * NS, m.hz);
	n = data_frame(b, sizeof(b), model_field(&m, model_count(&m, T0 + 2 * NS - 41)),
		       false);
	ck_assert_int_eq(feed(&r, b, n, T0 + 2 * NS + RECORD_OFF), TAPFMT_STAMPED);
	ck_assert_int_eq(r.s.ts_ns, T0 + 2 * NS - 43);
	ck_assert_uint_eq(r.s.ps, 142);
}
END_TEST

/* Compat keyframes (IPv4, protocol 253) and the 31-bit counter, whose
 * wrap comes every 6.1 s: across it, within a tick. */
START_TEST(compat)
{
	struct model m = { .hz = 350000000, .compat = true };
	struct rig r;

	m.c0 = (3ull << 31) - 175000000 - 350000000;	/* wraps at +1.5 s */
	rig_init(&r);
	for (int k = 0; k < 3; k++) {
		feed_key(&r, &m, T0 + k * NS, 0);
		for (int64_t t = T0 + k * NS; t < T0 + (k + 1) * NS; t += 3000017) {
			int64_t e = stamp_err(&r, &m, t, false);

			ck_assert_msg(e <= 0 && e > -TICK_PS, "+%lld ns: %lld ps",
				      (long long)(t - T0), (long long)e);
		}
	}
}
END_TEST

/* Append mode with the FCS captured: counter, then a correct FCS; both
 * are cut (tail_len 8), the stamp as in fcs mode. */
START_TEST(append)
{
	struct model m = { .c0 = 42, .hz = 349999000 };
	struct rig r;

	rig_init(&r);
	feed_key(&r, &m, T0, m.hz);
	for (int64_t t = T0; t < T0 + NS; t += 10000019) {
		int64_t e = stamp_err(&r, &m, t, true);

		ck_assert_msg(e <= 0 && e > -TICK_PS, "+%lld ns: %lld ps",
			      (long long)(t - T0), (long long)e);
	}
}
END_TEST

/* Before the first keyframe a counter means nothing: NOT_MINE, with the
 * reason the reader reports. */
START_TEST(before_keyframe)
{
	struct model m = { .c0 = 7, .hz = 350000000 };
	struct rig r;
	uint8_t b[256];
	uint32_t n;

	rig_init(&r);
	for (int i = 0; i < 3; i++) {
		n = data_frame(b, sizeof(b), model_field(&m, model_count(&m, T0 - NS / 2)),
			       false);
		ck_assert_int_eq(feed(&r, b, n, T0 - NS / 2 + i), TAPFMT_NOT_MINE);
		ck_assert_str_eq(r.why, "no keyframe yet: its counter cannot be "
				 "placed in time");
	}
	feed_key(&r, &m, T0, m.hz);
	ck_assert_int_ge(stamp_err(&r, &m, T0 + 1000, false), -TICK_PS);
}
END_TEST

/* A capture of plain frames, with a 0x88B5 frame of some other protocol
 * among them: never a keyframe, so nothing is the format's. */
START_TEST(no_keyframe_ever)
{
	struct rig r;
	uint8_t b[256];
	uint32_t n;

	rig_init(&r);
	for (int i = 0; i < 10; i++) {
		n = data_frame(b, sizeof(b), 0x12345678u * (uint32_t)i, false);
		ck_assert_int_eq(feed(&r, b, n, T0 + i), TAPFMT_NOT_MINE);
	}
	n = keyframe(b, (uint64_t)T0, 1, 350000000, 1);
	b[14] = 'X';	/* another magic */
	ck_assert_int_eq(feed(&r, b, n, T0), TAPFMT_NOT_MINE);
	ck_assert_ptr_nonnull(strstr(r.why, "no keyframe yet"));
}
END_TEST

/* Keyframes with the magic right but the rest wrong: -EBADMSG naming
 * what, and the keyframe before them still in force. */
START_TEST(bad_keyframes)
{
	struct model m = { .c0 = 1000, .hz = 350000000 };
	struct rig r;
	uint8_t b[128];
	uint32_t n;

	rig_init(&r);
	n = keyframe(b, (uint64_t)T0, 1, 350000000, 2);
	ck_assert_int_eq(feed(&r, b, n, T0), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.why, "version 2"));
	n = keyframe(b, (uint64_t)T0, 1, 0, 1);
	ck_assert_int_eq(feed(&r, b, n, T0), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.why, "frequency 0 Hz"));
	n = keyframe(b, (uint64_t)T0, 1, 35000000000ull, 1);
	ck_assert_int_eq(feed(&r, b, n, T0), -EBADMSG);
	/* 1999, and 40 days from the record's stamp. */
	n = keyframe(b, 915148800ull * NS, 1, 350000000, 1);
	ck_assert_int_eq(feed(&r, b, n, 915148800LL * NS), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.why, "implausible"));
	n = keyframe(b, (uint64_t)T0, 1, 350000000, 1);
	ck_assert_int_eq(feed(&r, b, n, T0 + 40 * 86400 * NS), -EBADMSG);
	/* Cut inside its fields. */
	ck_assert_int_eq(feed(&r, b, 40, T0), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.why, "cut"));
	/* Compat with a skew other than 1/1. */
	n = compat_keyframe(b, (uint64_t)T0, 1, 2);
	ck_assert_int_eq(feed(&r, b, n, T0), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.why, "skew 2/1"));
	/* None of them took: still no keyframe. */
	n = data_frame(b, sizeof(b), 5, false);
	ck_assert_int_eq(feed(&r, b, n, T0), TAPFMT_NOT_MINE);
	/* A good one, then a bad one: the good one stays. */
	feed_key(&r, &m, T0, m.hz);
	n = keyframe(b, (uint64_t)T0 + NS, 99, 0, 1);
	ck_assert_int_eq(feed(&r, b, n, T0 + NS + RECORD_OFF), -EBADMSG);
	int64_t e = stamp_err(&r, &m, T0 + NS + 5000, false);
	ck_assert(e <= 0 && e > -TICK_PS);
}
END_TEST

/* Frames cut by the snap length, and frames too far from the keyframe
 * for the counter's turn to be known: NOT_MINE with the reason. */
START_TEST(cut_and_stale)
{
	struct model m = { .c0 = 1000, .hz = 350000000 };
	struct rig r;
	uint8_t b[256];
	uint32_t n;
	struct tapfmt_frame f;

	rig_init(&r);
	feed_key(&r, &m, T0, m.hz);
	n = data_frame(b, sizeof(b), model_field(&m, model_count(&m, T0 + 10)), false);
	f = (struct tapfmt_frame){ .data = b, .caplen = n - 1, .origlen = n,
				   .trailer_off = n - 1, .record_ns = T0 };
	ck_assert_int_eq(tapfmt_exalink_ops.decode(r.state, &f, &r.s, r.why),
			 TAPFMT_NOT_MINE);
	ck_assert_ptr_nonnull(strstr(r.why, "not captured"));
	n = data_frame(b, sizeof(b), model_field(&m, model_count(&m, T0 + 6 * NS)), false);
	ck_assert_int_eq(feed(&r, b, n, T0 + 6 * NS + RECORD_OFF), TAPFMT_NOT_MINE);
	ck_assert_ptr_nonnull(strstr(r.why, "6.000 s away"));
	ck_assert_int_eq(feed(&r, b, n, T0 + 4 * NS + RECORD_OFF), TAPFMT_STAMPED);
}
END_TEST

/* Every length of a keyframe, a compat keyframe and a frame, each in a
 * buffer of exactly that size (ASan sees a read past it), with and
 * without a keyframe taken: whatever the answer, nothing outside. */
START_TEST(every_length)
{
	uint8_t src[3][128];
	uint32_t len[3];
	struct rig r;

	len[0] = keyframe(src[0], (uint64_t)T0, 5, 350000000, 1);
	len[1] = compat_keyframe(src[1], (uint64_t)T0, 5, 1);
	len[2] = data_frame(src[2], sizeof(src[2]) - 8, 77, true);
	for (int with = 0; with < 2; with++) {
		for (int k = 0; k < 3; k++) {
			for (uint32_t c = 0; c <= len[k]; c++) {
				uint8_t *b = malloc(c ? c : 1);
				int rc;

				ck_assert_ptr_nonnull(b);
				memcpy(b, src[k], c);
				rig_init(&r);
				if (with)
					ck_assert_int_eq(feed(&r, src[0], len[0], T0),
							 TAPFMT_CONSUMED);
				rc = feed(&r, b, c, T0);
				ck_assert(rc == TAPFMT_NOT_MINE || rc == TAPFMT_STAMPED ||
					  rc == TAPFMT_CONSUMED || rc == -EBADMSG);
				if (rc == TAPFMT_STAMPED)
					ck_assert_uint_le(r.s.tail_len + r.s.head_len, c);
				free(b);
			}
		}
	}
}
END_TEST

static Suite *tapfmt_exalink_suite(void)
{
	Suite *s = suite_create("tapfmt_exalink");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, within_a_tick);
	tcase_add_test(tc, nominal_freq);
	tcase_add_test(tc, wrap);
	tcase_add_test(tc, compat);
	tcase_add_test(tc, append);
	tcase_add_test(tc, before_keyframe);
	tcase_add_test(tc, no_keyframe_ever);
	tcase_add_test(tc, bad_keyframes);
	tcase_add_test(tc, cut_and_stale);
	tcase_add_test(tc, every_length);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(tapfmt_exalink_suite)
