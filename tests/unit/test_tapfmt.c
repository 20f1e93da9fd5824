/* test_tapfmt.c — the stamp formats of taps and timestamping switches
 * (tap_metawatch.c, tap_arista.c, tap_exablaze.c, tap_ixia.c): frames built
 * with frame_build(), the device's bytes encoded here from the formats'
 * descriptions, decoded back to the stamp, its picoseconds, the degraded
 * flag, device and port and what to cut; with and without a captured FCS;
 * and hostile frames: cut short, absurd values, no trailer at all. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/bytes.h"
#include "files/frame.h"
#include "files/tapfmt.h"
#include "stamp/ts.h"
#include "unit.h"

#define NS 1000000000LL
/* The capture server's record time, and the device's stamp 3 ms before. */
#define REC_S 1763900000LL
#define REC_NS (REC_S * NS + 123456789)
#define DEV_NS (REC_NS - 3000000)
#define DEV_S ((uint32_t)(DEV_NS / NS))
#define DEV_FRAC ((uint32_t)(DEV_NS % NS))

static const struct tapfmt_ops *const all_ops[] = {
	&tapfmt_metawatch_ops, &tapfmt_arista_ops, &tapfmt_exablaze_ops,
	&tapfmt_ixia_ops,
};

/* An Ethernet/IPv4/TCP frame with plen payload bytes, padded with zeros to
 * the 60-byte minimum as it crossed the wire. */
static uint32_t tcp_frame(uint8_t *buf, size_t cap, size_t plen)
{
	struct frame_flow f = { .family = AF_INET, .proto = IPPROTO_TCP,
				.sport = 40001, .dport = 9001 };
	uint8_t payload[1500];
	int n;

	for (size_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)('A' + i % 26);
	inet_pton(AF_INET, "198.18.0.1", f.src);
	inet_pton(AF_INET, "198.18.0.2", f.dst);
	n = frame_build(buf, cap, &f, 1000, 2000, 0, payload, plen);
	ck_assert_int_gt(n, 0);
	for (; n < 60; n++)
		buf[n] = 0;
	return (uint32_t)n;
}

/* As tapfmt_trailer_off() for an untagged IPv4 frame: past the datagram. */
static uint32_t ip_end(const uint8_t *buf, uint32_t len)
{
	uint32_t end = 14 + bytes_get_be16(buf + 16);

	return end < len ? end : len;
}

static struct tapfmt_frame frame_of(const uint8_t *buf, uint32_t len)
{
	return (struct tapfmt_frame){ .data = buf, .caplen = len, .origlen = len,
				      .trailer_off = ip_end(buf, len),
				      .record_ns = REC_NS };
}

static int decode(const struct tapfmt_ops *ops, const struct tapfmt_frame *f,
		  struct tapfmt_stamp *s)
{
	char why[TAPFMT_WHYBUF] = "";
	int rc;

	memset(s, 0xa5, sizeof(*s));
	rc = ops->decode(NULL, f, s, why);
	if (rc != TAPFMT_STAMPED)
		ck_assert_msg(why[0], "%s: result %d without a why", ops->name, rc);
	return rc;
}

/* ---- MetaWatch ---- */

/* Append original FCS, the TLV words (wire order), seconds, ns, flags,
 * device, port and, with fcs, a new FCS. */
static uint32_t mw_append(uint8_t *b, uint32_t n, uint32_t sec, uint32_t ns,
			  uint8_t flags, uint16_t device, uint8_t port,
			  const uint32_t *tlv, size_t ntlv, bool fcs)
{
	bytes_put_be32(b + n, 0xdeadbeef);
	n += 4;
	for (size_t i = 0; i < ntlv; i++, n += 4)
		bytes_put_be32(b + n, tlv[i]);
	bytes_put_be32(b + n, sec);
	bytes_put_be32(b + n + 4, ns);
	b[n + 8] = flags;
	bytes_put_be16(b + n + 9, device);
	b[n + 11] = port;
	n += 12;
	if (fcs) {
		bytes_put_be32(b + n, 0x0badf00d);
		n += 4;
	}
	return n;
}

START_TEST(metawatch_plain)
{
	uint8_t b[256];
	struct tapfmt_stamp s;

	for (int fcs = 0; fcs <= 1; fcs++) {
		uint32_t n0 = tcp_frame(b, sizeof(b), 0), n;
		struct tapfmt_frame f;

		ck_assert_uint_eq(n0, 60);	/* 54 + 6 bytes of padding */
		n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x01, 0x0102, 7, NULL, 0, fcs);
		f = frame_of(b, n);
		ck_assert_uint_eq(f.trailer_off, 54);
		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns, DEV_NS);
		ck_assert_uint_eq(s.ps, 0);
		ck_assert_int_eq(s.timescale, TS_SCALE_UNKNOWN);
		ck_assert(!s.degraded);
		ck_assert(s.has_port);
		ck_assert_uint_eq(s.device, 0x0102);
		ck_assert_uint_eq(s.port, 7);
		/* The padding stays: the frame as it was before its FCS. */
		ck_assert_uint_eq(s.tail_len, n - n0);
		ck_assert_uint_eq(s.head_len, 0);
	}
	/* Degraded. */
	{
		uint32_t n = mw_append(b, tcp_frame(b, sizeof(b), 100), DEV_S,
				       DEV_FRAC, 0x11, 1, 2, NULL, 0, false);
		struct tapfmt_frame f = frame_of(b, n);

		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert(s.degraded);
		ck_assert_uint_eq(s.tail_len, 16);
	}
}
END_TEST

START_TEST(metawatch_tlvs)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	/* Wire order; the walk goes from the seconds backwards, so the
	 * one marked last is the first on the wire. Sequence number 0x4242
	 * (tag 0, last), sub-ns 0x800000 = 0.5 ns (tag 1). */
	const uint32_t two[] = { 0x424200u << 0 | 0x20 | 0, 0x800000u << 8 | 1 };
	/* An unknown tag 5 with one data word (data, then its first word), a
	 * secondary tag header with 2 + 1 data words, sub-ns 0xFFFFFF last. */
	const uint32_t odd[] = {
		0xffffff00u | 0x20 | 1,			/* sub-ns, last */
		0xa5a5a5a5, 0xa5a5a5a5, 0xa5a5a5a5,	/* data: misread, a "last" */
		0x0001u << 16 | 2u << 6 | 0x1f,		/* secondary, 2 + 1 */
		0x44444444,				/* data */
		1u << 6 | 5,				/* tag 5, 1 word */
	};
	const uint32_t seq[] = { 0x00123400u | 0x20 | 0 };

	for (int fcs = 0; fcs <= 1; fcs++) {
		uint32_t n0 = tcp_frame(b, sizeof(b), 30), n;
		struct tapfmt_frame f;

		n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x03, 9, 1, two, 2, fcs);
		f = frame_of(b, n);
		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns, DEV_NS);
		ck_assert_uint_eq(s.ps, 500);
		ck_assert_uint_eq(s.tail_len, n - n0);

		n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x03, 9, 1, odd, 7, fcs);
		f = frame_of(b, n);
		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_uint_eq(s.ps, 999);	/* 999.99994 ps, held below 1000 */
		ck_assert_uint_eq(s.tail_len, n - n0);

		n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x03, 9, 1, seq, 1, fcs);
		f = frame_of(b, n);
		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_uint_eq(s.ps, 0);
		ck_assert_uint_eq(s.tail_len, n - n0);
	}
}
END_TEST

START_TEST(metawatch_hostile)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	struct tapfmt_frame f;
	uint32_t n0, n;
	/* A TLV claiming 3 data words where there is room for 1. */
	const uint32_t big[] = { 3u << 6 | 0x20 | 4 };

	/* Seconds absurd, 40 days off, before the first hour, ns past 10^9:
	 * nothing says the bytes are a trailer. */
	const uint32_t bad[][2] = {
		{ 0xffffffffu, 0 }, { DEV_S + 40 * 86400, 0 },
		{ DEV_S - 40 * 86400, 0 }, { 3600, 0 }, { DEV_S, 1000000000u },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = mw_append(b, tcp_frame(b, sizeof(b), 100), bad[i][0],
			      bad[i][1], 0x01, 1, 1, NULL, 0, false);
		f = frame_of(b, n);
		ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s),
				 TAPFMT_NOT_MINE);
	}
	/* 29 days off is still a stamp. */
	n = mw_append(b, tcp_frame(b, sizeof(b), 100), DEV_S + 29 * 86400, 0,
		      0x01, 1, 1, NULL, 0, false);
	f = frame_of(b, n);
	ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), TAPFMT_STAMPED);
	/* A plausible stamp whose extensions run past the trailer, or with
	 * no room left for the original FCS (a frame with no padding). */
	n0 = tcp_frame(b, sizeof(b), 100);
	n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x03, 1, 1, big, 1, false);
	f = frame_of(b, n);
	ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), -EBADMSG);
	n = mw_append(b, n0, DEV_S, DEV_FRAC, 0x01, 1, 1, NULL, 0, false);
	memmove(b + n0, b + n0 + 4, 12);	/* original FCS gone */
	f = frame_of(b, n0 + 12);
	ck_assert_int_eq(decode(&tapfmt_metawatch_ops, &f, &s), -EBADMSG);
}
END_TEST

/* ---- Exablaze ---- */

static uint32_t exa_append(uint8_t *b, uint32_t n, uint32_t sec, uint64_t frac,
			   uint8_t device, uint8_t port, bool fcs)
{
	bytes_put_be32(b + n, 0xdeadbeef);
	b[n + 4] = device;
	b[n + 5] = port;
	bytes_put_be32(b + n + 6, sec);
	b[n + 10] = (uint8_t)(frac >> 32);
	bytes_put_be32(b + n + 11, (uint32_t)frac);
	b[n + 15] = 0;
	n += 16;
	if (fcs) {
		bytes_put_be32(b + n, 0x0badf00d);
		n += 4;
	}
	return n;
}

START_TEST(exablaze_stamps)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	/* frac -> ns, ps (exact: frac * 10^12 / 2^40 ps, floored). */
	const struct { uint64_t frac; int64_t ns; unsigned ps; } v[] = {
		{ 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 1 },
		{ 1ull << 39, 500000000, 0 },
		{ (1ull << 40) - 1, 999999999, 999 },
		{ 135742491, 123457, 76 },
		/* The device's ceil(ns * 2^40 / 10^9): back to ns exactly. */
		{ 135742175034ull, 123456789, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int fcs = 0; fcs <= 1; fcs++) {
			uint32_t n0 = tcp_frame(b, sizeof(b), 10);
			uint32_t n = exa_append(b, n0, DEV_S, v[i].frac, 3, 17, fcs);
			struct tapfmt_frame f = frame_of(b, n);

			ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s),
					 TAPFMT_STAMPED);
			ck_assert_int_eq(s.ts_ns, (int64_t)DEV_S * NS + v[i].ns);
			ck_assert_uint_eq(s.ps, v[i].ps);
			ck_assert(s.has_port);
			ck_assert_uint_eq(s.device, 3);
			ck_assert_uint_eq(s.port, 17);
			ck_assert(!s.degraded);
			ck_assert_uint_eq(s.tail_len, 16 + 4 * fcs);
			ck_assert_uint_eq(n - s.tail_len, n0);
		}
	}
}
END_TEST

/* The nanoseconds are Wireshark's (int)(ldexp(frac, -40) * 1e9), for any
 * fraction. */
START_TEST(exablaze_as_wireshark)
{
	uint8_t b[256];
	uint32_t n0 = tcp_frame(b, sizeof(b), 10);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct tapfmt_stamp s;

	for (int i = 0; i < 200000; i++) {
		uint64_t frac;
		struct tapfmt_frame f;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		frac = i < 1000 ? (uint64_t)i : x >> 24;
		f = frame_of(b, exa_append(b, n0, DEV_S, frac, 1, 1, false));
		ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns - (int64_t)DEV_S * NS,
				 (int)(ldexp((double)frac, -40) * 1000000000));
		ck_assert_uint_le(s.ps, 999);
	}
}
END_TEST

START_TEST(exablaze_hostile)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	struct tapfmt_frame f;
	uint32_t n0 = tcp_frame(b, sizeof(b), 10);

	f = frame_of(b, exa_append(b, n0, DEV_S + 8 * 86400, 0, 1, 1, false));
	ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s), TAPFMT_NOT_MINE);
	f = frame_of(b, exa_append(b, n0, DEV_S - 8 * 86400, 0, 1, 1, true));
	ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s), TAPFMT_NOT_MINE);
	f = frame_of(b, exa_append(b, n0, DEV_S + 6 * 86400, 0, 1, 1, true));
	ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s), TAPFMT_STAMPED);
	/* 15 bytes of trailer. */
	f = frame_of(b, exa_append(b, n0, DEV_S, 0, 1, 1, false) - 1);
	memmove(b + n0, b + n0 + 1, 15);
	ck_assert_int_eq(decode(&tapfmt_exablaze_ops, &f, &s), TAPFMT_NOT_MINE);
}
END_TEST

/* ---- Ixia ---- */

/* Append the fields (a stamp of source src, field length tslen, with an
 * original-length field first when origlen), their length, the signature
 * and the checksum (wrong when badsum), and a new FCS when fcs. */
static uint32_t ixia_append(uint8_t *b, uint32_t n, uint8_t src, uint8_t tslen,
			    uint32_t sec, uint32_t ns, bool origlen, bool fcs,
			    bool badsum)
{
	uint32_t t = n, sum = 0;

	if (origlen) {
		b[n] = 1;
		b[n + 1] = 2;
		bytes_put_be16(b + n + 2, (uint16_t)t);
		n += 4;
	}
	if (tslen) {
		b[n] = src;
		b[n + 1] = tslen;
		memset(b + n + 2, 0, tslen);
		if (tslen >= 8) {
			bytes_put_be32(b + n + 2, sec);
			bytes_put_be32(b + n + 6, ns);
		}
		n += 2u + tslen;
	}
	b[n] = (uint8_t)(n - t);
	bytes_put_be16(b + n + 1, 0xaf12);
	n += 3;
	for (uint32_t i = t; i < n; i += 2)
		sum += (uint32_t)b[i] << 8 | (i + 1 < n ? b[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	bytes_put_be16(b + n, (uint16_t)(~sum ^ (badsum ? 1 : 0)));
	n += 2;
	if (fcs) {
		bytes_put_be32(b + n, 0x0badf00d);
		n += 4;
	}
	return n;
}

START_TEST(ixia_stamps)
{
	uint8_t b[256];
	struct tapfmt_stamp s;

	for (int fcs = 0; fcs <= 1; fcs++) {
		for (int ol = 0; ol <= 1; ol++) {
			for (uint8_t src = 3; src <= 7; src++) {
				uint32_t n0 = tcp_frame(b, sizeof(b), 5 + 60 * ol);
				uint32_t n = ixia_append(b, n0, src, 8, DEV_S, DEV_FRAC,
							 ol, fcs, false);
				struct tapfmt_frame f = frame_of(b, n);

				ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s),
						 TAPFMT_STAMPED);
				ck_assert_int_eq(s.ts_ns, DEV_NS);
				ck_assert_uint_eq(s.ps, 0);
				ck_assert(s.degraded == (src == 7));
				ck_assert(!s.has_port);
				ck_assert_uint_eq(s.tail_len, 15 + 4 * ol + 4 * fcs);
				ck_assert_uint_eq(n - s.tail_len, n0);
			}
		}
	}
}
END_TEST

START_TEST(ixia_hostile)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	struct tapfmt_frame f;
	uint32_t n0 = tcp_frame(b, sizeof(b), 5);
	char why[TAPFMT_WHYBUF];

	/* A checksum that fails: maybe payload that looks like a trailer. */
	f = frame_of(b, ixia_append(b, n0, 6, 8, DEV_S, DEV_FRAC, false, false, true));
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), TAPFMT_NOT_MINE);
	f = frame_of(b, ixia_append(b, n0, 6, 8, DEV_S, DEV_FRAC, true, true, true));
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), TAPFMT_NOT_MINE);
	/* The checksum holds, the content cannot be right. */
	f = frame_of(b, ixia_append(b, n0, 6, 7, DEV_S, DEV_FRAC, false, false, false));
	ck_assert_int_eq(tapfmt_ixia_ops.decode(NULL, &f, &s, why),
			 -EBADMSG);
	ck_assert_ptr_nonnull(strstr(why, "7 bytes"));
	f = frame_of(b, ixia_append(b, n0, 6, 8, DEV_S, 1000000000u, false, false, false));
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), -EBADMSG);
	f = frame_of(b, ixia_append(b, n0, 6, 8, DEV_S + 40 * 86400, 0, false, false, false));
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), -EBADMSG);
	f = frame_of(b, ixia_append(b, n0, 6, 0, 0, 0, true, false, false));
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), -EBADMSG);
	/* A fields' length reaching into the IP datagram. */
	n0 = ixia_append(b, n0, 6, 8, DEV_S, DEV_FRAC, false, false, false);
	b[n0 - 5] = 40;
	f = frame_of(b, n0);
	ck_assert_int_eq(decode(&tapfmt_ixia_ops, &f, &s), TAPFMT_NOT_MINE);
}
END_TEST

/* ---- Arista ---- */

/* Insert the header of version ver after the MACs; sec is the whole
 * seconds, of which a 48-bit version keeps the low 16 bits. */
static uint32_t ar_insert(uint8_t *b, uint32_t n, uint16_t subtype, uint16_t ver,
			  uint64_t sec, uint32_t ns)
{
	uint32_t hl = (ver & 0x00f0) == 0x0020 ? 12 : 14;

	memmove(b + 12 + hl, b + 12, n - 12);
	bytes_put_be16(b + 12, 0xd28b);
	bytes_put_be16(b + 14, subtype);
	bytes_put_be16(b + 16, ver);
	if (hl == 14) {
		bytes_put_be32(b + 18, (uint32_t)sec);
		bytes_put_be32(b + 22, ns);
	} else {
		bytes_put_be16(b + 18, (uint16_t)sec);
		bytes_put_be32(b + 20, ns);
	}
	return n + hl;
}

/* The frame with the cut applied. */
static uint32_t cut(const uint8_t *in, uint32_t n, const struct tapfmt_stamp *s,
		    uint8_t *out)
{
	memcpy(out, in, s->head_off);
	memcpy(out + s->head_off, in + s->head_off + s->head_len,
	       n - s->head_off - s->head_len - s->tail_len);
	return n - s->head_len - s->tail_len;
}

START_TEST(arista_versions)
{
	const struct { uint16_t ver; uint32_t hl; int scale; } v[] = {
		{ 0x0010, 14, TS_SCALE_TAI }, { 0x0110, 14, TS_SCALE_UTC },
		{ 0x0020, 12, TS_SCALE_TAI }, { 0x0120, 12, TS_SCALE_UTC },
		{ 0x0011, 14, TS_SCALE_TAI }, { 0x0121, 12, TS_SCALE_UTC },
	};
	uint8_t orig[256], b[256], back[256];
	struct tapfmt_stamp s;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t n0 = tcp_frame(orig, sizeof(orig), 20), n;
		struct tapfmt_frame f;

		memcpy(b, orig, n0);
		n = ar_insert(b, n0, 1, v[i].ver, DEV_S, DEV_FRAC);
		f = frame_of(b, n);
		f.trailer_off = n;	/* not IP at offset 12 */
		ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns, DEV_NS);
		ck_assert_int_eq(s.timescale, v[i].scale);
		ck_assert_uint_eq(s.head_off, 12);
		ck_assert_uint_eq(s.head_len, v[i].hl);
		ck_assert_uint_eq(s.tail_len, 0);
		ck_assert(!s.has_port);
		ck_assert(!s.degraded);
		ck_assert_uint_eq(cut(b, n, &s, back), n0);
		ck_assert_mem_eq(back, orig, n0);
	}
}
END_TEST

/* 48 bits: the seconds nearest the record time, across a 16-bit wrap
 * either way, and 9 h off. */
START_TEST(arista_48_wrap)
{
	const int64_t base = (REC_S & ~0xffffLL) + 0x10000;	/* low bits 0 */
	const struct { int64_t rec_s, dev_s; } v[] = {
		{ base - 10, base + 5 },	/* record before the wrap */
		{ base + 5, base - 10 },	/* device before it */
		{ base - 1, base - 1 },
		{ base + 32000, base - 500 },	/* 9 h apart, still right */
		{ base - 32000, base + 500 },
	};
	uint8_t b[256];
	struct tapfmt_stamp s;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t n = ar_insert(b, tcp_frame(b, sizeof(b), 20), 1, 0x0020,
				       (uint64_t)v[i].dev_s, 999999999u);
		struct tapfmt_frame f = frame_of(b, n);

		f.record_ns = v[i].rec_s * NS + 5;
		ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns, v[i].dev_s * NS + 999999999);
	}
	/* More than 2^15 s away: off by 65536 s, as documented. */
	{
		uint32_t n = ar_insert(b, tcp_frame(b, sizeof(b), 20), 1, 0x0020,
				       (uint64_t)base, 0);
		struct tapfmt_frame f = frame_of(b, n);

		f.record_ns = (base + 40000) * NS;
		ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), TAPFMT_STAMPED);
		ck_assert_int_eq(s.ts_ns, (base + 65536) * NS);
	}
}
END_TEST

START_TEST(arista_hostile)
{
	uint8_t b[256];
	struct tapfmt_stamp s;
	struct tapfmt_frame f;
	char why[TAPFMT_WHYBUF];
	uint32_t n0 = tcp_frame(b, sizeof(b), 20), n;

	n = ar_insert(b, n0, 1, 0x0030, DEV_S, DEV_FRAC);
	f = frame_of(b, n);
	ck_assert_int_eq(tapfmt_arista_ops.decode(NULL, &f, &s, why),
			 -EBADMSG);
	ck_assert_str_eq(why, "unknown Arista timestamp version 0x0030");
	n0 = tcp_frame(b, sizeof(b), 20);
	f = frame_of(b, ar_insert(b, n0, 3, 0x0020, DEV_S, DEV_FRAC));
	ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), -EBADMSG);
	n0 = tcp_frame(b, sizeof(b), 20);
	f = frame_of(b, ar_insert(b, n0, 1, 0x0010, DEV_S, 1000000000u));
	ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), -EBADMSG);
	n0 = tcp_frame(b, sizeof(b), 20);
	f = frame_of(b, ar_insert(b, n0, 1, 0x0110, 0xffffffffu, 0));
	ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), -EBADMSG);
	/* Cut inside the header, or before the frame's own EtherType. */
	n0 = tcp_frame(b, sizeof(b), 20);
	n = ar_insert(b, n0, 1, 0x0010, DEV_S, DEV_FRAC);
	for (uint32_t len = 14; len < 12 + 14 + 2; len++) {
		f = frame_of(b, len);
		ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), -EBADMSG);
	}
	f = frame_of(b, 12 + 14 + 2);
	ck_assert_int_eq(decode(&tapfmt_arista_ops, &f, &s), TAPFMT_STAMPED);
	(void)n;
}
END_TEST

/* ---- All ---- */

/* No trailer, no header: short frames padded with zeros, long ones, a
 * frame with an FCS, ARP. */
START_TEST(plain_frames)
{
	uint8_t b[2048];
	struct tapfmt_stamp s;
	const size_t plens[] = { 0, 1, 6, 7, 30, 100, 1400 };

	for (size_t p = 0; p < sizeof(plens) / sizeof(plens[0]); p++) {
		for (int fcs = 0; fcs <= 1; fcs++) {
			uint32_t n = tcp_frame(b, sizeof(b), plens[p]);
			struct tapfmt_frame f;

			if (fcs) {
				bytes_put_be32(b + n, 0x1234abcd);
				n += 4;
			}
			f = frame_of(b, n);
			for (size_t i = 0; i < sizeof(all_ops) / sizeof(all_ops[0]); i++)
				ck_assert_msg(decode(all_ops[i], &f, &s) == TAPFMT_NOT_MINE,
					      "%s claims a plain frame of %zu bytes "
					      "of payload", all_ops[i]->name, plens[p]);
		}
	}
	memset(b, 0, 60);
	bytes_put_be16(b + 12, 0x0806);
	for (size_t i = 0; i < sizeof(all_ops) / sizeof(all_ops[0]); i++) {
		struct tapfmt_frame f = { .data = b, .caplen = 60, .origlen = 60,
					  .trailer_off = 60, .record_ns = REC_NS };

		ck_assert_int_eq(decode(all_ops[i], &f, &s), TAPFMT_NOT_MINE);
		f.caplen = f.origlen = f.trailer_off = 0;
		ck_assert_int_eq(decode(all_ops[i], &f, &s), TAPFMT_NOT_MINE);
	}
}
END_TEST

/* Every format's frame cut at every length, in a buffer of exactly that
 * size (ASan sees any read past it), its trailer offset where a reader
 * would put it: no read outside, only the three results. A frame cut by
 * the snapshot length (caplen < origlen) has no trailer captured. */
START_TEST(truncated)
{
	static const uint32_t tlv[] = { 0x800000u << 8 | 0x20 | 1 };
	uint8_t full[4][256];
	uint32_t len[4];
	struct tapfmt_stamp s;

	len[0] = mw_append(full[0], tcp_frame(full[0], 256, 3), DEV_S, DEV_FRAC,
			   0x03, 1, 1, tlv, 1, true);
	len[1] = ar_insert(full[1], tcp_frame(full[1], 256, 3), 1, 0x0010,
			   DEV_S, DEV_FRAC);
	len[2] = exa_append(full[2], tcp_frame(full[2], 256, 3), DEV_S, 77, 1, 1, true);
	len[3] = ixia_append(full[3], tcp_frame(full[3], 256, 3), 6, 8, DEV_S,
			     DEV_FRAC, true, true, false);
	for (size_t i = 0; i < 4; i++) {
		for (uint32_t n = 0; n <= len[i]; n++) {
			uint8_t *p = malloc(n ? n : 1);
			struct tapfmt_frame f = { .data = p, .caplen = n, .origlen = n,
						  .record_ns = REC_NS };
			int rc;

			memcpy(p, full[i], n);
			f.trailer_off = n >= 18 ? ip_end(p, n) : n;
			rc = decode(all_ops[i], &f, &s);
			ck_assert(rc == TAPFMT_NOT_MINE || rc == TAPFMT_STAMPED ||
				  rc == -EBADMSG);
			if (rc == TAPFMT_STAMPED)
				ck_assert_uint_le(s.head_off + s.head_len + s.tail_len, n);
			if (n == len[i])
				ck_assert_int_eq(rc, TAPFMT_STAMPED);
			f.origlen = n + 1;
			if (i != 1)
				ck_assert_int_eq(decode(all_ops[i], &f, &s),
						 TAPFMT_NOT_MINE);
			free(p);
		}
	}
}
END_TEST

/* Random bytes past the datagram: never a read outside, and few frames
 * taken for a trailer. MetaWatch and Exablaze have nothing but the
 * stamp's plausibility: random seconds within 30 days (with ns < 10^9)
 * or a week of the record's pass about once in 3500 tries, two tries
 * (with and without FCS) per frame, 2 in 3 frames long enough: about 8
 * frames in 20000 (this seed: 9 and 8). Arista and Ixia: none. */
START_TEST(random_trailers)
{
	uint8_t b[256];
	uint64_t x = 88172645463325252ull;
	unsigned stamped[4] = { 0 };
	struct tapfmt_stamp s;

	for (int it = 0; it < 20000; it++) {
		uint32_t n0 = tcp_frame(b, sizeof(b), 10), extra;
		struct tapfmt_frame f;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		extra = (uint32_t)(x % 48);
		for (uint32_t i = 0; i < extra; i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			b[n0 + i] = (uint8_t)x;
		}
		f = frame_of(b, n0 + extra);
		for (size_t i = 0; i < 4; i++) {
			int rc = decode(all_ops[i], &f, &s);

			ck_assert(rc == TAPFMT_NOT_MINE || rc == TAPFMT_STAMPED ||
				  rc == -EBADMSG);
			stamped[i] += rc == TAPFMT_STAMPED;
		}
	}
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(stamped[i] <= 20, "%s: %u of 20000 random trailers "
			      "stamped", all_ops[i]->name, stamped[i]);
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(tapfmt_metawatch_ops.name, "metawatch");
	ck_assert_int_eq(tapfmt_metawatch_ops.kind, TAPFMT_METAWATCH);
	ck_assert_str_eq(tapfmt_arista_ops.name, "arista");
	ck_assert_int_eq(tapfmt_arista_ops.kind, TAPFMT_ARISTA);
	ck_assert_str_eq(tapfmt_exablaze_ops.name, "exablaze");
	ck_assert_int_eq(tapfmt_exablaze_ops.kind, TAPFMT_EXABLAZE);
	ck_assert_str_eq(tapfmt_ixia_ops.name, "ixia");
	ck_assert_int_eq(tapfmt_ixia_ops.kind, TAPFMT_IXIA);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(all_ops[i]->state_size, 0);
		ck_assert_ptr_nonnull(all_ops[i]->what);
	}
}
END_TEST

static Suite *tapfmt_suite(void)
{
	Suite *s = suite_create("tapfmt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, metawatch_plain);
	tcase_add_test(tc, metawatch_tlvs);
	tcase_add_test(tc, metawatch_hostile);
	tcase_add_test(tc, exablaze_stamps);
	tcase_add_test(tc, exablaze_as_wireshark);
	tcase_add_test(tc, exablaze_hostile);
	tcase_add_test(tc, ixia_stamps);
	tcase_add_test(tc, ixia_hostile);
	tcase_add_test(tc, arista_versions);
	tcase_add_test(tc, arista_48_wrap);
	tcase_add_test(tc, arista_hostile);
	tcase_add_test(tc, plain_frames);
	tcase_add_test(tc, truncated);
	tcase_add_test(tc, random_trailers);
	tcase_add_test(tc, names);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(tapfmt_suite)
