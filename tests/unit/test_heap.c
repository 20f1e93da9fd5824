/* test_heap.c — the heap gives back what it was given, least first, for
 * keyed elements and for index elements whose keys live elsewhere; it grows
 * past its first capacity; fix_top moves a changed top to its place. */
#include <errno.h>
#include <stdint.h>

#include "base/heap.h"
#include "unit.h"

static uint32_t rnd_state = 4242;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Like reorder's: a stamp, ties kept in arrival order by seq. */
struct key {
	int64_t ts;
	uint64_t seq;
};

static bool key_less(const void *a, const void *b, void *ctx)
{
	const struct key *x = a, *y = b;

	(void)ctx;
	return x->ts != y->ts ? x->ts < y->ts : x->seq < y->seq;
}

START_TEST(test_create_args)
{
	struct heap *h = NULL;

	ck_assert_int_eq(heap_create(&h, 0, 4, key_less, NULL), -EINVAL);
	ck_assert_int_eq(heap_create(&h, 257, 4, key_less, NULL), -EINVAL);
	ck_assert_int_eq(heap_create(&h, 8, 4, NULL, NULL), -EINVAL);
	ck_assert_int_eq(heap_create(&h, sizeof(struct key), 0, key_less, NULL), 0);
	ck_assert_uint_eq(heap_count(h), 0);
	ck_assert_ptr_null(heap_top(h));
	ck_assert(!heap_pop(h, NULL));
	heap_fix_top(h);	/* empty: nothing to do */
	heap_destroy(h);
	heap_destroy(NULL);
}
END_TEST

/* Random keys with many ties, pushed and popped interleaved, past the
 * first capacity: every pop is the least of what is in, ties by seq. */
START_TEST(test_keyed_order)
{
	struct heap *h;
	struct key k, last = { INT64_MIN, 0 };
	uint64_t seq = 0, popped = 0;

	ck_assert_int_eq(heap_create(&h, sizeof(struct key), 4, key_less, NULL), 0);
	for (int round = 0; round < 20000; round++) {
		if (rnd() % 3) {
			/* Never below what was popped: a stream, as reorder's. */
			k.ts = (last.ts == INT64_MIN ? 0 : last.ts) + rnd() % 50;
			k.seq = seq++;
			heap_push(h, &k);
		} else if (heap_pop(h, &k)) {
			ck_assert(!key_less(&k, &last, NULL));
			last = k;
			popped++;
		}
	}
	while (heap_pop(h, &k)) {
		ck_assert(!key_less(&k, &last, NULL));
		last = k;
		popped++;
	}
	ck_assert_uint_eq(popped, seq);
	ck_assert_uint_eq(heap_count(h), 0);
	heap_destroy(h);
}
END_TEST

/* A sort: everything in, everything out, equals qsort's order. */
static int key_cmp(const void *a, const void *b)
{
	return key_less(a, b, NULL) ? -1 : key_less(b, a, NULL) ? 1 : 0;
}

START_TEST(test_heapsort)
{
	enum { N = 5000 };
	static struct key in[N], out[N];
	struct heap *h;

	ck_assert_int_eq(heap_create(&h, sizeof(struct key), N, key_less, NULL), 0);
	for (int i = 0; i < N; i++) {
		in[i] = (struct key){ (int64_t)(rnd() % 100) - 50, (uint64_t)i };
		heap_push(h, &in[i]);
	}
	ck_assert_uint_eq(heap_count(h), N);
	qsort(in, N, sizeof(in[0]), key_cmp);
	for (int i = 0; i < N; i++) {
		const struct key *t = heap_top(h);

		ck_assert_int_eq(t->ts, in[i].ts);
		ck_assert(heap_pop(h, &out[i]));
		ck_assert_int_eq(out[i].ts, in[i].ts);
		ck_assert_uint_eq(out[i].seq, in[i].seq);
	}
	heap_destroy(h);
}
END_TEST

/* Like capset's: the heap holds source indexes; the key is each source's
 * next value, which changes under the top (fix_top) or runs out (pop). */
struct sources {
	int64_t next[8];
	int left[8];
};

static bool src_less(const void *a, const void *b, void *ctx)
{
	const struct sources *s = ctx;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return s->next[x] < s->next[y] || (s->next[x] == s->next[y] && x < y);
}

START_TEST(test_index_fix_top)
{
	struct sources s;
	struct heap *h;
	int64_t last = INT64_MIN;
	unsigned last_src = 0, total = 0, seen = 0;

	ck_assert_int_eq(heap_create(&h, sizeof(unsigned), 8, src_less, &s), 0);
	for (unsigned i = 0; i < 8; i++) {
		s.next[i] = rnd() % 10;
		s.left[i] = 100 + (int)(rnd() % 100);
		total += (unsigned)s.left[i];
		heap_push(h, &i);
	}
	while (heap_count(h)) {
		unsigned *top = heap_top_mut(h);
		unsigned i = *top;

		ck_assert(s.next[i] > last || (s.next[i] == last && i >= last_src));
		last = s.next[i];
		last_src = i;
		seen++;
		if (--s.left[i]) {
			s.next[i] += rnd() % 7;	/* ties with others */
			heap_fix_top(h);
		} else {
			ck_assert(heap_pop(h, NULL));
		}
	}
	ck_assert_uint_eq(seen, total);
	heap_destroy(h);
}
END_TEST

START_TEST(test_clear)
{
	struct heap *h;

	ck_assert_int_eq(heap_create(&h, sizeof(struct key), 2, key_less, NULL), 0);
	for (int i = 0; i < 10; i++)
		heap_push(h, &(struct key){ 10 - i, 0 });
	heap_clear(h);
	ck_assert_uint_eq(heap_count(h), 0);
	heap_push(h, &(struct key){ 7, 1 });
	ck_assert_int_eq(((const struct key *)heap_top(h))->ts, 7);
	heap_destroy(h);
}
END_TEST

static Suite *heap_suite(void)
{
	Suite *s = suite_create("heap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_create_args);
	tcase_add_test(tc, test_keyed_order);
	tcase_add_test(tc, test_heapsort);
	tcase_add_test(tc, test_index_fix_top);
	tcase_add_test(tc, test_clear);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(heap_suite)
