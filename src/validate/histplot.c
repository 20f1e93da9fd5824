/* histplot.c — histograms through gnuplot (histplot.h). */
#include "validate/histplot.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datadir.h"
#include "base/errbuf.h"
#include "report/gnuplot.h"
#include "base/summary.h"
#include "base/xalloc.h"

#define NBINS 100

static int fail(char err[HISTPLOT_ERRBUF], int rc, const char *what,
		const char *path)
{
	return errbuf_set(err, HISTPLOT_ERRBUF, rc, "%s %s: %s", what, path,
			  strerror(-rc));
}

/* The range the bins cover: the middle 99.8 % of every series together. */
static void bin_range(const struct histplot_series *s, size_t ns, int64_t *lo,
		      int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t i = 0; i < ns; i++) {
		int64_t a, b;

		if (!s[i].n)
			continue;
		a = summary_rank(s[i].v, s[i].n, 0.1);
		b = summary_rank(s[i].v, s[i].n, 99.9);
		if (a < *lo)
			*lo = a;
		if (b > *hi)
			*hi = b;
	}
}

static int write_data(const char *path, const struct histplot_series *s,
		      size_t ns, int64_t lo, int64_t width, int nbins)
{
	FILE *f = fopen(path, "w");
	uint64_t count[NBINS + 200];

	if (!f)
		return -errno;
	fprintf(f, "# bin centre (ns), count, share of the series\n");
	for (size_t i = 0; i < ns; i++) {
		if (!s[i].n)
			continue;
		memset(count, 0, sizeof(count));
		for (size_t k = 0; k < s[i].n; k++) {
			int64_t b = (s[i].v[k] - lo) / width;

			if (s[i].v[k] < lo)
				b = 0;
			if (b >= nbins)
				b = nbins - 1;
			count[b]++;
		}
		fprintf(f, "# %s\n", s[i].label);
		for (int b = 0; b < nbins; b++)
			fprintf(f, "%.1f %llu %.6g\n",
				(double)lo + ((double)b + 0.5) * (double)width,
				(unsigned long long)count[b],
				(double)count[b] / (double)s[i].n);
		fprintf(f, "\n\n");
	}
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

static int write_script(const char *tpath, const char *path, const char *name,
			const char *title, const char *xlabel,
			const struct histplot_series *s, size_t ns, bool us)
{
	char *text = NULL, *labels, data[256];
	char *qtitle = gnuplot_quote(title), *qname = gnuplot_quote(name);
	char *qx = gnuplot_quote(xlabel);
	size_t cap = 0, at = 0, room = 1;
	FILE *in = fopen(tpath, "r"), *out = NULL;
	int rc = 0;

	for (size_t i = 0; i < ns; i++)
		room += 2 * strlen(s[i].label) + 1;
	labels = xcalloc(1, room);
	for (size_t i = 0; i < ns; i++) {
		char *q;

		if (!s[i].n)
			continue;
		q = gnuplot_quote(s[i].label);
		at += (size_t)snprintf(labels + at, room - at, "%s%s", at ? " " : "", q);
		free(q);
	}
	snprintf(data, sizeof(data), "%s.dat", name);
	if (!in || getdelim(&text, &cap, 0, in) < 0)
		rc = -errno ? -errno : -EIO;
	if (!rc && !(out = fopen(path, "w")))
		rc = -errno;
	if (!rc) {
		const struct gnuplot_sub subs[] = {
			{ "TITLE", qtitle }, { "OUT", qname }, { "DATA", data },
			{ "XLABEL", qx }, { "LABELS", labels },
			{ "SCALE", us ? "1000.0" : "1.0" }, { "UNIT", us ? "µs" : "ns" },
		};

		fprintf(out, "# made by tapless validate from %s; edit and rerun: "
			"gnuplot %s.gp\n", tpath, name);
		gnuplot_fill(out, text, subs, sizeof(subs) / sizeof(subs[0]));
		if (ferror(out))
			rc = -EIO;
		if (fclose(out) && !rc)
			rc = -errno;
	}
	if (in)
		fclose(in);
	free(text);
	free(labels);
	free(qtitle);
	free(qname);
	free(qx);
	return rc;
}

int histplot_draw(const char *dir, const char *name, const char *title,
		  const char *xlabel, const struct histplot_series *s,
		  size_t ns, char err[HISTPLOT_ERRBUF])
{
	char tdir[PATH_MAX], tpath[PATH_MAX + 32], path[PATH_MAX + 64];
	char script[PATH_MAX], msg[GNUPLOT_MSGBUF];
	int64_t lo, hi, width;
	int nbins, rc;
	size_t with = 0;

	for (size_t i = 0; i < ns; i++)
		with += s[i].n > 0;
	if (!with)
		return errbuf_set(err, HISTPLOT_ERRBUF, -ENODATA,
				  "%s: no samples to plot", name);
	if (datadir_find("TAPLESS_PLOT_DIR", "../scripts/plot",
			 DATADIR_SHARE, "plot", tdir, sizeof(tdir))) {
		return errbuf_set(err, HISTPLOT_ERRBUF, -ENOENT,
				  "no plot templates (looked in %s; set "
				  "TAPLESS_PLOT_DIR)", tdir);
	}
	snprintf(tpath, sizeof(tpath), "%s/validate-hist.gp", tdir);

	bin_range(s, ns, &lo, &hi);
	if (hi - lo < 200) {
		width = 1;
		nbins = (int)(hi - lo + 1);
	} else {
		width = (hi - lo + NBINS - 1) / NBINS;
		nbins = NBINS + 1;
	}

	snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
	rc = write_data(path, s, ns, lo, width, nbins);
	if (rc)
		return fail(err, rc, "writing", path);
	snprintf(path, sizeof(path), "%s/%s.gp", dir, name);
	rc = write_script(tpath, path, name, title, xlabel, s, ns,
			  hi - lo > 20000 || llabs(lo) > 100000);
	if (rc)
		return fail(err, rc, "writing", path);
	snprintf(script, sizeof(script), "%s.gp", name);
	rc = gnuplot_run(dir, script, msg);
	if (rc == -ENOENT)
		errbuf_set(err, HISTPLOT_ERRBUF, rc,
			   "gnuplot not found in PATH (Debian: apt-get "
			   "install gnuplot-nox); %s/%s.gp is written", dir, name);
	else if (rc == -ECHILD)
		errbuf_set(err, HISTPLOT_ERRBUF, rc,
			   "gnuplot %s/%s failed: %s", dir, script, msg);
	else if (rc)
		errbuf_set(err, HISTPLOT_ERRBUF, rc, "running gnuplot: %s",
			   strerror(-rc));
	return rc;
}
