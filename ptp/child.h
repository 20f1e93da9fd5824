/* child.h — supervise one child process: start it, read its output line by
 * line, notice when it exits, say when to start it again, stop it.
 *
 * tapless-syncd runs ptp4l and phc2sys through this: their output is what
 * the journal is made of, and a ptp4l that exits must come back without a
 * crash loop eating the machine. The supervisor owns the event loop; the
 * module only hands out descriptors to poll and does the bookkeeping:
 *
 *   child_start(c, now)             when now >= child_next_start(c)
 *   poll child_out_fd(c)  POLLIN    child_read_output(c, line, arg)
 *   poll child_pidfd(c)   POLLIN    child_reap(c, now, &ex), then
 *                                   child_read_output() for its last words
 *
 * The child runs in its own session (a terminal's Ctrl-C reaches the
 * supervisor only, which then stops its children in order), with stdin from
 * /dev/null, stdout and stderr into one pipe, default signal dispositions
 * and an empty signal mask, only descriptors 0-2 open, and SIGTERM as its
 * parent-death signal so a supervisor killed with SIGKILL does not leave a
 * ptp4l steering the clock behind it. The death signal follows the thread
 * that called child_start(): start children from a thread that lives as long
 * as the supervisor (the main thread).
 *
 * All times are CLOCK_MONOTONIC nanoseconds; child_stop() reads that clock
 * itself. The caller must not reap the children itself (waitpid(-1), SIGCHLD
 * set to SIG_IGN): that takes the exit status from under child_reap().
 * Every struct child is independent; there is no global state.
 */
#ifndef TAPLESS_CHILD_H
#define TAPLESS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>	/* pid_t */

/* Output lines longer than this are delivered in pieces of this size. */
#define CHILD_LINE_MAX 1024

/* Restart backoff: the first delay, the cap, and how long a child must have
 * run for its exit to count as a fresh failure rather than another one in a
 * row. */
#define CHILD_BACKOFF_MIN_NS 1000000000LL
#define CHILD_BACKOFF_MAX_NS 60000000000LL
#define CHILD_STABLE_NS 60000000000LL

/* How long child_destroy() waits after SIGTERM before SIGKILL. */
#define CHILD_DESTROY_TIMEOUT_MS 2000

struct child;

/* How a child ended. */
struct child_exit {
	pid_t pid;
	bool signalled;		/* killed by a signal; else it exited */
	bool core_dumped;
	int status;		/* exit status; -1 when signalled or unknown */
	int signo;		/* the signal when signalled, else 0 */
	int64_t start_ns;	/* child_start()'s now_ns */
	int64_t end_ns;		/* when it was reaped */
	int64_t run_ns;		/* end_ns - start_ns */
};

/* Called once per output line, without its newline, NUL-terminated. name is
 * the child's name. The line must not call child_* functions on the same
 * child other than the getters. */
typedef void child_line_fn(void *arg, const char *name, const char *line);

/* A child named name (for the line callback and the caller's messages)
 * running argv (argv[0] is looked up in PATH; NULL-terminated). Both are
 * copied. Nothing is started. Returns 0 or -EINVAL (no name, no argv[0]). */
int child_create(struct child **out, const char *name,
		 const char *const argv[]);
/* Stop it if running (CHILD_DESTROY_TIMEOUT_MS), close and free. NULL is
 * ignored. */
void child_destroy(struct child *c);

/* fork and exec. Returns 0 once the program is running (exec succeeded), or
 * -errno: the exec's own error for a program that could not be run
 * (-ENOENT not found, -EACCES not executable, ...), in which case no child
 * is left and the failure counts towards the backoff like a quick exit;
 * -EBUSY when it is running already. Output of an earlier run still unread
 * is dropped. */
int child_start(struct child *c, int64_t now_ns);

/* Check whether it has exited (never blocks). Returns 1 with *ex filled
 * when it has (it is reaped; child_pidfd() is -1 from now on), 0 while it
 * is running, -ECHILD when there is no child to reap, or -errno. When the
 * exit status was taken by someone else, returns -ECHILD as well but the
 * exit is still recorded (status -1) and the backoff still applies.
 *
 * After the exit the output pipe stays open until child_read_output() has
 * drained it: call that next to get the child's last lines; it then closes
 * the pipe. */
int child_reap(struct child *c, int64_t now_ns, struct child_exit *ex);

/* Read what the child wrote (at most one pipe's worth per call, so a chatty
 * child cannot starve the caller's loop; poll brings the caller back) and
 * call line() for each complete line. A partial line is kept for the next
 * call; no allocation per line. The output ends at end of file, or at the
 * first empty read once the child has been reaped (whatever else holds the
 * pipe — a stray grandchild — cannot keep it open): a trailing partial line
 * is delivered, the pipe closed, and child_out_fd() is -1.
 * Returns 0 while the output may go on, 1 when it has ended (also when
 * there is no output open), or -errno. */
int child_read_output(struct child *c, child_line_fn *line, void *arg);

/* Send sig to the child (not its process group). Returns 0, -ESRCH when it
 * is not running, or -errno. */
int child_signal(struct child *c, int sig);

/* SIGTERM, wait up to timeout_ms for it to exit (polling its pidfd), then
 * SIGKILL; the child's process group (helpers it started) gets SIGKILL too,
 * and the child is reaped: no zombie and no group member is left. The exit
 * is recorded for child_last_exit() but does not count towards the backoff:
 * the supervisor chose it. The output pipe is left for child_read_output()
 * as after child_reap(). Returns 0 (also when not running), or -errno. */
int child_stop(struct child *c, int timeout_ms);

/* When the supervisor should start it (again): 0 before the first start
 * (now), INT64_MAX while it runs, else the exit time plus the backoff:
 * CHILD_BACKOFF_MIN_NS after an exit, doubling with each exit in a row that
 * came less than CHILD_STABLE_NS after its start, up to CHILD_BACKOFF_MAX_NS;
 * back to the minimum after a run of CHILD_STABLE_NS or more. A failed
 * child_start() counts as an exit after no run at all. After child_stop(),
 * the time of the stop. The module only computes: the caller calls
 * child_start(). */
int64_t child_next_start(const struct child *c);

/* The pidfd of the running child (POLLIN once it has exited), else -1 —
 * also for a running child when the kernel (or valgrind) has no pidfds:
 * then call child_reap() regularly to notice the exit. */
int child_pidfd(const struct child *c);
/* The read end of its output pipe (non-blocking), else -1. */
int child_out_fd(const struct child *c);
/* Its pid while running (started, not yet reaped), else 0. */
pid_t child_pid(const struct child *c);
bool child_running(const struct child *c);
/* Starts after the first one. */
unsigned child_restarts(const struct child *c);
/* How the last run ended, or NULL before the first exit. */
const struct child_exit *child_last_exit(const struct child *c);
const char *child_name(const struct child *c);

/* "exited with status 1 after 3.2 s", "killed by signal 9 (Killed) after
 * 12.0 s", "... (Aborted, core dumped) ...", "exited with unknown status
 * after 0.5 s". Truncated to len; returns buf. */
char *child_exit_str(const struct child_exit *ex, char *buf, size_t len);

#endif
