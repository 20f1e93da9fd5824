/* tsinfo.h — what an interface can timestamp: its PHC, hardware TX types and
 * RX filters, and software capabilities.
 *
 * Read through ethtool netlink (ETHTOOL_MSG_TSINFO_GET over generic netlink,
 * with libnl-genl), falling back to the ETHTOOL_GET_TS_INFO ioctl on kernels
 * or namespaces without it. The PHC index is read fresh on every call: it
 * changes when a driver resets the device.
 */
#ifndef TAPLESS_TSINFO_H
#define TAPLESS_TSINFO_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

struct nlmsghdr;

enum tsinfo_via { TSINFO_VIA_NETLINK, TSINFO_VIA_IOCTL };

struct tsinfo {
	char ifname[IF_NAMESIZE];
	int ifindex;
	char driver[32];	/* ETHTOOL_GDRVINFO; "" if not known */
	int phc_index;		/* -1: no PHC */
	uint32_t so_timestamping;	/* SOF_TIMESTAMPING_* capabilities */
	uint32_t tx_types;	/* bit n set: HWTSTAMP_TX n supported */
	uint32_t rx_filters;	/* bit n set: HWTSTAMP_FILTER n supported */
	enum tsinfo_via via;
};

/* Fill *info for ifname. Returns 0, -ENODEV for an unknown interface, or
 * another -errno when neither netlink nor the ioctl answered. */
int tsinfo_get(const char *ifname, struct tsinfo *info);

/* Decode one ETHTOOL_MSG_TSINFO_GET reply (compact or verbose bitsets) into
 * *info; ifname, ifindex and driver are left as they are. Returns 0 or
 * -EBADMSG. Pure, so tests feed it recorded and constructed replies. */
int tsinfo_decode(const struct nlmsghdr *nlh, struct tsinfo *info);

/* Hardware stamps possible: a PHC, HW TX and RX, and the raw HW report. */
bool tsinfo_has_hw(const struct tsinfo *info);

/* Name of SOF_TIMESTAMPING bit n ("hardware-transmit", as ethtool -T prints),
 * or NULL. */
const char *tsinfo_sof_name(unsigned bit);

#endif
