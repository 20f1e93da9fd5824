/* verdict.h — pass / warn / fail against named limits, for the checks of
 * tapless validate.
 *
 * Every limit lives in one table (verdict.c): a name ("ref.mean_abs_ns"), a
 * warn level and a fail level, a unit and a line of help. A figure above the
 * warn level warns, above the fail level fails; so every limit is written the
 * way round where larger is worse (absolute errors, percentages missing).
 * Users change levels by name (--limit NAME=WARN[,FAIL]); the table also
 * drives --help and the man page.
 *
 * A check (struct verdict_check) collects items, each a verdict with a line
 * saying what was compared; its verdict is the worst item. A check that could
 * not run at all is skipped, with the reason, and a skip never counts against
 * the exit status.
 */
#ifndef TAPLESS_VERDICT_H
#define TAPLESS_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct printer;

/* A verdict_limits_set() message, quoting the limit given. */
#define VERDICT_ERRBUF 256

enum verdict { VERDICT_SKIP, VERDICT_PASS, VERDICT_WARN, VERDICT_FAIL };

struct verdict_limit {
	const char *name;
	double warn, fail;	/* INFINITY: never */
	const char *unit;	/* "ns", "%", "ppb", "" */
	const char *help;
};

/* Room for the whole table; verdict_limits_init() fills it. */
#define VERDICT_MAX_LIMITS 40

struct verdict_limits {
	struct verdict_limit v[VERDICT_MAX_LIMITS];
	size_t n;
};

#define VERDICT_MAX_ITEMS 24
#define VERDICT_TEXT 200

struct verdict_item {
	enum verdict v;
	const char *limit;	/* name of the limit applied, or NULL */
	double value;		/* the figure compared (NAN for notes) */
	char text[VERDICT_TEXT];
};

struct verdict_check {
	const char *name;	/* "phc", "loopback", "hwsw", "reference" */
	char subject[64];	/* what was checked ("ptp0", "eth1->eth2"), or "" */
	enum verdict v;		/* worst item; SKIP when nothing was judged */
	char why[VERDICT_TEXT];	/* reason for a skip, or "" */
	struct verdict_item item[VERDICT_MAX_ITEMS];
	unsigned n;
	unsigned dropped;	/* items beyond VERDICT_MAX_ITEMS */
};

/* The defaults of every limit. */
void verdict_limits_init(struct verdict_limits *l);

/* "NAME=WARN" or "NAME=WARN,FAIL"; either level may be "never". Returns 0,
 * or -EINVAL with the reason in err (unknown name, bad number, warn above
 * fail). */
int verdict_limits_set(struct verdict_limits *l, const char *spec,
		       char err[VERDICT_ERRBUF]);

/* The limit called name; a name not in the table is a programming error and
 * aborts. */
const struct verdict_limit *verdict_limit_get(const struct verdict_limits *l,
					      const char *name);

void verdict_check_init(struct verdict_check *c, const char *name,
			const char *subject);

/* The whole check could not run: why says so ("no PHC on this host"). */
void verdict_skip(struct verdict_check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An item with a verdict decided by the check itself (data missing: fail;
 * a fact worth stating: pass). */
void verdict_note(struct verdict_check *c, enum verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Judge value against the limit: an item reading "WHAT VALUE UNIT (warn
 * above W, fail above F)". A NaN value is a fail ("not measured"). Returns
 * the item's verdict. */
enum verdict verdict_apply(struct verdict_check *c,
			   const struct verdict_limits *l, const char *limit,
			   const char *what, double value);

/* One object: {"check", "subject", "verdict", "why", "items": [{"verdict",
 * "limit", "value", "text"}]}; text as a heading line and one line per
 * item. */
void verdict_print(struct printer *p, const struct verdict_check *c);

/* The --help listing: one line per limit with its levels and help. */
void verdict_limits_usage(const struct verdict_limits *l, FILE *f);

const char *verdict_name(enum verdict v);	/* "skip", "pass", ... */
enum verdict verdict_worst(enum verdict a, enum verdict b);

#endif
