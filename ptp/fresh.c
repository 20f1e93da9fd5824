/* fresh.c — see fresh.h. */
#include "ptp/fresh.h"

void fresh_reset(struct fresh *f)
{
	f->offset_live = f->offset_base_known = false;
	f->prev_rx_port = -1;
	f->rx_moved = -1;
}

bool fresh_judge(struct fresh *f, const struct fresh_input *in)
{
	bool fresh = false, counters = false;

	if (in->port < 0) {		/* nothing followed: start over */
		fresh_reset(f);
		if (in->have_ts) {
			/* A relock compares with what ptp4l held during
			 * the outage. */
			f->prev_ingress = in->ingress_ns;
			f->prev_ingress_known = true;
		}
		return false;
	}
	if (in->have_stats) {
		counters = f->prev_rx_port == in->port &&
			in->rx_sync > f->prev_rx_sync &&
			(!f->prev_rx_fup || in->rx_follow_up > f->prev_rx_fup);
		f->rx_moved = f->prev_rx_port == in->port ? counters : -1;
		f->prev_rx_port = in->port;
		f->prev_rx_sync = in->rx_sync;
		f->prev_rx_fup = in->rx_follow_up;
	} else {
		f->prev_rx_port = -1;
		f->rx_moved = -1;
	}
	if (in->have_ts) {
		fresh = in->ingress_ns != 0 && f->prev_ingress_known &&
			in->ingress_ns != f->prev_ingress;
		f->prev_ingress = in->ingress_ns;
		f->prev_ingress_known = true;
		if (!f->offset_base_known) {
			f->offset_base = in->ts_offset_ns;
			f->offset_base_known = true;
		} else if (in->ts_offset_ns != f->offset_base) {
			f->offset_live = true;
		}
		fresh = fresh && f->offset_live;
	} else if (in->ts_refused) {
		fresh = counters;
	}
	return fresh && in->have_cds && in->delay_ns != 0;
}
