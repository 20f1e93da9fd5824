/* samples.c — the samples file; see samples.h and tapless-correlate(8). */
#include "files/samples.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES_FIELDS 10
#define SAMPLES_FIELDS_TERMS (SAMPLES_FIELDS + SAMPLES_TERMS)

static const char *const samples_sync_names[SAMPLES_SYNC_KINDS] = {
	"none", "in", "out", "holdover",
};

const char *samples_sync_name(enum samples_sync s)
{
	return (unsigned)s < SAMPLES_SYNC_KINDS ? samples_sync_names[s] : "none";
}

int samples_write_header(FILE *f)
{
	return fputs("# tapless correlate samples: run kind from to time_ns "
		     "latency_ns sync bound_ns rate switch clock_ns holdover_ns "
		     "stamp_ns resolution_ns\n", f) < 0 ? -EIO : 0;
}

int samples_write(FILE *f, const struct samples_rec *r)
{
	return fprintf(f, "%s %s %s %s %" PRId64 " %" PRId64 " %s %" PRId64
		       " %.0f %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
		       "\n", r->run, r->kind, r->from, r->to, r->time_ns,
		       r->latency_ns, samples_sync_name(r->sync), r->bound_ns,
		       r->rate, r->sw, r->term_ns[0], r->term_ns[1],
		       r->term_ns[2], r->term_ns[3]) < 0 ? -EIO : 0;
}

/* A whole field as an int64_t; false if anything else is in it. */
static bool samples_int(const char *s, int64_t *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && !*end;
}

int samples_parse(char *line, struct samples_rec *r)
{
	char *f[SAMPLES_FIELDS_TERMS + 1], *save = NULL;
	int64_t rate;
	int n = 0, k;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n <= SAMPLES_FIELDS_TERMS;
	     t = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = t;
	if (!n || *f[0] == '#')
		return 1;
	if (n != SAMPLES_FIELDS && n != SAMPLES_FIELDS_TERMS)
		return -EBADMSG;
	for (k = 0; k < SAMPLES_TERMS; k++) {
		r->term_ns[k] = -1;
		if (n == SAMPLES_FIELDS_TERMS &&
		    !samples_int(f[SAMPLES_FIELDS + k], &r->term_ns[k]))
			return -EBADMSG;
	}
	if (strcmp(f[0], "main") && strcmp(f[0], "baseline"))
		return -EBADMSG;
	for (k = 0; k < SAMPLES_SYNC_KINDS && strcmp(f[6], samples_sync_names[k]);
	     k++)
		;
	if (k == SAMPLES_SYNC_KINDS)
		return -EBADMSG;
	if (!samples_int(f[4], &r->time_ns) || !samples_int(f[5], &r->latency_ns) ||
	    !samples_int(f[7], &r->bound_ns) || !samples_int(f[8], &rate))
		return -EBADMSG;
	r->run = f[0];
	r->kind = f[1];
	r->from = f[2];
	r->to = f[3];
	r->sync = (enum samples_sync)k;
	r->rate = (double)rate;
	r->sw = f[9];
	return 0;
}
