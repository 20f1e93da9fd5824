/* cmd_validate.c — tapless validate: are this host's stamps good enough to
 * trust a figure? Four checks, each ending in pass / warn / fail against
 * named limits (verdict.h), or skipped with the reason:
 *
 *   phc        every PHC on the host (phccheck.h)
 *   loopback   frames between two ports, --loopback A:B (loopcheck.h)
 *   hwsw       software minus hardware stamps of the same frames (loopcheck.h)
 *   reference  a capture against a tap's, --reference (refcheck.h)
 *
 * Run with nothing named, it checks what needs nothing named (the PHCs) and
 * says, check by check, what it could not do and why. The exit status
 * follows the worst verdict.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "files/calib.h"
#include "validate/histplot.h"
#include "stamp/iface.h"
#include "validate/loopcheck.h"
#include "base/nstime.h"
#include "base/opts.h"
#include "validate/phccheck.h"
#include "base/print.h"
#include "validate/refcheck.h"
#include "files/tapfmt.h"
#include "stamp/ts.h"
#include "stamp/tsinfo.h"
#include "validate/verdict.h"
#include "base/xalloc.h"

/* Exit status beyond cmd.h's 0, 1, 2. */
enum { VALIDATE_WARN = 3, VALIDATE_FAIL = 4 };

static const char *const stamp_modes[] = { "auto", "hw", "sw", NULL };
static const char *const timescales[] = { "utc", "tai", NULL };
/* tapfmt_names(), as the options table wants them. */
static const char *const ref_formats[] = { "auto", "none", "metawatch", "arista",
					   "exablaze", "exalink", "ixia", NULL };

static const struct opt_def validate_opts[] = {
	{ "reference", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "reference capture of the same traffic (tap, capture card): pcap, pcapng or ERF", OPT_OLD_LETTER('r') },
	{ "reference_format", 0, OPT_ENUM, "auto", 0, 0, ref_formats, "FORMAT",
	  "where the reference's stamps are: auto (a tap's trailer or header, detected), none (its records'), or the tap's format", 0 },
	{ "capture", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "the host's capture to check against --reference", OPT_OLD_LETTER('c') },
	{ "reference_timescale", 0, OPT_ENUM, "utc", 0, 0, timescales, NULL,
	  "timescale of the reference's stamps, unless its file says", 0 },
	{ "tai_offset", 0, OPT_INT, TAI_UTC_S_TEXT, 0, 1000, NULL, "S",
	  "TAI - UTC in seconds, to compare TAI stamps with UTC ones", 0 },
	{ "match_window", 0, OPT_DURATION, "10000", 1, 60e6, NULL, "TIME",
	  "largest distance from the median offset at which a packet still matches", OPT_US },
	{ "loopback", 0, OPT_STRING, NULL, 0, 0, NULL, "A:B",
	  "send frames out port A to port B and back, on this host", OPT_OLD_LETTER('l') },
	{ "one_way", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "loopback from A to B only", 0 },
	{ "stamps", 0, OPT_ENUM, "auto", 0, 0, stamp_modes, NULL,
	  "loopback stamps: hardware when both ports have them (auto), or as asked", 0 },
	{ "count", 'n', OPT_INT, "1000", 10, 10000000, NULL, "N",
	  "loopback frames per direction", 0 },
	{ "rate", 0, OPT_DOUBLE, "1000", 1, 1e6, NULL, "PPS",
	  "loopback frames per second per direction", 0 },
	{ "frame_len", 0, OPT_INT, "64", 60, 1514, NULL, "BYTES",
	  "loopback frame length without FCS", 0 },
	{ "cable_m", 0, OPT_DOUBLE, NULL, 0, 1e5, NULL, "M",
	  "cable between the loopback ports: its expected delay is M x --ns-per-m", 0 },
	{ "ns_per_m", 0, OPT_DOUBLE, "4.9", 1, 10, NULL, "NS",
	  "propagation delay of the cable per metre (fibre 4.9, copper DAC ~4.3)", 0 },
	{ "expect_ns", 0, OPT_DURATION, NULL, 0, 1e9, NULL, "TIME",
	  "expected loopback one-way (a switch between the ports); overrides --cable-m", OPT_NS },
	{ "calibration", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "write this host's stamp calibration from the loopback (tapless-calibration(5))", 0 },
	{ "host", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME",
	  "the host named in --calibration's file (default: this host's name)", 0 },
	{ "phc", 0, OPT_LIST, NULL, 0, 0, NULL, "N",
	  "check /dev/ptpN only (repeatable; default every PHC)", 0 },
	{ "no_phc", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "skip the PHC checks", 0 },
	{ "duration", 'd', OPT_DURATION, "2", 0.1, 3600, NULL, "TIME",
	  "how long to watch each PHC's offset to CLOCK_REALTIME", OPT_S },
	{ "limit", 0, OPT_LIST, NULL, 0, 0, NULL, "NAME=WARN[,FAIL]",
	  "change a limit (repeatable; the list is below)", 0 },
	{ "plot", 0, OPT_STRING, NULL, 0, 0, NULL, "DIR",
	  "draw a histogram of each distribution into DIR (gnuplot)", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent JSON output", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

#define MAX_CHECKS (PHCCHECK_MAX + 4)

struct validate {
	struct opts *o;
	struct verdict_limits lim;
	struct verdict_check check[MAX_CHECKS];
	unsigned nchecks;
	struct phccheck_result phc[PHCCHECK_MAX];
	unsigned nphc;
	bool have_loop, have_ref;
	struct loopcheck_result loop;
	bool have_calib;	/* written to --calibration */
	struct calib calib;
	struct refcheck_result ref;
	const char *plot_dir;
	bool system_error;	/* a check could not run for a system reason */
	bool input_error;	/* bad files or names given */
};

static struct verdict_check *new_check(struct validate *v, const char *name,
				       const char *subject)
{
	struct verdict_check *c = &v->check[v->nchecks++];

	verdict_check_init(c, name, subject);
	return c;
}

static void plot(struct validate *v, const char *name, const char *title,
		 const char *xlabel, const struct histplot_series *s, size_t ns)
{
	char err[HISTPLOT_ERRBUF];
	int rc;

	if (!v->plot_dir)
		return;
	rc = histplot_draw(v->plot_dir, name, title, xlabel, s, ns, err);
	if (rc == -ENODATA)
		return;
	if (rc) {
		fprintf(stderr, "tapless validate: plot %s: %s\n", name, err);
		v->system_error = true;
	}
}

/* The interfaces that have hardware stamps, for the reasons of skips. */
static void hw_ifaces(char *out, size_t len)
{
	struct iface_entry e[256];
	int n = iface_list(e, 256);
	size_t at = 0;

	*out = 0;
	for (int i = 0; i < n; i++) {
		struct tsinfo ti;

		if (tsinfo_get(e[i].name, &ti) || !tsinfo_has_hw(&ti))
			continue;
		at += (size_t)snprintf(out + at, at < len ? len - at : 0, "%s%s",
				       at ? ", " : "", e[i].name);
		if (at >= len)
			break;
	}
}

static void run_phc(struct validate *v)
{
	int idx[PHCCHECK_MAX], n;
	const char *const *want;
	size_t nwant = opts_list(v->o, "phc", &want);

	if (opts_flag(v->o, "no_phc")) {
		verdict_skip(new_check(v, "phc", NULL), "--no-phc given");
		return;
	}
	n = phccheck_list(idx, PHCCHECK_MAX);
	if (n < 0) {
		verdict_skip(new_check(v, "phc", NULL), "cannot list PHCs: %s",
			     strerror(-n));
		v->system_error = true;
		return;
	}
	if (!n && !nwant) {
		verdict_skip(new_check(v, "phc", NULL), "no PHC on this host (no "
			     "/dev/ptp*): no NIC here has a hardware clock, so "
			     "there is nothing to read");
		return;
	}
	if (nwant) {
		n = 0;
		for (size_t i = 0; i < nwant && n < PHCCHECK_MAX; i++) {
			char *end;
			long x = strtol(want[i], &end, 10);

			if (*end || end == want[i] || x < 0 || x > INT_MAX) {
				fprintf(stderr, "tapless validate: --phc %s: expected "
					"a PHC index (N of /dev/ptpN)\n", want[i]);
				v->input_error = true;
				return;
			}
			idx[n++] = (int)x;
		}
	}
	for (int i = 0; i < n && v->nphc < PHCCHECK_MAX; i++) {
		struct phccheck_config cfg;
		struct phccheck_result *r = &v->phc[v->nphc];
		struct verdict_check *c;
		char subject[32], err[PHCCHECK_ERRBUF];
		int rc;

		snprintf(subject, sizeof(subject), "ptp%d", idx[i]);
		c = new_check(v, "phc", subject);
		phccheck_config_init(&cfg, idx[i]);
		cfg.duration_s = (double)opts_ns(v->o, "duration") / 1e9;
		rc = phccheck_run(&cfg, r, err);
		if (rc) {
			verdict_skip(c, "%s", err);
			fprintf(stderr, "tapless validate: %s\n", err);
			if (rc == -ENOENT || rc == -ENODEV)
				v->input_error = true;
			else
				v->system_error = true;
			continue;
		}
		v->nphc++;
		phccheck_judge(r, &v->lim, c);
	}
}

static int parse_ports(const char *spec, char a[IF_NAMESIZE], char b[IF_NAMESIZE])
{
	const char *colon = strchr(spec, ':');

	if (!colon || colon == spec || !colon[1] ||
	    (size_t)(colon - spec) >= IF_NAMESIZE || strlen(colon + 1) >= IF_NAMESIZE ||
	    strchr(colon + 1, ':'))
		return -EINVAL;
	memcpy(a, spec, (size_t)(colon - spec));
	a[colon - spec] = 0;
	strcpy(b, colon + 1);
	return strcmp(a, b) ? 0 : -EINVAL;
}

/* --calibration FILE: this host's stamp terms from the loopback just run
 * (loopcheck_calibrate()). A calibration that cannot be made or written
 * is a system error: the run happened, its result could not be kept. */
static void write_calib(struct validate *v, const char *a, const char *b)
{
	const char *path = opts_str(v->o, "calibration");
	const struct loopcheck_dir *ld = &v->loop.dir[0];
	char err[CALIB_ERRBUF], when[32];
	struct tm tm;
	time_t now = time(NULL);

	if (loopcheck_calibrate(&v->loop, &v->calib, err)) {
		fprintf(stderr, "tapless validate: --calibration %s: not written: "
			"%s\n", path, err);
		v->system_error = true;
		return;
	}
	if (opts_str(v->o, "host"))
		snprintf(v->calib.host, sizeof(v->calib.host), "%s",
			 opts_str(v->o, "host"));
	else if (gethostname(v->calib.host, sizeof(v->calib.host)) ||
		 !memchr(v->calib.host, 0, sizeof(v->calib.host)) ||
		 strpbrk(v->calib.host, " \t#"))
		v->calib.host[0] = '\0';	/* none the file can hold */
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(v->calib.measured, sizeof(v->calib.measured),
		 "%s tapless validate --loopback %s:%s, %llu frames %s at %g/s, "
		 "%s stamps, expected one-way %lld ns", when, a, b,
		 (unsigned long long)ld->sent, v->loop.ndir > 1 ? "each way" :
		 "one way", opts_double(v->o, "rate"),
		 ts_source_name(ld->source), (long long)v->loop.expect_ns);
	if (calib_write(&v->calib, path, err)) {
		fprintf(stderr, "tapless validate: --calibration: %s\n", err);
		v->system_error = true;
		return;
	}
	v->have_calib = true;
}

static void run_loop(struct validate *v)
{
	const char *spec = opts_str(v->o, "loopback");
	struct verdict_check *loop, *hwsw;
	struct loopcheck_config cfg;
	char a[IF_NAMESIZE], b[IF_NAMESIZE], subject[2 * IF_NAMESIZE + 4];
	char err[LOOPCHECK_ERRBUF], hw[256];
	int rc;

	if (!spec) {
		hw_ifaces(hw, sizeof(hw));
		verdict_skip(new_check(v, "loopback", NULL), "no ports named "
			     "(--loopback A:B)%s%s", *hw ? "; interfaces with "
			     "hardware stamps: " : "; no interface here has "
			     "hardware timestamping", hw);
		verdict_skip(new_check(v, "hwsw", NULL), "needs --loopback A:B %s",
			     *hw ? "on ports with hardware stamps" :
			     "and hardware stamps, which no interface here has");
		return;
	}
	if (parse_ports(spec, a, b)) {
		fprintf(stderr, "tapless validate: --loopback %s: expected A:B, two "
			"different interface names\n", spec);
		v->input_error = true;
		return;
	}
	snprintf(subject, sizeof(subject), "%s<->%s", a, b);
	loop = new_check(v, "loopback", subject);
	hwsw = new_check(v, "hwsw", subject);
	loopcheck_config_init(&cfg);
	cfg.port[0] = a;
	cfg.port[1] = b;
	cfg.mode = (enum ts_mode)opts_enum(v->o, "stamps");
	cfg.count = (unsigned)opts_int(v->o, "count");
	cfg.rate_pps = opts_double(v->o, "rate");
	cfg.frame_len = (unsigned)opts_int(v->o, "frame_len");
	cfg.one_way = opts_flag(v->o, "one_way");
	if (opts_given(v->o, "expect_ns"))
		cfg.expect_ns = opts_ns(v->o, "expect_ns");
	else if (opts_given(v->o, "cable_m"))
		cfg.expect_ns = llround(opts_double(v->o, "cable_m") *
					opts_double(v->o, "ns_per_m"));
	rc = loopcheck_run(&cfg, &v->loop, err);
	if (rc) {
		fprintf(stderr, "tapless validate: loopback: %s\n", err);
		verdict_skip(loop, "%s", err);
		verdict_skip(hwsw, "the loopback did not run");
		if (rc == -ENODEV || rc == -EINVAL)
			v->input_error = true;
		else
			v->system_error = true;
		return;
	}
	v->have_loop = true;
	loopcheck_judge(&v->loop, &v->lim, loop, hwsw);
	if (opts_str(v->o, "calibration"))
		write_calib(v, a, b);

	for (unsigned d = 0; d < v->loop.ndir; d++) {
		const struct loopcheck_dir *ld = &v->loop.dir[d];
		struct histplot_series s[2];
		char name[64], title[160];

		snprintf(name, sizeof(name), "loopback-%s-%s", ld->from, ld->to);
		snprintf(title, sizeof(title), "one-way %s -> %s, %s stamps",
			 ld->from, ld->to, ts_source_name(ld->source));
		s[0] = (struct histplot_series){ "one-way", ld->oneway,
						 ld->oneway_ns.n };
		plot(v, name, title, "RX stamp - TX stamp", s, 1);
		if (!ld->have_hwsw)
			continue;
		snprintf(name, sizeof(name), "hwsw-%s-%s", ld->from, ld->to);
		snprintf(title, sizeof(title), "software - hardware stamp, %s -> %s",
			 ld->from, ld->to);
		s[0] = (struct histplot_series){ "tx", ld->tx_sw_hw, ld->tx_sw_hw_ns.n };
		s[1] = (struct histplot_series){ "rx", ld->rx_sw_hw, ld->rx_sw_hw_ns.n };
		plot(v, name, title, "software stamp - hardware stamp", s, 2);
	}
}

static void run_ref(struct validate *v)
{
	const char *ref = opts_str(v->o, "reference");
	const char *host = opts_str(v->o, "capture");
	struct refcheck_config cfg;
	struct verdict_check *c;
	char err[REFCHECK_ERRBUF];
	int rc;

	if (!ref) {
		verdict_skip(new_check(v, "reference", NULL), "no reference "
			     "capture given (--reference FILE --capture FILE)");
		return;
	}
	if (!host) {
		fprintf(stderr, "tapless validate: --reference needs --capture: the "
			"host's capture of the same traffic\n");
		v->input_error = true;
		return;
	}
	c = new_check(v, "reference", host);
	refcheck_config_init(&cfg);
	cfg.host_path = host;
	cfg.ref_path = ref;
	cfg.ref_timescale = opts_enum(v->o, "reference_timescale") ?
			    TS_SCALE_TAI : TS_SCALE_UTC;
	cfg.tai_utc_ns = opts_int(v->o, "tai_offset") * NS_PER_S;
	cfg.window_ns = opts_ns(v->o, "match_window");
	{
		enum tapfmt_kind k = TAPFMT_AUTO;

		tapfmt_parse(ref_formats[opts_enum(v->o, "reference_format")], &k);
		cfg.ref_format = k;
	}
	rc = refcheck_run(&cfg, &v->ref, err);
	if (rc) {
		fprintf(stderr, "tapless validate: %s\n", err);
		verdict_skip(c, "%s", err);
		v->input_error = true;
		refcheck_result_free(&v->ref);
		return;
	}
	v->have_ref = true;
	if (v->ref.ref_tap_missing || v->ref.ref_tap_bad)
		fprintf(stderr, "tapless validate: warning: %s: %llu frames "
			"without a %s stamp and %llu with a bad one left out "
			"(first: %s)\n", ref,
			(unsigned long long)v->ref.ref_tap_missing,
			v->ref.ref_format, (unsigned long long)v->ref.ref_tap_bad,
			v->ref.ref_tap_warning);
	else if (v->ref.ref_tap_warning[0])
		fprintf(stderr, "tapless validate: warning: %s\n",
			v->ref.ref_tap_warning);
	refcheck_judge(&v->ref, &v->lim, c);
	{
		struct histplot_series s[2];
		size_t ns = 0;

		for (int d = REFCHECK_TX; d <= REFCHECK_RX; d++)
			if (v->ref.dir[d].err.n)
				s[ns++] = (struct histplot_series){
					refcheck_dir_name((enum refcheck_dir)d),
					v->ref.dir[d].v, v->ref.dir[d].err.n };
		if (!ns)
			s[ns++] = (struct histplot_series){ "all",
				v->ref.dir[REFCHECK_ALL].v,
				v->ref.dir[REFCHECK_ALL].err.n };
		plot(v, "reference-error", "host stamp - reference stamp",
		     "error", s, ns);
	}
}

static enum verdict overall(const struct validate *v, unsigned *judged)
{
	enum verdict w = VERDICT_SKIP;

	*judged = 0;
	for (unsigned i = 0; i < v->nchecks; i++) {
		w = verdict_worst(w, v->check[i].v);
		*judged += v->check[i].v != VERDICT_SKIP;
	}
	return w;
}

static int validate_print(struct validate *v)
{
	unsigned pflags = 0;
	enum print_format fmt = print_format_from_opts(v->o, &pflags);
	struct printer *p = print_create(stdout, fmt, pflags);
	unsigned judged;
	enum verdict w = overall(v, &judged);

	if (v->nphc) {
		print_array_begin(p, "phc");
		for (unsigned i = 0; i < v->nphc; i++)
			phccheck_print(p, &v->phc[i]);
		print_array_end(p);
		print_text(p, "\n");
	}
	if (v->have_loop) {
		print_object_begin(p, "loopback");
		loopcheck_print(p, &v->loop);
		print_object_end(p);
		print_text(p, "\n");
	}
	if (v->have_calib) {
		print_object_begin(p, "calibration");
		print_str(p, "file", "calibration written to %s", opts_str(v->o,
			  "calibration"));
		print_str(p, "host", " (host %s):", v->calib.host[0] ?
			  v->calib.host : "not named");
		print_array_begin(p, "terms");
		for (int d = 0; d < CALIB_DIRS; d++)
			for (int s = 0; s < CALIB_SRCS; s++) {
				const struct calib_term *t = &v->calib.t[d][s];

				if (!t->set)
					continue;
				print_object_begin(p, NULL);
				print_str(p, "dir", " %s", calib_dir_name(
					  (enum calib_dir)d));
				print_str(p, "source", " %s", calib_src_name(
					  (enum calib_src)s));
				print_int(p, "offset_ns", " offset %lld ns",
					  t->offset_ns);
				print_int(p, "spread_ns", " spread %lld ns;",
					  t->spread_ns);
				print_uint(p, "samples", NULL, t->samples);
				print_object_end(p);
			}
		print_array_end(p);
		print_uint(p, "samples", " from %llu one-way samples",
			   v->calib.t[CALIB_TX][v->loop.dir[0].source ==
				TS_SOURCE_HW ? CALIB_HW : CALIB_SW].samples);
		print_object_end(p);
		print_text(p, "\n\n");
	}
	if (v->have_ref) {
		refcheck_print(p, "reference", &v->ref);
		print_text(p, "\n");
	}
	print_text(p, "verdicts\n");
	print_array_begin(p, "checks");
	for (unsigned i = 0; i < v->nchecks; i++)
		verdict_print(p, &v->check[i]);
	print_array_end(p);
	print_uint(p, "checked", "\n%llu checks judged", judged);
	print_uint(p, "skipped", ", %llu skipped", v->nchecks - judged);
	print_str(p, "verdict", ": %s", judged ? verdict_name(w) :
		  "nothing could be checked");
	print_text(p, "\n");
	return print_destroy(p);
}

int cmd_validate(int argc, char **argv)
{
	struct validate *v = xcalloc(1, sizeof(*v));
	unsigned judged;
	enum verdict w;
	int first, rc;

	verdict_limits_init(&v->lim);
	rc = cmd_options(validate_opts, argc, argv, "", &v->o, &first);
	if (rc) {
		if (rc < 0 && strcmp(argv[1], "--list-options"))
			verdict_limits_usage(&v->lim, stdout);
		free(v);
		return rc < 0 ? CMD_OK : rc;
	}
	rc = CMD_USAGE;
	if (first < argc) {
		fprintf(stderr, "tapless validate: unexpected operand '%s' (the "
			"host's capture goes with --capture)\n", argv[first]);
		goto out;
	}
	{
		const char *const *l;
		size_t n = opts_list(v->o, "limit", &l);

		for (size_t i = 0; i < n; i++) {
			char err[VERDICT_ERRBUF];

			if (verdict_limits_set(&v->lim, l[i], err)) {
				fprintf(stderr, "tapless validate: %s\n", err);
				goto out;
			}
		}
	}
	if (opts_str(v->o, "capture") && !opts_str(v->o, "reference")) {
		fprintf(stderr, "tapless validate: --capture needs --reference\n");
		goto out;
	}
	if (opts_str(v->o, "calibration")) {
		const char *h = opts_str(v->o, "host");

		if (!opts_str(v->o, "loopback")) {
			fprintf(stderr, "tapless validate: --calibration needs "
				"--loopback A:B\n");
			goto out;
		}
		if (!opts_given(v->o, "expect_ns") &&
		    !opts_given(v->o, "cable_m")) {
			fprintf(stderr, "tapless validate: --calibration needs "
				"the loopback's true one-way: --expect-ns or "
				"--cable-m\n");
			goto out;
		}
		bool bad = h && (!*h || strlen(h) >= sizeof(v->calib.host));

		for (const char *q = h; q && *q && !bad; q++)
			bad = (unsigned char)*q <= ' ' || *q == '#' || *q == 0x7f;
		if (bad) {
			fprintf(stderr, "tapless validate: --host '%s': expected "
				"a name of 1 to 63 characters, no blank or '#'\n",
				h);
			goto out;
		}
	} else if (opts_str(v->o, "host")) {
		fprintf(stderr, "tapless validate: --host names the host of "
			"--calibration\n");
		goto out;
	}
	v->plot_dir = opts_str(v->o, "plot");
	if (v->plot_dir && mkdir(v->plot_dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "tapless validate: --plot %s: %s\n", v->plot_dir,
			strerror(errno));
		rc = CMD_SYSTEM;
		goto out;
	}

	run_phc(v);
	if (!v->input_error)
		run_loop(v);
	if (!v->input_error)
		run_ref(v);

	if (validate_print(v)) {
		fprintf(stderr, "tapless validate: writing the output: %s\n",
			strerror(EIO));
		rc = CMD_SYSTEM;
		goto out;
	}
	w = overall(v, &judged);
	if (v->input_error)
		rc = CMD_USAGE;
	else if (v->system_error)
		rc = CMD_SYSTEM;
	else
		rc = w == VERDICT_FAIL ? VALIDATE_FAIL :
		     w == VERDICT_WARN ? VALIDATE_WARN : CMD_OK;
out:
	if (v->have_loop)
		loopcheck_result_free(&v->loop);
	if (v->have_ref)
		refcheck_result_free(&v->ref);
	opts_destroy(v->o);
	free(v);
	return rc;
}
