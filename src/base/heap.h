/* heap.h — one binary min-heap of fixed-size elements.
 *
 * The elements are the caller's: a small struct copied in and out (a key
 * and an index, a pointer, an index alone whose key lives elsewhere). The
 * order is the caller's `less` function; give it a total order (break ties
 * on a sequence number or an index) and the pop order is fully defined, the
 * same as any other correct heap's.
 *
 * Memory: an array of `cap` elements taken at create. A push beyond it
 * doubles the array (amortised, through the one allocation wrapper), so a
 * caller that sizes cap for its bound never allocates again, and one that
 * does not allocates only O(log n) times over a run. No allocation per
 * push or pop otherwise.
 */
#ifndef TAPLESS_BASE_HEAP_H
#define TAPLESS_BASE_HEAP_H

#include <stdbool.h>
#include <stddef.h>

struct heap;

/* Whether element a goes before element b. ctx is heap_create()'s. */
typedef bool (*heap_less_fn)(const void *a, const void *b, void *ctx);

/* A heap of elements of elem_size bytes (at most 256), room for cap of them
 * (0: a small start). Returns 0, or -EINVAL for a bad size or no less. */
int heap_create(struct heap **out, size_t elem_size, size_t cap,
		heap_less_fn less, void *ctx);
void heap_destroy(struct heap *h);

/* Copy elem in. Never fails: grows when full (see above). */
void heap_push(struct heap *h, const void *elem);

/* The least element, valid until the next push, pop or fix; NULL when
 * empty. The caller may change the element's key through the pointer and
 * then call heap_fix_top(). */
const void *heap_top(const struct heap *h);
void *heap_top_mut(struct heap *h);

/* Copy the least element to *out (when out is not NULL) and remove it.
 * Returns true, or false when empty (*out untouched). */
bool heap_pop(struct heap *h, void *out);

/* The top element's key has grown (or, for an index heap, the thing it
 * names has changed): move it down to its place. Cheaper than pop + push. */
void heap_fix_top(struct heap *h);

size_t heap_count(const struct heap *h);

/* Remove every element; the memory stays. */
void heap_clear(struct heap *h);

#endif
