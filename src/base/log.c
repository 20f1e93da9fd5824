/* log.c — see log.h. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int log_level = LOG_NOTICE;
static bool log_syslog;
static const char *log_ident = "tapless";

static const char *const log_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

void log_init(const char *ident, bool use_syslog, int level)
{
	log_ident = ident;
	log_syslog = use_syslog;
	log_level = level;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

int log_level_parse(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*s && !*end)
		return n >= 0 && n <= LOG_DEBUG ? (int)n : -1;
	for (int i = 0; i <= LOG_DEBUG; i++)
		if (!strcmp(s, log_names[i]))
			return i;
	if (!strcmp(s, "error"))
		return LOG_ERR;
	if (!strcmp(s, "warn"))
		return LOG_WARNING;
	return -1;
}

void log_write(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		/* One fprintf per line keeps lines whole when threads log. */
		char line[1024];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "%s: %s\n", log_ident, line);
	}
	va_end(ap);
}

bool log_rl_allow(struct log_rl *rl)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - rl->window_start >= LOG_RL_INTERVAL_S) {
		if (rl->suppressed)
			log_write(LOG_NOTICE, "%u similar messages suppressed",
				  rl->suppressed);
		rl->window_start = now.tv_sec;
		rl->count = 0;
		rl->suppressed = 0;
	}
	if (rl->count < LOG_RL_BURST) {
		rl->count++;
		return true;
	}
	rl->suppressed++;
	return false;
}
