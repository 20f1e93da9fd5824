/* reorder.c — hold frames briefly and release them in stamp order; see
 * reorder.h. */
#include "live/reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/heap.h"
#include "base/xalloc.h"

struct slot {
	struct reorder_entry e;	/* e.data is set on pop */
	uint64_t seq;		/* arrival order: ties keep it */
	size_t off;		/* frame bytes at arena + off */
	size_t span;		/* arena bytes taken, with any wrap waste */
	bool live;
	bool dropped;		/* reorder_drop(): discarded, never popped */
};

/* The key is kept in the heap itself: comparisons never touch the slots,
 * which at hundreds of thousands of frames a second is the difference
 * between cache hits and misses on every level. */
struct hkey {
	int64_t ts;
	uint64_t seq;		/* slot = seq % max */
};

/* A group's frames that came in stamp order, oldest first: one capture
 * ring hands them over that way, so nearly every frame goes here, at the
 * cost of a compare, and only the few that come out of order (TX stamps
 * of senders, arriving late) pay the heap's log n. */
struct run {
	struct hkey *k;		/* a ring of max entries */
	size_t first, n;
};

struct reorder {
	uint8_t *arena;
	size_t arena_size, a_head, a_used;
	struct slot *slots;
	size_t slots_bytes;
	size_t max;		/* entries held at most */
	size_t mask;		/* the rings' size - 1: a power of two at
				 * least max, so that a slot is a mask away
				 * from its sequence number, not a division */
	uint64_t head, tail;	/* slot counters: [tail, head) in use */
	struct run run[REORDER_MAX_GROUPS];
	struct heap *heap[REORDER_MAX_GROUPS];	/* of hkey, on (ts, seq) */
	unsigned groups;
	int64_t hold_ns;
	size_t live;
};

/* The arena and the slots, mapped with every page in place. Both are used
 * as rings, frame after frame, so a page first touched by a frame is a page
 * fault, with the kernel clearing a page for it, in the middle of the
 * capture: about one per 70 frames of 60 bytes (arena and slot), until the
 * rings have gone round once, which takes 64 MiB of frames in capd (minutes
 * on a quiet link). Taken here instead, at start-up, as the memory is. */
static void *map_populated(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static bool before(const void *a, const void *b, void *ctx)
{
	const struct hkey *x = a, *y = b;

	(void)ctx;
	return x->ts != y->ts ? x->ts < y->ts : x->seq < y->seq;
}

int reorder_create(struct reorder **out, size_t arena_bytes, size_t max_entries,
		   unsigned groups, int64_t hold_ns)
{
	struct reorder *r;
	int err;

	if (!arena_bytes || !max_entries || !groups ||
	    groups > REORDER_MAX_GROUPS || max_entries > UINT32_MAX || hold_ns < 0)
		return -EINVAL;
	r = xcalloc(1, sizeof(*r));
	r->arena_size = arena_bytes;
	r->max = max_entries;
	r->mask = 1;
	while (r->mask < max_entries)
		r->mask <<= 1;
	r->mask--;
	r->slots_bytes = (r->mask + 1) * sizeof(*r->slots);
	r->arena = map_populated(arena_bytes);
	r->slots = map_populated(r->slots_bytes);	/* zeroed, as calloc */
	if (!r->arena || !r->slots) {
		reorder_destroy(r);
		return -ENOMEM;
	}
	r->groups = groups;
	r->hold_ns = hold_ns;
	/* The runs are sized for every entry; the heaps, which hold only
	 * frames that came out of order, start small and grow (by doubling,
	 * a few times in a run) if a sender's stamps keep coming late. */
	for (unsigned g = 0; g < groups; g++) {
		r->run[g].k = xcalloc(r->mask + 1, sizeof(struct hkey));
		err = heap_create(&r->heap[g], sizeof(struct hkey),
				  max_entries < 4096 ? max_entries : 4096,
				  before, NULL);
		if (err) {
			reorder_destroy(r);
			return err;
		}
	}
	*out = r;
	return 0;
}

void reorder_destroy(struct reorder *r)
{
	if (!r)
		return;
	for (unsigned g = 0; g < r->groups; g++) {
		heap_destroy(r->heap[g]);
		free(r->run[g].k);
	}
	if (r->slots)
		munmap(r->slots, r->slots_bytes);
	if (r->arena)
		munmap(r->arena, r->arena_size);
	free(r);
}

static size_t span_at(const struct reorder *r, uint32_t caplen)
{
	size_t end = r->arena_size - r->a_head;

	return end >= caplen ? caplen : end + caplen;
}

bool reorder_fits_ever(const struct reorder *r, uint32_t caplen)
{
	return caplen <= r->arena_size;
}

bool reorder_room(const struct reorder *r, uint32_t caplen)
{
	if (r->head - r->tail >= r->max || caplen > r->arena_size)
		return false;
	if (!r->a_used)
		return true;	/* reorder_push() restarts at offset 0 */
	return r->a_used + span_at(r, caplen) <= r->arena_size;
}

static struct hkey *run_at(const struct reorder *r, unsigned g, size_t i)
{
	return &r->run[g].k[(r->run[g].first + i) & r->mask];
}

/* Into the group's run when it comes after the run's last key, else into
 * its heap. Either way the group's earliest is the earlier of the run's
 * first and the heap's top. */
static void run_or_heap_push(struct reorder *r, unsigned g, const struct hkey *k)
{
	struct run *run = &r->run[g];

	if (!run->n || !before(k, run_at(r, g, run->n - 1), NULL)) {
		*run_at(r, g, run->n) = *k;	/* room: one slot per entry */
		run->n++;
	} else {
		heap_push(r->heap[g], k);
	}
}

int reorder_push(struct reorder *r, const struct reorder_entry *e)
{
	struct slot *s;
	size_t span;
	uint32_t idx;

	if (e->group >= r->groups)
		return -EINVAL;
	if (!reorder_room(r, e->caplen))
		return -ENOBUFS;
	if (!r->a_used)
		r->a_head = 0;
	span = span_at(r, e->caplen);
	bool wrap = r->arena_size - r->a_head < e->caplen;
	idx = (uint32_t)(r->head & r->mask);
	s = &r->slots[idx];
	s->e = *e;
	s->seq = r->head++;
	s->span = span;
	s->off = wrap ? 0 : r->a_head;
	s->live = true;
	s->dropped = false;
	memcpy(r->arena + s->off, e->data, e->caplen);
	r->a_head = s->off + e->caplen;
	r->a_used += span;
	r->live++;
	run_or_heap_push(r, e->group, &(struct hkey){ e->ts_ns, s->seq });
	return 0;
}

/* Free slot s and reclaim what arrival order frees. The bytes stay put
 * until the next push, which is what makes a popped e->data safe to use
 * until then. */
static void reclaim(struct reorder *r, struct slot *s)
{
	s->live = false;
	while (r->tail < r->head && !r->slots[r->tail & r->mask].live) {
		r->a_used -= r->slots[r->tail & r->mask].span;
		r->tail++;
	}
}

/* Take the group's earliest key out: from the run when from_run. */
static void take(struct reorder *r, unsigned g, bool from_run, struct hkey *k)
{
	if (from_run) {
		*k = *run_at(r, g, 0);
		r->run[g].first = (r->run[g].first + 1) & r->mask;
		r->run[g].n--;
	} else {
		heap_pop(r->heap[g], k);
	}
}

/* Release the top of group g into *e. */
static void release(struct reorder *r, unsigned g, bool from_run,
		    struct reorder_entry *e)
{
	struct hkey k;
	struct slot *s;

	take(r, g, from_run, &k);	/* pick() saw it is there */
	s = &r->slots[k.seq & r->mask];

	*e = s->e;
	e->data = r->arena + s->off;
	r->live--;
	reclaim(r, s);
}

/* The earliest key of group g, past frames dropped while held; *from_run
 * says where it is. NULL when the group is empty. */
static const struct hkey *top_of(struct reorder *r, unsigned g, bool *from_run)
{
	for (;;) {
		const struct hkey *h = heap_top(r->heap[g]);
		const struct hkey *f = r->run[g].n ? run_at(r, g, 0) : NULL;
		struct hkey k;

		*from_run = f && (!h || before(f, h, NULL));
		const struct hkey *top = *from_run ? f : h;

		if (!top || !r->slots[top->seq & r->mask].dropped)
			return top;
		take(r, g, *from_run, &k);
		reclaim(r, &r->slots[k.seq & r->mask]);
	}
}

static int pick(struct reorder *r, int64_t now_ns, bool due_only,
		struct reorder_entry *e)
{
	int best = -1;
	bool best_run = false;
	int64_t best_arrival = 0;

	for (unsigned g = 0; g < r->groups; g++) {
		bool from_run;
		const struct hkey *top = top_of(r, g, &from_run);
		int64_t a;

		if (!top)
			continue;
		a = r->slots[top->seq & r->mask].e.arrival_ns;
		if (due_only && a > now_ns - r->hold_ns)
			continue;
		if (best < 0 || a < best_arrival) {
			best = (int)g;
			best_run = from_run;
			best_arrival = a;
		}
	}
	if (best < 0)
		return 0;
	release(r, (unsigned)best, best_run, e);
	return 1;
}

int reorder_pop(struct reorder *r, int64_t now_ns, struct reorder_entry *e)
{
	return pick(r, now_ns, true, e);
}

int reorder_pop_oldest(struct reorder *r, struct reorder_entry *e)
{
	return pick(r, 0, false, e);
}

size_t reorder_count(const struct reorder *r)
{
	return r->live;
}

uint64_t reorder_next_seq(const struct reorder *r)
{
	return r->head;
}

bool reorder_drop(struct reorder *r, uint64_t seq, const uint8_t *data,
		  uint32_t caplen)
{
	struct slot *s;

	if (seq < r->tail || seq >= r->head)
		return false;
	s = &r->slots[seq & r->mask];
	if (!s->live || s->dropped || s->seq != seq || s->e.caplen != caplen ||
	    memcmp(r->arena + s->off, data, caplen))
		return false;
	s->dropped = true;
	r->live--;
	return true;
}
