/* shim.h — the inside of libtapless-stamp.so, shared by its files.
 *
 * Not an interface: the library exports nothing but the C library
 * functions it interposes (each marked SHIM_EXPORT; everything else is
 * hidden by -fvisibility=hidden). See tapless-stamp(8) for what it does;
 * the comments here say how.
 *
 * Per descriptor, a word in a two-level table (shim_table): unknown (never
 * looked at, or reset when the number was reused), ignored (not a socket
 * we stamp), or a pointer to the socket's state (struct shim_sock), shared
 * by the descriptors dup() made of it. Socket states are never freed while
 * the program runs, only recycled, so a thread that read a pointer just
 * before another closed the descriptor touches valid memory.
 *
 * A signal handler may send on any socket while the code it interrupted
 * is inside the library, on the same thread. So nothing on the send,
 * reap and hand-over paths waits for anyone: per-socket flags are taken
 * with test-and-set and, when taken, the work is left to the holder or
 * done without them (shim_sock.c); the hand-over to capd is a lock-free
 * queue (shim_hand.c); socket states come from a lock-free pool of
 * memory mapped in slabs, never from malloc. See tapless-stamp(8),
 * GUARANTEES.
 */
#ifndef TAPLESS_SHIM_H
#define TAPLESS_SHIM_H

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/nstime.h"
#include "files/frame.h"
#include "shim/shim_errq.h"
#include "shim/shim_filter.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_LIKELY(x) __builtin_expect(!!(x), 1)
#define SHIM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Interposed functions no header of ours declares (the fortified
 * variants, liburing's set-up). */
ssize_t __recv_chk(int, void *, size_t, size_t, int);
ssize_t __recvfrom_chk(int, void *, size_t, size_t, int, struct sockaddr *,
		       socklen_t *);
ssize_t __read_chk(int, void *, size_t, size_t);
int __poll_chk(struct pollfd *, nfds_t, int, size_t);
int __ppoll_chk(struct pollfd *, nfds_t, const struct timespec *,
		const sigset_t *, size_t);
int io_uring_queue_init(unsigned, void *, unsigned);
int execvpe(const char *, char *const[], char *const[]);
int io_uring_queue_init_params(unsigned, void *, void *);

/* ---- the C library's own functions (shim_real.c) ---- */

struct shim_real {
	int (*socket)(int, int, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	ssize_t (*sendfile64)(int, int, off_t *, size_t);
	ssize_t (*splice)(int, off_t *, int, off_t *, size_t, unsigned);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned, int, struct timespec *);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int,
				struct sockaddr *, socklen_t *);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*poll_chk)(struct pollfd *, nfds_t, int, size_t);
	int (*ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *,
			 const sigset_t *, size_t);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	int (*io_uring_queue_init)(unsigned, void *, unsigned);
	int (*io_uring_queue_init_params)(unsigned, void *, void *);
};

extern struct shim_real shim_real;

/* Look every function up (dlsym(RTLD_NEXT)); idempotent and thread-safe.
 * The constructor calls it; a wrapper called before the constructor ran
 * (another library's constructor) calls it through REAL(). */
void shim_real_resolve(void);

/* The next definition of name, for the rarely called (exec). */
void *shim_real_next(const char *name);

#define REAL(f) (SHIM_LIKELY(shim_real.f != NULL) ? shim_real.f : \
		 (shim_real_resolve(), shim_real.f))

/* Functions of the C library that the library's own modules (txsock.c,
 * frame.c) call: linked with -Wl,--wrap (Makefile), their calls reach
 * these, which go straight to the C library. Else the library's own
 * close() of its capd connection would be the program's close() wrapper,
 * which refuses to close the library's descriptors: one leaked per
 * reconnection. Sockets the modules make are moved up among ours. */
int __wrap_socket(int, int, int);
int __wrap_connect(int, const struct sockaddr *, socklen_t);
int __wrap_close(int);
ssize_t __wrap_send(int, const void *, size_t, int);
int __wrap_poll(struct pollfd *, nfds_t, int);
int __wrap_getsockopt(int, int, int, void *, socklen_t *);

/* ---- configuration, log, counters (shim.c) ---- */

enum shim_mode { SHIM_MODE_AUTO, SHIM_MODE_HW, SHIM_MODE_SW };

struct shim_conf {
	bool on;		/* a valid configuration was read */
	enum shim_mode mode;
	char tx_socket[108];
	struct shim_filter filter;
	bool tcp_ok;		/* looped packets reach us (anchoring) */
	atomic_bool udp_off;	/* io_uring in use: UDP ids not ours */
	bool udp_kernel_ids;	/* never SCM_TS_OPT_ID (tests) */
	/* No SOF_TIMESTAMPING_OPT_RX_FILTER (before Linux 6.9, or forced
	 * for tests): the program's receives may carry SCM_TIMESTAMPING it
	 * did not ask for, which recvmsg() takes out (shim_recv.c). */
	atomic_bool rx_unfiltered;
};

extern struct shim_conf shim_conf;

/* Why a socket was left alone or stepped aside from. */
enum shim_aside {
	SHIM_ASIDE_APP_TSTAMP,	/* the program stamps it itself */
	SHIM_ASIDE_RECVERR,	/* IP_RECVERR: ICMP errors on the queue */
	SHIM_ASIDE_ZEROCOPY,	/* SO_ZEROCOPY completions on the queue */
	SHIM_ASIDE_ERRQUEUE,	/* the program reads MSG_ERRQUEUE */
	SHIM_ASIDE_CORK,	/* UDP corking or GSO: datagrams not 1:1 */
	SHIM_ASIDE_ANCHOR,	/* TCP: no agreed sequence base */
	SHIM_ASIDE_UNSTAMPABLE,	/* UDP sent by sendfile, splice, io_uring */
	SHIM_ASIDE_FAILED,	/* the kernel refused, or out of memory */
	SHIM_ASIDE_COUNT
};

/* Counters of the process. Per-socket counts are added in when a socket
 * is closed, and by shim_stats_sum() for the live ones. */
struct shim_stats {
	_Atomic uint64_t sends;		/* sends on stamped sockets */
	_Atomic uint64_t stamps;	/* TX stamps read */
	_Atomic uint64_t unkeyed;	/* stamps we could not key */
	_Atomic uint64_t filtered;	/* UDP stamps of datagrams not wanted */
	_Atomic uint64_t lost;		/* UDP datagrams whose stamp never came */
	_Atomic uint64_t mismatch;	/* TCP: a looped packet disagreeing
					 * with the base (should stay 0) */
	_Atomic uint64_t foreign;	/* non-stamp messages read (lost) */
	_Atomic uint64_t handed;	/* records queued to capd */
	_Atomic uint64_t dropped;	/* records dropped: capd gone or slow */
	_Atomic uint64_t armed_tcp, armed_udp, adopted;
	_Atomic uint64_t aside[SHIM_ASIDE_COUNT];
	_Atomic uint64_t late;		/* stamps read after stepping aside */
	_Atomic uint64_t masked;	/* POLLERR/EPOLLERR hidden */
	_Atomic uint64_t real_err;	/* POLLERR left: a real error */
	_Atomic uint64_t sendfile, splice, io_uring;
};

extern struct shim_stats shim_stats;

#define SHIM_COUNT(field) \
	atomic_fetch_add_explicit(&shim_stats.field, 1, memory_order_relaxed)

void shim_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The level is debug: a line per stamp. */
extern bool shim_log_debug;
/* Log once per process (per flag). */
#define shim_log_once(level, ...) \
	do { static atomic_flag once_ = ATOMIC_FLAG_INIT; \
	     if (!atomic_flag_test_and_set(&once_)) \
		     shim_log((level), __VA_ARGS__); } while (0)

/* Settle the process's accounts (exit, exec): read every stamped
 * socket's queue, write what is queued to capd (waiting briefly), log
 * the summary (when says when), and start the counts afresh. */
void shim_settle_all(const char *when);

/* ---- the hand-over to capd (shim_hand.c) ---- */

struct txsock_rec;
/* Hand n keyed records to capd: queued, and written by the reaper thread
 * within SHIM_HAND_MS, sooner when the queue fills; written at once by
 * the caller only when there is no reaper thread. Never blocks, never
 * allocates: safe in a signal handler. */
void shim_hand(const struct txsock_rec *r, size_t n);
/* The reaper thread: write what is queued now, if no one else is. */
void shim_hand_write(void);
/* How many records are queued (a snapshot). */
size_t shim_hand_queued(void);
/* Queued records that have the reaper write them at once. */
#define SHIM_HAND_HIGH 2048
/* At start-up: the client and all its memory. */
void shim_hand_init(void);
/* Write what is queued, waiting up to timeout_ms (exit, exec). */
int shim_hand_flush(int timeout_ms);
/* The connection's number became the program's (dup2 onto it). */
void shim_hand_lost(void);
void shim_hand_after_fork(void);

/* ---- the library's own descriptors (shim.c) ---- */

/* The log file, the capd connection, the reaper's epoll instance and the
 * eventfd that wakes it: kept
 * high (shim_own_high()) and out of the program's reach: close() on one
 * fails with EBADF as on a number the program never opened, closefrom()
 * and close_range() close around them, dup2() onto one takes the number
 * from us. */
enum shim_own { SHIM_OWN_LOG, SHIM_OWN_CLIENT, SHIM_OWN_REAPER,
		SHIM_OWN_WAKE, SHIM_OWN_COUNT };
/* fd moved to the library's range (close-on-exec); fd itself when there
 * is no room there. */
int shim_own_high(int fd);
void shim_own_set(enum shim_own which, int fd);
bool shim_own_fd(int fd);
/* Them, in ascending order; returns how many. */
int shim_own_fds(int out[SHIM_OWN_COUNT]);
/* The program moved fd onto one of ours (dup2): let ours go. */
void shim_own_fd_lost(int fd);

/* ---- the reaper thread (shim_reaper.c) ---- */

struct shim_sock;
/* Read sk's stamps within about a millisecond of their coming, whatever
 * the program does (a program on io_uring or raw system calls makes no
 * call the library sees, and unread stamps take receive buffer space).
 * Starts the thread on first use. */
void shim_reaper_watch(struct shim_sock *sk, int fd);
/* fd is about to be closed or to name something else. */
void shim_reaper_unwatch(int fd);
/* The epoll instance's or the eventfd's number became the program's
 * (dup2). */
void shim_reaper_lost(void);
void shim_reaper_after_fork(void);
/* Records were queued for capd (shim_hand): make sure the reaper thread
 * writes them within SHIM_HAND_MS, now when full (the queue is past its
 * high mark). Wakes it only when it sleeps without a deadline, or when
 * full. False when there is no reaper thread: the caller writes them.
 * Safe in a signal handler. */
#define SHIM_HAND_MS 10
bool shim_reaper_hand(bool full);
/* Watched since the last fork (cheap test on the send path). */
extern _Atomic unsigned shim_reaper_epoch;
/* sk->watched | this: the reaper's last wake-up found nothing of ours on
 * it (the program's calls had read it all, or a real error raised it):
 * watched again only when a send leaves stamps outstanding. */
#define SHIM_WATCH_IDLE 0x80000000u

/* The process the state belongs to: a vfork() child shares our memory
 * and must not change it. */
extern pid_t shim_pid;
static inline bool shim_in_vfork_child(void)
{
	return getpid() != shim_pid;
}

/* ---- descriptor tables (shim_table.c) ---- */

#define SHIM_FD_UNKNOWN ((uintptr_t)0)
#define SHIM_FD_IGNORED ((uintptr_t)1)	/* not a socket we stamp */
#define SHIM_FD_APP ((uintptr_t)2)	/* its stamps or error queue are the
					 * program's: never touched */
#define SHIM_FD_BUSY ((uintptr_t)3)	/* a thread is looking at it */
/* Above these: a struct shim_sock. */
#define SHIM_FD_SOCK(v) ((v) > SHIM_FD_BUSY)
#define SHIM_TABLE_BITS 12
#define SHIM_TABLE_PAGES 256	/* descriptors below 2^20 */

struct shim_table {
	_Atomic(_Atomic uintptr_t *) pages[SHIM_TABLE_PAGES];
};

extern struct shim_table shim_socks;	/* fd → struct shim_sock */
extern struct shim_table shim_eps;	/* epoll fd → struct shim_ep */

/* The word of fd; NULL for a descriptor out of range (or, with create, when
 * memory for its page ran out). */
_Atomic uintptr_t *shim_table_slot(struct shim_table *t, int fd, bool create);

static inline uintptr_t shim_table_get(struct shim_table *t, int fd)
{
	_Atomic uintptr_t *page;

	if (SHIM_UNLIKELY(fd < 0 || (unsigned)fd >> SHIM_TABLE_BITS >=
			  SHIM_TABLE_PAGES))
		return SHIM_FD_IGNORED;
	page = atomic_load_explicit(&t->pages[(unsigned)fd >> SHIM_TABLE_BITS],
				    memory_order_acquire);
	if (!page)
		return SHIM_FD_UNKNOWN;
	return atomic_load_explicit(&page[fd & ((1 << SHIM_TABLE_BITS) - 1)],
				    memory_order_acquire);
}

/* Call fn for every descriptor with a pointer in t. */
void shim_table_each(struct shim_table *t,
		     void (*fn)(int fd, uintptr_t v, void *arg), void *arg);

/* ---- per-socket state (shim_sock.c) ---- */

/* PENDING: an unconnected UDP socket under a --ports/--peers filter
 * that not every datagram passes: not armed (no flags, no ring) until
 * the first datagram to a destination the filter takes. */
enum shim_state { SHIM_FREE, SHIM_ARMED, SHIM_ASIDE, SHIM_PENDING };

#define SHIM_UDP_RING 1024	/* datagrams awaiting their stamp */
#define SHIM_STASH 16		/* UDP stamps that came before their record */
#define SHIM_UDP_ID0 0x80000000u	/* our ids; the kernel's count from 0 */

struct shim_udp_slot {
	_Atomic uint32_t tag;	/* id + 1 of the datagram; 0 while written */
	atomic_bool stamped;	/* its stamp came */
	bool wanted;		/* the filter takes its flow */
	uint32_t len;
	uint64_t hash;
	struct frame_flow flow;
};

struct shim_route {		/* unconnected UDP: source for a destination */
	int family;
	uint8_t dst[16], src[16];
};

struct shim_sock {
	/* Kept when the state is recycled: a thread still holding the
	 * pointer (a send racing a close) finds valid memory. */
	uint32_t idx;			/* in the pool */
	_Atomic uint32_t next_free;	/* pool index + 1 of the next free */
	struct shim_udp_slot *ring;	/* SHIM_UDP_RING, mapped when first
					 * needed */
	atomic_flag reaping;		/* held while reading the error queue,
					 * and while the state is recycled */
	/* From refs on, cleared when the state is taken from the pool. */
	_Atomic int refs;		/* descriptors naming it */
	_Atomic int state;		/* enum shim_state */
	atomic_bool late_ours;		/* aside, but stamps of our sends may
					 * still come and the program does not
					 * read the queue: still ours to read */
	atomic_flag lock;		/* the send when the kernel counts
					 * ids: taken with a bounded try,
					 * never waited for in a handler */
	atomic_flag routes_busy;	/* routes[]: only tried */
	_Atomic unsigned watched;	/* shim_reaper_epoch when watched,
					 * with SHIM_WATCH_IDLE while the
					 * reaper leaves it, 0 never */
	uint32_t gen;			/* which use of the state (the reaper
					 * tells reuse by it) */
	bool tcp;
	bool connected;			/* flow.dst is the peer */
	bool src_fixed;			/* UDP bound to one address */
	unsigned so_flags;		/* SO_TIMESTAMPING in force */
	struct frame_flow flow;		/* local → peer (local only when not
					 * connected) */
	/* TCP */
	struct shim_anchor anchor;
	bool tsonly;
	/* UDP */
	bool ids_ours;			/* ids chosen per send (SCM_TS_OPT_ID) */
	_Atomic uint32_t next_id;
	struct {
		uint32_t id;
		struct shim_errq_stamp st;
	} stash[SHIM_STASH];
	unsigned nstash;
	struct shim_route routes[4];
	unsigned nroutes;
	/* Outstanding stamps: sent beyond stamped (TCP bytes, UDP ids). */
	_Atomic uint32_t sent_mark;
	uint32_t stamped_mark;
	/* Hardware stamps: the egress interface's PHC, found once. */
	bool phc_known;
	int phc;
	uint32_t ifindex;
	/* Counters, added to shim_stats when it is recycled. */
	_Atomic uint64_t sends;
	_Atomic uint64_t lost;		/* UDP: recorded, never stamped */
	uint64_t stamps, unkeyed, filtered, mismatch, late;
};

/* Take sk->lock, trying a bounded number of times: false when it stays
 * taken (by another thread that is slow, or by the code the calling
 * signal handler interrupted). */
bool shim_sock_trylock(struct shim_sock *sk, int tries);
static inline void shim_sock_unlock(struct shim_sock *sk)
{
	atomic_flag_clear_explicit(&sk->lock, memory_order_release);
}

/* The armed socket of fd, or NULL: the wrappers' fast path. */
static inline struct shim_sock *shim_sock_armed(int fd)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);
	struct shim_sock *sk;

	if (!SHIM_FD_SOCK(v))
		return NULL;
	sk = (struct shim_sock *)v;
	return atomic_load_explicit(&sk->state, memory_order_relaxed) ==
	       SHIM_ARMED ? sk : NULL;
}

/* Look at a descriptor seen for the first time (or reset): arm it when it
 * is a TCP or UDP socket we are to stamp, else remember to ignore it.
 * Returns the armed socket or NULL. A TCP socket not connected yet is
 * left unknown, to be looked at again. */
struct shim_sock *shim_classify(int fd);

/* The armed socket of fd for a send: classifies unknown descriptors. */
static inline struct shim_sock *shim_sock_for_send(int fd)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);

	if (SHIM_LIKELY(v == SHIM_FD_IGNORED || v == SHIM_FD_APP))
		return NULL;
	if (v == SHIM_FD_UNKNOWN || v == SHIM_FD_BUSY)
		return shim_classify(fd);
	return shim_sock_armed(fd);
}

/* A send to `to` on fd, which shim_sock_for_send() found unarmed: the
 * socket armed now when it is a pending unconnected UDP socket and the
 * filter takes that destination; else NULL. */
struct shim_sock *shim_sock_for_dest(int fd, const struct sockaddr *to,
				     socklen_t len);

/* Step aside from sk (fd): read what is queued, switch our stamping off,
 * count and log once why. Safe to call on a socket already aside. The
 * _locked form is for a caller that holds sk->reaping. */
void shim_aside(struct shim_sock *sk, int fd, enum shim_aside why);
void shim_aside_locked(struct shim_sock *sk, int fd, enum shim_aside why);

/* fd names something new (socket(), accept(), a received descriptor) or
 * is about to name nothing (close(), dup2() onto it): forget what we knew
 * of the number; reap: it still names the old socket, whose last stamps
 * are read first. */
void shim_fd_reset(int fd, bool reap);
/* newfd is now a copy of oldfd (dup2, F_DUPFD). */
void shim_fd_copy(int oldfd, int newfd);
/* The program takes fd's stamps or error queue for itself (setsockopt,
 * MSG_ERRQUEUE): step aside from it, or never arm it. */
void shim_fd_app(int fd, enum shim_aside why);
/* No more UDP sockets: step aside from those armed (io_uring). */
void shim_sock_udp_off(void);
/* A UDP socket was connected or disconnected (connect()). */
void shim_sock_connected(struct shim_sock *sk, int fd);

/* At start-up: what the first sockets need (the first page of the
 * descriptor table). */
void shim_sock_init(void);
/* The socket state of fd whose error queue is ours to read: armed, or
 * aside with stamps of ours still to come; else NULL. */
struct shim_sock *shim_sock_queue_ours(int fd);
/* Move the live sockets' counters into shim_stats. */
void shim_stats_sum(void);
/* After fork(), in the child: fresh locks and counters. */
void shim_sock_after_fork(void);
/* At exit: read every armed socket's last stamps. */
void shim_sock_reap_all(void);

/* ---- reaping (shim_reap.c) ---- */

/* Read the error queue of sk if no other thread is; hand stamps over.
 * Returns the number of messages read, -1 when another thread holds it. */
int shim_reap_try(struct shim_sock *sk, int fd);
/* Read it, waiting for another thread's reading to end. */
int shim_reap(struct shim_sock *sk, int fd);
/* Read it; the caller holds sk->reaping. Steps aside on trouble (a
 * message not ours, no TCP anchor). */
int shim_reap_locked(struct shim_sock *sk, int fd);
/* Read and count the stamps of an aside socket's late_ours; the caller
 * holds sk->reaping. */
int shim_reap_late(struct shim_sock *sk, int fd);
/* Read everything queued and hand it over, never stepping aside; the
 * caller holds sk->reaping (stepping aside itself). */
int shim_reap_drain(struct shim_sock *sk, int fd);
/* A poll said POLLERR for sk: read our stamps off the queue and poll it
 * again for events; returns the socket's events now (POLLERR in them: a
 * real error, or something not ours). */
short shim_settle(struct shim_sock *sk, int fd, short events);
/* Stamps may still come for what was sent (cheap test). */
static inline bool shim_outstanding(struct shim_sock *sk)
{
	return (int32_t)(atomic_load_explicit(&sk->sent_mark,
					      memory_order_relaxed) -
			 sk->stamped_mark) > 0;
}
/* After a successful send of n (TCP bytes) on sk. */
void shim_tcp_sent(struct shim_sock *sk, int fd, size_t n);
/* After a send on sk: read what is queued, then have the reaper watch sk
 * if stamps are still to come. */
void shim_sent(struct shim_sock *sk, int fd);
/* Record datagram id (UDP) sent through m (its name, or the peer), n
 * bytes. */
void shim_udp_record(struct shim_sock *sk, int fd, uint32_t id,
		     const struct msghdr *m, size_t n);

/* Probe once whether the kernel takes SCM_TS_OPT_ID (Linux 6.13). */
bool shim_have_ts_opt_id(void);
/* Copy m's control messages into buf (cap bytes) and add SCM_TS_OPT_ID
 * with id. Returns the new control length, or -1 when it does not fit. */
int shim_udp_ctl_add(const struct msghdr *m, void *buf, size_t cap,
		     uint32_t id);

/* ---- epoll registrations (shim_ep.c) ---- */

struct shim_ep;
void shim_ep_hold(struct shim_ep *ep);
void shim_ep_release(struct shim_ep *ep);
/* After a successful epoll_ctl. */
void shim_ep_ctl(int epfd, int op, int fd, const struct epoll_event *ev);
/* The descriptors (and their events) registered on epfd with data, at
 * most max: how many; 0 if unknown, -1 when more than max share it. */
int shim_ep_lookup(int epfd, uint64_t data, int *fds, uint32_t *events,
		   int max);
void shim_ep_after_fork(void);

#endif
