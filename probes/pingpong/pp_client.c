/* pp_client.c — tapless-pingpong's client: it sends ping k and waits for
 * pong k, stamped. See pp_private.h for the other files.
 *
 * The client keeps what it knows of each message in a ring of slots until
 * every part is in (its echo, its own TX record, the server's TX stamps of
 * the echo), then turns it into samples: arrays allocated once from --count,
 * or grown by doubling up to PP_MAX_MESSAGES under --duration. Nothing is
 * allocated per message.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/log.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "probes/pingpong/pp_private.h"
#include "stamp/hwtstamp.h"
#include "stamp/ts.h"

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
	pp_timeout(fd, opts_ns(o, "timeout_ms") / 1000000);
	return 0;
}

int pp_client(const struct opts *o)
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
	c->stamps = !opts_flag(o, "no_stamps");
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
