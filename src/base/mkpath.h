/* mkpath.h — a directory and any missing parents ("mkdir -p"). */
#ifndef TAPLESS_BASE_MKPATH_H
#define TAPLESS_BASE_MKPATH_H

#include <sys/types.h>

/* Create dir and each missing directory above it, with mode (less the
 * umask); those already there are left as they are. Returns 0 when dir is
 * then a directory, or -errno: the first mkdir that failed, -ENOTDIR when
 * dir (or a parent) is something else, -EINVAL for an empty path. */
int mkpath_p(const char *dir, mode_t mode);

/* Whether dir is an existing directory: 0, -ENOENT (it, or a directory
 * above it, is missing), -ENOTDIR (something else is in the way), or
 * another -errno of stat(). */
int mkpath_is_dir(const char *dir);

/* err of mkpath_is_dir() in words, for "OPTION PATH: why": "no such
 * directory", "not a directory", or strerror's. */
const char *mkpath_why(int err);

#endif
