/* test_ratelist.c — rate lists as the commands take them: plain numbers,
 * k and M, spaces; wrong items refused by name; the FTTC list; labels as
 * the FTTC tables write them. */
#include <errno.h>

#include "base/ratelist.h"
#include "unit.h"

START_TEST(test_good)
{
	struct ratelist rl;
	char err[RATELIST_ERRBUF];

	ck_assert_int_eq(ratelist_parse(&rl, "500,1000,5k,20k,100k", 0, 0, err), 0);
	ck_assert_uint_eq(rl.n, 5);
	ck_assert(rl.rate[0] == 500 && rl.rate[1] == 1000 && rl.rate[2] == 5000 &&
		  rl.rate[3] == 20000 && rl.rate[4] == 100000);
	ck_assert_int_eq(ratelist_parse(&rl, " 2.5 , 0.5M,1.5K,12000", 0, 0, err), 0);
	ck_assert_uint_eq(rl.n, 4);
	ck_assert(rl.rate[0] == 2.5 && rl.rate[1] == 500000 && rl.rate[2] == 1500 &&
		  rl.rate[3] == 12000);
	ck_assert_int_eq(ratelist_parse(&rl, "1e3,2.5e4, .5k", 0, 0, err), 0);
	ck_assert(rl.rate[0] == 1000 && rl.rate[1] == 25000 && rl.rate[2] == 500);
	ck_assert_int_eq(ratelist_parse(&rl, "1e10", 0, 0, err), -EINVAL);
	ck_assert_int_eq(ratelist_parse(&rl, "1000M", 0, RATELIST_WHOLE, err), 0);
	ck_assert(rl.rate[0] == 1e9);
	ck_assert_int_eq(ratelist_parse(&rl, "1.5k", 0, RATELIST_WHOLE, err), 0);
	ck_assert(rl.rate[0] == 1500);
}
END_TEST

START_TEST(test_bad)
{
	static const struct { const char *in; unsigned max, flags; const char *says; } t[] = {
		{ "", 0, 0, "no rate given" },
		{ "  ", 0, 0, "no rate given" },
		{ "500,,1000", 0, 0, "empty item" },
		{ "500,", 0, 0, "empty item" },
		{ ",500", 0, 0, "empty item" },
		{ "500,x", 0, 0, "'x' is not a rate" },
		{ "500,0", 0, 0, "'0' is not a rate" },
		{ "-5", 0, 0, "'-5' is not a rate" },
		{ "+5", 0, 0, "'+5' is not a rate" },
		{ "0x10", 0, 0, "'0x10' is not a rate" },
		{ "inf", 0, 0, "'inf' is not a rate" },
		{ "nan", 0, 0, "'nan' is not a rate" },
		{ "1.2.3", 0, 0, "'1.2.3' is not a rate" },
		{ "1e", 0, 0, "'1e' is not a rate" },
		{ "e3", 0, 0, "'e3' is not a rate" },
		{ "1e-400", 0, 0, "'1e-400' is not a rate" },
		{ ".", 0, 0, "'.' is not a rate" },
		{ "k", 0, 0, "'k' is not a rate" },
		{ "5m", 0, 0, "'5m' is not a rate" },
		{ "5 k", 0, 0, "'5 k' is not a rate" },
		{ "1001M", 0, 0, "'1001M' is not a rate" },
		{ "2.5", 0, RATELIST_WHOLE, "'2.5' is not a rate (whole" },
		{ "500, 5k,5000", 0, 0, "'5000' twice" },
		{ "1,2,3", 2, 0, "more than 2 rates" },
	};
	struct ratelist rl;
	char err[RATELIST_ERRBUF];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err[0] = 0;
		ck_assert_int_eq(ratelist_parse(&rl, t[i].in, t[i].max, t[i].flags, err), -EINVAL);
		ck_assert_msg(strstr(err, t[i].says), "'%s': '%s' lacks '%s'",
			      t[i].in, err, t[i].says);
	}
	ck_assert_int_eq(ratelist_parse(&rl, NULL, 0, 0, NULL), -EINVAL);
}
END_TEST

/* RATELIST_MAX items fit, one more does not. */
START_TEST(test_max)
{
	struct ratelist rl;
	char text[RATELIST_MAX * 8 + 8] = "", err[RATELIST_ERRBUF];

	for (int i = 1; i <= RATELIST_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d",
			 i > 1 ? "," : "", i);
	ck_assert_int_eq(ratelist_parse(&rl, text, 0, 0, err), 0);
	ck_assert_uint_eq(rl.n, RATELIST_MAX);
	strcat(text, ",999");
	ck_assert_int_eq(ratelist_parse(&rl, text, 1000, 0, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "more than 64"));
}
END_TEST

START_TEST(test_fttc)
{
	static const double want[] = { 500, 1000, 5000, 12000, 20000, 50000,
				       71000, 100000 };
	struct ratelist rl;

	ratelist_fttc(&rl);
	ck_assert_uint_eq(rl.n, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < rl.n; i++)
		ck_assert(rl.rate[i] == want[i]);
}
END_TEST

START_TEST(test_label)
{
	static const struct { double r; const char *s; } t[] = {
		{ 100000, "100k" }, { 71000, "71k" }, { 5000, "5k" },
		{ 1000, "1000" }, { 500, "500" }, { 12500, "12.5k" },
		{ 7500, "7500" }, { 2.5, "2.5" }, { 1e6, "1000k" },
	};
	char buf[16];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ratelist_label(t[i].r, buf, sizeof(buf));
		ck_assert_str_eq(buf, t[i].s);
	}
}
END_TEST

static Suite *ratelist_suite(void)
{
	Suite *s = suite_create("ratelist");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_bad);
	tcase_add_test(tc, test_max);
	tcase_add_test(tc, test_fttc);
	tcase_add_test(tc, test_label);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(ratelist_suite)
