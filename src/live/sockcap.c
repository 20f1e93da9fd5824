/* sockcap.c — a stamped socket's sends and receives as frames; see
 * sockcap.h. */
#include "live/sockcap.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "files/frame.h"
#include "files/pcapng.h"
#include "stamp/ts.h"
#include "live/txsock.h"
#include "base/xalloc.h"

#define SOCKCAP_RING_DEFAULT (4u << 20)
/* Largest payload put in one frame: one IP packet's worth. A bigger send
 * (rare for the messages we carry) is cut, with origlen saying so. */
#define SOCKCAP_MAX_PAYLOAD (65535 - 60 - 60)

struct pending {
	uint64_t cookie;
	size_t off, span;	/* bytes at ring + off; span with wrap waste */
	uint32_t len;		/* bytes sent */
	uint32_t kept;		/* bytes kept (0 when the ring was full) */
	uint32_t seq, ack;	/* TCP, of the first byte */
	uint64_t first;		/* stream offset of the first byte */
};

/* A receive whose frame waits for sockcap_flush_rx(). */
struct rx_later {
	const uint8_t *data;	/* the caller's buffer */
	uint32_t len, seq, ack;
	int64_t ns;
	int phc;
};

struct sockcap {
	struct sockcap_config cfg;
	struct ts_sock *ts;
	struct ts_info info;
	int fd;
	struct frame_flow out, in;	/* local → peer, peer → local */
	bool tcp, relative;
	uint32_t snd_base, rcv_base;	/* seq of the first byte we track */
	uint64_t tx_off, rx_off;	/* stream bytes sent, received */
	uint64_t tx_done;		/* sent bytes whose frames are out */
	uint64_t next_cookie;

	uint8_t *ring;
	size_t ring_size, r_head, r_used;
	struct pending *q;
	size_t qcap, qhead, qlen;	/* FIFO of sends awaiting stamps */

	struct rx_later later[SOCKCAP_RX_LATER];
	unsigned nlater;

	uint8_t frame[FRAME_MAX_HEADER + SOCKCAP_MAX_PAYLOAD];
	struct sockcap_stats st;
};

/* Read the next sequence numbers of both queues through TCP_REPAIR, then
 * leave repair mode without the window probe TCP_REPAIR_OFF would send. */
static int tcp_queue_seqs(int fd, uint32_t *snd, uint32_t *rcv)
{
	int on = TCP_REPAIR_ON, off = TCP_REPAIR_OFF_NO_WP, q, err = 0;
	socklen_t len = sizeof(*snd);

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) < 0)
		return -errno;
	q = TCP_SEND_QUEUE;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) < 0 ||
	    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, snd, &len) < 0)
		err = -errno;
	q = TCP_RECV_QUEUE;
	len = sizeof(*rcv);
	if (!err && (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) < 0 ||
		     getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, rcv, &len) < 0))
		err = -errno;
	q = TCP_NO_QUEUE;
	setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q));
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)) < 0) {
		off = TCP_REPAIR_OFF;	/* kernels before 4.19 */
		setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
	}
	return err;
}

int sockcap_tcp_seqs(int fd, uint32_t *snd, uint32_t *rcv)
{
	/* rcv_nxt counts bytes already queued that the program has not read:
	 * our first received byte is that many earlier. Data may arrive
	 * between reading rcv_nxt and counting the unread bytes (a peer's
	 * first message racing the accept: under load this put a venue's
	 * sequence numbers a Logon early), so the count is taken before and
	 * after, and the read kept only when nothing came in between. */
	for (int tries = 0; tries < 100; tries++) {
		int before = 0, after = 0, err;

		if (ioctl(fd, SIOCINQ, &before) < 0)
			return -errno;
		err = tcp_queue_seqs(fd, snd, rcv);
		if (err)
			return err;
		if (ioctl(fd, SIOCINQ, &after) < 0)
			return -errno;
		if (before == after) {
			*rcv -= (uint32_t)after;
			return 0;
		}
	}
	return -EAGAIN;
}

int sockcap_create(struct sockcap **out, struct ts_sock *ts, int fd,
		   const struct sockcap_config *cfg)
{
	struct sockcap *sc;
	int err;

	sc = xcalloc(1, sizeof(*sc));
	sc->cfg = *cfg;
	sc->ts = ts;
	sc->fd = fd;
	ts_sock_info(ts, &sc->info);
	err = frame_flow_of_socket(&sc->out, fd, 0);
	if (err) {
		free(sc);
		return err;
	}
	sc->in = sc->out;
	frame_flow_reverse(&sc->in);
	sc->tcp = sc->out.proto == IPPROTO_TCP;
	if (sc->tcp && sockcap_tcp_seqs(fd, &sc->snd_base, &sc->rcv_base)) {
		sc->relative = true;
		sc->snd_base = sc->rcv_base = 1;
	}
	sc->ring_size = cfg->ring_bytes ? cfg->ring_bytes : SOCKCAP_RING_DEFAULT;
	sc->ring = xmalloc(sc->ring_size);
	/* Sends are at least a byte: more entries than ring bytes / 16 would
	 * only matter for sends the ring could not keep anyway. */
	sc->qcap = sc->ring_size / 16 < 1024 ? 1024 : sc->ring_size / 16;
	sc->q = xcalloc(sc->qcap, sizeof(*sc->q));
	*out = sc;
	return 0;
}

void sockcap_destroy(struct sockcap *sc)
{
	if (!sc)
		return;
	free(sc->q);
	free(sc->ring);
	free(sc);
}

void sockcap_iface(const struct ts_sock *ts, const char *ifname, bool tx,
		   struct pcapng_iface *ifc)
{
	struct ts_info info;
	bool hw;

	ts_sock_info(ts, &info);
	hw = info.source == TS_SOURCE_HW;
	memset(ifc, 0, sizeof(*ifc));
	ifc->name = ifname ? ifname : "sock";
	ifc->linktype = FRAME_LINK_ETHERNET;
	ifc->src.hw = hw;
	ifc->src.phc = hw ? info.phc : -1;
	ifc->src.timescale = hw ? TS_SCALE_PHC : TS_SCALE_UTC;
	snprintf(ifc->src.note, sizeof(ifc->src.note), "%s by the application%s",
		 tx ? "sent" : "received",
		 hw ? "" : ", host stamps");
	ifc->sender = tx;	/* stamped on the sending socket */
}

uint64_t sockcap_next_cookie(const struct sockcap *sc)
{
	return sc->next_cookie;
}

bool sockcap_relative(const struct sockcap *sc)
{
	return sc->relative;
}

void sockcap_stats(const struct sockcap *sc, struct sockcap_stats *st)
{
	*st = sc->st;
}

/* Take span bytes from the ring for kept bytes of a send; false when full. */
static bool ring_take(struct sockcap *sc, uint32_t n, size_t *off, size_t *span)
{
	size_t end;

	if (!sc->r_used)
		sc->r_head = 0;
	end = sc->ring_size - sc->r_head;
	*span = end >= n ? n : end + n;
	if (sc->r_used + *span > sc->ring_size)
		return false;
	*off = end >= n ? sc->r_head : 0;
	sc->r_head = *off + n;
	sc->r_used += *span;
	return true;
}

static int write_frame(struct sockcap *sc, bool tx, int64_t ts_ns, int phc,
		       int hwflags, uint32_t seq, uint32_t ack,
		       const uint8_t *data, uint32_t len)
{
	const struct frame_flow *f = tx ? &sc->out : &sc->in;
	uint32_t kept = len > SOCKCAP_MAX_PAYLOAD ? SOCKCAP_MAX_PAYLOAD : len;
	uint32_t origlen = (uint32_t)frame_header_len(f) + len;
	int n;

	if (!sc->cfg.w && !sc->cfg.txsock)
		goto count;	/* the frame would go nowhere */
	n = frame_build(sc->frame, sizeof(sc->frame), f, seq, ack, 0, data,
			kept);
	if (n < 0)
		return n;
	if (sc->cfg.w) {
		int err = pcapng_write_packet(sc->cfg.w,
					      tx ? sc->cfg.id_tx : sc->cfg.id_rx,
					      ts_ns, sc->frame, (uint32_t)n,
					      origlen, tx ? PCAPNG_DIR_OUT :
					      PCAPNG_DIR_IN);
		if (err)
			sc->st.write_errors++;
	}
	if (tx && sc->cfg.txsock) {
		struct txsock_rec r = {
			.ifindex = sc->cfg.ifindex, .ts_ns = ts_ns,
			.origlen = origlen, .flags = (uint16_t)hwflags,
			.linktype = FRAME_LINK_ETHERNET, .phc = phc,
			.frame = sc->frame, .caplen = (uint32_t)n,
		};

		if (!txsock_send(sc->cfg.txsock, &r))
			sc->st.handed++;
	}
count:
	if (tx)
		sc->st.tx_frames++;
	else
		sc->st.rx_frames++;
	return 0;
}

ssize_t sockcap_send(struct sockcap *sc, const void *buf, size_t len, int flags)
{
	uint64_t cookie = sc->next_cookie;
	struct pending *p;
	ssize_t n;

	if (sc->qlen == sc->qcap)
		return -ENOBUFS;	/* as a full ts window: poll first */
	n = ts_send(sc->ts, buf, len, flags, cookie);
	if (n <= 0)
		return n;
	sc->next_cookie++;
	p = &sc->q[(sc->qhead + sc->qlen++) % sc->qcap];
	memset(p, 0, sizeof(*p));
	p->cookie = cookie;
	p->len = (uint32_t)n;
	p->first = sc->tx_off;
	p->seq = sc->snd_base + (uint32_t)sc->tx_off;
	p->ack = sc->rcv_base + (uint32_t)sc->rx_off;
	sc->tx_off += (uint64_t)n;
	uint32_t keep = p->len > SOCKCAP_MAX_PAYLOAD ? SOCKCAP_MAX_PAYLOAD : p->len;

	if (!sc->cfg.w && !sc->cfg.txsock) {
		p->kept = keep;	/* counted as framed; no frame is built */
	} else if (ring_take(sc, keep, &p->off, &p->span)) {
		memcpy(sc->ring + p->off, buf, keep);
		p->kept = keep;
	} else {
		sc->st.ring_full++;
	}
	return n;
}

static void pending_drop_front(struct sockcap *sc)
{
	struct pending *p = &sc->q[sc->qhead];

	sc->tx_done = p->first + p->len;

	sc->r_used -= p->span;
	sc->qhead = (sc->qhead + 1) % sc->qcap;
	sc->qlen--;
}

int sockcap_poll(struct sockcap *sc, int64_t now_ns)
{
	bool hw = sc->info.source == TS_SOURCE_HW;
	enum ts_stage stage = hw ? TS_STAGE_HW_TX : TS_STAGE_SW_TX;
	struct ts_tx_record r;
	int err, written = 0;

	err = ts_tx_reap(sc->ts);
	if (err < 0 && err != -EAGAIN)
		return err;
	while (ts_tx_next(sc->ts, &r, now_ns) == 1) {
		/* Records come back in send order, one per ts_send(): the
		 * front of the queue is this record's send. */
		while (sc->qlen && sc->q[sc->qhead].cookie < r.cookie) {
			sc->st.tx_unstamped++;
			pending_drop_front(sc);
		}
		if (!sc->qlen || sc->q[sc->qhead].cookie != r.cookie) {
			if (sc->cfg.on_record)
				sc->cfg.on_record(sc->cfg.arg, &r);
			continue;
		}
		struct pending *p = &sc->q[sc->qhead];

		if (!r.ns[stage]) {
			sc->st.tx_unstamped++;
		} else if (p->kept || !p->len) {
			int flags = hw ? TXSOCK_F_HW : 0;

			if (hw && r.timescale[stage] == TS_SCALE_TAI)
				flags |= TXSOCK_F_TAI;
			if (r.shared)
				flags |= TXSOCK_F_SHARED;
			/* The frame says how long the send was; only the
			 * kept bytes are in it. */
			if (!write_frame(sc, true, r.ns[stage], hw ? r.phc : -1,
					 flags, p->seq, p->ack, sc->ring + p->off,
					 p->kept))
				written++;
		}
		pending_drop_front(sc);
		if (sc->cfg.on_record)
			sc->cfg.on_record(sc->cfg.arg, &r);
	}
	return written;
}

int sockcap_pollerr(struct sockcap *sc, int64_t now_ns)
{
	int err = 0, rc;
	socklen_t len = sizeof(err);

	rc = sockcap_poll(sc, now_ns);
	if (rc < 0 && rc != -EAGAIN)
		return rc;
	if (getsockopt(sc->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

ssize_t sockcap_recv(struct sockcap *sc, void *buf, size_t len, int flags,
		     struct ts_stamp *stamps, int *nstamps)
{
	enum ts_stage want = sc->info.source == TS_SOURCE_HW ? TS_STAGE_HW_RX :
			     TS_STAGE_SW_RX;
	struct ts_stamp st[2];
	int ns = 0;
	ssize_t n;

	n = ts_recv(sc->ts, buf, len, flags, st, &ns);
	if (stamps)
		memcpy(stamps, st, sizeof(st));
	if (nstamps)
		*nstamps = ns;
	if (n <= 0)
		return n;
	const struct ts_stamp *s = NULL;

	for (int i = 0; i < ns; i++)
		if (st[i].stage == want)
			s = &st[i];
	if (!s) {
		sc->st.rx_unstamped++;
	} else if (!(flags & MSG_PEEK)) {
		/* The peer's ACK is not known; claim no more than the bytes
		 * whose TX frames are already in the file, or readers take
		 * those frames, written once their stamps come, for
		 * retransmissions of data already acknowledged (unless the
		 * caller knows the peer answers each message: ack_sent). */
		uint32_t seq = sc->rcv_base + (uint32_t)sc->rx_off;
		uint32_t ack = sc->snd_base + (uint32_t)(sc->cfg.ack_sent ?
							  sc->tx_off : sc->tx_done);

		if (sc->cfg.rx_later) {
			if (sc->nlater == SOCKCAP_RX_LATER)
				sockcap_flush_rx(sc);
			sc->later[sc->nlater++] = (struct rx_later){
				.data = buf, .len = (uint32_t)n, .seq = seq,
				.ack = ack, .ns = s->ns, .phc = s->phc,
			};
		} else {
			write_frame(sc, false, s->ns, s->phc, 0, seq, ack, buf,
				    (uint32_t)n);
		}
	}
	if (!(flags & MSG_PEEK))
		sc->rx_off += (uint64_t)n;
	return n;
}

void sockcap_flush_rx(struct sockcap *sc)
{
	for (unsigned i = 0; i < sc->nlater; i++) {
		const struct rx_later *l = &sc->later[i];

		write_frame(sc, false, l->ns, l->phc, 0, l->seq, l->ack, l->data,
			    l->len);
	}
	sc->nlater = 0;
}
