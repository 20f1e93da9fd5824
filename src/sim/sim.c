/* sim.c — see sim.h and tapless-sim(1).
 *
 * A discrete-event simulation in true time (picoseconds since the start,
 * UTC). Applications (the venue publishing market data and answering
 * orders, the algo trading) send FIX messages on two TCP connections; each
 * send is cut into segments of at most MSS bytes; a segment leaves its NIC
 * when the NIC is free (frames never overlap on a link), crosses the cables
 * and the switch, and arrives at the other NIC no earlier than the previous
 * frame on that link has finished (the switch's egress is FIFO). The sender's
 * capture gets the frame at its TX instant, the receiver's at its arrival,
 * each stamped by the host's clock model. A tap on a host gets both at their
 * instants on the wire (before any receive stack delay), stamped by the
 * tap's clock, through the same kind of queue as a host's.
 *
 * Events are handled in time order and every frame they create has a time at
 * or after the event's, so a record can be written once no future record of
 * its host can have a smaller stamp: each host keeps a small heap of records
 * ordered by stamp, flushed up to (now + the host's lowest clock error).
 *
 * The receiving application sees bytes in order (TCP): a message is
 * delivered when every segment up to its end has arrived. Because arrivals
 * are FIFO per link, the segments of a flow arrive in the order they are
 * committed, so a message is delivered at the arrival of the last segment
 * committed when it becomes complete.
 */
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "fix/fix.h"
#include "files/frame.h"
#include "base/hist.h"
#include "ptp/journal.h"
#include "files/pcapng.h"
#include "base/print.h"
#include "base/rng.h"
#include "base/summary.h"
#include "sim/swmodel.h"
#include "files/topo.h"
#include "stamp/ts.h"
#include "base/wholefile.h"
#include "base/xalloc.h"

#define PS_PER_NS 1000LL
#define PS_PER_S 1000000000000LL
#define NS_PER_S 1000000000LL
#define TAI_UTC_NS (37 * NS_PER_S)	/* TAI - UTC since 2017 */
#define NS_PER_M 4.9			/* light in fibre */
#define UNSYNC_NS 5000.0		/* extra clock error out of sync */
#define RTO_PS (200 * 1000 * PS_PER_NS)	/* retransmission after 200 us */
#define KERNEL_PS (2000 * PS_PER_NS)	/* handshake answers */
#define ACK_DELAY_PS (500 * PS_PER_NS)	/* pure ACK after data, + exp */
#define ACK_JITTER_NS 500.0
#define LOGON_PS (100 * 1000 * PS_PER_NS)	/* algo logs on at 100 us */
#define MD_START_PS (1000 * 1000 * PS_PER_NS)	/* market data from 1 ms */
#define RUN_PAUSE_PS PS_PER_S		/* between runs of --rates */
#define JOURNAL_DELAY_NS 500
#define SIM_GM "001b21.fffe.7a5e01"
#define SIM_USERAPPL "tapless sim 0.1"
#define MSG_CAP 1024			/* one FIX message */
#define SEG_STARTS 4			/* message starts in one segment */
#define MSS_MAX 8960

/* ---------------------------------------------------------------- config */

static const char *const sim_hosts[SIM_HOSTS] = { "algo", "venue" };
static const uint8_t sim_addr[SIM_HOSTS][4] = { { 198, 18, 0, 1 }, { 198, 18, 0, 2 } };

/* The switch models are swmodel's presets (the FTTC figures, shared with
 * tapless-swemu); "none" is back to back. */
static const struct swmodel_preset sim_no_switch = { .name = "none" };
static const struct swmodel_preset *const sim_switches[SIM_SWITCH_COUNT] = {
	[SIM_SWITCH_NONE] = &sim_no_switch,
	[SIM_SWITCH_ARISTA_7124SX] = &swmodel_presets[SWMODEL_ARISTA_7124SX],
	[SIM_SWITCH_MELLANOX_SX1036] = &swmodel_presets[SWMODEL_MELLANOX_SX1036],
	[SIM_SWITCH_GNODAL_GS7200] = &swmodel_presets[SWMODEL_GNODAL_GS7200],
};

static const char *const sim_formats[SIM_FMT_COUNT] = { "pcapng", "pcap", "pcap-us" };

const char *sim_host_name(enum sim_host_id h)
{
	return (unsigned)h < SIM_HOSTS ? sim_hosts[h] : "?";
}

const char *sim_switch_name(enum sim_switch s)
{
	return (unsigned)s < SIM_SWITCH_COUNT ? sim_switches[s]->name : "?";
}

int sim_switch_from_name(const char *name)
{
	for (int i = 0; i < SIM_SWITCH_COUNT; i++)
		if (!strcmp(name, sim_switches[i]->name))
			return i;
	return -1;
}

void sim_config_init(struct sim_config *c)
{
	static const double offset[SIM_HOSTS] = { 20, -15 };

	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->rates[0] = 1000;
	c->nrates = 1;
	c->duration_s = 5;
	c->symbols = "AAPL,MSFT,GOOG";
	c->algo_reaction_ns = 3000;
	c->algo_reaction_exp_ns = 500;
	c->venue_reaction_ns = 2000;
	c->venue_reaction_exp_ns = 300;
	c->coalesce = 0.5;
	c->sw = SIM_SWITCH_ARISTA_7124SX;
	c->cable_m = 2;
	c->speed_bps = 10000000000LL;
	c->start_s = 1763900000;
	c->mss = 1448;
	c->pure_acks = 0.1;
	c->journal_interval_s = 1;
	c->qty = 100;
	for (int h = 0; h < SIM_HOSTS; h++) {
		struct sim_host_config *hc = &c->host[h];

		hc->clock.offset_ns = offset[h];
		hc->clock.wander_ns = 10;
		hc->clock.period_s = 60;
		hc->clock.noise_ns = 2;
		hc->clock.quantum_ps = 8 * PS_PER_NS;
		hc->tai = true;
		hc->format = SIM_FMT_PCAPNG;
	}
	/* An Endace DAG: GPS-disciplined, 7.5 ns clock. */
	c->tap_clock.period_s = 60;
	c->tap_clock.quantum_ps = 7500;
}

static int sim_fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sim_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool sim_number(const char *s, size_t n, double *v)
{
	char buf[64], *end;

	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*v = strtod(buf, &end);
	return !errno && *end == 0 && isfinite(*v) && !strchr(buf, ' ');
}

int sim_parse_rates(struct sim_config *c, const char *text, char *err,
		    size_t len)
{
	const char *p = text;
	unsigned n = 0;

	while (*p) {
		size_t k = strcspn(p, ",");
		double v;

		if (n == SIM_MAX_RATES)
			return sim_fail(err, len, "--rates: more than %d rates",
					SIM_MAX_RATES);
		if (!sim_number(p, k, &v) || v < 1 || v > 10000000 ||
		    v != floor(v))
			return sim_fail(err, len, "--rates: '%.*s' is not a rate "
					"(1 to 10000000 messages/s)", (int)k, p);
		c->rates[n++] = (int64_t)v;
		p += k + (p[k] == ',');
	}
	if (!n)
		return sim_fail(err, len, "--rates: no rate given");
	c->nrates = n;
	return 0;
}

int sim_parse_speed(const char *text, int64_t *bps)
{
	double v;

	/* The topology file's grammar, since sim writes the speed there. */
	if (topo_parse_speed(text, &v) || v > 1e12 || v != floor(v))
		return -EINVAL;
	*bps = (int64_t)v;
	/* Serialisation in whole picoseconds per byte. */
	if ((8 * PS_PER_S) % *bps)
		return -EINVAL;
	return 0;
}

/* "HOST" then sep: the host's index and the rest after sep. */
static int sim_host_prefix(const char *opt, const char *text, char sep,
			   const char **rest, char *err, size_t len)
{
	const char *s = strchr(text, sep);

	for (int h = 0; s && h < SIM_HOSTS; h++)
		if ((size_t)(s - text) == strlen(sim_hosts[h]) &&
		    !strncmp(text, sim_hosts[h], (size_t)(s - text))) {
			*rest = s + 1;
			return h;
		}
	return sim_fail(err, len, "--%s: '%s': expected algo%c... or venue%c...",
			opt, text, sep, sep);
}

/* A quantum in ns with at most 3 decimals, in ps; false if it has more. */
static bool sim_quantum_ps(double v, int64_t *ps)
{
	double x = v * PS_PER_NS;

	if (!(v >= 0.001 && v <= 1e6))
		return false;
	*ps = llround(x);
	return fabs(x - (double)*ps) < 1e-3;
}

int sim_parse_clock(struct sim_config *c, const char *text, char *err,
		    size_t len)
{
	const char *p;
	struct sim_clock k, *dst;
	int h;

	if (!strncmp(text, "tap:", 4)) {
		dst = &c->tap_clock;
		p = text + 4;
	} else {
		h = sim_host_prefix("clock", text, ':', &p, err, len);
		if (h < 0)
			return sim_fail(err, len, "--clock: '%s': expected algo:..., "
					"venue:... or tap:...", text);
		dst = &c->host[h].clock;
	}
	k = *dst;
	while (*p) {
		size_t n = strcspn(p, ","), klen = strcspn(p, "=");
		const char *range;
		double v;
		bool ok;

		if (klen >= n || !sim_number(p + klen + 1, n - klen - 1, &v))
			return sim_fail(err, len, "--clock: '%.*s' is not KEY=NUMBER",
					(int)n, p);
#define KEY(s) (klen == strlen(s) && !strncmp(p, s, klen))
		if (KEY("offset")) {
			ok = fabs(v) <= 1e9;
			k.offset_ns = v;
			range = "ns, -1e9 to 1e9";
		} else if (KEY("rate")) {
			ok = fabs(v) <= 1e6;
			k.rate_ppb = v;
			range = "ppb, -1e6 to 1e6";
		} else if (KEY("wander")) {
			ok = fabs(v) <= 1e9;
			k.wander_ns = v;
			range = "ns, -1e9 to 1e9";
		} else if (KEY("period")) {
			ok = v > 0 && v <= 1e9;
			k.period_s = v;
			range = "s, above 0, up to 1e9";
		} else if (KEY("noise")) {
			ok = v >= 0 && v <= 1e6;
			k.noise_ns = v;
			range = "ns, 0 to 1e6";
		} else if (KEY("quantum")) {
			ok = sim_quantum_ps(v, &k.quantum_ps);
			range = "ns, 0.001 to 1e6, at most 3 decimals";
		} else {
			return sim_fail(err, len, "--clock: '%.*s': unknown key (offset, "
					"rate, wander, period, noise, quantum)", (int)n, p);
		}
		if (!ok)
			return sim_fail(err, len, "--clock: '%.*s': %.*s out of range (%s)",
					(int)n, p, (int)klen, p, range);
#undef KEY
		p += n + (p[n] == ',');
	}
	*dst = k;
	return 0;
}

int sim_parse_tap(struct sim_config *c, const char *text, char *err,
		  size_t len)
{
	for (int h = 0; h < SIM_HOSTS; h++)
		if (!strcmp(text, sim_hosts[h])) {
			c->tap[h] = true;
			return 0;
		}
	return sim_fail(err, len, "--tap: '%s': expected algo or venue", text);
}

int sim_parse_timescale(struct sim_config *c, const char *text, char *err,
			size_t len)
{
	const char *v;
	int h = sim_host_prefix("timescale", text, '=', &v, err, len);

	if (h < 0)
		return h;
	if (strcmp(v, "tai") && strcmp(v, "utc"))
		return sim_fail(err, len, "--timescale: '%s': expected tai or utc", v);
	c->host[h].tai = !strcmp(v, "tai");
	return 0;
}

int sim_parse_unsync(struct sim_config *c, const char *text, char *err,
		     size_t len)
{
	const char *v, *dash;
	int h = sim_host_prefix("unsync", text, '=', &v, err, len);
	struct sim_host_config *hc;
	double from, to;

	if (h < 0)
		return h;
	hc = &c->host[h];
	dash = strchr(v, '-');
	if (!dash || !sim_number(v, (size_t)(dash - v), &from) ||
	    !sim_number(dash + 1, strlen(dash + 1), &to) || from < 0 || to <= from ||
	    to > 1e6)
		return sim_fail(err, len, "--unsync: '%s': expected FROM-TO, seconds "
				"after the start, FROM < TO", v);
	if (hc->nunsync == SIM_MAX_UNSYNC)
		return sim_fail(err, len, "--unsync: more than %d windows for %s",
				SIM_MAX_UNSYNC, sim_hosts[h]);
	hc->unsync[hc->nunsync].from_s = from;
	hc->unsync[hc->nunsync++].to_s = to;
	return 0;
}

int sim_parse_start_late(struct sim_config *c, const char *text, char *err,
			 size_t len)
{
	const char *v;
	int h = sim_host_prefix("start-late", text, '=', &v, err, len);
	double s;

	if (h < 0)
		return h;
	if (!sim_number(v, strlen(v), &s) || s < 0 || s > 1e6)
		return sim_fail(err, len, "--start-late: '%s': expected seconds >= 0", v);
	c->host[h].start_late_s = s;
	return 0;
}

int sim_parse_format(struct sim_config *c, const char *text, char *err,
		     size_t len)
{
	const char *v;
	int h = sim_host_prefix("format", text, '=', &v, err, len);

	if (h < 0)
		return h;
	for (int f = 0; f < SIM_FMT_COUNT; f++)
		if (!strcmp(v, sim_formats[f])) {
			c->host[h].format = (enum sim_format)f;
			return 0;
		}
	return sim_fail(err, len, "--format: '%s': expected pcapng, pcap or pcap-us", v);
}

/* ----------------------------------------------------------- structures */

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Nearest nanosecond of a picosecond count, halves up. */
static int64_t ps_to_ns(int64_t ps)
{
	return floordiv(ps + PS_PER_NS / 2, PS_PER_NS);
}

/* Where the first transmission or arrival of a segment was stamped. */
struct stamp_at {
	int64_t stamp, ps, wire_ps;
	bool capt, set;
};

enum mkind { MK_LOGON, MK_MD, MK_TRIGGER, MK_ORDER, MK_NEW, MK_FILL };

struct mstart {
	uint8_t kind;
	uint8_t side;		/* 0 BUY, 1 SELL */
	uint8_t sym;
	int16_t bucket;		/* run, or -1 */
	uint32_t trade;		/* orders and reports; MK_TRIGGER */
	uint64_t end;		/* offset of the message's end in its flow */
};

/* A frame in a host's output queue. For the transactions, computed from
 * the algo's capture in file order: the TCP payload it carries (flow, off,
 * plen) and, when it is their first copy in this capture (the one a reader
 * uses), the messages whose first byte it carries (tag). */
struct rec {
	int64_t stamp;		/* as written */
	int64_t t_ps;		/* true instant */
	uint64_t order;
	uint32_t len;
	uint8_t dir;
	uint8_t ntag;
	int8_t flow;		/* -1: no FIX payload */
	uint32_t plen;
	uint64_t off;
	struct mstart tag[SEG_STARTS];
	struct rec *next;	/* free list */
	uint8_t data[];
};

/* A segment kept past its first transmission (held for reordering, lost,
 * or to be sent again). */
struct seg {
	struct seg *next;	/* free list */
	int flow;
	uint64_t off;		/* payload offset in the flow */
	uint32_t len, flen;
	unsigned nstart;
	struct mstart start[SEG_STARTS];
	struct stamp_at tx1, rx1;	/* first transmission, first arrival */
	bool lost, retrans;
	uint8_t frame[];
};

struct rcvent {
	uint64_t off, end;
	int64_t t_ps;
};

enum react_type { R_LOGON, R_BID, R_ORDER, R_FILL };

struct react {
	uint64_t end;
	uint8_t type, side;
	uint32_t arg;
};

enum { CONN_MD, CONN_ORD, CONNS };
enum { DIR_C2S, DIR_S2C };	/* algo is the client of both */

struct flow {
	int src, dst, conn;
	struct frame_flow ff;
	uint32_t isn;
	uint64_t snd_nxt;	/* payload bytes sent (first transmissions) */
	int64_t fix_seq;	/* next MsgSeqNum */
	const char *sender, *target;
	/* The receiver's view. */
	struct rcvent *rq;
	size_t rqn, rqcap;
	uint64_t rcv_nxt;
	struct seg **unc;	/* not yet arrived: held or lost */
	size_t uncn, unccap;
	struct seg *held;
	int64_t last_commit_ps;
	struct react *pend;	/* ring */
	size_t ph, pn, pcap;
};

struct host {
	int id;
	const struct sim_host_config *cfg;
	struct rng rng;		/* clock noise */
	double phase;
	int64_t unsync_ps[SIM_MAX_UNSYNC][2];
	int64_t tai_ns, res_ns;
	int64_t min_err_ns;	/* no stamp is below true time + this */
	int64_t err_lo_ns;	/* stamp - true time, in sync: at least */
	int64_t err_hi_ns;	/* and at most */
	int64_t cap_start_ps;
	int64_t nic_free_ps, stack_last_ps;
	uint32_t noise_seq;
	struct rec **q;		/* heap by (stamp, t_ps, order) */
	size_t qn, qcap;
	struct pcapng_writer *ng;
	uint32_t ifid, ifid_in;	/* frames sent, received (the same but taps) */
	pcap_t *pc;
	pcap_dumper_t *pd;
	char file[32];
	char *path, *tmp;
	uint64_t packets;
	bool tap;		/* an optical tap on a host's fibres */
};

enum ev_type { EV_MD, EV_CTRL, EV_LOGON, EV_LOGON_REPLY, EV_BUY, EV_SELL,
	       EV_REPORTS, EV_ACK, EV_RETRANS };

struct event {
	int64_t t;
	uint64_t order;
	uint8_t type;
	uint8_t a;
	uint32_t b;
	struct seg *seg;
};

struct trade {
	int16_t bucket;
	uint8_t sym;
	uint64_t clordid[2];
	/* As the algo's capture has them: first-byte stamps of the orders
	 * and of their first New and Filled. */
	struct stamp_at tx[2], ack[2], fill[2];
};

/* The algo's capture read back as it is written, the way a reader
 * reassembles it: each flow's bytes in order, a message taken when its
 * last byte is in (with the stamp of its first byte). */
struct trk_msg {
	uint64_t end;
	struct stamp_at at;
	struct mstart m;
};

struct trk {
	bool started;
	uint64_t cont;		/* bytes in order up to here */
	struct { uint64_t off, end; } *ooo;	/* beyond a hole, by offset */
	size_t nooo, cooo;
	struct trk_msg *pend;	/* first byte seen, not whole: by end */
	size_t ph, pn, pcap;
};

/* The latest bids (fills of BUYs) taken, per symbol: a BUY (SELL) is
 * measured from the latest one stamped before it, as the correlator does
 * it (it keeps the latest 64). */
#define LATEST_RING 64
struct latest {
	struct {
		struct stamp_at at;
		int64_t trade;	/* the trade it triggered, or -1 */
	} v[LATEST_RING];
	unsigned head, n;
};

/* Distributions, per bucket (a run of --rates, or the Logons). */
enum { D_HOP_ST = 0, D_HOP_TR = 2, D_HOP_OUT = 4, D_SW = 6, D_TR_ST = 8,
       D_TR_TR = 12, D_COUNT = 16 };
enum { TR_TICK, TR_FILL_SELL, TR_ACK, TR_FILL, TR_COUNT };
static const char *const tr_names[TR_COUNT] = {
	"tick_to_trade", "fill_to_sell", "order_to_ack", "order_to_fill",
};

struct dist {
	int64_t *v;
	size_t n, cap;
	struct hist *h;
};

struct bucket {
	struct dist d[D_COUNT];
	double maxerr[SIM_HOSTS];	/* ns, in-sync hop messages */
	bool has_err[SIM_HOSTS];
	uint64_t not_trigger;	/* BUYs whose latest bid was not theirs */
};

struct faults {
	uint64_t retransmitted, lost, coalesced, split, reordered, pure_acks,
		 non_fix;
};

/* What the tap of a host saw against the host's capture: host stamp - tap
 * stamp (- 37 s on TAI) of the frames in both, those it sent and those it
 * received, and the true time of the earliest. */
enum { REF_TX, REF_RX, REF_DISTS };
struct tapref {
	struct dist d[REF_DISTS];
	int64_t first_ps;
	bool any;
};

struct sim {
	const struct sim_config *c;
	struct host h[SIM_HOSTS];
	struct host tap[SIM_HOSTS];	/* those of c->tap[] */
	struct sim_host_config tapcfg;	/* theirs: UTC, pcapng, from start */
	struct tapref ref[SIM_HOSTS];
	struct flow f[CONNS * 2];
	int64_t egress_free[SIM_HOSTS];	/* by receiving host */
	struct rng net, app, fault, misc;
	struct event *ev;
	size_t evn, evcap;
	uint64_t evorder, recorder;
	struct rec *recfree;
	struct seg *segfree;
	size_t frame_cap;
	uint8_t *fbuf;
	char msg[2][MSG_CAP];
	char sendbuf[2 * MSG_CAP];
	int64_t now, first_ps, last_ps;
	bool any_packet;
	/* Link. */
	int64_t ps_per_byte, cables_ps;
	int ncables;
	/* Market data. */
	char sym[SIM_MAX_SYMBOLS][16];
	unsigned nsym;
	int64_t last_px[SIM_MAX_SYMBOLS];
	unsigned run;
	int64_t run_start_ps, run_i, run_n;
	uint64_t md_n;
	/* Orders. */
	struct trade *tr;
	size_t ntr, trcap;
	uint64_t clordid, venue_orders, exec_id;
	bool lost_toggle, noise_toggle;
	/* Truth. */
	struct bucket *b;
	unsigned nb;
	struct faults fl;
	uint64_t fix_messages;
	struct trk trk[CONNS * 2];
	struct latest bid[SIM_MAX_SYMBOLS], fill[SIM_MAX_SYMBOLS];
	/* SendingTime cache. */
	int64_t st_sec;
	char st_buf[24];
	/* Errors. */
	int err;
	char *errbuf;
	size_t errlen;
};

static int sim_sys(struct sim *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The first system error: kept with its message, the run stops. */
static int sim_sys(struct sim *s, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (s->err)
		return s->err;
	s->err = err;
	if (s->errbuf && s->errlen) {
		va_start(ap, fmt);
		vsnprintf(s->errbuf, s->errlen, fmt, ap);
		va_end(ap);
		n = strlen(s->errbuf);
		snprintf(s->errbuf + n, s->errlen - n, ": %s", strerror(-err));
	}
	return err;
}

/* ---------------------------------------------------------------- clocks */

static bool host_unsync(const struct host *h, int64_t t_ps)
{
	for (unsigned i = 0; i < h->cfg->nunsync; i++)
		if (t_ps >= h->unsync_ps[i][0] && t_ps < h->unsync_ps[i][1])
			return true;
	return false;
}

static double host_theta(const struct host *h, int64_t t_ps)
{
	return 2 * M_PI * ((double)t_ps / (double)PS_PER_S) /
	       h->cfg->clock.period_s + h->phase;
}

/* The rate's part of the clock error at true time t_ps: ppb times seconds
 * since the start is ns. */
static double clock_rate_ns(const struct sim_clock *k, int64_t t_ps)
{
	return k->rate_ppb * ((double)t_ps / (double)PS_PER_S);
}

/* Whole ns a stamp can lose to the quantum (and to the floor to ns of a
 * fractional one). */
static int64_t clock_quantum_bound_ns(const struct sim_clock *k)
{
	int64_t q = (k->quantum_ps + PS_PER_NS - 1) / PS_PER_NS;

	return k->quantum_ps % PS_PER_NS ? q + 1 : q;
}

/* offset + rate (t - start) + wander sin at true time t_ps: the clock's
 * deterministic error when in sync. */
static double host_det_sync_ns(const struct host *h, int64_t t_ps)
{
	const struct sim_clock *k = &h->cfg->clock;
	double e = k->offset_ns;

	if (k->rate_ppb != 0)
		e += clock_rate_ns(k, t_ps);
	if (k->wander_ns != 0)
		e += k->wander_ns * sin(host_theta(h, t_ps));
	return e;
}

/* The deterministic part of the clock error at true time t_ps. */
static double host_det_ns(const struct host *h, int64_t t_ps)
{
	double e = host_det_sync_ns(h, t_ps);

	if (host_unsync(h, t_ps))
		e += UNSYNC_NS;
	return e;
}

/* The range of offset + rate t + wander sin over true times [a, b) ps (the
 * rate's and the wander's ranges added: a bound, exact without a rate). */
static void host_det_range(const struct host *h, int64_t a, int64_t b,
			   double *lo, double *hi)
{
	const struct sim_clock *k = &h->cfg->clock;
	double ta = host_theta(h, a), tb = host_theta(h, b), smax, smin;

	if (k->wander_ns == 0) {
		*lo = *hi = k->offset_ns;
	} else {
		smax = fmax(sin(ta), sin(tb));
		smin = fmin(sin(ta), sin(tb));
		/* A crest (pi/2 + 2k pi) or a trough (3pi/2 + 2k pi) inside. */
		if (ceil((ta - M_PI / 2) / (2 * M_PI)) <= floor((tb - M_PI / 2) / (2 * M_PI)))
			smax = 1;
		if (ceil((ta - 3 * M_PI / 2) / (2 * M_PI)) <= floor((tb - 3 * M_PI / 2) / (2 * M_PI)))
			smin = -1;
		*lo = k->offset_ns + fmin(k->wander_ns * smax, k->wander_ns * smin);
		*hi = k->offset_ns + fmax(k->wander_ns * smax, k->wander_ns * smin);
	}
	if (k->rate_ppb != 0) {
		double ra = clock_rate_ns(k, a), rb = clock_rate_ns(k, b);

		*lo += fmin(ra, rb);
		*hi += fmax(ra, rb);
	}
}

/* The stamp host h gives an event at true time t_ps, on its timescale. */
static int64_t host_stamp(struct host *h, int64_t t_ps, int64_t start_ns)
{
	const struct sim_clock *k = &h->cfg->clock;
	double e = host_det_ns(h, t_ps);
	int64_t ns, x;

	if (k->noise_ns > 0) {
		double z = rng_gauss(&h->rng);

		e += k->noise_ns * fmax(-4, fmin(4, z));
	}
	x = t_ps + llround(e * PS_PER_NS);
	if (k->quantum_ps % PS_PER_NS == 0) {
		int64_t q = k->quantum_ps / PS_PER_NS;

		ns = start_ns + h->tai_ns + floordiv(x, PS_PER_NS);
		ns = floordiv(ns, q) * q;
	} else {
		/* On a grid aligned to the start: ps since 1970 overflow. */
		ns = start_ns + h->tai_ns +
		     floordiv(floordiv(x, k->quantum_ps) * k->quantum_ps, PS_PER_NS);
	}
	if (h->res_ns > 1)
		ns = floordiv(ns, h->res_ns) * h->res_ns;
	return ns;
}

/* ------------------------------------------------------------- journals */

static int64_t sim_start_ns(const struct sim *s)
{
	return s->c->start_s * NS_PER_S;
}

static int64_t sim_interval_ns(const struct sim *s)
{
	return llround(s->c->journal_interval_s * NS_PER_S);
}

/* Sample j's time: one interval before the first packet, then every
 * interval. */
static int64_t sim_journal_time(const struct sim *s, int64_t j)
{
	return sim_start_ns(s) + s->first_ps / PS_PER_NS + (j - 1) * sim_interval_ns(s);
}

/* Sample j covers stamps in [t, t + interval) (UTC). It says sync 0 when
 * the host was out of sync at some time in that interval. */
static bool sim_journal_sync(const struct sim *s, const struct host *h,
			     int64_t t_ns)
{
	int64_t a = (t_ns - sim_start_ns(s)) * PS_PER_NS;
	int64_t b = a + sim_interval_ns(s) * PS_PER_NS;

	for (unsigned i = 0; i < h->cfg->nunsync; i++)
		if (a < h->unsync_ps[i][1] && b > h->unsync_ps[i][0])
			return false;
	return true;
}

/* What the journal says for a stamp (UTC): in sync or not. */
static bool sim_journal_lookup(const struct sim *s, const struct host *h,
			       int64_t stamp_utc)
{
	int64_t t0 = sim_journal_time(s, 0), j;

	if (stamp_utc < t0)
		return false;
	j = (stamp_utc - t0) / sim_interval_ns(s);
	return sim_journal_sync(s, h, sim_journal_time(s, j));
}

/* The largest |stamp - true time| of a stamp in [t, t + interval): from
 * the true times that can land there, in sync (error within [err_lo,
 * err_hi]) or, shifted by the extra error, in an unsync window just
 * before. */
static int64_t sim_journal_bound(const struct sim *s, const struct host *h,
				 int64_t t_ns)
{
	const struct sim_clock *k = &h->cfg->clock;
	int64_t a = t_ns - sim_start_ns(s), b = a + sim_interval_ns(s);
	double lo, hi, m;

	host_det_range(h, (a - h->err_hi_ns) * PS_PER_NS,
		       (b - h->err_lo_ns) * PS_PER_NS, &lo, &hi);
	m = fmax(fabs(lo), fabs(hi));
	for (unsigned i = 0; i < h->cfg->nunsync; i++) {
		int64_t x = (a - h->err_hi_ns - (int64_t)UNSYNC_NS) * PS_PER_NS;
		int64_t y = (b - h->err_lo_ns - (int64_t)UNSYNC_NS) * PS_PER_NS;

		if (x < h->unsync_ps[i][0])
			x = h->unsync_ps[i][0];
		if (y > h->unsync_ps[i][1])
			y = h->unsync_ps[i][1];
		if (x >= y)
			continue;
		host_det_range(h, x, y, &lo, &hi);
		m = fmax(m, fmax(fabs(lo + UNSYNC_NS), fabs(hi + UNSYNC_NS)));
	}
	return (int64_t)ceil(m) + (int64_t)ceil(4 * k->noise_ns) +
	       clock_quantum_bound_ns(k) + 1;
}

static int sim_write_journal(struct sim *s, struct host *h, const char *path)
{
	const struct sim_clock *k = &h->cfg->clock;
	struct journal_writer *w;
	int64_t iv = sim_interval_ns(s), end = sim_start_ns(s) + s->last_ps / PS_PER_NS + iv;
	int err;

	if (unlink(path) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", path);
	err = journal_writer_open(&w, path, sim_hosts[h->id]);
	if (err)
		return sim_sys(s, err, "%s", path);
	if (h->cfg->tai)
		err = journal_write_event(w, sim_journal_time(s, 0), "-", "utc_offset", "37");
	for (int64_t j = 0; !err && sim_journal_time(s, j) <= end; j++) {
		int64_t t = sim_journal_time(s, j), rel = t - sim_start_ns(s);
		struct journal_sample js = {
			.ts_ns = t,
			.delay_ns = JOURNAL_DELAY_NS,
			.steps = 1,
		};

		snprintf(js.clock, sizeof(js.clock), "%s", h->cfg->tai ? "phc0" : "sys");
		snprintf(js.state, sizeof(js.state), "SLAVE");
		snprintf(js.gm, sizeof(js.gm), SIM_GM);
		snprintf(js.servo, sizeof(js.servo), "s2");
		js.offset_ns = llround(host_det_ns(h, rel * PS_PER_NS));
		/* d(error)/dt in ns/s: the frequency the servo is chasing. */
		js.freq_ppb = round(k->wander_ns * 2 * M_PI / k->period_s *
				    cos(host_theta(h, rel * PS_PER_NS)) * 1000) / 1000;
		if (k->rate_ppb != 0)
			js.freq_ppb = round((js.freq_ppb + k->rate_ppb) * 1000) / 1000;
		js.in_sync = sim_journal_sync(s, h, t);
		js.bound_ns = js.in_sync ? sim_journal_bound(s, h, t) : JOURNAL_NONE;
		err = journal_write_sample(w, &js);
	}
	journal_writer_close(w);
	if (err)
		return sim_sys(s, err, "%s", path);
	return 0;
}

/* -------------------------------------------------------------- output */

static void tr_record(struct sim *s, const struct rec *r);

static bool rec_less(const struct rec *a, const struct rec *b)
{
	if (a->stamp != b->stamp)
		return a->stamp < b->stamp;
	if (a->t_ps != b->t_ps)
		return a->t_ps < b->t_ps;
	return a->order < b->order;
}

static void rec_push(struct host *h, struct rec *r)
{
	size_t i;

	if (h->qn == h->qcap) {
		h->qcap = h->qcap ? h->qcap * 2 : 64;
		h->q = xrealloc(h->q, h->qcap * sizeof(*h->q));
	}
	i = h->qn++;
	while (i && rec_less(r, h->q[(i - 1) / 2])) {
		h->q[i] = h->q[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->q[i] = r;
}

static struct rec *rec_pop(struct host *h)
{
	struct rec *top = h->q[0], *last = h->q[--h->qn];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->qn)
			break;
		if (c + 1 < h->qn && rec_less(h->q[c + 1], h->q[c]))
			c++;
		if (!rec_less(h->q[c], last))
			break;
		h->q[i] = h->q[c];
		i = c;
	}
	if (h->qn)
		h->q[i] = last;
	return top;
}

static void rec_write(struct sim *s, struct host *h, struct rec *r)
{
	int err = 0;

	if (s->err)
		return;
	if (h->ng) {
		err = pcapng_write_packet(h->ng, r->dir == PCAPNG_DIR_IN ? h->ifid_in :
					  h->ifid, r->stamp, r->data, r->len,
					  r->len, (enum pcapng_dir)r->dir);
	} else {
		struct pcap_pkthdr ph;

		ph.ts.tv_sec = (time_t)(r->stamp / NS_PER_S);
		ph.ts.tv_usec = (suseconds_t)(r->stamp % NS_PER_S);
		if (h->res_ns > 1)
			ph.ts.tv_usec /= 1000;
		ph.caplen = ph.len = r->len;
		pcap_dump((u_char *)h->pd, &ph, r->data);
	}
	if (err)
		sim_sys(s, err, "%s", h->path);
	h->packets++;
	if (r->flow >= 0)
		tr_record(s, r);
}

/* Write every record of h that no future record can precede. */
static void host_flush(struct sim *s, struct host *h, bool all)
{
	const struct sim_clock *k = &h->cfg->clock;
	int64_t limit = sim_start_ns(s) + h->tai_ns + floordiv(s->now, PS_PER_NS) +
			h->min_err_ns - clock_quantum_bound_ns(k) - h->res_ns;

	/* A future record's true time t is at or after now, and t + rate t
	 * grows with t (|rate| < 1e9 ppb): its rate term is at least now's. */
	if (k->rate_ppb != 0)
		limit += (int64_t)floor(clock_rate_ns(k, s->now)) - 1;

	while (h->qn && (all || h->q[0]->stamp < limit)) {
		struct rec *r = rec_pop(h);

		rec_write(s, h, r);
		r->next = s->recfree;
		s->recfree = r;
	}
}

/* A record from the free list (allocated only while the queues grow). */
static struct rec *rec_get(struct sim *s)
{
	struct rec *r = s->recfree;

	if (r)
		s->recfree = r->next;
	else
		r = xmalloc(sizeof(*r) + s->frame_cap);
	return r;
}

static void tap_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
		     int64_t wire_ps, int64_t stamp, const uint8_t *frame,
		     uint32_t len);

/* A frame seen by host hi at true time t_ps (stamp given), on its fibre at
 * wire_ps (the TX instant, or the arrival before any stack delay). */
static void emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
		 int64_t wire_ps, int64_t stamp, const uint8_t *frame,
		 uint32_t len, const struct seg *g, bool tag)
{
	struct host *h = &s->h[hi];
	struct rec *r;

	if (!s->any_packet || t_ps < s->first_ps)
		s->first_ps = t_ps;
	if (!s->any_packet || t_ps > s->last_ps)
		s->last_ps = t_ps;
	s->any_packet = true;
	if (s->tap[hi].tap)
		tap_emit(s, hi, dir, t_ps, wire_ps, stamp, frame, len);
	if (t_ps < h->cap_start_ps)
		return;
	r = rec_get(s);
	r->stamp = stamp;
	r->t_ps = t_ps;
	r->order = s->recorder++;
	r->len = len;
	r->dir = (uint8_t)dir;
	r->ntag = 0;
	r->flow = -1;
	if (g && hi == SIM_ALGO) {
		r->flow = (int8_t)g->flow;
		r->off = g->off;
		r->plen = g->len;
		if (tag) {
			r->ntag = (uint8_t)g->nstart;
			memcpy(r->tag, g->start, g->nstart * sizeof(*g->start));
		}
	}
	memcpy(r->data, frame, len);
	rec_push(h, r);
}

/* ---------------------------------------------------------------- truth */

static void dist_add(const struct sim *s, struct dist *d, int64_t v)
{
	if (s->c->no_truth_stats) {
		if (!d->h)
			d->h = hist_create();
		hist_add(d->h, v);
		return;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = v;
}

/* The tap of host hi: the frame at its wire instant, by the tap's clock;
 * and, when the host captured it too (at t_ps, stamped stamp), the
 * difference of the two stamps on one timescale. */
static void tap_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
		     int64_t wire_ps, int64_t stamp, const uint8_t *frame,
		     uint32_t len)
{
	struct host *h = &s->h[hi], *tp = &s->tap[hi];
	struct tapref *ref = &s->ref[hi];
	struct rec *r = rec_get(s);

	r->stamp = host_stamp(tp, wire_ps, sim_start_ns(s));
	r->t_ps = wire_ps;
	r->order = s->recorder++;
	r->len = len;
	r->dir = (uint8_t)dir;
	r->ntag = 0;
	r->flow = -1;
	memcpy(r->data, frame, len);
	rec_push(tp, r);
	if (t_ps < h->cap_start_ps)
		return;
	dist_add(s, &ref->d[dir == PCAPNG_DIR_OUT ? REF_TX : REF_RX],
		 stamp - r->stamp - h->tai_ns);
	if (!ref->any || t_ps < ref->first_ps)
		ref->first_ps = t_ps;
	ref->any = true;
}

static struct bucket *sim_bucket(struct sim *s, int b)
{
	return &s->b[b < 0 ? s->c->nrates : (unsigned)b];
}

/* One-way truth of the messages starting in segment g, from the copies
 * stamped first at each end. */
static void hop_truth(struct sim *s, const struct seg *g,
		      const struct stamp_at *tx, const struct stamp_at *rx)
{
	const struct flow *f = &s->f[g->flow];
	const struct host *A = &s->h[f->src], *B = &s->h[f->dst];
	int64_t st, tr_ps, sw_ps;
	bool sync;

	if (!tx->capt || !rx->capt || !g->nstart)
		return;
	st = (rx->stamp - B->tai_ns) - (tx->stamp - A->tai_ns);
	tr_ps = rx->ps - tx->ps;
	sw_ps = rx->wire_ps - tx->ps - s->cables_ps;
	if (sim_switches[s->c->sw]->mode == SWMODEL_STORE_FORWARD)
		sw_ps -= (int64_t)(g->flen < 60 ? 64 : g->flen + 4) * s->ps_per_byte;
	sync = sim_journal_lookup(s, A, tx->stamp - A->tai_ns) &&
	       sim_journal_lookup(s, B, rx->stamp - B->tai_ns);
	for (unsigned i = 0; i < g->nstart; i++) {
		struct bucket *b = sim_bucket(s, g->start[i].bucket);

		if (!sync) {
			dist_add(s, &b->d[D_HOP_OUT + f->src], st);
			continue;
		}
		dist_add(s, &b->d[D_HOP_ST + f->src], st);
		dist_add(s, &b->d[D_HOP_TR + f->src], ps_to_ns(tr_ps));
		if (s->c->sw != SIM_SWITCH_NONE)
			dist_add(s, &b->d[D_SW + f->src], ps_to_ns(sw_ps));
		{
			double e = fabs((double)(st * PS_PER_NS - tr_ps)) / PS_PER_NS;

			if (!b->has_err[f->src] || e > b->maxerr[f->src])
				b->maxerr[f->src] = e;
			b->has_err[f->src] = true;
		}
	}
}

/* A transaction at the algo: from a (earlier) to z, both in its capture. */
static void tr_truth(struct sim *s, int which, int bucket,
		     const struct stamp_at *a, const struct stamp_at *z)
{
	struct bucket *b = sim_bucket(s, bucket);

	if (!a->set || !z->set)
		return;
	dist_add(s, &b->d[D_TR_ST + which], z->stamp - a->stamp);
	dist_add(s, &b->d[D_TR_TR + which], ps_to_ns(z->ps - a->ps));
}

static void latest_add(struct latest *l, const struct stamp_at *at,
		       int64_t trade)
{
	l->v[l->head].at = *at;
	l->v[l->head].trade = trade;
	l->head = (l->head + 1) % LATEST_RING;
	if (l->n < LATEST_RING)
		l->n++;
}

/* The latest one stamped strictly before stamp, or NULL. */
static const struct stamp_at *latest_before(const struct latest *l,
					    int64_t stamp, int64_t *trade)
{
	const struct stamp_at *best = NULL;

	for (unsigned i = 0; i < l->n; i++) {
		unsigned k = (l->head + LATEST_RING - 1 - i) % LATEST_RING;

		if (l->v[k].at.stamp < stamp &&
		    (!best || l->v[k].at.stamp > best->stamp)) {
			best = &l->v[k].at;
			*trade = l->v[k].trade;
		}
	}
	return best;
}

/* Message m of the algo's capture is whole (its first byte stamped at). */
static void tr_message(struct sim *s, bool in, const struct mstart *m,
		       const struct stamp_at *at)
{
	struct trade *t;
	const struct stamp_at *from;
	int64_t trade = -1;

	if (m->kind == MK_MD || m->kind == MK_TRIGGER) {
		if (in)
			latest_add(&s->bid[m->sym], at,
				   m->kind == MK_TRIGGER ? (int64_t)m->trade : -1);
		return;
	}
	if (m->kind < MK_ORDER)
		return;
	t = &s->tr[m->trade];
	if (m->kind == MK_ORDER && !in && !t->tx[m->side].set) {
		t->tx[m->side] = *at;
		if (m->side == 0) {
			from = latest_before(&s->bid[m->sym], at->stamp, &trade);
			if (from) {
				tr_truth(s, TR_TICK, t->bucket, from, at);
				if (trade != (int64_t)m->trade)
					sim_bucket(s, t->bucket)->not_trigger++;
			}
		} else {
			from = latest_before(&s->fill[m->sym], at->stamp, &trade);
			if (from)
				tr_truth(s, TR_FILL_SELL, t->bucket, from, at);
		}
		if (t->ack[m->side].set)
			tr_truth(s, TR_ACK, t->bucket, &t->tx[m->side], &t->ack[m->side]);
		if (t->fill[m->side].set)
			tr_truth(s, TR_FILL, t->bucket, &t->tx[m->side], &t->fill[m->side]);
	} else if (m->kind == MK_NEW && in && !t->ack[m->side].set) {
		t->ack[m->side] = *at;
		if (t->tx[m->side].set)
			tr_truth(s, TR_ACK, t->bucket, &t->tx[m->side], at);
	} else if (m->kind == MK_FILL && in && !t->fill[m->side].set) {
		t->fill[m->side] = *at;
		if (m->side == 0)
			latest_add(&s->fill[m->sym], at, m->trade);
		if (t->tx[m->side].set)
			tr_truth(s, TR_FILL, t->bucket, &t->tx[m->side], at);
	}
}

/* One frame of the algo's capture, in file order: the messages it makes
 * whole. */
static void tr_record(struct sim *s, const struct rec *r)
{
	struct trk *k = &s->trk[r->flow];
	uint64_t end = r->off + r->plen;
	bool in = r->dir == PCAPNG_DIR_IN;

	for (unsigned i = 0; i < r->ntag; i++) {
		struct trk_msg *p;
		size_t j;

		if (k->pn == k->pcap) {
			size_t ncap = k->pcap ? k->pcap * 2 : 64;
			struct trk_msg *n = xmalloc(ncap * sizeof(*n));

			for (size_t x = 0; x < k->pn; x++)
				n[x] = k->pend[(k->ph + x) % k->pcap];
			free(k->pend);
			k->pend = n;
			k->pcap = ncap;
			k->ph = 0;
		}
		/* In order of their ends, nearly always at the back. */
		for (j = k->pn; j > 0; j--) {
			struct trk_msg *q = &k->pend[(k->ph + j - 1) % k->pcap];

			if (q->end <= r->tag[i].end)
				break;
			k->pend[(k->ph + j) % k->pcap] = *q;
		}
		p = &k->pend[(k->ph + j) % k->pcap];
		p->end = r->tag[i].end;
		p->m = r->tag[i];
		p->at = (struct stamp_at){ .stamp = r->stamp, .ps = r->t_ps,
					   .capt = true, .set = true };
		k->pn++;
	}
	/* Reassembly: bytes before the first frame seen are not known. */
	if (!k->started) {
		k->started = true;
		k->cont = r->off;
	}
	if (r->off > k->cont) {
		size_t j;

		if (k->nooo == k->cooo) {
			k->cooo = k->cooo ? k->cooo * 2 : 16;
			k->ooo = xrealloc(k->ooo, k->cooo * sizeof(*k->ooo));
		}
		for (j = k->nooo; j > 0 && k->ooo[j - 1].off > r->off; j--)
			k->ooo[j] = k->ooo[j - 1];
		k->ooo[j].off = r->off;
		k->ooo[j].end = end;
		k->nooo++;
	} else if (end > k->cont) {
		size_t j = 0;

		k->cont = end;
		while (j < k->nooo && k->ooo[j].off <= k->cont) {
			if (k->ooo[j].end > k->cont)
				k->cont = k->ooo[j].end;
			j++;
		}
		if (j) {
			memmove(k->ooo, k->ooo + j, (k->nooo - j) * sizeof(*k->ooo));
			k->nooo -= j;
		}
	}
	while (k->pn && k->pend[k->ph].end <= k->cont) {
		struct trk_msg p = k->pend[k->ph];

		k->ph = (k->ph + 1) % k->pcap;
		k->pn--;
		tr_message(s, in, &p.m, &p.at);
	}
}

/* ---------------------------------------------------------------- events */

static void ev_push(struct sim *s, int64_t t, int type, int a, uint32_t b,
		    struct seg *g)
{
	struct event e = { t < s->now ? s->now : t, s->evorder++, (uint8_t)type,
			   (uint8_t)a, b, g };
	size_t i;

	if (s->evn == s->evcap) {
		s->evcap = s->evcap ? s->evcap * 2 : 64;
		s->ev = xrealloc(s->ev, s->evcap * sizeof(*s->ev));
	}
	i = s->evn++;
	while (i) {
		struct event *p = &s->ev[(i - 1) / 2];

		if (p->t < e.t || (p->t == e.t && p->order < e.order))
			break;
		s->ev[i] = *p;
		i = (i - 1) / 2;
	}
	s->ev[i] = e;
}

static bool ev_before(const struct event *x, const struct event *y)
{
	return x->t < y->t || (x->t == y->t && x->order < y->order);
}

static struct event ev_pop(struct sim *s)
{
	struct event top = s->ev[0], last = s->ev[--s->evn];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->evn)
			break;
		if (c + 1 < s->evn && ev_before(&s->ev[c + 1], &s->ev[c]))
			c++;
		if (!ev_before(&s->ev[c], &last))
			break;
		s->ev[i] = s->ev[c];
		i = c;
	}
	if (s->evn)
		s->ev[i] = last;
	return top;
}

/* ------------------------------------------------------------ the wire */

static int64_t wire_ps(const struct sim *s, uint32_t flen)
{
	/* Frame (padded to 60) + FCS + preamble + inter-frame gap. */
	return (int64_t)((flen < 60 ? 60 : flen) + 4 + 8 + 12) * s->ps_per_byte;
}

static int64_t nic_tx(struct sim *s, int hi, uint32_t flen)
{
	struct host *h = &s->h[hi];
	int64_t tx = s->now > h->nic_free_ps ? s->now : h->nic_free_ps;

	h->nic_free_ps = tx + wire_ps(s, flen);
	return tx;
}

/* Arrival of the frame's first bit at host dst's NIC. */
static int64_t path_arrival(struct sim *s, int dst, int64_t tx, uint32_t flen)
{
	int64_t a = tx + s->cables_ps;

	if (s->c->sw != SIM_SWITCH_NONE) {
		double r = rng_tnormal(&s->net, sim_switches[s->c->sw]->latency_ns,
				       sim_switches[s->c->sw]->jitter_ns);

		a += llround(r * PS_PER_NS);
		if (sim_switches[s->c->sw]->mode == SWMODEL_STORE_FORWARD)
			a += (int64_t)((flen < 60 ? 60 : flen) + 4) * s->ps_per_byte;
	}
	if (a < s->egress_free[dst])
		a = s->egress_free[dst];
	s->egress_free[dst] = a + wire_ps(s, flen);
	return a;
}

/* When the receiving host stamps it (and its stack hands it up). */
static int64_t rx_instant(struct sim *s, int dst, int64_t wire)
{
	struct host *h = &s->h[dst];
	int64_t r = wire;

	if (!s->c->stack_delay_ns && !s->c->stack_jitter_ns)
		return wire;
	r += s->c->stack_delay_ns * PS_PER_NS +
	     llround(rng_exp(&s->app, (double)s->c->stack_jitter_ns) * PS_PER_NS);
	if (r < h->stack_last_ps)
		r = h->stack_last_ps;
	h->stack_last_ps = r;
	return r;
}

/* Send a frame built in s->fbuf from host src to the other; returns where
 * it was stamped at each end. */
static void wire_send(struct sim *s, int src, uint32_t flen, struct stamp_at *tx,
		      struct stamp_at *rx, const struct seg *g, bool txtag,
		      bool rxtag)
{
	int dst = 1 - src;
	int64_t t = nic_tx(s, src, flen), w, r;
	struct stamp_at dummy[2];

	if (!tx)
		tx = &dummy[0];
	if (!rx)
		rx = &dummy[1];
	tx->ps = tx->wire_ps = t;
	tx->stamp = host_stamp(&s->h[src], t, sim_start_ns(s));
	tx->capt = t >= s->h[src].cap_start_ps;
	tx->set = true;
	emit(s, src, PCAPNG_DIR_OUT, t, t, tx->stamp, s->fbuf, flen, g, txtag);
	w = path_arrival(s, dst, t, flen);
	r = rx_instant(s, dst, w);
	rx->ps = r;
	rx->wire_ps = w;
	rx->stamp = host_stamp(&s->h[dst], r, sim_start_ns(s));
	rx->capt = r >= s->h[dst].cap_start_ps;
	rx->set = true;
	emit(s, dst, PCAPNG_DIR_IN, r, w, rx->stamp, s->fbuf, flen, g, rxtag);
}

/* ------------------------------------------------------------- TCP flows */

static int flow_index(int conn, int dir)
{
	return conn * 2 + dir;
}

static struct flow *flow_reverse(struct sim *s, const struct flow *f)
{
	return &s->f[(f - s->f) ^ 1];
}

/* The receiver's next expected byte at now (what it acknowledges). */
static uint64_t rcv_ack(struct sim *s, struct flow *f)
{
	size_t i = 0;

	while (i < f->rqn && f->rq[i].t_ps <= s->now && f->rq[i].off <= f->rcv_nxt) {
		if (f->rq[i].end > f->rcv_nxt)
			f->rcv_nxt = f->rq[i].end;
		i++;
	}
	if (i) {
		memmove(f->rq, f->rq + i, (f->rqn - i) * sizeof(*f->rq));
		f->rqn -= i;
	}
	return f->rcv_nxt;
}

static void rcv_insert(struct sim *s, struct flow *f, uint64_t off,
		       uint64_t end, int64_t t)
{
	size_t i;

	rcv_ack(s, f);
	if (end <= f->rcv_nxt)
		return;
	if (f->rqn == f->rqcap) {
		f->rqcap = f->rqcap ? f->rqcap * 2 : 16;
		f->rq = xrealloc(f->rq, f->rqcap * sizeof(*f->rq));
	}
	for (i = f->rqn; i && f->rq[i - 1].off > off; i--)
		f->rq[i] = f->rq[i - 1];
	f->rq[i].off = off;
	f->rq[i].end = end;
	f->rq[i].t_ps = t;
	f->rqn++;
}

static void unc_add(struct flow *f, struct seg *g)
{
	if (f->uncn == f->unccap) {
		f->unccap = f->unccap ? f->unccap * 2 : 8;
		f->unc = xrealloc(f->unc, f->unccap * sizeof(*f->unc));
	}
	f->unc[f->uncn++] = g;
}

static void unc_remove(struct flow *f, const struct seg *g)
{
	for (size_t i = 0; i < f->uncn; i++)
		if (f->unc[i] == g) {
			f->unc[i] = f->unc[--f->uncn];
			return;
		}
}

static void react_add(struct flow *f, uint64_t end, int type, uint32_t arg,
		      int side)
{
	if (f->pn == f->pcap) {
		size_t ncap = f->pcap ? f->pcap * 2 : 8;
		struct react *n = xmalloc(ncap * sizeof(*n));

		for (size_t i = 0; i < f->pn; i++)
			n[i] = f->pend[(f->ph + i) % f->pcap];
		free(f->pend);
		f->pend = n;
		f->pcap = ncap;
		f->ph = 0;
	}
	f->pend[(f->ph + f->pn++) % f->pcap] =
		(struct react){ end, (uint8_t)type, (uint8_t)side, arg };
}

static int64_t reaction_ps(struct sim *s, int64_t base_ns, int64_t exp_ns)
{
	return base_ns * PS_PER_NS + llround(rng_exp(&s->app, (double)exp_ns) * PS_PER_NS);
}

/* Deliver to the application the messages now complete on f. */
static void react_check(struct sim *s, struct flow *f)
{
	uint64_t min_unc = UINT64_MAX;

	for (size_t i = 0; i < f->uncn; i++)
		if (f->unc[i]->off < min_unc)
			min_unc = f->unc[i]->off;
	while (f->pn) {
		struct react *r = &f->pend[f->ph];
		const struct sim_config *c = s->c;
		int64_t d = f->last_commit_ps;

		if (r->end > f->snd_nxt || r->end > min_unc)
			break;
		switch (r->type) {
		case R_LOGON:
			ev_push(s, d + reaction_ps(s, c->venue_reaction_ns,
						   c->venue_reaction_exp_ns),
				EV_LOGON_REPLY, (int)r->arg, 0, NULL);
			break;
		case R_BID:
			ev_push(s, d + reaction_ps(s, c->algo_reaction_ns,
						   c->algo_reaction_exp_ns),
				EV_BUY, 0, r->arg, NULL);
			break;
		case R_ORDER:
			ev_push(s, d + reaction_ps(s, c->venue_reaction_ns,
						   c->venue_reaction_exp_ns),
				EV_REPORTS, r->side, r->arg, NULL);
			break;
		case R_FILL:
			ev_push(s, d + reaction_ps(s, c->algo_reaction_ns,
						   c->algo_reaction_exp_ns),
				EV_SELL, 0, r->arg, NULL);
			break;
		}
		f->ph = (f->ph + 1) % f->pcap;
		f->pn--;
	}
}

static struct seg *seg_copy(struct sim *s, const struct seg *g)
{
	struct seg *n = s->segfree;

	if (n)
		s->segfree = n->next;
	else
		n = xmalloc(sizeof(*n) + s->frame_cap);
	memcpy(n, g, sizeof(*n));
	memcpy(n->frame, s->fbuf, g->flen);
	return n;
}

static void seg_free(struct sim *s, struct seg *g)
{
	g->next = s->segfree;
	s->segfree = g;
}

/* The first copy of g reached its receiver at wire (NIC) and rx (stamp);
 * frame is its bytes. */
static void seg_commit(struct sim *s, struct seg *g, int64_t wire, int64_t rx,
		       const uint8_t *frame)
{
	struct flow *f = &s->f[g->flow];
	struct host *B = &s->h[f->dst];

	g->rx1.ps = rx;
	g->rx1.wire_ps = wire;
	g->rx1.stamp = host_stamp(B, rx, sim_start_ns(s));
	g->rx1.capt = rx >= B->cap_start_ps;
	g->rx1.set = true;
	emit(s, f->dst, PCAPNG_DIR_IN, rx, wire, g->rx1.stamp, frame, g->flen, g,
	     true);
	unc_remove(f, g);
	f->last_commit_ps = rx;
	rcv_insert(s, f, g->off, g->off + g->len, rx);
	if (!g->retrans)
		hop_truth(s, g, &g->tx1, &g->rx1);
	if (rng_chance(&s->fault, s->c->pure_acks))
		ev_push(s, rx + ACK_DELAY_PS +
			llround(rng_exp(&s->fault, ACK_JITTER_NS) * PS_PER_NS),
			EV_ACK, (int)g->flow, 0, NULL);
	react_check(s, f);
}

static void noise_packet(struct sim *s, int src)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: tapless\r\n\r\n";
	struct host *h = &s->h[src];
	struct frame_flow ff = { .family = AF_INET };
	uint8_t pay[256];
	size_t len;
	int n;

	memcpy(ff.src, sim_addr[src], 4);
	memcpy(ff.dst, sim_addr[1 - src], 4);
	s->noise_toggle = !s->noise_toggle;
	if (s->noise_toggle) {
		ff.proto = IPPROTO_UDP;
		ff.sport = 9998;
		ff.dport = 9999;
		len = 16 + rng_next(&s->fault) % 185;
		for (size_t i = 0; i < len; i++)
			pay[i] = (uint8_t)rng_next(&s->fault);
		n = frame_build(s->fbuf, s->frame_cap, &ff, 0, 0, 0, pay, len);
	} else {
		ff.proto = IPPROTO_TCP;
		ff.sport = 40080;
		ff.dport = 8080;
		len = sizeof(get) - 1;
		n = frame_build(s->fbuf, s->frame_cap, &ff, 1 + h->noise_seq, 1, 0,
				get, len);
		h->noise_seq += (uint32_t)len;
	}
	if (n > 0) {
		wire_send(s, src, (uint32_t)n, NULL, NULL, NULL, false, false);
		s->fl.non_fix++;
	}
}

struct msgref {
	const char *buf;
	size_t len;
	struct mstart meta;
};

/* Send messages m[0..nm) in one write on flow fi: cut at the MSS, stamped,
 * faults drawn per segment. more_follows: another data segment comes on
 * this flow right after (so this one may be overtaken by it). */
static void flow_send(struct sim *s, int fi, const struct msgref *m,
		      unsigned nm, bool more_follows)
{
	struct flow *f = &s->f[fi], *rf = flow_reverse(s, f);
	const struct sim_config *c = s->c;
	size_t total = 0, moff[2], o = 0;

	for (unsigned i = 0; i < nm; i++) {
		moff[i] = total;
		memcpy(s->sendbuf + total, m[i].buf, m[i].len);
		total += m[i].len;
		s->fix_messages++;
		if (m[i].len > c->mss || (total - 1) / c->mss != moff[i] / c->mss)
			s->fl.split++;
	}
	while (o < total) {
		size_t l = total - o < c->mss ? total - o : c->mss;
		struct seg g = { .flow = fi, .off = f->snd_nxt, .len = (uint32_t)l };
		struct seg *prev = f->held, *keep = NULL;
		bool last = o + l == total, hold = false, spurious = false;
		unsigned inmsg = 0;
		uint64_t ack = rcv_ack(s, rf);
		int64_t w = 0, r = 0;
		int n;

		for (unsigned i = 0; i < nm; i++) {
			if (moff[i] < o + l && moff[i] + m[i].len > o)
				inmsg++;
			if (moff[i] >= o && moff[i] < o + l && g.nstart < SEG_STARTS) {
				g.start[g.nstart] = m[i].meta;
				g.start[g.nstart++].end = f->snd_nxt - o + moff[i] + m[i].len;
			}
		}
		if (inmsg > 1)
			s->fl.coalesced++;
		n = frame_build(s->fbuf, s->frame_cap, &f->ff,
				f->isn + 1 + (uint32_t)f->snd_nxt,
				rf->isn + 1 + (uint32_t)ack, 0, s->sendbuf + o, l);
		if (n < 0) {
			sim_sys(s, n, "building a frame");
			return;
		}
		g.flen = (uint32_t)n;
		f->snd_nxt += l;
		/* First transmission. */
		{
			int64_t t = nic_tx(s, f->src, g.flen);
			struct host *A = &s->h[f->src];

			g.tx1.ps = g.tx1.wire_ps = t;
			g.tx1.stamp = host_stamp(A, t, sim_start_ns(s));
			g.tx1.capt = t >= A->cap_start_ps;
			g.tx1.set = true;
			emit(s, f->src, PCAPNG_DIR_OUT, t, t, g.tx1.stamp, s->fbuf, g.flen,
			     &g, true);
		}
		if (rng_chance(&s->fault, c->retransmit)) {
			g.retrans = true;
			g.lost = s->lost_toggle = !s->lost_toggle;
			s->fl.retransmitted++;
			if (g.lost)
				s->fl.lost++;
		} else if ((!last || more_follows) && !prev &&
			   rng_chance(&s->fault, c->reorder)) {
			hold = true;
		}
		if (!hold) {
			w = path_arrival(s, f->dst, g.tx1.ps, g.flen);
			r = rx_instant(s, f->dst, w);
		}
		if (hold) {
			f->held = keep = seg_copy(s, &g);
			unc_add(f, keep);
		} else if (g.lost) {
			keep = seg_copy(s, &g);
			unc_add(f, keep);
			ev_push(s, g.tx1.ps + RTO_PS, EV_RETRANS, 0, 0, keep);
		} else {
			spurious = g.retrans;
			if (spurious) {
				keep = seg_copy(s, &g);
				seg_commit(s, keep, w, r, keep->frame);
				ev_push(s, g.tx1.ps + RTO_PS, EV_RETRANS, 0, 0, keep);
			} else {
				seg_commit(s, &g, w, r, s->fbuf);
			}
		}
		/* The segment held back arrives right after this one. */
		if (prev) {
			f->held = NULL;
			w = path_arrival(s, f->dst, prev->tx1.ps, prev->flen);
			r = rx_instant(s, f->dst, w);
			seg_commit(s, prev, w, r, prev->frame);
			s->fl.reordered++;
			seg_free(s, prev);
		}
		if (rng_chance(&s->fault, c->noise))
			noise_packet(s, f->src);
		o += l;
	}
}

static void ev_retrans(struct sim *s, struct seg *g)
{
	struct flow *f = &s->f[g->flow];
	struct stamp_at tx2, rx2;
	const struct stamp_at *txc, *rxc;

	memcpy(s->fbuf, g->frame, g->flen);
	if (g->lost) {
		/* Only this copy reaches the receiver. */
		int64_t t = nic_tx(s, f->src, g->flen), w, r;

		tx2.ps = tx2.wire_ps = t;
		tx2.stamp = host_stamp(&s->h[f->src], t, sim_start_ns(s));
		tx2.capt = t >= s->h[f->src].cap_start_ps;
		tx2.set = true;
		emit(s, f->src, PCAPNG_DIR_OUT, t, t, tx2.stamp, g->frame, g->flen, g,
		     !g->tx1.capt);
		w = path_arrival(s, f->dst, t, g->flen);
		r = rx_instant(s, f->dst, w);
		seg_commit(s, g, w, r, g->frame);
		rxc = &g->rx1;
	} else {
		wire_send(s, f->src, g->flen, &tx2, &rx2, g, !g->tx1.capt,
			  !g->rx1.capt);
		rxc = g->rx1.capt ? &g->rx1 : &rx2;
	}
	txc = g->tx1.capt ? &g->tx1 : &tx2;
	hop_truth(s, g, txc, rxc);
	seg_free(s, g);
}

/* --------------------------------------------------------------- FIX */

/* SendingTime (52) and TransactTime (60): YYYYMMDD-HH:MM:SS.sss, UTC. */
static const char *sending_time(struct sim *s, char out[32])
{
	int64_t ns = sim_start_ns(s) + floordiv(s->now, PS_PER_NS);
	int64_t sec = floordiv(ns, NS_PER_S);
	int ms = (int)((ns - sec * NS_PER_S) / 1000000);

	if (sec != s->st_sec) {
		time_t t = (time_t)sec;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(s->st_buf, sizeof(s->st_buf), "%Y%m%d-%H:%M:%S", &tm);
		s->st_sec = sec;
	}
	{
		size_t n = strlen(s->st_buf);

		memcpy(out, s->st_buf, n);
		out[n] = '.';
		out[n + 1] = (char)('0' + ms / 100);
		out[n + 2] = (char)('0' + ms / 10 % 10);
		out[n + 3] = (char)('0' + ms % 10);
		out[n + 4] = 0;
	}
	return out;
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

static void ev_md(struct sim *s)
{
	struct flow *f = &s->f[flow_index(CONN_MD, DIR_S2C)];
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
	m.meta = (struct mstart){ MK_MD, 0, (uint8_t)sym, (int16_t)s->run, 0, 0 };
	if (n % 1000 == 0) {
		uint32_t t = (uint32_t)(n / 1000 - 1);
		struct trade *tr = trade_get(s, t);

		tr->bucket = (int16_t)s->run;
		tr->sym = (uint8_t)sym;
		m.meta.kind = MK_TRIGGER;
		m.meta.trade = t;
		react_add(f, f->snd_nxt + m.len, R_BID, t, 0);
	}
	flow_send(s, flow_index(CONN_MD, DIR_S2C), &m, 1, s->run_i < s->run_n);

	/* The next one. */
	if (s->run_i < s->run_n) {
		ev_push(s, md_due_ps(s, s->run_i) +
			llround(rng_exp(&s->app, (double)s->c->md_jitter_ns) * PS_PER_NS),
			EV_MD, 0, 0, NULL);
	} else if (s->run + 1 < s->c->nrates) {
		s->run_start_ps = md_due_ps(s, s->run_n) + RUN_PAUSE_PS;
		s->run++;
		s->run_i = 0;
		s->run_n = md_run_n(s, s->run);
		ev_push(s, s->run_start_ps, EV_MD, 0, 0, NULL);
	}
}

static void ev_order(struct sim *s, uint32_t t, int side)
{
	struct flow *f = &s->f[flow_index(CONN_ORD, DIR_C2S)];
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
	m.meta = (struct mstart){ MK_ORDER, (uint8_t)side, tr->sym, tr->bucket, t, 0 };
	react_add(f, f->snd_nxt + m.len, R_ORDER, t, side);
	flow_send(s, flow_index(CONN_ORD, DIR_C2S), &m, 1, false);
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

static void ev_reports(struct sim *s, uint32_t t, int side)
{
	int fi = flow_index(CONN_ORD, DIR_S2C);
	struct flow *f = &s->f[fi];
	struct trade *tr = &s->tr[t];
	int64_t px = s->last_px[tr->sym];
	struct msgref m[2];

	s->venue_orders++;
	if (!exec_report(s, f, s->msg[0], tr, side, false, px, &m[0]) ||
	    !exec_report(s, f, s->msg[1], tr, side, true, px, &m[1]))
		return;
	m[0].meta = (struct mstart){ MK_NEW, (uint8_t)side, tr->sym, tr->bucket, t, 0 };
	m[1].meta = (struct mstart){ MK_FILL, (uint8_t)side, tr->sym, tr->bucket, t, 0 };
	if (rng_chance(&s->app, s->c->coalesce)) {
		if (side == 0)
			react_add(f, f->snd_nxt + m[0].len + m[1].len, R_FILL, t, 0);
		flow_send(s, fi, m, 2, false);
	} else {
		flow_send(s, fi, &m[0], 1, true);
		if (side == 0)
			react_add(f, f->snd_nxt + m[1].len, R_FILL, t, 0);
		flow_send(s, fi, &m[1], 1, false);
	}
}

static void ev_logon(struct sim *s, int conn, int dir)
{
	int fi = flow_index(conn, dir);
	struct flow *f = &s->f[fi];
	struct fix_writer w;
	struct msgref m;

	sim_fix_head(s, &w, s->msg[0], f, "A");
	fix_add_int(&w, 98, 0);
	fix_add_int(&w, 108, 30);
	if (!sim_fix_done(s, &w, &m))
		return;
	m.meta = (struct mstart){ MK_LOGON, 0, 0, -1, 0, 0 };
	if (dir == DIR_C2S)
		react_add(f, f->snd_nxt + m.len, R_LOGON, (uint32_t)conn, 0);
	flow_send(s, fi, &m, 1, false);
}

/* A pure ACK from the receiver of flow fi. */
static void ev_ack(struct sim *s, int fi)
{
	struct flow *f = &s->f[fi], *rf = flow_reverse(s, f);
	uint64_t ack = rcv_ack(s, f);
	int n = frame_build(s->fbuf, s->frame_cap, &rf->ff,
			    rf->isn + 1 + (uint32_t)rf->snd_nxt,
			    f->isn + 1 + (uint32_t)ack, FRAME_TCP_ACK, "", 0);

	if (n < 0) {
		sim_sys(s, n, "building a frame");
		return;
	}
	wire_send(s, rf->src, (uint32_t)n, NULL, NULL, NULL, false, false);
	s->fl.pure_acks++;
}

/* The three-way handshake of connection conn: step 0 SYN, 1 SYN-ACK, 2 ACK. */
static void ev_ctrl(struct sim *s, int conn, int step)
{
	struct flow *c2s = &s->f[flow_index(conn, DIR_C2S)];
	struct flow *s2c = &s->f[flow_index(conn, DIR_S2C)];
	struct flow *f = step == 1 ? s2c : c2s;
	struct stamp_at rx;
	uint32_t seq, ack;
	uint8_t flags;
	int n;

	switch (step) {
	case 0: seq = c2s->isn; ack = 0; flags = FRAME_TCP_SYN; break;
	case 1: seq = s2c->isn; ack = c2s->isn + 1; flags = FRAME_TCP_SYN | FRAME_TCP_ACK; break;
	default: seq = c2s->isn + 1; ack = s2c->isn + 1; flags = FRAME_TCP_ACK; break;
	}
	n = frame_build(s->fbuf, s->frame_cap, &f->ff, seq, ack, flags, "", 0);
	if (n < 0) {
		sim_sys(s, n, "building a frame");
		return;
	}
	wire_send(s, f->src, (uint32_t)n, NULL, &rx, NULL, false, false);
	if (step < 2)
		ev_push(s, rx.ps + KERNEL_PS, EV_CTRL, conn, (uint32_t)step + 1, NULL);
}

/* ----------------------------------------------------------------- setup */

static int sim_symbols(struct sim *s, const char *list, char *err, size_t len)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (!n || n >= sizeof(s->sym[0]) || s->nsym == SIM_MAX_SYMBOLS ||
		    memchr(p, '\x01', n) || memchr(p, '=', n))
			return sim_fail(err, len, "--symbols: '%s': 1 to %d names of "
					"1 to 15 characters, without = or SOH",
					list, SIM_MAX_SYMBOLS);
		memcpy(s->sym[s->nsym], p, n);
		s->sym[s->nsym++][n] = 0;
		p += n + (p[n] == ',');
	}
	return s->nsym ? 0 : sim_fail(err, len, "--symbols: empty list");
}

static int sim_check(const struct sim_config *c, char *err, size_t len)
{
	if (!c->out_dir || !*c->out_dir)
		return sim_fail(err, len, "--out: an output directory is needed");
	if (!c->nrates)
		return sim_fail(err, len, "--rates: no rate given");
	for (unsigned i = 0; i < c->nrates; i++)
		if (c->rates[i] < 1 || c->rates[i] > 10000000)
			return sim_fail(err, len, "rate %" PRId64 " out of range "
					"(1 to 10000000)", c->rates[i]);
	if (c->messages <= 0 && !(c->duration_s > 0))
		return sim_fail(err, len, "--duration: must be above 0");
	for (unsigned i = 0; i < c->nrates && c->messages <= 0; i++)
		if (llround((double)c->rates[i] * c->duration_s) < 1)
			return sim_fail(err, len, "--duration: %g s at %" PRId64
					"/s is no message", c->duration_s, c->rates[i]);
	if (c->mss < 16 || c->mss > MSS_MAX)
		return sim_fail(err, len, "--mss: %u out of range (16 to %d)",
				c->mss, MSS_MAX);
	if ((int)c->sw < 0 || (int)c->sw >= SIM_SWITCH_COUNT)
		return sim_fail(err, len, "--switch: unknown model");
	if (!(c->journal_interval_s >= 0.001))
		return sim_fail(err, len, "--journal-interval: at least 0.001 s");
	if (c->speed_bps <= 0 || (8 * PS_PER_S) % c->speed_bps)
		return sim_fail(err, len, "--speed: not a speed whose bit time is "
				"a whole number of picoseconds");
	for (int h = 0; h <= SIM_HOSTS; h++) {
		const struct sim_clock *k = h < SIM_HOSTS ? &c->host[h].clock :
							    &c->tap_clock;

		if (!(k->period_s > 0) || k->quantum_ps < 1 || !(k->noise_ns >= 0) ||
		    !(fabs(k->rate_ppb) <= 1e6))
			return sim_fail(err, len, "--clock %s: period must be above "
					"0, quantum at least 0.001, noise not negative, "
					"|rate| at most 1e6 ppb",
					h < SIM_HOSTS ? sim_hosts[h] : "tap");
	}
	if (c->qty < 1)
		return sim_fail(err, len, "--qty: at least 1");
	return 0;
}

static void flow_init(struct sim *s, int conn, int dir, uint16_t client_port,
		      uint16_t server_port)
{
	struct flow *f = &s->f[flow_index(conn, dir)];
	int client = SIM_ALGO, server = SIM_VENUE;

	f->conn = conn;
	f->src = dir == DIR_C2S ? client : server;
	f->dst = 1 - f->src;
	f->ff.family = AF_INET;
	f->ff.proto = IPPROTO_TCP;
	memcpy(f->ff.src, sim_addr[f->src], 4);
	memcpy(f->ff.dst, sim_addr[f->dst], 4);
	f->ff.sport = dir == DIR_C2S ? client_port : server_port;
	f->ff.dport = dir == DIR_C2S ? server_port : client_port;
	f->isn = (uint32_t)rng_next(&s->misc);
	f->fix_seq = 1;
	f->sender = f->src == SIM_ALGO ? "ALGO" : "VENUE";
	f->target = f->src == SIM_ALGO ? "VENUE" : "ALGO";
}

static int mkdir_p(const char *dir)
{
	char *p = xstrdup(dir), *q;
	int err = 0;

	for (q = p + 1; ; q++) {
		if (*q && *q != '/')
			continue;
		{
			char ch = *q;

			*q = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				err = -errno;
			*q = ch;
		}
		if (err || !*q)
			break;
	}
	if (!err) {
		struct stat st;

		if (stat(dir, &st))
			err = -errno;
		else if (!S_ISDIR(st.st_mode))
			err = -ENOTDIR;
	}
	free(p);
	return err;
}

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int host_open(struct sim *s, struct host *h)
{
	const struct sim_host_config *hc = h->cfg;
	const char *name = sim_hosts[h->id];
	int err;

	snprintf(h->file, sizeof(h->file), "%s.%s", name,
		 hc->format == SIM_FMT_PCAPNG ? "pcapng" : "pcap");
	h->path = path_join(s->c->out_dir, h->file);
	h->tmp = xmalloc(strlen(h->path) + 6);
	sprintf(h->tmp, "%s.part", h->path);
	if (unlink(h->tmp) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", h->tmp);
	if (hc->format == SIM_FMT_PCAPNG) {
		struct pcapng_section sec = {
			.hostname = name, .hardware = "tapless sim",
			.os = "tapless sim", .userappl = SIM_USERAPPL,
		};
		struct pcapng_iface ifc = {
			.name = "eth1", .linktype = FRAME_LINK_ETHERNET, .snaplen = 0,
			.src = { hc->tai, hc->tai ? 0 : -1,
				 hc->tai ? TS_SCALE_TAI : TS_SCALE_UTC,
				 "simulated by tapless sim" },
		};

		err = pcapng_open(&h->ng, h->path, &sec);
		if (err)
			return sim_sys(s, err, "%s", h->tmp);
		err = pcapng_add_iface(h->ng, &ifc, &h->ifid);
		if (err)
			return sim_sys(s, err, "%s", h->tmp);
		h->ifid_in = h->ifid;
		return 0;
	}
	h->pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
			hc->format == SIM_FMT_PCAP_US ? PCAP_TSTAMP_PRECISION_MICRO :
							PCAP_TSTAMP_PRECISION_NANO);
	if (!h->pc)
		return sim_sys(s, -ENOMEM, "%s", h->tmp);
	h->pd = pcap_dump_open(h->pc, h->tmp);
	if (!h->pd)
		return sim_sys(s, errno ? -errno : -EIO, "%s", h->tmp);
	return 0;
}

/* tap-HOST.pcapng: one interface per fibre, with a description that is
 * not a tapless source (the file is a foreign capture, as a DAG's). */
static int tap_open(struct sim *s, struct host *t)
{
	const char *name = sim_hosts[t->id];
	char host[32], tx[32], rx[32], desc[64];
	struct pcapng_section sec = {
		.hostname = host, .hardware = "tapless sim tap",
		.os = "tapless sim", .userappl = SIM_USERAPPL,
	};
	struct pcapng_iface ifc = {
		.linktype = FRAME_LINK_ETHERNET, .snaplen = 0,
		.src = { false, -1, TS_SCALE_UTC, "" },
	};
	int err;

	snprintf(host, sizeof(host), "tap-%s", name);
	snprintf(tx, sizeof(tx), "tap-%s-tx", name);
	snprintf(rx, sizeof(rx), "tap-%s-rx", name);
	snprintf(desc, sizeof(desc), "sim tap, %.15g ns clock",
		 (double)t->cfg->clock.quantum_ps / PS_PER_NS);
	snprintf(t->file, sizeof(t->file), "tap-%s.pcapng", name);
	t->path = path_join(s->c->out_dir, t->file);
	t->tmp = xmalloc(strlen(t->path) + 6);
	sprintf(t->tmp, "%s.part", t->path);
	if (unlink(t->tmp) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", t->tmp);
	err = pcapng_open(&t->ng, t->path, &sec);
	if (err)
		return sim_sys(s, err, "%s", t->tmp);
	ifc.name = tx;
	err = pcapng_add_iface_desc(t->ng, &ifc, desc, &t->ifid);
	if (!err) {
		ifc.name = rx;
		err = pcapng_add_iface_desc(t->ng, &ifc, desc, &t->ifid_in);
	}
	if (err)
		return sim_sys(s, err, "%s", t->tmp);
	return 0;
}

static int host_close(struct sim *s, struct host *h, bool discard)
{
	int err = 0;

	if (h->ng) {
		err = pcapng_close(h->ng, discard);
		h->ng = NULL;
		if (err && !discard)
			sim_sys(s, err, "%s", h->path);
	}
	if (h->pd) {
		FILE *f = pcap_dump_file(h->pd);

		if (!discard && (pcap_dump_flush(h->pd) || fsync(fileno(f))))
			err = sim_sys(s, errno ? -errno : -EIO, "%s", h->tmp);
		pcap_dump_close(h->pd);
		h->pd = NULL;
		if (discard || err)
			unlink(h->tmp);
		else if (rename(h->tmp, h->path))
			err = sim_sys(s, -errno, "%s", h->path);
	}
	if (h->pc) {
		pcap_close(h->pc);
		h->pc = NULL;
	}
	return err;
}

static void host_init(struct sim *s, int id)
{
	const struct sim_config *c = s->c;
	struct host *h = &s->h[id];
	const struct sim_clock *k;
	double lo;

	h->id = id;
	h->cfg = &c->host[id];
	k = &h->cfg->clock;
	rng_seed(&h->rng, c->seed, 10 + (uint64_t)id);
	h->phase = rng_unit(&s->misc) * 2 * M_PI;
	for (unsigned i = 0; i < h->cfg->nunsync; i++) {
		h->unsync_ps[i][0] = llround(h->cfg->unsync[i].from_s * PS_PER_S);
		h->unsync_ps[i][1] = llround(h->cfg->unsync[i].to_s * PS_PER_S);
	}
	h->tai_ns = h->cfg->tai ? TAI_UTC_NS : 0;
	h->res_ns = h->cfg->format == SIM_FMT_PCAP_US ? 1000 : 1;
	/* Without the rate, which host_flush() adds at the time and
	 * host_span() over the run. */
	lo = k->offset_ns - fabs(k->wander_ns) - 4 * k->noise_ns;
	h->min_err_ns = (int64_t)floor(lo) - 2;
	h->err_lo_ns = h->min_err_ns - clock_quantum_bound_ns(k) - h->res_ns - 1;
	h->err_hi_ns = (int64_t)ceil(k->offset_ns + fabs(k->wander_ns) +
				     4 * k->noise_ns) + 1;
	h->cap_start_ps = llround(h->cfg->start_late_s * PS_PER_S);
}

/* The tap of host id: a perfect or imperfect clock of its own (its own
 * draws, so the hosts' files are the same with or without it), on UTC,
 * capturing from the start. */
static void tap_init(struct sim *s, int id)
{
	const struct sim_config *c = s->c;
	struct host *t = &s->tap[id];
	const struct sim_clock *k = &c->tap_clock;

	s->tapcfg.clock = *k;
	s->tapcfg.tai = false;
	s->tapcfg.format = SIM_FMT_PCAPNG;
	t->id = id;
	t->cfg = &s->tapcfg;
	t->tap = true;
	rng_seed(&t->rng, c->seed, 20 + (uint64_t)id);
	t->phase = rng_unit(&t->rng) * 2 * M_PI;
	t->res_ns = 1;
	t->min_err_ns = (int64_t)floor(k->offset_ns - fabs(k->wander_ns) -
				       4 * k->noise_ns) - 2;
}

/* Once the run's span is known: the bounds of stamp - true time the
 * journals use, widened by the rate's error over the run. */
static void host_span(struct sim *s, struct host *h)
{
	const struct sim_clock *k = &h->cfg->clock;
	double r;

	if (k->rate_ppb == 0)
		return;
	r = clock_rate_ns(k, s->last_ps);
	h->err_lo_ns += (int64_t)floor(fmin(0, r)) - 1;
	h->err_hi_ns += (int64_t)ceil(fmax(0, r)) + 1;
}

/* ---------------------------------------------------------------- report */

/* Summary of the samples of n distributions together. */
static void dists_summary(const struct sim *s, const struct dist *const *d,
			  unsigned n, struct summary *out)
{
	size_t total = 0;
	int64_t *v;

	if (s->c->no_truth_stats) {
		struct hist *h = hist_create();

		for (unsigned i = 0; i < n; i++)
			if (d[i]->h)
				hist_merge(h, d[i]->h);
		hist_summary(h, out);
		hist_destroy(h);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		total += d[i]->n;
	/* One holds them all: no copy. */
	for (unsigned i = 0; i < n; i++)
		if (d[i]->n == total) {
			summary_of(d[i]->v, total, out);
			return;
		}
	v = xmalloc((total ? total : 1) * sizeof(*v));
	total = 0;
	for (unsigned i = 0; i < n; i++) {
		if (d[i]->n)
			memcpy(v + total, d[i]->v, d[i]->n * sizeof(*v));
		total += d[i]->n;
	}
	summary_of(v, total, out);
	free(v);
}

/* Summary of distribution di over bucket bi, or every bucket (bi < 0). */
static void dist_summary(struct sim *s, int di, int bi, struct summary *out)
{
	const struct dist *d[SIM_MAX_RATES + 1];	/* a bucket per rate, and one spare */
	unsigned n = 0;

	for (unsigned i = 0; i < s->nb; i++)
		if (bi < 0 || (unsigned)bi == i)
			d[n++] = &s->b[i].d[di];
	dists_summary(s, d, n, out);
}

static void sim_print_hops(struct printer *p, struct sim *s, int bi, int64_t rate)
{
	print_array_begin(p, "hops");
	for (int a = 0; a < SIM_HOSTS; a++) {
		struct summary in_st, in_tr, out_st;
		double maxerr = 0;
		bool has = false;

		dist_summary(s, D_HOP_ST + a, bi, &in_st);
		dist_summary(s, D_HOP_TR + a, bi, &in_tr);
		dist_summary(s, D_HOP_OUT + a, bi, &out_st);
		for (unsigned i = 0; i < s->nb; i++) {
			if ((bi >= 0 && (unsigned)bi != i) || !s->b[i].has_err[a])
				continue;
			if (!has || s->b[i].maxerr[a] > maxerr)
				maxerr = s->b[i].maxerr[a];
			has = true;
		}
		print_object_begin(p, NULL);
		print_str(p, "from", NULL, sim_hosts[a]);
		print_str(p, "to", NULL, sim_hosts[1 - a]);
		print_str(p, "flow", NULL, "all");
		print_uint(p, "messages", NULL, in_st.n + out_st.n);
		print_object_begin(p, "in_sync");
		print_uint(p, "messages", NULL, in_st.n);
		summary_print(p, "stamped_ns", &in_st);
		summary_print(p, "true_ns", &in_tr);
		print_object_end(p);
		print_object_begin(p, "out_of_sync");
		print_uint(p, "messages", NULL, out_st.n);
		summary_print(p, "stamped_ns", &out_st);
		print_object_end(p);
		if (has)
			print_double(p, "max_abs_error_ns", NULL, round(maxerr * 1000) / 1000);
		else
			print_null(p, "max_abs_error_ns", NULL);
		if (rate > 0)
			print_int(p, "rate", NULL, rate);
		print_object_end(p);
	}
	print_array_end(p);
}

static void sim_print_transactions(struct printer *p, struct sim *s, int bi)
{
	print_array_begin(p, "transactions");
	for (int t = 0; t < TR_COUNT; t++) {
		struct summary st, tr;

		dist_summary(s, D_TR_ST + t, bi, &st);
		dist_summary(s, D_TR_TR + t, bi, &tr);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, tr_names[t]);
		print_str(p, "host", NULL, "algo");
		print_uint(p, "count", NULL, st.n);
		summary_print(p, "stamped_ns", &st);
		summary_print(p, "true_ns", &tr);
		if (t == TR_TICK) {
			uint64_t n = 0;

			for (unsigned i = 0; i < s->nb; i++)
				if (bi < 0 || (unsigned)bi == i)
					n += s->b[i].not_trigger;
			print_uint(p, "latest_bid_not_trigger", NULL, n);
		}
		print_object_end(p);
	}
	print_array_end(p);
}

static void sim_print_switches(struct printer *p, struct sim *s, int bi)
{
	print_array_begin(p, "switches");
	for (int a = 0; s->c->sw != SIM_SWITCH_NONE && a < SIM_HOSTS; a++) {
		struct summary sw;

		dist_summary(s, D_SW + a, bi, &sw);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, "sw1");
		print_str(p, "model", NULL, sim_switches[s->c->sw]->name);
		print_str(p, "kind", NULL,
			  swmodel_mode_name(sim_switches[s->c->sw]->mode));
		print_str(p, "from", NULL, sim_hosts[a]);
		print_str(p, "to", NULL, sim_hosts[1 - a]);
		print_uint(p, "messages", NULL, sw.n);
		summary_print(p, "true_ns", &sw);
		print_object_end(p);
	}
	print_array_end(p);
}

/* Summary of what host h's tap saw against its capture: one of REF_TX,
 * REF_RX, or both (-1). */
static void ref_summary(struct sim *s, int h, int which, struct summary *out)
{
	const struct dist *d[REF_DISTS];
	unsigned n = 0;

	for (int i = 0; i < REF_DISTS; i++)
		if (which < 0 || which == i)
			d[n++] = &s->ref[h].d[i];
	dists_summary(s, d, n, out);
}

/* "reference": for each tapped host, host stamp - tap stamp over the
 * frames in both files, and the line a fit of it should find. */
static void sim_print_reference(struct printer *p, struct sim *s)
{
	print_object_begin(p, "reference");
	for (int h = 0; h < SIM_HOSTS; h++) {
		const struct host *x = &s->h[h], *t = &s->tap[h];
		static const char *const names[REF_DISTS] = { "tx", "rx" };
		struct summary sum;

		if (!t->tap)
			continue;
		/* An untapped host has no tap config: no &t->cfg->clock. */
		const struct sim_clock *k = &x->cfg->clock, *tk = &t->cfg->clock;
		print_object_begin(p, sim_hosts[h]);
		print_str(p, "file", NULL, t->file);
		print_uint(p, "frames", NULL, t->packets);
		print_object_begin(p, "model");
		print_double(p, "offset_ns", NULL, k->offset_ns);
		print_double(p, "rate_ppb", NULL, k->rate_ppb);
		print_double(p, "wander_ns", NULL, k->wander_ns);
		print_double(p, "period_s", NULL, k->period_s);
		print_double(p, "noise_ns", NULL, k->noise_ns);
		print_double(p, "quantum_ns", NULL, (double)k->quantum_ps / PS_PER_NS);
		print_str(p, "host_timescale", NULL, x->cfg->tai ? "tai" : "utc");
		print_double(p, "tap_offset_ns", NULL, tk->offset_ns);
		print_double(p, "tap_rate_ppb", NULL, tk->rate_ppb);
		print_double(p, "tap_wander_ns", NULL, tk->wander_ns);
		print_double(p, "tap_noise_ns", NULL, tk->noise_ns);
		print_double(p, "tap_quantum_ns", NULL, (double)tk->quantum_ps / PS_PER_NS);
		print_object_end(p);
		for (int d = 0; d < REF_DISTS; d++) {
			ref_summary(s, h, d, &sum);
			summary_print(p, names[d], &sum);
		}
		ref_summary(s, h, -1, &sum);
		summary_print(p, "all", &sum);
		print_object_begin(p, "fit");
		if (s->ref[h].any)
			print_double(p, "offset_ns", NULL,
				     round((host_det_sync_ns(x, s->ref[h].first_ps) -
					    host_det_sync_ns(t, s->ref[h].first_ps)) * 1000) / 1000);
		else
			print_null(p, "offset_ns", NULL);
		print_double(p, "rate_ppb", NULL, k->rate_ppb - tk->rate_ppb);
		if (s->ref[h].any)
			print_int(p, "first_ns", NULL,
				  sim_start_ns(s) + floordiv(s->ref[h].first_ps, PS_PER_NS));
		else
			print_null(p, "first_ns", NULL);
		print_object_end(p);
		print_object_end(p);
	}
	print_object_end(p);
}

static void speed_text(int64_t bps, char *buf, size_t len)
{
	if (bps % 1000000000 == 0)
		snprintf(buf, len, "%" PRId64 "G", bps / 1000000000);
	else
		snprintf(buf, len, "%" PRId64 "M", bps / 1000000);
}

static int write_truth(struct sim *s, const char *path)
{
	const struct sim_config *c = s->c;
	struct wholefile w;
	struct printer *p;
	char speed[32];
	int err = wholefile_open(&w, path);

	if (err) {
		sim_sys(s, err, "%s", w.tmp);
		wholefile_close(&w, true);
		return err;
	}
	speed_text(c->speed_bps, speed, sizeof(speed));
	p = print_create(w.f, PRINT_JSON, PRINT_PRETTY);
	print_uint(p, "seed", NULL, c->seed);
	print_array_begin(p, "rates");
	for (unsigned i = 0; i < c->nrates; i++)
		print_int(p, NULL, NULL, c->rates[i]);
	print_array_end(p);
	print_uint(p, "messages", NULL, s->md_n);
	print_uint(p, "trades", NULL, s->ntr);
	print_uint(p, "fix_messages", NULL, s->fix_messages);
	print_int(p, "start_ns", NULL, sim_start_ns(s));
	print_int(p, "end_ns", NULL, sim_start_ns(s) + s->last_ps / PS_PER_NS);
	print_str(p, "topology", NULL, "topology");
	print_str(p, "switch", NULL, sim_switches[c->sw]->name);
	print_double(p, "cable_m", NULL, c->cable_m);
	print_double(p, "ns_per_m", NULL, NS_PER_M);
	print_str(p, "speed", NULL, speed);
	print_array_begin(p, "hosts");
	for (int i = 0; i < SIM_HOSTS; i++) {
		struct host *h = &s->h[i];
		const struct sim_clock *k = &h->cfg->clock;
		char jn[32];

		snprintf(jn, sizeof(jn), "%s.journal", sim_hosts[i]);
		print_object_begin(p, NULL);
		print_str(p, "name", NULL, sim_hosts[i]);
		print_str(p, "file", NULL, h->file);
		print_str(p, "journal", NULL, jn);
		print_str(p, "format", NULL, sim_formats[h->cfg->format]);
		print_int(p, "stamp_resolution_ns", NULL, h->res_ns);
		print_str(p, "timescale", NULL, h->cfg->tai ? "tai" : "utc");
		{
			char a[16];

			snprintf(a, sizeof(a), "%u.%u.%u.%u", sim_addr[i][0],
				 sim_addr[i][1], sim_addr[i][2], sim_addr[i][3]);
			print_str(p, "address", NULL, a);
		}
		print_object_begin(p, "clock");
		print_double(p, "offset_ns", NULL, k->offset_ns);
		if (k->rate_ppb != 0)
			print_double(p, "rate_ppb", NULL, k->rate_ppb);
		print_double(p, "wander_ns", NULL, k->wander_ns);
		print_double(p, "period_s", NULL, k->period_s);
		print_double(p, "noise_ns", NULL, k->noise_ns);
		print_double(p, "quantum_ns", NULL, (double)k->quantum_ps / PS_PER_NS);
		print_double(p, "phase_rad", NULL, round(h->phase * 1e6) / 1e6);
		print_object_end(p);
		print_int(p, "capture_start_ns", NULL,
			  sim_start_ns(s) + h->cap_start_ps / PS_PER_NS);
		print_array_begin(p, "unsync");
		for (unsigned u = 0; u < h->cfg->nunsync; u++) {
			print_object_begin(p, NULL);
			print_double(p, "from_s", NULL, h->cfg->unsync[u].from_s);
			print_double(p, "to_s", NULL, h->cfg->unsync[u].to_s);
			print_object_end(p);
		}
		print_array_end(p);
		print_uint(p, "packets", NULL, h->packets);
		print_object_end(p);
	}
	print_array_end(p);
	sim_print_hops(p, s, -1, c->nrates == 1 ? c->rates[0] : 0);
	sim_print_transactions(p, s, -1);
	sim_print_switches(p, s, -1);
	print_object_begin(p, "faults");
	print_uint(p, "retransmitted_segments", NULL, s->fl.retransmitted);
	print_uint(p, "lost_then_retransmitted", NULL, s->fl.lost);
	print_uint(p, "coalesced_segments", NULL, s->fl.coalesced);
	print_uint(p, "split_messages", NULL, s->fl.split);
	print_uint(p, "reordered", NULL, s->fl.reordered);
	print_uint(p, "pure_acks", NULL, s->fl.pure_acks);
	print_uint(p, "non_fix_packets", NULL, s->fl.non_fix);
	print_object_end(p);
	if (c->nrates > 1) {
		print_array_begin(p, "by_rate");
		for (unsigned r = 0; r < c->nrates; r++) {
			print_object_begin(p, NULL);
			print_int(p, "rate", NULL, c->rates[r]);
			sim_print_hops(p, s, (int)r, c->rates[r]);
			sim_print_transactions(p, s, (int)r);
			sim_print_switches(p, s, (int)r);
			print_object_end(p);
		}
		print_array_end(p);
	}
	if (c->tap[SIM_ALGO] || c->tap[SIM_VENUE])
		sim_print_reference(p, s);
	err = print_destroy(p) ? -EIO : 0;
	err = wholefile_close(&w, err != 0) ?: err;
	if (err)
		sim_sys(s, err, "%s", path);
	return err;
}

static int write_topology(struct sim *s, const char *path)
{
	const struct sim_config *c = s->c;
	struct wholefile w;
	char speed[32];
	int err = wholefile_open(&w, path);
	FILE *f = w.f;

	if (err) {
		sim_sys(s, err, "%s", w.tmp);
		wholefile_close(&w, true);
		return err;
	}
	speed_text(c->speed_bps, speed, sizeof(speed));
	fprintf(f, "# tapless topology\n");
	for (int i = 0; i < SIM_HOSTS; i++)
		fprintf(f, "host %s %u.%u.%u.%u\n", sim_hosts[i], sim_addr[i][0],
			sim_addr[i][1], sim_addr[i][2], sim_addr[i][3]);
	if (c->sw == SIM_SWITCH_NONE) {
		fprintf(f, "link algo venue %.15gm\n", c->cable_m);
	} else {
		fprintf(f, "switch sw1 %s %s\n",
			swmodel_mode_name(sim_switches[c->sw]->mode), speed);
		fprintf(f, "link algo sw1 %.15gm\n", c->cable_m);
		fprintf(f, "link sw1 venue %.15gm\n", c->cable_m);
	}
	err = wholefile_close(&w, false);
	if (err)
		sim_sys(s, err, "%s", path);
	return err;
}

/* ------------------------------------------------------------------ run */

static void sim_loop(struct sim *s)
{
	while (s->evn && !s->err) {
		struct event e = ev_pop(s);

		s->now = e.t;
		switch (e.type) {
		case EV_MD: ev_md(s); break;
		case EV_CTRL: ev_ctrl(s, e.a, (int)e.b); break;
		case EV_LOGON: ev_logon(s, e.a, DIR_C2S); break;
		case EV_LOGON_REPLY: ev_logon(s, e.a, DIR_S2C); break;
		case EV_BUY: ev_order(s, e.b, 0); break;
		case EV_SELL: ev_order(s, e.b, 1); break;
		case EV_REPORTS: ev_reports(s, e.b, e.a); break;
		case EV_ACK: ev_ack(s, e.a); break;
		case EV_RETRANS: ev_retrans(s, e.seg); break;
		}
		for (int h = 0; h < SIM_HOSTS; h++) {
			if (s->h[h].qn)
				host_flush(s, &s->h[h], false);
			if (s->tap[h].qn)
				host_flush(s, &s->tap[h], false);
		}
	}
	for (int h = 0; h < SIM_HOSTS; h++) {
		host_flush(s, &s->h[h], true);
		if (s->tap[h].tap)
			host_flush(s, &s->tap[h], true);
	}
}

static void sim_free(struct sim *s)
{
	for (int h = 0; h < 2 * SIM_HOSTS; h++) {
		struct host *x = h < SIM_HOSTS ? &s->h[h] : &s->tap[h - SIM_HOSTS];

		while (x->qn) {
			struct rec *r = rec_pop(x);

			r->next = s->recfree;
			s->recfree = r;
		}
		free(x->q);
		free(x->path);
		free(x->tmp);
	}
	while (s->recfree) {
		struct rec *r = s->recfree;

		s->recfree = r->next;
		free(r);
	}
	for (size_t i = 0; i < s->evn; i++)
		if (s->ev[i].seg)
			seg_free(s, s->ev[i].seg);
	for (int i = 0; i < CONNS * 2; i++) {
		struct flow *f = &s->f[i];

		if (f->held)
			seg_free(s, f->held);
		free(f->rq);
		free(f->unc);
		free(f->pend);
		free(s->trk[i].ooo);
		free(s->trk[i].pend);
	}
	while (s->segfree) {
		struct seg *g = s->segfree;

		s->segfree = g->next;
		free(g);
	}
	free(s->ev);
	for (unsigned b = 0; s->b && b < s->nb; b++)
		for (int d = 0; d < D_COUNT; d++) {
			free(s->b[b].d[d].v);
			hist_destroy(s->b[b].d[d].h);
		}
	for (int h = 0; h < SIM_HOSTS; h++)
		for (int d = 0; d < REF_DISTS; d++) {
			free(s->ref[h].d[d].v);
			hist_destroy(s->ref[h].d[d].h);
		}
	free(s->b);
	free(s->tr);
	free(s->fbuf);
}

int sim_run(const struct sim_config *c, struct sim_result *res, char *err,
	    size_t len)
{
	struct sim *s;
	char *path;
	int rc;

	if (res)
		memset(res, 0, sizeof(*res));
	rc = sim_check(c, err, len);
	if (rc)
		return rc;
	s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->errbuf = err;
	s->errlen = len;
	s->st_sec = INT64_MIN;
	rc = sim_symbols(s, c->symbols ? c->symbols : "", err, len);
	if (rc) {
		free(s);
		return rc;
	}
	rng_seed(&s->net, c->seed, 1);
	rng_seed(&s->app, c->seed, 2);
	rng_seed(&s->fault, c->seed, 3);
	rng_seed(&s->misc, c->seed, 4);
	s->frame_cap = FRAME_MAX_HEADER + (c->mss > 256 ? c->mss : 256) + 64;
	s->fbuf = xmalloc(s->frame_cap);
	s->ps_per_byte = 8 * PS_PER_S / c->speed_bps;
	s->ncables = c->sw == SIM_SWITCH_NONE ? 1 : 2;
	s->cables_ps = s->ncables * llround(c->cable_m * NS_PER_M * PS_PER_NS);
	s->nb = c->nrates + 1;
	s->b = xcalloc(s->nb, sizeof(*s->b));
	for (int h = 0; h < SIM_HOSTS; h++) {
		host_init(s, h);
		if (c->tap[h])
			tap_init(s, h);
	}
	flow_init(s, CONN_MD, DIR_C2S, 40001, 9001);
	flow_init(s, CONN_MD, DIR_S2C, 40001, 9001);
	flow_init(s, CONN_ORD, DIR_C2S, 40002, 9002);
	flow_init(s, CONN_ORD, DIR_S2C, 40002, 9002);

	rc = mkdir_p(c->out_dir);
	if (rc) {
		sim_sys(s, rc, "%s", c->out_dir);
		goto out;
	}
	for (int h = 0; h < SIM_HOSTS && !s->err; h++) {
		host_open(s, &s->h[h]);
		if (c->tap[h] && !s->err)
			tap_open(s, &s->tap[h]);
	}
	if (s->err)
		goto out;

	/* The script: connect, log on, publish. */
	ev_push(s, 0, EV_CTRL, CONN_MD, 0, NULL);
	ev_push(s, 10 * 1000 * PS_PER_NS, EV_CTRL, CONN_ORD, 0, NULL);
	ev_push(s, LOGON_PS, EV_LOGON, CONN_MD, 0, NULL);
	ev_push(s, LOGON_PS + 10 * 1000 * PS_PER_NS, EV_LOGON, CONN_ORD, 0, NULL);
	s->run_start_ps = MD_START_PS;
	s->run_n = md_run_n(s, 0);
	ev_push(s, MD_START_PS, EV_MD, 0, 0, NULL);
	sim_loop(s);

	for (int h = 0; h < SIM_HOSTS; h++) {
		host_close(s, &s->h[h], s->err != 0);
		host_close(s, &s->tap[h], s->err != 0);
	}
	if (s->err)
		goto out;
	for (int h = 0; h < SIM_HOSTS && !s->err; h++) {
		char jn[32];

		host_span(s, &s->h[h]);
		snprintf(jn, sizeof(jn), "%s.journal", sim_hosts[h]);
		path = path_join(c->out_dir, jn);
		sim_write_journal(s, &s->h[h], path);
		free(path);
	}
	if (!s->err) {
		path = path_join(c->out_dir, "topology");
		write_topology(s, path);
		free(path);
	}
	if (!s->err) {
		path = path_join(c->out_dir, "truth.json");
		write_truth(s, path);
		free(path);
	}
	if (res && !s->err) {
		res->md_messages = s->md_n;
		res->trades = s->ntr;
		res->fix_messages = s->fix_messages;
		for (int h = 0; h < SIM_HOSTS; h++) {
			res->packets[h] = s->h[h].packets;
			snprintf(res->file[h], sizeof(res->file[h]), "%s", s->h[h].file);
			res->tap_packets[h] = s->tap[h].packets;
			snprintf(res->tap_file[h], sizeof(res->tap_file[h]), "%s",
				 s->tap[h].file);
		}
	}
out:
	for (int h = 0; h < SIM_HOSTS; h++) {
		host_close(s, &s->h[h], true);
		host_close(s, &s->tap[h], true);
	}
	rc = s->err;
	sim_free(s);
	free(s);
	return rc;
}
