/* wholefile.h — a text file that appears under its final name only when
 * whole: written as PATH.part, then flushed, synced and renamed over PATH;
 * on failure (or when the writer gives up) the .part is removed. For the
 * files programs write in one go (sim's truth and topology, correlate's
 * samples); pcapng has its own writer with the same promise.
 */
#ifndef TAPLESS_WHOLEFILE_H
#define TAPLESS_WHOLEFILE_H

#include <stdbool.h>
#include <stdio.h>

struct wholefile {
	FILE *f;		/* write here */
	char *path, *tmp;	/* final name, PATH.part */
};

/* Create PATH.part. Returns 0, or -errno (w->tmp names the file that
 * could not be created until wholefile_close()). */
int wholefile_open(struct wholefile *w, const char *path);

/* Finish: flush, fsync, close and rename to the final name; with discard,
 * or on any error, remove PATH.part instead. Frees w's names. Returns 0 or
 * the first -errno met (-EIO for a write error with no errno). Safe on a w
 * whose open failed. */
int wholefile_close(struct wholefile *w, bool discard);

#endif
