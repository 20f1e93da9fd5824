/* hwtstamp.c — see hwtstamp.h. */
#include "hwtstamp.h"

#include <errno.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const hwtstamp_tx_names[] = {
	[HWTSTAMP_TX_OFF] = "off",
	[HWTSTAMP_TX_ON] = "on",
	[HWTSTAMP_TX_ONESTEP_SYNC] = "onestep-sync",
	[HWTSTAMP_TX_ONESTEP_P2P] = "onestep-p2p",
};

static const char *const hwtstamp_rx_names[] = {
	[HWTSTAMP_FILTER_NONE] = "none",
	[HWTSTAMP_FILTER_ALL] = "all",
	[HWTSTAMP_FILTER_SOME] = "some",
	[HWTSTAMP_FILTER_PTP_V1_L4_EVENT] = "ptpv1-l4-event",
	[HWTSTAMP_FILTER_PTP_V1_L4_SYNC] = "ptpv1-l4-sync",
	[HWTSTAMP_FILTER_PTP_V1_L4_DELAY_REQ] = "ptpv1-l4-delay-req",
	[HWTSTAMP_FILTER_PTP_V2_L4_EVENT] = "ptpv2-l4-event",
	[HWTSTAMP_FILTER_PTP_V2_L4_SYNC] = "ptpv2-l4-sync",
	[HWTSTAMP_FILTER_PTP_V2_L4_DELAY_REQ] = "ptpv2-l4-delay-req",
	[HWTSTAMP_FILTER_PTP_V2_L2_EVENT] = "ptpv2-l2-event",
	[HWTSTAMP_FILTER_PTP_V2_L2_SYNC] = "ptpv2-l2-sync",
	[HWTSTAMP_FILTER_PTP_V2_L2_DELAY_REQ] = "ptpv2-l2-delay-req",
	[HWTSTAMP_FILTER_PTP_V2_EVENT] = "ptpv2-event",
	[HWTSTAMP_FILTER_PTP_V2_SYNC] = "ptpv2-sync",
	[HWTSTAMP_FILTER_PTP_V2_DELAY_REQ] = "ptpv2-delay-req",
	[HWTSTAMP_FILTER_NTP_ALL] = "ntp-all",
};

#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

const char *hwtstamp_tx_name(int tx_type)
{
	return tx_type >= 0 && (size_t)tx_type < NAMES(hwtstamp_tx_names) ?
	       hwtstamp_tx_names[tx_type] : NULL;
}

const char *hwtstamp_rx_name(int rx_filter)
{
	return rx_filter >= 0 && (size_t)rx_filter < NAMES(hwtstamp_rx_names) ?
	       hwtstamp_rx_names[rx_filter] : NULL;
}

/* SIOC[GS]HWTSTAMP on ifname; cfg in and out. */
static int hwtstamp_ioctl(const char *ifname, unsigned long req,
			  struct hwtstamp_config *cfg)
{
	struct ifreq ifr;
	int fd, err = 0;

	if (!ifname || strlen(ifname) >= IF_NAMESIZE)
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)cfg;
	if (ioctl(fd, req, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

int hwtstamp_get(const char *ifname, struct hwtstamp_state *st)
{
	struct hwtstamp_config cfg = { 0 };
	int err = hwtstamp_ioctl(ifname, SIOCGHWTSTAMP, &cfg);

	if (err)
		return err;
	st->tx_type = cfg.tx_type;
	st->rx_filter = cfg.rx_filter;
	return 0;
}

int hwtstamp_set(const char *ifname, const struct hwtstamp_state *want,
		 struct hwtstamp_state *applied)
{
	struct hwtstamp_config cfg = { 0 };
	int err;

	cfg.tx_type = want->tx_type;
	cfg.rx_filter = want->rx_filter;
	err = hwtstamp_ioctl(ifname, SIOCSHWTSTAMP, &cfg);
	if (err)
		return err;
	/* The driver writes back what it applied. */
	applied->tx_type = cfg.tx_type;
	applied->rx_filter = cfg.rx_filter;
	return 0;
}

bool hwtstamp_plan(const struct hwtstamp_state *cur, bool want_tx,
		   bool want_rx, struct hwtstamp_state *next)
{
	*next = *cur;
	/* ON and the one-step modes all stamp what we send; one-step ones
	 * also change PTP Sync messages, which ptp4l asked for: keep them. */
	if (want_tx && cur->tx_type == HWTSTAMP_TX_OFF)
		next->tx_type = HWTSTAMP_TX_ON;
	/* Every other filter, PTP-only ones included, is narrower than ALL:
	 * widening never takes a stamp away from ptp4l. */
	if (want_rx && cur->rx_filter != HWTSTAMP_FILTER_ALL)
		next->rx_filter = HWTSTAMP_FILTER_ALL;
	return next->tx_type != cur->tx_type || next->rx_filter != cur->rx_filter;
}

int hwtstamp_ensure(const char *ifname, bool want_tx, bool want_rx,
		    struct hwtstamp_state *now, bool *changed)
{
	struct hwtstamp_state cur, next;
	int err;

	*changed = false;
	err = hwtstamp_get(ifname, &cur);
	if (err)
		return err;
	*now = cur;
	if (!hwtstamp_plan(&cur, want_tx, want_rx, &next))
		return 0;
	err = hwtstamp_set(ifname, &next, now);
	if (err)
		return err;
	*changed = true;
	if ((want_rx && now->rx_filter != HWTSTAMP_FILTER_ALL) ||
	    (want_tx && now->tx_type == HWTSTAMP_TX_OFF))
		return -ERANGE;
	return 0;
}
