/* report_truth.c — the switch emulator's truth (report_private.h): its
 * port captures merged in stamp order, each market data frame's ingress and
 * egress paired by epb_packetid, handed out one frame at a time so that
 * report_pair.c can set each beside the samples of the same frame; and the
 * frame identity both use.
 *
 * Only frames inside the switch wait in the table of frames in flight: a
 * frame's egress is stamped after its ingress, and the files are read in
 * stamp order.
 */
#include "report/report_private.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "base/hist.h"
#include "base/hmap.h"
#include "base/xalloc.h"
#include "files/capfile.h"
#include "files/frame.h"
#include "files/topo.h"

#define REPORT_MAX_PORTS 64
/* A truth residence outside [0, 1 s] is not a switch's: the emulator's one
 * clock stamps egress after ingress, and no switch holds a frame for a
 * second (a one-bit flip in a stamp's bit 30 or above gives more). */
#define REPORT_MAX_RESIDENCE_NS 1000000000LL

/* ---- a frame's identity ---- */

/* What is hashed: zero-padded, so equal frames hash equal. */
struct report_key_bytes {
	uint8_t src[16], dst[16];
	uint32_t seq, len;
	uint16_t sport, dport;
	uint8_t family, pad[3];
};

bool report_md_key(const struct report *r, const struct cap_reader *c,
		   const struct cap_packet *p, uint64_t *key)
{
	const struct cap_iface *ifc = cap_iface(c, p->iface);
	struct report_key_bytes k;
	struct frame_info fi;

	if (!ifc || frame_parse(p->data, p->caplen, ifc->linktype, &fi))
		return false;
	if (fi.flow.proto != IPPROTO_TCP || !fi.payload_wire ||
	    fi.flow.family != r->md_family ||
	    (r->md_port && fi.flow.sport != r->md_port) ||
	    memcmp(fi.flow.src, r->md_addr, r->md_family == AF_INET ? 4 : 16))
		return false;
	memset(&k, 0, sizeof(k));
	memcpy(k.src, fi.flow.src, sizeof(k.src));
	memcpy(k.dst, fi.flow.dst, sizeof(k.dst));
	k.seq = fi.seq;
	k.len = fi.payload_wire;
	k.sport = fi.flow.sport;
	k.dport = fi.flow.dport;
	k.family = (uint8_t)fi.flow.family;
	*key = hmap_hash(&k, sizeof(k));
	return true;
}

/* ---- the reader ---- */

/* A frame inside the switch: in the map of those, by packet id. */
struct report_frame {
	uint64_t id, key;
	int64_t in_ns, out_ns;		/* INT64_MIN until seen */
	uint32_t len;
	unsigned in_file, out_file;	/* where the stamps were: port file */
	unsigned long long in_pkt, out_pkt;	/* and packet, from 1 */
};

struct report_truth_rd {
	struct report *r;
	struct report_rate *rt;
	struct cap_reader *in[REPORT_MAX_PORTS];
	struct cap_packet pkt[REPORT_MAX_PORTS];
	bool live[REPORT_MAX_PORTS];
	unsigned long long pkts[REPORT_MAX_PORTS];
	size_t n;
	struct hmap *fl;
	char bad[PATH_MAX * 2 + 200];
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

static void report_truth_read(struct report_truth_rd *t, size_t i)
{
	int rc = cap_next(t->in[i], &t->pkt[i]);

	t->live[i] = rc == 1;
	t->pkts[i] += rc == 1;
	if (rc < 0)
		report_notef(t->r, true, "%s", cap_error(t->in[i]));
}

struct report_truth_rd *report_truth_open(struct report *r, struct report_rate *rt)
{
	struct report_truth *tr = &rt->truth;
	struct report_truth_rd *t;
	char pattern[PATH_MAX + 64], err[CAP_ERRBUF];
	glob_t g;

	tr->res = hist_create();
	tr->topo = hist_create();
	snprintf(pattern, sizeof(pattern), "%s/rate-%ld/switch/swemu/*.pcapng",
		 r->dir, rt->rate);
	if (glob(pattern, 0, NULL, &g)) {
		snprintf(tr->why, sizeof(tr->why), "no emulator captures "
			 "(rate-%ld/switch/swemu/*.pcapng)", rt->rate);
		return NULL;
	}
	if (!r->have_md) {
		snprintf(tr->why, sizeof(tr->why), "lab.conf has no md_source, so "
			 "the market data frames cannot be told apart");
		globfree(&g);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->r = r;
	t->rt = rt;
	for (size_t i = 0; i < g.gl_pathc && t->n < REPORT_MAX_PORTS; i++) {
		if (cap_open(&t->in[t->n], g.gl_pathv[i], err)) {
			report_notef(r, true, "%s", err);
			continue;
		}
		t->n++;
	}
	if (g.gl_pathc > REPORT_MAX_PORTS)
		report_notef(r, true, "%s: more than %d port captures; the rest "
			     "are not read", pattern, REPORT_MAX_PORTS);
	globfree(&g);
	tr->files = (unsigned)t->n;
	/* Fixed sizes: cannot fail. */
	hmap_create(&t->fl, sizeof(uint64_t), sizeof(struct report_frame), 512,
		    false);
	for (size_t i = 0; i < t->n; i++)
		report_truth_read(t, i);
	return t;
}

/* The port whose next packet is earliest, or t->n when all are done. */
static size_t report_truth_first(const struct report_truth_rd *t)
{
	size_t m = t->n;

	for (size_t i = 0; i < t->n; i++)
		if (t->live[i] && (m == t->n || t->pkt[i].ts_ns < t->pkt[m].ts_ns))
			m = i;
	return m;
}

int64_t report_truth_pos(const struct report_truth_rd *t)
{
	size_t m = report_truth_first(t);

	return m == t->n ? INT64_MAX : t->pkt[m].ts_ns;
}

/* Both stamps of e are in: the frame's truth, into the histograms and f.
 * Returns whether it is one (a damaged stamp is not). */
static bool report_truth_done(struct report_truth_rd *t,
			      const struct report_frame *e,
			      struct report_tframe *f)
{
	struct report_truth *tr = &t->rt->truth;
	const struct report *r = t->r;
	int64_t res;

	/* Stamps from a damaged file may be anything. */
	if (__builtin_sub_overflow(e->out_ns, e->in_ns, &res)) {
		tr->unpaired++;
		return false;
	}
	if (res < 0 || res > REPORT_MAX_RESIDENCE_NS) {
		if (!tr->implausible++)
			snprintf(t->bad, sizeof(t->bad), "packet id %llu (ingress "
				 "%s packet %llu, egress %s packet %llu): residence "
				 "%lld ns (%.3f s)", (unsigned long long)e->id,
				 cap_path(t->in[e->in_file]), e->in_pkt,
				 cap_path(t->in[e->out_file]), e->out_pkt,
				 (long long)res, (double)res / 1e9);
		return false;
	}
	*f = (struct report_tframe){ .key = e->key, .in_ns = e->in_ns,
				     .res_ns = res };
	hist_add(tr->res, res);
	/* A store-and-forward switch cannot start sending before the last
	 * bit is in, so the hosts' topology method takes serialisation out;
	 * the truth it is compared with must too. */
	if (r->mode == 1 && r->speed_bps > 0) {
		f->have_topo = !__builtin_sub_overflow(res, llround(
				topo_serialisation_ns(e->len, r->speed_bps)),
				&f->topo_ns);
	} else if (r->mode != 1) {
		f->topo_ns = res;
		f->have_topo = true;
	}
	if (f->have_topo)
		hist_add(tr->topo, f->topo_ns);
	tr->md_frames++;
	return true;
}

int report_truth_next(struct report_truth_rd *t, struct report_tframe *f)
{
	struct report_truth *tr;
	size_t m;

	if (!t)
		return 0;
	tr = &t->rt->truth;
	while ((m = report_truth_first(t)) < t->n) {
		struct cap_packet *p = &t->pkt[m];
		struct report_frame *e;
		bool got = false;
		uint64_t key;

		if (!p->has_packet_id) {
			tr->no_id++;
		} else if ((p->dir == PCAPNG_DIR_IN || p->dir == PCAPNG_DIR_OUT) &&
			   report_md_key(t->r, t->in[m], p, &key)) {
			e = report_inflight(t->fl, p->packet_id);
			if (p->dir == PCAPNG_DIR_IN) {
				if (e->in_ns != INT64_MIN)
					tr->unpaired++;	/* the id again */
				e->in_ns = p->ts_ns;
				e->len = p->origlen;
				e->key = key;
				e->in_file = (unsigned)m;
				e->in_pkt = t->pkts[m];
			} else {
				if (e->out_ns != INT64_MIN)
					tr->unpaired++;
				e->out_ns = p->ts_ns;
				e->out_file = (unsigned)m;
				e->out_pkt = t->pkts[m];
			}
			if (e->in_ns != INT64_MIN && e->out_ns != INT64_MIN) {
				got = report_truth_done(t, e, f);
				hmap_del_val(t->fl, e);
			}
		}
		report_truth_read(t, m);
		if (got)
			return 1;
	}
	return 0;
}

void report_truth_close(struct report_truth_rd *t, struct report_rate *rt,
			struct report *r)
{
	struct report_truth *tr = &rt->truth;
	struct report_tframe f;

	/* What the caller did not take still counts in the truth. */
	while (report_truth_next(t, &f))
		;
	if (!t)
		return;
	tr->unpaired += hmap_count(t->fl);
	hmap_destroy(t->fl);
	for (size_t i = 0; i < t->n; i++)
		cap_close(t->in[i]);
	if (tr->implausible)
		report_notef(r, true, "rate %s: truth: market data frame %s is "
			     "implausible (below 0 or over 1 s): dropped from the "
			     "truth (%llu such frames dropped)", rt->label, t->bad,
			     tr->implausible);
	free(t);
	if (!tr->md_frames && tr->implausible) {
		snprintf(tr->why, sizeof(tr->why), "every market data frame's "
			 "residence in rate-%ld/switch/swemu is implausible (below "
			 "0 or over 1 s)", rt->rate);
		return;
	}
	if (!tr->md_frames) {
		snprintf(tr->why, sizeof(tr->why), "no market data frame from "
			 "md_source with both an ingress and an egress stamp in "
			 "rate-%ld/switch/swemu", rt->rate);
		return;
	}
	tr->have = true;
	if (hist_count(tr->topo)) {
		tr->have_topo = true;
	} else {
		snprintf(tr->why, sizeof(tr->why), "store-and-forward without "
			 "switch_speed in lab.conf: serialisation unknown");
		report_notef(r, true, "rate %s: %s", rt->label, tr->why);
	}
	if (r->mode < 0)
		report_notef(r, false, "rate %s: switch_mode unknown; the truth "
			     "is the residence as stamped (as for cut-through)",
			     rt->label);
	if (tr->unpaired)
		report_notef(r, true, "rate %s: %llu market data frames of the "
			     "emulator had an ingress or an egress stamp only",
			     rt->label, tr->unpaired);
}
