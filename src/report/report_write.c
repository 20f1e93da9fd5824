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
	"latency-rate", "histograms", "cdf", "latency-time", "ptp-offset",
	"switch-truth",
};

/* ---- data files ---- */

static FILE *report_create(const char *outdir, const char *name, char *path,
			   size_t len, char *err, int *rc)
{
	FILE *f;

	snprintf(path, len, "%s/%s", outdir, name);
	f = fopen(path, "w");
	if (!f)
		*rc = report_fail(err, -errno, "%s: %s", path, strerror(errno));
	return f;
}

static int report_close(FILE *f, const char *path, char *err)
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
	fprintf(f, "# bin_centre_ns count fraction density_per_ns (%s bins)\n",
		b.log ? "40 per decade" : "linear");
	for (size_t i = 0; i < b.n; i++) {
		double c = b.log ? b.lo * pow(10, ((double)i + 0.5) / 40) :
				   b.lo + ((double)i + 0.5) * b.width;
		/* Density, so that histograms binned differently (another
		 * rate, the truth) can share an axis. */
		double w = b.log ? b.lo * (pow(10, (double)(i + 1) / 40) -
					   pow(10, (double)i / 40)) : b.width;

		fprintf(f, "%.3f %llu %.6g %.6g\n", c, b.count[i],
			(double)b.count[i] / total, (double)b.count[i] / total / w);
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
			     const char *outdir, char *err)
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
				"(1: in sync or no sync state, 0: out of sync)\n");
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
					(long long)s.latency_ns, s.sync != SAMPLES_SYNC_OUT);
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

static int report_mkdir(const char *path, char *err)
{
	int rc = mkpath_p(path, 0755);

	if (rc)
		return report_fail(err, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

/* One hist to one data file. */
static int report_write_one(const char *outdir, const char *what, const char *key,
			    long rate, const struct hist *h,
			    void (*fn)(FILE *, const struct hist *), char *err)
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

static int report_write_rates(const struct report *r, const char *outdir, char *err)
{
	char path[PATH_MAX + 64];
	int rc = 0;
	FILE *f = report_create(outdir, "data/rates.dat", path, sizeof(path), err, &rc);

	if (!f)
		return rc;
	fprintf(f, "# rate buy_mean_us buy_sd_us sell_mean_us sell_sd_us "
		"switch_topology_mean_ns switch_topology_sd_ns switch_baseline_mean_ns "
		"switch_baseline_sd_ns truth_topology_mean_ns truth_topology_sd_ns "
		"truth_residence_mean_ns truth_residence_sd_ns\n");
	/* Lowest rate first: the lines of the rate plot join in file order. */
	for (size_t i = r->nrates; i-- > 0;) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures fg;

		report_figures(rt, &fg);
		fprintf(f, "%ld", rt->rate);
		report_dat_val(f, fg.s[S_BUY].n, fg.s[S_BUY].mean / 1e3);
		report_dat_val(f, fg.s[S_BUY].n, fg.s[S_BUY].sd / 1e3);
		report_dat_val(f, fg.s[S_SELL].n, fg.s[S_SELL].mean / 1e3);
		report_dat_val(f, fg.s[S_SELL].n, fg.s[S_SELL].sd / 1e3);
		report_dat_val(f, fg.s[S_SWITCH].n, fg.s[S_SWITCH].mean);
		report_dat_val(f, fg.s[S_SWITCH].n, fg.s[S_SWITCH].sd);
		report_dat_val(f, fg.have_base, fg.base_mean);
		report_dat_val(f, fg.have_base, fg.base_sd);
		report_dat_val(f, rt->truth.have_topo, fg.truth_topo.mean);
		report_dat_val(f, rt->truth.have_topo, fg.truth_topo.sd);
		report_dat_val(f, rt->truth.have, fg.truth_res.mean);
		report_dat_val(f, rt->truth.have, fg.truth_res.sd);
		fprintf(f, "\n");
	}
	return report_close(f, path, err);
}

static int report_write_ptp(const struct report *r, const char *outdir, char *err)
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
			"offset_ns bound_ns in_sync\n", c->host, c->clock);
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

int report_write_data(struct report *r, const char *outdir, char err[REPORT_ERRBUF])
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
		if (rt->truth.have_topo &&
		    (rc = report_write_one(outdir, "hist", "truth", rt->rate,
					   rt->truth.topo, report_write_hist, err)))
			return rc;
		if ((rc = report_write_time(r, rt, outdir, err)))
			return rc;
	}
	if ((rc = report_write_rates(r, outdir, err)) ||
	    (rc = report_write_ptp(r, outdir, err)))
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

bool report_plot_wanted(const struct report *r, size_t i, const char **why)
{
	*why = NULL;
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
	return i < P_COUNT;
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
	struct { const char *key; struct report_buf val; } sub[24];
	struct gnuplot_sub gs[24];
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

		buf_addf(&title, "%s: switch %s, %s stamps", id ? id : r->dir,
			 report_conf_or(r, "switch"), report_conf_or(r, "stamps"));
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

static void report_accuracy(FILE *f, const struct report_rate *rt)
{
	struct report_figures g;

	report_figures(rt, &g);
	fprintf(f, "- %s messages/s: switch latency from host stamps − emulator truth: ",
		rt->label);
	if (!rt->truth.have) {
		fprintf(f, "not known (%s)\n", rt->truth.why);
		return;
	}
	if (g.have_diff_topo)
		fprintf(f, "%+.3f ns (topology method), ", g.diff_topo);
	else
		fprintf(f, "- (topology method: %s), ", !rt->truth.have_topo ?
			rt->truth.why : "no switch samples");
	if (g.have_diff_base)
		fprintf(f, "%+.3f ns (baseline method)", g.diff_base);
	else
		fprintf(f, "- (baseline method: no back-to-back run)");
	fprintf(f, "; truth mean %.3f ns over %llu frames\n", g.truth_res.mean,
		(unsigned long long)g.truth_res.n);
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
	fprintf(f, "## What ran\n\nFrom `%s/lab.conf`:\n\n", up);
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
	fprintf(f, ".\n\n## Tables\n\n(also as [text](tables.txt))\n\n");
	report_tables(r, f, true);
	fprintf(f, "## Accuracy\n\n");
	for (size_t i = 0; i < r->nrates; i++)
		report_accuracy(f, &r->rate[i]);
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
		else
			fprintf(f, "![%s](plots/%s.png)\n\n[SVG](plots/%s.svg), "
				"[script](plots/%s.gp)\n\n", n, n, n, n);
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
		"rates.dat, ptp-HOST-CLOCK.dat)\n");
	return report_close(f, path, err);
}
