/* capgen — write a pcapng of known frames for the replay tests and the
 * writer benchmark.
 *
 *   capgen FILE [COUNT]   COUNT (default 100) Ethernet/IPv4/UDP frames on
 *                         two interfaces (hw and sw), directions alternating
 *                         in, out, unknown; frame i has timestamp
 *                         BASE + i * 1000003 ns and 60 + i % 1000 bytes.
 *   capgen --bench N      write N 64-byte frames to a file in /tmp and print
 *                         the writer's throughput (packets/s, MB/s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files/pcapng.h"
#include "stamp/ts.h"

#define BASE 1763800000123456789LL

static void frame(unsigned char *f, uint32_t len, uint32_t i)
{
	memset(f, 0, len);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	f[14] = 0x45;			/* IPv4, 20-byte header */
	f[16] = (unsigned char)((len - 14) >> 8);
	f[17] = (unsigned char)(len - 14);
	f[22] = 64;			/* TTL */
	f[23] = 17;			/* UDP */
	memcpy(f + 26, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8);	/* 198.18.0.1 -> .2 */
	f[34] = 0x23; f[35] = 0x29;	/* port 9001 */
	f[36] = 0x23; f[37] = 0x2a;	/* port 9002 */
	f[38] = (unsigned char)((len - 34) >> 8);
	f[39] = (unsigned char)(len - 34);
	memcpy(f + 42, &i, 4);
}

static int gen(const char *path, long n)
{
	struct pcapng_section sec = { .hostname = "capgen", .userappl = "capgen" };
	struct pcapng_iface hw = { "eth1", 1, 0, { true, 0, TS_SCALE_TAI, "" }, false };
	struct pcapng_iface sw = { "eth1", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char f[1100];
	uint32_t ids[2];
	int err;

	unlink(path);
	err = pcapng_open(&w, path, &sec);
	if (!err)
		err = pcapng_add_iface(w, &hw, &ids[0]);
	if (!err)
		err = pcapng_add_iface(w, &sw, &ids[1]);
	for (long i = 0; !err && i < n; i++) {
		uint32_t len = 60 + (uint32_t)(i % 1000);

		frame(f, len, (uint32_t)i);
		err = pcapng_write_packet(w, ids[i % 2], BASE + i * 1000003, f,
					  len, len, (enum pcapng_dir)(i % 3 == 0 ?
					  PCAPNG_DIR_IN : i % 3 == 1 ?
					  PCAPNG_DIR_OUT : PCAPNG_DIR_UNKNOWN));
	}
	if (!err)
		err = pcapng_write_stats(w, ids[0], BASE + n * 1000003, (uint64_t)n, 0);
	if (err) {
		fprintf(stderr, "capgen: %s: %s\n", path, strerror(-err));
		pcapng_close(w, true);
		return 1;
	}
	err = pcapng_close(w, false);
	if (err)
		fprintf(stderr, "capgen: %s: %s\n", path, strerror(-err));
	return err ? 1 : 0;
}

static int bench(long n)
{
	struct pcapng_section sec = { .hostname = "bench" };
	struct pcapng_iface ifc = { "eth1", 1, 0, { true, 0, TS_SCALE_TAI, "" }, false };
	char path[64];
	struct pcapng_writer *w;
	struct timespec a, b;
	unsigned char f[64];
	uint64_t bytes;
	uint32_t id;
	double s;

	snprintf(path, sizeof(path), "/tmp/capgen-bench.%d.pcapng", (int)getpid());
	if (pcapng_open(&w, path, &sec) || pcapng_add_iface(w, &ifc, &id))
		return 1;
	frame(f, sizeof(f), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		if (pcapng_write_packet(w, id, BASE + i * 100, f, sizeof(f),
					sizeof(f), PCAPNG_DIR_IN))
			return 1;
	bytes = pcapng_bytes(w);
	/* Includes the flush and the fsync at close: what a rotation costs. */
	if (pcapng_close(w, false))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	unlink(path);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("pcapng writer: %ld packets of 64 bytes in %.3f s: %.0f packets/s, "
	       "%.1f MB/s (file %.1f MB, fsync included)\n", n, s, (double)n / s,
	       (double)bytes / s / 1e6, (double)bytes / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--bench"))
		return bench(atol(argv[2]));
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: capgen FILE [COUNT] | capgen --bench N\n");
		return 1;
	}
	return gen(argv[1], argc == 3 ? atol(argv[2]) : 100);
}
