/* gnuplot.h — draw a plot: run gnuplot on a script, from a directory.
 * Every plot tapless draws (report, validate) goes through here.
 */
#ifndef TAPLESS_GNUPLOT_H
#define TAPLESS_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

/* What gnuplot wrote on stderr, kept from its start: the first error is
 * the one that matters. */
#define GNUPLOT_MSGBUF 2048

/* Run `gnuplot SCRIPT` with dir as its working directory. Returns 0,
 * -ENOENT when there is no gnuplot in PATH, -ECHILD when it failed (its
 * stderr in msg, which gets what gnuplot said on success too: warnings), or
 * another -errno. msg is the caller's array, as an error message's err
 * (HACKING.md), named msg as it is not only errors. */
int gnuplot_run(const char *dir, const char *script,
		char msg[GNUPLOT_MSGBUF]);

/* A template's @KEY@ and what it becomes. */
struct gnuplot_sub {
	const char *key;
	const char *val;
};

/* Write a template's text to out with every @KEY@ of subs[0..n) replaced by
 * its value; an @ that starts no known key is left as written (a gnuplot
 * macro's @name). */
void gnuplot_fill(FILE *out, const char *text, const struct gnuplot_sub *subs,
		  size_t n);

/* s as text inside a gnuplot single-quoted string: ' written '', a newline
 * as a blank. Returns a new string (xmalloc). */
char *gnuplot_quote(const char *s);

/* s as a gnuplot double-quoted string, quotes included: " and \\ escaped,
 * and broken into lines of at most width characters (at blanks; UTF-8
 * sequences count as one) joined by \\n, for a caption gnuplot draws as
 * it is given. Returns a new string (xmalloc). */
char *gnuplot_dquote_wrap(const char *s, size_t width);

#endif
