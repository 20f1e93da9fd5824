/* bound.c — see bound.h. */
#include "ptp/bound.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

#define BOUND_MAX_CLOCKS 16

struct bound_point {
	int64_t ts;
	int64_t bound;		/* -1: not given */
	bool in_sync;
};

struct bound_clock {
	char name[16];
	struct bound_point *p;
	size_t n, cap;
	bool sorted;
};

struct bound {
	struct bound_clock clock[BOUND_MAX_CLOCKS];
	unsigned nclocks;
	int64_t max_age;
	bool have_utc;
	int utc_offset;
	unsigned samples, events, bad;
	bool torn;
	char err[JOURNAL_ERRBUF];
	char host[64];
};

static struct bound_clock *bound_clock(struct bound *b, const char *name,
				       bool add)
{
	for (unsigned i = 0; i < b->nclocks; i++)
		if (!strcmp(b->clock[i].name, name))
			return &b->clock[i];
	if (!add || b->nclocks == BOUND_MAX_CLOCKS)
		return NULL;
	struct bound_clock *c = &b->clock[b->nclocks++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->sorted = true;
	return c;
}

static int bound_cmp(const void *x, const void *y)
{
	const struct bound_point *a = x, *b = y;

	return (a->ts > b->ts) - (a->ts < b->ts);
}

int bound_open(struct bound **out, const char *path, int64_t max_age_ns,
	       char errbuf[JOURNAL_ERRBUF])
{
	struct journal_reader *r;
	struct journal_record rec;
	struct bound *b;
	int ret;

	*out = NULL;
	ret = journal_open(&r, path, errbuf);
	if (ret)
		return ret;
	b = xcalloc(1, sizeof(*b));
	b->max_age = max_age_ns;
	while ((ret = journal_next(r, &rec)) != 0) {
		if (ret < 0) {
			if (!b->err[0])
				snprintf(b->err, sizeof(b->err), "%s",
					 journal_error(r));
			continue;
		}
		if (rec.type == JOURNAL_EVENT) {
			b->events++;
			if (!strcmp(rec.event.name, "utc_offset")) {
				char *end;
				long v = strtol(rec.event.text, &end, 10);

				if (end != rec.event.text && v >= 0 && v < 1000) {
					b->have_utc = true;
					b->utc_offset = (int)v;
				}
			}
			continue;
		}
		struct bound_clock *c = bound_clock(b, rec.sample.clock, true);
		if (!c)
			continue;
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 1024;
			c->p = xrealloc(c->p, c->cap * sizeof(c->p[0]));
		}
		if (c->n && rec.sample.ts_ns < c->p[c->n - 1].ts)
			c->sorted = false;
		c->p[c->n++] = (struct bound_point){
			.ts = rec.sample.ts_ns,
			.bound = rec.sample.bound_ns == JOURNAL_NONE ? -1 :
				 rec.sample.bound_ns,
			.in_sync = rec.sample.in_sync,
		};
		b->samples++;
	}
	b->bad = journal_bad_lines(r);
	b->torn = journal_torn(r);
	snprintf(b->host, sizeof(b->host), "%s", journal_host(r));
	journal_close(r);
	for (unsigned i = 0; i < b->nclocks; i++)
		if (!b->clock[i].sorted)
			qsort(b->clock[i].p, b->clock[i].n,
			      sizeof(b->clock[i].p[0]), bound_cmp);
	*out = b;
	return 0;
}

void bound_destroy(struct bound *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nclocks; i++)
		free(b->clock[i].p);
	free(b);
}

enum bound_state bound_at(const struct bound *b, const char *clock, int64_t t,
			  int64_t *bound_ns)
{
	const struct bound_clock *c = NULL;
	size_t lo = 0, hi;

	*bound_ns = -1;
	if (!b)
		return BOUND_UNKNOWN;
	/* A journal without a single sample vouches for nothing. */
	if (!b->samples)
		return BOUND_OUT_OF_SYNC;
	for (unsigned i = 0; i < b->nclocks; i++)
		if (!strcmp(b->clock[i].name, clock))
			c = &b->clock[i];
	if (!c && b->nclocks == 1)
		c = &b->clock[0];
	if (!c || !c->n)
		return BOUND_UNKNOWN;
	/* The last sample at or before t. */
	hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->p[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		/* Before the journal began: nothing vouches for it. */
		return BOUND_OUT_OF_SYNC;
	}
	const struct bound_point *p = &c->p[lo - 1];
	/* t >= p->ts: the age fits in 64 bits unsigned, not always signed. */
	if ((uint64_t)t - (uint64_t)p->ts > (uint64_t)b->max_age ||
	    b->max_age < 0 || !p->in_sync)
		return BOUND_OUT_OF_SYNC;
	*bound_ns = p->bound;
	return BOUND_IN_SYNC;
}

int bound_utc_offset(const struct bound *b, int *s)
{
	if (!b->have_utc)
		return -ENOENT;
	*s = b->utc_offset;
	return 0;
}

unsigned bound_samples(const struct bound *b) { return b->samples; }
unsigned bound_events(const struct bound *b) { return b->events; }
unsigned bound_bad_lines(const struct bound *b) { return b->bad; }
bool bound_torn(const struct bound *b) { return b->torn; }
const char *bound_error(const struct bound *b) { return b->err; }
const char *bound_host(const struct bound *b) { return b->host; }
