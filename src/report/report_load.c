/* report_load.c — reading a run directory (report_private.h): lab.conf,
 * then per rate the samples file (one pass for the figures; report_pair.c
 * reads it again beside the emulator's captures, and a last pass, when the
 * data files are written, gives the per-sample time series, which need the
 * run's start first), the run's facts, and the journals.
 */
#include "report/report_private.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addrport.h"
#include "base/ratelist.h"
#include "files/calib.h"
#include "files/capfile.h"
#include "files/samples.h"
#include "files/frame.h"
#include "base/hist.h"
#include "base/hmap.h"
#include "ptp/journal.h"
#include "base/opts.h"
#include "files/topo.h"
#include "base/xalloc.h"

static bool report_double(const char *s, double *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && isfinite(*v);
}

static int report_parse_rates(struct report *r, const char *val,
			      const char *where, char err[REPORT_ERRBUF])
{
	struct ratelist rl;
	char why[RATELIST_ERRBUF];

	if (ratelist_parse(&rl, val, REPORT_MAX_RATES, RATELIST_WHOLE, why))
		return report_fail(err, -EINVAL, "%s: rates: %s", where, why);
	for (unsigned i = 0; i < rl.n; i++) {
		struct report_rate *rt = &r->rate[r->nrates++];

		rt->rate = (long)rl.rate[i];
		ratelist_label(rl.rate[i], rt->label, sizeof(rt->label));
	}
	return 0;
}

static int report_parse_md(struct report *r, const char *val, const char *where,
			   char err[REPORT_ERRBUF])
{
	struct sockaddr_storage ss;
	socklen_t len;
	char spec[ADDRPORT_STRLEN + 8];
	size_t n = strlen(val);
	bool any = n >= 2 && !strcmp(val + n - 2, ":*");
	unsigned port;

	/* PORT or '*': every port of the address (all the venue's
	 * sessions, as the hosts' switch samples are); '*' is port 0 to
	 * addrport, which takes 0 where we do not. */
	if (n >= sizeof(spec))
		goto bad;
	memcpy(spec, val, n + 1);
	if (any)
		spec[n - 1] = '0';
	if (addrport_parse(spec, NULL, &ss, &len, NULL))
		goto bad;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		port = ntohs(a->sin_port);
		memcpy(r->md_addr, &a->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		port = ntohs(a->sin6_port);
		memcpy(r->md_addr, &a->sin6_addr, 16);
	}
	if (!port && !any)
		goto bad;
	r->md_family = ss.ss_family;
	r->md_port = (uint16_t)port;
	r->have_md = true;
	return 0;
bad:
	return report_fail(err, -EINVAL, "%s: md_source: '%s' is not ADDRESS:PORT "
			   "or ADDRESS:* (e.g. 198.18.1.1:9001, [2001:db8::1]:*)", where, val);
}

/* Check a known key's value; set what the report derives from it. */
static int report_conf_value(struct report *r, const char *key, char *val,
			     const char *where, char err[REPORT_ERRBUF])
{
	double d;

	if (!strcmp(key, "rates"))
		return report_parse_rates(r, val, where, err);
	if (!strcmp(key, "duration") || !strcmp(key, "switch_latency_ns") ||
	    !strcmp(key, "switch_jitter_ns")) {
		if (!report_double(val, &d) || d < 0)
			return report_fail(err, -EINVAL, "%s: %s: '%s' is not a "
					   "number >= 0", where, key, val);
		return 0;
	}
	if (!strcmp(key, "stamps")) {
		if (strcmp(val, "software") && strcmp(val, "hardware"))
			return report_fail(err, -EINVAL, "%s: stamps: '%s' is "
					   "not software or hardware", where, val);
		return 0;
	}
	if (!strcmp(key, "switch_mode")) {
		if (!strcmp(val, "cut-through"))
			r->mode = 0;
		else if (!strcmp(val, "store-and-forward"))
			r->mode = 1;
		else
			return report_fail(err, -EINVAL, "%s: switch_mode: '%s' is "
					   "not cut-through or store-and-forward",
					   where, val);
		return 0;
	}
	if (!strcmp(key, "switch_speed")) {
		if (topo_parse_speed(val, &r->speed_bps) || r->speed_bps <= 0)
			return report_fail(err, -EINVAL, "%s: switch_speed: '%s' "
					   "is not a speed (10G, 25G, 1G, 100M)",
					   where, val);
		return 0;
	}
	if (!strcmp(key, "md_source"))
		return report_parse_md(r, val, where, err);
	if (!strcmp(key, "hosts")) {
		const char *comma = strchr(val, ',');
		size_t a = comma ? (size_t)(comma - val) : 0;
		size_t b = comma ? strlen(comma + 1) : 0;

		if (!comma || !a || !b || a >= REPORT_NAME || b >= REPORT_NAME ||
		    strchr(comma + 1, ',') || strpbrk(val, " \t"))
			return report_fail(err, -EINVAL, "%s: hosts: '%s' is not "
					   "VENUE,ALGO", where, val);
		memcpy(r->venue, val, a);
		r->venue[a] = 0;
		memcpy(r->algo, comma + 1, b + 1);
		return 0;
	}
	return 0;
}

/* A "KEY VALUE # comment" line of lab.conf or run.conf, cut in place:
 * the key, *val the value (both trimmed), or NULL for a line with none. */
static char *conf_split(char *line, char **val)
{
	char *hash = strchr(line, '#'), *key;

	if (hash)
		*hash = 0;
	key = opts_trim(line);
	if (!*key)
		return NULL;
	*val = key + strcspn(key, " \t");
	if (**val)
		*(*val)++ = 0;
	*val = opts_trim(*val);
	return key;
}

int report_conf_load(struct report *r, const char *path,
		     char err[REPORT_ERRBUF])
{
	FILE *f = fopen(path, "r");
	char *line = NULL, where[PATH_MAX + 32];
	size_t plen = strlen(path);
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;

	if (!f)
		return report_fail(err, -errno, "%s: %s", path, strerror(errno));
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *key, *val;

		lineno++;
		/* path is shorter than PATH_MAX (it was opened) */
		memcpy(where, path, plen < PATH_MAX ? plen : PATH_MAX);
		snprintf(where + (plen < PATH_MAX ? plen : PATH_MAX), 32, ":%d", lineno);
		if (memchr(line, 0, (size_t)len)) {
			rc = report_fail(err, -EINVAL, "%s: a NUL byte (not a text "
					 "file?)", where);
			break;
		}
		key = conf_split(line, &val);
		if (!key)
			continue;
		if (strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(key)) {
			rc = report_fail(err, -EINVAL, "%s: '%s' is not a key "
					 "(lower case, digits, _)", where, key);
			break;
		}
		if (!*val) {
			rc = report_fail(err, -EINVAL, "%s: %s has no value", where, key);
			break;
		}
		if (report_conf(r, key)) {
			rc = report_fail(err, -EINVAL, "%s: %s given twice", where, key);
			break;
		}
		if (r->nkv == REPORT_MAX_KEYS) {
			rc = report_fail(err, -EINVAL, "%s: more than %d keys", where,
					 REPORT_MAX_KEYS);
			break;
		}
		rc = report_conf_value(r, key, val, where, err);
		if (rc)
			break;
		/* Keys this version does not know are kept and shown: a newer
		 * lab may write more than the report uses. */
		r->kv[r->nkv].key = xstrdup(key);
		r->kv[r->nkv++].val = xstrdup(val);
	}
	if (!rc && ferror(f))
		rc = report_fail(err, -EIO, "%s: read error", path);
	free(line);
	fclose(f);
	if (!rc && !r->nrates)
		rc = report_fail(err, -EINVAL, "%s: no rates (the run's message "
				 "rates, e.g. 'rates 1000,5000')", path);
	return rc;
}

/* ---- samples ---- */

/* The series a sample belongs to, or -1 (a kind or hop the report does
 * not show). */
int report_series_of(const struct report *r, const struct samples_rec *s)
{
	bool main_run = !strcmp(s->run, "main");
	bool md = !strcmp(s->from, r->venue) && !strcmp(s->to, r->algo);

	if (!strcmp(s->kind, "hop") && md)
		return main_run ? S_HOP : S_HOP_BASE;
	if (!main_run)
		return -1;
	if (!strcmp(s->kind, "switch") && md)
		return S_SWITCH;
	if (strcmp(s->from, r->algo) || strcmp(s->to, r->algo))
		return -1;
	if (!strcmp(s->kind, "tick_to_trade"))
		return S_BUY;
	if (!strcmp(s->kind, "fill_to_sell"))
		return S_SELL;
	if (!strcmp(s->kind, "app_to_wire") && !strcmp(s->sw, "D"))
		return S_APP;
	return -1;
}

/* A transaction is two stamps of one host's clock, later minus earlier:
 * below zero it is damaged, not measured, and left out. */
bool report_sample_dropped(int series, const struct samples_rec *s)
{
	return (series == S_BUY || series == S_SELL) && s->latency_ns < 0;
}

void report_samples_load(struct report *r, struct report_rate *rt)
{
	FILE *f = fopen(rt->path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long long lineno = 0, first_bad = 0;
	unsigned long long first_neg = 0, first_beyond = 0;
	long long neg_lat = 0, beyond_lat = 0, beyond_bound = 0;
	char neg_kind[32] = "", neg_host[REPORT_NAME] = "";

	for (int i = 0; i < S_COUNT; i++)
		rt->s[i].h = hist_create();
	if (!f) {
		report_notef(r, true, "%s: %s: rate %s has no figures", rt->path,
			     strerror(errno), rt->label);
		return;
	}
	while (getline(&line, &cap, f) >= 0) {
		struct samples_rec s;
		int rc, k;

		lineno++;
		rc = samples_parse(line, &s);
		if (rc < 0) {
			if (!rt->bad++)
				first_bad = lineno;
			continue;
		}
		if (rc)
			continue;
		rt->lines++;
		if (!strcmp(s.run, "main") && (!rt->have_t0 || s.time_ns < rt->t0)) {
			rt->t0 = s.time_ns;
			rt->have_t0 = true;
		}
		k = report_series_of(r, &s);
		if (k < 0) {
			rt->ignored++;
			continue;
		}
		if (report_sample_dropped(k, &s)) {
			if (!rt->negative++) {
				first_neg = lineno;
				neg_lat = s.latency_ns;
				snprintf(neg_kind, sizeof(neg_kind), "%s", s.kind);
				snprintf(neg_host, sizeof(neg_host), "%s", s.from);
			}
			continue;
		}
		/* One-way (and the switch samples made of it) may be below
		 * zero by as much as the clocks' error bound, not more. */
		if ((k == S_HOP || k == S_HOP_BASE || k == S_SWITCH) &&
		    (s.sync == SAMPLES_SYNC_IN || s.sync == SAMPLES_SYNC_HOLDOVER) &&
		    s.bound_ns >= 0 && s.latency_ns < -s.bound_ns) {
			if (!rt->beyond_bound++) {
				first_beyond = lineno;
				beyond_lat = s.latency_ns;
				beyond_bound = s.bound_ns;
			}
		}
		/* Out of sync: its error is not bounded, so it is counted
		 * and shown apart, never averaged in. Holdover is bounded
		 * (a wider bound): in, and counted. */
		if (s.sync == SAMPLES_SYNC_OUT)
			rt->s[k].out++;
		else
			hist_add(rt->s[k].h, s.latency_ns);
		if (s.sync == SAMPLES_SYNC_HOLDOVER)
			rt->s[k].holdover++;
	}
	if (ferror(f))
		report_notef(r, true, "%s: read error after line %llu", rt->path, lineno);
	else
		rt->have_samples = true;
	if (rt->bad)
		report_notef(r, true, "%s:%llu: not a samples line (%llu such lines "
			     "skipped)", rt->path, first_bad, rt->bad);
	if (rt->negative)
		report_notef(r, true, "%s:%llu: negative %s at %s (%lld ns): one "
			     "host's later stamp minus its earlier cannot be; "
			     "sample dropped (%llu such samples dropped)", rt->path,
			     first_neg, neg_kind, neg_host, neg_lat, rt->negative);
	if (rt->beyond_bound)
		report_notef(r, true, "%s:%llu: one-way sample %lld ns is below "
			     "zero by more than its error bound (%lld ns): kept, "
			     "counted as beyond its bound (%llu such samples)",
			     rt->path, first_beyond, beyond_lat, beyond_bound,
			     rt->beyond_bound);
	if (rt->have_samples && !rt->lines)
		report_notef(r, true, "%s: no samples", rt->path);
	free(line);
	fclose(f);
}

/* ---- the hosts' stamp calibrations ---- */

void report_calib_load(struct report *r, struct report_rate *rt)
{
	const char *host[REPORT_ROLES] = { r->venue, r->algo };

	for (int k = 0; k < REPORT_ROLES; k++) {
		char *path = rt->cal_path[k], err[CALIB_ERRBUF];
		struct calib *c;
		int rc;

		snprintf(path, sizeof(rt->cal_path[k]), "%s/rate-%ld/%s.cal",
			 r->dir, rt->rate, host[k]);
		c = xcalloc(1, sizeof(*c));
		rc = calib_read(c, path, err);
		if (rc) {
			/* Absent: the stamps were not calibrated (a run
			 * before calibration, or too few samples back to
			 * back); said in the headline, not as a note. */
			if (rc != -ENOENT)
				report_notef(r, true, "rate %s: %s: not used, "
					     "the %s's stamps taken as not "
					     "calibrated", rt->label, err,
					     report_role_names[k]);
			free(c);
			continue;
		}
		rt->cal[k] = c;
	}
}

/* ---- what the workload did ---- */

const char *const report_run_keys[RUN_COUNT] = {
	[RUN_SW_OFFERED] = "switch_md_offered",
	[RUN_SW_PUBLISHED] = "switch_md_published",
	[RUN_SW_RECEIVED] = "switch_md_received",
	[RUN_SW_RATE] = "switch_md_rate",
	[RUN_B2B_OFFERED] = "b2b_md_offered",
	[RUN_B2B_PUBLISHED] = "b2b_md_published",
	[RUN_B2B_RECEIVED] = "b2b_md_received",
	[RUN_B2B_RATE] = "b2b_md_rate",
};

/* A run's true start or end (PATH_start_ns, PATH_end_ns: nanoseconds on
 * the machine's clock), widening rt's window: true when key is one. */
static bool report_run_window(struct report *r, struct report_rate *rt,
			      const char *path, int lineno, const char *key,
			      const char *val)
{
	size_t n = strlen(key);
	bool start = n > 9 && !strcmp(key + n - 9, "_start_ns");
	bool end = n > 7 && !strcmp(key + n - 7, "_end_ns");
	char *e;
	long long v;

	if (!start && !end)
		return false;
	errno = 0;
	v = strtoll(val, &e, 10);
	if (errno || e == val || *e || v <= 0) {
		report_notef(r, true, "%s:%d: %s: '%s' is not a time in ns: "
			     "not used", path, lineno, key, val);
		return true;
	}
	if (start && (rt->win_start == JOURNAL_NONE || v < rt->win_start))
		rt->win_start = v;
	if (end && (rt->win_end == JOURNAL_NONE || v > rt->win_end))
		rt->win_end = v;
	return true;
}

void report_run_load(struct report *r, struct report_rate *rt)
{
	char path[PATH_MAX + 32], *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	FILE *f;

	for (int k = 0; k < RUN_COUNT; k++)
		rt->run[k] = NAN;
	rt->win_start = rt->win_end = JOURNAL_NONE;
	snprintf(path, sizeof(path), "%s/rate-%ld/run.conf", r->dir, rt->rate);
	f = fopen(path, "r");
	if (!f)
		return;		/* optional: a run laid out by hand */
	while (getline(&line, &cap, f) >= 0) {
		char *key, *val;
		double d;
		int k;

		lineno++;
		key = conf_split(line, &val);
		if (!key)
			continue;
		if (report_run_window(r, rt, path, lineno, key, val))
			continue;
		for (k = 0; k < RUN_COUNT && strcmp(key, report_run_keys[k]); k++)
			;
		if (k == RUN_COUNT)
			continue;	/* a newer lab's: not ours */
		if (!report_double(val, &d) || d < 0) {
			report_notef(r, true, "%s:%d: %s: '%s' is not a number "
				     ">= 0: not used", path, lineno, key, val);
			continue;
		}
		rt->run[k] = d;
		rt->have_run = true;
	}
	free(line);
	fclose(f);
}

/* ---- journals ---- */

static void report_safe_name(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < len; i++)
		dst[i] = isalnum((unsigned char)src[i]) || strchr("_.", src[i]) ?
			 src[i] : '_';
	dst[i] = 0;
}

static struct report_clock *report_clock(struct report *r, const char *host,
					 const char *clock)
{
	struct report_clock *c;

	for (size_t i = 0; i < r->nclk; i++)
		if (!strcmp(r->clk[i].host, host) && !strcmp(r->clk[i].clock, clock))
			return &r->clk[i];
	if (r->nclk == REPORT_MAX_CLOCKS)
		return NULL;
	c = &r->clk[r->nclk++];
	snprintf(c->host, sizeof(c->host), "%s", host);
	snprintf(c->clock, sizeof(c->clock), "%s", clock);
	{
		char h[REPORT_NAME], k[16];

		report_safe_name(h, sizeof(h), host);
		report_safe_name(k, sizeof(k), clock);
		snprintf(c->name, sizeof(c->name), "%s-%s", h, k);
	}
	return c;
}

void report_journals_load(struct report *r)
{
	char pattern[PATH_MAX + 32], err[JOURNAL_ERRBUF];
	bool first = true;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/journals/*.journal", r->dir);
	if (glob(pattern, 0, NULL, &g)) {
		report_notef(r, false, "no sync journals (%s): no PTP offset plot",
			     pattern);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i], *base = strrchr(path, '/');
		struct journal_reader *j;
		struct journal_record rec;
		char host[REPORT_NAME];
		int rc;

		if (journal_open(&j, path, err)) {
			report_notef(r, true, "%s", err);
			continue;
		}
		/* The file's name is the contract's HOST; the header's name
		 * is what syncd was told, used when the file says one. */
		snprintf(host, sizeof(host), "%s", base ? base + 1 : path);
		host[strcspn(host, ".")] = 0;
		if (*journal_host(j) && strcmp(journal_host(j), "-"))
			snprintf(host, sizeof(host), "%s", journal_host(j));
		while ((rc = journal_next(j, &rec)) != 0) {
			struct report_clock *c;

			if (rc < 0)
				continue;	/* counted below */
			if (rec.type != JOURNAL_SAMPLE)
				continue;
			c = report_clock(r, host, rec.sample.clock);
			if (!c)
				continue;
			if (c->n == c->cap) {
				c->cap = c->cap ? 2 * c->cap : 256;
				c->ts = xrealloc(c->ts, c->cap * sizeof(*c->ts));
				c->off = xrealloc(c->off, c->cap * sizeof(*c->off));
				c->bnd = xrealloc(c->bnd, c->cap * sizeof(*c->bnd));
				c->sync = xrealloc(c->sync, c->cap * sizeof(*c->sync));
			}
			c->ts[c->n] = rec.sample.ts_ns;
			c->off[c->n] = rec.sample.offset_ns;
			/* A holdover sample's bound (grown, still holding) is
			 * a bound like an in-sync one's. */
			c->bnd[c->n] = rec.sample.in_sync || rec.sample.holdover ?
				       rec.sample.bound_ns : JOURNAL_NONE;
			c->sync[c->n++] = rec.sample.in_sync ? REPORT_SYNC_IN :
					  rec.sample.holdover ?
					  REPORT_SYNC_HOLDOVER : REPORT_SYNC_OUT;
			if (first || rec.sample.ts_ns < r->ptp_t0)
				r->ptp_t0 = rec.sample.ts_ns;
			first = false;
		}
		if (journal_bad_lines(j))
			report_notef(r, true, "%s: %u bad lines skipped (first: %s)",
				     path, journal_bad_lines(j), journal_error(j));
		journal_close(j);
	}
	globfree(&g);
}
