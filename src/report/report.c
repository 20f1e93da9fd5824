/* report.c — see report.h.
 *
 * The lifecycle: report_load() runs the readers (report_load.c) and
 * report_destroy(). Writing: the tables (one grid rendered as text or
 * Markdown), the data files, the plot scripts, index.md and the printer
 * calls behind report.json and the headline.
 */
#include "report/report.h"
#include "report/report_private.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/gnuplot.h"
#include "base/hist.h"
#include "ptp/journal.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"

static const char *const report_series_key[S_COUNT] = {
	"buy", "sell", "switch", "hop", "hop_baseline",
};

static const char *const report_plot_names[P_COUNT] = {
	"latency-rate", "histograms", "cdf", "latency-time", "ptp-offset",
	"switch-truth",
};

/* lab.conf keys the report knows, in the order index.md lists them. */
static const char *const report_conf_keys[] = {
	"id", "date", "rates", "duration", "stamps", "switch", "switch_mode",
	"switch_latency_ns", "switch_jitter_ns", "switch_speed", "md_source",
	"hosts", NULL,
};

void report_notef(struct report *r, bool warning, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->note = xrealloc(r->note, (r->nnotes + 1) * sizeof(*r->note));
	r->note[r->nnotes].text = xstrdup(buf);
	r->note[r->nnotes++].warning = warning;
}

int report_fail(char *err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, REPORT_ERRBUF, fmt, ap);
	va_end(ap);
	return rc;
}

const char *report_conf(const struct report *r, const char *key)
{
	for (size_t i = 0; i < r->nkv; i++)
		if (!strcmp(r->kv[i].key, key))
			return r->kv[i].val;
	return NULL;
}

static int report_rate_cmp(const void *a, const void *b)
{
	const struct report_rate *x = a, *y = b;

	return (x->rate < y->rate) - (x->rate > y->rate);
}

/* ---- load ---- */

int report_load(struct report **out, const char *dir, char err[REPORT_ERRBUF])
{
	struct report *r;
	struct stat st;
	char path[PATH_MAX + 32];
	int rc;

	*out = NULL;
	if (stat(dir, &st))
		return report_fail(err, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return report_fail(err, -ENOTDIR, "%s: not a directory", dir);
	r = xcalloc(1, sizeof(*r));
	r->dir = xstrdup(dir);
	r->rate = xcalloc(REPORT_MAX_RATES, sizeof(*r->rate));
	r->mode = -1;
	snprintf(r->venue, sizeof(r->venue), "venue");
	snprintf(r->algo, sizeof(r->algo), "algo");
	snprintf(path, sizeof(path), "%s/lab.conf", dir);
	rc = report_conf_load(r, path, err);
	if (rc) {
		report_destroy(r);
		return rc;
	}
	qsort(r->rate, r->nrates, sizeof(*r->rate), report_rate_cmp);
	if (!report_conf(r, "hosts"))
		report_notef(r, false, "lab.conf names no hosts: taken as "
			     "venue,algo (the names in the samples files)");
	for (size_t i = 0; i < r->nrates; i++) {
		struct report_rate *rt = &r->rate[i];

		snprintf(rt->path, sizeof(rt->path), "%s/rate-%ld/samples.txt",
			 dir, rt->rate);
		report_samples_load(r, rt);
		report_truth_load(r, rt);
		if (!rt->truth.have)
			report_notef(r, false, "rate %s: no truth: %s", rt->label,
				     rt->truth.why);
	}
	report_journals_load(r);
	*out = r;
	return 0;
}

void report_destroy(struct report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nkv; i++) {
		free(r->kv[i].key);
		free(r->kv[i].val);
	}
	for (size_t i = 0; i < REPORT_MAX_RATES && r->rate; i++) {
		for (int k = 0; k < S_COUNT; k++)
			if (r->rate[i].s[k].h)
				hist_destroy(r->rate[i].s[k].h);
		if (r->rate[i].truth.res)
			hist_destroy(r->rate[i].truth.res);
		if (r->rate[i].truth.topo)
			hist_destroy(r->rate[i].truth.topo);
	}
	for (size_t i = 0; i < r->nclk; i++) {
		free(r->clk[i].ts);
		free(r->clk[i].off);
		free(r->clk[i].bnd);
		free(r->clk[i].sync);
	}
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->note[i].text);
	for (size_t i = 0; i < P_COUNT; i++)
		free(r->plot[i].msg);
	free(r->note);
	free(r->rate);
	free(r->dir);
	free(r);
}

size_t report_rate_count(const struct report *r)
{
	return r->nrates;
}

size_t report_rates_missing(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nrates; i++)
		n += !r->rate[i].have_samples;
	return n;
}

unsigned long long report_sample_count(const struct report *r)
{
	unsigned long long n = 0;

	for (size_t i = 0; i < r->nrates; i++)
		for (int k = 0; k < S_COUNT; k++)
			n += hist_count(r->rate[i].s[k].h) + r->rate[i].s[k].out;
	return n;
}

const char *report_note(const struct report *r, size_t i, bool *warning)
{
	if (i >= r->nnotes)
		return NULL;
	if (warning)
		*warning = r->note[i].warning;
	return r->note[i].text;
}

/* ---- the figures ---- */

struct report_figures {
	struct summary s[S_COUNT];
	struct summary truth_res, truth_topo;
	bool have_base;			/* baseline method computable */
	double base_mean, base_sd;
	bool have_diff_topo, have_diff_base;
	double diff_topo, diff_base;
};

static void report_figures(const struct report_rate *rt, struct report_figures *f)
{
	memset(f, 0, sizeof(*f));
	for (int k = 0; k < S_COUNT; k++)
		hist_summary(rt->s[k].h, &f->s[k]);
	/* The FTTC way: through the switch minus back to back; the
	 * variances subtract too, as tapless correlate --baseline does. */
	if (f->s[S_HOP].n && f->s[S_HOP_BASE].n) {
		f->have_base = true;
		f->base_mean = f->s[S_HOP].mean - f->s[S_HOP_BASE].mean;
		f->base_sd = sqrt(fmax(0, f->s[S_HOP].sd * f->s[S_HOP].sd -
				      f->s[S_HOP_BASE].sd * f->s[S_HOP_BASE].sd));
	}
	if (rt->truth.have)
		hist_summary(rt->truth.res, &f->truth_res);
	if (rt->truth.have_topo)
		hist_summary(rt->truth.topo, &f->truth_topo);
	if (rt->truth.have_topo && f->s[S_SWITCH].n) {
		f->have_diff_topo = true;
		f->diff_topo = f->s[S_SWITCH].mean - f->truth_topo.mean;
	}
	if (rt->truth.have && f->have_base) {
		f->have_diff_base = true;
		f->diff_base = f->base_mean - f->truth_res.mean;
	}
}

/* ---- tables ---- */

#define TAB_ROWS 24
#define TAB_COLS (3 + REPORT_MAX_RATES)

struct report_table {
	const char *title, *key;
	char *cell[TAB_ROWS][TAB_COLS];
	int rows, cols;
};

static void tab_set(struct report_table *t, int row, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void tab_set(struct report_table *t, int row, int col, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(t->cell[row][col]);
	t->cell[row][col] = xstrdup(buf);
	if (row >= t->rows)
		t->rows = row + 1;
	if (col >= t->cols)
		t->cols = col + 1;
}

static void tab_free(struct report_table *t)
{
	for (int i = 0; i < TAB_ROWS; i++)
		for (int j = 0; j < TAB_COLS; j++)
			free(t->cell[i][j]);
}

static void tab_drop_row(struct report_table *t, int row)
{
	for (int j = 0; j < TAB_COLS; j++)
		free(t->cell[row][j]);
	memmove(&t->cell[row], &t->cell[row + 1],
		(size_t)(TAB_ROWS - row - 1) * sizeof(t->cell[0]));
	memset(&t->cell[TAB_ROWS - 1], 0, sizeof(t->cell[0]));
	t->rows--;
}

/* 23091578 → "23,091,578", as the FTTC tables count packets. */
static void report_count(char *buf, size_t len, unsigned long long v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

static const char *report_conf_or(const struct report *r, const char *key)
{
	const char *v = report_conf(r, key);

	return v ? v : "unknown";
}

static void report_table1(const struct report *r, struct report_table *t)
{
	static const char *const rows[] = {
		"BUY", "SELL", "SD B", "SD S", "Samples B", "Samples S",
		"Out of sync B/S",
	};

	memset(t, 0, sizeof(*t));
	t->title = "Table 1. BUY and SELL latency (microseconds) by market data rate (messages/s)";
	t->key = "BUY: market data received -> BUY order sent (tick_to_trade), at the algo host. "
		 "SELL: BUY fill received -> SELL order sent (fill_to_sell). SD: standard deviation. "
		 "Samples out of sync are counted, not averaged in.";
	tab_set(t, 0, 0, " ");
	tab_set(t, 0, 1, "Hosts");
	tab_set(t, 0, 2, "Stamps");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		tab_set(t, (int)i + 1, 0, "%s", rows[i]);
		tab_set(t, (int)i + 1, 1, "%s", i ? "" : report_conf_or(r, "hosts"));
		tab_set(t, (int)i + 1, 2, "%s", i ? "" : report_conf_or(r, "stamps"));
	}
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures f;
		int c = 3 + (int)i;
		char n1[32], n2[32];

		report_figures(rt, &f);
		tab_set(t, 0, c, "%s", rt->label);
		if (!rt->have_samples) {
			for (int k = 1; k <= 7; k++)
				tab_set(t, k, c, "-");
			continue;
		}
		if (f.s[S_BUY].n)
			tab_set(t, 1, c, "%.3f", f.s[S_BUY].mean / 1e3);
		else
			tab_set(t, 1, c, "-");
		if (f.s[S_SELL].n)
			tab_set(t, 2, c, "%.3f", f.s[S_SELL].mean / 1e3);
		else
			tab_set(t, 2, c, "-");
		if (f.s[S_BUY].n > 1)
			tab_set(t, 3, c, "%.3f", f.s[S_BUY].sd / 1e3);
		else
			tab_set(t, 3, c, "-");
		if (f.s[S_SELL].n > 1)
			tab_set(t, 4, c, "%.3f", f.s[S_SELL].sd / 1e3);
		else
			tab_set(t, 4, c, "-");
		report_count(n1, sizeof(n1), f.s[S_BUY].n);
		report_count(n2, sizeof(n2), f.s[S_SELL].n);
		tab_set(t, 5, c, "%s", n1);
		tab_set(t, 6, c, "%s", n2);
		tab_set(t, 7, c, "%llu/%llu", rt->s[S_BUY].out, rt->s[S_SELL].out);
	}
}

static bool report_any_truth(const struct report *r)
{
	for (size_t i = 0; i < r->nrates; i++)
		if (r->rate[i].truth.have)
			return true;
	return false;
}

static void report_table2(const struct report *r, struct report_table *t)
{
	enum {
		R_HEAD, R_MEAN_T, R_SD_T, R_N_T, R_MEAN_B, R_SD_B, R_N_B, R_OUT,
		R_TRUTH_M, R_TRUTH_SD, R_TRUTH_N, R_TRUTH_TOPO, R_DIFF_T, R_DIFF_B,
	};
	static const char *const rows[] = {
		[R_MEAN_T] = "Mean (topology)", [R_SD_T] = "SD (topology)",
		[R_N_T] = "Packets (topology)", [R_MEAN_B] = "Mean (baseline)",
		[R_SD_B] = "SD (baseline)",
		[R_N_B] = "Packets (switch/b2b)", [R_OUT] = "Out of sync",
		[R_TRUTH_M] = "Truth mean", [R_TRUTH_SD] = "Truth SD",
		[R_TRUTH_N] = "Truth packets",
		[R_TRUTH_TOPO] = "Truth mean - serialisation",
		[R_DIFF_T] = "Topology - truth", [R_DIFF_B] = "Baseline - truth",
	};
	bool truth = report_any_truth(r);
	int last = truth ? R_DIFF_B : R_OUT;
	const char *sw = report_conf_or(r, "switch");
	const char *mode = report_conf(r, "switch_mode");

	memset(t, 0, sizeof(*t));
	t->title = "Table 2. Switch latency (nanoseconds) by market data rate (messages/s)";
	t->key = truth ?
		"FIX messages venue -> algo. Topology: per packet, one-way minus cables "
		"(and serialisation for store-and-forward). Baseline: mean through the "
		"switch minus mean back to back, SD = sqrt(SD_t^2 - SD_b^2). Truth: the "
		"switch emulator's own egress - ingress stamps of the same frames "
		"(minus serialisation for the topology method of a store-and-forward switch)." :
		"FIX messages venue -> algo. Topology: per packet, one-way minus cables "
		"(and serialisation for store-and-forward). Baseline: mean through the "
		"switch minus mean back to back, SD = sqrt(SD_t^2 - SD_b^2). "
		"No emulator truth in this run.";
	tab_set(t, 0, 0, " ");
	tab_set(t, 0, 1, "Switch");
	for (int k = 1; k <= last; k++) {
		tab_set(t, k, 0, "%s", rows[k]);
		tab_set(t, k, 1, "%s", "");
	}

	if (mode)
		tab_set(t, 1, 1, "%s (%s)", sw, mode);
	else
		tab_set(t, 1, 1, "%s", sw);
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures f;
		int c = 2 + (int)i;
		char a[32], b[32];

		report_figures(rt, &f);
		tab_set(t, 0, c, "%s", rt->label);
		for (int k = 1; k <= last; k++)
			tab_set(t, k, c, "-");
		if (f.s[S_SWITCH].n) {
			tab_set(t, R_MEAN_T, c, "%.3f", f.s[S_SWITCH].mean);
			if (f.s[S_SWITCH].n > 1)
				tab_set(t, R_SD_T, c, "%.3f", f.s[S_SWITCH].sd);
		}
		report_count(a, sizeof(a), f.s[S_SWITCH].n);
		tab_set(t, R_N_T, c, "%s", a);
		if (f.have_base) {
			tab_set(t, R_MEAN_B, c, "%.3f", f.base_mean);
			tab_set(t, R_SD_B, c, "%.3f", f.base_sd);
		}
		report_count(a, sizeof(a), f.s[S_HOP].n);
		report_count(b, sizeof(b), f.s[S_HOP_BASE].n);
		tab_set(t, R_N_B, c, "%s/%s", a, b);
		tab_set(t, R_OUT, c, "%llu", rt->s[S_SWITCH].out);
		if (!truth || !rt->truth.have)
			continue;
		tab_set(t, R_TRUTH_M, c, "%.3f", f.truth_res.mean);
		tab_set(t, R_TRUTH_SD, c, "%.3f", f.truth_res.sd);
		report_count(a, sizeof(a), f.truth_res.n);
		tab_set(t, R_TRUTH_N, c, "%s", a);
		if (rt->truth.have_topo && r->mode == 1)
			tab_set(t, R_TRUTH_TOPO, c, "%.3f", f.truth_topo.mean);
		if (f.have_diff_topo)
			tab_set(t, R_DIFF_T, c, "%+.3f", f.diff_topo);
		if (f.have_diff_base)
			tab_set(t, R_DIFF_B, c, "%+.3f", f.diff_base);
	}
	/* Only a store-and-forward switch has two truths. */
	if (truth && r->mode != 1)
		tab_drop_row(t, R_TRUTH_TOPO);
}

static void tab_write_text(FILE *f, const struct report_table *t)
{
	int w[TAB_COLS] = { 0 };

	for (int i = 0; i < t->rows; i++)
		for (int j = 0; j < t->cols; j++)
			if (t->cell[i][j] && (int)strlen(t->cell[i][j]) > w[j])
				w[j] = (int)strlen(t->cell[i][j]);
	fprintf(f, "%s\n\n", t->title);
	for (int i = 0; i < t->rows; i++) {
		for (int j = 0; j < t->cols; j++) {
			const char *c = t->cell[i][j] ? t->cell[i][j] : "";

			/* Labels to the left, figures to the right. */
			if (j < 2 || (j == 2 && t->cell[0][2] && !strcmp(t->cell[0][2], "Stamps")))
				fprintf(f, "%s%-*s", j ? "  " : "", w[j], c);
			else
				fprintf(f, "  %*s", w[j], c);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n%s\n\n", t->key);
}

static void tab_write_md(FILE *f, const struct report_table *t)
{
	fprintf(f, "**%s**\n\n", t->title);
	for (int i = 0; i < t->rows; i++) {
		for (int j = 0; j < t->cols; j++)
			fprintf(f, "| %s ", t->cell[i][j] && strcmp(t->cell[i][j], " ") ?
				t->cell[i][j] : "");
		fprintf(f, "|\n");
		if (!i) {
			for (int j = 0; j < t->cols; j++)
				fprintf(f, "|%s", j < 2 ? "------" : "-----:");
			fprintf(f, "|\n");
		}
	}
	fprintf(f, "\n%s\n\n", t->key);
}

static void report_tables(const struct report *r, FILE *f, bool md)
{
	struct report_table t;

	report_table1(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
	report_table2(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
}

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

struct report_quantum {
	int64_t min;
	uint64_t q;
};

static uint64_t report_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int report_quantum_add(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct report_quantum *q = arg;

	(void)count;
	/* Unsigned: the distance may not fit an int64_t. */
	q->q = lo != hi ? 1 : report_gcd(q->q, (uint64_t)lo - (uint64_t)q->min);
	return q->q == 1;	/* nothing coarser to find */
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
		/* Stamps come in ticks (8 ns for some NICs, 1 µs for old
		 * pcap): bins narrower than a tick, or not a whole number of
		 * them, make a comb. */
		qt.min = s.min;
		qt.q = 0;
		hist_foreach(h, report_quantum_add, &qt);
		if (qt.q < 1)
			qt.q = 1;
		/* Enough bins to show a shape, not so many that a few
		 * samples scatter into single-sample spikes. */
		double nb = fmin(100, fmax(10, 2 * sqrt((double)s.n)));

		b.width = report_nice(fmax(1, ((double)s.max - (double)s.min + 1) / nb));
		b.width = ceil(b.width / (double)qt.q) * (double)qt.q;
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
		struct report_sample s;
		int k;

		if (report_sample_parse(line, &s) || !rt->have_t0)
			continue;
		k = report_series_of(r, &s);
		if (report_sample_dropped(k, &s))
			continue;
		for (int i = 0; i < 3; i++)
			if (k == series[i])
				fprintf(out[i], "%.9f %lld %d\n",
					((double)s.time - (double)rt->t0) / 1e9, s.lat,
					strcmp(s.sync, "out") != 0);
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
	if (mkdir(path, 0755) && errno != EEXIST)
		return report_fail(err, -errno, "%s: %s", path, strerror(errno));
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

/* ---- report.json and the headline ---- */

static void report_print_summary(struct printer *p, const char *key,
				 const struct summary *s)
{
	print_object_begin(p, key);
	print_uint(p, "count", NULL, s->n);
	if (s->n) {
		print_int(p, "min", NULL, s->min);
		print_double(p, "mean", NULL, s->mean);
		print_int(p, "p50", NULL, s->p50);
		print_int(p, "p90", NULL, s->p90);
		print_int(p, "p99", NULL, s->p99);
		print_int(p, "p999", NULL, s->p999);
		print_int(p, "max", NULL, s->max);
		print_double(p, "sd", NULL, s->sd);
	} else {
		static const char *const keys[] = {
			"min", "mean", "p50", "p90", "p99", "p999", "max", "sd",
		};

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			print_null(p, keys[i], NULL);
	}
	print_object_end(p);
}

static void report_print_opt(struct printer *p, const char *key, const char *fmt,
			     bool have, double v)
{
	if (have)
		print_double(p, key, fmt, v);
	else
		print_null(p, key, fmt ? "%s" : NULL);
}

static void report_print_rate(struct printer *p, const struct report_rate *rt)
{
	struct report_figures g;

	report_figures(rt, &g);
	print_object_begin(p, NULL);
	print_int(p, "rate", NULL, rt->rate);
	print_str(p, "label", "rate %6s/s:", rt->label);
	print_str(p, "samples_file", NULL, rt->path);
	print_bool(p, "have_samples", NULL, rt->have_samples);
	print_uint(p, "samples", NULL, rt->lines);
	print_uint(p, "bad_lines", NULL, rt->bad);
	print_uint(p, "negative_dropped", NULL, rt->negative);
	print_uint(p, "beyond_bound", NULL, rt->beyond_bound);
	print_uint(p, "other_samples", NULL, rt->ignored);
	for (int k = 0; k < S_COUNT; k++) {
		print_object_begin(p, report_series_key[k]);
		report_print_summary(p, "latency_ns", &g.s[k]);
		print_uint(p, "out_of_sync", NULL, rt->s[k].out);
		print_object_end(p);
	}
	print_text(p, " BUY ");
	report_print_opt(p, "buy_mean_us", "%.3f us", g.s[S_BUY].n, g.s[S_BUY].mean / 1e3);
	print_text(p, "  SELL ");
	report_print_opt(p, "sell_mean_us", "%.3f us", g.s[S_SELL].n, g.s[S_SELL].mean / 1e3);

	print_object_begin(p, "switch_latency");
	print_text(p, "  switch ");
	report_print_opt(p, "topology_mean_ns", "%.1f ns (topology)", g.s[S_SWITCH].n,
			 g.s[S_SWITCH].mean);
	report_print_opt(p, "topology_sd_ns", NULL, g.s[S_SWITCH].n > 1, g.s[S_SWITCH].sd);
	print_uint(p, "topology_count", NULL, g.s[S_SWITCH].n);
	print_text(p, ", ");
	report_print_opt(p, "baseline_mean_ns", "%.1f ns (baseline)", g.have_base,
			 g.base_mean);
	report_print_opt(p, "baseline_sd_ns", NULL, g.have_base, g.base_sd);
	print_uint(p, "baseline_count_switch", NULL, g.s[S_HOP].n);
	print_uint(p, "baseline_count_b2b", NULL, g.s[S_HOP_BASE].n);
	print_object_begin(p, "truth");
	print_bool(p, "available", NULL, rt->truth.have);
	print_str(p, "why_not", NULL, rt->truth.have && rt->truth.have_topo ?
		  NULL : rt->truth.why);
	print_uint(p, "port_files", NULL, rt->truth.files);
	print_uint(p, "frames", NULL, rt->truth.md_frames);
	print_uint(p, "unpaired", NULL, rt->truth.unpaired);
	print_uint(p, "without_packet_id", NULL, rt->truth.no_id);
	print_uint(p, "implausible", NULL, rt->truth.implausible);
	report_print_summary(p, "residence_ns", &g.truth_res);
	report_print_summary(p, "topology_ns", &g.truth_topo);
	print_object_end(p);
	if (rt->truth.have) {
		print_text(p, "; truth ");
		report_print_opt(p, "truth_mean_ns", "%.1f ns", true, g.truth_res.mean);
		print_text(p, ", measured - truth ");
	} else {
		print_null(p, "truth_mean_ns", NULL);
	}
	report_print_opt(p, "difference_topology_ns", rt->truth.have ? "%+.1f" : NULL,
			 g.have_diff_topo, g.diff_topo);
	if (rt->truth.have)
		print_text(p, " / ");
	report_print_opt(p, "difference_baseline_ns", rt->truth.have ? "%+.1f ns" : NULL,
			 g.have_diff_base, g.diff_base);
	if (!rt->truth.have)
		print_text(p, "; no truth");
	print_object_end(p);
	print_text(p, "\n");
	print_object_end(p);
}

void report_print(struct printer *p, const struct report *r, const char *index_path)
{
	print_str(p, "index", "report: %s\n", index_path);
	print_str(p, "dir", NULL, r->dir);
	print_object_begin(p, "lab");
	for (size_t k = 0; report_conf_keys[k]; k++)
		print_str(p, report_conf_keys[k], NULL, report_conf(r, report_conf_keys[k]));
	print_object_begin(p, "other");
	for (size_t k = 0; k < r->nkv; k++) {
		bool known = false;

		for (size_t j = 0; report_conf_keys[j]; j++)
			known |= !strcmp(report_conf_keys[j], r->kv[k].key);
		if (!known)
			print_str(p, r->kv[k].key, NULL, r->kv[k].val);
	}
	print_object_end(p);
	print_object_end(p);
	print_array_begin(p, "rates");
	for (size_t i = 0; i < r->nrates; i++)
		report_print_rate(p, &r->rate[i]);
	print_array_end(p);
	print_array_begin(p, "clocks");
	for (size_t i = 0; i < r->nclk; i++) {
		const struct report_clock *c = &r->clk[i];
		int64_t *off = xcalloc(c->n + 1, sizeof(*off));
		int64_t *bnd = xcalloc(c->n + 1, sizeof(*bnd));
		size_t no = 0, nb = 0, sync = 0;
		struct summary s;

		for (size_t j = 0; j < c->n; j++) {
			if (c->off[j] != JOURNAL_NONE)
				off[no++] = c->off[j];
			if (c->bnd[j] != JOURNAL_NONE)
				bnd[nb++] = c->bnd[j];
			sync += c->sync[j];
		}
		print_object_begin(p, NULL);
		print_str(p, "host", NULL, c->host);
		print_str(p, "clock", NULL, c->clock);
		print_uint(p, "samples", NULL, c->n);
		print_uint(p, "in_sync", NULL, sync);
		summary_of(off, no, &s);
		report_print_summary(p, "offset_ns", &s);
		summary_of(bnd, nb, &s);
		report_print_summary(p, "bound_ns", &s);
		print_object_end(p);
		free(off);
		free(bnd);
	}
	print_array_end(p);
	print_array_begin(p, "plots");
	for (size_t i = 0; i < P_COUNT; i++) {
		const char *why;
		bool want = report_plot_wanted(r, i, &why);

		print_object_begin(p, NULL);
		print_str(p, "name", NULL, report_plot_names[i]);
		print_bool(p, "drawn", NULL, r->plot[i].ok);
		print_str(p, "why_not", NULL, !want ? why : r->plot[i].ok ? NULL :
			  r->plot[i].done ? (r->plot[i].msg ? r->plot[i].msg :
					     "gnuplot failed") : "not asked for");
		print_object_end(p);
	}
	print_array_end(p);
	print_array_begin(p, "notes");
	for (size_t i = 0; i < r->nnotes; i++) {
		print_object_begin(p, NULL);
		print_bool(p, "warning", NULL, r->note[i].warning);
		print_str(p, "text", NULL, r->note[i].text);
		print_object_end(p);
	}
	print_array_end(p);
}
