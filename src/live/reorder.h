/* reorder.h — putting frames from several sources back in stamp order.
 *
 * capd writes frames from two places into one file: the capture rings (which
 * hand frames over in blocks, per direction) and the TX stamps instrumented
 * senders pass over txsock (which arrive after the send completes, often
 * milliseconds after frames captured later). A reader wants them in time
 * order, so capd holds each frame for a fixed time after it arrived and
 * releases frames in stamp order.
 *
 * Stamps of different timescales (PHC/TAI vs system/UTC) cannot be compared:
 * each timescale is its own group, ordered on its own; groups interleave in
 * release order. A frame is released when it is the earliest of its group
 * and has been held `hold_ns`. When the buffer is full the caller forces the
 * oldest out (and counts it: order may then be broken).
 *
 * Memory is taken once at create: an arena of frame bytes used as a ring in
 * arrival order, an entry ring and a heap per group. No allocation per frame,
 * and no page fault either: the arena and the entry ring are mapped with
 * their pages in place.
 */
#ifndef TAPLESS_REORDER_H
#define TAPLESS_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REORDER_MAX_GROUPS 32

struct reorder;

struct reorder_entry {
	int64_t ts_ns;		/* the stamp frames are ordered by */
	int64_t arrival_ns;	/* CLOCK_MONOTONIC when it was pushed */
	uint32_t id;		/* caller's: the pcapng interface */
	uint32_t origlen;
	uint32_t caplen;
	uint32_t flags;		/* caller's: direction, stamp kind */
	unsigned group;
	const uint8_t *data;	/* valid until the next reorder_push() */
};

/* Returns 0, -EINVAL for zero sizes or more than REORDER_MAX_GROUPS, or
 * -ENOMEM. */
int reorder_create(struct reorder **out, size_t arena_bytes, size_t max_entries,
		   unsigned groups, int64_t hold_ns);
void reorder_destroy(struct reorder *r);

/* Whether a frame of caplen bytes fits now. When it does not, pop with
 * reorder_pop_oldest() until it does. A frame larger than the whole arena
 * never fits: the caller writes it directly. */
bool reorder_room(const struct reorder *r, uint32_t caplen);
bool reorder_fits_ever(const struct reorder *r, uint32_t caplen);

/* Copy a frame in. e->data and e->caplen give the bytes; e->arrival_ns is
 * the caller's clock reading. Returns 0, -ENOBUFS (no room: see above) or
 * -EINVAL (group out of range). */
int reorder_push(struct reorder *r, const struct reorder_entry *e);

/* Release the next frame due at now_ns: the earliest of its group, held
 * long enough. Returns 1 with *e filled, 0 when nothing is due. */
int reorder_pop(struct reorder *r, int64_t now_ns, struct reorder_entry *e);

/* Release the earliest frame of the group whose earliest frame arrived
 * first, due or not (to make room, and to flush at rotation or exit).
 * Returns 1 with *e, 0 when empty. */
int reorder_pop_oldest(struct reorder *r, struct reorder_entry *e);

size_t reorder_count(const struct reorder *r);

/* The handle the next reorder_push() gives its frame (pushes count 0,
 * 1, ...). */
uint64_t reorder_next_seq(const struct reorder *r);

/* Take back the frame pushed as seq, before it is released: only when it
 * is still held and is these bytes (so a stale handle never drops another
 * frame). It is never popped. Returns true when dropped. */
bool reorder_drop(struct reorder *r, uint64_t seq, const uint8_t *data,
		  uint32_t caplen);

#endif
