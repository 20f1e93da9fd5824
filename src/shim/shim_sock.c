/* shim_sock.c — which descriptors are stamped sockets, arming them and
 * stepping aside; see shim.h. */
#include "shim/shim.h"

#include <errno.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sched.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "base/missing.h"

#define WAIT_MAX_NS 200000000LL	/* a send waits this long at most for
					 * another thread's look or arming */

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif

/* What the running kernel refused once (probed on the first socket). */
static atomic_bool no_id_tcp;

static const char *const aside_why[SHIM_ASIDE_COUNT] = {
	[SHIM_ASIDE_APP_TSTAMP] = "the program sets SO_TIMESTAMPING itself "
		"(its stamps stay its own)",
	[SHIM_ASIDE_RECVERR] = "IP_RECVERR/IPV6_RECVERR is on (ICMP errors "
		"share the error queue, and are the program's)",
	[SHIM_ASIDE_ZEROCOPY] = "SO_ZEROCOPY is on (its completions share "
		"the error queue)",
	[SHIM_ASIDE_ERRQUEUE] = "the program reads MSG_ERRQUEUE itself",
	[SHIM_ASIDE_CORK] = "UDP corking (MSG_MORE, UDP_CORK) or UDP_SEGMENT "
		"(a datagram is not one send)",
	[SHIM_ASIDE_ANCHOR] = "TCP: no agreed sequence base from the "
		"looped packets",
	[SHIM_ASIDE_UNSTAMPABLE] = "UDP sent by sendfile, splice or io_uring "
		"(datagram ids no longer ours to count)",
	[SHIM_ASIDE_FAILED] = "the kernel refused SO_TIMESTAMPING, or out "
		"of memory",
};

static unsigned mode_flags(void)
{
	switch (shim_conf.mode) {
	case SHIM_MODE_HW:
		return SOF_TIMESTAMPING_TX_HARDWARE |
		       SOF_TIMESTAMPING_RAW_HARDWARE;
	case SHIM_MODE_SW:
		return SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	default:
		/* Both: the driver that stamps in hardware marks the packet,
		 * and the kernel then skips the software stamp; elsewhere the
		 * software one comes. */
		return SOF_TIMESTAMPING_TX_HARDWARE |
		       SOF_TIMESTAMPING_RAW_HARDWARE |
		       SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	}
}

/* Flags a tapless-stamp of any mode may have set: a socket inherited
 * across exec() with these is adopted, not left as the program's. */
static bool flags_ours(unsigned f)
{
	unsigned ours = SOF_TIMESTAMPING_TX_HARDWARE |
		SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_TX_SOFTWARE |
		SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
		SOF_TIMESTAMPING_OPT_TSONLY | TAPLESS_SOF_OPT_ID_TCP |
		TAPLESS_SOF_OPT_RX_FILTER;

	return (f & SOF_TIMESTAMPING_OPT_ID) && !(f & ~ours);
}

static int set_flags(int fd, unsigned f)
{
	return REAL(setsockopt)(fd, SOL_SOCKET, SO_TIMESTAMPING, &f,
				sizeof(f)) ? -errno : 0;
}

static int get_int(int fd, int level, int name, int *v)
{
	socklen_t len = sizeof(*v);

	*v = 0;
	return REAL(getsockopt)(fd, level, name, v, &len) ? -errno : 0;
}

/* ---- the pool ----
 *
 * States live in slabs of SLAB_SOCKS, mapped when the pool runs dry and
 * never unmapped; free ones are on a lock-free stack of pool indexes
 * whose head carries a count against ABA. mmap(), not malloc(): the
 * first send on a socket may come from a signal handler that
 * interrupted malloc itself. */

#define SLAB_SOCKS 256
#define SLABS 4096		/* a million states */

static struct shim_sock *_Atomic slabs[SLABS];
static _Atomic unsigned nslabs;
static _Atomic uint64_t free_head;	/* tag << 32 | (index + 1) */
static _Atomic uint32_t gens;

static struct shim_sock *sock_at(uint32_t idx)
{
	return &atomic_load(&slabs[idx / SLAB_SOCKS])[idx % SLAB_SOCKS];
}

static void pool_push(struct shim_sock *sk)
{
	uint64_t h = atomic_load(&free_head), n;

	do {
		atomic_store(&sk->next_free, (uint32_t)h);
		n = ((h >> 32) + 1) << 32 | (sk->idx + 1);
	} while (!atomic_compare_exchange_weak(&free_head, &h, n));
}

static struct shim_sock *pool_pop(void)
{
	uint64_t h = atomic_load(&free_head), n;
	struct shim_sock *sk;

	do {
		if (!(uint32_t)h)
			return NULL;
		sk = sock_at((uint32_t)h - 1);
		n = ((h >> 32) + 1) << 32 | atomic_load(&sk->next_free);
	} while (!atomic_compare_exchange_weak(&free_head, &h, n));
	return sk;
}

/* A new slab: all but one of its states to the pool. */
static struct shim_sock *pool_grow(void)
{
	unsigned k = atomic_fetch_add(&nslabs, 1);
	struct shim_sock *slab;

	if (k >= SLABS)
		return NULL;
	slab = mmap(NULL, SLAB_SOCKS * sizeof(*slab), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slab == MAP_FAILED)
		return NULL;
	for (unsigned i = 0; i < SLAB_SOCKS; i++) {
		slab[i].idx = k * SLAB_SOCKS + i;
		atomic_flag_clear(&slab[i].reaping);
	}
	atomic_store(&slabs[k], slab);
	for (unsigned i = 1; i < SLAB_SOCKS; i++)
		pool_push(&slab[i]);
	return &slab[0];
}

static struct shim_sock *sock_alloc(bool tcp)
{
	struct shim_sock *sk = NULL;

	/* A state still being read by a thread that raced its close (it
	 * holds reaping) is passed over for now. */
	for (int i = 0; i < 4 && !sk; i++) {
		sk = pool_pop();
		if (sk && atomic_flag_test_and_set(&sk->reaping)) {
			pool_push(sk);
			sk = NULL;
		}
	}
	if (!sk) {
		sk = pool_grow();
		if (!sk)
			return NULL;
		atomic_flag_test_and_set(&sk->reaping);
	}
	memset((char *)sk + offsetof(struct shim_sock, refs), 0,
	       sizeof(*sk) - offsetof(struct shim_sock, refs));
	atomic_flag_clear(&sk->lock);
	atomic_flag_clear(&sk->routes_busy);
	sk->gen = atomic_fetch_add(&gens, 1) + 1;
	sk->tcp = tcp;
	sk->phc = -1;
	atomic_store(&sk->refs, 1);
	atomic_flag_clear(&sk->reaping);
	return sk;
}

/* A UDP socket's ring, when it is armed: mapped the first time, kept with
 * the state for the next socket (its records cleared). */
static int ring_get(struct shim_sock *sk)
{
	void *r;

	if (sk->ring) {
		for (unsigned i = 0; i < SHIM_UDP_RING; i++) {
			atomic_store(&sk->ring[i].tag, 0);
			atomic_store(&sk->ring[i].stamped, false);
		}
		return 0;
	}
	r = mmap(NULL, SHIM_UDP_RING * sizeof(*sk->ring), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return -ENOMEM;
	sk->ring = r;	/* fresh pages are zero */
	return 0;
}

bool shim_sock_trylock(struct shim_sock *sk, int tries)
{
	for (int i = 0; atomic_flag_test_and_set_explicit(&sk->lock,
						memory_order_acquire); i++) {
		if (i >= tries)
			return false;
		sched_yield();
	}
	return true;
}

static void sum_one(int fd, uintptr_t v, void *arg);
static void sock_final(struct shim_sock *sk, int fd);

static void sock_free(struct shim_sock *sk)
{
	sum_one(-1, (uintptr_t)sk, NULL);
	atomic_store(&sk->state, SHIM_FREE);
	pool_push(sk);
}

/* Drop one descriptor's hold on sk; the last reads the final stamps
 * (fd still open) when reap. */
static void sock_put(struct shim_sock *sk, int fd, bool reap)
{
	if (atomic_fetch_sub(&sk->refs, 1) != 1)
		return;
	if (reap)
		sock_final(sk, fd);
	sock_free(sk);
}

/* ---- arming ---- */

static int arm(struct shim_sock *sk, int fd, bool adopt)
{
	unsigned f = mode_flags() | SOF_TIMESTAMPING_OPT_ID;
	int err;

	/* Adopting: clear OPT_ID first, so setting it again restarts the
	 * key from now (TCP: write_seq; UDP: 0), which we then know. */
	if (adopt)
		set_flags(fd, 0);
	if (!sk->tcp && ring_get(sk))
		return -ENOMEM;
	if (sk->tcp) {
		if (!atomic_load(&no_id_tcp))
			f |= TAPLESS_SOF_OPT_ID_TCP;
	} else {
		f |= SOF_TIMESTAMPING_OPT_TSONLY;
	}
	/* No RX stamps in the program's own control messages: only those
	 * the device filter asked for, and we ask for none. */
	if (!atomic_load(&shim_conf.rx_unfiltered))
		f |= TAPLESS_SOF_OPT_RX_FILTER;
	for (;;) {
		err = set_flags(fd, f);
		if (err != -EINVAL)
			break;
		if (f & TAPLESS_SOF_OPT_ID_TCP) {
			atomic_store(&no_id_tcp, true);
			f &= ~TAPLESS_SOF_OPT_ID_TCP;
		} else if (f & TAPLESS_SOF_OPT_RX_FILTER) {
			atomic_store(&shim_conf.rx_unfiltered, true);
			f &= ~TAPLESS_SOF_OPT_RX_FILTER;
			shim_log_once(LOG_NOTICE, "the kernel has no "
				      "SOF_TIMESTAMPING_OPT_RX_FILTER (Linux "
				      "6.9): a program reading control messages "
				      "may see SCM_TIMESTAMPING with its data");
		} else {
			break;
		}
	}
	if (err)
		return err;
	sk->so_flags = f;
	if (!sk->tcp) {
		sk->ids_ours = shim_have_ts_opt_id();
		atomic_store(&sk->next_id, sk->ids_ours ? SHIM_UDP_ID0 : 0);
		sk->stamped_mark = atomic_load(&sk->next_id);
		atomic_store(&sk->sent_mark, sk->stamped_mark);
	}
	atomic_store(&sk->state, SHIM_ARMED);
	shim_reaper_watch(sk, fd);
	if (sk->tcp)
		SHIM_COUNT(armed_tcp);
	else
		SHIM_COUNT(armed_udp);
	if (adopt)
		SHIM_COUNT(adopted);
	return 0;
}

static atomic_flag aside_logged[SHIM_ASIDE_COUNT];

static void aside_count(int fd, enum shim_aside why)
{
	SHIM_COUNT(aside[why]);
	if (!atomic_flag_test_and_set(&aside_logged[why]))
		shim_log(why == SHIM_ASIDE_ANCHOR || why == SHIM_ASIDE_FAILED ?
			 LOG_WARNING : LOG_NOTICE,
			 "fd %d: stepping aside (and from every socket like it): "
			 "%s", fd, aside_why[why]);
	else
		shim_log(LOG_INFO, "fd %d: stepping aside: %s", fd,
			 aside_why[why]);
}

/* Whether the socket's error queue is, or will be, the program's. */
static int queue_taken(int fd, int family, bool tcp)
{
	int v;

	if (!get_int(fd, SOL_IP, IP_RECVERR, &v) && v)
		return SHIM_ASIDE_RECVERR;
	if (family == AF_INET6 && !get_int(fd, SOL_IPV6, IPV6_RECVERR, &v) && v)
		return SHIM_ASIDE_RECVERR;
	if (!get_int(fd, SOL_SOCKET, SO_ZEROCOPY, &v) && v)
		return SHIM_ASIDE_ZEROCOPY;
	if (!tcp && ((!get_int(fd, SOL_UDP, UDP_CORK, &v) && v) ||
		     (!get_int(fd, SOL_UDP, UDP_SEGMENT, &v) && v)))
		return SHIM_ASIDE_CORK;
	return -1;
}

static bool addr_any(int family, const uint8_t *a)
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, family == AF_INET ? 4 : 16);
}

/* Whether a wait begun at *t0 (CLOCK_MONOTONIC) has lasted WAIT_MAX_NS. */
static bool waited_enough(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000LL +
	       (t.tv_nsec - t0->tv_nsec) >= WAIT_MAX_NS;
}

/* Wait for another thread's look at slot to end (bounded: a signal
 * handler sending on the socket its own thread is looking at must not
 * spin for ever). Returns the word it left, or SHIM_FD_BUSY. The bound
 * is a time, not a count of yields: a UDP socket's first arming takes
 * 14 ms (it probes the kernel's per-send ids), longer than 100,000
 * yields on an idle CPU, and a send that gave up went unrecorded while
 * its datagram was stamped (test_stamp_lo, 1 run in 8). */
static uintptr_t wait_busy(_Atomic uintptr_t *slot)
{
	uintptr_t v = atomic_load(slot);
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (v == SHIM_FD_BUSY && !waited_enough(&t0)) {
		sched_yield();
		v = atomic_load(slot);
	}
	return v;
}

/* Whether the filter takes every datagram of an unconnected socket with
 * this local side: no peer list, and no port list or its own port in
 * it. */
static bool filter_takes_all(const struct frame_flow *f)
{
	const struct shim_filter *flt = &shim_conf.filter;

	return !flt->npeers && (!flt->nports ||
				shim_filter_match(flt, f->family, f->dst, f->sport, 0));
}

/* The look at a descriptor: the thread that holds its word at BUSY. */
static struct shim_sock *look(int fd, _Atomic uintptr_t *slot)
{
	int type, dom, proto, v, why, err;
	struct frame_flow flow;
	struct shim_sock *sk;
	bool tcp, adopt = false;

	if (!shim_conf.on)
		goto ignore;
	if (get_int(fd, SOL_SOCKET, SO_TYPE, &type)) {
		if (errno == EBADF) {
			atomic_store(slot, SHIM_FD_UNKNOWN);	/* nothing there */
			return NULL;
		}
		goto ignore;
	}
	if (get_int(fd, SOL_SOCKET, SO_DOMAIN, &dom) ||
	    get_int(fd, SOL_SOCKET, SO_PROTOCOL, &proto) ||
	    (dom != AF_INET && dom != AF_INET6))
		goto ignore;
	tcp = type == SOCK_STREAM && proto == IPPROTO_TCP;
	if (!tcp && !(type == SOCK_DGRAM && proto == IPPROTO_UDP))
		goto ignore;
	if (tcp && !get_int(fd, SOL_SOCKET, SO_ACCEPTCONN, &v) && v)
		goto ignore;
	if (!tcp && atomic_load(&shim_conf.udp_off))
		goto ignore;
	err = frame_flow_of_socket(&flow, fd, 0);
	if (err == -ENOTCONN) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (tcp) {
			/* Connecting: looked at again later. */
			atomic_store(slot, SHIM_FD_UNKNOWN);
			return NULL;
		}
		/* Unconnected UDP: each datagram has its own peer, so the
		 * filter is applied per datagram. */
		memset(&flow, 0, sizeof(flow));
		flow.family = dom;
		flow.proto = IPPROTO_UDP;
		if (getsockname(fd, (struct sockaddr *)&ss, &len))
			goto ignore;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			memcpy(flow.src, &a->sin_addr, 4);
			flow.sport = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			memcpy(flow.src, &a->sin6_addr, 16);
			flow.sport = ntohs(a->sin6_port);
		}
	} else if (err) {
		goto ignore;
	} else if (!shim_filter_match(&shim_conf.filter, flow.family, flow.dst,
				      flow.sport, flow.dport)) {
		goto ignore;
	}
	if (tcp && !shim_conf.tcp_ok) {
		shim_log_once(LOG_WARNING, "TCP sockets are not stamped: "
			      "net.core.tstamp_allow_data is 0 and the program "
			      "lacks CAP_NET_RAW, so the kernel hands it no "
			      "looped packet to anchor sequence numbers with; "
			      "set sysctl net.core.tstamp_allow_data=1");
		goto ignore;
	}
	if (!get_int(fd, SOL_SOCKET, SO_TIMESTAMPING, &v) && v) {
		if (!flags_ours((unsigned)v)) {
			aside_count(fd, SHIM_ASIDE_APP_TSTAMP);
			goto app;
		}
		adopt = true;	/* armed by us before an exec() */
	}
	why = queue_taken(fd, dom, tcp);
	if (why >= 0) {
		if (adopt)
			set_flags(fd, 0);
		aside_count(fd, (enum shim_aside)why);
		goto app;
	}
	sk = sock_alloc(tcp);
	if (!sk) {
		shim_log_once(LOG_WARNING, "out of memory: sockets left "
			      "unstamped");
		SHIM_COUNT(aside[SHIM_ASIDE_FAILED]);
		goto ignore;
	}
	sk->flow = flow;
	sk->connected = err == 0;
	sk->src_fixed = !tcp && !sk->connected && !addr_any(dom, flow.src);
	if (!tcp && !sk->connected && !adopt && !filter_takes_all(&flow)) {
		/* Each datagram has its own destination, and the filter does
		 * not take them all: armed at the first it takes, if any. */
		atomic_store(&sk->state, SHIM_PENDING);
		atomic_store(slot, (uintptr_t)sk);
		return NULL;
	}
	err = arm(sk, fd, adopt);
	if (err) {
		shim_log_once(LOG_WARNING, "fd %d: SO_TIMESTAMPING refused: %s",
			      fd, strerror(-err));
		SHIM_COUNT(aside[SHIM_ASIDE_FAILED]);
		sock_free(sk);
		goto ignore;
	}
	atomic_store(slot, (uintptr_t)sk);
	shim_log(LOG_DEBUG, "fd %d: stamping %s%s, flags 0x%x", fd,
		 tcp ? "TCP" : "UDP", adopt ? " (adopted)" : "", sk->so_flags);
	return sk;
app:
	atomic_store(slot, SHIM_FD_APP);
	return NULL;
ignore:
	atomic_store(slot, SHIM_FD_IGNORED);
	return NULL;
}

static struct shim_sock *classify(int fd)
{
	_Atomic uintptr_t *slot;
	uintptr_t cur;

	if (shim_in_vfork_child())
		return NULL;
	slot = shim_table_slot(&shim_socks, fd, true);
	if (!slot)
		return NULL;
	for (;;) {
		cur = atomic_load(slot);
		if (cur == SHIM_FD_UNKNOWN &&
		    atomic_compare_exchange_strong(slot, &cur, SHIM_FD_BUSY))
			return look(fd, slot);
		if (cur == SHIM_FD_BUSY && (cur = wait_busy(slot)) == SHIM_FD_BUSY)
			return NULL;
		if (cur != SHIM_FD_UNKNOWN)
			return SHIM_FD_SOCK(cur) ? shim_sock_armed(fd) : NULL;
	}
}

struct shim_sock *shim_classify(int fd)
{
	/* The look's getsockopt() calls fail on what is not a socket: the
	 * program's call that brought us here must find errno as it left
	 * it (a successful write() changes nothing). */
	int e = errno;
	struct shim_sock *sk = classify(fd);

	errno = e;
	return sk;
}

struct shim_sock *shim_sock_for_dest(int fd, const struct sockaddr *to,
				     socklen_t len)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);
	struct shim_sock *sk;
	const uint8_t *addr;
	uint16_t port;
	int family, e, err;
	struct timespec t0;

	if (!SHIM_FD_SOCK(v) || !to)
		return NULL;
	sk = (struct shim_sock *)v;
	/* Armed since the caller looked (by another thread's first send):
	 * this send is stamped, so it must be recorded. */
	if (atomic_load(&sk->state) == SHIM_ARMED)
		return sk;
	if (atomic_load_explicit(&sk->state, memory_order_relaxed) != SHIM_PENDING)
		return NULL;
	if (to->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		family = AF_INET;
		addr = (const uint8_t *)&((const struct sockaddr_in *)to)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)to)->sin_port);
	} else if (to->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)to;

		family = AF_INET6;
		addr = a->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
			family = AF_INET;
			addr += 12;
		}
		port = ntohs(a->sin6_port);
	} else {
		return NULL;
	}
	e = errno;
	if (!sk->flow.sport) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
			sk->flow.sport = ntohs(ss.ss_family == AF_INET ?
				((struct sockaddr_in *)&ss)->sin_port :
				((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (atomic_load(&shim_conf.udp_off) ||
	    !shim_filter_match(&shim_conf.filter, family, addr, sk->flow.sport, port)) {
		errno = e;
		return NULL;
	}
	/* One thread arms it. Another thread's first send meanwhile waits
	 * for it to finish and takes the armed socket: sent past us, its
	 * datagram would still be stamped once the arming thread turns
	 * stamping on, and its stamp would come unkeyed. Bounded (see
	 * wait_busy()): a signal handler interrupting the arming thread
	 * gives up and sends past us. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_flag_test_and_set(&sk->reaping)) {
		if (waited_enough(&t0)) {
			errno = e;
			return NULL;
		}
		sched_yield();
	}
	err = atomic_load(&sk->state) == SHIM_PENDING ? arm(sk, fd, false) : 0;
	if (err) {
		shim_log_once(LOG_WARNING, "fd %d: SO_TIMESTAMPING refused: %s",
			      fd, strerror(-err));
		SHIM_COUNT(aside[SHIM_ASIDE_FAILED]);
		atomic_store(&sk->state, SHIM_ASIDE);
	} else {
		shim_log(LOG_DEBUG, "fd %d: stamping UDP from its first datagram "
			 "the filter takes, flags 0x%x", fd, sk->so_flags);
	}
	atomic_flag_clear(&sk->reaping);
	errno = e;
	return shim_sock_armed(fd);
}

struct shim_sock *shim_sock_queue_ours(int fd)
{
	uintptr_t v = shim_table_get(&shim_socks, fd);
	struct shim_sock *sk;
	int st;

	if (!SHIM_FD_SOCK(v))
		return NULL;
	sk = (struct shim_sock *)v;
	st = atomic_load_explicit(&sk->state, memory_order_relaxed);
	return st == SHIM_ARMED || (st == SHIM_ASIDE &&
				    atomic_load_explicit(&sk->late_ours,
							 memory_order_relaxed)) ? sk : NULL;
}

/* ---- stepping aside ---- */

/* Whether the program will read the error queue itself after this. */
static bool queue_taken_by(enum shim_aside why)
{
	return why == SHIM_ASIDE_APP_TSTAMP || why == SHIM_ASIDE_RECVERR ||
	       why == SHIM_ASIDE_ZEROCOPY || why == SHIM_ASIDE_ERRQUEUE;
}

#define LATE_WAIT_NS 10000000LL	/* stamps in flight, before the program
				 * takes the queue */

void shim_aside_locked(struct shim_sock *sk, int fd, enum shim_aside why)
{
	bool late = !queue_taken_by(why);

	if (atomic_load(&sk->state) != SHIM_ARMED) {
		/* Aside already, its late stamps still ours: the program
		 * now takes the queue. What came is read first. */
		if (!late && atomic_load(&sk->late_ours)) {
			shim_reap_late(sk, fd);
			atomic_store(&sk->late_ours, false);
		}
		return;
	}
	/* Stamps already queued are ours: read them first, then clear the
	 * flags (OPT_ID too, so the program's own keys start afresh). */
	shim_reap_drain(sk, fd);
	if (!late && shim_outstanding(sk)) {
		/* The program is about to read the queue: stamps of our
		 * sends still in flight (a qdisc, a NIC slow to stamp) would
		 * reach it as its own. Wait a little for them; past that
		 * they are the program's (tapless-stamp(8)). */
		int64_t end = nstime_now(CLOCK_MONOTONIC) + LATE_WAIT_NS;

		while (shim_outstanding(sk) &&
		       nstime_now(CLOCK_MONOTONIC) < end) {
			struct pollfd p = { .fd = fd, .events = 0 };

			REAL(poll)(&p, 1, 1);
			shim_reap_drain(sk, fd);
		}
	}
	set_flags(fd, 0);
	/* The program leaves the queue alone: stamps of sends made while
	 * armed that come later are still ours, read by the reaper and by
	 * the wait wrappers, so no POLLERR of ours ever reaches it. */
	atomic_store(&sk->late_ours, late);
	atomic_store(&sk->state, SHIM_ASIDE);
	aside_count(fd, why);
}

void shim_aside(struct shim_sock *sk, int fd, enum shim_aside why)
{
	/* Bounded: in a signal handler that interrupted the holder on its
	 * own thread, the flag would never come. The send goes on armed
	 * then; the next call steps aside. */
	for (int i = 0; atomic_flag_test_and_set_explicit(&sk->reaping,
						memory_order_acquire); i++) {
		if (i == 1000)
			return;
		sched_yield();
	}
	shim_aside_locked(sk, fd, why);
	atomic_flag_clear_explicit(&sk->reaping, memory_order_release);
}

/* ---- descriptor numbers ---- */

void shim_fd_reset(int fd, bool reap)
{
	_Atomic uintptr_t *slot = shim_table_slot(&shim_socks, fd, false);
	uintptr_t v;

	if (slot) {
		v = atomic_exchange(slot, SHIM_FD_UNKNOWN);
		if (SHIM_FD_SOCK(v)) {
			if (atomic_load(&((struct shim_sock *)v)->watched))
				shim_reaper_unwatch(fd);
			sock_put((struct shim_sock *)v, fd, reap);
		}
	}
	slot = shim_table_slot(&shim_eps, fd, false);
	if (slot) {
		v = atomic_exchange(slot, SHIM_FD_UNKNOWN);
		if (SHIM_FD_SOCK(v))
			shim_ep_release((struct shim_ep *)v);
	}
}

void shim_fd_copy(int oldfd, int newfd)
{
	_Atomic uintptr_t *slot;
	uintptr_t v, prev;

	v = shim_table_get(&shim_socks, oldfd);
	if (v == SHIM_FD_BUSY)
		v = SHIM_FD_UNKNOWN;	/* looked at again through newfd */
	slot = shim_table_slot(&shim_socks, newfd, v != SHIM_FD_UNKNOWN);
	if (slot) {
		if (SHIM_FD_SOCK(v))
			atomic_fetch_add(&((struct shim_sock *)v)->refs, 1);
		prev = atomic_exchange(slot, v);
		if (SHIM_FD_SOCK(prev))
			sock_put((struct shim_sock *)prev, newfd, false);
	}
	v = shim_table_get(&shim_eps, oldfd);
	slot = shim_table_slot(&shim_eps, newfd, SHIM_FD_SOCK(v));
	if (slot) {
		if (SHIM_FD_SOCK(v))
			shim_ep_hold((struct shim_ep *)v);
		prev = atomic_exchange(slot, SHIM_FD_SOCK(v) ? v : 0);
		if (SHIM_FD_SOCK(prev))
			shim_ep_release((struct shim_ep *)prev);
	}
}

void shim_fd_app(int fd, enum shim_aside why)
{
	_Atomic uintptr_t *slot = shim_table_slot(&shim_socks, fd, true);
	uintptr_t v;

	if (!slot)
		return;
	for (;;) {
		v = wait_busy(slot);
		if (v == SHIM_FD_BUSY)
			return;
		if (SHIM_FD_SOCK(v)) {
			/* Armed, or aside with late stamps of ours still
			 * coming: the program takes the queue now. */
			shim_aside((struct shim_sock *)v, fd, why);
			return;
		}
		/* Never armed: remember, so that no later look (connect,
		 * exec) takes its stamps for ours. */
		if (v == SHIM_FD_APP ||
		    atomic_compare_exchange_weak(slot, &v, SHIM_FD_APP))
			return;
	}
}

static void udp_off_one(int fd, uintptr_t v, void *arg)
{
	struct shim_sock *sk = (struct shim_sock *)v;

	(void)arg;
	if (!sk->tcp && atomic_load(&sk->state) == SHIM_ARMED)
		shim_aside(sk, fd, SHIM_ASIDE_UNSTAMPABLE);
}

void shim_sock_udp_off(void)
{
	shim_table_each(&shim_socks, udp_off_one, NULL);
}

void shim_sock_connected(struct shim_sock *sk, int fd)
{
	struct frame_flow flow;

	if (frame_flow_of_socket(&flow, fd, 0) == 0) {
		sk->flow = flow;
		sk->connected = true;
	} else {
		sk->connected = false;
	}
	/* Routes found for the old peer are forgotten; when a send holds
	 * the cache now, it keeps one more, which names a real route. */
	for (int i = 0; i < 100000; i++)
		if (!atomic_flag_test_and_set_explicit(&sk->routes_busy,
						       memory_order_acquire)) {
			sk->nroutes = 0;
			atomic_flag_clear_explicit(&sk->routes_busy,
						   memory_order_release);
			break;
		}
}

/* ---- the whole process ---- */

static void sum_one(int fd, uintptr_t v, void *arg)
{
	struct shim_sock *sk = (struct shim_sock *)v;

	(void)fd;
	(void)arg;
	/* Moved into the process's counters, so a socket shared by dup()s
	 * is counted once. */
	if (atomic_load(&sk->state) == SHIM_FREE)
		return;
	atomic_fetch_add(&shim_stats.sends, atomic_exchange(&sk->sends, 0));
	atomic_fetch_add(&shim_stats.lost, atomic_exchange(&sk->lost, 0));
	atomic_fetch_add(&shim_stats.stamps, sk->stamps);
	atomic_fetch_add(&shim_stats.unkeyed, sk->unkeyed);
	atomic_fetch_add(&shim_stats.filtered, sk->filtered);
	atomic_fetch_add(&shim_stats.mismatch, sk->mismatch);
	atomic_fetch_add(&shim_stats.late, sk->late);
	sk->stamps = sk->unkeyed = sk->filtered = sk->mismatch = sk->late = 0;
}

void shim_stats_sum(void)
{
	shim_table_each(&shim_socks, sum_one, NULL);
}

static void fork_one(int fd, uintptr_t v, void *arg)
{
	struct shim_sock *sk = (struct shim_sock *)v;

	(void)fd;
	(void)arg;
	/* Flags held by threads the child does not have. */
	atomic_flag_clear(&sk->lock);
	atomic_flag_clear(&sk->routes_busy);
	atomic_flag_clear(&sk->reaping);
	atomic_store(&sk->watched, 0);
	atomic_store(&sk->sends, 0);
	atomic_store(&sk->lost, 0);
	sk->stamps = sk->unkeyed = sk->filtered = sk->mismatch = sk->late = 0;
}

void shim_sock_after_fork(void)
{
	shim_table_each(&shim_socks, fork_one, NULL);
}

void shim_sock_init(void)
{
	/* Descriptors 0-4095: the page every program uses, made now rather
	 * than by calloc() at a first send that may be in a handler. */
	shim_table_slot(&shim_socks, 0, true);
	shim_table_slot(&shim_eps, 0, true);
}

/* The socket's last stamps: everything queued, and the accounts of what
 * never came (a stamp whose datagram record never came is not keyed; a
 * datagram recorded whose stamp never came is lost). */
static void sock_final(struct shim_sock *sk, int fd)
{
	for (int i = 0; i < 1000 && (atomic_load(&sk->state) == SHIM_ARMED ||
				     atomic_load(&sk->late_ours)) &&
	     shim_reap(sk, fd) > 0; i++)
		;
	sk->unkeyed += sk->nstash;
	sk->nstash = 0;
	if (!sk->tcp && sk->ring)
		for (unsigned i = 0; i < SHIM_UDP_RING; i++)
			if (atomic_load(&sk->ring[i].tag) &&
			    !atomic_load(&sk->ring[i].stamped)) {
				atomic_fetch_add(&sk->lost, 1);
				atomic_store(&sk->ring[i].stamped, true);
			}
}

static void reap_one(int fd, uintptr_t v, void *arg)
{
	(void)arg;
	sock_final((struct shim_sock *)v, fd);
}

void shim_sock_reap_all(void)
{
	shim_table_each(&shim_socks, reap_one, NULL);
}
