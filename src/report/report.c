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
#include <sys/stat.h>

#include "base/hist.h"
#include "base/summary.h"
#include "base/xalloc.h"

const char *const report_series_key[S_COUNT] = {
	"buy", "sell", "switch", "hop", "hop_baseline",
};

/* lab.conf keys the report knows, in the order index.md lists them. */
const char *const report_conf_keys[] = {
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

void report_figures(const struct report_rate *rt, struct report_figures *f)
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

bool report_any_truth(const struct report *r)
{
	for (size_t i = 0; i < r->nrates; i++)
		if (r->rate[i].truth.have)
			return true;
	return false;
}
