/* Unit tests for the capture readers' use of tap stamps (capfile.h,
 * cap_set_tapfmt()): detection from the first frames, the device's stamp
 * taken and what it added cut (a header from inside, a trailer off the
 * end), the record's own stamp kept, frames without a stamp left out,
 * counted and the first named, tapless's own files never decoded, and
 * the format fixed once packets were read. */
#include <errno.h>
#include <pcap/pcap.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "unit.h"
#include "base/bytes.h"
#include "files/capfile.h"
#include "files/frame.h"
#include "files/pcapng.h"
#include "stamp/ts.h"

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "captap");
	snprintf(path, sizeof(path), "%s/tap.pcap", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

#define T0 1795900000000000000LL	/* a 2026 instant, ns */
#define REC_OFF 5000000LL		/* the capture server, 5 ms late */
#define NPKT 20

/* Frame i: a TCP segment with 40 payload bytes, its payload's first byte i. */
static int frame(uint8_t *buf, size_t cap, int i)
{
	struct frame_flow f = { .family = AF_INET, .proto = IPPROTO_TCP,
				.sport = 9001, .dport = 40001 };
	uint8_t pl[40];

	inet_pton(AF_INET, "198.18.0.2", f.src);
	inet_pton(AF_INET, "198.18.0.1", f.dst);
	memset(pl, 'a', sizeof(pl));
	pl[0] = (uint8_t)i;
	return frame_build(buf, cap, &f, 1000u + 40u * (unsigned)i, 1, 0, pl,
			   sizeof(pl));
}

static int64_t stamp(int i)
{
	return T0 + i * 1000003LL;
}

/* The Arista 7280 header after the MACs: 0xD28B, subtype 1, version 0x10
 * (64-bit, TAI), seconds, nanoseconds; 14 bytes. */
static int add_arista(uint8_t *buf, int len, int64_t ts)
{
	memmove(buf + 26, buf + 12, (size_t)len - 12);
	bytes_put_be16(buf + 12, 0xD28B);
	bytes_put_be16(buf + 14, 1);
	bytes_put_be16(buf + 16, 0x10);
	bytes_put_be32(buf + 18, (uint32_t)(ts / 1000000000));
	bytes_put_be32(buf + 22, (uint32_t)(ts % 1000000000));
	return len + 14;
}

/* The MetaWatch trailer: original FCS, seconds, nanoseconds, flags,
 * device, port; 16 bytes. */
static int add_metawatch(uint8_t *buf, int len, int64_t ts, uint8_t flags,
			 uint16_t dev, uint8_t port)
{
	bytes_put_be32(buf + len, 0x12345678);
	bytes_put_be32(buf + len + 4, (uint32_t)(ts / 1000000000));
	bytes_put_be32(buf + len + 8, (uint32_t)(ts % 1000000000));
	buf[len + 12] = flags;
	bytes_put_be16(buf + len + 13, dev);
	buf[len + 15] = port;
	return len + 16;
}

enum kind { PLAIN, ARISTA, METAWATCH };

/* A nanosecond pcap of NPKT frames of kind, record times REC_OFF late;
 * frames in skip (a bit each) go without the tap's bytes; frame 3's
 * MetaWatch stamp is flagged degraded. */
static void write_pcap(enum kind k, uint32_t skip)
{
	pcap_t *pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							  PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d = pcap_dump_open(pc, path);

	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < NPKT; i++) {
		uint8_t buf[256];
		struct pcap_pkthdr h;
		int len = frame(buf, sizeof(buf), i);
		int64_t rec = stamp(i) + REC_OFF;

		ck_assert_int_gt(len, 0);
		if (!(skip >> i & 1) && k == ARISTA)
			len = add_arista(buf, len, stamp(i));
		else if (!(skip >> i & 1) && k == METAWATCH)
			len = add_metawatch(buf, len, stamp(i), i == 3 ? 0x10 : 0,
					    7, (uint8_t)(i % 4));
		h.ts.tv_sec = rec / 1000000000;
		h.ts.tv_usec = rec % 1000000000;
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(pc);
}

/* Every packet of path read with format k set (or detected: TAPFMT_AUTO);
 * checks each against frame i's content. Returns the packets read. */
static int read_all(enum tapfmt_kind set, enum tapfmt_kind want_tap,
		    struct cap_stats *st, char *warning, size_t wlen)
{
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	int n = 0, rc;

	ck_assert_int_eq(cap_open(&r, path, err), 0);
	if (set != TAPFMT_AUTO)
		ck_assert_int_eq(cap_set_tapfmt(r, set), 0);
	while ((rc = cap_next(r, &pkt)) == 1) {
		struct frame_info fi;
		uint8_t want[256];
		int wlen2, i;

		ck_assert_int_eq(pkt.tap, want_tap);
		if (want_tap == TAPFMT_NONE) {
			/* In file order, the header or trailer left in. */
			ck_assert_int_eq(pkt.ts_ns, stamp(n) + REC_OFF);
			ck_assert_int_eq(pkt.record_ns, pkt.ts_ns);
			n++;
			continue;
		}
		ck_assert_int_eq(frame_parse(pkt.data, pkt.caplen, 1, &fi), 0);
		i = fi.payload[0];
		wlen2 = frame(want, sizeof(want), i);
		ck_assert_int_eq(pkt.record_ns, stamp(i) + REC_OFF);
		/* The device's stamp, the frame as it was on the wire. */
		ck_assert_int_eq(pkt.ts_ns, stamp(i));
		ck_assert_uint_eq(pkt.caplen, (unsigned)wlen2);
		ck_assert_uint_eq(pkt.origlen, (unsigned)wlen2);
		ck_assert_mem_eq(pkt.data, want, (size_t)wlen2);
		if (want_tap == TAPFMT_ARISTA)
			ck_assert_int_eq(pkt.timescale, TS_SCALE_TAI);
		if (want_tap == TAPFMT_METAWATCH) {
			ck_assert(pkt.has_port);
			ck_assert_uint_eq(pkt.device, 7);
			ck_assert_uint_eq(pkt.port, (unsigned)i % 4);
			ck_assert_int_eq(pkt.degraded, i == 3);
		}
		n++;
	}
	ck_assert_int_eq(rc, 0);
	cap_stats(r, st);
	ck_assert_uint_eq(st->packets, (uint64_t)n);
	snprintf(warning, wlen, "%s", cap_warning(r));
	/* Set once packets were read: refused. */
	ck_assert_int_eq(cap_set_tapfmt(r, TAPFMT_NONE), -EBUSY);
	cap_close(r);
	return n;
}

START_TEST(arista_detected)
{
	struct cap_stats st;
	char w[CAP_ERRBUF];

	write_pcap(ARISTA, 0);
	ck_assert_int_eq(read_all(TAPFMT_AUTO, TAPFMT_ARISTA, &st, w, sizeof(w)), NPKT);
	ck_assert_int_eq(st.tap, TAPFMT_ARISTA);
	ck_assert_uint_eq(st.tap_stamped, NPKT);
	ck_assert_uint_eq(st.tap_missing + st.tap_bad, 0);
	ck_assert_str_eq(w, "");
	/* Named none: the records as they are. */
	ck_assert_int_eq(read_all(TAPFMT_NONE, TAPFMT_NONE, &st, w, sizeof(w)), NPKT);
	ck_assert_uint_eq(st.tap_stamped, 0);
}
END_TEST

START_TEST(metawatch_gaps)
{
	struct cap_stats st;
	char w[CAP_ERRBUF];

	/* Frames 5 and 9 lost their trailer: left out, counted, the first
	 * named by its record and offset. Detection still holds (18/20). */
	write_pcap(METAWATCH, 1u << 5 | 1u << 9);
	ck_assert_int_eq(read_all(TAPFMT_AUTO, TAPFMT_METAWATCH, &st, w, sizeof(w)),
			 NPKT - 2);
	ck_assert_uint_eq(st.tap_stamped, NPKT - 2);
	ck_assert_uint_eq(st.tap_missing, 2);
	ck_assert_uint_eq(st.tap_degraded, 1);
	ck_assert_ptr_nonnull(strstr(w, path));
	ck_assert_ptr_nonnull(strstr(w, "record 6 (offset "));
	ck_assert_ptr_nonnull(strstr(w, "metawatch"));
}
END_TEST

START_TEST(not_detected)
{
	struct cap_stats st;
	char w[CAP_ERRBUF];

	/* Plain frames, and a few trailers among many without: no format. */
	write_pcap(PLAIN, 0);
	ck_assert_int_eq(read_all(TAPFMT_AUTO, TAPFMT_NONE, &st, w, sizeof(w)), NPKT);
	ck_assert_int_eq(st.tap, TAPFMT_NONE);
	write_pcap(METAWATCH, ~0u & ~(1u << 2 | 1u << 11));
	ck_assert_int_eq(read_all(TAPFMT_AUTO, TAPFMT_NONE, &st, w, sizeof(w)), NPKT);
	/* ... but said: the records' stamps are taken. */
	ck_assert_ptr_nonnull(strstr(w, "2 of its first 20 frames look like "
				     "metawatch stamps"));
	/* Named, the format holds: the two are read, the rest left out. */
	ck_assert_int_eq(read_all(TAPFMT_METAWATCH, TAPFMT_METAWATCH, &st, w,
				  sizeof(w)), 2);
	ck_assert_uint_eq(st.tap_missing, NPKT - 2);
}
END_TEST

START_TEST(own_files_kept)
{
	char err[CAP_ERRBUF];
	struct pcapng_writer *w;
	struct pcapng_iface ifc = { .name = "eth1", .linktype = 1,
				    .snaplen = 65535,
				    .src = { .hw = true, .phc = 0,
					     .timescale = TS_SCALE_TAI } };
	struct pcapng_section sec = { .hostname = "algo" };
	struct cap_reader *r;
	struct cap_packet pkt;
	uint32_t id;
	int n = 0;

	/* A tapless file whose frames happen to carry an Arista header:
	 * its stamps are the host's, never a tap's. */
	snprintf(path, sizeof(path), "%s/own.pcapng", dir);
	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	for (int i = 0; i < NPKT; i++) {
		uint8_t buf[256];
		int len = add_arista(buf, frame(buf, sizeof(buf), i), stamp(i));

		ck_assert_int_eq(pcapng_write_packet(w, id, stamp(i) + REC_OFF, buf,
					      (uint32_t)len, (uint32_t)len,
					      PCAPNG_DIR_IN), 0);
	}
	ck_assert_int_eq(pcapng_close(w, false), 0);
	ck_assert_int_eq(cap_open(&r, path, err), 0);
	while (cap_next(r, &pkt) == 1) {
		ck_assert_int_eq(pkt.tap, TAPFMT_NONE);
		ck_assert_int_eq(pkt.ts_ns, stamp(n) + REC_OFF);
		n++;
	}
	ck_assert_int_eq(n, NPKT);
	cap_close(r);
}
END_TEST

START_TEST(names)
{
	enum tapfmt_kind k;

	ck_assert_int_eq(tapfmt_parse("metawatch", &k), 0);
	ck_assert_int_eq(k, TAPFMT_METAWATCH);
	ck_assert_int_eq(tapfmt_parse("auto", &k), 0);
	ck_assert_int_eq(k, TAPFMT_AUTO);
	ck_assert_int_eq(tapfmt_parse("dag", &k), -EINVAL);
	for (int i = TAPFMT_NONE + 1; i < TAPFMT_COUNT; i++) {
		ck_assert_ptr_nonnull(tapfmt_ops(i));
		ck_assert_int_eq(tapfmt_ops(i)->kind, i);
		ck_assert_ptr_nonnull(strstr(tapfmt_names(), tapfmt_name(i)));
	}
	ck_assert_ptr_null(tapfmt_ops(TAPFMT_NONE));
}
END_TEST

static Suite *capfile_tap_suite(void)
{
	Suite *s = suite_create("capfile_tap");
	TCase *tc = tcase_create("capfile_tap");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, arista_detected);
	tcase_add_test(tc, metawatch_gaps);
	tcase_add_test(tc, not_detected);
	tcase_add_test(tc, own_files_kept);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(capfile_tap_suite)
