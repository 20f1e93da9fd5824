/* wholefile.h — a file that appears under its final name only when whole:
 * written as PATH.part, then flushed, synced and renamed over PATH; on
 * failure (or when the writer gives up) the .part is removed, or, for a
 * writer that keeps its file readable up to the last byte written (pcapng's
 * whole blocks, pcapng.h), kept under that name. Every .part-then-rename
 * writer goes through here: the text files programs write in one go (sim's
 * truth and topology, correlate's samples) through stdio, pcapng through
 * the descriptor with its own buffer.
 *
 * A PATH that is a device or a pipe (/dev/null, /dev/stdout on a pipe, a
 * FIFO) is written in place: renamed over, a device would become a file
 * (root may do that to /dev/null), and such a PATH has no "whole" to wait
 * for. Nothing is synced, renamed or removed then.
 */
#ifndef TAPLESS_WHOLEFILE_H
#define TAPLESS_WHOLEFILE_H

#include <stdbool.h>
#include <stdio.h>

struct wholefile {
	FILE *f;		/* write here (wholefile_open()), or NULL */
	int fd;			/* the file's descriptor, -1 when not open;
				 * write here after wholefile_open_fd() */
	char *path, *tmp;	/* final name, PATH.part (PATH when direct) */
	bool direct;		/* PATH a device or a pipe: written in place */
};

/* How wholefile_end() ends a file. */
enum wholefile_end {
	WHOLEFILE_RENAME,	/* flush, fsync, close, rename over PATH; on
				 * any error remove PATH.part */
	WHOLEFILE_DISCARD,	/* close and remove PATH.part, unsynced */
	WHOLEFILE_KEEP_PART,	/* as RENAME, but on an error PATH.part stays
				 * as it is, never under the final name */
};

/* Create PATH.part (truncating one left over) for writing through w->f.
 * Returns 0, or -errno (w->tmp names the file that could not be created
 * until wholefile_end()). */
int wholefile_open(struct wholefile *w, const char *path);

/* Create PATH.part, mode 0644, for a writer that buffers itself and writes
 * to w->fd (w->f is NULL). O_EXCL: an existing PATH.part (another writer's:
 * two on one name would interleave) is an error, -EEXIST, and left alone.
 * Returns 0 or -errno. */
int wholefile_open_fd(struct wholefile *w, const char *path);

/* End the file as how says. err is the writer's own error so far (0, or
 * -errno from a write(2) to w->fd): with one, nothing is synced or renamed
 * and PATH.part is removed, or kept for WHOLEFILE_KEEP_PART. With stdio,
 * what w->f holds is flushed first whatever how says. Frees w's names.
 * Returns err, or else the first -errno met (-EIO for a stdio write error
 * with no errno). Safe on a w whose open failed: nothing is removed then. */
int wholefile_end(struct wholefile *w, enum wholefile_end how, int err);

/* wholefile_end(w, discard ? WHOLEFILE_DISCARD : WHOLEFILE_RENAME, 0). */
int wholefile_close(struct wholefile *w, bool discard);

#endif
