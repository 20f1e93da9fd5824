/* nlerr.h — libnl reports its own NLE_* codes; our library returns -errno.
 * One mapping for every module that talks netlink through libnl. */
#ifndef TAPLESS_NLERR_H
#define TAPLESS_NLERR_H

/* -errno for a libnl error (NLE_* or -NLE_*); -EIO when there is none. */
int nlerr_errno(int nlerr);

#endif
