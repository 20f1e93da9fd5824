/* bound.c — see bound.h. */
#include "ptp/bound.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/errbuf.h"
#include "base/xalloc.h"

#define BOUND_MAX_CLOCKS 16
#define BOUND_MIN_CAP 1024

struct bound_point {
	int64_t ts;
	int64_t bound;		/* -1: not given */
	uint32_t seq;		/* arrival order within the clock (fits in
				 * the padding): sorting on (ts, seq) keeps
				 * the later of two lines at one instant last */
	uint32_t drift_ppb;	/* holdover: growth of the bound */
	bool in_sync, holdover;
	int64_t fresh;		/* the bound of the last fresh in-sync
				 * sample at or before this one (-1: none):
				 * what a holdover grew from */
	bool kept;		/* phc2sys keeps the clock on a reference,
				 * and measured offset (clock - reference)
				 * as it is written: a reading of two clocks
				 * on one host, not a noisy servo figure */
	int64_t offset;
};

struct bound_clock {
	char name[16];
	struct bound_point *p;	/* in time order once a read ends */
	size_t n, cap;
	uint32_t seq;
	uint32_t drift_ppb;	/* from the clock's last rules event */
	bool sorted;
};

struct bound {
	struct bound_clock clock[BOUND_MAX_CLOCKS];
	unsigned nclocks;
	int64_t max_age;
	bool have_utc;
	int utc_offset;
	unsigned samples, events, bad, holdover;
	bool torn;
	char err[BOUND_ERRBUF];	/* bound_error(): the first bad line */
	char host[64];
	char *path;
	struct journal_reader *r;	/* the file read, kept open: one removed
					 * or renamed under us still reads to
					 * its end */
	dev_t dev;			/* and which file it is */
	ino_t ino;
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
	c->drift_ppb = BOUND_DEFAULT_DRIFT_PPB;
	return c;
}

/* The clock asked for, or the only one the journal has. */
static const struct bound_clock *bound_find(const struct bound *b,
					    const char *name)
{
	for (unsigned i = 0; i < b->nclocks; i++)
		if (!strcmp(b->clock[i].name, name))
			return &b->clock[i];
	return b->nclocks == 1 ? &b->clock[0] : NULL;
}

static int bound_cmp(const void *x, const void *y)
{
	const struct bound_point *a = x, *b = y;

	if (a->ts != b->ts)
		return (a->ts > b->ts) - (a->ts < b->ts);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* How many samples of c are at or before t. */
static size_t bound_upto(const struct bound_clock *c, int64_t t)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->p[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void bound_add(struct bound *b, const struct journal_sample *s)
{
	struct bound_clock *c = bound_clock(b, s->clock, true);

	if (!c)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : BOUND_MIN_CAP;
		c->p = xrealloc(c->p, c->cap * sizeof(c->p[0]));
	}
	/* A late sample is kept, sorted in when the read ends: it judges
	 * the moments from its time to the next sample's. */
	if (c->n && s->ts_ns < c->p[c->n - 1].ts)
		c->sorted = false;
	c->p[c->n++] = (struct bound_point){
		.ts = s->ts_ns,
		.bound = s->bound_ns == JOURNAL_NONE ? -1 : s->bound_ns,
		.seq = c->seq++,
		.drift_ppb = c->drift_ppb,
		.in_sync = s->in_sync,
		.holdover = s->holdover && !s->in_sync,
		.kept = !strcmp(s->state, "phc2sys") &&
			s->offset_ns != JOURNAL_NONE,
		.offset = s->offset_ns,
	};
	b->samples++;
	if (s->holdover && !s->in_sync)
		b->holdover++;
}

static void bound_event(struct bound *b, const struct journal_event *e)
{
	b->events++;
	if (!strcmp(e->name, "utc_offset")) {
		char *end;
		long v = strtol(e->text, &end, 10);

		if (end != e->text && v >= 0 && v < 1000) {
			b->have_utc = true;
			b->utc_offset = (int)v;
		}
	} else if (!strcmp(e->name, "rules")) {
		/* "... drift_ppb=N ...": the growth of the clock's holdover
		 * bounds from here on. */
		const char *d = strstr(e->text, "drift_ppb=");
		struct bound_clock *c;
		char *end;
		long v;

		if (!d || !(c = bound_clock(b, e->clock, true)))
			return;
		v = strtol(d + 10, &end, 10);
		if (end != d + 10 && v >= 0 && v <= 1000000)
			c->drift_ppb = (uint32_t)v;
	}
}

/* Read b->r on to its end. */
static void bound_read(struct bound *b)
{
	struct journal_record rec;
	int ret;

	while ((ret = journal_next(b->r, &rec)) != 0) {
		if (ret < 0) {
			b->bad++;
			if (!b->err[0])
				errbuf_set(b->err, BOUND_ERRBUF, ret, "%s",
					   journal_error(b->r));
			continue;
		}
		if (rec.type == JOURNAL_EVENT)
			bound_event(b, &rec.event);
		else
			bound_add(b, &rec.sample);
	}
	b->torn = journal_torn(b->r);
	/* A file without its header (truncated, say) keeps the host the
	 * one before named. */
	if (*journal_host(b->r))
		snprintf(b->host, sizeof(b->host), "%s", journal_host(b->r));
	for (unsigned i = 0; i < b->nclocks; i++) {
		struct bound_clock *c = &b->clock[i];
		int64_t fresh = -1;

		if (!c->sorted) {
			qsort(c->p, c->n, sizeof(c->p[0]), bound_cmp);
			c->sorted = true;
		}
		/* Once per read, not per lookup: a stamp in a long holdover
		 * finds the bound it grew from at once. A holdover run that
		 * began before what bound_forget() kept has none. */
		for (size_t k = 0; k < c->n; k++) {
			struct bound_point *p = &c->p[k];

			if (p->in_sync && p->bound >= 0)
				fresh = p->bound;
			else if (!p->holdover)
				fresh = -1;
			p->fresh = fresh;
		}
	}
}

/* Open b->path from its beginning, and note which file it is. */
static int bound_reopen(struct bound *b, char err[BOUND_ERRBUF])
{
	struct stat st;
	int ret;

	ret = journal_open(&b->r, b->path, err);
	if (ret)
		return ret;
	if (fstat(journal_fd(b->r), &st) < 0) {
		ret = errbuf_set(err, BOUND_ERRBUF, -errno, "%s: %s", b->path,
				 strerror(errno));
		journal_close(b->r);
		b->r = NULL;
		return ret;
	}
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	return 0;
}

int bound_open(struct bound **out, const char *path, int64_t max_age_ns,
	       char err[BOUND_ERRBUF])
{
	struct bound *b;
	int ret;

	*out = NULL;
	b = xcalloc(1, sizeof(*b));
	b->max_age = max_age_ns;
	b->path = xstrdup(path);
	ret = bound_reopen(b, err);
	if (ret) {
		bound_destroy(b);
		return ret;
	}
	bound_read(b);
	*out = b;
	return 0;
}

int bound_refresh(struct bound *b, char err[BOUND_ERRBUF])
{
	unsigned before = b->samples;
	struct stat st, cur;
	int ret = 0;

	/* The path first, the file we hold second: a writer renames its
	 * file before it writes to the next one, so when the path names
	 * another file, the one we hold has all its lines. */
	if (stat(b->path, &st) < 0)
		ret = -errno;
	if (b->r) {
		if (!fstat(journal_fd(b->r), &cur) &&
		    (uint64_t)cur.st_size < journal_offset(b->r)) {
			/* Truncated: what comes now starts a new file. */
			journal_close(b->r);
			b->r = NULL;
		} else {
			if (!journal_resume(b->r))
				bound_read(b);
			if (!ret && (st.st_dev != b->dev ||
				     st.st_ino != b->ino)) {
				journal_close(b->r);
				b->r = NULL;
			}
		}
	}
	if (ret)
		return errbuf_set(err, BOUND_ERRBUF, ret, "%s: %s", b->path,
				  strerror(-ret));
	if (!b->r) {
		ret = bound_reopen(b, err);
		if (ret)
			return ret;
		bound_read(b);
	}
	return (int)(b->samples - before);
}

void bound_forget(struct bound *b, int64_t before_ns)
{
	for (unsigned i = 0; i < b->nclocks; i++) {
		struct bound_clock *c = &b->clock[i];
		size_t k = bound_upto(c, before_ns);

		/* The last sample at or before the cut judges the moments
		 * from the cut to the next sample: it stays. */
		if (k < 2)
			continue;
		k--;
		memmove(c->p, c->p + k, (c->n - k) * sizeof(c->p[0]));
		c->n -= k;
		/* Give back what a whole journal read at open took, and
		 * no more often than the array halves. */
		if (c->cap > BOUND_MIN_CAP && c->n < c->cap / 4) {
			c->cap = c->n * 2 > BOUND_MIN_CAP ? c->n * 2 :
			       BOUND_MIN_CAP;
			c->p = xrealloc(c->p, c->cap * sizeof(c->p[0]));
		}
	}
}

void bound_destroy(struct bound *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nclocks; i++)
		free(b->clock[i].p);
	journal_close(b->r);
	free(b->path);
	free(b);
}

enum bound_state bound_at_split(const struct bound *b, const char *clock,
				int64_t t, int64_t *bound_ns, int64_t *fresh_ns)
{
	const struct bound_clock *c;
	size_t k;

	*bound_ns = -1;
	*fresh_ns = -1;
	if (!b)
		return BOUND_UNKNOWN;
	/* A journal without a single sample vouches for nothing. */
	if (!b->samples)
		return BOUND_OUT_OF_SYNC;
	c = bound_find(b, clock);
	if (!c || !c->n)
		return BOUND_UNKNOWN;
	k = bound_upto(c, t);
	if (!k) {
		/* Before the journal began: nothing vouches for it. */
		return BOUND_OUT_OF_SYNC;
	}
	const struct bound_point *p = &c->p[k - 1];
	/* t >= p->ts: the age fits in 64 bits unsigned, not always signed. */
	uint64_t age = (uint64_t)t - (uint64_t)p->ts;

	if (age > (uint64_t)b->max_age || b->max_age < 0 ||
	    (!p->in_sync && !p->holdover))
		return BOUND_OUT_OF_SYNC;
	*bound_ns = *fresh_ns = p->bound;
	if (!p->holdover)
		return BOUND_IN_SYNC;
	/* Grown on to t, rounded up (in double: any max_age fits). */
	if (p->bound >= 0) {
		double g = ceil((double)age * p->drift_ppb / 1e9);

		*bound_ns = g < 4e18 - (double)p->bound ?
			    p->bound + (int64_t)g : INT64_MAX / 2;
	}
	/* The holdover sample's own bound was grown from the last fresh
	 * one (syncd): that one is the clock's, the rest the holdover's. */
	if (p->fresh >= 0 && p->fresh <= p->bound)
		*fresh_ns = p->fresh;
	return BOUND_HOLDOVER;
}

int bound_offset_at(const struct bound *b, const char *clock, int64_t t,
		    int64_t *offset_ns, int64_t *part_ns)
{
	const struct bound_clock *c;
	const struct bound_point *p, *q;
	size_t k;

	if (!b || !(c = bound_find(b, clock)) || !c->n)
		return -ENOENT;
	k = bound_upto(c, t);
	if (!k)
		return -ENOENT;
	p = &c->p[k - 1];
	if (!p->kept || !p->in_sync || p->bound < 0 ||
	    (uint64_t)t - (uint64_t)p->ts > (uint64_t)b->max_age ||
	    b->max_age < 0)
		return -ENOENT;
	*offset_ns = p->offset;
	/* Between two fresh readings, the line through them. */
	q = k < c->n ? &c->p[k] : NULL;
	if (q && q->kept && q->in_sync && q->ts > p->ts &&
	    (uint64_t)q->ts - (uint64_t)p->ts <= (uint64_t)b->max_age)
		*offset_ns += (int64_t)llround((double)(q->offset - p->offset) *
					       (double)(t - p->ts) /
					       (double)(q->ts - p->ts));
	/* syncd's chained bound is |offset| + what may have moved since
	 * the reading (tapless-syncd(8)): from the reading itself what is
	 * left is the rest, and from a point on the line, the rest plus
	 * how far the line moved off the reading. Never more than the
	 * bound comes out. */
	{
		int64_t moved = *offset_ns - p->offset;

		*part_ns = (p->offset < 0 ? -p->offset : p->offset) -
			   (moved < 0 ? -moved : moved);
		if (*part_ns > p->bound)
			*part_ns = p->bound;
	}
	return 0;
}

enum bound_state bound_at(const struct bound *b, const char *clock, int64_t t,
			  int64_t *bound_ns)
{
	int64_t fresh;

	return bound_at_split(b, clock, t, bound_ns, &fresh);
}

bool bound_has_clock(const struct bound *b, const char *clock)
{
	for (unsigned i = 0; b && i < b->nclocks; i++)
		if (!strcmp(b->clock[i].name, clock))
			return true;
	return false;
}

int bound_newest(const struct bound *b, const char *clock, int64_t *t_ns)
{
	const struct bound_clock *c = b ? bound_find(b, clock) : NULL;

	if (!c || !c->n)
		return -ENOENT;
	*t_ns = c->p[c->n - 1].ts;
	return 0;
}

int bound_span(const struct bound *b, int64_t *first_ns, int64_t *last_ns)
{
	bool any = false;

	for (unsigned i = 0; i < b->nclocks; i++) {
		const struct bound_clock *c = &b->clock[i];

		if (!c->n)
			continue;
		if (!any || c->p[0].ts < *first_ns)
			*first_ns = c->p[0].ts;
		if (!any || c->p[c->n - 1].ts > *last_ns)
			*last_ns = c->p[c->n - 1].ts;
		any = true;
	}
	return any ? 0 : -ENOENT;
}

int bound_utc_offset(const struct bound *b, int *s)
{
	if (!b->have_utc)
		return -ENOENT;
	*s = b->utc_offset;
	return 0;
}

unsigned bound_kept(const struct bound *b)
{
	size_t n = 0;

	for (unsigned i = 0; i < b->nclocks; i++)
		n += b->clock[i].n;
	return (unsigned)n;
}

unsigned bound_samples(const struct bound *b) { return b->samples; }
unsigned bound_events(const struct bound *b) { return b->events; }
unsigned bound_holdover_samples(const struct bound *b) { return b->holdover; }
unsigned bound_bad_lines(const struct bound *b) { return b->bad; }
bool bound_torn(const struct bound *b) { return b->torn; }
const char *bound_error(const struct bound *b) { return b->err; }
const char *bound_host(const struct bound *b) { return b->host; }
