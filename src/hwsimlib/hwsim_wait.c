/* hwsim_wait.c — libtapless-hwsim.so's waits: poll, ppoll, select,
 * pselect and the epoll calls on sockets whose TX stamps are held back
 * (tx-late, hwsim_sock.c), woken when one comes due and not before; the
 * epoll registrations they follow, and what close() forgets of them.
 * hwsim_preload.c says what the library answers as a whole.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "hwsim/hwsim_held.h"
#include "hwsimlib/hwsim_private.h"

/* ---- waits ---- */

/* What each socket is registered for in which epoll instance (two at
 * most a socket: the program's and, under tapless-stamp, its reaper's),
 * for the events a held message raises when due. */
#define HWSIM_EPREGS 2

struct hwsim_epreg {
	int epfd1;		/* the instance + 1; 0: slot free */
	bool armed;		/* EPOLLONESHOT: not yet reported */
	uint32_t events;
	uint64_t data;
};

static struct hwsim_epreg epreg[HWSIM_FDS][HWSIM_EPREGS];
static int epreg_hi = -1;	/* highest fd registered */

/* With held_mu: fd's slot in instance epfd (-1: a free slot), or NULL. */
static struct hwsim_epreg *hwsim_epreg(int epfd, int fd)
{
	for (int i = 0; i < HWSIM_EPREGS; i++)
		if (epreg[fd][i].epfd1 == epfd + 1)
			return &epreg[fd][i];
	return NULL;
}

/* A descriptor closed: its ring, its registrations, and an instance's
 * registrations of others. */
void hwsim_forget(int fd)
{
	if (!hwsim_fdtab[fd].held && !hwsim_fdtab[fd].epoll && !epreg[fd][0].epfd1 &&
	    !epreg[fd][1].epfd1)
		return;
	pthread_mutex_lock(&hwsim_held_mu);
	if (hwsim_fdtab[fd].held) {
		atomic_fetch_sub(&hwsim_held_total, hwsim_held_count(hwsim_fdtab[fd].held));
		free(hwsim_fdtab[fd].held);
		hwsim_fdtab[fd].held = NULL;
	}
	memset(epreg[fd], 0, sizeof(epreg[fd]));
	if (hwsim_fdtab[fd].epoll) {
		for (int k = 0; k <= epreg_hi; k++)
			for (int i = 0; i < HWSIM_EPREGS; i++)
				if (epreg[k][i].epfd1 == fd + 1)
					epreg[k][i].epfd1 = 0;
		hwsim_fdtab[fd].epoll = false;
	}
	pthread_mutex_unlock(&hwsim_held_mu);
}

HWSIM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct hwsim_epreg *r;
	int rc;

	REAL(epoll_ctl);
	rc = hwsim_real_epoll_ctl(epfd, op, fd, ev);
	if (rc || !hwsim_prog_host || fd < 0 || fd >= HWSIM_FDS || epfd < 0 ||
	    epfd >= HWSIM_FDS)
		return rc;
	pthread_mutex_lock(&hwsim_held_mu);
	hwsim_fdtab[epfd].epoll = true;
	r = hwsim_epreg(epfd, fd);
	if (op == EPOLL_CTL_DEL) {
		if (r)
			r->epfd1 = 0;
	} else if (ev) {
		if (!r && op == EPOLL_CTL_ADD)
			r = hwsim_epreg(-1, fd);	/* a free slot */
		if (r) {	/* else a third instance: not followed */
			*r = (struct hwsim_epreg){ .epfd1 = epfd + 1,
				.armed = true, .events = ev->events,
				.data = ev->data.u64 };
			if (fd > epreg_hi)
				epreg_hi = fd;
		}
	}
	pthread_mutex_unlock(&hwsim_held_mu);
	return rc;
}

/* A wait on a socket that may hold messages looks again at least this
 * often: another thread may have held a message (read it from the kernel)
 * since the wait began, to be due before the wait would end. */
#define HWSIM_LATE_STEP_NS 10000000LL

/* Milliseconds from now to the earliest of deadline (-1: none), due
 * (INT64_MAX: none) and the next look, rounded up. */
static int hwsim_wait_ms(int64_t now, int64_t deadline, int64_t due)
{
	int64_t until = deadline < 0 ? due : (due < deadline ? due : deadline);

	if (until > now + HWSIM_LATE_STEP_NS)
		until = now + HWSIM_LATE_STEP_NS;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

static int64_t hwsim_deadline_ts(const struct timespec *ts)
{
	return ts ? hwsim_mono_now() + hwsim_ts_ns(ts) : -1;
}

static int64_t hwsim_deadline_ms(int ms)
{
	return ms < 0 ? -1 : hwsim_mono_now() + ms * 1000000LL;
}

/* A wait of any kind on sockets that hold, or may soon hold, messages:
 * in steps no longer than to the earliest due (and HWSIM_LATE_STEP_NS),
 * reporting what is due. */

static bool hwsim_poll_ours(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (hwsim_held_any(fds[i].fd) || hwsim_late_sock(fds[i].fd))
			return true;
	return false;
}

static int hwsim_poll_late(struct pollfd *fds, nfds_t n, int64_t deadline,
			   const sigset_t *sig)
{
	for (;;) {
		int64_t now = hwsim_mono_now(), due = INT64_MAX;
		struct timespec ts;
		int r, cnt = 0;

		pthread_mutex_lock(&hwsim_held_mu);
		for (nfds_t i = 0; i < n; i++) {
			int64_t d = hwsim_due(fds[i].fd);

			if (d < due)
				due = d;
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		hwsim_ns_ts(hwsim_wait_ms(now, deadline, due) * 1000000LL, &ts);
		r = hwsim_real_ppoll(fds, n, &ts, sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&hwsim_held_mu);
		now = hwsim_mono_now();
		for (nfds_t i = 0; i < n; i++) {
			struct pollfd *p = &fds[i];

			if ((p->revents & POLLERR) && hwsim_late_sock(p->fd))
				p->revents = hwsim_settle(p->fd, p->events);
			else if (hwsim_due(p->fd) <= now)
				p->revents |= hwsim_due_bits(p->fd);
			if (p->revents)
				cnt++;
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		if (cnt)
			return cnt;
		if (deadline >= 0 && hwsim_mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return hwsim_real_poll(fds, n, timeout);
	return hwsim_poll_late(fds, n, hwsim_deadline_ms(timeout), NULL);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);

HWSIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			    size_t fdslen)
{
	REAL(__poll_chk); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return hwsim_real___poll_chk(fds, n, timeout, fdslen);
	return hwsim_poll_late(fds, n, hwsim_deadline_ms(timeout), NULL);
}

HWSIM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *sig)
{
	REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return hwsim_real_ppoll(fds, n, ts, sig);
	return hwsim_poll_late(fds, n, hwsim_deadline_ts(ts), sig);
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *sig, size_t fdslen);

HWSIM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
			     const struct timespec *ts, const sigset_t *sig,
			     size_t fdslen)
{
	REAL(__ppoll_chk); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return hwsim_real___ppoll_chk(fds, n, ts, sig, fdslen);
	return hwsim_poll_late(fds, n, hwsim_deadline_ts(ts), sig);
}

/* select reports a socket with POLLERR readable and writable (where
 * asked), and POLLPRI as an exception, as the kernel maps them. */
static bool hwsim_select_ours(int nfds, const fd_set *rd, const fd_set *wr,
			      const fd_set *ex)
{
	if (nfds > FD_SETSIZE)
		return false;		/* sets of another size: not followed */
	for (int fd = 0; fd < nfds; fd++)
		if (((rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) ||
		     (ex && FD_ISSET(fd, ex))) &&
		    (hwsim_held_any(fd) || hwsim_late_sock(fd)))
			return true;
	return false;
}

static int hwsim_select_late(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			     int64_t deadline, const sigset_t *sig)
{
	fd_set in_rd, in_wr, in_ex;

	FD_ZERO(&in_rd);
	FD_ZERO(&in_wr);
	FD_ZERO(&in_ex);
	if (rd)
		in_rd = *rd;
	if (wr)
		in_wr = *wr;
	if (ex)
		in_ex = *ex;
	for (;;) {
		int64_t now = hwsim_mono_now(), due = INT64_MAX;
		struct timespec ts;
		int r, cnt = 0;

		pthread_mutex_lock(&hwsim_held_mu);
		for (int fd = 0; fd < nfds; fd++)
			if (FD_ISSET(fd, &in_rd) || FD_ISSET(fd, &in_wr) ||
			    FD_ISSET(fd, &in_ex)) {
				int64_t d = hwsim_due(fd);

				if (d < due)
					due = d;
			}
		pthread_mutex_unlock(&hwsim_held_mu);
		if (rd)
			*rd = in_rd;
		if (wr)
			*wr = in_wr;
		if (ex)
			*ex = in_ex;
		hwsim_ns_ts(hwsim_wait_ms(now, deadline, due) * 1000000LL, &ts);
		r = hwsim_real_pselect(nfds, rd, wr, ex, &ts, sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&hwsim_held_mu);
		now = hwsim_mono_now();
		for (int fd = 0; fd < nfds; fd++) {
			bool want_r = FD_ISSET(fd, &in_rd), want_w = FD_ISSET(fd, &in_wr),
			     want_x = FD_ISSET(fd, &in_ex);
			bool got_r = rd && FD_ISSET(fd, rd), got_w = wr && FD_ISSET(fd, wr),
			     got_x = ex && FD_ISSET(fd, ex);

			if ((got_r || got_w || got_x) && hwsim_late_sock(fd)) {
				short rev = hwsim_settle(fd, (short)((want_r ? POLLIN : 0) |
								    (want_w ? POLLOUT : 0) |
								    (want_x ? POLLPRI : 0)));

				got_r = want_r && (rev & (POLLIN | POLLHUP | POLLERR));
				got_w = want_w && (rev & (POLLOUT | POLLERR));
				got_x = want_x && (rev & POLLPRI);
			} else if ((want_r || want_w || want_x) && hwsim_due(fd) <= now) {
				got_r = want_r;
				got_w = want_w;
				got_x = want_x && (hwsim_due_bits(fd) & POLLPRI);
			}
			if (rd) {
				if (got_r)
					FD_SET(fd, rd);
				else
					FD_CLR(fd, rd);
			}
			if (wr) {
				if (got_w)
					FD_SET(fd, wr);
				else
					FD_CLR(fd, wr);
			}
			if (ex) {
				if (got_x)
					FD_SET(fd, ex);
				else
					FD_CLR(fd, ex);
			}
			cnt += got_r + got_w + got_x;
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		if (cnt)
			return cnt;
		if (deadline >= 0 && hwsim_mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			struct timeval *tv)
{
	int64_t deadline;
	int r;

	REAL(select); REAL(pselect);
	if (!hwsim_late_on() || !hwsim_select_ours(nfds, rd, wr, ex))
		return hwsim_real_select(nfds, rd, wr, ex, tv);
	deadline = tv ? hwsim_mono_now() + tv->tv_sec * 1000000000LL +
		tv->tv_usec * 1000LL : -1;
	r = hwsim_select_late(nfds, rd, wr, ex, deadline, NULL);
	if (tv) {
		/* Linux counts the time left down in tv. */
		int64_t left = deadline - hwsim_mono_now();

		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000000000LL;
		tv->tv_usec = left % 1000000000LL / 1000;
	}
	return r;
}

HWSIM_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			 const struct timespec *ts, const sigset_t *sig)
{
	REAL(pselect);
	if (!hwsim_late_on() || !hwsim_select_ours(nfds, rd, wr, ex))
		return hwsim_real_pselect(nfds, rd, wr, ex, ts, sig);
	return hwsim_select_late(nfds, rd, wr, ex, hwsim_deadline_ts(ts), sig);
}

/* Instance epfd follows a socket that holds, or may soon hold, messages. */
static bool hwsim_epoll_ours(int epfd)
{
	if (epfd < 0 || epfd >= HWSIM_FDS || !hwsim_fdtab[epfd].epoll)
		return false;
	for (int fd = 0; fd <= epreg_hi; fd++)
		if ((epreg[fd][0].epfd1 == epfd + 1 || epreg[fd][1].epfd1 == epfd + 1) &&
		    (hwsim_held_any(fd) || hwsim_late_sock(fd)))
			return true;
	return false;
}

/* With held_mu: the socket an event of instance epfd is of (by its
 * data, as registered), or -1. */
static int hwsim_epoll_fd(int epfd, uint64_t data)
{
	for (int fd = 0; fd <= epreg_hi; fd++)
		for (int i = 0; i < HWSIM_EPREGS; i++)
			if (epreg[fd][i].epfd1 == epfd + 1 && epreg[fd][i].data == data)
				return fd;
	return -1;
}

static int hwsim_epoll_late(int epfd, struct epoll_event *ev, int max,
			    int64_t deadline, const sigset_t *sig)
{
	for (;;) {
		int64_t now = hwsim_mono_now(), due = INT64_MAX;
		int r, k;

		pthread_mutex_lock(&hwsim_held_mu);
		for (int fd = 0; fd <= epreg_hi; fd++) {
			struct hwsim_epreg *g = hwsim_epreg(epfd, fd);
			int64_t d;

			if (g && g->armed && (d = hwsim_due(fd)) < due)
				due = d;
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		r = hwsim_real_epoll_pwait(epfd, ev, max,
					   hwsim_wait_ms(now, deadline, due), sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&hwsim_held_mu);
		now = hwsim_mono_now();
		/* The kernel's events: an error queue read into the ring
		 * raises EPOLLERR only for what is due. */
		k = 0;
		for (int i = 0; i < r; i++) {
			int fd = hwsim_epoll_fd(epfd, ev[i].data.u64);
			struct hwsim_epreg *g = fd >= 0 ? hwsim_epreg(epfd, fd) : NULL;
			uint32_t e = ev[i].events;

			if (g && (e & EPOLLERR) && hwsim_late_sock(fd)) {
				short rev = hwsim_settle(fd, (short)(g->events &
						(EPOLLIN | EPOLLOUT | EPOLLPRI)));

				e = (uint32_t)rev & (g->events | EPOLLERR | EPOLLHUP);
			} else if (g && hwsim_due(fd) <= now) {
				e |= (uint32_t)hwsim_due_bits(fd) & (g->events | EPOLLERR);
			}
			if (!e)
				continue;	/* all of it held back */
			if (g && (g->events & EPOLLONESHOT))
				g->armed = false;
			ev[k].events = e;
			ev[k].data = ev[i].data;
			k++;
		}
		/* What came due on sockets the kernel reported nothing for. */
		for (int fd = 0; fd <= epreg_hi && k < max; fd++) {
			struct hwsim_epreg *g = hwsim_epreg(epfd, fd);
			bool dup = false;

			if (!g || !g->armed || hwsim_due(fd) > now)
				continue;
			for (int i = 0; i < k && !dup; i++)
				dup = ev[i].data.u64 == g->data;
			if (dup)
				continue;
			ev[k].events = (uint32_t)hwsim_due_bits(fd) & (g->events | EPOLLERR);
			ev[k].data.u64 = g->data;
			k++;
			if (g->events & EPOLLONESHOT)
				g->armed = false;
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		if (k)
			return k;
		if (deadline >= 0 && hwsim_mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait); REAL(epoll_pwait);
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return hwsim_real_epoll_wait(epfd, ev, max, timeout);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ms(timeout), NULL);
}

HWSIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			     int timeout, const sigset_t *sig)
{
	REAL(epoll_pwait);
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return hwsim_real_epoll_pwait(epfd, ev, max, timeout, sig);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ms(timeout), sig);
}

HWSIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			      const struct timespec *ts, const sigset_t *sig)
{
	REAL(epoll_pwait2); REAL(epoll_pwait);
	if (!hwsim_real_epoll_pwait2) {
		errno = ENOSYS;
		return -1;
	}
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return hwsim_real_epoll_pwait2(epfd, ev, max, ts, sig);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ts(ts), sig);
}
