/* algo.c — tapless-algo: the trader side of the FTTC workload. Reads the
 * venue's market data (session 1) and, on every bid whose price ends in
 * .000, buys on the order session (2); on the fill it sells the same, which
 * the venue fills too. Every message is stamped and recorded (probe.h). See
 * tapless-algo(1).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fix/fix.h"
#include "fix/fixsess.h"
#include "base/log.h"
#include "base/opts.h"
#include "base/print.h"
#include "probes/probe.h"
#include "base/prog.h"
#include "stamp/ts.h"
#include "base/xalloc.h"


/* The resolutions of SendingTime (52) and TransactTime (60) the algo
 * writes, and their digits of the second. */
static const char *const algo_time_units[] = { "ms", "us", "ns", NULL };
static const unsigned algo_time_digits[] = { 3, 6, 9 };

static const struct opt_def algo_opts[] = {
	{ "duration", 'd', OPT_DURATION, "0", 0, 86400, NULL, "TIME", "stop after TIME (0: when the venue logs out)", OPT_S },
	{ "qty", 0, OPT_INT, "100", 1, 1000000000, NULL, "N", "OrderQty (38) of each order", 0 },
	{ "comp_id", 0, OPT_STRING, "ALGO", 0, 0, NULL, "ID", "our SenderCompID", 0 },
	{ "peer_comp_id", 0, OPT_STRING, "VENUE", 0, 0, NULL, "ID", "the venue's CompID", 0 },
	{ "connect_timeout", 0, OPT_DURATION, "30", 0, 86400, NULL, "TIME", "keep trying to reach the venue this long", OPT_S },
	{ "time_unit", 0, OPT_ENUM, "ms", 0, 0, algo_time_units, "UNIT", "resolution of SendingTime (52) and TransactTime (60): ms, us or ns", 0 },
	PROBE_OPTS("127.0.0.1:9001", "127.0.0.1:9002"),
	OPT_END
};

static const struct prog algo_prog = {
	.name = "tapless-algo",
	.opts = algo_opts,
	.usage = "usage: tapless-algo [OPTIONS]\n\noptions:\n",
};

struct algo {
	struct probe_conn md, ord;
	int64_t qty;
	uint64_t md_msgs, bids, bids_000, buys, sells;
	uint64_t reports, news, fills_buy, fills_sell, rejects;
};

static volatile sig_atomic_t algo_stop;

static void algo_signal(int sig)
{
	(void)sig;
	algo_stop = 1;
}

static int algo_order(struct algo *a, bool buy, const char *sym, size_t symlen,
		      int64_t now)
{
	struct fix_writer *w;
	char id[32];

	/* Market data still read after a Logout (ours or the venue's)
	 * trades no more. */
	if (fixsess_state(a->ord.fs) != FIXSESS_ACTIVE)
		return 0;
	w = fixsess_begin(a->ord.fs, "D", 0);

	snprintf(id, sizeof(id), "TL%llu",
		 (unsigned long long)(a->buys + a->sells + 1));
	fix_add_str(w, 11, id);			/* ClOrdID, unique in the run */
	fix_add(w, 55, sym, symlen);
	fix_add_str(w, 54, buy ? "1" : "2");	/* Side */
	fixsess_add_time(a->ord.fs, 60, 0);	/* TransactTime */
	fix_add_int(w, 38, a->qty);		/* OrderQty */
	fix_add_str(w, 40, "1");		/* OrdType: market */
	if (fixsess_send(a->ord.fs, now))
		return -EIO;
	if (buy)
		a->buys++;
	else
		a->sells++;
	return 0;
}

/* Market data: a BUY for every bid whose price ends in .000. */
static int algo_md(void *arg, struct fixsess *s, const struct fix_msg *m,
		   int64_t now)
{
	struct algo *a = arg;
	int pos = -1;

	(void)s;
	if (!fix_is(m, 35, "X"))
		return 0;
	a->md_msgs++;
	/* Entries of the 268 group: each starts with 279 or 269; the 269,
	 * 55 and 270 that follow belong to it. */
	for (;;) {
		const char *type, *px, *sym = NULL;
		size_t tl, pl, sl = 0;
		int tpos = pos, ppos, spos;

		type = fix_next(m, 269, &tpos, &tl);
		if (!type)
			break;
		ppos = tpos;
		px = fix_next(m, 270, &ppos, &pl);
		spos = tpos;
		sym = fix_next(m, 55, &spos, &sl);
		pos = tpos;
		if (tl != 1 || type[0] != '0' || !px)
			continue;
		a->bids++;
		if (pl > 4 && !memcmp(px + pl - 4, ".000", 4) && sym) {
			a->bids_000++;
			if (algo_order(a, true, sym, sl, now))
				return -EIO;
		}
	}
	return 0;
}

/* Execution reports: a SELL of the same for every filled BUY. */
static int algo_exec(void *arg, struct fixsess *s, const struct fix_msg *m,
		     int64_t now)
{
	struct algo *a = arg;
	const char *sym;
	size_t sl;

	(void)s;
	if (!fix_is(m, 35, "8"))
		return 0;
	a->reports++;
	if (fix_is(m, 39, "0"))
		a->news++;
	else if (fix_is(m, 39, "8"))
		a->rejects++;
	if (!fix_is(m, 39, "2"))
		return 0;
	if (fix_is(m, 54, "2")) {
		a->fills_sell++;
		return 0;
	}
	a->fills_buy++;
	sym = fix_get(m, 55, &sl);
	if (!sym) {
		log_warn("orders: a fill without Symbol (55): no SELL");
		return 0;
	}
	return algo_order(a, false, sym, sl, now) ? -EIO : 0;
}

/* What poll said for c: stamps reaped, data read, real errors only. */
static int algo_event(struct algo *a, struct probe_conn *c, short revents,
		      int64_t now)
{
	return probe_conn_event(c, revents, now, c == &a->md ? algo_md : algo_exec,
				a);
}

static void algo_summary(struct algo *a, const struct opts *o,
			 struct probe_ctx *x)
{
	unsigned pflags = 0;
	struct printer *p = print_create(stdout, print_format_from_opts(o, &pflags),
					 pflags);
	uint64_t lost = 0;

	print_text(p, "tapless-algo: ");
	print_uint(p, "md_received", "%llu market data messages", a->md_msgs);
	print_uint(p, "bids", ", %llu bids", a->bids);
	print_uint(p, "bids_000", ", %llu at .000\n", a->bids_000);
	print_uint(p, "buys", "orders: %llu BUY", a->buys);
	print_uint(p, "sells", ", %llu SELL", a->sells);
	print_uint(p, "reports", "; %llu execution reports", a->reports);
	print_uint(p, "new", " (%llu new", a->news);
	print_uint(p, "fills_buy", ", %llu BUY filled", a->fills_buy);
	print_uint(p, "fills_sell", ", %llu SELL filled", a->fills_sell);
	print_uint(p, "rejects", ", %llu rejected)\n", a->rejects);
	if (a->md.fs)
		lost += probe_conn_print(p, &a->md);
	if (a->ord.fs)
		lost += probe_conn_print(p, &a->ord);
	lost += probe_tx_print(p, x);
	print_uint(p, "stamps_lost", "stamps lost: %llu\n", lost);
	print_destroy(p);
}

static int algo_connect(struct algo *a, const struct opts *o,
			const struct probe_ctx *x)
{
	struct fixsess_config fc = {
		.sender = opts_str(o, "comp_id"), .target = opts_str(o, "peer_comp_id"),
		.heartbeat_s = (int)opts_int(o, "heartbeat"),
		.max_msg = (size_t)opts_int(o, "max_msg"), .initiator = true,
		.time_digits = algo_time_digits[opts_enum(o, "time_unit")],
	};
	struct probe_conn *conn[2] = { &a->md, &a->ord };
	static const char *const names[2] = { "md", "orders" };
	int64_t end;
	char err[PROBE_ERRBUF];

	for (int i = 0; i < 2; i++) {
		int fd = probe_connect(opts_str(o, i ? "ord" : "md"),
				       (int)(opts_ns(o, "connect_timeout") / 1000000), err);

		if (fd < 0 || probe_conn_open(conn[i], names[i], fd, x, &fc, err)) {
			log_err("%s", err);
			return -EIO;
		}
		if (fixsess_logon(conn[i]->fs, ts_now_mono())) {
			log_err("%s session: sending Logon failed", names[i]);
			return -EIO;
		}
	}
	end = ts_now_mono() + 10000000000LL;
	while (!algo_stop && ts_now_mono() < end) {
		struct pollfd p[2] = { { .fd = a->md.fd, .events = POLLIN },
				       { .fd = a->ord.fd, .events = POLLIN } };
		int n = 0;

		poll(p, 2, 100);
		for (int i = 0; i < 2; i++) {
			if (algo_event(a, conn[i], p[i].revents, ts_now_mono()))
				return -EPROTO;
			n += fixsess_state(conn[i]->fs) == FIXSESS_ACTIVE;
		}
		if (n == 2)
			return 0;
	}
	log_err("the venue did not answer both Logons in 10 s");
	return -ETIMEDOUT;
}

/* Trade until the venue logs out of market data, --duration, or a signal. */
static int algo_run(struct algo *a, int64_t dur_ns)
{
	int64_t end = dur_ns ? ts_now_mono() + dur_ns : 0;
	int64_t stamps_due = 0;

	while (!algo_stop) {
		struct pollfd p[2] = { { .fd = a->md.fd, .events = POLLIN },
				       { .fd = a->ord.fd, .events = POLLIN } };
		int64_t now;
		int rc = 0;

		if (poll(p, 2, 100) < 0 && errno != EINTR)
			return -errno;
		now = ts_now_mono();
		for (int i = 0; i < 2 && !rc; i++)
			rc = algo_event(a, i ? &a->ord : &a->md, p[i].revents, now);
		/* Stamps waiting raise POLLERR, and probe_conn_event reaps
		 * them then; this sweep only writes out sends whose stamp
		 * is late or lost. Reaping on every wake-up cost two system
		 * calls per market data message. */
		if (now >= stamps_due) {
			probe_conn_stamps(&a->md, now);
			probe_conn_stamps(&a->ord, now);
			stamps_due = now + 20000000;
		}
		if (rc)
			return rc;	/* logged; a Logout first is not this */
		/* The venue logging out of either session (the end of its
		 * run, or its peer-logout path) ends ours cleanly. */
		if (fixsess_state(a->md.fs) != FIXSESS_ACTIVE ||
		    fixsess_state(a->ord.fs) != FIXSESS_ACTIVE)
			return *fixsess_error(a->md.fs) || *fixsess_error(a->ord.fs) ?
			       -ECONNRESET : 0;
		rc = fixsess_tick(a->md.fs, now);
		if (!rc)
			rc = fixsess_tick(a->ord.fs, now);
		if (rc) {
			log_err("heartbeat: %s", strerror(-rc));
			return rc;
		}
		if (end && now >= end)
			return 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts *o;
	struct algo *a = xcalloc(1, sizeof(*a));
	struct probe_ctx x = { 0 };
	int rc = 1, first;
	char err[PROBE_ERRBUF];

	a->md.fd = a->ord.fd = -1;
	o = prog_start(&algo_prog, argc, argv, &first);
	if (!o) {
		rc = first;
		goto out;
	}
	a->qty = opts_int(o, "qty");
	if (probe_start(&x, o, prog_version(), err)) {
		fprintf(stderr, "tapless-algo: %s\n", err);
		rc = 2;
		goto out;
	}
	prog_signals(algo_signal, NULL);
	rc = 2;
	if (algo_connect(a, o, &x) || algo_run(a, opts_ns(o, "duration")))
		goto done;
	rc = 0;
done:
	/* Reports still on the way are read; the Logouts are answered. */
	{
		struct probe_conn *const conns[2] = { &a->md, &a->ord };
		const fixsess_app_fn fns[2] = { algo_md, algo_exec };

		probe_end(conns, fns, 2, a, "algo stopping");
	}
	probe_conn_stamps(&a->md, -1);
	probe_conn_stamps(&a->ord, -1);
	algo_summary(a, o, &x);
	if (probe_finish(&x)) {
		fprintf(stderr, "tapless-algo: %s: could not be completed\n",
			opts_str(o, "write"));
		rc = 2;
	}
out:
	probe_conn_close(&a->md);
	probe_conn_close(&a->ord);
	free(a);
	opts_destroy(o);
	return rc;
}
