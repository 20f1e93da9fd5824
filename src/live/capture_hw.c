/* capture_hw.c — hardware stamps on received frames: raw PHC time from the
 * NIC (PCAP_TSTAMP_ADAPTER_UNSYNCED).
 *
 * libpcap configures the device itself when it activates an adapter
 * timestamp type, writing tx "on" and rx "all" without reading what was
 * there. That widens the RX filter as we want, but would turn ptp4l's
 * one-step TX mode into two-step: so the state before is kept and a wider
 * TX mode put back. */
#include <errno.h>
#include <linux/net_tstamp.h>

#include "live/capture_private.h"
#include "stamp/tsinfo.h"

static int capture_hw_prepare(struct capture *c, pcap_t *in)
{
	struct tsinfo ti;
	int err;

	err = tsinfo_get(c->ifname, &ti);
	if (err)
		return err;
	if (!tsinfo_has_hw(&ti) || !(ti.rx_filters & (1u << HWTSTAMP_FILTER_ALL)))
		return -ENODEV;
	c->have_before = hwtstamp_get(c->ifname, &c->before) == 0;
	if (pcap_set_tstamp_type(in, PCAP_TSTAMP_ADAPTER_UNSYNCED))
		return -ENODEV;
	c->info.hw = true;
	c->info.phc = ti.phc_index;
	return 0;
}

static void capture_hw_activated(struct capture *c)
{
	struct hwtstamp_state now;

	if (hwtstamp_get(c->ifname, &now))
		return;
	/* The one-step modes number above ON: libpcap wrote ON over one. */
	if (c->have_before && c->before.tx_type > now.tx_type) {
		struct hwtstamp_state want = { c->before.tx_type, now.rx_filter };

		if (hwtstamp_set(c->ifname, &want, &now)) {
			/* The program says so (capture_info()). */
			c->info.tx_was = c->before.tx_type;
			c->info.tx_left = now.tx_type;
		}
	}
	c->info.rx_filter = now.rx_filter;
	c->info.rx_narrow = now.rx_filter != HWTSTAMP_FILTER_ALL;
}

const struct capture_source_ops capture_hw_ops = {
	.name = "hw",
	.prepare = capture_hw_prepare,
	.activated = capture_hw_activated,
};
