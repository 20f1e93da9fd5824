/* report_write.c — the files a report is made of (report_private.h): the
 * data files gnuplot reads, the plot scripts, index.md.
 */
#include "report/report.h"
#include "report/report_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/calib.h"
#include "files/samples.h"
#include "report/gnuplot.h"
#include "base/hist.h"
#include "base/mkpath.h"
#include "ptp/journal.h"
#include "base/summary.h"
#include "base/tstep.h"
#include "base/xalloc.h"

/* The plots' templates, in the order of report.h. */
const char *const report_plot_names[P_COUNT] = {
	[P_ERROR] = "measurement-error", [P_RATE] = "latency-rate",
	[P_TRUTH] = "switch-truth", [P_CDF] = "cdf", [P_HIST] = "histograms",
	[P_TIME] = "latency-time", [P_PTP] = "ptp-offset",
	[P_FOLLOW] = "follow-time",
};

/* ---- data files ---- */

static FILE *report_create(const char *outdir, const char *name, char *path,
			   size_t len, char err[REPORT_ERRBUF], int *rc)
{
	FILE *f;

	snprintf(path, len, "%s/%s", outdir, name);
	f = fopen(path, "w");
	if (!f)
		*rc = report_fail(err, -errno, "%s: %s", path, strerror(errno));
	return f;
}

static int report_close(FILE *f, const char *path, char err[REPORT_ERRBUF])
{
	int bad = ferror(f);

	if (fclose(f) || bad)
		return report_fail(err, -EIO, "%s: write error", path);
	return 0;
}

static void report_dat_val(FILE *f, bool have, double v)
{
	/* '-' is the missing value the scripts declare (set datafile
	 * missing '-'): gnuplot leaves the point out. */
	if (have)
		fprintf(f, " %.3f", v);
	else
		fprintf(f, " -");
}

/* Histogram bins: linear, 10 to 100 across the range, or 40 per decade
 * when the values span decades (a tail of 100x the median is common). */
struct report_bins {
	double lo, width;		/* linear */
	bool log;
	size_t n;
	unsigned long long *count;
};

static bool report_logx(int64_t min, int64_t max)
{
	return min > 0 && (double)max / (double)min >= 100;
}

static double report_nice(double w)
{
	double p = pow(10, floor(log10(w))), m = w / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static int report_bin_add(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct report_bins *b = arg;
	double v = ((double)lo + (double)hi) / 2;
	double k = b->log ? floor(log10(v / b->lo) * 40) : floor((v - b->lo) / b->width);

	if (k < 0)
		k = 0;
	if (k >= (double)b->n)
		k = (double)b->n - 1;
	b->count[(size_t)k] += count;
	return 0;
}

/* The step of the values: the bins come in increasing order, and the
 * greatest common divisor of the steps between neighbours is that of the
 * distances from the smallest. A bin holding more than one value (beyond
 * HIST_EXACT_NS) leaves nothing coarser than 1 ns to find. */
struct report_quantum {
	struct tstep step;
	bool coarse;
};

static int report_quantum_add(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct report_quantum *q = arg;

	(void)count;
	if (lo != hi) {
		q->coarse = true;
		return 1;
	}
	tstep_add(&q->step, lo);
	return tstep_get(&q->step) == 1;	/* nothing coarser to find */
}

static void report_write_hist(FILE *f, const struct hist *h)
{
	struct report_quantum qt;
	struct summary s;
	struct report_bins b = { 0 };
	double total;

	hist_summary(h, &s);
	if (!s.n)
		return;
	b.log = report_logx(s.min, s.max);
	b.lo = (double)s.min;
	if (b.log) {
		b.n = (size_t)ceil(log10((double)s.max / (double)s.min) * 40) + 1;
	} else {
		int64_t q;

		/* Stamps come in ticks (8 ns for some NICs, 1 µs for old
		 * pcap): bins narrower than a tick, or not a whole number of
		 * them, make a comb. */
		tstep_init(&qt.step);
		qt.coarse = false;
		hist_foreach(h, report_quantum_add, &qt);
		q = qt.coarse ? 1 : tstep_get(&qt.step);
		if (q < 1)
			q = 1;
		/* Enough bins to show a shape, not so many that a few
		 * samples scatter into single-sample spikes. */
		double nb = fmin(100, fmax(10, 2 * sqrt((double)s.n)));

		b.width = report_nice(fmax(1, ((double)s.max - (double)s.min + 1) / nb));
		b.width = ceil(b.width / (double)q) * (double)q;
		b.lo = (double)s.min - b.width / 2;
		b.n = (size_t)floor(((double)s.max - b.lo) / b.width) + 1;
	}
	b.count = xcalloc(b.n, sizeof(*b.count));
	hist_foreach(h, report_bin_add, &b);
	total = (double)s.n;
	fprintf(f, "# bin_centre_ns count fraction density_per_ns "
		"density_per_decade (%s bins; '-': a bin reaching 0 has no width "
		"in decades)\n", b.log ? "40 per decade" : "linear");
	for (size_t i = 0; i < b.n; i++) {
		double c = b.log ? b.lo * pow(10, ((double)i + 0.5) / 40) :
				   b.lo + ((double)i + 0.5) * b.width;
		/* Density, so that histograms binned differently (another
		 * rate, the truth) can share an axis: per ns on a linear
		 * axis, per decade on a log one (there equal areas are equal
		 * shares). */
		double w = b.log ? b.lo * (pow(10, (double)(i + 1) / 40) -
					   pow(10, (double)i / 40)) : b.width;
		double lo = b.log ? b.lo * pow(10, (double)i / 40) : c - w / 2;
		double frac = (double)b.count[i] / total;

		fprintf(f, "%.3f %llu %.6g %.6g", c, b.count[i], frac, frac / w);
		if (lo > 0)
			fprintf(f, " %.6g\n", frac / log10((lo + w) / lo));
		else
			fprintf(f, " -\n");
	}
	free(b.count);
}

struct report_cdf {
	FILE *f;
	double n;
	unsigned long long cum;
};

static int report_cdf_add(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct report_cdf *c = arg;

	(void)lo;
	c->cum += count;
	fprintf(c->f, "%lld %.9f\n", (long long)hi, (double)c->cum / c->n);
	return 0;
}

static void report_write_cdf(FILE *f, const struct hist *h)
{
	struct report_cdf c = { f, (double)hist_count(h), 0 };
	struct summary s;

	fprintf(f, "# latency_ns cumulative_fraction\n");
	hist_summary(h, &s);
	if (!s.n)
		return;
	/* Where the curve starts from 0, so that one distinct value is a
	 * step too. */
	fprintf(f, "%lld 0\n", (long long)s.min);
	hist_foreach(h, report_cdf_add, &c);
}

static void report_write_pct(FILE *f, const struct hist *h)
{
	struct summary s;

	hist_summary(h, &s);
	fprintf(f, "# latency_ns cumulative_fraction label\n");
	if (!s.n)
		return;
	fprintf(f, "%lld 0.5 p50\n%lld 0.99 p99\n%lld 0.999 p99.9\n",
		(long long)s.p50, (long long)s.p99, (long long)s.p999);
}

/* The per-sample time series: the samples file again, now that the run's
 * start is known. */
static int report_write_time(const struct report *r, const struct report_rate *rt,
			     const char *outdir, char err[REPORT_ERRBUF])
{
	static const int series[] = { S_BUY, S_SELL, S_SWITCH };
	FILE *out[3] = { NULL }, *in;
	char path[3][PATH_MAX + 64], name[64], *line = NULL;
	size_t cap = 0;
	int rc = 0;

	for (int i = 0; i < 3 && !rc; i++) {
		snprintf(name, sizeof(name), "data/time-%s-%ld.dat",
			 report_series_key[series[i]], rt->rate);
		out[i] = report_create(outdir, name, path[i], sizeof(path[i]), err, &rc);
		if (out[i])
			fprintf(out[i], "# seconds_since_start latency_ns in_sync "
				"(1: in sync or no sync state, 2: in holdover, "
				"0: out of sync)\n");
	}
	in = rc || !rt->have_samples ? NULL : fopen(rt->path, "r");
	while (in && getline(&line, &cap, in) >= 0) {
		struct samples_rec s;
		int k;

		if (samples_parse(line, &s) || !rt->have_t0)
			continue;
		k = report_series_of(r, &s);
		if (report_sample_dropped(k, &s))
			continue;
		for (int i = 0; i < 3; i++)
			if (k == series[i])
				fprintf(out[i], "%.9f %lld %d\n",
					((double)s.time_ns - (double)rt->t0) / 1e9,
					(long long)s.latency_ns,
					s.sync == SAMPLES_SYNC_OUT ? 0 :
					s.sync == SAMPLES_SYNC_HOLDOVER ? 2 : 1);
	}
	if (in)
		fclose(in);
	free(line);
	for (int i = 0; i < 3; i++)
		if (out[i]) {
			int c = report_close(out[i], path[i], err);

			if (!rc)
				rc = c;
		}
	return rc;
}

static int report_mkdir(const char *path, char err[REPORT_ERRBUF])
{
	int rc = mkpath_p(path, 0755);

	if (rc)
		return report_fail(err, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

/* One hist to one data file. */
static int report_write_one(const char *outdir, const char *what, const char *key,
			    long rate, const struct hist *h,
			    void (*fn)(FILE *, const struct hist *),
			    char err[REPORT_ERRBUF])
{
	char name[128], path[PATH_MAX + 128];
	int rc = 0;
	FILE *f;

	snprintf(name, sizeof(name), "data/%s-%s-%ld.dat", what, key, rate);
	f = report_create(outdir, name, path, sizeof(path), err, &rc);
	if (!f)
		return rc;
	fn(f, h);
	return report_close(f, path, err);
}

/* The columns of one series in rates.dat: percentiles, mean, SD, count. */
static const char *const report_rate_cols[] = {
	"p1", "p25", "p50", "p75", "p99", "mean", "sd", "n",
};

static void report_rates_head(FILE *f, const char *series)
{
	for (size_t i = 0; i < sizeof(report_rate_cols) / sizeof(report_rate_cols[0]); i++)
		fprintf(f, " %s_%s", series, report_rate_cols[i]);
}

static void report_rates_val(FILE *f, const struct summary *s,
			     const struct report_q *q)
{
	bool h = s->n > 0;

	report_dat_val(f, h, (double)q->p1);
	report_dat_val(f, h, (double)q->p25);
	report_dat_val(f, h, (double)q->p50);
	report_dat_val(f, h, (double)q->p75);
	report_dat_val(f, h, (double)q->p99);
	report_dat_val(f, h, s->mean);
	report_dat_val(f, s->n > 1, s->sd);
	fprintf(f, " %llu", (unsigned long long)s->n);
}

static int report_write_rates(const struct report *r, const char *outdir,
			      char err[REPORT_ERRBUF])
{
	char path[PATH_MAX + 64];
	int rc = 0;
	FILE *f = report_create(outdir, "data/rates.dat", path, sizeof(path), err, &rc);
	const char *model = report_conf(r, "switch_latency_ns");
	double m;

	if (!f)
		return rc;
	fprintf(f, "# tapless report: per market data rate, nanoseconds. Per series, "
		"nearest-rank percentiles p1 p25 p50 p75 p99, mean, SD, count:\n"
		"# buy, sell (algo host), switch (topology method), truth (the "
		"emulator's residence), topotruth (what the topology method is\n"
		"# compared with), error (switch sample - its frame's truth). Then the "
		"error bound's p50, the shares of switch and hop samples\n"
		"# inside their bound, the model's latency and the rate the venue "
		"achieved through the switch. '-': not known. gnuplot: set\n"
		"# datafile columnheaders, then using \"rate\":\"buy_p50\".\n");
	fprintf(f, "rate");
	report_rates_head(f, "buy");
	report_rates_head(f, "sell");
	report_rates_head(f, "switch");
	report_rates_head(f, "truth");
	report_rates_head(f, "topotruth");
	report_rates_head(f, "error");
	fprintf(f, " bound_p50 coverage_switch coverage_hop model_ns sent_rate"
		" baseline_mean baseline_sd\n");
	m = model ? strtod(model, NULL) : NAN;
	/* Lowest rate first: the lines of the rate plot join in file order. */
	for (size_t i = r->nrates; i-- > 0;) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures fg;

		report_figures(rt, &fg);
		fprintf(f, "%ld", rt->rate);
		report_rates_val(f, &fg.s[S_BUY], &fg.q[S_BUY]);
		report_rates_val(f, &fg.s[S_SELL], &fg.q[S_SELL]);
		report_rates_val(f, &fg.s[S_SWITCH], &fg.q[S_SWITCH]);
		report_rates_val(f, &fg.truth_res, &fg.q_res);
		report_rates_val(f, &fg.truth_topo, &fg.q_topo);
		report_rates_val(f, &fg.err[E_SWITCH], &fg.q_err[E_SWITCH]);
		report_dat_val(f, fg.bound[E_SWITCH].n, (double)fg.bound[E_SWITCH].p50);
		report_dat_val(f, !isnan(fg.coverage[E_SWITCH]), 100 * fg.coverage[E_SWITCH]);
		report_dat_val(f, !isnan(fg.coverage[E_HOP]), 100 * fg.coverage[E_HOP]);
		report_dat_val(f, isfinite(m), m);
		report_dat_val(f, rt->have_run && !isnan(rt->run[RUN_SW_RATE]),
			       rt->run[RUN_SW_RATE]);
		report_dat_val(f, fg.have_base, fg.base_mean);
		report_dat_val(f, fg.have_base, fg.base_sd);
		fprintf(f, "\n");
	}
	return report_close(f, path, err);
}

static int report_write_ptp(const struct report *r, const char *outdir,
			    char err[REPORT_ERRBUF])
{
	for (size_t i = 0; i < r->nclk; i++) {
		const struct report_clock *c = &r->clk[i];
		char name[160], path[PATH_MAX + 160];
		int rc = 0;
		FILE *f;

		snprintf(name, sizeof(name), "data/ptp-%s.dat", c->name);
		f = report_create(outdir, name, path, sizeof(path), err, &rc);
		if (!f)
			return rc;
		fprintf(f, "# host %s clock %s\n# seconds_since_first_sample "
			"offset_ns bound_ns in_sync (1: in sync, 2: in holdover, "
			"0: out of sync)\n", c->host, c->clock);
		for (size_t j = 0; j < c->n; j++) {
			fprintf(f, "%.3f", ((double)c->ts[j] - (double)r->ptp_t0) / 1e9);
			if (c->off[j] != JOURNAL_NONE)
				fprintf(f, " %lld", (long long)c->off[j]);
			else
				fprintf(f, " -");
			if (c->bnd[j] != JOURNAL_NONE)
				fprintf(f, " %lld", (long long)c->bnd[j]);
			else
				fprintf(f, " -");
			fprintf(f, " %d\n", c->sync[j]);
		}
		rc = report_close(f, path, err);
		if (rc)
			return rc;
	}
	return 0;
}

int report_write_data(struct report *r, const char *outdir,
		      char err[REPORT_ERRBUF])
{
	static const int shown[] = { S_BUY, S_SELL, S_SWITCH };
	char path[PATH_MAX + 32];
	int rc;
	FILE *f;

	if ((rc = report_mkdir(outdir, err)))
		return rc;
	snprintf(path, sizeof(path), "%s/data", outdir);
	if ((rc = report_mkdir(path, err)))
		return rc;
	snprintf(path, sizeof(path), "%s/plots", outdir);
	if ((rc = report_mkdir(path, err)))
		return rc;
	for (size_t i = 0; i < r->nrates; i++) {
		struct report_rate *rt = &r->rate[i];

		for (size_t k = 0; k < 3; k++) {
			const char *key = report_series_key[shown[k]];
			const struct hist *h = rt->s[shown[k]].h;

			if ((rc = report_write_one(outdir, "hist", key, rt->rate, h,
						   report_write_hist, err)) ||
			    (rc = report_write_one(outdir, "cdf", key, rt->rate, h,
						   report_write_cdf, err)) ||
			    (rc = report_write_one(outdir, "pct", key, rt->rate, h,
						   report_write_pct, err)))
				return rc;
		}
		/* The truth the switch samples are compared with, and
		 * their error against it. */
		if (rt->truth.have_topo &&
		    ((rc = report_write_one(outdir, "hist", "truth", rt->rate,
					    rt->truth.topo, report_write_hist, err)) ||
		     (rc = report_write_one(outdir, "cdf", "truth", rt->rate,
					    rt->truth.topo, report_write_cdf, err)) ||
		     (rc = report_write_one(outdir, "pct", "truth", rt->rate,
					    rt->truth.topo, report_write_pct, err))))
			return rc;
		if (rt->pair.have &&
		    (rc = report_write_one(outdir, "cdf", "error", rt->rate,
					   rt->pair.e[E_SWITCH].err, report_write_cdf, err)))
			return rc;
		if ((rc = report_write_time(r, rt, outdir, err)))
			return rc;
	}
	if ((rc = report_write_rates(r, outdir, err)) ||
	    (rc = report_write_ptp(r, outdir, err)) ||
	    (rc = report_follow_write(r, outdir, err)))
		return rc;
	rc = 0;
	f = report_create(outdir, "tables.txt", path, sizeof(path), err, &rc);
	if (!f)
		return rc;
	report_tables(r, f, false);
	if ((rc = report_close(f, path, err)))
		return rc;
	f = report_create(outdir, "tables.md", path, sizeof(path), err, &rc);
	if (!f)
		return rc;
	report_tables(r, f, true);
	return report_close(f, path, err);
}

/* ---- plot scripts ---- */

size_t report_plot_count(void)
{
	return P_COUNT;
}

const char *report_plot_name(size_t i)
{
	return i < P_COUNT ? report_plot_names[i] : NULL;
}

/* Some rate has truth with topology figures beside it; else false, and
 * *why is the first rate's reason. */
static bool report_truth_topo(const struct report *r, const char **why)
{
	const char *first = NULL;

	for (size_t i = 0; i < r->nrates; i++) {
		if (r->rate[i].truth.have_topo)
			return true;
		if (!first && r->rate[i].truth.have && *r->rate[i].truth.why)
			first = r->rate[i].truth.why;
	}
	*why = first ? first : "no switch latency from topology to set beside the truth";
	return false;
}

/* Some rate has a per-sample error; else false, and *why is the first
 * rate's reason. */
static bool report_any_error(const struct report *r, const char **why)
{
	const char *first = NULL;

	for (size_t i = 0; i < r->nrates; i++) {
		if (r->rate[i].pair.have && hist_count(r->rate[i].pair.e[E_SWITCH].err))
			return true;
		if (!first && r->rate[i].truth.have && *r->rate[i].pair.why)
			first = r->rate[i].pair.why;
	}
	*why = first ? first : "no emulator truth (rate-R/switch/swemu/*.pcapng) "
		       "to measure the error against";
	return false;
}

bool report_plot_wanted(const struct report *r, size_t i, const char **why)
{
	*why = NULL;
	if (i == P_ERROR && !report_any_error(r, why))
		return false;
	if (i == P_PTP && !r->nclk) {
		*why = "no sync journal samples (journals/*.journal)";
		return false;
	}
	if (i == P_TRUTH && !report_any_truth(r)) {
		*why = "no emulator truth (rate-R/switch/swemu/*.pcapng)";
		return false;
	}
	/* Truth alone is not enough: the plot sets the topology method's
	 * switch latency beside it, and a store-and-forward switch with no
	 * switch_speed gives none (the plot once ran on an empty rate list
	 * and gnuplot failed on data/hist-switch-.dat). */
	if (i == P_TRUTH && !report_truth_topo(r, why))
		return false;
	if (i == P_FOLLOW && !r->follow.have) {
		*why = r->follow.why;
		return false;
	}
	return i < P_COUNT;
}

/* What stamped the samples, for the captions. */
static const char *report_stamps(const struct report *r)
{
	const char *st = report_conf(r, "stamps");

	if (st && !strcmp(st, "software"))
		return "software (SO_TIMESTAMPING in the kernel: veth has no PHC)";
	if (st && !strcmp(st, "hardware"))
		return "NIC hardware stamps (PHC time)";
	return "of a source lab.conf does not name";
}

const char *report_plot_caption(const struct report *r, size_t i, char *buf,
				size_t len)
{
	const char *st = report_stamps(r);
	char name[256];

	report_switch_name(r, name, sizeof(name));
	switch (i) {
	case P_ERROR:
		snprintf(buf, len, "Measurement error per market data message: tapless's "
			 "switch latency (the venue's TX stamp to the algo's RX stamp, "
			 "minus the cables) minus the truth for the same frame (the "
			 "emulator's own egress minus ingress stamp); stamps: %s. Left: box p25-p75, "
			 "bar p50, whiskers p1-p99; grey band: +/- the error bound the "
			 "samples came with (p50); label: share of samples inside their own "
			 "bound (in red: a rate the venue could not send at, and what it "
			 "sent). Right: the error's CDF per rate, bounds dashed.", st);
		break;
	case P_RATE:
		snprintf(buf, len, "Left: BUY (tick to trade: the algo's RX stamp of the "
			 "market data to its TX stamp of the BUY) and SELL (fill to SELL) "
			 "at the algo host. Right: switch latency measured from host stamps "
			 "(venue TX to algo RX, minus cables: topology method) beside what "
			 "the switch did (%s: its own ingress/egress stamps) and its model "
			 "(dashed). Boxes p25-p75, bar p50, whiskers p1-p99. Stamps: %s.", name, st);
		break;
	case P_TRUTH:
		snprintf(buf, len, "Switch latency per frame: measured from host stamps "
			 "(solid: venue TX to algo RX, minus cables) and the truth for the "
			 "same frames (dashed: %s, its egress minus ingress stamps); the "
			 "model's latency as a vertical line. Left: CDFs, y stretched "
			 "towards 1; right: distributions (per decade on a log axis). Stamps: "
			 "%s.", name, st);
		break;
	case P_CDF:
		snprintf(buf, len, "Cumulative distributions: BUY and SELL (the algo's "
			 "own RX stamp to its TX stamp), switch latency (venue TX to algo "
			 "RX, minus cables) with the emulator's truth dashed; p50, p99 and "
			 "p99.9 marked, y stretched towards 1. Stamps: %s.", st);
		break;
	case P_HIST:
		snprintf(buf, len, "Distributions of BUY, SELL (the algo's RX to TX "
			 "stamps) and switch latency (venue TX to algo RX, minus cables), "
			 "one curve per rate: the taller and thinner, the less jitter; per "
			 "decade on a log axis. Stamps: %s.", st);
		break;
	case P_TIME:
		snprintf(buf, len, "Every sample over its run: BUY, SELL and switch "
			 "latency against the seconds since the run's first stamp; open "
			 "circles: taken while a host was out of sync. Stamps: %s.", st);
		break;
	case P_PTP:
		snprintf(buf, len, "From the sync journals: each host clock's offset from "
			 "its PTP master as ptp4l measured it, and the error bound "
			 "tapless-syncd gave it while in sync or, open circles, in holdover "
			 "(what every one-way sample's bound is made of). PTP over the back-to-back link; stamps: %s.", st);
		break;
	case P_FOLLOW: {
		char iv[32], fl[300];

		report_follow_value(r, "FOLLOW_FLAGS", fl, sizeof(fl));

		snprintf(buf, len, "Live, from tapless correlate --follow during the "
			 "runs through the switch (follow.jsonl): per %s interval, p50 "
			 "(solid) and p99 (dashed) of tick to trade (the algo's RX stamp "
			 "of the market data to its TX stamp of the BUY; top) and of each "
			 "hop's one-way latency (TX stamp at one host to RX stamp at the "
			 "other; bottom), against the seconds since the first interval; "
			 "dotted lines: where each rate's run began. Shaded: intervals "
			 "whose lines carry flags (%s: a host stalled, as between the "
			 "runs, when no capture runs; a capd restart; data late). Gaps: "
			 "no samples (the runs back to back are not followed). Stamps: %s.",
			 report_ns(iv, sizeof(iv), (double)r->follow.interval_ns, false),
			 *fl ? fl : "none here", st);
		break;
	}
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

void report_plot_result(struct report *r, size_t i, bool ok, const char *msg)
{
	if (i >= P_COUNT)
		return;
	r->plot[i].done = true;
	r->plot[i].ok = ok;
	free(r->plot[i].msg);
	r->plot[i].msg = msg && *msg ? xstrdup(msg) : NULL;
}

/* A growable string. */
struct report_buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct report_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void buf_addf(struct report_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void buf_addf(struct report_buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* The rates (lowest first, space-separated) for which a series has data. */
static void report_rates_with(const struct report *r, int series, bool truth,
			      struct report_buf *b)
{
	for (size_t i = r->nrates; i-- > 0;) {
		const struct report_rate *rt = &r->rate[i];
		bool has = truth ? rt->truth.have_topo :
			series < 0 ? rt->have_samples : hist_count(rt->s[series].h) > 0;

		if (has)
			buf_addf(b, "%s%ld", b->len ? " " : "", rt->rate);
	}
	if (!b->s)
		buf_add(b, "", 0);
}

/* The rates (lowest first) with a per-sample error; with bounds, the p50
 * of their bounds instead (0 where none), in the same order. */
static void report_rates_error(const struct report *r, bool bounds,
			       struct report_buf *b)
{
	for (size_t i = r->nrates; i-- > 0;) {
		const struct report_rate *rt = &r->rate[i];
		struct summary s;

		if (!rt->pair.have || !hist_count(rt->pair.e[E_SWITCH].err))
			continue;
		hist_summary(rt->pair.e[E_SWITCH].bound, &s);
		if (bounds)
			buf_addf(b, "%s%lld", b->len ? " " : "", (long long)s.p50);
		else
			buf_addf(b, "%s%ld", b->len ? " " : "", rt->rate);
	}
	if (!b->s)
		buf_add(b, "", 0);
}

/* Whether the p1..p99 of the series (S_* or, for -1, the truth the
 * switch samples are compared with, beside S_SWITCH) span a decade or
 * more (the small boxes would be slivers on a linear axis): then
 * a log axis. Never with a value at or below 0, which it cannot show. */
static bool report_q_logy(const struct report *r, int series)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures f;

		report_figures(rt, &f);
		for (int k = 0; k < 2; k++) {
			const struct report_q *q = series >= 0 ? &f.q[series] :
				k ? &f.q_topo : &f.q[S_SWITCH];
			uint64_t n = series >= 0 ? f.s[series].n :
				k ? f.truth_topo.n : f.s[S_SWITCH].n;

			if (!n)
				continue;
			lo = q->p1 < lo ? q->p1 : lo;
			hi = q->p99 > hi ? q->p99 : hi;
		}
	}
	return lo != INT64_MAX && lo > 0 && (double)hi / (double)lo >= 10;
}

/* The error axis of the error plot: the errors' p1..p99 and the bounds,
 * with room. For the CDF (near), no further than twice the largest bound
 * each way, so that the curves' rise within the bounds can be read: the
 * tails beyond are in the data, off the axis, and the curve's height at
 * the edge says how much is there. */
static void report_err_range(const struct report *r, bool near, double *lo,
			     double *hi)
{
	double bmax = 0;

	*lo = 0;
	*hi = 0;
	for (size_t i = 0; i < r->nrates; i++) {
		struct report_figures f;

		report_figures(&r->rate[i], &f);
		if (!f.err[E_SWITCH].n)
			continue;
		bmax = fmax(bmax, (double)f.bound[E_SWITCH].p50);
		*lo = fmin(*lo, fmin((double)f.q_err[E_SWITCH].p1,
				     -(double)f.bound[E_SWITCH].p50));
		*hi = fmax(*hi, fmax((double)f.q_err[E_SWITCH].p99,
				     (double)f.bound[E_SWITCH].p50));
	}
	if (near && bmax > 0) {
		*lo = fmax(*lo, -2 * bmax);
		*hi = fmin(*hi, 2 * bmax);
	}
	if (*hi - *lo < 10) {
		*lo -= 5;
		*hi += 5;
	}
	/* Room below for the labels under the bands. */
	*lo -= (*hi - *lo) * (near ? 0.08 : 0.14);
	*hi += (*hi - *lo) * 0.08;
}

/* Where a switch latency axis starts: below the smallest p1 of the
 * measured and the truth, and the model's latency, so that the model's
 * line is on it (a log axis: a power of ten). */
static double report_sw_xmin(const struct report *r, double model)
{
	double lo = isfinite(model) && model > 0 ? model : INFINITY;

	for (size_t i = 0; i < r->nrates; i++) {
		struct report_figures f;

		report_figures(&r->rate[i], &f);
		if (f.s[S_SWITCH].n && f.q[S_SWITCH].p1 > 0)
			lo = fmin(lo, (double)f.q[S_SWITCH].p1);
		if (f.truth_topo.n && f.q_topo.p1 > 0)
			lo = fmin(lo, (double)f.q_topo.p1);
	}
	return isfinite(lo) ? pow(10, floor(log10(lo))) : 1;
}

static bool report_series_logx(const struct report *r, int series)
{
	int64_t min = INT64_MAX, max = INT64_MIN;

	for (size_t i = 0; i < r->nrates; i++) {
		struct summary s;

		hist_summary(r->rate[i].s[series].h, &s);
		if (!s.n)
			continue;
		if (s.min < min)
			min = s.min;
		if (s.max > max)
			max = s.max;
	}
	return min != INT64_MAX && report_logx(min, max);
}

/* Text for a gnuplot single-quoted string: ' is written ''. */
static void report_gp_quote(struct report_buf *b, const char *s)
{
	char *q = gnuplot_quote(s);

	buf_add(b, q, strlen(q));
	free(q);
}

int report_plot_script(const struct report *r, size_t i, const char *template_dir,
		       const char *outdir, char err[REPORT_ERRBUF])
{
	struct { const char *key; struct report_buf val; } sub[48];
	struct gnuplot_sub gs[48];
	size_t nsub = 0;
	char tpath[PATH_MAX + 64], opath[PATH_MAX + 64], *text = NULL;
	struct report_buf title = { 0 };
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int rc = 0;

	if (i >= P_COUNT)
		return report_fail(err, -EINVAL, "no plot %zu", i);
	snprintf(tpath, sizeof(tpath), "%s/%s.gp", template_dir, report_plot_names[i]);
	f = fopen(tpath, "r");
	if (!f)
		return report_fail(err, -errno, "%s: %s", tpath, strerror(errno));
	len = getdelim(&text, &cap, 0, f);
	fclose(f);
	if (len < 0) {
		free(text);
		return report_fail(err, -EIO, "%s: cannot read", tpath);
	}

	memset(sub, 0, sizeof(sub));
#define SUB(k) (sub[nsub].key = (k), &sub[nsub++].val)
	{
		struct report_buf *b = SUB("TITLE");
		const char *id = report_conf(r, "id");

		char name[256];

		report_switch_name(r, name, sizeof(name));
		buf_addf(&title, "%s: %s, %s stamps", id ? id : r->dir, name,
			 report_conf_or(r, "stamps"));
		report_gp_quote(b, title.s);
	}
	buf_addf(SUB("OUT"), "plots/%s", report_plot_names[i]);
	report_rates_with(r, -1, false, SUB("RATES"));
	report_rates_with(r, S_BUY, false, SUB("RATES_BUY"));
	report_rates_with(r, S_SELL, false, SUB("RATES_SELL"));
	report_rates_with(r, S_SWITCH, false, SUB("RATES_SWITCH"));
	report_rates_with(r, 0, true, SUB("RATES_TRUTH"));
	buf_addf(SUB("LOGX_BUY"), "%d", report_series_logx(r, S_BUY));
	buf_addf(SUB("LOGX_SELL"), "%d", report_series_logx(r, S_SELL));
	buf_addf(SUB("LOGX_SWITCH"), "%d", report_series_logx(r, S_SWITCH));
	buf_addf(SUB("LOGX_RATE"), "%d", r->nrates > 1 &&
		 r->rate[0].rate >= 10 * r->rate[r->nrates - 1].rate);
	/* The rate axis, with room around the points for their labels and
	 * error bars (and a range at all when there is one rate). */
	buf_addf(SUB("RATE_MIN"), "%g", (double)r->rate[r->nrates - 1].rate / 1.5);
	buf_addf(SUB("RATE_MAX"), "%g", (double)r->rate[0].rate * 1.5);
	{
		struct report_buf *b = SUB("PTP_SERIES");

		for (size_t c = 0; c < r->nclk; c++)
			buf_addf(b, "%s%s", c ? " " : "", r->clk[c].name);
		if (!b->s)
			buf_add(b, "", 0);
	}
	report_gp_quote(SUB("SWITCH"), report_conf_or(r, "switch"));
	{
		char name[256];

		report_switch_name(r, name, sizeof(name));
		report_gp_quote(SUB("SWITCH_NAME"), name);
	}
	report_rates_error(r, false, SUB("RATES_ERROR"));
	report_rates_error(r, true, SUB("BOUNDS"));
	buf_addf(SUB("LOGY_BS"), "%d", report_q_logy(r, S_BUY) || report_q_logy(r, S_SELL));
	buf_addf(SUB("LOGY_SW"), "%d", report_q_logy(r, -1));
	{
		const char *m = report_conf(r, "switch_latency_ns");
		double lo, hi;

		buf_addf(SUB("MODEL_NS"), "%s", m ? m : "NaN");
		report_err_range(r, false, &lo, &hi);
		buf_addf(SUB("ERR_XMIN"), "%.0f", lo);
		buf_addf(SUB("ERR_XMAX"), "%.0f", hi);
		report_err_range(r, true, &lo, &hi);
		buf_addf(SUB("ERR_CDF_XMIN"), "%.0f", lo);
		buf_addf(SUB("ERR_CDF_XMAX"), "%.0f", hi);
		buf_addf(SUB("SW_XMIN"), "%g", report_sw_xmin(r, m ? strtod(m, NULL) : NAN));
	}
	for (size_t k = 0; report_follow_keys[k]; k++) {
		char v[2048];

		report_follow_value(r, report_follow_keys[k], v, sizeof(v));
		buf_add(SUB(report_follow_keys[k]), v, strlen(v));
	}
	{
		char capt[2048];
		/* Lines as wide as the picture holds (those of three
		 * panels one above the other are narrower). */
		size_t width = i == P_HIST || i == P_TIME || i == P_PTP ||
			       i == P_FOLLOW ? 135 : 175;
		char *q = gnuplot_dquote_wrap(report_plot_caption(r, i, capt,
								  sizeof(capt)), width);

		buf_add(SUB("CAPTION"), q, strlen(q));
		free(q);
	}
#undef SUB

	for (size_t k = 0; k < nsub; k++) {
		gs[k].key = sub[k].key;
		gs[k].val = sub[k].val.s ? sub[k].val.s : "";
	}
	snprintf(opath, sizeof(opath), "%s/plots/%s.gp", outdir, report_plot_names[i]);
	f = fopen(opath, "w");
	if (!f) {
		rc = report_fail(err, -errno, "%s: %s", opath, strerror(errno));
	} else {
		fprintf(f, "# %s — made by tapless report from %s; edit and rerun\n"
			"# from the report directory: gnuplot plots/%s.gp\n",
			report_plot_names[i], tpath, report_plot_names[i]);
		gnuplot_fill(f, text, gs, nsub);
		rc = report_close(f, opath, err);
	}
	free(text);
	for (size_t k = 0; k < nsub; k++)
		free(sub[k].val.s);
	free(title.s);
	return rc;
}

/* ---- index.md ---- */

/* The hosts' stamp calibrations of a rate, on one line of its headline:
 * per host each stamp's offset (stamp - wire) and spread. */
static void report_calib_md(FILE *f, const struct report *r,
			    const struct report_rate *rt)
{
	const char *host[REPORT_ROLES] = { r->venue, r->algo };
	char a[32], b[32];

	if (!rt->cal[ROLE_VENUE] && !rt->cal[ROLE_ALGO]) {
		fprintf(f, ".  \n  Stamps not calibrated (no rate-%ld/%s.cal, "
			"%s.cal): the error includes where each host takes its "
			"stamps", rt->rate, host[ROLE_VENUE], host[ROLE_ALGO]);
		return;
	}
	fprintf(f, ".  \n  Stamps calibrated (offset stamp − wire ± spread):");
	for (int h = 0; h < REPORT_ROLES; h++) {
		const struct calib *c = rt->cal[h];
		bool any = false;

		fprintf(f, "%s %s", h ? ";" : "", host[h]);
		if (!c) {
			fprintf(f, " not calibrated");
			continue;
		}
		for (int d = 0; d < CALIB_DIRS; d++)
			for (int k = 0; k < CALIB_SRCS; k++) {
				const struct calib_term *t = &c->t[d][k];

				if (!t->set)
					continue;
				fprintf(f, "%s %s %s %s ±%s", any ? "," : "",
					calib_dir_name(d), calib_src_name(k),
					report_ns(a, sizeof(a), (double)t->offset_ns, true),
					report_ns(b, sizeof(b), (double)t->spread_ns, false));
				any = true;
			}
		if (!any)
			fprintf(f, " no stamp line");
	}
}

/* One rate's headline in index.md: the error and its bound, what the
 * emulator achieved beside its model, BUY and SELL, whether it kept up. */
static void report_headline_md(FILE *f, const struct report *r,
			       const struct report_rate *rt)
{
	struct report_figures g;
	char a[32], b[32], c[32], name[256], why[600];

	report_figures(rt, &g);
	report_switch_name(r, name, sizeof(name));
	fprintf(f, "- **%s messages/s**: ", rt->label);
	if (rt->pair.have && g.err[E_SWITCH].n) {
		const char *uncal = report_uncalibrated(rt);

		fprintf(f, "measurement error (tapless − truth) p50 **%s**%s, p1 %s, p99 %s",
			report_ns(a, sizeof(a), (double)g.q_err[E_SWITCH].p50, true),
			uncal ? "" : " after calibration",
			report_ns(b, sizeof(b), (double)g.q_err[E_SWITCH].p1, true),
			report_ns(c, sizeof(c), (double)g.q_err[E_SWITCH].p99, true));
		if (uncal)
			fprintf(f, " (%s)", uncal);
		if (g.bound[E_SWITCH].n)
			fprintf(f, "; error bound ±%s (p50) holds **%.1f %%** of %llu "
				"switch samples, %.1f %% of %llu hop samples",
				report_ns(a, sizeof(a), (double)g.bound[E_SWITCH].p50, false),
				100 * g.coverage[E_SWITCH], rt->pair.e[E_SWITCH].bounded,
				isnan(g.coverage[E_HOP]) ? 0 : 100 * g.coverage[E_HOP],
				rt->pair.e[E_HOP].bounded);
		else
			fprintf(f, "; no error bound (no sync journals)");
	} else if (rt->truth.have) {
		fprintf(f, "no per-sample error (%s)", rt->pair.why);
	} else {
		fprintf(f, "no truth (%s)", rt->truth.why);
	}
	fprintf(f, ".  \n  Switch: %s", name);
	if (rt->truth.have)
		fprintf(f, "; achieved residence p50 %s, p99 %s",
			report_ns(a, sizeof(a), (double)g.q_res.p50, false),
			report_ns(b, sizeof(b), (double)g.q_res.p99, false));
	if (g.s[S_SWITCH].n)
		fprintf(f, "; measured (topology method) p50 %s, p99 %s",
			report_ns(a, sizeof(a), (double)g.q[S_SWITCH].p50, false),
			report_ns(b, sizeof(b), (double)g.q[S_SWITCH].p99, false));
	report_calib_md(f, r, rt);
	fprintf(f, ".  \n  BUY p50 %s, SELL p50 %s",
		g.s[S_BUY].n ? report_ns(a, sizeof(a), (double)g.q[S_BUY].p50, false) : "-",
		g.s[S_SELL].n ? report_ns(b, sizeof(b), (double)g.q[S_SELL].p50, false) : "-");
	if (report_capped(r, rt, why, sizeof(why)))
		fprintf(f, ". **Capped**: %s", why);
	else if (rt->have_run && !isnan(rt->run[RUN_SW_RATE]))
		fprintf(f, "; the venue sent %.1fk messages/s", rt->run[RUN_SW_RATE] / 1e3);
	fprintf(f, ".\n");
}

int report_write_index(const struct report *r, const char *outdir,
		       char err[REPORT_ERRBUF])
{
	char path[PATH_MAX + 32], rin[PATH_MAX], rout[PATH_MAX], up[PATH_MAX + 8];
	const char *in;
	int rc = 0;
	FILE *f = report_create(outdir, "index.md", path, sizeof(path), err, &rc);

	if (!f)
		return rc;
	/* Links to the inputs: relative when the report sits in the run
	 * directory (the default), so the pair can be moved together. */
	in = r->dir;
	if (realpath(r->dir, rin) && realpath(outdir, rout)) {
		char *slash = strrchr(rout, '/');

		if (slash && slash != rout) {
			*slash = 0;
			in = !strcmp(rout, rin) ? ".." : rin;
		} else {
			in = rin;
		}
	}
	snprintf(up, sizeof(up), "%s", in);

	fprintf(f, "# tapless report: %s\n\n", report_conf_or(r, "id"));
	fprintf(f, "## Headline\n\n");
	if (report_any_truth(r))
		fprintf(f, "The switch here is an emulator: what tapless measured is set "
			"beside the emulator's own stamps of the same frames (the truth). "
			"The first figure is tapless's measurement error; the switch's "
			"latency is the emulator's, not the switch it is modelled on.\n\n");
	for (size_t i = 0; i < r->nrates; i++)
		report_headline_md(f, r, &r->rate[i]);
	if (report_conf(r, "switch_poll_why"))
		fprintf(f, "\nThe emulator: %s.\n", report_conf(r, "switch_poll_why"));
	fprintf(f, "\n## What ran\n\nFrom `%s/lab.conf`:\n\n", up);
	fprintf(f, "| key | value |\n|-----|-------|\n");
	for (size_t k = 0; report_conf_keys[k]; k++)
		fprintf(f, "| %s | %s |\n", report_conf_keys[k],
			report_conf_or(r, report_conf_keys[k]));
	for (size_t k = 0; k < r->nkv; k++) {
		bool known = false;

		for (size_t j = 0; report_conf_keys[j]; j++)
			known |= !strcmp(report_conf_keys[j], r->kv[k].key);
		if (!known)
			fprintf(f, "| %s | %s |\n", r->kv[k].key, r->kv[k].val);
	}
	fprintf(f, "\nPer rate: ");
	for (size_t i = 0; i < r->nrates; i++)
		fprintf(f, "%s%s: [samples](%s/rate-%ld/samples.txt), "
			"[correlate.json](%s/rate-%ld/correlate.json)",
			i ? "; " : "", r->rate[i].label, up, r->rate[i].rate, up,
			r->rate[i].rate);
	if (r->follow.present)
		fprintf(f, ".\n\nFollowed live: [follow.jsonl](%s/follow.jsonl), the stream of "
			"`tapless correlate --follow` over the runs through the switch "
			"(%llu lines: %llu of tick to trade and hops drawn in follow-time, "
			"%llu others, %llu not understood)", up, r->follow.lines,
			r->follow.used, r->follow.other, r->follow.bad);
	fprintf(f, ".\n\n## Tables\n\n(also as [text](tables.txt))\n\n");
	report_tables(r, f, true);
	if (report_any_truth(r))
		fprintf(f, "## How the error is measured\n\n"
			"Each switch sample of `tapless correlate` (one market data "
			"message: the venue's TX stamp of the frame carrying its first "
			"byte to the algo's RX stamp of it, minus the cables) is set "
			"beside the truth of that very frame. The sample carries the "
			"venue's TX stamp; the venue's capture holds the frame with that "
			"stamp, so its flow, TCP sequence number and payload length; the "
			"emulator's captures hold the same frame, found by those, with its "
			"ingress and egress stamps (`epb_packetid` ties the two). Error = "
			"sample − (egress − ingress), after the hosts' stamp calibrations "
			"moved the stamps to the wire where there are some. The sample's "
			"error bound is clock + holdover + stamp + resolution (Table 5); "
			"*inside* means "
			"|error| ≤ bound. A hop sample's truth is the residence plus the "
			"cables of the topology, so its error is the switch sample's. "
			"Samples whose frame is not found, or found twice (a TCP "
			"retransmission), are counted and left out.\n\n");
	fprintf(f, "\n## Plots\n\nEach is drawn by its script in plots/: edit it and "
		"rerun with `cd %s && gnuplot plots/NAME.gp`.\n\n", outdir);
	for (size_t i = 0; i < P_COUNT; i++) {
		const char *n = report_plot_names[i], *why;

		fprintf(f, "### %s\n\n", n);
		if (!report_plot_wanted(r, i, &why))
			fprintf(f, "Not drawn: %s.\n\n", why);
		else if (!r->plot[i].done)
			fprintf(f, "Not drawn (plots were not asked for); script: "
				"[plots/%s.gp](plots/%s.gp).\n\n", n, n);
		else if (!r->plot[i].ok)
			fprintf(f, "Not drawn: %s. Script: [plots/%s.gp](plots/%s.gp).\n\n",
				r->plot[i].msg ? r->plot[i].msg : "gnuplot failed", n, n);
		else {
			char cap[2048];

			fprintf(f, "![%s](plots/%s.png)\n\n%s\n\n[SVG](plots/%s.svg), "
				"[script](plots/%s.gp)\n\n", n, n,
				report_plot_caption(r, i, cap, sizeof(cap)), n, n);
		}
	}
	if (r->nnotes) {
		fprintf(f, "## Notes\n\n");
		for (size_t i = 0; i < r->nnotes; i++)
			fprintf(f, "- %s%s\n", r->note[i].warning ? "warning: " : "",
				r->note[i].text);
		fprintf(f, "\n");
	}
	fprintf(f, "## Files\n\n- [report.json](report.json): every figure\n"
		"- [tables.txt](tables.txt), [tables.md](tables.md)\n"
		"- data/: what the plots read (hist-, cdf-, pct-, time-SERIES-RATE.dat, "
		"cdf-error-RATE.dat, rates.dat, ptp-HOST-CLOCK.dat, follow-N.dat "
		"and follow-flags.dat from the live stream)\n");
	return report_close(f, path, err);
}
