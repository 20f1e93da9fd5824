/* test_alert.c — alert rules: every statistic, operator and unit parsed
 * and written back; "p99.9" and subjects holding '.' and "->"; numbers to
 * the exact nanosecond; refusals naming the character at fault; the same
 * rule twice; hysteresis over exact sequences (fire after for_n, clear
 * after clear_n, flapping values, intervals without a value that change
 * nothing, each operator at its threshold); commands run with the rule in
 * their environment, stdin from /dev/null, close-on-exec descriptors
 * closed, signals unblocked; the limit on running commands; reaping that
 * leaves other children alone. Commands are waited for by polling with a
 * generous deadline: nothing depends on a sleep being long enough. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corr/alert.h"
#include "unit.h"

#define S 1000000000LL
#define DEADLINE_NS (30 * S)
/* Bits of signals 32 and 33 in /proc/PID/status masks. */
#define GLIBC_SIGNALS 0x180000000ULL	/* far beyond anything a busy box needs */

static struct alert_set *set_of(unsigned for_n, unsigned clear_n)
{
	struct alert_set *s;

	ck_assert_int_eq(alert_set_create(&s, for_n, clear_n), 0);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* Add text, which must parse. */
static void add_ok(struct alert_set *s, const char *text)
{
	char err[ALERT_ERRBUF] = "";
	int rc = alert_add(s, text, err);

	ck_assert_msg(rc == 0, "'%s': %d %s", text, rc, err);
}

/* ---- parsing ---- */

START_TEST(every_stat)
{
	static const struct {
		const char *name;
		enum alert_stat st;
		bool time;
	} want[] = {
		{ "count", ALERT_STAT_COUNT, false },
		{ "min", ALERT_STAT_MIN, true },
		{ "p50", ALERT_STAT_P50, true },
		{ "p90", ALERT_STAT_P90, true },
		{ "p99", ALERT_STAT_P99, true },
		{ "p99.9", ALERT_STAT_P999, true },
		{ "max", ALERT_STAT_MAX, true },
		{ "mean", ALERT_STAT_MEAN, true },
		{ "bound", ALERT_STAT_BOUND, true },
		{ "out_of_sync", ALERT_STAT_OUT_OF_SYNC, false },
		{ "unmatched", ALERT_STAT_UNMATCHED, false },
		{ "age", ALERT_STAT_AGE, true },
		{ "holdover", ALERT_STAT_HOLDOVER, false },
	};
	struct alert_set *s = set_of(1, 3);
	char text[64], norm[64];

	ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), ALERT_NSTATS);
	for (unsigned i = 0; i < ALERT_NSTATS; i++) {
		ck_assert_str_eq(alert_stat_name(want[i].st), want[i].name);
		ck_assert(alert_stat_is_time(want[i].st) == want[i].time);
		/* A time takes a unit, a count must not. */
		snprintf(text, sizeof(text), "tick_to_trade.%s > 7%s",
			 want[i].name, want[i].time ? " us" : "");
		add_ok(s, text);
		ck_assert_uint_eq(alert_count(s), i + 1);
		ck_assert_int_eq(alert_stat_of(s, i), want[i].st);
		ck_assert_str_eq(alert_subject(s, i), "tick_to_trade");
		snprintf(norm, sizeof(norm), "tick_to_trade.%s>7%s",
			 want[i].name, want[i].time ? "us" : "");
		ck_assert_str_eq(alert_text(s, i), norm);
		ck_assert(alert_threshold(s, i) == (want[i].time ? 7000 : 7));
		ck_assert(!alert_firing(s, i));
		ck_assert_uint_eq(alert_transitions(s, i), 0);
	}
	ck_assert_ptr_null(alert_stat_name(ALERT_NSTATS));
	ck_assert(!alert_stat_is_time(ALERT_NSTATS));
	alert_set_destroy(s);
}
END_TEST

START_TEST(ops_units_numbers)
{
	static const struct {
		const char *in, *norm, *subject;
		double ns;
	} c[] = {
		{ "a.p99>50us", "a.p99>50us", "a", 50000 },
		{ "a.p99 >= 50us", "a.p99>=50us", "a", 50000 },
		{ "a.p99<50 us", "a.p99<50us", "a", 50000 },
		{ "a.p99\t<=\t50", "a.p99<=50ns", "a", 50 },
		{ "b.max>2.5ms", "b.max>2.5ms", "b", 2500000 },
		{ "b.max>1s", "b.max>1s", "b", 1e9 },
		{ "b.max>0.001s", "b.max>0.001s", "b", 1e6 },
		{ "b.max>0.1ms", "b.max>0.1ms", "b", 100000 },
		{ "b.max>800ns", "b.max>800ns", "b", 800 },
		{ "b.max>1.25", "b.max>1.25ns", "b", 1.25 },
		{ "b.max>0.1", "b.max>0.1ns", "b", 0.1 },
		{ "  b.mean > 0050.500 us  ", "b.mean>50.5us", "b", 50500 },
		{ "b.mean>0", "b.mean>0ns", "b", 0 },
		{ "c.mean>0.0", "c.mean>0ns", "c", 0 },
		{ "d.mean>000", "d.mean>0ns", "d", 0 },
		{ "b.age>999999999999999s", "b.age>999999999999999s", "b",
		  999999999999999e9 },
		{ "b.age>0.000000000000001s", "b.age>0.000000000000001s", "b",
		  1e-6 },
		{ "b.unmatched>=0", "b.unmatched>=0", "b", 0 },
		{ "b.count<100", "b.count<100", "b", 100 },
		/* The longest statistic ends the left side. */
		{ "algo->venue.p99.9>=2.5ms", "algo->venue.p99.9>=2.5ms",
		  "algo->venue", 2500000 },
		{ "algo->venue.p99>9", "algo->venue.p99>9ns", "algo->venue", 9 },
		/* Subjects with '.', ':', '@', '/', '-' and '>'. */
		{ "host:venue.nyc.age>2s", "host:venue.nyc.age>2s",
		  "host:venue.nyc", 2e9 },
		{ "tick_to_trade@algo.p50<1us", "tick_to_trade@algo.p50<1us",
		  "tick_to_trade@algo", 1000 },
		{ "switch:sw1.max>800", "switch:sw1.max>800ns", "switch:sw1", 800 },
		{ "a/b-c.p90>1", "a/b-c.p90>1ns", "a/b-c", 1 },
		{ "x.p99.p99.9>1", "x.p99.p99.9>1ns", "x.p99", 1 },
		{ "p99.p99>1", "p99.p99>1ns", "p99", 1 },
	};
	struct alert_set *s = set_of(1, 3);

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		add_ok(s, c[i].in);
		ck_assert_str_eq(alert_text(s, i), c[i].norm);
		ck_assert_str_eq(alert_subject(s, i), c[i].subject);
		ck_assert_msg(alert_threshold(s, i) == c[i].ns,
			      "'%s': %.17g, want %.17g", c[i].in,
			      alert_threshold(s, i), c[i].ns);
	}
	ck_assert_int_eq(alert_stat_of(s, 19), ALERT_STAT_P999);
	ck_assert_int_eq(alert_stat_of(s, 20), ALERT_STAT_P99);
	ck_assert_int_eq(alert_stat_of(s, 25), ALERT_STAT_P999);
	alert_set_destroy(s);
}
END_TEST

START_TEST(normalised_text_parses_back)
{
	static const char *const in[] = {
		"  x.p99.9 >= 0050.500 ms", "a->b.count<7", "h:v.n.age>1.50s",
	};
	struct alert_set *a = set_of(1, 3), *b = set_of(1, 3);

	for (unsigned i = 0; i < 3; i++) {
		add_ok(a, in[i]);
		add_ok(b, alert_text(a, i));
		ck_assert_str_eq(alert_text(b, i), alert_text(a, i));
		ck_assert(alert_threshold(b, i) == alert_threshold(a, i));
	}
	alert_set_destroy(a);
	alert_set_destroy(b);
}
END_TEST

/* Refused, with the rule quoted and the character at fault named. */
START_TEST(errors)
{
	static const struct {
		const char *in, *want;
	} c[] = {
		{ "x.p98>5", "character 3: unknown statistic 'p98'" },
		{ "x.p99.8>5", "character 3: unknown statistic 'p99.8'" },
		{ "x.count>5us", "character 10: a unit after count, which is a count" },
		{ "x.out_of_sync > 1 ms", "character 19: a unit after out_of_sync" },
		{ "x.unmatched>1ns", "character 14: a unit after unmatched" },
		{ "x.count>5 junk", "character 11: 'junk' after the number" },
		{ "x.p99>", "character 7: no number after '>'" },
		{ "x.p99 >=  ", "character 11: no number after '>='" },
		{ "x.p99>us", "character 7: expected a non-negative number" },
		{ "x.p99>-5", "character 7: expected a non-negative number" },
		{ "x.p99>5.", "character 9: no digit after '.'" },
		{ "x.p99>.5", "character 7: expected a non-negative number" },
		{ "x.p99>1234567890123456", "character 7: more than 15 digits" },
		{ "x.p99>5us junk", "character 11: 'junk' after the rule" },
		{ "x.p99>5us 7", "character 11: '7' after the rule" },
		{ "x.p99>5.5.5", "character 10: '.5' after the rule" },
		{ "x.p99>5xs", "character 8: unknown unit 'xs' (ns, us, ms or s)" },
		{ "x.p99>5e3", "character 8: unknown unit 'e3'" },
		{ "x.p99>5US", "character 8: unknown unit 'US'" },
		{ ".p99>5", "character 1: an empty subject before '.p99'" },
		{ "  .p99.9>5", "character 3: an empty subject before '.p99.9'" },
		{ "x..p99>5", "character 2: a subject cannot begin or end with '.'" },
		{ "tick to_trade.p99>5", "character 5: a space in the subject" },
		{ "x;y.p99>5", "character 2: ';' in the subject" },
		{ "x.p99 5", "character 6: no operator (>, >=, < or <=)" },
		{ "x.p99=5", "character 6: no operator" },
		{ "algo->venue.p99 50us", "character 16: no operator" },
		{ "x.p99=>5", "character 6: '=>' is not an operator" },
		{ "x.p99 <> 5", "character 7: '<>' is not an operator" },
		{ "x.p99>>5", "character 6: '>>' is not an operator" },
		{ ">5", "character 1: no SUBJECT.STAT before the operator" },
		{ "tick_to_trade>5", "character 14: no statistic before the operator" },
		{ "x.>5", "character 3: no statistic after '.'" },
		{ "", "character 1: an empty rule" },
		{ "   ", "character 1: an empty rule" },
		{ "x.p99>5\x01", "character 8: '?' after the rule" },
	};
	struct alert_set *s = set_of(1, 3);
	char err[ALERT_ERRBUF], quoted[64];

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(err, 0, sizeof(err));
		ck_assert_int_eq(alert_add(s, c[i].in, err), -EINVAL);
		ck_assert_msg(strstr(err, c[i].want), "'%s': got \"%s\", want \"%s\"",
			      c[i].in, err, c[i].want);
		/* The rule, quoted at the start; one line. */
		snprintf(quoted, sizeof(quoted), "'%s', ", c[i].in);
		if (!strchr(c[i].in, '\x01'))
			ck_assert_msg(!strncmp(err, quoted, strlen(quoted)),
				      "'%s': %s", c[i].in, err);
		ck_assert_ptr_null(strchr(err, '\n'));
		ck_assert_ptr_null(strchr(err, '\x01'));
	}
	ck_assert_uint_eq(alert_count(s), 0);
	/* NULL text is an empty rule; a NULL buffer is fine. */
	ck_assert_int_eq(alert_add(s, NULL, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "an empty rule"));
	ck_assert_int_eq(alert_add(s, "x.p98>5", NULL), -EINVAL);
	ck_assert_uint_eq(alert_count(s), 0);
	alert_set_destroy(s);
}
END_TEST

START_TEST(too_long)
{
	struct alert_set *s = set_of(1, 3);
	char text[ALERT_TEXT_MAX + 2], err[ALERT_ERRBUF];

	/* Exactly ALERT_TEXT_MAX: fine. */
	memset(text, 'a', ALERT_TEXT_MAX);
	memcpy(text + ALERT_TEXT_MAX - 8, ".max>5ms", 8);
	text[ALERT_TEXT_MAX] = 0;
	add_ok(s, text);
	ck_assert_uint_eq(strlen(alert_text(s, 0)), ALERT_TEXT_MAX);
	/* One more: refused, and the quote is cut. */
	memset(text, 'b', ALERT_TEXT_MAX + 1);
	memcpy(text + ALERT_TEXT_MAX + 1 - 8, ".max>5ms", 8);
	text[ALERT_TEXT_MAX + 1] = 0;
	ck_assert_int_eq(alert_add(s, text, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "...', character 257: longer than 256"));
	ck_assert_uint_lt(strlen(err), 200);
	/* The normalised text of a rule at the limit may grow by "ns". */
	memset(text, 'c', ALERT_TEXT_MAX);
	memcpy(text + ALERT_TEXT_MAX - 6, ".max>5", 6);
	text[ALERT_TEXT_MAX] = 0;
	add_ok(s, text);
	ck_assert_uint_eq(strlen(alert_text(s, 1)), ALERT_TEXT_MAX + 2);
	ck_assert_str_eq(alert_text(s, 1) + ALERT_TEXT_MAX - 6, ".max>5ns");
	alert_set_destroy(s);
}
END_TEST

START_TEST(same_rule_twice)
{
	struct alert_set *s = set_of(1, 3);
	char err[ALERT_ERRBUF];

	add_ok(s, "x.p99>50us");
	ck_assert_int_eq(alert_add(s, "x.p99 > 50.0 us", err), -EEXIST);
	ck_assert_str_eq(err, "'x.p99 > 50.0 us': the same rule as "
			 "'x.p99>50us', given before");
	/* Same threshold in other words is another rule (another label). */
	add_ok(s, "x.p99>50000ns");
	add_ok(s, "x.p99>=50us");
	ck_assert_uint_eq(alert_count(s), 3);
	alert_set_destroy(s);
}
END_TEST

START_TEST(create_and_getters)
{
	struct alert_set *s = (struct alert_set *)1;

	ck_assert_int_eq(alert_set_create(&s, 0, 3), -EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(alert_set_create(&s, 1, 0), -EINVAL);
	s = set_of(ALERT_FOR_DEFAULT, ALERT_CLEAR_DEFAULT);
	ck_assert_uint_eq(alert_count(s), 0);
	ck_assert_ptr_null(alert_text(s, 0));
	ck_assert_ptr_null(alert_subject(s, 0));
	ck_assert_int_eq(alert_stat_of(s, 0), ALERT_NSTATS);
	ck_assert(isnan(alert_threshold(s, 0)));
	ck_assert(!alert_firing(s, 0));
	ck_assert_uint_eq(alert_transitions(s, 0), 0);
	ck_assert_uint_eq(alert_intervals(s, 0), 0);
	ck_assert_uint_eq(alert_exec_skipped(s), 0);
	ck_assert_uint_eq(alert_reap(s, NULL, NULL), 0);
	alert_set_destroy(s);
	alert_set_destroy(NULL);
}
END_TEST

/* ---- hysteresis ---- */

#define MAX_EV 64
#define NONE NAN	/* an interval without a value */

/* The caller's side: one value per interval for every rule, and the
 * changes reported. */
struct feed {
	double v;		/* this interval's value, NONE for none */
	unsigned asked;
	const char *subject;	/* what val() must be asked for */
	enum alert_stat st;
	unsigned nev;
	struct alert_event ev[MAX_EV];
};

static bool feed_value(void *arg, const char *subject, enum alert_stat st,
		       double *value)
{
	struct feed *f = arg;

	f->asked++;
	if (f->subject) {
		ck_assert_str_eq(subject, f->subject);
		ck_assert_int_eq(st, f->st);
	}
	if (isnan(f->v))
		return false;
	*value = f->v;
	return true;
}

static void feed_event(void *arg, const struct alert_event *ev)
{
	struct feed *f = arg;

	ck_assert_uint_lt(f->nev, MAX_EV);
	f->ev[f->nev++] = *ev;
}

/* Run the values vals[0..n) as intervals 1..n (time: k s) through s. */
static void run_seq(struct alert_set *s, struct feed *f, const double *vals,
		    unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		f->v = vals[k];
		alert_eval(s, (int64_t)(k + 1) * S, feed_value, f, feed_event, f);
	}
}

#define B 100.0		/* in breach of "x.max>50" */
#define O 10.0		/* not */

START_TEST(hysteresis_for2_clear3)
{
	const double v[] = {
		O, B, O, B, B,		/*  1- 5: fires at 5, not 2 (3 broke it) */
		B, O, O, B,		/*  6- 9: 2 calm, then breach: firing */
		O, O, O,		/* 10-12: clears at 12 */
		B, NONE, B,		/* 13-15: fires at 15, 14 not counted */
		O, NONE, O, NONE, NONE,	/* 16-20: 2 calm among the gaps */
		O,			/* 21:    the third: clears */
		B,			/* 22:    one breach: not yet */
	};
	struct alert_set *s = set_of(2, 3);
	struct feed f = { .subject = "x", .st = ALERT_STAT_MAX };

	add_ok(s, "x.max>50");
	run_seq(s, &f, v, sizeof(v) / sizeof(v[0]));
	ck_assert_uint_eq(f.asked, 22);
	ck_assert_uint_eq(f.nev, 4);
	ck_assert(f.ev[0].firing);
	ck_assert_int_eq(f.ev[0].time_ns, 5 * S);
	ck_assert(f.ev[0].value == B && f.ev[0].threshold == 50);
	ck_assert_uint_eq(f.ev[0].rule, 0);
	ck_assert(!f.ev[1].firing);
	ck_assert_int_eq(f.ev[1].time_ns, 12 * S);
	ck_assert(f.ev[1].value == O);
	ck_assert(f.ev[2].firing);
	ck_assert_int_eq(f.ev[2].time_ns, 15 * S);
	ck_assert(!f.ev[3].firing);
	ck_assert_int_eq(f.ev[3].time_ns, 21 * S);
	ck_assert(!alert_firing(s, 0));
	ck_assert_uint_eq(alert_transitions(s, 0), 4);
	ck_assert_uint_eq(alert_intervals(s, 0), 18);
	alert_set_destroy(s);
}
END_TEST

/* Clearing needs clear_n calm values in a row; gaps do not count, and do
 * not reset. */
START_TEST(hysteresis_clear_across_gaps)
{
	const double v[] = { B, B, O, NONE, O, NONE, NONE, O, NONE };
	struct alert_set *s = set_of(2, 3);
	struct feed f = { 0 };

	add_ok(s, "x.max>50");
	run_seq(s, &f, v, sizeof(v) / sizeof(v[0]));
	ck_assert_uint_eq(f.nev, 2);
	ck_assert(f.ev[0].firing);
	ck_assert_int_eq(f.ev[0].time_ns, 2 * S);
	ck_assert(!f.ev[1].firing);
	ck_assert_int_eq(f.ev[1].time_ns, 8 * S);
	ck_assert(!alert_firing(s, 0));
	ck_assert_uint_eq(alert_intervals(s, 0), 5);
	alert_set_destroy(s);
}
END_TEST

/* A value flapping across the threshold every interval reports nothing
 * with for_n 2, and one change (fired, never cleared) with for_n 1. */
START_TEST(hysteresis_flapping)
{
	struct alert_set *s2 = set_of(2, 3), *s1 = set_of(1, 3);
	struct feed f2 = { 0 }, f1 = { 0 };
	double v[200];

	for (unsigned k = 0; k < 200; k++)
		v[k] = k % 2 ? O : B;
	add_ok(s2, "x.max>50");
	add_ok(s1, "x.max>50");
	run_seq(s2, &f2, v, 200);
	run_seq(s1, &f1, v, 200);
	ck_assert_uint_eq(f2.nev, 0);
	ck_assert_uint_eq(alert_transitions(s2, 0), 0);
	ck_assert(!alert_firing(s2, 0));
	ck_assert_uint_eq(f1.nev, 1);
	ck_assert_uint_eq(alert_transitions(s1, 0), 1);
	ck_assert(alert_firing(s1, 0));
	ck_assert_int_eq(f1.ev[0].time_ns, 1 * S);
	/* Two calm intervals in a row, then a breach: never cleared. (The
	 * last run ended calm: it starts with a breach.) */
	for (unsigned k = 0; k < 200; k++)
		v[k] = k % 3 ? O : B;
	run_seq(s1, &f1, v, 200);
	ck_assert_uint_eq(f1.nev, 1);
	ck_assert(alert_firing(s1, 0));
	alert_set_destroy(s2);
	alert_set_destroy(s1);
}
END_TEST

/* Only intervals without values: nothing happens, whatever the state. */
START_TEST(hysteresis_no_values)
{
	const double firing[] = { B };
	struct alert_set *s = set_of(1, 1);
	struct feed f = { 0 };
	double none[50];

	for (unsigned k = 0; k < 50; k++)
		none[k] = NONE;
	add_ok(s, "x.max>50");
	run_seq(s, &f, none, 50);
	ck_assert_uint_eq(f.nev, 0);
	ck_assert_uint_eq(alert_intervals(s, 0), 0);
	run_seq(s, &f, firing, 1);
	ck_assert_uint_eq(f.nev, 1);
	/* clear_n 1 would clear on the first calm value; none comes. */
	run_seq(s, &f, none, 50);
	ck_assert_uint_eq(f.nev, 1);
	ck_assert(alert_firing(s, 0));
	ck_assert_uint_eq(f.asked, 101);
	alert_set_destroy(s);
}
END_TEST

/* Each operator at, below and above its threshold; events in rule order;
 * no event function needed. */
START_TEST(operators_at_threshold)
{
	static const char *const rules[] = {
		"x.p99>5us", "x.p99>=5us", "x.p99<5us", "x.p99<=5us",
	};
	/* Breach at 4999, 5000, 5001 ns, per rule. */
	static const bool want[4][3] = {
		{ false, false, true }, { false, true, true },
		{ true, false, false }, { true, true, false },
	};
	static const double at[3] = { 4999, 5000, 5001 };

	for (unsigned k = 0; k < 3; k++) {
		struct alert_set *s = set_of(1, 1);
		struct feed f = { 0 };
		unsigned n = 0;

		for (unsigned i = 0; i < 4; i++)
			add_ok(s, rules[i]);
		f.v = at[k];
		alert_eval(s, 7, feed_value, &f, feed_event, &f);
		for (unsigned i = 0; i < 4; i++) {
			ck_assert_msg(alert_firing(s, i) == want[i][k], "%s at %g",
				      rules[i], at[k]);
			if (want[i][k]) {
				ck_assert_uint_eq(f.ev[n].rule, i);
				ck_assert_int_eq(f.ev[n].time_ns, 7);
				n++;
			}
		}
		ck_assert_uint_eq(f.nev, n);
		alert_eval(s, 8, feed_value, &f, NULL, NULL);
		ck_assert_uint_eq(f.nev, n);
		alert_set_destroy(s);
	}
}
END_TEST

/* ---- commands ---- */

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "alert");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * S + ts.tv_nsec;
}

struct exits {
	unsigned n;
	unsigned rule[ALERT_EXEC_MAX + 1];
	pid_t pid[ALERT_EXEC_MAX + 1];
	int st[ALERT_EXEC_MAX + 1];
};

static void on_exit_(void *arg, unsigned rule, pid_t pid, int wstatus)
{
	struct exits *x = arg;

	ck_assert_uint_le(x->n, ALERT_EXEC_MAX);
	x->rule[x->n] = rule;
	x->pid[x->n] = pid;
	x->st[x->n++] = wstatus;
}

/* Reap until none of s's commands runs. */
static void reap_all(struct alert_set *s, struct exits *x)
{
	int64_t deadline = mono() + DEADLINE_NS;
	const struct timespec tick = { 0, 10000000 };

	while (alert_reap(s, on_exit_, x)) {
		ck_assert_msg(mono() < deadline, "commands still running");
		nanosleep(&tick, NULL);
	}
}

/* path's contents (at most len - 1 bytes). */
static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* How many lines of text begin with prefix. */
static unsigned lines_with(const char *text, const char *prefix)
{
	unsigned n = 0;
	size_t k = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		n += !strncmp(p, prefix, k);
	return n;
}

/* The mask of a /proc/PID/status line ("SigBlk:\t...") in text. */
static uint64_t sig_line(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	ck_assert_ptr_nonnull(p);
	return strtoull(p + strlen(name), NULL, 16);
}

START_TEST(exec_environment)
{
	struct alert_set *s = set_of(1, 3);
	struct alert_event ev = {
		.rule = 1, .firing = true, .value = 60000, .threshold = 50000,
		.time_ns = 1700000000123456789LL,
	};
	struct exits x = { 0 };
	char cmd[512], path[128], buf[16384];
	int keep, gone;
	sigset_t usr1;
	pid_t pid = 0;

	add_ok(s, "other.count>1");
	add_ok(s, "algo->venue.p99 > 50 us");
	/* What the correlator might have: a stale variable of ours, one of
	 * its own, a descriptor with and one without close-on-exec, a blocked
	 * signal and an ignored SIGPIPE. The command writes its environment
	 * as exec() gave it (/proc/PID/environ: the shell would hide a
	 * variable given twice). */
	ck_assert_int_eq(setenv("TAPLESS_ALERT_RULE", "stale", 1), 0);
	ck_assert_int_eq(setenv("TAPLESS_TEST_KEEP", "kept", 1), 0);
	gone = open("/dev/null", O_RDONLY | O_CLOEXEC);
	keep = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(gone, 0);
	ck_assert_int_ge(keep, 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
	ck_assert(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
	/* And a stdin that is not /dev/null already (make may give that). */
	snprintf(path, sizeof(path), "%s/in", dir);
	unit_write_file(path, "");
	ck_assert_int_eq(close(0), 0);
	ck_assert_int_eq(open(path, O_RDONLY), 0);

	snprintf(cmd, sizeof(cmd),
		 "out=%s/out; tr '\\0' '\\n' < /proc/$$/environ > $out.tmp; "
		 "echo \"stdin=$(readlink /proc/self/fd/0)\" >> $out.tmp; "
		 "[ -e /proc/self/fd/%d ] && echo gone=open >> $out.tmp; "
		 "[ -e /proc/self/fd/%d ] && echo keep=open >> $out.tmp; "
		 "grep -E '^Sig(Blk|Ign)' /proc/self/status >> $out.tmp; "
		 "mv $out.tmp $out", dir, gone, keep);
	ck_assert_int_eq(alert_exec(s, cmd, &ev, &pid), 0);
	ck_assert_int_gt(pid, 0);
	reap_all(s, &x);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_int_eq(x.pid[0], pid);
	ck_assert_uint_eq(x.rule[0], 1);
	ck_assert(WIFEXITED(x.st[0]) && WEXITSTATUS(x.st[0]) == 0);

	snprintf(path, sizeof(path), "%s/out", dir);
	slurp(path, buf, sizeof(buf));
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_RULE="), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_RULE=algo->venue.p99>50us\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_SUBJECT=algo->venue\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_STAT=p99\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_STATE=firing\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_VALUE=60000\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_THRESHOLD=50000\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_ALERT_TIME=1700000000123456789\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "TAPLESS_TEST_KEEP=kept\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "stdin=/dev/null\n"), 1);
	ck_assert_uint_eq(lines_with(buf, "gone=open"), 0);
	ck_assert_uint_eq(lines_with(buf, "keep=open"), 1);
	/* Nothing blocked, nothing ignored (SIGPIPE, 13, would be bit 12),
	 * but glibc's own two signals, which posix_spawn() ignores in the
	 * child. */
	ck_assert_uint_eq(sig_line(buf, "SigBlk:\t") & ~GLIBC_SIGNALS, 0);
	ck_assert_uint_eq(sig_line(buf, "SigIgn:\t") & ~GLIBC_SIGNALS, 0);

	/* Cleared, a value with a fraction, and a command that fails. */
	ev.firing = false;
	ev.value = 0.1;
	ev.rule = 0;
	ev.threshold = 1;
	snprintf(cmd, sizeof(cmd), "echo \"$TAPLESS_ALERT_STATE $TAPLESS_ALERT_VALUE "
		 "$TAPLESS_ALERT_THRESHOLD $TAPLESS_ALERT_RULE\" > %s/out; exit 3",
		 dir);
	ck_assert_int_eq(alert_exec(s, cmd, &ev, NULL), 0);
	x.n = 0;
	reap_all(s, &x);
	ck_assert_uint_eq(x.n, 1);
	ck_assert(WIFEXITED(x.st[0]) && WEXITSTATUS(x.st[0]) == 3);
	slurp(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "cleared 0.1 1 other.count>1\n");

	/* A command beginning with '-' is a command, not an option of sh. */
	ck_assert_int_eq(alert_exec(s, "-x 2>/dev/null", &ev, NULL), 0);
	x.n = 0;
	reap_all(s, &x);
	ck_assert(WIFEXITED(x.st[0]) && WEXITSTATUS(x.st[0]) == 127);
	ck_assert_uint_eq(alert_exec_skipped(s), 0);
	alert_set_destroy(s);
}
END_TEST

START_TEST(exec_refused)
{
	struct alert_set *s = set_of(1, 3);
	struct alert_event ev = { .rule = 1 };

	add_ok(s, "x.count>1");
	ck_assert_int_eq(alert_exec(s, "true", &ev, NULL), -EINVAL);
	ev.rule = 0;
	ck_assert_int_eq(alert_exec(s, "", &ev, NULL), -EINVAL);
	ck_assert_int_eq(alert_exec(s, NULL, &ev, NULL), -EINVAL);
	ck_assert_int_eq(alert_exec(s, "true", NULL, NULL), -EINVAL);
	ck_assert_uint_eq(alert_reap(s, NULL, NULL), 0);
	ck_assert_uint_eq(alert_exec_skipped(s), 0);
	alert_set_destroy(s);
}
END_TEST

/* ALERT_EXEC_MAX commands that hang: the next change is skipped and
 * counted; once they are gone, commands run again. */
START_TEST(exec_limit)
{
	struct alert_set *s = set_of(1, 3);
	struct alert_event ev = { .firing = true };
	pid_t pid[ALERT_EXEC_MAX], extra = 0;
	struct exits x = { 0 };

	add_ok(s, "x.count>1");
	for (unsigned k = 0; k < ALERT_EXEC_MAX; k++)
		ck_assert_int_eq(alert_exec(s, "exec sleep 300", &ev, &pid[k]), 0);
	ck_assert_uint_eq(alert_reap(s, on_exit_, &x), ALERT_EXEC_MAX);
	ck_assert_uint_eq(x.n, 0);
	ck_assert_int_eq(alert_exec(s, "true", &ev, &extra), -EBUSY);
	ck_assert_int_eq(alert_exec(s, "true", &ev, &extra), -EBUSY);
	ck_assert_int_eq(extra, 0);
	ck_assert_uint_eq(alert_exec_skipped(s), 2);
	for (unsigned k = 0; k < ALERT_EXEC_MAX; k++)
		ck_assert_int_eq(kill(pid[k], SIGKILL), 0);
	reap_all(s, &x);
	ck_assert_uint_eq(x.n, ALERT_EXEC_MAX);
	for (unsigned k = 0; k < x.n; k++) {
		bool ours = false;

		for (unsigned j = 0; j < ALERT_EXEC_MAX; j++)
			ours |= x.pid[k] == pid[j];
		ck_assert(ours);
		ck_assert(WIFSIGNALED(x.st[k]) && WTERMSIG(x.st[k]) == SIGKILL);
	}
	ck_assert_int_eq(alert_exec(s, "true", &ev, &extra), 0);
	x.n = 0;
	reap_all(s, &x);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_int_eq(x.pid[0], extra);
	ck_assert_uint_eq(alert_exec_skipped(s), 2);
	alert_set_destroy(s);
}
END_TEST

/* alert_reap() waits for its own children only: another child's exit
 * status is still there for its owner. */
START_TEST(reap_leaves_others)
{
	struct alert_set *s = set_of(1, 3);
	struct alert_event ev = { .firing = true };
	struct exits x = { 0 };
	int st = 0;
	pid_t other = fork();

	ck_assert_int_ge(other, 0);
	if (!other)
		_exit(7);
	add_ok(s, "x.count>1");
	ck_assert_int_eq(alert_exec(s, "exit 0", &ev, NULL), 0);
	reap_all(s, &x);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_int_eq(waitpid(other, &st, 0), other);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	/* Reaped by someone else: dropped, status -1. */
	ck_assert_int_eq(alert_exec(s, "exit 0", &ev, NULL), 0);
	ck_assert_int_gt(waitpid(-1, &st, 0), 0);
	x.n = 0;
	ck_assert_uint_eq(alert_reap(s, on_exit_, &x), 0);
	ck_assert_uint_eq(x.n, 1);
	ck_assert_int_eq(x.st[0], -1);
	alert_set_destroy(s);
}
END_TEST

static Suite *alert_suite(void)
{
	Suite *s = suite_create("alert");
	TCase *p = tcase_create("parse"), *h = tcase_create("hysteresis"),
	      *e = tcase_create("exec");

	tcase_add_test(p, every_stat);
	tcase_add_test(p, ops_units_numbers);
	tcase_add_test(p, normalised_text_parses_back);
	tcase_add_test(p, errors);
	tcase_add_test(p, too_long);
	tcase_add_test(p, same_rule_twice);
	tcase_add_test(p, create_and_getters);
	suite_add_tcase(s, p);
	tcase_add_test(h, hysteresis_for2_clear3);
	tcase_add_test(h, hysteresis_clear_across_gaps);
	tcase_add_test(h, hysteresis_flapping);
	tcase_add_test(h, hysteresis_no_values);
	tcase_add_test(h, operators_at_threshold);
	suite_add_tcase(s, h);
	tcase_add_checked_fixture(e, setup, teardown);
	tcase_set_timeout(e, 60);
	tcase_add_test(e, exec_environment);
	tcase_add_test(e, exec_refused);
	tcase_add_test(e, exec_limit);
	tcase_add_test(e, reap_leaves_others);
	suite_add_tcase(s, e);
	return s;
}

UNIT_MAIN(alert_suite)
