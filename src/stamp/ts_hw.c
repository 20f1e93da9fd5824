/* ts_hw.c — hardware stamps: taken by the NIC in its PHC's time as the frame
 * crosses the wire. Needs the interface to have a PHC and hardware modes, and
 * the device configured (SIOCSHWTSTAMP) to stamp TX and all RX packets. */
#include <errno.h>
#include <linux/net_tstamp.h>
#include <stdio.h>

#include "stamp/hwtstamp.h"
#include "stamp/ts_private.h"
#include "stamp/tsinfo.h"

static int ts_hw_setup(struct ts_sock *ts, unsigned *so_flags)
{
	struct hwtstamp_state now;
	struct tsinfo info;
	bool changed;
	unsigned f;
	int err;

	if (!ts->ifname[0])
		return -ENODEV;
	/* Resolve the PHC every time: its index changes across resets. */
	err = tsinfo_get(ts->ifname, &info);
	if (err)
		return err;
	if (!tsinfo_has_hw(&info))
		return -ENODEV;
	err = hwtstamp_ensure(ts->ifname, ts->cfg.tx, ts->cfg.rx, &now, &changed);
	if (err)
		return err;
	/* The program says so (ts_sock_info()). */
	ts->hw_set_tx = changed ? now.tx_type : -1;
	ts->hw_set_rx = changed ? now.rx_filter : -1;
	ts->phc = info.phc_index;

	f = SOF_TIMESTAMPING_RAW_HARDWARE;
	if (ts->cfg.tx)
		f |= SOF_TIMESTAMPING_TX_HARDWARE;
	if (ts->cfg.rx)
		f |= SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_OPT_PKTINFO;
	if (ts->cfg.both) {
		/* OPT_TX_SWHW: without it the kernel drops the software TX
		 * stamp whenever a hardware one is pending. */
		f |= SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TX_SWHW;
		if (ts->cfg.tx)
			f |= SOF_TIMESTAMPING_TX_SOFTWARE;
		if (ts->cfg.rx)
			f |= SOF_TIMESTAMPING_RX_SOFTWARE;
	}
	*so_flags = f;
	return 0;
}

bool ts_hw_set_text(const struct ts_info *info, char *buf, size_t len)
{
	if (info->hw_set_tx < 0)
		return false;
	snprintf(buf, len, "hardware stamping set to tx %s, rx %s",
		 hwtstamp_tx_name(info->hw_set_tx) ?: "?",
		 hwtstamp_rx_name(info->hw_set_rx) ?: "?");
	return true;
}

const struct ts_source_ops ts_hw_ops = {
	.name = "hw",
	.source = TS_SOURCE_HW,
	.tx_stage = TS_STAGE_HW_TX,
	.setup = ts_hw_setup,
};
