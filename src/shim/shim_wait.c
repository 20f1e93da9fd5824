/* shim_wait.c — poll, select and epoll: hiding the POLLERR/EPOLLERR that
 * queued stamps raise.
 *
 * A socket's error queue holding anything makes poll report POLLERR
 * (tcp_poll(), udp_poll()), select report the socket readable and
 * writable, and epoll report EPOLLERR, which a program takes for a broken
 * connection. After the real call, every descriptor reported with the
 * error bit that is a stamped socket is settled (shim_settle(): its stamps
 * read, then a zero-timeout poll of it): when the bit is gone it came
 * only from stamps and is cleared; when it stays it is a real error
 * (RST, ICMP refused: sk_err) and reaches the program as it came. An
 * entry left with nothing is dropped; a call left with nothing waits
 * again for what remains of its timeout. The fast path, no error bit
 * reported, costs a scan of the results.
 */
#include "shim/shim.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* The stamped socket behind an error report, arming one never seen (a
 * socket inherited across exec() with stamps already queued). */
static struct shim_sock *err_sock(int fd)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);

	if (v == SHIM_FD_UNKNOWN)
		return shim_classify(fd);
	return shim_sock_queue_ours(fd);
}

/* Returns true when the error bit came only from stamps (now read). */
static bool stamps_only(struct shim_sock *sk, int fd, short events,
			short *now)
{
	*now = shim_settle(sk, fd, events);
	if (*now & POLLERR) {
		SHIM_COUNT(real_err);
		return false;
	}
	SHIM_COUNT(masked);
	return true;
}

/* Milliseconds left until end (CLOCK_MONOTONIC ns), rounded up. */
static int left_ms(int64_t end)
{
	int64_t left = end - nstime_now(CLOCK_MONOTONIC);

	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

static int64_t ts_end(const struct timespec *t)
{
	return nstime_now(CLOCK_MONOTONIC) + nstime_of(t);
}

static struct timespec ts_left(int64_t end)
{
	int64_t left = end - nstime_now(CLOCK_MONOTONIC);
	struct timespec t = { 0, 0 };

	if (left > 0) {
		t.tv_sec = left / 1000000000LL;
		t.tv_nsec = left % 1000000000LL;
	}
	return t;
}

/* ---- poll ---- */

static int poll_fix(struct pollfd *fds, nfds_t n, int r)
{
	int e = errno;

	for (nfds_t i = 0; i < n; i++) {
		struct shim_sock *sk;
		short now;

		if (SHIM_LIKELY(!(fds[i].revents & POLLERR)))
			continue;
		sk = err_sock(fds[i].fd);
		if (!sk || !stamps_only(sk, fds[i].fd, fds[i].events, &now))
			continue;
		fds[i].revents &= ~POLLERR;
		if (!fds[i].revents)
			r--;
	}
	errno = e;
	return r;
}

enum poll_kind { P_POLL, P_POLL_CHK, P_PPOLL, P_PPOLL_CHK };

static int poll_any(enum poll_kind k, struct pollfd *fds, nfds_t n,
		    int timeout, const struct timespec *ts,
		    const sigset_t *sig, size_t fdslen)
{
	int64_t end = 0;
	struct timespec t, *tp = NULL;
	int r;

	if (k == P_POLL || k == P_POLL_CHK) {
		if (timeout > 0)
			end = nstime_now(CLOCK_MONOTONIC) + (int64_t)timeout * 1000000LL;
	} else if (ts) {
		end = ts_end(ts);
		t = *ts;
		tp = &t;
	}
	for (;;) {
		switch (k) {
		case P_POLL:
			r = REAL(poll)(fds, n, timeout);
			break;
		case P_POLL_CHK:
			r = REAL(poll_chk)(fds, n, timeout, fdslen);
			break;
		case P_PPOLL:
			r = REAL(ppoll)(fds, n, tp, sig);
			break;
		default:
			r = REAL(ppoll_chk)(fds, n, tp, sig, fdslen);
			break;
		}
		if (r <= 0)
			return r;
		r = poll_fix(fds, n, r);
		if (r > 0)
			return r;
		/* Nothing left but stamps: wait again, for what remains. */
		if (k == P_POLL || k == P_POLL_CHK) {
			if (timeout == 0)
				return 0;
			if (timeout > 0 && (timeout = left_ms(end)) == 0)
				return 0;
		} else if (tp) {
			t = ts_left(end);
			if (!t.tv_sec && !t.tv_nsec)
				return 0;
		}
	}
}

SHIM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	return poll_any(P_POLL, fds, n, timeout, NULL, NULL, 0);
}

SHIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			   size_t fdslen)
{
	return poll_any(P_POLL_CHK, fds, n, timeout, NULL, NULL, fdslen);
}

SHIM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		      const sigset_t *sig)
{
	return poll_any(P_PPOLL, fds, n, 0, ts, sig, 0);
}

SHIM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
			    const struct timespec *ts, const sigset_t *sig,
			    size_t fdslen)
{
	return poll_any(P_PPOLL_CHK, fds, n, 0, ts, sig, fdslen);
}

/* ---- select ---- */

#define SEL_CHUNK 64		/* stamped sockets polled at once */
#define SEL_STACK_FDS 4096	/* sets up to this size copied on the stack */
#define BITS (8 * sizeof(unsigned long))

static bool bit(const fd_set *s, int fd)
{
	return s && (((const unsigned long *)s)[fd / BITS] >> (fd % BITS)) & 1;
}

static void clear_bit(fd_set *s, int fd)
{
	((unsigned long *)s)[fd / BITS] &= ~(1ul << (fd % BITS));
}

/* One chunk of stamped sockets in the results: one zero-timeout poll
 * says what each is now; bits its state gives no ground for are
 * cleared. Returns the new count. */
static int select_chunk(fd_set *rd, fd_set *wr, struct pollfd *p,
			struct shim_sock **sks, int k, int r)
{
	if (REAL(poll)(p, (nfds_t)k, 0) < 0)
		return r;
	for (int i = 0; i < k; i++) {
		short now = p[i].revents;

		if ((now & POLLERR) &&
		    !stamps_only(sks[i], p[i].fd, POLLIN | POLLOUT, &now))
			continue;
		if (bit(rd, p[i].fd) &&
		    !(now & (POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP))) {
			clear_bit(rd, p[i].fd);
			r--;
		}
		if (bit(wr, p[i].fd) &&
		    !(now & (POLLOUT | POLLWRNORM | POLLWRBAND))) {
			clear_bit(wr, p[i].fd);
			r--;
		}
	}
	return r;
}

/* select reports a socket with POLLERR as readable and writable, and
 * does not say which it was. Every stamped socket in the results, in
 * chunks, is polled with a zero timeout: one with POLLERR is settled
 * (its stamps read, polled again). A bit the socket's state now gives no
 * ground for is cleared, whether it came from stamps still queued or
 * from stamps another thread of the program read meanwhile (its send
 * reads them): reading the socket would only say EAGAIN, or block. A
 * real error keeps both bits, as select() gives them. */
static int select_fix(int nfds, fd_set *rd, fd_set *wr, int r)
{
	struct pollfd p[SEL_CHUNK];
	struct shim_sock *sks[SEL_CHUNK];
	int k = 0, e = errno;

	for (int w = 0; w * (int)BITS < nfds; w++) {
		unsigned long bits = (rd ? ((unsigned long *)rd)[w] : 0) |
				     (wr ? ((unsigned long *)wr)[w] : 0);

		while (bits) {
			int fd = w * (int)BITS + __builtin_ctzl(bits);

			bits &= bits - 1;
			if (fd >= nfds)
				break;
			sks[k] = shim_sock_queue_ours(fd);
			if (!sks[k])
				continue;
			p[k].fd = fd;
			p[k].events = POLLIN | POLLOUT;
			p[k].revents = 0;
			if (++k == SEL_CHUNK) {
				r = select_chunk(rd, wr, p, sks, k, r);
				k = 0;
			}
		}
	}
	if (k)
		r = select_chunk(rd, wr, p, sks, k, r);
	errno = e;
	return r;
}

static size_t set_bytes(int nfds)
{
	return ((size_t)nfds + BITS - 1) / BITS * sizeof(unsigned long);
}

/* The caller's sets, kept to wait again with when only stamps were
 * found: on the stack up to SEL_STACK_FDS descriptors (nfds above
 * FD_SETSIZE is allowed; the program then sizes its sets itself). */
static int select_any(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		      struct timeval *tv, const struct timespec *ts,
		      const sigset_t *sig, bool psel)
{
	unsigned long stack[3][SEL_STACK_FDS / BITS];
	unsigned long *keep = stack[0];
	size_t bytes = nfds > 0 ? set_bytes(nfds) : 0;
	fd_set *sets[3] = { rd, wr, ex };
	int64_t end = 0;
	struct timespec t, *tp = NULL;
	int r;

	if (bytes > sizeof(stack[0])) {
		/* Rare (thousands of descriptors in a select): mmap, not
		 * malloc, as select may be called from a handler. */
		keep = mmap(NULL, 3 * bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (keep == MAP_FAILED)
			keep = NULL;
	}
	for (int i = 0; keep && i < 3; i++)
		if (sets[i])
			memcpy((char *)keep + i * bytes, sets[i], bytes);
	if (psel && ts) {
		end = ts_end(ts);
		t = *ts;
		tp = &t;
	}
	for (;;) {
		r = psel ? REAL(pselect)(nfds, rd, wr, ex, tp, sig) :
			   REAL(select)(nfds, rd, wr, ex, tv);
		if (r <= 0)
			break;
		r = select_fix(nfds, rd, wr, r);
		if (r > 0 || !keep)
			break;
		/* select() counts down tv itself (Linux); pselect's
		 * timespec is the caller's constant. */
		if (psel && tp) {
			t = ts_left(end);
			if (!t.tv_sec && !t.tv_nsec)
				break;
		} else if (!psel && tv && !tv->tv_sec && !tv->tv_usec) {
			break;
		}
		for (int i = 0; i < 3; i++)
			if (sets[i])
				memcpy(sets[i], (char *)keep + i * bytes, bytes);
	}
	if (keep && keep != stack[0]) {
		int e = errno;

		munmap(keep, 3 * bytes);
		errno = e;
	}
	return r;
}

SHIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		       struct timeval *tv)
{
	return select_any(nfds, rd, wr, ex, tv, NULL, NULL, false);
}

SHIM_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			const struct timespec *ts, const sigset_t *sig)
{
	return select_any(nfds, rd, wr, ex, NULL, ts, sig, true);
}

/* ---- epoll ---- */

#define EP_SHARED_MAX 16	/* descriptors sharing one data value */

/* Whether the EPOLLERR of an event came only from stamps: every
 * descriptor registered with its data is settled; any of them left with
 * an error (or not ours to settle) may be what raised it. */
static bool ep_stamps_only(int epfd, struct epoll_event *e)
{
	int fds[EP_SHARED_MAX], k;
	uint32_t reg[EP_SHARED_MAX];

	k = shim_ep_lookup(epfd, e->data.u64, fds, reg, EP_SHARED_MAX);
	if (k <= 0)
		return false;
	for (int j = 0; j < k; j++) {
		struct shim_sock *sk = err_sock(fds[j]);
		short now;

		if (k == 1 && !sk)
			return false;
		if (sk && stamps_only(sk, fds[j], (short)(reg[j] & (EPOLLIN |
					EPOLLOUT | EPOLLPRI)), &now))
			continue;
		if (!sk) {
			/* Not a stamped socket: its own error, if any. */
			struct pollfd p = { .fd = fds[j], .events = 0 };

			if (REAL(poll)(&p, 1, 0) == 0 || !(p.revents & POLLERR))
				continue;
		}
		return false;
	}
	if (e->events & ~(uint32_t)EPOLLERR)
		return true;
	/* Dropped. One-shot registrations fired for nothing are armed
	 * again, each with its own events. */
	for (int j = 0; j < k; j++)
		if (reg[j] & EPOLLONESHOT) {
			struct epoll_event re = { .events = reg[j],
						  .data = e->data };

			REAL(epoll_ctl)(epfd, EPOLL_CTL_MOD, fds[j], &re);
		}
	return true;
}

static int ep_fix(int epfd, struct epoll_event *ev, int n)
{
	int out = 0, e = errno;

	for (int i = 0; i < n; i++) {
		if (SHIM_UNLIKELY(ev[i].events & EPOLLERR) &&
		    ep_stamps_only(epfd, &ev[i])) {
			ev[i].events &= ~(uint32_t)EPOLLERR;
			if (!ev[i].events)
				continue;
		}
		if (out != i)
			ev[out] = ev[i];
		out++;
	}
	errno = e;
	return out;
}

static bool any_err(const struct epoll_event *ev, int n)
{
	for (int i = 0; i < n; i++)
		if (ev[i].events & EPOLLERR)
			return true;
	return false;
}

enum ep_kind { E_WAIT, E_PWAIT, E_PWAIT2 };

static int ep_any(enum ep_kind k, int epfd, struct epoll_event *ev, int max,
		  int timeout, const struct timespec *ts, const sigset_t *sig)
{
	int64_t end = 0;
	struct timespec t, *tp = NULL;
	int r;

	if (k == E_PWAIT2) {
		if (!REAL(epoll_pwait2)) {
			errno = ENOSYS;
			return -1;
		}
		if (ts) {
			end = ts_end(ts);
			t = *ts;
			tp = &t;
		}
	} else if (timeout > 0) {
		end = nstime_now(CLOCK_MONOTONIC) + (int64_t)timeout * 1000000LL;
	}
	for (;;) {
		if (k == E_WAIT)
			r = REAL(epoll_wait)(epfd, ev, max, timeout);
		else if (k == E_PWAIT)
			r = REAL(epoll_pwait)(epfd, ev, max, timeout, sig);
		else
			r = shim_real.epoll_pwait2(epfd, ev, max, tp, sig);
		if (r <= 0 || SHIM_LIKELY(!any_err(ev, r)))
			return r;
		r = ep_fix(epfd, ev, r);
		if (r > 0)
			return r;
		if (k == E_PWAIT2) {
			if (tp) {
				t = ts_left(end);
				if (!t.tv_sec && !t.tv_nsec)
					return 0;
			}
		} else if (timeout == 0 ||
			   (timeout > 0 && (timeout = left_ms(end)) == 0)) {
			return 0;
		}
	}
}

SHIM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max,
			   int timeout)
{
	return ep_any(E_WAIT, epfd, ev, max, timeout, NULL, NULL);
}

SHIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			    int timeout, const sigset_t *sig)
{
	return ep_any(E_PWAIT, epfd, ev, max, timeout, NULL, sig);
}

SHIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			     const struct timespec *ts, const sigset_t *sig)
{
	return ep_any(E_PWAIT2, epfd, ev, max, 0, ts, sig);
}
