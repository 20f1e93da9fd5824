/* heap.c — see heap.h. */
#include "base/heap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

#define HEAP_MAX_ELEM 256
#define HEAP_MIN_CAP 16

struct heap {
	unsigned char *v;	/* n elements of size bytes, v[0] least */
	size_t size, n, cap;
	heap_less_fn less;
	void *ctx;
	unsigned char hole[HEAP_MAX_ELEM];	/* the element being placed */
};

static inline unsigned char *at(const struct heap *h, size_t i)
{
	return h->v + i * h->size;
}

int heap_create(struct heap **out, size_t elem_size, size_t cap,
		heap_less_fn less, void *ctx)
{
	struct heap *h;

	if (!elem_size || elem_size > HEAP_MAX_ELEM || !less ||
	    cap > SIZE_MAX / elem_size)
		return -EINVAL;
	h = xcalloc(1, sizeof(*h));
	h->size = elem_size;
	h->cap = cap ? cap : HEAP_MIN_CAP;
	h->v = xmalloc(h->cap * elem_size);
	h->less = less;
	h->ctx = ctx;
	*out = h;
	return 0;
}

void heap_destroy(struct heap *h)
{
	if (!h)
		return;
	free(h->v);
	free(h);
}

/* Place the element in h->hole at i, moving parents down past it. */
static void sift_up(struct heap *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!h->less(h->hole, at(h, p), h->ctx))
			break;
		memcpy(at(h, i), at(h, p), h->size);
		i = p;
	}
	memcpy(at(h, i), h->hole, h->size);
}

/* Place the element in h->hole at i, moving lesser children up past it. */
static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->less(at(h, c + 1), at(h, c), h->ctx))
			c++;
		if (!h->less(at(h, c), h->hole, h->ctx))
			break;
		memcpy(at(h, i), at(h, c), h->size);
		i = c;
	}
	memcpy(at(h, i), h->hole, h->size);
}

void heap_push(struct heap *h, const void *elem)
{
	if (h->n == h->cap) {
		if (h->cap > SIZE_MAX / 2 / h->size)
			abort();	/* cannot happen before memory runs out */
		h->cap *= 2;
		h->v = xrealloc(h->v, h->cap * h->size);
	}
	memcpy(h->hole, elem, h->size);
	sift_up(h, h->n++);
}

const void *heap_top(const struct heap *h)
{
	return h->n ? h->v : NULL;
}

void *heap_top_mut(struct heap *h)
{
	return h->n ? h->v : NULL;
}

bool heap_pop(struct heap *h, void *out)
{
	if (!h->n)
		return false;
	if (out)
		memcpy(out, h->v, h->size);
	if (--h->n) {
		memcpy(h->hole, at(h, h->n), h->size);
		sift_down(h, 0);
	}
	return true;
}

void heap_fix_top(struct heap *h)
{
	if (h->n < 2)
		return;
	memcpy(h->hole, h->v, h->size);
	sift_down(h, 0);
}

size_t heap_count(const struct heap *h)
{
	return h->n;
}

void heap_clear(struct heap *h)
{
	h->n = 0;
}
