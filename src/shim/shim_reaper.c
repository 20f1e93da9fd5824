/* shim_reaper.c — a thread that reads stamps the program's own calls
 * would leave queued.
 *
 * The kernel charges every message on a socket's error queue to its
 * receive buffer (until anchored, a TCP stamp carries a copy of its
 * packet). The library reads stamps in the program's own calls — after a
 * send, in poll/select/epoll — but a program that sends and waits
 * through io_uring or raw system calls makes none: its stamps would pile
 * up until the receive window closes. So each stamped socket is watched
 * by one epoll instance of ours (EPOLLONESHOT: no events asked for, so
 * only EPOLLERR, which a queued stamp raises) and a thread of ours reads
 * what is there.
 *
 * Cheap for a program whose calls do read the stamps: the thread waits a
 * millisecond after each wake-up before reading, so a send's own reading
 * usually gets there first, and it wakes at most about a thousand times
 * a second whatever the send rate. A socket whose wake-up found nothing
 * of ours (a real error, a hang-up) is left unwatched until its next
 * send.
 *
 * The thread blocks every signal (the program's handlers run on its own
 * threads, as without us) and is started at the first stamped socket.
 */
#include "shim/shim.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#define REAPER_NAP_NS 1000000L	/* after a wake-up, before reading */
#define REAPER_EVENTS 64

_Atomic unsigned shim_reaper_epoch = 1;
static _Atomic int ep = -1;
static atomic_flag starting = ATOMIC_FLAG_INIT;

static void *reaper(void *arg)
{
	struct epoll_event ev[REAPER_EVENTS];
	int fd = (int)(intptr_t)arg;
	unsigned epoch = atomic_load(&shim_reaper_epoch);

	for (;;) {
		struct timespec nap = { 0, REAPER_NAP_NS };
		int n = REAL(epoll_wait)(fd, ev, REAPER_EVENTS, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;	/* our instance is gone (dup2) */
		}
		if (atomic_load(&ep) != fd || atomic_load(&shim_reaper_epoch) != epoch)
			return NULL;
		nanosleep(&nap, NULL);
		for (int i = 0; i < n; i++) {
			int sfd = (int)(uint32_t)ev[i].data.u64;
			uint32_t gen = (uint32_t)(ev[i].data.u64 >> 32);
			struct shim_sock *sk = shim_sock_queue_ours(sfd);
			struct epoll_event re = { .events = EPOLLONESHOT,
						  .data = ev[i].data };
			int got;

			if (!sk || sk->gen != gen)
				continue;
			/* Still fd's once held: close() takes the number's
			 * word first, and the last close of a socket waits
			 * for the holder before the descriptor goes (a close
			 * of one of several dup()s does not: left to the
			 * program, as its own threads racing a close are). */
			if (atomic_flag_test_and_set_explicit(&sk->reaping,
							      memory_order_acquire)) {
				got = -1;
			} else {
				got = shim_table_get(&shim_socks, sfd) == (uintptr_t)sk &&
				      sk->gen == gen ? shim_reap_locked(sk, sfd) : 0;
				atomic_flag_clear_explicit(&sk->reaping,
							   memory_order_release);
			}
			if (got == 0) {
				/* Nothing of ours: a real error or a hang-up
				 * raised it. Left until the next send. */
				atomic_store(&sk->watched, 0);
				continue;
			}
			if (REAL(epoll_ctl)(fd, EPOLL_CTL_MOD, sfd, &re) < 0)
				atomic_store(&sk->watched, 0);
		}
	}
}

/* The instance and the thread, once per process (and again after a
 * fork, or after the program took the instance's number). */
static int start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int fd, err;

	fd = atomic_load(&ep);
	if (fd >= 0)
		return fd;
	if (atomic_flag_test_and_set(&starting))
		return -1;	/* another thread is starting it */
	fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0)
		goto fail;
	fd = shim_own_high(fd);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&ep, fd);
	err = pthread_create(&t, &attr, reaper, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_store(&ep, -1);
		REAL(close)(fd);
		shim_log_once(LOG_WARNING, "reaper thread: %s: stamps are read "
			      "only in the program's own calls", strerror(err));
		goto fail;
	}
	shim_own_set(SHIM_OWN_REAPER, fd);
	atomic_flag_clear(&starting);
	return fd;
fail:
	atomic_flag_clear(&starting);
	return -1;
}

void shim_reaper_watch(struct shim_sock *sk, int fd)
{
	struct epoll_event ev = { .events = EPOLLONESHOT };
	unsigned epoch = atomic_load(&shim_reaper_epoch);
	int e = errno, rfd = start();

	if (rfd < 0)
		goto out;
	ev.data.u64 = (uint64_t)sk->gen << 32 | (uint32_t)fd;
	if (REAL(epoll_ctl)(rfd, EPOLL_CTL_MOD, fd, &ev) == 0 ||
	    (errno == ENOENT && REAL(epoll_ctl)(rfd, EPOLL_CTL_ADD, fd, &ev) == 0))
		atomic_store(&sk->watched, epoch);
out:
	errno = e;
}

void shim_reaper_unwatch(int fd)
{
	int e = errno, rfd = atomic_load(&ep);

	if (rfd >= 0)
		REAL(epoll_ctl)(rfd, EPOLL_CTL_DEL, fd, NULL);
	errno = e;
}

void shim_reaper_lost(void)
{
	/* Forgotten, not closed (dup2 closes it): the thread's next wait
	 * fails and it ends; the next send starts another. */
	atomic_store(&ep, -1);
	atomic_fetch_add(&shim_reaper_epoch, 1);
}

void shim_reaper_after_fork(void)
{
	int fd = atomic_exchange(&ep, -1);

	/* The instance is shared with the parent, the thread is not ours:
	 * a child that sends starts its own. */
	atomic_flag_clear(&starting);
	atomic_fetch_add(&shim_reaper_epoch, 1);
	if (fd >= 0)
		REAL(close)(fd);
	shim_own_set(SHIM_OWN_REAPER, -1);
}
