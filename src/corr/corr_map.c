/* corr_map.c — the correlator's hashing and its small hash map (see
 * corr_private.h): flows, streams, symbols and results are all found
 * through these.
 */
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "corr/corr_private.h"

uint64_t corr_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x ? x : 1;
}

uint64_t corr_hash_bytes(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	uint64_t x;

	/* Eight bytes at a time, each word mixed in: keys are short
	 * (addresses, FIX values) and hashed per message. */
	h ^= 0x9e3779b97f4a7c15ULL * (n + 1);
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&x, b, 8);
		h = (h ^ x) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	x = 0;
	memcpy(&x, b, n);
	return corr_mix(h ^ x);
}

void corr_map_init(struct corr_map *m, size_t cap)
{
	m->cap = cap;
	m->n = 0;
	m->hash = xcalloc(cap, sizeof(*m->hash));
	m->val = xcalloc(cap, sizeof(*m->val));
}

void corr_map_free(struct corr_map *m)
{
	free(m->hash);
	free(m->val);
}

/* Visit the values stored under hash h: call with *i = (size_t)-1 first. */
void *corr_map_next(const struct corr_map *m, uint64_t h, size_t *i)
{
	size_t k = *i == (size_t)-1 ? h & (m->cap - 1) : (*i + 1) & (m->cap - 1);

	for (; m->hash[k]; k = (k + 1) & (m->cap - 1)) {
		if (m->hash[k] == h) {
			*i = k;
			return m->val[k];
		}
	}
	return NULL;
}

void corr_map_put(struct corr_map *m, uint64_t h, void *v)
{
	size_t k;

	if ((m->n + 1) * 2 > m->cap) {
		struct corr_map g;

		corr_map_init(&g, m->cap * 2);
		for (size_t i = 0; i < m->cap; i++)
			if (m->hash[i])
				corr_map_put(&g, m->hash[i], m->val[i]);
		corr_map_free(m);
		*m = g;
	}
	for (k = h & (m->cap - 1); m->hash[k]; k = (k + 1) & (m->cap - 1))
		;
	m->hash[k] = h;
	m->val[k] = v;
	m->n++;
}
