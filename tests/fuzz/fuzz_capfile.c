/* fuzz_capfile — libFuzzer target for the capture readers (pcapng, and
 * classic pcap through libpcap) and the if_description parser: any input must
 * end in packets, a clean end or -EBADMSG, never a crash, an out-of-bounds
 * read or an unbounded allocation. `make fuzz` runs it (tests/fuzz/run). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "files/capfile.h"
#include "files/pcapng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the bytes read go, so the reads cannot be optimised away. */
static volatile unsigned fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
	close(fd);

	/* The description parser on the raw input. */
	size = size < sizeof(desc) - 1 ? size : sizeof(desc) - 1;
	memcpy(desc, data, size);
	desc[size] = 0;
	(void)pcapng_parse_description(desc, &src);
	return 0;
}
