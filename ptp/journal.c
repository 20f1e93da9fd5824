/* journal.c — see journal.h. */
#include "ptp/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/print.h"
#include "base/xalloc.h"

#define JOURNAL_LINE_MAX 1024

struct journal_writer {
	int fd;
	char *path, *host;
	uint64_t size;		/* bytes in the file, for rotation */
};

struct journal_reader {
	FILE *f;
	char *path;
	char host[64];
	unsigned line;
	unsigned bad;
	bool torn;
	uint64_t off;		/* where the line after the last whole one starts */
	char err[JOURNAL_ERRBUF];
	char buf[JOURNAL_LINE_MAX + 2];
};

/* One write(2) per line: with O_APPEND the line lands whole or, after a
 * crash mid-write, as a torn tail the reader drops. */
static int journal_put(struct journal_writer *w, const char *line, size_t len)
{
	ssize_t n = write(w->fd, line, len);

	if (n < 0)
		return -errno;
	w->size += (uint64_t)n;
	return (size_t)n == len ? 0 : -EIO;
}

static int journal_writer_fd(struct journal_writer *w)
{
	struct stat st;
	char head[128], last;
	int n;

	w->fd = open(w->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return -errno;
	if (fstat(w->fd, &st) < 0)
		return -errno;
	w->size = (uint64_t)st.st_size;
	if (st.st_size == 0) {
		n = snprintf(head, sizeof(head),
			     "# tapless-journal %d host %s\n"
			     "# time_ns sample clock state offset_ns delay_ns "
			     "freq_ppb gm steps servo sync bound_ns class\n",
			     JOURNAL_VERSION, *w->host ? w->host : "-");
		return journal_put(w, head, (size_t)n);
	}
	/* A torn last line from a crash stays a line of its own (the reader
	 * reports it) instead of swallowing the first line we write. */
	n = open(w->path, O_RDONLY | O_CLOEXEC);
	if (n >= 0 && pread(n, &last, 1, st.st_size - 1) == 1 && last != '\n') {
		close(n);
		return journal_put(w, "\n", 1);
	}
	if (n >= 0)
		close(n);
	return 0;
}

int journal_writer_open(struct journal_writer **out, const char *path,
			const char *host)
{
	struct journal_writer *w = xcalloc(1, sizeof(*w));
	int ret;

	*out = NULL;
	w->path = xstrdup(path);
	w->host = xstrdup(host ? host : "");
	ret = journal_writer_fd(w);
	if (ret) {
		journal_writer_close(w);
		return ret;
	}
	*out = w;
	return 0;
}

uint64_t journal_writer_size(const struct journal_writer *w)
{
	return w->size;
}

static int journal_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Remove the oldest PATH.STAMP files beyond keep. The stamps sort in time
 * order, so the names do too. */
static void journal_prune(const char *path, unsigned keep)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], **names = NULL;
	const char *base = slash ? slash + 1 : path;
	size_t blen = strlen(base), n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	if (!keep || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, base, blen) || de->d_name[blen] != '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), journal_cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (i + keep < n) {
			char p[8192];

			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			unlink(p);
		}
		free(names[i]);
	}
	free(names);
}

int journal_writer_rotate(struct journal_writer *w, int64_t ts_ns,
			  unsigned keep, char *rotated, size_t len)
{
	time_t t = (time_t)(ts_ns / 1000000000);
	char stamp[32], to[4200];
	struct tm tm;
	int ret;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(to, sizeof(to), "%s.%s", w->path, stamp);
	/* Two rotations within a second: keep the first file whole. */
	for (int i = 1; !access(to, F_OK) && i < 100; i++)
		snprintf(to, sizeof(to), "%s.%s-%d", w->path, stamp, i);
	if (rename(w->path, to))
		return -errno;
	close(w->fd);
	ret = journal_writer_fd(w);
	if (rotated)
		snprintf(rotated, len, "%s", to);
	journal_prune(w->path, keep);
	return ret;
}

static void journal_fmt_i64(char *b, size_t len, int64_t v)
{
	if (v == JOURNAL_NONE)
		snprintf(b, len, "-");
	else
		snprintf(b, len, "%" PRId64, v);
}

static const char *journal_word(const char *s)
{
	return s && *s ? s : "-";
}

int journal_format_sample(char *buf, unsigned len,
			  const struct journal_sample *s)
{
	char off[24], delay[24], bound[24], freq[32], steps[16], cls[8];
	int n;

	journal_fmt_i64(off, sizeof(off), s->offset_ns);
	journal_fmt_i64(delay, sizeof(delay), s->delay_ns);
	journal_fmt_i64(bound, sizeof(bound), s->bound_ns);
	if (isfinite(s->freq_ppb))
		snprintf(freq, sizeof(freq), "%.3f", s->freq_ppb);
	else
		snprintf(freq, sizeof(freq), "-");
	if (s->steps >= 0)
		snprintf(steps, sizeof(steps), "%d", s->steps);
	else
		snprintf(steps, sizeof(steps), "-");
	if (s->gm_class > 0 && s->gm_class <= 255)
		snprintf(cls, sizeof(cls), "%d", s->gm_class);
	else
		snprintf(cls, sizeof(cls), "-");
	n = snprintf(buf, len, "%" PRId64 " sample %s %s %s %s %s %s %s %s %s %s %s\n",
		     s->ts_ns, journal_word(s->clock), journal_word(s->state),
		     off, delay, freq, journal_word(s->gm), steps,
		     journal_word(s->servo), s->in_sync ? "1" :
		     s->holdover ? "h" : "0", bound, cls);
	return n < 0 || (unsigned)n >= len ? -ENOSPC : n;
}

int journal_write_sample(struct journal_writer *w,
			 const struct journal_sample *s)
{
	char line[JOURNAL_LINE_MAX];
	int n = journal_format_sample(line, sizeof(line), s);

	return n < 0 ? n : journal_put(w, line, (size_t)n);
}

int journal_write_event(struct journal_writer *w, int64_t ts_ns,
			const char *clock, const char *name, const char *text)
{
	char line[JOURNAL_LINE_MAX];
	int n;

	n = snprintf(line, sizeof(line) - 1, "%" PRId64 " event %s %s%s%s",
		     ts_ns, journal_word(clock), journal_word(name),
		     text && *text ? " " : "", text ? text : "");
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;	/* an event's text may be cut */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	return journal_put(w, line, (size_t)n);
}

void journal_writer_close(struct journal_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w->host);
	free(w);
}

/* Reading. */

static int journal_i64(const char *s, int64_t *v, bool dash_ok)
{
	char *end;
	long long x;

	if (dash_ok && !strcmp(s, "-")) {
		*v = JOURNAL_NONE;
		return 0;
	}
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || end == s || *end || x == INT64_MIN)
		return -EINVAL;
	*v = x;
	return 0;
}

static int journal_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		return -EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

/* Version 3 added CLASS; a version 2 line, without it, still reads. */
#define JOURNAL_SAMPLE_FIELDS 13
#define JOURNAL_SAMPLE_FIELDS_V2 12

int journal_parse_line(const char *line, struct journal_record *rec,
		       const char **why)
{
	char tmp[JOURNAL_LINE_MAX + 1];
	char *f[JOURNAL_SAMPLE_FIELDS + 1], *save = NULL, *p;
	int nf = 0;
	int64_t t, v;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return 1;
	if (strlen(line) > JOURNAL_LINE_MAX) {
		*why = "line too long";
		return -EBADMSG;
	}
	strcpy(tmp, line);
	memset(rec, 0, sizeof(*rec));
	for (p = strtok_r(tmp, " \t", &save); p && nf < JOURNAL_SAMPLE_FIELDS;
	     p = strtok_r(NULL, " \t", &save))
		f[nf++] = p;
	if (nf < 3 || journal_i64(f[0], &t, false) < 0) {
		*why = "expected TIME_NS TYPE CLOCK ...";
		return -EBADMSG;
	}
	if (!strcmp(f[1], "event")) {
		struct journal_event *e = &rec->event;
		const char *rest;

		if (nf < 4 || journal_copy(e->clock, sizeof(e->clock), f[2]) ||
		    journal_copy(e->name, sizeof(e->name), f[3])) {
			*why = "event: expected TIME_NS event CLOCK NAME [TEXT]";
			return -EBADMSG;
		}
		rec->type = JOURNAL_EVENT;
		e->ts_ns = t;
		/* The text is the rest of the original line, spaces kept. */
		rest = line + (f[3] - tmp) + strlen(f[3]);
		while (*rest == ' ' || *rest == '\t')
			rest++;
		snprintf(e->text, sizeof(e->text), "%s", rest);
		return 0;
	}
	if (strcmp(f[1], "sample")) {
		*why = "type is neither sample nor event";
		return -EBADMSG;
	}
	if ((nf != JOURNAL_SAMPLE_FIELDS && nf != JOURNAL_SAMPLE_FIELDS_V2) ||
	    p) {
		*why = "sample: expected 12 or 13 fields";
		return -EBADMSG;
	}
	struct journal_sample *s = &rec->sample;
	rec->type = JOURNAL_SAMPLE;
	s->ts_ns = t;
	if (journal_copy(s->clock, sizeof(s->clock), f[2]) ||
	    journal_copy(s->state, sizeof(s->state), f[3])) {
		*why = "clock or state name too long";
		return -EBADMSG;
	}
	if (journal_i64(f[4], &s->offset_ns, true) ||
	    journal_i64(f[5], &s->delay_ns, true)) {
		*why = "offset or delay is not an integer";
		return -EBADMSG;
	}
	if (!strcmp(f[6], "-")) {
		s->freq_ppb = NAN;
	} else {
		char *end;

		errno = 0;
		s->freq_ppb = strtod(f[6], &end);
		if (errno || end == f[6] || *end || !isfinite(s->freq_ppb)) {
			*why = "frequency is not a number";
			return -EBADMSG;
		}
	}
	if (journal_copy(s->gm, sizeof(s->gm), f[7]) ||
	    journal_copy(s->servo, sizeof(s->servo), f[9])) {
		*why = "grandmaster or servo field too long";
		return -EBADMSG;
	}
	if (journal_i64(f[8], &v, true) || (v != JOURNAL_NONE &&
					    (v < 0 || v > 255))) {
		*why = "steps removed is not 0..255";
		return -EBADMSG;
	}
	s->steps = v == JOURNAL_NONE ? -1 : (int)v;
	if (strcmp(f[10], "0") && strcmp(f[10], "1") && strcmp(f[10], "h")) {
		*why = "sync is not 0, 1 or h";
		return -EBADMSG;
	}
	s->in_sync = f[10][0] == '1';
	s->holdover = f[10][0] == 'h';
	if (journal_i64(f[11], &s->bound_ns, true) ||
	    (s->bound_ns != JOURNAL_NONE && s->bound_ns < 0)) {
		*why = "bound is not a non-negative integer";
		return -EBADMSG;
	}
	if (nf == JOURNAL_SAMPLE_FIELDS &&
	    (journal_i64(f[12], &v, true) ||
	     (v != JOURNAL_NONE && (v < 1 || v > 255)))) {
		*why = "clock class is not 1..255";
		return -EBADMSG;
	}
	s->gm_class = nf == JOURNAL_SAMPLE_FIELDS && v != JOURNAL_NONE ? (int)v : 0;
	return 0;
}

int journal_open(struct journal_reader **out, const char *path,
		 char err[JOURNAL_ERRBUF])
{
	struct journal_reader *r;
	FILE *f;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return errbuf_set(err, JOURNAL_ERRBUF, -errno, "%s: %s", path,
				  strerror(errno));
	r = xcalloc(1, sizeof(*r));
	r->f = f;
	r->path = xstrdup(path);
	*out = r;
	return 0;
}

/* One line into r->buf, without its newline: its length (over
 * JOURNAL_LINE_MAX when too long: the rest is read and dropped), or -1 at
 * the end. *nl says whether the newline was there, *nul whether the line
 * held a NUL byte (as a file can after a crash). */
static long journal_getline(struct journal_reader *r, bool *nl, bool *nul)
{
	long n = 0;
	int c;

	*nl = *nul = false;
	while ((c = getc(r->f)) != EOF) {
		if (c == '\n') {
			*nl = true;
			break;
		}
		if (!c)
			*nul = true;
		if (n <= JOURNAL_LINE_MAX)
			r->buf[n] = (char)c;
		n++;
	}
	if (!n && !*nl)
		return -1;
	r->buf[n <= JOURNAL_LINE_MAX ? n : JOURNAL_LINE_MAX + 1] = '\0';
	return n;
}

int journal_next(struct journal_reader *r, struct journal_record *rec)
{
	for (;;) {
		const char *why = NULL;
		bool nl, nul;
		long n = journal_getline(r, &nl, &nul);
		int ret;

		if (n < 0)
			return 0;
		r->line++;
		if (!nl) {
			/* The torn tail of a crash: not a record. */
			r->torn = true;
			return 0;
		}
		r->off += (uint64_t)n + 1;
		if (n > JOURNAL_LINE_MAX || nul) {
			r->bad++;
			return errbuf_set(r->err, JOURNAL_ERRBUF, -EBADMSG,
					  "%s:%u: %s", r->path, r->line,
					  nul ? "NUL byte in line" :
					  "line too long");
		}
		if (r->line == 1 && !strncmp(r->buf, "# tapless-journal ", 18)) {
			const char *h = strstr(r->buf, " host ");

			/* The writer puts "-" for a host not named. */
			if (h && strcmp(h + 6, "-"))
				snprintf(r->host, sizeof(r->host), "%s", h + 6);
		}
		ret = journal_parse_line(r->buf, rec, &why);
		if (ret == 1)
			continue;
		if (ret < 0) {
			r->bad++;
			return errbuf_set(r->err, JOURNAL_ERRBUF, ret,
					  "%s:%u: %s", r->path, r->line, why);
		}
		return 1;
	}
}

int journal_resume(struct journal_reader *r)
{
	/* A torn tail may be a line the writer is still writing: give it
	 * back, to be read whole (or torn again) from its start. The seek
	 * also drops stdio's end-of-file mark and its buffer, so the next
	 * read asks the file for what was appended. */
	if (r->torn) {
		r->torn = false;
		r->line--;
	}
	if (fseeko(r->f, (off_t)r->off, SEEK_SET) < 0)
		return -errno;
	return 0;
}

uint64_t journal_offset(const struct journal_reader *r)
{
	return r->off;
}

int journal_fd(const struct journal_reader *r)
{
	return fileno(r->f);
}

const char *journal_error(const struct journal_reader *r)
{
	return r->err;
}

const char *journal_host(const struct journal_reader *r)
{
	return r->host;
}

unsigned journal_bad_lines(const struct journal_reader *r)
{
	return r->bad;
}

bool journal_torn(const struct journal_reader *r)
{
	return r->torn;
}

void journal_close(struct journal_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r->path);
	free(r);
}

struct journal_event *journal_ring_add(struct journal_ring *r)
{
	struct journal_event *e = &r->ev[r->head];

	r->head = (r->head + 1) % r->cap;
	if (r->n < r->cap)
		r->n++;
	return e;
}

void journal_ring_print(struct printer *p, const char *key, const char *title,
			const struct journal_ring *r)
{
	print_array_begin(p, key);
	print_text(p, "%s", title);
	for (unsigned i = 0; i < r->n; i++) {
		const struct journal_event *e =
			&r->ev[(r->head + r->cap - r->n + i) % r->cap];

		print_object_begin(p, NULL);
		print_time(p, "time_ns", "  %s", e->ts_ns);
		print_str(p, "clock", " %s", e->clock);
		print_str(p, "name", " %s", e->name);
		print_str(p, "text", " %s\n", e->text);
		print_object_end(p);
	}
	print_array_end(p);
}
