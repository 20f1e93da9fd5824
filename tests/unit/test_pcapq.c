/* test_pcapq.c — pcapng packets through the writer thread: every packet
 * reaches its file whole, in order, with its stamp, direction and packet id,
 * across many wraps of a small ring (frames of every size, some the size of
 * what is left before the end, two writers interleaved); a full ring is
 * waited on, never dropped; a packet that can never fit is refused; a
 * write error comes back from pcapq_finish(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>

#include "files/capfile.h"
#include "files/pcapng.h"
#include "files/pcapq.h"
#include "stamp/ts.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "pcapq");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static struct pcapng_writer *open_writer(const char *name, char *path)
{
	struct pcapng_section sec = { .hostname = "sw", .userappl = "test_pcapq" };
	struct pcapng_iface ifc = { name, 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	uint32_t id;

	snprintf(path, 128, "%s/%s.pcapng", dir, name);
	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	ck_assert_uint_eq(id, 0);
	return w;
}

/* Packet i: its length walks every size up to 1600 bytes in a pattern
 * that lands records on every offset near the ring's end. */
static uint32_t len_of(unsigned i)
{
	return (uint32_t)((i * 97u) % 1601u);
}

static void fill(uint8_t *b, unsigned i, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++)
		b[k] = (uint8_t)(i * 7 + k);
}

/* Read back path: packets i = first, first + step, ... in order. */
static void check_file(const char *path, unsigned first, unsigned step,
		       unsigned n)
{
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	uint8_t want[1600];
	unsigned got = 0;

	ck_assert_int_eq(cap_open(&r, path, ebuf), 0);
	for (unsigned i = first; i < n; i += step) {
		uint32_t len = len_of(i);

		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert_int_eq(pkt.ts_ns, 1700000000000000000LL + i);
		ck_assert_uint_eq(pkt.caplen, len);
		ck_assert_uint_eq(pkt.origlen, len + 4);
		ck_assert_int_eq(pkt.dir, i % 3 ? PCAPNG_DIR_OUT : PCAPNG_DIR_IN);
		ck_assert(pkt.has_packet_id == (i % 5 != 0));
		if (pkt.has_packet_id)
			ck_assert_uint_eq(pkt.packet_id, 1000000 + i);
		fill(want, i, len);
		ck_assert(memcmp(pkt.data, want, len) == 0);
		got++;
	}
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	ck_assert_str_eq(cap_error(r), "");
	cap_close(r);
	ck_assert_uint_gt(got, 0);
}

START_TEST(order_and_wraps)
{
	enum { N = 20000 };	/* about 16 MB through a 64 KiB ring */
	char pa[128], pb[128];
	struct pcapng_writer *a = open_writer("a", pa), *b = open_writer("b", pb);
	struct pcapq *q;
	struct pcapq_stats st;
	uint8_t buf[1600];

	ck_assert_int_eq(pcapq_create(&q, 1), 0);	/* the smallest ring */
	for (unsigned i = 0; i < N; i++) {
		uint32_t len = len_of(i);

		fill(buf, i, len);
		ck_assert_int_eq(pcapq_packet(q, i % 2 ? b : a, 0,
					      1700000000000000000LL + i, buf, len,
					      len + 4, i % 3 ? PCAPNG_DIR_OUT :
					      PCAPNG_DIR_IN, i % 5 != 0,
					      1000000 + i), 0);
	}
	ck_assert_int_eq(pcapq_finish(q), 0);
	pcapq_stats(q, &st);
	ck_assert_uint_eq(st.packets, N);
	ck_assert_uint_eq(st.written, N);
	ck_assert_uint_eq(st.failed, 0);
	ck_assert_uint_le(st.peak_bytes, 64u << 10);
	/* The producer outran the writer: it waited, and lost nothing. */
	ck_assert_uint_gt(st.stalls, 0);
	pcapq_destroy(q);
	ck_assert_int_eq(pcapng_close(a, false), 0);
	ck_assert_int_eq(pcapng_close(b, false), 0);
	check_file(pa, 0, 2, N);
	check_file(pb, 1, 2, N);
}
END_TEST

START_TEST(too_big)
{
	char pa[128];
	struct pcapng_writer *a = open_writer("a", pa);
	static uint8_t buf[40000];
	struct pcapq *q;

	ck_assert_int_eq(pcapq_create(&q, 1), 0);
	ck_assert_int_eq(pcapq_packet(q, a, 0, 1, buf, sizeof(buf), sizeof(buf),
				      PCAPNG_DIR_IN, false, 0), -EMSGSIZE);
	ck_assert_int_eq(pcapq_packet(q, a, 0, 1, buf, 30000, 30000,
				      PCAPNG_DIR_IN, false, 0), 0);
	pcapq_destroy(q);	/* finishes: the packet is written */
	ck_assert_int_eq(pcapng_close(a, false), 0);
}
END_TEST

/* A file that cannot grow: the error comes back, the packets are
 * counted as failed or lost, nothing blocks. */
START_TEST(write_error)
{
	char pa[128];
	struct pcapng_writer *a = open_writer("a", pa);
	struct rlimit old, lim;
	struct pcapq *q;
	struct pcapq_stats st;
	uint8_t buf[1500] = { 0 };
	int rc, bad = 0;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = (struct rlimit){ 100000, old.rlim_max };	/* soft: put back */
	ck_assert_int_eq(pcapq_create(&q, 1), 0);
	/* No assertion while the limit holds: Check writes its own file. */
	setrlimit(RLIMIT_FSIZE, &lim);
	for (unsigned i = 0; i < 2000; i++)
		bad += pcapq_packet(q, a, 0, i, buf, sizeof(buf), sizeof(buf),
				    PCAPNG_DIR_IN, true, i) != 0;
	rc = pcapq_finish(q);
	setrlimit(RLIMIT_FSIZE, &old);
	pcapq_stats(q, &st);
	ck_assert_int_eq(bad, 0);
	/* 3 MB through a 1 MiB buffer: writes happen, and fail. */
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_uint_gt(st.failed, 0);
	ck_assert_uint_eq(st.written + st.failed, 2000);
	ck_assert_int_eq(st.error, -EFBIG);
	pcapq_destroy(q);
	ck_assert_int_eq(pcapng_close(a, false), -EFBIG);
}
END_TEST

/* Records that end exactly at the end of the ring, and one that fills the
 * last bytes exactly (a header and no data). */
START_TEST(exact_end)
{
	char pa[128];
	struct pcapng_writer *a = open_writer("a", pa);
	static uint8_t buf[32768];
	/* 64 KiB ring, 48-byte headers: 32768 + 32720 bytes, then 48. */
	static const uint32_t len[] = { 32720, 32672, 0, 5, 0 };
	char ebuf[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	struct pcapq *q;

	ck_assert_int_eq(pcapq_create(&q, 1), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(pcapq_packet(q, a, 0, 100 + i, buf, len[i], len[i],
					      PCAPNG_DIR_IN, true, i), 0);
	ck_assert_int_eq(pcapq_finish(q), 0);
	pcapq_destroy(q);
	ck_assert_int_eq(pcapng_close(a, false), 0);
	ck_assert_int_eq(cap_open(&r, pa, ebuf), 0);
	for (unsigned i = 0; i < 5; i++) {
		ck_assert_int_eq(cap_next(r, &pkt), 1);
		ck_assert_uint_eq(pkt.packet_id, i);
		ck_assert_uint_eq(pkt.caplen, len[i]);
	}
	ck_assert_int_eq(cap_next(r, &pkt), 0);
	cap_close(r);
}
END_TEST

/* In the background the writer runs at idle priority, is raised when the
 * ring fills past half, and still writes everything. */
START_TEST(background)
{
	enum { N = 5000 };
	char pa[128];
	struct pcapng_writer *a = open_writer("a", pa);
	struct pcapq *q;
	struct pcapq_stats st;
	uint8_t buf[1600];

	ck_assert_int_eq(pcapq_create(&q, 1), 0);
	ck_assert_int_eq(pcapq_background(q), 0);
	for (unsigned i = 0; i < N; i++) {
		fill(buf, i, len_of(i));
		ck_assert_int_eq(pcapq_packet(q, a, 0, 1700000000000000000LL + i,
					      buf, len_of(i), len_of(i) + 4,
					      i % 3 ? PCAPNG_DIR_OUT : PCAPNG_DIR_IN,
					      i % 5 != 0, 1000000 + i), 0);
	}
	ck_assert_int_eq(pcapq_finish(q), 0);
	pcapq_stats(q, &st);
	ck_assert_uint_eq(st.written, N);
	/* 4 MB through 64 KiB: half full more than once. */
	ck_assert_uint_gt(st.boosts, 0);
	pcapq_destroy(q);
	ck_assert_int_eq(pcapng_close(a, false), 0);
	check_file(pa, 0, 1, N);
}
END_TEST

static Suite *pcapq_suite(void)
{
	Suite *s = suite_create("pcapq");
	TCase *tc = tcase_create("pcapq");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_and_wraps);
	tcase_add_test(tc, too_big);
	tcase_add_test(tc, exact_end);
	tcase_add_test(tc, background);
	tcase_add_test(tc, write_error);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(pcapq_suite)
