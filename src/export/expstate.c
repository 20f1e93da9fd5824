/* expstate.c — see expstate.h. */
#include "export/expstate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wholefile.h"

#define EXPSTATE_VERSION 1

/* "key value" with value to the end of the line. */
static bool expstate_kv(char *line, const char *key, char **val)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || line[n] != ' ')
		return false;
	*val = line + n + 1;
	return true;
}

/* A line naming whose state this is: it must be ours. */
static bool expstate_same(const char *v, const char *want, const char *what,
			  const char *path, unsigned lineno,
			  char err[EXPSTATE_ERRBUF])
{
	if (!strcmp(v, want))
		return true;
	snprintf(err, EXPSTATE_ERRBUF, "%s:%u: the state of %s '%.200s', not "
		 "'%.200s'", path, lineno, what, v, want);
	return false;
}

int expstate_load(const char *path, const char *host, const char *input,
		  const char *dest, struct expstate *st,
		  char err[EXPSTATE_ERRBUF])
{
	char line[EXPSTATE_PATH + 128], *v;
	unsigned seen = 0, lineno = 0;
	int version = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	f = fopen(path, "r");
	if (!f) {
		int e = errno;

		snprintf(err, EXPSTATE_ERRBUF, "%s: %s", path, strerror(e));
		return e == ENOENT ? -ENOENT : -e;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		bool ok = true, mine = true;

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (expstate_kv(line, "version", &v)) {
			version = atoi(v);
			seen |= 1;
		} else if (expstate_kv(line, "host", &v)) {
			mine = expstate_same(v, host, "host", path, lineno, err);
			seen |= 2;
		} else if (expstate_kv(line, "input", &v)) {
			mine = expstate_same(v, input, "input", path, lineno,
					     err);
			seen |= 4;
		} else if (expstate_kv(line, "destination", &v)) {
			mine = expstate_same(v, dest, "an export to", path,
					     lineno, err);
			seen |= 8;
		} else if (expstate_kv(line, "records", &v)) {
			ok = sscanf(v, "%" SCNu64, &st->records) == 1;
			seen |= 16;
		} else if (expstate_kv(line, "transactions", &v)) {
			ok = sscanf(v, "%" SCNu64, &st->txns) == 1;
		} else if (expstate_kv(line, "at", &v)) {
			char *sp = strrchr(v, ' ');

			*(sp ? sp : v) = '\0';
			char *sp2 = strrchr(v, ' ');
			ok = sp && sp2 && sscanf(sp + 1, "%" SCNu64,
						 &st->at_index) == 1 &&
			     sscanf(sp2 + 1, "%" SCNu64, &st->at_offset) == 1;
			if (ok) {
				*sp2 = '\0';
				snprintf(st->at_file, sizeof(st->at_file), "%s", v);
				st->have_at = true;
			}
		} else {
			ok = false;
		}
		if (!ok)
			snprintf(err, EXPSTATE_ERRBUF, "%s:%u: not a line of a "
				 "tapless export state file", path, lineno);
		if (!ok || !mine) {
			fclose(f);
			return -EINVAL;
		}
	}
	fclose(f);
	if (seen != 31 || version != EXPSTATE_VERSION) {
		snprintf(err, EXPSTATE_ERRBUF, "%s: %s", path,
			 version && version != EXPSTATE_VERSION ?
			 "a state file of another version" :
			 "not a whole tapless export state file");
		return -EINVAL;
	}
	return 0;
}

int expstate_save(const char *path, const char *host, const char *input,
		  const char *dest, const struct expstate *st,
		  char err[EXPSTATE_ERRBUF])
{
	struct wholefile w;
	int e = wholefile_open(&w, path);

	if (e) {
		snprintf(err, EXPSTATE_ERRBUF, "%s: %s", w.tmp ? w.tmp : path,
			 strerror(-e));
		wholefile_close(&w, true);
		return e;
	}
	fprintf(w.f, "# tapless export state (tapless-export(8)): the rows "
		"the database has taken\nversion %d\nhost %s\ninput %s\n"
		"destination %s\nrecords %" PRIu64 "\ntransactions %" PRIu64
		"\n", EXPSTATE_VERSION, host, input, dest, st->records,
		st->txns);
	if (st->have_at)
		fprintf(w.f, "at %s %" PRIu64 " %" PRIu64 "\n", st->at_file,
			st->at_offset, st->at_index);
	e = wholefile_close(&w, false);
	if (e)
		snprintf(err, EXPSTATE_ERRBUF, "%s: %s", path, strerror(-e));
	return e;
}
