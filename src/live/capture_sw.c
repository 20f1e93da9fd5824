/* capture_sw.c — host stamps: the kernel stamps each frame as the stack
 * sees it, on the system clock (UTC). Any interface can. */
#include "live/capture_private.h"

static int capture_sw_prepare(struct capture *c, pcap_t *in)
{
	(void)in;	/* PCAP_TSTAMP_HOST is libpcap's default */
	c->info.hw = false;
	c->info.phc = -1;
	return 0;
}

static void capture_sw_activated(struct capture *c)
{
	(void)c;
}

const struct capture_source_ops capture_sw_ops = {
	.name = "sw",
	.prepare = capture_sw_prepare,
	.activated = capture_sw_activated,
};
