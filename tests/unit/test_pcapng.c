/* test_pcapng.c — the pcapng writer and the capture readers: round trip,
 * atomic naming, truncated and hostile files, the other byte order, several
 * sections, and classic pcap (µs and ns) through libpcap. */
#include <byteswap.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/capfile.h"
#include "files/pcapng.h"
#include "files/pcapng_format.h"
#include "stamp/ts.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "pcapng");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

#define NPKT 300

static int64_t pkt_ts(int i)
{
	/* Nanoseconds that need all 64 bits, and odd ones. */
	return 1763800000123456789LL + (int64_t)i * 1000003;
}

static uint32_t pkt_len(int i)
{
	return (uint32_t)(1 + (i * 37) % 1600);
}

/* Write NPKT packets over two interfaces (hw and sw); returns the path. */
static const char *write_sample(const char *name)
{
	static char final[128];
	struct pcapng_section sec = { .hostname = "algo1", .userappl = "test" };
	struct pcapng_iface hw = { "eth1", 1, 0, { true, 2, TS_SCALE_TAI, "rx all" }, false };
	struct pcapng_iface sw = { "eth1", 1, 96, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char data[1600];
	uint32_t id_hw, id_sw;

	snprintf(final, sizeof(final), "%s", path_of(name));
	ck_assert_int_eq(pcapng_open(&w, final, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &hw, &id_hw), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &sw, &id_sw), 0);
	ck_assert_uint_eq(id_hw, 0);
	ck_assert_uint_eq(id_sw, 1);
	for (int i = 0; i < NPKT; i++) {
		for (uint32_t k = 0; k < pkt_len(i); k++)
			data[k] = (unsigned char)(i + k);
		ck_assert_int_eq(pcapng_write_packet(w, i % 2 ? id_sw : id_hw,
			pkt_ts(i), data, pkt_len(i), pkt_len(i) + (i % 3),
			(enum pcapng_dir)(i % 3)), 0);
	}
	ck_assert_int_eq(pcapng_write_stats(w, id_hw, pkt_ts(NPKT), NPKT / 2, 7), 0);
	/* Not under its final name until closed. */
	ck_assert(!exists(final));
	ck_assert_int_eq(pcapng_close(w, false), 0);
	ck_assert(exists(final));
	return final;
}

static int read_all(const char *p, int *npkt, char err[CAP_ERRBUF])
{
	struct cap_reader *r;
	struct cap_packet pkt;
	int rc;

	*npkt = 0;
	rc = cap_open(&r, p, err);
	if (rc)
		return rc;
	while ((rc = cap_next(r, &pkt)) == 1)
		(*npkt)++;
	snprintf(err, CAP_ERRBUF, "%s", cap_error(r));
	cap_close(r);
	return rc;
}

START_TEST(round_trip)
{
	const char *p = write_sample("a.pcapng");
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	struct cap_stats st;
	const struct cap_iface *ifc;

	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	ck_assert_int_eq(cap_format(r), CAP_PCAPNG);
	for (int i = 0; i < NPKT; i++) {
		uint32_t snap = i % 2 ? 96 : 1600;
		uint32_t want = pkt_len(i) < snap ? pkt_len(i) : snap;

		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert(pkt.ts_ns == pkt_ts(i));
		ck_assert_uint_eq(pkt.iface, (uint32_t)(i % 2));
		ck_assert_uint_eq(pkt.caplen, want);
		ck_assert_uint_eq(pkt.origlen, pkt_len(i) + (i % 3));
		ck_assert_int_eq(pkt.dir, i % 3);
		for (uint32_t k = 0; k < pkt.caplen; k++)
			ck_assert_uint_eq(pkt.data[k], (unsigned char)(i + k));
	}
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	ck_assert_str_eq(cap_error(r), "");
	ck_assert_uint_eq(cap_iface_count(r), 2);
	ifc = cap_iface(r, 0);
	ck_assert_str_eq(ifc->name, "eth1");
	ck_assert_int_eq(ifc->resolution_ns, 1);
	ck_assert(ifc->src_known);
	ck_assert(ifc->src.hw);
	ck_assert_int_eq(ifc->src.phc, 2);
	ck_assert_int_eq(ifc->src.timescale, TS_SCALE_TAI);
	ck_assert_str_eq(ifc->src.note, "rx all");
	ifc = cap_iface(r, 1);
	ck_assert(ifc->src_known && !ifc->src.hw);
	ck_assert_int_eq(ifc->src.timescale, TS_SCALE_UTC);
	ck_assert_ptr_null(cap_iface(r, 2));
	cap_stats(r, &st);
	ck_assert_uint_eq(st.packets, NPKT);
	ck_assert_uint_eq(st.blocks_skipped, 1);	/* the ISB */
	cap_close(r);
}
END_TEST

/* A packet that crosses two ports (a switch's ingress and egress) keeps
 * one epb_packetid; packets written without one read back without one, and
 * the id sits beside epb_flags without disturbing it. */
START_TEST(packet_id_round_trip)
{
	struct pcapng_section sec = { .hostname = "sw", .userappl = "test" };
	struct pcapng_iface p1 = { "p1", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_iface p2 = { "p2", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	const char *p = path_of("id.pcapng");
	char ebuf[CAP_ERRBUF];
	struct pcapng_writer *w;
	struct cap_reader *r;
	struct cap_packet pkt;
	unsigned char data[64] = { 0 };
	uint32_t i1, i2;

	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &p1, &i1), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &p2, &i2), 0);
	for (int i = 0; i < 50; i++) {
		uint64_t id = 0xfedcba9876543210ULL + (uint64_t)i;

		data[0] = (unsigned char)i;
		ck_assert_int_eq(pcapng_write_packet_id(w, i1, pkt_ts(2 * i),
			data, 60, 60, PCAPNG_DIR_IN, &id), 0);
		ck_assert_int_eq(pcapng_write_packet_id(w, i2,
			pkt_ts(2 * i + 1), data, 60, 60,
			i % 5 ? PCAPNG_DIR_OUT : PCAPNG_DIR_UNKNOWN, &id), 0);
		ck_assert_int_eq(pcapng_write_packet(w, i2, pkt_ts(2 * i + 1),
			data, 60, 60, PCAPNG_DIR_OUT), 0);
	}
	ck_assert_int_eq(pcapng_close(w, false), 0);
	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	for (int i = 0; i < 50; i++) {
		uint64_t id = 0xfedcba9876543210ULL + (uint64_t)i;

		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert(pkt.has_packet_id);
		ck_assert(pkt.packet_id == id);
		ck_assert_int_eq(pkt.dir, PCAPNG_DIR_IN);
		ck_assert_uint_eq(pkt.data[0], (unsigned)i);
		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert(pkt.has_packet_id);
		ck_assert(pkt.packet_id == id);
		ck_assert_int_eq(pkt.dir, i % 5 ? PCAPNG_DIR_OUT : PCAPNG_DIR_UNKNOWN);
		ck_assert_uint_eq(pkt.iface, i2);
		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert(!pkt.has_packet_id);
		ck_assert_int_eq(pkt.dir, PCAPNG_DIR_OUT);
	}
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	cap_close(r);
}
END_TEST

/* An EPB as pcapng_block() and pcapng_opt() laid one out before the writer
 * built them in one pass: header, fixed body, data padded to 4, epb_flags
 * (when a direction is known), epb_packetid, end of options, trailer. */
static size_t ref_epb(unsigned char *b, uint32_t id, int64_t ts,
		      const unsigned char *d, uint32_t caplen, uint32_t origlen,
		      uint32_t flags, const uint64_t *pid)
{
	uint32_t v[7] = { PCAPNG_BT_EPB, 0, id, (uint32_t)((uint64_t)ts >> 32),
			  (uint32_t)ts, caplen, origlen };
	uint16_t oh[2];
	size_t n = sizeof(v);

	memcpy(b + n, d, caplen);
	n += caplen;
	while (n % 4)
		b[n++] = 0;
	if (flags) {
		oh[0] = PCAPNG_EPB_FLAGS, oh[1] = 4;
		memcpy(b + n, oh, 4);
		memcpy(b + n + 4, &flags, 4);
		n += 8;
	}
	if (pid) {
		oh[0] = PCAPNG_EPB_PACKETID, oh[1] = 8;
		memcpy(b + n, oh, 4);
		memcpy(b + n + 4, pid, 8);
		n += 12;
	}
	if (flags || pid) {
		memset(b + n, 0, 4);
		n += 4;
	}
	n += 4;
	v[1] = (uint32_t)n;
	memcpy(b, v, sizeof(v));
	memcpy(b + n - 4, &v[1], 4);
	return n;
}

/* The packet blocks, byte for byte: every direction, with and without a
 * packet id, every padding, and a frame cut to the interface's snaplen. */
START_TEST(epb_bytes)
{
	struct pcapng_section sec = { .hostname = "h", .userappl = "test" };
	struct pcapng_iface i0 = { "e0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_iface i1 = { "e1", 1, 96, { false, -1, TS_SCALE_UTC, "" }, false };
	const char *p = path_of("epb.pcapng");
	static unsigned char file[1 << 16], want[1 << 16];
	unsigned char data[100];
	struct pcapng_writer *w;
	size_t nwant = 0, nfile, off = 0, epbs = 0;
	uint32_t id0, id1, type, len;
	FILE *f;

	for (unsigned k = 0; k < sizeof(data); k++)
		data[k] = (unsigned char)(0xa0 + k);
	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &i0, &id0), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &i1, &id1), 0);
	for (uint32_t d = 0; d <= 2; d++)
		for (int with_id = 0; with_id <= 1; with_id++)
			for (uint32_t cl = 0; cl <= 6; cl++) {
				uint64_t pid = 0x0102030405060708ULL * (cl + 1);
				int64_t ts = pkt_ts((int)(d * 20 + cl));

				ck_assert_int_eq(pcapng_write_packet_id(w, id0, ts,
					data, cl, cl + 7, (enum pcapng_dir)d,
					with_id ? &pid : NULL), 0);
				nwant += ref_epb(want + nwant, id0, ts, data, cl,
						 cl + 7, d, with_id ? &pid : NULL);
			}
	/* Cut to 96 bytes; the original length is kept. */
	ck_assert_int_eq(pcapng_write_packet(w, id1, pkt_ts(99), data, 100, 100,
					     PCAPNG_DIR_OUT), 0);
	nwant += ref_epb(want + nwant, id1, pkt_ts(99), data, 96, 100, 2, NULL);
	/* origlen below caplen is raised to it. */
	ck_assert_int_eq(pcapng_write_packet(w, id0, pkt_ts(98), data, 9, 3,
					     PCAPNG_DIR_IN), 0);
	nwant += ref_epb(want + nwant, id0, pkt_ts(98), data, 9, 9, 1, NULL);
	ck_assert_int_eq(pcapng_close(w, false), 0);

	f = fopen(p, "rb");
	ck_assert_ptr_nonnull(f);
	nfile = fread(file, 1, sizeof(file), f);
	fclose(f);
	/* Skip the section and interface blocks; the rest is the EPBs. */
	while (off + 8 <= nfile) {
		memcpy(&type, file + off, 4);
		memcpy(&len, file + off + 4, 4);
		if (type == PCAPNG_BT_EPB)
			break;
		off += len;
	}
	ck_assert_uint_eq(nfile - off, nwant);
	ck_assert_int_eq(memcmp(file + off, want, nwant), 0);
	for (size_t b = off; b < nfile; b += len, epbs++)
		memcpy(&len, file + b + 4, 4);
	ck_assert_uint_eq(epbs, 3 * 2 * 7 + 2);
}
END_TEST

START_TEST(discard_and_exclusive)
{
	struct pcapng_section sec = { 0 };
	struct pcapng_writer *w, *w2;
	const char *p = path_of("d.pcapng");
	char part[160];

	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	/* A second writer on the same name is refused, not interleaved. */
	ck_assert_int_eq(pcapng_open(&w2, p, &sec), -EEXIST);
	snprintf(part, sizeof(part), "%s.part", p);
	ck_assert(exists(part));
	ck_assert_int_eq(pcapng_close(w, true), 0);
	ck_assert(!exists(part));
	ck_assert(!exists(p));
}
END_TEST

/* A write that fails part way (a full disk, here a file size limit): the
 * file is cut back to its last whole block, stays under .part, reads to its
 * end, and the packets that did not reach it are counted. */
START_TEST(failed_flush_counts_and_cuts)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct pcapng_iface sw = { "eth1", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct rlimit old, lim;
	const char *p = path_of("full.pcapng");
	struct pcapng_writer *w;
	unsigned char data[1600] = { 0 };
	char part[160], err[CAP_ERRBUF];
	uint64_t lost;
	uint32_t id;
	int n;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = (struct rlimit){ 100000, old.rlim_max };	/* soft: put back */
	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &sw, &id), 0);
	for (int i = 0; i < NPKT; i++)
		ck_assert_int_eq(pcapng_write_packet(w, id, pkt_ts(i), data,
			pkt_len(i), pkt_len(i), PCAPNG_DIR_IN), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_int_eq(pcapng_flush(w), -EFBIG);
	lost = pcapng_lost(w);
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_lt(lost, NPKT);
	/* Sticky: later packets are refused, not counted as taken. */
	ck_assert_int_eq(pcapng_write_packet(w, id, pkt_ts(0), data, 10, 10,
					     PCAPNG_DIR_IN), -EFBIG);
	ck_assert_uint_eq(pcapng_lost(w), lost);
	ck_assert_int_eq(pcapng_close(w, false), -EFBIG);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	snprintf(part, sizeof(part), "%s.part", p);
	ck_assert(!exists(p));
	ck_assert(exists(part));
	ck_assert_int_eq(read_all(part, &n, err), 0);
	ck_assert_int_eq((uint64_t)n + lost, NPKT);
}
END_TEST

/* A write that fails before a whole block reaches the file (here in the
 * section header): nothing worth keeping, so neither the final name nor
 * the .part is left. */
START_TEST(failed_flush_nothing_kept)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct rlimit old, lim;
	const char *p = path_of("empty.pcapng");
	struct pcapng_writer *w;
	char part[160];

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = (struct rlimit){ 10, old.rlim_max };	/* soft: put back */
	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_int_eq(pcapng_close(w, false), -EFBIG);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	snprintf(part, sizeof(part), "%s.part", p);
	ck_assert(!exists(p));
	ck_assert(!exists(part));
}
END_TEST

/* Link events (an ISB with a PCAPNG_LINK_* comment) are read back into
 * the reader's stats, between packets that still all read. */
START_TEST(link_events_round_trip)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct pcapng_iface sw = { "eth1", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	const char *p = path_of("link.pcapng");
	unsigned char data[64] = { 0 };
	char ebuf[CAP_ERRBUF];
	struct pcapng_writer *w;
	struct cap_reader *r;
	struct cap_packet pkt;
	struct cap_stats st;
	uint32_t id0, id1;
	int n = 0;

	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &sw, &id0), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &sw, &id1), 0);
	ck_assert_int_eq(pcapng_write_packet(w, id0, pkt_ts(0), data, 64, 64,
					     PCAPNG_DIR_IN), 0);
	ck_assert_int_eq(pcapng_write_event(w, id1, pkt_ts(1), 5, 0,
		PCAPNG_LINK_DOWN " (interface removed)"), 0);
	ck_assert_int_eq(pcapng_write_event(w, id0, pkt_ts(2), ~0ULL, ~0ULL,
		PCAPNG_LINK_DOWN), 0);
	ck_assert_int_eq(pcapng_write_event(w, id1, pkt_ts(3), ~0ULL, ~0ULL,
		PCAPNG_LINK_UP), 0);
	ck_assert_int_eq(pcapng_write_event(w, id1, pkt_ts(4), 1, 1,
		"something else"), 0);
	ck_assert_int_eq(pcapng_write_stats(w, id0, pkt_ts(5), 1, 0), 0);
	ck_assert_int_eq(pcapng_write_packet(w, id0, pkt_ts(6), data, 64, 64,
					     PCAPNG_DIR_IN), 0);
	ck_assert_int_eq(pcapng_close(w, false), 0);
	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	while (cap_next(r, &pkt) == 1)
		n++;
	ck_assert_str_eq(cap_error(r), "");
	cap_stats(r, &st);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(st.link_down, 2);
	ck_assert_uint_eq(st.link_up, 1);
	ck_assert_int_eq(st.first_link_down_ns, pkt_ts(1));
	ck_assert_uint_eq(st.first_link_down_iface, 1);
	cap_close(r);
}
END_TEST

START_TEST(truncated_everywhere)
{
	const char *p = write_sample("t.pcapng");
	char cut[160], err[CAP_ERRBUF];
	unsigned char *all;
	long size;
	FILE *f = fopen(p, "rb");
	int full, rc;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	all = malloc((size_t)size);
	ck_assert_int_eq(fread(all, 1, (size_t)size, f), size);
	fclose(f);
	ck_assert_int_eq(read_all(p, &full, err), 0);
	ck_assert_int_eq(full, NPKT);

	snprintf(cut, sizeof(cut), "%s/cut.pcapng", dir);
	/* Every cut point in the first 2 KiB, then every 97 bytes. */
	for (long n = 1; n < size; n += n < 2048 ? 1 : 97) {
		long off = 0;
		int got, whole = 0;
		bool boundary = false;

		/* Walk the blocks: packets wholly before the cut, and
		 * whether the cut falls between two blocks. */
		while (off < size) {
			uint32_t type, len;

			memcpy(&type, all + off, 4);
			memcpy(&len, all + off + 4, 4);
			if (off + len > n)
				break;
			whole += type == PCAPNG_BT_EPB;
			off += len;
			boundary = off == n;
		}
		f = fopen(cut, "wb");
		ck_assert_int_eq(fwrite(all, 1, (size_t)n, f), n);
		fclose(f);
		rc = read_all(cut, &got, err);
		if (boundary) {
			/* A shorter file, and a valid one. */
			ck_assert_msg(rc == 0, "cut at block end %ld: rc %d", n, rc);
		} else {
			/* Then a clear error naming the file and an offset. */
			ck_assert_msg(rc == -EBADMSG, "cut at %ld: rc %d", n, rc);
			ck_assert_msg(strstr(err, cut) && strstr(err, "offset "),
				      "cut at %ld: message '%s'", n, err);
		}
		/* Every whole packet before the cut, none after. */
		ck_assert_msg(got == whole, "cut at %ld: %d packets, want %d",
			      n, got, whole);
	}
	free(all);
}
END_TEST

/* ---- hand-built files for what our writer never produces ------------ */

struct blob {
	unsigned char b[4096];
	size_t n;
	bool be;
};

static void put32(struct blob *x, uint32_t v)
{
	if (x->be)
		v = bswap_32(v);
	memcpy(x->b + x->n, &v, 4);
	x->n += 4;
}

static void put16(struct blob *x, uint16_t v)
{
	if (x->be)
		v = bswap_16(v);
	memcpy(x->b + x->n, &v, 2);
	x->n += 2;
}

static void shb(struct blob *x)
{
	put32(x, PCAPNG_BT_SHB);
	put32(x, 28);
	put32(x, PCAPNG_BYTE_ORDER_MAGIC);
	put16(x, 1);
	put16(x, 0);
	put32(x, 0xffffffff);
	put32(x, 0xffffffff);
	put32(x, 28);
}

/* IDB with an if_tsresol option (0xff: none, default µs). */
static void idb(struct blob *x, uint8_t tsresol)
{
	uint32_t len = tsresol == 0xff ? 20 : 32;

	put32(x, PCAPNG_BT_IDB);
	put32(x, len);
	put16(x, 1);
	put16(x, 0);
	put32(x, 0);
	if (tsresol != 0xff) {
		put16(x, PCAPNG_IF_TSRESOL);
		put16(x, 1);
		x->b[x->n++] = tsresol;
		x->b[x->n++] = 0;
		x->b[x->n++] = 0;
		x->b[x->n++] = 0;
		put32(x, 0);	/* opt_endofopt */
	}
	put32(x, len);
}

static void epb(struct blob *x, uint32_t ifid, uint64_t ts, uint32_t caplen)
{
	uint32_t len = 32 + ((caplen + 3) & ~3u);

	put32(x, PCAPNG_BT_EPB);
	put32(x, len);
	put32(x, ifid);
	put32(x, (uint32_t)(ts >> 32));
	put32(x, (uint32_t)ts);
	put32(x, caplen);
	put32(x, caplen);
	memset(x->b + x->n, 0xab, (caplen + 3) & ~3u);
	x->n += (caplen + 3) & ~3u;
	put32(x, len);
}

static const char *save(struct blob *x, const char *name)
{
	const char *p = path_of(name);
	FILE *f = fopen(p, "wb");

	ck_assert_int_eq(fwrite(x->b, 1, x->n, f), x->n);
	fclose(f);
	return p;
}

/* Packet data lives only until the reader moves on: keep its last byte. */
static unsigned char last_byte;

static int first_packet(const char *p, struct cap_packet *pkt, char *err)
{
	struct cap_reader *r;
	int rc = cap_open(&r, p, err);

	if (rc)
		return rc;
	rc = cap_next(r, pkt);
	if (rc == 1) {
		last_byte = pkt->caplen ? pkt->data[pkt->caplen - 1] : 0;
		pkt->data = NULL;
	}
	strcpy(err, cap_error(r));
	cap_close(r);
	return rc;
}

START_TEST(big_endian_and_resolutions)
{
	static const struct {
		bool be;
		uint8_t tsresol;
		uint64_t ts;
		int64_t ns;
	} cases[] = {
		{ true, 0xff, 1700000000123456ULL, 1700000000123456000LL },
		{ true, 9, 1700000000123456789ULL, 1700000000123456789LL },
		{ false, 3, 1700000000123ULL, 1700000000123000000LL },
		/* 2^-30 s units: 1.5 s is 3 << 29. */
		{ false, 0x80 | 30, 3ULL << 29, 1500000000LL },
		/* Picoseconds: finer than ns, divided down. */
		{ false, 12, 1000000000123456ULL, 1000000000123LL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob x = { .n = 0, .be = cases[i].be };
		struct cap_packet pkt;
		char err[CAP_ERRBUF];

		shb(&x);
		idb(&x, cases[i].tsresol);
		epb(&x, 0, cases[i].ts, 5);
		ck_assert_int_eq(first_packet(save(&x, "r.pcapng"), &pkt, err), 1);
		ck_assert_msg(pkt.ts_ns == cases[i].ns, "case %zu: %lld", i,
			      (long long)pkt.ts_ns);
		ck_assert_uint_eq(pkt.caplen, 5);
		ck_assert_uint_eq(last_byte, 0xab);
	}
}
END_TEST

START_TEST(sections_renumber_interfaces)
{
	struct blob x = { .n = 0 };
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;

	shb(&x);
	idb(&x, 9);
	epb(&x, 0, 1, 4);
	shb(&x);
	idb(&x, 9);
	idb(&x, 9);
	epb(&x, 1, 2, 4);	/* interface 1 of the second section */
	ck_assert_int_eq(cap_open(&r, save(&x, "s.pcapng"), ebuf), 0);
	ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_uint_eq(pkt.iface, 0);
	ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_uint_eq(pkt.iface, 2);
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	cap_close(r);
}
END_TEST

/* A regular file is read in place (mapped): a file that grows after it
 * was opened is read on past the mapping's end, what is malformed there
 * is reported at its offset as before, and pages let go behind the
 * reader never change what it reads (a file past CAP_MAP_DROP). */
START_TEST(mapped_file_grows)
{
	struct blob x = { .n = 0 };
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	const char *p;
	FILE *f;

	shb(&x);
	idb(&x, 9);
	epb(&x, 0, 1, 4);
	epb(&x, 0, 2, 4);
	p = save(&x, "g.pcapng");
	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	/* No look-ahead for tap stamps: it would meet the end before the
	 * file grew. */
	ck_assert_int_eq(cap_set_tapfmt(r, TAPFMT_NONE), 0);
	ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 1);
	x.n = 0;
	epb(&x, 0, 3, 8);
	epb(&x, 0, 4, 4);
	x.n -= 8;	/* the last block cut short */
	f = fopen(p, "ab");
	ck_assert_int_eq(fwrite(x.b, 1, x.n, f), x.n);
	fclose(f);
	ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 2);
	ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 3);
	ck_assert_uint_eq(pkt.caplen, 8);
	ck_assert_int_lt(cap_next(r, &pkt), 0);
	ck_assert_ptr_nonnull(strstr(cap_error(r), "truncated"));
	ck_assert_ptr_nonnull(strstr(cap_error(r), "offset 172:"));
	cap_close(r);
}
END_TEST

START_TEST(mapped_file_long)
{
	enum { N = 200, LEN = 65000 };
	struct blob x = { .n = 0 };
	static unsigned char data[LEN];
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	const char *p = path_of("long.pcapng");
	FILE *f = fopen(p, "wb");
	uint32_t len = 32 + ((LEN + 3) & ~3u);

	shb(&x);
	idb(&x, 9);
	ck_assert_int_eq(fwrite(x.b, 1, x.n, f), x.n);
	for (int i = 0; i < N; i++) {
		x.n = 0;
		put32(&x, PCAPNG_BT_EPB);
		put32(&x, len);
		put32(&x, 0);
		put32(&x, 0);
		put32(&x, (uint32_t)i + 1);
		put32(&x, LEN);
		put32(&x, LEN);
		ck_assert_int_eq(fwrite(x.b, 1, x.n, f), x.n);
		memset(data, i & 0xff, sizeof(data));
		ck_assert_int_eq(fwrite(data, 1, (LEN + 3) & ~3u, f),
				 (LEN + 3) & ~3u);
		x.n = 0;
		put32(&x, len);
		ck_assert_int_eq(fwrite(x.b, 1, x.n, f), x.n);
	}
	fclose(f);
	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert_int_eq(pkt.ts_ns, i + 1);
		ck_assert_uint_eq(pkt.caplen, LEN);
		ck_assert_uint_eq(pkt.data[0], i & 0xff);
		ck_assert_uint_eq(pkt.data[LEN - 1], i & 0xff);
	}
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	cap_close(r);
}
END_TEST

START_TEST(hostile_blocks)
{
	struct cap_packet pkt;
	char err[CAP_ERRBUF];
	struct blob x;

	/* Huge block length: refused before any allocation. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	put32(&x, PCAPNG_BT_EPB);
	put32(&x, 0xfffffff0);
	ck_assert_int_eq(first_packet(save(&x, "h1"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "offset 32") && strstr(err, "limit"), "%s", err);

	/* Length not a multiple of 4. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	put32(&x, PCAPNG_BT_EPB);
	put32(&x, 33);
	ck_assert_int_eq(first_packet(save(&x, "h2"), &pkt, err), -EBADMSG);

	/* Captured length past the block. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	idb(&x, 9);
	epb(&x, 0, 1, 8);
	memcpy(x.b + 28 + 32 + 20, &(uint32_t){ 5000 }, 4);
	ck_assert_int_eq(first_packet(save(&x, "h3"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "captured length 5000"), "%s", err);

	/* A packet on an interface the section never described. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	idb(&x, 9);
	epb(&x, 3, 1, 4);
	ck_assert_int_eq(first_packet(save(&x, "h4"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "interface 3"), "%s", err);

	/* An option running past its block. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	idb(&x, 9);
	memcpy(x.b + 28 + 16 + 2, &(uint16_t){ 400 }, 2);	/* if_tsresol len */
	ck_assert_int_eq(first_packet(save(&x, "h5"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "runs past"), "%s", err);

	/* Start and end lengths differ. */
	x = (struct blob){ .n = 0 };
	shb(&x);
	idb(&x, 9);
	x.b[x.n - 4] = 99;
	ck_assert_int_eq(first_packet(save(&x, "h6"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "differs"), "%s", err);

	/* Not a capture at all. */
	x = (struct blob){ .n = 0 };
	memcpy(x.b, "hello, world", 12);
	x.n = 12;
	ck_assert_int_eq(first_packet(save(&x, "h7"), &pkt, err), -EBADMSG);
	ck_assert_msg(strstr(err, "not a pcap or pcapng"), "%s", err);

	/* Missing file. */
	ck_assert_int_eq(first_packet(path_of("none"), &pkt, err), -ENOENT);
	ck_assert_msg(strstr(err, "none"), "%s", err);
}
END_TEST

static const char *write_pcap(const char *name, int precision, int n)
{
	const char *p = path_of(name);
	pcap_t *pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							   precision);
	pcap_dumper_t *d = pcap_dump_open(pc, p);
	unsigned char data[64] = { 1, 2, 3 };

	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < n; i++) {
		struct pcap_pkthdr h = { .caplen = 60, .len = 60 };

		h.ts.tv_sec = 1700000000 + i;
		h.ts.tv_usec = precision == PCAP_TSTAMP_PRECISION_NANO ?
			       123456789 : 123456;
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(pc);
	return p;
}

START_TEST(classic_pcap)
{
	static const struct {
		int precision;
		int64_t frac, res;
	} cases[] = {
		{ PCAP_TSTAMP_PRECISION_MICRO, 123456000, 1000 },
		{ PCAP_TSTAMP_PRECISION_NANO, 123456789, 1 },
	};

	for (size_t i = 0; i < 2; i++) {
		const char *p = write_pcap("c.pcap", cases[i].precision, 10);
		char ebuf[CAP_ERRBUF];
		struct cap_reader *r;
		struct cap_packet pkt;

		ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
		ck_assert_int_eq(cap_format(r), CAP_PCAP);
		ck_assert_int_eq(cap_iface(r, 0)->resolution_ns, cases[i].res);
		ck_assert_int_eq(cap_iface(r, 0)->linktype, DLT_EN10MB);
		for (int k = 0; k < 10; k++) {
			ck_assert_int_eq(cap_next(r, &pkt), 1);
			ck_assert(pkt.ts_ns == (1700000000LL + k) * 1000000000 +
						cases[i].frac);
			ck_assert_int_eq(pkt.dir, PCAPNG_DIR_UNKNOWN);
			ck_assert_uint_eq(pkt.data[2], 3);
		}
		ck_assert_int_eq(cap_next(r, &pkt), 0);
		cap_close(r);
		unlink(p);
	}
}
END_TEST

START_TEST(classic_pcap_truncated)
{
	const char *p = write_pcap("t.pcap", PCAP_TSTAMP_PRECISION_NANO, 10);
	char err[CAP_ERRBUF];
	int n;

	/* 24-byte header + 3 whole records of 76 bytes + a piece. */
	ck_assert_int_eq(truncate(p, 24 + 3 * 76 + 30), 0);
	ck_assert_int_eq(read_all(p, &n, err), -EBADMSG);
	ck_assert_int_eq(n, 3);
	ck_assert_msg(strstr(err, "offset 252"), "%s", err);
}
END_TEST

/* Sender-stamped interfaces (tapless-capd --tx-socket, the probes' own TX
 * frames) carry tapless's interface flags option, whatever their note says;
 * the others carry none. */
START_TEST(sender_flag_round_trip)
{
	struct pcapng_section sec = { .hostname = "algo1", .userappl = "test" };
	struct pcapng_iface tx = {
		.name = "eth1", .linktype = 1,
		.src = { false, -1, TS_SCALE_UTC, "sent by the application" },
		.sender = true,
	};
	struct pcapng_iface hw = {
		.name = "eth1", .linktype = 1,
		.src = { true, 2, TS_SCALE_PHC, "" }, .sender = true,
	};
	struct pcapng_iface rx = {
		.name = "eth1", .linktype = 1,
		.src = { false, -1, TS_SCALE_UTC, "received" },
	};
	const char *p = path_of("f.pcapng");
	char ebuf[CAP_ERRBUF];
	struct pcapng_writer *w;
	struct cap_reader *r;
	struct cap_packet pkt;
	uint32_t id[4];
	unsigned char frame[60] = { 0 };

	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &tx, &id[0]), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &rx, &id[1]), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &hw, &id[2]), 0);
	/* Not ours to describe (another writer's text): the flag still goes. */
	ck_assert_int_eq(pcapng_add_iface_desc(w, &tx, "Intel(R) Ethernet", &id[3]), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pcapng_write_packet(w, id[i], pkt_ts(i), frame,
			sizeof(frame), sizeof(frame), PCAPNG_DIR_OUT), 0);
	ck_assert_int_eq(pcapng_close(w, false), 0);

	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(cap_next(r, &pkt), 1);
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	ck_assert_str_eq(cap_error(r), "");
	ck_assert_uint_eq(cap_iface_count(r), 4);
	ck_assert(cap_iface(r, 0)->sender);
	ck_assert_str_eq(cap_iface(r, 0)->src.note, "sent by the application");
	ck_assert(!cap_iface(r, 1)->sender);
	ck_assert(cap_iface(r, 2)->sender);
	ck_assert(cap_iface(r, 2)->src_known && cap_iface(r, 2)->src.hw);
	ck_assert(cap_iface(r, 3)->sender && !cap_iface(r, 3)->src_known);
	cap_close(r);
}
END_TEST

/* Files written before the option: an if_description of ours whose note
 * begins with the old text says it, and nothing else does. */
START_TEST(sender_old_note_fallback)
{
	struct pcapng_section sec = { .hostname = "algo1", .userappl = "test" };
	struct pcapng_iface ifc = {
		.name = "eth1", .linktype = 1,
		.src = { false, -1, TS_SCALE_UTC, "" },
	};
	static const char *const notes[] = {
		PCAPNG_NOTE_SENDER, PCAPNG_NOTE_SENDER ", host stamps",
		"sent, host stamps", "received; " PCAPNG_NOTE_SENDER,
	};
	static const bool want[] = { true, true, false, false };
	const char *p = path_of("o.pcapng");
	char ebuf[CAP_ERRBUF], desc[200];
	struct pcapng_writer *w;
	struct cap_reader *r;
	struct cap_packet pkt;
	uint32_t id;

	ck_assert_int_eq(pcapng_open(&w, p, &sec), 0);
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		snprintf(ifc.src.note, sizeof(ifc.src.note), "%s", notes[i]);
		ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	}
	/* Someone else's description that happens to begin with the text. */
	snprintf(desc, sizeof(desc), "%s", PCAPNG_NOTE_SENDER);
	ck_assert_int_eq(pcapng_add_iface_desc(w, &ifc, desc, &id), 0);
	ck_assert_int_eq(pcapng_close(w, false), 0);

	ck_assert_int_eq(cap_open(&r, p, ebuf), 0);
	ck_assert_int_eq(cap_next(r, &pkt), 0);	/* interfaces only */
	ck_assert_uint_eq(cap_iface_count(r), 5);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_msg(cap_iface(r, i)->sender == want[i], "note %u", i);
	ck_assert(!cap_iface(r, 4)->src_known && !cap_iface(r, 4)->sender);
	cap_close(r);
}
END_TEST

/* IDB with one custom binary option (PEN, kind, 0, flags) and, with note,
 * an if_description of ours carrying the old sender note. */
static void idb_custom(struct blob *x, uint32_t pen, uint16_t kind,
		       uint32_t flags, bool note)
{
	char desc[128];
	uint32_t dlen = 0, len = 20 + 16 + 4;	/* + opt_endofopt */

	if (note) {
		snprintf(desc, sizeof(desc), "tapless: source=sw phc=-1 "
			 "timescale=utc; %s", PCAPNG_NOTE_SENDER);
		dlen = (uint32_t)strlen(desc);
		len += 4 + ((dlen + 3) & ~3u);
	}
	put32(x, PCAPNG_BT_IDB);
	put32(x, len);
	put16(x, 1);
	put16(x, 0);
	put32(x, 0);
	if (note) {
		put16(x, PCAPNG_IF_DESCRIPTION);
		put16(x, (uint16_t)dlen);
		memset(x->b + x->n, 0, (dlen + 3) & ~3u);
		memcpy(x->b + x->n, desc, dlen);
		x->n += (dlen + 3) & ~3u;
	}
	put16(x, PCAPNG_OPT_CUSTOM_BIN);
	put16(x, 12);
	put32(x, pen);
	put16(x, kind);
	put16(x, 0);
	put32(x, flags);
	put32(x, 0);	/* opt_endofopt */
	put32(x, len);
}

/* The option in either byte order; another enterprise's option, or a kind
 * of ours not known, is not it; when it is there, it wins over the note. */
START_TEST(sender_option_hand_built)
{
	for (int be = 0; be <= 1; be++) {
		struct blob x = { .n = 0, .be = be };
		char ebuf[CAP_ERRBUF];
		struct cap_reader *r;
		struct cap_packet pkt;

		shb(&x);
		idb_custom(&x, PCAPNG_TAPLESS_PEN, PCAPNG_TAPLESS_IF_FLAGS,
			   PCAPNG_TAPLESS_IF_SENDER | 0x80000000u, false);
		idb_custom(&x, 12345, PCAPNG_TAPLESS_IF_FLAGS,
			   PCAPNG_TAPLESS_IF_SENDER, false);
		idb_custom(&x, PCAPNG_TAPLESS_PEN, 7, PCAPNG_TAPLESS_IF_SENDER,
			   false);
		idb_custom(&x, PCAPNG_TAPLESS_PEN, PCAPNG_TAPLESS_IF_FLAGS, 0,
			   true);
		idb_custom(&x, 12345, PCAPNG_TAPLESS_IF_FLAGS, 0, true);
		epb(&x, 0, 1, 4);
		ck_assert_int_eq(cap_open(&r, save(&x, "c.pcapng"), ebuf), 0);
		ck_assert_msg(cap_next(r, &pkt) == 1, "%s", cap_error(r));
		ck_assert_uint_eq(cap_iface_count(r), 5);
		ck_assert_msg(cap_iface(r, 0)->sender, "be %d", be);
		ck_assert(!cap_iface(r, 1)->sender);
		ck_assert(!cap_iface(r, 2)->sender);
		ck_assert(cap_iface(r, 3)->src_known && !cap_iface(r, 3)->sender);
		ck_assert(cap_iface(r, 4)->src_known && cap_iface(r, 4)->sender);
		cap_close(r);
	}
}
END_TEST

START_TEST(description_round_trip)
{
	struct pcapng_source a = { true, 7, TS_SCALE_PHC, "narrowed rx filter" }, b;
	char buf[200];

	ck_assert_int_eq(pcapng_describe(&a, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "tapless: source=hw phc=7 timescale=phc; "
			 "narrowed rx filter");
	ck_assert_int_eq(pcapng_parse_description(buf, &b), 0);
	ck_assert(b.hw && b.phc == 7 && b.timescale == TS_SCALE_PHC);
	ck_assert_str_eq(b.note, "narrowed rx filter");
	ck_assert_int_eq(pcapng_parse_description("Intel(R) Ethernet", &b), -EINVAL);
	ck_assert_int_eq(pcapng_describe(&a, buf, 10), -ENOSPC);
}
END_TEST

static Suite *pcapng_suite(void)
{
	Suite *s = suite_create("pcapng");
	TCase *t = tcase_create("pcapng");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, round_trip);
	tcase_add_test(t, packet_id_round_trip);
	tcase_add_test(t, epb_bytes);
	tcase_add_test(t, discard_and_exclusive);
	tcase_add_test(t, failed_flush_counts_and_cuts);
	tcase_add_test(t, failed_flush_nothing_kept);
	tcase_add_test(t, link_events_round_trip);
	tcase_add_test(t, truncated_everywhere);
	tcase_add_test(t, big_endian_and_resolutions);
	tcase_add_test(t, sections_renumber_interfaces);
	tcase_add_test(t, hostile_blocks);
	tcase_add_test(t, mapped_file_grows);
	tcase_add_test(t, mapped_file_long);
	tcase_add_test(t, classic_pcap);
	tcase_add_test(t, classic_pcap_truncated);
	tcase_add_test(t, description_round_trip);
	tcase_add_test(t, sender_flag_round_trip);
	tcase_add_test(t, sender_old_note_fallback);
	tcase_add_test(t, sender_option_hand_built);
	tcase_set_timeout(t, 60);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(pcapng_suite)
