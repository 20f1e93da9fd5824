/* mkpath.h — a directory and any missing parents ("mkdir -p"). */
#ifndef TAPLESS_BASE_MKPATH_H
#define TAPLESS_BASE_MKPATH_H

#include <sys/types.h>

/* Create dir and each missing directory above it, with mode (less the
 * umask); those already there are left as they are. Returns 0 when dir is
 * then a directory, or -errno: the first mkdir that failed, -ENOTDIR when
 * dir (or a parent) is something else, -EINVAL for an empty path. */
int mkpath_p(const char *dir, mode_t mode);

#endif
