/* tap_ixia.c — the trailer an Ixia (Keysight) packet broker appends to each
 * frame, read as Wireshark's packet-ixiatrailer.c reads it:
 *   fields, each type 1, value length 1, value: type 1 the original
 *     frame's length (2), types 3-7 the stamp (8: seconds 4, ns 4,
 *     big-endian), its source 3 local, 4 NTP, 5 GPS, 6 PTP, 7 holdover
 *   the fields' length 1      (10 for a stamp alone)
 *   signature 0xAF12 2
 *   checksum 2                the Internet checksum of all before it
 *   [new FCS 4]               only when the capture kept the FCS
 * after the frame as it crossed the wire (payload, padding to 60 bytes).
 *
 * The signature, a fields' length that fits and a checksum that holds
 * make the trailer: a signature whose checksum fails is taken for bytes
 * that happen to look like one (NOT_MINE). Past those, fields that
 * overrun, a stamp field of the wrong length, no stamp, nanoseconds past
 * 10^9 or seconds more than 30 days from the capture record's are the
 * device's bytes gone wrong: -EBADMSG.
 *
 * Wireshark wants the trailer to be all of the bytes past the padding;
 * here it may start anywhere past the IP datagram, as its length says.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/bytes.h"
#include "files/tapfmt.h"
#include "stamp/ts.h"

#define IXIA_SIGNATURE 0xaf12
#define IXIA_TAIL_LEN 5		/* fields' length, signature, checksum */
#define IXIA_MIN_FIELDS 4	/* Wireshark's 9-byte minimum, less the tail */
#define IXIA_FCS_LEN 4
#define IXIA_WINDOW_S (30 * 86400)	/* of the record's seconds */

#define IXIA_FIELD_ORIGLEN 1
#define IXIA_FIELD_TS_FIRST 3	/* local */
#define IXIA_FIELD_TS_HOLDOVER 7
#define IXIA_TS_LEN 8

/* The Internet checksum (RFC 1071) of len bytes, as the trailer carries
 * it: an odd last byte is the high half of its word. */
static uint16_t ixia_cksum(const uint8_t *p, uint32_t len)
{
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += bytes_get_be16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The stamp in the fields [p, p + len) of a trailer whose checksum holds. */
static int ixia_fields(const uint8_t *p, uint32_t len, int64_t record_s,
		       struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	/* Wireshark walks while 3 or more bytes are left. */
	for (uint32_t off = 0; off + 2 < len;) {
		uint8_t type = p[off], flen = p[off + 1];
		uint32_t sec, ns;
		int64_t d;

		off += 2;
		if (flen > len - off) {
			tapfmt_why(why, "Ixia trailer field %u of %u bytes "
				 "runs past its %u bytes of fields", type, flen, len);
			return -EBADMSG;
		}
		if (type < IXIA_FIELD_TS_FIRST || type > IXIA_FIELD_TS_HOLDOVER) {
			off += flen;	/* the original length, or unknown */
			continue;
		}
		if (flen != IXIA_TS_LEN) {
			tapfmt_why(why, "Ixia stamp field of %u bytes, "
				 "not %u", flen, IXIA_TS_LEN);
			return -EBADMSG;
		}
		sec = bytes_get_be32(p + off);
		ns = bytes_get_be32(p + off + 4);
		if (ns >= 1000000000u) {
			tapfmt_why(why, "Ixia stamp %u s %u ns: ns past 10^9",
				 sec, ns);
			return -EBADMSG;
		}
		d = (int64_t)sec - record_s;
		if (d > IXIA_WINDOW_S || d < -IXIA_WINDOW_S) {
			tapfmt_why(why, "Ixia stamp %u.%09u is %" PRId64
				 " s from the record's time", sec, ns, d);
			return -EBADMSG;
		}
		s->ts_ns = (int64_t)sec * 1000000000 + ns;
		s->degraded = type == IXIA_FIELD_TS_HOLDOVER;
		return TAPFMT_STAMPED;
	}
	tapfmt_why(why, "Ixia trailer without a stamp field");
	return -EBADMSG;
}

static int ixia_decode(void *state, const struct tapfmt_frame *f,
		       struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	uint32_t start = f->trailer_off < f->caplen ? f->trailer_off : f->caplen;
	bool bad_sum = false;

	(void)state;
	if (f->caplen < f->origlen) {
		tapfmt_why(why, "frame cut to %u of %u bytes: no trailer "
			 "captured", f->caplen, f->origlen);
		return TAPFMT_NOT_MINE;
	}
	/* Without a new FCS, then with one. */
	for (uint32_t fcs = 0; fcs <= IXIA_FCS_LEN; fcs += IXIA_FCS_LEN) {
		uint32_t end = f->caplen - fcs, flen, t;
		uint16_t want, got;
		int rc;

		if (f->caplen - start < fcs + IXIA_TAIL_LEN + IXIA_MIN_FIELDS)
			break;
		if (bytes_get_be16(f->data + end - 4) != IXIA_SIGNATURE)
			continue;
		flen = f->data[end - IXIA_TAIL_LEN];
		if (flen < IXIA_MIN_FIELDS ||
		    flen > end - IXIA_TAIL_LEN - start)
			continue;
		t = end - IXIA_TAIL_LEN - flen;
		want = bytes_get_be16(f->data + end - 2);
		got = ixia_cksum(f->data + t, flen + 3);
		if (want != got) {
			bad_sum = true;
			continue;
		}
		*s = (struct tapfmt_stamp){ .timescale = TS_SCALE_UNKNOWN };
		rc = ixia_fields(f->data + t, flen, tapfmt_floor_div(f->record_ns,
				 1000000000), s, why);
		if (rc != TAPFMT_STAMPED)
			return rc;
		s->tail_len = f->caplen - t;
		return TAPFMT_STAMPED;
	}
	if (bad_sum)
		tapfmt_why(why, "Ixia signature, but its checksum fails: "
			 "taken for payload");
	else
		tapfmt_why(why, "no Ixia trailer");
	return TAPFMT_NOT_MINE;
}

const struct tapfmt_ops tapfmt_ixia_ops = {
	.kind = TAPFMT_IXIA,
	.name = "ixia",
	.what = "Ixia (Keysight) packet broker trailer",
	.decode = ixia_decode,
};
