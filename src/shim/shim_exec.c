/* shim_exec.c — exec(): a new program replaces this one without running
 * its destructors, so what this image owes is settled first: its
 * sockets' queued stamps read and handed over, the queue to capd written
 * out (briefly), its summary logged. The environment carries the
 * library into the new program, which adopts the stamped sockets it
 * inherits (shim_classify()). glibc's exec functions call execve inside
 * the library, out of our reach: each is wrapped. */
#include "shim/shim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#define ARGS_MAX 4096		/* execl*: arguments taken */

static void before_exec(void)
{
	int e = errno;

	if (shim_conf.on && !shim_in_vfork_child()) {
		/* A child that forked to exec (a shell, a spawner) sent
		 * nothing on the sockets it shares with its parent: their
		 * queues are the parent's to read, and there is nothing of
		 * its own to write to capd or wait for. */
		shim_stats_sum();
		if (atomic_load(&shim_stats.sends))
			shim_settle_all(" (before exec)");
	}
	errno = e;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

#define NEXT(type, name) ((type)shim_real_next(name))

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn f = NEXT(execve_fn, "execve");

	before_exec();
	return f(path, argv, envp);
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	execv_fn f = NEXT(execv_fn, "execv");

	before_exec();
	return f(path, argv);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	execv_fn f = NEXT(execv_fn, "execvp");

	before_exec();
	return f(file, argv);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[],
			char *const envp[])
{
	execve_fn f = NEXT(execve_fn, "execvpe");

	before_exec();
	return f(file, argv, envp);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn f = NEXT(fexecve_fn, "fexecve");

	before_exec();
	return f(fd, argv, envp);
}

/* execl, execlp, execle: their arguments gathered, then the v forms. */
static int gather(char **argv, const char *arg0, va_list ap)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (argv[n - 1]) {
		if (n == ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = va_arg(ap, char *);
	}
	return n;
}

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[ARGS_MAX];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = gather(argv, arg, ap);
	va_end(ap);
	return n < 0 ? -1 : execv(path, argv);
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[ARGS_MAX];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = gather(argv, arg, ap);
	va_end(ap);
	return n < 0 ? -1 : execvp(file, argv);
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[ARGS_MAX], **envp;
	va_list ap;
	int n;

	va_start(ap, arg);
	n = gather(argv, arg, ap);
	envp = n < 0 ? NULL : va_arg(ap, char **);
	va_end(ap);
	return n < 0 ? -1 : execve(path, argv, envp);
}
