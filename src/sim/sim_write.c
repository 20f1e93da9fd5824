/* sim_write.c — the files sim writes besides truth.json: each host's
 * capture (pcapng, or classic pcap through libpcap) from a heap of
 * records written once no later one can have a smaller stamp; the sync
 * journals; the topology.
 */
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/heap.h"
#include "base/rng.h"
#include "base/wholefile.h"
#include "base/xalloc.h"
#include "files/frame.h"
#include "files/pcapng.h"
#include "ptp/journal.h"
#include "sim/sim_private.h"
#include "sim/swmodel.h"
#include "stamp/ts.h"

/* The order records are written in: a total order (order is unique). */
bool sim_rec_less(const void *a, const void *b, void *ctx)
{
	const struct rec *x = *(struct rec *const *)a, *y = *(struct rec *const *)b;

	(void)ctx;
	if (x->stamp != y->stamp)
		return x->stamp < y->stamp;
	if (x->t_ps != y->t_ps)
		return x->t_ps < y->t_ps;
	return x->order < y->order;
}

/* A record from the free list (allocated only while the queues grow). */
struct rec *sim_rec_new(struct sim *s, int64_t stamp, int64_t t_ps,
			enum pcapng_dir dir, const uint8_t *frame, uint32_t len,
			bool dropped)
{
	struct rec *r = s->recfree;

	if (r)
		s->recfree = r->next;
	else
		r = xmalloc(sizeof(*r) + s->frame_cap);
	r->stamp = stamp;
	r->t_ps = t_ps;
	r->order = s->recorder++;
	r->len = len;
	r->dir = (uint8_t)dir;
	r->ntag = 0;
	r->dropped = dropped;
	r->flow = -1;
	memcpy(r->data, frame, len);
	return r;
}

static void rec_write(struct sim *s, struct host *h, struct rec *r)
{
	int err = 0;

	if (s->err)
		return;
	/* Left out of the file, but read by the truth's reader in its place:
	 * the bytes it carried are a hole there. */
	if (r->dropped) {
		h->dropped++;
		if (r->flow >= 0)
			sim_tr_record(s, r);
		return;
	}
	if (h->ng) {
		err = pcapng_write_packet(h->ng, r->dir == PCAPNG_DIR_IN ? h->ifid_in :
					  h->ifid, r->stamp, r->data, r->len,
					  r->len, (enum pcapng_dir)r->dir);
	} else {
		struct pcap_pkthdr ph;

		ph.ts.tv_sec = (time_t)(r->stamp / NS_PER_S);
		ph.ts.tv_usec = (suseconds_t)(r->stamp % NS_PER_S);
		if (h->res_ns > 1)
			ph.ts.tv_usec /= 1000;
		ph.caplen = ph.len = r->len;
		pcap_dump((u_char *)h->pd, &ph, r->data);
	}
	if (err)
		sim_sys(s, err, "%s", h->path);
	h->packets++;
	if (r->flow >= 0)
		sim_tr_record(s, r);
}

/* Write every record of h that no future record can precede. */
void sim_host_flush(struct sim *s, struct host *h, bool all)
{
	const struct sim_clock *k = &h->cfg->clock;
	int64_t limit = sim_start_ns(s) + h->tai_ns + sim_floordiv(s->now, PS_PER_NS) +
			h->min_err_ns - sim_clock_quantum_bound_ns(k) - h->res_ns;

	/* A future record's true time t is at or after now, and t + rate t
	 * grows with t (|rate| < 1e9 ppb): its rate term is at least now's. */
	if (k->rate_ppb != 0)
		limit += (int64_t)floor(sim_clock_rate_ns(k, s->now)) - 1;

	for (;;) {
		struct rec *const *top = heap_top(h->q);
		struct rec *r;

		if (!top || (!all && (*top)->stamp >= limit))
			break;
		heap_pop(h->q, &r);
		rec_write(s, h, r);
		r->next = s->recfree;
		s->recfree = r;
	}
}

/* A frame seen by host hi at true time t_ps (stamp given), on its fibre at
 * wire_ps (the TX instant, or the arrival before any stack delay). */
void sim_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
	      int64_t wire_ps, int64_t stamp, const uint8_t *frame,
	      uint32_t len, const struct seg *g, bool tag, struct stamp_at *at)
{
	struct host *h = &s->h[hi];
	bool capt = t_ps >= h->cap_start_ps, drop = false;
	struct rec *r;

	/* Drawn only for frames the file would have, from the host's own
	 * stream: every other draw of the run, and so every other byte, is
	 * the same as without --capture-drop. */
	if (capt && h->cfg->capture_drop > 0)
		drop = rng_chance(&h->droprng, h->cfg->capture_drop);
	if (at) {
		at->capt = capt && !drop;
		at->drop = drop;
	}

	if (!s->any_packet || t_ps < s->first_ps)
		s->first_ps = t_ps;
	if (!s->any_packet || t_ps > s->last_ps)
		s->last_ps = t_ps;
	s->any_packet = true;
	if (s->tap[hi].tap)
		sim_tap_emit(s, hi, dir, t_ps, wire_ps, stamp, frame, len,
			     capt && !drop);
	if (!capt)
		return;
	r = sim_rec_new(s, stamp, t_ps, dir, frame, len, drop);
	if (g && hi == SIM_ALGO) {
		r->flow = (int8_t)g->flow;
		r->off = g->off;
		r->plen = g->len;
		if (tag) {
			r->ntag = (uint8_t)g->nstart;
			memcpy(r->tag, g->start, g->nstart * sizeof(*g->start));
		}
	}
	heap_push(h->q, &r);
}

char *sim_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int sim_host_open(struct sim *s, struct host *h)
{
	const struct sim_host_config *hc = h->cfg;
	const char *name = sim_hosts[h->id];
	FILE *f;
	int err, fd;

	snprintf(h->file, sizeof(h->file), "%s.%s", name,
		 hc->format == SIM_FMT_PCAPNG ? "pcapng" : "pcap");
	h->path = sim_path_join(s->c->out_dir, h->file);
	h->tmp = xmalloc(strlen(h->path) + 6);
	sprintf(h->tmp, "%s.part", h->path);
	if (unlink(h->tmp) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", h->tmp);
	if (hc->format == SIM_FMT_PCAPNG) {
		struct pcapng_section sec = {
			.hostname = name, .hardware = "tapless sim",
			.os = "tapless sim", .userappl = SIM_USERAPPL,
		};
		struct pcapng_iface ifc = {
			.name = "eth1", .linktype = FRAME_LINK_ETHERNET, .snaplen = 0,
			.src = { hc->tai, hc->tai ? 0 : -1,
				 hc->tai ? TS_SCALE_TAI : TS_SCALE_UTC,
				 "simulated by tapless sim" },
		};

		err = pcapng_open(&h->ng, h->path, &sec);
		if (err)
			return sim_sys(s, err, "%s", h->tmp);
		err = pcapng_add_iface(h->ng, &ifc, &h->ifid);
		if (err)
			return sim_sys(s, err, "%s", h->tmp);
		h->ifid_in = h->ifid;
		return 0;
	}
	h->pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
			hc->format == SIM_FMT_PCAP_US ? PCAP_TSTAMP_PRECISION_MICRO :
							PCAP_TSTAMP_PRECISION_NANO);
	if (!h->pc)
		return sim_sys(s, -ENOMEM, "%s", h->tmp);
	err = wholefile_open(&h->pcapf, h->path);
	if (err)
		return sim_sys(s, err, "%s", h->tmp);
	/* libpcap closes the stream it writes: its own, on the same file. */
	fd = dup(fileno(h->pcapf.f));
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return sim_sys(s, err, "%s", h->tmp);
	}
	h->pd = pcap_dump_fopen(h->pc, f);
	if (!h->pd) {
		err = errno ? -errno : -EIO;
		fclose(f);
		return sim_sys(s, err, "%s", h->tmp);
	}
	return 0;
}

int sim_host_close(struct sim *s, struct host *h, bool discard)
{
	int err = 0;

	if (h->ng) {
		err = pcapng_close(h->ng, discard);
		h->ng = NULL;
		if (err && !discard)
			sim_sys(s, err, "%s", h->path);
	}
	if (h->pd) {
		if (!discard && pcap_dump_flush(h->pd))
			err = sim_sys(s, errno ? -errno : -EIO, "%s", h->tmp);
		pcap_dump_close(h->pd);
		h->pd = NULL;
	}
	if (h->pcapf.path) {
		int e = wholefile_close(&h->pcapf, discard || err);

		if (e && !discard && !err)
			err = sim_sys(s, e, "%s", h->path);
	}
	if (h->pc) {
		pcap_close(h->pc);
		h->pc = NULL;
	}
	return err;
}

int sim_write_journal(struct sim *s, struct host *h, const char *path)
{
	struct journal_writer *w;
	int64_t iv = sim_interval_ns(s), end = sim_start_ns(s) + s->last_ps / PS_PER_NS + iv;
	int err;

	if (unlink(path) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", path);
	err = journal_writer_open(&w, path, sim_hosts[h->id]);
	if (err)
		return sim_sys(s, err, "%s", path);
	if (h->cfg->tai)
		err = journal_write_event(w, sim_journal_time(s, 0), "-", "utc_offset", TAI_UTC_S_TEXT);
	for (int64_t j = 0; !err && sim_journal_time(s, j) <= end; j++) {
		struct journal_sample js;

		sim_journal_sample(s, h, sim_journal_time(s, j), &js);
		err = journal_write_sample(w, &js);
	}
	journal_writer_close(w);
	if (err)
		return sim_sys(s, err, "%s", path);
	return 0;
}

void sim_speed_text(int64_t bps, char *buf, size_t len)
{
	if (bps % 1000000000 == 0)
		snprintf(buf, len, "%" PRId64 "G", bps / 1000000000);
	else
		snprintf(buf, len, "%" PRId64 "M", bps / 1000000);
}

int sim_write_topology(struct sim *s, const char *path)
{
	const struct sim_config *c = s->c;
	struct wholefile w;
	char speed[32];
	int err = wholefile_open(&w, path);
	FILE *f = w.f;

	if (err) {
		sim_sys(s, err, "%s", w.tmp);
		wholefile_close(&w, true);
		return err;
	}
	sim_speed_text(c->speed_bps, speed, sizeof(speed));
	fprintf(f, "# tapless topology\n");
	for (int i = 0; i < SIM_HOSTS; i++)
		fprintf(f, "host %s %u.%u.%u.%u\n", sim_hosts[i], sim_addr[i][0],
			sim_addr[i][1], sim_addr[i][2], sim_addr[i][3]);
	if (c->sw == SIM_SWITCH_NONE) {
		fprintf(f, "link algo venue %.15gm\n", c->cable_m);
	} else {
		fprintf(f, "switch sw1 %s %s\n",
			swmodel_mode_name(sim_switches[c->sw]->mode), speed);
		fprintf(f, "link algo sw1 %.15gm\n", c->cable_m);
		fprintf(f, "link sw1 venue %.15gm\n", c->cable_m);
	}
	err = wholefile_close(&w, false);
	if (err)
		sim_sys(s, err, "%s", path);
	return err;
}
