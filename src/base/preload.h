/* preload.h — put a library first in LD_PRELOAD, for the wrappers that run
 * a program under one of ours (tapless-stamp, tapless-hwsim). */
#ifndef TAPLESS_PRELOAD_H
#define TAPLESS_PRELOAD_H

/* LD_PRELOAD with lib first, once (entries are separated by ':' or blanks,
 * ld.so(8)); lib must be an absolute path without ':' or blanks. Returns
 * 0, or -1 with errno set (EINVAL for such a path, ENOMEM). */
int preload_first(const char *lib);

#endif
