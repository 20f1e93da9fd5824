/* shim_ep.c — what each epoll registration's data stands for.
 *
 * epoll_wait() hands back the data the program registered, not the
 * descriptor, and a program may register anything there (a pointer, an
 * index). To tell which socket an EPOLLERR belongs to, epoll_ctl() is
 * watched: per epoll instance, a hash from data to (descriptor, events),
 * and the data each descriptor was registered with (to remove it on
 * EPOLL_CTL_DEL and MOD). Programs may register one data value for
 * several descriptors (0, or an object standing for several): such an
 * entry is marked shared, and a lookup of it gives every descriptor
 * registered with that data (from the per-descriptor arrays).
 * Instances are shared by dup()s of the epoll descriptor, and recycled,
 * never freed, like sockets.
 */
#include "shim/shim.h"

#include <stdlib.h>
#include <string.h>

struct shim_ep_ent {
	uint64_t data;
	int fd;			/* -1: empty, -2: removed */
	uint32_t events;
	bool shared;		/* other descriptors have this data too */
};

struct shim_ep {
	pthread_mutex_t mtx;
	_Atomic int refs;
	struct shim_ep_ent *ents;	/* open addressing, cap a power of 2 */
	size_t cap, used;		/* used counts removed slots too */
	uint64_t *fd_data;		/* by descriptor: its data */
	uint32_t *fd_events;		/* and its events */
	uint8_t *fd_has;
	size_t fd_cap;
	struct shim_ep *next_free;
};

static pthread_mutex_t pool_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct shim_ep *pool;

static size_t hash64(uint64_t v, size_t cap)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v & (cap - 1);
}

static struct shim_ep_ent *find(struct shim_ep *ep, uint64_t data)
{
	if (!ep->cap)
		return NULL;
	for (size_t i = hash64(data, ep->cap), n = 0; n < ep->cap;
	     i = (i + 1) & (ep->cap - 1), n++) {
		if (ep->ents[i].fd == -1)
			return NULL;
		if (ep->ents[i].fd >= 0 && ep->ents[i].data == data)
			return &ep->ents[i];
	}
	return NULL;
}

static int put(struct shim_ep *ep, uint64_t data, int fd, uint32_t events);

static int grow(struct shim_ep *ep)
{
	struct shim_ep_ent *old = ep->ents;
	size_t ocap = ep->cap, cap = ocap ? ocap * 2 : 64;

	/* Rehash into a table at most half full of live entries. */
	while (cap < 64)
		cap *= 2;
	ep->ents = malloc(cap * sizeof(*ep->ents));
	if (!ep->ents) {
		ep->ents = old;
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		ep->ents[i].fd = -1;
	ep->cap = cap;
	ep->used = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].fd >= 0)
			put(ep, old[i].data, old[i].fd, old[i].events);
	for (size_t i = 0; i < ocap; i++)
		if (old[i].fd >= 0 && old[i].shared)
			find(ep, old[i].data)->shared = true;
	free(old);
	return 0;
}

static int put(struct shim_ep *ep, uint64_t data, int fd, uint32_t events)
{
	struct shim_ep_ent *e = find(ep, data);

	if (e) {
		if (e->fd != fd)
			e->shared = true;
		e->fd = fd;
		e->events = events;
		return 0;
	}
	if ((ep->used + 1) * 2 > ep->cap && grow(ep))
		return -1;
	for (size_t i = hash64(data, ep->cap);; i = (i + 1) & (ep->cap - 1)) {
		if (ep->ents[i].fd < 0) {
			if (ep->ents[i].fd == -1)
				ep->used++;
			ep->ents[i] = (struct shim_ep_ent){ data, fd, events,
							    false };
			return 0;
		}
	}
}

static void forget_fd(struct shim_ep *ep, int fd)
{
	struct shim_ep_ent *e;

	if ((size_t)fd >= ep->fd_cap || !ep->fd_has[fd])
		return;
	ep->fd_has[fd] = 0;
	e = find(ep, ep->fd_data[fd]);
	if (!e || e->fd != fd)
		return;
	if (!e->shared) {
		e->fd = -2;
		return;
	}
	/* Another descriptor with the same data stands for it now. */
	for (size_t i = 0; i < ep->fd_cap; i++)
		if (ep->fd_has[i] && ep->fd_data[i] == e->data) {
			e->fd = (int)i;
			e->events = ep->fd_events[i];
			return;
		}
	e->fd = -2;
}

static int remember_fd(struct shim_ep *ep, int fd, uint64_t data,
		       uint32_t events)
{
	if ((size_t)fd >= ep->fd_cap) {
		size_t cap = ep->fd_cap ? ep->fd_cap : 256;
		uint64_t *d;
		uint32_t *ev;
		uint8_t *h;

		while (cap <= (size_t)fd)
			cap *= 2;
		d = realloc(ep->fd_data, cap * sizeof(*d));
		if (!d)
			return -1;
		ep->fd_data = d;
		ev = realloc(ep->fd_events, cap * sizeof(*ev));
		if (!ev)
			return -1;
		ep->fd_events = ev;
		h = realloc(ep->fd_has, cap);
		if (!h)
			return -1;
		memset(h + ep->fd_cap, 0, cap - ep->fd_cap);
		ep->fd_has = h;
		ep->fd_cap = cap;
	}
	ep->fd_data[fd] = data;
	ep->fd_events[fd] = events;
	ep->fd_has[fd] = 1;
	return 0;
}

static struct shim_ep *ep_of(int epfd, bool create)
{
	_Atomic uintptr_t *slot = shim_table_slot(&shim_eps, epfd, create);
	uintptr_t v = slot ? atomic_load(slot) : 0;
	struct shim_ep *ep;

	if (v > SHIM_FD_APP || !create)
		return v > SHIM_FD_APP ? (struct shim_ep *)v : NULL;
	if (!slot)
		return NULL;
	pthread_mutex_lock(&pool_mtx);
	ep = pool;
	if (ep)
		pool = ep->next_free;
	pthread_mutex_unlock(&pool_mtx);
	if (!ep) {
		ep = calloc(1, sizeof(*ep));
		if (!ep)
			return NULL;
		pthread_mutex_init(&ep->mtx, NULL);
	}
	atomic_store(&ep->refs, 1);
	v = SHIM_FD_UNKNOWN;
	if (!atomic_compare_exchange_strong(slot, &v, (uintptr_t)ep)) {
		/* Another thread made it first. */
		shim_ep_release(ep);
		return v > SHIM_FD_APP ? (struct shim_ep *)v : NULL;
	}
	return ep;
}

void shim_ep_release(struct shim_ep *ep)
{
	if (atomic_fetch_sub(&ep->refs, 1) != 1)
		return;
	pthread_mutex_lock(&ep->mtx);
	for (size_t i = 0; i < ep->cap; i++)
		ep->ents[i].fd = -1;
	ep->used = 0;
	if (ep->fd_has)
		memset(ep->fd_has, 0, ep->fd_cap);
	pthread_mutex_unlock(&ep->mtx);
	pthread_mutex_lock(&pool_mtx);
	ep->next_free = pool;
	pool = ep;
	pthread_mutex_unlock(&pool_mtx);
}

void shim_ep_hold(struct shim_ep *ep)
{
	atomic_fetch_add(&ep->refs, 1);
}

void shim_ep_ctl(int epfd, int op, int fd, const struct epoll_event *ev)
{
	struct shim_ep *ep = ep_of(epfd, op != EPOLL_CTL_DEL);

	if (!ep)
		return;
	pthread_mutex_lock(&ep->mtx);
	forget_fd(ep, fd);
	if (op != EPOLL_CTL_DEL && ev &&
	    (remember_fd(ep, fd, ev->data.u64, ev->events) ||
	     put(ep, ev->data.u64, fd, ev->events)))
		shim_log_once(LOG_WARNING, "epoll: out of memory: an EPOLLERR "
			      "raised by stamps may reach the program");
	pthread_mutex_unlock(&ep->mtx);
}

int shim_ep_lookup(int epfd, uint64_t data, int *fds, uint32_t *events,
		   int max)
{
	struct shim_ep *ep = ep_of(epfd, false);
	struct shim_ep_ent *e;
	int n = 0;

	if (!ep || max < 1)
		return 0;
	pthread_mutex_lock(&ep->mtx);
	e = find(ep, data);
	if (e && !e->shared) {
		fds[0] = e->fd;
		events[0] = e->events;
		n = 1;
	} else if (e) {
		for (size_t i = 0; i < ep->fd_cap; i++) {
			if (!ep->fd_has[i] || ep->fd_data[i] != data)
				continue;
			if (n == max) {
				n = -1;	/* too many to tell */
				break;
			}
			fds[n] = (int)i;
			events[n++] = ep->fd_events[i];
		}
	}
	pthread_mutex_unlock(&ep->mtx);
	return n;
}

static void reinit(int fd, uintptr_t v, void *arg)
{
	(void)fd;
	(void)arg;
	pthread_mutex_init(&((struct shim_ep *)v)->mtx, NULL);
}

void shim_ep_after_fork(void)
{
	pthread_mutex_init(&pool_mtx, NULL);
	shim_table_each(&shim_eps, reinit, NULL);
}
