/* hwsim_sock.c — libtapless-hwsim.so's sockets: generic netlink refused,
 * SO_TIMESTAMPING's hardware stamps asked of the kernel in software,
 * recvmsg() mapping each stamp to the PHC of the socket's NIC and the
 * simulated system clock, the faults on that path (TX stamps lost or late,
 * RX stamps on the PTP event port only, gm-gone), and the rings of TX
 * stamps held back (tx-late) that the waits of hwsim_wait.c report.
 * hwsim_preload.c says what the library answers as a whole.
 */
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/net_tstamp.h>

#include "hwsim/hwsim_held.h"
#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_private.h"

/* ---- sockets ---- */

/* Generic netlink is where ethtool's TSINFO request goes, and the kernel
 * would answer it for the real (software-only) interface. Without it,
 * tapless's tsinfo and ethtool(8) fall back to the ETHTOOL_GET_TS_INFO
 * ioctl, which is answered above. Route netlink (links, addresses) is
 * left alone. */
HWSIM_EXPORT int socket(int domain, int type, int protocol)
{
	REAL(socket);
	if (hwsim_prog_host && domain == AF_NETLINK && protocol == NETLINK_GENERIC) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return hwsim_real_socket(domain, type, protocol);
}

#define HWSIM_HW_FLAGS (SOF_TIMESTAMPING_TX_HARDWARE | \
			SOF_TIMESTAMPING_RX_HARDWARE | \
			SOF_TIMESTAMPING_RAW_HARDWARE)

/* A packet socket bound to an interface stamps with that NIC's PHC. */
HWSIM_EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int rc;

	REAL(bind);
	rc = hwsim_real_bind(fd, sa, len);
	if (!rc && hwsim_prog_host && sa && sa->sa_family == AF_PACKET && fd >= 0 &&
	    fd < HWSIM_FDS && len >= sizeof(struct sockaddr_ll)) {
		const struct sockaddr_ll *ll = (const void *)sa;

		if (ll->sll_ifindex > 0 &&
		    if_indextoname((unsigned)ll->sll_ifindex, hwsim_fdtab[fd].ifname))
			hwsim_fdtab[fd].kind = FD_SOCK;
	}
	return rc;
}

HWSIM_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			    socklen_t len)
{
	REAL(setsockopt);
	if (!hwsim_prog_host || level != SOL_SOCKET || fd < 0 || fd >= HWSIM_FDS || !val)
		return hwsim_real_setsockopt(fd, level, name, val, len);
	if (name == SO_SELECT_ERR_QUEUE && len >= sizeof(int)) {
		int rc = hwsim_real_setsockopt(fd, level, name, val, len);

		if (!rc)
			hwsim_fdtab[fd].selerr = *(const int *)val != 0;
		return rc;
	}
	if (name == SO_BINDTODEVICE) {
		int rc = hwsim_real_setsockopt(fd, level, name, val, len);

		if (!rc) {
			size_t n = len < IF_NAMESIZE - 1 ? len : IF_NAMESIZE - 1;

			memcpy(hwsim_fdtab[fd].ifname, val, n);
			hwsim_fdtab[fd].ifname[n] = 0;
			hwsim_fdtab[fd].kind = FD_SOCK;
		}
		return rc;
	}
	if ((name == SO_TIMESTAMPING_OLD || name == SO_TIMESTAMPING_NEW) &&
	    len >= sizeof(int)) {
		unsigned int want = *(const unsigned int *)val, ask;
		char buf[64];
		int rc;

		if (!(want & HWSIM_HW_FLAGS)) {
			rc = hwsim_real_setsockopt(fd, level, name, val, len);
			if (!rc) {
				hwsim_fdtab[fd].want = want;
				hwsim_fdtab[fd].kind = FD_SOCK;
			}
			return rc;
		}
		/* The kernel stamps in software what the NIC would have in
		 * hardware; recvmsg() maps the stamps. */
		ask = want & ~HWSIM_HW_FLAGS;
		if (want & SOF_TIMESTAMPING_TX_HARDWARE)
			ask |= SOF_TIMESTAMPING_TX_SOFTWARE;
		if (want & SOF_TIMESTAMPING_RX_HARDWARE)
			ask |= SOF_TIMESTAMPING_RX_SOFTWARE;
		if (want & SOF_TIMESTAMPING_RAW_HARDWARE)
			ask |= SOF_TIMESTAMPING_SOFTWARE;
		if (len > sizeof(buf))
			len = sizeof(buf);
		memcpy(buf, val, len);
		memcpy(buf, &ask, sizeof(ask));
		rc = hwsim_real_setsockopt(fd, level, name, buf, len);
		if (!rc) {
			hwsim_fdtab[fd].want = want;
			hwsim_fdtab[fd].kind = FD_SOCK;
		}
		return rc;
	}
	return hwsim_real_setsockopt(fd, level, name, val, len);
}

HWSIM_EXPORT int getsockopt(int fd, int level, int name, void *val,
			    socklen_t *len)
{
	REAL(getsockopt);
	if (hwsim_prog_host && level == SOL_SOCKET &&
	    (name == SO_TIMESTAMPING_OLD || name == SO_TIMESTAMPING_NEW) &&
	    fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].kind == FD_SOCK &&
	    (hwsim_fdtab[fd].want & HWSIM_HW_FLAGS) && val && len &&
	    *len >= sizeof(int)) {
		/* What the program set, not what the kernel was given. */
		*(unsigned int *)val = hwsim_fdtab[fd].want;
		*len = sizeof(int);
		return 0;
	}
	return hwsim_real_getsockopt(fd, level, name, val, len);
}

/* The interface that holds fd's local address, into fdtab[fd].addrif:
 * false while the socket has none of its own (unbound, or bound to the
 * wildcard address: asked again on its next packet). A connected socket's
 * packets go out of, and come in through, the interface of its address
 * on the hosts a lab builds (one subnet per link). */
static bool hwsim_sock_addrif(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (hwsim_fdtab[fd].addrif[0])
		return true;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return false;
	if (!(ss.ss_family == AF_INET &&
	      ((struct sockaddr_in *)&ss)->sin_addr.s_addr != htonl(INADDR_ANY)) &&
	    !(ss.ss_family == AF_INET6 &&
	      !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr)))
		return false;
	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != ss.ss_family)
			continue;
		if (ss.ss_family == AF_INET)
			found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
				((struct sockaddr_in *)&ss)->sin_addr.s_addr;
		else
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
					&((struct sockaddr_in6 *)&ss)->sin6_addr,
					sizeof(struct in6_addr));
		if (found)
			snprintf(hwsim_fdtab[fd].addrif, sizeof(hwsim_fdtab[fd].addrif), "%s",
				 i->ifa_name);
	}
	freeifaddrs(ifa);
	return found;
}

/* The PHC whose NIC carried a packet of fd: the interface in the stamp's
 * PKTINFO, else the one the socket is bound to, else the one that holds
 * its local address, else the host's only one. */
static int hwsim_sock_phc(int fd, int ifindex)
{
	char name[IF_NAMESIZE];
	const char *n = NULL;

	if (ifindex > 0 && if_indextoname((unsigned)ifindex, name))
		n = name;
	else if (hwsim_fdtab[fd].ifname[0])
		n = hwsim_fdtab[fd].ifname;
	else if (hwsim_phc_count(hwsim_prog_host) > 1 && hwsim_sock_addrif(fd))
		n = hwsim_fdtab[fd].addrif;
	/* The loopback has no NIC, so no PHC: as on a real host. */
	if (n)
		return strcmp(n, "lo") ? hwsim_phc_find(hwsim_prog_host, n, true) : -1;
	return hwsim_phc_count(hwsim_prog_host) == 1 ? 0 : -1;
}

/* The socket's local port, asked once. */
static int hwsim_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!hwsim_fdtab[fd].port) {
		hwsim_fdtab[fd].port = -1;
		if (!getsockname(fd, (struct sockaddr *)&ss, &len)) {
			if (ss.ss_family == AF_INET)
				hwsim_fdtab[fd].port =
					ntohs(((struct sockaddr_in *)&ss)->sin_port);
			else if (ss.ss_family == AF_INET6)
				hwsim_fdtab[fd].port =
					ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	return hwsim_fdtab[fd].port;
}

/* Whether an error-queue message is a TX stamp of the kind a NIC stamps
 * (SCM_TSTAMP_SND): not a TX_SCHED or TX_ACK stamp, nor an ICMP error. A
 * message without an extended error (a packet socket's, say) counts as
 * one. */
static bool hwsim_snd_stamp(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		struct sock_extended_err ee;

		if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
		      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR) ||
		      (c->cmsg_level == SOL_PACKET &&
		       c->cmsg_type == PACKET_TX_TIMESTAMP)) ||
		    c->cmsg_len < CMSG_LEN(sizeof(ee)))
			continue;
		memcpy(&ee, CMSG_DATA(c), sizeof(ee));
		return ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING &&
			ee.ee_info == SCM_TSTAMP_SND;
	}
	return true;
}

/* Map the stamps of a message of fd. false when a TX stamp is lost to the
 * NIC (the message is then to be dropped); *late_ns > 0 when the NIC
 * delivers it that late (tx-late), and *phc is the NIC's PHC (-1: none). */
static bool hwsim_map_stamps(int fd, struct msghdr *msg, bool errqueue,
			     int64_t *late_ns, int *phc)
{
	struct scm_timestamping *st = NULL;
	int ifindex = 0;
	unsigned int want = hwsim_fdtab[fd].want;

	*late_ns = 0;
	*phc = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		/* _NEW has 64-bit times, which a 64-bit timespec is. */
		if ((c->cmsg_type == SO_TIMESTAMPING_OLD ||
		     (c->cmsg_type == SO_TIMESTAMPING_NEW &&
		      sizeof(time_t) == 8)) &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*st)))
			st = (void *)CMSG_DATA(c);
		else if (c->cmsg_type == SCM_TIMESTAMPING_PKTINFO &&
			 c->cmsg_len >= CMSG_LEN(sizeof(struct scm_ts_pktinfo)))
			ifindex = (int)((struct scm_ts_pktinfo *)CMSG_DATA(c))->if_index;
	}
	if (!st || (!st->ts[0].tv_sec && !st->ts[0].tv_nsec))
		return true;
	/* A packet socket's message names its interface. */
	if (!ifindex && msg->msg_name &&
	    msg->msg_namelen >= sizeof(struct sockaddr_ll) &&
	    ((struct sockaddr *)msg->msg_name)->sa_family == AF_PACKET)
		ifindex = ((struct sockaddr_ll *)msg->msg_name)->sll_ifindex;
	int64_t t = hwsim_ts_ns(&st->ts[0]);
	if (want & HWSIM_HW_FLAGS) {
		int n = hwsim_sock_phc(fd, ifindex);
		struct hwsim_phc_info p;

		if (n >= 0 && !hwsim_phc_get(hwsim_prog_host, (unsigned)n, &p)) {
			*phc = n;
			if (errqueue && p.faults.tx_loss_pct &&
			    hwsim_draw_pct(hwsim_prog_host, p.faults.tx_loss_pct)) {
				hwsim_count(hwsim_prog_host, n, 1, 0, 0);
				return false;
			}
			/* The X710 trap: only PTP event packets (port 319)
			 * carry a receive stamp. */
			bool stamped = errqueue || !p.faults.rx_ptp_only ||
				hwsim_sock_port(fd) == 319;

			if (stamped && (want & SOF_TIMESTAMPING_RAW_HARDWARE))
				hwsim_ns_ts(hwsim_stamp(hwsim_prog_host, n, t), &st->ts[2]);
			/* A ConnectX's stamp can come up to 500 ms late:
			 * the whole message (the software stamp the kernel
			 * gives in it too) is held back that long. */
			if (errqueue && p.faults.tx_late_pct &&
			    (want & SOF_TIMESTAMPING_TX_HARDWARE) &&
			    hwsim_snd_stamp(msg) &&
			    hwsim_draw_pct(hwsim_prog_host, p.faults.tx_late_pct))
				*late_ns = 1 + hwsim_draw_below(hwsim_prog_host,
							p.faults.tx_late_max_ns);
		}
	}
	/* The software stamp on the host's own (simulated) system clock,
	 * or none when only hardware ones were asked for. */
	if (want & SOF_TIMESTAMPING_SOFTWARE)
		hwsim_ns_ts(hwsim_read(hwsim_prog_host, -1, t), &st->ts[0]);
	else
		st->ts[0] = (struct timespec){ 0, 0 };
	return true;
}

/* Its grandmaster gone: a PTP message (UDP 319, 320) that reaches a NIC
 * under gm-gone is put in domain 255 - its own, which no ptp4l of the
 * host serves, so it is ignored as ptp4l ignores a foreign domain's: no
 * error on the socket, no fault, only silence from the master. */
static void hwsim_gm_gone(int fd, struct msghdr *msg, ssize_t n)
{
	struct hwsim_phc_info p;
	int k, port = hwsim_sock_port(fd);
	unsigned char *b;

	if ((port != 319 && port != 320) || n < 34 || !msg->msg_iovlen ||
	    msg->msg_iov[0].iov_len < 34)
		return;
	k = hwsim_sock_phc(fd, 0);
	if (k < 0 || hwsim_phc_get(hwsim_prog_host, (unsigned)k, &p) || !p.faults.gm_gone)
		return;
	b = msg->msg_iov[0].iov_base;
	b[4] = (unsigned char)(255 - b[4]);	/* domainNumber */
}

/* ---- TX stamps held back (tx-late) ----
 *
 * An error-queue message the NIC delivers late is read from the kernel
 * when the program asks (or when its wait sees the error queue), kept in
 * the socket's ring (hwsim/hwsim_held.h, made at the socket's first such
 * message) and handed over by a later read once due; a wait (poll, ppoll,
 * select, pselect, epoll_wait, epoll_pwait, epoll_pwait2) on the socket
 * wakes then with POLLERR (EPOLLERR). A wait that sees the kernel's error
 * queue of a stamping socket while a NIC of the host is under tx-late
 * reads it into the ring first, so that it reports POLLERR only for what
 * is due, as a wait on real hardware would. A ring that is full gives its
 * oldest message at once (counted tx_late_forced) to make room.
 *
 * One lock over the rings and epoll registrations; everything here is off
 * the path of a program on a host without tx-late and without held
 * messages (hwsim_late_on()).
 */

pthread_mutex_t hwsim_held_mu = PTHREAD_MUTEX_INITIALIZER;
_Atomic unsigned hwsim_held_total;	/* messages in all rings */

int64_t hwsim_mono_now(void)
{
	struct timespec ts;

	hwsim_real_clock_gettime(CLOCK_MONOTONIC, &ts);
	return hwsim_ts_ns(&ts);
}

/* Whether a wait may need more than the C library's: held messages, or a
 * NIC under tx-late. One or two loads. */
bool hwsim_late_on(void)
{
	return hwsim_prog_host &&
		(atomic_load_explicit(&hwsim_held_total, memory_order_relaxed) ||
		 hwsim_tx_late_any(hwsim_prog_host));
}

/* A socket that takes hardware TX stamps. */
bool hwsim_late_sock(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].kind == FD_SOCK &&
		(hwsim_fdtab[fd].want & SOF_TIMESTAMPING_TX_HARDWARE);
}

/* fd's ring holds messages: a peek without the lock. */
bool hwsim_held_any(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].held &&
		hwsim_held_count(hwsim_fdtab[fd].held);
}

/* fd's ring, made on first need (once per socket). With held_mu. */
static struct hwsim_held *hwsim_ring(int fd)
{
	if (!hwsim_fdtab[fd].held) {
		hwsim_fdtab[fd].held = malloc(sizeof(*hwsim_fdtab[fd].held));
		if (hwsim_fdtab[fd].held)
			hwsim_held_init(hwsim_fdtab[fd].held);
	}
	return hwsim_fdtab[fd].held;
}

/* With held_mu: the earliest due of fd's ring, INT64_MAX: none. */
int64_t hwsim_due(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].held ?
		hwsim_held_next_due(hwsim_fdtab[fd].held) : INT64_MAX;
}

/* What a wait reports for a due message: POLLERR, and POLLPRI on a socket
 * with SO_SELECT_ERR_QUEUE (ptp4l waits for that), as the kernel does for
 * a queued one. */
short hwsim_due_bits(int fd)
{
	return (short)(POLLERR | (hwsim_fdtab[fd].selerr ? POLLPRI : 0));
}

/* With held_mu: keep m in fd's ring. When it is full, its oldest
 * message goes into *out (return 1) to make room; 0 when m was kept, -1
 * when it could not be (no memory: hand m itself over). */
static int hwsim_hold(int fd, const struct hwsim_held_msg *m, int phc, bool late,
		      struct hwsim_held_msg *out)
{
	struct hwsim_held *h = hwsim_ring(fd);
	int rc = 0;

	if (!h)
		return -1;
	if (hwsim_held_put(h, m) == -ENOSPC) {
		hwsim_held_take_oldest(h, out);
		hwsim_held_put(h, m);
		atomic_fetch_sub(&hwsim_held_total, 1);
		rc = 1;
	}
	atomic_fetch_add(&hwsim_held_total, 1);
	if (late || rc)
		hwsim_count(hwsim_prog_host, phc, 0, late, (uint64_t)rc);
	return rc;
}

/* With held_mu: read what the kernel's error queue of fd holds into its
 * ring, each message due now or, held back by the NIC, later. Stops when
 * the ring is full (the rest stays queued). */
static void hwsim_ingest(int fd)
{
	struct hwsim_held *h = hwsim_ring(fd);

	while (h && hwsim_held_count(h) < HWSIM_HELD_SLOTS) {
		unsigned char data[HWSIM_HELD_DATA], name[HWSIM_HELD_NAME];
		union {
			unsigned char b[HWSIM_HELD_CTRL];
			struct cmsghdr align;
		} ctrl;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr msg = {
			.msg_name = name, .msg_namelen = sizeof(name),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl.b, .msg_controllen = sizeof(ctrl.b),
		};
		struct hwsim_held_msg m, old;
		int64_t late = 0;
		ssize_t n;
		int phc = -1;

		n = hwsim_real_recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (msg.msg_controllen &&
		    !hwsim_map_stamps(fd, &msg, true, &late, &phc))
			continue;	/* lost to the NIC */
		hwsim_held_from_msg(&m, &msg, n, hwsim_mono_now() + late);
		hwsim_hold(fd, &m, phc, late > 0, &old);	/* not full */
	}
}

/* With held_mu: the state a wait reports for fd, asked events: read its
 * error queue into the ring, then the kernel's state without the
 * queue, and POLLERR when a held message is due. */
short hwsim_settle(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	hwsim_ingest(fd);
	if (hwsim_real_poll(&p, 1, 0) < 0)
		p.revents = 0;
	if (hwsim_due(fd) <= hwsim_mono_now())
		p.revents |= hwsim_due_bits(fd);
	return p.revents;
}

HWSIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	/* What the program gave: the kernel shortens them to each
	 * message's, and a message dropped or held is followed by another
	 * read. */
	size_t controllen = msg->msg_controllen;
	socklen_t namelen = msg->msg_namelen;
	ssize_t n;

	REAL(recvmsg);
	if (hwsim_prog_host && (flags & MSG_ERRQUEUE) && fd >= 0 && fd < HWSIM_FDS &&
	    hwsim_fdtab[fd].kind == FD_SOCK &&
	    (hwsim_held_any(fd) || (hwsim_late_on() && hwsim_late_sock(fd)))) {
		/* What is due first; else the kernel's next message that is
		 * neither lost nor held back; else EAGAIN, as from an empty
		 * queue (the kernel never waits on an error queue, blocking
		 * socket or not, and neither does this). */
		struct hwsim_held_msg m, old;

		pthread_mutex_lock(&hwsim_held_mu);
		for (;;) {
			int64_t late;
			int phc, rc;

			if (hwsim_fdtab[fd].held &&
			    hwsim_held_take_due(hwsim_fdtab[fd].held, hwsim_mono_now(), &m)) {
				atomic_fetch_sub(&hwsim_held_total, 1);
				n = hwsim_held_to_msg(&m, msg, flags);
				break;
			}
			msg->msg_controllen = controllen;
			msg->msg_namelen = namelen;
			n = hwsim_real_recvmsg(fd, msg, flags);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || !msg->msg_controllen)
				break;
			if (!hwsim_map_stamps(fd, msg, true, &late, &phc))
				continue;	/* lost: as if it never came */
			if (!late)
				break;
			hwsim_held_from_msg(&m, msg, n, hwsim_mono_now() + late);
			rc = hwsim_hold(fd, &m, phc, true, &old);
			if (rc < 0)
				break;		/* kept nowhere: now */
			if (rc == 1) {
				n = hwsim_held_to_msg(&old, msg, flags);
				break;
			}
		}
		pthread_mutex_unlock(&hwsim_held_mu);
		return n;
	}
	for (;;) {
		int64_t late;
		int phc;

		n = hwsim_real_recvmsg(fd, msg, flags);
		if (n > 0 && hwsim_prog_host && fd >= 0 && fd < HWSIM_FDS &&
		    hwsim_fdtab[fd].kind == FD_SOCK && !(flags & MSG_ERRQUEUE))
			hwsim_gm_gone(fd, msg, n);
		if (n < 0 || !hwsim_prog_host || fd < 0 || fd >= HWSIM_FDS ||
		    hwsim_fdtab[fd].kind != FD_SOCK || !msg->msg_controllen ||
		    hwsim_map_stamps(fd, msg, flags & MSG_ERRQUEUE, &late, &phc))
			return n;
		/* A TX stamp the NIC lost: as if it never came, the next
		 * message read instead (EAGAIN when none is queued). */
		msg->msg_controllen = controllen;
		msg->msg_namelen = namelen;
	}
}
