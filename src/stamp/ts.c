/* ts.c — SO_TIMESTAMPING on one socket; see ts.h for the contract and the
 * traps it handles. */
#include "stamp/ts.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/missing.h"
#include "base/nstime.h"
#include "stamp/ts_private.h"
#include "base/xalloc.h"

/* Room for SCM_TIMESTAMPING (3 timespecs), the extended error with its
 * offender address, and PKTINFO, with slack for alignment. */
#define TS_CMSG_SPACE 512

#define TS_TX_STAGES ((1u << TS_STAGE_SCHED) | (1u << TS_STAGE_SW_TX) | \
		      (1u << TS_STAGE_HW_TX) | (1u << TS_STAGE_ACK))

static const char *const ts_stage_names[TS_STAGE_COUNT] = {
	[TS_STAGE_SCHED] = "sched",
	[TS_STAGE_SW_TX] = "sw_tx",
	[TS_STAGE_HW_TX] = "hw_tx",
	[TS_STAGE_ACK] = "ack",
	[TS_STAGE_HW_RX] = "hw_rx",
	[TS_STAGE_SW_RX] = "sw_rx",
};

const char *ts_stage_name(enum ts_stage stage)
{
	return (unsigned)stage < TS_STAGE_COUNT ? ts_stage_names[stage] : "?";
}

enum ts_source ts_stage_source(enum ts_stage stage)
{
	switch (stage) {
	case TS_STAGE_HW_TX:
	case TS_STAGE_HW_RX:
		return TS_SOURCE_HW;
	case TS_STAGE_SCHED:
	case TS_STAGE_SW_TX:
	case TS_STAGE_ACK:
	case TS_STAGE_SW_RX:
		return TS_SOURCE_SW;
	default:
		return TS_SOURCE_NONE;
	}
}

static const char *const ts_source_names[] = {
	[TS_SOURCE_NONE] = "none", [TS_SOURCE_SW] = "sw", [TS_SOURCE_HW] = "hw",
};

const char *ts_source_name(enum ts_source src)
{
	return (unsigned)src < sizeof(ts_source_names) / sizeof(ts_source_names[0]) ?
	       ts_source_names[src] : "none";
}

static const char *const ts_timescale_names[] = {
	[TS_SCALE_UNKNOWN] = "unknown", [TS_SCALE_UTC] = "utc",
	[TS_SCALE_PHC] = "phc", [TS_SCALE_TAI] = "tai",
};

const char *ts_timescale_name(enum ts_timescale scale)
{
	return (unsigned)scale < sizeof(ts_timescale_names) / sizeof(ts_timescale_names[0]) ?
	       ts_timescale_names[scale] : "unknown";
}

int64_t ts_now_real(void)
{
	return nstime_now(CLOCK_REALTIME);
}

int64_t ts_now_mono(void)
{
	return nstime_now(CLOCK_MONOTONIC);
}

void ts_config_init(struct ts_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = TS_MODE_AUTO;
	cfg->tx = true;
	cfg->rx = true;
	cfg->tx_timeout_ns = 200 * 1000 * 1000;
	cfg->tx_window = 65536;
}

/* ---- control message parsing ---------------------------------------- */

/* SCM_TIMESTAMPING_NEW carries three 64-bit (sec, nsec) pairs on every ABI;
 * the old message carries struct timespec, 32-bit on 32-bit targets. */
static int ts_read_stamps(const struct cmsghdr *c, int64_t ns[3])
{
	bool is_new = c->cmsg_type == SCM_TIMESTAMPING_NEW;
	size_t each = is_new ? sizeof(struct __kernel_timespec)
			     : sizeof(struct timespec);
	const unsigned char *p = CMSG_DATA(c);

	if (c->cmsg_len < CMSG_LEN(3 * each))
		return -EBADMSG;
	for (int i = 0; i < 3; i++, p += each) {
		int64_t sec, nsec;

		if (is_new) {
			struct __kernel_timespec t;

			memcpy(&t, p, sizeof(t));
			sec = t.tv_sec;
			nsec = t.tv_nsec;
		} else {
			struct timespec t;

			memcpy(&t, p, sizeof(t));
			sec = t.tv_sec;
			nsec = t.tv_nsec;
		}
		ns[i] = sec * 1000000000 + nsec;
	}
	return 0;
}

struct ts_cmsgs {
	bool have_ts;
	int64_t ns[3];		/* [0] software, [2] raw hardware */
	bool have_err;
	struct sock_extended_err err;
	uint32_t ifindex;
	uint32_t pktlen;
};

/* The payload of c into dst when c holds all size bytes of it; len is
 * c's length, already checked against the buffer. */
static int ts_cmsg_copy(const struct cmsghdr *c, size_t len, void *dst, size_t size)
{
	if (len < CMSG_LEN(size))
		return -EBADMSG;
	memcpy(dst, CMSG_DATA(c), size);
	return 0;
}

/* Walk the control messages by hand, checking every length against the
 * buffer: tests (and the fuzzer) feed this arbitrary bytes. */
static int ts_walk_cmsgs(const struct msghdr *msg, struct ts_cmsgs *out)
{
	const unsigned char *base = msg->msg_control;
	size_t total = msg->msg_controllen, pos = 0;

	memset(out, 0, sizeof(*out));
	if (!base)
		return 0;
	while (total - pos >= sizeof(struct cmsghdr)) {
		const struct cmsghdr *c = (const void *)(base + pos);
		size_t len = c->cmsg_len;
		size_t step = CMSG_ALIGN(len);

		if (len < sizeof(struct cmsghdr) || len > total - pos)
			return -EBADMSG;
		if (c->cmsg_level == SOL_SOCKET &&
		    (c->cmsg_type == SCM_TIMESTAMPING_NEW ||
		     c->cmsg_type == SCM_TIMESTAMPING_OLD)) {
			if (ts_read_stamps(c, out->ns))
				return -EBADMSG;
			out->have_ts = true;
		} else if (c->cmsg_level == SOL_SOCKET &&
			   c->cmsg_type == SCM_TIMESTAMPING_PKTINFO) {
			struct scm_ts_pktinfo pi;

			if (ts_cmsg_copy(c, len, &pi, sizeof(pi)))
				return -EBADMSG;
			out->ifindex = pi.if_index;
			out->pktlen = pi.pkt_length;
		} else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			   (c->cmsg_level == SOL_IPV6 &&
			    c->cmsg_type == IPV6_RECVERR) ||
			   (c->cmsg_level == SOL_PACKET &&
			    c->cmsg_type == PACKET_TX_TIMESTAMP)) {
			if (ts_cmsg_copy(c, len, &out->err, sizeof(out->err)))
				return -EBADMSG;
			out->have_err = true;
		} else if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			if (ts_cmsg_copy(c, len, &pi, sizeof(pi)))
				return -EBADMSG;
			if (!out->ifindex)
				out->ifindex = (uint32_t)pi.ipi_ifindex;
		} else if (c->cmsg_level == SOL_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			if (ts_cmsg_copy(c, len, &pi, sizeof(pi)))
				return -EBADMSG;
			if (!out->ifindex)
				out->ifindex = pi.ipi6_ifindex;
		}
		if (step > total - pos)
			break;
		pos += step;
	}
	return 0;
}

static void ts_fill(struct ts_stamp *st, int64_t ns, enum ts_stage stage,
		    int phc, enum ts_timescale hw_scale, const struct ts_cmsgs *m)
{
	bool hw = ts_stage_source(stage) == TS_SOURCE_HW;

	memset(st, 0, sizeof(*st));
	st->ns = ns;
	st->stage = stage;
	st->phc = hw ? (int16_t)phc : -1;
	st->timescale = hw ? hw_scale : TS_SCALE_UTC;
	st->ifindex = m->ifindex;
	st->pktlen = hw ? m->pktlen : 0;
}

int ts_parse_rx(const struct msghdr *msg, int phc, enum ts_timescale hw_scale,
		struct ts_stamp out[2])
{
	struct ts_cmsgs m;
	int n = 0, err;

	err = ts_walk_cmsgs(msg, &m);
	if (err)
		return err;
	if (!m.have_ts)
		return 0;
	if (m.ns[2])
		ts_fill(&out[n++], m.ns[2], TS_STAGE_HW_RX, phc, hw_scale, &m);
	if (m.ns[0])
		ts_fill(&out[n++], m.ns[0], TS_STAGE_SW_RX, phc, hw_scale, &m);
	return n;
}

int ts_parse_tx(const struct msghdr *msg, int phc, enum ts_timescale hw_scale,
		struct ts_stamp out[2])
{
	struct ts_cmsgs m;
	enum ts_stage sw;
	int n = 0, err;

	err = ts_walk_cmsgs(msg, &m);
	if (err)
		return err;
	/* Other error-queue traffic (ICMP errors with IP_RECVERR) is not ours. */
	if (!m.have_ts || !m.have_err ||
	    m.err.ee_origin != SO_EE_ORIGIN_TIMESTAMPING ||
	    m.err.ee_errno != ENOMSG)
		return 0;
	switch (m.err.ee_info) {
	case SCM_TSTAMP_SND:
		sw = TS_STAGE_SW_TX;
		break;
	case SCM_TSTAMP_SCHED:
		sw = TS_STAGE_SCHED;
		break;
	case SCM_TSTAMP_ACK:
		sw = TS_STAGE_ACK;
		break;
	default:
		return 0;	/* a kind newer than us (TX_COMPLETION) */
	}
	if (m.ns[2] && m.err.ee_info == SCM_TSTAMP_SND)
		ts_fill(&out[n++], m.ns[2], TS_STAGE_HW_TX, phc, hw_scale, &m);
	if (m.ns[0])
		ts_fill(&out[n++], m.ns[0], sw, phc, hw_scale, &m);
	for (int i = 0; i < n; i++)
		out[i].key = m.err.ee_data;
	return n;
}

/* ---- enabling ------------------------------------------------------- */

static int ts_setsockopt_flags(int fd, unsigned flags)
{
	int v = (int)flags;

	/* _NEW gives 64-bit time on every ABI; kernels before 5.1 lack it. */
	if (!setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING_NEW, &v, sizeof(v)))
		return 0;
	if (errno != ENOPROTOOPT)
		return -errno;
	if (!setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING_OLD, &v, sizeof(v)))
		return 0;
	return -errno;
}

bool ts_kernel_accepts(unsigned so_flags, int sock_type)
{
	/* OPT_ID on an unconnected TCP socket fails for reasons of state, not
	 * of flags, so probe flag support on a datagram socket. */
	int fd = socket(AF_INET, sock_type == SOCK_STREAM ? SOCK_DGRAM : sock_type,
			0);
	bool ok;

	if (fd < 0)
		return false;
	ok = ts_setsockopt_flags(fd, so_flags) == 0;
	close(fd);
	return ok;
}

static int ts_sock_kind(int fd, bool *stream)
{
	int type;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return -errno;
	if (type == SOCK_RAW) {
		/* A packet socket counts OPT_ID keys per frame sent, as UDP
		 * counts datagrams (Linux 5.13+), and reports TX stamps as
		 * SOL_PACKET PACKET_TX_TIMESTAMP. Raw IP sockets are not
		 * ours. */
		int domain;

		len = sizeof(domain);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
			return -errno;
		if (domain != AF_PACKET)
			return -EPROTONOSUPPORT;
		*stream = false;
		return 0;
	}
	if (type != SOCK_STREAM && type != SOCK_DGRAM)
		return -EPROTONOSUPPORT;
	*stream = type == SOCK_STREAM;
	if (*stream) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		if (getpeername(fd, (struct sockaddr *)&ss, &sl))
			return -errno;	/* ENOTCONN: enable after connect */
	}
	return 0;
}

static int ts_enable(struct ts_sock *ts)
{
	unsigned flags = 0;
	int err, one = 1;

	err = ts->ops->setup(ts, &flags);
	if (err)
		return err;
	if (ts->cfg.tx) {
		flags |= SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
		if (ts->cfg.tx_stages & (1u << TS_STAGE_SCHED))
			flags |= SOF_TIMESTAMPING_TX_SCHED;
		if (ts->stream && (ts->cfg.tx_stages & (1u << TS_STAGE_ACK)))
			flags |= SOF_TIMESTAMPING_TX_ACK;
	}
	if (ts->stream) {
		/* Small writes must leave in their own skbs to keep their
		 * own stamps (see ts.h). */
		if (setsockopt(ts->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
			return -errno;
		if (ts->cfg.tx) {
			err = ts_setsockopt_flags(ts->fd,
						  flags | TAPLESS_SOF_OPT_ID_TCP);
			if (!err) {
				ts->opt_id_tcp = true;
				flags |= TAPLESS_SOF_OPT_ID_TCP;
				goto done;
			}
			if (err != -EINVAL)
				return err;
			/* Before 6.2 keys count from snd_una: only right
			 * when nothing is in flight now. */
			int outq = 0;

			if (ioctl(ts->fd, SIOCOUTQ, &outq))
				return -errno;
			if (outq > 0)
				return -EBUSY;
		}
	} else if (ts->cfg.rx) {
		/* The arrival interface of software RX stamps (hardware ones
		 * carry it in SCM_TIMESTAMPING_PKTINFO). Best effort: IPv6
		 * sockets answer with the IPv6 option. */
		if (setsockopt(ts->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)))
			(void)setsockopt(ts->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO,
					 &one, sizeof(one));
	}
	err = ts_setsockopt_flags(ts->fd, flags);
	if (err)
		return err;
done:
	ts->so_flags = flags;
	return 0;
}

int ts_sock_create(struct ts_sock **out, int fd, const struct ts_config *cfg)
{
	struct ts_sock *ts;
	uint32_t size = 1;
	int err;

	ts = xcalloc(1, sizeof(*ts));
	ts->fd = fd;
	ts->cfg = *cfg;
	ts->phc = -1;
	ts->hw_set_tx = ts->hw_set_rx = -1;
	ts->hw_scale = cfg->phc_is_tai ? TS_SCALE_TAI : TS_SCALE_PHC;
	if (cfg->ifname)
		snprintf(ts->ifname, sizeof(ts->ifname), "%s", cfg->ifname);
	ts->cfg.ifname = ts->ifname;
	if (ts->cfg.tx_timeout_ns <= 0)
		ts->cfg.tx_timeout_ns = 200 * 1000 * 1000;

	err = ts_sock_kind(fd, &ts->stream);
	if (err)
		goto fail;

	switch (cfg->mode) {
	case TS_MODE_HW:
		ts->ops = &ts_hw_ops;
		err = ts_enable(ts);
		break;
	case TS_MODE_SW:
		ts->ops = &ts_sw_ops;
		err = ts_enable(ts);
		break;
	default:
		/* AUTO: hardware if the interface can, else software. */
		ts->ops = &ts_hw_ops;
		err = ts->ifname[0] ? ts_enable(ts) : -ENODEV;
		if (err == -ENODEV || err == -EOPNOTSUPP || err == -EINVAL ||
		    err == -ERANGE || err == -EPERM) {
			ts->ops = &ts_sw_ops;
			err = ts_enable(ts);
		}
		break;
	}
	if (err)
		goto fail;

	if (ts->cfg.tx) {
		ts->tx_expect = (ts->cfg.tx_stages & TS_TX_STAGES) |
				(1u << ts->ops->tx_stage);
		if (!ts->stream)
			ts->tx_expect &= ~(1u << TS_STAGE_ACK);
		if (ts->ops->source == TS_SOURCE_HW && ts->cfg.both)
			ts->tx_expect |= 1u << TS_STAGE_SW_TX;
		while (size < ts->cfg.tx_window && size < (1u << 24))
			size <<= 1;
		ts->ring = xcalloc(size, sizeof(*ts->ring));
		ts->mask = size - 1;
	}
	*out = ts;
	return 0;
fail:
	free(ts);
	return err;
}

int ts_listen_enable(int fd)
{
	/* No OPT_ID here: the kernel refuses it on a LISTEN socket. */
	return ts_setsockopt_flags(fd, SOF_TIMESTAMPING_SOFTWARE |
				   SOF_TIMESTAMPING_RX_SOFTWARE);
}

void ts_sock_destroy(struct ts_sock *ts)
{
	if (!ts)
		return;
	free(ts->ring);
	free(ts);
}

void ts_sock_info(const struct ts_sock *ts, struct ts_info *info)
{
	info->source = ts->ops->source;
	info->phc = ts->phc;
	info->so_flags = ts->so_flags;
	info->stream = ts->stream;
	info->opt_id_tcp = ts->opt_id_tcp;
	info->tx_expect = ts->tx_expect;
	info->hw_set_tx = ts->hw_set_tx;
	info->hw_set_rx = ts->hw_set_rx;
}

void ts_sock_stats(const struct ts_sock *ts, struct ts_stats *st)
{
	*st = ts->stats;
}

/* ---- TX ------------------------------------------------------------- */

unsigned ts_tx_pending(const struct ts_sock *ts)
{
	return (unsigned)(ts->tail - ts->head);
}

int ts_tx_sent(struct ts_sock *ts, uint64_t cookie, size_t len, int64_t app_ns)
{
	struct ts_pending *p;

	if (!ts->ring)
		return -EINVAL;
	if (ts->tail - ts->head > ts->mask) {
		ts->stats.window_full++;
		return -ENOBUFS;
	}
	if (ts->stream && len == 0)
		return 0;	/* no byte, no stamp */
	p = &ts->ring[ts->tail & ts->mask];
	memset(p, 0, sizeof(*p));
	p->cookie = cookie;
	p->first = ts->offset;
	p->len = (uint32_t)len;
	p->app_ns = app_ns;
	p->mono_ns = ts_now_mono();
	p->phc = -1;
	if (ts->stream) {
		/* The kernel reports the offset of the send's last byte. */
		p->key = (uint32_t)(ts->offset + len - 1);
		ts->offset += len;
	} else {
		p->key = (uint32_t)ts->offset;
		ts->offset++;
	}
	ts->tail++;
	ts->stats.sends++;
	return 0;
}

ssize_t ts_send(struct ts_sock *ts, const void *buf, size_t len, int flags,
		uint64_t cookie)
{
	int64_t app;
	ssize_t n;

	if (ts->ring && ts->tail - ts->head > ts->mask) {
		ts->stats.window_full++;
		return -ENOBUFS;
	}
	/* MSG_EOR: later writes may not be appended to this skb, so the
	 * stamp request of this send cannot be overwritten by the next. */
	if (ts->stream)
		flags |= MSG_EOR;
	app = ts_now_real();
	n = send(ts->fd, buf, len, flags);
	if (n < 0)
		return -errno;
	if (ts->ring && n > 0)
		ts_tx_sent(ts, cookie, (size_t)n, app);
	return n;
}

/* Index of the pending send whose key is exactly key; -2 for a key before
 * the window (a send already handed out), else -1. Keys grow in ring
 * order (mod 2^32), so binary search on the distance from the oldest. */
static int64_t ts_find(const struct ts_sock *ts, uint32_t key)
{
	uint64_t lo = ts->head, hi = ts->tail;
	uint32_t base, want;

	if (lo == hi)
		return key - (uint32_t)ts->offset > (uint32_t)INT32_MAX ? -2 : -1;
	base = ts->ring[lo & ts->mask].key;
	want = key - base;
	if (want > (uint32_t)INT32_MAX)
		return -2;	/* before the window: already handed out */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint32_t d = ts->ring[mid & ts->mask].key - base;

		if (d < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ts->tail && ts->ring[lo & ts->mask].key == key)
		return (int64_t)lo;
	return -1;
}

static void ts_apply(struct ts_sock *ts, const struct ts_stamp *st)
{
	int64_t at = ts_find(ts, st->key);
	unsigned bit = 1u << st->stage;
	struct ts_pending *p;

	if (at < 0) {
		ts->stats.unmatched++;
		if (at == -2)
			ts->stats.past_timeout[st->stage]++;
		return;
	}
	p = &ts->ring[at & ts->mask];
	if (!(p->got & bit)) {
		p->ns[st->stage] = st->ns;
		p->got |= bit;
		if (st->stage == TS_STAGE_HW_TX)
			p->phc = st->phc;
		/* Out of order: a NIC that stamps late (a ConnectX can, by
		 * hundreds of ms), joined all the same. */
		if ((uint64_t)at + 1 < ts->top[st->stage])
			ts->stats.reordered[st->stage]++;
		else
			ts->top[st->stage] = (uint64_t)at + 1;
	}
	/* A software stamp for a later key while earlier sends still lack it:
	 * on a stream, their bytes were merged into this stamp's skb (a later
	 * write replaces the skb's stamp request), so they left with it.
	 * Software stamps arrive in order, so this is not a late stamp. A
	 * missing hardware stamp is not inferred: NICs do skip stamps. */
	if (!ts->stream || ts_stage_source(st->stage) != TS_SOURCE_SW)
		return;
	for (uint64_t i = ts->stamped_to[st->stage] > ts->head ?
			  ts->stamped_to[st->stage] : ts->head;
	     i < (uint64_t)at; i++) {
		struct ts_pending *q = &ts->ring[i & ts->mask];

		if (q->got & bit)
			continue;
		q->ns[st->stage] = st->ns;
		q->got |= bit;
		q->shared |= bit;
	}
	if ((uint64_t)at + 1 > ts->stamped_to[st->stage])
		ts->stamped_to[st->stage] = (uint64_t)at + 1;
}

int ts_tx_reap(struct ts_sock *ts)
{
	char control[TS_CMSG_SPACE];
	unsigned char data[64];
	struct iovec iov = { data, sizeof(data) };
	int count = 0;

	for (;;) {
		struct msghdr msg = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct ts_stamp st[2];
		int n;

		if (recvmsg(ts->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return count;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		n = ts_parse_tx(&msg, ts->phc, ts->hw_scale, st);
		if (n < 0)
			continue;	/* malformed: kernel bug; skip it */
		for (int i = 0; i < n; i++) {
			ts->stats.stamps++;
			if (ts->ring)
				ts_apply(ts, &st[i]);
		}
		count += n;
	}
}

int ts_tx_wait(struct ts_sock *ts, int timeout_ms)
{
	struct pollfd pfd = { .fd = ts->fd, .events = 0 };
	int n;

	/* The error queue shows as POLLERR, which poll reports unasked. */
	n = poll(&pfd, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return ts_tx_reap(ts);
}

int ts_tx_next(struct ts_sock *ts, struct ts_tx_record *rec, int64_t now_ns)
{
	struct ts_pending *p;
	bool done;

	if (ts->head == ts->tail)
		return 0;
	p = &ts->ring[ts->head & ts->mask];
	done = (p->got & ts->tx_expect) == ts->tx_expect;
	if (!done && now_ns >= 0 && now_ns - p->mono_ns < ts->cfg.tx_timeout_ns)
		return 0;

	memset(rec, 0, sizeof(*rec));
	rec->cookie = p->cookie;
	rec->first = p->first;
	rec->len = p->len;
	rec->app_ns = p->app_ns;
	rec->phc = p->phc;
	rec->shared = p->shared;
	rec->lost = (uint16_t)(ts->tx_expect & ~p->got);
	for (int s = 0; s < TS_STAGE_COUNT; s++) {
		if (!(p->got & (1u << s)))
			continue;
		rec->ns[s] = p->ns[s];
		rec->timescale[s] = ts_stage_source(s) == TS_SOURCE_HW ?
				    ts->hw_scale : TS_SCALE_UTC;
	}
	for (int s = 0; s < TS_STAGE_COUNT; s++)
		if (rec->lost & (1u << s))
			ts->stats.lost[s]++;
	if (p->shared)
		ts->stats.shared++;
	ts->stats.records++;
	ts->head++;
	return 1;
}

/* ---- RX ------------------------------------------------------------- */

ssize_t ts_recv(struct ts_sock *ts, void *buf, size_t len, int flags,
		struct ts_stamp stamps[2], int *nstamps)
{
	char control[TS_CMSG_SPACE];
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	ssize_t n;
	int k;

	*nstamps = 0;
	n = recvmsg(ts->fd, &msg, flags);
	if (n < 0)
		return -errno;
	k = ts_parse_rx(&msg, ts->phc, ts->hw_scale, stamps);
	*nstamps = k > 0 ? k : 0;
	return n;
}
