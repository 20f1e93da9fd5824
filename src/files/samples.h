/* samples.h — the samples file: every latency sample tapless correlate
 * measured (--samples), one per line, as tapless report reads it back and
 * gnuplot and awk read it directly. The format is tapless-correlate(8),
 * SAMPLES FILE: a first line starting "#" that names the fields, then
 *
 *   run kind from to time_ns latency_ns sync bound_ns rate switch
 *
 * separated by one space. The switch's name is the last field so that the
 * others keep fixed columns.
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
};

/* The first line, naming the fields. Returns 0 or -EIO. */
int samples_write_header(FILE *f);

/* One sample's line. Returns 0 or -EIO. */
int samples_write(FILE *f, const struct samples_rec *r);

/* Parse one line (its spaces and newline are overwritten). Returns 0 with
 * *r filled, 1 for a comment or blank line, or -EBADMSG when it is not a
 * sample: not ten fields, a run or sync word not in the format, a number
 * that is not a whole decimal. */
int samples_parse(char *line, struct samples_rec *r);

/* "none", "in", "out" or "holdover". */
const char *samples_sync_name(enum samples_sync s);

#endif
