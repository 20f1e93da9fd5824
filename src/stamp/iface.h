/* iface.h — the host's network interfaces, read over rtnetlink (libnl-route).
 */
#ifndef TAPLESS_IFACE_H
#define TAPLESS_IFACE_H

#include <net/if.h>
#include <stdbool.h>

struct iface_entry {
	char name[IF_NAMESIZE];
	int index;
	bool up;		/* IFF_UP: configured up */
	bool running;		/* IFF_RUNNING: carrier, operationally up */
	bool loopback;		/* IFF_LOOPBACK */
	unsigned mtu;
	char kind[16];		/* rtnetlink link kind ("veth", "bridge"), or "" */
};

/* Fill out[0..max) with the interfaces of this network namespace, sorted by
 * index. Returns the total number (which may exceed max) or -errno. */
int iface_list(struct iface_entry *out, int max);

/* One interface by name: 0, -ENODEV, or another -errno. */
int iface_get(const char *name, struct iface_entry *out);

/* Link changes as they happen (rtnetlink RTNLGRP_LINK through libnl-route),
 * for a daemon's poll loop. */
struct iface_watch;

typedef void (*iface_watch_fn)(void *arg, const struct iface_entry *e,
			       bool removed);

int iface_watch_open(struct iface_watch **out);
int iface_watch_fd(const struct iface_watch *w);
/* Handle every message waiting, calling fn per link announced. Returns 0,
 * -ENOBUFS when the kernel dropped messages (re-read the state with
 * iface_get), or another -errno. */
int iface_watch_read(struct iface_watch *w, iface_watch_fn fn, void *arg);
void iface_watch_close(struct iface_watch *w);

#endif
