/* report_follow.c — the live stream of a followed run (report_private.h):
 * DIR/follow.jsonl, what tapless correlate --follow --json printed while
 * the lab's runs through the switch went on (tapless lab run --follow),
 * as per-interval p50 and p99 of tick to trade and of each hop over time,
 * for the plot follow-time.
 *
 * The stream is our own format, but the file is input like any other: it
 * may be cut short by a follower that was killed, edited, or written by
 * another version. A small reader takes each line apart as one flat JSON
 * object and finds the keys it needs wherever they are; a line it cannot
 * read is skipped and counted (the first one named in a note), never
 * half-used. Two passes, as the per-sample time series: the first finds
 * the series, the first interval and the flags; the second writes the
 * data files. Memory is a line and the series' names, however long the
 * follower ran.
 */
#include "report/report_private.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* ---- the reader: one flat JSON object ---- */

/* Deeper than anything the stream nests: a line built to nest deeper is
 * refused rather than recursed into. */
#define RF_DEPTH 16

struct rf_scan {
	const char *p, *end;
	const char *why;
};

enum { RF_STR, RF_NUM, RF_LIT_NULL, RF_LIT_BOOL, RF_ARR, RF_OBJ };

struct rf_val {
	int type;
	bool is_int;		/* a number written as an integer that fits */
	int64_t i;
	double d;
};

static int rf_fail(struct rf_scan *j, const char *why)
{
	if (!j->why)
		j->why = why;
	return -1;
}

static void rf_ws(struct rf_scan *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' ||
				 *j->p == '\n'))
		j->p++;
}

static int rf_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at j->p, decoded into buf (len bytes, cut to fit; NULL: only
 * read). A \u escape of anything but ASCII becomes '?': names here are
 * used in file names and plot titles, which sanitise them anyway. */
static int rf_string(struct rf_scan *j, char *buf, size_t len)
{
	size_t n = 0;

	if (j->p >= j->end || *j->p != '"')
		return rf_fail(j, "a string expected");
	j->p++;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;

		if (c == '"') {
			if (buf && len)
				buf[n] = 0;
			return 0;
		}
		if (c < 0x20)
			return rf_fail(j, "a control character in a string");
		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = (unsigned char)*j->p++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				int v = 0;

				for (int k = 0; k < 4; k++) {
					int h = j->p < j->end ? rf_hex(*j->p) : -1;

					if (h < 0)
						return rf_fail(j, "a bad \\u escape");
					v = v * 16 + h;
					j->p++;
				}
				c = v > 0 && v < 0x80 ? (unsigned char)v : '?';
				break;
			}
			default:
				return rf_fail(j, "a bad escape in a string");
			}
		}
		if (buf && n + 1 < len)
			buf[n++] = (char)c;
	}
	return rf_fail(j, "a string not closed");
}

static bool rf_digit(const struct rf_scan *j)
{
	return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

/* A number, as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * An integer that fits int64_t is kept exact (a stamp has 19 digits, more
 * than a double holds). */
static int rf_number(struct rf_scan *j, struct rf_val *v)
{
	const char *s = j->p;
	char tmp[64], *end;
	bool frac = false;
	size_t n;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (!rf_digit(j))
		return rf_fail(j, "a bad number");
	if (*j->p == '0')
		j->p++;
	else
		while (rf_digit(j))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		frac = true;
		if (!rf_digit(j))
			return rf_fail(j, "a bad number");
		while (rf_digit(j))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		frac = true;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!rf_digit(j))
			return rf_fail(j, "a bad number");
		while (rf_digit(j))
			j->p++;
	}
	n = (size_t)(j->p - s);
	if (n >= sizeof(tmp))
		return rf_fail(j, "a number too long");
	memcpy(tmp, s, n);
	tmp[n] = 0;
	v->type = RF_NUM;
	v->is_int = false;
	if (!frac) {
		errno = 0;
		v->i = strtoll(tmp, &end, 10);
		v->is_int = !errno && !*end;
	}
	v->d = strtod(tmp, &end);
	return 0;
}

static int rf_literal(struct rf_scan *j, const char *word, int type,
		      struct rf_val *v)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		return rf_fail(j, "not a JSON value");
	j->p += n;
	v->type = type;
	return 0;
}

/* The keys a result line is read for. */
enum {
	K_TYPE, K_KIND, K_HOST, K_FROM, K_TO, K_START, K_END, K_COUNT, K_P50,
	K_P99, K_FLAGS, K_COUNT_OF
};

/* Since December 2026 a line's figures are in an object "latency_ns" (as in
 * tapless correlate's results); before, count, p50_ns and p99_ns were
 * members of the line. Both are read. */
static const char *const rf_keys[K_COUNT_OF] = {
	"type", "kind", "host", "from", "to", "start_ns", "end_ns", "count",
	"p50_ns", "p99_ns", "flags",
};

static const char *const rf_latency_keys[K_COUNT_OF] = {
	[K_COUNT] = "count", [K_P50] = "p50", [K_P99] = "p99",
};

static int rf_value(struct rf_scan *j, int depth, struct rf_val *v, char *buf,
		    size_t len);

/* The members of an object wanted: those names[k] names into val[k]
 * (strings into sbuf[k]), seen[k] set (a key given twice: the last one
 * counts, as for most readers); an object member named nest_key is read
 * the same way with nest. */
struct rf_pick {
	const char *const *names;	/* K_COUNT_OF, NULL: not wanted */
	struct rf_val *val;
	char **sbuf;
	const size_t *slen;
	bool *seen;
	const char *nest_key;
	const struct rf_pick *nest;
};

/* An array or an object (open is its first character), read whole. An
 * array's strings are joined with ',' into buf when it is given (the
 * flags); an object's members that pick wants are kept; anything else in
 * it is read and left out. */
static int rf_compound(struct rf_scan *j, int depth, char open, char *buf,
		       size_t len, const struct rf_pick *pick)
{
	char close = open == '[' ? ']' : '}';
	size_t n = 0;
	struct rf_val v;

	if (depth > RF_DEPTH)
		return rf_fail(j, "nested too deep");
	if (buf && len)
		buf[0] = 0;
	j->p++;
	rf_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		char item[REPORT_NAME], key[16] = "";
		int want = -1;

		rf_ws(j);
		if (open == '{') {
			if (rf_string(j, key, sizeof(key)))
				return -1;
			rf_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return rf_fail(j, "':' expected");
			j->p++;
			rf_ws(j);
			for (int i = 0; pick && i < K_COUNT_OF; i++)
				if (pick->names[i] && !strcmp(key, pick->names[i]))
					want = i;
		}
		if (want >= 0) {
			if (rf_value(j, depth + 1, &pick->val[want],
				     pick->sbuf[want], pick->sbuf[want] ?
				     pick->slen[want] : 0))
				return -1;
			pick->seen[want] = true;
			goto next;
		}
		if (pick && pick->nest && !strcmp(key, pick->nest_key) &&
		    j->p < j->end && *j->p == '{') {
			if (rf_compound(j, depth + 1, '{', NULL, 0, pick->nest))
				return -1;
			goto next;
		}
		item[0] = 0;
		if (rf_value(j, depth + 1, &v, item, sizeof(item)))
			return -1;
		if (buf && open == '[' && v.type == RF_STR && *item) {
			size_t k = strlen(item);

			if (n + (n > 0) + k < len) {
				if (n)
					buf[n++] = ',';
				memcpy(buf + n, item, k + 1);
				n += k;
			}
		}
next:
		rf_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		return rf_fail(j, open == '[' ? "',' or ']' expected" :
			       "',' or '}' expected");
	}
}

static int rf_value(struct rf_scan *j, int depth, struct rf_val *v, char *buf,
		    size_t len)
{
	memset(v, 0, sizeof(*v));
	if (j->p >= j->end)
		return rf_fail(j, "a value expected");
	switch (*j->p) {
	case '"':
		v->type = RF_STR;
		return rf_string(j, buf, len);
	case '[':
		v->type = RF_ARR;
		return rf_compound(j, depth, '[', buf, len, NULL);
	case '{':
		v->type = RF_OBJ;
		return rf_compound(j, depth, '{', NULL, 0, NULL);
	case 't':
		return rf_literal(j, "true", RF_LIT_BOOL, v);
	case 'f':
		return rf_literal(j, "false", RF_LIT_BOOL, v);
	case 'n':
		return rf_literal(j, "null", RF_LIT_NULL, v);
	default:
		return rf_number(j, v);
	}
}

/* A number that is a whole count of nanoseconds, or that rounds to one. */
static bool rf_int(const struct rf_val *v, int64_t *out)
{
	if (v->type != RF_NUM)
		return false;
	if (v->is_int) {
		*out = v->i;
		return true;
	}
	if (!isfinite(v->d) || fabs(v->d) >= 9.2e18)
		return false;
	*out = (int64_t)llround(v->d);
	return true;
}

int report_follow_parse(const char *line, size_t len, struct report_frec *rec,
			const char **why)
{
	struct rf_scan j = { line, line + len, NULL };
	struct rf_val val[K_COUNT_OF];
	char type[16] = "", kind[REPORT_NAME] = "", host[REPORT_NAME] = "";
	char from[REPORT_NAME] = "", to[REPORT_NAME] = "";
	char *sbuf[K_COUNT_OF] = {
		[K_TYPE] = type, [K_KIND] = kind, [K_HOST] = host,
		[K_FROM] = from, [K_TO] = to, [K_FLAGS] = rec->flags,
	};
	size_t slen[K_COUNT_OF] = {
		[K_TYPE] = sizeof(type), [K_KIND] = sizeof(kind),
		[K_HOST] = sizeof(host), [K_FROM] = sizeof(from),
		[K_TO] = sizeof(to), [K_FLAGS] = sizeof(rec->flags),
	};
	bool seen[K_COUNT_OF] = { false };
	const struct rf_pick figures = {
		rf_latency_keys, val, sbuf, slen, seen, NULL, NULL,
	};
	const struct rf_pick pick = {
		rf_keys, val, sbuf, slen, seen, "latency_ns", &figures,
	};
	int64_t v;

	memset(rec, 0, sizeof(*rec));
	*why = NULL;
	memset(val, 0, sizeof(val));
	rf_ws(&j);
	if (j.p >= j.end || *j.p != '{') {
		*why = "not a JSON object";
		return -EBADMSG;
	}
	if (rf_compound(&j, 0, '{', NULL, 0, &pick))
		goto bad;
	rf_ws(&j);
	if (j.p != j.end) {
		rf_fail(&j, "more after the object");
		goto bad;
	}

	if (!seen[K_TYPE] || val[K_TYPE].type != RF_STR) {
		*why = "no type";
		goto refuse;
	}
	rec->have_interval = seen[K_START] && rf_int(&val[K_START], &rec->start_ns) &&
		seen[K_END] && rf_int(&val[K_END], &rec->end_ns) &&
		rec->end_ns > rec->start_ns;
	if (!strcmp(type, "txn"))
		rec->type = REPORT_FREC_TXN;
	else if (!strcmp(type, "hop"))
		rec->type = REPORT_FREC_HOP;
	else
		return 0;
	{
		int ka = rec->type == REPORT_FREC_TXN ? K_KIND : K_FROM;
		int kb = rec->type == REPORT_FREC_TXN ? K_HOST : K_TO;

		if (!seen[ka] || val[ka].type != RF_STR || !seen[kb] ||
		    val[kb].type != RF_STR) {
			*why = rec->type == REPORT_FREC_TXN ?
				"a txn line without kind and host" :
				"a hop line without from and to";
			goto refuse;
		}
		snprintf(rec->a, sizeof(rec->a), "%s", sbuf[ka]);
		snprintf(rec->b, sizeof(rec->b), "%s", sbuf[kb]);
	}
	if (!rec->have_interval) {
		*why = "no interval (start_ns, end_ns after it)";
		goto refuse;
	}
	if (!seen[K_COUNT] || !rf_int(&val[K_COUNT], &v) || v < 0) {
		*why = "no count";
		goto refuse;
	}
	rec->count = (uint64_t)v;
	if (rec->count) {
		if (!seen[K_P50] || !rf_int(&val[K_P50], &rec->p50_ns) ||
		    !seen[K_P99] || !rf_int(&val[K_P99], &rec->p99_ns)) {
			*why = "samples counted but no p50 and p99";
			goto refuse;
		}
		rec->have_q = true;
	}
	if (seen[K_FLAGS] && val[K_FLAGS].type != RF_ARR && val[K_FLAGS].type != RF_LIT_NULL) {
		*why = "flags not an array";
		goto refuse;
	}
	if (!seen[K_FLAGS] || val[K_FLAGS].type != RF_ARR)
		rec->flags[0] = 0;
	return 1;

bad:
	*why = j.why ? j.why : "not a JSON object";
refuse:
	/* Nothing of a line refused is used. */
	memset(rec, 0, sizeof(*rec));
	return -EBADMSG;
}

/* ---- loading ---- */

/* The series a result line is drawn in: its index, -1 when it is not
 * drawn (a transaction other than tick to trade), -2 when it is not one
 * of f's (yet). */
static int report_follow_find(const struct report_follow *f,
			      const struct report_frec *rec)
{
	bool hop = rec->type == REPORT_FREC_HOP;
	const char *a = hop ? rec->a : rec->b;
	const char *b = hop ? rec->b : "";

	if (!hop && strcmp(rec->a, "tick_to_trade"))
		return -1;
	for (size_t i = 0; i < f->ns; i++)
		if (f->s[i].hop == hop && !strcmp(f->s[i].a, a) &&
		    !strcmp(f->s[i].b, b))
			return (int)i;
	return -2;
}

/* The same, adding a new series while there is room (-2 when not). */
static int report_follow_series(struct report_follow *f, const struct report_frec *rec)
{
	int k = report_follow_find(f, rec);
	bool hop = rec->type == REPORT_FREC_HOP;

	if (k != -2 || f->ns == REPORT_FOLLOW_SERIES)
		return k;
	f->s[f->ns].hop = hop;
	snprintf(f->s[f->ns].a, sizeof(f->s[0].a), "%s", hop ? rec->a : rec->b);
	snprintf(f->s[f->ns].b, sizeof(f->s[0].b), "%s", hop ? rec->b : "");
	return (int)f->ns++;
}

/* Add each of the comma-separated flags to the set, once. */
static void report_follow_flags_add(struct report_follow *f, const char *flags)
{
	char tmp[sizeof(((struct report_frec *)0)->flags)], *save = NULL, *t;

	snprintf(tmp, sizeof(tmp), "%s", flags);
	for (t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(f->flags), k = strlen(t);
		const char *p = f->flags;
		bool have = false;

		while ((p = strstr(p, t))) {
			if ((p == f->flags || p[-1] == ',') && (p[k] == ',' || !p[k]))
				have = true;
			p += k;
		}
		if (!have && n + 1 + k < sizeof(f->flags))
			snprintf(f->flags + n, sizeof(f->flags) - n, "%s%s", n ? "," : "", t);
	}
}

/* Strip the line's end; whether anything is left. */
static bool report_follow_line(char *line, ssize_t *len)
{
	while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == '\r'))
		line[--*len] = 0;
	for (ssize_t i = 0; i < *len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			return true;
	return false;
}

void report_follow_load(struct report *r)
{
	struct report_follow *f = &r->follow;
	unsigned long long lineno = 0, first_bad = 0;
	const char *bad_why = NULL, *why;
	int64_t last_flagged = INT64_MIN;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in;

	snprintf(f->path, sizeof(f->path), "%s/follow.jsonl", r->dir);
	f->t0 = INT64_MAX;
	f->tend = INT64_MIN;
	in = fopen(f->path, "r");
	if (!in) {
		if (errno == ENOENT) {
			snprintf(f->why, sizeof(f->why), "no follow.jsonl: the run "
				 "was not followed live (tapless lab run --follow)");
		} else {
			snprintf(f->why, sizeof(f->why), "%s: %s", f->path, strerror(errno));
			report_notef(r, true, "%s", f->why);
		}
		return;
	}
	f->present = true;
	while ((len = getline(&line, &cap, in)) >= 0) {
		struct report_frec rec;
		int rc, k;

		lineno++;
		if (!report_follow_line(line, &len))
			continue;
		f->lines++;
		rc = report_follow_parse(line, (size_t)len, &rec, &why);
		if (rc < 0) {
			if (!f->bad++) {
				first_bad = lineno;
				bad_why = why;
			}
			continue;
		}
		/* The time axis is the stream's: its first interval, of
		 * any line (a host's may come before the first sample). */
		if (rec.have_interval) {
			if (rec.start_ns < f->t0)
				f->t0 = rec.start_ns;
			if (rec.end_ns > f->tend)
				f->tend = rec.end_ns;
			if (!f->interval_ns)
				f->interval_ns = rec.end_ns - rec.start_ns;
		}
		k = rc ? report_follow_series(f, &rec) : -1;
		if (k == -2)
			f->dropped++;
		if (k < 0) {
			f->other++;
			continue;
		}
		f->used++;
		if (rec.have_q)
			f->s[k].intervals++;
		if (*rec.flags) {
			report_follow_flags_add(f, rec.flags);
			if (rec.start_ns != last_flagged)
				f->flagged++;
			last_flagged = rec.start_ns;
		}
	}
	if (ferror(in))
		report_notef(r, true, "%s: read error after line %llu", f->path, lineno);
	fclose(in);
	free(line);
	if (f->bad)
		report_notef(r, true, "%s:%llu: %s: not a line of the live stream "
			     "(%llu such lines of %llu, skipped)", f->path, first_bad,
			     bad_why, f->bad, f->lines);
	if (f->dropped)
		report_notef(r, true, "%s: more than %d series of tick to trade and "
			     "hops: %llu lines of the others not drawn", f->path,
			     REPORT_FOLLOW_SERIES, f->dropped);
	for (size_t i = 0; i < f->ns; i++)
		f->have |= f->s[i].intervals > 0;
	if (!f->have)
		snprintf(f->why, sizeof(f->why), "follow.jsonl has no interval of "
			 "tick to trade or of a hop with samples (%llu lines, %llu "
			 "not understood)", f->lines, f->bad);
}

/* ---- writing ---- */

/* A name as a file's and gnuplot's word: letters, digits, '.', '_', '-';
 * anything else '_'. */
static void report_follow_word(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++) {
		char c = *s;

		out[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			   c == '-' ? c : '_';
	}
	if (!n && len > 1)
		out[n++] = '_';
	out[n] = 0;
}

static void report_follow_q(FILE *f, int64_t v)
{
	/* The plot's axis is logarithmic: a value at or below zero (a
	 * one-way latency whose clocks disagree) has no place on it. */
	if (v > 0)
		fprintf(f, " %" PRId64, v);
	else
		fprintf(f, " -");
}

int report_follow_write(const struct report *r, const char *outdir,
			char err[REPORT_ERRBUF])
{
	const struct report_follow *f = &r->follow;
	FILE *out[REPORT_FOLLOW_SERIES + 1] = { NULL }, *in = NULL;
	char path[REPORT_FOLLOW_SERIES + 1][PATH_MAX + 64];
	bool blank[REPORT_FOLLOW_SERIES];
	int64_t last_end[REPORT_FOLLOW_SERIES], last_flagged = INT64_MIN;
	char *line = NULL;
	size_t cap = 0, nf = f->ns + 1;
	ssize_t len;
	int rc = 0;

	if (!f->have)
		return 0;
	for (size_t i = 0; i < nf && !rc; i++) {
		const struct report_fseries *s = &f->s[i];

		if (i < f->ns)
			snprintf(path[i], sizeof(path[i]), "%s/data/follow-%zu.dat", outdir, i + 1);
		else
			snprintf(path[i], sizeof(path[i]), "%s/data/follow-flags.dat", outdir);
		out[i] = fopen(path[i], "w");
		if (!out[i]) {
			rc = report_fail(err, -errno, "%s: %s", path[i], strerror(errno));
			break;
		}
		if (i < f->ns && s->hop)
			fprintf(out[i], "# tapless report, from %s: hop %s -> %s, one-way\n", f->path, s->a, s->b);
		else if (i < f->ns)
			fprintf(out[i], "# tapless report, from %s: tick to trade at %s\n", f->path, s->a);
		else
			fprintf(out[i], "# tapless report, from %s: the intervals whose tick "
				"to trade or hop lines carry flags\n# seconds_since_first_"
				"interval_start interval_s flags\n", f->path);
		if (i < f->ns) {
			fprintf(out[i], "# seconds_since_first_interval_start p50_ns p99_ns "
				"count flagged flags ('-': none or not drawable on a log axis; "
				"a blank line: intervals without samples)\n");
			blank[i] = true;
			last_end[i] = INT64_MIN;
		}
	}
	in = rc ? NULL : fopen(f->path, "r");
	if (!rc && !in)
		rc = report_fail(err, -errno, "%s: %s", f->path, strerror(errno));
	while (in && (len = getline(&line, &cap, in)) >= 0) {
		struct report_frec rec;
		const char *why;
		double x;
		int k;

		if (!report_follow_line(line, &len) ||
		    report_follow_parse(line, (size_t)len, &rec, &why) != 1)
			continue;
		/* The series were all found by the load. */
		k = report_follow_find(f, &rec);
		if (k < 0)
			continue;
		x = ((double)rec.start_ns - (double)f->t0) / 1e9;
		if (!rec.have_q) {
			if (!blank[k])
				fputc('\n', out[k]);
			blank[k] = true;
		} else {
			/* Intervals missing from the stream (a gap it did
			 * not fill) break the line as empty ones do. */
			if (!blank[k] && rec.start_ns > last_end[k])
				fputc('\n', out[k]);
			fprintf(out[k], "%.3f", x);
			report_follow_q(out[k], rec.p50_ns);
			report_follow_q(out[k], rec.p99_ns);
			fprintf(out[k], " %" PRIu64 " %d %s\n", rec.count, *rec.flags != 0,
				*rec.flags ? rec.flags : "-");
			blank[k] = false;
			last_end[k] = rec.end_ns;
		}
		if (*rec.flags && rec.start_ns != last_flagged) {
			fprintf(out[f->ns], "%.3f %.3f %s\n", x,
				((double)rec.end_ns - (double)rec.start_ns) / 1e9, rec.flags);
			last_flagged = rec.start_ns;
		}
	}
	if (in)
		fclose(in);
	free(line);
	for (size_t i = 0; i < nf; i++) {
		int bad;

		if (!out[i])
			continue;
		bad = ferror(out[i]);
		if ((fclose(out[i]) || bad) && !rc)
			rc = report_fail(err, -EIO, "%s: write error", path[i]);
	}
	return rc;
}

/* ---- the template's values ---- */

const char *const report_follow_keys[] = {
	"FOLLOW_TXN", "FOLLOW_TXN_NAMES", "FOLLOW_HOPS", "FOLLOW_HOP_NAMES",
	"FOLLOW_FLAGGED", "FOLLOW_FLAGS", "FOLLOW_RATE_X", "FOLLOW_RATE_LABELS",
	NULL,
};

/* Append to buf (len bytes) as far as it holds. */
static void report_follow_cat(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report_follow_cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

void report_follow_value(const struct report *r, const char *key, char *buf,
			 size_t len)
{
	const struct report_follow *f = &r->follow;
	bool hops = strstr(key, "HOP") != NULL;

	buf[0] = 0;
	if (!strcmp(key, "FOLLOW_TXN") || !strcmp(key, "FOLLOW_HOPS") ||
	    !strcmp(key, "FOLLOW_TXN_NAMES") || !strcmp(key, "FOLLOW_HOP_NAMES")) {
		bool names = strstr(key, "NAMES") != NULL;

		/* Series without samples are left out: gnuplot says so
		 * of a file with no points, on standard error. */
		for (size_t i = 0; i < f->ns; i++) {
			const struct report_fseries *s = &f->s[i];
			char a[REPORT_NAME], b[REPORT_NAME];

			if (s->hop != hops || !s->intervals)
				continue;
			report_follow_word(a, sizeof(a), s->a);
			report_follow_word(b, sizeof(b), s->b);
			if (!names)
				report_follow_cat(buf, len, "%s%zu", *buf ? " " : "", i + 1);
			else if (hops)
				report_follow_cat(buf, len, "%s%s→%s", *buf ? " " : "", a, b);
			else
				report_follow_cat(buf, len, "%s%s", *buf ? " " : "", a);
		}
	} else if (!strcmp(key, "FOLLOW_FLAGGED")) {
		snprintf(buf, len, "%d", f->flagged > 0);
	} else if (!strcmp(key, "FOLLOW_FLAGS")) {
		/* For the key of the plot: "stalled, restart, late". */
		size_t n = 0;

		for (const char *p = f->flags; *p && n + 3 < len; p++) {
			if (*p == ',') {
				buf[n++] = ',';
				buf[n++] = ' ';
			} else {
				buf[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					   (*p >= '0' && *p <= '9') ? *p : '_';
			}
		}
		buf[n] = 0;
	} else if (!strcmp(key, "FOLLOW_RATE_X") || !strcmp(key, "FOLLOW_RATE_LABELS")) {
		bool labels = !strcmp(key, "FOLLOW_RATE_LABELS");

		/* Where each rate's run through the switch began (its
		 * samples' first stamp, on the stream's timescale), lowest
		 * rate first as the lab runs them. */
		for (size_t i = r->nrates; i-- > 0;) {
			const struct report_rate *rt = &r->rate[i];

			if (!rt->have_t0 || rt->t0 < f->t0 || rt->t0 > f->tend)
				continue;
			if (labels)
				report_follow_cat(buf, len, "%s%s", *buf ? " " : "", rt->label);
			else
				report_follow_cat(buf, len, "%s%.3f", *buf ? " " : "",
						  ((double)rt->t0 - (double)f->t0) / 1e9);
		}
	}
}
