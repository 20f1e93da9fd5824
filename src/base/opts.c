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

static int opts_fail(struct opts_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int opts_fail(struct opts_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
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

static bool opts_bounded(const struct opt_def *d)
{
	/* min == max == 0 in a table entry means no range. */
	return d->min <= d->max && !(d->min == 0 && d->max == 0);
}

/* Parse text for definition d into *v (not touching v->src). where names
 * the option in messages: "--rate" or "PATH:LINE: rate". */
static int opts_convert(const struct opt_def *d, const char *text,
			struct opt_val *v, const char *where,
			struct opts_error *err)
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
	while (defs[o->n].name)
		o->n++;
	o->v = xcalloc(o->n ? o->n : 1, sizeof(*o->v));
	for (size_t i = 0; i < o->n; i++) {
		const struct opt_def *d = &defs[i];
		char where[80];

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

static int opts_index(const struct opts *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->defs[i].name, name))
			return (int)i;
	return -1;
}

/* Set option i from text coming from src, at the file's line (0 off a
 * file). A file never overrides the command line; a list given on the
 * command line replaces the file's. */
static int opts_set(struct opts *o, size_t i, const char *text,
		    enum opt_src src, int line, const char *where,
		    struct opts_error *err)
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
		   bool from_cli, struct opts_error *err)
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
		    struct opts_error *err)
{
	/* Each option under its command-line name, and a key with '_' under
	 * the key too: the spelling tapless-syncd had before, still taken. */
	struct option *lo = xcalloc(2 * o->n + 1, sizeof(*lo));
	char (*names)[OPTS_NAME_MAX] = xcalloc(o->n ? o->n : 1, sizeof(*names));
	char *so = xmalloc(2 * o->n + 3);
	size_t nlo = 0, nso = 0;
	int rc = 0;

	/* '+': stop at the first operand (subcommands, filter words);
	 * ':': report a missing argument as ':' rather than '?'. */
	so[nso++] = '+';
	so[nso++] = ':';
	for (size_t i = 0; i < o->n; i++) {
		const struct opt_def *d = &o->defs[i];
		int has_arg = d->type == OPT_FLAG ? no_argument : required_argument;

		if (d->flags & OPT_FILE_ONLY)
			continue;
		opts_cli_name(names[i], sizeof(names[i]), d->name);
		lo[nlo++] = (struct option){ names[i], has_arg, NULL, 256 + (int)i };
		if (strcmp(names[i], d->name))
			lo[nlo++] = (struct option){ d->name, has_arg, NULL,
						     256 + (int)i };
		if (d->short_name) {
			so[nso++] = (char)d->short_name;
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
		size_t i;
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
				if (o->defs[i].short_name == c &&
				    !(o->defs[i].flags & OPT_FILE_ONLY))
					break;
		}
		d = &o->defs[i];
		snprintf(where, sizeof(where), "--%s", names[i]);
		rc = opts_set(o, i, d->type == OPT_FLAG ? "1" : optarg, SRC_CLI,
			      0, where, err);
		if (rc)
			break;
	}
	if (!rc)
		rc = optind;
	optind = 0;
	free(lo);
	free(names);
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
		    struct opts_error *err)
{
	char line[4096], section[128] = "global";
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = 0;

	if (!f) {
		rc = -errno;
		if (err)
			snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
				 strerror(errno));
		return rc;
	}
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
	for (const struct opt_def *d = defs; d->name; d++) {
		char left[OPTS_NAME_MAX + 64], name[OPTS_NAME_MAX];

		if (d->flags & OPT_FILE_ONLY)
			continue;
		opts_cli_name(name, sizeof(name), d->name);
		if (d->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->short_name,
				 name, d->type == OPT_FLAG ? "" : " ",
				 d->type == OPT_FLAG ? "" : d->arg ? d->arg : "ARG");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", name,
				 d->type == OPT_FLAG ? "" : " ",
				 d->type == OPT_FLAG ? "" : d->arg ? d->arg : "ARG");
		fprintf(f, "  %-28s %s", left, d->help ? d->help : "");
		if (d->type == OPT_ENUM && d->choices) {
			fprintf(f, " [one of:");
			for (int k = 0; d->choices[k]; k++)
				fprintf(f, "%s %s", k ? "," : "", d->choices[k]);
			fprintf(f, "]");
		}
		if ((d->type == OPT_INT || d->type == OPT_DOUBLE) && opts_bounded(d))
			fprintf(f, " [range: %.15g..%.15g]", d->min, d->max);
		if (d->def && d->type != OPT_FLAG)
			fprintf(f, " [default: %s]", d->def);
		if (d->type == OPT_LIST)
			fprintf(f, " (repeatable)");
		fputc('\n', f);
	}
}
