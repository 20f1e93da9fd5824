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
		bool ok = true;

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (expstate_kv(line, "version", &v)) {
			version = atoi(v);
			seen |= 1;
		} else if (expstate_kv(line, "host", &v)) {
			if (strcmp(v, host)) {
				snprintf(err, EXPSTATE_ERRBUF, "%s:%u: the state "
					 "of host '%.64s', not '%.64s'", path,
					 lineno, v, host);
				fclose(f);
				return -EINVAL;
			}
			seen |= 2;
		} else if (expstate_kv(line, "input", &v)) {
			if (strcmp(v, input)) {
				snprintf(err, EXPSTATE_ERRBUF, "%s:%u: the state "
					 "of input %.200s, not %.200s", path,
					 lineno, v, input);
				fclose(f);
				return -EINVAL;
			}
			seen |= 4;
		} else if (expstate_kv(line, "destination", &v)) {
			if (strcmp(v, dest)) {
				snprintf(err, EXPSTATE_ERRBUF, "%s:%u: the state "
					 "of an export to %.200s, not %.200s",
					 path, lineno, v, dest);
				fclose(f);
				return -EINVAL;
			}
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
		if (!ok) {
			snprintf(err, EXPSTATE_ERRBUF, "%s:%u: not a line of a "
				 "tapless export state file", path, lineno);
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
