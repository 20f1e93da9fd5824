/* tapwrite — a capture as a tap or timestamping switch would have handed
 * it over, for the tests of the stamp formats (src/files/tap_*.c):
 *
 *   tapwrite --format metawatch|arista|arista48|exablaze|ixia
 *            [--record-offset-ms N] [--degraded-every K] IN OUT
 *
 * reads IN (pcapng or pcap, Ethernet) and writes OUT, a classic pcap with
 * nanosecond stamps, where each frame carries the device's stamp, which is
 * the packet's stamp in IN, and the record's stamp is that plus N ms (the
 * capture server's clock, off: a reader that takes the record's stamp is
 * visibly wrong). Every K-th frame (K > 0) has the device's degraded
 * flag (MetaWatch) or a holdover source (Ixia); the other formats have
 * none.
 *
 * Each frame is first padded with zeros to 60 bytes, as it crossed the
 * wire, then:
 *   metawatch  its FCS (CRC-32), on 2 frames in 3 the extensions (a
 *              sequence number marked last, then sub-nanoseconds, a
 *              made-up fraction), seconds, ns, flags, device 0x0100 +
 *              interface, port = interface + 1
 *   exablaze   its FCS, device 3, port = interface + 1, seconds, the
 *              40-bit fraction ceil(ns * 2^40 / 10^9) plus a made-up
 *              part of a ns (still ns when truncated), a reserved 0
 *   ixia       on odd frames an original-length field (the frame with
 *              its FCS), the stamp field (source PTP, or holdover),
 *              their length, 0xAF12, the checksum
 *   arista     the header after the MACs: version 0x0010, 64-bit TAI
 *              (the input's UTC stamp + 37 s, as a device on TAI says)
 *   arista48   version 0x0120, 48-bit UTC (the seconds' low 16 bits)
 * and the trailers on odd frames a new FCS after them (a capture that
 * kept it). A frame cut by the snapshot length is written as it is.
 * Prints the counts on stderr.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "files/capfile.h"

#define NS 1000000000LL
#define MAXFRAME (65536 + 64)

enum fmt { F_METAWATCH, F_ARISTA, F_ARISTA48, F_EXABLAZE, F_IXIA };

static const char *const fmt_names[] = {
	"metawatch", "arista", "arista48", "exablaze", "ixia",
};

/* IEEE 802.3 CRC-32, as the FCS carries it (least significant byte first
 * on the wire). */
static uint32_t crc32_802(const uint8_t *p, uint32_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? c >> 1 ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static uint32_t put_fcs(uint8_t *b, uint32_t n)
{
	uint32_t c = crc32_802(b, n);

	b[n] = (uint8_t)c;
	b[n + 1] = (uint8_t)(c >> 8);
	b[n + 2] = (uint8_t)(c >> 16);
	b[n + 3] = (uint8_t)(c >> 24);
	return n + 4;
}

static uint32_t metawatch(uint8_t *b, uint32_t n, uint64_t i, uint32_t sec,
			  uint32_t ns, bool degraded, uint32_t iface)
{
	uint8_t flags = 0x01;	/* original FCS valid */

	n = put_fcs(b, n);
	if (i % 3) {
		uint32_t subns = (uint32_t)(i * 2654435761u) & 0xffffff;

		flags |= 0x02;
		/* Sequence number (tag 0, in bytes 1-2), marked last: the
		 * walk from the seconds meets it second. */
		bytes_put_be32(b + n, (uint32_t)(i & 0xffff) << 8 | 0x20 | 0);
		/* Sub-nanoseconds (tag 1, the top 24 bits). */
		bytes_put_be32(b + n + 4, subns << 8 | 1);
		n += 8;
	}
	if (degraded)
		flags |= 0x10;
	bytes_put_be32(b + n, sec);
	bytes_put_be32(b + n + 4, ns);
	b[n + 8] = flags;
	bytes_put_be16(b + n + 9, (uint16_t)(0x100 + iface));
	b[n + 11] = (uint8_t)(iface + 1);
	return n + 12;
}

static uint32_t exablaze(uint8_t *b, uint32_t n, uint64_t i, uint32_t sec,
			 uint32_t ns, uint32_t iface)
{
	/* ceil(ns * 2^40 / 10^9) = ceil(ns * 2^31 / 5^9), below 2^61,
	 * plus a made-up part of a ns: under 1099 steps of 2^-40 s (0.91
	 * ps), so the whole stays below ns + 1. */
	uint64_t frac = ((uint64_t)ns << 31) + 1953124u;

	frac = frac / 1953125u + i * 337 % 1099;
	n = put_fcs(b, n);
	b[n] = 3;
	b[n + 1] = (uint8_t)(iface + 1);
	bytes_put_be32(b + n + 2, sec);
	b[n + 6] = (uint8_t)(frac >> 32);
	bytes_put_be32(b + n + 7, (uint32_t)frac);
	b[n + 11] = 0;
	return n + 12;
}

static uint32_t ixia(uint8_t *b, uint32_t n, uint64_t i, uint32_t sec,
		     uint32_t ns, bool degraded)
{
	uint32_t t = n, sum = 0;

	if (i & 1) {
		b[n] = 1;
		b[n + 1] = 2;
		bytes_put_be16(b + n + 2, (uint16_t)(t + 4));
		n += 4;
	}
	b[n] = degraded ? 7 : 6;
	b[n + 1] = 8;
	bytes_put_be32(b + n + 2, sec);
	bytes_put_be32(b + n + 6, ns);
	n += 10;
	b[n] = (uint8_t)(n - t);
	bytes_put_be16(b + n + 1, 0xaf12);
	n += 3;
	for (uint32_t k = t; k < n; k += 2)
		sum += (uint32_t)b[k] << 8 | (k + 1 < n ? b[k + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	bytes_put_be16(b + n, (uint16_t)~sum);
	return n + 2;
}

static uint32_t arista(uint8_t *b, uint32_t n, bool wide, int64_t sec, uint32_t ns)
{
	uint32_t hl = wide ? 14 : 12;

	memmove(b + 12 + hl, b + 12, n - 12);
	bytes_put_be16(b + 12, 0xd28b);
	bytes_put_be16(b + 14, 0x0001);
	bytes_put_be16(b + 16, wide ? 0x0010 : 0x0120);
	if (wide) {
		/* TAI: the input is UTC (tapless sim's tap), TAI - UTC 37 s. */
		bytes_put_be32(b + 18, (uint32_t)(sec + 37));
		bytes_put_be32(b + 22, ns);
	} else {
		bytes_put_be16(b + 18, (uint16_t)sec);
		bytes_put_be32(b + 20, ns);
	}
	return n + hl;
}

static void usage(void)
{
	fprintf(stderr, "usage: tapwrite --format metawatch|arista|arista48|"
		"exablaze|ixia [--record-offset-ms N] [--degraded-every K] "
		"IN OUT\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "record-offset-ms", required_argument, NULL, 'o' },
		{ "degraded-every", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	static uint8_t buf[MAXFRAME];
	int fmt = -1, c, rc;
	long long offset_ms = 0;
	unsigned long long every = 0;
	uint64_t i = 0, stamped = 0, snapped = 0, degraded_n = 0;
	char err[CAP_ERRBUF], *end;
	struct cap_reader *r;
	struct cap_packet pkt;
	pcap_t *p;
	pcap_dumper_t *dump;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (size_t k = 0; k < sizeof(fmt_names) / sizeof(fmt_names[0]); k++)
				if (!strcmp(optarg, fmt_names[k]))
					fmt = (int)k;
			if (fmt < 0)
				usage();
			break;
		case 'o':
			offset_ms = strtoll(optarg, &end, 10);
			if (*end || !*optarg)
				usage();
			break;
		case 'k':
			every = strtoull(optarg, &end, 10);
			if (*end || !*optarg)
				usage();
			break;
		default:
			usage();
		}
	}
	if (fmt < 0 || argc - optind != 2)
		usage();
	if (cap_open(&r, argv[optind], err)) {
		fprintf(stderr, "tapwrite: %s\n", err);
		return 1;
	}
	p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
						 PCAP_TSTAMP_PRECISION_NANO);
	if (!p || !(dump = pcap_dump_open(p, argv[optind + 1]))) {
		fprintf(stderr, "tapwrite: %s: %s\n", argv[optind + 1],
			p ? pcap_geterr(p) : "pcap_open_dead failed");
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) == 1) {
		const struct cap_iface *ifc = cap_iface(r, pkt.iface);
		int64_t sec = pkt.ts_ns / NS, rec = pkt.ts_ns + offset_ms * 1000000;
		uint32_t ns = (uint32_t)(pkt.ts_ns % NS), n = pkt.caplen;
		bool degraded = every && i % every == every - 1;
		struct pcap_pkthdr h;

		if (!ifc || ifc->linktype != DLT_EN10MB) {
			fprintf(stderr, "tapwrite: %s: packet %" PRIu64 " is not "
				"Ethernet\n", argv[optind], i);
			return 1;
		}
		if (pkt.ts_ns < 0 || n > 65535) {
			fprintf(stderr, "tapwrite: %s: packet %" PRIu64 ": stamp "
				"or length out of range\n", argv[optind], i);
			return 1;
		}
		memcpy(buf, pkt.data, n);
		if (pkt.caplen == pkt.origlen) {
			for (; n < 60; n++)
				buf[n] = 0;
			switch (fmt) {
			case F_METAWATCH:
				n = metawatch(buf, n, i, (uint32_t)sec, ns, degraded,
					      pkt.iface);
				break;
			case F_EXABLAZE:
				n = exablaze(buf, n, i, (uint32_t)sec, ns, pkt.iface);
				break;
			case F_IXIA:
				n = ixia(buf, n, i, (uint32_t)sec, ns, degraded);
				break;
			default:
				n = arista(buf, n, fmt == F_ARISTA, sec, ns);
				break;
			}
			if ((i & 1) && fmt != F_ARISTA && fmt != F_ARISTA48)
				n = put_fcs(buf, n);
			stamped++;
			degraded_n += degraded && (fmt == F_METAWATCH || fmt == F_IXIA);
		} else {
			snapped++;
		}
		h.ts.tv_sec = (time_t)(rec / NS);
		h.ts.tv_usec = (suseconds_t)(rec % NS);	/* ns: NANO precision */
		h.caplen = n;
		h.len = pkt.caplen == pkt.origlen ? n : pkt.origlen;
		pcap_dump((u_char *)dump, &h, buf);
		i++;
	}
	if (rc < 0) {
		fprintf(stderr, "tapwrite: %s\n", cap_error(r));
		return 1;
	}
	pcap_dump_close(dump);
	pcap_close(p);
	cap_close(r);
	fprintf(stderr, "tapwrite: %" PRIu64 " frames, %" PRIu64 " stamped (%s), "
		"%" PRIu64 " degraded, %" PRIu64 " cut by the snapshot length "
		"left as they were\n", i, stamped, fmt_names[fmt], degraded_n,
		snapped);
	return 0;
}
