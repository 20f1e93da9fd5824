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

/* Installed locations, set by the Makefile. */
#ifndef TAPLESS_LIBEXECDIR
#define TAPLESS_LIBEXECDIR "/usr/local/lib/tapless"
#endif
#ifndef TAPLESS_DATADIR
#define TAPLESS_DATADIR "/usr/local/share/tapless"
#endif

/* The directory of the running executable, without a trailing slash.
 * Returns 0 or -errno. */
int datadir_exe_dir(char *out, size_t len);

/* Find a file or directory: getenv(env) when set (and it must exist), else
 * EXE_DIR/build_rel, else installed. Returns 0 with the path in out, or
 * -ENOENT with out holding the paths tried (for the error message). */
int datadir_find(const char *env, const char *build_rel,
		 const char *installed, char *out, size_t len);

#endif
