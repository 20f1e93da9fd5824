/* datadir.h — finding what the tapless programs ship besides themselves
 * (the lab script, the plot templates), in a build tree or installed.
 *
 * A file is looked for, in order: where the environment variable says;
 * next to the running executable, at the path it has in the source tree
 * (bin/../scripts/lab), so a build runs its own copy; at its installed
 * path. The first that exists wins.
 */
#ifndef TAPLESS_DATADIR_H
#define TAPLESS_DATADIR_H

#include <stddef.h>

/* Where a file is installed: below PREFIX/lib/tapless (programs the
 * CLI runs) or below DATADIR/tapless (templates). */
enum datadir_where { DATADIR_LIBEXEC, DATADIR_SHARE };

/* The installed directories, from PREFIX and datadir at build time. They
 * live in one generated object (build/gen/paths.c) that the Makefile
 * rewrites when PREFIX or datadir changes, so "make install PREFIX=/opt/x"
 * after a plain "make" relinks programs that look under /opt/x. */
extern const char datadir_libexec[];
extern const char datadir_share[];

/* The directory of the running executable, without a trailing slash.
 * Returns 0 or -errno. */
int datadir_exe_dir(char *out, size_t len);

/* Find a file or directory: getenv(env) when set (and it must exist), else
 * EXE_DIR/build_rel, else the installed directory where names, then "/"
 * and rel. Returns 0 with the path in out, or -ENOENT with out holding the
 * paths tried (for the error message). */
int datadir_find(const char *env, const char *build_rel,
		 enum datadir_where where, const char *rel, char *out,
		 size_t len);

#endif
