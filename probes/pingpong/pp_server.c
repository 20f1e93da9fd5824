/* pp_server.c — tapless-pingpong's server: it echoes each ping as a pong
 * carrying its own stamps of the ping and the TX stamps of an earlier pong,
 * and answers FIN with the TX stamps it still owes. See pp_private.h for
 * the other files.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/addrport.h"
#include "base/log.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/xalloc.h"
#include "probes/pingpong/pp_private.h"
#include "stamp/hwtstamp.h"
#include "stamp/ts.h"

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
		if ((opts_ns(o, "idle_ms") / 1000000))
			pp_timeout(c, (opts_ns(o, "idle_ms") / 1000000));
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
	if ((opts_ns(o, "idle_ms") / 1000000))
		pp_timeout(ep->fd, (opts_ns(o, "idle_ms") / 1000000));
	log_notice("listening on %s (%s, %s)", sv->bound, ep->tcp ? "tcp" : "udp",
		   !sv->stamps ? "no stamps" : ep->tcp ? "stamps on connection" :
		   ep->hw ? "hardware stamps" : "software stamps");
	return 0;
}

int pp_server(const struct opts *o)
{
	struct pp_server *sv = xcalloc(1, sizeof(*sv));
	struct pp_ep *ep = &sv->ep;
	uint64_t limit = opts_given(o, "count") ? (uint64_t)opts_int(o, "count") : 0;
	uint8_t *buf = xmalloc(PP_MAX_TCP);
	int rc;

	pp_ep_init(ep, -1, opts_enum(o, "proto") == 1,
		   opts_enum(o, "proto") == 1 ? PP_MAX_TCP : PP_MAX_UDP);
	sv->stamps = !opts_flag(o, "no_stamps");
	rc = pp_server_listen(sv, o);
	if (rc)
		goto out;
	rc = pp_server_accept(sv, o);
	if (rc) {
		rc = rc == 1 ? PP_OK : rc - 1;
		if (rc == PP_OK && !pp_stop)
			log_notice("idle for %lld ms with no client: exiting",
				   (opts_ns(o, "idle_ms") / 1000000));
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
				   (opts_ns(o, "idle_ms") / 1000000));
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
