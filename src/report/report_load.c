/* report_load.c — reading a run directory (report_private.h): lab.conf,
 * then per rate the samples file (one pass for the figures; a second, when
 * the data files are written, for the per-sample time series, which need
 * the run's start first), the emulator's port captures, and the journals.
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
#include "files/capfile.h"
#include "files/samples.h"
#include "files/frame.h"
#include "base/hist.h"
#include "base/hmap.h"
#include "ptp/journal.h"
#include "base/opts.h"
#include "files/topo.h"
#include "base/xalloc.h"

#define REPORT_MAX_PORTS 64
/* A truth residence outside [0, 1 s] is not a switch's: the emulator's one
 * clock stamps egress after ingress, and no switch holds a frame for a
 * second (a one-bit flip in a stamp's bit 30 or above gives more). */
#define REPORT_MAX_RESIDENCE_NS 1000000000LL

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
			      const char *where, char *err)
{
	struct ratelist rl;
	char why[256];

	if (ratelist_parse(&rl, val, REPORT_MAX_RATES, RATELIST_WHOLE, why,
			   sizeof(why)))
		return report_fail(err, -EINVAL, "%s: rates: %s", where, why);
	for (unsigned i = 0; i < rl.n; i++) {
		struct report_rate *rt = &r->rate[r->nrates++];

		rt->rate = (long)rl.rate[i];
		ratelist_label(rl.rate[i], rt->label, sizeof(rt->label));
	}
	return 0;
}

static int report_parse_md(struct report *r, const char *val, const char *where,
			   char *err)
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
	if (addrport_parse(spec, NULL, &ss, &len, NULL, 0))
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
			     const char *where, char *err)
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

int report_conf_load(struct report *r, const char *path, char *err)
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
		char *s, *key, *val, *hash;

		lineno++;
		/* path is shorter than PATH_MAX (it was opened) */
		memcpy(where, path, plen < PATH_MAX ? plen : PATH_MAX);
		snprintf(where + (plen < PATH_MAX ? plen : PATH_MAX), 32, ":%d", lineno);
		if (memchr(line, 0, (size_t)len)) {
			rc = report_fail(err, -EINVAL, "%s: a NUL byte (not a text "
					 "file?)", where);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		s = opts_trim(line);
		if (!*s)
			continue;
		key = s;
		val = key + strcspn(key, " \t");
		if (*val)
			*val++ = 0;
		val = opts_trim(val);
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
		    s.sync == SAMPLES_SYNC_IN && s.bound_ns >= 0 && s.latency_ns < -s.bound_ns) {
			if (!rt->beyond_bound++) {
				first_beyond = lineno;
				beyond_lat = s.latency_ns;
				beyond_bound = s.bound_ns;
			}
		}
		/* Out of sync: its error is not bounded, so it is counted
		 * and shown apart, never averaged in. */
		if (s.sync == SAMPLES_SYNC_OUT)
			rt->s[k].out++;
		else
			hist_add(rt->s[k].h, s.latency_ns);
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

/* ---- truth: the switch emulator's ingress and egress stamps ---- */

/* A frame inside the switch: in the map of those, by packet id. */
struct report_frame {
	uint64_t id;
	int64_t in_ns, out_ns;		/* INT64_MIN until seen */
	uint32_t len;
	unsigned in_file, out_file;	/* where the stamps were: port file */
	unsigned long long in_pkt, out_pkt;	/* and packet, from 1 */
};

/* The frame with packet id id, added (not yet seen either way) if new. */
static struct report_frame *report_inflight(struct hmap *fl, uint64_t id)
{
	struct report_frame *e;
	void *v;

	if (hmap_add(fl, &id, &v) == 1) {
		e = v;
		*e = (struct report_frame){ .id = id, .in_ns = INT64_MIN,
					    .out_ns = INT64_MIN };
	}
	return v;
}

/* A frame from md_source (any port when it says '*'): TCP with payload. */
static bool report_is_md(const struct report *r, const struct cap_reader *c,
			 const struct cap_packet *p)
{
	const struct cap_iface *ifc = cap_iface(c, p->iface);
	struct frame_info fi;

	if (!ifc || frame_parse(p->data, p->caplen, ifc->linktype, &fi))
		return false;
	return fi.flow.proto == IPPROTO_TCP && fi.payload_wire > 0 &&
	       fi.flow.family == r->md_family &&
	       (!r->md_port || fi.flow.sport == r->md_port) &&
	       !memcmp(fi.flow.src, r->md_addr, r->md_family == AF_INET ? 4 : 16);
}

static void report_truth_pair(struct report *r, struct report_truth *t,
			      const struct report_frame *e)
{
	int64_t res;

	/* Stamps from a damaged file may be anything. */
	if (__builtin_sub_overflow(e->out_ns, e->in_ns, &res)) {
		t->unpaired++;
		return;
	}
	hist_add(t->res, res);
	/* A store-and-forward switch cannot start sending before the last
	 * bit is in, so the hosts' topology method takes serialisation out;
	 * the truth it is compared with must too. */
	if (r->mode == 1 && r->speed_bps > 0) {
		int64_t topo;

		if (!__builtin_sub_overflow(res, llround(topo_serialisation_ns(e->len,
				r->speed_bps)), &topo))
			hist_add(t->topo, topo);
	} else if (r->mode != 1) {
		hist_add(t->topo, res);
	}
}

void report_truth_load(struct report *r, struct report_rate *rt)
{
	struct report_truth *t = &rt->truth;
	struct cap_reader *in[REPORT_MAX_PORTS];
	struct cap_packet pkt[REPORT_MAX_PORTS];
	bool live[REPORT_MAX_PORTS];
	struct hmap *fl;
	char pattern[PATH_MAX + 64], errbuf[CAP_ERRBUF];
	unsigned long long pkts[REPORT_MAX_PORTS] = { 0 };
	char bad[PATH_MAX * 2 + 200] = "";
	glob_t g;
	size_t n = 0;

	t->res = hist_create();
	t->topo = hist_create();
	snprintf(pattern, sizeof(pattern), "%s/rate-%ld/switch/swemu/*.pcapng",
		 r->dir, rt->rate);
	if (glob(pattern, 0, NULL, &g)) {
		snprintf(t->why, sizeof(t->why), "no emulator captures "
			 "(rate-%ld/switch/swemu/*.pcapng)", rt->rate);
		return;
	}
	if (!r->have_md) {
		snprintf(t->why, sizeof(t->why), "lab.conf has no md_source, so "
			 "the market data frames cannot be told apart");
		globfree(&g);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc && n < REPORT_MAX_PORTS; i++) {
		if (cap_open(&in[n], g.gl_pathv[i], errbuf)) {
			report_notef(r, true, "%s", errbuf);
			continue;
		}
		live[n] = true;
		n++;
	}
	if (g.gl_pathc > REPORT_MAX_PORTS)
		report_notef(r, true, "%s: more than %d port captures; the rest "
			     "are not read", pattern, REPORT_MAX_PORTS);
	globfree(&g);
	t->files = (unsigned)n;
	/* Fixed sizes: cannot fail. */
	hmap_create(&fl, sizeof(uint64_t), sizeof(struct report_frame), 512,
		    false);
	for (size_t i = 0; i < n; i++) {
		int rc = cap_next(in[i], &pkt[i]);

		live[i] = rc == 1;
		pkts[i] += rc == 1;
		if (rc < 0)
			report_notef(r, true, "%s", cap_error(in[i]));
	}
	/* Merge the ports in stamp order: a frame's egress comes after its
	 * ingress, so only frames inside the switch wait in the table. */
	for (;;) {
		struct report_frame *e;
		struct cap_packet *p;
		size_t m = n;
		int rc;

		for (size_t i = 0; i < n; i++)
			if (live[i] && (m == n || pkt[i].ts_ns < pkt[m].ts_ns))
				m = i;
		if (m == n)
			break;
		p = &pkt[m];
		if (!p->has_packet_id) {
			t->no_id++;
		} else if ((p->dir == PCAPNG_DIR_IN || p->dir == PCAPNG_DIR_OUT) &&
			   report_is_md(r, in[m], p)) {
			e = report_inflight(fl, p->packet_id);
			if (p->dir == PCAPNG_DIR_IN) {
				if (e->in_ns != INT64_MIN)
					t->unpaired++;	/* the id again */
				e->in_ns = p->ts_ns;
				e->len = p->origlen;
				e->in_file = (unsigned)m;
				e->in_pkt = pkts[m];
			} else {
				if (e->out_ns != INT64_MIN)
					t->unpaired++;
				e->out_ns = p->ts_ns;
				e->out_file = (unsigned)m;
				e->out_pkt = pkts[m];
			}
			if (e->in_ns != INT64_MIN && e->out_ns != INT64_MIN) {
				int64_t res;

				/* A damaged stamp: not the switch's residence. */
				if (!__builtin_sub_overflow(e->out_ns, e->in_ns, &res) &&
				    (res < 0 || res > REPORT_MAX_RESIDENCE_NS)) {
					if (!t->implausible++)
						snprintf(bad, sizeof(bad), "packet id %llu "
							 "(ingress %s packet %llu, egress "
							 "%s packet %llu): residence %lld ns "
							 "(%.3f s)",
							 (unsigned long long)e->id,
							 cap_path(in[e->in_file]), e->in_pkt,
							 cap_path(in[e->out_file]), e->out_pkt,
							 (long long)res, (double)res / 1e9);
				} else {
					report_truth_pair(r, t, e);
					t->md_frames++;
				}
				hmap_del_val(fl, e);
			}
		}
		rc = cap_next(in[m], p);
		live[m] = rc == 1;
		pkts[m] += rc == 1;
		if (rc < 0)
			report_notef(r, true, "%s", cap_error(in[m]));
	}
	t->unpaired += hmap_count(fl);
	hmap_destroy(fl);
	for (size_t i = 0; i < n; i++)
		cap_close(in[i]);
	if (t->implausible)
		report_notef(r, true, "rate %s: truth: market data frame %s is "
			     "implausible (below 0 or over 1 s): dropped from the "
			     "truth (%llu such frames dropped)", rt->label, bad,
			     t->implausible);
	if (!t->md_frames && t->implausible) {
		snprintf(t->why, sizeof(t->why), "every market data frame's "
			 "residence in rate-%ld/switch/swemu is implausible (below "
			 "0 or over 1 s)", rt->rate);
		return;
	}
	if (!t->md_frames) {
		snprintf(t->why, sizeof(t->why), "no market data frame from "
			 "md_source with both an ingress and an egress stamp in "
			 "rate-%ld/switch/swemu", rt->rate);
		return;
	}
	t->have = true;
	if (hist_count(t->topo)) {
		t->have_topo = true;
	} else {
		snprintf(t->why, sizeof(t->why), "store-and-forward without "
			 "switch_speed in lab.conf: serialisation unknown");
		report_notef(r, true, "rate %s: %s", rt->label, t->why);
	}
	if (r->mode < 0)
		report_notef(r, false, "rate %s: switch_mode unknown; the truth "
			     "is the residence as stamped (as for cut-through)",
			     rt->label);
	if (t->unpaired)
		report_notef(r, true, "rate %s: %llu market data frames of the "
			     "emulator had an ingress or an egress stamp only",
			     rt->label, t->unpaired);
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
	char pattern[PATH_MAX + 32], errbuf[JOURNAL_ERRBUF];
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

		if (journal_open(&j, path, errbuf)) {
			report_notef(r, true, "%s", errbuf);
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
			c->bnd[c->n] = rec.sample.in_sync ? rec.sample.bound_ns : JOURNAL_NONE;
			c->sync[c->n++] = rec.sample.in_sync;
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
