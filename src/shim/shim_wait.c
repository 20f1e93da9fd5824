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

/* The stamped socket behind an error report, arming one never seen (a
 * socket inherited across exec() with stamps already queued). */
static struct shim_sock *err_sock(int fd)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);

	if (v == SHIM_FD_UNKNOWN)
		return shim_classify(fd);
	return shim_sock_armed(fd);
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

#define SEL_MAX 64		/* stamped sockets looked at per call */
#define SEL_WORDS (FD_SETSIZE / (8 * sizeof(unsigned long)))
#define BITS (8 * sizeof(unsigned long))

static bool bit(const fd_set *s, int fd)
{
	return s && (((const unsigned long *)s)[fd / BITS] >> (fd % BITS)) & 1;
}

static void clear_bit(fd_set *s, int fd)
{
	((unsigned long *)s)[fd / BITS] &= ~(1ul << (fd % BITS));
}

/* select reports a socket with POLLERR as readable and writable, and
 * does not say which it was. For each stamped socket in the results, one
 * zero-timeout poll of them all says what each is now: one with POLLERR
 * is settled (its stamps read, polled again). A bit the socket's state
 * now gives no ground for is cleared, whether it came from stamps still
 * queued or from stamps another thread of the program read meanwhile (its
 * send reads them): reading the socket would only say EAGAIN, or block.
 * A real error keeps both bits, as select() gives them. */
static int select_fix(int nfds, fd_set *rd, fd_set *wr, int r)
{
	struct pollfd p[SEL_MAX];
	struct shim_sock *sks[SEL_MAX];
	int k = 0, e = errno;

	for (int w = 0; w * (int)BITS < nfds && k < SEL_MAX; w++) {
		unsigned long bits = (rd ? ((unsigned long *)rd)[w] : 0) |
				     (wr ? ((unsigned long *)wr)[w] : 0);

		while (bits && k < SEL_MAX) {
			int fd = w * (int)BITS + __builtin_ctzl(bits);

			bits &= bits - 1;
			if (fd >= nfds)
				break;
			sks[k] = shim_sock_armed(fd);
			if (sks[k]) {
				p[k].fd = fd;
				p[k].events = POLLIN | POLLOUT;
				p[k].revents = 0;
				k++;
			}
		}
	}
	if (!k || REAL(poll)(p, (nfds_t)k, 0) < 0)
		goto out;
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
out:
	errno = e;
	return r;
}

/* Sets too large to copy are left alone (their stamps still read). */
static size_t set_bytes(int nfds)
{
	return ((size_t)nfds + BITS - 1) / BITS * sizeof(unsigned long);
}

static int select_any(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		      struct timeval *tv, const struct timespec *ts,
		      const sigset_t *sig, bool psel)
{
	unsigned long srd[SEL_WORDS], swr[SEL_WORDS], sex[SEL_WORDS];
	size_t bytes = nfds > 0 ? set_bytes(nfds) : 0;
	bool fix = bytes <= sizeof(srd);
	int64_t end = 0;
	struct timespec t, *tp = NULL;
	int r;

	if (fix) {
		if (rd)
			memcpy(srd, rd, bytes);
		if (wr)
			memcpy(swr, wr, bytes);
		if (ex)
			memcpy(sex, ex, bytes);
	}
	if (psel && ts) {
		end = ts_end(ts);
		t = *ts;
		tp = &t;
	}
	for (;;) {
		r = psel ? REAL(pselect)(nfds, rd, wr, ex, tp, sig) :
			   REAL(select)(nfds, rd, wr, ex, tv);
		if (r <= 0 || !fix)
			return r;
		r = select_fix(nfds, rd, wr, r);
		if (r > 0)
			return r;
		/* select() counts down tv itself (Linux); pselect's
		 * timespec is the caller's constant. */
		if (psel && tp) {
			t = ts_left(end);
			if (!t.tv_sec && !t.tv_nsec)
				return 0;
		} else if (!psel && tv && !tv->tv_sec && !tv->tv_usec) {
			return 0;
		}
		if (rd)
			memcpy(rd, srd, bytes);
		if (wr)
			memcpy(wr, swr, bytes);
		if (ex)
			memcpy(ex, sex, bytes);
	}
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

static int ep_fix(int epfd, struct epoll_event *ev, int n)
{
	int out = 0, e = errno;

	for (int i = 0; i < n; i++) {
		struct shim_sock *sk = NULL;
		uint32_t reg = 0;
		short now;
		int fd = -1;

		if (SHIM_UNLIKELY(ev[i].events & EPOLLERR)) {
			fd = shim_ep_lookup(epfd, ev[i].data.u64, &reg);
			if (fd >= 0)
				sk = err_sock(fd);
		}
		if (sk && stamps_only(sk, fd, (short)(reg & (EPOLLIN | EPOLLOUT |
							     EPOLLPRI)), &now)) {
			ev[i].events &= ~(uint32_t)EPOLLERR;
			if (!ev[i].events) {
				/* Dropped. A one-shot registration fired
				 * for nothing is armed again. */
				if (reg & EPOLLONESHOT) {
					struct epoll_event re = {
						.events = reg,
						.data = ev[i].data,
					};

					REAL(epoll_ctl)(epfd, EPOLL_CTL_MOD, fd,
							&re);
				}
				continue;
			}
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
