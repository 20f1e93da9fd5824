/* log.h — the one logging module.
 *
 * Levels are syslog's. The sink (stderr or syslog) is chosen once, at start-up,
 * by log_init(). The macros test the level before evaluating their arguments, so
 * a debug line on a per-packet path costs one compare when debug is off; the
 * _rl variants also rate-limit per call site (at most LOG_RL_BURST lines per
 * LOG_RL_INTERVAL_S seconds, then one line saying how many were suppressed).
 */
#ifndef TAPLESS_LOG_H
#define TAPLESS_LOG_H

#include <stdbool.h>
#include <syslog.h>

#define LOG_RL_BURST 10
#define LOG_RL_INTERVAL_S 5

/* Per-call-site state of a rate-limited log line. */
struct log_rl {
	long window_start;	/* CLOCK_MONOTONIC seconds */
	unsigned count;		/* lines printed in this window */
	unsigned suppressed;	/* lines dropped in this window */
};

/* Current level; lines above it are not evaluated. Read by the macros only. */
extern int log_level;

/* Choose the sink and level once. ident names the program in every line.
 * With use_syslog the lines go to syslog (LOG_DAEMON), else to stderr. */
void log_init(const char *ident, bool use_syslog, int level);

/* Parse a level name ("err", "warning", "notice", "info", "debug") or a
 * number 0-7. Returns the level or -1. */
int log_level_parse(const char *s);

void log_write(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Returns true when a rate-limited line may be printed now. */
bool log_rl_allow(struct log_rl *rl);

#define log_at(lvl, ...) \
	do { if ((lvl) <= log_level) log_write((lvl), __VA_ARGS__); } while (0)
#define log_at_rl(lvl, ...) \
	do { static struct log_rl rl_; \
	     if ((lvl) <= log_level && log_rl_allow(&rl_)) \
		     log_write((lvl), __VA_ARGS__); } while (0)

#define log_err(...)	log_at(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_at(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_at(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_at(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_at(LOG_DEBUG, __VA_ARGS__)
#define log_warn_rl(...)  log_at_rl(LOG_WARNING, __VA_ARGS__)
#define log_debug_rl(...) log_at_rl(LOG_DEBUG, __VA_ARGS__)

#endif
