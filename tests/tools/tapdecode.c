/* tapdecode — the stamp formats' decoders (src/files/tap_*.c) called
 * directly on each frame of a file, for the replay tests, until the
 * capture readers apply them (cap_set_tapfmt, capdump --tap):
 *
 *   tapdecode --format metawatch|arista|exablaze|ixia FILE
 *
 * One line per frame:
 *   TS_NS PS CAPLEN_AFTER_CUT DEGRADED DEVICE PORT
 * DEVICE and PORT "-" when the format does not say. A frame without the
 * format's stamp: "- - CAPLEN - - -"; one whose stamp cannot be right:
 * "! - CAPLEN - - -", and the decoder's why on stderr, and exit 1 at the
 * end. The trailer offset is found as tapfmt_trailer_off() will find it:
 * past the IPv4 or IPv6 datagram after Ethernet and one optional 802.1Q
 * or 802.1ad tag.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "files/capfile.h"
#include "files/tapfmt.h"

static const struct tapfmt_ops *const ops_all[] = {
	&tapfmt_metawatch_ops, &tapfmt_arista_ops, &tapfmt_exablaze_ops,
	&tapfmt_ixia_ops,
};

/* Where the bytes past the IP datagram begin, or caplen. */
static uint32_t trailer_off(const uint8_t *d, uint32_t caplen)
{
	uint32_t off = 14, end;
	uint16_t et;

	if (caplen < 14)
		return caplen;
	et = bytes_get_be16(d + 12);
	if (et == 0x8100 || et == 0x88a8) {
		if (caplen < 18)
			return caplen;
		et = bytes_get_be16(d + 16);
		off = 18;
	}
	if (et == 0x0800) {
		if (caplen < off + 20 || d[off] >> 4 != 4 ||
		    bytes_get_be16(d + off + 2) < 20)
			return caplen;
		end = off + bytes_get_be16(d + off + 2);
	} else if (et == 0x86dd) {
		if (caplen < off + 40 || d[off] >> 4 != 6)
			return caplen;
		end = off + 40 + bytes_get_be16(d + off + 4);
	} else {
		return caplen;
	}
	return end < caplen ? end : caplen;
}

int main(int argc, char **argv)
{
	const struct tapfmt_ops *ops = NULL;
	char err[CAP_ERRBUF], why[256];
	struct cap_reader *r;
	struct cap_packet pkt;
	uint64_t n = 0, bad = 0;
	int rc;

	if (argc == 4 && !strcmp(argv[1], "--format"))
		for (size_t i = 0; i < sizeof(ops_all) / sizeof(ops_all[0]); i++)
			if (!strcmp(argv[2], ops_all[i]->name))
				ops = ops_all[i];
	if (!ops) {
		fprintf(stderr, "usage: tapdecode --format metawatch|arista|"
			"exablaze|ixia FILE\n");
		return 1;
	}
	if (cap_open(&r, argv[3], err)) {
		fprintf(stderr, "tapdecode: %s\n", err);
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) == 1) {
		struct tapfmt_frame f = {
			.data = pkt.data, .caplen = pkt.caplen,
			.origlen = pkt.origlen,
			.trailer_off = trailer_off(pkt.data, pkt.caplen),
			.record_ns = pkt.ts_ns,
		};
		struct tapfmt_stamp s;
		int d;

		why[0] = 0;
		d = ops->decode(NULL, &f, &s, why, sizeof(why));
		n++;
		if (d == TAPFMT_STAMPED) {
			char dev[8] = "-", port[8] = "-";

			if (s.has_port) {
				snprintf(dev, sizeof(dev), "%u", s.device);
				snprintf(port, sizeof(port), "%u", s.port);
			}
			printf("%" PRId64 " %u %u %d %s %s\n", s.ts_ns, s.ps,
			       pkt.caplen - s.head_len - s.tail_len, s.degraded,
			       dev, port);
		} else if (d < 0) {
			fprintf(stderr, "tapdecode: %s: packet %" PRIu64 ": %s\n",
				argv[3], n, why);
			printf("! - %u - - -\n", pkt.caplen);
			bad++;
		} else {
			printf("- - %u - - -\n", pkt.caplen);
		}
	}
	if (rc < 0)
		fprintf(stderr, "tapdecode: %s\n", cap_error(r));
	cap_close(r);
	return rc < 0 || bad ? 1 : 0;
}
