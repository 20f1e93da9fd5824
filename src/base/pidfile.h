/* pidfile.h — one instance per directory or path: a pid file held with
 * flock(2), as chronyd and ptp4l users expect.
 *
 * The holder writes its pid on the first line and a note (what it runs:
 * its configuration file, its socket) on the second, so a second instance
 * can say who is in the way. The lock, not the file, decides: a file left
 * by a dead instance is free (the kernel dropped its lock) and is taken
 * over. Library code: returns 0 / -errno, never prints.
 */
#ifndef TAPLESS_PIDFILE_H
#define TAPLESS_PIDFILE_H

#include <stddef.h>
#include <sys/types.h>

#define PIDFILE_NOTE_MAX 1024

struct pidfile;

/* What pidfile_take() found in a file someone else holds. pid is 0 when
 * the holder had not written it yet (it took the lock a moment ago). */
struct pidfile_holder {
	pid_t pid;
	char note[PIDFILE_NOTE_MAX];
};

/* Create path (mode 0644) if needed, lock it (LOCK_EX | LOCK_NB) and write
 * "PID\nNOTE\n" into it. Returns 0 with *out held; -EWOULDBLOCK when
 * another process holds it (holder, when not NULL, says who); or another
 * -errno (the directory is missing, not writable...). The descriptor is
 * close-on-exec: children never hold the lock. */
int pidfile_take(struct pidfile **out, const char *path, const char *note,
		 struct pidfile_holder *holder);

/* Read who holds path without taking it: 1 and holder filled when a live
 * process holds it, 0 when free or absent, -errno. */
int pidfile_holder(const char *path, struct pidfile_holder *holder);

/* The path given to pidfile_take(). */
const char *pidfile_path(const struct pidfile *p);

/* Remove the file while still holding it, then let go. NULL: nothing. */
void pidfile_release(struct pidfile *p);

#endif
