/* test_loopcheck.c — the loopback check's verdicts on constructed results
 * (no sockets: loopcheck_run() is the namespace test's), its frames, and
 * its printed figures. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/loopcheck.h"
#include "base/print.h"
#include "files/calib.h"
#include "validate/verdict.h"
#include <linux/net_tstamp.h>

#include "unit.h"

/* A direction from -> to: n frames sent, received and stamped, a one-way
 * summary of that mean and SD (judge() reads summaries, not samples). */
static void fill_dir(struct loopcheck_dir *d, const char *from, const char *to,
		     enum ts_source src, unsigned n, double mean, double sd)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->from, sizeof(d->from), "%s", from);
	snprintf(d->to, sizeof(d->to), "%s", to);
	d->source = src;
	d->phc_tx = d->phc_rx = src == TS_SOURCE_HW ? 0 : -1;
	d->sent = d->received = n;
	d->oneway_ns.n = n;
	d->oneway_ns.mean = mean;
	d->oneway_ns.sd = sd;
	d->oneway_ns.p50 = (int64_t)mean;
}

static void sw_result(struct loopcheck_result *r, double sd)
{
	memset(r, 0, sizeof(*r));
	r->ndir = 2;
	r->expect_ns = -1;
	fill_dir(&r->dir[0], "tla", "tlb", TS_SOURCE_SW, 1000, 20000, sd);
	fill_dir(&r->dir[1], "tlb", "tla", TS_SOURCE_SW, 1000, 21000, sd);
	snprintf(r->sw_why, sizeof(r->sw_why), "tla has no hardware timestamping");
}

static void hw_result(struct loopcheck_result *r)
{
	memset(r, 0, sizeof(*r));
	r->ndir = 2;
	r->expect_ns = 50;
	r->same_phc = true;
	for (int i = 0; i < 2; i++) {
		struct loopcheck_dir *d = &r->dir[i];

		fill_dir(d, i ? "eth2" : "eth1", i ? "eth1" : "eth2",
			 TS_SOURCE_HW, 1000, 60 + i * 4, 8);
		d->have_hwsw = true;
		d->tx_sw_hw_ns = (struct summary){ .n = 1000, .mean = -2500,
						   .p50 = -2400 };
		d->rx_sw_hw_ns = (struct summary){ .n = 1000, .mean = 4100,
						   .p50 = 3900 };
	}
}

/* The item that applied limit name, the nth such (from 0), or NULL. */
static const struct verdict_item *item_of(const struct verdict_check *c,
					  const char *name, unsigned nth)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->item[i].limit && !strcmp(c->item[i].limit, name) &&
		    nth-- == 0)
			return &c->item[i];
	return NULL;
}

/* The first note (no limit) whose text holds s, or NULL. */
static const struct verdict_item *note_with(const struct verdict_check *c,
					    const char *s)
{
	for (unsigned i = 0; i < c->n; i++)
		if (!c->item[i].limit && strstr(c->item[i].text, s))
			return &c->item[i];
	return NULL;
}

static struct verdict_limits lim;
static struct verdict_check loop, hwsw;

static void judge(const struct loopcheck_result *r)
{
	verdict_limits_init(&lim);
	loopcheck_judge(r, &lim, &loop, &hwsw);
}

START_TEST(sw_sd_3us_passes)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	sw_result(&r, 3000);
	judge(&r);
	ck_assert_str_eq(loop.name, "loopback");
	ck_assert_str_eq(loop.subject, "tla<->tlb");
	ck_assert_int_eq(loop.v, VERDICT_PASS);
	for (unsigned d = 0; d < 2; d++) {
		it = item_of(&loop, "loop.sw.sd_ns", d);
		ck_assert_ptr_nonnull(it);
		ck_assert_int_eq(it->v, VERDICT_PASS);
		ck_assert(fabs(it->value - 3000) < 1e-9);
	}
	/* Software limits only: no hardware limit is applied. */
	ck_assert_ptr_null(item_of(&loop, "loop.hw.sd_ns", 0));
	it = note_with(&loop, "software stamps: the one-way includes the host stack");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->v, VERDICT_PASS);
	/* No expected delay: no cable error judged, a note with the mean. */
	ck_assert_ptr_null(item_of(&loop, "loop.sw.cable_error_ns", 0));
	it = note_with(&loop, "expected delay was not given");
	ck_assert_ptr_nonnull(it);
	ck_assert_ptr_nonnull(strstr(it->text, "20000 ns"));
	it = item_of(&loop, "loop.sw.asymmetry_ns", 0);
	ck_assert_ptr_nonnull(it);
	ck_assert(fabs(it->value - 1000) < 1e-9);
	ck_assert_ptr_null(item_of(&loop, "loop.sw.asymmetry_ns", 1));
}
END_TEST

START_TEST(sw_sd_60us_fails)
{
	struct loopcheck_result r;

	sw_result(&r, 60000);
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_FAIL);
	ck_assert_int_eq(item_of(&loop, "loop.sw.sd_ns", 0)->v, VERDICT_FAIL);
}
END_TEST

START_TEST(sw_sd_warns_between)
{
	struct loopcheck_result r;

	sw_result(&r, 6000);
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_WARN);
}
END_TEST

START_TEST(tx_missing)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	sw_result(&r, 3000);
	r.dir[1].tx_missing = 20;	/* 2 % of 1000 */
	r.dir[1].oneway_ns.n = 980;
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_FAIL);
	ck_assert_int_eq(item_of(&loop, "loop.tx_missing_pct", 0)->v, VERDICT_PASS);
	it = item_of(&loop, "loop.tx_missing_pct", 1);
	ck_assert_int_eq(it->v, VERDICT_FAIL);
	ck_assert(fabs(it->value - 2.0) < 1e-9);
	ck_assert_ptr_nonnull(strstr(it->text, "tlb->tla"));

	r.dir[1].tx_missing = 5;	/* 0.5 %: above warn (0), below fail */
	judge(&r);
	ck_assert_int_eq(item_of(&loop, "loop.tx_missing_pct", 1)->v, VERDICT_WARN);
}
END_TEST

START_TEST(late_and_lost)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	sw_result(&r, 3000);
	r.dir[0].tx_late = 30;
	r.dir[0].received = 990;	/* 10 lost */
	r.dir[0].rx_unstamped = 5;	/* and 5 unstamped: 1.5 % */
	judge(&r);
	ck_assert_int_eq(item_of(&loop, "loop.tx_late_pct", 0)->v, VERDICT_FAIL);
	it = item_of(&loop, "loop.rx_lost_pct", 0);
	ck_assert(fabs(it->value - 1.5) < 1e-9);
	ck_assert_int_eq(it->v, VERDICT_FAIL);
	ck_assert_int_eq(item_of(&loop, "loop.rx_lost_pct", 1)->v, VERDICT_PASS);
}
END_TEST

START_TEST(expected_delay)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	sw_result(&r, 3000);
	r.expect_ns = 500;
	judge(&r);
	it = item_of(&loop, "loop.sw.cable_error_ns", 0);
	ck_assert_ptr_nonnull(it);
	ck_assert(fabs(it->value - 19500) < 1e-9);
	ck_assert_int_eq(it->v, VERDICT_PASS);
	it = item_of(&loop, "loop.sw.cable_error_ns", 1);
	ck_assert(fabs(it->value - 20500) < 1e-9);
	ck_assert_int_eq(it->v, VERDICT_WARN);
	ck_assert_ptr_null(note_with(&loop, "expected delay was not given"));
}
END_TEST

START_TEST(hwsw_skipped_without_hardware)
{
	struct loopcheck_result r;

	sw_result(&r, 3000);
	judge(&r);
	ck_assert_str_eq(hwsw.name, "hwsw");
	ck_assert_int_eq(hwsw.v, VERDICT_SKIP);
	ck_assert_uint_eq(hwsw.n, 0);
	ck_assert_str_eq(hwsw.why,
			 "software stamps only: tla has no hardware timestamping");
}
END_TEST

START_TEST(one_way)
{
	struct loopcheck_result r;

	sw_result(&r, 3000);
	r.ndir = 1;
	judge(&r);
	ck_assert_str_eq(loop.subject, "tla->tlb");
	ck_assert_ptr_null(item_of(&loop, "loop.sw.asymmetry_ns", 0));
	ck_assert_ptr_null(item_of(&loop, "loop.sw.sd_ns", 1));
	ck_assert_int_eq(loop.v, VERDICT_PASS);
}
END_TEST

START_TEST(nothing_arrived)
{
	struct loopcheck_result r;

	sw_result(&r, 0);
	for (int d = 0; d < 2; d++) {
		r.dir[d].received = 0;
		r.dir[d].oneway_ns = (struct summary){ 0 };
	}
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_FAIL);
	ck_assert_ptr_nonnull(note_with(&loop, "no frame arrived"));
	ck_assert_int_eq(note_with(&loop, "no frame arrived")->v, VERDICT_FAIL);
	ck_assert(fabs(item_of(&loop, "loop.rx_lost_pct", 0)->value - 100) < 1e-9);
	/* Nothing to take an SD of: not judged item by item. */
	ck_assert_ptr_null(item_of(&loop, "loop.sw.sd_ns", 0));
}
END_TEST

START_TEST(one_sample_sd_not_measured)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	sw_result(&r, 0);
	r.dir[0].oneway_ns.n = 1;
	judge(&r);
	it = item_of(&loop, "loop.sw.sd_ns", 0);
	ck_assert(isnan(it->value));
	ck_assert_int_eq(it->v, VERDICT_FAIL);
}
END_TEST

START_TEST(hardware)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	hw_result(&r);
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_PASS);
	ck_assert_ptr_nonnull(item_of(&loop, "loop.hw.sd_ns", 1));
	ck_assert_ptr_nonnull(item_of(&loop, "loop.hw.cable_error_ns", 1));
	ck_assert_ptr_nonnull(item_of(&loop, "loop.hw.asymmetry_ns", 0));
	ck_assert_ptr_null(item_of(&loop, "loop.sw.sd_ns", 0));
	ck_assert_ptr_nonnull(note_with(&loop, "hardware stamps"));
	ck_assert_ptr_null(note_with(&loop, "different PHCs"));

	ck_assert_int_eq(hwsw.v, VERDICT_PASS);
	ck_assert_int_eq(item_of(&hwsw, "hwsw.hw_missing_pct", 0)->v, VERDICT_PASS);
	it = note_with(&hwsw, "eth1->eth2 software - hardware");
	ck_assert_ptr_nonnull(it);
	ck_assert_ptr_nonnull(strstr(it->text, "TX at eth1 mean -2500 ns, p50 -2400 ns"));
	ck_assert_ptr_nonnull(strstr(it->text, "RX at eth2 mean 4100 ns, p50 3900 ns"));

	/* 2 % of frames lacked a hardware stamp at one end. */
	r.dir[1].hw_missing = 20;
	judge(&r);
	ck_assert_int_eq(hwsw.v, VERDICT_FAIL);
	ck_assert(fabs(item_of(&hwsw, "hwsw.hw_missing_pct", 1)->value - 2) < 1e-9);
}
END_TEST

START_TEST(hardware_two_phcs)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	hw_result(&r);
	r.same_phc = false;
	for (int d = 0; d < 2; d++) {
		r.dir[d].phc_tx = d;
		r.dir[d].phc_rx = 1 - d;
	}
	judge(&r);
	it = note_with(&loop, "different PHCs (ptp0, ptp1)");
	ck_assert_ptr_nonnull(it);
	ck_assert_ptr_nonnull(strstr(it->text, "includes the offset between them"));
}
END_TEST

/* A NIC filter narrower than all at a receiving end: named, a failure. */
START_TEST(hardware_narrow_filter)
{
	struct loopcheck_result r;
	const struct verdict_item *it;

	hw_result(&r);
	for (int i = 0; i < 2; i++) {
		r.rx_filter_known[i] = true;
		r.rx_filter[i] = HWTSTAMP_FILTER_ALL;
	}
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_PASS);
	ck_assert_ptr_null(note_with(&loop, "receive filter"));
	r.rx_filter[1] = HWTSTAMP_FILTER_PTP_V2_EVENT;
	judge(&r);
	ck_assert_int_eq(loop.v, VERDICT_FAIL);
	it = note_with(&loop, "eth2: the NIC's receive filter is ptpv2-event");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->v, VERDICT_FAIL);
	/* One way only: the sending end's filter does not matter. */
	r.rx_filter[1] = HWTSTAMP_FILTER_ALL;
	r.rx_filter[0] = HWTSTAMP_FILTER_PTP_V2_EVENT;
	r.ndir = 1;
	judge(&r);
	ck_assert_ptr_null(note_with(&loop, "receive filter"));
}
END_TEST

START_TEST(hardware_no_software_stamps)
{
	struct loopcheck_result r;

	hw_result(&r);
	r.dir[0].rx_sw_hw_ns = (struct summary){ 0 };
	judge(&r);
	ck_assert_int_eq(hwsw.v, VERDICT_WARN);
	ck_assert_ptr_nonnull(note_with(&hwsw, "nothing to compare there"));
}
END_TEST

/* ---- frames ---- */

START_TEST(frame_round_trip)
{
	const uint8_t dst[6] = { 2, 0, 0, 0, 0, 0xb }, src[6] = { 2, 0, 0, 0, 0, 0xa };
	struct loopcheck_frame f = { .dir = 1, .seq = 0xdeadbeef,
				     .nonce = 0x0123456789abcdefULL }, g;
	uint8_t buf[128];

	memset(buf, 0xff, sizeof(buf));
	ck_assert_int_eq(loopcheck_frame_build(buf, 64, dst, src, &f), 64);
	ck_assert_mem_eq(buf, dst, 6);
	ck_assert_mem_eq(buf + 6, src, 6);
	ck_assert_uint_eq(buf[12], 0x88);
	ck_assert_uint_eq(buf[13], 0xb5);
	ck_assert_mem_eq(buf + 14, "TPLV", 4);
	for (int i = LOOPCHECK_HDR_LEN; i < 64; i++)
		ck_assert_uint_eq(buf[i], 0);	/* padding */
	ck_assert_uint_eq(buf[64], 0xff);	/* nothing written past len */
	ck_assert_int_eq(loopcheck_frame_parse(buf, 64, &g), 0);
	ck_assert_uint_eq(g.dir, 1);
	ck_assert_uint_eq(g.seq, 0xdeadbeef);
	ck_assert(g.nonce == 0x0123456789abcdefULL);
	/* The header alone parses: receivers read no more. */
	ck_assert_int_eq(loopcheck_frame_parse(buf, LOOPCHECK_HDR_LEN, &g), 0);
}
END_TEST

START_TEST(frame_rejects)
{
	const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct loopcheck_frame f = { .seq = 7, .nonce = 1 }, g;
	uint8_t buf[64];

	ck_assert_int_eq(loopcheck_frame_build(buf, 59, mac, mac, &f), -EINVAL);
	ck_assert_int_eq(loopcheck_frame_build(buf, 60, mac, mac, &f), 60);
	ck_assert_int_eq(loopcheck_frame_parse(buf, LOOPCHECK_HDR_LEN - 1, &g),
			 -EBADMSG);
	buf[13] = 0xb6;		/* another EtherType */
	ck_assert_int_eq(loopcheck_frame_parse(buf, 60, &g), -EBADMSG);
	buf[13] = 0xb5;
	buf[15] = 'X';		/* another magic */
	ck_assert_int_eq(loopcheck_frame_parse(buf, 60, &g), -EBADMSG);
	buf[15] = 'P';
	buf[19] = 2;		/* a version we do not know */
	ck_assert_int_eq(loopcheck_frame_parse(buf, 60, &g), -EBADMSG);
}
END_TEST

/* ---- printing ---- */

START_TEST(print_json)
{
	struct loopcheck_result r;
	struct printer *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	sw_result(&r, 3000);
	r.ndir = 1;
	r.dir[0].tx_missing = 2;
	p = print_create(f, PRINT_JSON, 0);
	loopcheck_print(p, &r);
	ck_assert_int_eq(print_destroy(p), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "{\"directions\":[{\"from\":\"tla\",\"to\":\"tlb\","
				     "\"source\":\"sw\",\"phc_tx\":null,\"phc_rx\":null,\"rx_filter\":null,"
				     "\"sent\":1000,\"received\":1000,\"rx_unstamped\":0,"
				     "\"tx_missing\":2,\"tx_late\":0,\"expect_ns\":null,"
				     "\"oneway_ns\":{\"count\":1000,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"have_hwsw\":false,\"hw_missing\":null,"
				     "\"phc_sys_tx_ns\":null,\"phc_sys_rx_ns\":null,"
				     "\"tx_sw_hw_ns\":null,\"rx_sw_hw_ns\":null}]}"));
	free(buf);
}
END_TEST

START_TEST(print_text_hw)
{
	struct loopcheck_result r;
	struct printer *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	hw_result(&r);
	p = print_create(f, PRINT_TEXT, 0);
	loopcheck_print(p, &r);
	ck_assert_int_eq(print_destroy(p), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "eth1 -> eth2: hw stamps (ptp0 -> ptp0)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "expected one-way 50 ns\n"));
	ck_assert_ptr_nonnull(strstr(buf, "TX sw - hw ns  n 1000"));
	ck_assert_ptr_nonnull(strstr(buf, "RX sw - hw ns  n 1000"));
	free(buf);
}
END_TEST

START_TEST(free_is_safe)
{
	struct loopcheck_result r;

	memset(&r, 0, sizeof(r));
	loopcheck_result_free(&r);
	ck_assert_int_eq(r.expect_ns, -1);
	r.dir[0].oneway = malloc(8);
	loopcheck_result_free(&r);
	ck_assert_ptr_null(r.dir[0].oneway);
}
END_TEST

START_TEST(config_defaults)
{
	struct loopcheck_config c;

	loopcheck_config_init(&c);
	ck_assert_uint_eq(c.count, 1000);
	ck_assert(c.rate_pps == 1000);
	ck_assert_uint_eq(c.frame_len, 64);
	ck_assert_int_eq(c.expect_ns, -1);
	ck_assert_int_eq(c.tx_timeout_ns, 100000000);
	ck_assert_int_eq(c.mode, TS_MODE_AUTO);
	ck_assert(!c.one_way);
}
END_TEST

START_TEST(run_rejects_bad_config)
{
	struct loopcheck_config c;
	struct loopcheck_result r;
	char err[LOOPCHECK_ERRBUF];

	loopcheck_config_init(&c);
	c.port[0] = c.port[1] = "tla";
	ck_assert_int_eq(loopcheck_run(&c, &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "tla: both ends are the same port"));
	c.port[1] = "tapless-nosuch0";
	c.port[0] = "tapless-nosuch1";
	ck_assert_int_eq(loopcheck_run(&c, &r, err), -ENODEV);
	ck_assert_str_eq(err, "tapless-nosuch1: no such interface");
	c.count = 0;
	ck_assert_int_eq(loopcheck_run(&c, &r, err), -EINVAL);
	c.count = 10;
	c.frame_len = 40;
	ck_assert_int_eq(loopcheck_run(&c, &r, err), -EINVAL);
	loopcheck_result_free(&r);
}
END_TEST

/* n samples of v, the first at lo and the last at hi (sorted). */
static int64_t *samples(size_t n, int64_t lo, int64_t v, int64_t hi)
{
	int64_t *a = malloc(n * sizeof(*a));

	ck_assert_ptr_nonnull(a);
	for (size_t i = 0; i < n; i++)
		a[i] = v;
	a[0] = lo;
	a[n - 1] = hi;
	return a;
}

/* Both directions pooled: 200 one-ways, median 1001, p0.5 901 (rank 1),
 * p99.5 1001 (rank 199: the largest is beyond it). */
static void calib_result(struct loopcheck_result *r, enum ts_source src)
{
	memset(r, 0, sizeof(*r));
	r->ndir = 2;
	r->same_phc = src == TS_SOURCE_HW;
	for (int d = 0; d < 2; d++) {
		fill_dir(&r->dir[d], d ? "b" : "a", d ? "a" : "b", src, 100,
			 1001, 10);
		r->dir[d].oneway = samples(100, d ? 1001 : 901, 1001,
					   d ? 5001 : 1001);
	}
}

START_TEST(calibrate_sw)
{
	struct loopcheck_result r;
	struct calib c;
	char err[LOOPCHECK_ERRBUF];

	calib_result(&r, TS_SOURCE_SW);
	r.expect_ns = 1;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert(!c.t[CALIB_TX][CALIB_HW].set && !c.t[CALIB_RX][CALIB_HW].set);
	ck_assert(c.t[CALIB_TX][CALIB_SW].set && c.t[CALIB_RX][CALIB_SW].set);
	/* Excess median 1000: half each end, RX's offset less TX's (stamp -
	 * wire); spread_sum 100: 50 each. */
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, -500);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].offset_ns, 500);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].spread_ns, 50);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].spread_ns, 50);
	ck_assert_uint_eq(c.t[CALIB_TX][CALIB_SW].samples, 200);
	ck_assert_uint_eq(c.t[CALIB_RX][CALIB_SW].samples, 200);
	ck_assert_str_eq(c.host, "");
	/* An odd median: TX takes minus its floor, RX the rest; an odd
	 * spread_sum rounds up at each end. A negative median too. */
	r.expect_ns = 0;
	r.dir[0].oneway[0] = 900;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, -500);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].offset_ns, 501);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].spread_ns, 51);
	r.expect_ns = 2002;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, 501);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].offset_ns, -500);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].spread_ns, 51);

	/* One direction of 100 is enough; 99 is not. */
	r.ndir = 1;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert_uint_eq(c.t[CALIB_RX][CALIB_SW].samples, 100);
	r.dir[0].oneway_ns.n = 99;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), -EINVAL);
	ck_assert_str_eq(err, "99 one-way samples; a calibration needs at least 100");
	ck_assert(!c.t[CALIB_TX][CALIB_SW].set);
	r.ndir = 2;
	/* No true one-way. */
	r.expect_ns = -1;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "true one-way is not known"));
	/* Beyond what a file holds. */
	r.expect_ns = 0;
	for (int i = 0; i < 100; i++)
		r.dir[0].oneway[i] = r.dir[1].oneway[i] = 2100000000;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "beyond the 1 s"));
	loopcheck_result_free(&r);
}
END_TEST

START_TEST(calibrate_hw)
{
	struct loopcheck_result r;
	struct calib c;
	char err[LOOPCHECK_ERRBUF];

	calib_result(&r, TS_SOURCE_HW);
	r.expect_ns = 1;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_HW].offset_ns, -500);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_HW].spread_ns, 50);
	ck_assert(!c.t[CALIB_TX][CALIB_SW].set && !c.t[CALIB_RX][CALIB_SW].set);

	/* With software stamps too: TX's sw - hw of both directions pooled
	 * (median 2400, reach 500 to p99.5), RX's of one direction only. */
	for (int d = 0; d < 2; d++) {
		r.dir[d].have_hwsw = true;
		r.dir[d].tx_sw_hw = samples(100, 2400, 2400, d ? 3400 : 2400);
		r.dir[d].tx_sw_hw_ns.n = 100;
	}
	r.dir[1].tx_sw_hw[98] = 2900;
	r.dir[0].rx_sw_hw = samples(100, -3900, -3900, -3900);
	r.dir[0].rx_sw_hw_ns.n = 100;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), 0);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, -500 + 2400);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].spread_ns, 50 + 500);
	ck_assert_uint_eq(c.t[CALIB_TX][CALIB_SW].samples, 200);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].offset_ns, 500 - 3900);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].spread_ns, 50);
	ck_assert_uint_eq(c.t[CALIB_RX][CALIB_SW].samples, 100);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_HW].offset_ns, -500);

	/* Two PHCs: their offset is in the one-way. */
	r.same_phc = false;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "two PHCs"));
	/* Directions of two sources. */
	r.same_phc = true;
	r.dir[1].source = TS_SOURCE_SW;
	ck_assert_int_eq(loopcheck_calibrate(&r, &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not of one source"));
	loopcheck_result_free(&r);
}
END_TEST

static Suite *loopcheck_suite(void)
{
	Suite *s = suite_create("loopcheck");
	TCase *t = tcase_create("judge");

	tcase_add_test(t, sw_sd_3us_passes);
	tcase_add_test(t, sw_sd_60us_fails);
	tcase_add_test(t, sw_sd_warns_between);
	tcase_add_test(t, tx_missing);
	tcase_add_test(t, late_and_lost);
	tcase_add_test(t, expected_delay);
	tcase_add_test(t, hwsw_skipped_without_hardware);
	tcase_add_test(t, one_way);
	tcase_add_test(t, nothing_arrived);
	tcase_add_test(t, one_sample_sd_not_measured);
	tcase_add_test(t, hardware);
	tcase_add_test(t, hardware_two_phcs);
	tcase_add_test(t, hardware_narrow_filter);
	tcase_add_test(t, hardware_no_software_stamps);
	suite_add_tcase(s, t);
	t = tcase_create("frames");
	tcase_add_test(t, frame_round_trip);
	tcase_add_test(t, frame_rejects);
	suite_add_tcase(s, t);
	t = tcase_create("print");
	tcase_add_test(t, print_json);
	tcase_add_test(t, print_text_hw);
	tcase_add_test(t, free_is_safe);
	tcase_add_test(t, config_defaults);
	tcase_add_test(t, run_rejects_bad_config);
	suite_add_tcase(s, t);
	t = tcase_create("calibrate");
	tcase_add_test(t, calibrate_sw);
	tcase_add_test(t, calibrate_hw);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(loopcheck_suite)
