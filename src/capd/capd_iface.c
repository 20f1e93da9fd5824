/* capd_iface.c — tapless-capd's interfaces that go down, disappear and
 * come back, and the link events that tell a reader of the file a gap
 * from a quiet link. See capd_private.h for the other files.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "capd/capd_private.h"
#include "files/pcapng.h"
#include "live/capture.h"
#include "stamp/hwtstamp.h"
#include "stamp/iface.h"
#include "stamp/ts.h"

/* A link event into the file, so a reader tells a gap from a quiet link:
 * an Interface Statistics Block with an opt_comment (PCAPNG_LINK_DOWN or
 * _UP, then text for people) on interface i's received-frames interface
 * (one block per event: the link is one, whatever the directions). */
void capd_link_event(struct capd *d, unsigned i, const char *what)
{
	uint64_t recv = ~0ULL, drop = ~0ULL;

	if (!d->w || d->broken)
		return;
	if (d->ifc[i].cap &&
	    capture_stats(d->ifc[i].cap, CAPTURE_IN, &recv, &drop))
		recv = drop = ~0ULL;
	if (pcapng_write_event(d->w, d->ifc[i].id[CAPTURE_IN], ts_now_real(),
			       recv, drop, what))
		d->broken = true;	/* a new file is tried */
}

/* ---- Interfaces that go down, disappear and come back ---- */

unsigned capd_open_ifaces(const struct capd *d)
{
	unsigned k = 0;

	for (unsigned i = 0; i < d->n; i++)
		k += d->ifc[i].cap != NULL;
	return k;
}

/* Interface i was removed: close it (its ids stay in the file), say so
 * once, and try to reopen it by name every second from now on. */
void capd_iface_gone(struct capd *d, unsigned i, int64_t now)
{
	struct capd_iface *ifc = &d->ifc[i];

	if (!ifc->cap)
		return;
	/* A link set down before it is deleted has its event already. */
	if (!ifc->down)
		capd_link_event(d, i, PCAPNG_LINK_DOWN " (interface removed)");
	capture_close(ifc->cap);
	ifc->cap = NULL;
	ifc->gone_ns = now;
	ifc->retry_ns = now + 1000000000;
	if (capd_open_ifaces(d))
		log_warn("%s: interface removed: closed; reopened by name when "
			 "it comes back", ifc->name);
	else
		log_warn("%s: interface removed: closed; no interface left: "
			 "exiting unless one is back within %lld s (--iface-grace)",
			 ifc->name, (long long)(d->grace_ns / 1000000000));
}

/* Try to reopen a gone interface by its name (quietly: it is tried every
 * second while it stays away). */
void capd_iface_reopen(struct capd *d, unsigned i, int64_t now)
{
	struct capd_iface *ifc = &d->ifc[i];
	struct capture_config cc = d->cc;
	char err[CAPTURE_ERRBUF];
	struct capture_info info;
	struct iface_entry e;
	unsigned idx;

	ifc->retry_ns = now + 1000000000;
	idx = if_nametoindex(ifc->name);
	if (!idx)
		return;
	cc.ifname = ifc->name;
	if (capture_open(&ifc->cap, &cc, err)) {
		log_debug("%s: back, but cannot be opened yet: %s", ifc->name, err);
		return;
	}
	capture_info(ifc->cap, &info);
	if (info.linktype != ifc->info.linktype || info.hw != ifc->info.hw ||
	    info.phc != ifc->info.phc || info.snaplen != ifc->info.snaplen) {
		/* Not what the file says of it: a new file describes it. */
		ifc->info = info;
		ifc->phc = info.phc;
		ifc->linktype = info.linktype;
		ifc->hw_rx = info.hw;
		d->rotate = true;
	}
	ifc->ifindex = idx;
	ifc->dir_unknown = info.dir_unknown;
	ifc->drop_logged = 0;
	ifc->down = iface_get(ifc->name, &e) == 0 && !(e.up && e.running);
	log_notice("%s: interface back after %.1f s (index %u)%s: capturing again",
		   ifc->name, (double)(now - ifc->gone_ns) / 1e9, idx,
		   ifc->down ? ", link down" : "");
	ifc->gone_ns = 0;
	if (!ifc->down)
		capd_link_event(d, i, PCAPNG_LINK_UP " (interface back)");
}

/* A link as rtnetlink announces it (iface_watch), or as read again after
 * the kernel dropped announcements. */
void capd_link(void *arg, const struct iface_entry *e, bool removed)
{
	struct capd *d = arg;
	int64_t now = ts_now_mono();

	for (unsigned i = 0; i < d->n; i++) {
		struct capd_iface *ifc = &d->ifc[i];
		bool down;

		if (strcmp(ifc->name, e->name))
			continue;
		if (!ifc->cap) {
			if (!removed)
				ifc->retry_ns = 0;	/* it is back: now */
			continue;
		}
		if ((unsigned)e->index != ifc->ifindex)
			continue;	/* another link of that name */
		if (removed) {
			capd_iface_gone(d, i, now);
			continue;
		}
		down = !(e->up && e->running);
		if (down == ifc->down)
			continue;
		ifc->down = down;
		if (down)
			log_warn("%s: link down (%s): no frames until it is up",
				 ifc->name, e->up ? "no carrier" : "set down");
		else
			log_notice("%s: link up", ifc->name);
		capd_link_event(d, i, down ? PCAPNG_LINK_DOWN : PCAPNG_LINK_UP);
	}
}

/* Read the links' state (at start, and when rtnetlink lost messages). */
void capd_links_resync(struct capd *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		struct iface_entry e;
		int err = iface_get(d->ifc[i].name, &e);

		if (!err)
			capd_link(d, &e, false);
		else if (err == -ENODEV && d->ifc[i].cap) {
			snprintf(e.name, sizeof(e.name), "%s", d->ifc[i].name);
			e.index = (int)d->ifc[i].ifindex;
			capd_link(d, &e, true);
		}
	}
}

void capd_warn_iface(struct capture *c)
{
	static const char *const names[] = { "tso", "gso", "gro", "lro" };
	struct capture_info info;
	char list[64] = "", fix[128] = "";

	capture_info(c, &info);
	if (info.hw)
		log_notice("%s: received frames with hardware stamps (PHC %d), "
			   "sent frames with host stamps", capture_ifname(c), info.phc);
	else
		log_notice("%s: host stamps (no PHC): software, system time",
			   capture_ifname(c));
	if (info.dir_unknown)
		log_notice("%s: loopback: every frame is captured once, as "
			   "received (libpcap drops the outgoing copy); senders' "
			   "keyed TX stamps are joined to frames by flow",
			   capture_ifname(c));
	if (info.hw && info.rx_narrow)
		log_warn("%s: the NIC stamps only some received frames (rx filter "
			 "%d): another program narrowed it; ptp4l needs "
			 "'hwts_filter full'", capture_ifname(c), info.rx_filter);
	if (info.tx_was >= 0)
		log_warn("%s: libpcap set tx stamping to '%s' and it could not "
			 "be put back to '%s': check ptp4l", capture_ifname(c),
			 hwtstamp_tx_name(info.tx_left) ?: "?",
			 hwtstamp_tx_name(info.tx_was) ?: "?");
	for (int b = 0; b < 4; b++) {
		if (!(info.offloads & (1u << b)))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 list[0] ? ", " : "", names[b]);
		snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix), " %s off",
			 names[b]);
	}
	if (list[0])
		log_warn("%s: %s on: the capture sees merged super-frames, not "
			 "wire frames; turn off with: ethtool -K %s%s",
			 capture_ifname(c), list, capture_ifname(c), fix);
}
