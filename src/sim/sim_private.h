/* sim_private.h — what the files of tapless sim share, behind sim.h: the
 * model's units, the state of a run (struct sim) and the functions one
 * file calls in another. Nothing outside src/sim/ includes it.
 *
 *   sim.c        defaults and names, errors, the event queue, the run
 *   sim_parse.c  the command-line forms of the configuration (sim.h)
 *   sim_clock.c  clock model: a host's stamps, their error bounds, what
 *                its sync journal says
 *   sim_net.c    NICs, cables and switch, receive stack, TCP flows and
 *                their faults
 *   sim_fttc.c   the FTTC workload: Logons, market data, orders, reports
 *   sim_tap.c    optical taps and truth.json's "reference"
 *   sim_truth.c  truth distributions, the algo's capture read back,
 *                truth.json
 *   sim_write.c  captures written in stamp order, journals, topology
 */
#ifndef TAPLESS_SIM_PRIVATE_H
#define TAPLESS_SIM_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/heap.h"
#include "base/nstime.h"
#include "base/rng.h"
#include "base/wholefile.h"
#include "files/frame.h"
#include "files/pcapng.h"
#include "fix/fix.h"
#include "sim/sim.h"

struct journal_sample;
struct hist;
struct pcap;
struct pcap_dumper;
struct printer;
struct summary;
struct swmodel_preset;

#define PS_PER_NS 1000LL
#define PS_PER_S 1000000000000LL
#define NS_PER_M 4.9			/* light in fibre */
/* The files' shb_userappl. Not the build's version (base/prog.h), on
 * purpose: sim's output is a function of its options and seed alone, so
 * files made by two builds compare byte for byte (the replay tests and
 * every refactoring's identity check rely on it). */
#define SIM_USERAPPL "tapless sim 0.1"
#define MSG_CAP 1024			/* one FIX message */
#define SEG_STARTS 4			/* message starts in one segment */

/* a / b rounded toward minus infinity. */
static inline int64_t sim_floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Indexed by enum sim_host_id, enum sim_switch, enum sim_format. */
extern const char *const sim_hosts[SIM_HOSTS];		/* "algo", "venue" */
extern const uint8_t sim_addr[SIM_HOSTS][4];		/* IPv4 */
extern const struct swmodel_preset *const sim_switches[SIM_SWITCH_COUNT];
extern const char *const sim_formats[SIM_FMT_COUNT];	/* "pcapng", ... */

/* Where the first transmission or arrival of a segment was stamped. capt:
 * the frame is in the host's capture file; drop: it would have been but
 * --capture-drop left it out (the stamp is the one it would have had). */
struct stamp_at {
	int64_t stamp, ps, wire_ps;
	bool capt, set, drop;
};

enum mkind { MK_LOGON, MK_MD, MK_TRIGGER, MK_ORDER, MK_NEW, MK_FILL };

struct mstart {
	uint8_t kind;
	uint8_t side;		/* 0 BUY, 1 SELL */
	uint8_t sym;
	int16_t bucket;		/* run, or -1 */
	uint32_t trade;		/* orders and reports; MK_TRIGGER */
	uint64_t end;		/* offset of the message's end in its flow */
	uint32_t len;		/* its length: it starts at end - len */
};

/* A frame in a host's output queue. For the transactions, computed from
 * the algo's capture in file order: the TCP payload it carries (flow, off,
 * plen) and, when it is their first copy in this capture (the one a reader
 * uses), the messages whose first byte it carries (tag). A dropped frame
 * stays in the queue, in its place, for the truth's reader, and is not
 * written. */
struct rec {
	int64_t stamp;		/* as written */
	int64_t t_ps;		/* true instant */
	uint64_t order;
	uint32_t len;
	uint8_t dir;
	uint8_t ntag;
	bool dropped;		/* left out of the file by --capture-drop */
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
	struct heap *q;		/* of struct rec *, by sim_rec_less */
	struct pcapng_writer *ng;
	uint32_t ifid, ifid_in;	/* frames sent, received (the same but taps) */
	struct pcap *pc;
	struct pcap_dumper *pd;
	struct wholefile pcapf;	/* pc's file, PATH.part until whole */
	char file[32];
	char *path, *tmp;
	uint64_t packets;
	struct rng droprng;	/* --capture-drop's draws, its own stream */
	uint64_t dropped;	/* frames it left out of the file */
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
	bool tx_lost[2];	/* the order is not whole in the capture */
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

/* Byte ranges of a flow in frames --capture-drop left out of the algo's
 * capture, the latest ones: a message they meet is not whole in the file. */
#define DROP_RING 256
struct trk {
	struct { uint64_t off, end; } drop[DROP_RING];
	unsigned drop_head, ndrop;
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
		bool lost;	/* not whole in the capture (--capture-drop) */
	} v[LATEST_RING];
	unsigned head, n;
};

/* Distributions, per bucket (a run of --rates, or the Logons). */
enum { D_HOP_ST = 0, D_HOP_TR = 2, D_HOP_OUT = 4, D_SW = 6, D_TR_ST = 8,
       D_TR_TR = 12, D_COUNT = 16 };
enum { TR_TICK, TR_FILL_SELL, TR_ACK, TR_FILL, TR_COUNT };

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
	uint64_t trigger_lost[2];	/* TR_TICK, TR_FILL_SELL: latest not whole */
};

/* One transaction of the truth, for joining with the correlator's samples
 * file: the order's stamp as written, the stamped latency (the one it
 * would have with its trigger whole when !trigger). */
struct txn_sample {
	int64_t ts, latency_ns;
	bool trigger;
};

struct txn_list {
	struct txn_sample *v;
	size_t n, cap;
};

/* One hop message of the truth for the file truth-samples: its frames'
 * stamps on UTC, true latency and switch residence, journals' word. */
struct hop_sample {
	int64_t tx_utc, rx_utc;
	int64_t true_ps, sw_ps;
	uint8_t from;
	bool sync;
};

struct hop_list {
	struct hop_sample *v;
	size_t n, cap;
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
	struct heap *ev;	/* of struct event, by (t, order) */
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
	struct txn_list txl[TR_COUNT];	/* but with no_truth_stats */
	struct hop_list hopl;		/* with truth_samples */
	/* SendingTime cache. */
	struct fix_utc_cache utc;	/* SendingTime's date and time of day */
	/* Errors. */
	int err;
	char *errmsg;	/* sim_run()'s err, SIM_ERRBUF bytes (may be NULL) */
};

/* A FIX message to send, and what the truth needs of it. */
struct msgref {
	const char *buf;
	size_t len;
	struct mstart meta;
};

/* Flow fi of connection conn (CONN_*) in direction dir (DIR_*). */
static inline int sim_flow_index(int conn, int dir)
{
	return conn * 2 + dir;
}

/* sim.c */

/* Format the message into err (when not NULL); returns -EINVAL. */
int sim_fail(char err[SIM_ERRBUF], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The first system error (-errno) of the run: kept with its message
 * (": strerror" appended) in s->errmsg, and the run stops. Returns the
 * first error. */
int sim_sys(struct sim *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Schedule an event at true time t (now if earlier); events of one time
 * run in the order pushed. */
void sim_ev_push(struct sim *s, int64_t t, int type, int a, uint32_t b,
		 struct seg *g);

/* sim_clock.c */

int64_t sim_start_ns(const struct sim *s);	/* true time 0, UTC ns */
int64_t sim_interval_ns(const struct sim *s);	/* between journal samples */
/* Host id's clock state from its configuration, before the run. */
void sim_host_init(struct sim *s, int id);
/* Once the run's span is known: the journal's error bounds widened by
 * the rate's error over the run. */
void sim_host_span(struct sim *s, struct host *h);
/* The rate's part of the clock error at true time t_ps, ns. */
double sim_clock_rate_ns(const struct sim_clock *k, int64_t t_ps);
/* Whole ns a stamp can lose to the quantum. */
int64_t sim_clock_quantum_bound_ns(const struct sim_clock *k);
/* The clock's deterministic error at t_ps when in sync, ns. */
double sim_host_det_sync_ns(const struct host *h, int64_t t_ps);
/* The stamp host h gives an event at true time t_ps, ns on its timescale
 * (draws the clock noise from h's generator). */
int64_t sim_host_stamp(struct host *h, int64_t t_ps, int64_t start_ns);
/* Journal sample j's time, UTC ns. */
int64_t sim_journal_time(const struct sim *s, int64_t j);
/* The sample host h's sync journal holds at t_ns (UTC). */
void sim_journal_sample(const struct sim *s, const struct host *h,
			int64_t t_ns, struct journal_sample *js);
/* What the journal says for a stamp (UTC): in sync or not. */
bool sim_journal_lookup(const struct sim *s, const struct host *h,
			int64_t stamp_utc);

/* sim_net.c */

void sim_flow_init(struct sim *s, int conn, int dir, uint16_t client_port,
		   uint16_t server_port);
/* Send messages m[0..nm) in one write on flow fi; more_follows: another
 * data segment follows at once on this flow. */
void sim_flow_send(struct sim *s, int fi, const struct msgref *m,
		   unsigned nm, bool more_follows);
/* The application at f's receiver reacts (type: R_*) once f's bytes up
 * to end are delivered. */
void sim_react_add(struct flow *f, uint64_t end, int type, uint32_t arg,
		   int side);
void sim_seg_free(struct sim *s, struct seg *g);
void sim_ev_retrans(struct sim *s, struct seg *g);	/* EV_RETRANS */
void sim_ev_ack(struct sim *s, int fi);			/* EV_ACK */
void sim_ev_ctrl(struct sim *s, int conn, int step);	/* EV_CTRL */

/* sim_fttc.c */

/* The --symbols list into s->sym; 0 or -EINVAL (err says why). */
int sim_symbols(struct sim *s, const char *list, char err[SIM_ERRBUF]);
/* The script's first events: connect, log on, publish. */
void sim_fttc_start(struct sim *s);
void sim_ev_md(struct sim *s);					/* EV_MD */
void sim_ev_order(struct sim *s, uint32_t t, int side);	/* EV_BUY, EV_SELL */
void sim_ev_reports(struct sim *s, uint32_t t, int side);	/* EV_REPORTS */
void sim_ev_logon(struct sim *s, int conn, int dir);		/* EV_LOGON* */

/* sim_tap.c */

void sim_tap_init(struct sim *s, int id);
/* Create tap-HOST.pcapng; 0 or the run's error. */
int sim_tap_open(struct sim *s, struct host *t);
/* A frame host hi saw at t_ps (stamped stamp), on its fibre at wire_ps:
 * the tap's copy, and the stamps' difference for the reference. */
void sim_tap_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
		  int64_t wire_ps, int64_t stamp, const uint8_t *frame,
		  uint32_t len, bool captured);
/* truth.json's "reference" object. */
void sim_print_reference(struct printer *p, struct sim *s);

/* sim_truth.c */

void sim_dist_add(const struct sim *s, struct dist *d, int64_t v);
/* Summary of the samples of d[0..n) together. */
void sim_dists_summary(const struct sim *s, const struct dist *const *d,
		       unsigned n, struct summary *out);
/* One-way truth of the messages starting in segment g. */
void sim_hop_truth(struct sim *s, const struct seg *g,
		   const struct stamp_at *tx, const struct stamp_at *rx);
/* A frame of the algo's capture with FIX payload, in file order. */
void sim_tr_record(struct sim *s, const struct rec *r);
/* truth.json; 0 or the run's error. */
int sim_write_truth(struct sim *s, const char *path);
/* truth-samples (truth_samples); 0 or the run's error. */
int sim_write_truth_samples(struct sim *s, const char *path);

/* sim_write.c */

/* A record of a frame for a capture file, numbered in the order
 * recorded, with no flow or tags yet. */
struct rec *sim_rec_new(struct sim *s, int64_t stamp, int64_t t_ps,
			enum pcapng_dir dir, const uint8_t *frame, uint32_t len,
			bool dropped);
bool sim_rec_less(const void *a, const void *b, void *ctx); /* heap order */
/* A frame seen by host hi at t_ps (stamped stamp), on its fibre at
 * wire_ps: queued for its capture (and its tap). g: the segment it
 * carries, tag: its first copy in this capture. at (may be NULL): its
 * capt and drop set, whether the file has the frame. */
void sim_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
	      int64_t wire_ps, int64_t stamp, const uint8_t *frame,
	      uint32_t len, const struct seg *g, bool tag, struct stamp_at *at);
/* Write every record of h no future record can precede (all: every one). */
void sim_host_flush(struct sim *s, struct host *h, bool all);
char *sim_path_join(const char *dir, const char *name);	/* allocated */
/* Create h's capture (PATH.part until closed); 0 or the run's error. */
int sim_host_open(struct sim *s, struct host *h);
/* Finish h's capture, or with discard remove it. */
int sim_host_close(struct sim *s, struct host *h, bool discard);
int sim_write_journal(struct sim *s, struct host *h, const char *path);
int sim_write_topology(struct sim *s, const char *path);
void sim_speed_text(int64_t bps, char *buf, size_t len);	/* "10G" */

#endif
