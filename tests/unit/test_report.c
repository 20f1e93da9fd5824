/* test_report.c — the report's readers (report_load.c) on small run
 * directories written here: lab.conf (a good file and what it sets, every
 * kind of bad line refused with PATH:LINE), the samples loader (counts per
 * series, a bad line skipped and named, the plausibility checks of
 * tapless-report(1): a negative transaction dropped, a one-way sample
 * below zero beyond its bound kept and named, one within its bound or
 * without one not remarked on), and the truth loader on two emulator port
 * files (pairing by packet id, frames that are not market data left out,
 * an implausible residence dropped and named, an unpaired frame, frames
 * without an id, serialisation taken out for store-and-forward); the
 * bound's terms summed and averaged (the stamp term over the samples that
 * had one), and the hosts' stamp calibrations read per rate (both, one,
 * none, a bad file named).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "base/hist.h"
#include "files/calib.h"
#include "files/frame.h"
#include "files/pcapng.h"
#include "files/samples.h"
#include "ptp/journal.h"
#include "files/topo.h"
#include "report/report.h"
#include "report/report_private.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "report");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* mkdir -p DIR/SUB. */
static void subdir(const char *sub, int len)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%.*s'", dir, len, sub);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write DIR/NAME, making NAME's folders. */
static void put(const char *name, const char *text)
{
	char path[256];
	const char *slash = strrchr(name, '/');

	if (slash)
		subdir(name, (int)(slash - name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unit_write_file(path, text);
}

/* Whether some note contains text; its warning flag in *warning. */
static bool has_note(const struct report *r, const char *text, bool *warning)
{
	const char *n;
	bool w;

	for (size_t i = 0; (n = report_note(r, i, &w)); i++)
		if (strstr(n, text)) {
			if (warning)
				*warning = w;
			return true;
		}
	return false;
}

/* ---- lab.conf ---- */

START_TEST(conf_good)
{
	struct report *r;
	char err[REPORT_ERRBUF] = "";
	uint8_t addr[4];

	put("lab.conf",
	    "# written by hand\n"
	    "id lab-7\n"
	    "\n"
	    "rates 1000, 100000,5000   # three rates\n"
	    "stamps hardware\n"
	    "duration 2.5\n"
	    "switch_mode cut-through\n"
	    "switch_speed 10G\n"
	    "md_source 198.18.1.1:9001\n"
	    "hosts exch,strat\n"
	    "newer_key  kept as it is \n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert_str_eq(err, "");
	/* Highest rate first, labelled as the FTTC tables do. */
	ck_assert_uint_eq(report_rate_count(r), 3);
	ck_assert_int_eq(r->rate[0].rate, 100000);
	ck_assert_str_eq(r->rate[0].label, "100k");
	ck_assert_int_eq(r->rate[1].rate, 5000);
	ck_assert_str_eq(r->rate[1].label, "5k");
	ck_assert_int_eq(r->rate[2].rate, 1000);
	ck_assert_str_eq(r->rate[2].label, "1000");
	ck_assert_int_eq(r->mode, 0);
	ck_assert(r->speed_bps == 10e9);
	ck_assert(r->have_md);
	ck_assert_int_eq(r->md_family, AF_INET);
	ck_assert_uint_eq(r->md_port, 9001);
	ck_assert_int_eq(inet_pton(AF_INET, "198.18.1.1", addr), 1);
	ck_assert_mem_eq(r->md_addr, addr, 4);
	ck_assert_str_eq(r->venue, "exch");
	ck_assert_str_eq(r->algo, "strat");
	/* Every key kept as written, comments and blanks trimmed; a key this
	 * version does not know too. */
	ck_assert_uint_eq(r->nkv, 9);
	ck_assert_str_eq(report_conf(r, "id"), "lab-7");
	ck_assert_str_eq(report_conf(r, "rates"), "1000, 100000,5000");
	ck_assert_str_eq(report_conf(r, "newer_key"), "kept as it is");
	ck_assert_ptr_null(report_conf(r, "switch"));
	ck_assert_str_eq(report_conf_or(r, "switch"), "unknown");
	/* No rate directory: each rate kept without figures, and noted. */
	ck_assert_uint_eq(report_rates_missing(r), 3);
	ck_assert_uint_eq(report_sample_count(r), 0);
	report_destroy(r);
}
END_TEST

START_TEST(conf_defaults)
{
	struct report *r;
	char err[REPORT_ERRBUF] = "";
	bool warning = true;

	put("lab.conf", "rates 500\nmd_source [2001:db8::1]:*\n"
	    "switch_mode store-and-forward\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert_str_eq(r->venue, "venue");
	ck_assert_str_eq(r->algo, "algo");
	ck_assert(has_note(r, "lab.conf names no hosts: taken as venue,algo", &warning));
	ck_assert(!warning);
	ck_assert_int_eq(r->mode, 1);
	ck_assert(r->speed_bps == 0);
	ck_assert_int_eq(r->md_family, AF_INET6);
	ck_assert_uint_eq(r->md_port, 0);	/* '*': every port */
	report_destroy(r);
}
END_TEST

static const struct {
	const char *text, *want;	/* want follows "DIR/lab.conf" */
} bad_confs[] = {
	{ "rates 1000\nstamps maybe\n",
	  ":2: stamps: 'maybe' is not software or hardware" },
	{ "# c\n\nrates 1000,1000\n", ":3: rates: '1000' twice" },
	{ "rates 0\n", ":1: rates: '0' is not a rate (whole messages/s up to 1e9" },
	{ "rates 1000,x\n", ":1: rates: 'x' is not a rate" },
	{ "rates 1.5k,2.5\n", ":1: rates: '2.5' is not a rate" },
	{ "rates ,\n", ":1: rates: ',': an empty item" },
	{ "rates 1,,2\n", ":1: rates: '1,,2': an empty item" },
	{ "Rates 1000\n", ":1: 'Rates' is not a key (lower case, digits, _)" },
	{ "rates\n", ":1: rates has no value" },
	{ "rates 1\nid a\nid b\n", ":3: id given twice" },
	{ "rates 1\nduration -1\n", ":2: duration: '-1' is not a number >= 0" },
	{ "rates 1\nswitch_latency_ns nan\n", ":2: switch_latency_ns: 'nan' is not" },
	{ "rates 1\nswitch_mode fast\n", ":2: switch_mode: 'fast' is not cut-through" },
	{ "rates 1\nswitch_speed quick\n", ":2: switch_speed: 'quick' is not a speed" },
	{ "rates 1\nmd_source 198.18.1.1\n", ":2: md_source: '198.18.1.1' is not ADDRESS:PORT" },
	{ "rates 1\nmd_source 198.18.1.1:0\n", ":2: md_source:" },
	{ "rates 1\nmd_source [::1:9001\n", ":2: md_source:" },
	{ "rates 1\nmd_source [::1]:0\n", ":2: md_source:" },
	{ "rates 1\nmd_source 198.18.1.1:*9\n", ":2: md_source:" },
	{ "rates 1\nmd_source *\n", ":2: md_source:" },
	{ "rates 1\nmd_source :9001\n", ":2: md_source:" },
	{ "rates 1\nhosts venue\n", ":2: hosts: 'venue' is not VENUE,ALGO" },
	{ "rates 1\nhosts a,b,c\n", ":2: hosts: 'a,b,c' is not VENUE,ALGO" },
	{ "id x\n", ": no rates (the run's message rates" },
};

START_TEST(conf_bad)
{
	struct report *r = (struct report *)1;
	char err[REPORT_ERRBUF] = "", want[512];

	put("lab.conf", bad_confs[_i].text);
	snprintf(want, sizeof(want), "%s/lab.conf%s", dir, bad_confs[_i].want);
	ck_assert_int_eq(report_load(&r, dir, err), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "conf %d: '%s', want '%s...'",
		      _i, err, want);
}
END_TEST

START_TEST(conf_nul)
{
	struct report *r;
	char err[REPORT_ERRBUF], path[128], want[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/lab.conf", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite("rates 1\nid a\0b\n", 1, 15, f);
	fclose(f);
	ck_assert_int_eq(report_load(&r, dir, err), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: a NUL byte (not a text file?)", path);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(conf_missing)
{
	struct report *r;
	char err[REPORT_ERRBUF], want[160], other[128];

	/* A directory without lab.conf: named, and what report is for. */
	snprintf(want, sizeof(want), "%s: no lab.conf: not a run directory of "
		 "tapless lab", dir);
	ck_assert_int_eq(report_load(&r, dir, err), -ENOENT);
	ck_assert_msg(!strncmp(err, want, strlen(want)) &&
		      strstr(err, "tapless lab run --output DIR"), "%s", err);
	snprintf(other, sizeof(other), "%s/none", dir);
	snprintf(want, sizeof(want), "%s: No such file or directory", other);
	ck_assert_int_eq(report_load(&r, other, err), -ENOENT);
	ck_assert_str_eq(err, want);
	put("file", "rates 1\n");
	snprintf(other, sizeof(other), "%s/file", dir);
	snprintf(want, sizeof(want), "%s: not a directory", other);
	ck_assert_int_eq(report_load(&r, other, err), -ENOTDIR);
	ck_assert_str_eq(err, want);
}
END_TEST

/* ---- samples ---- */

/* Line numbers matter: the notes name them. */
static const char samples[] =
	"# tapless correlate samples: run kind from to time_ns latency_ns sync bound_ns rate switch\n"
	"main tick_to_trade algo algo 1000 3000 in 50 1000 -\n"		/* 2 */
	"main tick_to_trade algo algo 2000 5000 none -1 1000 -\n"
	"main fill_to_sell algo algo 3000 7000 out 50 1000 -\n"		/* 4: out */
	"main hop venue algo 1500 400 in 50 1000 -\n"
	"main switch venue algo 1500 300 in 50 1000 sw1\n"
	"baseline hop venue algo 500 100 none -1 0 -\n"			/* 7 */
	"not a samples line\n"						/* 8: bad */
	"main tick_to_trade algo algo 4000 -10 in 50 1000 -\n"		/* 9: dropped */
	"main hop venue algo 5000 -200 in 50 1000 -\n"			/* 10: beyond */
	"main hop venue algo 6000 -40 in 50 1000 -\n"			/* within */
	"main hop venue algo 7000 -500 none -1 1000 -\n"		/* no bound */
	"main order_to_ack algo algo 8000 20 in 50 1000 -\n"		/* not shown */
	"main hop venue algo x 5 in -1 0 -\n"				/* 14: bad */
	"\n"
	"main hop venue algo 9000 -300 out 50 1000 -\n"			/* 16: out */
	"main switch algo venue 9500 30 in 50 1000 sw1\n";		/* not shown */

START_TEST(samples_counts)
{
	struct report *r;
	struct report_rate *rt;
	char err[REPORT_ERRBUF], want[256];
	bool warning = false;

	put("lab.conf", "rates 1000,2000\nhosts venue,algo\n");
	put("rate-1000/samples.txt", samples);
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	rt = &r->rate[1];
	ck_assert_int_eq(rt->rate, 1000);
	ck_assert(rt->have_samples);
	ck_assert_uint_eq(rt->lines, 13);
	ck_assert_uint_eq(rt->bad, 2);
	ck_assert_uint_eq(rt->ignored, 2);
	ck_assert_uint_eq(rt->negative, 1);
	ck_assert_uint_eq(rt->beyond_bound, 1);
	ck_assert(rt->have_t0);
	ck_assert_int_eq(rt->t0, 1000);		/* the main run's first stamp */
	ck_assert_uint_eq(hist_count(rt->s[S_BUY].h), 2);
	ck_assert_uint_eq(rt->s[S_BUY].out, 0);
	ck_assert_uint_eq(hist_count(rt->s[S_SELL].h), 0);
	ck_assert_uint_eq(rt->s[S_SELL].out, 1);
	ck_assert_uint_eq(hist_count(rt->s[S_SWITCH].h), 1);
	ck_assert_uint_eq(hist_count(rt->s[S_HOP].h), 4);
	ck_assert_uint_eq(rt->s[S_HOP].out, 1);
	ck_assert_uint_eq(hist_count(rt->s[S_HOP_BASE].h), 1);
	ck_assert_uint_eq(report_sample_count(r), 10);

	/* The rate without a samples file: kept, without figures, noted. */
	ck_assert_int_eq(r->rate[0].rate, 2000);
	ck_assert(!r->rate[0].have_samples);
	ck_assert_uint_eq(report_rates_missing(r), 1);
	snprintf(want, sizeof(want), "%s/rate-2000/samples.txt: No such file or "
		 "directory: rate 2000 has no figures", dir);
	ck_assert(has_note(r, want, &warning));
	ck_assert(warning);

	/* The first bad line is named with the count. */
	snprintf(want, sizeof(want), "%s/rate-1000/samples.txt:8: not a samples "
		 "line (2 such lines skipped)", dir);
	ck_assert_msg(has_note(r, want, NULL), "no note '%s'", want);
	report_destroy(r);
}
END_TEST

START_TEST(samples_plausibility)
{
	struct report *r;
	struct summary s;
	char err[REPORT_ERRBUF], want[320];
	bool warning = false;
	const char *n;

	put("lab.conf", "rates 1000\n");
	put("rate-1000/samples.txt", samples);
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	/* A negative transaction: dropped, named. */
	snprintf(want, sizeof(want), "%s/rate-1000/samples.txt:9: negative "
		 "tick_to_trade at algo (-10 ns): one host's later stamp minus "
		 "its earlier cannot be; sample dropped (1 such samples dropped)", dir);
	ck_assert_msg(has_note(r, want, &warning), "no note '%s'", want);
	ck_assert(warning);
	hist_summary(r->rate[0].s[S_BUY].h, &s);
	ck_assert_int_eq(s.min, 3000);
	ck_assert(s.mean == 4000);
	/* Below zero beyond its bound: kept, counted, named; within its bound,
	 * without one, or out of sync: kept, not remarked on. */
	snprintf(want, sizeof(want), "%s/rate-1000/samples.txt:10: one-way sample "
		 "-200 ns is below zero by more than its error bound (50 ns): kept, "
		 "counted as beyond its bound (1 such samples)", dir);
	ck_assert_msg(has_note(r, want, NULL), "no note '%s'", want);
	hist_summary(r->rate[0].s[S_HOP].h, &s);
	ck_assert_uint_eq(s.n, 4);
	ck_assert_int_eq(s.min, -500);
	for (size_t i = 0; (n = report_note(r, i, NULL)); i++) {
		ck_assert_ptr_null(strstr(n, "samples.txt:11:"));
		ck_assert_ptr_null(strstr(n, "samples.txt:12:"));
		ck_assert_ptr_null(strstr(n, "samples.txt:16:"));
	}
	report_destroy(r);
}
END_TEST

/* Holdover: bounded (its grown bound counts, a sample below zero beyond it
 * is remarked on), in the figures, counted apart; a journal's holdover
 * samples keep their bounds and say holdover. */
START_TEST(samples_holdover)
{
	struct report *r;
	struct report_rate *rt;
	const struct report_clock *c;
	char err[REPORT_ERRBUF];

	put("lab.conf", "rates 1000\n");
	put("rate-1000/samples.txt",
	    "# run kind from to time_ns latency_ns sync bound_ns rate switch\n"
	    "main hop venue algo 1000 400 holdover 2050 1000 -\n"
	    "main switch venue algo 1000 300 holdover 2050 1000 sw1\n"
	    "main hop venue algo 2000 -3000 holdover 2050 1000 -\n"
	    "main hop venue algo 2500 -1000 holdover 2050 1000 -\n"
	    "main hop venue algo 3000 420 in 50 1000 -\n"
	    "main hop venue algo 4000 410 out -1 1000 -\n");
	put("journals/venue.journal",
	    "# tapless-journal 2 host venue\n"
	    "1 event phc0 rules drift_ppb=1000\n"
	    "10 sample phc0 SLAVE 3 500 0.5 gm 1 s2 1 40\n"
	    "20 sample phc0 SLAVE - - 0.5 gm 1 s2 h 1040\n"
	    "30 sample phc0 SLAVE - - 0.5 gm 1 s2 0 -\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	rt = &r->rate[0];
	ck_assert_uint_eq(hist_count(rt->s[S_HOP].h), 4);
	ck_assert_uint_eq(rt->s[S_HOP].holdover, 3);
	ck_assert_uint_eq(rt->s[S_HOP].out, 1);
	ck_assert_uint_eq(hist_count(rt->s[S_SWITCH].h), 1);
	ck_assert_uint_eq(rt->s[S_SWITCH].holdover, 1);
	ck_assert_uint_eq(rt->beyond_bound, 1);
	ck_assert_uint_eq(r->nclk, 1);
	c = &r->clk[0];
	ck_assert_uint_eq(c->n, 3);
	ck_assert_int_eq(c->sync[0], REPORT_SYNC_IN);
	ck_assert_int_eq(c->bnd[0], 40);
	ck_assert_int_eq(c->sync[1], REPORT_SYNC_HOLDOVER);
	ck_assert_int_eq(c->bnd[1], 1040);
	ck_assert_int_eq(c->sync[2], REPORT_SYNC_OUT);
	ck_assert_int_eq(c->bnd[2], JOURNAL_NONE);
	report_destroy(r);
}
END_TEST

START_TEST(samples_empty)
{
	struct report *r;
	char err[REPORT_ERRBUF], want[256];

	put("lab.conf", "rates 1000\n");
	put("rate-1000/samples.txt", "# only the header\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(r->rate[0].have_samples);
	ck_assert_uint_eq(r->rate[0].lines, 0);
	ck_assert_uint_eq(report_sample_count(r), 0);
	snprintf(want, sizeof(want), "%s/rate-1000/samples.txt: no samples", dir);
	ck_assert(has_note(r, want, NULL));
	report_destroy(r);
}
END_TEST

START_TEST(sample_parse)
{
	struct report r = { 0 };
	struct samples_rec s;
	char line[160];

	snprintf(r.venue, sizeof(r.venue), "v");
	snprintf(r.algo, sizeof(r.algo), "a");
#define PARSE(text) (snprintf(line, sizeof(line), "%s", text), samples_parse(line, &s))
	ck_assert_int_eq(PARSE("main hop v a 10 -20 in 5 100 -\r\n"), 0);
	ck_assert_str_eq(s.kind, "hop");
	ck_assert_int_eq(s.time_ns, 10);
	ck_assert_int_eq(s.latency_ns, -20);
	ck_assert_int_eq(s.bound_ns, 5);
	ck_assert(s.rate == 100.0);
	ck_assert_int_eq(s.sync, SAMPLES_SYNC_IN);
	ck_assert_int_eq(report_series_of(&r, &s), S_HOP);
	ck_assert_int_eq(PARSE("baseline hop v a 1 2 none -1 0 -"), 0);
	ck_assert_int_eq(report_series_of(&r, &s), S_HOP_BASE);
	ck_assert_int_eq(PARSE("baseline switch v a 1 2 none -1 0 sw"), 0);
	ck_assert_int_eq(report_series_of(&r, &s), -1);
	ck_assert_int_eq(PARSE("main switch v a 1 2 none -1 0 sw"), 0);
	ck_assert_int_eq(report_series_of(&r, &s), S_SWITCH);
	ck_assert_int_eq(PARSE("main fill_to_sell a a 1 -2 in 5 0 -"), 0);
	ck_assert_int_eq(report_series_of(&r, &s), S_SELL);
	ck_assert(report_sample_dropped(S_SELL, &s));
	ck_assert(!report_sample_dropped(S_HOP, &s));
	ck_assert_int_eq(PARSE("main tick_to_trade v v 1 2 in 5 0 -"), 0);
	ck_assert_int_eq(report_series_of(&r, &s), -1);	/* not the algo's */
	ck_assert_int_eq(PARSE("# a comment"), 1);
	ck_assert_int_eq(PARSE("  \t\n"), 1);
	ck_assert_int_eq(PARSE("main hop v a 1 2 in 5 0"), -EBADMSG);
	ck_assert_int_eq(PARSE("main hop v a 1 2 in 5 0 - extra"), -EBADMSG);
	ck_assert_int_eq(PARSE("other hop v a 1 2 in 5 0 -"), -EBADMSG);
	ck_assert_int_eq(PARSE("main hop v a 1 2 maybe 5 0 -"), -EBADMSG);
	ck_assert_int_eq(PARSE("main hop v a 1 2.5 in 5 0 -"), -EBADMSG);
	ck_assert_int_eq(PARSE("main hop v a 99999999999999999999 2 in 5 0 -"), -EBADMSG);
#undef PARSE
}
END_TEST

/* ---- truth ---- */

#define BASE 1763900000000000000LL

struct ev {
	int64_t ts;
	enum pcapng_dir dir;
	uint64_t id;			/* 0: none */
	const struct frame_flow *flow;
	size_t payload;
};

static void write_port(const char *path, const struct ev *e, size_t n)
{
	struct pcapng_section sec = { .hostname = "swemu", .userappl = "test_report" };
	struct pcapng_iface ifc = { "swp", 1, 0, { true, 0, 0, "" }, false };
	struct pcapng_writer *w;
	uint8_t frame[256], pl[128] = { 0 };
	uint32_t ifid;

	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &ifid), 0);
	for (size_t i = 0; i < n; i++) {
		int len = frame_build(frame, sizeof(frame), e[i].flow, 1000, 1, 0, pl,
				      e[i].payload);

		ck_assert_int_gt(len, 0);
		ck_assert_int_eq(pcapng_write_packet_id(w, ifid, BASE + e[i].ts, frame,
							(uint32_t)len, (uint32_t)len,
							e[i].dir, e[i].id ? &e[i].id : NULL), 0);
	}
	ck_assert_int_eq(pcapng_close(w, false), 0);
}

static struct frame_flow md, order;

/* Port 1 is the venue's, port 2 the algo's; market data crosses 1 → 2.
 * Ids 1-3: residences 300, 400, 500 ns. 4: an order, 2 → 1, left out.
 * 5: a residence of 2 s, implausible. 6: ingress only. Two blocks
 * without an id. Each file in time order, packets numbered from 1. */
static void write_truth(void)
{
	static const struct ev port1[] = {
		{ 1000, PCAPNG_DIR_IN, 1, &md, 100 },
		{ 2000, PCAPNG_DIR_IN, 2, &md, 100 },
		{ 3000, PCAPNG_DIR_IN, 3, &md, 100 },
		{ 5000, PCAPNG_DIR_IN, 5, &md, 100 },		/* packet 4 */
		{ 6000, PCAPNG_DIR_IN, 6, &md, 100 },
		{ 7000, PCAPNG_DIR_IN, 0, &md, 100 },
		{ 9000, PCAPNG_DIR_OUT, 4, &order, 60 },
	};
	static const struct ev port2[] = {
		{ 1300, PCAPNG_DIR_OUT, 1, &md, 100 },
		{ 2400, PCAPNG_DIR_OUT, 2, &md, 100 },
		{ 3500, PCAPNG_DIR_OUT, 3, &md, 100 },
		{ 4000, PCAPNG_DIR_IN, 4, &order, 60 },
		{ 7200, PCAPNG_DIR_OUT, 0, &md, 100 },
		{ 2000005000, PCAPNG_DIR_OUT, 5, &md, 100 },	/* packet 6 */
	};
	char path[160];

	md = (struct frame_flow){ .family = AF_INET, .proto = IPPROTO_TCP,
				  .sport = 9001, .dport = 40000 };
	inet_pton(AF_INET, "198.18.1.1", md.src);
	inet_pton(AF_INET, "198.18.1.2", md.dst);
	order = md;
	frame_flow_reverse(&order);
	subdir("rate-1000/switch/swemu", 22);
	snprintf(path, sizeof(path), "%s/rate-1000/switch/swemu/port1.pcapng", dir);
	write_port(path, port1, sizeof(port1) / sizeof(port1[0]));
	snprintf(path, sizeof(path), "%s/rate-1000/switch/swemu/port2.pcapng", dir);
	write_port(path, port2, sizeof(port2) / sizeof(port2[0]));
}

START_TEST(truth_cut_through)
{
	struct report *r;
	struct report_truth *t;
	struct summary s;
	char err[REPORT_ERRBUF], want[512];
	bool warning = false;

	put("lab.conf", "rates 1000\nswitch_mode cut-through\nmd_source 198.18.1.1:9001\n");
	write_truth();
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	t = &r->rate[0].truth;
	ck_assert_msg(t->have, "no truth: %s", t->why);
	ck_assert(t->have_topo);
	ck_assert_uint_eq(t->files, 2);
	ck_assert_uint_eq(t->md_frames, 3);
	ck_assert_uint_eq(t->implausible, 1);
	ck_assert_uint_eq(t->unpaired, 1);
	ck_assert_uint_eq(t->no_id, 2);
	hist_summary(t->res, &s);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_int_eq(s.min, 300);
	ck_assert_int_eq(s.max, 500);
	ck_assert(s.mean == 400);
	hist_summary(t->topo, &s);
	ck_assert(s.mean == 400);	/* cut-through: the residence as stamped */
	ck_assert(report_any_truth(r));
	snprintf(want, sizeof(want), "rate 1000: truth: market data frame packet id 5 "
		 "(ingress %s/rate-1000/switch/swemu/port1.pcapng packet 4, egress "
		 "%s/rate-1000/switch/swemu/port2.pcapng packet 6): residence "
		 "2000000000 ns (2.000 s) is implausible (below 0 or over 1 s): dropped "
		 "from the truth (1 such frames dropped)", dir, dir);
	ck_assert_msg(has_note(r, want, &warning), "no note '%s'", want);
	ck_assert(warning);
	ck_assert(has_note(r, "rate 1000: 1 market data frames of the emulator had "
			   "an ingress or an egress stamp only", NULL));
	report_destroy(r);
}
END_TEST

START_TEST(truth_store_and_forward)
{
	struct report *r;
	struct summary s;
	char err[REPORT_ERRBUF];
	long long ser;

	put("lab.conf", "rates 1000\nswitch_mode store-and-forward\n"
	    "switch_speed 10G\nmd_source 198.18.1.1:*\n");
	write_truth();
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(r->rate[0].truth.have_topo);
	hist_summary(r->rate[0].truth.topo, &s);
	ser = llround(topo_serialisation_ns((uint32_t)(frame_header_len(&md) + 100), 10e9));
	ck_assert_int_gt(ser, 0);
	ck_assert(s.mean == 400 - ser);
	ck_assert_int_eq(s.min, 300 - ser);
	report_destroy(r);

	/* Without a speed the serialisation is not known: residence only. */
	put("lab.conf", "rates 1000\nswitch_mode store-and-forward\n"
	    "md_source 198.18.1.1:9001\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(r->rate[0].truth.have);
	ck_assert(!r->rate[0].truth.have_topo);
	ck_assert_str_eq(r->rate[0].truth.why, "store-and-forward without "
			 "switch_speed in lab.conf: serialisation unknown");
	report_destroy(r);
}
END_TEST

START_TEST(truth_none)
{
	struct report *r;
	char err[REPORT_ERRBUF];

	/* No captures. */
	put("lab.conf", "rates 1000\nmd_source 198.18.1.1:9001\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(!r->rate[0].truth.have);
	ck_assert_str_eq(r->rate[0].truth.why, "no emulator captures "
			 "(rate-1000/switch/swemu/*.pcapng)");
	ck_assert(!report_any_truth(r));
	report_destroy(r);
	/* Captures, but no md_source to tell the market data by. */
	write_truth();
	put("lab.conf", "rates 1000\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(!r->rate[0].truth.have);
	ck_assert_str_eq(r->rate[0].truth.why, "lab.conf has no md_source, so "
			 "the market data frames cannot be told apart");
	report_destroy(r);
	/* Another source: no frame of it. */
	put("lab.conf", "rates 1000\nmd_source 198.18.1.9:9001\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(!r->rate[0].truth.have);
	ck_assert_uint_eq(r->rate[0].truth.md_frames, 0);
	ck_assert_ptr_nonnull(strstr(r->rate[0].truth.why, "no market data frame"));
	report_destroy(r);
}
END_TEST

/* ---- the bound's terms and the stamp calibrations ---- */

START_TEST(terms_mean)
{
	static const int64_t with[][T_COUNT] = {
		{ 100, 0, 80, 0 },
		{ 300, 20, 40, 0 },
		{ 200, 10, -1, 999 },	/* an end not calibrated */
		{ -1, -1, -1, -1 },	/* no terms: not counted */
	};
	struct report_terms t = { 0 };
	double mean[T_COUNT];

	/* None: every mean NAN, no term dominates. */
	ck_assert_int_eq(report_terms_mean(&t, mean), -1);
	for (int k = 0; k < T_COUNT; k++)
		ck_assert(isnan(mean[k]));
	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++)
		report_terms_add(&t, with[i]);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_uint_eq(t.have[T_STAMP], 2);
	ck_assert_uint_eq(t.have[T_CLOCK], 3);
	ck_assert_int_eq(report_terms_mean(&t, mean), T_RESOLUTION);
	ck_assert_double_eq_tol(mean[T_CLOCK], 200, 1e-9);
	ck_assert_double_eq_tol(mean[T_HOLDOVER], 10, 1e-9);
	ck_assert_double_eq_tol(mean[T_STAMP], 60, 1e-9);	/* of two */
	ck_assert_double_eq_tol(mean[T_RESOLUTION], 333, 1e-9);
	ck_assert_str_eq(report_term_names[T_STAMP], "stamp");

	/* The terms the pairing sums are the samples file's. */
	{
		char line[] = "main switch venue algo 5 100 in 180 0 sw1 100 0 80 0\n";
		struct samples_rec rec;
		struct report_terms u = { 0 };

		ck_assert_int_eq(samples_parse(line, &rec), 0);
		report_terms_add(&u, rec.term_ns);
		ck_assert_int_eq(report_terms_mean(&u, mean), T_CLOCK);
		ck_assert_double_eq_tol(mean[T_CLOCK] + mean[T_HOLDOVER] +
					mean[T_STAMP] + mean[T_RESOLUTION], 180, 1e-9);
	}
}
END_TEST

START_TEST(calib_load)
{
	struct report *r;
	char err[REPORT_ERRBUF], want[512];
	bool warning = false;
	const struct calib *c;

	put("lab.conf", "rates 1000,2000,5000\nhosts exch,strat\n");
	put("rate-1000/samples.txt", samples);
	put("rate-2000/samples.txt", samples);
	put("rate-5000/samples.txt", samples);
	/* 1000: both hosts (named as lab.conf names them); 2000: the
	 * venue's only; 5000: none, and a bad file. */
	put("rate-1000/exch.cal", "host exch\nmeasured back to back\n"
	    "stamp tx sw offset -1500 spread 200 samples 900\n"
	    "stamp rx sw offset 2100 spread 300 samples 800\n");
	put("rate-1000/strat.cal", "stamp rx hw offset 40 spread 8\n");
	put("rate-2000/exch.cal", "# no stamp line: valid, calibrates nothing\n");
	put("rate-5000/strat.cal", "stamp sideways sw offset 1 spread 1\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert_int_eq(r->rate[2].rate, 1000);
	c = r->rate[2].cal[ROLE_VENUE];
	ck_assert_ptr_nonnull(c);
	ck_assert(c->t[CALIB_TX][CALIB_SW].set);
	ck_assert_int_eq(c->t[CALIB_TX][CALIB_SW].offset_ns, -1500);
	ck_assert_int_eq(c->t[CALIB_RX][CALIB_SW].spread_ns, 300);
	ck_assert_str_eq(c->measured, "back to back");
	snprintf(want, sizeof(want), "%s/rate-1000/exch.cal", dir);
	ck_assert_str_eq(r->rate[2].cal_path[ROLE_VENUE], want);
	c = r->rate[2].cal[ROLE_ALGO];
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->t[CALIB_RX][CALIB_HW].offset_ns, 40);
	ck_assert_ptr_null(report_uncalibrated(&r->rate[2]));

	ck_assert_ptr_nonnull(r->rate[1].cal[ROLE_VENUE]);
	ck_assert_ptr_null(r->rate[1].cal[ROLE_ALGO]);
	ck_assert_str_eq(report_uncalibrated(&r->rate[1]),
			 "the algo's stamps not calibrated");

	ck_assert_ptr_null(r->rate[0].cal[ROLE_VENUE]);
	ck_assert_ptr_null(r->rate[0].cal[ROLE_ALGO]);
	ck_assert_str_eq(report_uncalibrated(&r->rate[0]), "stamps not calibrated");
	snprintf(want, sizeof(want), "rate 5k: %s/rate-5000/strat.cal:1:", dir);
	ck_assert_msg(has_note(r, want, &warning), "no note '%s'", want);
	ck_assert(warning);
	/* An absent file is no note: the headline says it. */
	ck_assert(!has_note(r, "exch.cal", NULL));
	report_destroy(r);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *c = tcase_create("load");

	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, conf_good);
	tcase_add_test(c, conf_defaults);
	tcase_add_loop_test(c, conf_bad, 0, (int)(sizeof(bad_confs) / sizeof(bad_confs[0])));
	tcase_add_test(c, conf_nul);
	tcase_add_test(c, conf_missing);
	tcase_add_test(c, samples_counts);
	tcase_add_test(c, samples_plausibility);
	tcase_add_test(c, samples_empty);
	tcase_add_test(c, samples_holdover);
	tcase_add_test(c, sample_parse);
	tcase_add_test(c, truth_cut_through);
	tcase_add_test(c, truth_store_and_forward);
	tcase_add_test(c, truth_none);
	tcase_add_test(c, terms_mean);
	tcase_add_test(c, calib_load);
	suite_add_tcase(s, c);
	return s;
}

UNIT_MAIN(report_suite)
