/* journal.h — the sync journal: how well a host's clocks followed PTP time,
 * one text line per sample or event, appended as they happen.
 *
 * tapless-syncd writes it; tapless correlate reads it to put an error bound
 * on every one-way latency and to set apart samples taken while a host was
 * out of sync; tapless sim writes it for generated hosts. The format is
 * documented in tapless-journal(5):
 *
 *   # tapless-journal 1 host NAME
 *   TIME_NS sample CLOCK STATE OFFSET_NS DELAY_NS FREQ_PPB GM STEPS SERVO SYNC BOUND_NS CLASS
 *
 * SYNC is 1 (in sync: measured since the sample before, bound within the
 * threshold), h (holdover: nothing measured, the bound grows with the
 * drift limit of the clock's last "rules" event) or 0.
 * CLASS, the grandmaster's clockClass, came with version 3: a sample line
 * of 12 fields (an older journal) reads as one with CLASS "-".
 *   TIME_NS event CLOCK NAME [TEXT...]
 *
 * Fields are separated by one space; "-" stands for a value not known.
 * CLOCK is "sys" (CLOCK_REALTIME) or "phcN" (/dev/ptpN). TIME_NS is the
 * sample's time in nanoseconds since 1970 on the UTC timescale.
 *
 * Every line is written with one write(2) on a file opened O_APPEND, so a
 * crash can tear only the last line; the reader ignores a last line without
 * its newline (or, following a growing file, reads it again once it is
 * whole: journal_resume()). The reader never stops at a bad line: it reports it (path and
 * line number) and goes on with the next.
 */
#ifndef TAPLESS_JOURNAL_H
#define TAPLESS_JOURNAL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define JOURNAL_VERSION 3		/* 2: sync may be "h"; rules events;
				 * 3: CLASS */
#define JOURNAL_NONE INT64_MIN		/* a value written as "-" */
#define JOURNAL_ERRBUF 512

struct journal_writer;
struct journal_reader;

struct journal_sample {
	int64_t ts_ns;
	char clock[16];		/* "sys", "phc0" */
	char state[16];		/* port state (SLAVE, MASTER, ...), or "-" */
	int64_t offset_ns;	/* from the master / reference, or NONE */
	int64_t delay_ns;	/* mean path delay, or NONE */
	double freq_ppb;	/* frequency adjustment; NAN when unknown */
	char gm[32];		/* grandmaster identity, or "-" */
	int steps;		/* steps removed, -1 when unknown */
	char servo[8];		/* s0 unlocked, s1 stepped, s2 locked, "-" */
	bool in_sync;		/* freshly measured, within the threshold */
	bool holdover;		/* not in sync, but the last fresh bound
				 * grown by the drift limit still holds:
				 * written "h" (never with in_sync) */
	int64_t bound_ns;	/* |clock - PTP time| <= bound while in sync
				 * or in holdover; NONE when not known */
	int gm_class;		/* the grandmaster's clockClass 1..255; 0
				 * when not known (1588 reserves class 0),
				 * written "-" */
};

struct journal_event {
	int64_t ts_ns;
	char clock[16];		/* or "-" */
	char name[32];		/* ptp4l_exit, port_state, gm_change, step,
				 * link_down, link_up, hwtstamp_change,
				 * utc_offset, ... */
	char text[256];		/* the rest of the line, or "" */
};

struct printer;

/* The most recent events, at most cap, in slots the caller provides: what
 * `tapless status` keeps of a journal's events and tapless-syncd of its
 * own. Zero n and head to start. */
struct journal_ring {
	struct journal_event *ev;	/* cap slots */
	unsigned cap, n;		/* n: events kept, up to cap */
	unsigned head;			/* the slot written next */
};

/* The slot for a new event, to be filled in: the oldest one's once the
 * ring is full. */
struct journal_event *journal_ring_add(struct journal_ring *r);

/* The events, oldest first, as `tapless status` and the daemon's status
 * show them: an array KEY of objects {time_ns, clock, name, text}; in
 * text, TITLE, then a line each. */
void journal_ring_print(struct printer *p, const char *key, const char *title,
			const struct journal_ring *r);

struct journal_record {
	enum { JOURNAL_SAMPLE = 1, JOURNAL_EVENT = 2 } type;
	union {
		struct journal_sample sample;
		struct journal_event event;
	};
};

/* Open path for appending (created 0644 if missing; the header line is
 * written when the file is empty, and a newline first when a crash left
 * the last line torn). Returns 0 or -errno. */
int journal_writer_open(struct journal_writer **out, const char *path,
			const char *host);
int journal_write_sample(struct journal_writer *w,
			 const struct journal_sample *s);
/* text may be NULL; newlines in it are written as spaces. */
int journal_write_event(struct journal_writer *w, int64_t ts_ns,
			const char *clock, const char *name, const char *text);
void journal_writer_close(struct journal_writer *w);

/* Bytes in the file now. */
uint64_t journal_writer_size(const struct journal_writer *w);

/* Start a new file: the current one is renamed PATH.YYYYMMDDTHHMMSSZ (UTC
 * of ts_ns; its name copied to rotated when not NULL), a fresh PATH gets
 * the header, and rotated files beyond the newest keep are removed (0:
 * keep all). Returns 0 or -errno; on failure to open the new file the
 * writer is unusable until the next rotate. */
int journal_writer_rotate(struct journal_writer *w, int64_t ts_ns,
			  unsigned keep, char *rotated, size_t len);

/* Format one record as its line (with the newline) into buf; returns the
 * length, or -ENOSPC. Used by the writer and by tests. */
int journal_format_sample(char *buf, unsigned len,
			  const struct journal_sample *s);

/* Read a journal. Returns 0, or -errno with err naming the path. */
int journal_open(struct journal_reader **out, const char *path,
		 char err[JOURNAL_ERRBUF]);
/* The next record: 1 with *rec filled, 0 at the end (a torn last line is
 * not a record), or -EBADMSG for a line that is not one: journal_error()
 * says "PATH:LINE: why", and the next call reads the line after. */
int journal_next(struct journal_reader *r, struct journal_record *rec);
const char *journal_error(const struct journal_reader *r);
/* The host named in the header, or "". */
const char *journal_host(const struct journal_reader *r);
/* Lines rejected so far, and whether a torn last line was dropped. */
unsigned journal_bad_lines(const struct journal_reader *r);
bool journal_torn(const struct journal_reader *r);
void journal_close(struct journal_reader *r);

/* Following a journal that grows (ptp/bound.c). After journal_next()
 * returned 0, read on from where the whole lines end: the next
 * journal_next() returns what was appended since, and a torn last line is
 * given back (no longer torn, its line number reused) to be read again
 * from its start, since it may be one the writer was still writing.
 * Returns 0 or -errno. */
int journal_resume(struct journal_reader *r);
/* Bytes of the file read as whole lines: where the next line starts. A
 * file now shorter than this was truncated under the reader. */
uint64_t journal_offset(const struct journal_reader *r);
/* The descriptor read, to fstat(2) it: has the path been replaced? */
int journal_fd(const struct journal_reader *r);

/* Parse one line (without its newline). Returns 0 (a record), 1 (a comment
 * or empty line), or -EBADMSG with why set. */
int journal_parse_line(const char *line, struct journal_record *rec,
		       const char **why);

#endif
