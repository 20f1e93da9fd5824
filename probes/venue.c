/* venue.c — tapless-venue: the exchange side of the FTTC workload. Serves a
 * market data session (1) and an order session (2) over FIX 4.4: publishes
 * Market Data Incremental Refresh (35=X) bids at a steady, paced rate and
 * fills every NewOrderSingle (35=D) at once with two ExecutionReports (New,
 * then Filled). Every message is stamped and recorded (probe.h). See
 * tapless-venue(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/addrport.h"
#include "fix/fix.h"
#include "fix/fixsess.h"
#include "base/log.h"
#include "base/nstime.h"
#include "base/opts.h"
#include "base/print.h"
#include "probes/probe.h"
#include "base/prog.h"
#include "base/summary.h"
#include "stamp/ts.h"
#include "base/xalloc.h"

#define VENUE_MAX_SYMBOLS 64
/* Slip samples kept: 60 s at 100,000/s, and more runs are summarised from
 * the first this many. */
#define VENUE_MAX_SLIP (8u << 20)
/* Connections accepted and not yet logged on, both ports together: a port
 * scan or a crowd of idle connections must not lock the algo out, so when
 * full the oldest is closed to make room. */
#define VENUE_MAX_PENDING 64
/* How long after the end of --duration messages still due are sent late:
 * a venue a few messages behind at the end (a loaded machine: the lab's
 * 5000/s runs were up to 5 ms behind) finishes its schedule, one that is
 * far behind stops instead of publishing on for seconds. */
#define VENUE_LATE_NS (250 * 1000000LL)
/* Longest wait while only the order session is served (the md client
 * logged out): heartbeats stay on time. */
#define VENUE_STEP_NS (100 * 1000000LL)

static const struct opt_def venue_opts[] = {
	{ "rate", 'r', OPT_INT, "1000", 1, 10000000, NULL, "N", "market data messages per second", 0 },
	{ "duration", 'd', OPT_DURATION, "10", 1, 86400, NULL, "TIME", "publish this long", OPT_S },
	{ "symbols", 0, OPT_STRING, "TLA,TLB,TLC,TLD", 0, 0, NULL, "LIST", "symbols (55), comma-separated, cycled", 0 },
	{ "comp_id", 0, OPT_STRING, "VENUE", 0, 0, NULL, "ID", "our SenderCompID", 0 },
	{ "peer_comp_id", 0, OPT_STRING, "ALGO", 0, 0, NULL, "ID", "the algo's CompID", 0 },
	{ "accept_timeout", 0, OPT_DURATION, "30", 1, 86400, NULL, "TIME", "wait this long for the algo to connect and log on", OPT_S },
	{ "logon_timeout", 0, OPT_DURATION, "5", 1, 3600, NULL, "TIME", "close a connection that has not logged on after TIME", OPT_S },
	{ "busy_poll", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "pace market data by spinning on the clock, never sleeping (with --cpu)", 0 },
	PROBE_OPTS("127.0.0.1:9001", "127.0.0.1:9002"),
	OPT_END
};

static const struct prog venue_prog = {
	.name = "tapless-venue",
	.opts = venue_opts,
	.usage = "usage: tapless-venue [OPTIONS]\n\noptions:\n",
};

/* A connection accepted and not yet logged on. */
struct venue_pending {
	int fd;			/* -1: free */
	int port;		/* 0: market data, 1: orders */
	int64_t since;		/* accepted, CLOCK_MONOTONIC */
	char peer[ADDRPORT_STRLEN];	/* for the log */
};

/* Why publishing stopped (md), why the order session ended (orders). */
enum venue_end { VENUE_END_NONE, VENUE_END_DONE, VENUE_END_DEADLINE,
		 VENUE_END_LOGOUT, VENUE_END_SIGNAL, VENUE_END_ERROR };

static const char *const venue_end_names[] = {
	"not_started", "done", "deadline", "peer_logout", "signal", "error",
};

struct venue {
	struct probe_conn md, ord;
	char sym[VENUE_MAX_SYMBOLS][16];
	unsigned nsym;
	int64_t last_px[VENUE_MAX_SYMBOLS];	/* in 0.001 units */
	uint64_t published, orders, fills, rejects, exec_id;
	uint64_t orders_late;		/* came after our Logout: unanswered */
	uint64_t offered;		/* rate * duration */
	int64_t pub_start, pub_stop;	/* publishing period, CLOCK_MONOTONIC */
	enum venue_end end[2];		/* md, orders; NONE while running */
	int64_t *slip;
	size_t nslip, slip_cap;

	/* Session acceptance. */
	struct venue_pending pend[VENUE_MAX_PENDING];
	uint64_t refused;		/* connections closed, not sessions */
	char *peek;			/* a first message, peeked */
	size_t peek_cap;
	struct fix_msg *logon;		/* large: allocated once */
};

static volatile sig_atomic_t venue_stop;

static void venue_signal(int sig)
{
	(void)sig;
	venue_stop = 1;
}

static int venue_symbols(struct venue *v, const char *list)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (!n || n >= sizeof(v->sym[0]) || v->nsym == VENUE_MAX_SYMBOLS ||
		    memchr(p, '\x01', n) || memchr(p, '=', n))
			return -EINVAL;
		memcpy(v->sym[v->nsym], p, n);
		v->sym[v->nsym++][n] = 0;
		p += n + (p[n] == ',');
	}
	return v->nsym ? 0 : -EINVAL;
}

static int venue_find_symbol(const struct venue *v, const char *s, size_t len)
{
	for (unsigned i = 0; i < v->nsym; i++)
		if (strlen(v->sym[i]) == len && !memcmp(v->sym[i], s, len))
			return (int)i;
	return -1;
}

/* Message n (from 1): bid n * 0.001 on symbol n mod nsym. */
static int venue_publish(struct venue *v, uint64_t n, int64_t now)
{
	struct fix_writer *w = fixsess_begin(v->md.fs, "X", 0);
	unsigned s = (unsigned)(n % v->nsym);

	fix_add_int(w, 262, 1);			/* MDReqID */
	fix_add_int(w, 268, 1);			/* NoMDEntries */
	fix_add_str(w, 279, "0");		/* MDUpdateAction: new */
	fix_add_str(w, 269, "0");		/* MDEntryType: bid */
	fix_add_str(w, 55, v->sym[s]);
	fix_add_fixed(w, 270, (int64_t)n, 3);	/* MDEntryPx */
	fix_add_int(w, 271, 100);		/* MDEntrySize */
	v->last_px[s] = (int64_t)n;
	return fixsess_send(v->md.fs, now);
}

static int venue_report(struct venue *v, const struct fix_msg *m, int64_t now,
			bool filled, int64_t qty, int64_t px, const char *reject)
{
	struct fix_writer *w = fixsess_begin(v->ord.fs, "8", 0);
	const char *val;
	size_t len;

	fix_add_int(w, 37, (int64_t)v->orders);		/* OrderID */
	fix_add_int(w, 17, (int64_t)++v->exec_id);	/* ExecID */
	fix_add_str(w, 150, reject ? "8" : filled ? "F" : "0");	/* ExecType */
	fix_add_str(w, 39, reject ? "8" : filled ? "2" : "0");	/* OrdStatus */
	if ((val = fix_get(m, 11, &len)))
		fix_add(w, 11, val, len);
	if ((val = fix_get(m, 55, &len)))
		fix_add(w, 55, val, len);
	if ((val = fix_get(m, 54, &len)))
		fix_add(w, 54, val, len);
	fix_add_int(w, 38, qty);
	if (filled) {
		fix_add_int(w, 32, qty);		/* LastQty */
		fix_add_fixed(w, 31, px, 3);		/* LastPx */
	}
	fix_add_int(w, 14, filled ? qty : 0);		/* CumQty */
	fix_add_int(w, 151, filled || reject ? 0 : qty);	/* LeavesQty */
	fix_add_fixed(w, 6, filled ? px : 0, 3);	/* AvgPx */
	if (reject)
		fix_add_str(w, 58, reject);
	return fixsess_send(v->ord.fs, now);
}

/* A NewOrderSingle: New, then Filled, at once, at the symbol's last bid. */
static int venue_order(void *arg, struct fixsess *s, const struct fix_msg *m,
		       int64_t now)
{
	struct venue *v = arg;
	const char *sym;
	size_t len;
	int64_t qty;
	int k, rc;

	if (!fix_is(m, 35, "D"))
		return 0;	/* other application messages: counted only */
	v->orders++;
	/* An order that crossed our Logout on the wire is not answered:
	 * nothing follows a Logout. */
	if (fixsess_state(s) != FIXSESS_ACTIVE) {
		v->orders_late++;
		return 0;
	}
	sym = fix_get(m, 55, &len);
	k = sym ? venue_find_symbol(v, sym, len) : -1;
	if (fix_get_int(m, 38, &qty) || qty <= 0 || k < 0 || !fix_get(m, 11, &len) ||
	    !(fix_is(m, 54, "1") || fix_is(m, 54, "2"))) {
		v->rejects++;
		log_warn("orders: NewOrderSingle %llu rejected: needs ClOrdID (11), "
			 "a listed Symbol (55), Side (54) 1 or 2 and OrderQty (38) > 0",
			 (unsigned long long)v->orders);
		return venue_report(v, m, now, false, 0, 0, "invalid order");
	}
	rc = venue_report(v, m, now, false, qty, 0, NULL);
	if (!rc)
		rc = venue_report(v, m, now, true, qty, v->last_px[k], NULL);
	if (!rc)
		v->fills++;
	return rc;
}

/* What poll said for a session: stamps reaped, data read; a failure is
 * logged and ends the run. */
static int venue_event(struct venue *v, struct probe_conn *c, short revents,
		       int64_t now)
{
	return probe_conn_event(c, revents, now, c == &v->ord ? venue_order : NULL,
				v);
}

/* A session's fd for poll, or -1 once it is over (a closed session's
 * socket stays readable and would wake every poll). */
static int venue_pollfd(const struct probe_conn *c)
{
	return c->fs && fixsess_state(c->fs) != FIXSESS_CLOSED ? c->fd : -1;
}

static const char *const venue_port_names[2] = { "md", "orders" };

/* Sessions still running (end NONE) end for why. */
static void venue_ended(struct venue *v, enum venue_end why)
{
	for (int i = 0; i < 2; i++)
		if (v->end[i] == VENUE_END_NONE)
			v->end[i] = why;
}

/* Note the sessions whose peer has logged out (fixsess answered the
 * Logout) at now. A Logout ends its own session only: the clients of the
 * two sessions may be separate programs, and one leaving must not cut the
 * other off. The market data session's Logout stops publishing. Returns
 * how many sessions are still logged on, or -ECONNRESET when one failed
 * (a protocol error, the peer gone without a Logout): that fails the
 * run. */
static int venue_sessions(struct venue *v, int64_t now)
{
	const struct probe_conn *c[2] = { &v->md, &v->ord };
	int live = 0;

	for (int i = 0; i < 2; i++) {
		if (fixsess_state(c[i]->fs) == FIXSESS_ACTIVE) {
			live++;
			continue;
		}
		if (*fixsess_error(c[i]->fs))
			return -ECONNRESET;
		if (v->end[i] != VENUE_END_NONE)
			continue;
		v->end[i] = VENUE_END_LOGOUT;
		if (i == 0)
			v->pub_stop = now;
		log_notice("%s session: the peer logged out", venue_port_names[i]);
	}
	return live;
}

/* Close a connection that is not a session, with one log line (rate
 * limited: a scan makes many). */
static void venue_drop(struct venue *v, int fd, int port, const char *peer,
		       const char *why)
{
	close(fd);
	v->refused++;
	log_at_rl(LOG_NOTICE, "%s: connection from %s closed: %s",
		  venue_port_names[port], peer, why);
}

/* The peer's ADDR:PORT, for the log; "?" when it cannot be had. */
static void venue_peer_name(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) ||
	    addrport_format((struct sockaddr *)&ss, sl, out, len))
		snprintf(out, len, "?");
}

static void venue_pend_close(struct venue *v, struct venue_pending *q,
			     const char *why)
{
	venue_drop(v, q->fd, q->port, q->peer, why);
	q->fd = -1;
}

static ssize_t venue_raw_send(void *ctx, const void *buf, size_t len)
{
	ssize_t n = send(*(int *)ctx, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	return n < 0 ? -errno : n;
}

/* A connection that sent something other than the algo's Logon: tell it
 * why in a Logout (a misconfigured FIX client learns its mistake; this is
 * no session, so the Logout is neither stamped nor recorded), then close
 * it. */
static void venue_pend_reject(struct venue *v, struct venue_pending *q,
			      const struct fixsess_config *fc, const char *why)
{
	struct fixsess_io io = { venue_raw_send, NULL, NULL, &q->fd };
	struct fixsess *fs;

	if (!fixsess_create(&fs, fc, &io)) {
		fixsess_logout(fs, why, ts_now_mono());
		fixsess_destroy(fs);
	}
	/* What it sent is consumed, so the close is a FIN, not a reset that
	 * could overtake the Logout. */
	(void)!recv(q->fd, v->peek, v->peek_cap, MSG_DONTWAIT);
	venue_pend_close(v, q, why);
}

/* Take every connection waiting on listening socket lfd (port): while the
 * port has no session, as pending (the oldest closed when full); once it
 * has one, closed at once. */
static void venue_take(struct venue *v, int lfd, int port, int64_t now)
{
	const struct probe_conn *c = port ? &v->ord : &v->md;

	for (;;) {
		struct venue_pending *q = NULL, *old = NULL;
		char peer[ADDRPORT_STRLEN];
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;	/* EAGAIN: all taken; others: try later */
		venue_peer_name(fd, peer, sizeof(peer));
		if (c->fs) {
			close(fd);
			v->refused++;
			log_at_rl(LOG_NOTICE, "%s: connection from %s closed: the "
				  "session is already up", venue_port_names[port],
				  peer);
			continue;
		}
		for (int i = 0; i < VENUE_MAX_PENDING && !q; i++) {
			if (v->pend[i].fd < 0)
				q = &v->pend[i];
			else if (!old || v->pend[i].since < old->since)
				old = &v->pend[i];
		}
		if (!q) {
			venue_pend_close(v, old, "too many connections waiting "
					 "to log on; this was the oldest");
			q = old;
		}
		q->fd = fd;
		q->port = port;
		q->since = now;
		snprintf(q->peer, sizeof(q->peer), "%s", peer);
		log_debug("%s: connection from %s, waiting for its Logon",
			  venue_port_names[port], peer);
	}
}

/* A pending connection has something: its first message, whole, decides.
 * A Logon from the peer CompID to ours makes it the port's session (the
 * message is left unread, so the session reads, stamps and records it);
 * anything else closes it. Returns 1 when it became the session, 0 when
 * it waits for more or was closed, -errno when the session could not be
 * set up. */
static int venue_pend_read(struct venue *v, struct venue_pending *q,
			   const struct probe_ctx *x, const struct fixsess_config *fc)
{
	struct probe_conn *c = q->port ? &v->ord : &v->md;
	enum fix_error why;
	const char *val;
	size_t skip, len;
	ssize_t n;
	int k, one = 1;
	char err[PROBE_ERRBUF];

	n = recv(q->fd, v->peek, v->peek_cap, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		venue_pend_close(v, q, n ? strerror(errno) :
				 "closed without logging on");
		return 0;
	}
	k = fix_frame(v->peek, (size_t)n, fc->max_msg, &skip, &why);
	if (k == 0) {
		int want = (int)n + 1;

		if ((size_t)n == v->peek_cap) {
			venue_pend_close(v, q, "first message too long");
			return 0;
		}
		/* Wake only when more than what is here has come: the
		 * bytes stay unread, and poll would report them forever. */
		setsockopt(q->fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
		return 0;
	}
	/* The words are the session's (fixsess.c) for the same faults. */
	if (k < 0 || fix_parse(v->logon, v->peek, (size_t)k, &why)) {
		venue_pend_reject(v, q, fc, fix_error_name(why));
		return 0;
	}
	if (!fix_is(v->logon, 49, fc->target) || !fix_is(v->logon, 56, fc->sender)) {
		char text[160];
		bool sender = !fix_is(v->logon, 49, fc->target);

		val = fix_get(v->logon, sender ? 49 : 56, &len);
		snprintf(text, sizeof(text), "%s '%.*s', expected '%s'",
			 sender ? "SenderCompID (49)" : "TargetCompID (56)",
			 val ? (int)(len > 64 ? 64 : len) : 0, val ? val : "",
			 sender ? fc->target : fc->sender);
		venue_pend_reject(v, q, fc, text);
		return 0;
	}
	if (!fix_is(v->logon, 35, "A")) {
		venue_pend_reject(v, q, fc, "first message is not a Logon");
		return 0;
	}
	setsockopt(q->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	k = probe_conn_open(c, venue_port_names[q->port], q->fd, x, fc, err);
	q->fd = -1;	/* the session's now, or closed by probe_conn_open */
	if (k) {
		log_err("%s", err);
		return k;
	}
	log_info("%s session: Logon from %s", c->name, q->peer);
	return 1;
}

static void venue_pend_close_all(struct venue *v, const char *why)
{
	for (int i = 0; i < VENUE_MAX_PENDING; i++)
		if (v->pend[i].fd >= 0)
			venue_pend_close(v, &v->pend[i], why);
}

/* Wait for the algo's two sessions: a session is the connection that logs
 * on with the right CompIDs. Every connection is accepted; those that
 * close, send something else, or stay quiet past --logon-timeout are
 * closed with a log line and do not count. */
static int venue_accept(struct venue *v, const struct opts *o,
			const struct probe_ctx *x, int lfd[2])
{
	struct fixsess_config fc = {
		.sender = opts_str(o, "comp_id"), .target = opts_str(o, "peer_comp_id"),
		.heartbeat_s = (int)opts_int(o, "heartbeat"),
		.max_msg = (size_t)opts_int(o, "max_msg"),
	};
	struct probe_conn *conn[2] = { &v->md, &v->ord };
	int64_t end = ts_now_mono() + opts_ns(o, "accept_timeout");
	int64_t logon_ns = opts_ns(o, "logon_timeout");

	while (!venue_stop && ts_now_mono() < end) {
		struct pollfd p[4 + VENUE_MAX_PENDING];
		int64_t now;
		int n = 0;

		for (int i = 0; i < 2; i++) {
			p[i] = (struct pollfd){ .fd = lfd[i], .events = POLLIN };
			p[2 + i] = (struct pollfd){ .fd = venue_pollfd(conn[i]),
						    .events = POLLIN };
		}
		for (int i = 0; i < VENUE_MAX_PENDING; i++)
			p[4 + i] = (struct pollfd){ .fd = v->pend[i].fd,
						    .events = POLLIN };
		if (poll(p, 4 + VENUE_MAX_PENDING, 100) < 0 && errno != EINTR)
			return -errno;
		now = ts_now_mono();
		for (int i = 0; i < 2; i++) {
			if (conn[i]->fs && venue_event(v, conn[i], p[2 + i].revents, now))
				return -EPROTO;
			if (conn[i]->fs && fixsess_state(conn[i]->fs) == FIXSESS_CLOSED) {
				log_err("%s session: ended before the run began",
					conn[i]->name);
				return -ECONNRESET;
			}
		}
		for (int i = 0; i < VENUE_MAX_PENDING; i++) {
			struct venue_pending *q = &v->pend[i];

			if (q->fd < 0)
				continue;
			if (p[4 + i].revents && p[4 + i].fd == q->fd) {
				int rc = venue_pend_read(v, q, x, &fc);

				if (rc < 0)
					return -EIO;
				if (rc > 0) {
					struct probe_conn *s = q->port ? &v->ord : &v->md;

					/* The Logon is read (and answered) now. */
					if (venue_event(v, s, POLLIN, ts_now_mono()))
						return -EPROTO;
					/* The port's other waiting connections
					 * are not sessions. */
					for (int j = 0; j < VENUE_MAX_PENDING; j++)
						if (v->pend[j].fd >= 0 &&
						    v->pend[j].port == q->port)
							venue_pend_close(v, &v->pend[j],
									 "the session is already up");
				}
			} else if (now - q->since >= logon_ns) {
				venue_pend_close(v, q, "no Logon in time");
			}
		}
		for (int i = 0; i < 2; i++)
			if (p[i].revents)
				venue_take(v, lfd[i], i, now);
		for (int i = 0; i < 2; i++)
			n += conn[i]->fs && fixsess_state(conn[i]->fs) == FIXSESS_ACTIVE;
		if (n == 2) {
			venue_pend_close_all(v, "the sessions are up");
			return 0;
		}
	}
	venue_pend_close_all(v, "the venue is stopping");
	if (venue_stop)
		return -EINTR;
	log_err("the algo did not connect and log on to both sessions in %.9g s",
		(double)opts_ns(o, "accept_timeout") / NS_PER_S);
	return -ETIMEDOUT;
}

/* Connections on the listening sockets during the run are not sessions. */
static void venue_refuse(struct venue *v, int lfd[2], const struct pollfd *p,
			 int64_t now)
{
	for (int i = 0; i < 2; i++)
		if (p[i].revents)
			venue_take(v, lfd[i], i, now);
}

/* Publish at the rate until the duration is over, filling orders in
 * between. The schedule is absolute; when the venue cannot keep up it
 * publishes late, and at the deadline it stops with the rest unsent.
 * A peer's Logout ends its own session only: the market data client's
 * stops publishing, yet orders are filled to the end of the duration,
 * and the order client's leaves publishing going. The run ends early
 * only when every session has logged out. Returns 0 or -errno (logged). */
static int venue_run(struct venue *v, int64_t rate, int64_t dur_ns, bool busy,
		     int lfd[2])
{
	int64_t interval = NS_PER_S / rate, start = ts_now_mono();
	int64_t next = start, end = start + dur_ns, now = start;
	uint64_t n = 0, total = (uint64_t)((double)rate * (double)dur_ns / NS_PER_S);
	int rc = 0;

	v->offered = total;
	v->pub_start = start;
	for (;;) {
		struct pollfd p[4] = { { .fd = lfd[0], .events = POLLIN },
				       { .fd = lfd[1], .events = POLLIN },
				       { .fd = venue_pollfd(&v->md), .events = POLLIN },
				       { .fd = venue_pollfd(&v->ord), .events = POLLIN } };
		bool md = v->end[0] == VENUE_END_NONE;	/* publishing */
		int64_t due, wait;

		if (venue_stop) {
			venue_ended(v, VENUE_END_SIGNAL);
			break;
		}
		now = ts_now_mono();
		if (md ? n == total : v->end[1] != VENUE_END_NONE || now >= end)
			break;	/* all published; or all logged out, or time */
		if (md && now >= end + VENUE_LATE_NS) {
			/* Far behind: what is left is not published. */
			v->end[0] = VENUE_END_DEADLINE;
			break;
		}
		if (md && now >= next) {
			if (v->nslip < v->slip_cap)
				v->slip[v->nslip++] = now - next;
			rc = venue_publish(v, ++n, now);
			if (rc) {
				/* The client may have logged out and gone:
				 * its Logout is still to be read. */
				venue_event(v, &v->md, POLLIN, ts_now_mono());
				if (venue_sessions(v, ts_now_mono()) >= 0 &&
				    v->end[0] == VENUE_END_LOGOUT) {
					rc = 0;
					continue;
				}
				log_err("md session: sending: %s", strerror(-rc));
				venue_ended(v, VENUE_END_ERROR);
				break;
			}
			v->published++;
			/* The schedule is absolute: a late message does not
			 * push the later ones back. */
			next = start + (int64_t)n * interval;
			if (n % 16 == 0)
				probe_conn_stamps(&v->md, now);
			continue;
		}
		/* Until the next message (publishing over: the end of the
		 * duration, a step at a time): orders first, then wait. */
		due = next;
		if (!md)
			due = end - now > VENUE_STEP_NS ? now + VENUE_STEP_NS : end;
		wait = due - now;
		if (poll(p, 4, 0) > 0) {
			venue_refuse(v, lfd, p, now);
			for (int i = 0; i < 2 && !rc; i++)
				rc = venue_event(v, i ? &v->ord : &v->md,
						 p[2 + i].revents, now);
			if (!rc && venue_sessions(v, now) < 0)
				rc = -ECONNRESET;
			if (rc) {
				venue_ended(v, VENUE_END_ERROR);
				break;
			}
			probe_conn_stamps(&v->ord, now);
			continue;
		}
		rc = fixsess_tick(v->md.fs, now);
		if (!rc)
			rc = fixsess_tick(v->ord.fs, now);
		if (rc) {
			log_err("heartbeat: %s", strerror(-rc));
			venue_ended(v, VENUE_END_ERROR);
			break;
		}
		/* --busy-poll: spin on the clock. Otherwise wait through
		 * gaps in ppoll, so that an order wakes the venue and is
		 * filled at once, not at the next tick; waking 50 us early
		 * and spinning the rest, since a wait's wake-up is late by
		 * about that much. */
		if (!busy && wait > 60000) {
			int64_t w = wait - 50000;
			struct timespec ts = { w / 1000000000LL, w % 1000000000LL };

			ppoll(p, 4, &ts, NULL);
		}
	}
	now = ts_now_mono();
	/* The publishing period: to the end of the last message's slot when
	 * all went out on time, to the md client's Logout (noted then), else
	 * to when publishing stopped. */
	if (v->end[0] == VENUE_END_NONE) {
		v->end[0] = VENUE_END_DONE;
		v->pub_stop = now < start + (int64_t)total * interval ?
			      start + (int64_t)total * interval : now;
	} else if (v->end[0] != VENUE_END_LOGOUT) {
		v->pub_stop = now;
	}
	if (!venue_sessions(v, now))
		log_notice("every session has logged out: the run ends");
	return rc;
}

static void venue_summary(struct venue *v, const struct opts *o,
			  struct probe_ctx *x)
{
	unsigned pflags = 0;
	struct printer *p = print_create(stdout, print_format_from_opts(o, &pflags),
					 pflags);
	struct summary s;
	uint64_t lost = 0;

	double elapsed = (double)(v->pub_stop - v->pub_start) / 1e9;

	summary_of(v->slip, v->nslip, &s);
	print_text(p, "tapless-venue: ");
	print_uint(p, "md_published", "%llu market data messages", v->published);
	/* Measured: what went out over the time it took, not the offer. */
	print_double(p, "md_rate", " at %.0f/s", elapsed > 0 ?
		     (double)v->published / elapsed : 0.0);
	print_double(p, "md_elapsed_s", " over %.3f s", elapsed);
	print_uint(p, "md_offered", " (%llu offered", v->offered);
	print_uint(p, "md_unsent", ", %llu unsent", v->offered - v->published);
	print_str(p, "md_end", ", end: %s)\n", venue_end_names[v->end[0]]);
	print_uint(p, "refused", "connections closed that were not sessions: %llu\n",
		   v->refused);
	print_text(p, "orders: ");
	print_uint(p, "orders_received", "%llu received", v->orders);
	print_uint(p, "fills", ", %llu filled", v->fills);
	print_uint(p, "rejects", ", %llu rejected", v->rejects);
	print_uint(p, "orders_late", ", %llu after the venue's Logout",
		   v->orders_late);
	print_str(p, "orders_end", " (end: %s)\n", venue_end_names[v->end[1]]);
	print_text(p, "schedule slip (ns): ");
	summary_print(p, "slip_ns", &s);
	if (v->md.fs)
		lost += probe_conn_print(p, &v->md);
	if (v->ord.fs)
		lost += probe_conn_print(p, &v->ord);
	lost += probe_tx_print(p, x);
	print_uint(p, "stamps_lost", "stamps lost: %llu\n", lost);
	print_destroy(p);
}

int main(int argc, char **argv)
{
	struct opts *o;
	struct venue *v = xcalloc(1, sizeof(*v));
	struct probe_ctx x = { 0 };
	int lfd[2] = { -1, -1 }, rc = 1, first;
	char err[PROBE_ERRBUF];

	v->md.fd = v->ord.fd = -1;
	for (int i = 0; i < VENUE_MAX_PENDING; i++)
		v->pend[i].fd = -1;
	o = prog_start(&venue_prog, argc, argv, &first);
	if (!o) {
		rc = first;
		goto out;
	}
	if (venue_symbols(v, opts_str(o, "symbols"))) {
		fprintf(stderr, "tapless-venue: bad --symbols: give 1 to 64 names "
			"of 1 to 15 characters, comma-separated\n");
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		lfd[i] = probe_listen(opts_str(o, i ? "ord" : "md"), err);
		if (lfd[i] < 0) {
			fprintf(stderr, "tapless-venue: %s\n", err);
			rc = lfd[i] == -EINVAL ? 1 : 2;
			goto out;
		}
		/* Connections are taken until none is left (venue_take). */
		fcntl(lfd[i], F_SETFL, fcntl(lfd[i], F_GETFL) | O_NONBLOCK);
	}
	if (probe_start(&x, o, prog_version(), err)) {
		fprintf(stderr, "tapless-venue: %s\n", err);
		rc = 2;
		goto out;
	}
	v->slip_cap = (size_t)((double)opts_int(o, "rate") *
			       (double)opts_ns(o, "duration") / NS_PER_S) + 1;
	if (v->slip_cap > VENUE_MAX_SLIP)
		v->slip_cap = VENUE_MAX_SLIP;
	v->slip = xcalloc(v->slip_cap, sizeof(*v->slip));
	v->peek_cap = 2 * (size_t)opts_int(o, "max_msg");
	v->peek = xmalloc(v->peek_cap);
	v->logon = xmalloc(sizeof(*v->logon));
	prog_signals(venue_signal, NULL);
	log_notice("listening: market data on %s, orders on %s",
		   opts_str(o, "md"), opts_str(o, "ord"));
	rc = 2;
	if (venue_accept(v, o, &x, lfd))
		goto done;
	log_notice("publishing %lld messages/s for %.9g s", opts_int(o, "rate"),
		   (double)opts_ns(o, "duration") / NS_PER_S);
	if (venue_run(v, opts_int(o, "rate"), opts_ns(o, "duration"),
		      opts_flag(o, "busy_poll"), lfd))
		goto done;
	/* Orders sent on the last market data (and the SELLs of their fills)
	 * are still coming: serve them until the order session has been
	 * quiet for 300 ms, then end the sessions. Not after the order
	 * client's Logout: it sends no more. */
	for (int64_t quiet = ts_now_mono() + 300000000LL, stop = quiet + 2000000000LL;
	     fixsess_state(v->ord.fs) == FIXSESS_ACTIVE && !venue_stop &&
	     ts_now_mono() < quiet && ts_now_mono() < stop;) {
		struct pollfd p[4] = { { .fd = lfd[0], .events = POLLIN },
				       { .fd = lfd[1], .events = POLLIN },
				       { .fd = venue_pollfd(&v->md), .events = POLLIN },
				       { .fd = venue_pollfd(&v->ord), .events = POLLIN } };

		poll(p, 4, 20);
		venue_refuse(v, lfd, p, ts_now_mono());
		for (int i = 0; i < 2; i++)
			if (venue_event(v, i ? &v->ord : &v->md, p[2 + i].revents,
					ts_now_mono()))
				goto done;
		if (venue_sessions(v, ts_now_mono()) < 0)
			goto done;
		if (p[3].revents & POLLIN)
			quiet = ts_now_mono() + 300000000LL;
		probe_conn_stamps(&v->ord, ts_now_mono());
	}
	rc = 0;
done:
	/* The sessions the run leaves running end with it (none did before
	 * the run began: not_started). */
	if (v->pub_start)
		venue_ended(v, rc ? VENUE_END_ERROR : venue_stop ?
			    VENUE_END_SIGNAL : VENUE_END_DONE);
	{
		struct probe_conn *const conns[2] = { &v->md, &v->ord };
		const fixsess_app_fn fns[2] = { NULL, venue_order };

		probe_end(conns, fns, 2, v, "end of the run");
	}
	probe_conn_stamps(&v->md, -1);
	probe_conn_stamps(&v->ord, -1);
	venue_summary(v, o, &x);
	if (probe_finish(&x)) {
		fprintf(stderr, "tapless-venue: %s: could not be completed\n",
			opts_str(o, "write"));
		rc = 2;
	}
out:
	probe_conn_close(&v->md);
	probe_conn_close(&v->ord);
	for (int i = 0; i < 2; i++)
		if (lfd[i] >= 0)
			close(lfd[i]);
	for (int i = 0; i < VENUE_MAX_PENDING; i++)
		if (v->pend[i].fd >= 0)
			close(v->pend[i].fd);
	free(v->slip);
	free(v->peek);
	free(v->logon);
	free(v);
	opts_destroy(o);
	return rc;
}
