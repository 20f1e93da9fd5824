/* datadir.c — see datadir.h. */
#include "base/datadir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int datadir_exe_dir(char *out, size_t len)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	if ((size_t)snprintf(out, len, "%s", buf) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int datadir_find(const char *env, const char *build_rel,
		 enum datadir_where where, const char *rel, char *out,
		 size_t len)
{
	const char *e = env ? getenv(env) : NULL;
	char dir[PATH_MAX], tried[2 * PATH_MAX + 16] = "", installed[PATH_MAX];

	if (e && *e) {
		snprintf(out, len, "%s", e);
		if (access(out, F_OK) == 0)
			return 0;
		snprintf(out, len, "%s (from %s)", e, env);
		return -ENOENT;
	}
	if (build_rel && !datadir_exe_dir(dir, sizeof(dir))) {
		if ((size_t)snprintf(out, len, "%s/%s", dir, build_rel) < len &&
		    access(out, F_OK) == 0)
			return 0;
		snprintf(tried, sizeof(tried), "%s/%s, ", dir, build_rel);
	}
	snprintf(installed, sizeof(installed), "%s/%s",
		 where == DATADIR_LIBEXEC ? datadir_libexec : datadir_share, rel);
	if ((size_t)snprintf(out, len, "%s", installed) < len &&
	    access(out, F_OK) == 0)
		return 0;
	snprintf(out, len, "%s%s", tried, installed);
	return -ENOENT;
}
