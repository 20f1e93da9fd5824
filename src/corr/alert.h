/* alert.h — alert rules for the live correlator (tapless correlate
 * --follow --alert RULE): a threshold on one statistic of one series,
 * checked once per interval, with hysteresis, and a command run on each
 * change, so that a latency going bad is told without another tool.
 *
 * A rule is SUBJECT.STAT OP NUMBER [UNIT]:
 *
 *   tick_to_trade.p99>50us      algo->venue.p99.9 >= 2.5ms
 *   switch:sw1.max > 800        host:venue.age>2s     algo->venue.unmatched>0
 *
 * SUBJECT names a series as the caller does (a hop "algo->venue", a
 * transaction kind "tick_to_trade" or "tick_to_trade@algo", "switch:sw1",
 * "host:venue"): letters, digits and _ . : @ / - >. This module does not
 * know which subjects exist; it hands them back to the caller's value
 * function. STAT is one of alert_stat_name()'s names. OP is >, >=, < or <=.
 * NUMBER is a non-negative decimal ("50", "2.5"; no sign, no exponent, at
 * most 15 digits). UNIT is ns, us, ms or s after a time statistic (min to
 * max, mean, bound, age; none means ns), and must be absent after a count
 * (count, out_of_sync, unmatched, holdover). Spaces or tabs may surround the rule
 * and the operator, and precede the unit. Because subjects may hold '.'
 * and '>' (and "p99.9" a '.'), the operator is the last '<' or '>' of the
 * rule that is not the '>' of an arrow "->", and the statistic the name
 * that ends the text before it, after a '.'.
 *
 * Hysteresis: a rule fires once its value has been in breach for `for_n`
 * intervals in a row, and clears once it has been out of breach for
 * `clear_n` intervals in a row; only these two changes are reported, so a
 * value flapping across the threshold does not repeat itself. An interval
 * in which the caller has no value for the rule (the value function
 * returns false, or gives NaN: no samples of that series in the interval)
 * counts as neither: it neither advances nor resets either streak, so
 * "in a row" means among the intervals that had a value. A quiet series
 * therefore neither fires nor clears: its last state stands.
 *
 * Commands: alert_exec() runs the caller's shell command for a change with
 * the rule and the value in its environment, never waiting for it; at most
 * ALERT_EXEC_MAX run at once, and a change meeting that limit is skipped
 * and counted, never queued.
 *
 * The library never prints: errors come back as -errno with a message in
 * the caller's buffer. No global state: every set is independent.
 */
#ifndef TAPLESS_ALERT_H
#define TAPLESS_ALERT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>	/* pid_t */

struct alert_set;

/* Room for any message of alert_add(): it quotes the rule, cut to 64
 * characters, and lists the statistics. */
#define ALERT_ERRBUF 512
/* Longest rule accepted, in characters: a rule is typed on a command line,
 * and the normalised text becomes a metric's label value. */
#define ALERT_TEXT_MAX 256

#define ALERT_FOR_DEFAULT 1
#define ALERT_CLEAR_DEFAULT 3

/* Commands running at once, at most. Enough for a burst of rules changing
 * in the same interval (a host going out of sync breaks every hop through
 * it); few enough that a command that hangs (a notifier without a timeout)
 * cannot pile up a process per change for as long as the correlator runs. */
#define ALERT_EXEC_MAX 8

/* The statistics a rule can test, as the live correlator computes them per
 * series and interval. Time statistics are in ns. */
enum alert_stat {
	ALERT_STAT_COUNT,	/* samples */
	ALERT_STAT_MIN,
	ALERT_STAT_P50,
	ALERT_STAT_P90,
	ALERT_STAT_P99,
	ALERT_STAT_P999,	/* "p99.9" */
	ALERT_STAT_MAX,
	ALERT_STAT_MEAN,
	ALERT_STAT_BOUND,	/* the sync error bound */
	ALERT_STAT_OUT_OF_SYNC,	/* samples taken while out of sync */
	ALERT_STAT_UNMATCHED,	/* messages seen at one end only */
	ALERT_STAT_AGE,		/* how old a host's newest data is */
	ALERT_STAT_HOLDOVER,	/* samples kept with an end in holdover */
	ALERT_NSTATS
};

/* Its name in a rule ("p99.9", "out_of_sync"), or NULL out of range. */
const char *alert_stat_name(enum alert_stat st);
/* Whether it is a time (ns, takes a unit) rather than a count. */
bool alert_stat_is_time(enum alert_stat st);

/* An empty set whose rules fire after for_n intervals in breach and clear
 * after clear_n intervals out of it (ALERT_FOR_DEFAULT and
 * ALERT_CLEAR_DEFAULT are the defaults of the command line). Returns 0, or
 * -EINVAL when either is 0. */
int alert_set_create(struct alert_set **out, unsigned for_n, unsigned clear_n);
/* Free it. Commands still running are neither waited for nor killed: reap
 * them first (alert_reap() until it returns 0) to have their exits. NULL
 * is ignored. */
void alert_set_destroy(struct alert_set *s);

/* Parse text and add it as the next rule (index alert_count() - 1), not
 * firing. Returns 0; -EINVAL for a rule that does not parse, with err as
 * "'RULE', character N: why" (N counts from 1 in text as given); -EEXIST,
 * with err, for a rule whose normalised text another rule has already
 * (their metrics would be one series). err may be NULL. */
int alert_add(struct alert_set *s, const char *text, char err[ALERT_ERRBUF]);

unsigned alert_count(const struct alert_set *s);
/* The rule as written back: no spaces, the number without redundant zeros,
 * the unit always given for a time ("tick_to_trade.p99>50us",
 * "x.max>=800ns", "x.unmatched>0"): rules written apart only in spaces
 * and zeros have the same text. It holds only characters of the rule syntax: nothing a metric
 * label value must escape (no '"', '\\' or newline). The getters take
 * i < alert_count(); out of range they give NULL, ALERT_NSTATS, NaN, false
 * or 0. */
const char *alert_text(const struct alert_set *s, unsigned i);
const char *alert_subject(const struct alert_set *s, unsigned i);
enum alert_stat alert_stat_of(const struct alert_set *s, unsigned i);
/* The threshold, in ns for a time statistic. */
double alert_threshold(const struct alert_set *s, unsigned i);
bool alert_firing(const struct alert_set *s, unsigned i);
/* Changes (fired or cleared) since the rule was added. */
uint64_t alert_transitions(const struct alert_set *s, unsigned i);
/* Intervals in which the rule had a value: still 0 after a while means a
 * subject that never occurs (a typo?), which the caller may warn about. */
uint64_t alert_intervals(const struct alert_set *s, unsigned i);

/* The caller's value of subject's statistic st for the interval being
 * evaluated: true with *value set (ns for a time statistic, else the
 * count), or false when the series has no value in this interval. */
typedef bool (*alert_value_fn)(void *arg, const char *subject,
			       enum alert_stat st, double *value);

/* One change of one rule. */
struct alert_event {
	unsigned rule;		/* its index */
	bool firing;		/* fired; false: cleared */
	double value;		/* the value of the interval that decided */
	double threshold;	/* alert_threshold() */
	int64_t time_ns;	/* end of that interval, ns since 1970 */
};

typedef void (*alert_event_fn)(void *arg, const struct alert_event *ev);

/* Evaluate every rule for the interval ending at interval_end_ns: ask
 * val() once per rule, advance the streaks, and call ev() (may be NULL)
 * for each rule that fires or clears, in rule order. ev may call
 * alert_exec() and the getters, but not alert_add(). */
void alert_eval(struct alert_set *s, int64_t interval_end_ns,
		alert_value_fn val, void *varg, alert_event_fn ev, void *earg);

/* Start /bin/sh -c cmd for the change ev of a rule of s, without waiting
 * for it, and count it as running until alert_reap() reaps it. It runs
 * with stdin from /dev/null, stdout and stderr the caller's, descriptors
 * marked close-on-exec closed, no signal blocked or ignored (but glibc's
 * two internal ones, which posix_spawn() ignores itself), and the
 * caller's environment plus (replacing any of these names already there):
 *
 *   TAPLESS_ALERT_RULE       alert_text()
 *   TAPLESS_ALERT_SUBJECT    alert_subject()
 *   TAPLESS_ALERT_STAT       alert_stat_name()
 *   TAPLESS_ALERT_STATE      firing or cleared
 *   TAPLESS_ALERT_VALUE      ev->value (ns for a time), shortest exact form
 *   TAPLESS_ALERT_THRESHOLD  ev->threshold, likewise
 *   TAPLESS_ALERT_TIME       ev->time_ns, an integer
 *
 * Returns 0 with *pid set (pid may be NULL); -EBUSY when ALERT_EXEC_MAX
 * commands are running (nothing started; counted in alert_exec_skipped());
 * -EINVAL for a rule index out of range or an empty cmd; -ENOMEM; or the
 * -errno of posix_spawn(). */
int alert_exec(struct alert_set *s, const char *cmd,
	       const struct alert_event *ev, pid_t *pid);

/* How one command ended: wstatus as waitpid() gives it (WIFEXITED()...). */
typedef void (*alert_exit_fn)(void *arg, unsigned rule, pid_t pid,
			      int wstatus);

/* Reap the commands of s that have ended, never blocking, and call ex()
 * (may be NULL) for each. Only s's own children are waited for, by pid:
 * other children of the process (ptp/child.h's) keep their exit statuses.
 * Returns how many of s's commands are still running. Call it once per
 * interval, before alert_eval(), to make room. A child already reaped by
 * someone else (SIGCHLD ignored, waitpid(-1)) is dropped with wstatus -1,
 * which the W*() macros do not decode: test for it first. */
unsigned alert_reap(struct alert_set *s, alert_exit_fn ex, void *arg);

/* Changes whose command was skipped because ALERT_EXEC_MAX were running. */
uint64_t alert_exec_skipped(const struct alert_set *s);

#endif
