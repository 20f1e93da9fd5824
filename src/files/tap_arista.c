/* tap_arista.c — the timestamp header an Arista 7280 (and other Jericho
 * based switches) inserts after the MAC addresses of a frame it mirrors,
 * read as Wireshark's packet-avsp.c reads it:
 *   dst MAC 6, src MAC 6,
 *   EtherType 0xD28B 2, subtype 0x0001 2, version 2,
 *   64-bit versions: seconds 4, ns 4; 48-bit versions: seconds' low 16
 *     bits 2, ns 4 (big-endian),
 *   the frame's own EtherType 2, its payload.
 * Versions: 0x0010 64-bit TAI, 0x0110 64-bit UTC, 0x0020 48-bit TAI,
 * 0x0120 48-bit UTC, and the same plus 1 (0x0011 ...), which current
 * Wireshark decodes alike (Jericho2's).
 *
 * Cut: from the 0xD28B EtherType to the stamp's end, so what is left is
 * the MACs, the frame's own EtherType and its payload.
 *
 * A 48-bit stamp's seconds are completed from the capture record's time:
 * the value with those low 16 bits nearest to it. That is right while the
 * record is within 2^15 s (9 h 6 min) of the stamp; a capture server
 * further off than that gives seconds off by a multiple of 65536.
 *
 * The EtherType marks the header: past it, another subtype, an unknown
 * version, a header cut short, ns past 10^9 or 64-bit seconds more than 30
 * days from the record's are -EBADMSG.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/bytes.h"
#include "files/tapfmt.h"
#include "stamp/ts.h"

#define AR_OFF 12		/* after the MACs */
#define AR_ETHERTYPE 0xd28b
#define AR_SUBTYPE_TIMESTAMP 0x0001
#define AR_FIXED 6		/* EtherType, subtype, version */
#define AR_WINDOW_S (30 * 86400)	/* of the record's seconds */

#define NS_PER_S 1000000000

/* The seconds whose low 16 bits are low, with ns, nearest to record_ns. */
static int64_t ar_complete(uint16_t low, uint32_t ns, int64_t record_ns)
{
	int64_t sec = (tapfmt_floor_div(record_ns, NS_PER_S) & ~(int64_t)0xffff) | low;
	int64_t d = sec * NS_PER_S + ns - record_ns;

	if (d > (int64_t)0x8000 * NS_PER_S)
		sec -= 0x10000;
	else if (d < -(int64_t)0x8000 * NS_PER_S)
		sec += 0x10000;
	return sec;
}

static int ar_decode(void *state, const struct tapfmt_frame *f,
		     struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	const uint8_t *h;
	uint16_t subtype, version;
	uint32_t tslen, ns;
	int64_t sec;
	bool wide, tai;

	(void)state;
	if (f->caplen < AR_OFF + 2 ||
	    bytes_get_be16(f->data + AR_OFF) != AR_ETHERTYPE) {
		tapfmt_why(why, "no Arista EtherType 0xD28B");
		return TAPFMT_NOT_MINE;
	}
	if (f->caplen < AR_OFF + AR_FIXED) {
		tapfmt_why(why, "Arista header cut short: %u bytes captured",
		       f->caplen);
		return -EBADMSG;
	}
	h = f->data + AR_OFF;
	subtype = bytes_get_be16(h + 2);
	version = bytes_get_be16(h + 4);
	if (subtype != AR_SUBTYPE_TIMESTAMP) {
		tapfmt_why(why, "Arista subtype 0x%04x, not a timestamp "
		       "header", subtype);
		return -EBADMSG;
	}
	switch (version & ~1u) {	/* 0x0011 ... (Jericho2) as 0x0010 ... */
	case 0x0010: wide = true; tai = true; break;
	case 0x0110: wide = true; tai = false; break;
	case 0x0020: wide = false; tai = true; break;
	case 0x0120: wide = false; tai = false; break;
	default:
		tapfmt_why(why, "unknown Arista timestamp version 0x%04x",
		       version);
		return -EBADMSG;
	}
	tslen = wide ? 8 : 6;
	/* The stamp and the frame's own EtherType after it. */
	if (f->caplen < AR_OFF + AR_FIXED + tslen + 2) {
		tapfmt_why(why, "Arista timestamp header cut short: %u "
		       "bytes captured", f->caplen);
		return -EBADMSG;
	}
	ns = bytes_get_be32(h + AR_FIXED + tslen - 4);
	if (ns >= NS_PER_S) {
		tapfmt_why(why, "Arista stamp of %u ns: past 10^9", ns);
		return -EBADMSG;
	}
	if (wide) {
		int64_t d;

		sec = bytes_get_be32(h + AR_FIXED);
		d = sec - tapfmt_floor_div(f->record_ns, NS_PER_S);
		if (d > AR_WINDOW_S || d < -AR_WINDOW_S) {
			tapfmt_why(why, "Arista stamp %" PRId64 ".%09u is %"
			       PRId64 " s from the record's time", sec, ns, d);
			return -EBADMSG;
		}
	} else {
		sec = ar_complete(bytes_get_be16(h + AR_FIXED), ns, f->record_ns);
		if (sec < 0) {
			tapfmt_why(why, "Arista 48-bit stamp before 1970 "
			       "(record time %" PRId64 " ns)", f->record_ns);
			return -EBADMSG;
		}
	}
	*s = (struct tapfmt_stamp){
		.ts_ns = sec * NS_PER_S + ns,
		.timescale = tai ? TS_SCALE_TAI : TS_SCALE_UTC,
		.head_off = AR_OFF,
		.head_len = AR_FIXED + tslen,
	};
	return TAPFMT_STAMPED;
}

const struct tapfmt_ops tapfmt_arista_ops = {
	.kind = TAPFMT_ARISTA,
	.name = "arista",
	.what = "Arista 7280 timestamp header (EtherType 0xD28B)",
	.decode = ar_decode,
};
