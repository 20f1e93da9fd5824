/* ts_sw.c — software stamps: taken by the kernel when the driver is handed a
 * packet (TX) or when the stack first sees it (RX), on CLOCK_REALTIME (UTC).
 * Always available; nothing to configure on the device. */
#include <linux/net_tstamp.h>

#include "stamp/ts_private.h"

static int ts_sw_setup(struct ts_sock *ts, unsigned *so_flags)
{
	unsigned f = SOF_TIMESTAMPING_SOFTWARE;

	if (ts->cfg.tx)
		f |= SOF_TIMESTAMPING_TX_SOFTWARE;
	if (ts->cfg.rx)
		f |= SOF_TIMESTAMPING_RX_SOFTWARE;
	ts->phc = -1;
	*so_flags = f;
	return 0;
}

const struct ts_source_ops ts_sw_ops = {
	.name = "sw",
	.source = TS_SOURCE_SW,
	.tx_stage = TS_STAGE_SW_TX,
	.setup = ts_sw_setup,
};
