/* test_hmap.c — the map agrees with a plain array under random adds, finds
 * and deletes (uint64 keys, growing; MAC keys, bounded); the iterator visits
 * each entry once, also when it deletes as it goes; the hashes are what
 * they promise. */
#include <errno.h>
#include <stdint.h>

#include "base/hmap.h"
#include "unit.h"

static uint32_t rnd_state = 777;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

struct frame {
	int64_t in_ns, out_ns;
	uint32_t len;
};

START_TEST(test_create_args)
{
	struct hmap *m = NULL;

	ck_assert_int_eq(hmap_create(&m, 0, 8, 0, false), -EINVAL);
	ck_assert_int_eq(hmap_create(&m, 257, 8, 0, false), -EINVAL);
	ck_assert_int_eq(hmap_create(&m, 8, 65537, 0, false), -EINVAL);
	ck_assert_int_eq(hmap_create(&m, 8, 8, 0, true), -EINVAL);
	ck_assert_int_eq(hmap_create(&m, 8, 0, 0, false), 0);	/* a set */
	ck_assert_uint_eq(hmap_count(m), 0);
	ck_assert_ptr_null(hmap_find(m, &(uint64_t){ 1 }));
	ck_assert(!hmap_del(m, &(uint64_t){ 1 }));
	ck_assert_int_eq(hmap_add(m, &(uint64_t){ 1 }, NULL), 1);
	ck_assert_int_eq(hmap_add(m, &(uint64_t){ 1 }, NULL), 0);
	ck_assert_ptr_nonnull(hmap_find(m, &(uint64_t){ 1 }));
	hmap_destroy(m);
	hmap_destroy(NULL);
}
END_TEST

/* Packet ids in flight, as report's: ids added and deleted at random over
 * a range small enough for repeats, the map growing from nothing. */
START_TEST(test_u64_against_array)
{
	enum { RANGE = 3000 };
	static bool in[RANGE];
	static uint32_t len[RANGE];
	struct hmap *m;
	size_t n = 0;

	ck_assert_int_eq(hmap_create(&m, sizeof(uint64_t), sizeof(struct frame),
				     0, false), 0);
	for (int round = 0; round < 200000; round++) {
		uint64_t id = rnd() % RANGE;
		uint64_t key = id * 0x100000001ULL;	/* high bits too */
		struct frame *f;
		int rc;

		switch (rnd() % 4) {
		case 0:
		case 1:
			rc = hmap_add(m, &key, (void **)&f);
			ck_assert_int_eq(rc, !in[id]);
			if (rc == 1) {
				ck_assert_int_eq(f->in_ns, 0);	/* zeroed */
				f->len = len[id] = rnd();
				in[id] = true;
				n++;
			} else {
				ck_assert_uint_eq(f->len, len[id]);
			}
			ck_assert_mem_eq(hmap_key_of(m, f), &key, sizeof(key));
			break;
		case 2:
			f = hmap_find(m, &key);
			ck_assert(!f == !in[id]);
			if (f)
				ck_assert_uint_eq(f->len, len[id]);
			break;
		default:
			if (rnd() % 2) {
				ck_assert(hmap_del(m, &key) == in[id]);
			} else if ((f = hmap_find(m, &key))) {
				hmap_del_val(m, f);
			}
			n -= in[id];
			in[id] = false;
			break;
		}
		ck_assert_uint_eq(hmap_count(m), n);
	}
	/* Everything that should be there still is, with its value. */
	for (uint64_t id = 0; id < RANGE; id++) {
		uint64_t key = id * 0x100000001ULL;
		struct frame *f = hmap_find(m, &key);

		ck_assert(!f == !in[id]);
		if (f)
			ck_assert_uint_eq(f->len, len[id]);
	}
	hmap_clear(m);
	ck_assert_uint_eq(hmap_count(m), 0);
	ck_assert_ptr_null(hmap_find(m, &(uint64_t){ 0 }));
	hmap_destroy(m);
}
END_TEST

/* A MAC table, as swemu's: 6-byte keys, bounded. */
struct mac_entry {
	uint8_t port;
	int64_t seen;
};

static void mac_of(unsigned i, uint8_t a[6])
{
	a[0] = 0x02;
	a[1] = 0;
	a[2] = (uint8_t)(i >> 24);
	a[3] = (uint8_t)(i >> 16);
	a[4] = (uint8_t)(i >> 8);
	a[5] = (uint8_t)i;
}

START_TEST(test_bounded_mac)
{
	struct hmap *m;
	struct mac_entry *e;
	uint8_t a[6];

	ck_assert_int_eq(hmap_create(&m, 6, sizeof(struct mac_entry), 100, true), 0);
	for (unsigned i = 0; i < 100; i++) {
		mac_of(i, a);
		ck_assert_int_eq(hmap_add(m, a, (void **)&e), 1);
		e->port = (uint8_t)(i % 7);
		e->seen = i;
	}
	mac_of(100, a);
	e = NULL;
	ck_assert_int_eq(hmap_add(m, a, (void **)&e), -ENOSPC);
	ck_assert_ptr_null(e);
	ck_assert_uint_eq(hmap_count(m), 100);
	/* Known ones still found when full. */
	mac_of(42, a);
	ck_assert_int_eq(hmap_add(m, a, (void **)&e), 0);
	ck_assert_uint_eq(e->port, 42 % 7);
	/* Make room: then it fits. */
	ck_assert(hmap_del(m, a));
	mac_of(100, a);
	ck_assert_int_eq(hmap_add(m, a, NULL), 1);
	for (unsigned i = 0; i <= 100; i++) {
		mac_of(i, a);
		ck_assert(!hmap_find(m, a) == (i == 42));
	}
	hmap_destroy(m);
}
END_TEST

/* Each entry once; deleting the visited entry (half of them) neither skips
 * nor repeats any, at several fill levels (clusters wrap the table end). */
START_TEST(test_iter_delete)
{
	/* 8 and 512 fill their tables to the most: one half. */
	static const unsigned fills[] = { 1, 4, 8, 13, 40, 121, 364, 512 };
	static unsigned visits[512];

	for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++) {
		unsigned fill = fills[f];
		struct hmap *m;
		struct hmap_iter it;
		unsigned *v, n = 0;

		ck_assert_int_eq(hmap_create(&m, sizeof(uint32_t), sizeof(unsigned),
					     fill, true), 0);
		for (unsigned i = 0; i < fill; i++) {
			uint32_t k = i * 2654435761u;

			ck_assert_int_eq(hmap_add(m, &k, (void **)&v), 1);
			*v = i;
			visits[i] = 0;
		}
		for (hmap_iter_init(m, &it); (v = hmap_iter_next(m, &it)); ) {
			visits[*v]++;
			n++;
			if (*v % 2)
				hmap_iter_del(m, &it);
		}
		ck_assert_uint_eq(n, fill);
		for (unsigned i = 0; i < fill; i++)
			ck_assert_uint_eq(visits[i], 1);
		ck_assert_uint_eq(hmap_count(m), (fill + 1) / 2);
		for (unsigned i = 0; i < fill; i++) {
			uint32_t k = i * 2654435761u;

			ck_assert(!hmap_find(m, &k) == (i % 2 == 1));
		}
		hmap_destroy(m);
	}
}
END_TEST

START_TEST(test_hashes)
{
	/* FNV-1a 64 test vectors (Fowler, Noll, Vo). */
	ck_assert_uint_eq(hmap_fnv1a(HMAP_FNV1A_INIT, "", 0), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(hmap_fnv1a(HMAP_FNV1A_INIT, "a", 1), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(hmap_fnv1a(HMAP_FNV1A_INIT, "foobar", 6),
			  0x85944171f73967e8ULL);
	/* Chained equals whole. */
	ck_assert_uint_eq(hmap_fnv1a(hmap_fnv1a(HMAP_FNV1A_INIT, "foo", 3), "bar", 3),
			  0x85944171f73967e8ULL);
	/* Never 0; length matters; deterministic. */
	ck_assert_uint_ne(hmap_hash("", 0), 0);
	ck_assert_uint_ne(hmap_hash("\0", 1), hmap_hash("\0\0", 2));
	ck_assert_uint_eq(hmap_hash("0123456789", 10), hmap_hash("0123456789", 10));
	ck_assert_uint_ne(hmap_hash("0123456789", 10), hmap_hash("0123456788", 10));
}
END_TEST

static Suite *hmap_suite(void)
{
	Suite *s = suite_create("hmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_create_args);
	tcase_add_test(tc, test_u64_against_array);
	tcase_add_test(tc, test_bounded_mac);
	tcase_add_test(tc, test_iter_delete);
	tcase_add_test(tc, test_hashes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hmap_suite)
