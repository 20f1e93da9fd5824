/* report_table.c — the tables (report_private.h): one grid per table,
 * rendered as text or Markdown; and the printer calls behind report.json
 * and the headline.
 */
#include "report/report.h"
#include "report/report_private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/journal.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"

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

void report_tables(const struct report *r, FILE *f, bool md)
{
	struct report_table t;

	report_table1(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
	report_table2(r, &t);
	(md ? tab_write_md : tab_write_text)(f, &t);
	tab_free(&t);
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
