/* iface.h — the host's network interfaces, read over rtnetlink (libnl-route).
 */
#ifndef TAPLESS_IFACE_H
#define TAPLESS_IFACE_H

#include <net/if.h>
#include <stdbool.h>

struct iface_entry {
	char name[IF_NAMESIZE];
	int index;
	bool up;		/* IFF_UP */
	unsigned mtu;
	char kind[16];		/* rtnetlink link kind ("veth", "bridge"), or "" */
};

/* Fill out[0..max) with the interfaces of this network namespace, sorted by
 * index. Returns the total number (which may exceed max) or -errno. */
int iface_list(struct iface_entry *out, int max);

/* One interface by name: 0, -ENODEV, or another -errno. */
int iface_get(const char *name, struct iface_entry *out);

#endif
