/* reorder.c — hold frames briefly and release them in stamp order; see
 * reorder.h. */
#include "live/reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

struct reorder {
	uint8_t *arena;
	size_t arena_size, a_head, a_used;
	struct slot *slots;
	size_t max;
	uint64_t head, tail;	/* slot counters: [tail, head) in use */
	struct heap *heap[REORDER_MAX_GROUPS];	/* of hkey, on (ts, seq) */
	unsigned groups;
	int64_t hold_ns;
	size_t live;
};

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
	r->arena = xmalloc(arena_bytes);
	r->arena_size = arena_bytes;
	r->slots = xcalloc(max_entries, sizeof(*r->slots));
	r->max = max_entries;
	r->groups = groups;
	r->hold_ns = hold_ns;
	/* Sized for every entry: a push never allocates. */
	for (unsigned g = 0; g < groups; g++) {
		err = heap_create(&r->heap[g], sizeof(struct hkey), max_entries,
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
	for (unsigned g = 0; g < r->groups; g++)
		heap_destroy(r->heap[g]);
	free(r->slots);
	free(r->arena);
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
	idx = (uint32_t)(r->head % r->max);
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
	heap_push(r->heap[e->group], &(struct hkey){ e->ts_ns, s->seq });
	return 0;
}

/* Free slot s and reclaim what arrival order frees. The bytes stay put
 * until the next push, which is what makes a popped e->data safe to use
 * until then. */
static void reclaim(struct reorder *r, struct slot *s)
{
	s->live = false;
	while (r->tail < r->head && !r->slots[r->tail % r->max].live) {
		r->a_used -= r->slots[r->tail % r->max].span;
		r->tail++;
	}
}

/* Release the top of group g into *e. */
static void release(struct reorder *r, unsigned g, struct reorder_entry *e)
{
	struct hkey k;
	struct slot *s;

	heap_pop(r->heap[g], &k);	/* pick() saw it is not empty */
	s = &r->slots[k.seq % r->max];

	*e = s->e;
	e->data = r->arena + s->off;
	r->live--;
	reclaim(r, s);
}

/* The top of group g, past frames dropped while held. */
static const struct hkey *top_of(struct reorder *r, unsigned g)
{
	const struct hkey *top;

	while ((top = heap_top(r->heap[g])) &&
	       r->slots[top->seq % r->max].dropped) {
		struct hkey k;

		heap_pop(r->heap[g], &k);
		reclaim(r, &r->slots[k.seq % r->max]);
	}
	return top;
}

static int pick(struct reorder *r, int64_t now_ns, bool due_only,
		struct reorder_entry *e)
{
	int best = -1;
	int64_t best_arrival = 0;

	for (unsigned g = 0; g < r->groups; g++) {
		const struct hkey *top = top_of(r, g);
		int64_t a;

		if (!top)
			continue;
		a = r->slots[top->seq % r->max].e.arrival_ns;
		if (due_only && a > now_ns - r->hold_ns)
			continue;
		if (best < 0 || a < best_arrival) {
			best = (int)g;
			best_arrival = a;
		}
	}
	if (best < 0)
		return 0;
	release(r, (unsigned)best, e);
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
	s = &r->slots[seq % r->max];
	if (!s->live || s->dropped || s->seq != seq || s->e.caplen != caplen ||
	    memcmp(r->arena + s->off, data, caplen))
		return false;
	s->dropped = true;
	r->live--;
	return true;
}
