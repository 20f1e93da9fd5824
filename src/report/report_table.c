/* report_table.c — the tables (report_private.h): one grid per table,
 * rendered as text or Markdown; and the printer calls behind report.json
 * and the headline.
 */
#include "report/report.h"
#include "report/report_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/calib.h"
#include "ptp/journal.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"

/* ---- tables ---- */

#define TAB_ROWS 24
#define TAB_COLS (3 + REPORT_MAX_RATES)

struct report_table {
	const char *title, *key;
	int labels;			/* columns of labels, left-aligned */
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

/* A table's frame: the corner, and the row labels rows[1..n-1] down the
 * first column (rows[0] is the head row's and is not shown). */
static void tab_row_labels(struct report_table *t, const char *const *rows, int n)
{
	tab_set(t, 0, 0, " ");
	for (int k = 1; k < n; k++)
		tab_set(t, k, 0, "%s", rows[k]);
}

/* A rate's column: its label on the head row and "-" in rows 1..n-1, each
 * left standing where the rate has no figure to put there. */
static void tab_rate_column(struct report_table *t, int c, const char *label, int n)
{
	tab_set(t, 0, c, "%s", label);
	for (int k = 1; k < n; k++)
		tab_set(t, k, c, "-");
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

static void report_table1(const struct report *r, struct report_table *t)
{
	static const char *const rows[] = {
		"BUY", "SELL", "SD B", "SD S", "p50 B", "p99 B", "p50 S",
		"p99 S", "Samples B", "Samples S", "Out of sync B/S",
		"App to wire p50", "App to wire p99", "Samples app",
	};
	const int nrows = (int)(sizeof(rows) / sizeof(rows[0]));

	memset(t, 0, sizeof(*t));
	t->labels = 3;
	t->title = "Table 1. BUY and SELL latency (microseconds) by market data rate (messages/s)";
	t->key = "BUY: market data received -> BUY order sent (tick_to_trade), at the algo host: "
		 "its RX stamp of the market data to its TX stamp of the order. SELL: BUY fill "
		 "received -> SELL order sent (fill_to_sell). BUY and SELL rows are means, as in "
		 "the FTTC tables; SD: standard deviation; p50, p99: percentiles. "
		 "Samples out of sync are counted, not averaged in. App to wire: "
		 "the algo's orders, its TX stamp less the SendingTime (52) or "
		 "TransactTime (60) it wrote (tapless-correlate(8)).";
	tab_set(t, 0, 0, " ");
	tab_set(t, 0, 1, "Hosts");
	tab_set(t, 0, 2, "Stamps");
	for (int i = 0; i < nrows; i++) {
		tab_set(t, i + 1, 0, "%s", rows[i]);
		tab_set(t, i + 1, 1, "%s", i ? "" : report_conf_or(r, "hosts"));
		tab_set(t, i + 1, 2, "%s", i ? "" : report_conf_or(r, "stamps"));
	}
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		const struct summary *b, *sl;
		const struct report_q *qb, *qs;
		struct report_figures f;
		int c = 3 + (int)i;
		char n1[32], n2[32];

		report_figures(rt, &f);
		b = &f.s[S_BUY];
		sl = &f.s[S_SELL];
		qb = &f.q[S_BUY];
		qs = &f.q[S_SELL];
		tab_rate_column(t, c, rt->label, nrows + 1);
		if (!rt->have_samples)
			continue;
		if (b->n) {
			tab_set(t, 1, c, "%.3f", b->mean / 1e3);
			tab_set(t, 5, c, "%.3f", (double)qb->p50 / 1e3);
			tab_set(t, 6, c, "%.3f", (double)qb->p99 / 1e3);
		}
		if (sl->n) {
			tab_set(t, 2, c, "%.3f", sl->mean / 1e3);
			tab_set(t, 7, c, "%.3f", (double)qs->p50 / 1e3);
			tab_set(t, 8, c, "%.3f", (double)qs->p99 / 1e3);
		}
		if (b->n > 1)
			tab_set(t, 3, c, "%.3f", b->sd / 1e3);
		if (sl->n > 1)
			tab_set(t, 4, c, "%.3f", sl->sd / 1e3);
		report_count(n1, sizeof(n1), b->n);
		report_count(n2, sizeof(n2), sl->n);
		tab_set(t, 9, c, "%s", n1);
		tab_set(t, 10, c, "%s", n2);
		tab_set(t, 11, c, "%llu/%llu", rt->s[S_BUY].out, rt->s[S_SELL].out);
		if (f.s[S_APP].n) {
			tab_set(t, 12, c, "%.3f", (double)f.q[S_APP].p50 / 1e3);
			tab_set(t, 13, c, "%.3f", (double)f.q[S_APP].p99 / 1e3);
		}
		report_count(n1, sizeof(n1), f.s[S_APP].n);
		tab_set(t, 14, c, "%s", n1);
	}
}

static void report_table2(const struct report *r, struct report_table *t)
{
	enum {
		R_HEAD, R_MODEL, R_ACH_50, R_ACH_99, R_TRUTH_M, R_TRUTH_SD,
		R_TRUTH_N, R_TRUTH_TOPO, R_MEAN_T, R_SD_T, R_P50_T, R_P99_T,
		R_N_T, R_MEAN_B, R_SD_B, R_N_B, R_OUT, R_HOLD, R_DIFF_T,
		R_DIFF_B,
		R_COUNT
	};
	static const char *const rows[R_COUNT] = {
		[R_MODEL] = "Model (mean, SD)",
		[R_ACH_50] = "Achieved residence p50",
		[R_ACH_99] = "Achieved residence p99",
		[R_TRUTH_M] = "Achieved residence mean",
		[R_TRUTH_SD] = "Achieved residence SD",
		[R_TRUTH_N] = "Truth packets",
		[R_TRUTH_TOPO] = "Truth mean - serialisation",
		[R_MEAN_T] = "Mean (topology)", [R_SD_T] = "SD (topology)",
		[R_P50_T] = "p50 (topology)", [R_P99_T] = "p99 (topology)",
		[R_N_T] = "Packets (topology)", [R_MEAN_B] = "Mean (baseline)",
		[R_SD_B] = "SD (baseline)",
		[R_N_B] = "Packets (switch/b2b)", [R_OUT] = "Out of sync",
		[R_HOLD] = "In holdover (kept)",
		[R_DIFF_T] = "Topology - truth (means)",
		[R_DIFF_B] = "Baseline - truth (means)",
	};
	bool truth = report_any_truth(r);
	const char *lat = report_conf(r, "switch_latency_ns");
	const char *jit = report_conf(r, "switch_jitter_ns");
	char name[256];

	memset(t, 0, sizeof(*t));
	t->labels = 2;
	t->title = "Table 2. Switch latency (nanoseconds) by market data rate (messages/s)";
	t->key = truth ?
		"FIX messages venue -> algo. Model: the latency the switch emulator was told to "
		"add. Achieved residence: what it did, its own egress - ingress stamps of the same "
		"frames (the truth). Topology: per packet, one-way (venue TX stamp -> algo RX "
		"stamp) minus cables (and serialisation for store-and-forward). Baseline: mean "
		"through the switch minus mean back to back, SD = sqrt(SD_t^2 - SD_b^2)." :
		"FIX messages venue -> algo. Topology: per packet, one-way (venue TX stamp -> "
		"algo RX stamp) minus cables (and serialisation for store-and-forward). Baseline: "
		"mean through the switch minus mean back to back, SD = sqrt(SD_t^2 - SD_b^2). "
		"No emulator truth in this run.";
	report_switch_name(r, name, sizeof(name));
	tab_row_labels(t, rows, R_COUNT);
	tab_set(t, 0, 1, "Switch");
	for (int k = 1; k < R_COUNT; k++)
		tab_set(t, k, 1, "%s", "");
	tab_set(t, 1, 1, "%s", name);
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		struct report_figures f;
		int c = 2 + (int)i;
		char a[32], b[32];

		report_figures(rt, &f);
		tab_rate_column(t, c, rt->label, R_COUNT);
		if (lat)
			tab_set(t, R_MODEL, c, "%s, %s", lat, jit ? jit : "-");
		if (f.s[S_SWITCH].n) {
			tab_set(t, R_MEAN_T, c, "%.3f", f.s[S_SWITCH].mean);
			if (f.s[S_SWITCH].n > 1)
				tab_set(t, R_SD_T, c, "%.3f", f.s[S_SWITCH].sd);
			tab_set(t, R_P50_T, c, "%lld", (long long)f.q[S_SWITCH].p50);
			tab_set(t, R_P99_T, c, "%lld", (long long)f.q[S_SWITCH].p99);
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
		tab_set(t, R_HOLD, c, "%llu", rt->s[S_SWITCH].holdover);
		if (!truth || !rt->truth.have)
			continue;
		tab_set(t, R_ACH_50, c, "%lld", (long long)f.q_res.p50);
		tab_set(t, R_ACH_99, c, "%lld", (long long)f.q_res.p99);
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
	/* Rows with nothing to say go, the last first. */
	if (!truth) {
		tab_drop_row(t, R_DIFF_B);
		tab_drop_row(t, R_DIFF_T);
	}
	/* Only a store-and-forward switch has two truths. */
	if (!truth || r->mode != 1)
		tab_drop_row(t, R_TRUTH_TOPO);
	if (!truth)
		for (int k = R_TRUTH_N; k >= R_ACH_50; k--)
			tab_drop_row(t, k);
	if (!lat)
		tab_drop_row(t, R_MODEL);
	/* The switch's name on the first row left. */
	tab_set(t, 1, 1, "%s", name);
}

static void report_table3(const struct report *r, struct report_table *t)
{
	enum {
		R_HEAD, R_P50, R_P1, R_P99, R_MEAN, R_BOUND, R_IN_SW, R_IN_HOP,
		R_PAIRED, R_LEFT, R_COUNT
	};
	static const char *const rows[R_COUNT] = {
		[R_P50] = "Error p50", [R_P1] = "Error p1", [R_P99] = "Error p99",
		[R_MEAN] = "Error mean", [R_BOUND] = "Bound p50 (+/-)",
		[R_IN_SW] = "Inside bound, switch",
		[R_IN_HOP] = "Inside bound, hop",
		[R_PAIRED] = "Samples paired (switch/hop)",
		[R_LEFT] = "Not paired",
	};

	memset(t, 0, sizeof(*t));
	t->labels = 1;
	t->title = "Table 3. Measurement error (nanoseconds): switch latency from host stamps "
		   "- the emulator's truth, per sample, by market data rate (messages/s)";
	t->key = "Each switch sample (topology method) against the truth of its own frame: the "
		 "emulator's egress - ingress stamps. Bound: the error bound the sample came "
		 "with (clock + holdover + stamp + resolution, Table 5). Inside bound: the "
		 "share of in-sync samples with |error| <= bound; for hop samples the truth is "
		 "the residence plus the topology's cables, so their error is the switch "
		 "sample's. Not paired: samples with no venue frame of their stamp, no frame in "
		 "the truth, or an ambiguous one (see tapless-report(1)).";
	tab_row_labels(t, rows, R_COUNT);
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		const struct report_pairing *pr = &rt->pair;
		struct report_figures f;
		int c = 1 + (int)i;
		char a[32], b[32];

		report_figures(rt, &f);
		tab_rate_column(t, c, rt->label, R_COUNT);
		if (!pr->have)
			continue;
		if (f.err[E_SWITCH].n) {
			tab_set(t, R_P50, c, "%+lld", (long long)f.q_err[E_SWITCH].p50);
			tab_set(t, R_P1, c, "%+lld", (long long)f.q_err[E_SWITCH].p1);
			tab_set(t, R_P99, c, "%+lld", (long long)f.q_err[E_SWITCH].p99);
			tab_set(t, R_MEAN, c, "%+.1f", f.err[E_SWITCH].mean);
		}
		if (f.bound[E_SWITCH].n)
			tab_set(t, R_BOUND, c, "%lld", (long long)f.bound[E_SWITCH].p50);
		if (!isnan(f.coverage[E_SWITCH]))
			tab_set(t, R_IN_SW, c, "%.1f %%", 100 * f.coverage[E_SWITCH]);
		if (!isnan(f.coverage[E_HOP]))
			tab_set(t, R_IN_HOP, c, "%.1f %%", 100 * f.coverage[E_HOP]);
		report_count(a, sizeof(a), pr->e[E_SWITCH].paired);
		report_count(b, sizeof(b), pr->e[E_HOP].paired);
		tab_set(t, R_PAIRED, c, "%s/%s", a, b);
		report_count(a, sizeof(a), pr->no_frame + pr->no_truth + pr->ambiguous);
		tab_set(t, R_LEFT, c, "%s", a);
	}
}

/* Rows of table 4 per clock. */
enum { C_OFFSETS, C_MAX, C_BOUND, C_ROWS };

static void report_table4(const struct report *r, struct report_table *t)
{
	static const char *const rows[C_ROWS] = {
		[C_OFFSETS] = "offset mean, journal / true",
		[C_MAX] = "true offset |max|, rms",
		[C_BOUND] = "bound p50, held",
	};
	int row = 1;

	memset(t, 0, sizeof(*t));
	t->labels = 1;
	t->title = "Table 4. The clocks against the truth (nanoseconds): what each host's "
		   "sync journal said beside where its clock really was (the simulated "
		   "clocks' truth), during each rate's runs";
	t->key = "Offset: the clock - PTP time (the grandmaster's PHC; for a system "
		 "clock, PTP time less the UTC offset). Journal: the offset the sync "
		 "journal wrote (ptp4l's, or phc2sys's for a clock kept on the PTP one), "
		 "its mean over the samples in the runs' window. True: the same clock's "
		 "true offset at each sample's true time, from tapless-hwsim's truth "
		 "journals. Held: the share of samples in sync or in holdover whose "
		 "bound held the true offset. The grandmaster's own clock is PTP time "
		 "and is not listed.";
	tab_set(t, 0, 0, " ");
	for (size_t i = 0; i < r->nrates; i++)
		tab_set(t, 0, 1 + (int)i, "%s", r->rate[i].label);
	for (size_t k = 0; k < r->nclk && row + C_ROWS <= TAB_ROWS; k++) {
		const struct report_clock *c = &r->clk[k];

		if (!c->have_truth)
			continue;
		for (int j = 0; j < C_ROWS; j++)
			tab_set(t, row + j, 0, "%s %s %s", c->host, c->clock, rows[j]);
		for (size_t i = 0; i < r->nrates; i++) {
			struct report_ctruth ct;
			int col = 1 + (int)i;

			report_clock_window(c, &r->rate[i], &ct);
			for (int j = 0; j < C_ROWS; j++)
				tab_set(t, row + j, col, "-");
			if (!ct.have_true)
				continue;
			if (ct.have_journal)
				tab_set(t, row + C_OFFSETS, col, "%+.0f / %+.0f",
					ct.journal_mean_ns, ct.true_mean_ns);
			else
				tab_set(t, row + C_OFFSETS, col, "- / %+.0f",
					ct.true_mean_ns);
			tab_set(t, row + C_MAX, col, "%lld, %.0f",
				(long long)ct.true_max_abs_ns, ct.true_rms_ns);
			if (ct.judged)
				tab_set(t, row + C_BOUND, col, "%lld, %.1f %%",
					(long long)ct.bound_p50_ns,
					100.0 * (double)ct.held / (double)ct.judged);
		}
		row += C_ROWS;
	}
}

/* The bound of Table 3's switch samples term by term, beside the bias and
 * whether the stamps were calibrated: which term to work on, per rate. */
static void report_table5(const struct report *r, struct report_table *t)
{
	enum {
		R_HEAD, R_WORKLOAD, R_COV, R_BOUND, R_BMEAN, R_CLOCK, R_HOLD,
		R_STAMP, R_RES, R_TOP, R_BIAS, R_CAL, R_COUNT
	};
	static const char *const rows[R_COUNT] = {
		[R_WORKLOAD] = "Workload",
		[R_COV] = "Inside bound, switch",
		[R_BOUND] = "Bound p50 (+/-)",
		[R_BMEAN] = "Bound mean",
		[R_CLOCK] = "Clock term (mean)",
		[R_HOLD] = "Holdover term (mean)",
		[R_STAMP] = "Stamp term (mean)",
		[R_RES] = "Resolution term (mean)",
		[R_TOP] = "Dominant term",
		[R_BIAS] = "Bias (error p50)",
		[R_CAL] = "Stamps calibrated",
	};
	static const int term_row[T_COUNT] = {
		[T_CLOCK] = R_CLOCK, [T_HOLDOVER] = R_HOLD,
		[T_STAMP] = R_STAMP, [T_RESOLUTION] = R_RES,
	};

	memset(t, 0, sizeof(*t));
	t->labels = 1;
	t->title = "Table 5. The error bound, term by term (nanoseconds): the switch "
		   "samples' bound = clock + holdover + stamp + resolution, by market "
		   "data rate (messages/s)";
	t->key = "Over the switch samples of Table 3 with a bound. Clock: both hosts' "
		 "clock bounds as their journals last measured them; holdover: what "
		 "they grew since, for a host in holdover; stamp: the sending host's "
		 "TX and the receiving host's RX spread from their calibrations "
		 "(rate-R/HOST.cal), - where not calibrated; resolution: the stamps' "
		 "resolution less 1 ns (tapless-correlate(8), Error bounds, term by "
		 "term). Each term's mean is over the samples that had it, so they add "
		 "up to the bound mean where every sample had a stamp term. Dominant: "
		 "the largest mean. Bias: the error's p50, after calibration where the "
		 "stamps were calibrated. A capped rate (the venue published under "
		 "95 % of what was offered: the lab did not carry it) is named as "
		 "such and is no pass, whatever its figures; - without run.conf.";
	tab_row_labels(t, rows, R_COUNT);
	for (size_t i = 0; i < r->nrates; i++) {
		const struct report_rate *rt = &r->rate[i];
		const struct report_err *e = &rt->pair.e[E_SWITCH];
		struct report_figures f;
		int c = 1 + (int)i;
		char why[600];
		bool capped = report_capped(r, rt, why, sizeof(why));

		report_figures(rt, &f);
		tab_rate_column(t, c, rt->label, R_COUNT);
		if (capped)
			tab_set(t, 0, c, "%s (capped)", rt->label);
		tab_set(t, R_WORKLOAD, c, "%s", capped ? "capped" :
			rt->have_run ? "carried" : "-");
		tab_set(t, R_CAL, c, "%s", rt->cal[ROLE_VENUE] && rt->cal[ROLE_ALGO] ?
			"yes" : rt->cal[ROLE_VENUE] ? "venue only" :
			rt->cal[ROLE_ALGO] ? "algo only" : "no");
		if (!rt->pair.have)
			continue;
		if (!isnan(f.coverage[E_SWITCH]))
			tab_set(t, R_COV, c, "%.1f %%", 100 * f.coverage[E_SWITCH]);
		if (f.bound[E_SWITCH].n) {
			tab_set(t, R_BOUND, c, "%lld", (long long)f.bound[E_SWITCH].p50);
			tab_set(t, R_BMEAN, c, "%.0f", f.bound[E_SWITCH].mean);
		}
		for (int k = 0; k < T_COUNT; k++) {
			unsigned long long without = e->terms.n - e->terms.have[k];

			if (!e->terms.have[k])
				continue;
			if (without)
				tab_set(t, term_row[k], c, "%.0f (%llu without)",
					f.term_mean[E_SWITCH][k], without);
			else
				tab_set(t, term_row[k], c, "%.0f",
					f.term_mean[E_SWITCH][k]);
		}
		if (f.dominant[E_SWITCH] >= 0)
			tab_set(t, R_TOP, c, "%s", report_term_names[f.dominant[E_SWITCH]]);
		if (f.err[E_SWITCH].n)
			tab_set(t, R_BIAS, c, "%+lld", (long long)f.q_err[E_SWITCH].p50);
	}
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
			if (j < t->labels)
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
				fprintf(f, "|%s", j < t->labels ? "------" : "-----:");
			fprintf(f, "|\n");
		}
	}
	fprintf(f, "\n%s\n\n", t->key);
}

void report_tables(const struct report *r, FILE *f, bool md)
{
	struct report_table t;

	report_table1(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
	report_table2(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
	if (report_any_truth(r)) {
		report_table3(r, &t);
		(md ? tab_write_md : tab_write_text)(f, &t);
		tab_free(&t);
	}
	if (r->have_clock_truth) {
		report_table4(r, &t);
		(md ? tab_write_md : tab_write_text)(f, &t);
		tab_free(&t);
	}
	if (report_any_truth(r)) {
		report_table5(r, &t);
		(md ? tab_write_md : tab_write_text)(f, &t);
		tab_free(&t);
	}
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

static void report_print_q(struct printer *p, const char *key, uint64_t n,
			   const struct report_q *q)
{
	static const char *const keys[] = {
		"p1", "p5", "p25", "p50", "p75", "p95", "p99",
	};
	const int64_t v[] = { q->p1, q->p5, q->p25, q->p50, q->p75, q->p95, q->p99 };

	print_object_begin(p, key);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (n)
			print_int(p, keys[i], NULL, v[i]);
		else
			print_null(p, keys[i], NULL);
	print_object_end(p);
}

/* The bound's terms: each one's mean over the bounded samples that had it
 * (null for one none had), how many had no stamp term, the largest. */
static void report_print_terms(struct printer *p, const struct report_err *e,
			       const double *mean, int top)
{
	if (!e->terms.n) {
		print_null(p, "bound_terms_mean_ns", NULL);
		print_null(p, "bound_dominant_term", NULL);
		return;
	}
	print_object_begin(p, "bound_terms_mean_ns");
	for (int k = 0; k < T_COUNT; k++)
		report_print_opt(p, report_term_names[k], NULL, e->terms.have[k] > 0,
				 mean[k]);
	print_uint(p, "without_stamp_term", NULL, e->terms.n - e->terms.have[T_STAMP]);
	print_uint(p, "samples", NULL, e->terms.n);
	print_object_end(p);
	print_str(p, "bound_dominant_term", NULL, report_term_names[top]);
}

static void report_print_err(struct printer *p, const char *key,
			     const struct report_err *e,
			     const struct report_figures *g, int k)
{
	print_object_begin(p, key);
	print_uint(p, "paired", NULL, e->paired);
	print_uint(p, "out_of_sync", NULL, e->out);
	print_uint(p, "holdover", NULL, e->holdover);
	print_uint(p, "bounded", NULL, e->bounded);
	print_uint(p, "inside_bound", NULL, e->inside);
	report_print_opt(p, "coverage", NULL, !isnan(g->coverage[k]), g->coverage[k]);
	report_print_summary(p, "error_ns", &g->err[k]);
	report_print_q(p, "error_quantiles_ns", g->err[k].n, &g->q_err[k]);
	report_print_summary(p, "bound_ns", &g->bound[k]);
	report_print_terms(p, e, g->term_mean[k], g->dominant[k]);
	print_object_end(p);
}

/* The hosts' stamp calibrations of the rate, as tapless correlate's
 * inputs[].calibration: null when neither host's. */
static void report_print_calib(struct printer *p, const struct report *r,
			       const struct report_rate *rt)
{
	const char *host[REPORT_ROLES] = { r->venue, r->algo };

	if (!rt->cal[ROLE_VENUE] && !rt->cal[ROLE_ALGO]) {
		print_null(p, "calibration", NULL);
		return;
	}
	print_object_begin(p, "calibration");
	for (int h = 0; h < REPORT_ROLES; h++) {
		const struct calib *c = rt->cal[h];

		if (!c) {
			print_null(p, report_role_names[h], NULL);
			continue;
		}
		print_object_begin(p, report_role_names[h]);
		print_str(p, "host", NULL, host[h]);
		print_str(p, "path", NULL, rt->cal_path[h]);
		print_str(p, "measured", NULL, c->measured[0] ? c->measured : NULL);
		print_array_begin(p, "stamps");
		for (int d = 0; d < CALIB_DIRS; d++)
			for (int k = 0; k < CALIB_SRCS; k++) {
				const struct calib_term *t = &c->t[d][k];

				if (!t->set)
					continue;
				print_object_begin(p, NULL);
				print_str(p, "direction", NULL, calib_dir_name(d));
				print_str(p, "source", NULL, calib_src_name(k));
				print_int(p, "offset_ns", NULL, t->offset_ns);
				print_int(p, "spread_ns", NULL, t->spread_ns);
				print_uint(p, "samples", NULL, t->samples);
				print_object_end(p);
			}
		print_array_end(p);
		print_object_end(p);
	}
	print_object_end(p);
}

/* The rate's headline, text only: the measurement error and its bound,
 * what the emulator achieved beside its model, BUY and SELL, and whether
 * the workload kept up. The figures are in the JSON fields beside it. */
static void report_headline(struct printer *p, const struct report *r,
			    const struct report_rate *rt,
			    const struct report_figures *g)
{
	char a[32], b[32], c[32], name[256], why[600];

	print_text(p, "rate %6s/s: ", rt->label);
	if (rt->pair.have && g->err[E_SWITCH].n) {
		const char *uncal = report_uncalibrated(rt);

		/* The bias is the stamps' after their calibration moved
		 * them: say which it is. */
		print_text(p, "measured - truth p50 %s%s (p1 %s, p99 %s%s%s)",
			   report_ns(a, sizeof(a), (double)g->q_err[E_SWITCH].p50, true),
			   uncal ? "" : " after calibration",
			   report_ns(b, sizeof(b), (double)g->q_err[E_SWITCH].p1, true),
			   report_ns(c, sizeof(c), (double)g->q_err[E_SWITCH].p99, true),
			   uncal ? "; " : "", uncal ? uncal : "");
		if (g->bound[E_SWITCH].n)
			print_text(p, "; bound %s holds %.1f %% of switch samples, "
				   "%.1f %% of hop",
				   report_ns(a, sizeof(a), (double)g->bound[E_SWITCH].p50, false),
				   100 * g->coverage[E_SWITCH],
				   isnan(g->coverage[E_HOP]) ? 0 : 100 * g->coverage[E_HOP]);
		else
			print_text(p, "; no error bound (no sync journals)");
	} else if (rt->truth.have) {
		print_text(p, "no per-sample error (%s)", rt->pair.why);
	} else {
		print_text(p, "no truth (%s)", rt->truth.why);
	}
	report_switch_name(r, name, sizeof(name));
	print_text(p, "\n             switch: %s", name);
	if (rt->truth.have)
		print_text(p, "; achieved residence p50 %s, p99 %s",
			   report_ns(a, sizeof(a), (double)g->q_res.p50, false),
			   report_ns(b, sizeof(b), (double)g->q_res.p99, false));
	else if (g->s[S_SWITCH].n)
		print_text(p, "; measured p50 %s, p99 %s (topology)",
			   report_ns(a, sizeof(a), (double)g->q[S_SWITCH].p50, false),
			   report_ns(b, sizeof(b), (double)g->q[S_SWITCH].p99, false));
	print_text(p, "\n             BUY p50 %s, SELL p50 %s",
		   g->s[S_BUY].n ? report_ns(a, sizeof(a), (double)g->q[S_BUY].p50, false) : "-",
		   g->s[S_SELL].n ? report_ns(b, sizeof(b), (double)g->q[S_SELL].p50, false) : "-");
	if (report_capped(r, rt, why, sizeof(why)))
		print_text(p, "; capped: %s", why);
	else if (rt->have_run && !isnan(rt->run[RUN_SW_RATE]))
		print_text(p, "; %.1fk msg/s sent", rt->run[RUN_SW_RATE] / 1e3);
	print_text(p, "\n");
	for (size_t i = 0; i < r->nclk; i++) {
		const struct report_clock *k = &r->clk[i];
		struct report_ctruth ct;

		if (!report_clock_window(k, rt, &ct) || !ct.have_true)
			continue;
		print_text(p, "             %s %s: true offset %s (|max| %s), journal said %s",
			   k->host, k->clock,
			   report_ns(a, sizeof(a), ct.true_mean_ns, true),
			   report_ns(b, sizeof(b), (double)ct.true_max_abs_ns, false),
			   ct.have_journal ? report_ns(c, sizeof(c), ct.journal_mean_ns, true) : "-");
		if (ct.judged)
			print_text(p, "; bound %s held %.1f %%",
				   report_ns(a, sizeof(a), (double)ct.bound_p50_ns, false),
				   100.0 * (double)ct.held / (double)ct.judged);
		print_text(p, "\n");
	}
}

static void report_print_rate(struct printer *p, const struct report *r,
			      const struct report_rate *rt)
{
	const struct report_pairing *pr = &rt->pair;
	struct report_figures g;
	char why[600];
	bool capped;

	report_figures(rt, &g);
	capped = report_capped(r, rt, why, sizeof(why));
	print_object_begin(p, NULL);
	print_int(p, "rate", NULL, rt->rate);
	print_str(p, "label", NULL, rt->label);
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
		report_print_q(p, "quantiles_ns", g.s[k].n, &g.q[k]);
		print_uint(p, "out_of_sync", NULL, rt->s[k].out);
		print_uint(p, "holdover", NULL, rt->s[k].holdover);
		print_object_end(p);
	}
	report_print_opt(p, "buy_mean_us", NULL, g.s[S_BUY].n, g.s[S_BUY].mean / 1e3);
	report_print_opt(p, "sell_mean_us", NULL, g.s[S_SELL].n, g.s[S_SELL].mean / 1e3);

	print_object_begin(p, "workload");
	print_bool(p, "known", NULL, rt->have_run);
	for (int k = 0; k < RUN_COUNT; k++)
		report_print_opt(p, report_run_keys[k], NULL, !isnan(rt->run[k]), rt->run[k]);
	print_bool(p, "capped", NULL, capped);
	print_str(p, "capped_why", NULL, capped ? why : NULL);
	print_object_end(p);

	print_object_begin(p, "switch_latency");
	report_print_opt(p, "topology_mean_ns", NULL, g.s[S_SWITCH].n, g.s[S_SWITCH].mean);
	report_print_opt(p, "topology_sd_ns", NULL, g.s[S_SWITCH].n > 1, g.s[S_SWITCH].sd);
	print_uint(p, "topology_count", NULL, g.s[S_SWITCH].n);
	report_print_opt(p, "baseline_mean_ns", NULL, g.have_base, g.base_mean);
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
	report_print_q(p, "residence_quantiles_ns", g.truth_res.n, &g.q_res);
	report_print_summary(p, "topology_ns", &g.truth_topo);
	print_object_end(p);
	report_print_opt(p, "truth_mean_ns", NULL, rt->truth.have, g.truth_res.mean);
	report_print_opt(p, "difference_topology_ns", NULL, g.have_diff_topo, g.diff_topo);
	report_print_opt(p, "difference_baseline_ns", NULL, g.have_diff_base, g.diff_base);
	print_object_end(p);

	print_object_begin(p, "error");
	print_bool(p, "available", NULL, pr->have);
	print_str(p, "why_not", NULL, pr->have ? NULL : pr->why);
	print_uint(p, "samples", NULL, pr->looked);
	print_uint(p, "no_venue_frame", NULL, pr->no_frame);
	print_uint(p, "no_truth_frame", NULL, pr->no_truth);
	print_uint(p, "ambiguous", NULL, pr->ambiguous);
	report_print_err(p, "switch", &pr->e[E_SWITCH], &g, E_SWITCH);
	report_print_err(p, "hop", &pr->e[E_HOP], &g, E_HOP);
	report_print_opt(p, "hop_cables_ns", NULL, pr->have_prop, pr->prop_ns);
	print_str(p, "hop_why_not", NULL, pr->have_prop || !*pr->why_hop ? NULL :
		  pr->why_hop);
	print_object_end(p);
	report_print_calib(p, r, rt);
	if (r->have_clock_truth) {
		print_array_begin(p, "clocks_truth");
		for (size_t i = 0; i < r->nclk; i++) {
			const struct report_clock *k = &r->clk[i];
			struct report_ctruth ct;

			if (!report_clock_window(k, rt, &ct))
				continue;
			print_object_begin(p, NULL);
			print_str(p, "host", NULL, k->host);
			print_str(p, "clock", NULL, k->clock);
			print_uint(p, "samples", NULL, ct.samples);
			print_uint(p, "judged", NULL, ct.judged);
			print_uint(p, "held", NULL, ct.held);
			report_print_opt(p, "coverage", NULL, ct.judged > 0,
					 ct.judged ? (double)ct.held / (double)ct.judged : 0);
			report_print_opt(p, "journal_offset_mean_ns", NULL,
					 ct.have_journal, ct.journal_mean_ns);
			report_print_opt(p, "true_offset_mean_ns", NULL, ct.have_true,
					 ct.true_mean_ns);
			report_print_opt(p, "true_offset_rms_ns", NULL, ct.have_true,
					 ct.true_rms_ns);
			report_print_opt(p, "true_offset_max_abs_ns", NULL, ct.have_true,
					 (double)ct.true_max_abs_ns);
			report_print_opt(p, "bound_p50_ns", NULL, ct.judged > 0,
					 (double)ct.bound_p50_ns);
			report_print_opt(p, "worst_excess_ns", NULL, ct.judged > ct.held,
					 (double)ct.worst_excess_ns);
			print_object_end(p);
		}
		print_array_end(p);
	}
	report_headline(p, r, rt, &g);
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
		report_print_rate(p, r, &r->rate[i]);
	print_array_end(p);
	/* PTP time itself against the machine's clock (simulated clocks). */
	print_object_begin(p, "ptp_reference");
	print_bool(p, "known", NULL, r->have_ref);
	print_str(p, "clock", NULL, r->have_ref ? r->ref_name : NULL);
	report_print_opt(p, "true_offset_ns", NULL, r->have_ref,
			 (double)r->ref_offset_ns);
	print_object_end(p);
	print_array_begin(p, "clocks");
	for (size_t i = 0; i < r->nclk; i++) {
		const struct report_clock *c = &r->clk[i];
		int64_t *off = xcalloc(c->n + 1, sizeof(*off));
		int64_t *bnd = xcalloc(c->n + 1, sizeof(*bnd));
		size_t no = 0, nb = 0, sync = 0, hold = 0;
		struct summary s;

		for (size_t j = 0; j < c->n; j++) {
			if (c->off[j] != JOURNAL_NONE)
				off[no++] = c->off[j];
			if (c->bnd[j] != JOURNAL_NONE)
				bnd[nb++] = c->bnd[j];
			sync += c->sync[j] == REPORT_SYNC_IN;
			hold += c->sync[j] == REPORT_SYNC_HOLDOVER;
		}
		print_object_begin(p, NULL);
		print_str(p, "host", NULL, c->host);
		print_str(p, "clock", NULL, c->clock);
		print_uint(p, "samples", NULL, c->n);
		print_uint(p, "in_sync", NULL, sync);
		print_uint(p, "holdover", NULL, hold);
		summary_of(off, no, &s);
		report_print_summary(p, "offset_ns", &s);
		summary_of(bnd, nb, &s);
		report_print_summary(p, "bound_ns", &s);
		print_object_end(p);
		free(off);
		free(bnd);
	}
	print_array_end(p);
	/* The live stream, as read for the plot follow-time. */
	print_object_begin(p, "follow");
	print_bool(p, "present", NULL, r->follow.present);
	print_uint(p, "lines", NULL, r->follow.lines);
	print_uint(p, "drawn", NULL, r->follow.used);
	print_uint(p, "other", NULL, r->follow.other);
	print_uint(p, "bad_lines", NULL, r->follow.bad);
	print_uint(p, "series", NULL, r->follow.ns);
	print_uint(p, "intervals_flagged", NULL, r->follow.flagged);
	print_str(p, "flags", NULL, r->follow.flags);
	print_object_end(p);
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
