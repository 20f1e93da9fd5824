/* iface.c — the host's network interfaces: one RTM_GETLINK dump through a
 * libnl-route link cache, copied into plain entries sorted by index. */
#include "iface.h"

#include <errno.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nlerr.h"
#include "xalloc.h"

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

static void iface_fill(struct rtnl_link *link, struct iface_entry *e)
{
	memset(e, 0, sizeof(*e));
	copy_str(e->name, sizeof(e->name), rtnl_link_get_name(link));
	e->index = rtnl_link_get_ifindex(link);
	e->up = (rtnl_link_get_flags(link) & IFF_UP) != 0;
	e->mtu = rtnl_link_get_mtu(link);
	copy_str(e->kind, sizeof(e->kind), rtnl_link_get_type(link));
}

/* Dump the links of this namespace into *cache over a fresh socket. */
static int iface_cache(struct nl_sock **sk, struct nl_cache **cache)
{
	int err;

	*sk = nl_socket_alloc();
	if (!*sk)
		return -ENOMEM;
	err = nl_connect(*sk, NETLINK_ROUTE);
	if (err < 0)
		goto out_sock;
	err = rtnl_link_alloc_cache(*sk, AF_UNSPEC, cache);
	if (err < 0)
		goto out_sock;
	return 0;

out_sock:
	nl_socket_free(*sk);
	*sk = NULL;
	return nlerr_errno(err);
}

static int iface_cmp(const void *a, const void *b)
{
	const struct iface_entry *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int iface_list(struct iface_entry *out, int max)
{
	struct iface_entry *all;
	struct nl_cache *cache;
	struct nl_object *obj;
	struct nl_sock *sk;
	int n = 0, total, err;

	if (max < 0 || (max > 0 && !out))
		return -EINVAL;
	err = iface_cache(&sk, &cache);
	if (err)
		return err;
	total = nl_cache_nitems(cache);
	all = xcalloc((size_t)total, sizeof(*all));
	for (obj = nl_cache_get_first(cache); obj && n < total;
	     obj = nl_cache_get_next(obj))
		iface_fill((struct rtnl_link *)obj, &all[n++]);
	qsort(all, (size_t)n, sizeof(*all), iface_cmp);
	if (max > 0)
		memcpy(out, all, (size_t)(n < max ? n : max) * sizeof(*all));

	free(all);
	nl_cache_free(cache);
	nl_socket_free(sk);
	return n;
}

int iface_get(const char *name, struct iface_entry *out)
{
	struct nl_cache *cache;
	struct rtnl_link *link;
	struct nl_sock *sk;
	int err;

	if (!name || !out)
		return -EINVAL;
	if (!name[0] || strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	err = iface_cache(&sk, &cache);
	if (err)
		return err;
	link = rtnl_link_get_by_name(cache, name);
	if (link) {
		iface_fill(link, out);
		rtnl_link_put(link);
	} else {
		err = -ENODEV;
	}
	nl_cache_free(cache);
	nl_socket_free(sk);
	return err;
}
