/* hwsim_truth.c — see hwsim_truth.h. */
#include "hwsim/hwsim_truth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"
#include "hwsim/hwsim_clock.h"
#include "hwsim/hwsim_host.h"

#define HWSIM_TRUTH_CLOCKS (HWSIM_MAX_PHC + 1)

/* One clock's history: straight pieces, each in force from its
 * ref_true until the next one's. */
struct hwsim_truth_clock {
	char name[16];
	struct hwsim_clock *piece;
	size_t n, cap;
};

struct hwsim_truth {
	char host[HWSIM_NAME_MAX];
	struct hwsim_truth_clock clock[HWSIM_TRUTH_CLOCKS];
	unsigned nclock;
};

static struct hwsim_truth_clock *truth_clock(const struct hwsim_truth *t,
					     const char *name)
{
	for (unsigned i = 0; i < t->nclock; i++)
		if (!strcmp(t->clock[i].name, name))
			return (struct hwsim_truth_clock *)&t->clock[i];
	return NULL;
}

static int truth_add(struct hwsim_truth *t, const char *name,
		     const struct hwsim_clock *p)
{
	struct hwsim_truth_clock *c = truth_clock(t, name);

	if (!c) {
		if (t->nclock == HWSIM_TRUTH_CLOCKS || strlen(name) >= sizeof(c->name))
			return -ENOSPC;
		c = &t->clock[t->nclock++];
		snprintf(c->name, sizeof(c->name), "%s", name);
	}
	/* The lines of one clock come in true-time order: each is written
	 * under the host's lock at the moment of its change. */
	if (c->n && p->ref_true < c->piece[c->n - 1].ref_true)
		return -EINVAL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct hwsim_clock *np = realloc(c->piece, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->piece = np;
		c->cap = cap;
	}
	c->piece[c->n++] = *p;
	return 0;
}

int hwsim_truth_load(struct hwsim_truth **out, const char *path,
		     char err[HWSIM_TRUTH_ERRBUF])
{
	struct hwsim_truth *t;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int rc = 0;
	FILE *f = fopen(path, "r");

	*out = NULL;
	if (!f) {
		rc = -errno;
		errbuf_set(err, HWSIM_TRUTH_ERRBUF, rc,
			   "%s: %s", path, strerror(errno));
		return rc;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		fclose(f);
		errbuf_set(err, HWSIM_TRUTH_ERRBUF, -ENOMEM,
			   "%s: out of memory", path);
		return -ENOMEM;
	}
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		struct hwsim_clock p = { 0 };
		long long tt, v;
		char name[32], host[HWSIM_NAME_MAX], extra;
		int ver;

		lineno++;
		if (line[len - 1] != '\n')
			break;		/* torn by a crash: not a change */
		if (lineno == 1) {
			if (sscanf(line, "# tapless-hwsim truth %d host %63s", &ver,
				   host) != 2 || ver != 1) {
				errbuf_set(err, HWSIM_TRUTH_ERRBUF, -EINVAL,
					   "%s:1: not a tapless-hwsim truth "
					   "journal of version 1", path);
				rc = -EINVAL;
			}
			snprintf(t->host, sizeof(t->host), "%s", host);
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%lld %31s %lld %lf %lf %c", &tt, name, &v,
			   &p.native_ppb, &p.adj_ppb, &extra) != 5) {
			errbuf_set(err, HWSIM_TRUTH_ERRBUF, -EINVAL,
				   "%s:%u: not \"TRUE_NS CLOCK VALUE_NS "
				   "NATIVE_PPB ADJ_PPB\"", path, lineno);
			rc = -EINVAL;
			break;
		}
		p.ref_true = tt;
		p.ref_val = v;
		rc = truth_add(t, name, &p);
		if (rc == -EINVAL)
			errbuf_set(err, HWSIM_TRUTH_ERRBUF, rc,
				   "%s:%u: %s goes back in true time",
				   path, lineno, name);
		else if (rc)
			errbuf_set(err, HWSIM_TRUTH_ERRBUF, rc,
				   "%s:%u: %s: %s", path, lineno, name,
				   rc == -ENOSPC ? "more clocks than a simulated host has"
				   : strerror(-rc));
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		errbuf_set(err, HWSIM_TRUTH_ERRBUF, rc,
			   "%s: %s", path, strerror(EIO));
	}
	if (!rc && !lineno) {
		rc = -EINVAL;
		errbuf_set(err, HWSIM_TRUTH_ERRBUF, rc,
			   "%s: empty: not a truth journal", path);
	}
	free(line);
	fclose(f);
	if (rc) {
		hwsim_truth_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void hwsim_truth_free(struct hwsim_truth *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->nclock; i++)
		free(t->clock[i].piece);
	free(t);
}

const char *hwsim_truth_host(const struct hwsim_truth *t)
{
	return t->host;
}

/* The index of the last piece in force at t_true, or -1 before the
 * first. */
static ssize_t truth_piece(const struct hwsim_truth_clock *c, int64_t t_true)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->piece[mid].ref_true <= t_true)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

int hwsim_truth_at(const struct hwsim_truth *t, const char *clock,
		   int64_t t_true, int64_t *value)
{
	const struct hwsim_truth_clock *c = truth_clock(t, clock);
	ssize_t i;

	if (!c)
		return -ENOENT;
	i = truth_piece(c, t_true);
	if (i < 0)
		return -ERANGE;
	*value = hwsim_clock_at(&c->piece[i], t_true);
	return 0;
}

int hwsim_truth_when(const struct hwsim_truth *t, const char *clock,
		     int64_t value, int64_t after, int64_t *t_true)
{
	const struct hwsim_truth_clock *c = truth_clock(t, clock);
	ssize_t i;

	if (!c)
		return -ENOENT;
	i = truth_piece(c, after);
	if (i < 0)
		i = 0;
	for (; (size_t)i < c->n; i++) {
		const struct hwsim_clock *p = &c->piece[i];
		double rate = 1 + (p->native_ppb + p->adj_ppb) / 1e9;
		int64_t from = p->ref_true > after ? p->ref_true : after, tt;

		if (rate <= 0)
			continue;	/* a clock that stands still or runs
					 * back: no piece of a real one */
		tt = p->ref_true + (int64_t)((double)(value - p->ref_val) / rate);
		/* Rounding: the value may be read a nanosecond early. */
		if (tt < from && hwsim_clock_at(p, from) == value)
			tt = from;
		if (tt >= from && ((size_t)i + 1 == c->n || tt < c->piece[i + 1].ref_true)) {
			*t_true = tt;
			return 0;
		}
	}
	return -ERANGE;
}
