/* corr_private.h — the correlator's insides, shared by its files and by
 * nobody else (the unit tests aside); the interface is corr.h.
 *
 *   corr.c        life (create, hosts, journals, destroy) and the run loop:
 *                 packets in time order, each to its stream, each message
 *                 to transactions and matching
 *   corr_time.c   timescales of capture interfaces
 *   corr_flow.c   flows and the streams reassembling them
 *   corr_txn.c    transactions at one host, market data rate buckets
 *   corr_match.c  the matching window, hop and switch samples
 *   corr_stats.c  result sets, sample bounds, the samples file
 *   corr_print.c  corr_print()
 *   corr_traffic.c  the traffic's bounds on the clocks (corr_traffic.h)
 *   corr_thread.c hosts read and parsed on threads of their own
 *
 * Nothing here allocates per message, except where a new flow, stream,
 * symbol or result first appears.
 */
#ifndef TAPLESS_CORR_PRIVATE_H
#define TAPLESS_CORR_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"
#include "corr/corr.h"
#include "files/capset.h"	/* struct capset_packet, held per host */
#include "files/frame.h"	/* struct frame_flow, held per flow */
#include "files/topo.h"		/* struct topo_path, held per pair of hosts */

struct bound;
struct calib;
struct corr_stream_make;
struct corr_thr;
struct frame_info;
struct calib_term;
struct corr_traffic;
struct fix_msg;
struct fixstream;
struct fixstream_msg;
struct hist;

#define CORR_MAX_OBS 4		/* hosts one message is tracked at */
#define CORR_RING 64		/* triggers kept per symbol however old */
#define CORR_RATE_RING 64	/* market data stamps for the rate */
#define CORR_ORDERS 65536	/* orders awaiting their reports, per host */
#define CORR_MAX_WARNINGS 64
#define CORR_LOST_RING 4096	/* capture holes kept per host, for the
				 * transactions they may have hidden (at
				 * 5 % of 50 k/s dropped, 1.6 s of them) */
#define CORR_PEND_MAX 65536	/* orders waiting for holes, per host */
#define NO_BUCKET (-1)
#define ALL_FLOWS UINT32_MAX
/* A frame's ref for its stream (fixstream_segment()): file and block. */
#define CORR_REF_SHIFT 40
#define CORR_REF_OFFSET ((1ull << CORR_REF_SHIFT) - 1)
/* The frame's stamp was flagged degraded by the tap that took it
 * (cap_packet.degraded): above the file index, which stays far below. */
#define CORR_REF_DEGRADED (1ull << 63)
#define CORR_REF_FILE(ref) ((unsigned)(((ref) & ~CORR_REF_DEGRADED) >> CORR_REF_SHIFT))

enum corr_dir { DIR_UNKNOWN = 0, DIR_IN = 1, DIR_OUT = 2 };
/* A clock's standing in its journal. SYNC_HOLD: no fresh measurement, the
 * last fresh bound grown by the drift limit holds (bounded, like SYNC_IN). */
enum corr_sync { SYNC_NONE, SYNC_IN, SYNC_OUT, SYNC_HOLD };

enum corr_txn_kind {
	TXN_TICK_TO_TRADE,
	TXN_FILL_TO_SELL,
	TXN_ORDER_TO_ACK,
	TXN_ORDER_TO_FILL,
	TXN_KINDS
};

/* Their names, in the output and the samples file. */
extern const char *const corr_txn_names[TXN_KINDS];

/* What a capture's interface means to us, found on its first packet. */
struct corr_iface {
	unsigned file, id;
	bool usable;		/* stamps on a timescale we can compare */
	int64_t delta_ns;	/* added to stamps: to the common timescale */
	int64_t journal_ns;	/* added to those: to UTC, the journals' */
	int scale;		/* enum ts_timescale as understood */
	bool assumed;		/* the file did not say: we assumed */
	char clock[16];		/* journal clock: "sys", "phcN" */
	uint16_t linktype;
	int64_t resolution_ns;	/* of its stamps: 1 ns, 1000 for µs files */
	bool sender;		/* frames stamped by the program that sent
				 * them (tapless-capd --tx-socket) */
	bool hw;		/* hardware stamps */
	char name[64];		/* if_name, or "ifN" */
};

/* A symbol's triggers by stamp, ascending: ts[start, end). Those newer
 * than the newest less twice the hold time are all kept (an order its own
 * stream's hole held back looks back that far), and the latest CORR_RING
 * however old. */
struct corr_ring {
	int64_t *ts;
	size_t start, end, cap;
	int64_t gone;		/* the newest stamp let go */
};

struct corr_sym {
	char name[32];
	struct corr_ring md;	/* RX 35=X bids */
	struct corr_ring fill;	/* RX 35=8 39=2 of a BUY */
};

/* An order whose trigger (the latest before it, by stamp) may still be
 * behind a hole in one of its host's inbound streams. */
struct corr_pend {
	int64_t ts;
	struct corr_sym *y;
	int kind;		/* TXN_TICK_TO_TRADE or TXN_FILL_TO_SELL */
	int bucket;		/* the market data rate's at its stamp */
	int64_t trig;		/* its latest trigger so far (0: none):
				 * triggers released later update it, as the
				 * symbol's ring moves on meanwhile */
};

/* Bytes one of the host's inbound streams never got (a hole given up):
 * on the wire in [lo, hi), on flow, which had carried the trigger kinds
 * in `carried` (bit per enum corr_txn_kind; all when it had carried
 * nothing yet). */
struct corr_lost {
	int64_t lo, hi;
	uint32_t flow;
	unsigned carried;
};

/* Per host and flow: holes given up, their bytes, and the samples they
 * hid (orders counted as trigger_lost because of them). */
struct corr_loss {
	uint32_t flow;
	uint64_t holes, bytes, affected;
};

struct corr_order {
	uint64_t key;		/* hash of ClOrdID; 0: free */
	int64_t created;
	int64_t tx, ack, fill;	/* 0: not seen */
	uint8_t done;		/* 1: ack sampled, 2: fill sampled */
};

struct corr_stream_stats {
	uint64_t segments, bytes, messages, retransmits, out_of_order,
		lost_bytes, skipped_bytes, midstream_bytes, bad_checksum,
		bad_framing, truncated;
};

/* Live: a host's state besides its packets. */
struct corr_host_live {
	bool ended;		/* its files are read to their end */
	bool stalled;
	int64_t horizon;	/* its capture is complete up to here
				 * (common timescale): heartbeats, packets */
	int64_t seen_real;	/* wall clock when data last came */
	uint64_t seen_packets;	/* packets + heartbeats when last looked */
	unsigned cur_file;	/* the file being read */
	int sync;		/* enum corr_sync at the watermark */
	struct capset_follow_stats fst;	/* as last reported */
	unsigned damaged;
	uint64_t drops;		/* as last reported */
	/* The totals as the interval opened (its figures are the difference). */
	uint64_t iv_packets, iv_messages, iv_only_here, iv_late;
	unsigned iv_flags;	/* CORR_FLAG_* of what happened to it */
	uint64_t late;		/* packets behind what was already closed */
};

struct corr_host {
	char name[64];
	unsigned idx;
	struct capset *cs;
	struct bound *bound;
	char *journal;
	struct calib *cal;	/* its stamps' calibration, or NULL */
	char *cal_path;
	int forced_scale;	/* TS_SCALE_* or -1 */
	bool tap;		/* an observation point (topology tap) */
	/* Decoded on a thread of its own (corr_thread.c), with its own
	 * scratch message for its streams; NULL: on the correlator's. */
	struct corr_thr *thr;
	struct fix_msg *scratch;

	/* Written as its packets are read (on its thread, when it has one;
	 * see struct corr_stream on the alignment). */
	/* The next packet, waiting its turn. */
	_Alignas(64) struct capset_packet next;
	int64_t next_ts;
	struct corr_iface *next_if;
	/* Interfaces met. */
	struct corr_iface *ifs;
	unsigned nifs, cap_ifs;
	struct corr_iface *last_if;
	struct corr_stream *last_stream;	/* most packets follow the last */
	/* Counters. */
	uint64_t packets, non_ip, bad_frames, no_payload, skipped_scale;
	uint64_t tap_tx_skipped;	/* outbound frames a sender stamped too */
	uint64_t sender_frames;	/* frames with their sender's stamp */
	uint64_t clock_jumps;
	int64_t max_ts;
	/* The first and last stamps on the journal's timescale (UTC), to
	 * tell a journal that does not cover the capture. */
	int64_t utc_first, utc_last;
	bool dir_flags, dir_addr;

	/* The correlator's. */
	_Alignas(64) bool have_next;
	int64_t merge_ts;	/* the next packet's stamp, for corr_run() */
	uint64_t degraded_msgs;	/* messages whose first frame's tap stamp
				 * was flagged degraded: no bound claimed */
	uint64_t messages, dir_unknown, only_here, duplicates;
	uint64_t clock_corrected;	/* messages whose stamp's clock phc2sys
					 * keeps: its reading taken off */
	struct corr_stream_stats st;
	struct corr_host_live live;
	/* Market data rate, and the bucket it puts samples in. */
	int64_t md_ts[CORR_RATE_RING];
	unsigned md_n, md_head;
	int bucket;
	/* Transactions. */
	struct hmap *syms;	/* name, zero-padded: struct corr_sym * */
	struct corr_order *orders;
	uint64_t no_trigger[TXN_KINDS];
	/* Stamp order: orders wait while an inbound stream holds bytes
	 * behind a hole (corr_txn.c). */
	struct corr_pend *pend;
	size_t npend, cap_pend;
	struct corr_lost lost[CORR_LOST_RING];
	unsigned nlost, lost_head;
	int64_t lost_horizon;		/* hi of the newest region the ring
					 * let go: triggers before it cannot
					 * be cleared */
	uint32_t lost_horizon_flow;	/* that region's flow */
	uint64_t pend_full;		/* orders counted as trigger_lost
					 * because they waited too long: too
					 * many waited, or their triggers'
					 * time was let go meanwhile */
	struct corr_loss *losses;
	unsigned nlosses;
	uint64_t trigger_lost[TXN_KINDS];
};

struct corr_flow {
	struct frame_flow f;
	uint64_t hosts;		/* bit per host whose capture has it */
	char name[112];
	char session[132];	/* "SENDER->TARGET" of its first message with
				 * both CompIDs, "" before */
	bool announced;		/* its session told to the sinks */
	unsigned streams;	/* its streams held now (corr_flow_expire()) */
	bool over_limit;	/* live: found the per-flow results full */
};

/* Live: what a result gathers besides its histograms. */
#define CORR_LIVE_BUCKETS 16	/* 100 ns .. 10 ms, 1-2-5 */
extern const int64_t corr_live_le_ns[CORR_LIVE_BUCKETS];

struct corr_live_stat {
	struct hist *iv;	/* this interval, in sync (or no journal);
				 * NULL for per-flow results */
	uint64_t iv_out;	/* this interval, out of sync */
	uint64_t iv_hold;	/* this interval, in iv with an end in
				 * holdover */
	uint64_t iv_bound_known;
	int64_t iv_bound_max;
	/* Since the start, for the metrics: counts at or below each bound,
	 * and of all. Out-of-sync samples are counted apart. */
	uint64_t le[CORR_LIVE_BUCKETS];
	uint64_t n, out, hold;
	double sum_s;
};

/* Laid out for a host decoded on a thread of its own (corr_thread.c):
 * what its thread writes per packet, and what the correlator's writes,
 * on cache lines of their own, or each packet would move the lines to
 * and fro between the cores (a threaded run took twice the CPU time of
 * one thread before). */
struct corr_stream {
	/* Set when made. */
	struct corr *c;
	struct corr_host *h;
	uint8_t dir;
	uint8_t proto;
	struct frame_flow key;
	struct fixstream *fs;
	/* The host's: written as its packets are read. */
	_Alignas(64) bool sender_seen;	/* a frame stamped by its sender
					 * came */
	/* The correlator's. */
	_Alignas(64) uint32_t flow;
	bool hole;		/* inbound, bytes held behind a hole */
	bool ended;		/* its sender's FIN or RST came (a SYN
				 * starts it again) */
	bool kept;		/* in c->streams (corr_stream_add()) */
	int64_t hole_lo;	/* then: messages from here may be missing */
	unsigned carried;	/* trigger kinds its messages carried */
	int64_t last_ts;	/* stamp of its last packet */
	/* The packet being fed: its interface's clock, for the journal. */
	const struct corr_iface *ifc;
};

struct corr_obs {
	int64_t ts;
	int64_t bound;		/* -1: unknown; else the clock's, what it
				 * grew in holdover and the resolution's */
	uint32_t wire;
	uint32_t flow;
	int bucket;
	int32_t hold;		/* of bound: grown in holdover (capped) */
	int32_t clk;		/* the clock's offset from its reference,
				 * as phc2sys read it (bound_offset_at()):
				 * taken off the stamp in one-way samples */
	int32_t cut;		/* what that takes out of bound */
	uint16_t host;
	uint16_t res;		/* of bound: the resolution's (capped) */
	uint8_t dir;
	uint8_t sync;
	bool hw;		/* a hardware stamp (its calibration) */
};

/* The terms of a one-way sample's error bound (tapless-correlate(8),
 * Error bounds): both ends' clocks as their journals last measured them,
 * what those grew in holdover since, where the stamps were taken (the
 * hosts' calibrations), and the stamps' resolution. -1: not known (no
 * journal, no calibration). */
enum corr_term {
	CORR_TERM_CLOCK, CORR_TERM_HOLDOVER, CORR_TERM_STAMP,
	CORR_TERM_RESOLUTION, CORR_TERMS
};
extern const char *const corr_term_names[CORR_TERMS];

struct corr_terms {
	int64_t v[CORR_TERMS];
};

struct corr_entry {
	uint32_t flow, seq;	/* key 1, exact */
	uint64_t k2;		/* key 2 (hash), 0: none */
	uint32_t next1, next2;	/* chains: index + 1, 0 ends */
	int64_t created;
	uint8_t nobs;
	bool live;
	bool paired;
	struct corr_obs obs[CORR_MAX_OBS];
};

/* One result: a histogram with its key and the error-bound tallies. */
struct corr_stat {
	uint16_t from, to;	/* hosts; for transactions from == to */
	uint32_t flow;		/* ALL_FLOWS, or a flow id */
	int bucket;
	int kind;		/* transactions: enum corr_txn_kind */
	const char *sw;		/* switches: the switch's name */
	struct hist *h;		/* in sync or holdover (or no journal) */
	struct hist *out;	/* out of sync */
	uint64_t holdover;	/* of those in h: an end in holdover */
	void *ext;		/* a sink's own part, in its own set (the
				 * live view's struct corr_live_stat) */
	uint64_t bound_known, bound_unknown;
	int64_t bound_max;
	double bound_sum;
	/* Of the bounded samples (bound_known): each term's sum, and how
	 * many had no stamp term (an end not calibrated). */
	double term_sum[CORR_TERMS];
	uint64_t stamp_unknown;
};

struct corr_stats_set {
	struct corr_stat *v;
	size_t n, cap;
	struct hmap *idx;	/* struct corr_stat_key: index in v */
	/* A sink's set: results without histograms (bare), their ext
	 * freed with them by ext_free. */
	bool bare;
	void (*ext_free)(void *ext);
};

/* ---- samples and who takes them ----
 *
 * The core (corr_match.c, corr_txn.c) finds samples and hands each to
 * every sink the run has: the results printed at the end (corr_stats.c),
 * the samples file (corr_stats.c), export's transaction callback
 * (corr_txn.c) and, following, the live view (corr_live.c). A sink keeps
 * its own state; the core knows none of them. */
struct corr_fields;
struct corr_app_info;

enum corr_set { CORR_SET_HOPS, CORR_SET_TXNS, CORR_SET_SWITCHES,
		CORR_SET_APP };

struct corr_sample {
	enum corr_set set;
	uint16_t from, to;	/* hosts; for transactions from == to */
	uint32_t flow;		/* the message's flow */
	int bucket;		/* its trigger's rate bucket, or NO_BUCKET */
	int kind;		/* transactions: enum corr_txn_kind; app to
				 * wire: the message type (corr_app_type());
				 * else -1 */
	const char *sw;		/* switches: the switch's name; else NULL */
	int64_t ts;		/* the TX stamp (a transaction's end) */
	int64_t v;		/* the figure, ns */
	int sync;		/* enum corr_sync */
	int64_t bound;		/* -1: unknown */
	const struct corr_terms *terms;	/* the bound's; NULL: none */
	const struct corr_app_info *app;	/* app to wire's; else NULL */
};

struct corr_sink {
	/* Its state set up (corr_create()) and let go (corr_destroy());
	 * either may be NULL. */
	void (*open)(struct corr *c);
	void (*close)(struct corr *c);
	void (*sample)(struct corr *c, const struct corr_sample *x);
	/* A stream's first message, with its session's CompIDs (if any). */
	void (*session)(struct corr *c, struct corr_stream *s,
			const struct corr_fields *f, int64_t ts);
	/* A flow's last stream expired (following). */
	void (*flow_idle)(struct corr *c, uint32_t flow);
};

#define CORR_MAX_SINKS 4
/* Message types app to wire keeps apart; more share the last, "other". */
#define CORR_APP_TYPES 32
extern const struct corr_sink corr_stats_sink, corr_samples_sink,
	corr_txn_cb_sink, corr_live_sink;


struct corr {
	struct corr_config cfg;
	struct corr_host *hosts[CORR_MAX_HOSTS];
	unsigned nhosts;
	/* Tap stamp formats named per input (corr_set_tapfmt()), for the
	 * hosts still to be opened; used: an input took it. */
	struct {
		char host[64];
		enum tapfmt_kind kind;
		bool used;
	} tapfmt[CORR_MAX_HOSTS];
	unsigned ntapfmt;
	/* Timescale. */
	bool utc_known;
	int utc_offset;
	int target_scale;	/* TS_SCALE_UTC or TS_SCALE_TAI; 0: not yet */
	bool tai_guessed;	/* utc_target: TAI - UTC assumed */
	/* Flows and streams. */
	struct corr_flow *flows;
	size_t nflows, cap_flows;
	struct hmap *flow_map;		/* struct corr_flow_key: flow id */
	struct hmap *stream_map;	/* the same, with host and dir: stream */
	struct corr_stream **streams;
	size_t nstreams, cap_streams;
	struct fix_msg *scratch;
	/* Matching. */
	struct corr_entry *ring;
	uint32_t ring_cap, ring_head, ring_count;
	uint32_t *bucket1, *bucket2;
	uint32_t nbuckets;
	uint64_t window_overflow, dir_unknown_pairs, extra_obs, by_session;
	/* Paths between hosts. */
	struct topo_path path[CORR_MAX_HOSTS][CORR_MAX_HOSTS];
	int8_t path_known[CORR_MAX_HOSTS][CORR_MAX_HOSTS];	/* 0 ?, 1, -1 */
	/* Who takes the samples (corr_emit()). */
	const struct corr_sink *sinks[CORR_MAX_SINKS];
	unsigned nsinks;
	/* Results, for the print at the end (corr_stats_sink). */
	struct corr_stats_set hops, txns, switches, app;
	/* App to wire: the message types met, by index (corr_app.c). */
	char app_type[CORR_APP_TYPES][8];
	unsigned napp_types;
	uint64_t app_unparsed;	/* outbound messages whose 52 and 60 did
				 * not parse */
	/* The live view's results (corr_live_sink): per interval, for the
	 * metrics, and per flow (at most cfg.flow_series). */
	struct corr_stats_set live_hops, live_txns, live_switches;
	struct corr_traffic *traffic;	/* every hop sample's delay, per
					 * pair and window */
	bool measured;
	bool aborted;		/* corr_abort(): corr_run() stops reading */
	char *warn[CORR_MAX_WARNINGS];
	unsigned nwarn, warn_dropped;
	/* Live: per-flow results held (at most cfg.flow_series), and flows
	 * that found them full (each once). */
	uint64_t flow_series, flows_over_limit;
	/* Live: the interval open, [iv_start, iv_end). */
	bool iv_open;
	int64_t iv_start, iv_end;
	int64_t watermark;	/* everything before is read */
};

/* What happened to a host in an interval: its figures are flagged. */
enum {
	CORR_FLAG_STALLED = 1, CORR_FLAG_OUT_OF_SYNC = 2, CORR_FLAG_RESTART = 4,
	CORR_FLAG_MISSED = 8, CORR_FLAG_DAMAGED = 16, CORR_FLAG_DROPS = 32,
	CORR_FLAG_LATE = 64, CORR_FLAG_HOLDOVER = 128,
};

/* The fields the rules look at, found in one pass: those of the records
 * (corr.h), then SendingTime and TransactTime (app to wire). */
enum {
	F_35 = CORR_REC_35, F_49 = CORR_REC_49, F_56 = CORR_REC_56,
	F_34 = CORR_REC_34, F_11 = CORR_REC_11, F_55 = CORR_REC_55,
	F_54 = CORR_REC_54, F_39 = CORR_REC_39,
	F_52 = CORR_REC_FIELDS, F_60, CORR_FIELDS
};

struct corr_fields {
	const char *v[CORR_FIELDS];
	uint32_t len[CORR_FIELDS];
};

/* ---- corr.c ---- */

/* Keep a warning for corr_warning(); past CORR_MAX_WARNINGS only counted. */
void corr_warn(struct corr *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A message from a stream's fixstream (arg: the struct corr_stream). */
void corr_on_msg(void *arg, const struct fixstream_msg *m);
/* The same with its fields found (corr_fields()) and m->seq its key
 * (corr_msg_seq()); of m->fix, only a market data message's fields are
 * read (corr_txn()), and the values they point at. */
void corr_msg(struct corr_stream *s, const struct fixstream_msg *m,
	      const struct corr_fields *f);
/* A message's key in the matching window: TCP, the sequence number of its
 * first byte; a datagram's, the hash of its bytes. */
uint32_t corr_msg_seq(const struct corr_stream *s,
		      const struct fixstream_msg *m);

/* The next packet of h into h->next (h->have_next); while following, a
 * host with nothing more for now has neither have_next nor live.ended. */
void corr_fetch(struct corr *c, struct corr_host *h);
/* h->next through the correlator. */
void corr_packet(struct corr *c, struct corr_host *h);
/* corr_packet() in three parts, for a host decoded on a thread of its own
 * (corr_thread.c). The host's: its counters, its frame (*fi), its stream
 * (made with mk, *made), NULL when it has none (not IP, no payload);
 * *skip: a packet socket's copy of a frame its sender stamped, left out
 * once the stream is known. The correlator's, before the segment: the
 * stream's packet at ts on ifc, with its TCP flags. The host's again: the
 * segment into the stream's fixstream. */
struct corr_stream *corr_packet_host(struct corr *c, struct corr_host *h,
				     const struct corr_stream_make *mk,
				     struct frame_info *fi, bool *made,
				     bool *skip);
void corr_packet_head(struct corr_stream *s, const struct corr_iface *ifc,
		      int64_t ts, uint8_t tcp_flags);
void corr_packet_feed(struct corr_host *h, struct corr_stream *s,
		      const struct frame_info *fi);
/* A stream's reassembly counters into its host's totals (once, as it
 * ends). */
void corr_stream_fold(struct corr_stream *s);
/* Live: streams idle since before `before` are flushed and freed. */
void corr_flow_expire(struct corr *c, int64_t before);
/* After the last packet: streams flushed, the window drained, totals and
 * warnings. */
void corr_finish(struct corr *c);

/* ---- corr_thread.c ---- */

/* Threads for the first cfg.threads - 1 hosts (none below 2, nor following
 * or exporting), started; each host without one is read on the
 * correlator's thread (corr_fetch(), corr_packet()). */
void corr_thr_start(struct corr *c);
/* A threaded host's next packet: h->have_next and h->merge_ts, as
 * corr_fetch() gives them. */
void corr_thr_head(struct corr *c, struct corr_host *h);
/* That packet through the correlator, as corr_packet(). */
void corr_thr_apply(struct corr *c, struct corr_host *h);
/* The threads joined (told to stop if the run was aborted), their hosts'
 * streams left to the correlator. */
void corr_thr_stop(struct corr *c);

/* ---- corr_live.c ---- */

/* The common timescale's now, from CLOCK_REALTIME. */
int64_t corr_live_now(const struct corr *c, int64_t real_ns);

/* ---- corr_app.c ---- */

/* App to wire: an outbound message o, on stream s, that carries
 * SendingTime (52) or TransactTime (60): the wire TX stamp less the finer
 * of the two, with its bound, to the sinks. */
void corr_app(struct corr *c, struct corr_stream *s,
	      const struct corr_fields *f, const struct corr_obs *o);
/* The name of message type k (a sample's kind). */
const char *corr_app_type_name(const struct corr *c, int k);
/* What a result of the app set says besides its figures (its ext): the
 * tag taken and the coarsest resolution met. */
struct corr_app_info {
	int tag;		/* 52 or 60 */
	int64_t resolution_ns;
};

/* ---- corr_time.c ---- */

/* "tai", "utc" or "unknown". */
const char *corr_scale_name(int scale);
/* The interface id of file file at host h, worked out on its first packet
 * (its timescale, its delta to the common one, its journal clock), with a
 * warning when its stamps cannot be compared or their scale was assumed.
 * tap_scale: the timescale that packet's tap stamp states (cap_packet), if
 * any, believed after --timescale and before the file. */
struct corr_iface *corr_iface(struct corr *c, struct corr_host *h,
			      unsigned file, unsigned id, int tap_scale);
/* The same, when it was worked out already; NULL when not. */
struct corr_iface *corr_iface_find(struct corr_host *h, unsigned file,
				   unsigned id);
/* Following: files before file are closed; their interfaces' slots are
 * free for the next ones (memory stays that of a few files). */
void corr_iface_retire(struct corr_host *h, unsigned file);
/* After the run: a warning when journals were read with TAI - UTC guessed. */
void corr_time_warn(struct corr *c);

/* ---- corr_flow.c ---- */

/* The maps of flows and streams (corr_create()). */
void corr_flow_maps_init(struct corr *c);
/* An empty map of streams (struct corr_stream_make). */
struct hmap *corr_stream_map(void);

/* Host h's stream of flow f in direction dir (enum corr_dir), made on
 * first sight with its fixstream; the flow is numbered on first sight at
 * any host. */
struct corr_stream *corr_stream(struct corr *c, struct corr_host *h,
				const struct frame_flow *f, uint8_t dir);

/* Where a host's streams are kept and what their fixstreams call: the
 * correlator's own (corr_stream()), or a decoding thread's
 * (corr_thread.c), which hands the calls over to the correlator. */
struct corr_stream_make {
	struct hmap *map;
	struct fix_msg *scratch;
	void (*on_msg)(void *arg, const struct fixstream_msg *m);
	void (*on_lost)(void *arg, int64_t lo, int64_t hi, uint64_t bytes);
};
/* The host's half of corr_stream(): found in mk->map, or made there
 * (*made) with no flow yet; corr_stream_add() numbers its flow and keeps
 * it, in the order the correlator meets the streams. */
struct corr_stream *corr_stream_get(struct corr *c, struct corr_host *h,
				    const struct frame_flow *f, uint8_t dir,
				    const struct corr_stream_make *mk,
				    bool *made);
void corr_stream_add(struct corr *c, struct corr_stream *s);

/* ---- corr_txn.c ---- */

/* A market data message at h at ts: h->bucket follows the rate (with
 * by_rate). */
void corr_md_seen(const struct corr *c, struct corr_host *h, int64_t ts);
/* The fields the rules look at (the first of each tag), pointing into m. */
void corr_fields(const struct fix_msg *m, struct corr_fields *f);
/* Whether field k (F_*) is present and is s. */
bool corr_is(const struct corr_fields *f, int k, const char *s);
/* A message of known direction at h: triggers kept, transactions sampled
 * into c->txns (and the samples file). */
/* After each segment of s (and its holes given up at the end): its hole
 * state, and the orders of its host that can now be paired. */
void corr_txn_holes(struct corr *c, struct corr_stream *s);
/* The same with the stream's hole state given (corr_stream_hole(), read
 * when the segment was fed). */
void corr_txn_holes_at(struct corr *c, struct corr_stream *s, bool hole,
		       int64_t lo);
/* Whether an inbound stream holds bytes behind a hole now, from *lo. */
bool corr_stream_hole(const struct corr_stream *s, int64_t *lo);
/* fixstream_lost_fn of an inbound stream. */
void corr_txn_lost(void *arg, int64_t lo, int64_t hi, uint64_t bytes);
/* Every order still waiting: evaluated now (the end of the input). */
void corr_txn_flush(struct corr *c, struct corr_host *h);
void corr_txn(struct corr *c, struct corr_host *h, uint8_t dir,
	      int64_t ts, const struct fix_msg *m,
	      const struct corr_fields *f);

/* ---- corr_match.c ---- */

/* An observation of a message (seq: TCP sequence of its first byte, or a
 * hash of a datagram's message; k2: its session keys' hash or 0) against
 * the window: paired with the other hosts' observations (hop samples into
 * c->hops, c->switches) or left waiting. Expires what is older than the
 * window first. */
void corr_match(struct corr *c, struct corr_obs *o, uint32_t seq,
		uint64_t k2);
/* The end of the input: every entry leaves the window. */
void corr_match_drain(struct corr *c);

/* ---- corr_stats.c ---- */

/* Set up a zeroed set; free its results and itself. */
void corr_stats_init(struct corr_stats_set *s);
void corr_stats_free(struct corr_stats_set *s);
/* The result of that key in set, made empty on first use. */
struct corr_stat *corr_stat(struct corr_stats_set *set, uint16_t from,
			    uint16_t to, uint32_t flow, int bucket,
			    int kind, const char *sw);
/* The same, or NULL when there is none yet. */
struct corr_stat *corr_stat_find(const struct corr_stats_set *set,
				 uint16_t from, uint16_t to, uint32_t flow,
				 int bucket, int kind, const char *sw);
/* Every result of flow out of set (freed; the others may move). Returns
 * how many. */
size_t corr_stats_drop_flow(struct corr_stats_set *set, uint32_t flow);
/* A sample into result s (a set's with histograms): out-of-sync samples
 * to s->out, the others to s->h with their bound tallied (and those in
 * holdover counted in s->holdover besides), and a bounded one's terms. */
void corr_stat_take(struct corr_stat *s, const struct corr_sample *x);
/* A hop sample's sync state (*sync) and error bound (returned; -1:
 * unknown) from its two ends': out of sync if either end was, else in
 * holdover if either end was and the other in sync or holdover; the sum
 * of the bounds when both ends were bounded with one, and of stamp_ns (the
 * ends' calibrated stamp terms; -1: not known, left out). Its terms into
 * *t (each -1 when the bound is). */
int64_t corr_hop_bound(const struct corr_obs *tx, const struct corr_obs *rx,
		       int64_t stamp_ns, int *sync, struct corr_terms *t);
/* Host h's calibration of its stamps in direction dir (enum corr_dir) from
 * a hardware or software source, or NULL when there is none. */
const struct calib_term *corr_calib(const struct corr_host *h, int dir,
				    bool hw);
/* The enum corr_sync of an enum bound_state (bound_at()). */
int corr_sync_of(int state);
/* Its word: "none", "in", "out" or "holdover" (the samples file's). */
const char *corr_sync_name(int sync);
/* o->sync and o->bound from the host's journal at o->ts, the stamp cut to
 * ifc's resolution allowed for; o->bound -1 without a journal. In
 * holdover the bound is the journal's grown on to o->ts. For a clock in
 * sync that phc2sys keeps, o->clk and o->cut too (bound_offset_at()):
 * returns whether they were set. */
bool corr_obs_bound(const struct corr_host *h, const struct corr_iface *ifc,
		    struct corr_obs *o);
/* A sorted copy of set's results (free() it; never NULL). */
struct corr_stat *corr_sorted(const struct corr_stats_set *set);
/* How far below the true sample any printed percentile may be, over all
 * results. */
int64_t corr_hist_error(const struct corr *c);

/* ---- the sinks (corr.c) ---- */

/* x to every sink of the run. */
static inline void corr_emit(struct corr *c, const struct corr_sample *x)
{
	for (unsigned i = 0; i < c->nsinks; i++)
		c->sinks[i]->sample(c, x);
}

/* The same for a new session and an idle flow (sinks that take them). */
void corr_emit_session(struct corr *c, struct corr_stream *s,
		       const struct corr_fields *f, int64_t ts);
void corr_emit_flow_idle(struct corr *c, uint32_t flow);

#endif
