/* report_private.h — inside struct report, shared by the files of the
 * report (report.h is what others see). Not for other modules.
 *
 *   report.c        the lifecycle: report_load() runs the readers, the
 *                   notes, lab.conf look-ups, the figures of a rate
 *   report_load.c   the readers: lab.conf, the samples files, the switch
 *                   emulator's truth, the sync journals
 *   report_table.c  the tables (text and Markdown) and the printer calls
 *                   behind report.json and the headline
 *   report_write.c  the data files, the plot scripts and index.md
 */
#ifndef TAPLESS_REPORT_PRIVATE_H
#define TAPLESS_REPORT_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/summary.h"

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
	S_COUNT
};

/* Their keys in report.json and the data files' names. */
extern const char *const report_series_key[S_COUNT];

/* The plots: template names, in the order of report.h. */
enum { P_RATE, P_HIST, P_CDF, P_TIME, P_PTP, P_TRUTH, P_COUNT };
extern const char *const report_plot_names[P_COUNT];

/* lab.conf keys the report knows, in the order index.md lists them;
 * NULL ends them. */
extern const char *const report_conf_keys[];

struct report_series {
	struct hist *h;			/* samples in sync, or without state */
	unsigned long long out;		/* samples out of sync, set apart */
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
};

struct report_kv {
	char *key, *val;
};

struct report_clock {
	char name[REPORT_NAME + 20];	/* HOST-CLOCK, file-name safe */
	char host[REPORT_NAME], clock[16];
	int64_t *ts, *off, *bnd;	/* JOURNAL_NONE where not known */
	bool *sync;
	size_t n, cap;
};

struct report_note {
	char *text;
	bool warning;
};

struct report_plot {
	bool done, ok;
	char *msg;
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
};


/* A rate's figures, as every table, data file and report.json shows them. */
struct report_figures {
	struct summary s[S_COUNT];
	struct summary truth_res, truth_topo;
	bool have_base;			/* baseline method computable */
	double base_mean, base_sd;
	bool have_diff_topo, have_diff_base;
	double diff_topo, diff_base;
};

/* ---- report.c ---- */

/* Add a note (a warning when something expected was missing or bad). */
void report_notef(struct report *r, bool warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Format into err (REPORT_ERRBUF bytes); returns rc. */
int report_fail(char *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* lab.conf's value of key, or NULL. */
const char *report_conf(const struct report *r, const char *key);
/* The same, "unknown" where lab.conf does not say. */
const char *report_conf_or(const struct report *r, const char *key);
/* Compute f from rt's histograms and truth. */
void report_figures(const struct report_rate *rt, struct report_figures *f);
/* Whether any rate has the emulator's truth. */
bool report_any_truth(const struct report *r);

/* ---- report_load.c: every reader notes what it skipped (report_notef) and
 * keeps going; only lab.conf can fail. ---- */

/* Read lab.conf at path into r (keys, rates, hosts, md_source, switch
 * mode and speed). 0, or -errno with err "PATH:LINE: why" (-EINVAL). */
int report_conf_load(struct report *r, const char *path, char *err);
/* The series (S_*) of a samples line (files/samples.h), or -1 when the
 * report does not show it. */
int report_series_of(const struct report *r, const struct samples_rec *s);
/* Whether s, of series, cannot be a measurement and is left out. */
bool report_sample_dropped(int series, const struct samples_rec *s);
/* Read rt->path into rt's series; rt->have_samples when it was read. */
void report_samples_load(struct report *r, struct report_rate *rt);
/* Read the port captures of DIR/rate-R/switch/swemu into rt->truth;
 * rt->truth.why says why there is none. */
void report_truth_load(struct report *r, struct report_rate *rt);
/* Read the journals of DIR/journals into r's clocks. */
void report_journals_load(struct report *r);

/* ---- report_table.c ---- */

/* Tables 1 and 2, as text or as Markdown, to f. */
void report_tables(const struct report *r, FILE *f, bool md);

#endif
