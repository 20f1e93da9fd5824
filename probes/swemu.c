/* swemu.c — tapless-swemu: the lab's switch emulator. A userspace L2 switch
 * over two or more interfaces that holds every frame for a configured model
 * latency (swmodel.h) and records, as ground truth, the kernel's own stamps
 * of each frame's arrival and departure: one pcapng per port, ingress and
 * egress of a frame tied by one epb_packetid. See tapless-swemu(8).
 *
 * Per port: one AF_PACKET socket (SOCK_RAW, all protocols, promiscuous,
 * never seeing its own sends), stamped through ts.h like any probe socket,
 * so a port with a PHC gives hardware stamps and a veth software ones.
 * Frames come in through the socket's receive ring (pktring.h: no system
 * call per frame; the stamp is in the ring beside the frame), or with
 * --io socket one recvmsg each, with the stamp in its control message.
 *
 * Per frame: t_in is its RX stamp; it is due at t_in + the model's delay;
 * it waits in the egress port's FIFO (allocated once) and is sent when the
 * scheduling clock reaches due, the last stretch spun, not slept; its TX
 * stamp comes back on the error queue (OPT_ID: the socket's frame counter)
 * and is written as the egress. Stamps are read in batches when nothing is
 * due, never between a frame's arrival and its departure. The truth is
 * what happened, not what was asked: an emulator late on its schedule shows
 * up in the achieved residence, never in the files' stamps.
 *
 * The files are written by a thread of their own (pcapq.h): the forwarding
 * loop only copies each record into a ring.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <endian.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/hist.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/mkpath.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/prog.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "files/pcapng.h"
#include "files/pcapq.h"
#include "files/topo.h"
#include "live/pktring.h"
#include "sim/swmodel.h"
#include "stamp/phc.h"
#include "stamp/hwtstamp.h"
#include "stamp/ts.h"

#define SWEMU_VERSION prog_version()	/* "tapless-swemu VERSION" */
#define SWEMU_MAX_PORTS 16
#define SWEMU_ERRBUF 512	/* a start-up message: a port, a call, why */
#define SWEMU_BATCH 64		/* frames read from one port per round */
#define SWEMU_MAC_MAX 4096	/* learned addresses, at most */
#define SWEMU_RCVBUF (8 << 20)	/* receive buffer or ring per port, bytes */
#define SWEMU_TRUTHQ (32 << 20)	/* records waiting for the writer thread */
/* TX stamps read at the latest once this many wait on a port, even while
 * frames keep coming: each waits on the error queue, which holds what the
 * receive buffer holds, and a stamp that finds it full is lost. */
#define SWEMU_REAP_MAX 64
#define SWEMU_WAIT_MAX_NS 100000000LL	/* never sleep longer: stop, timeouts */
#define SWEMU_PHC_EVERY_NS 1000000000LL	/* PHC-system offset refresh */
/* Every frame read or sent on a port socket starts with this header
 * (PACKET_VNET_HDR): see swemu_port_open(). */
#define SWEMU_VNET sizeof(struct virtio_net_hdr)

static const char *const swemu_stamp_choices[] = { "auto", "hw", "sw", NULL };
static const char *const swemu_modes[] = { "cut-through", "store-and-forward", NULL };
static const char *const swemu_dists[] = { "normal", "exponential", "uniform", NULL };
enum swemu_io { SWEMU_IO_RING, SWEMU_IO_SOCKET };
static const char *const swemu_ios[] = { "ring", "socket", NULL };

static const struct opt_def swemu_opts[] = {
	{ "port", 'i', OPT_LIST, NULL, 0, 0, NULL, "IFACE", "a switch port (at least two)", 0 },
	{ "write", 'w', OPT_STRING, NULL, 0, 0, NULL, "DIR", "write the truth: DIR/IFACE.pcapng per port", 0 },
	{ "preset", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "a switch model: arista-7124sx, mellanox-sx1036, gnodal-gs7200", 0 },
	{ "mode", 0, OPT_ENUM, "cut-through", 0, 0, swemu_modes, "MODE", "cut-through or store-and-forward", 0 },
	{ "latency", 0, OPT_DURATION, "0", 0, 1e9, NULL, "TIME", "model latency (mean)", OPT_NS },
	{ "jitter", 0, OPT_DURATION, "0", 0, 1e9, NULL, "TIME", "SD of the jitter added", OPT_NS },
	{ "jitter_dist", 0, OPT_ENUM, "normal", 0, 0, swemu_dists, "DIST", "normal, exponential or uniform", 0 },
	{ "speed", 0, OPT_STRING, "10G", 0, 0, NULL, "SPEED", "link speed for store-and-forward: 100M, 1G, 10G, 25G, 40G, 100G", 0 },
	{ "seed", 0, OPT_INT, "1", 0, 9e18, NULL, "N", "seed of the jitter draws", 0 },
	{ "stamps", 0, OPT_ENUM, "auto", 0, 0, swemu_stamp_choices, "SOURCE", "stamps: auto, hw or sw", 0 },
	{ "queue", 0, OPT_INT, "4096", 16, 1048576, NULL, "N", "frames each egress port holds", 0 },
	{ "spin_us", 0, OPT_DURATION, "20", 0, 100000, NULL, "TIME", "spin instead of sleeping this close to a departure", OPT_US },
	{ "poll_us", 0, OPT_DURATION, "0", 0, 1000000, NULL, "TIME", "keep polling this long after a frame before sleeping", OPT_US },
	{ "busy_poll", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "never sleep (one CPU at 100 %)", 0 },
	{ "io", 0, OPT_ENUM, "ring", 0, 0, swemu_ios, "IO", "receive through a ring (no syscall per frame) or socket (recvmsg per frame)", 0 },
	{ "mac_age", 0, OPT_DURATION, "300", 1, 86400, NULL, "TIME", "forget a learned address after TIME", OPT_S },
	{ "stamp_timeout_ms", 0, OPT_DURATION, "1000", 10, 60000, NULL, "TIME", "a TX stamp not in by then is lost", OPT_MS },
	{ "snaplen", 0, OPT_INT, "65535", 64, 262144, NULL, "BYTES", "bytes kept of each frame in the files", OPT_OLD_LETTER('s') },
	{ "hostname", 'H', OPT_STRING, NULL, 0, 0, NULL, "NAME", "host name written in the files (default: this host's)", 0 },
	{ "cpu", 0, OPT_INT, "-1", -1, 4095, NULL, "N", "pin to CPU N", 0 },
	{ "duration", 'd', OPT_DURATION, "0", 0, 86400 * 365, NULL, "TIME", "stop after TIME (0: never)", OPT_S },
	{ "count", 'n', OPT_INT, "0", 0, 1e15, NULL, "N", "stop after N frames received (0: never)", OPT_OLD_LETTER('c') },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the summary as JSON", 0 },
	{ "show_model", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the model the options give, as KEY VALUE lines, and exit", OPT_CLI_ONLY },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "read options from FILE", OPT_CLI_ONLY },
	PROG_OPT_LOG_LEVEL,
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog swemu_prog = {
	.name = "tapless-swemu",
	.opts = swemu_opts,
	.usage = "usage: tapless-swemu -i IFACE -i IFACE [OPTIONS]\n\noptions:\n",
	.config = PROG_CONFIG_FILE,
};

/* A frame waiting in, or sent from, an egress FIFO. */
struct swemu_slot {
	uint64_t id;		/* epb_packetid */
	int64_t t_in;		/* ingress RX stamp, 0: none */
	int64_t due;		/* CLOCK_REALTIME */
	int64_t target;		/* the model's delay for it */
	uint32_t len;
	uint8_t in;		/* ingress port */
	bool keyed;		/* has a ts record (a stamp key) */
	bool failed;		/* send refused: the record is not written */
};

struct swemu_counters {
	uint64_t rx, tx, dropped, overflow, oversize, filtered;
	uint64_t rx_unstamped, stamps_lost, stamp_mismatch, kernel_drops;
	uint64_t rx_copy_stamped;	/* stamped by the ring's copy (pktring.h) */
	uint64_t unsent;	/* still queued when the run ended */
};

struct swemu_port {
	char name[IF_NAMESIZE];
	int ifindex, fd;
	unsigned mtu;
	struct ts_sock *ts;
	struct ts_info info;
	enum ts_stage rx_stage, tx_stage;
	struct pktring *ring;	/* --io ring; NULL: recvmsg */
	/* Hardware stamps: PHC time - CLOCK_REALTIME, for scheduling. */
	struct phc *phc;
	int64_t phc_off, phc_next;
	struct pcapng_writer *w;
	uint32_t wid;
	/* Egress FIFO: [head, sent) awaiting TX stamps, [sent, tail) due. */
	struct swemu_slot *q;
	uint8_t *data;
	uint64_t head, sent, tail;
	struct swemu_counters c;
};

/* A learned address: the value of the MAC table (key: the 6 bytes). */
struct swemu_mac {
	uint8_t port;
	int64_t seen;		/* CLOCK_MONOTONIC */
};

struct swemu {
	struct swemu_port port[SWEMU_MAX_PORTS];
	unsigned n;
	struct swmodel *model;
	struct hmap *mac;	/* address -> struct swemu_mac, bounded */
	int64_t mac_age_ns;
	uint32_t cap;		/* slots per FIFO */
	size_t slot_bytes;	/* largest frame taken */
	uint32_t snaplen;	/* bytes of a frame in the files */
	uint8_t *rxbuf;		/* --io socket: the frame read */
	uint64_t next_id, received, max_frames;
	int64_t spin_ns, poll_ns;
	bool busy, write_failed;
	enum swemu_io io;
	struct pcapq *truth;	/* NULL: no files */
	/* Residence and model target per (ingress, egress) pair. */
	struct hist *res[SWEMU_MAX_PORTS][SWEMU_MAX_PORTS];
	struct hist *target[SWEMU_MAX_PORTS][SWEMU_MAX_PORTS];
};

static volatile sig_atomic_t swemu_stop;

static void swemu_signal(int sig)
{
	(void)sig;
	swemu_stop++;
}

/* ---- ports -------------------------------------------------------------- */

/* A port's packet socket, stamped, not yet bound: nothing is queued on it
 * until swemu_port_start(), which needs every port's MTU first. */
static int swemu_port_open(struct swemu_port *p, int mode, int64_t stamp_timeout,
			   uint32_t window, char err[SWEMU_ERRBUF])
{
	struct ts_config cfg;
	struct ifreq ifr;
	int one = 1, rc;

	p->ifindex = (int)if_nametoindex(p->name);
	if (!p->ifindex)
		return errbuf_set(err, SWEMU_ERRBUF, -ENODEV,
				  "--port %s: no such interface", p->name);
	/* Protocol 0: no frame is queued until bind() names the interface. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		rc = -errno;
		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: packet socket: %s%s", p->name, strerror(errno),
				  errno == EPERM ? " (tapless-swemu needs CAP_NET_RAW: run it "
				  "as root or give it the capability)" : "");
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->name);
	p->mtu = ioctl(p->fd, SIOCGIFMTU, &ifr) ? 1500 : (unsigned)ifr.ifr_mtu;

	/* RX stamping stays on in the socket even with the ring: it is what
	 * keeps the kernel stamping every frame on arrival (ts.h), the
	 * stamp the ring then carries. */
	ts_config_init(&cfg);
	cfg.mode = (enum ts_mode)mode;
	cfg.ifname = p->name;
	cfg.tx_timeout_ns = stamp_timeout;
	cfg.tx_window = window;
	rc = ts_sock_create(&p->ts, p->fd, &cfg);
	if (rc) {
		char why[200];

		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: stamping: %s%s", p->name,
				  hwtstamp_why(p->name, rc, why, sizeof(why)),
				  rc == -ENODEV ? " (no PHC or no hardware stamping: try "
				  "--stamps sw)" : rc == -EPROTONOSUPPORT ? " (this kernel "
				  "does not stamp packet sockets)" : "");
	}
	ts_sock_info(p->ts, &p->info);
	{
		char note[96];

		if (ts_hw_set_text(&p->info, note, sizeof(note)))
			log_info("%s: %s", p->name, note);
	}
	p->rx_stage = p->info.source == TS_SOURCE_HW ? TS_STAGE_HW_RX : TS_STAGE_SW_RX;
	p->tx_stage = p->info.source == TS_SOURCE_HW ? TS_STAGE_HW_TX : TS_STAGE_SW_TX;
	/* Our own sends are not traffic to switch (Linux 4.20+). */
	if (setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one))) {
		rc = -errno;
		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: PACKET_IGNORE_OUTGOING: %s", p->name,
				  strerror(errno));
	}
	return 0;
}

/* Receive on the port: the ring or the socket's buffer, sized for frames of
 * slot bytes, then bind, then promiscuous mode. */
static int swemu_port_start(struct swemu_port *p, enum swemu_io io, size_t slot,
			    char err[SWEMU_ERRBUF])
{
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, buf = SWEMU_RCVBUF, rc;

	/* A frame from a local sender (veth, a bridge) may still carry a
	 * checksum to be completed (CHECKSUM_PARTIAL): it would leave us
	 * with a wrong one and be dropped by the receiver. The virtio header
	 * says where the checksum goes, so we complete it as a NIC would;
	 * our sends carry an empty header. */
	if (io == SWEMU_IO_RING) {
		/* One slot per frame, SWEMU_RCVBUF bytes in all, as the
		 * socket's buffer: a burst waits there while we sleep. */
		rc = pktring_create(&p->ring, p->fd, slot,
				    (unsigned)(SWEMU_RCVBUF / (slot + 128)), true,
				    p->info.source == TS_SOURCE_HW);
		if (rc)
			return errbuf_set(err, SWEMU_ERRBUF, rc,
					  "%s: receive ring: %s", p->name,
					  strerror(-rc));
	} else if (setsockopt(p->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one))) {
		rc = -errno;
		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: PACKET_VNET_HDR: %s", p->name, strerror(errno));
	}
	/* A burst must wait in the socket, not be dropped, while we sleep;
	 * with the ring, the buffer still holds the TX stamps (the error
	 * queue), which must not be dropped while a burst is forwarded. */
	if (setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		(void)setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	sll.sll_ifindex = p->ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		rc = -errno;
		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: bind: %s", p->name, strerror(errno));
	}
	mr.mr_ifindex = p->ifindex;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		rc = -errno;
		return errbuf_set(err, SWEMU_ERRBUF, rc,
				  "%s: promiscuous mode: %s", p->name, strerror(errno));
	}
	if (p->info.source == TS_SOURCE_HW) {
		rc = phc_open(&p->phc, p->info.phc);
		if (rc)
			return errbuf_set(err, SWEMU_ERRBUF, rc,
					  "%s: /dev/ptp%d: %s", p->name, p->info.phc,
					  strerror(-rc));
	}
	return 0;
}

static void swemu_port_close(struct swemu_port *p)
{
	pktring_destroy(p->ring);
	ts_sock_destroy(p->ts);
	if (p->fd >= 0)
		close(p->fd);
	phc_close(p->phc);
	free(p->q);
	free(p->data);
}

/* Hardware stamps are PHC time and departures are scheduled on
 * CLOCK_REALTIME: keep the offset between the two fresh. */
static void swemu_phc_refresh(struct swemu_port *p, int64_t mono)
{
	struct phc_offset off;

	if (!p->phc || mono < p->phc_next)
		return;
	p->phc_next = mono + SWEMU_PHC_EVERY_NS;
	if (phc_sys_offset(p->phc, 5, &off) == 0)
		p->phc_off = off.offset_ns;
	else
		log_warn_rl("%s: PHC offset to the system clock: not read", p->name);
}

static int swemu_open_file(struct swemu *d, struct swemu_port *p, const char *dir,
			   const char *host, uint32_t snaplen)
{
	struct pcapng_section sec = { .hostname = host, .userappl = SWEMU_VERSION };
	struct pcapng_iface ifc = {
		.name = p->name, .linktype = 1, .snaplen = snaplen,
		.src = {
			.hw = p->info.source == TS_SOURCE_HW,
			.phc = p->info.source == TS_SOURCE_HW ? p->info.phc : -1,
			.timescale = p->info.source == TS_SOURCE_HW ? TS_SCALE_PHC
								     : TS_SCALE_UTC,
		},
	};
	char path[4400];
	int rc;

	(void)d;
	snprintf(ifc.src.note, sizeof(ifc.src.note),
		 "switch port: ingress RX and egress TX stamps");
	snprintf(path, sizeof(path), "%s/%s.pcapng", dir, p->name);
	rc = pcapng_open(&p->w, path, &sec);
	if (!rc)
		rc = pcapng_add_iface(p->w, &ifc, &p->wid);
	if (rc)
		log_err("%s: %s", path, strerror(-rc));
	return rc;
}

/* ---- MAC learning ------------------------------------------------------- */

/* The port behind addr, or -1 when it is not known (or too old). */
static int swemu_mac_lookup(const struct swemu *d, const uint8_t *addr, int64_t now)
{
	const struct swemu_mac *m = hmap_find(d->mac, addr);

	return m && now - m->seen < d->mac_age_ns ? m->port : -1;
}

/* The table is full: forget every address too old to be used, or when
 * none is, the one seen longest ago. */
static void swemu_mac_forget(struct swemu *d, int64_t now)
{
	struct hmap_iter it;
	struct swemu_mac *m, *oldest = NULL;
	size_t before = hmap_count(d->mac);

	for (hmap_iter_init(d->mac, &it); (m = hmap_iter_next(d->mac, &it)); ) {
		if (now - m->seen >= d->mac_age_ns)
			hmap_iter_del(d->mac, &it);
		else if (!oldest || m->seen < oldest->seen)
			oldest = m;
	}
	/* No delete happened when oldest is to go: it is still valid. */
	if (hmap_count(d->mac) == before && oldest)
		hmap_del_val(d->mac, oldest);
}

/* Learn a source address; a full table gives up its oldest. */
static void swemu_mac_learn(struct swemu *d, const uint8_t *addr, unsigned port,
			    int64_t now)
{
	struct swemu_mac *m;
	int rc;

	if (addr[0] & 1)
		return;		/* a group address is never a source */
	rc = hmap_add(d->mac, addr, (void **)&m);
	if (rc == -ENOSPC) {
		swemu_mac_forget(d, now);
		rc = hmap_add(d->mac, addr, (void **)&m);
		if (rc < 0)
			return;	/* cannot happen: room was made */
	}
	if (!rc && m->port != port)
		log_info("%02x:%02x:%02x:%02x:%02x:%02x moved to %s",
			 addr[0], addr[1], addr[2], addr[3], addr[4],
			 addr[5], d->port[port].name);
	m->port = (uint8_t)port;
	m->seen = now;
}

/* ---- forwarding --------------------------------------------------------- */

static struct swemu_slot *swemu_slot(const struct swemu *d, struct swemu_port *p,
				     uint64_t i, uint8_t **data)
{
	uint32_t k = (uint32_t)(i % d->cap);

	/* Each slot: an empty virtio header, then the frame. */
	if (data)
		*data = p->data + (size_t)k * (SWEMU_VNET + d->slot_bytes) + SWEMU_VNET;
	return &p->q[k];
}

/* A block for the truth: copied into the writer thread's ring. */
static void swemu_write(struct swemu *d, struct swemu_port *p, int64_t ts,
			const uint8_t *frame, uint32_t len, enum pcapng_dir dir,
			uint64_t id)
{
	if (!p->w)
		return;
	if (pcapq_packet(d->truth, p->w, p->wid, ts, frame,
			 len < d->snaplen ? len : d->snaplen, len, dir, true, id) &&
	    !d->write_failed) {
		d->write_failed = true;
		log_err("%s: writing the truth: %u-byte frame: %s", p->name, len,
			strerror(EMSGSIZE));
	}
}

/* Finish a checksum the sender left to the NIC: the one's complement sum
 * from start to the end (the field holds the pseudo-header's sum), folded
 * and inverted into the field (skb_checksum_help()'s rule). */
static void swemu_csum_complete(uint8_t *f, uint32_t len, unsigned start,
				unsigned off)
{
	uint32_t sum = 0;
	uint16_t c;
	unsigned i;

	if (start + off + 2 > len)
		return;
	for (i = start; i + 1 < len; i += 2)
		sum += (uint32_t)f[i] << 8 | f[i + 1];
	if (i < len)
		sum += (uint32_t)f[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	c = (uint16_t)~sum;
	/* 0 means "no checksum" to UDP; 0xffff is the same sum. */
	if (!c)
		c = 0xffff;
	f[start + off] = (uint8_t)(c >> 8);
	f[start + off + 1] = (uint8_t)c;
}

/* One received frame f (checksum completed), stamped t_in (0: not stamped):
 * record its arrival, learn, queue it on its egress ports with its due
 * time. */
static void swemu_frame(struct swemu *d, unsigned in, const uint8_t *f,
			uint32_t len, int64_t t_in, int64_t mono)
{
	struct swemu_port *p = &d->port[in];
	int64_t when, delay;
	uint64_t id = ++d->next_id;
	int out;

	if (t_in) {
		swemu_write(d, p, t_in, f, len, PCAPNG_DIR_IN, id);
		when = t_in - p->phc_off;	/* on CLOCK_REALTIME */
	} else {
		/* The kernel's stamping switch was not on yet (ts.h): the
		 * frame is switched, but it is no truth. */
		p->c.rx_unstamped++;
		when = ts_now_real();
	}
	if (len < ETH_HLEN) {
		p->c.oversize++;
		return;
	}
	swemu_mac_learn(d, f + 6, in, mono);
	out = (f[0] & 1) ? -1 : swemu_mac_lookup(d, f, mono);
	if (out == (int)in) {
		p->c.filtered++;	/* the destination is behind this port */
		return;
	}
	delay = swmodel_delay(d->model, len);
	for (unsigned e = 0; e < d->n; e++) {
		struct swemu_port *q = &d->port[e];
		struct swemu_slot *s;
		uint8_t *data;

		if (e == in || (out >= 0 && (unsigned)out != e))
			continue;
		if (q->tail - q->head >= d->cap) {
			q->c.overflow++;
			log_warn_rl("%s: egress queue full (%u frames): frame dropped",
				    q->name, d->cap);
			continue;
		}
		s = swemu_slot(d, q, q->tail, &data);
		*s = (struct swemu_slot){ .id = id, .t_in = t_in, .due = when + delay,
					  .target = delay, .len = len, .in = (uint8_t)in };
		memcpy(data, f, len);
		q->tail++;
	}
}

static void swemu_oversize(struct swemu_port *p, size_t n)
{
	p->c.oversize++;
	log_warn_rl("%s: a %zu-byte frame is larger than the MTU: turn TSO/GSO "
		    "off on the sending host (ethtool -K IFACE tso off gso off)",
		    p->name, n);
}

/* --io ring: the frames waiting in the port's ring, at most a batch; no
 * system call. Returns how many were read. */
static unsigned swemu_receive_ring(struct swemu *d, unsigned in, int64_t mono)
{
	struct swemu_port *p = &d->port[in];
	bool hw = p->info.source == TS_SOURCE_HW;
	struct pktring_frame f;
	int64_t t_in;
	unsigned k;

	for (k = 0; k < SWEMU_BATCH; k++) {
		if (d->max_frames && d->received >= d->max_frames)
			break;
		if (!pktring_next(p->ring, &f))
			break;
		p->c.rx++;
		d->received++;
		if (f.len > d->slot_bytes || f.caplen < f.len) {
			swemu_oversize(p, f.len);
		} else {
			if (f.needs_csum)
				swemu_csum_complete(f.data, f.len, f.csum_start,
						    f.csum_offset);
			/* A hardware port's truth is the NIC's stamp alone
			 * (PHC time); a software port's the kernel's stamp
			 * on arrival or, for a frame that came without one
			 * (a local TCP sender's, pktring.h), its stamp as
			 * the kernel handed it to the port. */
			t_in = 0;
			if (hw ? f.kind == PKTRING_TS_HW : f.kind != PKTRING_TS_HW)
				t_in = f.ns;
			if (!hw && f.kind == PKTRING_TS_COPY)
				p->c.rx_copy_stamped++;
			swemu_frame(d, in, f.data, f.len, t_in, mono);
		}
		pktring_release(p->ring);
	}
	return k;
}

/* --io socket: one recvmsg per frame until none is left, at most a batch.
 * Returns how many were read. */
static unsigned swemu_receive_socket(struct swemu *d, unsigned in, int64_t mono)
{
	struct swemu_port *p = &d->port[in];
	unsigned k;

	for (k = 0; k < SWEMU_BATCH; k++) {
		struct virtio_net_hdr vh;
		struct ts_stamp st[2];
		uint8_t *f = d->rxbuf + SWEMU_VNET;
		int64_t t_in = 0;
		int nst;
		ssize_t n;

		if (d->max_frames && d->received >= d->max_frames)
			break;
		/* MSG_TRUNC: the length on the wire even when it is more than
		 * the buffer, so an oversize frame is seen as one. */
		n = ts_recv(p->ts, d->rxbuf, SWEMU_VNET + d->slot_bytes,
			    MSG_DONTWAIT | MSG_TRUNC, st, &nst);
		if (n == -EAGAIN || n == -EINTR)
			break;
		if (n < 0) {
			log_warn_rl("%s: receiving: %s", p->name, strerror((int)-n));
			break;
		}
		p->c.rx++;
		d->received++;
		n -= (ssize_t)SWEMU_VNET;
		if (n < 0 || (size_t)n > d->slot_bytes) {
			swemu_oversize(p, n < 0 ? 0 : (size_t)n);
			continue;
		}
		memcpy(&vh, d->rxbuf, sizeof(vh));
		if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
			swemu_csum_complete(f, (uint32_t)n, le16toh(vh.csum_start),
					    le16toh(vh.csum_offset));
		for (int i = 0; i < nst; i++)
			if (st[i].stage == p->rx_stage)
				t_in = st[i].ns;
		swemu_frame(d, in, f, (uint32_t)n, t_in, mono);
	}
	return k;
}

static unsigned swemu_receive(struct swemu *d, unsigned in, int64_t mono)
{
	return d->io == SWEMU_IO_RING ? swemu_receive_ring(d, in, mono)
				      : swemu_receive_socket(d, in, mono);
}

/* Send what is due on port e. A send refused for lack of buffer (EAGAIN)
 * stays queued for the next round; any other refusal drops the frame. */
static void swemu_send_due(struct swemu *d, struct swemu_port *p, int64_t now)
{
	while (p->sent < p->tail) {
		uint8_t *data;
		struct swemu_slot *s = swemu_slot(d, p, p->sent, &data);
		ssize_t n;

		if (s->due > now)
			return;
		if (s->len > p->mtu + ETH_HLEN + 4) {
			p->c.dropped++;		/* too long for this port */
			p->sent++;
			continue;
		}
		n = ts_send(p->ts, data - SWEMU_VNET, SWEMU_VNET + s->len,
			    MSG_DONTWAIT, s->id);
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			/* ENOBUFS is a drop after the driver (veth: the peer's
			 * backlog), which took the stamp key: the key is kept
			 * in step with a record that is never written. Errors
			 * before the driver (ENETDOWN, EMSGSIZE) take none. */
			p->c.dropped++;
			log_warn_rl("%s: sending: %s", p->name, strerror((int)-n));
			if (n == -ENOBUFS && ts_tx_sent(p->ts, s->id, s->len, 0) == 0)
				s->keyed = s->failed = true;
			p->sent++;
			continue;
		}
		p->c.tx++;
		s->keyed = true;
		p->sent++;
	}
}

/* TX stamps in: write the egress of every sent frame whose stamp came, in
 * send order; free their slots. now < 0: the end, stamps missing are lost. */
static void swemu_stamps(struct swemu *d, struct swemu_port *p, int64_t mono)
{
	struct ts_tx_record rec;

	if (p->head == p->sent)
		return;
	if (ts_tx_reap(p->ts) < 0)
		log_warn_rl("%s: reading TX stamps: %m", p->name);
	while (p->head < p->sent) {
		uint8_t *data;
		struct swemu_slot *s = swemu_slot(d, p, p->head, &data);
		int64_t tx;

		if (s->keyed) {
			if (ts_tx_next(p->ts, &rec, mono) != 1)
				return;
			tx = rec.ns[p->tx_stage];
			if (s->failed) {
				/* refused send: counted already */
			} else if (rec.cookie != s->id) {
				p->c.stamp_mismatch++;
			} else if (!tx || (rec.lost & (1u << p->tx_stage))) {
				p->c.stamps_lost++;
			} else if (p->tx_stage == TS_STAGE_SW_TX && tx < rec.app_ns) {
				/* A stamp before its send: the keys are out of
				 * step with the kernel's. Never written. */
				p->c.stamp_mismatch++;
				log_warn_rl("%s: a TX stamp precedes its send: "
					    "stamp keys out of step", p->name);
			} else if (s->t_in) {
				swemu_write(d, p, tx, data, s->len, PCAPNG_DIR_OUT, s->id);
				if (d->port[s->in].info.source == p->info.source) {
					hist_add(d->res[s->in][p - d->port], tx - s->t_in);
					hist_add(d->target[s->in][p - d->port], s->target);
				}
			}
		}
		p->head++;
	}
}

static void swemu_kernel_drops(struct swemu_port *p)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	/* The counters reset on every read: add them up. */
	if (!getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		p->c.kernel_drops += st.tp_drops;
}

/* ---- the loop ----------------------------------------------------------- */

static int64_t swemu_next_due(const struct swemu *d)
{
	int64_t next = INT64_MAX;

	for (unsigned i = 0; i < d->n; i++) {
		const struct swemu_port *p = &d->port[i];

		if (p->sent < p->tail) {
			const struct swemu_slot *s = &p->q[p->sent % d->cap];

			if (s->due < next)
				next = s->due;
		}
	}
	return next;
}

static bool swemu_idle(const struct swemu *d)
{
	for (unsigned i = 0; i < d->n; i++)
		if (d->port[i].head != d->port[i].tail)
			return false;
	return true;
}

/* Sent frames whose stamps are not read yet: the most on one port. */
static uint64_t swemu_unreaped(const struct swemu *d)
{
	uint64_t most = 0;

	for (unsigned i = 0; i < d->n; i++)
		if (d->port[i].sent - d->port[i].head > most)
			most = d->port[i].sent - d->port[i].head;
	return most;
}

static void swemu_reap(struct swemu *d, int64_t mono)
{
	for (unsigned i = 0; i < d->n; i++)
		swemu_stamps(d, &d->port[i], mono);
}

/* Once a second: the kernel's drop counters, the PHC offsets, the writer
 * thread's health. */
static void swemu_housekeeping(struct swemu *d, int64_t mono)
{
	for (unsigned i = 0; i < d->n; i++) {
		swemu_kernel_drops(&d->port[i]);
		swemu_phc_refresh(&d->port[i], mono);
	}
	if (d->truth && pcapq_error(d->truth) && !d->write_failed) {
		d->write_failed = true;
		log_err("writing the truth: %s", strerror(-pcapq_error(d->truth)));
	}
}

/* Switch until a signal, --duration or --count; then stop reading, send
 * what is queued at its due time and wait for its stamps (at most the
 * latest due time plus the stamp timeout); a second signal ends at once.
 *
 * Each round reads every port's new frames, sends what is due, and looks
 * again at once if anything came. With nothing new, a departure near (the
 * spin window) is waited for by spinning on the clock; further off, the
 * round reads the TX stamps of what was sent and the loop sleeps in ppoll
 * until the spin window of the next departure or the next frame, or, with
 * --busy-poll (or for --poll-us after a frame), looks again without
 * sleeping. */
static void swemu_run(struct swemu *d, int64_t end_mono, int64_t stamp_timeout,
		      const sigset_t *waitmask)
{
	struct pollfd pfd[SWEMU_MAX_PORTS];
	int64_t drain_until = -1, next_stats = ts_now_mono() + 1000000000LL;
	int64_t last_rx = 0;
	bool draining = false;

	/* A busy loop never sleeps in ppoll, the only place signals are
	 * taken otherwise: let them in at any time. */
	if (d->busy)
		sigprocmask(SIG_SETMASK, waitmask, NULL);
	for (unsigned i = 0; i < d->n; i++)
		swemu_phc_refresh(&d->port[i], ts_now_mono());
	for (;;) {
		int64_t now, mono = ts_now_mono(), next, wait;
		struct timespec tmo;
		unsigned got = 0;
		int np;

		if (!draining && (swemu_stop || (end_mono && mono >= end_mono) ||
				  (d->max_frames && d->received >= d->max_frames))) {
			int64_t last = swemu_next_due(d), nowr = ts_now_real();

			draining = true;
			for (unsigned i = 0; i < d->n; i++) {
				struct swemu_port *p = &d->port[i];

				if (p->tail > p->sent) {
					const struct swemu_slot *s =
						&p->q[(p->tail - 1) % d->cap];

					if (s->due > last || last == INT64_MAX)
						last = s->due;
				}
			}
			drain_until = mono + stamp_timeout + 100000000LL +
				      (last != INT64_MAX && last > nowr ? last - nowr : 0);
		}
		if (draining && (swemu_stop > 1 || swemu_idle(d) || mono >= drain_until))
			break;

		if (!draining)
			for (unsigned i = 0; i < d->n; i++)
				got += swemu_receive(d, i, mono);
		if (got)
			last_rx = mono;
		now = ts_now_real();
		for (unsigned i = 0; i < d->n; i++)
			swemu_send_due(d, &d->port[i], now);
		/* Stamps are read when there is time, unless so many wait
		 * that the queues would fill. */
		if (swemu_unreaped(d) >= SWEMU_REAP_MAX)
			swemu_reap(d, mono);
		if (mono >= next_stats) {
			swemu_housekeeping(d, mono);
			next_stats = mono + 1000000000LL;
		}
		if (got)
			continue;
		next = swemu_next_due(d);
		now = ts_now_real();
		if (next - now <= d->spin_ns)
			continue;	/* spin to the departure */
		if (swemu_unreaped(d))
			swemu_reap(d, mono);
		/* --poll-us: while frames keep coming, the next one is
		 * likely soon; waking from a sleep would take longer. */
		if (d->busy || (!draining && mono - last_rx < d->poll_ns))
			continue;

		/* Sleep: every stamp in is read (one waiting would wake
		 * ppoll at once, POLLERR). */
		for (unsigned i = 0; i < d->n; i++)
			pfd[i] = (struct pollfd){ .fd = d->port[i].fd,
						  .events = draining ? 0 : POLLIN };
		now = ts_now_real();
		wait = next == INT64_MAX ? SWEMU_WAIT_MAX_NS : next - now - d->spin_ns;
		if (wait > SWEMU_WAIT_MAX_NS)
			wait = SWEMU_WAIT_MAX_NS;
		if (wait < 0)
			wait = 0;
		tmo = (struct timespec){ wait / 1000000000LL, wait % 1000000000LL };
		np = ppoll(pfd, d->n, &tmo, waitmask);
		if (np < 0 && errno != EINTR)
			log_warn_rl("ppoll: %m");
	}
	/* The end: stamps still missing are lost, frames never sent are
	 * counted, and neither is written as an egress. */
	for (unsigned i = 0; i < d->n; i++) {
		struct swemu_port *p = &d->port[i];

		p->c.unsent += p->tail - p->sent;
		swemu_stamps(d, p, -1);
		p->head = p->sent = p->tail;
		swemu_kernel_drops(p);
	}
}

/* ---- summary ------------------------------------------------------------ */

static void swemu_summary(struct swemu *d, const struct opts *o, const char *preset,
			  const struct swmodel_config *mc, double secs)
{
	unsigned pflags = 0;
	struct printer *pr = print_create(stdout, print_format_from_opts(o, &pflags),
					  pflags);

	print_text(pr, "tapless-swemu: ");
	print_str(pr, "version", NULL, SWEMU_VERSION);
	print_uint(pr, "frames", "%llu frames", d->received);
	print_double(pr, "seconds", " in %.1f s\n", secs);
	print_str(pr, "io", "io: %s", swemu_ios[d->io]);
	print_bool(pr, "busy_poll", ", busy-poll %s", d->busy);
	print_int(pr, "cpu", ", cpu %lld\n", opts_int(o, "cpu"));
	if (d->truth) {
		struct pcapq_stats qs;

		pcapq_stats(d->truth, &qs);
		print_object_begin(pr, "truth");
		print_uint(pr, "records", "truth: %llu records", qs.written);
		print_uint(pr, "failed", ", %llu not written", qs.failed);
		print_uint(pr, "stalls", ", %llu waits for the writer", qs.stalls);
		print_uint(pr, "boosts", ", %llu boosts", qs.boosts);
		print_uint(pr, "peak_bytes", ", at most %llu bytes queued\n",
			   qs.peak_bytes);
		print_object_end(pr);
	}
	print_object_begin(pr, "model");
	print_text(pr, "model: ");
	print_str(pr, "preset", "preset %s, ", preset);
	print_str(pr, "mode", "%s, ", swmodel_mode_name(mc->mode));
	print_double(pr, "latency_ns", "latency %.1f ns", mc->latency_ns);
	print_double(pr, "jitter_ns", ", jitter SD %.1f ns", mc->jitter_ns);
	print_str(pr, "jitter_dist", " (%s)", swmodel_dist_name(mc->dist));
	print_str(pr, "speed", ", %s", opts_str(o, "speed"));
	print_double(pr, "speed_bps", NULL, mc->speed_bps);
	print_uint(pr, "seed", ", seed %llu\n", mc->seed);
	print_object_end(pr);

	print_array_begin(pr, "ports");
	for (unsigned i = 0; i < d->n; i++) {
		struct swemu_port *p = &d->port[i];

		print_object_begin(pr, NULL);
		print_str(pr, "name", "port %s: ", p->name);
		print_str(pr, "stamps", "%s stamps", ts_source_name(p->info.source));
		print_int(pr, "phc", NULL, p->info.phc);
		print_uint(pr, "rx", ", rx %llu", p->c.rx);
		print_uint(pr, "tx", ", tx %llu", p->c.tx);
		print_uint(pr, "dropped", ", dropped %llu", p->c.dropped);
		print_uint(pr, "queue_overflow", ", queue overflow %llu", p->c.overflow);
		print_uint(pr, "kernel_drops", ", kernel drops %llu", p->c.kernel_drops);
		print_uint(pr, "oversize", ", oversize %llu", p->c.oversize);
		print_uint(pr, "filtered", ", filtered %llu", p->c.filtered);
		print_uint(pr, "rx_unstamped", ", rx unstamped %llu", p->c.rx_unstamped);
		print_uint(pr, "rx_copy_stamped", ", rx stamped on delivery %llu",
			   p->c.rx_copy_stamped);
		print_uint(pr, "tx_stamps_lost", ", tx stamps lost %llu", p->c.stamps_lost);
		print_uint(pr, "tx_stamp_mismatch", ", mismatched %llu", p->c.stamp_mismatch);
		print_uint(pr, "unsent_at_stop", ", unsent at stop %llu\n", p->c.unsent);
		print_object_end(pr);
	}
	print_array_end(pr);

	print_array_begin(pr, "pairs");
	for (unsigned i = 0; i < d->n; i++) {
		for (unsigned e = 0; e < d->n; e++) {
			struct summary res, tgt;

			if (i == e || !hist_count(d->res[i][e]))
				continue;
			hist_summary(d->res[i][e], &res);
			hist_summary(d->target[i][e], &tgt);
			print_object_begin(pr, NULL);
			print_str(pr, "in", "%s", d->port[i].name);
			print_str(pr, "out", " -> %s", d->port[e].name);
			print_uint(pr, "frames", ": %llu frames", res.n);
			print_double(pr, "excess_mean_ns", ", %.0f ns over the model on "
				     "average\n", res.mean - tgt.mean);
			print_text(pr, "  residence (ns): ");
			summary_print(pr, "residence_ns", &res);
			print_text(pr, "  model (ns):     ");
			summary_print(pr, "target_ns", &tgt);
			print_object_end(pr);
		}
	}
	print_array_end(pr);
	print_destroy(pr);
}

/* ---- start-up ----------------------------------------------------------- */

/* The model: the preset, then every option given explicitly over it. */
static int swemu_model_config(const struct opts *o, struct swmodel_config *mc,
			      const char **preset, char err[SWEMU_ERRBUF])
{
	uint64_t seed = (uint64_t)opts_int(o, "seed");
	double bps;

	*preset = opts_str(o, "preset");
	if (*preset) {
		const struct swmodel_preset *p = swmodel_preset_find(*preset);

		if (!p) {
			int k = snprintf(err, SWEMU_ERRBUF, "--preset: no model "
					 "'%s'; the presets are", *preset);

			/* The list appended, cut where the buffer ends. */
			for (int i = 0; i < SWMODEL_PRESET_COUNT && k > 0 &&
			     k < SWEMU_ERRBUF; i++)
				k += snprintf(err + k, SWEMU_ERRBUF - (size_t)k,
					      " %s", swmodel_presets[i].name);
			return -EINVAL;
		}
		swmodel_config_preset(mc, p, seed);
	} else {
		memset(mc, 0, sizeof(*mc));
		mc->seed = seed;
		mc->speed_bps = SWMODEL_PRESET_SPEED_BPS;
	}
	if (!*preset || opts_given(o, "mode"))
		mc->mode = (enum swmodel_mode)opts_enum(o, "mode");
	if (!*preset || opts_given(o, "latency"))
		mc->latency_ns = (double)opts_ns(o, "latency");
	if (!*preset || opts_given(o, "jitter"))
		mc->jitter_ns = (double)opts_ns(o, "jitter");
	mc->dist = (enum swmodel_dist)opts_enum(o, "jitter_dist");
	if (topo_parse_speed(opts_str(o, "speed"), &bps))
		return errbuf_set(err, SWEMU_ERRBUF, -EINVAL,
				  "--speed: '%s' is not a speed like 100M, 1G, "
				  "10G, 25G, 40G or 100G", opts_str(o, "speed"));
	mc->speed_bps = bps;
	return 0;
}

/* What main()'s start-up steps share. */
struct swemu_setup {
	struct swmodel_config mc;
	const char *preset;
	const char *const *names;	/* --port */
	size_t nport;
	const char *dir;		/* --write, NULL: no files */
	char host[256];
};

/* --show-model: the model the options give, as KEY VALUE lines. The exit
 * status. */
static int swemu_show_model(const struct opts *o, struct swemu_setup *su)
{
	char err[SWEMU_ERRBUF];

	/* For scripts (tapless lab's lab.conf): no port needed. */
	if (swemu_model_config(o, &su->mc, &su->preset, err)) {
		fprintf(stderr, "tapless-swemu: %s\n", err);
		return 1;
	}
	printf("switch_mode %s\nswitch_latency_ns %g\nswitch_jitter_ns %g\n"
	       "switch_jitter_dist %s\nswitch_speed %g%s\n",
	       swmodel_mode_name(su->mc.mode), su->mc.latency_ns,
	       su->mc.jitter_ns, swmodel_dist_name(su->mc.dist),
	       su->mc.speed_bps >= 1e9 ? su->mc.speed_bps / 1e9 :
					 su->mc.speed_bps / 1e6,
	       su->mc.speed_bps >= 1e9 ? "G" : "M");
	return 0;
}

/* The options checked and into d: the ports' names, the model, the
 * --write directory, the host name, the MAC table. 0 or the exit status. */
static int swemu_configure(struct swemu *d, const struct opts *o,
			   struct swemu_setup *su)
{
	char err[SWEMU_ERRBUF];

	su->nport = opts_list(o, "port", &su->names);
	if (su->nport < 2 || su->nport > SWEMU_MAX_PORTS) {
		fprintf(stderr, "tapless-swemu: give 2 to %d ports with -i/--port "
			"(%zu given)\n", SWEMU_MAX_PORTS, su->nport);
		return 1;
	}
	for (size_t i = 0; i < su->nport; i++) {
		if (strlen(su->names[i]) >= IF_NAMESIZE) {
			fprintf(stderr, "tapless-swemu: --port %s: not an interface "
				"name\n", su->names[i]);
			return 1;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(su->names[i], su->names[j])) {
				fprintf(stderr, "tapless-swemu: --port %s: given "
					"twice\n", su->names[i]);
				return 1;
			}
	}
	if (swemu_model_config(o, &su->mc, &su->preset, err)) {
		fprintf(stderr, "tapless-swemu: %s\n", err);
		return 1;
	}
	if (swmodel_create(&d->model, &su->mc)) {
		fprintf(stderr, "tapless-swemu: the model cannot run: latency and "
			"jitter must be >= 0, speed > 0\n");
		return 1;
	}
	su->dir = opts_str(o, "write");
	if (su->dir) {
		int derr = mkpath_is_dir(su->dir);

		if (derr) {
			fprintf(stderr, "tapless-swemu: --write %s: %s\n", su->dir,
				mkpath_why(derr));
			return 1;
		}
	}
	if (opts_str(o, "hostname"))
		snprintf(su->host, sizeof(su->host), "%s", opts_str(o, "hostname"));
	else if (gethostname(su->host, sizeof(su->host) - 1))
		strcpy(su->host, "localhost");
	su->host[sizeof(su->host) - 1] = 0;

	d->cap = (uint32_t)opts_int(o, "queue");
	d->mac_age_ns = opts_ns(o, "mac_age");
	if (hmap_create(&d->mac, 6, sizeof(struct swemu_mac), SWEMU_MAC_MAX, true)) {
		log_err("the MAC table: %s", strerror(EINVAL));
		return 1;
	}
	d->spin_ns = opts_ns(o, "spin_us");
	d->poll_ns = opts_ns(o, "poll_us");
	d->busy = opts_flag(o, "busy_poll");
	d->io = (enum swemu_io)opts_enum(o, "io");
	d->snaplen = (uint32_t)opts_int(o, "snaplen");
	d->max_frames = (uint64_t)opts_int(o, "count");
	return 0;
}

/* Every port's socket open and started, its FIFO and histograms made. 0 or
 * the exit status. */
static int swemu_open_ports(struct swemu *d, const struct opts *o,
			    const struct swemu_setup *su)
{
	static const int modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	char err[SWEMU_ERRBUF];
	unsigned maxmtu = 0;
	int err_no;

	for (size_t i = 0; i < su->nport; i++) {
		struct swemu_port *p = &d->port[d->n];

		snprintf(p->name, sizeof(p->name), "%s", su->names[i]);
		d->n++;
		err_no = swemu_port_open(p, modes[opts_enum(o, "stamps")],
					 opts_ns(o, "stamp_timeout_ms"),
					 d->cap, err);
		if (err_no) {
			fprintf(stderr, "tapless-swemu: %s\n", err);
			return err_no == -ENODEV ? 1 : 2;
		}
		if (p->mtu > maxmtu)
			maxmtu = p->mtu;
		log_info("%s: %s stamps%s", p->name, ts_source_name(p->info.source),
			 p->info.source == TS_SOURCE_HW ? " (PHC)" : " (no PHC)");
	}
	/* A frame is at most the largest MTU, an Ethernet header and a VLAN
	 * tag; slots are a cache line multiple. */
	d->slot_bytes = ((size_t)maxmtu + ETH_HLEN + 4 + 63) & ~(size_t)63;
	d->rxbuf = xmalloc(SWEMU_VNET + d->slot_bytes);
	for (unsigned i = 0; i < d->n; i++) {
		if (swemu_port_start(&d->port[i], d->io, d->slot_bytes, err)) {
			fprintf(stderr, "tapless-swemu: %s\n", err);
			return 2;
		}
		d->port[i].q = xcalloc(d->cap, sizeof(*d->port[i].q));
		/* calloc: the virtio headers stay zero, sends need no offload. */
		d->port[i].data = xcalloc(d->cap, SWEMU_VNET + d->slot_bytes);
		for (unsigned e = 0; e < d->n; e++) {
			d->res[i][e] = hist_create();
			d->target[i][e] = hist_create();
		}
	}
	return 0;
}

/* With --write: a truth file per port and the thread writing them. 0 or
 * the exit status. */
static int swemu_open_truth(struct swemu *d, const struct opts *o,
			    const struct swemu_setup *su)
{
	int err_no;

	if (!su->dir)
		return 0;
	for (unsigned i = 0; i < d->n; i++)
		if (swemu_open_file(d, &d->port[i], su->dir, su->host,
				    (uint32_t)opts_int(o, "snaplen")))
			return 2;
	/* Started before the pinning below: the writer thread is
	 * free to run on another CPU. */
	err_no = pcapq_create(&d->truth, SWEMU_TRUTHQ);
	if (err_no) {
		fprintf(stderr, "tapless-swemu: the truth writer: %s\n",
			strerror(-err_no));
		return 2;
	}
	return 0;
}

/* --cpu, and the writer thread kept out of the forwarding's way. 0 or the
 * exit status. */
static int swemu_pin(struct swemu *d, const struct opts *o)
{
	if (opts_int(o, "cpu") >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)opts_int(o, "cpu"), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "tapless-swemu: --cpu %lld: %s\n",
				opts_int(o, "cpu"), strerror(errno));
			return 1;
		}
		/* Not on the forwarding CPU, where it would preempt a busy
		 * loop: anywhere else. */
		if (d->truth)
			(void)pcapq_avoid_cpu(d->truth, (int)opts_int(o, "cpu"));
	} else if (d->truth) {
		/* Sharing CPUs with the forwarding thread: never in its
		 * way (it takes what the forwarding thread leaves). */
		(void)pcapq_background(d->truth);
	}
	/* Sleeps end when asked, not up to 50 us later. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	return 0;
}

/* SIGINT and SIGTERM caught, and blocked but in *waitmask (ppoll's). */
static void swemu_signals(sigset_t *waitmask)
{
	sigset_t block;

	/* Signals are taken only inside ppoll, so a stop is never missed
	 * between the check and the sleep. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGTERM);
	prog_signals(swemu_signal, NULL);
}

/* After the run: the truth written out and its files completed. The exit
 * status. */
static int swemu_finish(struct swemu *d)
{
	int rc = 0;

	if (d->truth && pcapq_finish(d->truth)) {
		if (!d->write_failed)
			log_err("writing the truth: %s",
				strerror(-pcapq_error(d->truth)));
		d->write_failed = true;
	}
	for (unsigned i = 0; i < d->n; i++) {
		if (d->port[i].w && pcapng_close(d->port[i].w, false)) {
			log_err("%s: the truth file could not be completed", d->port[i].name);
			rc = 2;
		}
		d->port[i].w = NULL;
	}
	if (d->write_failed)
		rc = 2;
	return rc;
}

/* Everything let go of, whatever start-up got to. */
static void swemu_free(struct swemu *d, struct opts *o)
{
	/* The writer thread lets go of the writers first. */
	pcapq_destroy(d->truth);
	for (unsigned i = 0; i < SWEMU_MAX_PORTS; i++) {
		if (d->port[i].w)
			pcapng_close(d->port[i].w, true);
		swemu_port_close(&d->port[i]);
		for (unsigned e = 0; e < SWEMU_MAX_PORTS; e++) {
			hist_destroy(d->res[i][e]);
			hist_destroy(d->target[i][e]);
		}
	}
	swmodel_destroy(d->model);
	hmap_destroy(d->mac);
	free(d->rxbuf);
	free(d);
	opts_destroy(o);
}

int main(int argc, char **argv)
{
	struct opts *o;
	struct swemu *d = xcalloc(1, sizeof(*d));
	struct swemu_setup su = { .preset = NULL };
	sigset_t waitmask;
	int64_t start, end_mono = 0;
	int rc, first;

	for (unsigned i = 0; i < SWEMU_MAX_PORTS; i++)
		d->port[i].fd = -1;
	o = prog_start(&swemu_prog, argc, argv, &first);
	if (!o) {
		rc = first;
		goto out;
	}
	if (opts_flag(o, "show_model")) {
		rc = swemu_show_model(o, &su);
		goto out;
	}
	if ((rc = swemu_configure(d, o, &su)) ||
	    (rc = swemu_open_ports(d, o, &su)) ||
	    (rc = swemu_open_truth(d, o, &su)) ||
	    (rc = swemu_pin(d, o)))
		goto out;
	swemu_signals(&waitmask);

	start = ts_now_mono();
	if (opts_ns(o, "duration"))
		end_mono = start + opts_ns(o, "duration");
	log_notice("switching %u ports: %s, latency %.1f ns, jitter SD %.1f ns%s%s",
		   d->n, swmodel_mode_name(su.mc.mode), su.mc.latency_ns,
		   su.mc.jitter_ns, su.preset ? ", preset " : "",
		   su.preset ? su.preset : "");
	swemu_run(d, end_mono, opts_ns(o, "stamp_timeout_ms"), &waitmask);
	rc = swemu_finish(d);
	swemu_summary(d, o, su.preset, &su.mc,
		      (double)(ts_now_mono() - start) / 1e9);
out:
	swemu_free(d, o);
	return rc;
}
