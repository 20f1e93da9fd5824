/* shim_table.c — descriptor-indexed words; see shim.h. */
#include "shim/shim.h"

#include <stdlib.h>

struct shim_table shim_socks;
struct shim_table shim_eps;

_Atomic uintptr_t *shim_table_slot(struct shim_table *t, int fd, bool create)
{
	unsigned p;
	_Atomic uintptr_t *page, *fresh;

	if (fd < 0 || (unsigned)fd >> SHIM_TABLE_BITS >= SHIM_TABLE_PAGES)
		return NULL;
	p = (unsigned)fd >> SHIM_TABLE_BITS;
	page = atomic_load_explicit(&t->pages[p], memory_order_acquire);
	if (!page) {
		if (!create)
			return NULL;
		/* Pages are made when first needed and never freed; two
		 * threads racing keep the first one's. */
		fresh = calloc(1u << SHIM_TABLE_BITS, sizeof(*fresh));
		if (!fresh)
			return NULL;
		page = NULL;
		if (atomic_compare_exchange_strong(&t->pages[p], &page, fresh))
			page = fresh;
		else
			free(fresh);
	}
	return &page[fd & ((1 << SHIM_TABLE_BITS) - 1)];
}

void shim_table_each(struct shim_table *t,
		     void (*fn)(int fd, uintptr_t v, void *arg), void *arg)
{
	for (unsigned p = 0; p < SHIM_TABLE_PAGES; p++) {
		_Atomic uintptr_t *page = atomic_load(&t->pages[p]);

		if (!page)
			continue;
		for (unsigned i = 0; i < 1u << SHIM_TABLE_BITS; i++) {
			uintptr_t v = atomic_load(&page[i]);

			if (SHIM_FD_SOCK(v))
				fn((int)(p << SHIM_TABLE_BITS | i), v, arg);
		}
	}
}
