/* export.h — tapless export: the correlator's reading of each host's
 * captures (the same reader, reassembly and FIX extraction as tapless
 * correlate), each message out as a row of tapless-records(5), in batches
 * to ClickHouse's HTTP interface or to a file.
 *
 * Into ClickHouse, rows go exactly once in practice:
 * - a batch that fails for a reason that passes (the server is down or
 *   restarting) is sent again, after a growing pause, until it is taken:
 *   reading waits meanwhile, nothing is dropped or reordered;
 * - after each batch taken, each input's state file (expstate.h) says how
 *   far it is in, so a rerun or a restart goes on after it;
 * - a batch the server took but whose answer was lost is sent again:
 *   the tables are ReplacingMergeTree on the whole record, so the second
 *   copy collapses into the first (queries read them with FINAL).
 * Wrong credentials, a missing or different table end the export with an
 * error saying so.
 */
#ifndef TAPLESS_EXPORT_H
#define TAPLESS_EXPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "export/record.h"

struct corr;
struct corr_config;
struct export;
struct printer;

#define EXPORT_ERRBUF 1024

struct export_config {
	/* ClickHouse (url set) ... */
	const char *url, *user, *password;
	const char *table;		/* tapless.records */
	const char *txn_table;		/* tapless.transactions; NULL: none */
	const char *state_dir;		/* NULL: no state kept */
	bool fresh;			/* ignore the state: from the start */
	int64_t retry_for_ns;		/* give up after; 0: never */
	/* ... or a file. */
	FILE *out;
	enum record_format fmt;
	FILE *txn_out;			/* transactions, or NULL: none */
	unsigned batch;			/* rows per insert (or write) */
	int64_t flush_ns;		/* following: a row waits this long
					 * at most before it is sent */
	bool follow;			/* resume by position, not count */
	bool from_newest;		/* following starts at the newest file:
					 * refused when a state says where to go on */
	const volatile sig_atomic_t *stop;	/* set by a signal: stop
						 * waiting for the server */
	/* What the exporter has to say that is not an error (the server
	 * gone and back, a state that no longer fits its input), whole,
	 * at a LOG_* level (syslog.h); called from the sender thread too.
	 * NULL: said nowhere. */
	void (*note)(void *arg, int level, const char *msg);
	void *note_arg;
};

int export_create(struct export **out, const struct export_config *cfg);
void export_destroy(struct export *e);

/* Point the correlator's configuration at the exporter (on_record,
 * on_txn, rec_arg, no_match, utc_target). */
void export_hooks(struct export *e, struct corr_config *cc);

/* Once c has its hosts (inputs[i] the path given for host i): each
 * input's state file is locked for the run (-EBUSY: another exporter
 * holds it) and read, and ClickHouse's tables checked against
 * tapless-records(5). Waits for a server that is down (as a batch does).
 * Returns 0 or a negative errno with err. */
int export_begin(struct export *e, struct corr *c, const char *const *inputs,
		 char err[EXPORT_ERRBUF]);

/* Following: send the batch if its oldest row has waited flush_ns
 * (now_ns: CLOCK_MONOTONIC). Returns 0 or the export's error. */
int export_tick(struct export *e, int64_t now_ns);

/* The end: the last batch sent, the states saved. Returns 0 or the
 * export's error (the first one, which stopped it), with err. */
int export_end(struct export *e, char err[EXPORT_ERRBUF]);

/* Per host: rows sent, rows skipped as already in, transactions, batches,
 * retries; an array "export" of p. */
void export_print(const struct export *e, struct printer *p);

#endif
