/* report_private.h — inside struct report, shared by the files of the
 * report (report.h is what others see). Not for other modules.
 *
 *   report.c        the lifecycle: report_load() runs the readers, the
 *                   notes, lab.conf look-ups, the figures of a rate
 *   report_load.c   the readers: lab.conf, the samples files, the runs'
 *                   facts, the sync journals
 *   report_truth.c  the switch emulator's truth, frame by frame
 *   report_pair.c   each switch and hop sample beside its frame's truth
 *   report_table.c  the tables (text and Markdown) and the printer calls
 *                   behind report.json and the headline
 *   report_write.c  the data files, the plot scripts and index.md
 *   report_follow.c the live stream of a followed run (follow.jsonl):
 *                   its reader and the data of the plot follow-time
 *   report_clocks.c the hosts' clocks against the simulator's truth (a
 *                   lab on simulated NIC clocks)
 */
#ifndef TAPLESS_REPORT_PRIVATE_H
#define TAPLESS_REPORT_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/summary.h"
#include "report/report.h"	/* REPORT_ERRBUF */

struct calib;
struct cap_packet;
struct cap_reader;
struct hist;
struct samples_rec;

#define REPORT_MAX_RATES 64
#define REPORT_MAX_KEYS 64
#define REPORT_MAX_CLOCKS 64
#define REPORT_NAME 64

/* The series a run is summarised by. */
enum {
	S_BUY,		/* tick_to_trade at the algo, through the switch */
	S_SELL,		/* fill_to_sell at the algo, through the switch */
	S_SWITCH,	/* switch samples venue→algo (topology method) */
	S_HOP,		/* one-way venue→algo, through the switch */
	S_HOP_BASE,	/* one-way venue→algo, back to back */
	S_APP,		/* app to wire of the algo's orders (35=D): its TX
			 * stamp less their SendingTime or TransactTime */
	S_COUNT
};

/* Their keys in report.json and the data files' names. */
extern const char *const report_series_key[S_COUNT];

/* The plots: template names, in the order of report.h. */
enum { P_ERROR, P_RATE, P_TRUTH, P_CDF, P_HIST, P_TIME, P_PTP, P_FOLLOW,
       P_COUNT };
extern const char *const report_plot_names[P_COUNT];

/* lab.conf keys the report knows, in the order index.md lists them;
 * NULL ends them. */
extern const char *const report_conf_keys[];

struct report_series {
	struct hist *h;			/* samples in sync or in holdover, or
					 * without state */
	unsigned long long out;		/* samples out of sync, set apart */
	unsigned long long holdover;	/* of those in h, in holdover */
};

struct report_truth {
	bool have;			/* residence figures exist */
	bool have_topo;			/* and the topology method's */
	char why[300];			/* when !have or !have_topo */
	struct hist *res, *topo;	/* residence; minus serialisation */
	unsigned files;
	unsigned long long md_frames, unpaired, no_id;
	unsigned long long implausible;	/* residences dropped (< 0, > 1 s) */
};

/* Per-sample measurement error against the truth (report_pair.c), for the
 * switch samples (truth: the residence, less serialisation for a
 * store-and-forward switch) and the hop samples (truth: the residence plus
 * the topology's cables). */
enum { E_SWITCH, E_HOP, E_COUNT };

/* The terms a sample's bound is the sum of (files/samples.h, in its
 * order), and their keys in report.json. */
enum { T_CLOCK, T_HOLDOVER, T_STAMP, T_RESOLUTION, T_COUNT };
extern const char *const report_term_names[T_COUNT];

/* The terms of the bounded samples, summed: a sample has terms when one
 * is known (files written before them have none); the stamp term is
 * missing where an end had no calibration. */
struct report_terms {
	unsigned long long n;		/* samples with terms */
	unsigned long long have[T_COUNT];	/* of those, with each */
	double sum[T_COUNT];
};

struct report_err {
	struct hist *err;		/* measured - truth, not out of sync */
	struct hist *bound;		/* the bounds of those with one */
	unsigned long long paired;	/* samples given their frame's truth */
	unsigned long long out;		/* of those, out of sync (no error) */
	unsigned long long bounded;	/* of those, in sync or holdover with
					 * a bound */
	unsigned long long holdover;	/* of the paired, in holdover */
	unsigned long long inside;	/* of those, |error| <= bound */
	struct report_terms terms;	/* of the bounded */
};

struct report_pairing {
	bool have;			/* some sample was paired */
	char why[2 * PATH_MAX], why_hop[2 * PATH_MAX];	/* when not */
	struct report_err e[E_COUNT];
	unsigned long long looked;	/* switch and hop samples */
	unsigned long long no_frame;	/* no venue frame has its stamp */
	unsigned long long no_truth;	/* its frame not in the truth */
	unsigned long long ambiguous;	/* its frame's identity twice */
	bool have_prop;
	double prop_ns;			/* the cables venue -> algo */
};

/* The two hosts of a lab run, by role (lab.conf hosts VENUE,ALGO), and
 * their keys in report.json. */
enum { ROLE_VENUE, ROLE_ALGO, REPORT_ROLES };
extern const char *const report_role_names[REPORT_ROLES];

/* What the workload did at a rate (rate-R/run.conf, written by the lab):
 * messages offered, published, received and the rate achieved, per path;
 * NAN where not known. */
enum {
	RUN_SW_OFFERED, RUN_SW_PUBLISHED, RUN_SW_RECEIVED, RUN_SW_RATE,
	RUN_B2B_OFFERED, RUN_B2B_PUBLISHED, RUN_B2B_RECEIVED, RUN_B2B_RATE,
	RUN_COUNT
};
extern const char *const report_run_keys[RUN_COUNT];

struct report_rate {
	long rate;
	char label[16];			/* "100k", "500" */
	char path[PATH_MAX];		/* samples.txt */
	bool have_samples;
	unsigned long long lines, bad, ignored;
	unsigned long long negative;	/* transactions < 0 ns, dropped */
	unsigned long long beyond_bound;	/* one-way < -bound, kept */
	struct report_series s[S_COUNT];
	int64_t t0;			/* the first stamp of the main run */
	bool have_t0;
	struct report_truth truth;
	struct report_pairing pair;
	bool have_run;
	double run[RUN_COUNT];
	/* The runs' true window (run.conf *_start_ns, *_end_ns: the
	 * machine's clock); INT64_MIN (JOURNAL_NONE) when not said. */
	int64_t win_start, win_end;
	/* The hosts' stamp calibrations (rate-R/HOST.cal, the lab's
	 * calib_write): NULL where there is none, or it could not be read
	 * (noted). */
	struct calib *cal[REPORT_ROLES];
	char cal_path[REPORT_ROLES][PATH_MAX];
};

struct report_kv {
	char *key, *val;
};

/* A journal sample's standing, as the ptp data files write it. */
enum { REPORT_SYNC_OUT, REPORT_SYNC_IN, REPORT_SYNC_HOLDOVER };

struct report_clock {
	char name[REPORT_NAME + 20];	/* HOST-CLOCK, file-name safe */
	char host[REPORT_NAME], clock[16];
	int64_t *ts, *off, *bnd;	/* JOURNAL_NONE where not known (and
					 * out of sync) */
	uint8_t *sync;			/* REPORT_SYNC_* */
	size_t n, cap;
	/* Against the simulator's truth (report_clocks.c): each sample's
	 * true time and the clock's true offset from PTP time then;
	 * JOURNAL_NONE where the truth cannot say. */
	bool have_truth;
	int64_t *tt, *toff;
};

/* One clock over one rate's window, against the truth. */
struct report_ctruth {
	unsigned long long samples;	/* journal samples in the window */
	unsigned long long judged;	/* in sync or holdover, with a bound
					 * and a true offset */
	unsigned long long held;	/* of those, |true offset| <= bound */
	bool have_journal, have_true;
	double journal_mean_ns;		/* the offsets the journal wrote */
	double true_mean_ns, true_rms_ns;
	int64_t true_max_abs_ns, worst_excess_ns;
	int64_t bound_p50_ns;		/* of the judged */
};

struct report_note {
	char *text;
	bool warning;
};

struct report_plot {
	bool done, ok;
	char *msg;
};

/* The live stream (follow.jsonl), as the plot follow-time shows it: one
 * series per host's tick to trade and per hop. */
#define REPORT_FOLLOW_SERIES 16

struct report_fseries {
	bool hop;
	char a[REPORT_NAME], b[REPORT_NAME];	/* host; or from, to */
	unsigned long long intervals;		/* with samples */
};

struct report_follow {
	bool present;			/* follow.jsonl exists */
	bool have;			/* some series has samples */
	char path[PATH_MAX];
	char why[PATH_MAX + 128];	/* when !have */
	struct report_fseries s[REPORT_FOLLOW_SERIES];
	size_t ns;
	unsigned long long lines;	/* not blank */
	unsigned long long used;	/* result lines of a series */
	unsigned long long other;	/* other lines of the stream */
	unsigned long long bad;		/* not understood, skipped */
	unsigned long long dropped;	/* of series beyond the maximum */
	unsigned long long flagged;	/* intervals with flags */
	int64_t t0, tend;		/* the first start, the last end (of
					 * any line with an interval) */
	int64_t interval_ns;		/* the first result line's length */
	char flags[256];		/* the flags seen, comma-separated */
};

/* One line of the stream, as report_follow_parse() takes it apart. */
enum { REPORT_FREC_OTHER, REPORT_FREC_TXN, REPORT_FREC_HOP };

struct report_frec {
	int type;				/* REPORT_FREC_* */
	char a[REPORT_NAME], b[REPORT_NAME];	/* txn: kind, host;
						 * hop: from, to */
	bool have_interval;			/* start_ns, end_ns given (any
						 * type: a host line too) */
	int64_t start_ns, end_ns;
	uint64_t count;
	bool have_q;				/* p50 and p99 given */
	int64_t p50_ns, p99_ns;
	char flags[128];			/* comma-separated, "" none */
};

struct report {
	char *dir;
	struct report_kv kv[REPORT_MAX_KEYS];
	size_t nkv;
	struct report_rate *rate;	/* in lab.conf's order, sorted by
					 * rate, highest first (as the FTTC
					 * tables) */
	size_t nrates;
	char venue[REPORT_NAME], algo[REPORT_NAME];
	bool have_md;
	int md_family;
	uint8_t md_addr[16];
	uint16_t md_port;
	int mode;			/* -1 unknown, 0 cut-through, 1 s&f */
	double speed_bps;		/* 0: unknown */
	struct report_clock clk[REPORT_MAX_CLOCKS];
	size_t nclk;
	int64_t ptp_t0;
	struct report_note *note;
	size_t nnotes;
	struct report_plot plot[P_COUNT];
	struct report_follow follow;
	/* The clocks against the truth (report_clocks.c). */
	bool have_clock_truth;
	bool have_ref;			/* PTP time's own offset known */
	char ref_name[REPORT_NAME + 20];	/* "venue phc4" */
	int64_t ref_offset_ns;		/* from the machine's clock, at the
					 * first run's start */
};


/* The percentiles the plots draw (box p25..p75, whiskers p1..p99) beside
 * those of struct summary; nearest rank, as hist_summary() gives them. */
struct report_q {
	int64_t p1, p5, p25, p50, p75, p95, p99;
};

/* A rate's figures, as every table, data file and report.json shows them. */
struct report_figures {
	struct summary s[S_COUNT];
	struct report_q q[S_COUNT];
	struct summary truth_res, truth_topo;
	struct report_q q_res, q_topo;
	bool have_base;			/* baseline method computable */
	double base_mean, base_sd;
	bool have_diff_topo, have_diff_base;
	double diff_topo, diff_base;
	/* Per sample, measured - truth, and the bounds given with them. */
	struct summary err[E_COUNT], bound[E_COUNT];
	struct report_q q_err[E_COUNT];
	double coverage[E_COUNT];	/* inside / bounded; NAN: none */
	/* Each term's mean over the bounded samples that had it (NAN: none
	 * had it), and the largest (T_*; -1: no terms). */
	double term_mean[E_COUNT][T_COUNT];
	int dominant[E_COUNT];
};

/* ---- report.c ---- */

/* Add a note (a warning when something expected was missing or bad). */
void report_notef(struct report *r, bool warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Format into err; returns rc. */
int report_fail(char err[REPORT_ERRBUF], int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* lab.conf's value of key, or NULL. */
const char *report_conf(const struct report *r, const char *key);
/* The same, "unknown" where lab.conf does not say. */
const char *report_conf_or(const struct report *r, const char *key);
/* The percentiles of h (all 0 when it is empty). */
void report_quantiles(const struct hist *h, struct report_q *q);
/* Compute f from rt's histograms and truth. */
void report_figures(const struct report_rate *rt, struct report_figures *f);
/* Add a bounded sample's terms (term_ns[T_COUNT], -1 where not known). */
void report_terms_add(struct report_terms *t, const int64_t *term_ns);
/* Each term's mean into mean[T_COUNT] (NAN for a term no sample had);
 * returns the largest one's index, or -1 when no sample had terms. */
int report_terms_mean(const struct report_terms *t, double *mean);
/* Whether both hosts' stamps of rate rt were calibrated: NULL when they
 * were, else what was not ("stamps not calibrated", "the algo's stamps
 * not calibrated"). */
const char *report_uncalibrated(const struct report_rate *rt);
/* Whether any rate has the emulator's truth. */
bool report_any_truth(const struct report *r);
/* v nanoseconds in a unit fit for its size ("577 ns", "3.95 us", "20.5 us",
 * "1.56 ms"), with its sign when sign (+ and -). Returns buf. */
char *report_ns(char *buf, size_t len, double v, bool sign);
/* The switch as the report names it: "swemu, modelled on PRESET (576.9 ns)"
 * when the emulator's truth is there, else lab.conf's switch (and mode). */
void report_switch_name(const struct report *r, char *buf, size_t len);
/* Whether rate rt ran below its offered rate, and why, in why (len
 * bytes): false when it kept up or nobody said (no run.conf). */
bool report_capped(const struct report *r, const struct report_rate *rt,
		   char *why, size_t len);

/* ---- report_load.c: every reader notes what it skipped (report_notef) and
 * keeps going; only lab.conf can fail. ---- */

/* Read lab.conf at path into r (keys, rates, hosts, md_source, switch
 * mode and speed). 0, or -errno with err "PATH:LINE: why" (-EINVAL). */
int report_conf_load(struct report *r, const char *path,
		     char err[REPORT_ERRBUF]);
/* The series (S_*) of a samples line (files/samples.h), or -1 when the
 * report does not show it. */
int report_series_of(const struct report *r, const struct samples_rec *s);
/* Whether s, of series, cannot be a measurement and is left out. */
bool report_sample_dropped(int series, const struct samples_rec *s);
/* Read rt->path into rt's series; rt->have_samples when it was read. */
void report_samples_load(struct report *r, struct report_rate *rt);
/* Read DIR/rate-R/VENUE.cal and ALGO.cal into rt->cal (a file that is
 * there and cannot be read is noted). */
void report_calib_load(struct report *r, struct report_rate *rt);
/* Read DIR/rate-R/run.conf into rt->run (rt->have_run). */
void report_run_load(struct report *r, struct report_rate *rt);
/* Read the journals of DIR/journals into r's clocks. */
void report_journals_load(struct report *r);

/* ---- report_truth.c ---- */

/* The identity of a market data frame (TCP with payload from md_source),
 * whichever capture holds it: a hash of its flow, TCP sequence number and
 * payload length. False when p is not one. */
bool report_md_key(const struct report *r, const struct cap_reader *c,
		   const struct cap_packet *p, uint64_t *key);

/* A market data frame the emulator forwarded, with both stamps. */
struct report_tframe {
	uint64_t key;			/* report_md_key() */
	int64_t in_ns, res_ns;		/* ingress; egress - ingress */
	int64_t topo_ns;		/* the truth of a switch sample */
	bool have_topo;
};

struct report_truth_rd;

/* Open the port captures of DIR/rate-R/switch/swemu; NULL, with
 * rt->truth.why saying why, when there are none to read. */
struct report_truth_rd *report_truth_open(struct report *r,
					  struct report_rate *rt);
/* The stamp the merge of the ports reads next; INT64_MAX at the end. */
int64_t report_truth_pos(const struct report_truth_rd *t);
/* The next frame, in the order their egress is read (also counted into
 * rt->truth): 1, or 0 at the end (or t NULL). */
int report_truth_next(struct report_truth_rd *t, struct report_tframe *f);
/* Read what is left, close, and settle rt->truth (have, why, notes);
 * t may be NULL. */
void report_truth_close(struct report_truth_rd *t, struct report_rate *rt,
			struct report *r);

/* ---- report_pair.c ---- */

/* Pair rt's switch and hop samples with the truth of their frames into
 * rt->pair, reading the truth whole into rt->truth on the way. */
void report_pair_load(struct report *r, struct report_rate *rt);

/* ---- report_clocks.c ---- */

/* With lab.conf "clocks hwsim": read DIR/clocks/HOST.truth and set each
 * journal sample beside the truth (r->clk[].tt, toff). */
void report_clocks_load(struct report *r);
/* Clock c over rate rt's window into ct; false (ct all 0) for a clock
 * without truth (report_clocks_load() set none beside it). */
bool report_clock_window(const struct report_clock *c,
			 const struct report_rate *rt, struct report_ctruth *ct);

/* ---- report_follow.c ---- */

/* Take one line of the live stream apart (len bytes; a newline at its end
 * is allowed): one flat JSON object, keys in any order, values strings,
 * numbers, true, false, null, the flags array of strings, anything nested
 * skipped whole. 1: a hop or txn line with start_ns, end_ns > start_ns, a
 * count and, when the count is not 0, p50_ns and p99_ns (names longer than
 * REPORT_NAME are cut, flags beyond rec->flags left out); 0: another line
 * of the stream (event, host, switch, alert, or a type this version does
 * not know), with its interval when it has one (have_interval); -EBADMSG:
 * not one JSON object, or no type, or a hop or txn line without what it
 * must have; *why then says what (static text). */
int report_follow_parse(const char *line, size_t len, struct report_frec *rec,
			const char **why);
/* Read DIR/follow.jsonl into r->follow (noting lines skipped); without
 * it, r->follow.why says so. */
void report_follow_load(struct report *r);
/* OUTDIR/data/follow-N.dat per series and data/follow-flags.dat, when
 * r->follow.have. 0 or -errno with err naming the file. */
int report_follow_write(const struct report *r, const char *outdir,
			char err[REPORT_ERRBUF]);
/* The keys of the follow-time template's values (NULL ends them), and
 * the value of one for r into buf. */
extern const char *const report_follow_keys[];
void report_follow_value(const struct report *r, const char *key, char *buf,
			 size_t len);

/* ---- report_table.c ---- */

/* Tables 1 and 2, as text or as Markdown, to f. */
void report_tables(const struct report *r, FILE *f, bool md);

#endif
