/* report.c — see report.h; the files of the report are listed in
 * report_private.h.
 *
 * The lifecycle: report_load() reads lab.conf, then each rate's samples and
 * truth, then the journals (report_load.c), and report_destroy(); the notes,
 * the lab.conf look-ups and the figures every output shows.
 */
#include "report/report.h"
#include "report/report_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/errbuf.h"
#include "base/hist.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "files/calib.h"
#include "files/samples.h"

_Static_assert(T_COUNT == SAMPLES_TERMS, "the samples file's terms");

const char *const report_series_key[S_COUNT] = {
	"buy", "sell", "switch", "hop", "hop_baseline", "app_to_wire",
};

const char *const report_term_names[T_COUNT] = {
	"clock", "holdover", "stamp", "resolution",
};

const char *const report_role_names[REPORT_ROLES] = { "venue", "algo" };

/* lab.conf keys the report knows, in the order index.md lists them. */
const char *const report_conf_keys[] = {
	"id", "date", "rates", "duration", "stamps", "switch", "switch_mode",
	"switch_latency_ns", "switch_jitter_ns", "switch_speed", "switch_poll",
	"switch_cpu", "switch_poll_why", "md_source", "hosts", "clocks",
	"clock_reference", NULL,
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

int report_fail(char err[REPORT_ERRBUF], int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, REPORT_ERRBUF, rc, fmt, ap);
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

const char *report_conf_or(const struct report *r, const char *key)
{
	const char *v = report_conf(r, key);

	return v ? v : "unknown";
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
	if (access(path, F_OK) && errno == ENOENT) {
		/* Not a run directory at all: say what one is. */
		report_destroy(r);
		return report_fail(err, -ENOENT, "%s: no lab.conf: not a run "
				   "directory of tapless lab (tapless report "
				   "makes the tables and plots of 'tapless lab "
				   "run --output DIR'; for captures of your own, "
				   "use tapless correlate)", dir);
	}
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
		report_run_load(r, rt);
		report_calib_load(r, rt);
		report_pair_load(r, rt);
		if (!rt->truth.have)
			report_notef(r, false, "rate %s: no truth: %s", rt->label,
				     rt->truth.why);
	}
	report_journals_load(r);
	report_clocks_load(r);
	report_follow_load(r);
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
		for (int k = 0; k < E_COUNT; k++) {
			if (r->rate[i].pair.e[k].err)
				hist_destroy(r->rate[i].pair.e[k].err);
			if (r->rate[i].pair.e[k].bound)
				hist_destroy(r->rate[i].pair.e[k].bound);
		}
		for (int k = 0; k < REPORT_ROLES; k++)
			free(r->rate[i].cal[k]);
	}
	for (size_t i = 0; i < r->nclk; i++) {
		free(r->clk[i].ts);
		free(r->clk[i].off);
		free(r->clk[i].bnd);
		free(r->clk[i].sync);
		free(r->clk[i].tt);
		free(r->clk[i].toff);
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

struct report_qwalk {
	struct report_q *q;
	uint64_t n, cum;
	int next;
};

static const double report_q_pct[] = { 1, 5, 25, 50, 75, 95, 99 };
#define REPORT_NQ (sizeof(report_q_pct) / sizeof(report_q_pct[0]))

static int report_qwalk_add(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct report_qwalk *w = arg;
	int64_t *out[REPORT_NQ] = {
		&w->q->p1, &w->q->p5, &w->q->p25, &w->q->p50, &w->q->p75,
		&w->q->p95, &w->q->p99,
	};

	(void)hi;
	w->cum += count;
	/* Nearest rank: the smallest value with at least pct % of the
	 * samples at or below it (a bin's lower edge, as hist.h's). */
	while (w->next < (int)REPORT_NQ &&
	       w->cum >= summary_nearest_rank(w->n, report_q_pct[w->next]))
		*out[w->next++] = lo;
	return w->next == (int)REPORT_NQ;
}

void report_quantiles(const struct hist *h, struct report_q *q)
{
	struct report_qwalk w = { q, hist_count(h), 0, 0 };

	memset(q, 0, sizeof(*q));
	if (w.n)
		hist_foreach(h, report_qwalk_add, &w);
}

void report_figures(const struct report_rate *rt, struct report_figures *f)
{
	memset(f, 0, sizeof(*f));
	for (int k = 0; k < S_COUNT; k++) {
		hist_summary(rt->s[k].h, &f->s[k]);
		report_quantiles(rt->s[k].h, &f->q[k]);
	}
	for (int k = 0; k < E_COUNT; k++) {
		const struct report_err *e = &rt->pair.e[k];

		f->coverage[k] = e->bounded ? (double)e->inside / (double)e->bounded : NAN;
		if (!e->err)
			continue;
		hist_summary(e->err, &f->err[k]);
		hist_summary(e->bound, &f->bound[k]);
		report_quantiles(e->err, &f->q_err[k]);
	}
	for (int k = 0; k < E_COUNT; k++)
		f->dominant[k] = report_terms_mean(&rt->pair.e[k].terms,
						   f->term_mean[k]);
	/* The FTTC way: through the switch minus back to back; the
	 * variances subtract too, as tapless correlate --baseline does. */
	if (f->s[S_HOP].n && f->s[S_HOP_BASE].n) {
		f->have_base = true;
		f->base_mean = f->s[S_HOP].mean - f->s[S_HOP_BASE].mean;
		f->base_sd = sqrt(fmax(0, f->s[S_HOP].sd * f->s[S_HOP].sd -
				      f->s[S_HOP_BASE].sd * f->s[S_HOP_BASE].sd));
	}
	if (rt->truth.have) {
		hist_summary(rt->truth.res, &f->truth_res);
		report_quantiles(rt->truth.res, &f->q_res);
	}
	if (rt->truth.have_topo) {
		hist_summary(rt->truth.topo, &f->truth_topo);
		report_quantiles(rt->truth.topo, &f->q_topo);
	}
	if (rt->truth.have_topo && f->s[S_SWITCH].n) {
		f->have_diff_topo = true;
		f->diff_topo = f->s[S_SWITCH].mean - f->truth_topo.mean;
	}
	if (rt->truth.have && f->have_base) {
		f->have_diff_base = true;
		f->diff_base = f->base_mean - f->truth_res.mean;
	}
}

void report_terms_add(struct report_terms *t, const int64_t *term_ns)
{
	bool any = false;

	for (int k = 0; k < T_COUNT; k++) {
		if (term_ns[k] < 0)
			continue;
		any = true;
		t->have[k]++;
		t->sum[k] += (double)term_ns[k];
	}
	t->n += any;
}

int report_terms_mean(const struct report_terms *t, double *mean)
{
	int top = -1;

	for (int k = 0; k < T_COUNT; k++) {
		mean[k] = t->have[k] ? t->sum[k] / (double)t->have[k] : NAN;
		if (t->have[k] && (top < 0 || mean[k] > mean[top]))
			top = k;
	}
	return top;
}

const char *report_uncalibrated(const struct report_rate *rt)
{
	if (rt->cal[ROLE_VENUE] && rt->cal[ROLE_ALGO])
		return NULL;
	if (rt->cal[ROLE_VENUE])
		return "the algo's stamps not calibrated";
	if (rt->cal[ROLE_ALGO])
		return "the venue's stamps not calibrated";
	return "stamps not calibrated";
}

bool report_any_truth(const struct report *r)
{
	for (size_t i = 0; i < r->nrates; i++)
		if (r->rate[i].truth.have)
			return true;
	return false;
}

char *report_ns(char *buf, size_t len, double v, bool sign)
{
	/* Three significant figures in the largest unit below the value. */
	static const struct {
		double below, div;
		int prec;
		const char *unit;
	} step[] = {
		{ 1e3, 1, 0, "ns" }, { 1e4, 1e3, 2, "us" }, { 1e5, 1e3, 1, "us" },
		{ 1e6, 1e3, 0, "us" }, { 1e7, 1e6, 2, "ms" }, { 1e8, 1e6, 1, "ms" },
		{ 1e9, 1e6, 0, "ms" }, { INFINITY, 1e9, 2, "s" },
	};
	double a = fabs(v);
	const char *sg = !sign ? (v < 0 ? "-" : "") : v < 0 ? "-" : "+";
	size_t i = 0;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	while (a >= step[i].below)
		i++;
	snprintf(buf, len, "%s%.*f %s", sg, step[i].prec, a / step[i].div,
		 step[i].unit);
	return buf;
}

void report_switch_name(const struct report *r, char *buf, size_t len)
{
	const char *sw = report_conf_or(r, "switch");
	const char *lat = report_conf(r, "switch_latency_ns");
	const char *mode = report_conf(r, "switch_mode");

	/* The emulator stands in for the switch: say so, and what it was
	 * told to be, never its name alone. */
	if (report_any_truth(r) && lat)
		snprintf(buf, len, "swemu, modelled on %s (%s ns)", sw, lat);
	else if (report_any_truth(r))
		snprintf(buf, len, "swemu, modelled on %s", sw);
	else if (mode)
		snprintf(buf, len, "%s (%s)", sw, mode);
	else
		snprintf(buf, len, "%s", sw);
}

bool report_capped(const struct report *r, const struct report_rate *rt,
		   char *why, size_t len)
{
	const double *v = rt->run;
	char lab[16];

	(void)r;
	*why = 0;
	if (!rt->have_run || isnan(v[RUN_SW_OFFERED]) || isnan(v[RUN_SW_PUBLISHED]) ||
	    v[RUN_SW_PUBLISHED] >= 0.95 * v[RUN_SW_OFFERED])
		return false;
	snprintf(lab, sizeof(lab), "%.1fk", isnan(v[RUN_SW_RATE]) ? 0 :
		 v[RUN_SW_RATE] / 1e3);
	/* Back to back the same venue and algo, without the emulator: if
	 * that kept up, the emulator's forwarding held the venue back (its
	 * TCP sends blocked), else the machine itself could not. */
	if (!isnan(v[RUN_B2B_PUBLISHED]) && !isnan(v[RUN_B2B_OFFERED]) &&
	    v[RUN_B2B_PUBLISHED] >= 0.95 * v[RUN_B2B_OFFERED])
		snprintf(why, len, "offered %s msg/s, the venue published %s/s "
			 "through the switch (%.0f of %.0f messages): back to back "
			 "it kept up, so the switch emulator's forwarding is the "
			 "cap (the venue's TCP sends waited for it)", rt->label, lab,
			 v[RUN_SW_PUBLISHED], v[RUN_SW_OFFERED]);
	else
		snprintf(why, len, "offered %s msg/s, the venue published %s/s "
			 "through the switch (%.0f of %.0f messages), and back to "
			 "back no more: this machine's CPUs are the cap", rt->label,
			 lab, v[RUN_SW_PUBLISHED], v[RUN_SW_OFFERED]);
	return true;
}
