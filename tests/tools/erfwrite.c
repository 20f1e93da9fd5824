/* erfwrite — write a capture's Ethernet frames as an Endace ERF file
 * (erf_format.h), as a DAG card would have recorded them, for the tests of
 * the ERF reader against Wireshark's.
 *
 *   erfwrite [--offset-ns N] IN OUT
 *
 * IN is anything cap_open() reads (pcap, pcapng). Each Ethernet frame
 * becomes one ERF_TYPE_ETH record: stamp = the packet's + N ns (N may be
 * negative), interface = the packet's modulo 4, wlen = its original length,
 * the varying-length flag set. A whole frame's record is padded to a
 * multiple of 8 bytes, as the cards do (the reader takes the frame as at
 * most wlen bytes, so the pad is not frame); a frame cut short is written
 * unpadded, since there the pad could not be told from frame. Frames of
 * other link types are skipped and counted. Exit 1, with a message naming
 * the file, on a bad input or a stamp or length ERF cannot hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "files/capfile.h"
#include "files/erf_format.h"

#define ERF_LINK_ETHERNET 1

/* ns since 1970 as ERF's 32.32 fixed point: the fraction rounded to the
 * nearest 2^-32 s, finer than 1 ns, so the reader's rounding back to the
 * nearest ns gives ns exactly. Not in 1970's first second: readers take
 * a record stamped 0 s for something other than ERF. */
static int erf_ts(int64_t ns, uint64_t *ts)
{
	uint64_t sec, frac;

	if (ns < 1000000000 || ns / 1000000000 > UINT32_MAX)
		return -ERANGE;
	sec = (uint64_t)ns / 1000000000;
	frac = (((uint64_t)ns % 1000000000 << 32) + 500000000) / 1000000000;
	*ts = sec << 32 | frac;
	return 0;
}

static int put_record(FILE *out, const struct cap_packet *pkt, int64_t off_ns,
		      uint64_t n, const char *in)
{
	static const unsigned char zeros[8];
	unsigned char h[ERF_HDR_LEN + ERF_ETH_PAD_LEN] = { 0 };
	uint32_t rlen = ERF_HDR_LEN + ERF_ETH_PAD_LEN + pkt->caplen, pad = 0;
	int64_t ns;
	uint64_t ts;

	if (__builtin_add_overflow(pkt->ts_ns, off_ns, &ns) || erf_ts(ns, &ts)) {
		fprintf(stderr, "erfwrite: %s: packet %" PRIu64 ": stamp %" PRId64
			" + %" PRId64 " ns is outside the 1 s to 2^32 s after 1970 "
			"that ERF holds\n", in, n,
			pkt->ts_ns, off_ns);
		return -1;
	}
	if (pkt->origlen > ERF_MAX_RECORD || rlen > ERF_MAX_RECORD) {
		fprintf(stderr, "erfwrite: %s: packet %" PRIu64 ": %u bytes are "
			"too long for an ERF record\n", in, n, pkt->origlen);
		return -1;
	}
	if (pkt->caplen == pkt->origlen && rlen % 8 && rlen + 8 - rlen % 8 <= ERF_MAX_RECORD)
		pad = 8 - rlen % 8;
	bytes_put_le64(h, ts);
	h[8] = ERF_TYPE_ETH;
	h[9] = (unsigned char)((pkt->iface % 4) | ERF_FLAG_VLEN);
	bytes_put_be16(h + 10, (uint16_t)(rlen + pad));
	bytes_put_be16(h + 14, (uint16_t)pkt->origlen);
	if (fwrite(h, 1, sizeof(h), out) != sizeof(h) ||
	    fwrite(pkt->data, 1, pkt->caplen, out) != pkt->caplen ||
	    fwrite(zeros, 1, pad, out) != pad)
		return -1;
	return 0;
}

static int convert(struct cap_reader *r, FILE *out, int64_t off_ns,
		   const char *in, const char *path)
{
	struct cap_packet pkt;
	uint64_t n = 0, written = 0, skipped = 0;
	int rc;

	while ((rc = cap_next(r, &pkt)) == 1) {
		n++;
		if (cap_iface(r, pkt.iface)->linktype != ERF_LINK_ETHERNET) {
			skipped++;
			continue;
		}
		if (put_record(out, &pkt, off_ns, n, in)) {
			if (ferror(out))
				fprintf(stderr, "erfwrite: %s: %s\n", path, strerror(errno));
			return -1;
		}
		written++;
	}
	if (rc < 0) {
		fprintf(stderr, "erfwrite: %s\n", cap_error(r));
		return -1;
	}
	printf("erfwrite: %" PRIu64 " records written to %s, %" PRIu64
	       " frames of other link types skipped\n", written, path, skipped);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: erfwrite [--offset-ns N] IN OUT\n");
	return 1;
}

int main(int argc, char **argv)
{
	char err[CAP_ERRBUF], *end;
	struct cap_reader *r;
	int64_t off_ns = 0;
	FILE *out;
	int rc, a = 1;

	if (argc == 5 && !strcmp(argv[1], "--offset-ns")) {
		errno = 0;
		off_ns = strtoll(argv[2], &end, 10);
		if (errno || end == argv[2] || *end) {
			fprintf(stderr, "erfwrite: --offset-ns %s: not a whole "
				"number of ns\n", argv[2]);
			return 1;
		}
		a = 3;
	}
	if (argc - a != 2)
		return usage();
	if (cap_open(&r, argv[a], err)) {
		fprintf(stderr, "erfwrite: %s\n", err);
		return 1;
	}
	out = fopen(argv[a + 1], "wb");
	if (!out) {
		fprintf(stderr, "erfwrite: %s: %s\n", argv[a + 1], strerror(errno));
		cap_close(r);
		return 1;
	}
	rc = convert(r, out, off_ns, argv[a], argv[a + 1]);
	cap_close(r);
	if (fclose(out) && !rc) {
		fprintf(stderr, "erfwrite: %s: %s\n", argv[a + 1], strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(argv[a + 1]);	/* no half file for a test to trust */
	return rc ? 1 : 0;
}
