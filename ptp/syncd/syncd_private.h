/* syncd_private.h — tapless-syncd's insides, shared by its files and by
 * nobody else; the program's interface is tapless-syncd(8).
 *
 *   syncd.c         start-up, configuration (re)load, the children's
 *                   supervision, links and system clock steps, the poll
 *                   loop, the stop
 *   syncd_sample.c  ptp4l's management answers, PHC-vs-system readings,
 *                   the samples judged by syncq, the journal (samples,
 *                   events, rotation)
 *   syncd_status.c  the answers to the control socket (tapless status)
 *                   and the metrics endpoint's text
 */
#ifndef TAPLESS_SYNCD_PRIVATE_H
#define TAPLESS_SYNCD_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/opts.h"		/* before syncconf.h: its arrays of struct opt_def */
#include "base/metrics.h"	/* enum metrics_format */
#include "ptp/fresh.h"		/* struct fresh, held per clock */
#include "ptp/journal.h"	/* struct journal_ring, held in struct syncd */
#include "ptp/mgmt.h"		/* MGMT_CLOCK_ID_STRLEN */
#include "ptp/ptpgen.h"		/* struct ptpgen_plan, held in struct syncd */
#include "ptp/syncconf.h"	/* struct syncconf, SYNCCONF_MAX_PORTS */
#include "ptp/syncq.h"		/* enum syncq_state */
#include "stamp/hwtstamp.h"	/* struct hwtstamp_state, held per port */

struct child;
struct ctl;
struct iface_watch;
struct journal_writer;
struct phc;
struct pidfile;
struct pmc;

/* "tapless-syncd VERSION"; the file using it includes base/prog.h. */
#define SYNCD_VERSION prog_version()
#define SYNCD_EVENTS 32			/* recent events kept for status */
#define SYNCD_EVENT_TEXT 160		/* an event's text, journal and status */
/* Holdover drift limits by clock kind, ppb (tapless.conf holdover_drift):
 * a NIC's oscillator steered by a servo on hardware stamps; the system
 * clock steered on software stamps, whose noise leaves the servo's
 * frequency less sure; any clock free running, never steered, whose
 * oscillator is only as good as its tolerance. */
#define SYNCD_SETTLE 3			/* fresh good samples before in sync */
#define SYNCD_DRIFT_HW_PPB 100
#define SYNCD_DRIFT_SW_PPB 1000
#define SYNCD_DRIFT_FREE_PPB 100000

struct syncd_port {
	const struct syncconf_port *cp;
	uint16_t number;		/* ptp4l's port number */
	int state;			/* port state, -1: unknown */
	bool have_stats;
	uint64_t rx[16], tx[16];	/* PORT_STATS_NP */
	int link;			/* 1 up, 0 down, -1 unknown */
	struct hwtstamp_state hwts;
	bool hwts_known, hwts_narrow;
};

/* One ptp4l and the clock it steers. */
struct syncd_inst {
	const struct ptpgen_instance *pi;
	struct child *ch;
	struct pmc *pmc;
	struct syncq *q;
	struct phc *phc;		/* hardware instances */
	struct syncd_port port[SYNCCONF_MAX_PORTS];
	unsigned nports;
	/* The latest answers, reset at each sample. */
	bool have_cds, have_parent, have_ts, answered;
	int steps;
	int64_t offset_ns, delay_ns;
	int64_t ts_offset_ns, ingress_ns;	/* TIME_STATUS_NP */
	bool ts_refused;		/* no TIME_STATUS_NP: counters only */
	struct fresh fr;		/* from one sample to the next */
	int64_t fresh_mono;		/* last fresh sample, CLOCK_MONOTONIC;
					 * 0: none since start */
	/* The management path: since when sends fail or nothing answers. */
	int send_err;			/* last pmc_get() error, 0: none */
	bool mgmt_lost;			/* reported, ptp4l restarted for it */
	char gm[MGMT_CLOCK_ID_STRLEN], self[MGMT_CLOCK_ID_STRLEN];
	char last_gm[MGMT_CLOCK_ID_STRLEN];
	int gm_class_now;		/* PARENT_DATA_SET's, this sample */
	int gm_class;			/* last_gm's clockClass, -1 unknown */
	int utc_offset;			/* from TIME_PROPERTIES, -1 unknown */
	int64_t last_answer_ns;		/* CLOCK_MONOTONIC */
	int subscribed;			/* 1 yes, 0 asked, -1 refused */
	int64_t subscribe_at;
	/* The last sample written. */
	struct syncq_verdict v;
	bool fresh;
	int64_t phc_sys_ns;		/* last PHC - sys, for steps */
	bool phc_sys_known;
	enum syncq_state qstate;
	char state_name[16];
	double freq_ppb;		/* at the last sample, NAN unknown */
	uint64_t clock_steps;		/* since start or reload */
};

/* A clock measured, not steered by a ptp4l of ours: CLOCK_REALTIME or a
 * PHC phc2sys keeps on the reference instance's clock. */
struct syncd_derived {
	char clock[16];
	struct phc *phc;		/* NULL: CLOCK_REALTIME */
	struct syncd_inst *ref;
	struct syncq *q;
	struct syncq_verdict v;
	int64_t offset_ns;
	double freq_ppb;		/* at the last sample, NAN unknown */
	uint64_t clock_steps;		/* since start or reload */
};

struct syncd {
	struct opts *cli;		/* the command line, for reloads */
	const char *cfg_path;
	struct syncconf conf;
	struct ptpgen_plan plan;
	struct syncd_inst inst[SYNCCONF_MAX_PORTS];
	unsigned ninst;
	struct child *aux[SYNCCONF_MAX_PORTS];	/* phc2sys */
	unsigned naux;
	struct syncd_derived der[SYNCCONF_MAX_PORTS];
	unsigned nder;
	struct journal_writer *jw;
	char journal_path[4200], host[256];
	uint64_t journal_errors;
	uint64_t caps;			/* permitted after the drop */
	bool caps_dropped;
	char ctl_path[4096], ctl_group[256];	/* of the open ctl */
	struct pidfile *lock;		/* run_dir/tapless-syncd.pid */
	struct pidfile *jlock;		/* journal_dir/.HOST.journal.lock */
	struct pidfile *ctl_lock;	/* control_socket.lock */
	char lock_dir[4096];		/* the run_dir it is in */
	struct ctl *ctl;
	struct metrics *metrics;
	struct iface_watch *watch;
	int sfd, tfd;			/* signalfd, realtime step timerfd */
	int64_t started_ns, next_tick, interval_ns;
	int64_t rt_minus_mono;		/* for the size of a system step */
	struct journal_event ev[SYNCD_EVENTS];
	struct journal_ring events;	/* over ev */
	bool stop;
};

/* syncd.c */

/* CLOCK_REALTIME and CLOCK_MONOTONIC, in nanoseconds. */
int64_t syncd_now(void);
int64_t syncd_mono(void);

/* syncd_sample.c */

/* Journal the rules the in-sync decision uses, one event per clock: at
 * start and after every reload. */
void syncd_rules(struct syncd *d);
/* The drift limit (ppb) for a clock, and which default it is ("hardware",
 * "software", "free running", "configured"). */
int64_t syncd_drift_ppb(const struct syncd *d, bool hw, const char **why);
/* Why the clock cannot be in sync right now, whatever its last sample
 * said (ptp4l down or not answering, the followed port's link down), in
 * buf; false when nothing stands against it. Status and alarms agree
 * through this. */
bool syncd_blind(const struct syncd *d, const struct syncd_inst *in,
		 int64_t mono, char *buf, size_t len);
/* A step of the clock named clock (from the PHC check or the system
 * clock's timer) counted on the instance or derived clock of that name. */
void syncd_count_step(struct syncd *d, const char *clock);

/* Journal an event, keep it for status, and log it. */
void syncd_event(struct syncd *d, const char *clock, const char *name,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Read what ptp4l answered on in's management socket. */
void syncd_pmc_read(struct syncd *d, struct syncd_inst *in);
/* Once per sample_interval: every clock sampled and journalled, new
 * management questions sent, the journal rotated when due. */
void syncd_tick(struct syncd *d);

/* syncd_status.c */

/* The control socket's answer to req (one of ctl_status_requests: status
 * as text, CSV or JSON) on out, arg the struct syncd; -EINVAL for any other
 * request (a ctl_answer_fn). */
int syncd_ctl_answer(void *arg, const char *req, FILE *out);
/* The metrics endpoint's text, arg the struct syncd (a metrics_render_fn);
 * -EIO when writing failed. */
int syncd_metrics(FILE *f, enum metrics_format fmt, void *arg);

#endif
