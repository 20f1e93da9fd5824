/* loopcheck.c — frames looped between two ports of this host; see
 * loopcheck.h for the contract.
 *
 * One packet socket per port, bound to it and to EtherType 0x88B5, stamped
 * through ts.h with the one source chosen for both ends. Each end both sends
 * (its direction's frames) and receives (the other direction's). A frame is
 * known by (direction, sequence number); per direction an array of slots,
 * one per frame, allocated before the first send, collects its TX and RX
 * stamps; the figures are taken from the slots once the run is over.
 *
 * What has been exercised: the software path, on a veth pair in a namespace
 * (tests/system/test_validate.sh, through tapless validate --loopback). The hardware path is the same code with
 * TS_MODE_HW, `both` and the PHC readings; it has not been run on a NIC with
 * a PHC (none where it was written), so treat its first results with care.
 */
#include "validate/loopcheck.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <net/if_arp.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/errbuf.h"
#include "files/calib.h"
#include "stamp/hwtstamp.h"
#include "stamp/phc.h"
#include "base/print.h"
#include "stamp/tsinfo.h"
#include "validate/verdict.h"
#include "base/xalloc.h"

#define LC_MAGIC "TPLV"
#define LC_VERSION 1
#define LC_MAX_COUNT (1u << 24)
#define LC_RCVBUF (4 << 20)
/* The kernel turns software RX stamping on from a workqueue once the first
 * socket asks (ts.h), and a NIC may take a moment after SIOCSHWTSTAMP: wait
 * this long between enabling stamps and the first frame. */
#define LC_WARMUP_NS 50000000LL
/* Beyond tx_timeout_ns after the last send: time for ts_tx_next() to hand
 * back, as timed out, the records still waiting. */
#define LC_DRAIN_SLACK_NS 20000000LL
#define LC_RX_BATCH 64		/* frames read from one end per round */
#define LC_PHC_SAMPLES 9

/* One frame of one direction. Stamps are 0 when they did not come. */
struct lc_slot {
	int64_t tx, rx;		/* the chosen source's */
	int64_t tx_sw, rx_sw;	/* software ones beside hardware ones */
	int64_t tx_hw, rx_hw;	/* hardware ones, also when the source is hw,
				 * so a missing one is seen beside its sw */
	bool sent, received;
};

struct lc_end {
	char name[IF_NAMESIZE];
	int ifindex, fd;
	unsigned mtu;
	uint8_t mac[6];
	struct ts_sock *ts;
	struct ts_info info;
	struct phc *phc;
	int64_t phc_sys[2];	/* before, after */
	bool sends, receives;
	bool blocked;		/* last send refused for lack of buffer */
	bool stalled;		/* the stamp window is full */
};

struct lc_run {
	const struct loopcheck_config *cfg;
	struct loopcheck_result *res;
	struct lc_end end[2];
	struct lc_slot *slot[2];	/* per direction, count each */
	uint8_t *txbuf;			/* frame_len */
	enum ts_source source;
	enum ts_stage tx_stage;		/* the source's: SW_TX or HW_TX */
	uint64_t nonce;
	unsigned window;	/* sends awaiting TX stamps, at most */
	char *err;	/* loopcheck_run()'s, LOOPCHECK_ERRBUF bytes */
};

void loopcheck_config_init(struct loopcheck_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = TS_MODE_AUTO;
	cfg->count = 1000;
	cfg->rate_pps = 1000;
	cfg->frame_len = 64;
	cfg->expect_ns = -1;
	cfg->tx_timeout_ns = 100 * 1000 * 1000;
}

/* ---- frames ---------------------------------------------------------- */

int loopcheck_frame_build(uint8_t *buf, size_t len, const uint8_t dst[6],
			  const uint8_t src[6], const struct loopcheck_frame *f)
{
	if (len < LOOPCHECK_MIN_FRAME || len > INT32_MAX)
		return -EINVAL;
	memset(buf, 0, len);
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = LOOPCHECK_ETHERTYPE >> 8;
	buf[13] = LOOPCHECK_ETHERTYPE & 0xff;
	memcpy(buf + 14, LC_MAGIC, 4);
	buf[18] = f->dir;
	buf[19] = LC_VERSION;
	bytes_put_be32(buf + 22, f->seq);
	bytes_put_be64(buf + 26, f->nonce);
	return (int)len;
}

int loopcheck_frame_parse(const uint8_t *buf, size_t len,
			  struct loopcheck_frame *f)
{
	if (len < LOOPCHECK_HDR_LEN ||
	    bytes_get_be16(buf + 12) != LOOPCHECK_ETHERTYPE ||
	    memcmp(buf + 14, LC_MAGIC, 4) || buf[19] != LC_VERSION)
		return -EBADMSG;
	f->dir = buf[18];
	f->seq = bytes_get_be32(buf + 22);
	f->nonce = bytes_get_be64(buf + 26);
	return 0;
}

/* ---- opening the ends -------------------------------------------------- */

static int lc_fail(struct lc_run *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lc_fail(struct lc_run *r, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(r->err, LOOPCHECK_ERRBUF, rc, fmt, ap);
	va_end(ap);
	return rc;
}

static int lc_config_check(struct lc_run *r)
{
	const struct loopcheck_config *c = r->cfg;

	for (int i = 0; i < 2; i++) {
		if (!c->port[i] || !*c->port[i])
			return lc_fail(r, -EINVAL, "port %c not given", 'A' + i);
		if (strlen(c->port[i]) >= IF_NAMESIZE)
			return lc_fail(r, -ENODEV, "%s: no such interface (name "
				       "too long)", c->port[i]);
	}
	if (!strcmp(c->port[0], c->port[1]))
		return lc_fail(r, -EINVAL, "%s: both ends are the same port: a "
			       "loop needs two", c->port[0]);
	if (c->count < 1 || c->count > LC_MAX_COUNT)
		return lc_fail(r, -EINVAL, "count %u: 1 to %u frames per "
			       "direction", c->count, LC_MAX_COUNT);
	if (!(c->rate_pps > 0) || !isfinite(c->rate_pps) || c->rate_pps > 1e7)
		return lc_fail(r, -EINVAL, "rate %g: more than 0, at most 1e7 "
			       "frames a second", c->rate_pps);
	if (c->frame_len < LOOPCHECK_MIN_FRAME)
		return lc_fail(r, -EINVAL, "frame length %u: at least %u bytes",
			       c->frame_len, LOOPCHECK_MIN_FRAME);
	if (c->tx_timeout_ns <= 0)
		return lc_fail(r, -EINVAL, "TX stamp timeout %lld ns: must be "
			       "positive", (long long)c->tx_timeout_ns);
	if (c->mode != TS_MODE_AUTO && c->mode != TS_MODE_HW &&
	    c->mode != TS_MODE_SW)
		return lc_fail(r, -EINVAL, "stamp mode %d: auto, hw or sw",
			       (int)c->mode);
	return 0;
}

/* Name, index, MTU and MAC of end i, and that it is up; its socket is
 * opened later. */
static int lc_end_look(struct lc_run *r, int i)
{
	struct lc_end *e = &r->end[i];
	struct ifreq ifr;
	int fd, rc = 0;

	snprintf(e->name, sizeof(e->name), "%s", r->cfg->port[i]);
	e->ifindex = (int)if_nametoindex(e->name);
	if (!e->ifindex)
		return lc_fail(r, -ENODEV, "%s: no such interface", e->name);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return lc_fail(r, -errno, "%s: socket: %s", e->name,
			       strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", e->name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		rc = lc_fail(r, -errno, "%s: SIOCGIFHWADDR: %s", e->name,
			     strerror(errno));
		goto out;
	}
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		rc = lc_fail(r, -EPROTONOSUPPORT, "%s: not an Ethernet "
			     "interface (hardware type %u)", e->name,
			     ifr.ifr_hwaddr.sa_family);
		goto out;
	}
	memcpy(e->mac, ifr.ifr_hwaddr.sa_data, 6);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", e->name);
	if (ioctl(fd, SIOCGIFMTU, &ifr)) {
		rc = lc_fail(r, -errno, "%s: SIOCGIFMTU: %s", e->name,
			     strerror(errno));
		goto out;
	}
	e->mtu = (unsigned)ifr.ifr_mtu;
	/* A packet socket bound to a down interface takes ENETDOWN as a
	 * pending error, which would end the run half-way: say it now. */
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", e->name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		rc = lc_fail(r, -errno, "%s: SIOCGIFFLAGS: %s", e->name,
			     strerror(errno));
		goto out;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		rc = lc_fail(r, -ENETDOWN, "%s: interface is down", e->name);
		goto out;
	}
	if (r->cfg->frame_len > e->mtu + 14)
		rc = lc_fail(r, -EMSGSIZE, "%s: frame length %u is more than "
			     "the MTU (%u) + 14", e->name, r->cfg->frame_len,
			     e->mtu);
out:
	close(fd);
	return rc;
}

/* Which stamps, decided once for both ends so a one-way never subtracts a
 * software stamp from a hardware one. */
static int lc_choose(struct lc_run *r, enum ts_mode *mode)
{
	struct loopcheck_result *res = r->res;

	if (r->cfg->mode == TS_MODE_SW) {
		*mode = TS_MODE_SW;
		snprintf(res->sw_why, sizeof(res->sw_why),
			 "software stamps were asked for");
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		struct tsinfo ti;
		int rc = tsinfo_get(r->end[i].name, &ti);

		if (rc == 0 && tsinfo_has_hw(&ti))
			continue;
		if (r->cfg->mode == TS_MODE_HW)
			return rc ? lc_fail(r, rc, "%s: timestamping "
					    "capabilities: %s", r->end[i].name,
					    strerror(-rc))
				  : lc_fail(r, -ENODEV, "%s has no hardware "
					    "timestamping (no PHC or no hardware "
					    "modes): use software stamps",
					    r->end[i].name);
		*mode = TS_MODE_SW;
		if (rc)
			snprintf(res->sw_why, sizeof(res->sw_why),
				 "%s: timestamping capabilities not read (%s)",
				 r->end[i].name, strerror(-rc));
		else
			snprintf(res->sw_why, sizeof(res->sw_why),
				 "%s has no hardware timestamping",
				 r->end[i].name);
		return 0;
	}
	*mode = TS_MODE_HW;
	res->sw_why[0] = 0;
	return 0;
}

static void lc_end_close(struct lc_end *e)
{
	ts_sock_destroy(e->ts);
	e->ts = NULL;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	phc_close(e->phc);
	e->phc = NULL;
}

/* The packet socket of end i, stamped, bound. */
static int lc_end_open(struct lc_run *r, int i, enum ts_mode mode)
{
	struct lc_end *e = &r->end[i];
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(LOOPCHECK_ETHERTYPE),
		.sll_ifindex = e->ifindex,
	};
	struct ts_config tc;
	int rc, buf = LC_RCVBUF;

	/* Protocol 0 until bind(): a socket opened with our EtherType would
	 * queue that EtherType from every interface until it is bound. */
	e->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (e->fd < 0)
		return lc_fail(r, -errno, "%s: packet socket: %s%s", e->name,
			       strerror(errno), errno == EPERM ?
			       " (needs CAP_NET_RAW)" : "");
	ts_config_init(&tc);
	tc.mode = mode;
	tc.ifname = e->name;
	tc.tx = e->sends;
	tc.rx = e->receives;
	/* With hardware stamps the software ones too: their difference is
	 * the host stack's share (the hwsw check). */
	tc.both = mode == TS_MODE_HW;
	tc.tx_timeout_ns = r->cfg->tx_timeout_ns;
	tc.tx_window = r->window;
	rc = ts_sock_create(&e->ts, e->fd, &tc);
	if (rc) {
		char why[200];

		return lc_fail(r, rc, "%s: enabling %s stamps: %s", e->name,
			       mode == TS_MODE_HW ? "hardware" : "software",
			       hwtstamp_why(e->name, rc, why, sizeof(why)));
	}
	ts_sock_info(e->ts, &e->info);
	/* Stamps queue on the error queue and frames on the receive queue,
	 * both charged to the receive buffer: room for a burst while the
	 * loop sleeps. Best effort: the default works at the default rate. */
	if (setsockopt(e->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		(void)setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (bind(e->fd, (struct sockaddr *)&sll, sizeof(sll)))
		return lc_fail(r, -errno, "%s: bind: %s", e->name,
			       strerror(errno));
	if (e->info.source == TS_SOURCE_HW) {
		rc = phc_open(&e->phc, e->info.phc);
		if (rc)
			return lc_fail(r, rc, "%s: /dev/ptp%d: %s", e->name,
				       e->info.phc, strerror(-rc));
	}
	return 0;
}

/* Both ends, of one source. In AUTO a NIC that reports hardware modes and
 * then refuses them (-EPERM in a container, -ERANGE for a filter) gives
 * software stamps at both ends, with the reason. */
static int lc_open(struct lc_run *r)
{
	enum ts_mode mode;
	int rc, i;

	rc = lc_choose(r, &mode);
	if (rc)
		return rc;
	for (i = 0; i < 2; i++) {
		rc = lc_end_open(r, i, mode);
		if (rc)
			break;
	}
	if (rc && mode == TS_MODE_HW && r->cfg->mode == TS_MODE_AUTO &&
	    (rc == -ENODEV || rc == -EOPNOTSUPP || rc == -EINVAL ||
	     rc == -ERANGE || rc == -EPERM)) {
		snprintf(r->res->sw_why, sizeof(r->res->sw_why), "%s",
			 r->err);
		r->err[0] = 0;
		for (int j = 0; j < 2; j++)
			lc_end_close(&r->end[j]);
		mode = TS_MODE_SW;
		for (i = 0; i < 2; i++) {
			rc = lc_end_open(r, i, mode);
			if (rc)
				break;
		}
	}
	if (rc)
		return rc;
	r->source = mode == TS_MODE_HW ? TS_SOURCE_HW : TS_SOURCE_SW;
	r->tx_stage = mode == TS_MODE_HW ? TS_STAGE_HW_TX : TS_STAGE_SW_TX;
	return 0;
}

/* PHC - CLOCK_REALTIME of every hardware end, before (k 0) or after (1)
 * the run. */
static int lc_phc_read(struct lc_run *r, int k)
{
	for (int i = 0; i < 2; i++) {
		struct lc_end *e = &r->end[i];
		struct phc_offset off;
		int rc;

		if (!e->phc)
			continue;
		rc = phc_sys_offset(e->phc, LC_PHC_SAMPLES, &off);
		if (rc)
			return lc_fail(r, rc, "%s: /dev/ptp%d: offset to the "
				       "system clock: %s", e->name, e->info.phc,
				       strerror(-rc));
		e->phc_sys[k] = off.offset_ns;
	}
	return 0;
}

/* ---- the loop ------------------------------------------------------------ */

static uint64_t lc_nonce(void)
{
	uint64_t n;

	/* Random per run, so frames of an earlier or a concurrent run on the
	 * same ports are told from ours. Not a secret: a clock will do when
	 * the entropy pool cannot answer at once. */
	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) == (ssize_t)sizeof(n))
		return n;
	return (uint64_t)ts_now_real() ^ ((uint64_t)getpid() << 32);
}

/* Send frame seq of direction d (from end d to end 1 - d). Returns 1 sent,
 * 0 to try again (socket buffer full), or -errno. */
static int lc_send(struct lc_run *r, int d, uint32_t seq)
{
	struct lc_end *e = &r->end[d], *to = &r->end[1 - d];
	struct loopcheck_frame f = { .dir = (uint8_t)d, .seq = seq,
				     .nonce = r->nonce };
	ssize_t n;

	/* A full window makes ts_send() refuse with -ENOBUFS, which the
	 * driver's drop also gives: never let it fill, wait instead. */
	e->stalled = ts_tx_pending(e->ts) >= r->window;
	if (e->stalled)
		return 0;
	loopcheck_frame_build(r->txbuf, r->cfg->frame_len, to->mac, e->mac, &f);
	n = ts_send(e->ts, r->txbuf, r->cfg->frame_len, MSG_DONTWAIT, seq);
	if (n == -EAGAIN || n == -EWOULDBLOCK) {
		e->blocked = true;
		return 0;
	}
	e->blocked = false;
	if (n == -ENOBUFS) {
		/* Dropped after the driver took it (veth: the peer's backlog
		 * full), so the kernel used up its stamp key: keep ours in
		 * step. The frame counts as sent and lost. */
		if (ts_tx_sent(e->ts, seq, r->cfg->frame_len, 0))
			return lc_fail(r, -ENOBUFS, "%s: stamp window full",
				       e->name);
	} else if (n < 0) {
		return lc_fail(r, (int)n, "%s: send: %s", e->name,
			       strerror((int)-n));
	}
	r->slot[d][seq].sent = true;
	r->res->dir[d].sent++;
	return 1;
}

/* Read what arrived at end i: frames of direction 1 - i of this run. */
static int lc_receive(struct lc_run *r, int i)
{
	struct lc_end *e = &r->end[i];
	int d = 1 - i;

	for (int k = 0; k < LC_RX_BATCH; k++) {
		uint8_t buf[LOOPCHECK_HDR_LEN + 30];
		struct loopcheck_frame f;
		struct ts_stamp st[2];
		struct lc_slot *s;
		int nst;
		ssize_t n;

		/* Only the header is read: the rest of the frame is cut
		 * off, which a packet socket allows. */
		n = ts_recv(e->ts, buf, sizeof(buf), MSG_DONTWAIT, st, &nst);
		if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR)
			return 0;
		if (n < 0)
			return lc_fail(r, (int)n, "%s: receive: %s", e->name,
				       strerror((int)-n));
		if (loopcheck_frame_parse(buf, (size_t)n, &f) ||
		    f.nonce != r->nonce || f.dir != d ||
		    f.seq >= r->cfg->count || !e->receives)
			continue;	/* not ours, or not of this run */
		s = &r->slot[d][f.seq];
		if (s->received)
			continue;	/* a duplicate (a looping switch) */
		s->received = true;
		r->res->dir[d].received++;
		for (int j = 0; j < nst; j++) {
			if (st[j].stage == TS_STAGE_HW_RX)
				s->rx_hw = st[j].ns;
			else if (st[j].stage == TS_STAGE_SW_RX)
				s->rx_sw = st[j].ns;
		}
		s->rx = r->source == TS_SOURCE_HW ? s->rx_hw : s->rx_sw;
	}
	return 0;
}

/* Stamps off end i's error queue, and the sends they finished. */
static int lc_tx_stamps(struct lc_run *r, int i, int64_t mono)
{
	struct lc_end *e = &r->end[i];
	struct loopcheck_dir *dir = &r->res->dir[i];
	struct ts_tx_record rec;
	int n;

	n = ts_tx_reap(e->ts);
	if (n < 0)
		return lc_fail(r, n, "%s: reading TX stamps: %s", e->name,
			       strerror(-n));
	while (ts_tx_next(e->ts, &rec, mono) == 1) {
		struct lc_slot *s;

		if (rec.cookie >= r->cfg->count)
			continue;
		s = &r->slot[i][rec.cookie];
		if (rec.ns[r->tx_stage] && !(rec.lost & (1u << r->tx_stage)))
			s->tx = rec.ns[r->tx_stage];
		else
			dir->tx_missing++;
		s->tx_hw = rec.ns[TS_STAGE_HW_TX];
		s->tx_sw = rec.ns[TS_STAGE_SW_TX];
	}
	return 0;
}

/* A pending socket error (the link went away) shows as POLLERR with an
 * empty error queue: read it, or poll would spin on it. */
static int lc_sock_error(struct lc_run *r, int i)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(r->end[i].fd, SOL_SOCKET, SO_ERROR, &v, &l) || !v)
		return 0;
	return lc_fail(r, -v, "%s: socket error: %s", r->end[i].name,
		       strerror(v));
}

static bool lc_all_in(const struct lc_run *r)
{
	for (int i = 0; i < 2; i++) {
		const struct lc_end *e = &r->end[i];
		const struct loopcheck_dir *d = &r->res->dir[i];

		if (!e->sends)
			continue;
		if (ts_tx_pending(e->ts) || d->received < d->sent)
			return false;
	}
	return true;
}

/* Directions run interleaved, B -> A half a period after A -> B, rather
 * than one after the other: both see the same stretch of time (host load,
 * PHC drift, a switch's state), so their means are comparable and the
 * asymmetry is the path's, not the minute's; and at the default rate a
 * frame leaves half a millisecond after the other direction's, long after
 * that one is through. Each port still sends only one frame a period: many
 * NICs hold one TX stamp at a time and skip stamping a frame sent while
 * the last stamp is unread, which a higher rate shows as hw_missing. */
static int lc_loop(struct lc_run *r)
{
	const struct loopcheck_config *c = r->cfg;
	unsigned ndir = r->res->ndir;
	uint64_t total = (uint64_t)c->count * ndir, k = 0;
	double gap = 1e9 / c->rate_pps / ndir;
	int64_t t0, drain_until = -1;
	struct pollfd pfd[2];
	int rc;

	t0 = ts_now_mono();
	for (;;) {
		int64_t now = ts_now_mono(), wait;
		struct timespec tmo;
		int np;

		/* One send per round at most: when the loop falls behind it
		 * catches up at the pace of the loop, not in a burst. */
		if (k < total && now >= t0 + (int64_t)((double)k * gap)) {
			rc = lc_send(r, (int)(k % ndir), (uint32_t)(k / ndir));
			if (rc < 0)
				return rc;
			k += (uint64_t)rc;
			if (k == total)
				drain_until = ts_now_mono() + c->tx_timeout_ns +
					      LC_DRAIN_SLACK_NS;
		}
		if (k == total && (lc_all_in(r) || now >= drain_until))
			break;

		if (k < total) {
			wait = t0 + (int64_t)((double)k * gap) - now;
			if (r->end[k % ndir].blocked ||
			    r->end[k % ndir].stalled)
				wait = 1000000;	/* POLLOUT or a stamp */
		} else {
			wait = drain_until - now;
		}
		if (wait < 0)
			wait = 0;
		for (int i = 0; i < 2; i++)
			pfd[i] = (struct pollfd){
				.fd = r->end[i].fd,
				.events = (short)((r->end[i].receives ? POLLIN : 0) |
					  (r->end[i].blocked ? POLLOUT : 0)),
			};
		tmo = (struct timespec){ wait / 1000000000, wait % 1000000000 };
		np = ppoll(pfd, 2, &tmo, NULL);
		if (np < 0 && errno != EINTR)
			return lc_fail(r, -errno, "ppoll: %s", strerror(errno));
		now = ts_now_mono();
		for (int i = 0; i < 2 && np > 0; i++) {
			if (pfd[i].revents & POLLIN) {
				rc = lc_receive(r, i);
				if (rc)
					return rc;
			}
			if (pfd[i].revents & POLLERR) {
				if (!r->end[i].sends ||
				    ts_tx_reap(r->end[i].ts) == 0) {
					rc = lc_sock_error(r, i);
					if (rc)
						return rc;
				}
			}
		}
		for (int i = 0; i < 2; i++) {
			if (!r->end[i].sends)
				continue;
			rc = lc_tx_stamps(r, i, now);
			if (rc)
				return rc;
		}
	}
	/* The last frames and stamps; then every record still waiting is
	 * handed back, its missing stamps marked lost. */
	for (int i = 0; i < 2; i++) {
		if (r->end[i].receives && (rc = lc_receive(r, i)))
			return rc;
		if (r->end[i].sends && (rc = lc_tx_stamps(r, i, -1)))
			return rc;
	}
	return 0;
}

/* ---- figures ------------------------------------------------------------- */

static void lc_figures(struct lc_run *r, int d)
{
	struct loopcheck_dir *dir = &r->res->dir[d];
	struct lc_end *from = &r->end[d], *to = &r->end[1 - d];
	const struct lc_slot *s = r->slot[d];
	size_t n = 0, ntx = 0, nrx = 0;
	struct ts_stats st;
	bool hw = r->source == TS_SOURCE_HW;

	snprintf(dir->from, sizeof(dir->from), "%s", from->name);
	snprintf(dir->to, sizeof(dir->to), "%s", to->name);
	dir->source = r->source;
	dir->phc_tx = hw ? from->info.phc : -1;
	dir->phc_rx = hw ? to->info.phc : -1;
	/* A stamp that came after its record timed out finds no send to go
	 * with: the closest count of late stamps ts.h keeps (a stray stamp
	 * would count too; on a socket of ours alone there are none). */
	ts_sock_stats(from->ts, &st);
	dir->tx_late = st.unmatched;
	dir->have_hwsw = hw;
	/* PHC - REALTIME: the mean of the readings before and after the run
	 * stands for the whole run. A PHC drifting against the system clock
	 * moves it by at most half the change between the two, which shows
	 * as spread (and up to that much bias) in software - hardware. */
	for (int k = 0; k < 2 && hw; k++) {
		const struct lc_end *e = k ? to : from;

		dir->phc_sys_ns[k] = e->phc_sys[0] / 2 + e->phc_sys[1] / 2 +
				     (e->phc_sys[0] % 2 + e->phc_sys[1] % 2) / 2;
	}
	for (uint32_t i = 0; i < r->cfg->count; i++) {
		const struct lc_slot *x = &s[i];

		if (!x->sent)
			continue;
		if (x->received && !x->rx)
			dir->rx_unstamped++;
		if (x->tx && x->rx)
			dir->oneway[n++] = x->rx - x->tx;
		if (!hw)
			continue;
		/* Software - hardware brought onto CLOCK_REALTIME: the
		 * host stack's share of each end. */
		if (x->tx_sw && x->tx_hw)
			dir->tx_sw_hw[ntx++] = x->tx_sw -
					       (x->tx_hw - dir->phc_sys_ns[0]);
		if (x->rx_sw && x->rx_hw)
			dir->rx_sw_hw[nrx++] = x->rx_sw -
					       (x->rx_hw - dir->phc_sys_ns[1]);
		if ((x->tx_sw && !x->tx_hw) || (x->rx_sw && !x->rx_hw))
			dir->hw_missing++;
	}
	summary_of(dir->oneway, n, &dir->oneway_ns);
	summary_of(dir->tx_sw_hw, ntx, &dir->tx_sw_hw_ns);
	summary_of(dir->rx_sw_hw, nrx, &dir->rx_sw_hw_ns);
}

/* Records leave ts.h's window once stamped or timed out: room for a
 * timeout's worth of sends four times over, and never more than the run
 * (each slot of its ring is some 100 bytes). */
static unsigned lc_window(const struct loopcheck_config *cfg)
{
	double w = 4 * cfg->rate_pps * ((double)cfg->tx_timeout_ns / 1e9 + 0.1);
	unsigned n = w > 1 << 20 ? 1 << 20 : w < 4096 ? 4096 : (unsigned)w;

	return n < cfg->count ? n : cfg->count;
}

int loopcheck_run(const struct loopcheck_config *cfg,
		  struct loopcheck_result *res, char err[LOOPCHECK_ERRBUF])
{
	struct lc_run r = { .cfg = cfg, .res = res, .err = err };
	struct timespec warm = { 0, LC_WARMUP_NS };
	int rc;

	memset(res, 0, sizeof(*res));
	err[0] = 0;
	for (int i = 0; i < 2; i++)
		r.end[i].fd = -1;
	rc = lc_config_check(&r);
	if (rc)
		return rc;
	res->ndir = cfg->one_way ? 1 : 2;
	r.window = lc_window(cfg);
	res->expect_ns = cfg->expect_ns < 0 ? -1 : cfg->expect_ns;
	r.end[0].sends = r.end[1].receives = true;
	r.end[1].sends = r.end[0].receives = !cfg->one_way;
	for (int i = 0; i < 2; i++) {
		rc = lc_end_look(&r, i);
		if (rc)
			return rc;
	}
	rc = lc_open(&r);
	if (rc)
		goto out;
	res->same_phc = r.source == TS_SOURCE_HW &&
			r.end[0].info.phc == r.end[1].info.phc;
	/* What the NICs stamp on receipt, as set up: a filter narrower
	 * than all (PTP only: ptp4l's hwts_filter normal, or a NIC that
	 * answers "all" with less) leaves the loopback's frames bare. */
	for (int i = 0; i < 2; i++) {
		struct hwtstamp_state st;

		res->rx_filter_known[i] = r.source == TS_SOURCE_HW &&
			!hwtstamp_get(r.end[i].name, &st);
		res->rx_filter[i] = res->rx_filter_known[i] ? st.rx_filter : 0;
	}

	/* Everything the run needs, before the first frame. */
	r.txbuf = xcalloc(1, cfg->frame_len);
	for (unsigned d = 0; d < res->ndir; d++) {
		struct loopcheck_dir *dir = &res->dir[d];

		r.slot[d] = xcalloc(cfg->count, sizeof(*r.slot[d]));
		dir->oneway = xcalloc(cfg->count, sizeof(int64_t));
		if (r.source == TS_SOURCE_HW) {
			dir->tx_sw_hw = xcalloc(cfg->count, sizeof(int64_t));
			dir->rx_sw_hw = xcalloc(cfg->count, sizeof(int64_t));
		}
	}
	r.nonce = lc_nonce();

	while (nanosleep(&warm, &warm) && errno == EINTR)
		;
	rc = lc_phc_read(&r, 0);
	if (rc)
		goto out;
	rc = lc_loop(&r);
	if (rc)
		goto out;
	rc = lc_phc_read(&r, 1);
	if (rc)
		goto out;
	for (unsigned d = 0; d < res->ndir; d++)
		lc_figures(&r, (int)d);
out:
	for (int i = 1; i >= 0; i--)
		lc_end_close(&r.end[i]);
	for (int d = 1; d >= 0; d--)
		free(r.slot[d]);
	free(r.txbuf);
	if (rc)
		loopcheck_result_free(res);
	return rc;
}

void loopcheck_result_free(struct loopcheck_result *res)
{
	for (int d = 0; d < 2; d++) {
		free(res->dir[d].oneway);
		free(res->dir[d].tx_sw_hw);
		free(res->dir[d].rx_sw_hw);
	}
	memset(res, 0, sizeof(*res));
	res->expect_ns = -1;
}

/* ---- judging ------------------------------------------------------------- */

static double lc_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : NAN;
}

static void lc_subject(const struct loopcheck_result *res, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%s%s%s", res->dir[0].from,
		 res->ndir > 1 ? "<->" : "->", res->dir[0].to);
}

static void lc_judge_loop(const struct loopcheck_result *res,
			  const struct verdict_limits *lim,
			  struct verdict_check *c)
{
	bool hw = res->dir[0].source == TS_SOURCE_HW;
	const char *src = hw ? "hw" : "sw";
	uint64_t received = 0;
	char name[48], what[80];

	if (!res->ndir) {
		verdict_skip(c, "no run");
		return;
	}
	if (hw)
		verdict_note(c, VERDICT_PASS, "hardware stamps: the one-way is "
			     "NIC to NIC (the wire, the PHYs and anything "
			     "between them)");
	else
		verdict_note(c, VERDICT_PASS, "software stamps: the one-way "
			     "includes the host stack at both ends, not the "
			     "NIC");
	for (int i = 0; hw && i < 2; i++)
		if (res->rx_filter_known[i] &&
		    res->rx_filter[i] != HWTSTAMP_FILTER_ALL &&
		    (i == 1 || res->ndir > 1))
			verdict_note(c, VERDICT_FAIL, "%s: the NIC's receive "
				     "filter is %s, not all: it stamps only "
				     "some received frames (PTP ones), and "
				     "the loopback's go unstamped; another "
				     "program narrowed it (ptp4l's "
				     "hwts_filter normal), or the NIC "
				     "answers 'all' with less", i ? res->dir[0].to :
				     res->dir[0].from,
				     hwtstamp_rx_name(res->rx_filter[i]) ?: "?");
	if (hw && !res->same_phc)
		verdict_note(c, VERDICT_PASS, "the ends stamp from different "
			     "PHCs (ptp%d, ptp%d): the one-way includes the "
			     "offset between them%s", res->dir[0].phc_tx,
			     res->dir[0].phc_rx, res->ndir > 1 ?
			     ", and the asymmetry twice that offset" : "");
	for (unsigned d = 0; d < res->ndir; d++)
		received += res->dir[d].received;
	if (!received) {
		verdict_note(c, VERDICT_FAIL, "no frame arrived at either end: "
			     "are %s and %s connected (cable, switch port, "
			     "link up)?", res->dir[0].from, res->dir[0].to);
		for (unsigned d = 0; d < res->ndir; d++) {
			const struct loopcheck_dir *x = &res->dir[d];

			snprintf(what, sizeof(what), "%s->%s frames lost",
				 x->from, x->to);
			verdict_apply(c, lim, "loop.rx_lost_pct", what,
				      lc_pct(x->sent, x->sent));
		}
		return;
	}
	for (unsigned d = 0; d < res->ndir; d++) {
		const struct loopcheck_dir *x = &res->dir[d];
		const struct summary *s = &x->oneway_ns;

		if (!s->n)
			verdict_note(c, VERDICT_FAIL, "%s->%s: no frame with "
				     "both its TX and its RX stamp", x->from,
				     x->to);
		snprintf(name, sizeof(name), "loop.%s.sd_ns", src);
		snprintf(what, sizeof(what), "%s->%s one-way SD", x->from,
			 x->to);
		/* One sample has no spread to judge: not measured. */
		verdict_apply(c, lim, name, what, s->n > 1 ? s->sd : NAN);
		if (res->expect_ns >= 0) {
			snprintf(name, sizeof(name), "loop.%s.cable_error_ns",
				 src);
			snprintf(what, sizeof(what), "%s->%s |mean one-way - "
				 "expected %lld ns|", x->from, x->to,
				 (long long)res->expect_ns);
			verdict_apply(c, lim, name, what, s->n ?
				      fabs(s->mean - (double)res->expect_ns) :
				      NAN);
		} else if (s->n) {
			verdict_note(c, VERDICT_PASS, "%s->%s mean one-way "
				     "%.0f ns, not compared: the expected "
				     "delay was not given", x->from, x->to,
				     s->mean);
		}
		snprintf(what, sizeof(what), "%s->%s TX stamps missing",
			 x->from, x->to);
		verdict_apply(c, lim, "loop.tx_missing_pct", what,
			      lc_pct(x->tx_missing, x->sent));
		snprintf(what, sizeof(what), "%s->%s TX stamps late", x->from,
			 x->to);
		verdict_apply(c, lim, "loop.tx_late_pct", what,
			      lc_pct(x->tx_late, x->sent));
		snprintf(what, sizeof(what), "%s->%s frames lost or "
			 "unstamped", x->from, x->to);
		verdict_apply(c, lim, "loop.rx_lost_pct", what,
			      lc_pct(x->sent - (x->received < x->sent ?
						x->received : x->sent) +
				     x->rx_unstamped, x->sent));
	}
	if (res->ndir == 2 && res->dir[0].oneway_ns.n &&
	    res->dir[1].oneway_ns.n) {
		snprintf(name, sizeof(name), "loop.%s.asymmetry_ns", src);
		snprintf(what, sizeof(what), "|mean %s->%s - mean %s->%s|",
			 res->dir[0].from, res->dir[0].to, res->dir[1].from,
			 res->dir[1].to);
		verdict_apply(c, lim, name, what,
			      fabs(res->dir[0].oneway_ns.mean -
				   res->dir[1].oneway_ns.mean));
	}
}

static void lc_judge_hwsw(const struct loopcheck_result *res,
			  const struct verdict_limits *lim,
			  struct verdict_check *c)
{
	char what[80];

	if (!res->ndir) {
		verdict_skip(c, "no run");
		return;
	}
	if (res->dir[0].source != TS_SOURCE_HW || !res->dir[0].have_hwsw) {
		verdict_skip(c, "software stamps only: %s",
			     *res->sw_why ? res->sw_why :
			     "no hardware stamps");
		return;
	}
	for (unsigned d = 0; d < res->ndir; d++) {
		const struct loopcheck_dir *x = &res->dir[d];
		const struct summary *t = &x->tx_sw_hw_ns, *r = &x->rx_sw_hw_ns;

		snprintf(what, sizeof(what), "%s->%s frames with a software "
			 "stamp and no hardware one", x->from, x->to);
		verdict_apply(c, lim, "hwsw.hw_missing_pct", what,
			      lc_pct(x->hw_missing, x->sent));
		if (!t->n || !r->n) {
			verdict_note(c, VERDICT_WARN, "%s->%s: no frame had "
				     "both a software and a hardware stamp at "
				     "%s: nothing to compare there", x->from,
				     x->to, !t->n ? x->from : x->to);
			continue;
		}
		verdict_note(c, VERDICT_PASS, "%s->%s software - hardware "
			     "(the host stack's share): TX at %s mean %.0f "
			     "ns, p50 %lld ns; RX at %s mean %.0f ns, p50 %lld "
			     "ns", x->from, x->to, x->from, t->mean,
			     (long long)t->p50, x->to, r->mean,
			     (long long)r->p50);
	}
}

void loopcheck_judge(const struct loopcheck_result *res,
		     const struct verdict_limits *lim, struct verdict_check *loop,
		     struct verdict_check *hwsw)
{
	char subject[2 * IF_NAMESIZE + 4];

	lc_subject(res, subject, sizeof(subject));
	verdict_check_init(loop, "loopback", res->ndir ? subject : "");
	verdict_check_init(hwsw, "hwsw", res->ndir ? subject : "");
	lc_judge_loop(res, lim, loop);
	lc_judge_hwsw(res, lim, hwsw);
}

/* ---- printing ------------------------------------------------------------ */

static void lc_print_phc(struct printer *p, const char *key, const char *fmt,
			 int phc)
{
	if (phc >= 0)
		print_int(p, key, fmt, phc);
	else
		print_null(p, key, NULL);
}

void loopcheck_print(struct printer *p, const struct loopcheck_result *res)
{
	print_array_begin(p, "directions");
	for (unsigned d = 0; d < res->ndir; d++) {
		const struct loopcheck_dir *x = &res->dir[d];
		bool hw = x->have_hwsw;

		print_object_begin(p, NULL);
		print_str(p, "from", "%s", x->from);
		print_str(p, "to", " -> %s:", x->to);
		print_str(p, "source", " %s stamps", ts_source_name(x->source));
		lc_print_phc(p, "phc_tx", " (ptp%lld", x->phc_tx);
		lc_print_phc(p, "phc_rx", " -> ptp%lld)", x->phc_rx);
		{
			/* The receiving end's NIC filter: end 1 for the
			 * first direction, end 0 for the way back. */
			int e = d ? 0 : 1;

			if (res->rx_filter_known[e])
				print_str(p, "rx_filter", ", rx filter %s",
					  hwtstamp_rx_name(res->rx_filter[e]) ?: "?");
			else
				print_null(p, "rx_filter", NULL);
		}
		print_text(p, "\n");
		print_uint(p, "sent", "  sent %llu", x->sent);
		print_uint(p, "received", ", received %llu", x->received);
		print_uint(p, "rx_unstamped", ", unstamped %llu",
			   x->rx_unstamped);
		print_uint(p, "tx_missing", ", TX stamps missing %llu",
			   x->tx_missing);
		print_uint(p, "tx_late", ", late %llu\n", x->tx_late);
		if (res->expect_ns >= 0)
			print_int(p, "expect_ns", "  expected one-way %lld ns\n",
				  res->expect_ns);
		else
			print_null(p, "expect_ns", NULL);
		print_text(p, "  one-way ns     ");
		summary_print(p, "oneway_ns", &x->oneway_ns);
		print_bool(p, "have_hwsw", NULL, hw);
		if (hw) {
			print_uint(p, "hw_missing", "  hardware stamps missing "
				   "%llu\n", x->hw_missing);
			print_int(p, "phc_sys_tx_ns", "  PHC - system %lld ns",
				  x->phc_sys_ns[0]);
			print_int(p, "phc_sys_rx_ns", ", %lld ns\n",
				  x->phc_sys_ns[1]);
			print_text(p, "  TX sw - hw ns  ");
		} else {
			print_null(p, "hw_missing", NULL);
			print_null(p, "phc_sys_tx_ns", NULL);
			print_null(p, "phc_sys_rx_ns", NULL);
		}
		/* The keys are there (null) without hardware stamps too,
		 * so a reader need not test for them. */
		if (hw) {
			summary_print(p, "tx_sw_hw_ns", &x->tx_sw_hw_ns);
			print_text(p, "  RX sw - hw ns  ");
			summary_print(p, "rx_sw_hw_ns", &x->rx_sw_hw_ns);
		} else {
			print_null(p, "tx_sw_hw_ns", NULL);
			print_null(p, "rx_sw_hw_ns", NULL);
		}
		print_object_end(p);
	}
	print_array_end(p);
}

/* ---- calibration --------------------------------------------------------- */

/* Median of sorted v[0..n), n > 0, and how far its tails reach from it:
 * the larger of median - p0.5 and p99.5 - median. */
static void lc_centre(const int64_t *v, size_t n, int64_t *median,
		      int64_t *reach)
{
	int64_t lo, hi;

	*median = summary_rank(v, n, 50);
	lo = *median - summary_rank(v, n, 0.5);
	hi = summary_rank(v, n, 99.5) - *median;
	*reach = lo > hi ? lo : hi;
}

static bool lc_term_ok(const struct calib_term *t)
{
	return t->offset_ns >= -CALIB_MAX_NS && t->offset_ns <= CALIB_MAX_NS &&
	       t->spread_ns >= 0 && t->spread_ns <= CALIB_MAX_NS;
}

int loopcheck_calibrate(const struct loopcheck_result *res, struct calib *c,
			char err[LOOPCHECK_ERRBUF])
{
	enum ts_source src = res->ndir ? res->dir[0].source : TS_SOURCE_NONE;
	enum calib_src cs = src == TS_SOURCE_HW ? CALIB_HW : CALIB_SW;
	struct summary sum;
	int64_t *v, median, reach, half_reach;
	bool hwsw = src == TS_SOURCE_HW;
	size_t n = 0, k = 0;
	int rc = -EINVAL;

	memset(c, 0, sizeof(*c));
	if (res->expect_ns < 0)
		return errbuf_set(err, LOOPCHECK_ERRBUF, -EINVAL,
				  "the loopback's true one-way is not known "
				  "(--expect-ns or --cable-m)");
	for (unsigned d = 0; d < res->ndir; d++) {
		if (res->dir[d].source != src || src == TS_SOURCE_NONE)
			return errbuf_set(err, LOOPCHECK_ERRBUF, -EINVAL,
					  "the directions' stamps are not of "
					  "one source");
		n += res->dir[d].oneway_ns.n;
		hwsw = hwsw && res->dir[d].have_hwsw;
	}
	if (n < LOOPCHECK_CALIB_MIN)
		return errbuf_set(err, LOOPCHECK_ERRBUF, -EINVAL,
				  "%zu one-way samples; a calibration needs at "
				  "least %d", n, LOOPCHECK_CALIB_MIN);
	if (src == TS_SOURCE_HW && !res->same_phc)
		return errbuf_set(err, LOOPCHECK_ERRBUF, -EINVAL,
				  "hardware stamps from two PHCs (ptp%d, ptp%d): "
				  "the one-way holds the offset between them, which is "
				  "no stamp's", res->dir[0].phc_tx, res->dir[0].phc_rx);
	v = xmalloc(n * sizeof(*v));
	for (unsigned d = 0; d < res->ndir; d++)
		for (uint64_t i = 0; i < res->dir[d].oneway_ns.n; i++)
			v[k++] = res->dir[d].oneway[i] - res->expect_ns;
	summary_of(v, n, &sum);
	lc_centre(v, n, &median, &reach);
	/* Offsets are stamp - wire: the excess is RX's less TX's, so TX
	 * gets -floor(median / 2) (floored for a negative median too), RX
	 * the rest. */
	c->t[CALIB_TX][cs].offset_ns = -(median / 2 - (median < 0 && median % 2));
	c->t[CALIB_RX][cs].offset_ns = median + c->t[CALIB_TX][cs].offset_ns;
	half_reach = reach / 2 + reach % 2;
	for (int e = 0; e < CALIB_DIRS; e++) {
		c->t[e][cs].set = true;
		c->t[e][cs].spread_ns = half_reach;
		c->t[e][cs].samples = n;
	}
	free(v);
	for (int e = 0; hwsw && e < CALIB_DIRS; e++) {
		struct calib_term *hw = &c->t[e][CALIB_HW], *sw = &c->t[e][CALIB_SW];
		size_t m = 0;

		for (unsigned d = 0; d < res->ndir; d++)
			m += e == CALIB_TX ? res->dir[d].tx_sw_hw_ns.n :
			     res->dir[d].rx_sw_hw_ns.n;
		if (!m)
			continue;
		v = xmalloc(m * sizeof(*v));
		k = 0;
		for (unsigned d = 0; d < res->ndir; d++) {
			const struct loopcheck_dir *ld = &res->dir[d];
			const int64_t *x = e == CALIB_TX ? ld->tx_sw_hw : ld->rx_sw_hw;
			uint64_t nx = e == CALIB_TX ? ld->tx_sw_hw_ns.n :
				      ld->rx_sw_hw_ns.n;

			if (nx)
				memcpy(v + k, x, nx * sizeof(*v));
			k += nx;
		}
		summary_of(v, m, &sum);
		lc_centre(v, m, &median, &reach);
		free(v);
		*sw = (struct calib_term){ .set = true,
			.offset_ns = hw->offset_ns + median,
			.spread_ns = hw->spread_ns + reach,
			.samples = m < n ? m : n };
	}
	for (int e = 0; e < CALIB_DIRS; e++)
		for (int s = 0; s < CALIB_SRCS; s++)
			if (c->t[e][s].set && !lc_term_ok(&c->t[e][s])) {
				errbuf_set(err, LOOPCHECK_ERRBUF, rc,
					   "the %s %s terms (offset %" PRId64
					   " ns, spread %" PRId64 " ns) are beyond "
					   "the 1 s a calibration holds",
					   calib_dir_name((enum calib_dir)e),
					   calib_src_name((enum calib_src)s),
					   c->t[e][s].offset_ns, c->t[e][s].spread_ns);
				goto out;
			}
	rc = 0;
out:
	if (rc)
		memset(c, 0, sizeof(*c));
	return rc;
}
