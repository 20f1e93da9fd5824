/* pingpong.c — tapless-pingpong: UDP and TCP ping-pong, one message in
 * flight, stamped with SO_TIMESTAMPING on both ends. See tapless-pingpong(1).
 *
 * The client sends ping k; the server echoes it as pong k, of the same size,
 * carrying its own stamps: the RX stamps of ping k and the time its
 * application received it, and the TX stamps of an earlier pong (normally
 * pong k-1: a TX stamp is known only after the send). The client so has, for
 * each message, its own application clocks and stamps and the server's, and
 * reports the half round trip from its application clock, both one-way
 * latencies from the stamps, and each host's share, stage by stage.
 *
 * The client keeps what it knows of each message in a ring of slots until
 * every part is in (its echo, its own TX record, the server's TX stamps of
 * the echo), then turns it into samples: arrays allocated once from --count,
 * or grown by doubling up to PP_MAX_MESSAGES under --duration. Nothing is
 * allocated per message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/addrport.h"
#include "base/bytes.h"
#include "base/log.h"
#include "base/opts.h"
#include "files/pcapng.h"
#include "base/prog.h"
#include "base/print.h"
#include "live/sockcap.h"
#include "base/summary.h"
#include "stamp/hwtstamp.h"
#include "stamp/ts.h"
#include "base/xalloc.h"

#define PP_VERSION prog_version()	/* "tapless-pingpong VERSION" */

/* ---- wire format ------------------------------------------------------
 *
 * Every message starts with this 64-byte header, big-endian; the rest of a
 * ping is filler the pong echoes. Stamps are nanoseconds since the epoch of
 * their clock (UTC for software stamps and application times, the PHC's for
 * hardware stamps), 0 when there is none; a 32-bit difference of INT32_MIN
 * is none.
 *
 *   0  u32 magic "TLPP"          32 i64 srv_rx_hw   hardware RX of seq
 *   4  u16 len (whole message)   40 i64 prev_send   app send of pong prev_seq
 *   6  u8  kind                  48 i64 prev_sw_tx  its software TX stamp
 *   7  u8  flags                 56 i64 prev_hw_tx  its hardware TX stamp
 *   8  u32 seq
 *  12  u32 prev_seq              (pongs only; zero in pings)
 *  16  i64 srv_recv     server application receive of seq (UTC)
 *  24  i32 srv_rx_sw  - srv_recv (software RX stamp of seq)
 *  28  i32 prev_sched - prev_send (TX_SCHED stamp of pong prev_seq)
 */
#define PP_MAGIC 0x544c5050u
#define PP_HDR 64
#define PP_MIN_SIZE 64
#define PP_MAX_UDP 1472
#define PP_MAX_TCP 2048
#define PP_NONE32 INT32_MIN

enum pp_kind { PP_PING = 1, PP_PONG = 2, PP_FIN = 3, PP_FIN_ACK = 4 };

enum {
	PP_F_STAMPS = 0x01,	/* the server stamps: srv_* are meant */
	PP_F_HW = 0x02,		/* ... with hardware stamps */
	PP_F_PREV = 0x04,	/* prev_* carry the stamps of pong prev_seq */
	PP_F_LAST = 0x08,	/* FIN_ACK: the last one */
};

struct pp_msg {
	uint16_t len;
	uint8_t kind, flags;
	uint32_t seq, prev_seq;
	int64_t srv_recv, srv_rx_sw, srv_rx_hw;
	int64_t prev_send, prev_sched, prev_sw_tx, prev_hw_tx;
};

/* Limits. */
#define PP_MAX_MESSAGES 5000000	/* samples kept per quantity */
#define PP_GROW_FIRST 65536	/* --duration: first sample array size */
#define PP_SLOTS 4096		/* client: messages awaiting their parts */
#define PP_SENT 65536		/* sends awaiting their TX record (= window) */
#define PP_REPORTS 256		/* server: TX stamps waiting for a pong */
#define PP_RBUF 4096
#define PP_DRAIN_NS (100 * 1000 * 1000LL)	/* beyond --tx-timeout */

/* ---- options ----------------------------------------------------------- */

static const char *const pp_protos[] = { "udp", "tcp", NULL };
static const char *const pp_modes[] = { "auto", "hw", "sw", NULL };

static const struct opt_def pp_opts[] = {
	{ "server", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "run the echo server (else the client)", 0 },
	{ "bind", 'b', OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "server: address to listen on; client: local address", 0 },
	{ "to", 0, OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "client: the server", OPT_OLD_LETTER('t') },
	{ "proto", 0, OPT_ENUM, "udp", 0, 0, pp_protos, "PROTO", "udp or tcp", OPT_OLD_LETTER('p') },
	{ "size", 0, OPT_INT, "64", PP_MIN_SIZE, PP_MAX_TCP, NULL, "BYTES", "client: message size (UDP: up to 1472)", OPT_OLD_LETTER('s') },
	{ "count", 'n', OPT_INT, NULL, 1, PP_MAX_MESSAGES, NULL, "N", "client: messages to measure (default 10000); server: exit after echoing N", 0 },
	{ "duration", 'd', OPT_DURATION, NULL, 0.001, 31536000, NULL, "TIME", "client: measure this long instead of a count", OPT_S },
	{ "rate", 'r', OPT_INT, "0", 0, 10000000, NULL, "N", "client: messages per second (0: each as soon as the last is answered)", 0 },
	{ "warmup", 0, OPT_INT, "100", 0, 1000000, NULL, "N", "client: messages exchanged before measuring", 0 },
	{ "timeout-ms", 0, OPT_DURATION, "1000", 1, 600000, NULL, "TIME", "client: wait this long for an answer", OPT_MS },
	{ "tx-timeout", 0, OPT_DURATION, "200ms", 1, 60000, NULL, "TIME", "wait this long for a message's TX stamps, then count them lost", OPT_MS },
	{ "idle-ms", 0, OPT_DURATION, "0", 0, 86400000, NULL, "TIME", "server: exit after TIME without a message (0: never)", OPT_MS },
	{ "no-stamps", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "plain send and recv, no SO_TIMESTAMPING (half round trip only)", 0 },
	{ "write", 'w', OPT_STRING, NULL, 0, 0, NULL, "FILE", "write this side's messages with their stamps to FILE (pcapng)", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "cpu", 0, OPT_INT, NULL, 0, CPU_SETSIZE - 1, NULL, "CPU", "run on CPU only", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, pp_modes, "MODE", "stamp source: auto, hw or sw", 0 },
	{ "interface", 'i', OPT_STRING, NULL, 0, 0, NULL, "IFACE", "interface for hardware stamps (default: the one holding the local address)", 0 },
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog pp_prog = {
	.name = "tapless-pingpong",
	.opts = pp_opts,
	.usage = "usage: tapless-pingpong --server --bind ADDR:PORT [options]\n"
		 "       tapless-pingpong --to ADDR:PORT [options]\n"
		 "UDP or TCP ping-pong with SO_TIMESTAMPING stamps: half round "
		 "trip, one-way latencies\nand each host's share.\n\n",
};

/* Exit status: 0 done, 1 usage or a peer that broke the protocol, 2 a
 * system error. */
enum { PP_OK = 0, PP_USAGE = 1, PP_SYSTEM = 2 };

static volatile sig_atomic_t pp_stop;

static void pp_signal(int sig)
{
	(void)sig;
	pp_stop = 1;
}

/* ---- small helpers ------------------------------------------------------ */

/* b - a as a 32-bit difference, or PP_NONE32 when either is missing or it
 * does not fit. */
static int32_t pp_delta(int64_t a, int64_t b)
{
	int64_t d = b - a;

	if (!a || !b || d <= INT32_MIN || d > INT32_MAX)
		return PP_NONE32;
	return (int32_t)d;
}

static int64_t pp_undelta(int64_t base, int32_t d)
{
	return !base || d == PP_NONE32 ? 0 : base + d;
}

static void pp_encode(uint8_t *b, const struct pp_msg *m)
{
	bytes_put_be32(b, PP_MAGIC);
	bytes_put_be16(b + 4, m->len);
	b[6] = m->kind;
	b[7] = m->flags;
	bytes_put_be32(b + 8, m->seq);
	bytes_put_be32(b + 12, m->prev_seq);
	bytes_put_be64(b + 16, (uint64_t)m->srv_recv);
	bytes_put_be32(b + 24, (uint32_t)pp_delta(m->srv_recv, m->srv_rx_sw));
	bytes_put_be32(b + 28, (uint32_t)pp_delta(m->prev_send, m->prev_sched));
	bytes_put_be64(b + 32, (uint64_t)m->srv_rx_hw);
	bytes_put_be64(b + 40, (uint64_t)m->prev_send);
	bytes_put_be64(b + 48, (uint64_t)m->prev_sw_tx);
	bytes_put_be64(b + 56, (uint64_t)m->prev_hw_tx);
}

/* Check and decode the message at b (n bytes available; a datagram is
 * exactly one message, a stream may hold less or more). Returns 0, -EAGAIN
 * (stream: not all there yet) or -EBADMSG with *why. */
static int pp_decode(const uint8_t *b, size_t n, bool stream, size_t max,
		     struct pp_msg *m, const char **why)
{
	if (n < PP_HDR) {
		if (stream)
			return n >= 4 && bytes_get_be32(b) != PP_MAGIC ?
			       (*why = "bad magic", -EBADMSG) : -EAGAIN;
		*why = "shorter than the 64-byte header";
		return -EBADMSG;
	}
	if (bytes_get_be32(b) != PP_MAGIC) {
		*why = "bad magic";
		return -EBADMSG;
	}
	memset(m, 0, sizeof(*m));
	m->len = bytes_get_be16(b + 4);
	m->kind = b[6];
	m->flags = b[7];
	if (m->len < PP_HDR || m->len > max) {
		*why = "length field out of range";
		return -EBADMSG;
	}
	if (m->kind < PP_PING || m->kind > PP_FIN_ACK) {
		*why = "unknown message kind";
		return -EBADMSG;
	}
	if (!stream && m->len != n) {
		*why = "length field differs from the datagram's";
		return -EBADMSG;
	}
	if (stream && n < m->len)
		return -EAGAIN;
	m->seq = bytes_get_be32(b + 8);
	m->prev_seq = bytes_get_be32(b + 12);
	m->srv_recv = (int64_t)bytes_get_be64(b + 16);
	m->srv_rx_hw = (int64_t)bytes_get_be64(b + 32);
	m->prev_send = (int64_t)bytes_get_be64(b + 40);
	m->prev_sw_tx = (int64_t)bytes_get_be64(b + 48);
	m->prev_hw_tx = (int64_t)bytes_get_be64(b + 56);
	m->srv_rx_sw = pp_undelta(m->srv_recv, (int32_t)bytes_get_be32(b + 24));
	m->prev_sched = pp_undelta(m->prev_send, (int32_t)bytes_get_be32(b + 28));
	return 0;
}

/* addrport_parse() for option opt: 0, or -1 after saying why. */
static int pp_parse_addr(const char *opt, const char *spec,
			 struct sockaddr_storage *ss, socklen_t *len)
{
	char err[256];

	if (!addrport_parse(spec, NULL, ss, len, err, sizeof(err)))
		return 0;
	log_err("--%s %s", opt, err);
	return -1;
}

static void pp_sock_names(int fd, char *local, char *peer, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (local && !getsockname(fd, (struct sockaddr *)&ss, &sl))
		addrport_format((const struct sockaddr *)&ss, sizeof(ss),
				local, len);
	sl = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (peer && !getpeername(fd, (struct sockaddr *)&ss, &sl))
		addrport_format((const struct sockaddr *)&ss, sizeof(ss),
				peer, len);
}

/* The interface holding the socket's local address, or "" (wildcard,
 * none found). */
static void pp_iface_of(int fd, char name[IF_NAMESIZE])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct ifaddrs *all, *i;

	name[0] = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) || getifaddrs(&all))
		return;
	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;

		if (!a || a->sa_family != ss.ss_family)
			continue;
		if (a->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((struct sockaddr_in *)&ss)->sin_addr.s_addr)
			break;
		if (a->sa_family == AF_INET6 &&
		    !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			    &((struct sockaddr_in6 *)&ss)->sin6_addr,
			    sizeof(struct in6_addr)))
			break;
	}
	if (i)
		snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
	freeifaddrs(all);
}

/* ---- one end of the conversation ---------------------------------------- */

/* A send awaiting its TX record. */
struct pp_sent {
	uint64_t cookie;
	uint32_t seq;
	uint8_t kind;
};

typedef void (*pp_record_fn)(void *arg, const struct ts_tx_record *rec,
			     const struct pp_sent *sent);

struct pp_ep {
	int fd;
	bool tcp;
	size_t max;		/* largest message accepted */
	struct ts_sock *ts;	/* NULL: --no-stamps */
	int64_t tx_timeout_ns;	/* --tx-timeout */
	bool hw;		/* hardware stamps */
	char ifname[IF_NAMESIZE];
	char local[64], peer[64];

	uint8_t *rbuf;
	size_t rhave, mlen;	/* bytes buffered; length of the message */
	struct ts_stamp st[2];	/* stamps of the last recv */
	int nst;
	int64_t recv_real, recv_mono;	/* just after the last recv */
	uint64_t rx_off;	/* bytes received */

	/* With stamps, sends and receives go through sockcap: it hands
	 * every TX record back (pp_record) for the figures and, with
	 * --write, writes each message as a frame into w. */
	struct sockcap *sc;
	struct pp_sent *sent;	/* PP_SENT */
	pp_record_fn on_record;
	void *arg;

	struct pcapng_writer *w;	/* --write */
	const char *wpath;
	/* --write: received frames are written when their message is
	 * consumed, after the answer to it is sent; the client first writes
	 * the frames of sends finished by then, to keep the file in time
	 * order as far as the stamps are. */
	bool records_first;
};

static int64_t pp_stamp(const struct ts_stamp *st, int n, enum ts_stage stage)
{
	for (int i = 0; i < n; i++)
		if (st[i].stage == stage)
			return st[i].ns;
	return 0;
}

static void pp_ep_init(struct pp_ep *ep, int fd, bool tcp, size_t max)
{
	memset(ep, 0, sizeof(*ep));
	ep->fd = fd;
	ep->tcp = tcp;
	ep->max = max;
	ep->rbuf = xmalloc(PP_RBUF);
}

static int pp_cap_close(struct pp_ep *ep);

static void pp_ep_free(struct pp_ep *ep)
{
	pp_cap_close(ep);
	sockcap_destroy(ep->sc);
	ts_sock_destroy(ep->ts);
	free(ep->sent);
	free(ep->rbuf);
	if (ep->fd >= 0)
		close(ep->fd);
}

/* Stamps on ep->fd. 0 or -errno. */
static int pp_ep_stamps(struct pp_ep *ep, const struct opts *o)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	struct ts_config cfg;
	struct ts_info info;
	int err;

	ts_config_init(&cfg);
	cfg.mode = modes[opts_enum(o, "mode")];
	cfg.ifname = ep->ifname[0] ? ep->ifname : NULL;
	cfg.tx_stages = 1u << TS_STAGE_SCHED;
	cfg.both = true;	/* hardware: software stamps too, for stages */
	cfg.tx_window = PP_SENT;
	cfg.tx_timeout_ns = ep->tx_timeout_ns = opts_ns(o, "tx-timeout");
	err = ts_sock_create(&ep->ts, ep->fd, &cfg);
	if (err)
		return err;
	ts_sock_info(ep->ts, &info);
	ep->hw = info.source == TS_SOURCE_HW;
	ep->sent = xcalloc(PP_SENT, sizeof(*ep->sent));
	return 0;
}

static enum ts_stage pp_rx_stage(const struct pp_ep *ep)
{
	return ep->hw ? TS_STAGE_HW_RX : TS_STAGE_SW_RX;
}

/* ---- sockcap and --write ------------------------------------------------- */

/* A TX record from sockcap: to the role's callback with its send. */
static void pp_record(void *arg, const struct ts_tx_record *rec)
{
	struct pp_ep *ep = arg;
	const struct pp_sent *s = &ep->sent[rec->cookie % PP_SENT];

	if (s->cookie != rec->cookie)
		return;		/* cannot happen: window == PP_SENT */
	if (ep->on_record)
		ep->on_record(ep->arg, rec, s);
}

/* Once ep is connected and stamped: its sockcap, and with path its file.
 * 0 or -errno. */
static int pp_cap_open(struct pp_ep *ep, const char *path)
{
	struct sockcap_config scc = {
		.on_record = pp_record, .arg = ep,
		.ack_sent = true,	/* each message is answered */
		.rx_later = true,
	};
	struct pcapng_section sec = { .userappl = PP_VERSION };
	const char *ifname = ep->ifname[0] ? ep->ifname : NULL;
	struct pcapng_iface ifc;
	char host[256] = "";
	int err;

	if (path) {
		gethostname(host, sizeof(host) - 1);
		sec.hostname = host;
		err = pcapng_open(&ep->w, path, &sec);
		if (err)
			return err;
		sockcap_iface(ep->ts, ifname, true, &ifc);
		err = pcapng_add_iface(ep->w, &ifc, &scc.id_tx);
		if (!err) {
			sockcap_iface(ep->ts, ifname, false, &ifc);
			err = pcapng_add_iface(ep->w, &ifc, &scc.id_rx);
		}
		if (err)
			goto fail;
		scc.w = ep->w;
	}
	err = sockcap_create(&ep->sc, ep->ts, ep->fd, &scc);
	if (err)
		goto fail;
	ep->wpath = path;
	return 0;
fail:
	if (ep->w)
		pcapng_close(ep->w, true);
	ep->w = NULL;
	return err;
}

static void pp_records(struct pp_ep *ep, int64_t now_ns);

/* Write the frames of the receives so far. */
static void pp_cap_flush(struct pp_ep *ep)
{
	if (!ep->w)
		return;
	if (ep->records_first)
		pp_records(ep, ts_now_mono());
	sockcap_flush_rx(ep->sc);
}

/* Close the file (whole, under its name, also after an error: what was
 * captured is worth keeping). The counters stay for the report. */
static int pp_cap_close(struct pp_ep *ep)
{
	int err;

	if (!ep->w)
		return 0;
	pp_cap_flush(ep);
	err = pcapng_close(ep->w, false);
	ep->w = NULL;
	return err;
}

/* The counters of --write for either role's report, the first line's
 * format in fmt. */
static void pp_cap_print(struct printer *p, const struct pp_ep *ep,
			 const char *fmt)
{
	struct sockcap_stats st;

	if (!ep->wpath)
		return;
	sockcap_stats(ep->sc, &st);
	print_object_begin(p, "capture");
	print_str(p, "file", fmt, ep->wpath);
	print_uint(p, "tx_frames", ", %llu frames sent", st.tx_frames);
	print_uint(p, "rx_frames", ", %llu received", st.rx_frames);
	print_uint(p, "tx_unstamped", ", %llu sent",
		   st.tx_unstamped + st.ring_full);
	print_uint(p, "rx_unstamped", " and %llu received without a stamp",
		   st.rx_unstamped);
	print_bool(p, "relative_tcp_seq", NULL, sockcap_relative(ep->sc));
	print_uint(p, "write_errors", ", %llu write errors\n", st.write_errors);
	print_object_end(p);
}

/* ---- sending, receiving, TX records -------------------------------------- */

/* Hand finished sends to the record callback (and --write). now_ns < 0:
 * everything, stamped or not. */
static void pp_records(struct pp_ep *ep, int64_t now_ns)
{
	if (ep->sc)
		sockcap_poll(ep->sc, now_ns);
}

/* Wait for the TX stamps of every send (up to --tx-timeout and
 * PP_DRAIN_NS), then hand out all records, the missing stamps marked
 * lost. */
static void pp_drain(struct pp_ep *ep)
{
	int64_t end = ts_now_mono() + ep->tx_timeout_ns + PP_DRAIN_NS;

	if (!ep->sc)
		return;
	while (ts_tx_pending(ep->ts) && ts_now_mono() < end) {
		ts_tx_wait(ep->ts, 5);
		pp_records(ep, ts_now_mono());
	}
	pp_records(ep, -1);
}

/* Send all of buf as message seq of kind. 0 or -errno. */
static int pp_send(struct pp_ep *ep, const uint8_t *buf, size_t len,
		   uint32_t seq, uint8_t kind)
{
	size_t done = 0;

	while (done < len) {
		uint64_t cookie = 0;
		ssize_t n;

		if (ep->sc) {
			cookie = sockcap_next_cookie(ep->sc);
			n = sockcap_send(ep->sc, buf + done, len - done,
					 MSG_NOSIGNAL);
		} else {
			n = send(ep->fd, buf + done, len - done, MSG_NOSIGNAL);
			if (n < 0)
				n = -errno;
		}
		if (n == -EINTR)
			continue;
		if (n == -ENOBUFS && ep->sc) {
			/* The window of sends awaiting stamps is full. */
			ts_tx_wait(ep->ts, 1);
			pp_records(ep, ts_now_mono());
			continue;
		}
		if (n < 0)
			return (int)n;
		if (ep->sc) {
			struct pp_sent *s = &ep->sent[cookie % PP_SENT];

			s->cookie = cookie;
			s->seq = seq;
			s->kind = kind;
		}
		done += (size_t)n;
	}
	return 0;
}

/* One whole message into ep->rbuf[0..ep->mlen), decoded into *m. Its stamps
 * are those of the recv that completed it (the kernel's rule for a stream:
 * the last segment read). Returns 0, -ETIMEDOUT (SO_RCVTIMEO ran out),
 * -EINTR (a signal), -EPIPE (TCP: closed between messages), -EBADMSG with
 * *why (a stream cannot be followed after that), or another -errno. */
static int pp_recv(struct pp_ep *ep, struct pp_msg *m, const char **why)
{
	for (;;) {
		ssize_t n;
		int err;

		if (ep->tcp && ep->rhave) {
			err = pp_decode(ep->rbuf, ep->rhave, true, ep->max, m, why);
			if (!err) {
				ep->mlen = m->len;
				return 0;
			}
			if (err != -EAGAIN)
				return err;
		}
		if (ep->sc) {
			/* --write: the frame waits in sockcap, its bytes here,
			 * until pp_cap_flush(). */
			n = sockcap_recv(ep->sc, ep->rbuf + ep->rhave,
					 PP_RBUF - ep->rhave, 0, ep->st, &ep->nst);
		} else {
			n = recv(ep->fd, ep->rbuf + ep->rhave, PP_RBUF - ep->rhave, 0);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return -ETIMEDOUT;
		if (n < 0)
			return (int)n;
		ep->recv_mono = ts_now_mono();
		ep->recv_real = ts_now_real();
		if (n == 0 && ep->tcp) {
			if (!ep->rhave)
				return -EPIPE;
			*why = "connection closed in the middle of a message";
			return -EBADMSG;
		}
		ep->rx_off += (uint64_t)n;
		if (!ep->tcp) {
			ep->rhave = 0;
			ep->mlen = 0;
			err = pp_decode(ep->rbuf, (size_t)n, false, ep->max, m, why);
			if (!err)
				ep->mlen = (size_t)n;
			else
				pp_cap_flush(ep);	/* the next recv reuses rbuf */
			return err;
		}
		ep->rhave += (size_t)n;
	}
}

/* Done with the message pp_recv() returned. */
static void pp_consume(struct pp_ep *ep)
{
	pp_cap_flush(ep);
	if (ep->tcp && ep->mlen <= ep->rhave) {
		memmove(ep->rbuf, ep->rbuf + ep->mlen, ep->rhave - ep->mlen);
		ep->rhave -= ep->mlen;
	}
	ep->mlen = 0;
}

static void pp_timeout(int fd, long long ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---- client: what is measured -------------------------------------------- */

enum pp_q {
	Q_HALF_RTT, Q_C2S, Q_S2C,
	Q_C_SEND_SCHED, Q_C_SCHED_SW, Q_C_SEND_SW, Q_C_SW_HW,
	Q_S_HW_SW, Q_S_SW_RECV, Q_S_TURN,
	Q_S_SEND_SCHED, Q_S_SCHED_SW, Q_S_SEND_SW, Q_S_SW_HW,
	Q_C_HW_SW, Q_C_SW_RECV,
	Q_COUNT
};

/* When a quantity exists. */
enum { N_ALWAYS, N_CLIENT, N_CLIENT_HW, N_SERVER, N_SERVER_HW, N_BOTH };

static const struct {
	const char *key, *label;
	int need;
	bool stage;		/* under "stages_ns", else "latency_ns" */
} pp_qdefs[Q_COUNT] = {
	[Q_HALF_RTT] = { "half_rtt", "half round trip (app clock)", N_ALWAYS, false },
	[Q_C2S] = { "client_to_server", "one-way client -> server", N_BOTH, false },
	[Q_S2C] = { "server_to_client", "one-way server -> client", N_BOTH, false },
	[Q_C_SEND_SCHED] = { "client_send_to_sched", "client: app send -> TX_SCHED", N_CLIENT, true },
	[Q_C_SCHED_SW] = { "client_sched_to_sw_tx", "client: TX_SCHED -> software TX", N_CLIENT, true },
	[Q_C_SEND_SW] = { "client_send_to_sw_tx", "client: app send -> software TX", N_CLIENT, true },
	[Q_C_SW_HW] = { "client_sw_tx_to_hw_tx", "client: software TX -> hardware TX", N_CLIENT_HW, true },
	[Q_S_HW_SW] = { "server_hw_rx_to_sw_rx", "server: hardware RX -> software RX", N_SERVER_HW, true },
	[Q_S_SW_RECV] = { "server_sw_rx_to_recv", "server: software RX -> app receive", N_SERVER, true },
	[Q_S_TURN] = { "server_recv_to_send", "server: app receive -> app send", N_SERVER, true },
	[Q_S_SEND_SCHED] = { "server_send_to_sched", "server: app send -> TX_SCHED", N_SERVER, true },
	[Q_S_SCHED_SW] = { "server_sched_to_sw_tx", "server: TX_SCHED -> software TX", N_SERVER, true },
	[Q_S_SEND_SW] = { "server_send_to_sw_tx", "server: app send -> software TX", N_SERVER, true },
	[Q_S_SW_HW] = { "server_sw_tx_to_hw_tx", "server: software TX -> hardware TX", N_SERVER_HW, true },
	[Q_C_HW_SW] = { "client_hw_rx_to_sw_rx", "client: hardware RX -> software RX", N_CLIENT_HW, true },
	[Q_C_SW_RECV] = { "client_sw_rx_to_recv", "client: software RX -> app receive", N_CLIENT, true },
};

/* Stamps that were expected on an answered message and never came. */
enum pp_l {
	L_C_SCHED, L_C_SW_TX, L_C_HW_TX, L_C_HW_RX, L_C_SW_RX,
	L_S_HW_RX, L_S_SW_RX, L_S_SCHED, L_S_SW_TX, L_S_HW_TX,
	L_COUNT
};

static const struct {
	const char *key, *label;
	int need;
} pp_ldefs[L_COUNT] = {
	[L_C_SCHED] = { "client_sched", "client TX_SCHED", N_CLIENT },
	[L_C_SW_TX] = { "client_sw_tx", "client software TX", N_CLIENT },
	[L_C_HW_TX] = { "client_hw_tx", "client hardware TX", N_CLIENT_HW },
	[L_C_HW_RX] = { "client_hw_rx", "client hardware RX", N_CLIENT_HW },
	[L_C_SW_RX] = { "client_sw_rx", "client software RX", N_CLIENT },
	[L_S_HW_RX] = { "server_hw_rx", "server hardware RX", N_SERVER_HW },
	[L_S_SW_RX] = { "server_sw_rx", "server software RX", N_SERVER },
	[L_S_SCHED] = { "server_sched", "server TX_SCHED", N_SERVER },
	[L_S_SW_TX] = { "server_sw_tx", "server software TX", N_SERVER },
	[L_S_HW_TX] = { "server_hw_tx", "server hardware TX", N_SERVER_HW },
};

/* Parts of a message. */
enum { P_ECHO = 1, P_TX = 2, P_SRV_TX = 4 };

struct pp_slot {
	bool used;
	uint8_t have;		/* P_* */
	bool s_stamps;		/* the echo said the server stamps */
	uint32_t seq;
	int64_t mono_send, mono_recv;
	/* client, UTC except the hardware stamps */
	int64_t send, sched, sw_tx, hw_tx;
	int64_t hw_rx, sw_rx, recv;
	/* server, from the echo and a later pong */
	int64_t s_recv, s_sw_rx, s_hw_rx;
	int64_t s_send, s_sched, s_sw_tx, s_hw_tx;
};

struct pp_samples {
	int64_t *v;
	size_t n, cap;
};

struct pp_client {
	struct pp_ep ep;
	size_t size;
	uint32_t warmup;
	bool stamps, server_stamps, server_hw, server_seen;
	size_t first_cap;
	struct pp_slot *slots;
	struct pp_samples q[Q_COUNT];
	uint64_t lost[L_COUNT];
	uint64_t measured, answered, unanswered, late, malformed;
	uint64_t dropped;	/* samples beyond the arrays (never, by design) */
	bool fin_done;
	int64_t t_first, t_last;	/* mono: first measured send, last answer */
};

static void pp_add(struct pp_client *c, enum pp_q q, int64_t x)
{
	struct pp_samples *s = &c->q[q];

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : c->first_cap;

		if (cap > PP_MAX_MESSAGES)
			cap = PP_MAX_MESSAGES;
		if (cap <= s->n) {
			c->dropped++;
			return;
		}
		s->v = xrealloc(s->v, cap * sizeof(*s->v));
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

static bool pp_needed(const struct pp_client *c, int need)
{
	switch (need) {
	case N_ALWAYS:
		return true;
	case N_CLIENT:
		return c->stamps;
	case N_CLIENT_HW:
		return c->stamps && c->ep.hw;
	case N_SERVER:
		return c->server_stamps;
	case N_SERVER_HW:
		return c->server_stamps && c->server_hw;
	default:
		return c->stamps && c->server_stamps;
	}
}

/* A stamp that was expected: count it lost when it is not there. */
static void pp_want(struct pp_client *c, enum pp_l l, int64_t v)
{
	if (!v && pp_needed(c, pp_ldefs[l].need))
		c->lost[l]++;
}

/* b - a as a sample of q when both are there. */
static void pp_span(struct pp_client *c, enum pp_q q, int64_t a, int64_t b)
{
	if (a && b)
		pp_add(c, q, b - a);
}

/* Turn a message into samples and free its slot. */
static void pp_finish(struct pp_client *c, struct pp_slot *s)
{
	bool hw = c->ep.hw && c->server_hw;

	s->used = false;
	if (s->seq < c->warmup || !(s->have & P_ECHO))
		return;
	pp_add(c, Q_HALF_RTT, (s->mono_recv - s->mono_send) / 2);
	if (c->stamps) {
		pp_want(c, L_C_SCHED, s->sched);
		pp_want(c, L_C_SW_TX, s->sw_tx);
		pp_want(c, L_C_HW_TX, s->hw_tx);
		pp_want(c, L_C_HW_RX, s->hw_rx);
		pp_want(c, L_C_SW_RX, s->sw_rx);
		pp_span(c, Q_C_SEND_SCHED, s->send, s->sched);
		pp_span(c, Q_C_SCHED_SW, s->sched, s->sw_tx);
		pp_span(c, Q_C_SEND_SW, s->send, s->sw_tx);
		pp_span(c, Q_C_SW_HW, s->sw_tx, s->hw_tx);
		pp_span(c, Q_C_HW_SW, s->hw_rx, s->sw_rx);
		pp_span(c, Q_C_SW_RECV, s->sw_rx, s->recv);
	}
	if (s->s_stamps) {
		pp_want(c, L_S_HW_RX, s->s_hw_rx);
		pp_want(c, L_S_SW_RX, s->s_sw_rx);
		pp_want(c, L_S_SCHED, s->s_sched);
		pp_want(c, L_S_SW_TX, s->s_sw_tx);
		pp_want(c, L_S_HW_TX, s->s_hw_tx);
		pp_span(c, Q_S_HW_SW, s->s_hw_rx, s->s_sw_rx);
		pp_span(c, Q_S_SW_RECV, s->s_sw_rx, s->s_recv);
		pp_span(c, Q_S_TURN, s->s_recv, s->s_send);
		pp_span(c, Q_S_SEND_SCHED, s->s_send, s->s_sched);
		pp_span(c, Q_S_SCHED_SW, s->s_sched, s->s_sw_tx);
		pp_span(c, Q_S_SEND_SW, s->s_send, s->s_sw_tx);
		pp_span(c, Q_S_SW_HW, s->s_sw_tx, s->s_hw_tx);
	}
	if (c->stamps && s->s_stamps) {
		/* Hardware stamps are compared with hardware stamps (PHCs
		 * under PTP), software with software (system clocks). */
		pp_span(c, Q_C2S, hw ? s->hw_tx : s->sw_tx,
			hw ? s->s_hw_rx : s->s_sw_rx);
		pp_span(c, Q_S2C, hw ? s->s_hw_tx : s->s_sw_tx,
			hw ? s->hw_rx : s->sw_rx);
	}
}

/* Finish the message when every part it will get is in. */
static void pp_try(struct pp_client *c, struct pp_slot *s)
{
	uint8_t need = P_ECHO;

	if (!s->used || !(s->have & P_ECHO))
		return;
	if (c->stamps)
		need |= P_TX;
	if (s->s_stamps)
		need |= P_SRV_TX;
	if ((s->have & need) == need)
		pp_finish(c, s);
}

static struct pp_slot *pp_slot_of(struct pp_client *c, uint32_t seq)
{
	struct pp_slot *s = &c->slots[seq % PP_SLOTS];

	return s->used && s->seq == seq ? s : NULL;
}

/* A client TX record: the client's stamps of a ping. */
static void pp_client_record(void *arg, const struct ts_tx_record *rec,
			     const struct pp_sent *sent)
{
	struct pp_client *c = arg;
	struct pp_slot *s = pp_slot_of(c, sent->seq);

	if (sent->kind != PP_PING || !s)
		return;
	/* A ping sent in parts: the last part's stamps, the first's time. */
	if (!(s->have & P_TX))
		s->send = rec->app_ns;
	s->sched = rec->ns[TS_STAGE_SCHED];
	s->sw_tx = rec->ns[TS_STAGE_SW_TX];
	s->hw_tx = rec->ns[TS_STAGE_HW_TX];
	s->have |= P_TX;
	pp_try(c, s);
}

/* The server's TX stamps of an earlier pong, carried by this one. */
static void pp_client_prev(struct pp_client *c, const struct pp_msg *m)
{
	struct pp_slot *s;

	if (!(m->flags & PP_F_PREV) || !(s = pp_slot_of(c, m->prev_seq)))
		return;
	s->s_send = m->prev_send;
	s->s_sched = m->prev_sched;
	s->s_sw_tx = m->prev_sw_tx;
	s->s_hw_tx = m->prev_hw_tx;
	s->have |= P_SRV_TX;
	pp_try(c, s);
}

/* The answer to ping seq. */
static void pp_client_echo(struct pp_client *c, struct pp_slot *s,
			   const struct pp_msg *m)
{
	struct pp_ep *ep = &c->ep;

	s->have |= P_ECHO;
	s->mono_recv = ep->recv_mono;
	s->recv = ep->recv_real;
	s->hw_rx = pp_stamp(ep->st, ep->nst, TS_STAGE_HW_RX);
	s->sw_rx = pp_stamp(ep->st, ep->nst, TS_STAGE_SW_RX);
	s->s_stamps = m->flags & PP_F_STAMPS;
	if (s->s_stamps) {
		s->s_recv = m->srv_recv;
		s->s_sw_rx = m->srv_rx_sw;
		s->s_hw_rx = m->srv_rx_hw;
	}
	if (!c->server_seen) {
		c->server_seen = true;
		c->server_stamps = m->flags & PP_F_STAMPS;
		c->server_hw = m->flags & PP_F_HW;
	}
	if (s->seq >= c->warmup) {
		c->answered++;
		c->t_last = ep->recv_mono;
	}
}

/* A message the peer got wrong: over UDP it is counted and skipped, a TCP
 * stream cannot be followed after it. Returns true when the run must end. */
static bool pp_client_bad(struct pp_client *c, const char *why)
{
	c->malformed++;
	if (c->ep.tcp) {
		log_err("%s: malformed message after %" PRIu64 " bytes: %s",
			c->ep.peer, c->ep.rx_off - c->ep.rhave, why);
		return true;
	}
	log_warn_rl("%s: ignoring a malformed datagram: %s", c->ep.peer, why);
	return false;
}

/* Wait for the answer to ping seq (kind PP_PONG), or with fin for the last
 * FIN_ACK to the FIN seq. Returns 0 (answered, or a UDP message given up),
 * or PP_USAGE / PP_SYSTEM when the run cannot go on. */
static int pp_client_wait(struct pp_client *c, uint32_t seq, bool fin)
{
	struct pp_ep *ep = &c->ep;

	for (;;) {
		const char *why = "";
		struct pp_msg m;
		int err = pp_recv(ep, &m, &why);

		if (err == -EINTR) {
			if (pp_stop && !fin) {
				/* Given up; FIN follows. */
				if (seq >= c->warmup)
					c->unanswered++;
				return 0;
			}
			continue;
		}
		if (err == -ETIMEDOUT || (err == -EPIPE && fin)) {
			if (fin) {
				log_warn("%s: no final answer to FIN; the last "
					 "message's server TX stamps are missing",
					 ep->peer);
				return 0;
			}
			if (ep->tcp) {
				log_err("%s: no answer to message %" PRIu32
					" in time (--timeout-ms)", ep->peer, seq);
				return PP_USAGE;
			}
			if (seq >= c->warmup)
				c->unanswered++;
			return 0;
		}
		if (err == -EPIPE) {
			log_err("%s: the server closed the connection", ep->peer);
			return PP_USAGE;
		}
		if (err == -EBADMSG) {
			if (pp_client_bad(c, why))
				return PP_USAGE;
			continue;
		}
		if (err < 0) {
			log_err("%s: receive: %s%s", ep->peer, strerror(-err),
				err == -ECONNREFUSED ? " (is the server running?)" : "");
			return PP_SYSTEM;
		}
		if (m.kind == PP_PONG && m.len != c->size) {
			pp_consume(ep);
			if (pp_client_bad(c, "echo of another size than the ping"))
				return PP_USAGE;
			continue;
		}
		if ((m.kind != PP_PONG && m.kind != PP_FIN_ACK) ||
		    (m.kind == PP_FIN_ACK && (!fin || m.seq != seq)) ||
		    (m.kind == PP_PONG && (fin ? m.seq >= seq : m.seq > seq))) {
			pp_consume(ep);
			if (pp_client_bad(c, "not an answer to a message sent"))
				return PP_USAGE;
			continue;
		}
		pp_consume(ep);
		pp_client_prev(c, &m);
		if (m.kind == PP_FIN_ACK) {
			if (m.flags & PP_F_LAST) {
				c->fin_done = true;
				return 0;
			}
			continue;
		}
		if (!fin && m.seq == seq) {
			struct pp_slot *s = pp_slot_of(c, m.seq);

			if (s)
				pp_client_echo(c, s, &m);
			return 0;
		}
		/* The answer to a message already given up. */
		if (m.seq >= c->warmup)
			c->late++;
	}
}

static int pp_sleep_until(struct timespec *next, long long rate)
{
	next->tv_nsec += 1000000000LL / rate;
	while (next->tv_nsec >= 1000000000L) {
		next->tv_nsec -= 1000000000L;
		next->tv_sec++;
	}
	return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

static void pp_client_print(struct pp_client *c, const struct opts *o)
{
	unsigned pflags = 0;
	struct printer *p = print_create(stdout, print_format_from_opts(o, &pflags),
					 pflags);
	double secs = c->t_last > c->t_first ?
		      (double)(c->t_last - c->t_first) / 1e9 : 0;
	const char *oneway = NULL;
	bool any = false;

	if (c->stamps && c->server_stamps)
		oneway = c->ep.hw && c->server_hw ? "hw" : "sw";
	print_str(p, "role", NULL, "client");
	print_str(p, "proto", "tapless-pingpong: %s", c->ep.tcp ? "tcp" : "udp");
	print_uint(p, "size", ", %llu-byte messages", c->size);
	print_str(p, "server", " to %s", c->ep.peer);
	print_str(p, "client", " from %s\n", c->ep.local);
	print_uint(p, "messages", "  %llu messages", c->measured);
	print_uint(p, "warmup", " (after %llu warm-up)", c->warmup);
	print_uint(p, "answered", ", %llu answered", c->answered);
	print_uint(p, "unanswered", ", %llu unanswered", c->unanswered);
	print_uint(p, "late", ", %llu late", c->late);
	print_uint(p, "malformed", ", %llu malformed\n", c->malformed);
	print_double(p, "seconds", "  %.3f s", secs);
	print_double(p, "rate_per_s", ", %.0f messages/s\n",
		     secs > 0 ? (double)c->answered / secs : 0);
	print_object_begin(p, "stamps");
	print_str(p, "client", "  stamps: client %s", !c->stamps ? "off" :
		  ts_source_name(c->ep.hw ? TS_SOURCE_HW : TS_SOURCE_SW));
	print_str(p, "server", ", server %s", !c->server_seen ? NULL :
		  !c->server_stamps ? "off" : c->server_hw ? "hw" : "sw");
	print_str(p, "interface", " (interface %s)", c->ep.ifname[0] ?
		  c->ep.ifname : NULL);
	print_str(p, "oneway", "; one-way from %s stamps\n", oneway);
	print_object_end(p);

	for (int stage = 0; stage <= 1; stage++) {
		print_text(p, stage ? "stages, ns:\n" : "latency, ns:\n");
		print_object_begin(p, stage ? "stages_ns" : "latency_ns");
		for (int q = 0; q < Q_COUNT; q++) {
			struct summary s;

			if (pp_qdefs[q].stage != stage || !pp_needed(c, pp_qdefs[q].need))
				continue;
			summary_of(c->q[q].v, c->q[q].n, &s);
			print_text(p, "  %-36s ", pp_qdefs[q].label);
			summary_print(p, pp_qdefs[q].key, &s);
		}
		print_object_end(p);
	}
	print_text(p, "lost stamps:");
	print_object_begin(p, "lost_stamps");
	for (int l = 0; l < L_COUNT; l++) {
		char fmt[64];

		if (!pp_needed(c, pp_ldefs[l].need))
			continue;
		snprintf(fmt, sizeof(fmt), "%s %s %%llu", any ? "," : "",
			 pp_ldefs[l].label);
		print_uint(p, pp_ldefs[l].key, fmt, c->lost[l]);
		any = true;
	}
	print_object_end(p);
	print_text(p, "%s\n", any ? "" : " none expected");
	if (c->stamps && c->ep.ts) {
		enum ts_stage tx = c->ep.hw ? TS_STAGE_HW_TX : TS_STAGE_SW_TX;
		struct ts_stats st;

		/* The client's TX stamps (its source's stage) that came
		 * late: joined within --tx-timeout though a later send's
		 * came first, or past it (counted lost above, and joined to
		 * nothing). Warm-up messages and the FIN included. */
		ts_sock_stats(c->ep.ts, &st);
		print_object_begin(p, "tx_stamps_late");
		print_uint(p, "joined", "late TX stamps: %llu joined out of order",
			   st.reordered[tx]);
		print_uint(p, "past_timeout", ", %llu past --tx-timeout (lost)\n",
			   st.past_timeout[tx]);
		print_object_end(p);
	}
	pp_cap_print(p, &c->ep, "capture: %s");
	print_destroy(p);
}

/* Connect, stamp and open --write. 0, or an exit status after saying why. */
static int pp_client_open(struct pp_client *c, const struct opts *o)
{
	struct sockaddr_storage to, local;
	socklen_t tolen, llen;
	struct pp_ep *ep = &c->ep;
	int fd, err;

	if (pp_parse_addr("to", opts_str(o, "to"), &to, &tolen) ||
	    (opts_str(o, "bind") &&
	     pp_parse_addr("bind", opts_str(o, "bind"), &local, &llen)))
		return PP_USAGE;
	fd = socket(to.ss_family, ep->tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0) {
		log_err("socket: %m");
		return PP_SYSTEM;
	}
	ep->fd = fd;
	if (opts_str(o, "bind") && bind(fd, (struct sockaddr *)&local, llen)) {
		log_err("bind %s: %m", opts_str(o, "bind"));
		return PP_SYSTEM;
	}
	if (connect(fd, (struct sockaddr *)&to, tolen)) {
		log_err("connect %s: %m", opts_str(o, "to"));
		return PP_SYSTEM;
	}
	if (ep->tcp) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	pp_sock_names(fd, ep->local, ep->peer, sizeof(ep->peer));
	if (opts_str(o, "interface"))
		snprintf(ep->ifname, sizeof(ep->ifname), "%s",
			 opts_str(o, "interface"));
	else
		pp_iface_of(fd, ep->ifname);
	if (c->stamps) {
		err = pp_ep_stamps(ep, o);
		if (err) {
			char why[200];

			log_err("enabling stamps on %s: %s", ep->ifname[0] ?
				ep->ifname : "the socket",
				hwtstamp_why(ep->ifname[0] ? ep->ifname : NULL,
					     err, why, sizeof(why)));
			return PP_SYSTEM;
		}
		ep->on_record = pp_client_record;
		ep->arg = c;
		ep->records_first = true;
	}
	if (c->stamps) {
		err = pp_cap_open(ep, opts_str(o, "write"));
		if (err) {
			log_err("%s: %s", opts_str(o, "write") ? opts_str(o, "write") :
				"recording the socket", strerror(-err));
			return PP_SYSTEM;
		}
	}
	pp_timeout(fd, opts_ns(o, "timeout-ms") / 1000000);
	return 0;
}

static int pp_client(const struct opts *o)
{
	struct pp_client *c = xcalloc(1, sizeof(*c));
	long long rate = opts_int(o, "rate");
	bool by_time = opts_given(o, "duration");
	uint64_t count = opts_given(o, "count") ? (uint64_t)opts_int(o, "count") :
			 10000;
	int64_t duration = opts_ns(o, "duration");
	uint8_t *buf = xmalloc(PP_MAX_TCP);
	struct timespec next;
	struct pp_msg m;
	uint32_t seq = 0;
	int rc;

	pp_ep_init(&c->ep, -1, opts_enum(o, "proto") == 1,
		   opts_enum(o, "proto") == 1 ? PP_MAX_TCP : PP_MAX_UDP);
	c->size = (size_t)opts_int(o, "size");
	c->warmup = (uint32_t)opts_int(o, "warmup");
	c->stamps = !opts_flag(o, "no-stamps");
	c->first_cap = by_time ? PP_GROW_FIRST : count;
	c->slots = xcalloc(PP_SLOTS, sizeof(*c->slots));
	rc = pp_client_open(c, o);
	if (rc)
		goto out;

	/* Filler the server echoes: a pattern, so a capture shows it. */
	for (size_t i = PP_HDR; i < c->size; i++)
		buf[i] = (uint8_t)i;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;; seq++) {
		struct pp_slot *s = &c->slots[seq % PP_SLOTS];
		int64_t now = ts_now_mono();

		if (pp_stop)
			break;
		if (seq >= c->warmup) {
			if (seq == c->warmup)
				c->t_first = now;
			if (by_time ? now - c->t_first >= duration :
			    c->measured >= count)
				break;
			if (c->measured >= PP_MAX_MESSAGES) {
				log_notice("stopping at %d messages, the most "
					   "one run keeps", PP_MAX_MESSAGES);
				break;
			}
			c->measured++;
		}
		if (s->used)
			pp_finish(c, s);	/* never answered in full */
		memset(s, 0, sizeof(*s));
		s->used = true;
		s->seq = seq;
		memset(&m, 0, sizeof(m));
		m.len = (uint16_t)c->size;
		m.kind = PP_PING;
		m.seq = seq;
		pp_encode(buf, &m);
		s->mono_send = ts_now_mono();
		rc = pp_send(&c->ep, buf, c->size, seq, PP_PING);
		if (rc) {
			log_err("%s: send: %s%s", c->ep.peer, strerror(-rc),
				rc == -ECONNREFUSED ? " (is the server running?)" : "");
			rc = PP_SYSTEM;
		} else {
			rc = pp_client_wait(c, seq, false);
		}
		if (rc) {
			/* Report what was measured; the last message is not
			 * part of it. */
			if (seq >= c->warmup)
				c->measured--;
			s->used = false;
			break;
		}
		pp_records(&c->ep, ts_now_mono());
		if (rate && pp_sleep_until(&next, rate) == EINTR && pp_stop)
			break;
	}

	/* FIN: the server answers with the TX stamps it still owes. */
	if (!rc) {
		memset(&m, 0, sizeof(m));
		m.len = PP_HDR;
		m.kind = PP_FIN;
		m.seq = seq;
		pp_encode(buf, &m);
		pp_stop = 0;
		rc = pp_send(&c->ep, buf, PP_HDR, seq, PP_FIN);
		if (!rc)
			rc = pp_client_wait(c, seq, true);
		else
			log_warn("%s: sending FIN: %s", c->ep.peer, strerror(-rc));
		rc = rc > 0 ? rc : 0;
	}
	pp_drain(&c->ep);
	for (uint32_t i = 0; i < PP_SLOTS; i++)
		if (c->slots[i].used)
			pp_finish(c, &c->slots[i]);
	if (pp_cap_close(&c->ep)) {
		log_err("%s: writing failed", opts_str(o, "write"));
		rc = PP_SYSTEM;
	}
	if (c->measured)
		pp_client_print(c, o);
out:
	pp_ep_free(&c->ep);
	for (int q = 0; q < Q_COUNT; q++)
		free(c->q[q].v);
	free(c->slots);
	free(c);
	free(buf);
	return rc;
}

/* ---- server ---------------------------------------------------------------- */

struct pp_report {
	uint32_t seq;
	int64_t send, sched, sw_tx, hw_tx;
};

struct pp_server {
	struct pp_ep ep;
	char bound[64];
	struct pp_report rep[PP_REPORTS];	/* FIFO of TX stamps owed */
	unsigned rhead, rlen;
	uint64_t echoed, malformed, fins, reports_dropped, rx_unstamped;
	bool stamps, client;
};

static void pp_server_record(void *arg, const struct ts_tx_record *rec,
			     const struct pp_sent *sent)
{
	struct pp_server *sv = arg;
	struct pp_report *r;

	if (sent->kind != PP_PONG)
		return;
	if (sv->rlen == PP_REPORTS) {
		sv->rhead = (sv->rhead + 1) % PP_REPORTS;
		sv->rlen--;
		sv->reports_dropped++;
	}
	r = &sv->rep[(sv->rhead + sv->rlen++) % PP_REPORTS];
	r->seq = sent->seq;
	r->send = rec->app_ns;
	r->sched = rec->ns[TS_STAGE_SCHED];
	r->sw_tx = rec->ns[TS_STAGE_SW_TX];
	r->hw_tx = rec->ns[TS_STAGE_HW_TX];
}

/* The oldest TX stamps owed go into m. */
static void pp_server_prev(struct pp_server *sv, struct pp_msg *m)
{
	struct pp_report *r;

	if (!sv->rlen)
		return;
	r = &sv->rep[sv->rhead];
	sv->rhead = (sv->rhead + 1) % PP_REPORTS;
	sv->rlen--;
	m->flags |= PP_F_PREV;
	m->prev_seq = r->seq;
	m->prev_send = r->send;
	m->prev_sched = r->sched;
	m->prev_sw_tx = r->sw_tx;
	m->prev_hw_tx = r->hw_tx;
}

static void pp_server_print(struct pp_server *sv, const struct opts *o)
{
	unsigned pflags = 0;
	struct printer *p = print_create(stdout, print_format_from_opts(o, &pflags),
					 pflags);
	struct pp_ep *ep = &sv->ep;
	struct ts_stats st;

	memset(&st, 0, sizeof(st));
	if (ep->ts)
		ts_sock_stats(ep->ts, &st);
	print_str(p, "role", NULL, "server");
	print_str(p, "proto", "tapless-pingpong server: %s", ep->tcp ? "tcp" : "udp");
	print_str(p, "bind", " on %s", sv->bound);
	print_str(p, "client", ", client %s\n", sv->client ? ep->peer : NULL);
	print_uint(p, "echoed", "  %llu messages echoed", sv->echoed);
	print_uint(p, "fin", ", %llu FIN", sv->fins);
	print_uint(p, "malformed", ", %llu malformed\n", sv->malformed);
	print_str(p, "stamps", "  stamps %s", !sv->stamps ? "off" : ep->hw ? "hw" : "sw");
	print_str(p, "interface", " (interface %s)", ep->ifname[0] ? ep->ifname : NULL);
	print_object_begin(p, "lost_stamps");
	print_uint(p, "rx", ": RX missing %llu", sv->rx_unstamped);
	print_uint(p, "tx", ", TX lost %llu",
		   st.lost[TS_STAGE_SW_TX] + st.lost[TS_STAGE_HW_TX]);
	print_uint(p, "sched", ", TX_SCHED lost %llu", st.lost[TS_STAGE_SCHED]);
	print_object_end(p);
	print_uint(p, "reports_dropped", ", TX stamps not reported %llu\n",
		   sv->reports_dropped);
	pp_cap_print(p, ep, "  capture: %s");
	print_destroy(p);
}

/* Answer FIN with the TX stamps still owed, the last FIN_ACK marked. */
static int pp_server_fin(struct pp_server *sv, uint8_t *buf, uint32_t seq)
{
	struct pp_ep *ep = &sv->ep;
	int err = 0;

	pp_drain(ep);
	do {
		struct pp_msg m = { .len = PP_HDR, .kind = PP_FIN_ACK, .seq = seq };

		pp_server_prev(sv, &m);
		if (!sv->rlen)
			m.flags |= PP_F_LAST;
		pp_encode(buf, &m);
		err = pp_send(ep, buf, PP_HDR, seq, PP_FIN_ACK);
	} while (!err && sv->rlen);
	pp_records(ep, -1);
	return err;
}

/* Bound, stamped, and (TCP) the one connection accepted; (UDP) connected
 * to the first client. 0, 1 to exit quietly, or an exit status + 1. */
static int pp_server_accept(struct pp_server *sv, const struct opts *o)
{
	struct pp_ep *ep = &sv->ep;
	int err;

	if (ep->tcp) {
		int c = accept(ep->fd, NULL, NULL), one = 1;

		if (c < 0) {
			if (errno == EINTR || errno == EAGAIN)
				return 1;
			log_err("accept: %m");
			return PP_SYSTEM + 1;
		}
		close(ep->fd);
		ep->fd = c;
		/* As the client's: an echo never waits for an ACK (Nagle). */
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((opts_ns(o, "idle-ms") / 1000000))
			pp_timeout(c, (opts_ns(o, "idle-ms") / 1000000));
		if (!opts_str(o, "interface"))
			pp_iface_of(c, ep->ifname);
		if (sv->stamps) {
			err = pp_ep_stamps(ep, o);
			if (err) {
				char why[200];

				log_err("enabling stamps: %s", hwtstamp_why(
					ep->ifname[0] ? ep->ifname : NULL, err,
					why, sizeof(why)));
				return PP_SYSTEM + 1;
			}
		}
	} else {
		struct sockaddr_storage from;

		/* Connect to the sender of the first message that is
		 * ours: from then on the kernel filters out the rest. */
		for (;;) {
			socklen_t fl = sizeof(from);
			const char *why = "";
			struct pp_msg m;
			ssize_t n = recvfrom(ep->fd, ep->rbuf, PP_RBUF, MSG_PEEK,
					     (struct sockaddr *)&from, &fl);

			if (n < 0) {
				if (errno == EINTR || errno == EAGAIN)
					return 1;
				log_err("receive: %m");
				return PP_SYSTEM + 1;
			}
			if (!pp_decode(ep->rbuf, (size_t)n, false, ep->max, &m, &why))
				break;
			addrport_format((const struct sockaddr *)&from,
					sizeof(from), ep->peer, sizeof(ep->peer));
			log_warn_rl("%s: ignoring a malformed datagram: %s",
				    ep->peer, why);
			sv->malformed++;
			recv(ep->fd, ep->rbuf, 1, 0);
		}
		if (connect(ep->fd, (struct sockaddr *)&from, sizeof(from))) {
			log_err("connect: %m");
			return PP_SYSTEM + 1;
		}
	}
	sv->client = true;
	pp_sock_names(ep->fd, ep->local, ep->peer, sizeof(ep->peer));
	if (sv->stamps) {
		err = pp_cap_open(ep, opts_str(o, "write"));
		if (err) {
			log_err("%s: %s", opts_str(o, "write") ? opts_str(o, "write") :
				"recording the socket", strerror(-err));
			return PP_SYSTEM + 1;
		}
	}
	return 0;
}

/* Socket, bind, listen, and stamps where they must be on before the first
 * message. 0 or an exit status. */
static int pp_server_listen(struct pp_server *sv, const struct opts *o)
{
	struct sockaddr_storage at;
	struct pp_ep *ep = &sv->ep;
	socklen_t atlen;
	int one = 1, err;

	if (pp_parse_addr("bind", opts_str(o, "bind"), &at, &atlen))
		return PP_USAGE;
	ep->fd = socket(at.ss_family, ep->tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (ep->fd < 0) {
		log_err("socket: %m");
		return PP_SYSTEM;
	}
	setsockopt(ep->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ep->fd, (struct sockaddr *)&at, atlen) ||
	    (ep->tcp && listen(ep->fd, 1))) {
		log_err("bind %s: %m", opts_str(o, "bind"));
		return PP_SYSTEM;
	}
	pp_sock_names(ep->fd, sv->bound, NULL, sizeof(sv->bound));
	if (opts_str(o, "interface"))
		snprintf(ep->ifname, sizeof(ep->ifname), "%s",
			 opts_str(o, "interface"));
	else
		pp_iface_of(ep->fd, ep->ifname);
	ep->on_record = pp_server_record;
	ep->arg = sv;
	if (sv->stamps) {
		/* Software RX stamping is switched on kernel-wide from a
		 * workqueue: on before the first message arrives. */
		err = ep->tcp ? ts_listen_enable(ep->fd) : pp_ep_stamps(ep, o);
		if (err) {
			char why[200];

			log_err("enabling stamps: %s", hwtstamp_why(
				ep->ifname[0] ? ep->ifname : NULL, err, why,
				sizeof(why)));
			return PP_SYSTEM;
		}
	}
	if ((opts_ns(o, "idle-ms") / 1000000))
		pp_timeout(ep->fd, (opts_ns(o, "idle-ms") / 1000000));
	log_notice("listening on %s (%s, %s)", sv->bound, ep->tcp ? "tcp" : "udp",
		   !sv->stamps ? "no stamps" : ep->tcp ? "stamps on connection" :
		   ep->hw ? "hardware stamps" : "software stamps");
	return 0;
}

static int pp_server(const struct opts *o)
{
	struct pp_server *sv = xcalloc(1, sizeof(*sv));
	struct pp_ep *ep = &sv->ep;
	uint64_t limit = opts_given(o, "count") ? (uint64_t)opts_int(o, "count") : 0;
	uint8_t *buf = xmalloc(PP_MAX_TCP);
	int rc;

	pp_ep_init(ep, -1, opts_enum(o, "proto") == 1,
		   opts_enum(o, "proto") == 1 ? PP_MAX_TCP : PP_MAX_UDP);
	sv->stamps = !opts_flag(o, "no-stamps");
	rc = pp_server_listen(sv, o);
	if (rc)
		goto out;
	rc = pp_server_accept(sv, o);
	if (rc) {
		rc = rc == 1 ? PP_OK : rc - 1;
		if (rc == PP_OK && !pp_stop)
			log_notice("idle for %lld ms with no client: exiting",
				   (opts_ns(o, "idle-ms") / 1000000));
		if (rc == PP_OK)
			pp_server_print(sv, o);
		goto out;
	}
	while (!pp_stop && (!limit || sv->echoed < limit)) {
		const char *why = "";
		struct pp_msg m, a;
		int err = pp_recv(ep, &m, &why);

		if (err == -EINTR)
			continue;
		if (err == -ETIMEDOUT) {
			log_notice("%s: idle for %lld ms: exiting", ep->peer,
				   (opts_ns(o, "idle-ms") / 1000000));
			break;
		}
		if (err == -EPIPE || err == -ECONNRESET)
			break;		/* the client is done */
		if (err == -EBADMSG || (!err && m.kind != PP_PING && m.kind != PP_FIN)) {
			sv->malformed++;
			if (!err)
				why = "not a ping";
			if (ep->tcp) {
				log_err("%s: malformed message after %" PRIu64
					" bytes: %s", ep->peer,
					ep->rx_off - ep->rhave, why);
				rc = PP_USAGE;
				break;
			}
			log_warn_rl("%s: ignoring a malformed datagram: %s",
				    ep->peer, why);
			continue;
		}
		if (err < 0) {
			log_err("%s: receive: %s", ep->peer, strerror(-err));
			rc = PP_SYSTEM;
			break;
		}
		if (m.kind == PP_FIN) {
			pp_consume(ep);
			sv->fins++;
			err = pp_server_fin(sv, buf, m.seq);
			if (err && err != -EPIPE && err != -ECONNRESET &&
			    err != -ECONNREFUSED)
				log_warn("%s: answering FIN: %s", ep->peer,
					 strerror(-err));
			if (!ep->tcp)
				break;
			continue;	/* TCP: until the client closes */
		}
		a = (struct pp_msg){ .len = m.len, .kind = PP_PONG, .seq = m.seq };
		if (ep->ts) {
			a.flags = PP_F_STAMPS | (ep->hw ? PP_F_HW : 0);
			a.srv_recv = ep->recv_real;
			a.srv_rx_sw = pp_stamp(ep->st, ep->nst, TS_STAGE_SW_RX);
			a.srv_rx_hw = pp_stamp(ep->st, ep->nst, TS_STAGE_HW_RX);
			if (!pp_stamp(ep->st, ep->nst, pp_rx_stage(ep)))
				sv->rx_unstamped++;
			pp_server_prev(sv, &a);
		}
		memcpy(buf + PP_HDR, ep->rbuf + PP_HDR, m.len - PP_HDR);
		pp_encode(buf, &a);
		err = pp_send(ep, buf, a.len, a.seq, PP_PONG);
		pp_consume(ep);		/* after the answer: --write's frame */
		if (err == -ECONNREFUSED || err == -EPIPE || err == -ECONNRESET) {
			log_notice("%s: the client is gone", ep->peer);
			break;
		}
		if (err) {
			log_err("%s: send: %s", ep->peer, strerror(-err));
			rc = PP_SYSTEM;
			break;
		}
		sv->echoed++;
		/* Off the path of the next message: this pong's TX stamps,
		 * for the next pong to carry. */
		pp_records(ep, ts_now_mono());
	}
	pp_drain(ep);
	if (pp_cap_close(ep)) {
		log_err("%s: writing failed", opts_str(o, "write"));
		rc = PP_SYSTEM;
	}
	pp_server_print(sv, o);
out:
	pp_ep_free(ep);
	free(sv);
	free(buf);
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

/* Options that make sense for one role only. */
static int pp_check_opts(const struct opts *o)
{
	static const char *const client_only[] = {
		"to", "size", "duration", "rate", "warmup", "timeout-ms",
	};
	static const char *const server_only[] = { "idle-ms" };
	bool server = opts_flag(o, "server");

	for (size_t i = 0; i < sizeof(client_only) / sizeof(*client_only); i++)
		if (server && opts_given(o, client_only[i])) {
			log_err("--%s is for the client, not with --server",
				client_only[i]);
			return PP_USAGE;
		}
	for (size_t i = 0; i < sizeof(server_only) / sizeof(*server_only); i++)
		if (!server && opts_given(o, server_only[i])) {
			log_err("--%s is for the server (--server)", server_only[i]);
			return PP_USAGE;
		}
	if (server && !opts_str(o, "bind")) {
		log_err("--server needs --bind ADDR:PORT");
		return PP_USAGE;
	}
	if (!server && !opts_str(o, "to")) {
		log_err("give --to ADDR:PORT (client) or --server --bind "
			"ADDR:PORT; --help lists the options");
		return PP_USAGE;
	}
	if (opts_given(o, "count") && opts_given(o, "duration")) {
		log_err("give --count or --duration, not both");
		return PP_USAGE;
	}
	if (opts_enum(o, "proto") == 0 && opts_int(o, "size") > PP_MAX_UDP) {
		log_err("--size %lld: UDP messages are at most %d bytes",
			opts_int(o, "size"), PP_MAX_UDP);
		return PP_USAGE;
	}
	if (opts_flag(o, "no-stamps") && opts_str(o, "write")) {
		log_err("--write needs stamps: not with --no-stamps");
		return PP_USAGE;
	}
	if (opts_flag(o, "no-stamps") &&
	    (opts_given(o, "mode") || opts_given(o, "interface"))) {
		log_err("--mode and --interface choose stamps: not with --no-stamps");
		return PP_USAGE;
	}
	return PP_OK;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = pp_signal };
	struct opts *o;
	int rc;

	o = prog_start(&pp_prog, argc, argv, &rc);
	if (!o)
		return rc;
	rc = pp_check_opts(o);
	if (rc) {
		opts_destroy(o);
		return rc;
	}
	if (opts_given(o, "cpu")) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)opts_int(o, "cpu"), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			rc = errno == EINVAL ? PP_USAGE : PP_SYSTEM;
			if (errno == EINVAL)
				log_err("--cpu %lld: no such CPU, or not one this "
					"process may use", opts_int(o, "cpu"));
			else
				log_err("--cpu %lld: %m", opts_int(o, "cpu"));
			opts_destroy(o);
			return rc;
		}
	}
	/* No SA_RESTART: a blocked recv returns, and the run ends cleanly. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = opts_flag(o, "server") ? pp_server(o) : pp_client(o);
	opts_destroy(o);
	return rc;
}
