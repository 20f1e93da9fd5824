/* hmap.c — see hmap.h.
 *
 * A slot is [tag: uint32][key][pad][value][pad], 8-byte aligned. The tag is
 * the low 32 bits of the key's hash with the top bit set (0: empty slot);
 * its low bits give the slot the key belongs in (the table never has more
 * than 2^31 slots), so growing and deleting never hash a key again, and
 * most mismatches are found without touching the key. */
#include "base/hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

#define HMAP_MAX_KEY 256
#define HMAP_MAX_VAL 65536
#define HMAP_MIN_SLOTS 16
#define HMAP_MAX_SLOTS ((size_t)1 << 31)
#define HMAP_TAG_BIT 0x80000000u
#define HMAP_KEY_OFF sizeof(uint32_t)

struct hmap {
	unsigned char *slot;
	size_t ksize, vsize, voff, stride;
	size_t cap, mask;	/* slots, a power of two; cap - 1 */
	size_t n, max;		/* entries; most allowed (bounded) */
	bool bounded;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static inline unsigned char *slot_at(const struct hmap *m, size_t i)
{
	return m->slot + i * m->stride;
}

static inline uint32_t tag_at(const struct hmap *m, size_t i)
{
	uint32_t t;

	memcpy(&t, slot_at(m, i), sizeof(t));
	return t;
}

static inline void tag_set(struct hmap *m, size_t i, uint32_t t)
{
	memcpy(slot_at(m, i), &t, sizeof(t));
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x ? x : 1;
}

uint64_t hmap_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL * (n + 1), x;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&x, b, 8);
		h = (h ^ x) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	x = 0;
	memcpy(&x, b, n);
	return mix64(h ^ x);
}

uint64_t hmap_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint32_t tag_of(const struct hmap *m, const void *key)
{
	return (uint32_t)hmap_hash(key, m->ksize) | HMAP_TAG_BIT;
}

/* Slots for n entries at a load of at most one half. */
static size_t slots_for(size_t n)
{
	size_t cap = HMAP_MIN_SLOTS;

	while (cap / 2 < n)
		cap *= 2;
	return cap;
}

static void table_alloc(struct hmap *m, size_t cap)
{
	m->slot = xcalloc(cap, m->stride);
	m->cap = cap;
	m->mask = cap - 1;
}

int hmap_create(struct hmap **out, size_t key_size, size_t val_size,
		size_t entries, bool bounded)
{
	struct hmap *m;

	if (!key_size || key_size > HMAP_MAX_KEY || val_size > HMAP_MAX_VAL ||
	    entries > HMAP_MAX_SLOTS / 2 || (bounded && !entries))
		return -EINVAL;
	m = xcalloc(1, sizeof(*m));
	m->ksize = key_size;
	m->vsize = val_size;
	m->voff = align8(HMAP_KEY_OFF + key_size);
	m->stride = align8(m->voff + val_size);
	m->bounded = bounded;
	m->max = bounded ? entries : HMAP_MAX_SLOTS / 2;
	table_alloc(m, slots_for(entries));
	*out = m;
	return 0;
}

void hmap_destroy(struct hmap *m)
{
	if (!m)
		return;
	free(m->slot);
	free(m);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t probe(const struct hmap *m, const void *key, uint32_t tag,
		    bool *found)
{
	size_t i = tag & m->mask;
	uint32_t t;

	while ((t = tag_at(m, i))) {
		if (t == tag && !memcmp(slot_at(m, i) + HMAP_KEY_OFF, key, m->ksize)) {
			*found = true;
			return i;
		}
		i = (i + 1) & m->mask;
	}
	*found = false;
	return i;
}

void *hmap_find(const struct hmap *m, const void *key)
{
	bool found;
	size_t i = probe(m, key, tag_of(m, key), &found);

	return found ? slot_at(m, i) + m->voff : NULL;
}

static void grow(struct hmap *m)
{
	unsigned char *old = m->slot;
	size_t oldcap = m->cap;

	table_alloc(m, 2 * oldcap);
	for (size_t j = 0; j < oldcap; j++) {
		const unsigned char *s = old + j * m->stride;
		uint32_t t;
		size_t i;

		memcpy(&t, s, sizeof(t));
		if (!t)
			continue;
		for (i = t & m->mask; tag_at(m, i); i = (i + 1) & m->mask)
			;
		memcpy(slot_at(m, i), s, m->stride);
	}
	free(old);
}

int hmap_add(struct hmap *m, const void *key, void **val)
{
	uint32_t tag = tag_of(m, key);
	bool found;
	size_t i = probe(m, key, tag, &found);
	unsigned char *s;

	if (!found) {
		if (m->n >= m->max)
			return -ENOSPC;
		if ((m->n + 1) * 2 > m->cap) {
			grow(m);
			i = probe(m, key, tag, &found);
		}
		s = slot_at(m, i);
		memset(s, 0, m->stride);
		memcpy(s, &tag, sizeof(tag));
		memcpy(s + HMAP_KEY_OFF, key, m->ksize);
		m->n++;
	}
	if (val)
		*val = slot_at(m, i) + m->voff;
	return !found;
}

/* Empty slot i and pull later entries of its cluster back over the hole,
 * each as far as its home slot allows. */
static void del_at(struct hmap *m, size_t i)
{
	size_t j = i;

	tag_set(m, i, 0);
	m->n--;
	for (;;) {
		uint32_t t;
		size_t home;

		j = (j + 1) & m->mask;
		if (!(t = tag_at(m, j)))
			return;
		home = t & m->mask;
		/* Move j into the hole i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			memcpy(slot_at(m, i), slot_at(m, j), m->stride);
			tag_set(m, j, 0);
			i = j;
		}
	}
}

bool hmap_del(struct hmap *m, const void *key)
{
	bool found;
	size_t i = probe(m, key, tag_of(m, key), &found);

	if (found)
		del_at(m, i);
	return found;
}

static size_t index_of(const struct hmap *m, const void *val)
{
	return (size_t)((const unsigned char *)val - m->voff - m->slot) / m->stride;
}

void hmap_del_val(struct hmap *m, void *val)
{
	del_at(m, index_of(m, val));
}

const void *hmap_key_of(const struct hmap *m, const void *val)
{
	return (const unsigned char *)val - m->voff + HMAP_KEY_OFF;
}

size_t hmap_count(const struct hmap *m)
{
	return m->n;
}

void hmap_clear(struct hmap *m)
{
	memset(m->slot, 0, m->cap * m->stride);
	m->n = 0;
}

/* The visit starts after an empty slot (there is always one): a delete
 * only pulls entries back from slots not visited yet, never across it. */
void hmap_iter_init(const struct hmap *m, struct hmap_iter *it)
{
	size_t e = 0;

	while (tag_at(m, e))
		e++;
	it->pos = e;
	it->left = m->n ? m->cap : 0;
}

void *hmap_iter_next(const struct hmap *m, struct hmap_iter *it)
{
	while (it->left) {
		it->pos = (it->pos + 1) & m->mask;
		it->left--;
		if (tag_at(m, it->pos))
			return slot_at(m, it->pos) + m->voff;
	}
	return NULL;
}

void hmap_iter_del(struct hmap *m, struct hmap_iter *it)
{
	del_at(m, it->pos);
	/* What moved into pos is not visited yet: look there again. */
	it->pos = (it->pos - 1) & m->mask;
	it->left++;
}
