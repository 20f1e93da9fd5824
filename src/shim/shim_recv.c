/* shim_recv.c — the receive calls: a program reading MSG_ERRQUEUE itself
 * gets the socket's queue to itself; descriptors received with
 * SCM_RIGHTS are new to us; stamps still outstanding (hardware stamps
 * come a little after the send) are read after the call. */
#include "shim/shim.h"

#include <errno.h>

static void errqueue_read(int fd)
{
	if (!shim_in_vfork_child())
		shim_fd_app(fd, SHIM_ASIDE_ERRQUEUE);
}

static void after(int fd, ssize_t n, const struct msghdr *m)
{
	struct shim_sock *sk = shim_sock_armed(fd);
	int e = errno;

	if (sk && shim_outstanding(sk))
		shim_reap_try(sk, fd);
	if (n >= 0 && m && m->msg_controllen && m->msg_control &&
	    !shim_in_vfork_child()) {
		for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c;
		     c = CMSG_NXTHDR((struct msghdr *)m, c)) {
			const int *fds = (const int *)CMSG_DATA(c);
			size_t k;

			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS)
				continue;
			k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++)
				shim_fd_reset(fds[i], false);
		}
	}
	errno = e;
}

SHIM_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recv)(fd, buf, len, flags);
	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
			       int flags)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recv_chk)(fd, buf, len, buflen, flags);
	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			     struct sockaddr *from, socklen_t *fromlen)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recvfrom)(fd, buf, len, flags, from, fromlen);
	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len,
				   size_t buflen, int flags,
				   struct sockaddr *from, socklen_t *fromlen)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recvfrom_chk)(fd, buf, len, buflen, flags, from, fromlen);
	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recvmsg)(fd, m, flags);
	after(fd, n, m);
	return n;
}

SHIM_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned vlen, int flags,
			 struct timespec *timeout)
{
	int n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	n = REAL(recvmmsg)(fd, vec, vlen, flags, timeout);
	for (int i = 0; i < n; i++)
		after(fd, 0, &vec[i].msg_hdr);
	if (n <= 0)
		after(fd, -1, NULL);
	return n;
}

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t n = REAL(read)(fd, buf, len);

	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	ssize_t n = REAL(read_chk)(fd, buf, len, buflen);

	after(fd, n, NULL);
	return n;
}

SHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t n = REAL(readv)(fd, iov, iovcnt);

	after(fd, n, NULL);
	return n;
}
