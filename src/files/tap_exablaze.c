/* tap_exablaze.c — the 16-byte HPT trailer an ExaNIC or a Cisco Nexus 3550
 * (Exablaze) appends to each frame, read as Wireshark's packet-exablaze.c
 * reads it:
 *   original FCS 4, device 1, port 1, seconds 4 (big-endian),
 *   a 40-bit binary fraction of a second 5 (big-endian), reserved 1,
 *   [new FCS 4]          only when the capture kept the FCS
 * after the frame as it crossed the wire (payload, padding to 60 bytes).
 *
 * Nothing marks the trailer but its seconds: it is taken when they are
 * within a week of the capture record's, first assuming no new FCS, then
 * assuming one. Any 40-bit fraction is a valid one, so once the seconds
 * are plausible nothing in the trailer can be absurd: this format never
 * returns -EBADMSG; seconds that are not plausible are "no trailer".
 */
#include <stdio.h>

#include "base/bytes.h"
#include "files/tapfmt.h"

#define EXA_TRAILER_LEN 16
#define EXA_FCS_LEN 4
#define EXA_WINDOW_S (7 * 86400)	/* of the record's seconds */

static int exa_decode(void *state, const struct tapfmt_frame *f,
		      struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF])
{
	uint32_t start = f->trailer_off < f->caplen ? f->trailer_off : f->caplen;
	int64_t record_s = tapfmt_floor_div(f->record_ns, 1000000000);

	(void)state;
	if (f->caplen < f->origlen) {
		tapfmt_why(why, "frame cut to %u of %u bytes: no trailer "
			"captured", f->caplen, f->origlen);
		return TAPFMT_NOT_MINE;
	}
	for (uint32_t fcs = 0; fcs <= EXA_FCS_LEN; fcs += EXA_FCS_LEN) {
		const uint8_t *t;
		uint32_t off, sec;
		uint64_t frac, scaled;
		int64_t d;

		if (f->caplen - start < EXA_TRAILER_LEN + fcs)
			break;
		off = f->caplen - fcs - EXA_TRAILER_LEN;
		t = f->data + off;
		sec = bytes_get_be32(t + 6);
		d = (int64_t)sec - record_s;
		if (d > EXA_WINDOW_S || d < -EXA_WINDOW_S)
			continue;
		frac = (uint64_t)t[10] << 32 | bytes_get_be32(t + 11);
		/* frac / 2^40 s = frac * 5^9 / 2^31 ns (10^9 = 2^9 * 5^9),
		 * below 2^61: exact in 64 bits. Its floor is what Wireshark
		 * shows, (int)(ldexp(frac, -40) * 1e9): the double product
		 * rounds to nearest and the integer below the exact value is
		 * a double, so it never lands under it. */
		scaled = frac * 1953125u;
		*s = (struct tapfmt_stamp){
			.ts_ns = (int64_t)sec * 1000000000 + (int64_t)(scaled >> 31),
			/* What is left, in whole ps (the fraction's step is
			 * 0.91 ps). */
			.ps = (uint16_t)(((scaled & 0x7fffffffu) * 1000) >> 31),
			.has_port = true,
			.device = t[4],
			.port = t[5],
			.tail_len = f->caplen - off,
		};
		return TAPFMT_STAMPED;
	}
	tapfmt_why(why, "no Exablaze trailer");
	return TAPFMT_NOT_MINE;
}

const struct tapfmt_ops tapfmt_exablaze_ops = {
	.kind = TAPFMT_EXABLAZE,
	.name = "exablaze",
	.what = "ExaNIC / Cisco Nexus 3550 (Exablaze) HPT trailer",
	.decode = exa_decode,
};
