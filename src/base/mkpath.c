/* mkpath.c — see mkpath.h. */
#include "base/mkpath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/xalloc.h"

int mkpath_p(const char *dir, mode_t mode)
{
	struct stat st;
	char *p, *q;
	int err = 0;

	if (!dir || !*dir)
		return -EINVAL;
	p = xstrdup(dir);
	/* Each prefix ending before a '/' (but the root), then dir itself. */
	for (q = p + 1; ; q++) {
		char ch = *q;

		if (ch && ch != '/')
			continue;
		*q = 0;
		if (mkdir(p, mode) && errno != EEXIST)
			err = -errno;
		*q = ch;
		if (err || !ch)
			break;
	}
	free(p);
	if (!err && stat(dir, &st))
		err = -errno;
	else if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	return err;
}

int mkpath_is_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

const char *mkpath_why(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such directory";
	case -ENOTDIR:
		return "not a directory";
	}
	return strerror(-err);
}
