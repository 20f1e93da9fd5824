/* opts.c — one options table per program; see opts.h. */
#include "base/opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"
#include "base/xalloc.h"

enum opt_src { SRC_DEFAULT, SRC_FILE, SRC_CLI };

struct opt_val {
	enum opt_src src;
	bool flag;
	long long i;
	double d;
	char *s;		/* STRING */
	int e;			/* ENUM index */
	char **list;		/* LIST */
	size_t nlist;
	int line;		/* SRC_FILE: the line it was set at */
	int *lines;		/* LIST: each item's line, 0 off the file */
};

struct opts {
	const struct opt_def *defs;
	size_t n;
	struct opt_val *v;
};

static int opts_fail(char err[OPTS_ERRBUF], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int opts_fail(char err[OPTS_ERRBUF], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, OPTS_ERRBUF, -EINVAL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void opts_clear_list(struct opt_val *v)
{
	for (size_t i = 0; i < v->nlist; i++)
		free(v->list[i]);
	free(v->list);
	free(v->lines);
	v->list = NULL;
	v->lines = NULL;
	v->nlist = 0;
}

static bool opts_is_alias(const struct opt_def *d)
{
	return d->flags & OPT_ALIAS;
}

/* The row an OPT_OLD_NAME row stands for: the nearest one before it. */
static size_t opts_alias_target(const struct opt_def *defs, size_t i)
{
	while (i > 0 && opts_is_alias(&defs[i]))
		i--;
	return i;
}

static bool opts_bounded(const struct opt_def *d)
{
	/* min == max == 0 in a table entry means no range. */
	return d->min <= d->max && !(d->min == 0 && d->max == 0);
}

/* text, a decimal with a fraction or an exponent, as a whole long long:
 * 0, -EINVAL (not a number), -EDOM (not whole) or -ERANGE. */
static int opts_whole(const char *text, long long *x)
{
	char *end;
	double d;

	if (!strchr("+-.0123456789", *text) || strpbrk(text, "xXnN"))
		return -EINVAL;	/* no hex floats, inf or nan */
	errno = 0;
	d = strtod(text, &end);
	if (*end || !isfinite(d))
		return -EINVAL;
	if (d != trunc(d))
		return -EDOM;
	if (errno == ERANGE || fabs(d) >= 9223372036854775807.0)
		return -ERANGE;
	*x = (long long)d;
	return 0;
}

static const struct {
	const char *name;
	long long ns;
} opts_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	{ "m", 60000000000LL },
};

static long long opts_bare_unit(const struct opt_def *d)
{
	switch (d->flags & OPT_UNIT_MASK) {
	case OPT_US:
		return 1000;
	case OPT_MS:
		return 1000000;
	case OPT_S:
		return 1000000000;
	}
	return 1;
}

int opts_parse_ns(const char *text, long long unit_ns, long long *ns)
{
	char num[64], *end;
	const char *u = text;
	size_t len;

	/* The number: digits, a point, an exponent; then the unit. */
	while (*u && (strchr("+-.0123456789", *u) ||
		      ((*u == 'e' || *u == 'E') && u > text)))
		u++;
	len = (size_t)(u - text);
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, text, len);
	num[len] = 0;
	if (*u) {
		size_t k;

		for (k = 0; k < sizeof(opts_units) / sizeof(opts_units[0]); k++)
			if (!strcmp(u, opts_units[k].name))
				break;
		if (k == sizeof(opts_units) / sizeof(opts_units[0]))
			return -EINVAL;
		unit_ns = opts_units[k].ns;
	}
	if (!strpbrk(num, ".eE")) {
		long long x;

		errno = 0;
		x = strtoll(num, &end, 10);
		if (*end || end == num)
			return -EINVAL;
		if (errno == ERANGE || __builtin_mul_overflow(x, unit_ns, ns))
			return -ERANGE;
		return 0;
	} else {
		double x;

		errno = 0;
		x = strtod(num, &end);
		if (*end || end == num || !isfinite(x))
			return -EINVAL;
		x *= (double)unit_ns;
		if (errno == ERANGE || fabs(x) >= 9223372036854775807.0)
			return -ERANGE;
		*ns = llround(x);
		return 0;
	}
}

void opts_format_ns(char *dst, size_t size, long long ns)
{
	/* The largest unit that keeps it exact; minutes read worse than s. */
	for (int k = 3; k > 0; k--) {
		if (ns % opts_units[k].ns == 0) {
			snprintf(dst, size, "%lld%s", ns / opts_units[k].ns,
				 opts_units[k].name);
			return;
		}
	}
	snprintf(dst, size, "%lldns", ns);
}

/* An OPT_DURATION's range in nanoseconds; false when it has none. */
static bool opts_ns_range(const struct opt_def *d, long long *lo, long long *hi)
{
	long long unit = opts_bare_unit(d);

	if (!opts_bounded(d))
		return false;
	*lo = llround(d->min * (double)unit);
	*hi = llround(d->max * (double)unit);
	return true;
}

static int opts_convert_ns(const struct opt_def *d, const char *text,
			   struct opt_val *v, const char *where,
			   char err[OPTS_ERRBUF])
{
	long long ns, lo, hi;
	int rc = opts_parse_ns(text, opts_bare_unit(d), &ns);

	if (rc == -ERANGE)
		return opts_fail(err, "%s: '%s' is too large", where, text);
	if (rc)
		return opts_fail(err, "%s: '%s' is not a duration (a number "
				 "with ns, us, ms, s or m)", where, text);
	if (opts_ns_range(d, &lo, &hi)) {
		if (ns < lo || ns > hi) {
			char a[32], b[32];

			opts_format_ns(a, sizeof(a), lo);
			opts_format_ns(b, sizeof(b), hi);
			return opts_fail(err, "%s: '%s' is out of range [%s, %s]",
					 where, text, a, b);
		}
	} else if (ns < 0) {
		return opts_fail(err, "%s: '%s' is negative", where, text);
	}
	v->i = ns;
	return 0;
}

/* Parse text for definition d into *v (not touching v->src). where names
 * the option in messages: "--rate" or "PATH:LINE: rate". */
static int opts_convert(const struct opt_def *d, const char *text,
			struct opt_val *v, const char *where,
			char err[OPTS_ERRBUF])
{
	char *end;

	switch (d->type) {
	case OPT_FLAG:
		if (!strcmp(text, "1") || !strcmp(text, "yes") ||
		    !strcmp(text, "on") || !strcmp(text, "true"))
			v->flag = true;
		else if (!strcmp(text, "0") || !strcmp(text, "no") ||
			 !strcmp(text, "off") || !strcmp(text, "false"))
			v->flag = false;
		else
			return opts_fail(err, "%s: '%s' is not one of: 0, 1, "
					 "yes, no, on, off, true, false", where, text);
		return 0;
	case OPT_INT: {
		long long x;

		errno = 0;
		/* Decimal, or hex with 0x; never octal: "037" is 37. */
		x = strtoll(text, &end, (text[0] == '0' && (text[1] == 'x' ||
							text[1] == 'X')) ? 16 : 10);
		if (*text && *end && strchr(".eE", *end) && !errno &&
		    !isspace((unsigned char)*text)) {
			/* The forms --help prints a range in: 1e+15. */
			int rc = opts_whole(text, &x);

			if (rc == -ERANGE)
				return opts_fail(err, "%s: '%s' is too large", where, text);
			if (rc == -EDOM)
				return opts_fail(err, "%s: '%s' is not a whole number",
						 where, text);
			if (!rc)
				end = (char *)"";
		}
		if (!*text || *end || isspace((unsigned char)*text))
			return opts_fail(err, "%s: '%s' is not a number", where, text);
		if (errno == ERANGE)
			return opts_fail(err, "%s: '%s' is too large", where, text);
		if (opts_bounded(d) && (x < d->min || x > d->max))
			return opts_fail(err, "%s: %lld is out of range [%.15g, %.15g]",
					 where, x, d->min, d->max);
		v->i = x;
		return 0;
	}
	case OPT_DOUBLE: {
		double x;

		errno = 0;
		x = strtod(text, &end);
		if (!*text || *end || isspace((unsigned char)*text) || !isfinite(x))
			return opts_fail(err, "%s: '%s' is not a number", where, text);
		if (opts_bounded(d) && (x < d->min || x > d->max))
			return opts_fail(err, "%s: %g is out of range [%.15g, %.15g]",
					 where, x, d->min, d->max);
		v->d = x;
		return 0;
	}
	case OPT_DURATION:
		return opts_convert_ns(d, text, v, where, err);
	case OPT_STRING:
		free(v->s);
		v->s = xstrdup(text);
		return 0;
	case OPT_ENUM:
		for (int k = 0; d->choices && d->choices[k]; k++) {
			if (!strcmp(d->choices[k], text)) {
				v->e = k;
				return 0;
			}
		}
		{
			char list[256] = "";
			size_t used = 0;

			for (int k = 0; d->choices && d->choices[k]; k++) {
				int w = snprintf(list + used, sizeof(list) - used,
						 "%s%s", k ? ", " : "", d->choices[k]);
				if (w < 0 || (size_t)w >= sizeof(list) - used)
					break;
				used += (size_t)w;
			}
			return opts_fail(err, "%s: '%s' is not one of: %s", where,
					 text, list);
		}
	case OPT_LIST:
		v->list = xrealloc(v->list, (v->nlist + 1) * sizeof(*v->list));
		v->list[v->nlist++] = xstrdup(text);
		return 0;
	}
	return opts_fail(err, "%s: bad option type", where);
}

struct opts *opts_create(const struct opt_def *defs)
{
	struct opts *o = xcalloc(1, sizeof(*o));

	o->defs = defs;
	/* An old name before any row stands for nothing: a table bug. */
	if (defs[0].name && opts_is_alias(&defs[0]))
		abort();
	while (defs[o->n].name)
		o->n++;
	o->v = xcalloc(o->n ? o->n : 1, sizeof(*o->v));
	for (size_t i = 0; i < o->n; i++) {
		const struct opt_def *d = &defs[i];
		char where[80];

		if (opts_is_alias(d))
			continue;
		snprintf(where, sizeof(where), "default of %s", d->name);
		/* A bad default is a bug in the table: caught by every test
		 * of the program that owns it. */
		if (d->def && opts_convert(d, d->def, &o->v[i], where, NULL))
			abort();
	}
	return o;
}

void opts_destroy(struct opts *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].s);
		opts_clear_list(&o->v[i]);
	}
	free(o->v);
	free(o);
}

void opts_cli_name(char *dst, size_t size, const char *key)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; key[i] && i + 1 < size; i++)
		dst[i] = key[i] == '_' ? '-' : key[i];
	dst[i] = 0;
}

bool opts_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') &&
				  (*b == '-' || *b == '_')))
			return false;
	return *a == *b;
}

/* The row named name, in either spelling; old names are not rows. */
static int opts_index(const struct opts *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!opts_is_alias(&o->defs[i]) &&
		    opts_name_eq(o->defs[i].name, name))
			return (int)i;
	return -1;
}

/* Set option i from text coming from src, at the file's line (0 off a
 * file). A file never overrides the command line; a list given on the
 * command line replaces the file's. */
static int opts_set(struct opts *o, size_t i, const char *text,
		    enum opt_src src, int line, const char *where,
		    char err[OPTS_ERRBUF])
{
	const struct opt_def *d = &o->defs[i];
	struct opt_val *v = &o->v[i];
	int rc;

	if (src == SRC_FILE && v->src == SRC_CLI)
		return 0;
	if (d->type == OPT_LIST && v->src != src)
		opts_clear_list(v);
	rc = opts_convert(d, text, v, where, err);
	if (rc)
		return rc;
	v->src = src;
	v->line = line;
	if (d->type == OPT_LIST) {
		v->lines = xrealloc(v->lines, v->nlist * sizeof(*v->lines));
		v->lines[v->nlist - 1] = line;
	}
	return 0;
}

int opts_set_value(struct opts *o, const char *name, const char *value,
		   bool from_cli, char err[OPTS_ERRBUF])
{
	int i = opts_index(o, name);

	if (i < 0)
		return opts_fail(err, "unknown option '%s'", name);
	return opts_set(o, (size_t)i, value, from_cli ? SRC_CLI : SRC_FILE, 0,
			name, err);
}

void opts_copy_cli(struct opts *dst, const struct opts *src)
{
	/* Same table, or a programming error. */
	if (dst->defs != src->defs)
		abort();
	for (size_t i = 0; i < src->n; i++) {
		const struct opt_val *a = &src->v[i];
		struct opt_val *b = &dst->v[i];

		if (a->src != SRC_CLI)
			continue;
		free(b->s);
		opts_clear_list(b);
		*b = *a;
		b->s = a->s ? xstrdup(a->s) : NULL;
		b->list = NULL;
		b->lines = NULL;
		b->nlist = 0;
		if (a->nlist) {
			b->list = xcalloc(a->nlist, sizeof(*b->list));
			for (size_t k = 0; k < a->nlist; k++)
				b->list[k] = xstrdup(a->list[k]);
			b->lines = xcalloc(a->nlist, sizeof(*b->lines));
			b->nlist = a->nlist;
		}
	}
}

int opts_parse_args(struct opts *o, int argc, char **argv,
		    char err[OPTS_ERRBUF])
{
	/* Each option under its command-line name, and under its config
	 * file spelling too (scripts written for tapless-syncd used it);
	 * an old name (OPT_OLD_NAME) the same, with its own row's index so
	 * messages name what was typed. */
	struct option *lo = xcalloc(2 * o->n + 1, sizeof(*lo));
	char (*names)[OPTS_NAME_MAX] = xcalloc(o->n ? o->n : 1, sizeof(*names));
	char (*keys)[OPTS_NAME_MAX] = xcalloc(o->n ? o->n : 1, sizeof(*keys));
	char *so = xmalloc(4 * o->n + 3);
	size_t nlo = 0, nso = 0;
	int rc = 0;

	/* '+': stop at the first operand (subcommands, filter words);
	 * ':': report a missing argument as ':' rather than '?'. */
	so[nso++] = '+';
	so[nso++] = ':';
	for (size_t i = 0; i < o->n; i++) {
		const struct opt_def *d = &o->defs[opts_alias_target(o->defs, i)];
		int has_arg = d->type == OPT_FLAG ? no_argument : required_argument;
		size_t k;

		if (d->flags & OPT_FILE_ONLY)
			continue;
		opts_cli_name(names[i], sizeof(names[i]), o->defs[i].name);
		for (k = 0; names[i][k] && k + 1 < sizeof(keys[i]); k++)
			keys[i][k] = names[i][k] == '-' ? '_' : names[i][k];
		keys[i][k] = 0;
		lo[nlo++] = (struct option){ names[i], has_arg, NULL, 256 + (int)i };
		if (strcmp(names[i], keys[i]))
			lo[nlo++] = (struct option){ keys[i], has_arg, NULL,
						     256 + (int)i };
		if (opts_is_alias(&o->defs[i]))
			continue;
		if (d->short_name) {
			so[nso++] = (char)d->short_name;
			if (d->type != OPT_FLAG)
				so[nso++] = ':';
		}
		if (opt_old_letter(d)) {
			so[nso++] = (char)opt_old_letter(d);
			if (d->type != OPT_FLAG)
				so[nso++] = ':';
		}
	}
	so[nso] = 0;

	opterr = 0;
	optind = 0;	/* glibc: 0 resets its state fully */
	for (;;) {
		int li = -1, c = getopt_long(argc, argv, so, lo, &li);
		const struct opt_def *d;
		size_t i, row;
		char where[80];

		if (c == -1)
			break;
		if (c == '?' || c == ':') {
			const char *arg = argv[optind - 1];

			if (optopt >= 256)
				arg = names[optopt - 256];
			if (c == ':') {
				if (optopt >= 256 || !optopt)
					rc = opts_fail(err, "option '--%s' needs an argument",
						       optopt >= 256 ? arg : argv[optind - 1] + 2);
				else
					rc = opts_fail(err, "option '-%c' needs an argument",
						       optopt);
			} else if (optopt && optopt < 256) {
				rc = opts_fail(err, "unknown option '-%c'", optopt);
			} else {
				rc = opts_fail(err, "unknown option '%s'", arg);
			}
			break;
		}
		if (c >= 256) {
			i = (size_t)(c - 256);
		} else {
			for (i = 0; i < o->n; i++)
				if (!opts_is_alias(&o->defs[i]) &&
				    (o->defs[i].short_name == c ||
				     opt_old_letter(&o->defs[i]) == c) &&
				    !(o->defs[i].flags & OPT_FILE_ONLY))
					break;
		}
		row = opts_alias_target(o->defs, i);
		d = &o->defs[row];
		snprintf(where, sizeof(where), "--%s", names[i]);
		rc = opts_set(o, row, d->type == OPT_FLAG ? "1" : optarg, SRC_CLI,
			      0, where, err);
		if (rc)
			break;
	}
	if (!rc)
		rc = optind;
	optind = 0;
	free(lo);
	free(names);
	free(keys);
	free(so);
	return rc;
}

char *opts_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int opts_parse_file(struct opts *o, const char *path,
		    opts_section_fn section_fn, void *arg,
		    char err[OPTS_ERRBUF])
{
	char line[4096], section[128] = "global";
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = 0;

	if (!f)
		return errbuf_set(err, OPTS_ERRBUF, -errno, "%s: %s", path,
				  strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *s, *key, *val, where[512];
		size_t len = strlen(line);
		int i;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(f)) {
			rc = opts_fail(err, "%s:%d: line longer than %zu bytes",
				       path, lineno, sizeof(line) - 2);
			break;
		}
		s = opts_trim(line);
		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (!close || close[1] || close == s + 1 ||
			    (size_t)(close - s - 1) >= sizeof(section)) {
				rc = opts_fail(err, "%s:%d: bad section header '%s'",
					       path, lineno, s);
				break;
			}
			*close = 0;
			snprintf(section, sizeof(section), "%s", opts_trim(s + 1));
			if (!strcmp(section, "global"))
				continue;
			/* Announced at its header, so an empty section
			 * exists too and is reported at its own line. */
			if (!section_fn) {
				rc = opts_fail(err, "%s:%d: [%s] is not allowed here",
					       path, lineno, section);
				break;
			}
			rc = section_fn(arg, section, NULL, NULL, path, lineno, err);
			if (rc)
				break;
			continue;
		}
		key = s;
		val = key + strcspn(key, " \t");
		if (*val)
			*val++ = 0;
		val = opts_trim(val);
		if (strcmp(section, "global")) {
			rc = section_fn(arg, section, key, val, path, lineno, err);
			if (rc)
				break;
			continue;
		}
		i = opts_index(o, key);
		if (i < 0) {
			rc = opts_fail(err, "%s:%d: unknown option '%s'", path,
				       lineno, key);
			break;
		}
		if (o->defs[i].flags & OPT_CLI_ONLY) {
			rc = opts_fail(err, "%s:%d: '%s' is only allowed on the "
				       "command line", path, lineno, key);
			break;
		}
		if (!*val && o->defs[i].type != OPT_FLAG) {
			rc = opts_fail(err, "%s:%d: %s needs a value", path,
				       lineno, key);
			break;
		}
		snprintf(where, sizeof(where), "%s:%d: %s", path, lineno, key);
		rc = opts_set(o, (size_t)i, *val ? val : "1", SRC_FILE, lineno,
			      where, err);
		if (rc)
			break;
	}
	fclose(f);
	return rc;
}

static const struct opt_val *opts_get(const struct opts *o, const char *name,
				      enum opt_type type)
{
	int i = opts_index(o, name);

	/* A typo in a name or a type is a bug in the program, not input. */
	if (i < 0 || o->defs[i].type != type)
		abort();
	return &o->v[i];
}

bool opts_flag(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_FLAG)->flag;
}

long long opts_int(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_INT)->i;
}

long long opts_ns(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_DURATION)->i;
}

double opts_double(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_DOUBLE)->d;
}

const char *opts_str(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_STRING)->s;
}

int opts_enum(const struct opts *o, const char *name)
{
	return opts_get(o, name, OPT_ENUM)->e;
}

size_t opts_list(const struct opts *o, const char *name,
		 const char *const **items)
{
	const struct opt_val *v = opts_get(o, name, OPT_LIST);

	*items = (const char *const *)v->list;
	return v->nlist;
}

int opts_line(const struct opts *o, const char *name, size_t item)
{
	int i = opts_index(o, name);
	const struct opt_val *v;

	if (i < 0)
		return 0;
	v = &o->v[i];
	if (v->src != SRC_FILE)
		return 0;
	if (o->defs[i].type == OPT_LIST)
		return item < v->nlist ? v->lines[item] : 0;
	return v->line;
}

bool opts_has(const struct opts *o, const char *name)
{
	return opts_index(o, name) >= 0;
}

bool opts_given(const struct opts *o, const char *name)
{
	int i = opts_index(o, name);

	if (i < 0)
		abort();
	return o->v[i].src != SRC_DEFAULT;
}

void opts_usage(FILE *f, const struct opt_def *defs)
{
	bool times = false;

	for (const struct opt_def *d = defs; d->name; d++) {
		char left[OPTS_NAME_MAX + 64], name[OPTS_NAME_MAX];
		const char *arg = d->type == OPT_FLAG ? "" :
				  d->arg ? d->arg :
				  d->type == OPT_DURATION ? "TIME" : "ARG";

		if (d->flags & OPT_FILE_ONLY || opts_is_alias(d))
			continue;
		opts_cli_name(name, sizeof(name), d->name);
		if (d->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->short_name,
				 name, *arg ? " " : "", arg);
		else
			snprintf(left, sizeof(left), "    --%s%s%s", name,
				 *arg ? " " : "", arg);
		fprintf(f, "  %-28s %s", left, d->help ? d->help : "");
		if (d->type == OPT_ENUM && d->choices) {
			fprintf(f, " [one of:");
			for (int k = 0; d->choices[k]; k++)
				fprintf(f, "%s %s", k ? "," : "", d->choices[k]);
			fprintf(f, "]");
		}
		if ((d->type == OPT_INT || d->type == OPT_DOUBLE) && opts_bounded(d))
			fprintf(f, " [range: %.15g..%.15g]", d->min, d->max);
		if (d->type == OPT_DURATION) {
			static const char *const bare[] = { "ns", "us", "ms", "s" };
			char a[32], b[32];
			long long lo, hi, ns;

			times = true;
			if (opts_ns_range(d, &lo, &hi)) {
				opts_format_ns(a, sizeof(a), lo);
				opts_format_ns(b, sizeof(b), hi);
				fprintf(f, " [range: %s..%s]", a, b);
			}
			if (d->def && !opts_parse_ns(d->def, opts_bare_unit(d), &ns)) {
				opts_format_ns(a, sizeof(a), ns);
				fprintf(f, " [default: %s]", a);
			}
			fprintf(f, " [bare number: %s]",
				bare[(d->flags & OPT_UNIT_MASK) >> 4]);
		} else if (d->def && d->type != OPT_FLAG) {
			fprintf(f, " [default: %s]", d->def);
		}
		if (d->type == OPT_LIST)
			fprintf(f, " (repeatable)");
		if (opt_old_letter(d))
			fprintf(f, " (old letter -%c still taken)", opt_old_letter(d));
		for (const struct opt_def *a = d + 1; a->name && opts_is_alias(a); a++) {
			opts_cli_name(name, sizeof(name), a->name);
			fprintf(f, " (also --%s, deprecated)", name);
		}
		fputc('\n', f);
	}
	if (times)
		fprintf(f, "\nTIME: a number with a unit, ns, us, ms, s or m "
			"(250us, 1.5s, 2m); a bare number is in the unit shown.\n");
}

void opts_print_table(FILE *f, const struct opt_def *defs)
{
	static const char *const types[] = {
		[OPT_FLAG] = "flag", [OPT_INT] = "int", [OPT_DOUBLE] = "double",
		[OPT_STRING] = "string", [OPT_ENUM] = "enum", [OPT_LIST] = "list",
		[OPT_DURATION] = "duration",
	};

	for (const struct opt_def *d = defs; d->name; d++) {
		char name[OPTS_NAME_MAX];

		if (d->flags & OPT_FILE_ONLY || opts_is_alias(d))
			continue;
		opts_cli_name(name, sizeof(name), d->name);
		fprintf(f, "%s\t%c\t%c\t%s\t%s\n", name,
			d->short_name ? d->short_name : '-',
			opt_old_letter(d) ? opt_old_letter(d) : '-', types[d->type],
			d->name);
	}
}

/* Does the letter table's row (or, without one, the first use seen so
 * far, first: "" before it) let its letter stand for name? */
static bool opts_letter_means(const struct opts_letter *row,
			      const char *name, char *first, size_t size)
{
	if (row) {
		for (size_t k = 0; row->names && row->names[k]; k++)
			if (!strcmp(row->names[k], name))
				return true;
		return false;
	}
	if (!*first)
		snprintf(first, size, "%s", name);
	return !strcmp(first, name);
}

int opts_letters_check(const struct opts_program *progs, size_t n,
		       const struct opts_letter *letters, size_t n_letters,
		       char err[OPTS_ERRBUF])
{
	char first[256][OPTS_NAME_MAX];
	const char *first_prog[256] = { 0 };

	memset(first, 0, sizeof(first));

	for (size_t p = 0; p < n; p++) {
		const char *used[256] = { 0 };

		for (const struct opt_def *d = progs[p].defs; d->name; d++) {
			char name[OPTS_NAME_MAX];
			const struct opts_letter *row = NULL;
			int c = d->short_name, old = opt_old_letter(d);

			if (d->flags & OPT_FILE_ONLY || opts_is_alias(d))
				continue;
			opts_cli_name(name, sizeof(name), d->name);
			if (c && used[c])
				return opts_fail(err, "%s: -%c is both --%s and --%s",
						 progs[p].name, c, used[c], name);
			if (c)
				used[c] = d->name;
			if (old && used[old])
				return opts_fail(err, "%s: old letter -%c of --%s is "
						 "also --%s", progs[p].name, old,
						 name, used[old]);
			if (old)
				used[old] = d->name;
			if (!c)
				continue;
			for (size_t k = 0; k < n_letters; k++)
				if (letters[k].letter == c)
					row = &letters[k];
			if (!first[c][0])
				first_prog[c] = progs[p].name;
			if (!opts_letter_means(row, name, first[c], sizeof(first[c]))) {
				if (row)
					return opts_fail(err, "%s: -%c is --%s, which the "
							 "letter table does not give it "
							 "(an old letter? say so)",
							 progs[p].name, c, name);
				return opts_fail(err, "-%c has two meanings: --%s in %s, "
						 "--%s in %s", c, first[c],
						 first_prog[c], name, progs[p].name);
			}
		}
	}
	return 0;
}
