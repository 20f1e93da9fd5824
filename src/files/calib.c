/* calib.c — see calib.h. */
#include "files/calib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/wholefile.h"
#include "base/xalloc.h"

#define CALIB_LINE_MAX 1022	/* characters before the newline */
#define CALIB_BLANKS " \t"

static const char *const dir_names[CALIB_DIRS] = { "tx", "rx" };
static const char *const src_names[CALIB_SRCS] = { "hw", "sw" };

const char *calib_dir_name(enum calib_dir d)
{
	return (unsigned)d < CALIB_DIRS ? dir_names[d] : "?";
}

const char *calib_src_name(enum calib_src s)
{
	return (unsigned)s < CALIB_SRCS ? src_names[s] : "?";
}

static int calib_name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* A whole decimal number of at most max: digits only, a leading '-' when
 * neg_ok. Returns 0 or -ERANGE (too large) or -EINVAL (not a number). */
static int calib_number(const char *s, bool neg_ok, uint64_t max, int64_t *sv,
			uint64_t *uv)
{
	bool neg = false;
	uint64_t v = 0;

	if (*s == '-' && neg_ok) {
		neg = true;
		s++;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (sv)
		*sv = neg ? -(int64_t)v : (int64_t)v;
	if (uv)
		*uv = v;
	return 0;
}

/* stamp DIR SRC offset NS spread NS [samples N], f[0] is "stamp". */
static int calib_stamp(struct calib *c, char **f, int nf, const char **why)
{
	struct calib_term t = { .set = true };
	int d, s, rc;

	if (nf < 3) {
		*why = "stamp: expected 'stamp tx|rx hw|sw offset NS spread NS "
		       "[samples N]'";
		return -EINVAL;
	}
	if ((d = calib_name_index(dir_names, CALIB_DIRS, f[1])) < 0) {
		*why = "stamp: the direction is not tx or rx";
		return -EINVAL;
	}
	if ((s = calib_name_index(src_names, CALIB_SRCS, f[2])) < 0) {
		*why = "stamp: the source is not hw or sw";
		return -EINVAL;
	}
	if (nf < 4 || strcmp(f[3], "offset")) {
		*why = "stamp: expected 'offset NS' after the source";
		return -EINVAL;
	}
	if (nf < 5) {
		*why = "stamp: offset: no value";
		return -EINVAL;
	}
	rc = calib_number(f[4], true, CALIB_MAX_NS, &t.offset_ns, NULL);
	if (rc) {
		*why = rc == -ERANGE ? "stamp: offset: out of range (at most "
		       "1000000000 ns either way)" : "stamp: offset: not a "
		       "whole number of ns";
		return -EINVAL;
	}
	if (nf < 6 || strcmp(f[5], "spread")) {
		*why = "stamp: expected 'spread NS' after the offset";
		return -EINVAL;
	}
	if (nf < 7) {
		*why = "stamp: spread: no value";
		return -EINVAL;
	}
	rc = calib_number(f[6], false, CALIB_MAX_NS, &t.spread_ns, NULL);
	if (rc) {
		*why = rc == -ERANGE ? "stamp: spread: out of range (at most "
		       "1000000000 ns)" : f[6][0] == '-' ? "stamp: spread: "
		       "negative" : "stamp: spread: not a whole number of ns";
		return -EINVAL;
	}
	if (nf > 7) {
		if (strcmp(f[7], "samples")) {
			*why = "stamp: expected 'samples N' or the end of the "
			       "line after the spread";
			return -EINVAL;
		}
		if (nf < 9) {
			*why = "stamp: samples: no value";
			return -EINVAL;
		}
		rc = calib_number(f[8], false, UINT64_MAX, NULL, &t.samples);
		if (rc) {
			*why = rc == -ERANGE ? "stamp: samples: out of range" :
			       "stamp: samples: not a whole number";
			return -EINVAL;
		}
		if (nf > 9) {
			*why = "stamp: too many fields";
			return -EINVAL;
		}
	}
	if (c->t[d][s].set) {
		*why = "stamp: a second line for this direction and source";
		return -EINVAL;
	}
	c->t[d][s] = t;
	return 0;
}

/* One line, its comment cut off; s is NUL-terminated. */
static int calib_line(struct calib *c, char *s, bool *have_host,
		      bool *have_measured, const char **why)
{
	char *f[10], *save = NULL, *p;
	size_t w;
	int nf = 0;

	s += strspn(s, CALIB_BLANKS);
	w = strcspn(s, CALIB_BLANKS);
	if (!w)
		return 0;
	if (w == 8 && !strncmp(s, "measured", 8)) {
		char *rest = s + w, *end;
		size_t n;

		rest += strspn(rest, CALIB_BLANKS);
		end = rest + strlen(rest);
		while (end > rest && strchr(CALIB_BLANKS, end[-1]))
			end--;
		if (end == rest) {
			*why = "measured: expected 'measured TEXT'";
			return -EINVAL;
		}
		if (*have_measured) {
			*why = "measured: a second measured line";
			return -EINVAL;
		}
		n = (size_t)(end - rest);
		if (n >= sizeof(c->measured)) {
			/* Kept to its first 255 bytes, not cutting a UTF-8
			 * character in two. */
			n = sizeof(c->measured) - 1;
			while (n && ((unsigned char)rest[n] & 0xc0) == 0x80)
				n--;
			while (n && strchr(CALIB_BLANKS, rest[n - 1]))
				n--;
		}
		memcpy(c->measured, rest, n);
		c->measured[n] = '\0';
		*have_measured = true;
		return 0;
	}
	p = strtok_r(s, CALIB_BLANKS, &save);
	f[nf++] = p;
	while (nf < 10 && (p = strtok_r(NULL, CALIB_BLANKS, &save)))
		f[nf++] = p;
	if (nf == 10 && strtok_r(NULL, CALIB_BLANKS, &save)) {
		*why = "too many fields";
		return -EINVAL;
	}
	if (!strcmp(f[0], "host")) {
		if (nf != 2) {
			*why = nf < 2 ? "host: expected 'host NAME'" :
			       "host: too many fields (a name is one word)";
			return -EINVAL;
		}
		if (strlen(f[1]) >= sizeof(c->host)) {
			*why = "host: name too long (at most 63 characters)";
			return -EINVAL;
		}
		if (*have_host) {
			*why = "host: a second host line";
			return -EINVAL;
		}
		snprintf(c->host, sizeof(c->host), "%s", f[1]);
		*have_host = true;
		return 0;
	}
	if (!strcmp(f[0], "stamp"))
		return calib_stamp(c, f, nf, why);
	*why = "expected host, measured or stamp";
	return -EINVAL;
}

int calib_parse(struct calib *c, const char *buf, size_t len,
		const char *name, char err[CALIB_ERRBUF])
{
	struct calib *tmp = xcalloc(1, sizeof(*tmp));
	bool have_host = false, have_measured = false;
	unsigned lineno = 0;
	size_t at = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	while (at < len) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;
		const char *why = NULL;
		char line[CALIB_LINE_MAX + 2], *hash;

		lineno++;
		if (n > CALIB_LINE_MAX) {
			why = "line too long (at most 1022 characters)";
		} else if (memchr(buf + at, '\0', n)) {
			why = "a NUL byte: not a text file";
		} else {
			memcpy(line, buf + at, n);
			line[n] = '\0';
			if (n && line[n - 1] == '\r')
				line[n - 1] = '\0';	/* CRLF */
			if ((hash = strchr(line, '#')))
				*hash = '\0';
			for (const char *q = line; *q && !why; q++)
				if (((unsigned char)*q < 0x20 && *q != '\t') ||
				    *q == 0x7f)
					why = "a control character";
			if (!why && calib_line(tmp, line, &have_host,
					       &have_measured, &why) == 0)
				why = NULL;
		}
		if (why) {
			snprintf(err, CALIB_ERRBUF, "%s:%u: %s", name, lineno,
				 why);
			rc = -EINVAL;
			break;
		}
		at += n + (nl != NULL);
	}
	if (!rc)
		*c = *tmp;
	free(tmp);
	return rc;
}

int calib_read(struct calib *c, const char *path, char err[CALIB_ERRBUF])
{
	size_t len = 0, cap = 4096;
	char *buf;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, CALIB_ERRBUF, "%s: %s", path, strerror(-rc));
		return rc;
	}
	buf = xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			snprintf(err, CALIB_ERRBUF, "%s: %s", path,
				 strerror(-rc));
			goto out;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	rc = calib_parse(c, buf, len, path, err);
out:
	free(buf);
	close(fd);
	return rc;
}

/* Whether s reads back as itself after a keyword: no line break or other
 * control character, no '#', no blank at either end; one word when word. */
static bool calib_text_ok(const char *s, bool word)
{
	size_t n = strlen(s);

	if (n && (strchr(CALIB_BLANKS, s[0]) || strchr(CALIB_BLANKS, s[n - 1])))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && (*s != '\t' || word))
			return false;
		else if (*s == 0x7f || *s == '#' || (word && *s == ' '))
			return false;
	return true;
}

static const char *calib_check(const struct calib *c)
{
	if (memchr(c->host, '\0', sizeof(c->host)) == NULL ||
	    !calib_text_ok(c->host, true))
		return "the host name is not one word of at most 63 characters";
	if (memchr(c->measured, '\0', sizeof(c->measured)) == NULL ||
	    !calib_text_ok(c->measured, false))
		return "the measured text has a line break, a control "
		       "character, a '#' or blanks at an end";
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int s = 0; s < CALIB_SRCS; s++) {
			const struct calib_term *t = &c->t[d][s];

			if (!t->set)
				continue;
			if (t->offset_ns < -CALIB_MAX_NS ||
			    t->offset_ns > CALIB_MAX_NS)
				return "an offset beyond 1 s";
			if (t->spread_ns < 0 || t->spread_ns > CALIB_MAX_NS)
				return "a spread negative or beyond 1 s";
		}
	return NULL;
}

int calib_write(const struct calib *c, const char *path,
		char err[CALIB_ERRBUF])
{
	static const enum calib_dir dirs[] = { CALIB_TX, CALIB_RX };
	static const enum calib_src srcs[] = { CALIB_HW, CALIB_SW };
	const char *why = calib_check(c);
	struct wholefile w;
	int e;

	if (why) {
		snprintf(err, CALIB_ERRBUF, "%s: not written: %s", path, why);
		return -EINVAL;
	}
	e = wholefile_open(&w, path);
	if (e) {
		snprintf(err, CALIB_ERRBUF, "%s: %s", w.tmp ? w.tmp : path,
			 strerror(-e));
		wholefile_close(&w, true);
		return e;
	}
	fprintf(w.f, "# tapless calibration (tapless-calibration(5))\n");
	if (c->host[0])
		fprintf(w.f, "host %s\n", c->host);
	if (c->measured[0])
		fprintf(w.f, "measured %s\n", c->measured);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		for (size_t j = 0; j < sizeof(srcs) / sizeof(srcs[0]); j++) {
			const struct calib_term *t = &c->t[dirs[i]][srcs[j]];

			if (!t->set)
				continue;
			fprintf(w.f, "stamp %s %s offset %" PRId64 " spread %"
				PRId64, dir_names[dirs[i]], src_names[srcs[j]],
				t->offset_ns, t->spread_ns);
			if (t->samples)
				fprintf(w.f, " samples %" PRIu64, t->samples);
			fputc('\n', w.f);
		}
	e = wholefile_close(&w, false);
	if (e)
		snprintf(err, CALIB_ERRBUF, "%s: %s", path, strerror(-e));
	return e;
}
