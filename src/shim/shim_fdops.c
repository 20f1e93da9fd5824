/* shim_fdops.c — descriptor lifetimes and socket options: what makes a
 * number name a new socket, a copy, or nothing, and what makes a socket
 * the program's own to stamp. */
#include "shim/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdarg.h>
#include <string.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

SHIM_EXPORT int socket(int domain, int type, int proto)
{
	int fd = REAL(socket)(domain, type, proto);

	if (fd >= 0 && !shim_in_vfork_child()) {
		int e = errno;

		shim_fd_reset(fd, false);
		errno = e;
	}
	return fd;
}

SHIM_EXPORT int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	int r = REAL(connect)(fd, a, len), e = errno;
	uintptr_t v;

	if (!a || (a->sa_family != AF_INET && a->sa_family != AF_INET6 &&
		   a->sa_family != AF_UNSPEC) || shim_in_vfork_child())
		return r;
	v = shim_table_get(&shim_socks, fd);
	if (SHIM_FD_SOCK(v)) {
		struct shim_sock *sk = (struct shim_sock *)v;

		if (!sk->tcp && r == 0)
			shim_sock_connected(sk, fd);
	} else if (v != SHIM_FD_APP && (r == 0 || e == EINPROGRESS)) {
		/* Looked at again: connected now (or soon, then at the first
		 * send or POLLERR), and maybe to a peer the filter takes. */
		if (v == SHIM_FD_IGNORED)
			shim_fd_reset(fd, false);
		if (r == 0)
			shim_classify(fd);
	}
	errno = e;
	return r;
}

static int accepted(int fd)
{
	if (fd >= 0 && !shim_in_vfork_child()) {
		int e = errno;

		shim_fd_reset(fd, false);
		shim_classify(fd);
		errno = e;
	}
	return fd;
}

SHIM_EXPORT int accept(int l, struct sockaddr *a, socklen_t *len)
{
	return accepted(REAL(accept)(l, a, len));
}

SHIM_EXPORT int accept4(int l, struct sockaddr *a, socklen_t *len, int flags)
{
	return accepted(REAL(accept4)(l, a, len, flags));
}

SHIM_EXPORT int close(int fd)
{
	if (!shim_in_vfork_child()) {
		int e = errno;

		/* Our own descriptors are not the program's: closing one
		 * fails as closing a number it never opened does (a daemon
		 * closing every descriptor at start-up ignores that). */
		if (shim_own_fd(fd)) {
			errno = EBADF;
			return -1;
		}
		shim_fd_reset(fd, true);
		errno = e;
	}
	return REAL(close)(fd);
}

/* close_range() and closefrom(): the program's descriptors in the range
 * are forgotten (their last stamps read), ours are closed around. */
static int close_around(unsigned first, unsigned last, int flags)
{
	unsigned top;

	top = last < (SHIM_TABLE_PAGES << SHIM_TABLE_BITS) ? last :
	      (SHIM_TABLE_PAGES << SHIM_TABLE_BITS) - 1;
	for (unsigned fd = first; fd <= top; fd++) {
		if (fd % (1u << SHIM_TABLE_BITS) == 0 &&
		    !shim_table_slot(&shim_socks, (int)fd, false) &&
		    !shim_table_slot(&shim_eps, (int)fd, false)) {
			fd += (1u << SHIM_TABLE_BITS) - 1;	/* no page */
			continue;
		}
		if (!shim_own_fd((int)fd))
			shim_fd_reset((int)fd, true);
	}
	/* Close the range around our own descriptors. */
	int own[SHIM_OWN_COUNT], n = shim_own_fds(own), r;
	unsigned from = first;

	for (int i = 0; i < n; i++) {
		unsigned o = (unsigned)own[i];

		if (o < from || o > last)
			continue;
		if (o > from && (r = shim_real.close_range(from, o - 1, flags)))
			return r;
		if (o == last)
			return 0;
		from = o + 1;
	}
	return shim_real.close_range(from, last, flags);
}

SHIM_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if ((flags & CLOSE_RANGE_CLOEXEC) || shim_in_vfork_child())
		return shim_real.close_range(first, last, flags);
	return close_around(first, last, flags);
}

/* glibc's closefrom() calls close_range inside the C library, out of
 * the wrappers' reach: without this one it closed our descriptors under
 * us, and the program's next files took their numbers (our log lines
 * went into its journal). */
SHIM_EXPORT void closefrom(int lowfd)
{
	int e = errno;

	if (lowfd < 0)
		lowfd = 0;
	if (shim_in_vfork_child() || !REAL(close_range) ||
	    close_around((unsigned)lowfd, ~0u, 0) < 0) {
		/* No close_range (before Linux 5.9): the C library's own
		 * way, which reads /proc/self/fd; ours are forgotten. */
		int own[SHIM_OWN_COUNT], n = shim_own_fds(own);

		for (int i = 0; i < n && !shim_in_vfork_child(); i++)
			if (own[i] >= lowfd)
				shim_own_fd_lost(own[i]);
		if (REAL(closefrom))
			shim_real.closefrom(lowfd);
	}
	errno = e;
}

SHIM_EXPORT int dup(int fd)
{
	int r = REAL(dup)(fd);

	if (r >= 0 && !shim_in_vfork_child()) {
		int e = errno;

		shim_fd_copy(fd, r);
		errno = e;
	}
	return r;
}

/* newfd is about to be replaced by a copy of oldfd. */
static void replacing(int oldfd, int newfd)
{
	if (oldfd == newfd || shim_in_vfork_child())
		return;
	if (shim_own_fd(newfd))
		shim_own_fd_lost(newfd);
	shim_fd_reset(newfd, true);
}

static int replaced(int oldfd, int newfd, int r)
{
	if (r >= 0 && oldfd != newfd && !shim_in_vfork_child()) {
		int e = errno;

		shim_fd_copy(oldfd, newfd);
		errno = e;
	}
	return r;
}

SHIM_EXPORT int dup2(int oldfd, int newfd)
{
	replacing(oldfd, newfd);
	return replaced(oldfd, newfd, REAL(dup2)(oldfd, newfd));
}

SHIM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	replacing(oldfd, newfd);
	return replaced(oldfd, newfd, REAL(dup3)(oldfd, newfd, flags));
}

static int fcntl_done(int fd, int cmd, int r)
{
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
	    !shim_in_vfork_child()) {
		int e = errno;

		shim_fd_copy(fd, r);
		errno = e;
	}
	return r;
}

/* The third argument is an int or a pointer; both travel in one
 * register on the ABIs we build for, so it is passed on as a pointer. */
SHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_done(fd, cmd, REAL(fcntl)(fd, cmd, arg));
}

SHIM_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!REAL(fcntl64))
		return fcntl_done(fd, cmd, REAL(fcntl)(fd, cmd, arg));
	return fcntl_done(fd, cmd, shim_real.fcntl64(fd, cmd, arg));
}

SHIM_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			   socklen_t len)
{
	int v = val && len >= (socklen_t)sizeof(int) ? *(const int *)val : 0;
	int why = -1;

	if (level == SOL_SOCKET && (name == SO_TIMESTAMPING_OLD ||
				    name == 65 /* SO_TIMESTAMPING_NEW */))
		why = SHIM_ASIDE_APP_TSTAMP;
	else if (((level == SOL_IP && name == IP_RECVERR) ||
		  (level == SOL_IPV6 && name == IPV6_RECVERR)) && v)
		why = SHIM_ASIDE_RECVERR;
	else if (level == SOL_SOCKET && name == SO_ZEROCOPY && v)
		why = SHIM_ASIDE_ZEROCOPY;
	else if (level == SOL_UDP && (name == UDP_CORK || name == UDP_SEGMENT) &&
		 v)
		why = SHIM_ASIDE_CORK;
	if (SHIM_UNLIKELY(why >= 0) && !shim_in_vfork_child()) {
		int e = errno;

		/* First: our stamps off the queue and our flags off (OPT_ID
		 * too, so the program's keys start from its own setting). */
		shim_fd_app(fd, (enum shim_aside)why);
		errno = e;
	}
	return REAL(setsockopt)(fd, level, name, val, len);
}

SHIM_EXPORT int getsockopt(int fd, int level, int name, void *val,
			   socklen_t *len)
{
	int r = REAL(getsockopt)(fd, level, name, val, len);

	/* The program sees its own setting (none), not ours. */
	if (r == 0 && level == SOL_SOCKET && val && len &&
	    (name == SO_TIMESTAMPING_OLD || name == 65) &&
	    shim_sock_armed(fd))
		memset(val, 0, *len);
	return r;
}

SHIM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r = REAL(epoll_ctl)(epfd, op, fd, ev);

	if (r == 0 && !shim_in_vfork_child()) {
		int e = errno;

		shim_ep_ctl(epfd, op, fd, ev);
		errno = e;
	}
	return r;
}
