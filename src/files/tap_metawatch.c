/* tap_metawatch.c — the trailer an Arista 7130 (Metamako) MetaWatch
 * appends to each frame it captures, read as Wireshark's packet-metamako.c
 * reads it.
 *
 * From the end of the frame, as the device sends it:
 *   [new FCS, 4]         only when the capture kept the FCS
 *   flags 1, device 2, port 1
 *   nanoseconds 4, seconds 4 (big-endian)
 *   [extensions]         when flags has 0x02: TLVs, walked from the
 *                        seconds backwards (below)
 *   original FCS 4
 * and before the original FCS, the frame as it crossed the wire: payload,
 * then the padding to the 60-byte minimum.
 *
 * Nothing marks the trailer but its stamp: it is taken when the seconds
 * are past the first hour, the nanoseconds below 10^9 and the seconds
 * within 30 days of the capture record's, first assuming no new FCS, then
 * assuming one, as Wireshark's heuristic does. Seconds that fail this are
 * "no trailer", never an error: random bytes fail it too. Only a plausible
 * stamp whose extensions or original FCS do not fit before it is an error.
 */
#include <errno.h>
#include <stdio.h>

#include "base/bytes.h"
#include "files/tapfmt.h"

#define MW_STAMP_LEN 12			/* seconds, ns, flags/device/port */
#define MW_FCS_LEN 4
#define MW_MIN_SECONDS 3600		/* Wireshark's floor */
#define MW_WINDOW_S (30 * 86400)	/* of the record's seconds */

#define MW_FLAG_HAS_EXT 0x02
#define MW_FLAG_DEGRADED 0x10

/* TLV first word (the word nearest the seconds): tag in bits 0-4, last
 * in bit 5, data words in bits 6-7; tag 0x1F is a secondary tag header
 * whose data words are bits 6-15, plus one. */
#define MW_TLV_TAG(w) ((w) & 0x1f)
#define MW_TLV_LAST(w) (((w) >> 5) & 1)
#define MW_TLV_SECONDARY 0x1f
#define MW_TAG_SUBNS 1

enum mw_try { MW_NONE, MW_FOUND, MW_BROKEN };

struct mw_found {
	uint32_t sec, ns, subns;
	bool has_subns;
	uint8_t flags;
	uint16_t device;
	uint8_t port;
	uint32_t trailer_start;	/* offset of the original FCS */
};

/* Wireshark's validate_metamako_timestamp(), on the record's whole
 * seconds. */
static bool mw_plausible(uint32_t sec, uint32_t ns, int64_t record_s)
{
	int64_t d = (int64_t)sec - record_s;

	return sec > MW_MIN_SECONDS && ns < 1000000000u &&
	       d <= MW_WINDOW_S && d >= -MW_WINDOW_S;
}

/* The trailer ending at end (exclusive) within [start, end): MW_FOUND with
 * *m filled, MW_NONE when the stamp there is not plausible, MW_BROKEN when
 * it is but the extensions or the original FCS do not fit. */
static enum mw_try mw_try(const uint8_t *d, uint32_t start, uint32_t end,
			  int64_t record_s, struct mw_found *m)
{
	uint32_t pos, meta;

	if (end - start < MW_STAMP_LEN)
		return MW_NONE;
	meta = bytes_get_be32(d + end - 4);
	m->ns = bytes_get_be32(d + end - 8);
	m->sec = bytes_get_be32(d + end - 12);
	if (!mw_plausible(m->sec, m->ns, record_s))
		return MW_NONE;
	m->flags = (uint8_t)(meta >> 24);
	m->device = (uint16_t)(meta >> 8);
	m->port = (uint8_t)meta;
	m->has_subns = false;
	pos = end - MW_STAMP_LEN;
	if (m->flags & MW_FLAG_HAS_EXT) {
		/* Each TLV is its first word, then its data words before it
		 * (further from the seconds); the walk ends at the one marked
		 * last, or where no whole word is left, as Wireshark's. */
		while (pos - start >= 4) {
			uint32_t w = bytes_get_be32(d + pos - 4), words;

			pos -= 4;
			words = (w >> 6) & 0x3;
			if (MW_TLV_TAG(w) == MW_TLV_SECONDARY)
				words = ((w >> 6) & 0x3ff) + 1;
			if ((pos - start) / 4 < words)
				return MW_BROKEN;
			pos -= 4 * words;
			/* Sub-nanoseconds: the 24 bits at the start of the
			 * TLV, which with no data word are the first word's
			 * top three bytes (where Wireshark reads them). */
			if (MW_TLV_TAG(w) == MW_TAG_SUBNS && !m->has_subns) {
				const uint8_t *v = d + pos;

				m->subns = (uint32_t)v[0] << 16 | v[1] << 8 | v[2];
				m->has_subns = true;
			}
			if (MW_TLV_LAST(w))
				break;
		}
	}
	if (pos - start < MW_FCS_LEN)
		return MW_BROKEN;
	m->trailer_start = pos - MW_FCS_LEN;
	return MW_FOUND;
}

static int mw_decode(void *state, const struct tapfmt_frame *f,
		     struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	uint32_t start = f->trailer_off < f->caplen ? f->trailer_off : f->caplen;
	int64_t record_s = tapfmt_floor_div(f->record_ns, 1000000000);
	struct mw_found m = { 0 };
	bool broken = false;
	uint32_t bsec = 0, bns = 0;

	(void)state;
	if (f->caplen < f->origlen) {
		tapfmt_why(why, "frame cut to %u of %u bytes: no trailer "
		       "captured", f->caplen, f->origlen);
		return TAPFMT_NOT_MINE;
	}
	/* Without a new FCS, then with one. */
	for (uint32_t fcs = 0; fcs <= MW_FCS_LEN; fcs += MW_FCS_LEN) {
		enum mw_try t;

		if (f->caplen - start < fcs)
			break;
		t = mw_try(f->data, start, f->caplen - fcs, record_s, &m);
		if (t == MW_FOUND)
			goto found;
		if (t == MW_BROKEN && !broken) {
			broken = true;
			bsec = m.sec;
			bns = m.ns;
		}
	}
	if (broken) {
		tapfmt_why(why, "MetaWatch stamp %u.%09u but its extensions "
		       "or original FCS do not fit in the %u trailer bytes",
		       bsec, bns, f->caplen - start);
		return -EBADMSG;
	}
	tapfmt_why(why, "no MetaWatch trailer");
	return TAPFMT_NOT_MINE;

found:
	/* The timescale is the device's PTP or PPS source's: not said. */
	*s = (struct tapfmt_stamp){
		.ts_ns = (int64_t)m.sec * 1000000000 + m.ns,
		.degraded = m.flags & MW_FLAG_DEGRADED,
		.has_port = true,
		.device = m.device,
		.port = m.port,
		.tail_len = f->caplen - m.trailer_start,
	};
	if (m.has_subns) {
		/* A 24-bit binary fraction of a nanosecond, to the nearest ps;
		 * 0xFFFFFF would round to 1000. */
		uint32_t ps = (uint32_t)(((uint64_t)m.subns * 1000 + (1u << 23)) >> 24);

		s->ps = (uint16_t)(ps > 999 ? 999 : ps);
	}
	return TAPFMT_STAMPED;
}

const struct tapfmt_ops tapfmt_metawatch_ops = {
	.kind = TAPFMT_METAWATCH,
	.name = "metawatch",
	.what = "Arista 7130 / Metamako MetaWatch trailer",
	.decode = mw_decode,
};
