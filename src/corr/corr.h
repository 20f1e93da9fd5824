/* corr.h — the correlator: several hosts' captures in, one-way latency per
 * hop, transaction latency per host and switch latency out, each with what
 * bounds its error. The semantics are tapless-correlate(8)'s.
 *
 * Hosts' captures are read once, merged in time order (stamps brought to
 * one timescale first). Each capture's flows are reassembled into FIX
 * messages (fixstream.h); each message seen at one host is matched to the
 * same message seen at the others, by flow and TCP sequence number of its
 * first byte, or, where the flows differ (NAT, a gateway), by SenderCompID,
 * TargetCompID, MsgSeqNum and MsgType. A match of a send at A and a receive
 * at B is one sample of the hop A→B: RX stamp at B − TX stamp at A.
 *
 * Memory is bounded by the matching window (messages waiting for their
 * peer, at most max_pending), the flows seen and the histograms (hist.h);
 * never by the length of the captures.
 *
 * Errors in the input are counted and reported, never fatal: a damaged
 * file ends its own stream, a bad FIX message is skipped. The library does
 * not print: warnings are collected for the program (corr_warning()).
 */
#ifndef TAPLESS_CORR_H
#define TAPLESS_CORR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct corr;
struct corr_event;
struct corr_record;
struct printer;
struct topo;

#define CORR_ERRBUF 1024
#define CORR_MAX_HOSTS 64
#define CORR_MAX_RATES 32
/* Following: per-flow results kept at most, by default (--flow-series). */
#define CORR_FLOW_SERIES 1000

struct corr_config {
	int64_t window_ns;	/* how long a message waits for its peers */
	int64_t hold_ns;	/* how long a TCP hole may stay open */
	bool last_byte;		/* stamp of the frame with the last byte */
	bool by_rate;		/* results per market data rate bucket */
	double rates[CORR_MAX_RATES];	/* bucket centres, messages/s */
	unsigned nrates;
	bool utc_offset_known;	/* TAI - UTC given by the caller */
	int utc_offset_s;
	const struct topo *topo;	/* or NULL */
	int64_t sync_max_age_ns;	/* a journal sample vouches this long */
	unsigned max_pending;	/* messages waiting for their peers */
	int64_t traffic_window_ns;	/* the traffic check's windows
					 * (corr_traffic.h); default 1 s */
	FILE *samples;		/* every sample, one line each, or NULL */
	const char *samples_run;	/* first field of those lines */
	/* Live (corr_follow_step()): hosts' paths are followed as they
	 * grow, results are kept per interval as well. */
	bool follow;
	bool from_oldest;	/* read every file there first */
	int64_t interval_ns;	/* default 1 s */
	int64_t stall_ns;	/* no new data this long (wall clock): the
				 * host has stalled; default 2 s */
	unsigned flow_series;	/* per-flow results (a hop's metric series
				 * for one flow) kept at most; flows
				 * beyond are counted, their samples in
				 * the hop's "all" only. Default
				 * CORR_FLOW_SERIES */
	/* Called as each interval closes (corr_print_interval() and
	 * corr_interval_value() describe it then), and for each event. */
	void (*on_interval)(void *arg, struct corr *c, int64_t start_ns,
			    int64_t end_ns);
	void (*on_event)(void *arg, const struct corr_event *ev);
	void *arg;
	/* Export (tapless export): every message seen at a host, and every
	 * transaction sample, as it is found; no matching across hosts with
	 * no_match. With utc_target stamps are brought to UTC even when no
	 * TAI - UTC offset is known (TAI_UTC_S assumed, and said so). */
	void (*on_record)(void *arg, const struct corr_record *r);
	void (*on_txn)(void *arg, unsigned host, const char *kind,
		       int64_t ts_ns, int64_t latency_ns);
	void *rec_arg;
	bool no_match;
	bool utc_target;
	/* Threads in all, the caller's included: the first threads - 1
	 * hosts' captures are read, reassembled and parsed on threads of
	 * their own, the rest with the matching on the caller's
	 * (corr_thread.c); 0 or 1: all on the caller's. The results are the
	 * same either way. Not while following or with on_record. */
	unsigned threads;
};

/* The FIX fields a record carries (the first of each tag). */
enum corr_rec_field {
	CORR_REC_35, CORR_REC_49, CORR_REC_56, CORR_REC_34, CORR_REC_11,
	CORR_REC_55, CORR_REC_54, CORR_REC_39, CORR_REC_FIELDS
};

/* One FIX message seen at one host (cfg.on_record): a row of
 * tapless-records(5). Pointers are valid during the call only. */
struct corr_record {
	unsigned host;		/* index, as added; corr_host_name() */
	const char *iface;	/* the capture interface's name, or "ifN" */
	int dir;		/* 0 unknown, 1 in, 2 out */
	const struct frame_flow *flow;
	uint32_t seq;		/* TCP: of its first byte; UDP: the hash of
				 * its bytes matched on */
	const char *field[CORR_REC_FIELDS];	/* NULL: absent */
	uint32_t field_len[CORR_REC_FIELDS];
	int64_t ts, ts_last;	/* first and last byte, common timescale */
	uint32_t wire, wire_last;
	bool hw;		/* a hardware stamp */
	bool sender;		/* stamped by the sending socket */
	int sync;		/* 0 no journal, 1 in sync, 2 out of sync,
				 * 3 holdover (bound_ns grown) */
	int64_t bound_ns;	/* -1: unknown */
	const char *file;	/* the first byte's frame: file and block */
	uint64_t offset;
	/* Where the host's reading was as it came out (the packet that
	 * completed it): monotonic while following one directory. */
	const char *at_file;
	uint64_t at_offset;
};

/* Something a live view has that an offline one does not. */
enum corr_event_kind {
	CORR_EV_STALLED,	/* a host's data stopped arriving */
	CORR_EV_RESUMED,	/* and came back */
	CORR_EV_OUT_OF_SYNC,	/* a host's journal says out of sync */
	CORR_EV_IN_SYNC,	/* in sync again */
	CORR_EV_SESSION,	/* a new FIX session (flow) appeared */
	CORR_EV_RESTART,	/* a new capd run's files (a gap before it) */
	CORR_EV_FILES_MISSED,	/* files removed before they were read */
	CORR_EV_DAMAGED,	/* a capture file ended in error */
	CORR_EV_DROPS,		/* the capture dropped frames */
	CORR_EV_HOLDOVER,	/* a host's journal says holdover: bounded,
				 * the bound growing */
	CORR_EV_KINDS
};

struct corr_event {
	enum corr_event_kind kind;
	const char *name;	/* "stalled", ... */
	const char *host;
	int64_t time_ns;	/* on the results' timescale */
	const char *detail;	/* for people, or "" */
	uint64_t count;		/* files missed, frames dropped; else 0 */
};

/* Defaults: window 1 s, hold 200 ms, first byte, the FTTC report's eight
 * rates, 3 s sync age, 262144 pending. */
void corr_config_init(struct corr_config *cfg);

int corr_create(struct corr **out, const struct corr_config *cfg);
void corr_destroy(struct corr *c);

/* A host and its captures (files or directories of rotated files). Returns
 * 0, -EEXIST for a name given twice, -E2BIG past CORR_MAX_HOSTS, or the
 * error of opening a capture, with err saying which. */
int corr_add_host(struct corr *c, const char *name, const char *const *paths,
		  unsigned npaths, char err[CORR_ERRBUF]);
/* The same for a host the command line did not name: its name is the one
 * its files record (cap_host(), tapless-capd -H; the first file that
 * records one), fallback when none does. A name that is taken already
 * fails with -EEXIST, err saying to name the hosts (NAME=DIR). */
int corr_add_host_found(struct corr *c, const char *fallback,
			const char *const *paths, unsigned npaths,
			char err[CORR_ERRBUF]);
/* The host's sync journal. Returns 0, -ENOENT (no such host), or the
 * error of reading it, with err. */
int corr_set_journal(struct corr *c, const char *host, const char *path,
		     char err[CORR_ERRBUF]);
/* The stamps of input host's files are where tap stamp format (a name of
 * files/tapfmt.h: "auto", "none", "metawatch", ...) puts them, not
 * detected: call before the host is added. Returns 0, -EINVAL (no such
 * format), -EEXIST (a second one), with err. */
int corr_set_tapfmt(struct corr *c, const char *host, const char *format,
		    char err[CORR_ERRBUF]);

/* A host a format was set for that no input took, or NULL. */
const char *corr_tapfmt_unused(const struct corr *c);

/* The host's stamp calibration (tapless-calibration(5)): its stamps are
 * brought to the wire (stamp - offset) in one-way samples, and the spread
 * of both ends' is the stamp term of the samples' bounds. Returns 0,
 * -ENOENT (no such host), -EEXIST (a second one), or the error of reading
 * it, with err. */
int corr_set_calibration(struct corr *c, const char *host, const char *path,
			 char err[CORR_ERRBUF]);
/* Say which timescale a host's stamps are on when its files do not
 * (enum ts_timescale: TS_SCALE_UTC or TS_SCALE_TAI). */
int corr_set_timescale(struct corr *c, const char *host, int timescale);

/* Read everything. Returns 0 (results are ready; see corr_measured()) or
 * -EINVAL when there is nothing to correlate. */
int corr_run(struct corr *c, char err[CORR_ERRBUF]);

/* Live (cfg.follow): read what the hosts' files have gained, correlate it
 * as far as every live host's data reaches (a host's heartbeats say how
 * far its capture is complete; a host without new data for cfg.stall_ns
 * is stalled and no longer waited for), close the intervals that ended
 * (cfg.on_interval) and report events (cfg.on_event). now_ns is
 * CLOCK_REALTIME. Returns 0 or -EINVAL (no hosts). */
int corr_follow_step(struct corr *c, int64_t now_ns, char err[CORR_ERRBUF]);

/* Live: set cfg.on_interval, cfg.on_event and cfg.arg after creation
 * (the caller's state may need the correlator first). */
void corr_follow_hooks(struct corr *c,
		       void (*on_interval)(void *, struct corr *, int64_t,
					   int64_t),
		       void (*on_event)(void *, const struct corr_event *),
		       void *arg);

/* Live: no more is coming. Read every file to its end, let every message
 * leave the window, close the last interval; the results are then those
 * of corr_run() over the same files. */
int corr_follow_stop(struct corr *c, int64_t now_ns, char err[CORR_ERRBUF]);

/* In cfg.on_interval: one line per hop, transaction kind and switch, and
 * one per host, for the interval closing, in fmt (enum print_format: one
 * JSON object a line; see tapless-correlate(8), "The live stream"). */
void corr_print_interval(const struct corr *c, FILE *out, int fmt);

/* Live: each host's state as of now (name, state, horizon, data age,
 * sync, totals), an array "hosts" of p, for a status answer. */
void corr_print_hosts(const struct corr *c, struct printer *p);

/* In cfg.on_interval: a figure of the closing interval, for alert rules.
 * subject: a transaction kind ("tick_to_trade", or "tick_to_trade@HOST"),
 * a hop "FROM->TO", "switch:NAME" or "host:NAME"; stat: count, min, p50,
 * p90, p99, p99.9, max, mean, bound, out_of_sync, unmatched, age,
 * holdover. Times
 * in ns. Returns 0, or -ENOENT when there is no such figure this interval
 * (no samples, unknown subject). */
int corr_interval_value(const struct corr *c, const char *subject,
			const char *stat, double *v);

/* Live: the exposition for a Prometheus scrape (base/metrics.h renderer,
 * fmt an enum metrics_format): histograms of one-way latency per hop and
 * flow and of each transaction kind, counters of messages, unmatched,
 * out-of-sync and holdover samples and capture drops, the age of each
 * host's newest data, each host's sync state. Returns 0 or -EIO. */
int corr_metrics(const struct corr *c, FILE *out, int fmt);

/* From a hook (on_record): corr_run() reads no further packets; it still
 * finishes (streams flushed, warnings). */
void corr_abort(struct corr *c);

/* Host i's name (NULL past the last). */
const char *corr_host_name(const struct corr *c, unsigned i);

/* The "inputs" part of corr_print() alone (each host's files, packets,
 * messages and what was skipped), for a program that reads captures
 * without correlating them (tapless export). */
void corr_print_inputs(const struct corr *c, struct printer *p);

/* Whether any latency at all was measured. */
bool corr_measured(const struct corr *c);

/* How many pairs of hosts saw the same message without either capture
 * saying which way it went (classic pcap, no address of the host known):
 * messages not measured for want of a direction. */
uint64_t corr_direction_unknown(const struct corr *c);

/* Warnings about the input, in the order met ("venue: ..."). */
unsigned corr_warnings(const struct corr *c);
const char *corr_warning(const struct corr *c, unsigned i);

/* Print the results (inputs, hops, transactions, switches, unmatched).
 * With a baseline (a back-to-back run correlated the same way), switch
 * latency is also given as through-switch minus back-to-back per hop. */
void corr_print(const struct corr *c, const struct corr *baseline,
		struct printer *p);

#endif
