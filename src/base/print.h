/* print.h — the one printer for text, CSV and JSON.
 *
 * A command describes its output once, field by field: each field has a key
 * (used by JSON and CSV) and a printf format for text (NULL: the field is
 * left out of text). No command builds JSON or CSV by hand.
 *
 * Structure: objects and arrays nest as in JSON. At the top level there is one
 * implicit object, so the first call can be a keyed field or container.
 *
 * CSV: every object that is a direct element of an array is one row. Nested
 * objects inside a row are flattened into "outer.inner" columns; arrays of
 * scalars inside a row become one column, elements joined by ';'. The header
 * line is written before the first row of each array, from that row's keys;
 * a second table starts after a blank line. Later rows should have the same
 * keys: values go to header columns by name, a missing one is an empty field,
 * an unknown one is appended at the end of its row. Scalars outside rows are
 * not written. Values are quoted as RFC 4180 says.
 *
 * JSON: strings escaped per RFC 8259; a double that is not finite, and every
 * print_null(), is null. Output ends with a newline.
 */
#ifndef TAPLESS_PRINT_H
#define TAPLESS_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum print_format { PRINT_TEXT, PRINT_CSV, PRINT_JSON };

#define PRINT_PRETTY 0x1	/* JSON: indent two spaces per level */

struct opts;
struct printer;

/* The format a command's options ask for, decided here for every command
 * and probe: --json gives JSON, else --csv CSV, else text; each counts only
 * where the command's table has it (a flag). --pretty, where there is one,
 * sets or clears PRINT_PRETTY in *flags; a command without --pretty keeps
 * the *flags it passed (tapless status and report indent their JSON, the
 * probes do not). */
enum print_format print_format_from_opts(const struct opts *o,
					 unsigned *flags);

/* Returns NULL only on allocation failure (never, with xalloc). */
struct printer *print_create(FILE *out, enum print_format fmt, unsigned flags);

/* Close what is still open, flush. Returns 0, or -EIO if writing failed. */
int print_destroy(struct printer *p);

enum print_format print_format(const struct printer *p);

/* key is NULL for an element of an array, a string otherwise. */
void print_object_begin(struct printer *p, const char *key);
void print_object_end(struct printer *p);
void print_array_begin(struct printer *p, const char *key);
void print_array_end(struct printer *p);

/* Text: fmt is a printf format given exactly one argument, converted so the
 * caller need not know int64_t's type: print_str a const char * ("-" for
 * NULL), print_int a long long (%lld), print_uint an unsigned long long
 * (%llu), print_double a double, print_bool and print_null a const char *.
 * A NULL fmt prints nothing. Containers print nothing in text. */
void print_str(struct printer *p, const char *key, const char *fmt,
	       const char *val);	/* val NULL: null */
void print_int(struct printer *p, const char *key, const char *fmt,
	       int64_t val);
/* A stamp (ns since 1970, UTC): JSON and CSV get the integer, text's fmt
 * gets it as a const char * in ISO 8601 with nanoseconds (nstime_iso(),
 * "2026-11-29T02:03:04.123456789Z"). */
void print_time(struct printer *p, const char *key, const char *fmt,
		int64_t ns);
void print_uint(struct printer *p, const char *key, const char *fmt,
		uint64_t val);
void print_double(struct printer *p, const char *key, const char *fmt,
		  double val);		/* JSON: shortest of %.15g */
void print_bool(struct printer *p, const char *key, const char *fmt,
		bool val);		/* text: fmt gets "yes"/"no" */
void print_null(struct printer *p, const char *key, const char *fmt);
					/* text: fmt gets "-" */

/* Text only: literal output (headings, blank lines). Ignored in CSV, JSON. */
void print_text(struct printer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
