/* tap_exalink.c — the ExaLINK Fusion (Cisco Nexus 3550-F) mirror stamps:
 * a 32-bit counter of a ~350 MHz clock in each frame, and keyframes that
 * map the counter to UTC; see tapfmt.h.
 *
 * The layout follows Cisco's public decoder (n3550-timestamp-decoder,
 * record_process.cpp) and its sample captures:
 *
 * Keyframe, about once a second, one of three shapes:
 *   - EtherType 0x88B5, then 40 bytes: magic "EXKF" (0x464b5845 read
 *     little-endian), version 1, 3 reserved, then big-endian u64s: utc
 *     (ns since 1970), counter (the 64-bit count at utc), freq (Hz: the
 *     nominal 350000000 in every sample), last_sync (a counter value;
 *     not used here). Old firmware: magic 1, version 0, same layout.
 *   - the same 40 bytes in an IPv4 datagram 0.0.0.0 -> 255.255.255.255,
 *     protocol 253, TTL 64, header without options;
 *   - "compat" (the Arista 7150 compatible modes fcs-compat and
 *     append-compat): in that IPv4 datagram, 62 bytes of big-endian
 *     fields: asic_time (the counter), utc (ns), last_sync, skew_num,
 *     skew_denom (1/1, nothing else is known), timestamp, drop_count,
 *     u16 device, u16 egress port, u8 fcs type, 1 reserved. No freq:
 *     the counter runs at the nominal 350 MHz.
 *
 * Counter in a frame: big-endian, 4 bytes. Mode fcs: in place of the FCS,
 * the frame's last 4 bytes. Mode append: inserted before a new, correct
 * FCS, so the frame's last 8 bytes when the capture kept the FCS, and its
 * last 4 when the NIC stripped it (as fcs mode). The compat modes carry
 * only 31 bits: bit 7 of the 32 is not part of the count (ticks = the
 * bits above it shifted down by one, plus the 7 below).
 *
 * The stamps are UTC, as the field's name and Cisco's README say: in the
 * samples, keyframes fall on whole seconds of utc and the capture
 * server's records 10 ms after them, not 36 s (TAI in 2016).
 */
#include "files/tapfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/bytes.h"
#include "stamp/ts.h"

#define EXA_ETH_HLEN 14
#define EXA_ETHERTYPE 0x88B5
#define EXA_MAGIC 0x464b5845u	/* "EXKF" */
#define EXA_KF_LEN 40
#define EXA_COMPAT_KF_LEN 62
#define EXA_IP_PROTO 253
#define EXA_IP_TTL 64
#define EXA_NOMINAL_HZ 350000000u

/* A keyframe's freq outside this cannot be a counter clock of the device
 * (and would take the arithmetic below out of range). */
#define EXA_FREQ_MIN 100000000u
#define EXA_FREQ_MAX 1000000000u
/* The device's keyframes say the nominal 350 MHz, whatever the counter's
 * true rate (Cisco's samples: -1.3 to +5.4 ppm off, 0.5 to 5 us a second).
 * So the rate between the two latest keyframes is used, when freq
 * misses the second keyframe by more than 2 ticks (the keyframes' own
 * counts are whole ticks), over a plausible gap, and within this of
 * freq (a counter reset or a step of the device's time is not a rate). */
#define EXA_PAIR_MAX_GAP_NS 2500000000LL
#define EXA_PAIR_MAX_PPM 1000
#define NS_2000 946684800000000000LL
#define NS_30_DAYS (30LL * 86400 * 1000000000)

struct exa_key {
	uint64_t utc;		/* ns since 1970 */
	uint64_t counter;	/* the 64-bit count at utc */
	uint64_t freq;		/* Hz */
	int64_t record_ns;	/* its record's stamp */
	bool compat;		/* 31-bit counters in the frames */
};

struct exa_state {
	bool have, have_prev;
	struct exa_key key, prev;
	/* ns per tick, num / den: 1e9 / freq, or the rate between the two
	 * latest keyframes (exa_rate()). */
	uint64_t num, den;
	/* Bytes the counter ends before the frame's end plus its own 4:
	 * 0 until the first frame decides, then 4 (counter last) or 8
	 * (counter, then the FCS the append modes recompute). */
	uint32_t tail;
};

/* CRC-32 of Ethernet (reflected 0xEDB88320), a nibble at a time: only the
 * first stamped frame of a reader needs it. */
static uint32_t exa_crc32(const uint8_t *p, size_t len)
{
	static const uint32_t t[16] = {
		0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
		0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
		0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
		0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		c = (c >> 4) ^ t[c & 15];
		c = (c >> 4) ^ t[c & 15];
	}
	return ~c;
}

/* Where a keyframe's fields begin in f, and which kind: 0 for none (an
 * ordinary frame), else EXA_KF_LEN or EXA_COMPAT_KF_LEN with *off set. */
static uint32_t exa_keyframe_at(const struct tapfmt_frame *f, uint32_t *off)
{
	const uint8_t *d = f->data;
	uint16_t type;

	if (f->caplen < EXA_ETH_HLEN)
		return 0;
	type = bytes_get_be16(d + 12);
	if (type == EXA_ETHERTYPE) {
		*off = EXA_ETH_HLEN;
		return EXA_KF_LEN;
	}
	/* IPv4 without options, from 0.0.0.0 to the broadcast address. */
	if (type == 0x0800 && f->caplen >= EXA_ETH_HLEN + 20 &&
	    d[14] == 0x45 && d[22] == EXA_IP_TTL && d[23] == EXA_IP_PROTO &&
	    bytes_get_be32(d + 26) == 0 && bytes_get_be32(d + 30) == 0xffffffffu) {
		uint16_t len = bytes_get_be16(d + 16);

		*off = EXA_ETH_HLEN + 20;
		if (len == 20 + EXA_KF_LEN)
			return EXA_KF_LEN;
		if (len == 20 + EXA_COMPAT_KF_LEN)
			return EXA_COMPAT_KF_LEN;
	}
	return 0;
}

/* The rate the stamps use once key is the latest keyframe. */
static void exa_rate(struct exa_state *st)
{
	const struct exa_key *k = &st->key, *p = &st->prev;

	st->num = 1000000000u;
	st->den = k->freq;
	if (st->have_prev && p->compat == k->compat && k->utc > p->utc &&
	    k->counter > p->counter &&
	    (int64_t)(k->utc - p->utc) <= EXA_PAIR_MAX_GAP_NS) {
		uint64_t du = k->utc - p->utc, dc = k->counter - p->counter;
		/* dc / du against freq / 1e9: du <= 2.5e9 and freq <= 1e9
		 * keep both products below 2^63 once dc is bounded. */
		uint64_t a, b = k->freq * du, diff;

		if (dc > 2 * b / 1000000000u)
			return;
		a = dc * 1000000000u;
		diff = a > b ? a - b : b - a;
		/* freq within the keyframe counters' own quantum of the
		 * pair: freq, finer than the pair's rate. */
		if (diff <= 2 * 1000000000ull)
			return;
		if (diff <= b / 1000000 * EXA_PAIR_MAX_PPM) {
			st->num = du;
			st->den = dc;
		}
	}
}

static int exa_keyframe(struct exa_state *st, const struct tapfmt_frame *f,
			uint32_t off, uint32_t kind, char why[TAPFMT_WHYBUF])
{
	const uint8_t *k = f->data + off;
	struct exa_key key = { .record_ns = f->record_ns };

	if (kind == EXA_KF_LEN) {
		uint32_t magic;
		uint8_t version;

		/* Another protocol's 0x88B5 frame (it is the local
		 * experimental EtherType) is traffic. */
		if (f->caplen < off + 5)
			return TAPFMT_NOT_MINE;
		magic = bytes_get_le32(k);
		version = k[4];
		if (magic != EXA_MAGIC && !(magic == 1 && version == 0))
			return TAPFMT_NOT_MINE;
		if (magic == EXA_MAGIC && version != 1) {
			tapfmt_why(why, "ExaLINK keyframe version %u unknown",
				   version);
			return -EBADMSG;
		}
		if (f->caplen < off + EXA_KF_LEN) {
			tapfmt_why(why, "ExaLINK keyframe cut at %" PRIu32
				   " of %u bytes", f->caplen - off, EXA_KF_LEN);
			return -EBADMSG;
		}
		key.utc = bytes_get_be64(k + 8);
		key.counter = bytes_get_be64(k + 16);
		key.freq = bytes_get_be64(k + 24);
		if (key.freq < EXA_FREQ_MIN || key.freq > EXA_FREQ_MAX) {
			tapfmt_why(why, "ExaLINK keyframe counter frequency "
				   "%" PRIu64 " Hz implausible (350 MHz expected)",
				   key.freq);
			return -EBADMSG;
		}
	} else {
		uint64_t num, denom;

		if (f->caplen < off + EXA_COMPAT_KF_LEN) {
			tapfmt_why(why, "ExaLINK compat keyframe cut at "
				   "%" PRIu32 " of %u bytes", f->caplen - off,
				   EXA_COMPAT_KF_LEN);
			return -EBADMSG;
		}
		num = bytes_get_be64(k + 24);
		denom = bytes_get_be64(k + 32);
		if (num != 1 || denom != 1) {
			tapfmt_why(why, "ExaLINK compat keyframe skew %"
				   PRIu64 "/%" PRIu64 " unknown (1/1 expected)",
				   num, denom);
			return -EBADMSG;
		}
		key.counter = bytes_get_be64(k);
		key.utc = bytes_get_be64(k + 8);
		key.freq = EXA_NOMINAL_HZ;
		key.compat = true;
	}
	if (key.utc < (uint64_t)NS_2000 || key.utc > (uint64_t)INT64_MAX ||
	    (int64_t)key.utc - f->record_ns > NS_30_DAYS ||
	    f->record_ns - (int64_t)key.utc > NS_30_DAYS) {
		tapfmt_why(why, "ExaLINK keyframe time %" PRIu64 " ns "
			   "implausible (before 2000 or 30 days from the record's "
			   "%" PRId64 ")", key.utc, f->record_ns);
		return -EBADMSG;
	}
	st->prev = st->key;
	st->have_prev = st->have;
	st->key = key;
	st->have = true;
	exa_rate(st);
	return TAPFMT_CONSUMED;
}

/* Ticks from the keyframe's counter to the frame's, the nearest way
 * round the wrap: within ±2^31 ticks (±6.1 s at 350 MHz), or ±2^30 for
 * the 31-bit compat counter (±3.1 s). */
static int64_t exa_ticks(const struct exa_key *k, uint32_t v)
{
	if (k->compat) {
		uint32_t t = ((v & ~0xffu) >> 1) | (v & 0x7fu);
		uint32_t d = (t - (uint32_t)k->counter) & 0x7fffffffu;

		return d >= 0x40000000u ? (int64_t)d - 0x80000000LL : (int64_t)d;
	}
	return (int32_t)(v - (uint32_t)k->counter);
}

/* How far a frame's record may be from the keyframe's before the nearest
 * placement could be the wrong turn of the counter: 4/5 of the half
 * wrap, in ns (4.9 s, 2.5 s compat at 350 MHz). */
static int64_t exa_reach_ns(const struct exa_key *k)
{
	uint64_t half = k->compat ? 1u << 30 : 1u << 31;

	return (int64_t)(half * 1000000000u / k->freq / 5 * 4);
}

static int exalink_decode(void *state, const struct tapfmt_frame *f,
			  struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	struct exa_state *st = state;
	uint32_t off, kind = exa_keyframe_at(f, &off);
	int64_t ticks, ps, dt;
	uint32_t v, tail;
	__int128 x, q;

	if (kind) {
		int rc = exa_keyframe(st, f, off, kind, why);

		if (rc != TAPFMT_NOT_MINE)
			return rc;
	}
	if (!st->have) {
		tapfmt_why(why, "no keyframe yet: its counter cannot be "
			   "placed in time");
		return TAPFMT_NOT_MINE;
	}
	if (f->caplen != f->origlen) {
		tapfmt_why(why, "frame cut at %" PRIu32 " of %" PRIu32
			   " bytes: its ExaLINK counter was not captured",
			   f->caplen, f->origlen);
		return TAPFMT_NOT_MINE;
	}
	dt = f->record_ns - st->key.record_ns;
	if (dt > exa_reach_ns(&st->key) || -dt > exa_reach_ns(&st->key)) {
		tapfmt_why(why, "the latest ExaLINK keyframe is %.3f s "
			   "away: its counter cannot be placed in time",
			   (double)dt / 1e9);
		return TAPFMT_NOT_MINE;
	}
	tail = st->tail ? st->tail : 4;
	if (!st->tail && f->caplen >= EXA_ETH_HLEN + 8) {
		/* The append modes with the FCS captured: a correct FCS
		 * follows the counter. In fcs mode the counter passes for
		 * an FCS once in 2^32 frames; the first frame long enough
		 * decides for the reader. */
		st->tail = tail = 4;
		if (exa_crc32(f->data, f->caplen - 4) ==
		    bytes_get_le32(f->data + f->caplen - 4))
			st->tail = tail = 8;
	}
	if (f->caplen < EXA_ETH_HLEN + tail) {
		tapfmt_why(why, "frame of %" PRIu32 " bytes: too short "
			   "for an ExaLINK counter", f->caplen);
		return TAPFMT_NOT_MINE;
	}
	v = bytes_get_be32(f->data + f->caplen - tail);
	ticks = exa_ticks(&st->key, v);
	/* |ticks| <= 2^31 and num / den about 10 ns a tick at most (freq
	 * >= 100 MHz, a pair's rate within 1000 ppm of it): the ps from
	 * the keyframe fit 64 bits; the product before the division does
	 * not, so it is taken in 128. Floored, so that ps is 0-999 before
	 * the keyframe too. */
	x = (__int128)ticks * st->num * 1000;
	q = x / st->den;
	if (x < 0 && q * st->den != x)
		q--;
	ps = (int64_t)q;
	*s = (struct tapfmt_stamp){
		.ts_ns = (int64_t)st->key.utc + tapfmt_floor_div(ps, 1000),
		.ps = (uint16_t)(ps - tapfmt_floor_div(ps, 1000) * 1000),
		.timescale = TS_SCALE_UTC,
		.tail_len = tail,
	};
	return TAPFMT_STAMPED;
}

const struct tapfmt_ops tapfmt_exalink_ops = {
	.kind = TAPFMT_EXALINK,
	.name = "exalink",
	.what = "ExaLINK Fusion, Cisco Nexus 3550-F (FCS counter, keyframes)",
	.state_size = sizeof(struct exa_state),
	.decode = exalink_decode,
};
