/* iface.c — the host's network interfaces: one RTM_GETLINK dump through a
 * libnl-route link cache, copied into plain entries sorted by index. */
#include "stamp/iface.h"

#include <errno.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "stamp/nlerr.h"
#include "base/xalloc.h"

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
	e->running = (rtnl_link_get_flags(link) & IFF_RUNNING) != 0;
	e->loopback = (rtnl_link_get_flags(link) & IFF_LOOPBACK) != 0;
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

struct iface_watch {
	struct nl_sock *sk;
	iface_watch_fn fn;
	void *arg;
	bool removed;		/* the message being parsed is RTM_DELLINK */
};

static void iface_watch_obj(struct nl_object *obj, void *arg)
{
	struct iface_watch *w = arg;
	struct iface_entry e;

	iface_fill((struct rtnl_link *)obj, &e);
	w->fn(w->arg, &e, w->removed);
}

static int iface_watch_msg(struct nl_msg *msg, void *arg)
{
	struct iface_watch *w = arg;
	int type = nlmsg_hdr(msg)->nlmsg_type;

	if (type != RTM_NEWLINK && type != RTM_DELLINK)
		return NL_OK;
	w->removed = type == RTM_DELLINK;
	nl_msg_parse(msg, iface_watch_obj, w);
	return NL_OK;
}

int iface_watch_open(struct iface_watch **out)
{
	struct iface_watch *w = xcalloc(1, sizeof(*w));
	int err = -NLE_NOMEM;

	*out = NULL;
	w->sk = nl_socket_alloc();
	if (!w->sk)
		goto fail;
	/* Notifications carry no sequence numbers of ours. */
	nl_socket_disable_seq_check(w->sk);
	nl_socket_modify_cb(w->sk, NL_CB_VALID, NL_CB_CUSTOM, iface_watch_msg, w);
	err = nl_connect(w->sk, NETLINK_ROUTE);
	if (!err)
		err = nl_socket_add_membership(w->sk, RTNLGRP_LINK);
	if (!err)
		err = nl_socket_set_nonblocking(w->sk);
	if (err < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	iface_watch_close(w);
	return nlerr_errno(err);
}

int iface_watch_fd(const struct iface_watch *w)
{
	return nl_socket_get_fd(w->sk);
}

int iface_watch_read(struct iface_watch *w, iface_watch_fn fn, void *arg)
{
	int err;

	w->fn = fn;
	w->arg = arg;
	do
		err = nl_recvmsgs_default(w->sk);
	while (err >= 0);
	if (err == -NLE_AGAIN)
		return 0;
	/* libnl reports the socket's ENOBUFS (messages lost) as NOMEM. */
	if (err == -NLE_NOMEM)
		return -ENOBUFS;
	return nlerr_errno(err);
}

void iface_watch_close(struct iface_watch *w)
{
	if (!w)
		return;
	if (w->sk)
		nl_socket_free(w->sk);
	free(w);
}
