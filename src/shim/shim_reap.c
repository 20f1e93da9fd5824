/* shim_reap.c — reading TX stamps off the error queue, keying them and
 * handing them to capd; see shim.h and shim_errq.h. */
#include "shim/shim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "live/txsock.h"

/* The kernel's cmsg type for a per-send OPT_ID (Linux 6.13,
 * include/uapi/asm-generic/socket.h); newer than Debian 12's headers. */
#define SHIM_SCM_TS_OPT_ID 81

#define REAP_MAX 64		/* records handed over at once */
#define READ_MAX 4096		/* messages read per call: bounded work (a
				 * queue holds a few hundred at most) */
#define PKT_ROOM 192		/* a looped packet's headers: Ethernet,
				 * VLAN tags, IPv6, TCP with options */

/* ---- the egress interface of hardware stamps ---- */

static bool same_addr(const struct sockaddr *sa, const struct frame_flow *f)
{
	if (sa->sa_family == AF_INET && f->family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)sa)->sin_addr,
			       f->src, 4);
	if (sa->sa_family == AF_INET6 && f->family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			       f->src, 16);
	return false;
}

/* Once per socket, at its first hardware stamp: the interface holding
 * its source address, and that interface's PHC (ETHTOOL_GET_TS_INFO, an
 * ioctl: no netlink library in the program). */
static void phc_lookup(struct shim_sock *sk, int fd, const struct frame_flow *f)
{
	struct ifaddrs *all, *a;
	char name[IF_NAMESIZE] = "";

	sk->phc_known = true;
	if (getifaddrs(&all))
		return;
	for (a = all; a; a = a->ifa_next)
		if (a->ifa_addr && same_addr(a->ifa_addr, f)) {
			snprintf(name, sizeof(name), "%s", a->ifa_name);
			break;
		}
	freeifaddrs(all);
	if (name[0]) {
		struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
		struct ifreq ifr;
		int s = REAL(socket)(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		ifr.ifr_data = (void *)&info;
		if (s >= 0 && ioctl(s, SIOCETHTOOL, &ifr) == 0)
			sk->phc = info.phc_index;
		if (s >= 0)
			REAL(close)(s);
		sk->ifindex = if_nametoindex(name);
	}
	shim_log(LOG_INFO, "fd %d: hardware stamps from %s, PHC %d", fd,
		 name[0] ? name : "an unknown interface", sk->phc);
}

/* ---- keyed records ---- */

/* The records of one read of the queue, handed over together: one
 * system call to capd for many stamps. */
struct batch {
	size_t n;
	struct txsock_rec r[REAP_MAX];
};

static void emit(struct shim_sock *sk, int fd, const struct shim_errq_stamp *st,
		 const struct txsock_key *key, struct batch *b)
{
	struct txsock_rec r;

	memset(&r, 0, sizeof(r));
	r.ts_ns = st->ns;
	r.flags = TXSOCK_F_KEYED;
	r.phc = -1;
	r.key = *key;
	r.key.stage = st->stage;
	if (st->hw) {
		if (!sk->phc_known)
			phc_lookup(sk, fd, &key->flow);
		r.flags |= TXSOCK_F_HW;
		r.phc = sk->phc;
		r.ifindex = sk->ifindex;
	}
	if (SHIM_UNLIKELY(shim_log_debug)) {
		char a[INET6_ADDRSTRLEN], z[INET6_ADDRSTRLEN];

		inet_ntop(key->flow.family, key->flow.src, a, sizeof(a));
		inet_ntop(key->flow.family, key->flow.dst, z, sizeof(z));
		shim_log(LOG_DEBUG, "fd %d: key %s %s:%u > %s:%u seq %u len %u "
			 "hash %016llx stage %u %s %lld", fd,
			 key->flow.proto == IPPROTO_TCP ? "tcp" : "udp", a,
			 key->flow.sport, z, key->flow.dport, key->seq, key->len,
			 (unsigned long long)key->hash, st->stage,
			 st->hw ? "hw" : "sw", (long long)st->ns);
	}
	if (b->n == REAP_MAX) {
		shim_hand(b->r, b->n);
		b->n = 0;
	}
	b->r[b->n++] = r;
}

static void mark_stamped(struct shim_sock *sk, uint32_t next)
{
	if ((int32_t)(next - sk->stamped_mark) > 0)
		sk->stamped_mark = next;
}

/* ---- TCP ---- */

/* Anchored: from now on the kernel may hand the stamps without packets. */
static void go_tsonly(struct shim_sock *sk, int fd)
{
	unsigned f = sk->so_flags | SOF_TIMESTAMPING_OPT_TSONLY;

	/* Setting the flags again while OPT_ID stays set keeps the key's
	 * base (sock_set_timestamping() resets sk_tskey only when OPT_ID
	 * was off). If the kernel says no, looped packets keep coming,
	 * which only costs memory. */
	if (REAL(setsockopt)(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) == 0) {
		sk->so_flags = f;
		sk->tsonly = true;
	}
	shim_log(LOG_DEBUG, "fd %d: TCP keys anchored after %u stamps: byte = "
		 "0x%08x + key%s", fd, sk->anchor.tries, sk->anchor.base,
		 sk->tsonly ? "" : " (still looped)");
}

/* Returns -1 when the socket is to be stepped aside from. */
static int tcp_stamp(struct shim_sock *sk, int fd,
		     const struct shim_errq_stamp *st, const uint8_t *pkt,
		     size_t n, struct batch *b)
{
	struct txsock_key key;
	uint32_t first, last;

	memset(&key, 0, sizeof(key));
	key.flow = sk->flow;
	if (n > 0 && shim_errq_segment(pkt, n, &sk->flow, &first, &last) == 0) {
		int r = shim_anchor_feed(&sk->anchor, st->key, first, last,
					 &sk->mismatch);

		if (r == 1)
			go_tsonly(sk, fd);
		else if (r < 0)
			return -1;
		/* Not anchored yet: a byte of the segment that holds the
		 * stamped one names the same frame. */
		key.seq = sk->anchor.done ? sk->anchor.base + st->key : last;
	} else if (sk->anchor.done) {
		key.seq = sk->anchor.base + st->key;
	} else {
		sk->unkeyed++;
		return 0;
	}
	mark_stamped(sk, st->key + 1);
	emit(sk, fd, st, &key, b);
	return 0;
}

/* Watched by the reaper since the last fork. A socket the reaper left
 * idle (its last wake-up found the queue read already) is watched again
 * only when stamps are still to come after the send's own reading (a
 * hardware stamp, a packet held in a qdisc or by the window) or when
 * io_uring may send around us: re-arming it after every send would wake
 * the reaper once per stamp, up to a thousand times a second, each a
 * system call on the send path and a context switch on the program's
 * CPU (most of the p99 the shim added in bench/stamp-cgroup.sh). */
static inline void watch(struct shim_sock *sk, int fd)
{
	unsigned w = atomic_load_explicit(&sk->watched, memory_order_relaxed),
		 epoch = atomic_load_explicit(&shim_reaper_epoch,
					      memory_order_relaxed);

	if (SHIM_LIKELY(w == epoch))
		return;
	if (w == (epoch | SHIM_WATCH_IDLE) && !shim_outstanding(sk) &&
	    !atomic_load_explicit(&shim_conf.udp_off, memory_order_relaxed))
		return;
	shim_reaper_watch(sk, fd);
}

void shim_sent(struct shim_sock *sk, int fd)
{
	/* A software stamp is usually queued before send() returns: taking
	 * it now keeps the queue empty, so the poll that follows sees no
	 * POLLERR at all. Its hand-over to capd is only queued (shim_hand). */
	shim_reap_try(sk, fd);
	watch(sk, fd);
}

void shim_tcp_sent(struct shim_sock *sk, int fd, size_t n)
{
	atomic_fetch_add_explicit(&sk->sends, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&sk->sent_mark, (uint32_t)n,
				  memory_order_relaxed);
	shim_sent(sk, fd);
}

/* ---- UDP ---- */

static bool flow_dst(struct frame_flow *f, const struct sockaddr *sa,
		     socklen_t len)
{
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)sa;

		f->family = AF_INET;
		memcpy(f->dst, &a->sin_addr, 4);
		f->dport = ntohs(a->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
			f->family = AF_INET;
			memcpy(f->dst, a->sin6_addr.s6_addr + 12, 4);
		} else {
			f->family = AF_INET6;
			memcpy(f->dst, &a->sin6_addr, 16);
		}
		f->dport = ntohs(a->sin6_port);
		return true;
	}
	return false;
}

/* The source address the kernel picks for dst: a scratch socket
 * connected there says (no packet is sent). Cached per socket. */
static bool route_src(struct shim_sock *sk, int fd, int family,
		      const uint8_t *dst, uint8_t *src)
{
	size_t alen = family == AF_INET ? 4 : 16;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int s;
	bool ok = false;
	/* The cache is the socket's, shared by its threads and by a signal
	 * handler: when another holds it, the route is found without it. */
	bool locked = !atomic_flag_test_and_set_explicit(&sk->routes_busy,
							  memory_order_acquire);

	for (unsigned i = 0; locked && i < sk->nroutes && i < 4; i++)
		if (sk->routes[i].family == family &&
		    !memcmp(sk->routes[i].dst, dst, alen)) {
			memcpy(src, sk->routes[i].src, 16);
			atomic_flag_clear_explicit(&sk->routes_busy,
						   memory_order_release);
			return true;
		}
	memset(src, 0, 16);
	if (family == AF_INET && dst[0] >= 224 && dst[0] <= 239) {
		struct in_addr ifa;
		socklen_t l = sizeof(ifa);

		/* A multicast sender picks its interface by address. */
		if (!REAL(getsockopt)(fd, SOL_IP, IP_MULTICAST_IF, &ifa, &l) &&
		    ifa.s_addr) {
			memcpy(src, &ifa, 4);
			ok = true;
		}
	}
	if (!ok) {
		memset(&ss, 0, sizeof(ss));
		if (family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			a->sin_family = AF_INET;
			a->sin_port = htons(9);
			memcpy(&a->sin_addr, dst, 4);
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			a->sin6_family = AF_INET6;
			a->sin6_port = htons(9);
			memcpy(&a->sin6_addr, dst, 16);
		}
		s = REAL(socket)(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return false;
		if (REAL(connect)(s, (struct sockaddr *)&ss, family == AF_INET ?
				  sizeof(struct sockaddr_in) :
				  sizeof(struct sockaddr_in6)) == 0 &&
		    getsockname(s, (struct sockaddr *)&ss, &len) == 0) {
			if (family == AF_INET)
				memcpy(src, &((struct sockaddr_in *)&ss)->sin_addr, 4);
			else
				memcpy(src, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
			ok = true;
		}
		REAL(close)(s);
	}
	if (ok && locked) {
		struct shim_route *r = &sk->routes[sk->nroutes++ % 4];

		r->family = family;
		memcpy(r->dst, dst, alen);
		memcpy(r->src, src, 16);
	}
	if (locked)
		atomic_flag_clear_explicit(&sk->routes_busy, memory_order_release);
	return ok;
}

/* The flow of a datagram sent through m on sk. */
static bool udp_flow(struct shim_sock *sk, int fd, const struct msghdr *m,
		     struct frame_flow *f)
{
	const uint8_t *pktinfo_src = NULL;

	if (!sk->flow.sport) {
		/* Bound by the first send: the port is there now. */
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
			sk->flow.sport = ntohs(ss.ss_family == AF_INET ?
				((struct sockaddr_in *)&ss)->sin_port :
				((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (!m->msg_name || !m->msg_namelen) {
		if (!sk->connected)
			return false;
		*f = sk->flow;
		return true;
	}
	memset(f, 0, sizeof(*f));
	f->proto = IPPROTO_UDP;
	f->sport = sk->flow.sport;
	if (!flow_dst(f, m->msg_name, m->msg_namelen))
		return false;
	for (struct cmsghdr *c = m->msg_controllen ?
	     CMSG_FIRSTHDR((struct msghdr *)m) : NULL; c;
	     c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		static const uint8_t zero[16];

		if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo)) &&
		    f->family == AF_INET) {
			const struct in_pktinfo *pi = (const void *)CMSG_DATA(c);

			if (pi->ipi_spec_dst.s_addr)
				pktinfo_src = (const uint8_t *)&pi->ipi_spec_dst;
		} else if (c->cmsg_level == SOL_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo)) &&
			   f->family == AF_INET6) {
			const struct in6_pktinfo *pi = (const void *)CMSG_DATA(c);

			if (memcmp(&pi->ipi6_addr, zero, 16))
				pktinfo_src = (const uint8_t *)&pi->ipi6_addr;
		}
	}
	if (pktinfo_src)
		memcpy(f->src, pktinfo_src, f->family == AF_INET ? 4 : 16);
	else if (sk->src_fixed && f->family == sk->flow.family)
		memcpy(f->src, sk->flow.src, 16);
	else if (!route_src(sk, fd, f->family, f->dst, f->src))
		return false;
	return true;
}

void shim_udp_record(struct shim_sock *sk, int fd, uint32_t id,
		     const struct msghdr *m, size_t n)
{
	struct shim_udp_slot *s = &sk->ring[id % SHIM_UDP_RING];
	struct frame_flow f;
	uint64_t h = TXSOCK_HASH_INIT;
	size_t left = n;

	atomic_fetch_add_explicit(&sk->sends, 1, memory_order_relaxed);
	if ((int32_t)(id + 1 - atomic_load_explicit(&sk->sent_mark,
						    memory_order_relaxed)) > 0)
		atomic_store_explicit(&sk->sent_mark, id + 1,
				      memory_order_relaxed);
	if (!udp_flow(sk, fd, m, &f))
		return;		/* its stamp will be counted unkeyed */
	for (size_t i = 0; i < m->msg_iovlen && left; i++) {
		size_t k = m->msg_iov[i].iov_len < left ? m->msg_iov[i].iov_len :
			   left;

		h = txsock_hash(h, m->msg_iov[i].iov_base, k);
		left -= k;
	}
	/* The datagram this slot described before never had its stamp: the
	 * kernel dropped it (error queue full) or the packet never left. */
	if (atomic_load_explicit(&s->tag, memory_order_relaxed) &&
	    !atomic_load_explicit(&s->stamped, memory_order_relaxed))
		atomic_fetch_add_explicit(&sk->lost, 1, memory_order_relaxed);
	atomic_store_explicit(&s->stamped, false, memory_order_relaxed);
	/* A reader in another thread sees either the old tag, 0, or the
	 * new one after the fields (seqlock-like; see udp_lookup). */
	atomic_store_explicit(&s->tag, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	s->len = (uint32_t)n;
	s->hash = h;
	s->flow = f;
	s->wanted = shim_filter_match(&shim_conf.filter, f.family, f.dst,
				      f.sport, f.dport);
	atomic_store_explicit(&s->tag, id + 1, memory_order_release);
}

static bool udp_lookup(struct shim_sock *sk, uint32_t id,
		       struct shim_udp_slot *out)
{
	struct shim_udp_slot *s = &sk->ring[id % SHIM_UDP_RING];
	uint32_t t = atomic_load_explicit(&s->tag, memory_order_acquire);

	if (t != id + 1)
		return false;
	out->wanted = s->wanted;
	out->len = s->len;
	out->hash = s->hash;
	out->flow = s->flow;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&s->tag, memory_order_relaxed) == t;
}

/* 1: keyed and handed (or filtered); 0: not recorded yet; -1: never. */
static int udp_try(struct shim_sock *sk, int fd, uint32_t id,
		   const struct shim_errq_stamp *st, struct batch *b)
{
	struct shim_udp_slot slot;
	struct txsock_key key;
	uint32_t next = atomic_load(&sk->next_id);

	if (sk->ids_ours && id < SHIM_UDP_ID0)
		return -1;	/* the kernel counted it: not a send we saw */
	if (!udp_lookup(sk, id, &slot)) {
		/* Sent by another thread whose record is not in yet, or
		 * long gone from the ring. */
		if ((int32_t)(id - (next - SHIM_UDP_RING)) >= 0 &&
		    (int32_t)(next + 1 - id) >= 0)
			return 0;
		return -1;
	}
	mark_stamped(sk, id + 1);
	atomic_store_explicit(&sk->ring[id % SHIM_UDP_RING].stamped, true,
			      memory_order_relaxed);
	if (!slot.wanted) {
		sk->filtered++;
		return 1;
	}
	memset(&key, 0, sizeof(key));
	key.flow = slot.flow;
	key.len = slot.len;
	key.hash = slot.hash;
	emit(sk, fd, st, &key, b);
	return 1;
}

static void udp_stamp(struct shim_sock *sk, int fd,
		      const struct shim_errq_stamp *st, struct batch *b)
{
	int r = udp_try(sk, fd, st->key, st, b);

	if (r < 0 || (r == 0 && sk->nstash >= SHIM_STASH)) {
		sk->unkeyed++;
		mark_stamped(sk, st->key + 1);
	} else if (r == 0) {
		sk->stash[sk->nstash].id = st->key;
		sk->stash[sk->nstash].st = *st;
		sk->nstash++;
	}
}

static void resolve_stash(struct shim_sock *sk, int fd, struct batch *b)
{
	unsigned keep = 0;

	for (unsigned i = 0; i < sk->nstash; i++) {
		int r = udp_try(sk, fd, sk->stash[i].id, &sk->stash[i].st, b);

		if (r == 0)
			sk->stash[keep++] = sk->stash[i];
		else if (r < 0)
			sk->unkeyed++;
	}
	sk->nstash = keep;
}

static void probe_opt_id(void);
static pthread_once_t opt_id_once = PTHREAD_ONCE_INIT;
static bool opt_id_cmsg;

bool shim_have_ts_opt_id(void)
{
	if (shim_conf.udp_kernel_ids)
		return false;
	pthread_once(&opt_id_once, probe_opt_id);
	return opt_id_cmsg;
}

/* Send an empty datagram with the cmsg from a scratch socket: a kernel
 * without SCM_TS_OPT_ID refuses the cmsg (EINVAL) before routing. */
static void probe_opt_id(void)
{
	unsigned f = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		     SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct msghdr m = { .msg_name = &a, .msg_namelen = sizeof(a),
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	uint32_t id = 0;
	int s = REAL(socket)(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SHIM_SCM_TS_OPT_ID;
	c->cmsg_len = CMSG_LEN(sizeof(id));
	memcpy(CMSG_DATA(c), &id, sizeof(id));
	if (REAL(setsockopt)(s, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) == 0)
		opt_id_cmsg = REAL(sendmsg)(s, &m, MSG_DONTWAIT) >= 0 ||
			      errno != EINVAL;
	REAL(close)(s);
	shim_log(LOG_DEBUG, "UDP datagram ids: %s", opt_id_cmsg ?
		 "ours, per send (SCM_TS_OPT_ID)" : "the kernel's count");
}

int shim_udp_ctl_add(const struct msghdr *m, void *buf, size_t cap,
		     uint32_t id)
{
	size_t have = CMSG_ALIGN(m->msg_controllen);
	struct cmsghdr *c;

	if (have + CMSG_SPACE(sizeof(id)) > cap)
		return -1;
	if (m->msg_controllen)
		memcpy(buf, m->msg_control, m->msg_controllen);
	memset((char *)buf + m->msg_controllen, 0,
	       have + CMSG_SPACE(sizeof(id)) - m->msg_controllen);
	c = (struct cmsghdr *)((char *)buf + have);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SHIM_SCM_TS_OPT_ID;
	c->cmsg_len = CMSG_LEN(sizeof(id));
	memcpy(CMSG_DATA(c), &id, sizeof(id));
	return (int)(have + CMSG_SPACE(sizeof(id)));
}

/* ---- the error queue ---- */

/* One message read off the error queue: its packet's headers (a looped
 * TCP stamp's) and its control messages. */
struct errq_msg {
	uint8_t pkt[PKT_ROOM];
	union {
		char buf[256];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr m;
};

/* The next message, without waiting: its length, or -1 with errno
 * (EAGAIN: none). */
static ssize_t errq_read(int fd, struct errq_msg *e)
{
	ssize_t n;

	e->iov = (struct iovec){ e->pkt, sizeof(e->pkt) };
	e->m = (struct msghdr){ .msg_iov = &e->iov, .msg_iovlen = 1,
				.msg_control = e->ctl.buf,
				.msg_controllen = sizeof(e->ctl.buf) };
	do
		n = REAL(recvmsg)(fd, &e->m, MSG_ERRQUEUE | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Read what is queued (at most READ_MAX messages). *trouble says why to
 * step aside (-1: no reason). */
static int drain(struct shim_sock *sk, int fd, int *trouble)
{
	struct batch b;
	int got = 0;
	/* Stamps were due when we began: once the last of them is read, the
	 * read that would only say EAGAIN is left out (one system call less
	 * per send). Anything else queued still raises POLLERR, which the
	 * wait wrappers settle, and is read by the next call here. */
	bool due = shim_outstanding(sk);

	b.n = 0;
	if (!sk->tcp && sk->nstash)
		resolve_stash(sk, fd, &b);
	for (int i = 0; i < READ_MAX; i++) {
		struct errq_msg e;
		struct shim_errq_stamp st;
		ssize_t n = errq_read(fd, &e);
		int r;

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				shim_log(LOG_INFO, "fd %d: error queue: %s", fd,
					 strerror(errno));
				*trouble = SHIM_ASIDE_FAILED;
			}
			break;
		}
		got++;
		r = shim_errq_parse(&e.m, &st);
		if (r == 0) {
			/* Not a stamp: an ICMP error or a zerocopy
			 * completion whose option we did not see being
			 * set. It is read now and lost to the program;
			 * what follows is left to it. */
			SHIM_COUNT(foreign);
			shim_log_once(LOG_WARNING, "fd %d: a message that is "
				      "not a stamp was on the error queue and "
				      "was read (lost to the program): "
				      "stepping aside", fd);
			*trouble = SHIM_ASIDE_RECVERR;
			break;
		}
		if (r < 0) {
			sk->unkeyed++;
			continue;
		}
		sk->stamps++;
		if (sk->tcp) {
			if (tcp_stamp(sk, fd, &st, e.pkt, (size_t)n, &b) < 0)
				*trouble = SHIM_ASIDE_ANCHOR;
		} else {
			udp_stamp(sk, fd, &st, &b);
		}
		if (due && !shim_outstanding(sk))
			break;
	}
	/* Records that came in while we read. */
	if (!sk->tcp && sk->nstash)
		resolve_stash(sk, fd, &b);
	shim_hand(b.r, b.n);
	return got;
}

int shim_reap_late(struct shim_sock *sk, int fd)
{
	int got = 0;

	for (int i = 0; i < READ_MAX; i++) {
		struct errq_msg e;
		struct shim_errq_stamp st;

		if (errq_read(fd, &e) < 0)
			break;
		got++;
		if (shim_errq_parse(&e.m, &st) == 0) {
			/* Not a stamp: the program's from now on. */
			SHIM_COUNT(foreign);
			atomic_store(&sk->late_ours, false);
			break;
		}
		/* Too late to hand over with confidence (the keys' base may
		 * be gone with the flags): read so that no POLLERR of ours
		 * reaches the program, counted. */
		sk->late++;
	}
	return got;
}

int shim_reap_locked(struct shim_sock *sk, int fd)
{
	int trouble = -1, got;

	if (atomic_load(&sk->state) != SHIM_ARMED) {
		int e = errno;

		/* Aside with stamps of ours still coming; nothing else
		 * (a state freed by a close is no longer fd's). */
		got = atomic_load(&sk->state) == SHIM_ASIDE &&
		      atomic_load(&sk->late_ours) ? shim_reap_late(sk, fd) : 0;
		errno = e;
		return got;
	}
	got = drain(sk, fd, &trouble);
	if (trouble >= 0)
		shim_aside_locked(sk, fd, (enum shim_aside)trouble);
	return got;
}

int shim_reap_drain(struct shim_sock *sk, int fd)
{
	int trouble = -1, got = 0, n;

	/* Until the queue is empty: everything on it is ours. */
	while ((n = drain(sk, fd, &trouble)) > 0 && trouble < 0)
		got += n;
	return got;
}

int shim_reap_try(struct shim_sock *sk, int fd)
{
	int got;

	if (atomic_flag_test_and_set_explicit(&sk->reaping,
					      memory_order_acquire))
		return -1;
	got = shim_reap_locked(sk, fd);
	atomic_flag_clear_explicit(&sk->reaping, memory_order_release);
	return got;
}

int shim_reap(struct shim_sock *sk, int fd)
{
	int got;

	/* Held only while a non-blocking read loop runs. Bounded: a signal
	 * handler polling the socket its own thread is reading must not
	 * wait for ever (it then reads nothing). */
	for (int i = 0; atomic_flag_test_and_set_explicit(&sk->reaping,
							   memory_order_acquire); i++) {
		if (i == 100000)
			return 0;
		sched_yield();
	}
	got = shim_reap_locked(sk, fd);
	atomic_flag_clear_explicit(&sk->reaping, memory_order_release);
	return got;
}

short shim_settle(struct shim_sock *sk, int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (int i = 0; i < 4; i++) {
		int got = shim_reap(sk, fd);

		p.revents = 0;
		if (REAL(poll)(&p, 1, 0) < 0)
			return POLLERR;
		if (!(p.revents & POLLERR))
			return p.revents;
		/* Still POLLERR: a stamp that came meanwhile (read it and
		 * look again), or, once the queue is found empty twice, a
		 * real error: the program's. */
		if ((!got && i > 0) || !shim_sock_queue_ours(fd))
			return p.revents;
	}
	/* Stamps keep coming: a real error would still be there at the
	 * next poll, so hiding it now loses nothing. */
	return p.revents & ~POLLERR;
}
