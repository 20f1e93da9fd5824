/* test_child.c — the child supervisor with real processes (/bin/sh scripts,
 * sleep, true): output lines exactly as written (empty, split long,
 * exactly CHILD_LINE_MAX, a partial line across reads, a partial last
 * line), also when read only after the reap and with a stray grandchild
 * holding the pipe; exit codes and signals; exec errors as -errno with no
 * child left; what the child starts with (descriptors, signals, session);
 * child_stop on a child that obeys SIGTERM and on one that ignores it
 * (SIGKILL for it and its process group, nothing left to reap); the
 * restart backoff on faked times; the parent-death signal; two children at
 * once. Waits poll with generous deadlines: nothing depends on a sleep
 * being long enough. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptp/child.h"
#include "unit.h"

/* Bits of signals 32 and 33 in /proc/PID/status masks. */
#define GLIBC_SIGNALS 0x180000000ULL

#define MS 1000000LL
#define S 1000000000LL
#define DEADLINE_NS (30 * S)	/* far beyond anything a busy box needs */
#define MAX_LINES 32

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * S + ts.tv_nsec;
}

struct lines {
	const char *name;	/* the name every line must come with */
	int n;
	char l[MAX_LINES][CHILD_LINE_MAX + 1];
};

static void collect(void *arg, const char *name, const char *line)
{
	struct lines *ls = arg;

	ck_assert_str_eq(name, ls->name);
	ck_assert_int_lt(ls->n, MAX_LINES);
	ck_assert_uint_le(strlen(line), CHILD_LINE_MAX);
	strcpy(ls->l[ls->n++], line);
}

static struct child *make(const char *name, const char *const argv[])
{
	struct child *c;

	ck_assert_int_eq(child_create(&c, name, argv), 0);
	ck_assert_ptr_nonnull(c);
	return c;
}

static struct child *sh(const char *name, const char *script)
{
	const char *const argv[] = { "/bin/sh", "-c", script, NULL };

	return make(name, argv);
}

/* Read its output and reap it, polling both, until both have ended. */
static void run_out(struct child *c, struct lines *ls, struct child_exit *ex)
{
	int64_t deadline = mono() + DEADLINE_NS;
	bool out_done = false, reaped = false;
	int r;

	while (!out_done || !reaped) {
		struct pollfd p[2];
		int n = 0;

		ck_assert_msg(mono() < deadline, "%s did not finish",
			      child_name(c));
		if (!out_done)
			p[n++] = (struct pollfd){ child_out_fd(c), POLLIN, 0 };
		if (!reaped)
			p[n++] = (struct pollfd){ child_pidfd(c), POLLIN, 0 };
		ck_assert_int_ge(poll(p, (nfds_t)n, 100), 0);
		if (!reaped) {
			r = child_reap(c, mono(), ex);
			ck_assert_int_ge(r, 0);
			reaped = r == 1;
		}
		if (!out_done) {
			r = child_read_output(c, collect, ls);
			ck_assert_int_ge(r, 0);
			out_done = r == 1;
		}
	}
	ck_assert_int_eq(child_out_fd(c), -1);
	ck_assert_int_eq(child_pidfd(c), -1);
	ck_assert(!child_running(c));
	ck_assert_int_eq(child_pid(c), 0);
}

/* Wait until the child has exited (not reaping it). */
static void wait_exited(struct child *c)
{
	struct pollfd p = { child_pidfd(c), POLLIN, 0 };

	ck_assert_int_ge(p.fd, 0);
	ck_assert_int_eq(poll(&p, 1, (int)(DEADLINE_NS / MS)), 1);
}

/* Read output until at least want lines have come. */
static void read_lines(struct child *c, struct lines *ls, int want)
{
	int64_t deadline = mono() + DEADLINE_NS;

	while (ls->n < want) {
		struct pollfd p = { child_out_fd(c), POLLIN, 0 };

		ck_assert_msg(mono() < deadline, "%s: %d lines, want %d",
			      child_name(c), ls->n, want);
		ck_assert_int_ge(poll(&p, 1, 100), 0);
		ck_assert_int_eq(child_read_output(c, collect, ls), 0);
	}
}

/* Nothing left for this process to reap: no child, no zombie. */
static void expect_no_children(void)
{
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

/* Reap pid (a child or, as subreaper, an orphan) within the deadline;
 * returns its wait status. */
static int reap_pid(pid_t pid)
{
	int64_t deadline = mono() + DEADLINE_NS;
	int status;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		ck_assert_msg(mono() < deadline, "pid %d still there", (int)pid);
		usleep(10000);
	}
	ck_assert_int_eq(r, pid);
	return status;
}

static void expect_prefix(const char *s, const char *prefix)
{
	ck_assert_msg(!strncmp(s, prefix, strlen(prefix)), "'%s', want '%s...'",
		      s, prefix);
}

static void fill(char *s, char ch, size_t n)
{
	memset(s, ch, n);
	s[n] = '\0';
}

START_TEST(output_lines)
{
	static char longl[2 * CHILD_LINE_MAX + 500 + 1], exact[CHILD_LINE_MAX + 1];
	const char *const argv[] = {
		"/bin/sh", "-c",
		"printf 'first\\n\\n  second line  \\n'; "
		"printf '%s\\n' \"$1\"; printf '%s\\n' \"$2\" >&2; "
		"printf 'last, no newline'; exit 3",
		"sh", longl, exact, NULL,
	};
	struct lines ls = { .name = "ptp4l" };
	struct child_exit ex;
	struct child *c;
	char buf[128];

	fill(longl, 'x', sizeof(longl) - 1);
	fill(exact, 'y', sizeof(exact) - 1);
	c = make("ptp4l", argv);
	ck_assert_int_eq(child_next_start(c), 0);
	ck_assert(!child_running(c));
	ck_assert_ptr_null(child_last_exit(c));
	ck_assert_int_eq(child_start(c, mono()), 0);
	ck_assert(child_running(c));
	ck_assert_int_gt(child_pid(c), 0);
	ck_assert_int_ge(child_pidfd(c), 0);
	ck_assert_int_ge(child_out_fd(c), 0);
	ck_assert_int_eq(child_next_start(c), INT64_MAX);
	pid_t pid = child_pid(c);

	run_out(c, &ls, &ex);
	ck_assert_int_eq(ls.n, 8);
	ck_assert_str_eq(ls.l[0], "first");
	ck_assert_str_eq(ls.l[1], "");
	ck_assert_str_eq(ls.l[2], "  second line  ");
	/* 2 * MAX + 500: two full pieces and the rest. */
	for (int i = 3; i < 5; i++) {
		ck_assert_uint_eq(strlen(ls.l[i]), CHILD_LINE_MAX);
		ck_assert(strspn(ls.l[i], "x") == CHILD_LINE_MAX);
	}
	ck_assert_uint_eq(strlen(ls.l[5]), 500);
	ck_assert(strspn(ls.l[5], "x") == 500);
	/* Exactly MAX, from stderr: one line, no empty one after it. */
	ck_assert_str_eq(ls.l[6], exact);
	ck_assert_str_eq(ls.l[7], "last, no newline");

	ck_assert_int_eq(ex.pid, pid);
	ck_assert(!ex.signalled);
	ck_assert_int_eq(ex.status, 3);
	ck_assert_int_eq(ex.signo, 0);
	ck_assert_int_ge(ex.run_ns, 0);
	ck_assert_int_eq(ex.run_ns, ex.end_ns - ex.start_ns);
	ck_assert_ptr_nonnull(child_last_exit(c));
	ck_assert_int_eq(child_last_exit(c)->status, 3);
	child_exit_str(&ex, buf, sizeof(buf));
	expect_prefix(buf, "exited with status 3 after ");
	ck_assert_uint_eq(child_restarts(c), 0);
	/* Reaped: nothing more to reap, no zombie. */
	ck_assert_int_eq(child_reap(c, mono(), &ex), -ECHILD);
	ck_assert_int_eq(child_read_output(c, collect, &ls), 1);
	expect_no_children();
	child_destroy(c);
}
END_TEST

static void sigusr1(int sig)
{
	(void)sig;
}

/* A line written in two pieces, the first read on its own. */
START_TEST(partial_across_reads)
{
	struct lines ls = { .name = "phc2sys" };
	struct child_exit ex;
	struct child *c;
	struct pollfd p;

	/* The test process catches SIGUSR1 (exec resets that); the child's
	 * script must see its own trap run. */
	signal(SIGUSR1, sigusr1);
	c = sh("phc2sys", "trap 'printf \"def\\n\"; exit 0' USR1; printf abc; "
		  "while :; do sleep 0.05; done");
	ck_assert_int_eq(child_start(c, mono()), 0);
	p = (struct pollfd){ child_out_fd(c), POLLIN, 0 };
	ck_assert_int_eq(poll(&p, 1, (int)(DEADLINE_NS / MS)), 1);
	/* "abc" is read now, held back as a partial line. */
	ck_assert_int_eq(child_read_output(c, collect, &ls), 0);
	ck_assert_int_eq(ls.n, 0);
	ck_assert_int_eq(child_signal(c, SIGUSR1), 0);
	run_out(c, &ls, &ex);
	ck_assert_int_eq(ls.n, 1);
	ck_assert_str_eq(ls.l[0], "abcdef");
	ck_assert(!ex.signalled);
	ck_assert_int_eq(ex.status, 0);
	child_destroy(c);
}
END_TEST

/* Reap first, read after: the last words are not lost, and a stray
 * grandchild still holding the pipe does not keep the output open. */
START_TEST(output_after_reap)
{
	struct lines ls = { .name = "s" };
	struct child_exit ex;
	struct child *c;
	pid_t stray;
	int status;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	c = sh("s", "sleep 30 & echo $!; echo bye; printf 'no newline'; exit 7");
	ck_assert_int_eq(child_start(c, mono()), 0);
	wait_exited(c);
	ck_assert_int_eq(child_reap(c, mono(), &ex), 1);
	ck_assert_int_eq(ex.status, 7);
	ck_assert(!child_running(c));
	ck_assert_int_ge(child_out_fd(c), 0);
	/* One call: everything, then the end (not EOF: sleep holds it). */
	ck_assert_int_eq(child_read_output(c, collect, &ls), 1);
	ck_assert_int_eq(child_out_fd(c), -1);
	ck_assert_int_eq(ls.n, 3);
	stray = (pid_t)atoi(ls.l[0]);
	ck_assert_int_gt(stray, 1);
	ck_assert_str_eq(ls.l[1], "bye");
	ck_assert_str_eq(ls.l[2], "no newline");
	/* The stray was reparented to us (subreaper): clean it up. */
	ck_assert_int_eq(kill(stray, SIGKILL), 0);
	status = reap_pid(stray);
	ck_assert(WIFSIGNALED(status));
	expect_no_children();
	child_destroy(c);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}
END_TEST

START_TEST(exec_errors)
{
	const char *const missing[] = { "tapless-no-such-program", NULL };
	const char *const notexec[] = { "/etc/passwd", NULL };
	const char *const inpath[] = { "true", NULL };
	const char *const empty[] = { "", NULL };
	const char *const none[] = { NULL };
	struct lines ls = { .name = "x" };
	struct child_exit ex;
	struct child *c = (struct child *)1;

	ck_assert_int_eq(child_create(&c, "x", none), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(child_create(&c, "x", empty), -EINVAL);
	ck_assert_int_eq(child_create(&c, "x", NULL), -EINVAL);
	ck_assert_int_eq(child_create(&c, NULL, inpath), -EINVAL);

	c = make("x", missing);
	ck_assert_int_eq(child_start(c, 100 * S), -ENOENT);
	ck_assert(!child_running(c));
	ck_assert_int_eq(child_pid(c), 0);
	ck_assert_int_eq(child_pidfd(c), -1);
	ck_assert_int_eq(child_out_fd(c), -1);
	ck_assert_uint_eq(child_restarts(c), 0);
	ck_assert_ptr_null(child_last_exit(c));
	expect_no_children();
	/* Failed starts back off like quick exits: no retrying at once. */
	ck_assert_int_eq(child_next_start(c), 101 * S);
	ck_assert_int_eq(child_start(c, 101 * S), -ENOENT);
	ck_assert_int_eq(child_next_start(c), 103 * S);
	expect_no_children();
	/* Nothing running: every call says so and changes nothing. */
	ck_assert_int_eq(child_reap(c, mono(), &ex), -ECHILD);
	ck_assert_int_eq(child_signal(c, SIGTERM), -ESRCH);
	ck_assert_int_eq(child_stop(c, 100), 0);
	ck_assert_int_eq(child_read_output(c, collect, &ls), 1);
	ck_assert_int_eq(ls.n, 0);
	child_destroy(c);

	c = make("x", notexec);
	ck_assert_int_eq(child_start(c, mono()), -EACCES);
	expect_no_children();
	child_destroy(c);

	/* Found in PATH; a second start while it runs is refused. */
	c = make("x", inpath);
	ck_assert_int_eq(child_start(c, mono()), 0);
	ck_assert_int_eq(child_start(c, mono()), -EBUSY);
	run_out(c, &ls, &ex);
	ck_assert_int_eq(ex.status, 0);
	ck_assert_int_eq(ls.n, 0);
	expect_no_children();
	child_destroy(c);
	child_destroy(NULL);
}
END_TEST

/* Read /proc/PID/fd: which of 0..63 are open, as a bit mask; the target
 * of fd 0 and of fd 1. */
static uint64_t proc_fds(pid_t pid, char *fd0, char *fd1, size_t len)
{
	char dir[64], link[96];
	uint64_t set = 0;
	struct dirent *d;
	ssize_t n;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	ck_assert_ptr_nonnull(dp);
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		int fd = atoi(d->d_name);

		set |= fd < 64 ? 1ULL << fd : 1ULL << 63;
	}
	closedir(dp);
	snprintf(link, sizeof(link), "%s/0", dir);
	n = readlink(link, fd0, len - 1);
	fd0[n > 0 ? n : 0] = '\0';
	snprintf(link, sizeof(link), "%s/1", dir);
	n = readlink(link, fd1, len - 1);
	fd1[n > 0 ? n : 0] = '\0';
	return set;
}

/* The line "Key:\tvalue" of /proc/PID/status, value only. */
static void proc_status(pid_t pid, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	val[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, len, "%s", line + klen + 1);
			val[strcspn(val, "\n")] = '\0';
			break;
		}
	fclose(f);
	ck_assert_msg(val[0], "no %s in %s", key, path);
}

/* What the exec'd program starts with, whatever the supervisor had. */
START_TEST(child_setup)
{
	const char *const argv[] = { "sleep", "30", NULL };
	char fd0[128], fd1[128], pipe_name[128], val[64], link[64];
	int64_t deadline = mono() + DEADLINE_NS;
	sigset_t usr2, mask;
	struct child *c;
	struct stat st;
	uint64_t fds;
	int leak;
	pid_t pid;

	/* A descriptor without CLOEXEC, an ignored and a blocked signal. */
	leak = dup(STDIN_FILENO);
	ck_assert_int_ge(leak, 0);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &usr2, NULL), 0);

	c = make("sleep", argv);
	ck_assert_int_eq(child_start(c, mono()), 0);
	pid = child_pid(c);
	/* Our own mask is as it was. */
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, NULL, &mask), 0);
	ck_assert(sigismember(&mask, SIGUSR2));
	ck_assert(!sigismember(&mask, SIGTERM));

	ck_assert_int_eq(getsid(pid), pid);
	ck_assert_int_eq(getpgid(pid), pid);
	/* The dynamic loader may hold a library open for a moment: wait for
	 * the descriptors to settle on 0-2, which they never do if ours
	 * leaked. */
	while ((fds = proc_fds(pid, fd0, fd1, sizeof(fd0))) != 7) {
		ck_assert_msg(mono() < deadline, "child fds %#llx",
			      (unsigned long long)fds);
		usleep(10000);
	}
	ck_assert_str_eq(fd0, "/dev/null");
	ck_assert_int_eq(fstat(child_out_fd(c), &st), 0);
	snprintf(pipe_name, sizeof(pipe_name), "pipe:[%lu]",
		 (unsigned long)st.st_ino);
	ck_assert_str_eq(fd1, pipe_name);
	snprintf(link, sizeof(link), "/proc/%d/fd/2", (int)pid);
	ck_assert_int_gt(readlink(link, fd1, sizeof(fd1) - 1), 0);
	ck_assert_str_eq(fd1, pipe_name);
	ck_assert(fcntl(child_out_fd(c), F_GETFL) & O_NONBLOCK);
	ck_assert(fcntl(child_out_fd(c), F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(child_pidfd(c), F_GETFD) & FD_CLOEXEC);

	/* Signals 32 and 33 are glibc's own (thread cancellation, setxid):
	 * glibc lets no program change them, so they keep what the test
	 * inherited (make, for one, runs it with them ignored). Every other
	 * signal must be unblocked and at its default. */
	proc_status(pid, "SigBlk", val, sizeof(val));
	ck_assert_uint_eq(strtoull(val, NULL, 16) & ~GLIBC_SIGNALS, 0);
	proc_status(pid, "SigIgn", val, sizeof(val));
	ck_assert_uint_eq(strtoull(val, NULL, 16) & ~GLIBC_SIGNALS, 0);

	ck_assert_int_eq(child_stop(c, 10000), 0);
	ck_assert_int_eq(child_last_exit(c)->signo, SIGTERM);
	expect_no_children();
	child_destroy(c);
	close(leak);
}
END_TEST

/* A signal the test process ignores still kills the child: dispositions
 * were reset (dash keeps a signal ignored on entry ignored for good). */
START_TEST(killed_by_signal)
{
	struct lines ls = { .name = "k" };
	struct child_exit ex;
	struct child *c;
	char buf[128];

	signal(SIGUSR1, SIG_IGN);
	c = sh("k", "echo before; kill -USR1 $$; echo after");
	ck_assert_int_eq(child_start(c, mono()), 0);
	run_out(c, &ls, &ex);
	ck_assert_int_eq(ls.n, 1);
	ck_assert_str_eq(ls.l[0], "before");
	ck_assert(ex.signalled);
	ck_assert_int_eq(ex.signo, SIGUSR1);
	ck_assert_int_eq(ex.status, -1);
	child_exit_str(&ex, buf, sizeof(buf));
	expect_prefix(buf, "killed by signal 10 (User defined signal 1) after ");
	child_destroy(c);
}
END_TEST

START_TEST(stop_term)
{
	const char *const argv[] = { "sleep", "30", NULL };
	const struct child_exit *ex;
	struct child *c;
	int64_t t0;
	pid_t pid;

	c = make("sleep", argv);
	ck_assert_int_eq(child_start(c, mono()), 0);
	pid = child_pid(c);
	t0 = mono();
	ck_assert_int_eq(child_stop(c, 20000), 0);
	/* It obeyed SIGTERM: no waiting for the timeout. */
	ck_assert_int_lt(mono() - t0, 15 * S);
	ck_assert(!child_running(c));
	ck_assert_int_eq(child_pid(c), 0);
	ck_assert_int_eq(child_pidfd(c), -1);
	ex = child_last_exit(c);
	ck_assert_ptr_nonnull(ex);
	ck_assert_int_eq(ex->pid, pid);
	ck_assert(ex->signalled);
	ck_assert_int_eq(ex->signo, SIGTERM);
	expect_no_children();
	errno = 0;
	ck_assert_int_eq(kill(pid, 0), -1);	/* not even a zombie */
	ck_assert_int_eq(errno, ESRCH);
	/* Idempotent. */
	ck_assert_int_eq(child_stop(c, 20000), 0);
	ck_assert_int_eq(child_signal(c, SIGTERM), -ESRCH);
	/* Its output ended with it. */
	ck_assert_int_eq(child_read_output(c, NULL, NULL), 1);
	ck_assert_int_eq(child_out_fd(c), -1);
	child_destroy(c);
}
END_TEST

/* It ignores SIGTERM, and so does the helper it started: after the
 * timeout both get SIGKILL, the child is reaped, the helper dies too. */
START_TEST(stop_kill)
{
	struct lines ls = { .name = "stubborn" };
	const struct child_exit *ex;
	struct child *c;
	int64_t t0, took;
	pid_t helper;
	int status;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	c = sh("stubborn", "trap '' TERM; sleep 30 & echo $!; wait");
	ck_assert_int_eq(child_start(c, mono()), 0);
	/* The trap is set once the helper's pid is printed. */
	read_lines(c, &ls, 1);
	helper = (pid_t)atoi(ls.l[0]);
	ck_assert_int_gt(helper, 1);
	t0 = mono();
	ck_assert_int_eq(child_stop(c, 500), 0);
	took = mono() - t0;
	ck_assert_int_ge(took, 500 * MS);
	ck_assert_int_lt(took, 20 * S);
	ex = child_last_exit(c);
	ck_assert(ex->signalled);
	ck_assert_int_eq(ex->signo, SIGKILL);
	ck_assert(!child_running(c));
	/* The helper was reparented to us when sh died; it died of the
	 * process group's SIGKILL, not of old age. */
	status = reap_pid(helper);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGKILL);
	expect_no_children();
	child_destroy(c);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}
END_TEST

/* Start at fake time t, let it exit, reap it at t + run; the backoff the
 * module asks for must be want. Returns the next start time. */
static int64_t quick(struct child *c, int64_t t, int64_t run, int64_t want)
{
	struct child_exit ex;

	ck_assert_int_eq(child_start(c, t), 0);
	ck_assert_int_eq(child_next_start(c), INT64_MAX);
	wait_exited(c);
	ck_assert_int_eq(child_reap(c, t + run, &ex), 1);
	ck_assert_int_eq(ex.run_ns, run);
	ck_assert_int_eq(ex.start_ns, t);
	ck_assert_msg(child_next_start(c) - (t + run) == want,
		      "backoff %lld ns, want %lld",
		      (long long)(child_next_start(c) - (t + run)),
		      (long long)want);
	ck_assert_int_eq(child_read_output(c, NULL, NULL), 1);
	return child_next_start(c);
}

START_TEST(backoff)
{
	static const int64_t seq[] = { 4, 8, 16, 32, 60, 60, 60 };
	struct child *c;
	int64_t t = 1000 * S, before;

	/* Quick to exit unless told to sleep through the environment. */
	unsetenv("TL_CHILD_SLEEP");
	c = sh("sleeper", "exec sleep ${TL_CHILD_SLEEP:-0}");
	ck_assert_int_eq(child_next_start(c), 0);
	t = quick(c, t, S / 2, 1 * S);
	t = quick(c, t, S / 2, 2 * S);
	/* A stop is the supervisor's choice: the next start may come at
	 * once, and the streak of failures goes on where it was. */
	setenv("TL_CHILD_SLEEP", "30", 1);
	ck_assert_int_eq(child_start(c, t), 0);
	unsetenv("TL_CHILD_SLEEP");
	before = mono();
	ck_assert_int_eq(child_stop(c, 20000), 0);
	ck_assert_int_eq(child_last_exit(c)->signo, SIGTERM);
	ck_assert_int_ge(child_next_start(c), before);
	ck_assert_int_le(child_next_start(c), mono());
	ck_assert_int_eq(child_read_output(c, NULL, NULL), 1);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		t = quick(c, t, S / 2, seq[i] * S);
	/* A run of a minute starts afresh. */
	t = quick(c, t, CHILD_STABLE_NS, 1 * S);
	t = quick(c, t, 10 * S, 2 * S);
	/* Just short of a minute is still quick. */
	t = quick(c, t, CHILD_STABLE_NS - 1, 4 * S);
	t = quick(c, t, 3600 * S, 1 * S);
	/* 2 + 1 + 7 + 4 starts. */
	ck_assert_uint_eq(child_restarts(c), 13);
	expect_no_children();
	child_destroy(c);
}
END_TEST

/* The supervisor dies without a word (here: _exit in an intermediate
 * process); the kernel sends the child SIGTERM. */
START_TEST(pdeathsig)
{
	int p[2], status;
	pid_t mid, grand = 0;
	struct pollfd pf;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(pipe(p), 0);
	mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		const char *const argv[] = { "sleep", "30", NULL };
		struct child *c;
		pid_t pid = 0;

		close(p[0]);
		if (child_create(&c, "sleep", argv) == 0 &&
		    child_start(c, 0) == 0)
			pid = child_pid(c);
		if (write(p[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	pf = (struct pollfd){ p[0], POLLIN, 0 };
	ck_assert_int_eq(poll(&pf, 1, (int)(DEADLINE_NS / MS)), 1);
	ck_assert_int_eq(read(p[0], &grand, sizeof(grand)), sizeof(grand));
	close(p[0]);
	ck_assert_int_gt(grand, 0);
	status = reap_pid(mid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* Orphaned, it is ours to reap as subreaper. */
	status = reap_pid(grand);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGTERM);
	expect_no_children();
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}
END_TEST

/* Two at once, interleaved: each keeps its own lines, exit and backoff. */
START_TEST(two_children)
{
	struct lines la = { .name = "ptp4l" }, lb = { .name = "phc2sys" };
	struct child_exit ea, eb;
	struct child *a, *b;

	a = sh("ptp4l", "echo a1; printf a2; sleep 0.2; echo; exit 1");
	b = sh("phc2sys", "printf b1; echo b2; exit 2");
	ck_assert_int_eq(child_start(a, 0), 0);
	ck_assert_int_eq(child_start(b, 0), 0);
	ck_assert_int_ne(child_pid(a), child_pid(b));
	ck_assert_int_ne(child_out_fd(a), child_out_fd(b));
	run_out(b, &lb, &eb);
	ck_assert(child_running(a));	/* b's reap took nothing of a's */
	run_out(a, &la, &ea);
	ck_assert_int_eq(la.n, 2);
	ck_assert_str_eq(la.l[0], "a1");
	ck_assert_str_eq(la.l[1], "a2");
	ck_assert_int_eq(lb.n, 1);
	ck_assert_str_eq(lb.l[0], "b1b2");
	ck_assert_int_eq(ea.status, 1);
	ck_assert_int_eq(eb.status, 2);
	ck_assert_int_ne(ea.pid, eb.pid);
	ck_assert_int_eq(child_last_exit(a)->pid, ea.pid);
	ck_assert_int_eq(child_last_exit(b)->pid, eb.pid);
	expect_no_children();
	child_destroy(a);
	child_destroy(b);
}
END_TEST

/* destroy stops a running child. */
START_TEST(destroy_running)
{
	const char *const argv[] = { "sleep", "30", NULL };
	struct child *c = make("sleep", argv);
	pid_t pid;

	ck_assert_int_eq(child_start(c, mono()), 0);
	pid = child_pid(c);
	child_destroy(c);
	expect_no_children();
	errno = 0;
	ck_assert_int_eq(kill(pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
}
END_TEST

START_TEST(exit_str)
{
	struct child_exit ex = { .pid = 10, .status = 1, .run_ns = 3200 * MS };
	char buf[128], small[8];

	ck_assert_str_eq(child_exit_str(&ex, buf, sizeof(buf)),
			 "exited with status 1 after 3.2 s");
	ex = (struct child_exit){ .signalled = true, .signo = 9, .status = -1,
				  .run_ns = 12 * S };
	ck_assert_str_eq(child_exit_str(&ex, buf, sizeof(buf)),
			 "killed by signal 9 (Killed) after 12.0 s");
	ex = (struct child_exit){ .signalled = true, .signo = SIGABRT,
				  .core_dumped = true, .status = -1,
				  .run_ns = 49 * MS };
	ck_assert_str_eq(child_exit_str(&ex, buf, sizeof(buf)),
			 "killed by signal 6 (Aborted, core dumped) after 0.0 s");
	ex = (struct child_exit){ .status = -1, .run_ns = -5 };
	ck_assert_str_eq(child_exit_str(&ex, buf, sizeof(buf)),
			 "exited with unknown status after 0.0 s");
	ex = (struct child_exit){ .status = 0, .run_ns = 3600 * S + 55 * MS };
	ck_assert_str_eq(child_exit_str(&ex, buf, sizeof(buf)),
			 "exited with status 0 after 3600.1 s");
	ck_assert_str_eq(child_exit_str(&ex, small, sizeof(small)), "exited ");
	ck_assert_ptr_eq(child_exit_str(&ex, small, 0), small);
}
END_TEST

static Suite *child_suite(void)
{
	Suite *s = suite_create("child");
	TCase *tc = tcase_create("child");

	/* Each test's waits are bounded by DEADLINE_NS; Check's own 4 s
	 * default would be the flaky part on a loaded machine. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, output_lines);
	tcase_add_test(tc, partial_across_reads);
	tcase_add_test(tc, output_after_reap);
	tcase_add_test(tc, exec_errors);
	tcase_add_test(tc, child_setup);
	tcase_add_test(tc, killed_by_signal);
	tcase_add_test(tc, stop_term);
	tcase_add_test(tc, stop_kill);
	tcase_add_test(tc, backoff);
	tcase_add_test(tc, pdeathsig);
	tcase_add_test(tc, two_children);
	tcase_add_test(tc, destroy_running);
	tcase_add_test(tc, exit_str);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(child_suite)
