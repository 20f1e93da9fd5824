/* hmap.h — one hash map: fixed-size byte-string keys to fixed-size values.
 *
 * Keys are compared as bytes, key_size of them: a uint64_t, a MAC address,
 * a flow tuple the caller zero-pads. Values are the caller's struct, stored
 * in the table (8-byte aligned) and handed out by pointer.
 *
 * Open addressing, linear probing, deletion by backward shift (no
 * tombstones: a long run of adds and deletes does not fill the table).
 * The load stays at or below one half.
 *
 * Memory: either bounded — room for `entries` taken at create, never more,
 * an add beyond it refused with -ENOSPC — or growing: the table doubles
 * when half full (amortised, through the one allocation wrapper). No
 * allocation per add otherwise, none per find or delete ever.
 *
 * Pointers to values stay valid until the next add or delete (either may
 * move entries).
 */
#ifndef TAPLESS_BASE_HMAP_H
#define TAPLESS_BASE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap;

/* A map of key_size-byte keys (1..256) to val_size-byte values (0..65536),
 * with room for `entries` (0: a small start). bounded: never more than
 * `entries` (at least 1). Returns 0, or -EINVAL for bad sizes. */
int hmap_create(struct hmap **out, size_t key_size, size_t val_size,
		size_t entries, bool bounded);
void hmap_destroy(struct hmap *m);

/* The value stored under key, or NULL. */
void *hmap_find(const struct hmap *m, const void *key);

/* Find key, adding it when missing. *val (when val is not NULL) gets the
 * value: a new one is zeroed. Returns 1 added, 0 already there, -ENOSPC
 * when a bounded map is full (nothing changed, *val untouched). */
int hmap_add(struct hmap *m, const void *key, void **val);

/* Remove key: true, or false when it was not there. */
bool hmap_del(struct hmap *m, const void *key);

/* Remove the entry whose value val points to (from find, add or the
 * iterator). */
void hmap_del_val(struct hmap *m, void *val);

/* The key of the entry whose value val points to. */
const void *hmap_key_of(const struct hmap *m, const void *val);

size_t hmap_count(const struct hmap *m);

/* Remove every entry; the memory stays. */
void hmap_clear(struct hmap *m);

/* Visiting every entry, in no particular order:
 *
 *	struct hmap_iter it;
 *	for (hmap_iter_init(m, &it); (v = hmap_iter_next(m, &it)); )
 *		if (old(v))
 *			hmap_iter_del(m, &it);
 *
 * Each entry is visited exactly once, also when the visit deletes the
 * entry it was given with hmap_iter_del(). Any other add or delete during
 * the visit leaves the iterator undefined. The fields are private. */
struct hmap_iter {
	size_t pos, left;
};

void hmap_iter_init(const struct hmap *m, struct hmap_iter *it);
void *hmap_iter_next(const struct hmap *m, struct hmap_iter *it);
void hmap_iter_del(struct hmap *m, struct hmap_iter *it);

/* The map's hash of n bytes: well mixed in every bit, never 0; for callers
 * that key their own tables. Deterministic (no seed): runs repeat. */
uint64_t hmap_hash(const void *p, size_t n);

/* 64-bit FNV-1a, chained: h = hmap_fnv1a(HMAP_FNV1A_INIT, p, n), then
 * h = hmap_fnv1a(h, q, k) to add more bytes. For keys built up from
 * several fields whose exact value must not change between versions. */
#define HMAP_FNV1A_INIT 0xcbf29ce484222325ULL
uint64_t hmap_fnv1a(uint64_t h, const void *p, size_t n);

#endif
