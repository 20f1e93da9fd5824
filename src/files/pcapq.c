/* pcapq.c — pcapng packets written on a thread of their own; see pcapq.h.
 *
 * The ring is bytes, not slots: a record is a header and the packet's
 * bytes, padded to 8, so small frames take little room. head and tail
 * count bytes since the start and only grow; the byte at position p is at
 * p & mask. A record never wraps: when the space left before the end of
 * the buffer is smaller than a header, both sides skip it (the same rule
 * on both sides, so nothing is written there); when it holds a header but
 * not the record, the producer writes a pad header there (no writer) and
 * starts the record at the beginning.
 *
 * The producer publishes a record by storing tail with release order after
 * writing it; the writer thread loads tail with acquire order before
 * reading, and gives the room back by storing head with release order once
 * it is done with the bytes. The writer sleeps a millisecond when the ring
 * is empty: the producer never wakes it (no system call on its side), and a
 * millisecond of packets is a small part of the ring.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/xalloc.h"
#include "files/pcapq.h"

#define PCAPQ_MIN_BYTES (64u << 10)
#define PCAPQ_IDLE_NS 1000000L		/* writer's sleep on an empty ring */
#define PCAPQ_FULL_NS 50000L		/* producer's sleep on a full one */

struct pcapq_rec {
	uint32_t size;		/* bytes of the record, header included */
	uint32_t caplen, origlen, iface;
	int64_t ts_ns;
	uint64_t id;
	struct pcapng_writer *w;	/* NULL: padding */
	uint8_t dir;
	uint8_t has_id;
	uint8_t pad[6];
};

struct pcapq {
	uint8_t *buf;
	size_t size, mask;
	/* Apart, so the two threads do not share a cache line. */
	_Alignas(64) _Atomic uint64_t tail;	/* producer's */
	uint64_t packets, stalls, peak;
	_Alignas(64) _Atomic uint64_t head;	/* writer's */
	_Atomic uint64_t written, failed;
	_Atomic int error;
	_Atomic bool stop;
	/* Background: the writer at idle priority, raised to normal while
	 * the ring is more than half full (boosted), so it cannot starve
	 * behind busy CPUs and stall the producer for good. */
	_Atomic bool background, boosted;
	uint64_t boosts;
	pthread_t thread;
	bool running;
};

static void pcapq_policy(struct pcapq *q, int policy)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)pthread_setschedparam(q->thread, policy, &sp);
}

static size_t pcapq_rec_size(uint32_t caplen)
{
	return (sizeof(struct pcapq_rec) + caplen + 7) & ~(size_t)7;
}

static void pcapq_sleep(long ns)
{
	struct timespec t = { 0, ns };

	nanosleep(&t, NULL);
}

static void pcapq_write(struct pcapq *q, const struct pcapq_rec *r)
{
	int rc = pcapng_write_packet_id(r->w, r->iface, r->ts_ns, r + 1, r->caplen,
					r->origlen, (enum pcapng_dir)r->dir,
					r->has_id ? &r->id : NULL);
	int none = 0;

	if (rc) {
		atomic_fetch_add_explicit(&q->failed, 1, memory_order_relaxed);
		atomic_compare_exchange_strong(&q->error, &none, rc);
	} else {
		atomic_fetch_add_explicit(&q->written, 1, memory_order_relaxed);
	}
}

static void *pcapq_main(void *arg)
{
	struct pcapq *q = arg;
	uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);

	for (;;) {
		uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);

		if (h == t) {
			/* Drained: back to the background. */
			if (atomic_load_explicit(&q->boosted, memory_order_relaxed)) {
				atomic_store_explicit(&q->boosted, false,
						      memory_order_relaxed);
				pcapq_policy(q, SCHED_IDLE);
			}
			/* Stop is set after the last record is published:
			 * one more look at tail sees it. */
			if (atomic_load_explicit(&q->stop, memory_order_acquire)) {
				t = atomic_load_explicit(&q->tail, memory_order_acquire);
				if (h == t)
					break;
				continue;
			}
			pcapq_sleep(PCAPQ_IDLE_NS);
			continue;
		}
		while (h != t) {
			size_t off = h & q->mask;
			const struct pcapq_rec *r;

			if (q->size - off < sizeof(*r)) {
				h += q->size - off;	/* too small for a header */
				continue;
			}
			r = (const struct pcapq_rec *)(q->buf + off);
			if (r->w)
				pcapq_write(q, r);
			h += r->size;
		}
		atomic_store_explicit(&q->head, h, memory_order_release);
	}
	return NULL;
}

int pcapq_create(struct pcapq **out, size_t bytes)
{
	struct pcapq *q = xcalloc(1, sizeof(*q));
	sigset_t all, old;
	size_t size = PCAPQ_MIN_BYTES;
	int rc;

	while (size < bytes && size < ((size_t)1 << 40))
		size <<= 1;
	q->buf = xmalloc(size);
	q->size = size;
	q->mask = size - 1;
	/* Touch the ring now: no page fault on the forwarding path. */
	memset(q->buf, 0, size);
	atomic_init(&q->tail, 0);
	atomic_init(&q->head, 0);
	atomic_init(&q->written, 0);
	atomic_init(&q->failed, 0);
	atomic_init(&q->error, 0);
	atomic_init(&q->stop, false);
	atomic_init(&q->background, false);
	atomic_init(&q->boosted, false);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&q->thread, NULL, pcapq_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free(q->buf);
		free(q);
		return -rc;
	}
	q->running = true;
	*out = q;
	return 0;
}

int pcapq_avoid_cpu(struct pcapq *q, int cpu)
{
	cpu_set_t set;
	int rc;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	rc = pthread_getaffinity_np(q->thread, sizeof(set), &set);
	if (rc)
		return -rc;
	CPU_CLR(cpu, &set);
	if (!CPU_COUNT(&set))
		return 0;	/* nowhere else to go */
	rc = pthread_setaffinity_np(q->thread, sizeof(set), &set);
	return -rc;
}

int pcapq_background(struct pcapq *q)
{
	struct sched_param sp = { .sched_priority = 0 };
	int rc = pthread_setschedparam(q->thread, SCHED_IDLE, &sp);

	if (!rc)
		atomic_store_explicit(&q->background, true, memory_order_relaxed);
	return -rc;
}

int pcapq_packet(struct pcapq *q, struct pcapng_writer *w, uint32_t iface,
		 int64_t ts_ns, const void *data, uint32_t caplen,
		 uint32_t origlen, enum pcapng_dir dir, bool packet_id,
		 uint64_t id)
{
	size_t need = pcapq_rec_size(caplen), off, skip = 0, room;
	uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	struct pcapq_rec *r;
	bool waited = false;

	if (need > q->size / 2)
		return -EMSGSIZE;
	off = t & q->mask;
	room = q->size - off;
	if (room < sizeof(*r))
		skip = room;		/* the writer skips it too */
	else if (room < need)
		skip = room;		/* a pad record, then from the start */
	for (;;) {
		uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);

		if (t + skip + need - h <= q->size)
			break;
		if (!waited) {
			q->stalls++;
			waited = true;
		}
		pcapq_sleep(PCAPQ_FULL_NS);
	}
	if (skip >= sizeof(*r)) {
		r = (struct pcapq_rec *)(q->buf + off);
		memset(r, 0, sizeof(*r));
		r->size = (uint32_t)skip;
	}
	t += skip;
	r = (struct pcapq_rec *)(q->buf + (t & q->mask));
	r->size = (uint32_t)need;
	r->caplen = caplen;
	r->origlen = origlen;
	r->iface = iface;
	r->ts_ns = ts_ns;
	r->id = id;
	r->w = w;
	r->dir = (uint8_t)dir;
	r->has_id = packet_id;
	memcpy(r + 1, data, caplen);
	t += need;
	atomic_store_explicit(&q->tail, t, memory_order_release);
	q->packets++;
	{
		uint64_t used = t - atomic_load_explicit(&q->head, memory_order_relaxed);

		if (used > q->peak)
			q->peak = used;
		if (used > q->size / 2 &&
		    atomic_load_explicit(&q->background, memory_order_relaxed) &&
		    !atomic_load_explicit(&q->boosted, memory_order_relaxed)) {
			atomic_store_explicit(&q->boosted, true, memory_order_relaxed);
			q->boosts++;
			pcapq_policy(q, SCHED_OTHER);
		}
	}
	return 0;
}

int pcapq_error(const struct pcapq *q)
{
	return atomic_load_explicit(&((struct pcapq *)q)->error, memory_order_relaxed);
}

int pcapq_finish(struct pcapq *q)
{
	if (q->running) {
		atomic_store_explicit(&q->stop, true, memory_order_release);
		pthread_join(q->thread, NULL);
		q->running = false;
	}
	return pcapq_error(q);
}

void pcapq_stats(const struct pcapq *q, struct pcapq_stats *st)
{
	struct pcapq *m = (struct pcapq *)q;

	memset(st, 0, sizeof(*st));
	st->packets = q->packets;
	st->stalls = q->stalls;
	st->boosts = q->boosts;
	st->peak_bytes = q->peak;
	st->written = atomic_load_explicit(&m->written, memory_order_relaxed);
	st->failed = atomic_load_explicit(&m->failed, memory_order_relaxed);
	st->error = pcapq_error(q);
}

void pcapq_destroy(struct pcapq *q)
{
	if (!q)
		return;
	pcapq_finish(q);
	free(q->buf);
	free(q);
}
