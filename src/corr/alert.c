/* alert.c — see alert.h. */
#include "corr/alert.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/xalloc.h"

extern char **environ;

enum alert_op { ALERT_GT, ALERT_GE, ALERT_LT, ALERT_LE };

static const char *const alert_op_text[] = { ">", ">=", "<", "<=" };

static const char *const alert_stat_names[ALERT_NSTATS] = {
	[ALERT_STAT_COUNT] = "count",
	[ALERT_STAT_MIN] = "min",
	[ALERT_STAT_P50] = "p50",
	[ALERT_STAT_P90] = "p90",
	[ALERT_STAT_P99] = "p99",
	[ALERT_STAT_P999] = "p99.9",
	[ALERT_STAT_MAX] = "max",
	[ALERT_STAT_MEAN] = "mean",
	[ALERT_STAT_BOUND] = "bound",
	[ALERT_STAT_OUT_OF_SYNC] = "out_of_sync",
	[ALERT_STAT_UNMATCHED] = "unmatched",
	[ALERT_STAT_AGE] = "age",
	[ALERT_STAT_HOLDOVER] = "holdover",
};

#define ALERT_STAT_LIST "count, min, p50, p90, p99, p99.9, max, mean, " \
	"bound, out_of_sync, unmatched, age, holdover"

/* Units of a time threshold, as powers of ten of a nanosecond. */
static const struct {
	const char *name;
	int exp10;
} alert_units[] = {
	{ "ns", 0 }, { "us", 3 }, { "ms", 6 }, { "s", 9 },
};
#define ALERT_NUNITS (sizeof(alert_units) / sizeof(alert_units[0]))

/* Digits of a threshold, at most: every such integer is exact in a double
 * (< 2^53), so the threshold is one correctly rounded operation away from
 * the text, whatever the locale. */
#define ALERT_DIGITS 15

static const double alert_pow10[ALERT_DIGITS + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15,
};

/* How much of a rule an error message quotes. */
#define ALERT_QUOTE 64

struct alert_rule {
	char text[ALERT_TEXT_MAX + 8];	/* normalised: + "ns" */
	char subject[ALERT_TEXT_MAX + 1];
	enum alert_stat stat;
	enum alert_op op;
	double threshold;	/* ns for a time */
	unsigned breach;	/* intervals in breach in a row, up to for_n */
	unsigned calm;		/* intervals not in breach, up to clear_n */
	bool firing;
	uint64_t transitions;
	uint64_t intervals;
};

/* A command started by alert_exec(), not yet reaped. */
struct alert_run {
	pid_t pid;
	unsigned rule;
};

struct alert_set {
	unsigned for_n, clear_n;
	struct alert_rule *rule;
	unsigned n, cap;
	struct alert_run run[ALERT_EXEC_MAX];
	unsigned nrun;
	uint64_t skipped;
};

const char *alert_stat_name(enum alert_stat st)
{
	return (unsigned)st < ALERT_NSTATS ? alert_stat_names[st] : NULL;
}

bool alert_stat_is_time(enum alert_stat st)
{
	switch (st) {
	case ALERT_STAT_MIN:
	case ALERT_STAT_P50:
	case ALERT_STAT_P90:
	case ALERT_STAT_P99:
	case ALERT_STAT_P999:
	case ALERT_STAT_MAX:
	case ALERT_STAT_MEAN:
	case ALERT_STAT_BOUND:
	case ALERT_STAT_AGE:
		return true;
	default:
		return false;
	}
}

int alert_set_create(struct alert_set **out, unsigned for_n, unsigned clear_n)
{
	struct alert_set *s;

	*out = NULL;
	if (!for_n || !clear_n)
		return -EINVAL;
	s = xcalloc(1, sizeof(*s));
	s->for_n = for_n;
	s->clear_n = clear_n;
	*out = s;
	return 0;
}

void alert_set_destroy(struct alert_set *s)
{
	if (!s)
		return;
	free(s->rule);
	free(s);
}

/* ---- parsing ---- */

/* s[0..n) fit for a one-line message: bytes that are not printable ASCII
 * become '?', and more than max characters end in "...". */
static void alert_quote(char *buf, size_t len, const char *s, size_t n,
			size_t max)
{
	size_t i, k = 0;

	for (i = 0; i < n && i < max && k + 1 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < n && k + 4 <= len) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = 0;
}

/* The error of a rule that does not parse: the rule, the position of the
 * fault (counting from 1) and why. Returns -EINVAL. */
__attribute__((format(printf, 4, 5)))
static int alert_bad(char err[ALERT_ERRBUF], const char *text, size_t pos,
		     const char *fmt, ...)
{
	char q[ALERT_QUOTE + 4], why[ALERT_ERRBUF];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	alert_quote(q, sizeof(q), text, strlen(text), ALERT_QUOTE);
	return errbuf_set(err, ALERT_ERRBUF, -EINVAL, "'%s', character %zu: %s",
			  q, pos + 1, why);
}

static bool alert_subject_char(char c)
{
	return isalnum((unsigned char)c) || (c && strchr("_.:@/->", c));
}

static bool alert_space(char c)
{
	return c == ' ' || c == '\t';
}

/* The operator: the last '<' or '>' that is not the '>' of an arrow "->"
 * (nothing after the operator may hold either). Returns its offset, or -1. */
static long alert_find_op(const char *t, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (t[i] == '<' || (t[i] == '>' && !(i && t[i - 1] == '-')))
			return (long)i;
	return -1;
}

/* The statistic that ends t[lo..hi) after a '.', or ALERT_NSTATS. At
 * most one can: the one name holding a '.', "p99.9", ends in "9", which is
 * no statistic, so "x.p99.9" is x's p99.9 and nothing else. */
static enum alert_stat alert_find_stat(const char *t, size_t lo, size_t hi)
{
	for (unsigned k = 0; k < ALERT_NSTATS; k++) {
		size_t n = strlen(alert_stat_names[k]);

		if (hi - lo > n && t[hi - n - 1] == '.' &&
		    !memcmp(t + hi - n, alert_stat_names[k], n))
			return (enum alert_stat)k;
	}
	return ALERT_NSTATS;
}

/* The unit t[0..n), or -1. */
static int alert_find_unit(const char *t, size_t n)
{
	for (unsigned k = 0; k < ALERT_NUNITS; k++)
		if (strlen(alert_units[k].name) == n &&
		    !memcmp(alert_units[k].name, t, n))
			return (int)k;
	return -1;
}

/* Why t[lo..hi), which no statistic ends, is not SUBJECT.STAT. */
static int alert_bad_stat(char err[ALERT_ERRBUF], const char *t, size_t lo,
			  size_t hi)
{
	char q[ALERT_QUOTE + 4];
	size_t j, dot = hi;

	/* The statistic begins after the last '.' followed by a letter
	 * ("x.p99.8": "p99.8"), else after the last '.'. */
	for (j = hi; j-- > lo;) {
		if (t[j] != '.')
			continue;
		if (dot == hi)
			dot = j;
		if (j + 1 < hi && isalpha((unsigned char)t[j + 1])) {
			dot = j;
			break;
		}
	}
	if (dot == hi)
		return alert_bad(err, t, hi, "no statistic before the operator: "
				 "write SUBJECT.STAT, e.g. tick_to_trade.p99");
	if (dot + 1 == hi)
		return alert_bad(err, t, hi, "no statistic after '.' (%s)",
				 ALERT_STAT_LIST);
	alert_quote(q, sizeof(q), t + dot + 1, hi - dot - 1, 24);
	return alert_bad(err, t, dot + 1, "unknown statistic '%s' (%s)", q,
			 ALERT_STAT_LIST);
}

/* Parse text into r: everything but the state. */
static int alert_parse(const char *t, struct alert_rule *r,
		       char err[ALERT_ERRBUF])
{
	size_t len = strlen(t), lo, hi, p, q, i;
	char ip[ALERT_TEXT_MAX + 1], fp[ALERT_TEXT_MAX + 1], uq[32];
	size_t ni = 0, nf = 0, sn, un;
	int exp10 = 0, unit;
	uint64_t m = 0;
	long op;

	if (len > ALERT_TEXT_MAX)
		return alert_bad(err, t, ALERT_TEXT_MAX,
				 "longer than %d characters", ALERT_TEXT_MAX);
	for (lo = 0; alert_space(t[lo]); lo++)
		;
	if (lo == len)
		return alert_bad(err, t, 0, "an empty rule: write SUBJECT.STAT "
				 "OP NUMBER[UNIT], e.g. tick_to_trade.p99>50us");

	op = alert_find_op(t, len);
	if (op < 0) {
		for (p = lo; p < len && alert_subject_char(t[p]); p++)
			;
		return alert_bad(err, t, p, "no operator (>, >=, < or <=)");
	}
	if (op > 0 && strchr("=!<>", t[op - 1]))
		return alert_bad(err, t, (size_t)op - 1,
				 "'%c%c' is not an operator (>, >=, < or <=)",
				 t[op - 1], t[op]);
	for (hi = (size_t)op; hi > lo && alert_space(t[hi - 1]); hi--)
		;
	if (hi == lo)
		return alert_bad(err, t, (size_t)op,
				 "no SUBJECT.STAT before the operator");

	/* SUBJECT.STAT */
	r->stat = alert_find_stat(t, lo, hi);
	if (r->stat == ALERT_NSTATS)
		return alert_bad_stat(err, t, lo, hi);
	sn = hi - lo - strlen(alert_stat_names[r->stat]) - 1;
	if (!sn)
		return alert_bad(err, t, lo, "an empty subject before '.%s'",
				 alert_stat_names[r->stat]);
	for (i = lo; i < lo + sn; i++)
		if (!alert_subject_char(t[i])) {
			unsigned char c = (unsigned char)t[i];

			if (alert_space(t[i]))
				return alert_bad(err, t, i, "a space in the "
						 "subject");
			return alert_bad(err, t, i, c > 0x20 && c < 0x7f ?
					 "'%c' in the subject (letters, digits "
					 "and _ . : @ / - > only)" :
					 "byte 0x%02x in the subject (letters, "
					 "digits and _ . : @ / - > only)", c);
		}
	if (t[lo] == '.' || t[lo + sn - 1] == '.')
		return alert_bad(err, t, t[lo] == '.' ? lo : lo + sn - 1,
				 "a subject cannot begin or end with '.'");
	memcpy(r->subject, t + lo, sn);
	r->subject[sn] = 0;

	/* OP */
	p = (size_t)op + 1;
	if (t[op] == '>')
		r->op = t[p] == '=' ? ALERT_GE : ALERT_GT;
	else
		r->op = t[p] == '=' ? ALERT_LE : ALERT_LT;
	if (t[p] == '=')
		p++;

	/* NUMBER: digits, and a fraction. Leading zeros of the integer part
	 * and trailing zeros of the fraction are left out of the text. */
	while (alert_space(t[p]))
		p++;
	if (!isdigit((unsigned char)t[p]))
		return alert_bad(err, t, p, t[p] ? "expected a non-negative "
				 "number (50, 2.5)" : "no number after '%s'",
				 alert_op_text[r->op]);
	for (q = p; isdigit((unsigned char)t[q]); q++)
		if (ni || t[q] != '0')
			ip[ni++] = t[q];
	if (t[q] == '.') {
		if (!isdigit((unsigned char)t[++q]))
			return alert_bad(err, t, q, "no digit after '.'");
		for (; isdigit((unsigned char)t[q]); q++)
			fp[nf++] = t[q];
		while (nf && fp[nf - 1] == '0')
			nf--;
	}
	if (ni + nf > ALERT_DIGITS)
		return alert_bad(err, t, p, "more than %d digits in the number",
				 ALERT_DIGITS);
	for (i = 0; i < ni; i++)
		m = m * 10 + (uint64_t)(ip[i] - '0');
	for (i = 0; i < nf; i++)
		m = m * 10 + (uint64_t)(fp[i] - '0');
	if (!ni)
		ip[ni++] = '0';

	/* UNIT */
	for (p = q; alert_space(t[p]); p++)
		;
	for (un = 0; isalnum((unsigned char)t[p + un]) || t[p + un] == '_'; un++)
		;
	unit = un ? alert_find_unit(t + p, un) : 0;	/* none: ns */
	alert_quote(uq, sizeof(uq), t + p, un, 16);
	if (un && !alert_stat_is_time(r->stat))
		return alert_bad(err, t, p, unit >= 0 ? "a unit after %s, which "
				 "is a count: give a plain number" :
				 "'%s' after the number", unit >= 0 ?
				 alert_stat_names[r->stat] : uq);
	if (unit < 0)
		return alert_bad(err, t, p, "unknown unit '%s' (ns, us, ms or s)",
				 uq);
	if (alert_stat_is_time(r->stat))
		exp10 = alert_units[unit].exp10;
	p += un;
	while (alert_space(t[p]))
		p++;
	if (t[p]) {
		alert_quote(uq, sizeof(uq), t + p, len - p, 16);
		return alert_bad(err, t, p, "'%s' after the rule", uq);
	}

	/* One rounding: m and every power of ten up to 1e15 are exact
	 * doubles, and the unit's exponent (<= 9) or the fraction's digits
	 * (<= 15) bound the power. */
	exp10 -= (int)nf;
	r->threshold = exp10 >= 0 ? (double)m * alert_pow10[exp10] :
		(double)m / alert_pow10[-exp10];
	snprintf(r->text, sizeof(r->text), "%s.%s%s%.*s%s%.*s%s", r->subject,
		 alert_stat_names[r->stat], alert_op_text[r->op], (int)ni, ip,
		 nf ? "." : "", (int)nf, fp,
		 alert_stat_is_time(r->stat) ? alert_units[unit].name : "");
	return 0;
}

int alert_add(struct alert_set *s, const char *text, char err[ALERT_ERRBUF])
{
	struct alert_rule r = { 0 };
	char q[ALERT_QUOTE + 4];
	int rc;

	if ((rc = alert_parse(text ? text : "", &r, err)))
		return rc;
	for (unsigned k = 0; k < s->n; k++)
		if (!strcmp(s->rule[k].text, r.text)) {
			alert_quote(q, sizeof(q), text, strlen(text), ALERT_QUOTE);
			return errbuf_set(err, ALERT_ERRBUF, -EEXIST,
					  "'%s': the same rule as '%s', given "
					  "before", q, r.text);
		}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4;
		s->rule = xrealloc(s->rule, s->cap * sizeof(*s->rule));
	}
	s->rule[s->n++] = r;
	return 0;
}

/* ---- getters ---- */

static const struct alert_rule *alert_rule(const struct alert_set *s,
					   unsigned i)
{
	return i < s->n ? &s->rule[i] : NULL;
}

unsigned alert_count(const struct alert_set *s)
{
	return s->n;
}

const char *alert_text(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->text : NULL;
}

const char *alert_subject(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->subject : NULL;
}

enum alert_stat alert_stat_of(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->stat : ALERT_NSTATS;
}

double alert_threshold(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->threshold : NAN;
}

bool alert_firing(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r && r->firing;
}

uint64_t alert_transitions(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->transitions : 0;
}

uint64_t alert_intervals(const struct alert_set *s, unsigned i)
{
	const struct alert_rule *r = alert_rule(s, i);

	return r ? r->intervals : 0;
}

uint64_t alert_exec_skipped(const struct alert_set *s)
{
	return s->skipped;
}

/* ---- evaluation ---- */

static bool alert_breach(const struct alert_rule *r, double v)
{
	switch (r->op) {
	case ALERT_GT:
		return v > r->threshold;
	case ALERT_GE:
		return v >= r->threshold;
	case ALERT_LT:
		return v < r->threshold;
	case ALERT_LE:
		return v <= r->threshold;
	}
	return false;
}

void alert_eval(struct alert_set *s, int64_t interval_end_ns,
		alert_value_fn val, void *varg, alert_event_fn ev, void *earg)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct alert_rule *r = &s->rule[i];
		struct alert_event e;
		double v;

		/* No value: the interval is not there as far as the streaks
		 * go, so a series with gaps still needs for_n (clear_n)
		 * values in a row. */
		if (!val(varg, r->subject, r->stat, &v) || isnan(v))
			continue;
		r->intervals++;
		/* The streaks saturate at their goal: no wrap-around, however
		 * long a state lasts. */
		if (alert_breach(r, v)) {
			r->calm = 0;
			if (r->breach < s->for_n)
				r->breach++;
			if (r->firing || r->breach < s->for_n)
				continue;
			r->firing = true;
		} else {
			r->breach = 0;
			if (r->calm < s->clear_n)
				r->calm++;
			if (!r->firing || r->calm < s->clear_n)
				continue;
			r->firing = false;
		}
		r->transitions++;
		if (!ev)
			continue;
		e.rule = i;
		e.firing = r->firing;
		e.value = v;
		e.threshold = r->threshold;
		e.time_ns = interval_end_ns;
		ev(earg, &e);
	}
}

/* ---- commands ---- */

#define ALERT_NENV 7

static const char *const alert_env_names[ALERT_NENV] = {
	"TAPLESS_ALERT_RULE", "TAPLESS_ALERT_SUBJECT", "TAPLESS_ALERT_STAT",
	"TAPLESS_ALERT_STATE", "TAPLESS_ALERT_VALUE",
	"TAPLESS_ALERT_THRESHOLD", "TAPLESS_ALERT_TIME",
};

/* Whether environment entry e ("NAME=value") sets one of our names. */
static bool alert_env_ours(const char *e)
{
	for (unsigned k = 0; k < ALERT_NENV; k++) {
		size_t n = strlen(alert_env_names[k]);

		if (!strncmp(e, alert_env_names[k], n) && e[n] == '=')
			return true;
	}
	return false;
}

/* NAME=v with v in the shortest form that reads back as v: "50000", not
 * "50000.000000000000". */
static void alert_env_double(char *buf, size_t len, const char *name,
			     double v)
{
	char num[40];

	snprintf(num, sizeof(num), "%.15g", v);
	if (strtod(num, NULL) != v)
		snprintf(num, sizeof(num), "%.17g", v);
	snprintf(buf, len, "%s=%s", name, num);
}

int alert_exec(struct alert_set *s, const char *cmd,
	       const struct alert_event *ev, pid_t *pid)
{
	char e_rule[ALERT_TEXT_MAX + 40], e_subject[ALERT_TEXT_MAX + 40],
	     e_stat[48], e_state[48], e_value[72], e_threshold[72], e_time[48];
	char *const ours[ALERT_NENV] = { e_rule, e_subject, e_stat, e_state,
					 e_value, e_threshold, e_time };
	char *argv[] = { "sh", "-c", "--", (char *)cmd, NULL };
	const struct alert_rule *r;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	size_t n = 0, k = 0;
	char **envp;
	pid_t child;
	int rc;

	if (!cmd || !*cmd || !ev || !(r = alert_rule(s, ev->rule)))
		return -EINVAL;
	if (s->nrun == ALERT_EXEC_MAX) {
		s->skipped++;
		return -EBUSY;
	}
	snprintf(e_rule, sizeof(e_rule), "%s=%s", alert_env_names[0], r->text);
	snprintf(e_subject, sizeof(e_subject), "%s=%s", alert_env_names[1],
		 r->subject);
	snprintf(e_stat, sizeof(e_stat), "%s=%s", alert_env_names[2],
		 alert_stat_names[r->stat]);
	snprintf(e_state, sizeof(e_state), "%s=%s", alert_env_names[3],
		 ev->firing ? "firing" : "cleared");
	alert_env_double(e_value, sizeof(e_value), alert_env_names[4], ev->value);
	alert_env_double(e_threshold, sizeof(e_threshold), alert_env_names[5],
			 ev->threshold);
	snprintf(e_time, sizeof(e_time), "%s=%" PRId64, alert_env_names[6],
		 ev->time_ns);

	/* The caller's environment, less any stale values of our names: a
	 * variable given twice is read differently by different programs. */
	while (environ && environ[n])
		n++;
	if (!(envp = malloc((n + ALERT_NENV + 1) * sizeof(*envp))))
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		if (!alert_env_ours(environ[j]))
			envp[k++] = environ[j];
	for (unsigned j = 0; j < ALERT_NENV; j++)
		envp[k++] = ours[j];
	envp[k] = NULL;

	/* stdin from /dev/null: the command must not take the correlator's
	 * terminal or input. Descriptors marked close-on-exec close at the
	 * exec as they would anyway. No signal blocked and every one at its
	 * default: the correlator may block some (signalfd) or ignore
	 * SIGPIPE, and exec would hand both on to the command. */
	sigemptyset(&none);
	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_init(&fa)))
		goto out_env;
	if ((rc = posix_spawnattr_init(&at)))
		goto out_fa;
	if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
						   O_RDONLY, 0)) ||
	    (rc = posix_spawnattr_setsigmask(&at, &none)) ||
	    (rc = posix_spawnattr_setsigdefault(&at, &all)) ||
	    (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
					   POSIX_SPAWN_SETSIGDEF)))
		goto out_at;
	/* glibc's posix_spawn returns once the exec has happened (or failed,
	 * with its error): it never waits for the command itself. "--":
	 * a command beginning with '-' is not an option of sh. */
	rc = posix_spawn(&child, "/bin/sh", &fa, &at, argv, envp);
	if (!rc) {
		s->run[s->nrun].pid = child;
		s->run[s->nrun].rule = ev->rule;
		s->nrun++;
		if (pid)
			*pid = child;
	}
out_at:
	posix_spawnattr_destroy(&at);
out_fa:
	posix_spawn_file_actions_destroy(&fa);
out_env:
	free(envp);
	return -rc;
}

unsigned alert_reap(struct alert_set *s, alert_exit_fn ex, void *arg)
{
	unsigned k = 0;

	while (k < s->nrun) {
		struct alert_run run = s->run[k];
		int st = 0;
		pid_t r = waitpid(run.pid, &st, WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (r < 0 && errno != ECHILD)) {
			k++;		/* running (or cannot tell): keep */
			continue;
		}
		if (r < 0)
			st = -1;	/* reaped by someone else */
		s->run[k] = s->run[--s->nrun];
		if (ex)
			ex(arg, run.rule, run.pid, st);
	}
	return s->nrun;
}
