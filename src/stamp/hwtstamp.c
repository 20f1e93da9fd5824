/* hwtstamp.c — see hwtstamp.h. */
#include "stamp/hwtstamp.h"

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

/* A socket for the SIOC[GS]HWTSTAMP ioctls; any family reaches the device. */
static int hwtstamp_socket(const char *ifname)
{
	int fd;

	/* No device has a longer name, and an unterminated copy would name
	 * another one. */
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE)
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* One ioctl; the kernel reads and writes cfg through ifr_data. */
static int hwtstamp_ioctl(int fd, const char *ifname, unsigned long req,
			  struct hwtstamp_config *cfg)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = (void *)cfg;
	return ioctl(fd, req, &ifr) < 0 ? -errno : 0;
}

static int hwtstamp_read(int fd, const char *ifname, struct hwtstamp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	return hwtstamp_ioctl(fd, ifname, SIOCGHWTSTAMP, cfg);
}

/* Write tx and rx with the flags the device reported: a bond reports
 * HWTSTAMP_FLAG_BONDED_PHC_INDEX and refuses a write without it
 * (EOPNOTSUPP); other devices report 0. cfg comes back as applied. */
static int hwtstamp_write(int fd, const char *ifname, int flags,
			  const struct hwtstamp_state *want,
			  struct hwtstamp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->flags = flags;
	cfg->tx_type = want->tx_type;
	cfg->rx_filter = want->rx_filter;
	return hwtstamp_ioctl(fd, ifname, SIOCSHWTSTAMP, cfg);
}

static void hwtstamp_state_of(const struct hwtstamp_config *cfg,
			      struct hwtstamp_state *st)
{
	st->tx_type = cfg->tx_type;
	st->rx_filter = cfg->rx_filter;
}

/* A socket for ifname's ioctls and its configuration now: the socket, or
 * -errno (nothing left open). */
static int hwtstamp_open_read(const char *ifname, struct hwtstamp_config *cfg)
{
	int fd, err;

	fd = hwtstamp_socket(ifname);
	if (fd < 0)
		return fd;
	err = hwtstamp_read(fd, ifname, cfg);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int hwtstamp_get(const char *ifname, struct hwtstamp_state *st)
{
	struct hwtstamp_config cfg;
	int fd = hwtstamp_open_read(ifname, &cfg);

	if (fd < 0)
		return fd;
	hwtstamp_state_of(&cfg, st);
	close(fd);
	return 0;
}

int hwtstamp_set(const char *ifname, const struct hwtstamp_state *want,
		 struct hwtstamp_state *applied)
{
	struct hwtstamp_config cfg;
	int fd, err, flags = 0;

	fd = hwtstamp_socket(ifname);
	if (fd < 0)
		return fd;
	/* Only for the flags; if the read fails the write reports why. */
	if (!hwtstamp_read(fd, ifname, &cfg))
		flags = cfg.flags;
	err = hwtstamp_write(fd, ifname, flags, want, &cfg);
	if (err)
		goto out;
	hwtstamp_state_of(&cfg, applied);
out:
	close(fd);
	return err;
}

bool hwtstamp_plan(const struct hwtstamp_state *cur, bool want_tx,
		   bool want_rx, struct hwtstamp_state *next)
{
	*next = *cur;
	/* ON and the one-step modes all stamp what we send; the one-step ones
	 * also rewrite PTP Sync messages, which ptp4l asked for: keep them.
	 * Never turn TX off: someone else may be using it. */
	if (want_tx && cur->tx_type == HWTSTAMP_TX_OFF)
		next->tx_type = HWTSTAMP_TX_ON;
	/* Every other filter, the PTP-only ones and SOME included, is
	 * narrower than ALL: widening never takes a stamp away from ptp4l. */
	if (want_rx && cur->rx_filter != HWTSTAMP_FILTER_ALL)
		next->rx_filter = HWTSTAMP_FILTER_ALL;
	return next->tx_type != cur->tx_type || next->rx_filter != cur->rx_filter;
}

bool hwtstamp_narrower(const struct hwtstamp_state *asked,
		       const struct hwtstamp_state *got)
{
	/* The PTP filters have no order among themselves (a driver may
	 * answer V2_L2_EVENT with V2_EVENT, which is wider): only ALL, NONE
	 * and OFF can be compared. */
	if (asked->tx_type != HWTSTAMP_TX_OFF && got->tx_type == HWTSTAMP_TX_OFF)
		return true;
	if (asked->rx_filter == HWTSTAMP_FILTER_ALL &&
	    got->rx_filter != HWTSTAMP_FILTER_ALL)
		return true;
	return asked->rx_filter != HWTSTAMP_FILTER_NONE &&
	       got->rx_filter == HWTSTAMP_FILTER_NONE;
}

int hwtstamp_ensure(const char *ifname, bool want_tx, bool want_rx,
		    struct hwtstamp_state *now, bool *changed)
{
	struct hwtstamp_state cur, next, applied;
	struct hwtstamp_config cfg;
	int fd, err = 0;

	*changed = false;
	fd = hwtstamp_open_read(ifname, &cfg);
	if (fd < 0)
		return fd;
	hwtstamp_state_of(&cfg, &cur);
	*now = cur;
	if (!hwtstamp_plan(&cur, want_tx, want_rx, &next))
		goto out;
	err = hwtstamp_write(fd, ifname, cfg.flags, &next, &cfg);
	if (err)
		goto out;
	/* The driver may widen a filter or fall back to what it can do; it
	 * writes back what it applied, and that is what we report. */
	hwtstamp_state_of(&cfg, &applied);
	*now = applied;
	*changed = true;
	if (hwtstamp_narrower(&next, &applied))
		err = -ERANGE;
out:
	close(fd);
	return err;
}

const char *hwtstamp_why(const char *ifname, int err, char *buf, size_t len)
{
	struct hwtstamp_state st;

	if (err == -ERANGE && ifname && !hwtstamp_get(ifname, &st))
		snprintf(buf, len, "the NIC applied tx %s rx %s where on and all "
			 "were asked: it stamps only some frames (PTP ones), as "
			 "the X710 does", hwtstamp_tx_name(st.tx_type) ?: "?",
			 hwtstamp_rx_name(st.rx_filter) ?: "?");
	else
		snprintf(buf, len, "%s", strerror(-err));
	return buf;
}
