/* verdict.c — the limits of tapless validate and how a figure is judged
 * against them. The levels are what a trading-network engineer would
 * accept from hardware stamps (the FTTC report's NIC was 62–85 ns from its
 * tap); software stamps have limits of their own, a thousand times looser.
 */
#include "validate/verdict.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"
#include "base/print.h"

static const struct verdict_limit verdict_defaults[] = {
	/* PHC */
	{ "phc.read_window_ns", 5000, 50000, "ns",
	  "width of the narrowest system-clock bracket around a PHC read" },
	{ "phc.offset_sd_ns", 1000, 10000, "ns",
	  "SD of PHC - CLOCK_REALTIME about its linear fit over the run" },
	{ "phc.freq_ppb", 100000, 1000000, "ppb",
	  "|frequency adjustment| read back from the PHC" },
	{ "phc.backwards", 0, 0, "",
	  "PHC reads that went backwards" },
	{ "phc.resolution_ns", 10, 100, "ns",
	  "resolution the PHC delivers (greatest common step of reads)" },
	/* Loopback, by the stamps the one-way used */
	{ "loop.hw.sd_ns", 50, 500, "ns",
	  "SD of the one-way, hardware stamps" },
	{ "loop.sw.sd_ns", 5000, 50000, "ns",
	  "SD of the one-way, software stamps" },
	{ "loop.hw.cable_error_ns", 100, 1000, "ns",
	  "|mean one-way - expected|, hardware stamps" },
	{ "loop.sw.cable_error_ns", 20000, 200000, "ns",
	  "|mean one-way - expected|, software stamps" },
	{ "loop.hw.asymmetry_ns", 50, 500, "ns",
	  "|mean one-way A->B - mean B->A|, hardware stamps" },
	{ "loop.sw.asymmetry_ns", 5000, 50000, "ns",
	  "|mean one-way A->B - mean B->A|, software stamps" },
	{ "loop.tx_missing_pct", 0, 1, "%",
	  "frames sent whose TX stamp never came" },
	{ "loop.tx_late_pct", 0, 1, "%",
	  "TX stamps that came after the timeout" },
	{ "loop.rx_lost_pct", 0, 1, "%",
	  "frames sent that never arrived, or arrived unstamped" },
	/* Hardware against software stamps */
	{ "hwsw.hw_missing_pct", 0, 1, "%",
	  "frames with a software stamp but no hardware one" },
	/* Against a reference capture */
	{ "ref.mean_abs_ns", 100, 1000, "ns",
	  "|mean error| of host stamps against the reference" },
	{ "ref.sd_ns", 100, 1000, "ns",
	  "SD of the error against the reference" },
	{ "ref.p99_abs_ns", 500, 5000, "ns",
	  "largest |p1| or |p99| of the error" },
	{ "ref.rate_ppb", 100, 1000, "ppb",
	  "|fitted rate| of the error (host clock against reference)" },
	{ "ref.unmatched_pct", 1, 50, "%",
	  "host packets within the reference's span that it lacks" },
	{ "ref.resolution_ns", 100, INFINITY, "ns",
	  "coarser stamp resolution of the two files" },
};

#define NDEFAULTS (sizeof(verdict_defaults) / sizeof(verdict_defaults[0]))

_Static_assert(NDEFAULTS <= VERDICT_MAX_LIMITS, "raise VERDICT_MAX_LIMITS");

void verdict_limits_init(struct verdict_limits *l)
{
	memcpy(l->v, verdict_defaults, sizeof(verdict_defaults));
	l->n = NDEFAULTS;
}

static struct verdict_limit *limit_find(struct verdict_limits *l,
					const char *name, size_t nlen)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].name) == nlen &&
		    !strncmp(l->v[i].name, name, nlen))
			return &l->v[i];
	return NULL;
}

static int level_parse(const char *s, size_t n, double *out)
{
	char buf[64], *end;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!strcmp(buf, "never")) {
		*out = INFINITY;
		return 0;
	}
	errno = 0;
	*out = strtod(buf, &end);
	if (errno || *end || !isfinite(*out) || *out < 0)
		return -EINVAL;
	return 0;
}

int verdict_limits_set(struct verdict_limits *l, const char *spec,
		       char err[VERDICT_ERRBUF])
{
	const char *eq = strchr(spec, '='), *comma;
	struct verdict_limit *lim;
	double warn, fail;

	if (!eq)
		return errbuf_set(err, VERDICT_ERRBUF, -EINVAL,
				  "limit '%s': expected NAME=WARN[,FAIL]", spec);
	lim = limit_find(l, spec, (size_t)(eq - spec));
	if (!lim)
		return errbuf_set(err, VERDICT_ERRBUF, -EINVAL,
				  "limit '%.*s': no such limit (see --help)",
				  (int)(eq - spec), spec);
	comma = strchr(eq + 1, ',');
	if (level_parse(eq + 1, comma ? (size_t)(comma - eq - 1) : strlen(eq + 1),
			&warn) ||
	    (comma && level_parse(comma + 1, strlen(comma + 1), &fail))) {
		return errbuf_set(err, VERDICT_ERRBUF, -EINVAL,
				  "limit '%s': levels are numbers >= 0 or 'never'",
				  spec);
	}
	if (!comma)
		fail = fmax(warn, lim->fail);
	if (warn > fail)
		return errbuf_set(err, VERDICT_ERRBUF, -EINVAL,
				  "limit '%s': warn level above the fail level (%g)",
				  spec, fail);
	lim->warn = warn;
	lim->fail = fail;
	return 0;
}

const struct verdict_limit *verdict_limit_get(const struct verdict_limits *l,
					      const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	/* A name not in the table is this program's bug, not its input's. */
	assert(!"verdict_limit_get: a name not in the limits table");
	abort();
}

void verdict_check_init(struct verdict_check *c, const char *name,
			const char *subject)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	snprintf(c->subject, sizeof(c->subject), "%s", subject ? subject : "");
	c->v = VERDICT_SKIP;
}

void verdict_skip(struct verdict_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	c->v = VERDICT_SKIP;
	c->n = 0;
}

static struct verdict_item *item_add(struct verdict_check *c, enum verdict v)
{
	struct verdict_item *it;

	c->v = verdict_worst(c->v, v);
	if (c->n == VERDICT_MAX_ITEMS) {
		c->dropped++;
		return NULL;
	}
	it = &c->item[c->n++];
	it->v = v;
	it->limit = NULL;
	it->value = NAN;
	return it;
}

void verdict_note(struct verdict_check *c, enum verdict v, const char *fmt, ...)
{
	struct verdict_item *it = item_add(c, v);
	va_list ap;

	if (!it)
		return;
	va_start(ap, fmt);
	vsnprintf(it->text, sizeof(it->text), fmt, ap);
	va_end(ap);
}

static void level_text(char *buf, size_t len, double x)
{
	if (isinf(x))
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%g", x);
}

enum verdict verdict_apply(struct verdict_check *c,
			   const struct verdict_limits *l, const char *limit,
			   const char *what, double value)
{
	const struct verdict_limit *lim = verdict_limit_get(l, limit);
	enum verdict v;
	struct verdict_item *it;
	char w[32], f[32];

	if (isnan(value))
		v = VERDICT_FAIL;
	else if (value > lim->fail)
		v = VERDICT_FAIL;
	else if (value > lim->warn)
		v = VERDICT_WARN;
	else
		v = VERDICT_PASS;
	it = item_add(c, v);
	if (!it)
		return v;
	it->limit = lim->name;
	it->value = value;
	level_text(w, sizeof(w), lim->warn);
	level_text(f, sizeof(f), lim->fail);
	if (isnan(value))
		snprintf(it->text, sizeof(it->text), "%s: not measured (%s)",
			 what, lim->name);
	else
		snprintf(it->text, sizeof(it->text),
			 "%s %.4g%s%s (%s: warn above %s, fail above %s)", what,
			 value, *lim->unit && strcmp(lim->unit, "%") ? " " : "",
			 lim->unit, lim->name, w, f);
	return v;
}

void verdict_print(struct printer *p, const struct verdict_check *c)
{
	print_object_begin(p, NULL);
	print_str(p, "check", "%s", c->name);
	if (*c->subject)
		print_str(p, "subject", " %s", c->subject);
	else
		print_null(p, "subject", NULL);
	print_str(p, "verdict", ": %s", verdict_name(c->v));
	if (*c->why)
		print_str(p, "why", " (%s)", c->why);
	else
		print_null(p, "why", NULL);
	print_text(p, "\n");
	print_array_begin(p, "items");
	for (unsigned i = 0; i < c->n; i++) {
		const struct verdict_item *it = &c->item[i];

		print_object_begin(p, NULL);
		print_str(p, "verdict", "  %-4s", verdict_name(it->v));
		print_str(p, "limit", NULL, it->limit);
		print_double(p, "value", NULL, it->value);
		print_str(p, "text", "  %s\n", it->text);
		print_object_end(p);
	}
	print_array_end(p);
	if (c->dropped)
		print_uint(p, "items_dropped", "  (%llu more items not kept)\n",
			   c->dropped);
	print_object_end(p);
}

void verdict_limits_usage(const struct verdict_limits *l, FILE *f)
{
	char w[32], fl[32];

	fprintf(f, "Limits (--limit NAME=WARN[,FAIL]; a figure above a level "
		"warns or fails):\n");
	for (size_t i = 0; i < l->n; i++) {
		level_text(w, sizeof(w), l->v[i].warn);
		level_text(fl, sizeof(fl), l->v[i].fail);
		fprintf(f, "  %-24s %8s %8s %-3s  %s\n", l->v[i].name, w, fl,
			l->v[i].unit, l->v[i].help);
	}
}

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_SKIP: return "skip";
	case VERDICT_PASS: return "pass";
	case VERDICT_WARN: return "warn";
	case VERDICT_FAIL: return "fail";
	}
	return "?";
}

enum verdict verdict_worst(enum verdict a, enum verdict b)
{
	return a > b ? a : b;
}
