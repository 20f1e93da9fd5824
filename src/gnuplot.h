/* gnuplot.h — draw a plot: run gnuplot on a script, from a directory.
 * Every plot tapless draws (report, validate) goes through here.
 */
#ifndef TAPLESS_GNUPLOT_H
#define TAPLESS_GNUPLOT_H

#include <stddef.h>

/* Run `gnuplot SCRIPT` with dir as its working directory. Returns 0,
 * -ENOENT when there is no gnuplot in PATH, -ECHILD when it failed (its
 * stderr in msg, which gets what gnuplot said on success too: warnings), or
 * another -errno. */
int gnuplot_run(const char *dir, const char *script, char *msg, size_t len);

#endif
