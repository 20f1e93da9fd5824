/* print.c — see print.h.
 *
 * One stack of open containers serves JSON and CSV; text ignores structure
 * and prints each field through its format, so a command's text, CSV and
 * JSON come from the same calls.
 *
 * Misuse (ending a container that is not open, a key inside an array, a
 * keyless field or container inside an object) is ignored rather than
 * trusted: a key inside an array is dropped, a keyless member of an object
 * is left out with everything in it, an unmatched end does nothing. The
 * output stays well formed. The stack grows as needed, so nesting depth is
 * limited only by memory.
 *
 * CSV rows are collected as (column, value) cells and written when the row
 * ends: the first row of a table gives the header. Later rows are assumed to
 * have the same keys; their values are matched to the header by column name,
 * a missing column is an empty field, and a key the header lacks is appended
 * at the end of the row anyway (the header is not rewritten).
 */
#include "base/print.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/nstime.h"
#include "base/opts.h"
#include "base/xalloc.h"

enum role {
	ROLE_PLAIN,	/* JSON: all; CSV: outside rows, not written */
	ROLE_ROW,	/* CSV: an object directly inside an array */
	ROLE_NEST,	/* CSV: an object inside a row, flattened as "a.b" */
	ROLE_COL,	/* CSV: an array in a row, one column joined by ';' */
	ROLE_DROP,	/* not written: misuse, or a row in a row in CSV */
};

struct frame {
	bool array;
	enum role role;
	unsigned n;	/* members so far: JSON commas, CSV ';' */
	char *key;	/* CSV: this container's part of a column name */
	size_t cell;	/* ROLE_COL: the cell its elements go to */
};

struct cell {
	char *key;	/* full column name, "outer.inner" */
	char *val;	/* unquoted; quoted when written */
	bool used;	/* already written in this row */
};

struct printer {
	FILE *out;
	enum print_format fmt;
	unsigned flags;
	struct frame *st;	/* st[0] is the implicit top-level object */
	size_t depth, cap;
	/* CSV. Frame 0 is an object, so index 0 doubles as "none" below. */
	struct cell *cells;	/* the row being collected */
	size_t ncells;
	char **cols;		/* header of the current table */
	size_t ncols;
	size_t row;		/* frame of the open row */
	size_t table;		/* array frame owning the current header */
	unsigned tables;	/* tables so far: blank line before the next */
};

static struct frame *top(struct printer *p)
{
	return &p->st[p->depth - 1];
}

/* Append t to the growing string *s (NULL is empty). Cells are short. */
static void str_add(char **s, const char *t)
{
	size_t n = *s ? strlen(*s) : 0, tn = strlen(t);

	*s = xrealloc(*s, n + tn + 1);
	memcpy(*s + n, t, tn + 1);
}

/* Whether a member with this key belongs in container f; a key inside an
 * array is dropped on the way. */
static bool placed(const struct frame *f, const char **key)
{
	if (f->array)
		*key = NULL;
	return f->role != ROLE_DROP && (f->array || *key);
}

static void json_indent(struct printer *p, size_t level)
{
	if (!(p->flags & PRINT_PRETTY))
		return;
	fputc('\n', p->out);
	while (level--)
		fputs("  ", p->out);
}

/* RFC 8259: escape '"', '\\' and control characters; other bytes, UTF-8
 * included, pass through unchanged. */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':  fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

/* Comma, indentation and key before a member of the innermost container. */
static void json_key(struct printer *p, const char *key)
{
	if (top(p)->n++)
		fputc(',', p->out);
	json_indent(p, p->depth);
	if (key) {
		json_string(p->out, key);
		fputs(p->flags & PRINT_PRETTY ? ": " : ":", p->out);
	}
}

/* RFC 4180: quote a value holding a comma, quote, CR or LF; double quotes. */
static void csv_value(FILE *out, const char *v)
{
	if (!strpbrk(v, ",\"\r\n")) {
		fputs(v, out);
		return;
	}
	fputc('"', out);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', out);
		fputc(*v, out);
	}
	fputc('"', out);
}

/* A new cell in the open row, named by the objects from the row down. */
static size_t csv_cell(struct printer *p, const char *key)
{
	char *name = NULL;
	struct cell *c;

	for (size_t i = p->row + 1; i < p->depth; i++) {
		str_add(&name, p->st[i].key);
		str_add(&name, ".");
	}
	str_add(&name, key);
	p->cells = xrealloc(p->cells, (p->ncells + 1) * sizeof(*p->cells));
	c = &p->cells[p->ncells];
	*c = (struct cell){ .key = name };
	return p->ncells++;
}

static void csv_put(struct printer *p, size_t *nput, const char *v)
{
	if ((*nput)++)
		fputc(',', p->out);
	csv_value(p->out, v ? v : "");
}

/* The first row of a table writes the header from its own column names. */
static void csv_table(struct printer *p)
{
	size_t nput = 0;

	if (p->tables++)
		fputc('\n', p->out);
	for (size_t i = 0; i < p->ncols; i++)
		free(p->cols[i]);
	free(p->cols);
	p->ncols = p->ncells;
	p->cols = xcalloc(p->ncols, sizeof(*p->cols));
	for (size_t i = 0; i < p->ncols; i++) {
		p->cols[i] = xstrdup(p->cells[i].key);
		csv_put(p, &nput, p->cols[i]);
	}
	fputc('\n', p->out);
	p->table = p->row - 1;
}

static void csv_row_end(struct printer *p)
{
	size_t i, j, nput = 0;

	if (!p->ncells)
		return;		/* an empty object: no line at all */
	if (p->table != p->row - 1)
		csv_table(p);
	for (i = 0; i < p->ncols; i++) {
		for (j = 0; j < p->ncells; j++)
			if (!p->cells[j].used &&
			    !strcmp(p->cells[j].key, p->cols[i]))
				break;
		if (j < p->ncells) {
			p->cells[j].used = true;
			csv_put(p, &nput, p->cells[j].val);
		} else {
			csv_put(p, &nput, NULL);
		}
	}
	for (j = 0; j < p->ncells; j++) {
		if (!p->cells[j].used)
			csv_put(p, &nput, p->cells[j].val);
		free(p->cells[j].key);
		free(p->cells[j].val);
	}
	fputc('\n', p->out);
	p->ncells = 0;
}

/* val: JSON text of a number, a string (str), or NULL for null. */
static void field(struct printer *p, const char *key, const char *val,
		  bool str)
{
	struct frame *f = top(p);

	if (!placed(f, &key))
		return;
	if (p->fmt == PRINT_JSON) {
		json_key(p, key);
		if (!val)
			fputs("null", p->out);
		else if (str)
			json_string(p->out, val);
		else
			fputs(val, p->out);
	} else if (f->role == ROLE_ROW || f->role == ROLE_NEST) {
		size_t c = csv_cell(p, key);	/* may move p->cells */

		str_add(&p->cells[c].val, val ? val : "");
	} else if (f->role == ROLE_COL) {
		char **v = &p->cells[f->cell].val;

		str_add(v, f->n++ ? ";" : "");
		str_add(v, val ? val : "");
	}
}

static void begin(struct printer *p, const char *key, bool array)
{
	struct frame *parent = top(p);
	enum role role = ROLE_PLAIN;
	size_t cell = 0;

	if (p->fmt == PRINT_TEXT)
		return;
	if (!placed(parent, &key)) {
		role = ROLE_DROP;
	} else if (p->fmt == PRINT_JSON) {
		json_key(p, key);
		fputc(array ? '[' : '{', p->out);
	} else if (parent->role == ROLE_COL) {
		role = ROLE_DROP;	/* a table cannot nest in a cell */
	} else if (parent->role == ROLE_ROW || parent->role == ROLE_NEST) {
		role = array ? ROLE_COL : ROLE_NEST;
		if (array)
			cell = csv_cell(p, key);
	} else if (!array && parent->array) {
		role = ROLE_ROW;
	}

	if (p->depth == p->cap) {
		p->cap *= 2;
		p->st = xrealloc(p->st, p->cap * sizeof(*p->st));
	}
	p->st[p->depth++] = (struct frame){
		.array = array, .role = role, .cell = cell,
		.key = key ? xstrdup(key) : NULL,
	};
	if (role == ROLE_ROW)
		p->row = p->depth - 1;
}

static void end(struct printer *p, bool array)
{
	struct frame *f;

	if (p->fmt == PRINT_TEXT || p->depth < 2)
		return;
	f = top(p);
	if (f->array != array)
		return;		/* not the innermost open container */
	if (p->fmt == PRINT_JSON && f->role != ROLE_DROP) {
		if (f->n)
			json_indent(p, p->depth - 1);
		fputc(array ? ']' : '}', p->out);
	}
	if (f->role == ROLE_ROW) {
		csv_row_end(p);
		p->row = 0;
	}
	if (p->table == p->depth - 1)
		p->table = 0;	/* the next array of rows is a new table */
	free(f->key);
	p->depth--;
}

/* Text: the field through its format (nothing if NULL); true if handled. */
static bool text(struct printer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->fmt != PRINT_TEXT)
		return false;
	if (fmt) {
		va_start(ap, fmt);
		vfprintf(p->out, fmt, ap);
		va_end(ap);
	}
	return true;
}

enum print_format print_format_from_opts(const struct opts *o,
					 unsigned *flags)
{
	if (opts_has(o, "pretty")) {
		if (opts_flag(o, "pretty"))
			*flags |= PRINT_PRETTY;
		else
			*flags &= ~(unsigned)PRINT_PRETTY;
	}
	if (opts_has(o, "json") && opts_flag(o, "json"))
		return PRINT_JSON;
	if (opts_has(o, "csv") && opts_flag(o, "csv"))
		return PRINT_CSV;
	return PRINT_TEXT;
}

struct printer *print_create(FILE *out, enum print_format fmt, unsigned flags)
{
	struct printer *p = xcalloc(1, sizeof(*p));

	p->out = out;
	p->fmt = fmt;
	p->flags = flags;
	p->cap = 16;
	p->st = xcalloc(p->cap, sizeof(*p->st));
	p->depth = 1;		/* st[0]: the implicit object, zeroed */
	if (fmt == PRINT_JSON)
		fputc('{', out);
	return p;
}

int print_destroy(struct printer *p)
{
	int ret = 0;

	if (!p)
		return 0;
	while (p->depth > 1)
		end(p, top(p)->array);
	if (p->fmt == PRINT_JSON) {
		if (p->st[0].n)
			json_indent(p, 0);
		fputs("}\n", p->out);
	}
	if (fflush(p->out) || ferror(p->out))
		ret = -EIO;
	for (size_t i = 0; i < p->ncols; i++)
		free(p->cols[i]);
	free(p->cols);
	free(p->cells);
	free(p->st);
	free(p);
	return ret;
}

enum print_format print_format(const struct printer *p)
{
	return p->fmt;
}

void print_object_begin(struct printer *p, const char *key)
{
	begin(p, key, false);
}

void print_object_end(struct printer *p)
{
	end(p, false);
}

void print_array_begin(struct printer *p, const char *key)
{
	begin(p, key, true);
}

void print_array_end(struct printer *p)
{
	end(p, true);
}

void print_str(struct printer *p, const char *key, const char *fmt,
	       const char *val)
{
	if (!text(p, fmt, val ? val : "-"))
		field(p, key, val, true);
}

/* A whole number as JSON and CSV write it: all its digits, no grouping. */
static void field_int(struct printer *p, const char *key, int64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, val);
	field(p, key, buf, false);
}

void print_int(struct printer *p, const char *key, const char *fmt,
	       int64_t val)
{
	if (!text(p, fmt, (long long)val))
		field_int(p, key, val);
}

void print_time(struct printer *p, const char *key, const char *fmt,
		int64_t ns)
{
	char iso[NSTIME_ISO_BUF];

	/* People read dates; programs keep the integer, which sorts,
	 * subtracts and loses nothing. */
	if (p->fmt == PRINT_TEXT) {
		if (fmt)
			text(p, fmt, nstime_iso(ns, iso));
		return;
	}
	field_int(p, key, ns);
}

void print_uint(struct printer *p, const char *key, const char *fmt,
		uint64_t val)
{
	char buf[32];

	if (text(p, fmt, (unsigned long long)val))
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64, val);
	field(p, key, buf, false);
}

void print_double(struct printer *p, const char *key, const char *fmt,
		  double val)
{
	char buf[32];

	if (text(p, fmt, val))
		return;
	if (!isfinite(val)) {
		field(p, key, NULL, false);	/* JSON has no inf or nan */
		return;
	}
	/* %g drops trailing zeros and switches to an exponent, both valid
	 * JSON; a locale's decimal comma would not be. */
	snprintf(buf, sizeof(buf), "%.15g", val);
	for (char *c = buf; *c; c++)
		if (*c == ',')
			*c = '.';
	field(p, key, buf, false);
}

void print_bool(struct printer *p, const char *key, const char *fmt,
		bool val)
{
	if (!text(p, fmt, val ? "yes" : "no"))
		field(p, key, val ? "true" : "false", false);
}

void print_null(struct printer *p, const char *key, const char *fmt)
{
	if (!text(p, fmt, "-"))
		field(p, key, NULL, false);
}

void print_text(struct printer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->fmt != PRINT_TEXT)
		return;
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
}
