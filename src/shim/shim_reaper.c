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
 * It also writes the stamps handed over to capd (shim_hand.c): the
 * program's calls only queue them. A write to capd's socket is a system
 * call that wakes capd, and its time has a long tail (p99 13 us against
 * a p50 of 0.75 us measured in the sockperf client's send path of
 * bench/stamp-cgroup.sh): the program's send no longer pays for it. The
 * thread writes what is queued SHIM_HAND_MS after it was woken, and
 * right away when the queue passes its high mark; it sleeps without a
 * deadline only after a whole period in which nothing was queued, and
 * the first record queued after that wakes it through an eventfd (so a
 * program sending without pause never makes that system call, and one
 * that goes idle has its last stamps written within SHIM_HAND_MS).
 *
 * The thread blocks every signal (the program's handlers run on its own
 * threads, as without us) and is started at the first stamped socket.
 */
#include "shim/shim.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#define REAPER_NAP_NS 1000000L	/* after a wake-up, before reading */
#define REAPER_EVENTS 64
#define WAKE_DATA UINT64_MAX	/* the eventfd's registration: no socket's
				 * (a descriptor number is below 2^31) */

_Atomic unsigned shim_reaper_epoch = 1;
static _Atomic int ep = -1;
static _Atomic int wake = -1;		/* the eventfd, registered in ep */
static atomic_bool sleeping;		/* waiting without a deadline */
static atomic_bool poked;		/* the eventfd written, not read yet */
static atomic_flag starting = ATOMIC_FLAG_INIT;

struct reaper_fds {
	int ep, wake;
};

static void poke(int w)
{
	uint64_t one = 1;
	int e = errno;

	(void)REAL(write)(w, &one, sizeof(one));
	errno = e;
}

bool shim_reaper_hand(bool full)
{
	int w = atomic_load(&wake);

	if (w < 0 || atomic_load(&ep) < 0)
		return false;
	/* Pairs with the thread's fence between saying it sleeps and
	 * looking at the queue: it sees our records, or we see it asleep. */
	atomic_thread_fence(memory_order_seq_cst);
	if ((full || atomic_load(&sleeping)) && !atomic_exchange(&poked, true))
		poke(w);
	return true;
}

/* How long to wait: SHIM_HAND_MS while records come (active: the last
 * period had some), else for ever once the queue is seen empty after
 * saying so (shim_reaper_hand() then wakes us). */
static int wait_ms(bool active)
{
	if (active || shim_hand_queued())
		return SHIM_HAND_MS;
	atomic_store(&sleeping, true);
	atomic_thread_fence(memory_order_seq_cst);
	if (!shim_hand_queued())
		return -1;
	atomic_store(&sleeping, false);
	return SHIM_HAND_MS;
}

static void *reaper(void *arg)
{
	struct epoll_event ev[REAPER_EVENTS];
	struct reaper_fds own = *(struct reaper_fds *)arg;
	int fd = own.ep;
	unsigned epoch = atomic_load(&shim_reaper_epoch);
	bool active = true;

	free(arg);
	for (;;) {
		struct timespec nap = { 0, REAPER_NAP_NS };
		int n = REAL(epoll_wait)(fd, ev, REAPER_EVENTS, wait_ms(active));
		bool socks = false;

		atomic_store(&sleeping, false);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;	/* our instance is gone (dup2) */
		}
		if (atomic_load(&ep) != fd || atomic_load(&shim_reaper_epoch) != epoch)
			return NULL;
		if (n == 0) {
			/* A period is over: write what came in it. */
			active = shim_hand_queued() > 0;
			shim_hand_write();
			continue;
		}
		active = true;
		for (int i = 0; i < n; i++) {
			uint64_t v;

			if (ev[i].data.u64 != WAKE_DATA) {
				socks = true;
				continue;
			}
			/* Read before letting the flag go: a poke after this
			 * is one more wake-up, never a lost one. */
			(void)REAL(read)(own.wake, &v, sizeof(v));
			atomic_store(&poked, false);
		}
		if (!socks) {
			/* Woken by a hand-over: the first record after an
			 * idle spell (its period starts now), or a queue past
			 * its high mark (written now). */
			if (shim_hand_queued() >= SHIM_HAND_HIGH)
				shim_hand_write();
			continue;
		}
		nanosleep(&nap, NULL);
		for (int i = 0; i < n; i++) {
			int sfd = (int)(uint32_t)ev[i].data.u64;
			uint32_t gen = (uint32_t)(ev[i].data.u64 >> 32);
			struct shim_sock *sk;
			struct epoll_event re = { .events = EPOLLONESHOT,
						  .data = ev[i].data };
			int got;

			if (ev[i].data.u64 == WAKE_DATA)
				continue;
			sk = shim_sock_queue_ours(sfd);
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
				/* Nothing of ours: the program's calls read it
				 * first, or a real error or a hang-up raised
				 * it. Left until a send leaves stamps still to
				 * come (shim_sent()). */
				atomic_store(&sk->watched, epoch | SHIM_WATCH_IDLE);
				continue;
			}
			if (REAL(epoll_ctl)(fd, EPOLL_CTL_MOD, sfd, &re) < 0)
				atomic_store(&sk->watched, 0);
		}
		/* Awake anyway: what the reading queued goes now. */
		shim_hand_write();
	}
}

/* The instance, its eventfd and the thread, once per process (and again
 * after a fork, or after the program took one of the numbers). */
static int start(void)
{
	struct epoll_event wev = { .events = EPOLLIN, .data.u64 = WAKE_DATA };
	struct reaper_fds *arg;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int fd, w, err;

	fd = atomic_load(&ep);
	if (fd >= 0)
		return fd;
	if (atomic_flag_test_and_set(&starting))
		return -1;	/* another thread is starting it */
	arg = malloc(sizeof(*arg));
	if (!arg)
		goto fail;
	fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0)
		goto fail_arg;
	fd = shim_own_high(fd);
	w = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w < 0)
		goto fail_ep;
	w = shim_own_high(w);
	if (REAL(epoll_ctl)(fd, EPOLL_CTL_ADD, w, &wev) < 0)
		goto fail_wake;
	*arg = (struct reaper_fds){ fd, w };
	atomic_store(&sleeping, false);
	atomic_store(&poked, false);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&wake, w);
	atomic_store(&ep, fd);
	err = pthread_create(&t, &attr, reaper, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_store(&ep, -1);
		atomic_store(&wake, -1);
		shim_log_once(LOG_WARNING, "reaper thread: %s: stamps are read "
			      "only in the program's own calls", strerror(err));
		goto fail_wake;
	}
	shim_own_set(SHIM_OWN_REAPER, fd);
	shim_own_set(SHIM_OWN_WAKE, w);
	atomic_flag_clear(&starting);
	return fd;
fail_wake:
	REAL(close)(w);
fail_ep:
	REAL(close)(fd);
fail_arg:
	free(arg);
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
	int w = atomic_exchange(&wake, -1);

	/* Forgotten, not closed (dup2 closes the one it takes): the thread
	 * ends at its next wake-up, which a poke of the eventfd (when it
	 * is the epoll instance that went) brings now; the next send starts
	 * another. The other descriptor stays open, kept among ours until
	 * then, and is left behind: one per such dup2(). */
	atomic_store(&ep, -1);
	atomic_fetch_add(&shim_reaper_epoch, 1);
	if (w >= 0)
		poke(w);
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
	/* The eventfd too: writing our copy would wake the parent's. */
	fd = atomic_exchange(&wake, -1);
	if (fd >= 0)
		REAL(close)(fd);
	atomic_store(&sleeping, false);
	atomic_store(&poked, false);
	shim_own_set(SHIM_OWN_REAPER, -1);
	shim_own_set(SHIM_OWN_WAKE, -1);
}
