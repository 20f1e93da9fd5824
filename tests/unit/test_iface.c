/* test_iface.c — the interface list over rtnetlink, on this host's own
 * namespace: lo is always there, index 1 and up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stamp/iface.h"
#include "unit.h"

START_TEST(test_list_has_lo)
{
	struct iface_entry *all;
	int n, total, lo = -1;

	total = iface_list(NULL, 0);
	ck_assert_int_ge(total, 1);
	all = calloc((size_t)total + 4, sizeof(*all));
	ck_assert_ptr_nonnull(all);
	n = iface_list(all, total + 4);
	/* Interfaces may come and go between the calls; not on a test box. */
	ck_assert_int_eq(n, total);
	for (int i = 0; i < n; i++) {
		ck_assert_int_gt(all[i].index, 0);
		ck_assert_uint_gt(strlen(all[i].name), 0);
		ck_assert_uint_lt(strlen(all[i].kind), sizeof(all[i].kind));
		if (i > 0)
			ck_assert_int_gt(all[i].index, all[i - 1].index);
		if (!strcmp(all[i].name, "lo"))
			lo = i;
	}
	ck_assert_int_eq(lo, 0);	/* index 1 sorts first */
	ck_assert_int_eq(all[lo].index, 1);
	ck_assert(all[lo].up);
	ck_assert_uint_gt(all[lo].mtu, 0);
	ck_assert_str_eq(all[lo].kind, "");
	free(all);
}
END_TEST

START_TEST(test_get_lo)
{
	struct iface_entry e;

	memset(&e, 0x5a, sizeof(e));
	ck_assert_int_eq(iface_get("lo", &e), 0);
	ck_assert_str_eq(e.name, "lo");
	ck_assert_int_eq(e.index, 1);
	ck_assert(e.up);
	ck_assert_uint_gt(e.mtu, 0);
	ck_assert_str_eq(e.kind, "");
}
END_TEST

START_TEST(test_get_matches_list)
{
	struct iface_entry first, e;

	ck_assert_int_ge(iface_list(&first, 1), 1);
	ck_assert_int_eq(iface_get(first.name, &e), 0);
	ck_assert_mem_eq(&e, &first, sizeof(e));
}
END_TEST

START_TEST(test_get_unknown)
{
	struct iface_entry e;

	ck_assert_int_eq(iface_get("tlnosuch0", &e), -ENODEV);
	ck_assert_int_eq(iface_get("tapless-no-such-if0", &e), -ENODEV);
	ck_assert_int_eq(iface_get("", &e), -ENODEV);
}
END_TEST

START_TEST(test_list_short)
{
	struct iface_entry *all, *few;
	int total, max;

	total = iface_list(NULL, 0);
	ck_assert_int_ge(total, 1);
	all = calloc((size_t)total, sizeof(*all));
	ck_assert_ptr_nonnull(all);
	ck_assert_int_eq(iface_list(all, total), total);
	max = total - 1;
	/* One guard entry past max must stay untouched. */
	few = malloc(((size_t)max + 1) * sizeof(*few));
	ck_assert_ptr_nonnull(few);
	memset(few, 0xa5, ((size_t)max + 1) * sizeof(*few));
	ck_assert_int_eq(iface_list(few, max), total);
	ck_assert_mem_eq(few, all, (size_t)max * sizeof(*few));
	for (size_t i = 0; i < sizeof(*few); i++)
		ck_assert_uint_eq(((unsigned char *)&few[max])[i], 0xa5);
	free(few);
	free(all);
}
END_TEST

START_TEST(test_list_bad_args)
{
	struct iface_entry e;

	ck_assert_int_eq(iface_list(&e, -1), -EINVAL);
	ck_assert_int_eq(iface_list(NULL, 3), -EINVAL);
	ck_assert_int_eq(iface_get(NULL, &e), -EINVAL);
	ck_assert_int_eq(iface_get("lo", NULL), -EINVAL);
}
END_TEST

static Suite *iface_suite(void)
{
	Suite *s = suite_create("iface");
	TCase *tc = tcase_create("rtnetlink");

	tcase_add_test(tc, test_list_has_lo);
	tcase_add_test(tc, test_get_lo);
	tcase_add_test(tc, test_get_matches_list);
	tcase_add_test(tc, test_get_unknown);
	tcase_add_test(tc, test_list_short);
	tcase_add_test(tc, test_list_bad_args);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(iface_suite)
