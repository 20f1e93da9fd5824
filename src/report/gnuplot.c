/* gnuplot.c — running gnuplot on a script (gnuplot.h).
 *
 * By fork and exec with no shell, so paths with spaces or quotes stay
 * paths; from the output directory, so that the scripts left behind name
 * their data relatively and rerun as they are. Its stderr is collected for
 * the caller to show.
 */
#include "report/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/xalloc.h"

int gnuplot_run(const char *dir, const char *script,
		char msg[GNUPLOT_MSGBUF])
{
	int errp[2], execp[2], status, why[2] = { 0, 0 };	/* stage, errno */
	const size_t len = GNUPLOT_MSGBUF;
	size_t got = 0;
	pid_t pid;
	ssize_t n;
	char buf[512];

	*msg = 0;
	if (pipe2(errp, O_CLOEXEC))
		return -errno;
	if (pipe2(execp, O_CLOEXEC)) {
		int e = -errno;

		close(errp[0]);
		close(errp[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(errp[0]);
		close(errp[1]);
		close(execp[0]);
		close(execp[1]);
		return e;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);
		char *argv[] = { (char *)"gnuplot", (char *)script, NULL };

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		dup2(errp[1], STDERR_FILENO);
		if (chdir(dir) == 0) {
			why[0] = 1;
			execvp("gnuplot", argv);
		}
		/* Tell the parent why through the close-on-exec pipe, which
		 * an exec that worked would have closed with no data. */
		why[1] = errno;
		if (write(execp[1], why, sizeof(why)) < 0)
			_exit(126);
		_exit(127);
	}
	close(errp[1]);
	close(execp[1]);
	/* Read all of stderr (gnuplot blocks if the pipe fills), keep the
	 * start: the first error is the one that matters. */
	while ((n = read(errp[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (got + 1 < len) {
			size_t take = (size_t)n < len - 1 - got ? (size_t)n : len - 1 - got;

			memcpy(msg + got, buf, take);
			got += take;
			msg[got] = 0;
		}
	}
	close(errp[0]);
	n = read(execp[0], why, sizeof(why));
	close(execp[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	while (got && (msg[got - 1] == '\n' || msg[got - 1] == '\r'))
		msg[--got] = 0;
	if (n == (ssize_t)sizeof(why)) {
		if (why[0] == 1)	/* exec: ENOENT is "no gnuplot" */
			return why[1] ? -why[1] : -ECHILD;
		return errbuf_set(msg, GNUPLOT_MSGBUF, -ECHILD,
				  "cannot enter %.1024s: %s", dir, strerror(why[1]));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (!got) {
			if (WIFSIGNALED(status))
				errbuf_set(msg, GNUPLOT_MSGBUF, -ECHILD,
					   "gnuplot killed by signal %d",
					   WTERMSIG(status));
			else
				errbuf_set(msg, GNUPLOT_MSGBUF, -ECHILD,
					   "gnuplot exit status %d",
					   WEXITSTATUS(status));
		}
		return -ECHILD;
	}
	return 0;
}

void gnuplot_fill(FILE *out, const char *text, const struct gnuplot_sub *subs,
		  size_t n)
{
	for (const char *p = text; *p;) {
		const char *at = strchr(p, '@');
		size_t k;

		if (!at) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(at - p), out);
		for (k = 0; k < n; k++) {
			size_t kl = strlen(subs[k].key);

			if (!strncmp(at + 1, subs[k].key, kl) && at[1 + kl] == '@') {
				fputs(subs[k].val, out);
				p = at + kl + 2;
				break;
			}
		}
		if (k == n) {
			fputc('@', out);
			p = at + 1;
		}
	}
}

char *gnuplot_quote(const char *s)
{
	char *q = xmalloc(2 * strlen(s) + 1), *o = q;

	for (; *s; s++) {
		if (*s == '\'')
			*o++ = '\'';
		*o++ = *s == '\n' ? ' ' : *s;
	}
	*o = 0;
	return q;
}

char *gnuplot_dquote_wrap(const char *s, size_t width)
{
	size_t n = strlen(s);
	char *q = xmalloc(4 * n + 3), *o = q;
	size_t col = 0;

	*o++ = '"';
	while (*s) {
		const char *w = s;
		size_t chars = 0;

		/* The next word and its width in characters. */
		while (*w && *w != ' ') {
			if (((unsigned char)*w & 0xc0) != 0x80)
				chars++;
			w++;
		}
		if (col && col + 1 + chars > width) {
			*o++ = '\\';
			*o++ = 'n';
			col = 0;
		} else if (col) {
			*o++ = ' ';
			col++;
		}
		for (; s < w; s++) {
			if (*s == '"' || *s == '\\')
				*o++ = '\\';
			*o++ = *s == '\n' ? ' ' : *s;
		}
		col += chars;
		while (*s == ' ')
			s++;
	}
	*o++ = '"';
	*o = 0;
	return q;
}
