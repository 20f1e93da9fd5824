/* test_refcheck.c — matching a host capture against a reference, on files
 * built here with errors chosen here: the figures must come back. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <sys/socket.h>

#include "unit.h"

#include "files/frame.h"
#include "files/pcapng.h"
#include "validate/refcheck.h"
#include "base/rng.h"
#include "stamp/ts.h"
#include "validate/verdict.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "refcheck");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

#define T0 1700000000000000000LL

/* Packet i: UDP from 198.18.0.1:5000 to 198.18.0.2:6000 for even i (host
 * sends), the other way for odd i (host receives); payload carries i. */
static int build(uint8_t *buf, unsigned i, bool rx)
{
	struct frame_flow f = { .family = AF_INET, .proto = 17 };
	char payload[32];

	inet_pton(AF_INET, "198.18.0.1", f.src);
	inet_pton(AF_INET, "198.18.0.2", f.dst);
	f.sport = 5000;
	f.dport = 6000;
	if (rx)
		frame_flow_reverse(&f);
	snprintf(payload, sizeof(payload), "message %08u......", i);
	return frame_build(buf, 256, &f, 0, 0, 0, payload, strlen(payload));
}

struct gen {
	unsigned n;
	double offset_ns, rate_ppb, noise_ns;
	bool host_tai;		/* host file says TAI */
	unsigned host_skip_every;	/* host lacks every Nth packet (0: none) */
	unsigned ref_skip_every;
	unsigned dup_every;	/* reference and host carry packet i twice */
	unsigned key_shift;	/* reference payload numbers shifted */
	int64_t ref_quantum;	/* reference stamps floored to this */
};

static void writer(struct pcapng_writer **w, uint32_t *id, const char *path,
		   const struct pcapng_source *src)
{
	struct pcapng_section sec = { .hostname = "t" };
	struct pcapng_iface ifc = { .name = "eth0", .linktype = 1 };

	ck_assert_int_eq(pcapng_open(w, path, &sec), 0);
	if (src)
		ifc.src = *src;
	else
		ifc.src.phc = -1;
	ck_assert_int_eq(pcapng_add_iface(*w, &ifc, id), 0);
}

/* Writes host.pcapng and ref.pcapng; returns the true mean error. */
static double generate(const struct gen *g, double *sd)
{
	char hp[96], rp[96];
	struct pcapng_writer *hw, *rw;
	struct pcapng_source hsrc = { .hw = true, .phc = 0,
				      .timescale = g->host_tai ? TS_SCALE_TAI :
				      TS_SCALE_UTC };
	uint32_t hid, rid;
	struct rng rng;
	double sum = 0, sum2 = 0;
	unsigned m = 0;

	rng_seed(&rng, 7, 0);
	snprintf(hp, sizeof(hp), "%s/host.pcapng", dir);
	snprintf(rp, sizeof(rp), "%s/ref.pcapng", dir);
	writer(&hw, &hid, hp, &hsrc);
	writer(&rw, &rid, rp, NULL);
	for (unsigned i = 0; i < g->n; i++) {
		uint8_t buf[256], rbuf[256];
		bool rx = i % 2;
		int len = build(buf, i, rx);
		int rlen = build(rbuf, i + g->key_shift, rx);
		/* Every 10 µs or so: stamps of real traffic are not periodic (their
		 * greatest common step is the resolution). */
		int64_t t = T0 + (int64_t)i * 10000 + (int64_t)(rng_next(&rng) % 997);
		int64_t rt = g->ref_quantum > 1 ?
			     t / g->ref_quantum * g->ref_quantum : t;
		double e = g->offset_ns + g->rate_ppb * 1e-9 * (double)(t - T0) +
			   g->noise_ns * rng_gauss(&rng);
		int64_t ht = t + llround(e);
		enum pcapng_dir dir_ = rx ? PCAPNG_DIR_IN : PCAPNG_DIR_OUT;
		unsigned copies = g->dup_every && i % g->dup_every == 0 ? 2 : 1;

		for (unsigned c = 0; c < copies; c++) {
			int64_t later = (int64_t)c * 3000000;	/* resent 3 ms on */

			if (!g->ref_skip_every || i % g->ref_skip_every)
				ck_assert_int_eq(pcapng_write_packet(rw, rid, rt + later,
								     rbuf, (uint32_t)rlen,
								     (uint32_t)rlen, dir_), 0);
			if (!g->host_skip_every || i % g->host_skip_every) {
				ck_assert_int_eq(pcapng_write_packet(hw, hid,
					ht + later + (g->host_tai ? 37000000000LL : 0),
					buf, (uint32_t)len, (uint32_t)len, dir_), 0);
				if ((!g->ref_skip_every || i % g->ref_skip_every) &&
				    !g->key_shift) {
					double x = (double)(ht - rt);

					sum += x;
					sum2 += x * x;
					m++;
				}
			}
		}
	}
	ck_assert_int_eq(pcapng_close(hw, false), 0);
	ck_assert_int_eq(pcapng_close(rw, false), 0);
	if (m > 1)
		*sd = sqrt((sum2 - sum * sum / m) / (m - 1));
	return m ? sum / m : NAN;
}

static int run(struct refcheck_result *r)
{
	struct refcheck_config cfg;
	char hp[96], rp[96], err[REFCHECK_ERRBUF];

	snprintf(hp, sizeof(hp), "%s/host.pcapng", dir);
	snprintf(rp, sizeof(rp), "%s/ref.pcapng", dir);
	refcheck_config_init(&cfg);
	cfg.host_path = hp;
	cfg.ref_path = rp;
	return refcheck_run(&cfg, r, err);
}

START_TEST(known_error_comes_back)
{
	struct gen g = { .n = 20000, .offset_ns = 62, .rate_ppb = 500,
			 .noise_ns = 15, .ref_quantum = 1 };
	struct refcheck_result r;
	double sd, mean = generate(&g, &sd);

	ck_assert_int_eq(run(&r), 0);
	ck_assert_uint_eq(r.matched, g.n);
	ck_assert_uint_eq(r.dir[REFCHECK_TX].err.n, g.n / 2);
	ck_assert_uint_eq(r.dir[REFCHECK_RX].err.n, g.n / 2);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.mean, mean, 0.01);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.sd, sd, 0.01);
	/* The line: 500 ppb over 0.2 s is 100 ns of drift. */
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].fit.b * 1e9, 500, 10);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].fit.a, 62, 1.5);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].fit.resid_sd, 15, 1);
	ck_assert_uint_eq(r.host_unmatched, 0);
	ck_assert_uint_eq(r.dir_conflicts, 0);
	ck_assert_str_eq(r.host_source, "hw");
	refcheck_result_free(&r);
}
END_TEST

START_TEST(tai_host_against_utc_reference)
{
	struct gen g = { .n = 2000, .offset_ns = -40, .host_tai = true,
			 .ref_quantum = 1 };
	struct refcheck_result r;
	double sd = 0, mean = generate(&g, &sd);

	ck_assert_int_eq(run(&r), 0);
	ck_assert_int_eq(r.timescale_adjust_ns, -37000000000LL);
	ck_assert_uint_eq(r.matched, g.n);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.mean, mean, 0.01);
	refcheck_result_free(&r);
}
END_TEST

/* A host capture on TAI that does not say so (a foreign file): the error
 * is 37 s, and the judge says why rather than only failing. */
START_TEST(unmarked_tai_is_named)
{
	struct gen g = { .n = 1000, .offset_ns = 10, .ref_quantum = 1 };
	struct refcheck_result r;
	struct verdict_limits lim;
	struct verdict_check c;
	char hp[96], rp[96], err[REFCHECK_ERRBUF];
	struct refcheck_config cfg;
	bool named = false;
	double sd;

	generate(&g, &sd);
	/* Same files, but the reference taken as TAI against the host's
	 * UTC: every stamp looks 37 s off. */
	snprintf(hp, sizeof(hp), "%s/host.pcapng", dir);
	snprintf(rp, sizeof(rp), "%s/ref.pcapng", dir);
	refcheck_config_init(&cfg);
	cfg.host_path = hp;
	cfg.ref_path = rp;
	cfg.ref_timescale = TS_SCALE_TAI;
	ck_assert_int_eq(refcheck_run(&cfg, &r, err), 0);
	ck_assert_uint_eq(r.matched, g.n);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.mean, 10 + 37e9, 1);
	verdict_limits_init(&lim);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	for (unsigned i = 0; i < c.n; i++)
		named |= strstr(c.item[i].text, "TAI - UTC") != NULL;
	ck_assert(named);
	refcheck_result_free(&r);
}
END_TEST

START_TEST(missing_and_repeated_packets)
{
	struct gen g = { .n = 5000, .offset_ns = 100, .noise_ns = 5,
			 .host_skip_every = 50, .ref_skip_every = 7,
			 .dup_every = 100, .ref_quantum = 1 };
	struct refcheck_result r;
	double sd, mean = generate(&g, &sd);
	uint64_t both = 0, ref_only = 0;

	for (unsigned i = 0; i < g.n; i++) {
		unsigned c = i % g.dup_every == 0 ? 2 : 1;
		bool in_h = i % g.host_skip_every, in_r = i % g.ref_skip_every;

		both += in_h && in_r ? c : 0;
		ref_only += !in_h || in_r ? 0 : c;
	}
	ck_assert_int_eq(run(&r), 0);
	/* Each resent copy matched its own reference copy, 3 ms apart:
	 * the mean holds with no 3 ms outliers. */
	ck_assert_uint_eq(r.matched, both);
	ck_assert_uint_eq(r.host_unmatched + r.host_outside, ref_only);
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.mean, mean, 0.01);
	ck_assert_int_lt(r.dir[REFCHECK_ALL].err.max, 200);
	refcheck_result_free(&r);
}
END_TEST

START_TEST(no_packet_in_common_fails)
{
	struct gen g = { .n = 1000, .key_shift = 100000, .ref_quantum = 1 };
	struct refcheck_result r;
	struct verdict_limits lim;
	struct verdict_check c;
	double sd;

	generate(&g, &sd);
	ck_assert_int_eq(run(&r), 0);
	ck_assert_uint_eq(r.matched, 0);
	verdict_limits_init(&lim);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	ck_assert_ptr_nonnull(strstr(c.item[0].text, "no packet in common"));
	refcheck_result_free(&r);
}
END_TEST

START_TEST(verdicts_follow_the_limits)
{
	struct gen g = { .n = 4000, .offset_ns = 150, .noise_ns = 10,
			 .ref_quantum = 1 };
	struct refcheck_result r;
	struct verdict_limits lim;
	struct verdict_check c;
	char err[VERDICT_ERRBUF];
	double sd;

	generate(&g, &sd);
	ck_assert_int_eq(run(&r), 0);
	verdict_limits_init(&lim);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	ck_assert_int_eq(c.v, VERDICT_WARN);	/* 150 > 100 */
	ck_assert_int_eq(verdict_limits_set(&lim, "ref.mean_abs_ns=200", err), 0);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	ck_assert_int_eq(c.v, VERDICT_PASS);
	ck_assert_int_eq(verdict_limits_set(&lim, "ref.mean_abs_ns=50,120", err), 0);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	refcheck_result_free(&r);
}
END_TEST

/* A classic pcap with microsecond stamps as the reference: the result
 * warns that resolution limits what it says. */
START_TEST(microsecond_reference_warns)
{
	char hp[96], rp[96], err[REFCHECK_ERRBUF];
	struct refcheck_config cfg;
	struct refcheck_result r;
	struct verdict_limits lim;
	struct verdict_check c;
	struct pcapng_writer *hw;
	uint32_t hid;
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *du;
	bool warned = false;

	snprintf(hp, sizeof(hp), "%s/host.pcapng", dir);
	snprintf(rp, sizeof(rp), "%s/ref.pcap", dir);
	du = pcap_dump_open(pd, rp);
	ck_assert_ptr_nonnull(du);
	writer(&hw, &hid, hp, NULL);
	for (unsigned i = 0; i < 500; i++) {
		uint8_t buf[256];
		int len = build(buf, i, false);
		int64_t t = T0 + (int64_t)i * 1000000 + 333;
		struct pcap_pkthdr ph;

		ph.ts.tv_sec = t / 1000000000;
		ph.ts.tv_usec = (t % 1000000000) / 1000;
		ph.caplen = ph.len = (bpf_u_int32)len;
		pcap_dump((u_char *)du, &ph, buf);
		ck_assert_int_eq(pcapng_write_packet(hw, hid, t + 20 + i % 3, buf,
						     (uint32_t)len, (uint32_t)len,
						     PCAPNG_DIR_OUT), 0);
	}
	pcap_dump_close(du);
	pcap_close(pd);
	ck_assert_int_eq(pcapng_close(hw, false), 0);

	refcheck_config_init(&cfg);
	cfg.host_path = hp;
	cfg.ref_path = rp;
	ck_assert_int_eq(refcheck_run(&cfg, &r, err), 0);
	ck_assert_uint_eq(r.matched, 500);
	ck_assert_int_eq(r.ref_res_ns, 1000);
	/* 333 ns lost to the µs floor, plus the 20 (and 0, 1 or 2) ns put
	 * in; the host's own stamps step by 1 ns, so only the reference
	 * can make the resolution warn. */
	ck_assert_double_eq_tol(r.dir[REFCHECK_ALL].err.mean, 353.998, 0.001);
	ck_assert_int_eq(r.host_step_ns, 1);
	verdict_limits_init(&lim);
	verdict_check_init(&c, "reference", NULL);
	refcheck_judge(&r, &lim, &c);
	for (unsigned i = 0; i < c.n; i++)
		if (c.item[i].limit && !strcmp(c.item[i].limit, "ref.resolution_ns"))
			warned = c.item[i].v == VERDICT_WARN;
	ck_assert(warned);
	refcheck_result_free(&r);
}
END_TEST

START_TEST(bad_files_name_themselves)
{
	char hp[96], rp[96], err[REFCHECK_ERRBUF];
	struct refcheck_config cfg;
	struct refcheck_result r;

	snprintf(hp, sizeof(hp), "%s/host.pcapng", dir);
	snprintf(rp, sizeof(rp), "%s/garbage", dir);
	unit_write_file(rp, "this is not a capture at all\n");
	unit_write_file(hp, "neither is this\n");
	refcheck_config_init(&cfg);
	cfg.host_path = hp;
	cfg.ref_path = rp;
	ck_assert_int_lt(refcheck_run(&cfg, &r, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "garbage"));
	snprintf(rp, sizeof(rp), "%s/missing.pcapng", dir);
	ck_assert_int_eq(refcheck_run(&cfg, &r, err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "missing.pcapng"));
}
END_TEST

static Suite *refcheck_suite(void)
{
	Suite *s = suite_create("refcheck");
	TCase *tc = tcase_create("refcheck");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, known_error_comes_back);
	tcase_add_test(tc, tai_host_against_utc_reference);
	tcase_add_test(tc, unmarked_tai_is_named);
	tcase_add_test(tc, missing_and_repeated_packets);
	tcase_add_test(tc, no_packet_in_common_fails);
	tcase_add_test(tc, verdicts_follow_the_limits);
	tcase_add_test(tc, microsecond_reference_warns);
	tcase_add_test(tc, bad_files_name_themselves);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(refcheck_suite)
