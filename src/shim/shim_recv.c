/* shim_recv.c — the receive calls: a program reading MSG_ERRQUEUE itself
 * gets the socket's queue to itself; descriptors received with
 * SCM_RIGHTS are new to us; stamps still outstanding (hardware stamps
 * come a little after the send) are read after the call; on kernels
 * without SOF_TIMESTAMPING_OPT_RX_FILTER, the RX stamps our reporting
 * flags add to the program's control messages are taken out. */
#include "shim/shim.h"

#include <errno.h>
#include <string.h>

#include "base/missing.h"

#define CTL_EXTRA 256		/* room for the stamps the kernel adds */
#define CTL_MAX 4096		/* larger control buffers: left as they are */

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

static bool ours(const struct cmsghdr *c)
{
	return c->cmsg_level == SOL_SOCKET &&
	       (c->cmsg_type == SCM_TIMESTAMPING_OLD ||
		c->cmsg_type == SCM_TIMESTAMPING_NEW);
}

/* Before Linux 6.9 the SOFTWARE and RAW_HARDWARE reporting flags the
 * library sets for TX stamps also report RX stamps, whenever anything on
 * the host turned RX stamping on (capd): an SCM_TIMESTAMPING the program
 * never asked for comes first in its control messages and can push out
 * the ones it did (IP_PKTINFO, MSG_CTRUNC). The call gets buffers with
 * room for ours; the program gets its own messages, as the kernel would
 * have given them without us. */

/* The control messages of got (read into our buffer) that are not ours,
 * into m's own buffer of cap bytes; m's lengths and flags set. */
static void ctl_back(struct msghdr *m, size_t cap, const struct msghdr *got)
{
	size_t out = 0;
	bool trunc = false;

	for (struct cmsghdr *c = got->msg_controllen ?
	     CMSG_FIRSTHDR((struct msghdr *)got) : NULL; c;
	     c = CMSG_NXTHDR((struct msghdr *)got, c)) {
		size_t len = c->cmsg_len, space = CMSG_ALIGN(len);

		if (ours(c))
			continue;
		if (out + len > cap) {
			trunc = true;
			break;
		}
		memcpy((char *)m->msg_control + out, c, len);
		out += space > cap - out ? len : space;
	}
	m->msg_namelen = got->msg_namelen;
	m->msg_controllen = out;
	m->msg_flags = got->msg_flags & ~MSG_CTRUNC;
	if (trunc || (got->msg_flags & MSG_CTRUNC))
		m->msg_flags |= MSG_CTRUNC;
}

static ssize_t recvmsg_clean(int fd, struct msghdr *m, int flags)
{
	union {
		char buf[CTL_MAX + CTL_EXTRA];
		struct cmsghdr align;
	} ctl;
	struct msghdr mm = *m;
	size_t cap = m->msg_control ? m->msg_controllen : 0;
	ssize_t n;
	int e;

	mm.msg_control = ctl.buf;
	mm.msg_controllen = cap + CTL_EXTRA;
	n = REAL(recvmsg)(fd, &mm, flags);
	e = errno;
	if (n >= 0)
		ctl_back(m, cap, &mm);
	errno = e;
	return n;
}

/* The same for recvmmsg, MMSG_MAX messages a call at most (fewer than
 * asked is allowed), each control buffer up to MMSG_CTL. */
#define MMSG_MAX 16
#define MMSG_CTL 1024

static bool mmsg_cleanable(const struct mmsghdr *vec, unsigned vlen)
{
	for (unsigned i = 0; i < vlen && i < MMSG_MAX; i++)
		if (vec[i].msg_hdr.msg_controllen > MMSG_CTL)
			return false;
	return true;
}

static int recvmmsg_clean(int fd, struct mmsghdr *vec, unsigned vlen,
			  int flags, struct timespec *timeout)
{
	union {
		char buf[MMSG_MAX][MMSG_CTL + CTL_EXTRA];
		struct cmsghdr align;
	} ctl;
	struct mmsghdr mv[MMSG_MAX];
	unsigned k = vlen < MMSG_MAX ? vlen : MMSG_MAX;
	int n, e;

	for (unsigned i = 0; i < k; i++) {
		mv[i] = vec[i];
		mv[i].msg_hdr.msg_control = ctl.buf[i];
		mv[i].msg_hdr.msg_controllen = (vec[i].msg_hdr.msg_control ?
			vec[i].msg_hdr.msg_controllen : 0) + CTL_EXTRA;
	}
	n = REAL(recvmmsg)(fd, mv, k, flags, timeout);
	e = errno;
	for (int i = 0; i < n; i++) {
		vec[i].msg_len = mv[i].msg_len;
		ctl_back(&vec[i].msg_hdr, vec[i].msg_hdr.msg_control ?
			 vec[i].msg_hdr.msg_controllen : 0, &mv[i].msg_hdr);
	}
	errno = e;
	return n;
}

SHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	ssize_t n;

	if (SHIM_UNLIKELY(flags & MSG_ERRQUEUE))
		errqueue_read(fd);
	else if (SHIM_UNLIKELY(atomic_load_explicit(&shim_conf.rx_unfiltered,
						    memory_order_relaxed)) &&
		 m && m->msg_controllen <= CTL_MAX && shim_sock_armed(fd)) {
		n = recvmsg_clean(fd, m, flags);
		after(fd, n, m);
		return n;
	}
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
	if (SHIM_UNLIKELY(atomic_load_explicit(&shim_conf.rx_unfiltered,
					       memory_order_relaxed)) &&
	    !(flags & MSG_ERRQUEUE) && vec && vlen &&
	    mmsg_cleanable(vec, vlen) && shim_sock_armed(fd))
		n = recvmmsg_clean(fd, vec, vlen, flags, timeout);
	else
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
