/* test_backoff.c — the pauses between attempts (export/backoff.h), from
 * seeded generators: each pause within [ceiling / 2, ceiling], the
 * ceiling doubling from min to max and staying there, the pauses spread
 * over that range (not one value), exporters seeded apart pausing apart,
 * the same seed giving the same pauses, a reset starting over. */
#include <stdint.h>

#include "export/backoff.h"
#include "unit.h"

#define MIN_NS 100000000LL	/* export.c's: 100 ms to 5 s */
#define MAX_NS 5000000000LL

/* The ceiling of pause k (0-based): min doubled k times, max at most. */
static int64_t ceiling(unsigned k)
{
	int64_t c = MIN_NS;

	while (k--)
		c = c * 2 > MAX_NS ? MAX_NS : c * 2;
	return c;
}

START_TEST(bounds_and_growth)
{
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct backoff b;

		backoff_init(&b, MIN_NS, MAX_NS, seed);
		for (unsigned k = 0; k < 40; k++) {
			int64_t p = backoff_next(&b), c = ceiling(k);

			ck_assert_int_ge(p, c / 2);
			ck_assert_int_le(p, c);
		}
	}
}
END_TEST

/* The means of the first pauses over many seeds grow as their ceilings
 * do (3/4 of each), and stop growing at the max. */
START_TEST(mean_grows)
{
	double mean[12] = { 0 };
	const unsigned seeds = 4000;

	for (uint64_t seed = 0; seed < seeds; seed++) {
		struct backoff b;

		backoff_init(&b, MIN_NS, MAX_NS, seed);
		for (unsigned k = 0; k < 12; k++)
			mean[k] += (double)backoff_next(&b) / seeds;
	}
	for (unsigned k = 0; k < 12; k++) {
		double want = 0.75 * (double)ceiling(k);

		/* The mean of 4000 uniform draws is within 2 % of its own. */
		ck_assert_msg(mean[k] > 0.98 * want && mean[k] < 1.02 * want,
			      "pause %u: mean %.0f ns, want about %.0f", k,
			      mean[k], want);
		if (k && ceiling(k) > ceiling(k - 1))
			ck_assert_double_gt(mean[k], mean[k - 1]);
	}
}
END_TEST

/* At one ceiling, the pauses cover its range: near both ends, and of
 * many values. */
START_TEST(jitter_spread)
{
	struct backoff b;
	int64_t lo = INT64_MAX, hi = 0, c = MAX_NS;
	unsigned below = 0, n = 10000;

	backoff_init(&b, MIN_NS, MAX_NS, 42);
	for (unsigned k = 0; k < 10; k++)
		(void)backoff_next(&b);		/* up to the max */
	for (unsigned i = 0; i < n; i++) {
		int64_t p = backoff_next(&b);

		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
		below += p < c / 2 + c / 4;
	}
	ck_assert_int_lt(lo, c / 2 + c / 50);
	ck_assert_int_gt(hi, c - c / 50);
	/* Half of them in the lower half of the range, within 3 %. */
	ck_assert_uint_gt(below, n / 2 - n * 3 / 100);
	ck_assert_uint_lt(below, n / 2 + n * 3 / 100);
}
END_TEST

/* Exporters started together (other seeds) do not pause together. */
START_TEST(seeds_apart)
{
	int64_t first[100];
	unsigned same = 0;

	for (unsigned s = 0; s < 100; s++) {
		struct backoff b;

		backoff_init(&b, MIN_NS, MAX_NS, 1000 + s);
		for (unsigned k = 0; k < 8; k++)
			first[s] = backoff_next(&b);	/* the 8th: 5 s ceiling */
	}
	for (unsigned i = 0; i < 100; i++)
		for (unsigned j = i + 1; j < 100; j++)
			same += first[i] == first[j];
	ck_assert_uint_eq(same, 0);
}
END_TEST

START_TEST(same_seed_same_pauses_and_reset)
{
	struct backoff a, b;
	int64_t p[10];

	backoff_init(&a, MIN_NS, MAX_NS, 7);
	backoff_init(&b, MIN_NS, MAX_NS, 7);
	for (unsigned k = 0; k < 10; k++) {
		p[k] = backoff_next(&a);
		ck_assert_int_eq(p[k], backoff_next(&b));
	}
	backoff_reset(&a);
	/* Back to the first ceiling. */
	int64_t r = backoff_next(&a);
	ck_assert_int_ge(r, MIN_NS / 2);
	ck_assert_int_le(r, MIN_NS);
}
END_TEST

static Suite *backoff_suite(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bounds_and_growth);
	tcase_add_test(tc, mean_grows);
	tcase_add_test(tc, jitter_spread);
	tcase_add_test(tc, seeds_apart);
	tcase_add_test(tc, same_seed_same_pauses_and_reset);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backoff_suite)
