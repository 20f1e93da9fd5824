/* histplot.c — histograms through gnuplot (histplot.h). */
#include "histplot.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"
#include "gnuplot.h"
#include "summary.h"
#include "xalloc.h"

#define NBINS 100

static int fail(char *err, size_t len, int rc, const char *what, const char *path)
{
	snprintf(err, len, "%s %s: %s", what, path, strerror(-rc));
	return rc;
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

/* gnuplot single-quoted text: ' is written ''. */
static void gp_quote(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '\'')
			fputs("''", f);
		else
			fputc(*s == '\n' ? ' ' : *s, f);
}

static int write_script(const char *tpath, const char *path, const char *name,
			const char *title, const char *xlabel,
			const struct histplot_series *s, size_t ns, bool us)
{
	FILE *in = fopen(tpath, "r"), *out;
	char line[1024];
	int rc = 0;

	if (!in)
		return -errno;
	out = fopen(path, "w");
	if (!out) {
		rc = -errno;
		fclose(in);
		return rc;
	}
	fprintf(out, "# made by tapless validate from %s; edit and rerun: "
		"gnuplot %s.gp\n", tpath, name);
	while (fgets(line, sizeof(line), in)) {
		char *p = line, *at;

		while ((at = strchr(p, '@'))) {
			char *end = strchr(at + 1, '@');
			size_t k;

			if (!end) {
				break;
			}
			fwrite(p, 1, (size_t)(at - p), out);
			k = (size_t)(end - at - 1);
			if (k == 5 && !strncmp(at + 1, "TITLE", 5))
				gp_quote(out, title);
			else if (k == 3 && !strncmp(at + 1, "OUT", 3))
				gp_quote(out, name);
			else if (k == 4 && !strncmp(at + 1, "DATA", 4))
				fprintf(out, "%s.dat", name);
			else if (k == 6 && !strncmp(at + 1, "XLABEL", 6))
				gp_quote(out, xlabel);
			else if (k == 5 && !strncmp(at + 1, "SCALE", 5))
				fputs(us ? "1000.0" : "1.0", out);
			else if (k == 4 && !strncmp(at + 1, "UNIT", 4))
				fputs(us ? "µs" : "ns", out);
			else if (k == 6 && !strncmp(at + 1, "LABELS", 6)) {
				bool first = true;

				for (size_t i = 0; i < ns; i++) {
					if (!s[i].n)
						continue;
					fprintf(out, "%s", first ? "" : " ");
					gp_quote(out, s[i].label);
					first = false;
				}
			} else {
				/* Not ours: leave it as written. */
				fwrite(at, 1, (size_t)(end - at), out);
				p = end;
				continue;
			}
			p = end + 1;
		}
		fputs(p, out);
	}
	if (ferror(in) || ferror(out))
		rc = -EIO;
	fclose(in);
	if (fclose(out) && !rc)
		rc = -errno;
	return rc;
}

int histplot_draw(const char *dir, const char *name, const char *title,
		  const char *xlabel, const struct histplot_series *s,
		  size_t ns, char *err, size_t len)
{
	char tdir[PATH_MAX], tpath[PATH_MAX + 32], path[PATH_MAX + 64];
	char script[PATH_MAX], msg[1024];
	int64_t lo, hi, width;
	int nbins, rc;
	size_t with = 0;

	for (size_t i = 0; i < ns; i++)
		with += s[i].n > 0;
	if (!with) {
		snprintf(err, len, "%s: no samples to plot", name);
		return -ENODATA;
	}
	if (datadir_find("TAPLESS_PLOT_DIR", "../scripts/plot",
			 TAPLESS_DATADIR "/plot", tdir, sizeof(tdir))) {
		snprintf(err, len, "no plot templates (looked in %s; set "
			 "TAPLESS_PLOT_DIR)", tdir);
		return -ENOENT;
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
		return fail(err, len, rc, "writing", path);
	snprintf(path, sizeof(path), "%s/%s.gp", dir, name);
	rc = write_script(tpath, path, name, title, xlabel, s, ns,
			  hi - lo > 20000 || llabs(lo) > 100000);
	if (rc)
		return fail(err, len, rc, "writing", path);
	snprintf(script, sizeof(script), "%s.gp", name);
	rc = gnuplot_run(dir, script, msg, sizeof(msg));
	if (rc == -ENOENT)
		snprintf(err, len, "gnuplot not found in PATH (Debian: apt-get "
			 "install gnuplot-nox); %s/%s.gp is written", dir, name);
	else if (rc == -ECHILD)
		snprintf(err, len, "gnuplot %s/%s failed: %s", dir, script, msg);
	else if (rc)
		snprintf(err, len, "running gnuplot: %s", strerror(-rc));
	return rc;
}
