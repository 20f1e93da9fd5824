/* refcheck.c — host stamps against a reference capture (refcheck.h).
 *
 * Three passes over files, none over memory we did not size first: the
 * reference is read into a table of (key, stamp, direction) sorted by key;
 * the host file is read once to estimate the constant offset (median over
 * packets the reference holds once) and once more to match every packet to
 * the nearest unused reference copy within the window.
 */
#include "validate/refcheck.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/nstime.h"
#include "files/capfile.h"
#include "files/frame.h"
#include "base/errbuf.h"
#include "base/hmap.h"
#include "base/print.h"
#include "base/summary.h"
#include "stamp/ts.h"
#include "base/tstep.h"
#include "validate/verdict.h"
#include "base/xalloc.h"

#define KEY_PAYLOAD 16		/* payload bytes in an IP packet's key */
#define KEY_RAW 64		/* bytes of a non-IP frame's key */
#define OFFSET_SAMPLES 200000	/* differences the median is taken over */

struct ref_entry {
	uint64_t key;
	int64_t ts;
	uint8_t dir;		/* enum pcapng_dir */
	uint8_t used;
	uint8_t degraded;	/* the tap flagged its stamp */
};

/* What one host or reference packet is, for matching. */
struct pkt_view {
	bool keyed;
	uint64_t key;
	int64_t ts;		/* on the reference's timescale */
	enum pcapng_dir dir;
	bool skip;		/* a packet-socket copy of a sender's frame */
	bool degraded;		/* a tap stamp its device flagged */
	int timescale;		/* a tap stamp's own, TS_SCALE_UNKNOWN else */
};

/* The state of reading one file. */
struct side {
	struct cap_reader *r;
	const char *path;
	bool has_sender;	/* tapless-capd file with senders' stamps */
	int scale;		/* of the file as a whole, when it says */
	bool hw, sw;
	struct tstep step;	/* of the file's stamps */
};

void refcheck_config_init(struct refcheck_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ref_timescale = TS_SCALE_UTC;
	cfg->tai_utc_ns = TAI_UTC_NS;
	cfg->window_ns = 10 * 1000000LL;
	cfg->ref_format = TAPFMT_AUTO;
}

const char *refcheck_dir_name(enum refcheck_dir d)
{
	switch (d) {
	case REFCHECK_TX: return "tx";
	case REFCHECK_RX: return "rx";
	default: return "all";
	}
}

/* ---- keys ---- */

static bool packet_key(const struct cap_packet *pkt, int linktype, uint64_t *key)
{
	struct frame_info fi;
	uint64_t h = HMAP_FNV1A_INIT;
	uint32_t k;

	if (frame_parse(pkt->data, pkt->caplen, linktype, &fi)) {
		uint32_t n = pkt->origlen < KEY_RAW ? pkt->origlen : KEY_RAW;

		if (pkt->caplen < n)
			return false;
		h = hmap_fnv1a(h, "raw", 3);
		h = hmap_fnv1a(h, &pkt->origlen, sizeof(pkt->origlen));
		*key = hmap_fnv1a(h, pkt->data, n);
		return true;
	}
	k = fi.payload_wire < KEY_PAYLOAD ? fi.payload_wire : KEY_PAYLOAD;
	if (fi.payload_len < k)
		return false;
	h = hmap_fnv1a(h, &fi.flow.family, sizeof(fi.flow.family));
	h = hmap_fnv1a(h, &fi.flow.proto, 1);
	h = hmap_fnv1a(h, fi.flow.src, fi.flow.family == AF_INET ? 4 : 16);
	h = hmap_fnv1a(h, fi.flow.dst, fi.flow.family == AF_INET ? 4 : 16);
	h = hmap_fnv1a(h, &fi.flow.sport, 2);
	h = hmap_fnv1a(h, &fi.flow.dport, 2);
	h = hmap_fnv1a(h, &fi.payload_wire, sizeof(fi.payload_wire));
	if (fi.flow.proto == IPPROTO_TCP) {
		h = hmap_fnv1a(h, &fi.seq, 4);
		/* Without data, segments of one flow differ only here (a
		 * sender never rebuilds these: they come from the wire). */
		if (!fi.payload_wire) {
			h = hmap_fnv1a(h, &fi.ack, 4);
			h = hmap_fnv1a(h, &fi.tcp_flags, 1);
		}
	}
	*key = hmap_fnv1a(h, fi.payload, k);
	return true;
}

/* ---- reading ---- */

static int side_open(struct side *s, const char *path,
		     char err[REFCHECK_ERRBUF])
{
	char eb[CAP_ERRBUF];
	int rc;

	memset(s, 0, sizeof(*s));
	s->path = path;
	rc = cap_open(&s->r, path, eb);
	if (rc)
		return errbuf_set(err, REFCHECK_ERRBUF, rc, "%s", eb);
	return 0;
}

static void side_close(struct side *s)
{
	if (s->r)
		cap_close(s->r);
	s->r = NULL;
}

/* The host stamp's timescale move to the reference's. */
static int64_t scale_adjust(const struct cap_iface *ci, int ref_scale,
			    int64_t tai_utc)
{
	int scale;

	if (!ci || !ci->src_known)
		return 0;	/* a foreign file: taken as the reference's */
	scale = ci->src.timescale;
	if (scale == TS_SCALE_PHC)
		scale = TS_SCALE_TAI;	/* raw PHC time, under ptp4l */
	if (scale == TS_SCALE_TAI && ref_scale == TS_SCALE_UTC)
		return -tai_utc;
	if (scale == TS_SCALE_UTC && ref_scale == TS_SCALE_TAI)
		return tai_utc;
	return 0;
}

static bool iface_is_sender(const struct cap_iface *ci)
{
	return ci && ci->sender;
}

/* Before the first packet: whether the file carries senders' stamps.
 * Interfaces can also come later; those only count from then on. */
static void side_scan_ifaces(struct side *s)
{
	for (uint32_t i = 0; i < cap_iface_count(s->r); i++)
		if (iface_is_sender(cap_iface(s->r, i)))
			s->has_sender = true;
}

/* The next packet of s as a view: 1, 0 at the end, or < 0 (err set). */
static int side_next(struct side *s, const struct refcheck_config *cfg,
		     int ref_scale, bool host, struct pkt_view *v,
		     int64_t *adjust, char err[REFCHECK_ERRBUF])
{
	struct cap_packet pkt;
	const struct cap_iface *ci;
	int rc = cap_next(s->r, &pkt);

	if (rc < 0)
		return errbuf_set(err, REFCHECK_ERRBUF, rc,
				  "%s", cap_error(s->r));
	if (!rc)
		return 0;
	ci = cap_iface(s->r, pkt.iface);
	if (!s->has_sender && iface_is_sender(ci))
		s->has_sender = true;
	memset(v, 0, sizeof(*v));
	v->dir = pkt.dir;
	v->ts = pkt.ts_ns;
	v->degraded = pkt.degraded;
	v->timescale = pkt.timescale;
	if (host) {
		int64_t a = scale_adjust(ci, ref_scale, cfg->tai_utc_ns);

		v->ts += a;
		if (a)
			*adjust = a;
		if (ci && ci->src_known) {
			if (ci->src.hw)
				s->hw = true;
			else
				s->sw = true;
		}
		v->skip = s->has_sender && pkt.dir == PCAPNG_DIR_OUT &&
			  !iface_is_sender(ci);
	}
	tstep_add(&s->step, pkt.ts_ns);
	v->keyed = packet_key(&pkt, ci ? ci->linktype : FRAME_LINK_ETHERNET, &v->key);
	return 1;
}

static int64_t side_resolution(const struct side *s)
{
	int64_t res = 0;

	for (uint32_t i = 0; i < cap_iface_count(s->r); i++) {
		const struct cap_iface *ci = cap_iface(s->r, i);

		if (ci && ci->resolution_ns > res)
			res = ci->resolution_ns;
	}
	return res;
}

/* The reference file's own timescale, when it is a tapless file. */
static int ref_scale_of(const struct side *s, int dflt)
{
	for (uint32_t i = 0; i < cap_iface_count(s->r); i++) {
		const struct cap_iface *ci = cap_iface(s->r, i);

		if (ci && ci->src_known && ci->src.timescale != TS_SCALE_UNKNOWN)
			return ci->src.timescale == TS_SCALE_PHC ? TS_SCALE_TAI :
			       ci->src.timescale;
	}
	return dflt;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ref_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The first entry with key, and how many there are. */
static size_t ref_find(const struct ref_entry *e, size_t n, uint64_t key,
		       size_t *count)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < n && e[lo].key == key)
		lo++;
	*count = lo - first;
	return first;
}

/* A growing array of samples: amortised, not per packet. */
struct vec {
	int64_t *v;
	size_t n, cap;
};

static void vec_add(struct vec *a, int64_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 4096;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = x;
}

/* What the reference's tap stamps came to (refcheck_result). */
static void ref_tap_result(const struct side *ref, struct refcheck_result *res)
{
	struct cap_stats st;

	cap_stats(ref->r, &st);
	snprintf(res->ref_format, sizeof(res->ref_format), "%s",
		 tapfmt_name(st.tap));
	res->ref_tap_stamped = st.tap_stamped;
	res->ref_tap_device_frames = st.tap_consumed;
	res->ref_tap_missing = st.tap_missing;
	res->ref_tap_bad = st.tap_bad;
	res->ref_tap_degraded = st.tap_degraded;
	snprintf(res->ref_tap_warning, sizeof(res->ref_tap_warning), "%s",
		 cap_warning(ref->r));
}

/* *tap_scale: the timescale the reference's tap stamps said they are on
 * (Arista's header does), 0 when none did. */
static int read_reference(const struct refcheck_config *cfg, struct side *ref,
			  struct refcheck_result *res, struct ref_entry **out,
			  size_t *nout, int64_t *first, int64_t *last,
			  int *tap_scale, char err[REFCHECK_ERRBUF])
{
	struct ref_entry *e = NULL;
	size_t n = 0, cap = 0;
	struct pkt_view v;
	int64_t dummy = 0;
	int rc;

	while ((rc = side_next(ref, cfg, 0, false, &v, &dummy, err)) > 0) {
		if (!res->ref_packets || v.ts < *first)
			*first = v.ts;
		if (!res->ref_packets || v.ts > *last)
			*last = v.ts;
		res->ref_packets++;
		if (!v.keyed) {
			res->ref_unkeyed++;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			e = xrealloc(e, cap * sizeof(*e));
		}
		e[n].key = v.key;
		e[n].ts = v.ts;
		e[n].dir = (uint8_t)v.dir;
		e[n].used = 0;
		e[n].degraded = v.degraded;
		if (v.timescale != TS_SCALE_UNKNOWN && *tap_scale == TS_SCALE_UNKNOWN)
			*tap_scale = v.timescale;
		n++;
	}
	if (rc < 0) {
		free(e);
		return rc;
	}
	if (n)
		qsort(e, n, sizeof(*e), entry_cmp);
	*out = e;
	*nout = n;
	return 0;
}

/* Pass 1: the median difference over packets the reference has once. */
static int estimate_offset(const struct refcheck_config *cfg, int ref_scale,
			   const struct ref_entry *e, size_t n, int64_t *off,
			   bool *found, char err[REFCHECK_ERRBUF])
{
	struct side host;
	struct pkt_view v;
	struct vec d = { 0 };
	int64_t adj = 0;
	int rc = side_open(&host, cfg->host_path, err);

	*found = false;
	if (rc)
		return rc;
	side_scan_ifaces(&host);
	while (d.n < OFFSET_SAMPLES &&
	       (rc = side_next(&host, cfg, ref_scale, true, &v, &adj, err)) > 0) {
		size_t cnt, i;

		if (!v.keyed || v.skip)
			continue;
		i = ref_find(e, n, v.key, &cnt);
		if (cnt == 1)
			vec_add(&d, v.ts - e[i].ts);
	}
	side_close(&host);
	if (rc < 0) {
		free(d.v);
		return rc;
	}
	if (d.n) {
		qsort(d.v, d.n, sizeof(*d.v), i64_cmp);
		*off = summary_rank(d.v, d.n, 50);
		*found = true;
	}
	free(d.v);
	return 0;
}

static void dist_finish(struct refcheck_dist *dd, struct vec *a)
{
	dd->v = a->v;
	summary_of(a->v, a->n, &dd->err);
	dd->p1 = a->n ? summary_rank(a->v, a->n, 1) : 0;
}

int refcheck_run(const struct refcheck_config *cfg, struct refcheck_result *res,
		 char err[REFCHECK_ERRBUF])
{
	struct side ref, host;
	struct ref_entry *e = NULL;
	size_t n = 0;
	int64_t rfirst = 0, rlast = 0, adj = 0, off = 0;
	struct vec vals[REFCHECK_NDIR] = { { 0 } };
	struct linfit fit[REFCHECK_NDIR];
	struct pkt_view v;
	bool have_off;
	int ref_scale, tap_scale = TS_SCALE_UNKNOWN, rc;

	memset(res, 0, sizeof(*res));
	*err = 0;
	snprintf(res->host_source, sizeof(res->host_source), "unknown");
	rc = side_open(&ref, cfg->ref_path, err);
	if (rc)
		return rc;
	cap_set_tapfmt(ref.r, (enum tapfmt_kind)cfg->ref_format);
	rc = read_reference(cfg, &ref, res, &e, &n, &rfirst, &rlast,
			    &tap_scale, err);
	/* A tap that says its timescale is believed before the option. */
	ref_scale = tap_scale != TS_SCALE_UNKNOWN ? tap_scale :
		    ref_scale_of(&ref, cfg->ref_timescale);
	ref_tap_result(&ref, res);
	res->ref_res_ns = side_resolution(&ref);
	res->ref_step_ns = tstep_get(&ref.step);
	side_close(&ref);
	if (rc)
		return rc;

	rc = estimate_offset(cfg, ref_scale, e, n, &off, &have_off, err);
	if (rc)
		goto out;
	res->offset_estimate_ns = off;
	res->tai_utc_ns = cfg->tai_utc_ns;

	rc = side_open(&host, cfg->host_path, err);
	if (rc)
		goto out;
	side_scan_ifaces(&host);
	for (int d = 0; d < REFCHECK_NDIR; d++)
		linfit_init(&fit[d]);
	while ((rc = side_next(&host, cfg, ref_scale, true, &v, &adj, err)) > 0) {
		size_t cnt, i, best = SIZE_MAX;
		int64_t best_d = INT64_MAX, errv;
		enum pcapng_dir dir;
		int d;

		res->host_packets++;
		if (v.skip) {
			res->host_tap_tx_skipped++;
			continue;
		}
		if (!v.keyed) {
			res->host_unkeyed++;
			continue;
		}
		i = ref_find(e, n, v.key, &cnt);
		for (size_t k = i; k < i + cnt; k++) {
			int64_t dist = llabs(v.ts - off - e[k].ts);

			if (!e[k].used && dist < best_d) {
				best_d = dist;
				best = k;
			}
		}
		if (best == SIZE_MAX || best_d > cfg->window_ns) {
			if (v.ts - off >= rfirst && v.ts - off <= rlast)
				res->host_unmatched++;
			else
				res->host_outside++;
			continue;
		}
		e[best].used = 1;
		res->matched++;
		res->matched_degraded += e[best].degraded;
		errv = v.ts - e[best].ts;
		dir = v.dir;
		if (dir != PCAPNG_DIR_UNKNOWN && e[best].dir != PCAPNG_DIR_UNKNOWN) {
			res->dir_compared++;
			if (dir != e[best].dir)
				res->dir_conflicts++;
		} else if (dir == PCAPNG_DIR_UNKNOWN) {
			dir = (enum pcapng_dir)e[best].dir;
		}
		d = dir == PCAPNG_DIR_OUT ? REFCHECK_TX :
		    dir == PCAPNG_DIR_IN ? REFCHECK_RX : -1;
		if (d < 0)
			res->dir_unknown++;
		else {
			vec_add(&vals[d], errv);
			linfit_add(&fit[d], (double)e[best].ts, (double)errv);
		}
		vec_add(&vals[REFCHECK_ALL], errv);
		linfit_add(&fit[REFCHECK_ALL], (double)e[best].ts, (double)errv);
	}
	res->host_res_ns = side_resolution(&host);
	res->host_step_ns = tstep_get(&host.step);
	res->timescale_adjust_ns = adj;
	snprintf(res->host_source, sizeof(res->host_source), "%s",
		 host.hw && host.sw ? "mixed" : host.hw ? "hw" : host.sw ? "sw" :
		 "unknown");
	side_close(&host);
	for (int d = 0; d < REFCHECK_NDIR; d++) {
		dist_finish(&res->dir[d], &vals[d]);
		vals[d].v = NULL;
		linfit_result(&fit[d], &res->dir[d].fit);
	}
	if (rc > 0)
		rc = 0;
out:
	for (int d = 0; d < REFCHECK_NDIR; d++)
		free(vals[d].v);
	free(e);
	return rc;
}

void refcheck_result_free(struct refcheck_result *res)
{
	for (int d = 0; d < REFCHECK_NDIR; d++) {
		free(res->dir[d].v);
		res->dir[d].v = NULL;
	}
}

/* ---- judging ---- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void refcheck_judge(const struct refcheck_result *res,
		    const struct verdict_limits *lim, struct verdict_check *c)
{
	const struct refcheck_dist *all = &res->dir[REFCHECK_ALL];
	int64_t res_ns;
	char what[80];

	if (!res->matched) {
		verdict_note(c, VERDICT_FAIL,
			     "no packet in common: %llu host and %llu reference "
			     "packets, none matched (another link, another time, "
			     "or captures cut too short to match)",
			     (unsigned long long)res->host_packets,
			     (unsigned long long)res->ref_packets);
		return;
	}
	verdict_note(c, VERDICT_PASS, "%llu packets matched of %llu host and "
		     "%llu reference packets; host stamps: %s",
		     (unsigned long long)res->matched,
		     (unsigned long long)res->host_packets,
		     (unsigned long long)res->ref_packets, res->host_source);
	for (int d = 0; d < REFCHECK_NDIR; d++) {
		const struct refcheck_dist *dd = &res->dir[d];

		/* Per direction when both are there; else "all" alone. */
		if (!dd->err.n || (d == REFCHECK_ALL &&
				   res->dir[REFCHECK_TX].err.n +
				   res->dir[REFCHECK_RX].err.n == all->err.n &&
				   (res->dir[REFCHECK_TX].err.n ||
				    res->dir[REFCHECK_RX].err.n)))
			continue;
		snprintf(what, sizeof(what), "%s: |mean error|",
			 refcheck_dir_name((enum refcheck_dir)d));
		verdict_apply(c, lim, "ref.mean_abs_ns", what, fabs(dd->err.mean));
		snprintf(what, sizeof(what), "%s: error SD",
			 refcheck_dir_name((enum refcheck_dir)d));
		verdict_apply(c, lim, "ref.sd_ns", what, dd->err.sd);
		snprintf(what, sizeof(what), "%s: largest |p1|, |p99|",
			 refcheck_dir_name((enum refcheck_dir)d));
		verdict_apply(c, lim, "ref.p99_abs_ns", what,
			      (double)(llabs(dd->p1) > llabs(dd->err.p99) ?
				       llabs(dd->p1) : llabs(dd->err.p99)));
	}
	if (all->fit.n >= 3)
		verdict_apply(c, lim, "ref.rate_ppb", "|fitted rate|",
			      fabs(all->fit.b) * 1e9);
	verdict_apply(c, lim, "ref.unmatched_pct",
		      "host packets in the reference's span it lacks",
		      pct(res->host_unmatched, res->host_unmatched + res->matched));
	res_ns = res->host_res_ns > res->ref_res_ns ? res->host_res_ns :
		 res->ref_res_ns;
	if (res->host_step_ns > res_ns)
		res_ns = res->host_step_ns;
	if (res->ref_step_ns > res_ns)
		res_ns = res->ref_step_ns;
	if (verdict_apply(c, lim, "ref.resolution_ns", "coarser stamp resolution",
			  (double)res_ns) != VERDICT_PASS)
		verdict_note(c, VERDICT_WARN, "stamps %lld ns apart at best: the "
			     "error figures cannot be finer than that",
			     (long long)res_ns);
	if (res->dir_compared &&
	    res->dir_conflicts * 2 > res->dir_compared)
		verdict_note(c, VERDICT_WARN, "directions disagree in %llu of %llu "
			     "matches: the reference may be of another link, or "
			     "label its fibres the other way round",
			     (unsigned long long)res->dir_conflicts,
			     (unsigned long long)res->dir_compared);
	/* A whole TAI - UTC apart: one file's timescale is not what it
	 * seems (a raw PHC capture from tcpdump says nothing of TAI). */
	if (res->tai_utc_ns &&
	    fabs(fabs(all->err.mean) - (double)res->tai_utc_ns) < 1e6)
		verdict_note(c, VERDICT_FAIL, "the error is TAI - UTC (%+.0f ns): "
			     "one file's stamps are TAI, the other's UTC; give "
			     "--reference-timescale, or capture with a timescale "
			     "tapless records (tapless-capd)", all->err.mean);
	if (res->timescale_adjust_ns)
		verdict_note(c, VERDICT_PASS, "host stamps moved by %+lld ns to "
			     "the reference's timescale (TAI - UTC)",
			     (long long)res->timescale_adjust_ns);
}

/* ---- printing ---- */

static void dist_print(struct printer *p, enum refcheck_dir d,
		       const struct refcheck_dist *dd)
{
	print_object_begin(p, refcheck_dir_name(d));
	print_text(p, "  %-3s ", refcheck_dir_name(d));
	summary_print(p, "error_ns", &dd->err);
	print_int(p, "p1_ns", dd->err.n ? "    p1 %lld ns" : NULL, dd->p1);
	if (dd->fit.n >= 2) {
		print_double(p, "fit_offset_ns", ", fit: offset %.1f ns",
			     dd->fit.a);
		print_double(p, "fit_rate_ppb", " rate %+.2f ppb", dd->fit.b * 1e9);
		print_double(p, "fit_resid_sd_ns", " (SD about the line %.1f ns)\n",
			     dd->fit.resid_sd);
	} else {
		print_null(p, "fit_offset_ns", NULL);
		print_null(p, "fit_rate_ppb", NULL);
		print_null(p, "fit_resid_sd_ns", dd->err.n ? "\n" : NULL);
	}
	print_object_end(p);
}

void refcheck_print(struct printer *p, const char *key,
		    const struct refcheck_result *res)
{
	print_object_begin(p, key);
	print_text(p, "reference check\n");
	print_uint(p, "host_packets", "  host %llu packets", res->host_packets);
	print_str(p, "host_source", " (%s stamps)", res->host_source);
	print_uint(p, "ref_packets", ", reference %llu", res->ref_packets);
	print_uint(p, "matched", ", matched %llu\n", res->matched);
	print_uint(p, "host_unmatched", "  host packets missing from the "
		   "reference %llu", res->host_unmatched);
	print_uint(p, "host_outside", ", outside its span %llu",
		   res->host_outside);
	print_uint(p, "host_unkeyed", ", cut too short %llu", res->host_unkeyed);
	print_uint(p, "ref_unkeyed", " (reference %llu)", res->ref_unkeyed);
	print_uint(p, "host_tap_tx_skipped", ", packet-socket copies of sent "
		   "frames skipped %llu\n", res->host_tap_tx_skipped);
	print_uint(p, "dir_unknown", "  direction unknown %llu", res->dir_unknown);
	print_uint(p, "dir_conflicts", ", directions disagree %llu",
		   res->dir_conflicts);
	print_uint(p, "dir_compared", " of %llu", res->dir_compared);
	print_int(p, "offset_estimate_ns", ", median offset %lld ns",
		  res->offset_estimate_ns);
	print_int(p, "timescale_adjust_ns", ", timescale move %lld ns\n",
		  res->timescale_adjust_ns);
	print_int(p, "host_resolution_ns", "  resolution: host %lld ns declared",
		  res->host_res_ns);
	print_int(p, "host_step_ns", ", %lld delivered", res->host_step_ns);
	print_int(p, "ref_resolution_ns", "; reference %lld declared",
		  res->ref_res_ns);
	print_int(p, "ref_step_ns", ", %lld delivered\n", res->ref_step_ns);
	/* In text only where a tap's stamps were read. */
	bool tap = strcmp(res->ref_format, "none") != 0;

	print_str(p, "ref_format", tap ? "  reference stamps: the frames' %s "
		  "stamps" : NULL, res->ref_format);
	print_uint(p, "ref_tap_stamped", tap ? " (%llu stamped" : NULL,
		   res->ref_tap_stamped);
	print_uint(p, "ref_tap_device_frames", tap ? ", device frames %llu" : NULL,
		   res->ref_tap_device_frames);
	print_uint(p, "ref_tap_missing", tap ? ", left out without a stamp %llu" :
		   NULL, res->ref_tap_missing);
	print_uint(p, "ref_tap_bad", tap ? ", with a bad one %llu" : NULL,
		   res->ref_tap_bad);
	print_uint(p, "ref_tap_degraded", tap ? ", degraded %llu" : NULL,
		   res->ref_tap_degraded);
	print_uint(p, "matched_degraded", tap ? " of which matched %llu)\n" : NULL,
		   res->matched_degraded);
	if (res->ref_tap_warning[0])
		print_str(p, "ref_tap_warning", "  first left out: %s\n",
			  res->ref_tap_warning);
	print_text(p, "  error = host stamp - reference stamp (ns):\n");
	for (int d = 0; d < REFCHECK_NDIR; d++)
		dist_print(p, (enum refcheck_dir)d, &res->dir[d]);
	print_object_end(p);
}
