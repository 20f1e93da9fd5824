/* test_verdict.c — limits by name, levels, and how a check adds up; and
 * the least-squares line the checks fit. */
#include <errno.h>
#include <math.h>

#include "unit.h"

#include "base/linfit.h"
#include "base/print.h"
#include "validate/verdict.h"

START_TEST(levels_decide)
{
	struct verdict_limits l;
	struct verdict_check c;

	verdict_limits_init(&l);
	verdict_check_init(&c, "reference", "host.pcapng");
	ck_assert_int_eq(c.v, VERDICT_SKIP);
	/* ref.mean_abs_ns: warn above 100, fail above 1000. */
	ck_assert_int_eq(verdict_apply(&c, &l, "ref.mean_abs_ns", "m", 100),
			 VERDICT_PASS);
	ck_assert_int_eq(c.v, VERDICT_PASS);
	ck_assert_int_eq(verdict_apply(&c, &l, "ref.mean_abs_ns", "m", 100.5),
			 VERDICT_WARN);
	ck_assert_int_eq(verdict_apply(&c, &l, "ref.mean_abs_ns", "m", 1000),
			 VERDICT_WARN);
	ck_assert_int_eq(c.v, VERDICT_WARN);
	ck_assert_int_eq(verdict_apply(&c, &l, "ref.mean_abs_ns", "m", 1001),
			 VERDICT_FAIL);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	/* A pass after a fail does not lift it. */
	verdict_note(&c, VERDICT_PASS, "fine");
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	ck_assert_uint_eq(c.n, 5);
	ck_assert_str_eq(c.item[0].limit, "ref.mean_abs_ns");
	ck_assert_ptr_nonnull(strstr(c.item[1].text, "warn above 100"));
	/* Not measured is a fail. */
	verdict_check_init(&c, "x", NULL);
	ck_assert_int_eq(verdict_apply(&c, &l, "ref.sd_ns", "sd", NAN),
			 VERDICT_FAIL);
	ck_assert_ptr_nonnull(strstr(c.item[0].text, "not measured"));
	/* Zero levels: anything above zero fails. */
	verdict_check_init(&c, "x", NULL);
	ck_assert_int_eq(verdict_apply(&c, &l, "phc.backwards", "b", 0),
			 VERDICT_PASS);
	ck_assert_int_eq(verdict_apply(&c, &l, "phc.backwards", "b", 1),
			 VERDICT_FAIL);
}
END_TEST

START_TEST(limits_set_by_name)
{
	struct verdict_limits l;
	const struct verdict_limit *m;
	char err[VERDICT_ERRBUF];

	verdict_limits_init(&l);
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=20,40", err), 0);
	m = verdict_limit_get(&l, "ref.sd_ns");
	ck_assert_double_eq(m->warn, 20);
	ck_assert_double_eq(m->fail, 40);
	/* Warn alone keeps the fail level. */
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=30", err), 0);
	ck_assert_double_eq(m->warn, 30);
	ck_assert_double_eq(m->fail, 40);
	/* ... or raises it to the warn level. */
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=50", err), 0);
	ck_assert_double_eq(m->fail, 50);
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=10,never", err), 0);
	ck_assert(isinf(m->fail));

	ck_assert_int_eq(verdict_limits_set(&l, "ref.nope=1", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ref.nope"));
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns", err), -EINVAL);
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=abc", err), -EINVAL);
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=-1", err), -EINVAL);
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=5,3", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "warn level above"));
	ck_assert_int_eq(verdict_limits_set(&l, "ref.sd_ns=5,", err), -EINVAL);
	/* Failed sets leave the limit as it was. */
	ck_assert_double_eq(m->warn, 10);
}
END_TEST

START_TEST(skip_and_json)
{
	struct verdict_check c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct printer *p = print_create(f, PRINT_JSON, 0);

	verdict_check_init(&c, "phc", NULL);
	verdict_note(&c, VERDICT_WARN, "soon skipped");
	verdict_skip(&c, "no PHC on %s", "this host");
	ck_assert_int_eq(c.v, VERDICT_SKIP);
	ck_assert_uint_eq(c.n, 0);
	print_array_begin(p, "checks");
	verdict_print(p, &c);
	print_array_end(p);
	ck_assert_int_eq(print_destroy(p), 0);
	fclose(f);
	ck_assert_str_eq(buf, "{\"checks\":[{\"check\":\"phc\",\"subject\":null,"
			 "\"verdict\":\"skip\",\"why\":\"no PHC on this host\","
			 "\"items\":[]}]}\n");
	free(buf);
}
END_TEST

START_TEST(items_beyond_room_are_counted)
{
	struct verdict_check c;

	verdict_check_init(&c, "x", NULL);
	for (int i = 0; i < VERDICT_MAX_ITEMS + 3; i++)
		verdict_note(&c, i == VERDICT_MAX_ITEMS + 2 ? VERDICT_FAIL :
			     VERDICT_PASS, "item %d", i);
	ck_assert_uint_eq(c.n, VERDICT_MAX_ITEMS);
	ck_assert_uint_eq(c.dropped, 3);
	/* A dropped item still counts. */
	ck_assert_int_eq(c.v, VERDICT_FAIL);
}
END_TEST

START_TEST(line_through_points)
{
	struct linfit f;
	struct linfit_result r;
	/* x in ns since 1970: the fit must not lose the slope to rounding. */
	double x0 = 1.7e18;

	linfit_init(&f);
	for (int i = 0; i < 1000; i++) {
		double x = x0 + i * 1e6;	/* 1 ms apart */

		/* 62 ns + 250 ppb, with ±3 ns alternating. */
		linfit_add(&f, x, 62 + 250e-9 * (i * 1e6) + (i % 2 ? 3 : -3));
	}
	linfit_result(&f, &r);
	ck_assert_uint_eq(r.n, 1000);
	ck_assert_double_eq(r.x0, x0);
	ck_assert_double_eq_tol(r.b * 1e9, 250, 0.05);
	ck_assert_double_eq_tol(r.a, 62, 0.5);
	ck_assert_double_eq_tol(r.resid_sd, 3, 0.01);

	linfit_init(&f);
	linfit_add(&f, 5, 7);
	linfit_result(&f, &r);
	ck_assert_double_eq(r.b, 0);
	ck_assert_double_eq(r.a, 7);
	ck_assert_double_eq(r.resid_sd, 0);
}
END_TEST

static Suite *verdict_suite(void)
{
	Suite *s = suite_create("verdict");
	TCase *tc = tcase_create("verdict");

	tcase_add_test(tc, levels_decide);
	tcase_add_test(tc, limits_set_by_name);
	tcase_add_test(tc, skip_and_json);
	tcase_add_test(tc, items_beyond_room_are_counted);
	tcase_add_test(tc, line_through_points);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(verdict_suite)
