/* capset.h — several capture files read as one stream in time order: a
 * directory of rotated files from one host, or a list of files.
 *
 * Each file keeps its own reader; a heap picks the earliest next packet, so
 * memory is one block buffer per file, not the captures' length. Packets of
 * one file keep their order; across files they are merged by timestamp (for
 * rotated files of one host that is the order they were captured in).
 * Files named *.part (a capture still being written, or cut by a crash) are
 * read too: every whole block in them is good.
 */
#ifndef TAPLESS_CAPSET_H
#define TAPLESS_CAPSET_H

#include "files/capfile.h"

struct capset;

/* A packet and where it came from. */
struct capset_packet {
	struct cap_packet pkt;
	unsigned file;		/* index for capset_reader() */
};

/* Following one writer's files as they are written (capset_follow()). */
struct capset_follow_stats {
	unsigned files;		/* files opened */
	unsigned missed;	/* files gone (rotation clean-up) before read,
				 * or skipped in the writer's numbering */
	unsigned restarts;	/* the writer's numbering started again: a
				 * new tapless-capd run */
	unsigned unreadable;	/* files that are not captures */
	bool waiting;		/* at the end of what is written */
};

/* Open every path: a file, or a directory whose *.pcapng, *.pcap, *.erf and
 * *.part files are taken in name order. Returns 0, or -errno / -EBADMSG
 * with err naming the path; -ENOENT when a directory holds no capture. */
int capset_open(struct capset **out, const char *const *paths, unsigned n,
		char err[CAP_ERRBUF]);

/* The same with every file's tap stamp format set (cap_set_tapfmt());
 * capset_open() detects it (TAPFMT_AUTO). */
int capset_open_tap(struct capset **out, const char *const *paths, unsigned n,
		    enum tapfmt_kind tap, char err[CAP_ERRBUF]);

/* The next packet in time order: 1, 0 at the end of every file, or a
 * negative error (the message in capset_error()). A damaged file
 * ends its own stream only: the others go on, and capset_error() keeps the
 * first error. Data stays valid until the next call. */
int capset_next(struct capset *s, struct capset_packet *p);

/* Follow path as it grows: a directory that tapless-capd writes (its
 * files read one after another in name order, which is the order capd
 * writes them in: a file is taken as done once a newer one exists, and a
 * file renamed from .part to its final name is the same file), or one file.
 * With from_oldest every file present is read first, else reading starts
 * at the newest. capset_next() returns -EAGAIN at the end of what is
 * written so far, never 0 until capset_stop(). Memory is one file's reader
 * at a time. Returns 0, or -errno with err naming the path. */
int capset_follow(struct capset **out, const char *path, bool from_oldest,
		  char err[CAP_ERRBUF]);

/* No more will be written (the follower is stopping): what is there is
 * read to its end, a block cut short counts as damage, and capset_next()
 * returns 0 at the end. */
void capset_stop(struct capset *s);

/* Following: what happened to the files; NULL when not following. */
const struct capset_follow_stats *capset_follow_stats(const struct capset *s);

/* Stats summed over every file read so far, closed ones included. While
 * following, drops are counted across files: a file that continues the
 * previous one's counters (a rotation) adds its increase, one that starts
 * them again (a new capd) adds its own. */
void capset_stats(const struct capset *s, struct cap_stats *st);

/* Following: the latest heartbeat of the file being read (its stamp, on
 * the scale of its interface: file and iface for capset_reader() and
 * cap_iface()). false when it has none yet. */
bool capset_heartbeat(const struct capset *s, int64_t *ts_ns, unsigned *file,
		      uint32_t *iface);

/* Files opened so far. While following, only the newest one (index
 * capset_files() - 1) still has a reader: capset_reader() gives NULL for
 * the others. */
unsigned capset_files(const struct capset *s);
const struct cap_reader *capset_reader(const struct capset *s, unsigned file);
/* The path of file (NULL past the last), kept after its reader closed;
 * following a directory, the name capd gives the file as it closes it
 * (without .part). */
const char *capset_path(const struct capset *s, unsigned file);

/* The first tap-stamp warning of a file still open (cap_warning()), "" if
 * none. */
const char *capset_warning(const struct capset *s);

/* The first error met, "" if none; how many files ended in error. */
const char *capset_error(const struct capset *s);
unsigned capset_damaged(const struct capset *s);
/* The latest error, "" if none (following: the file damaged last). */
const char *capset_last_error(const struct capset *s);

void capset_close(struct capset *s);

#endif
