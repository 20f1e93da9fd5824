/* histplot.h — a histogram of one or more latency or error distributions,
 * drawn by gnuplot as PNG and SVG from an editable script (tapless
 * validate's --plot).
 *
 * histplot_draw() writes, in dir: NAME.dat (one block per series: bin
 * centre in ns, count, share of the series' samples), NAME.gp (the template
 * scripts/plot/validate-hist.gp with its @KEY@ values filled in; rerun it
 * with `gnuplot NAME.gp` from dir), and through gnuplot NAME.png and
 * NAME.svg. Bins: 1 ns steps when the series span under 200 ns; otherwise
 * 100 bins across the middle 99.8 % of all series (the tails beyond are
 * counted in the end bins, so shares still add to 1).
 */
#ifndef TAPLESS_HISTPLOT_H
#define TAPLESS_HISTPLOT_H

#include <stddef.h>
#include <stdint.h>

/* A histplot_draw() message: a path, or gnuplot's own words. */
#define HISTPLOT_ERRBUF 1024

struct histplot_series {
	const char *label;	/* a word: no blanks */
	const int64_t *v;	/* sorted ascending */
	size_t n;
};

/* Returns 0; -ENOENT when the template or gnuplot cannot be found (err
 * says which); -ECHILD when gnuplot failed (err holds what it said);
 * another -errno writing the files. Series with no samples are left out;
 * with none at all nothing is written and -ENODATA returned. */
int histplot_draw(const char *dir, const char *name, const char *title,
		  const char *xlabel, const struct histplot_series *s,
		  size_t ns, char err[HISTPLOT_ERRBUF]);

#endif
