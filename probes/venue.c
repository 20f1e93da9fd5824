/* venue.c — tapless-venue: the exchange side of the FTTC workload. Serves a
 * market data session (1) and an order session (2) over FIX 4.4: publishes
 * Market Data Incremental Refresh (35=X) bids at a steady, paced rate and
 * fills every NewOrderSingle (35=D) at once with two ExecutionReports (New,
 * then Filled). Every message is stamped and recorded (probe.h). See
 * tapless-venue(1).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fix.h"
#include "fixsess.h"
#include "log.h"
#include "opts.h"
#include "print.h"
#include "probe.h"
#include "summary.h"
#include "ts.h"
#include "xalloc.h"

#define VENUE_VERSION "tapless-venue 0.1"
#define VENUE_MAX_SYMBOLS 64
/* Slip samples kept: 60 s at 100,000/s, and more runs are summarised from
 * the first this many. */
#define VENUE_MAX_SLIP (8u << 20)

static const struct opt_def venue_opts[] = {
	{ "rate", 'r', OPT_INT, "1000", 1, 10000000, NULL, "N", "market data messages per second", 0 },
	{ "duration", 'd', OPT_INT, "10", 1, 86400, NULL, "SECONDS", "publish for SECONDS", 0 },
	{ "symbols", 0, OPT_STRING, "TLA,TLB,TLC,TLD", 0, 0, NULL, "LIST", "symbols (55), comma-separated, cycled", 0 },
	{ "comp-id", 0, OPT_STRING, "VENUE", 0, 0, NULL, "ID", "our SenderCompID", 0 },
	{ "peer-comp-id", 0, OPT_STRING, "ALGO", 0, 0, NULL, "ID", "the algo's CompID", 0 },
	{ "accept-timeout", 0, OPT_INT, "30", 1, 86400, NULL, "SECONDS", "wait this long for the algo to connect and log on", 0 },
	PROBE_OPTS("127.0.0.1:9001", "127.0.0.1:9002"),
	OPT_END
};

struct venue {
	struct probe_conn md, ord;
	char sym[VENUE_MAX_SYMBOLS][16];
	unsigned nsym;
	int64_t last_px[VENUE_MAX_SYMBOLS];	/* in 0.001 units */
	uint64_t published, orders, fills, rejects, exec_id;
	int64_t *slip;
	size_t nslip, slip_cap;
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

	(void)s;
	if (!fix_is(m, 35, "D"))
		return 0;	/* other application messages: counted only */
	v->orders++;
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

/* Read a session; a failure is logged and ends the run. */
static int venue_read(struct venue *v, struct probe_conn *c, int64_t now)
{
	return probe_conn_read(c, now, c == &v->ord ? venue_order : NULL, v);
}

/* Accept the algo's two connections and their Logons. */
static int venue_accept(struct venue *v, const struct opts *o,
			const struct probe_ctx *x, int lfd[2])
{
	struct fixsess_config fc = {
		.sender = opts_str(o, "comp-id"), .target = opts_str(o, "peer-comp-id"),
		.heartbeat_s = (int)opts_int(o, "heartbeat"),
		.max_msg = (size_t)opts_int(o, "max-msg"),
	};
	struct probe_conn *conn[2] = { &v->md, &v->ord };
	static const char *const names[2] = { "md", "orders" };
	int64_t end = ts_now_mono() + opts_int(o, "accept-timeout") * 1000000000LL;
	char err[256];

	while (!venue_stop && ts_now_mono() < end) {
		struct pollfd p[2];
		int n = 0;

		for (int i = 0; i < 2; i++)
			p[i] = (struct pollfd){ .fd = conn[i]->fs ? conn[i]->fd : lfd[i],
						.events = POLLIN };
		if (poll(p, 2, 100) < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < 2; i++) {
			if (!conn[i]->fs && p[i].revents) {
				int fd = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);

				if (fd < 0)
					continue;
				if (probe_conn_open(conn[i], names[i], fd, x, &fc,
						    err, sizeof(err))) {
					log_err("%s", err);
					return -EIO;
				}
				log_info("%s session: connected", names[i]);
			} else if (conn[i]->fs && p[i].revents &&
				   venue_read(v, conn[i], ts_now_mono())) {
				return -EPROTO;
			}
			n += conn[i]->fs && fixsess_state(conn[i]->fs) == FIXSESS_ACTIVE;
		}
		if (n == 2)
			return 0;
	}
	log_err("the algo did not connect and log on to both sessions in %lld s",
		opts_int(o, "accept-timeout"));
	return -ETIMEDOUT;
}

static void venue_sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
	       !venue_stop)
		;
}

/* Publish at the rate for the duration, filling orders in between. */
static int venue_run(struct venue *v, int64_t rate, int64_t secs)
{
	int64_t interval = 1000000000LL / rate, start = ts_now_mono();
	int64_t next = start, end = start + secs * 1000000000LL, now;
	uint64_t n = 0, total = (uint64_t)(rate * secs);
	int rc = 0;

	while (!venue_stop && n < total) {
		struct pollfd p[2] = { { .fd = v->md.fd, .events = POLLIN },
				       { .fd = v->ord.fd, .events = POLLIN } };
		int64_t wait;

		now = ts_now_mono();
		if (now >= next) {
			if (v->nslip < v->slip_cap)
				v->slip[v->nslip++] = now - next;
			rc = venue_publish(v, ++n, now);
			if (rc) {
				log_err("md session: sending: %s", strerror(-rc));
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
		/* Until the next message: orders first, then sleep. Sleeping
		 * close to the deadline would miss it, so the last 50 us are
		 * spent polling without blocking. */
		wait = next - now;
		if (poll(p, 2, 0) > 0) {
			for (int i = 0; i < 2 && !rc; i++)
				if (p[i].revents)
					rc = venue_read(v, i ? &v->ord : &v->md, now);
			if (rc)
				break;
			probe_conn_stamps(&v->ord, now);
			continue;
		}
		rc = fixsess_tick(v->md.fs, now);
		if (!rc)
			rc = fixsess_tick(v->ord.fs, now);
		if (rc) {
			log_err("heartbeat: %s", strerror(-rc));
			break;
		}
		if (wait > 60000) {
			struct timespec ts = { 0, wait - 50000 };

			if (wait > 2000000) {
				/* Long gaps (low rates): block in ppoll so an
				 * order is filled at once, not at the tick. */
				ppoll(p, 2, &ts, NULL);
			} else {
				venue_sleep_until(next - 50000);
			}
		}
		if (now > end + 1000000000LL)
			break;
	}
	return rc;
}

static void venue_summary(struct venue *v, bool json, int64_t secs)
{
	struct printer *p = print_create(stdout, json ? PRINT_JSON : PRINT_TEXT, 0);
	struct summary s;
	uint64_t lost = 0;

	summary_of(v->slip, v->nslip, &s);
	print_text(p, "tapless-venue: ");
	print_uint(p, "md_published", "%llu market data messages", v->published);
	print_double(p, "md_rate", " at %.0f/s", (double)v->published / (double)secs);
	print_uint(p, "orders_received", ", %llu orders", v->orders);
	print_uint(p, "fills", ", %llu filled", v->fills);
	print_uint(p, "rejects", ", %llu rejected\n", v->rejects);
	print_text(p, "schedule slip (ns): ");
	summary_print(p, "slip_ns", &s);
	if (v->md.fs)
		lost += probe_conn_print(p, &v->md);
	if (v->ord.fs)
		lost += probe_conn_print(p, &v->ord);
	print_uint(p, "stamps_lost", "stamps lost: %llu\n", lost);
	print_destroy(p);
}

int main(int argc, char **argv)
{
	struct opts_error oerr;
	struct opts *o = opts_create(venue_opts);
	struct venue *v = xcalloc(1, sizeof(*v));
	struct probe_ctx x = { 0 };
	struct sigaction sa = { .sa_handler = venue_signal };
	int lfd[2] = { -1, -1 }, rc = 1, level, first;
	char err[256];

	v->md.fd = v->ord.fd = -1;
	log_init("tapless-venue", false, LOG_NOTICE);
	first = opts_parse_args(o, argc, argv, &oerr);
	if (first < 0 || first < argc) {
		fprintf(stderr, "tapless-venue: %s\ntry 'tapless-venue --help'\n",
			first < 0 ? oerr.msg : "unexpected operand");
		goto out;
	}
	if (opts_flag(o, "help")) {
		printf("usage: tapless-venue [OPTIONS]\n\noptions:\n");
		opts_usage(stdout, venue_opts);
		rc = 0;
		goto out;
	}
	if (opts_flag(o, "version")) {
		printf("%s\n", VENUE_VERSION);
		rc = 0;
		goto out;
	}
	level = log_level_parse(opts_str(o, "log-level"));
	if (level < 0 || venue_symbols(v, opts_str(o, "symbols"))) {
		fprintf(stderr, "tapless-venue: bad %s\n", level < 0 ?
			"--log-level" : "--symbols: give 1 to 64 names of 1 to 15 "
			"characters, comma-separated");
		goto out;
	}
	log_init("tapless-venue", false, level);
	for (int i = 0; i < 2; i++) {
		lfd[i] = probe_listen(opts_str(o, i ? "ord" : "md"), err, sizeof(err));
		if (lfd[i] < 0) {
			fprintf(stderr, "tapless-venue: %s\n", err);
			rc = lfd[i] == -EINVAL ? 1 : 2;
			goto out;
		}
	}
	if (probe_start(&x, o, VENUE_VERSION, err, sizeof(err))) {
		fprintf(stderr, "tapless-venue: %s\n", err);
		rc = 2;
		goto out;
	}
	v->slip_cap = (size_t)opts_int(o, "rate") * (size_t)opts_int(o, "duration");
	if (v->slip_cap > VENUE_MAX_SLIP)
		v->slip_cap = VENUE_MAX_SLIP;
	v->slip = xcalloc(v->slip_cap, sizeof(*v->slip));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_notice("listening: market data on %s, orders on %s",
		   opts_str(o, "md"), opts_str(o, "ord"));
	rc = 2;
	if (venue_accept(v, o, &x, lfd))
		goto done;
	log_notice("publishing %lld messages/s for %lld s", opts_int(o, "rate"),
		   opts_int(o, "duration"));
	if (venue_run(v, opts_int(o, "rate"), opts_int(o, "duration")))
		goto done;
	/* Orders sent on the last market data (and the SELLs of their fills)
	 * are still coming: serve them until the order session has been
	 * quiet for 300 ms, then end the sessions. */
	for (int64_t quiet = ts_now_mono() + 300000000LL, stop = quiet + 2000000000LL;
	     !venue_stop && ts_now_mono() < quiet && ts_now_mono() < stop;) {
		struct pollfd p[2] = { { .fd = v->md.fd, .events = POLLIN },
				       { .fd = v->ord.fd, .events = POLLIN } };

		poll(p, 2, 20);
		for (int i = 0; i < 2; i++)
			if (p[i].revents && venue_read(v, i ? &v->ord : &v->md,
						       ts_now_mono()))
				goto done;
		if (p[1].revents)
			quiet = ts_now_mono() + 300000000LL;
		probe_conn_stamps(&v->ord, ts_now_mono());
	}
	rc = 0;
done:
	{
		struct probe_conn *const conns[2] = { &v->md, &v->ord };
		const fixsess_app_fn fns[2] = { NULL, venue_order };

		probe_end(conns, fns, 2, v, "end of the run");
	}
	probe_conn_stamps(&v->md, -1);
	probe_conn_stamps(&v->ord, -1);
	venue_summary(v, opts_flag(o, "json"), opts_int(o, "duration"));
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
	free(v->slip);
	free(v);
	opts_destroy(o);
	return rc;
}
