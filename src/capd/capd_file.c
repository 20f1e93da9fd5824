/* capd_file.c — tapless-capd's pcapng files: opened with every interface
 * described, rotated, closed whole under their final name; every frame
 * goes into them here, straight or through the reorder buffer. See
 * capd_private.h for the other files.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/prog.h"
#include "capd/capd_private.h"
#include "files/pcapng.h"
#include "live/capture.h"
#include "live/reorder.h"
#include "live/txmatch.h"
#include "stamp/ts.h"

int capd_open_file(struct capd *d)
{
	struct pcapng_section sec = {
		.hostname = d->host, .userappl = prog_version(),
	};
	char path[4400], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int err;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/%s-%s-%04u.pcapng", d->dir, d->prefix,
		 stamp, d->seq++);
	err = pcapng_open(&d->w, path, &sec);
	for (unsigned i = 0; !err && i < d->n; i++) {
		/* As first opened, or as it came back: a gone interface
		 * keeps its ids, so frames after its return fit the file. */
		struct capture_info info = d->ifc[i].info;

		for (int dir = CAPTURE_IN; !err && dir <= CAPTURE_OUT; dir++) {
			struct pcapng_iface pi = {
				.name = d->ifc[i].name,
				.linktype = (uint16_t)info.linktype,
				.snaplen = info.snaplen,
				.src = info.src[dir],
			};

			err = pcapng_add_iface(d->w, &pi, &d->ifc[i].id[dir]);
		}
		/* Frames instrumented senders hand over get interfaces of
		 * their own, flagged as sender-stamped: their stamps are of
		 * another kind than what the packet socket saw leave. The
		 * note says so to people. */
		for (int hw = 0; !err && d->tx && hw <= 1; hw++) {
			struct pcapng_iface pi = {
				.name = d->ifc[i].name,
				.linktype = (uint16_t)info.linktype,
				.snaplen = info.snaplen,
				.src = {
					.hw = hw, .phc = hw ? d->ifc[i].phc : -1,
					.timescale = hw ? TS_SCALE_PHC : TS_SCALE_UTC,
				},
				.sender = true,
			};

			if (hw && d->ifc[i].phc < 0)
				break;
			snprintf(pi.src.note, sizeof(pi.src.note),
				 PCAPNG_NOTE_SENDER "%s",
				 hw ? "" : ", host stamps");
			err = pcapng_add_iface(d->w, &pi, &d->ifc[i].id_tx[hw]);
		}
	}
	if (err) {
		log_err("%s: %s", path, strerror(-err));
		pcapng_close(d->w, true);
		d->w = NULL;
		return err;
	}
	d->opened_ns = ts_now_mono();
	d->broken = false;
	d->rotate = false;
	log_info("writing %s", path);
	/* Each file says which links are down as it starts. */
	for (unsigned i = 0; i < d->n; i++)
		if (!d->ifc[i].cap || d->ifc[i].down)
			capd_link_event(d, i, PCAPNG_LINK_DOWN);
	return 0;
}

static void capd_write(struct capd *d, uint32_t id, int64_t ts_ns,
		       const uint8_t *data, uint32_t caplen, uint32_t len, bool out)
{
	int err;

	if (!d->w || d->broken) {
		d->unwritten++;
		d->taken--;	/* -c N counts frames written */
		return;
	}
	err = pcapng_write_packet(d->w, id, ts_ns, data, caplen, len,
				  out ? PCAPNG_DIR_OUT : PCAPNG_DIR_IN);
	if (err) {
		d->write_errors++;
		d->broken = true;
		d->taken--;
		log_err("writing capture: %s", strerror(-err));
		return;
	}
	d->frames++;
}

static void capd_write_entry(struct capd *d, const struct reorder_entry *e)
{
	capd_write(d, e->id, e->ts_ns, e->data, e->caplen, e->origlen,
		   e->flags & CAPD_F_OUT);
}

/* Every frame goes through here: straight to the file, or through the
 * reorder buffer when TX frames of senders join captured ones. */
void capd_take(struct capd *d, unsigned group, uint32_t id,
	       int64_t ts_ns, const uint8_t *data, uint32_t caplen,
	       uint32_t len, bool out, int64_t now)
{
	struct reorder_entry e = {
		.ts_ns = ts_ns, .arrival_ns = now, .id = id, .origlen = len,
		.caplen = caplen, .flags = out ? CAPD_F_OUT : 0, .group = group,
		.data = data,
	};

	if (d->max_frames && d->taken >= d->max_frames)
		return;		/* -c N means N, as in tcpdump */
	d->taken++;
	if (!d->ro || !reorder_fits_ever(d->ro, caplen)) {
		capd_write(d, id, ts_ns, data, caplen, len, out);
		return;
	}
	while (!reorder_room(d->ro, caplen)) {
		struct reorder_entry old;

		if (!reorder_pop_oldest(d->ro, &old))
			break;
		capd_write_entry(d, &old);
		d->forced++;
	}
	reorder_push(d->ro, &e);
}

/* Write the frames whose hold is up (now_ns), or all of them (< 0). */
void capd_release(struct capd *d, int64_t now_ns)
{
	struct reorder_entry e;

	if (!d->ro)
		return;
	while (now_ns < 0 ? reorder_pop_oldest(d->ro, &e) :
	       reorder_pop(d->ro, now_ns, &e))
		capd_write_entry(d, &e);
}

/* A last heartbeat and the interface statistics into the file, then close
 * it under its final name. */
void capd_close_file(struct capd *d)
{
	uint64_t lost;
	int err;

	/* Frames still held stay for the next file: written here they would
	 * end this file with stamps later than the next one's first frames
	 * (those still in the rings), and a reader taking the files one
	 * after another would see time go back at every rotation. Only the
	 * last file takes everything. */
	if (d->stopping)
		capd_release(d, -1);
	if (!d->w)
		return;
	capd_heartbeat(d, d->stopping);
	capd_write_stats(d, ts_now_real());
	/* Flushed here, not in close, to count what a failing flush loses:
	 * the frames in the buffer (the file is cut back to its last whole
	 * block and stays under .part). */
	err = pcapng_flush(d->w);
	lost = pcapng_lost(d->w);
	if (!err)
		err = pcapng_close(d->w, false);
	else
		pcapng_close(d->w, false);
	if (lost) {
		d->write_errors += lost;
		d->frames -= lost;
	}
	if (err) {
		d->close_failed = true;
		log_err("closing capture file: %s (%llu frames in its write "
			"buffer lost; its whole blocks stay in the .part file)",
			strerror(-err), (unsigned long long)lost);
	}
	d->w = NULL;
}

/* Reorder groups: 0 is system time (host stamps); 1 + i the PHC of
 * interface i. Stamps of different groups are never compared. */
unsigned capd_group(unsigned i, bool hw)
{
	return hw ? 1 + i : 0;
}

void capd_packet(void *arg, const struct capture_packet *p)
{
	struct capd_ctx *x = arg;
	struct capd *d = x->d;
	bool hw = p->dir == CAPTURE_IN && d->ifc[x->i].hw_rx;

	/* Kept for a sender's keyed stamp of it (may write that pair now:
	 * after this frame, as the pair's stamp is the later one). Where
	 * every frame comes as received (lo, capture.h), received frames are
	 * kept too: a key names its frame by flow, sender first, so the
	 * sender's side of a connection between two local programs is
	 * still told apart from the peer's, and a received frame never
	 * takes a stamp of the other side. */
	if (d->tm && (p->dir == CAPTURE_OUT || d->ifc[x->i].dir_unknown)) {
		d->in_packet = true;
		d->pkt_tag = reorder_next_seq(d->ro);
		d->pkt_paired = false;
		txmatch_frame_tagged(d->tm, x->i, d->ifc[x->i].linktype, p->data,
				     p->caplen, p->len, d->now, d->pkt_tag);
		d->in_packet = false;
		if (d->pkt_paired) {
			d->copies_dropped++;
			return;
		}
	}

	capd_take(d, capd_group(x->i, hw), d->ifc[x->i].id[p->dir], p->ts_ns,
		  p->data, p->caplen, p->len, p->dir == CAPTURE_OUT, d->now);
}
