/* hwtstamp.h — a NIC's hardware timestamping configuration (SIOC[GS]HWTSTAMP).
 *
 * The configuration is per device and shared by every program on the host:
 * ptp4l sets it too (HWTSTAMP_FILTER_ALL with `hwts_filter full`). So we read
 * first, change only what is missing, and never narrow what is there.
 */
#ifndef TAPLESS_HWTSTAMP_H
#define TAPLESS_HWTSTAMP_H

#include <stdbool.h>
#include <stddef.h>

struct hwtstamp_state {
	int tx_type;		/* HWTSTAMP_TX_* */
	int rx_filter;		/* HWTSTAMP_FILTER_* */
};

/* Read the current configuration. -EOPNOTSUPP (or -EINVAL from some drivers)
 * when the device has no hardware stamping; -ENODEV for an unknown name. */
int hwtstamp_get(const char *ifname, struct hwtstamp_state *st);

/* Make sure TX stamps are on (want_tx) and every received packet is stamped
 * (want_rx: HWTSTAMP_FILTER_ALL). Writes only when the current state lacks
 * one of them, keeps a stronger TX mode (one-step) as it is, and reports in
 * *now what the driver actually applied, which may differ from the request.
 * *changed says whether we wrote anything. Returns 0 or -errno; -ERANGE when
 * the driver applied something narrower than asked (hwtstamp_narrower()),
 * with *now and *changed set: the device did change. On other errors
 * *changed is false, and *now is the state read if the read succeeded. */
int hwtstamp_ensure(const char *ifname, bool want_tx, bool want_rx,
		    struct hwtstamp_state *now, bool *changed);

/* Write want as it is; *applied is what the driver took, which may differ.
 * For putting back a state another program changed: prefer
 * hwtstamp_ensure(), which never narrows. Reads the device first only for
 * the flags a bond needs to accept the write. */
int hwtstamp_set(const char *ifname, const struct hwtstamp_state *want,
		 struct hwtstamp_state *applied);

/* The decision hwtstamp_ensure() makes, without touching a device: the
 * state to write so that TX stamping is on (want_tx) and every packet is
 * stamped on RX (want_rx), keeping everything already there that is at
 * least as wide. Returns true when a write is needed. */
bool hwtstamp_plan(const struct hwtstamp_state *cur, bool want_tx,
		   bool want_rx, struct hwtstamp_state *next);

/* Whether got stamps less than asked: TX asked on (or one-step) but got
 * off; RX asked ALL but got anything else; RX asked any filter but got
 * NONE. The PTP-only filters are not ordered among themselves. Pure: the
 * check hwtstamp_ensure() applies to what the driver wrote back. */
bool hwtstamp_narrower(const struct hwtstamp_state *asked,
		       const struct hwtstamp_state *got);

/* Why enabling stamps on ifname failed with err, in buf, for a message:
 * strerror() but for -ERANGE, where the NIC applied less than every frame
 * was asked for: then the filter it applied is read and named ("the NIC
 * applied rx ptpv2-event where all was asked: it stamps only some frames
 * (PTP ones), as the X710 does"). ifname may be NULL. Returns buf. */
const char *hwtstamp_why(const char *ifname, int err, char *buf, size_t len);

/* Names as the kernel and ethtool spell them: "on", "off", "onestep-sync";
 * "all", "none", "ptpv2-event", ... NULL for an unknown value. */
const char *hwtstamp_tx_name(int tx_type);
const char *hwtstamp_rx_name(int rx_filter);

#endif
