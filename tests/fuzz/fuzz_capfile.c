/* fuzz_capfile — libFuzzer target for the capture readers (pcapng, classic
 * pcap through libpcap, and Endace ERF, which is told by its first records
 * alone: erf-*.erf seeds) and the if_description parser: any input must
 * end in packets, a clean end or -EBADMSG, never a crash, an out-of-bounds
 * read or an unbounded allocation. And a file followed as it grows (written
 * in two pieces cut anywhere, cap_open_follow()) must give exactly the
 * packets and the end that reading it whole gives. `make fuzz` runs it
 * (tests/fuzz/run). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "files/capfile.h"
#include "files/pcapng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the bytes read go, so the reads cannot be optimised away. */
static volatile unsigned fuzz_sink;

#define FUZZ_MAX_PKTS 4096

struct fuzz_pkt {
	uint64_t offset;
	int64_t ts;
	uint32_t caplen, sum;
};

/* Packets of path read whole into v; returns the count, *end the last
 * cap_next() result. */
static unsigned fuzz_whole(const char *path, struct fuzz_pkt *v, int *end)
{
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	unsigned n = 0;
	int rc;

	*end = 1;
	if (cap_open(&r, path, err))
		return 0;
	/* As a followed file is read: records' stamps (tap stamps are
	 * detected only in files read whole, above). */
	cap_set_tapfmt(r, TAPFMT_NONE);
	while ((rc = cap_next(r, &pkt)) == 1 && n < FUZZ_MAX_PKTS) {
		uint32_t sum = 0;

		for (uint32_t i = 0; i < pkt.caplen; i++)
			sum += pkt.data[i];
		v[n++] = (struct fuzz_pkt){ pkt.offset, pkt.ts_ns, pkt.caplen, sum };
	}
	*end = rc;
	cap_close(r);
	return n;
}

/* The same file written in two pieces, cut at `cut`, and followed. */
static void fuzz_follow(const uint8_t *data, size_t size, size_t cut,
			const struct fuzz_pkt *want, unsigned nwant, int wend)
{
	char path[64], err[CAP_ERRBUF];
	struct cap_reader *r = NULL;
	struct cap_packet pkt;
	unsigned n = 0;
	int fd = memfd_create("fuzzf", MFD_CLOEXEC), rc;

	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (write(fd, data, cut) != (ssize_t)cut)
		goto out;
	rc = cap_open_follow(&r, path, err);
	for (int piece = 0; piece < 2; piece++) {
		if (piece == 1) {
			if (write(fd, data + cut, size - cut) != (ssize_t)(size - cut))
				goto out;
			if (!r && (rc = cap_open_follow(&r, path, err)))
				break;
			cap_follow(r, false);	/* the writer is done */
		}
		if (!r)
			continue;
		while ((rc = cap_next(r, &pkt)) == 1 && n < FUZZ_MAX_PKTS) {
			uint32_t sum = 0;

			for (uint32_t i = 0; i < pkt.caplen; i++)
				sum += pkt.data[i];
			if (n >= nwant || want[n].offset != pkt.offset ||
			    want[n].ts != pkt.ts_ns || want[n].caplen != pkt.caplen ||
			    want[n].sum != sum)
				abort();	/* followed != whole */
			n++;
		}
		if (piece == 0 && rc != -EAGAIN && rc != 1)
			break;	/* ended in the first piece: as whole? */
	}
	/* Opened: the same packets and the same end as read whole. */
	if (r && n < FUZZ_MAX_PKTS && (n != nwant || (rc != wend && rc != 1)))
		abort();
out:
	cap_close(r);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_pkt want[FUZZ_MAX_PKTS];
	unsigned nwant;
	int wend;
	char path[64], err[CAP_ERRBUF], desc[512];
	struct pcapng_source src;
	struct cap_reader *r;
	struct cap_packet pkt;
	unsigned sum = 0;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!cap_open(&r, path, err)) {
		while (cap_next(r, &pkt) == 1) {
			/* Touch every byte the reader says is there. */
			for (uint32_t i = 0; i < pkt.caplen; i++)
				sum += pkt.data[i];
			(void)cap_iface(r, pkt.iface)->name[0];
		}
		for (uint32_t i = 0; i < cap_iface_count(r); i++)
			sum += (unsigned)cap_iface(r, i)->linktype;
		(void)cap_error(r);
		cap_close(r);
	}
	fuzz_sink = sum;
	/* Followed in two pieces: pcapng only (classic pcap is read whole). */
	nwant = fuzz_whole(path, want, &wend);
	if (size >= 4 && !memcmp(data, "\x0a\x0d\x0d\x0a", 4) &&
	    nwant < FUZZ_MAX_PKTS)
		fuzz_follow(data, size, size > 1 ? (size_t)data[size - 1] *
			    size / 256 : 0, want, nwant, wend);
	close(fd);

	/* The description parser on the raw input. */
	size = size < sizeof(desc) - 1 ? size : sizeof(desc) - 1;
	memcpy(desc, data, size);
	desc[size] = 0;
	(void)pcapng_parse_description(desc, &src);
	return 0;
}
