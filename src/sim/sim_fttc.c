/* sim_fttc.c — the FTTC workload sim runs: the algo connects and logs on
 * to the venue; the venue publishes market data at the configured rates;
 * every 1000th tick triggers a BUY, its New and Filled, then a SELL with
 * its own; FIX 4.4 throughout.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/rng.h"
#include "base/xalloc.h"
#include "fix/fix.h"
#include "sim/sim_private.h"

#define LOGON_PS (100 * 1000 * PS_PER_NS)	/* algo logs on at 100 us */
#define MD_START_PS (1000 * 1000 * PS_PER_NS)	/* market data from 1 ms */
#define RUN_PAUSE_PS PS_PER_S		/* between runs of --rates */

/* SendingTime (52) and TransactTime (60): now, in sim time. */
static const char *sending_time(struct sim *s, char out[FIX_UTC_LEN])
{
	return fix_utc_time(&s->utc, sim_start_ns(s) + sim_floordiv(s->now, PS_PER_NS),
			    out);
}

static void sim_fix_head(struct sim *s, struct fix_writer *w, char *buf,
			 struct flow *f, const char *type)
{
	char t[32];

	fix_begin(w, buf, MSG_CAP, "FIX.4.4", type);
	fix_add_str(w, 49, f->sender);
	fix_add_str(w, 56, f->target);
	fix_add_int(w, 34, f->fix_seq++);
	fix_add_str(w, 52, sending_time(s, t));
}

static bool sim_fix_done(struct sim *s, struct fix_writer *w, struct msgref *m)
{
	m->buf = fix_end(w, &m->len);
	if (!m->buf) {
		sim_sys(s, -EMSGSIZE, "building a FIX message");
		return false;
	}
	return true;
}

static struct trade *trade_get(struct sim *s, uint32_t t)
{
	while (t >= s->ntr) {
		if (s->ntr == s->trcap) {
			s->trcap = s->trcap ? s->trcap * 2 : 64;
			s->tr = xrealloc(s->tr, s->trcap * sizeof(*s->tr));
		}
		memset(&s->tr[s->ntr++], 0, sizeof(*s->tr));
	}
	return &s->tr[t];
}

static int64_t md_due_ps(const struct sim *s, int64_t i)
{
	/* Message i (from 0) of the run: i * 1e9 / rate ns, rounded down. */
	return s->run_start_ps + i * NS_PER_S / s->c->rates[s->run] * PS_PER_NS;
}

static int64_t md_run_n(const struct sim *s, unsigned run)
{
	if (s->c->messages > 0)
		return s->c->messages;
	return llround((double)s->c->rates[run] * s->c->duration_s);
}

int sim_symbols(struct sim *s, const char *list, char err[SIM_ERRBUF])
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (!n || n >= sizeof(s->sym[0]) || s->nsym == SIM_MAX_SYMBOLS ||
		    memchr(p, '\x01', n) || memchr(p, '=', n))
			return sim_fail(err, "--symbols: '%s': 1 to %d names of "
					"1 to 15 characters, without = or SOH",
					list, SIM_MAX_SYMBOLS);
		memcpy(s->sym[s->nsym], p, n);
		s->sym[s->nsym++][n] = 0;
		p += n + (p[n] == ',');
	}
	return s->nsym ? 0 : sim_fail(err, "--symbols: empty list");
}

/* The script: connect, log on, publish. */
void sim_fttc_start(struct sim *s)
{
	sim_ev_push(s, 0, EV_CTRL, CONN_MD, 0, NULL);
	sim_ev_push(s, 10 * 1000 * PS_PER_NS, EV_CTRL, CONN_ORD, 0, NULL);
	sim_ev_push(s, LOGON_PS, EV_LOGON, CONN_MD, 0, NULL);
	sim_ev_push(s, LOGON_PS + 10 * 1000 * PS_PER_NS, EV_LOGON, CONN_ORD, 0, NULL);
	s->run_start_ps = MD_START_PS;
	s->run_n = md_run_n(s, 0);
	sim_ev_push(s, MD_START_PS, EV_MD, 0, 0, NULL);
}

void sim_ev_md(struct sim *s)
{
	struct flow *f = &s->f[sim_flow_index(CONN_MD, DIR_S2C)];
	uint64_t n = ++s->md_n;
	unsigned sym = (unsigned)(n % s->nsym);
	struct fix_writer w;
	struct msgref m;

	s->run_i++;
	sim_fix_head(s, &w, s->msg[0], f, "X");
	fix_add_int(&w, 262, 1);
	fix_add_int(&w, 268, 1);
	fix_add_str(&w, 279, "0");
	fix_add_str(&w, 269, "0");
	fix_add_str(&w, 55, s->sym[sym]);
	fix_add_fixed(&w, 270, (int64_t)n, 3);
	fix_add_int(&w, 271, 100);
	if (!sim_fix_done(s, &w, &m))
		return;
	s->last_px[sym] = (int64_t)n;
	m.meta = (struct mstart){ MK_MD, 0, (uint8_t)sym, (int16_t)s->run, 0, 0, 0 };
	if (n % 1000 == 0) {
		uint32_t t = (uint32_t)(n / 1000 - 1);
		struct trade *tr = trade_get(s, t);

		tr->bucket = (int16_t)s->run;
		tr->sym = (uint8_t)sym;
		m.meta.kind = MK_TRIGGER;
		m.meta.trade = t;
		sim_react_add(f, f->snd_nxt + m.len, R_BID, t, 0);
	}
	sim_flow_send(s, sim_flow_index(CONN_MD, DIR_S2C), &m, 1, s->run_i < s->run_n);

	/* The next one. */
	if (s->run_i < s->run_n) {
		sim_ev_push(s, md_due_ps(s, s->run_i) +
			llround(rng_exp(&s->app, (double)s->c->md_jitter_ns) * PS_PER_NS),
			EV_MD, 0, 0, NULL);
	} else if (s->run + 1 < s->c->nrates) {
		s->run_start_ps = md_due_ps(s, s->run_n) + RUN_PAUSE_PS;
		s->run++;
		s->run_i = 0;
		s->run_n = md_run_n(s, s->run);
		sim_ev_push(s, s->run_start_ps, EV_MD, 0, 0, NULL);
	}
}

void sim_ev_order(struct sim *s, uint32_t t, int side)
{
	struct flow *f = &s->f[sim_flow_index(CONN_ORD, DIR_C2S)];
	struct trade *tr = &s->tr[t];
	struct fix_writer w;
	struct msgref m;
	char id[32], tt[32];

	tr->clordid[side] = ++s->clordid;
	snprintf(id, sizeof(id), "TL%" PRIu64, tr->clordid[side]);
	sim_fix_head(s, &w, s->msg[0], f, "D");
	fix_add_str(&w, 11, id);
	fix_add_str(&w, 55, s->sym[tr->sym]);
	fix_add_str(&w, 54, side ? "2" : "1");
	fix_add_str(&w, 60, sending_time(s, tt));
	fix_add_int(&w, 38, s->c->qty);
	fix_add_str(&w, 40, "1");
	if (!sim_fix_done(s, &w, &m))
		return;
	m.meta = (struct mstart){ MK_ORDER, (uint8_t)side, tr->sym, tr->bucket, t, 0, 0 };
	sim_react_add(f, f->snd_nxt + m.len, R_ORDER, t, side);
	sim_flow_send(s, sim_flow_index(CONN_ORD, DIR_C2S), &m, 1, false);
}

static bool exec_report(struct sim *s, struct flow *f, char *buf,
			const struct trade *tr, int side, bool filled,
			int64_t px, struct msgref *m)
{
	const int64_t qty = s->c->qty;
	struct fix_writer w;
	char id[32];

	snprintf(id, sizeof(id), "TL%" PRIu64, tr->clordid[side]);
	sim_fix_head(s, &w, buf, f, "8");
	fix_add_int(&w, 37, (int64_t)s->venue_orders);
	fix_add_int(&w, 17, (int64_t)++s->exec_id);
	fix_add_str(&w, 150, filled ? "F" : "0");
	fix_add_str(&w, 39, filled ? "2" : "0");
	fix_add_str(&w, 11, id);
	fix_add_str(&w, 55, s->sym[tr->sym]);
	fix_add_str(&w, 54, side ? "2" : "1");
	fix_add_int(&w, 38, qty);
	if (filled) {
		fix_add_int(&w, 32, qty);
		fix_add_fixed(&w, 31, px, 3);
	}
	fix_add_int(&w, 14, filled ? qty : 0);
	fix_add_int(&w, 151, filled ? 0 : qty);
	fix_add_fixed(&w, 6, filled ? px : 0, 3);
	return sim_fix_done(s, &w, m);
}

void sim_ev_reports(struct sim *s, uint32_t t, int side)
{
	int fi = sim_flow_index(CONN_ORD, DIR_S2C);
	struct flow *f = &s->f[fi];
	struct trade *tr = &s->tr[t];
	int64_t px = s->last_px[tr->sym];
	struct msgref m[2];

	s->venue_orders++;
	if (!exec_report(s, f, s->msg[0], tr, side, false, px, &m[0]) ||
	    !exec_report(s, f, s->msg[1], tr, side, true, px, &m[1]))
		return;
	m[0].meta = (struct mstart){ MK_NEW, (uint8_t)side, tr->sym, tr->bucket, t, 0, 0 };
	m[1].meta = (struct mstart){ MK_FILL, (uint8_t)side, tr->sym, tr->bucket, t, 0, 0 };
	if (rng_chance(&s->app, s->c->coalesce)) {
		if (side == 0)
			sim_react_add(f, f->snd_nxt + m[0].len + m[1].len, R_FILL, t, 0);
		sim_flow_send(s, fi, m, 2, false);
	} else {
		sim_flow_send(s, fi, &m[0], 1, true);
		if (side == 0)
			sim_react_add(f, f->snd_nxt + m[1].len, R_FILL, t, 0);
		sim_flow_send(s, fi, &m[1], 1, false);
	}
}

void sim_ev_logon(struct sim *s, int conn, int dir)
{
	int fi = sim_flow_index(conn, dir);
	struct flow *f = &s->f[fi];
	struct fix_writer w;
	struct msgref m;

	sim_fix_head(s, &w, s->msg[0], f, "A");
	fix_add_int(&w, 98, 0);
	fix_add_int(&w, 108, 30);
	if (!sim_fix_done(s, &w, &m))
		return;
	m.meta = (struct mstart){ MK_LOGON, 0, 0, -1, 0, 0, 0 };
	if (dir == DIR_C2S)
		sim_react_add(f, f->snd_nxt + m.len, R_LOGON, (uint32_t)conn, 0);
	sim_flow_send(s, fi, &m, 1, false);
}
