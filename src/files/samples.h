/* samples.h — the samples file: every latency sample tapless correlate
 * measured (--samples), one per line, as tapless report reads it back and
 * gnuplot and awk read it directly. The format is tapless-correlate(8),
 * SAMPLES FILE: a first line starting "#" that names the fields, then
 *
 *   run kind from to time_ns latency_ns sync bound_ns rate switch
 *       clock_ns holdover_ns stamp_ns resolution_ns
 *
 * separated by one space: the last four are the terms bound_ns is the sum
 * of (-1: not known), which files written before them lack (read as -1).
 */
#ifndef TAPLESS_SAMPLES_H
#define TAPLESS_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

/* The sample's standing in its hosts' sync journals. */
enum samples_sync {
	SAMPLES_SYNC_NONE,	/* no journal said */
	SAMPLES_SYNC_IN,	/* in sync: bound_ns holds */
	SAMPLES_SYNC_OUT,	/* out of sync: the error is not bounded */
	SAMPLES_SYNC_HOLDOVER,	/* an end in holdover, none out: bound_ns
				 * (grown since the last fresh sample)
				 * holds */
	SAMPLES_SYNC_KINDS
};

/* The terms of bound_ns, in this order. */
#define SAMPLES_TERMS 4

/* One sample. Strings are the writer's, or point into the line that
 * samples_parse() was given. */
struct samples_rec {
	const char *run;	/* "main" or "baseline" */
	const char *kind;	/* hop, switch, tick_to_trade, fill_to_sell... */
	const char *from, *to;	/* host names */
	int64_t time_ns;	/* the later stamp, on the run's timescale */
	int64_t latency_ns;
	enum samples_sync sync;
	int64_t bound_ns;	/* -1: no bound */
	double rate;		/* the rate bucket's messages/s; 0: none */
	const char *sw;		/* the switch, "-" when none */
	int64_t term_ns[SAMPLES_TERMS];	/* clock, holdover, stamp,
					 * resolution; -1: not known */
};

/* The first line, naming the fields. Returns 0 or -EIO. */
int samples_write_header(FILE *f);

/* One sample's line. Returns 0 or -EIO. */
int samples_write(FILE *f, const struct samples_rec *r);

/* Parse one line (its spaces and newline are overwritten). Returns 0 with
 * *r filled, 1 for a comment or blank line, or -EBADMSG when it is not a
 * sample: not ten or fourteen fields, a run or sync word not in the format, a number
 * that is not a whole decimal. */
int samples_parse(char *line, struct samples_rec *r);

/* "none", "in", "out" or "holdover". */
const char *samples_sync_name(enum samples_sync s);

#endif
