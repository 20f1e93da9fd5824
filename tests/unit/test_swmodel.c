/* test_swmodel.c — the switch models: the FTTC presets and lookup, names
 * both ways, store-and-forward adding exactly topo_serialisation_ns(), the
 * jitter distributions' mean and SD from a fixed seed, the clamp at 0, the
 * same seed giving the same draws, and bad configurations refused. */
#include <errno.h>
#include <math.h>

#include "sim/swmodel.h"
#include "files/topo.h"
#include "unit.h"

START_TEST(presets)
{
	const struct swmodel_preset *p = swmodel_preset_find("arista-7124sx");

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->mode, SWMODEL_CUT_THROUGH);
	ck_assert(p->latency_ns == 576.9 && p->jitter_ns == 8.9);
	p = swmodel_preset_find("mellanox-sx1036");
	ck_assert_ptr_nonnull(p);
	ck_assert(p->mode == SWMODEL_CUT_THROUGH && p->latency_ns == 394 && p->jitter_ns == 9);
	p = swmodel_preset_find("gnodal-gs7200");
	ck_assert_ptr_eq(p, &swmodel_presets[SWMODEL_GNODAL_GS7200]);
	ck_assert(p->mode == SWMODEL_STORE_FORWARD && p->latency_ns == 487.5 && p->jitter_ns == 15);
	ck_assert_ptr_null(swmodel_preset_find("arista"));	/* exact names */
	ck_assert_ptr_null(swmodel_preset_find(""));
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(swmodel_mode_name(SWMODEL_STORE_FORWARD), "store-and-forward");
	ck_assert_int_eq(swmodel_mode_parse("cut-through"), SWMODEL_CUT_THROUGH);
	ck_assert_int_eq(swmodel_mode_parse("store-and-forward"), SWMODEL_STORE_FORWARD);
	ck_assert_int_eq(swmodel_mode_parse("cut"), -EINVAL);
	ck_assert_int_eq(swmodel_dist_parse("exponential"), SWMODEL_EXPONENTIAL);
	ck_assert_int_eq(swmodel_dist_parse("uniform"), SWMODEL_UNIFORM);
	ck_assert_int_eq(swmodel_dist_parse("cauchy"), -EINVAL);
	ck_assert_str_eq(swmodel_dist_name(SWMODEL_NORMAL), "normal");
}
END_TEST

/* Store-and-forward adds (len + 4) * 8 / speed, topo's formula exactly;
 * cut-through ignores the length. */
START_TEST(serialisation)
{
	struct swmodel_config c = { .mode = SWMODEL_STORE_FORWARD, .latency_ns = 1000,
				    .speed_bps = 1e8, .seed = 1 };
	struct swmodel *m;

	ck_assert_int_eq(swmodel_create(&m, &c), 0);
	ck_assert(swmodel_base_ns(m, 1400) == 1000 + topo_serialisation_ns(1400, 1e8));
	ck_assert_int_eq(swmodel_delay(m, 1400), 1000 + 112320);	/* 1404 B at 100M */
	ck_assert_int_eq(swmodel_delay(m, 60), 1000 + 5120);
	swmodel_destroy(m);

	swmodel_config_preset(&c, swmodel_preset_find("gnodal-gs7200"), 1);
	c.jitter_ns = 0;
	ck_assert(c.speed_bps == 10e9);
	ck_assert_int_eq(swmodel_create(&m, &c), 0);
	ck_assert_int_eq(swmodel_delay(m, 96), 488 + 80);	/* 487.5 rounds up */
	swmodel_destroy(m);

	c = (struct swmodel_config){ .mode = SWMODEL_CUT_THROUGH, .latency_ns = 700 };
	ck_assert_int_eq(swmodel_create(&m, &c), 0);
	ck_assert_int_eq(swmodel_delay(m, 60), 700);
	ck_assert_int_eq(swmodel_delay(m, 9000), 700);
	swmodel_destroy(m);
}
END_TEST

static void moments(enum swmodel_dist dist, double lat, double sd, int n,
		    double *mean, double *sdev, int64_t *min)
{
	struct swmodel_config c = { .mode = SWMODEL_CUT_THROUGH, .latency_ns = lat,
				    .jitter_ns = sd, .dist = dist, .seed = 42 };
	struct swmodel *m;
	double s = 0, s2 = 0;

	ck_assert_int_eq(swmodel_create(&m, &c), 0);
	*min = INT64_MAX;
	for (int i = 0; i < n; i++) {
		int64_t v = swmodel_delay(m, 100);

		s += (double)v;
		s2 += (double)v * (double)v;
		if (v < *min)
			*min = v;
	}
	*mean = s / n;
	*sdev = sqrt((s2 - s * s / n) / (n - 1));
	swmodel_destroy(m);
}

/* Every distribution: mean latency, SD jitter, within 2 % at n = 200000
 * (the standard error of the mean is 0.2 % of SD there). */
START_TEST(jitter_draws)
{
	static const enum swmodel_dist d[] = { SWMODEL_NORMAL, SWMODEL_EXPONENTIAL,
					       SWMODEL_UNIFORM };
	double mean, sd;
	int64_t min;

	for (int i = 0; i < 3; i++) {
		moments(d[i], 10000, 1000, 200000, &mean, &sd, &min);
		ck_assert_msg(fabs(mean - 10000) < 20, "%s: mean %.1f",
			      swmodel_dist_name(d[i]), mean);
		ck_assert_msg(fabs(sd - 1000) < 20, "%s: SD %.1f",
			      swmodel_dist_name(d[i]), sd);
	}
	/* The shapes differ: uniform stays within sqrt(3) SD, exponential
	 * never goes below latency - SD. */
	moments(SWMODEL_UNIFORM, 10000, 1000, 100000, &mean, &sd, &min);
	ck_assert_int_ge(min, 10000 - 1733);
	moments(SWMODEL_EXPONENTIAL, 10000, 1000, 100000, &mean, &sd, &min);
	ck_assert_int_ge(min, 9000);
	ck_assert_int_lt(min, 9010);
	/* The arista preset's figures come back. */
	moments(SWMODEL_NORMAL, 576.9, 8.9, 100000, &mean, &sd, &min);
	ck_assert_msg(fabs(mean - 576.9) < 0.2 && fabs(sd - 8.9) < 0.3,
		      "arista: %.2f SD %.2f", mean, sd);
}
END_TEST

/* Jitter larger than the latency: totals clamp at 0, never below. */
START_TEST(never_negative)
{
	static const enum swmodel_dist d[] = { SWMODEL_NORMAL, SWMODEL_EXPONENTIAL,
					       SWMODEL_UNIFORM };
	double mean, sd;
	int64_t min;

	for (int i = 0; i < 3; i++) {
		moments(d[i], 100, 5000, 50000, &mean, &sd, &min);
		ck_assert_int_eq(min, 0);
	}
}
END_TEST

START_TEST(same_seed)
{
	struct swmodel_config c = { .latency_ns = 1000, .jitter_ns = 100, .seed = 7 };
	struct swmodel *a, *b, *x;
	int differ = 0;

	ck_assert_int_eq(swmodel_create(&a, &c), 0);
	ck_assert_int_eq(swmodel_create(&b, &c), 0);
	c.seed = 8;
	ck_assert_int_eq(swmodel_create(&x, &c), 0);
	for (int i = 0; i < 1000; i++) {
		int64_t va = swmodel_delay(a, 64);

		ck_assert_int_eq(va, swmodel_delay(b, 64));
		differ += va != swmodel_delay(x, 64);
	}
	ck_assert_int_gt(differ, 900);
	swmodel_destroy(a);
	swmodel_destroy(b);
	swmodel_destroy(x);
}
END_TEST

START_TEST(bad_config)
{
	struct swmodel_config c = { .latency_ns = -1 };
	struct swmodel *m = NULL;

	ck_assert_int_eq(swmodel_create(&m, &c), -EINVAL);
	c = (struct swmodel_config){ .jitter_ns = NAN };
	ck_assert_int_eq(swmodel_create(&m, &c), -EINVAL);
	c = (struct swmodel_config){ .mode = SWMODEL_STORE_FORWARD, .speed_bps = 0 };
	ck_assert_int_eq(swmodel_create(&m, &c), -EINVAL);
	c = (struct swmodel_config){ .dist = (enum swmodel_dist)9 };
	ck_assert_int_eq(swmodel_create(&m, &c), -EINVAL);
	ck_assert_ptr_null(m);
}
END_TEST

static Suite *swmodel_suite(void)
{
	Suite *s = suite_create("swmodel");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, presets);
	tcase_add_test(tc, names);
	tcase_add_test(tc, serialisation);
	tcase_add_test(tc, jitter_draws);
	tcase_add_test(tc, never_negative);
	tcase_add_test(tc, same_seed);
	tcase_add_test(tc, bad_config);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(swmodel_suite)
