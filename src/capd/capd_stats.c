/* capd_stats.c — tapless-capd's counters: the kernel's drops and the
 * sender stamps' account, logged and written into the file. See
 * capd_private.h for the other files.
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "bpf/bpfstamp.h"
#include "capd/capd_private.h"
#include "files/pcapng.h"
#include "live/capture.h"
#include "live/txmatch.h"

/* The senders' stamps as counted since start: what the periodic line,
 * the file's statistics and the exit account all say. Every field only
 * grows. */
struct capd_txcount {
	uint64_t written;	/* sender-stamped frames taken (records, pairs) */
	uint64_t lost;		/* stamps that will never be written: the sum
				 * of the five below */
	uint64_t no_frame;	/* keyed: no captured frame within the hold */
	uint64_t waiting_full;	/* keyed: too many waiting for their frame */
	uint64_t no_iface;	/* for no captured interface (or wrong PHC) */
	uint64_t ring_full;	/* --stamp-cgroup: BPF ring buffer full */
	uint64_t bpf_bad;	/* --stamp-cgroup: records of no known kind */
	uint64_t by_senders;	/* dropped by the senders themselves, by
				 * their own count (tapless-stamp, probes) */
	uint64_t late;		/* written out of time order (hold full) */
	uint64_t refused;	/* sender streams cut off: malformed records */
};

static void capd_txcount(const struct capd *d, struct capd_txcount *c)
{
	memset(c, 0, sizeof(*c));
	c->written = d->tx_records;
	c->no_iface = d->tx_unmatched;
	c->late = d->forced;
	c->refused = d->tx_refused;
	if (d->tm) {
		struct txmatch_stats st;

		txmatch_stats(d->tm, &st);
		c->no_frame = st.unmatched;
		c->waiting_full = st.stamps_full;
	}
	if (d->bs) {
		struct bpfstamp_stats bst;

		/* Read from the kernel's map: a failed read leaves the
		 * last figures out rather than make them go back. */
		if (!bpfstamp_stats(d->bs, &bst)) {
			c->ring_full = bst.ring_full;
			c->bpf_bad = bst.bad;
		}
	}
	c->by_senders = d->sdrop.retired;
	for (unsigned i = 0; i < d->sdrop.ngone; i++)
		c->by_senders += d->sdrop.gone[i].dropped;
	for (unsigned i = 0; i < d->ncl; i++)
		c->by_senders += d->cl[i].dropped;
	c->lost = c->no_frame + c->waiting_full + c->no_iface + c->ring_full +
		  c->bpf_bad + c->by_senders;
}

/* The kernel's counters of every open capture, per interface and
 * direction, into the file at ts_ns (system time): since the capture was
 * opened, as libpcap gives them. With senders' stamps, the stamps lost
 * since start as the drop counter of the first interface's sender-stamped
 * (host stamps) interface: a lost stamp's interface is not known, and one
 * counter keeps a reader that sums the interfaces' drops from counting it
 * twice. */
void capd_write_stats(struct capd *d, int64_t ts_ns)
{
	if (!d->w || d->broken)
		return;
	if (d->tx) {
		struct capd_txcount c;

		capd_txcount(d, &c);
		if (pcapng_write_stats(d->w, d->ifc[0].id_tx[0], ts_ns, ~0ULL,
				       c.lost)) {
			d->broken = true;	/* a new file is tried */
			return;
		}
	}
	for (unsigned i = 0; i < d->n; i++)
		for (int dir = CAPTURE_IN; d->ifc[i].cap && dir <= CAPTURE_OUT; dir++) {
			uint64_t recv, drop;

			if (capture_stats(d->ifc[i].cap, (enum capture_dir)dir,
					  &recv, &drop))
				continue;
			if (pcapng_write_stats(d->w, d->ifc[i].id[dir], ts_ns,
					       recv, drop)) {
				d->broken = true;	/* a new file is tried */
				return;
			}
		}
}

/* Keyed stamps that found no frame, as they are found out (rate-limited),
 * and the whole account at the end. */
void capd_log_keyed(struct capd *d, bool end)
{
	struct txmatch_stats st;

	txmatch_stats(d->tm, &st);
	if (st.unmatched + st.stamps_full > d->keyed_logged) {
		log_warn_rl("%llu keyed TX stamps (tapless-stamp's or "
			    "--stamp-cgroup's) found no captured frame within "
			    "--reorder-ms (is the flow inside the capture filter "
			    "and interfaces?)",
			    (unsigned long long)(st.unmatched + st.stamps_full));
		d->keyed_logged = st.unmatched + st.stamps_full;
	}
	if (end && st.stamps + st.other_stages)
		log_notice("keyed stamps: %llu taken, %llu joined to "
			   "their frame, %llu found none, %llu dropped (too many "
			   "waiting), %llu duplicates, %llu of other stages",
			   (unsigned long long)st.stamps,
			   (unsigned long long)st.matched,
			   (unsigned long long)st.unmatched,
			   (unsigned long long)st.stamps_full,
			   (unsigned long long)st.duplicates,
			   (unsigned long long)st.other_stages);
}

/* --sender-copy-only's account. */
void capd_log_copies(const struct capd *d, int level)
{
	log_at(level, "--sender-copy-only: %llu captured copies of "
	       "sender-stamped frames left out, %llu written anyway (their "
	       "stamp came after --reorder-ms)",
	       (unsigned long long)d->copies_dropped,
	       (unsigned long long)d->copies_both);
}

void capd_log_stats(struct capd *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		uint64_t recv = 0, drop = 0, r, k;
		struct capture_info info;

		if (!d->ifc[i].cap) {
			log_info("%s: gone", d->ifc[i].name);
			continue;
		}

		/* Each handle counts its direction's frames when the kernel
		 * sorts them, else both count every frame that passes the
		 * filter (capture.h); drops can happen in either. */
		capture_info(d->ifc[i].cap, &info);
		if (!capture_stats(d->ifc[i].cap, CAPTURE_IN, &r, &k)) {
			recv = r;
			drop = k;
		}
		if (!capture_stats(d->ifc[i].cap, CAPTURE_OUT, &r, &k)) {
			recv += info.dir_split ? r : 0;
			drop += k;
		}
		if (drop > d->ifc[i].drop_logged)
			log_warn("%s: %llu frames, %llu dropped by the kernel "
				 "(raise -B or lower the load)",
				 capture_ifname(d->ifc[i].cap),
				 (unsigned long long)recv, (unsigned long long)drop);
		else
			log_info("%s: %llu frames, no drops",
				 capture_ifname(d->ifc[i].cap), (unsigned long long)recv);
		d->ifc[i].drop_logged = drop;
	}
	if (d->tx) {
		struct capd_txcount c;

		capd_txcount(d, &c);
		log_at(c.lost > d->tx_lost_logged ? LOG_WARNING : LOG_INFO,
		       "tx stamps: %llu written, %llu lost (%llu found no frame, "
		       "%llu too many waiting, %llu for no captured interface, "
		       "%llu ring buffer full, %llu bad BPF records, %llu "
		       "dropped by the senders); %llu "
		       "written out of order; %llu senders cut off",
		       (unsigned long long)c.written, (unsigned long long)c.lost,
		       (unsigned long long)c.no_frame,
		       (unsigned long long)c.waiting_full,
		       (unsigned long long)c.no_iface,
		       (unsigned long long)c.ring_full,
		       (unsigned long long)c.bpf_bad,
		       (unsigned long long)c.by_senders, (unsigned long long)c.late,
		       (unsigned long long)c.refused);
		d->tx_lost_logged = c.lost;
	}
	if (d->sender_only)
		capd_log_copies(d, LOG_INFO);
}
