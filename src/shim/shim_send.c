/* shim_send.c — the send calls: TCP sends are only counted (the kernel
 * keys their stamps by sequence number); each UDP datagram is recorded
 * (destination, length, payload hash) under the id its stamp will carry.
 *
 * UDP ids: on Linux 6.13 and later the id goes with each send
 * (SCM_TS_OPT_ID), chosen by us from SHIM_UDP_ID0 up, so the id of every
 * datagram is known whatever other threads send meanwhile, and stamps of
 * datagrams sent around us (sendfile, io_uring: the kernel's own count,
 * from 0) can never be taken for ours. Every UDP send is then a
 * sendmsg() with the program's control messages and ours, and takes no
 * lock. Before 6.13, the kernel counts from 0 when OPT_ID is set; the
 * socket's lock keeps our count in step with the kernel's across
 * threads, and a send that failed in a way that may have used an id
 * steps us aside. That lock is only tried, a bounded number of times: a
 * signal handler that interrupted its holder sends without it, its
 * datagram counted but not recorded (its stamp then keys no frame, and
 * capd counts it as found none; it is never joined to another).
 */
#include "shim/shim.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/sendfile.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define SHIM_CTL_ROOM 1024	/* the program's control messages and ours */
#define MMSG_CHUNK 16
#define KERNEL_ID_TRIES 100000	/* yields before a send goes unrecorded */

enum how { VIA_SEND, VIA_SENDTO, VIA_SENDMSG, VIA_WRITE, VIA_WRITEV };

/* A send call as the program made it. */
struct call {
	enum how how;
	int fd;
	const void *buf;
	size_t len;
	int flags;
	const struct sockaddr *to;
	socklen_t tolen;
	const struct msghdr *msg;
	const struct iovec *iov;
	int iovcnt;
};

static ssize_t plain(const struct call *c)
{
	switch (c->how) {
	case VIA_SEND:
		return REAL(send)(c->fd, c->buf, c->len, c->flags);
	case VIA_SENDTO:
		return REAL(sendto)(c->fd, c->buf, c->len, c->flags, c->to,
				    c->tolen);
	case VIA_SENDMSG:
		return REAL(sendmsg)(c->fd, c->msg, c->flags);
	case VIA_WRITE:
		return REAL(write)(c->fd, c->buf, c->len);
	default:
		return REAL(writev)(c->fd, c->iov, c->iovcnt);
	}
}

/* Control messages that say the program stamps itself or sends a
 * datagram that is not one send. Returns the reason, or -1. */
static int ctl_conflict(const struct msghdr *m)
{
	if (!m->msg_control || !m->msg_controllen)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c;
	     c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    (c->cmsg_type == SO_TIMESTAMPING_OLD ||
		     c->cmsg_type == 65 /* SO_TIMESTAMPING_NEW */ ||
		     c->cmsg_type == 81 /* SCM_TS_OPT_ID */))
			return SHIM_ASIDE_APP_TSTAMP;
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT)
			return SHIM_ASIDE_CORK;
	}
	return -1;
}

/* Failures that happen before the kernel takes an id (or give it back). */
static bool id_unused(int e)
{
	switch (e) {
	case EAGAIN: case EINTR: case EMSGSIZE: case EINVAL: case EFAULT:
	case EDESTADDRREQ: case ENOTCONN: case EISCONN: case EAFNOSUPPORT:
	case ENETUNREACH: case EHOSTUNREACH: case EACCES: case ENOMEM:
	case EBADF: case ENOTSOCK: case EOPNOTSUPP: case ECONNREFUSED:
		return true;
	default:
		return false;
	}
}

static ssize_t udp_send(struct shim_sock *sk, const struct call *c,
			const struct msghdr *m)
{
	ssize_t n;
	int e, why;
	uint32_t id;

	if (c->flags & MSG_MORE) {
		shim_aside(sk, c->fd, SHIM_ASIDE_CORK);
		return plain(c);
	}
	why = ctl_conflict(m);
	if (why >= 0) {
		shim_aside(sk, c->fd, (enum shim_aside)why);
		return plain(c);
	}
	if (sk->ids_ours) {
		union {
			char buf[SHIM_CTL_ROOM];
			struct cmsghdr align;
		} ctl;
		struct msghdr mm = *m;
		int len;

		id = atomic_fetch_add(&sk->next_id, 1);
		len = shim_udp_ctl_add(m, ctl.buf, sizeof(ctl.buf), id);
		if (len < 0)
			return plain(c);	/* its stamp: not keyed */
		mm.msg_control = ctl.buf;
		mm.msg_controllen = (size_t)len;
		n = REAL(sendmsg)(c->fd, &mm, c->flags);
		e = errno;
		if (n >= 0)
			shim_udp_record(sk, c->fd, id, m, (size_t)n);
	} else {
		bool lost, locked = shim_sock_trylock(sk, KERNEL_ID_TRIES);

		n = plain(c);
		e = errno;
		if (n >= 0) {
			id = atomic_fetch_add(&sk->next_id, 1);
			if (locked)
				shim_udp_record(sk, c->fd, id, m, (size_t)n);
		}
		lost = n < 0 && !id_unused(e);
		if (locked)
			shim_sock_unlock(sk);
		if (lost)
			shim_aside(sk, c->fd, SHIM_ASIDE_FAILED);
	}
	shim_sent(sk, c->fd);
	errno = e;
	return n;
}

static void tcp_done(struct shim_sock *sk, int fd, ssize_t n)
{
	int e = errno;

	if (n > 0)
		shim_tcp_sent(sk, fd, (size_t)n);
	errno = e;
}

static ssize_t via(struct call *c)
{
	struct shim_sock *sk = shim_sock_for_send(c->fd);
	struct iovec one = { (void *)c->buf, c->len };
	struct msghdr m = { 0 };
	ssize_t n;

	if (SHIM_UNLIKELY(!sk) && (c->to || (c->how == VIA_SENDMSG && c->msg)))
		sk = shim_sock_for_dest(c->fd, c->to ? c->to : c->msg->msg_name,
					c->to ? c->tolen : c->msg->msg_namelen);
	if (SHIM_LIKELY(!sk))
		return plain(c);
	if (sk->tcp) {
		int why = c->how == VIA_SENDMSG ? ctl_conflict(c->msg) : -1;

		if (why >= 0)
			shim_aside(sk, c->fd, (enum shim_aside)why);
		n = plain(c);
		tcp_done(sk, c->fd, n);
		return n;
	}
	switch (c->how) {
	case VIA_SENDMSG:
		m = *c->msg;
		break;
	case VIA_WRITEV:
		m.msg_iov = (struct iovec *)c->iov;
		m.msg_iovlen = (size_t)(c->iovcnt < 0 ? 0 : c->iovcnt);
		break;
	default:
		m.msg_iov = &one;
		m.msg_iovlen = 1;
		if (c->how == VIA_SENDTO && c->to) {
			m.msg_name = (void *)c->to;
			m.msg_namelen = c->tolen;
		}
	}
	/* An empty write() or writev() may be no datagram to the kernel:
	 * left as it is, not recorded. */
	if (c->how == VIA_WRITE || c->how == VIA_WRITEV) {
		size_t total = 0;

		for (size_t i = 0; i < m.msg_iovlen; i++)
			total += m.msg_iov[i].iov_len;
		if (!total)
			return plain(c);
	}
	return udp_send(sk, c, &m);
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct call c = { .how = VIA_SEND, .fd = fd, .buf = buf, .len = len,
			  .flags = flags };

	return via(&c);
}

SHIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			   const struct sockaddr *to, socklen_t tolen)
{
	struct call c = { .how = VIA_SENDTO, .fd = fd, .buf = buf, .len = len,
			  .flags = flags, .to = to, .tolen = tolen };

	return via(&c);
}

SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct call c = { .how = VIA_SENDMSG, .fd = fd, .msg = msg,
			  .flags = flags };

	return via(&c);
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct call c = { .how = VIA_WRITE, .fd = fd, .buf = buf, .len = len };

	return via(&c);
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct call c = { .how = VIA_WRITEV, .fd = fd, .iov = iov,
			  .iovcnt = iovcnt };

	return via(&c);
}

/* sendmmsg on UDP with our ids: in chunks, each message with its own id
 * in its control messages. A chunk sent in part ends the call, as the
 * kernel's own sendmmsg does. */
static int udp_mmsg_ours(struct shim_sock *sk, int fd, struct mmsghdr *vec,
			 unsigned vlen, int flags)
{
	union {
		char buf[MMSG_CHUNK][256];
		struct cmsghdr align;
	} ctl;
	struct mmsghdr mv[MMSG_CHUNK];
	unsigned done = 0;
	int e = 0;

	while (done < vlen) {
		unsigned k = vlen - done < MMSG_CHUNK ? vlen - done : MMSG_CHUNK;
		uint32_t id0 = atomic_fetch_add(&sk->next_id, k);
		int r;

		for (unsigned j = 0; j < k; j++) {
			int len;

			mv[j] = vec[done + j];
			len = shim_udp_ctl_add(&vec[done + j].msg_hdr, ctl.buf[j],
					       sizeof(ctl.buf[j]), id0 + j);
			if (len < 0) {
				k = j;	/* send what fits; the rest next call */
				break;
			}
			mv[j].msg_hdr.msg_control = ctl.buf[j];
			mv[j].msg_hdr.msg_controllen = (size_t)len;
		}
		if (!k) {
			/* Control messages too long to add ours: sent as
			 * they are (its stamp is not keyed). */
			r = REAL(sendmmsg)(fd, vec + done, 1, flags);
			if (r <= 0)
				return done ? (int)done : r;
			done += (unsigned)r;
			continue;
		}
		r = REAL(sendmmsg)(fd, mv, k, flags);
		if (r < 0) {
			if (done)
				break;
			return -1;
		}
		e = errno;
		for (int j = 0; j < r; j++) {
			vec[done + (unsigned)j].msg_len = mv[j].msg_len;
			shim_udp_record(sk, fd, id0 + (unsigned)j,
					&vec[done + (unsigned)j].msg_hdr,
					mv[j].msg_len);
		}
		done += (unsigned)r;
		if ((unsigned)r < k)
			break;
	}
	errno = e;
	return (int)done;
}

SHIM_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned vlen, int flags)
{
	struct shim_sock *sk = shim_sock_for_send(fd);
	int r, e;

	for (unsigned i = 0; SHIM_UNLIKELY(!sk) && vec && i < vlen && i < 64; i++)
		sk = shim_sock_for_dest(fd, vec[i].msg_hdr.msg_name,
					vec[i].msg_hdr.msg_namelen);
	if (SHIM_LIKELY(!sk))
		return REAL(sendmmsg)(fd, vec, vlen, flags);
	for (unsigned i = 0; i < vlen; i++) {
		int why = ctl_conflict(&vec[i].msg_hdr);

		if (why < 0 && !sk->tcp && (flags & MSG_MORE))
			why = SHIM_ASIDE_CORK;
		if (why >= 0) {
			shim_aside(sk, fd, (enum shim_aside)why);
			return REAL(sendmmsg)(fd, vec, vlen, flags);
		}
	}
	if (sk->tcp) {
		size_t total = 0;

		r = REAL(sendmmsg)(fd, vec, vlen, flags);
		for (int i = 0; i < r; i++)
			total += vec[i].msg_len;
		tcp_done(sk, fd, (ssize_t)total);
		return r;
	}
	if (sk->ids_ours) {
		r = udp_mmsg_ours(sk, fd, vec, vlen, flags);
		e = errno;
	} else {
		bool locked = shim_sock_trylock(sk, KERNEL_ID_TRIES);

		r = REAL(sendmmsg)(fd, vec, vlen, flags);
		e = errno;
		for (int i = 0; i < r; i++) {
			uint32_t id = atomic_fetch_add(&sk->next_id, 1);

			if (locked)
				shim_udp_record(sk, fd, id, &vec[i].msg_hdr,
						vec[i].msg_len);
		}
		if (locked)
			shim_sock_unlock(sk);
		if (r < 0 && !id_unused(e))
			shim_aside(sk, fd, SHIM_ASIDE_FAILED);
	}
	shim_sent(sk, fd);
	errno = e;
	return r;
}

/* ---- what cannot be stamped this way ---- */

/* out is about to carry data the program did not hand us. TCP: the
 * kernel stamps it like any send (MSG_SPLICE_PAGES goes through
 * tcp_sendmsg_locked()) and its keys are sequence numbers: handed over
 * as usual. UDP: its datagrams take ids we never gave: step aside. */
static struct shim_sock *unstampable(int out, const char *what)
{
	struct shim_sock *sk = shim_sock_for_send(out);

	if (!sk)
		return NULL;
	if (!strcmp(what, "sendfile"))
		SHIM_COUNT(sendfile);
	else
		SHIM_COUNT(splice);
	if (!sk->tcp) {
		shim_log_once(LOG_NOTICE, "%s on a stamped UDP socket (fd %d): "
			      "stepping aside from it", what, out);
		shim_aside(sk, out, SHIM_ASIDE_UNSTAMPABLE);
		return NULL;
	}
	shim_log_once(LOG_INFO, "%s on a stamped TCP socket (fd %d): the "
		      "kernel stamps it like a send; keyed and handed over",
		      what, out);
	return sk;
}

/* After the real call: what it sent on a socket unstampable() handed
 * over, keyed as a TCP send's. */
static ssize_t unstampable_sent(struct shim_sock *sk, int out, ssize_t n)
{
	if (sk)
		tcp_done(sk, out, n);
	return n;
}

SHIM_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	struct shim_sock *sk = unstampable(out, "sendfile");

	return unstampable_sent(sk, out, REAL(sendfile)(out, in, off, count));
}

SHIM_EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
	struct shim_sock *sk = unstampable(out, "sendfile");

	return unstampable_sent(sk, out, REAL(sendfile64)(out, in, off, count));
}

SHIM_EXPORT ssize_t splice(int in, off_t *in_off, int out, off_t *out_off,
			   size_t len, unsigned flags)
{
	struct shim_sock *sk = NULL;

	if (SHIM_FD_SOCK(shim_table_get(&shim_socks, out)))
		sk = unstampable(out, "splice");
	return unstampable_sent(sk, out,
				REAL(splice)(in, in_off, out, out_off, len, flags));
}

/* io_uring sends go around every wrapper: TCP stamps still come (keyed
 * by sequence, read at the next wrapped call on the socket), UDP ids do
 * not stay ours. Only seen when the program calls liburing's shared
 * library. */
static void uring_seen(void)
{
	SHIM_COUNT(io_uring);
	atomic_store(&shim_conf.udp_off, true);
	shim_sock_udp_off();
	shim_log_once(LOG_NOTICE, "io_uring in use: UDP sockets are no longer "
		      "stamped (their datagrams may go around the shim); TCP "
		      "stamps still are, and POLLERR seen through io_uring "
		      "polls is not hidden");
}

SHIM_EXPORT int io_uring_queue_init(unsigned entries, void *ring,
				    unsigned flags)
{
	uring_seen();
	if (!REAL(io_uring_queue_init))
		return -ENOSYS;
	return shim_real.io_uring_queue_init(entries, ring, flags);
}

SHIM_EXPORT int io_uring_queue_init_params(unsigned entries, void *ring,
					   void *p)
{
	uring_seen();
	if (!REAL(io_uring_queue_init_params))
		return -ENOSYS;
	return shim_real.io_uring_queue_init_params(entries, ring, p);
}
