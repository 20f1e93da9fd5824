/* capd_hb.c — tapless-capd's heartbeats: the promise that the file holds
 * every frame stamped up to a time. See capd_private.h for the other
 * files.
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "capd/capd_private.h"
#include "files/pcapng.h"
#include "stamp/ts.h"

/* ---- Heartbeats ----
 *
 * A heartbeat stamped T promises that every frame capd captured with a
 * stamp at or before T is already in the file, before it, or in a file
 * written before this one (tapless-pcapng(5)). capd cannot see what the
 * kernel has not handed over yet, so T comes from what it did read and
 * from how long a frame can take to be read and written:
 *
 * - A pass of the loop reads CLOCK_REALTIME (real), then every capture
 *   ring. When each gave less than a batch, the pass drained them: every
 *   frame handed over by then was read in this pass or an earlier one.
 * - A frame reaches its ring a little after its stamp (CAPD_HB_MARGIN_NS),
 *   but the ring (TPACKET_V3) hands frames over a block at a time: when the
 *   block is full or when the block timer fires, at most the ring's block
 *   timeout after the frame went in (a periodic hrtimer since Linux 6.18, a
 *   timer re-armed per block and jiffy-grained before). Until then the
 *   frame is invisible and poll() does not wake for it; on a quiet link
 *   that is the whole timeout. Twice the timeout covers the timer's
 *   lateness. So a drained pass has read every frame stamped up to
 *   real - margin - 2 * timeout.
 * - Without the reorder buffer frames are written as they are read: T is
 *   that, for the latest drained pass, written at the end of that pass.
 * - With it (--tx-socket, --stamp-cgroup) a frame read in a pass is
 *   labelled with the pass's CLOCK_MONOTONIC reading and written once it
 *   is the earliest of its group and held --reorder-ms (reorder.h). If
 *   every frame stamped up to T is labelled at or before the release's
 *   reading minus the hold, each group's earliest frame is due for as long
 *   as its stamp is at or before T, so the release writes them all. A
 *   drained pass labelled that old gives this for the captured frames.
 *   Frames with sender stamps (frame records, keyed stamps joined to their
 *   frame) reach capd after their stamp: the hold exists for them, and
 *   the file is in time order only when they come within it. On that same
 *   assumption, one stamped s is labelled by s + hold: one more hold off.
 *   So T = real - margin - 2 * timeout - hold, for the latest drained pass
 *   labelled at least a hold before the last release.
 *
 * T never goes back: after a clock step back, heartbeats wait until the
 * clock has caught up. Not covered: frames the kernel dropped (counted in
 * the statistics blocks), frames lost to a write error (logged, exit 2),
 * sender stamps later than the hold (written out of order anyway).
 */

/* A pass after poll(): real and mono read before the rings, drained when
 * every open ring was read to its end. Kept until its frames are written. */
void capd_hb_pass(struct capd *d, int64_t mono, int64_t real,
		  bool drained)
{
	const struct capd_pass *last;

	if (!d->hb_every_ns || !drained)
		return;
	if (!d->ro) {
		d->hb_best = real;
		return;
	}
	/* A few per hold are enough: one skipped costs T at most hold/32. */
	last = &d->hb_pass[(d->hb_head + d->hb_n + CAPD_HB_PASSES - 1) %
			   CAPD_HB_PASSES];
	if (d->hb_n == CAPD_HB_PASSES ||
	    (d->hb_n && mono - last->mono < d->hold_ns / 32))
		return;
	d->hb_pass[(d->hb_head + d->hb_n++) % CAPD_HB_PASSES] =
		(struct capd_pass){ .mono = mono, .real = real };
}

/* After the release at mono: the kept passes whose frames are out of the
 * reorder buffer (labelled at least the hold before) are done with, the
 * latest of them is the heartbeat's. */
static void capd_hb_ready(struct capd *d, int64_t mono)
{
	while (d->hb_n && d->hb_pass[d->hb_head].mono <= mono - d->hold_ns) {
		d->hb_best = d->hb_pass[d->hb_head].real;
		d->hb_head = (d->hb_head + 1) % CAPD_HB_PASSES;
		d->hb_n--;
	}
}

/* A heartbeat into the file, and the file's buffer written out with it, so
 * a reader following the file sees frames at most one interval old. On
 * the sent-frames interface of an open capture: host stamps (system time)
 * always. final: the last file closes and nothing more will come, so
 * everything captured is in. */
void capd_heartbeat(struct capd *d, bool final)
{
	unsigned i;
	int64_t t;
	int err;

	if (!d->hb_every_ns || !d->w || d->broken)
		return;
	for (i = 0; i < d->n && !d->ifc[i].cap; i++)
		;
	if (i == d->n)
		return;		/* every interface gone: nothing captured */
	if (final) {
		t = ts_now_real();
		if (t < d->hb_last)
			t = d->hb_last;
	} else {
		capd_hb_ready(d, d->now);
		if (d->hb_best == INT64_MIN)
			return;
		t = d->hb_best - d->hb_back_ns;
		if (t < d->hb_last) {
			log_warn_rl("the system clock went back %.3f s: no "
				    "heartbeat until it is past the last one",
				    (double)(d->hb_last - t) / 1e9);
			return;
		}
	}
	err = pcapng_write_heartbeat(d->w, d->ifc[i].id[CAPTURE_OUT], t);
	if (!err)
		err = pcapng_flush(d->w);
	d->flushed_ns = ts_now_mono();
	if (err) {
		log_err("writing capture: %s", strerror(-err));
		d->broken = true;	/* a new file is tried */
		return;
	}
	d->hb_last = t;
}
