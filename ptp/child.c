/* child.c — see child.h. */
#include "ptp/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/xalloc.h"

/* glibc 2.36 wraps the pidfd calls; older ones only have the syscalls. */
#if __has_include(<sys/pidfd.h>)
#include <sys/pidfd.h>
#define child_pidfd_open(pid)		pidfd_open((pid), 0)
#define child_pidfd_kill(fd, sig)	pidfd_send_signal((fd), (sig), NULL, 0)
#else
#define child_pidfd_open(pid)		((int)syscall(SYS_pidfd_open, (pid), 0))
#define child_pidfd_kill(fd, sig) \
	((int)syscall(SYS_pidfd_send_signal, (fd), (sig), NULL, 0))
#endif

/* Per child_read_output() call: one default pipe's capacity. */
#define CHILD_READ_BUDGET 65536
/* Consecutive quick exits beyond this all get the cap anyway. */
#define CHILD_STREAK_MAX 32

struct child {
	char *name;
	char **argv;
	pid_t pid;		/* 0 when not running */
	int pidfd;
	int out_fd;
	bool out_reaped;	/* the child is reaped: an empty read ends */
	int64_t start_ns;
	int64_t next_ns;
	unsigned starts;
	unsigned streak;	/* failures in a row: short runs, failed starts */
	bool scheduled;		/* next_ns says when; else start at once */
	bool have_exit;
	struct child_exit last;
	size_t line_len;
	char line[CHILD_LINE_MAX + 1];
	char rbuf[4096];
};

static int64_t child_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int child_create(struct child **out, const char *name,
		 const char *const argv[])
{
	struct child *c;
	size_t n = 0;

	*out = NULL;
	if (!name || !argv || !argv[0] || !argv[0][0])
		return -EINVAL;
	while (argv[n])
		n++;
	c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(name);
	c->argv = xcalloc(n + 1, sizeof(*c->argv));
	for (size_t i = 0; i < n; i++)
		c->argv[i] = xstrdup(argv[i]);
	c->pidfd = -1;
	c->out_fd = -1;
	*out = c;
	return 0;
}

static void child_close_output(struct child *c)
{
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
	c->out_reaped = false;
	c->line_len = 0;
}

void child_destroy(struct child *c)
{
	if (!c)
		return;
	if (c->pid)
		child_stop(c, CHILD_DESTROY_TIMEOUT_MS);
	child_close_output(c);
	for (char **a = c->argv; *a; a++)
		free(*a);
	free(c->argv);
	free(c->name);
	free(c);
}

/* In the forked child: set up and exec, or report errno on errfd and
 * _exit(). Only async-signal-safe calls: the supervisor may have threads. */
static void __attribute__((noreturn))
child_exec(const struct child *c, pid_t parent, int nullfd, int outfd,
	   int errfd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int fd, e;

	/* Every signal is blocked (child_start), so none of the supervisor's
	 * handlers can run here. exec resets handled signals but keeps
	 * ignored ones: a supervisor ignoring SIGPIPE must not hand that to
	 * ptp4l. SIGKILL and SIGSTOP cannot be changed, glibc's own signals
	 * fail with EINVAL; both are harmless. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	/* Its own session and process group: Ctrl-C on the supervisor's
	 * terminal reaches the supervisor, which stops children in order. */
	if (setsid() < 0)
		goto fail;
	/* A supervisor killed with SIGKILL cannot stop its children; the
	 * kernel does it. If the supervisor died before the prctl, nobody
	 * would send the signal and nobody reads errfd: just go. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
		goto fail;
	if (getppid() != parent)
		_exit(127);
	/* Move our descriptors above 2 first: any of them may be 0, 1 or 2
	 * when the supervisor runs with those closed, and dup2() onto
	 * itself would leave FD_CLOEXEC set. */
	fd = fcntl(errfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		goto fail;
	errfd = fd;
	nullfd = fcntl(nullfd, F_DUPFD_CLOEXEC, 3);
	outfd = fcntl(outfd, F_DUPFD_CLOEXEC, 3);
	if (nullfd < 0 || outfd < 0)
		goto fail;
	if (dup2(nullfd, STDIN_FILENO) < 0 || dup2(outfd, STDOUT_FILENO) < 0 ||
	    dup2(outfd, STDERR_FILENO) < 0)
		goto fail;
	/* The supervisor's sockets and files are not ptp4l's business. Older
	 * kernels lack the flag; the descriptors then leak, nothing worse. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(c->argv[0], c->argv);
fail:
	e = errno;
	/* A pipe write this small is atomic. If even that fails, the parent
	 * sees a start and then an exit with 126, the shell's "cannot
	 * execute". */
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

/* One more failure in a row (or, after a long run, the first): the next
 * start waits twice as long as the one before, up to the cap. */
static void child_backoff(struct child *c, int64_t now_ns, int64_t run_ns)
{
	int64_t delay = CHILD_BACKOFF_MIN_NS;

	if (run_ns >= CHILD_STABLE_NS)
		c->streak = 1;
	else if (c->streak < CHILD_STREAK_MAX)
		c->streak++;
	for (unsigned i = 1; i < c->streak && delay < CHILD_BACKOFF_MAX_NS; i++)
		delay *= 2;
	if (delay > CHILD_BACKOFF_MAX_NS)
		delay = CHILD_BACKOFF_MAX_NS;
	c->next_ns = now_ns + delay;
	c->scheduled = true;
}

/* Wait for a child known to be exiting (or to have exited). */
static int child_wait(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

int child_start(struct child *c, int64_t now_ns)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	int nullfd, pidfd, flags, e, ret, status;
	sigset_t all, old;
	pid_t parent, pid;
	ssize_t n;

	if (c->pid)
		return -EBUSY;
	child_close_output(c);
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0) {
		ret = -errno;
		goto fail;
	}
	/* Only the read end is non-blocking: the child's stdout must block
	 * like any other. */
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    (flags = fcntl(out[0], F_GETFL)) < 0 ||
	    fcntl(out[0], F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = -errno;
		goto fail;
	}
	parent = getpid();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		child_exec(c, parent, nullfd, out[1], err[1]);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		ret = -e;
		goto fail;
	}
	close(nullfd);
	close(out[1]);
	close(err[1]);
	nullfd = out[1] = err[1] = -1;

	/* The error pipe closes on exec (CLOEXEC) with nothing in it, or
	 * carries the errno of whatever failed before: so a missing program
	 * is -ENOENT here, not a child that exits 127 later. */
	do
		n = read(err[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != 0) {
		ret = n == (ssize_t)sizeof(e) ? -e : n < 0 ? -errno : -EIO;
		if (n != (ssize_t)sizeof(e))
			kill(pid, SIGKILL);
		child_wait(pid, &status);
		goto fail;
	}
	/* Not yet reaped, so the pid cannot have been reused. */
	pidfd = child_pidfd_open(pid);
	/* Without pidfds (valgrind does not know the call) the caller
	 * polls child_reap() instead; see child_pidfd(). */
	if (pidfd < 0 && errno != ENOSYS) {
		ret = -errno;
		kill(pid, SIGKILL);
		child_wait(pid, &status);
		goto fail;
	}
	close(err[0]);
	c->pid = pid;
	c->pidfd = pidfd;
	c->out_fd = out[0];
	c->start_ns = now_ns;
	c->next_ns = INT64_MAX;
	c->starts++;
	return 0;
fail:
	if (nullfd >= 0)
		close(nullfd);
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	/* A program that cannot be run now will not run a moment later
	 * either: retrying at once would spin. */
	child_backoff(c, now_ns, 0);
	return ret;
}

/* Record the end of the running child. status < 0: not known. */
static void child_exited(struct child *c, int64_t now_ns, int status,
			 bool backoff)
{
	struct child_exit *ex = &c->last;

	memset(ex, 0, sizeof(*ex));
	ex->pid = c->pid;
	ex->status = -1;
	if (status >= 0 && WIFSIGNALED(status)) {
		ex->signalled = true;
		ex->signo = WTERMSIG(status);
		ex->core_dumped = WCOREDUMP(status);
	} else if (status >= 0) {
		ex->status = WEXITSTATUS(status);
	}
	ex->start_ns = c->start_ns;
	ex->end_ns = now_ns;
	ex->run_ns = now_ns - c->start_ns;
	c->have_exit = true;

	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	c->pid = 0;
	if (c->out_fd >= 0)
		c->out_reaped = true;

	if (backoff) {
		child_backoff(c, now_ns, ex->run_ns);
	} else {
		c->next_ns = now_ns;
		c->scheduled = true;
	}
}

int child_reap(struct child *c, int64_t now_ns, struct child_exit *ex)
{
	int status = 0;
	pid_t r;

	if (!c->pid)
		return -ECHILD;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (r < 0) {
		if (errno != ECHILD)
			return -errno;
		/* Reaped behind our back: it is gone all the same. */
		child_exited(c, now_ns, -1, true);
		*ex = c->last;
		return -ECHILD;
	}
	child_exited(c, now_ns, status, true);
	*ex = c->last;
	return 1;
}

static void child_deliver(struct child *c, child_line_fn *line, void *arg)
{
	c->line[c->line_len] = '\0';
	if (line)
		line(arg, c->name, c->line);
	c->line_len = 0;
}

int child_read_output(struct child *c, child_line_fn *line, void *arg)
{
	size_t budget = CHILD_READ_BUDGET;
	ssize_t n;

	if (c->out_fd < 0)
		return 1;
	for (;;) {
		n = read(c->out_fd, c->rbuf, sizeof(c->rbuf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (c->out_reaped)
				break;
			return 0;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			char ch = c->rbuf[i];

			if (ch == '\n') {
				child_deliver(c, line, arg);
				continue;
			}
			/* Split only when another byte comes: a line of
			 * exactly CHILD_LINE_MAX is one line, not two. */
			if (c->line_len == CHILD_LINE_MAX)
				child_deliver(c, line, arg);
			c->line[c->line_len++] = ch;
		}
		if ((size_t)n >= budget)
			return 0;
		budget -= (size_t)n;
	}
	if (c->line_len)
		child_deliver(c, line, arg);
	child_close_output(c);
	return 1;
}

int child_signal(struct child *c, int sig)
{
	if (!c->pid)
		return -ESRCH;
	/* Unreaped, the pid is still ours even without a pidfd. */
	if (c->pidfd < 0)
		return kill(c->pid, sig) < 0 ? -errno : 0;
	return child_pidfd_kill(c->pidfd, sig) < 0 ? -errno : 0;
}

/* Poll the pidfd until the child exits or timeout_ms have passed. Returns
 * 1 when it has exited, 0 on timeout, -errno. */
static int child_wait_exit(struct child *c, int timeout_ms)
{
	int64_t deadline = child_mono_ns() + (int64_t)timeout_ms * 1000000;
	struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
	int64_t left;
	int r;

	while (c->pidfd < 0) {
		siginfo_t si = { .si_pid = 0 };

		/* No pidfd: look without reaping, every 10 ms. */
		if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT))
			return errno == EINTR ? 0 : -errno;
		if (si.si_pid)
			return 1;
		if (child_mono_ns() >= deadline)
			return 0;
		poll(NULL, 0, 10);
	}
	for (;;) {
		left = deadline - child_mono_ns();
		if (left < 0)
			left = 0;
		/* Round up: poll(0) must not come before the deadline. */
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && left == 0)
			return 0;
	}
}

int child_stop(struct child *c, int timeout_ms)
{
	int status, ret, r;

	if (!c->pid)
		return 0;
	if (timeout_ms < 0)
		timeout_ms = 0;
	ret = child_signal(c, SIGTERM);
	r = ret ? 0 : child_wait_exit(c, timeout_ms);
	if (r < 0 && !ret)
		ret = r;
	if (r != 1)
		child_signal(c, SIGKILL);
	/* Helpers it started share its process group; while the leader is
	 * unreaped the group id cannot belong to anyone else. */
	kill(-c->pid, SIGKILL);
	/* The child is dead or dying of SIGKILL: waiting cannot hang (short
	 * of a task stuck in the kernel, which no signal would end). */
	r = child_wait(c->pid, &status);
	child_exited(c, child_mono_ns(), r ? -1 : status, false);
	if (r && r != -ECHILD && !ret)
		ret = r;
	return ret;
}

int64_t child_next_start(const struct child *c)
{
	if (c->pid)
		return INT64_MAX;
	return c->scheduled ? c->next_ns : 0;
}

int child_pidfd(const struct child *c)
{
	return c->pidfd;
}

int child_out_fd(const struct child *c)
{
	return c->out_fd;
}

pid_t child_pid(const struct child *c)
{
	return c->pid;
}

bool child_running(const struct child *c)
{
	return c->pid != 0;
}

unsigned child_restarts(const struct child *c)
{
	return c->starts ? c->starts - 1 : 0;
}

const struct child_exit *child_last_exit(const struct child *c)
{
	return c->have_exit ? &c->last : NULL;
}

const char *child_name(const struct child *c)
{
	return c->name;
}

char *child_exit_str(const struct child_exit *ex, char *buf, size_t len)
{
	double s = ex->run_ns > 0 ? (double)ex->run_ns / 1e9 : 0.0;
	const char *what;

	if (!len)
		return buf;
	if (ex->signalled) {
		what = sigdescr_np(ex->signo);
		snprintf(buf, len, "killed by signal %d (%s%s) after %.1f s",
			 ex->signo, what ? what : "unknown",
			 ex->core_dumped ? ", core dumped" : "", s);
	} else if (ex->status < 0) {
		snprintf(buf, len, "exited with unknown status after %.1f s", s);
	} else {
		snprintf(buf, len, "exited with status %d after %.1f s",
			 ex->status, s);
	}
	return buf;
}
