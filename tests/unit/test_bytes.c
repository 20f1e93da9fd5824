/* test_bytes.c — each get reads, each put writes, exactly its bytes in its
 * order, at odd addresses; put then get gives the value back. */
#include <stdint.h>

#include "base/bytes.h"
#include "unit.h"

static const uint8_t seq[9] = { 0xee, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
				0x07, 0x88 };

START_TEST(test_get)
{
	const uint8_t *p = seq + 1;	/* odd address */

	ck_assert_uint_eq(bytes_get_be16(p), 0x0102);
	ck_assert_uint_eq(bytes_get_be32(p), 0x01020304);
	ck_assert_uint_eq(bytes_get_be64(p), 0x0102030405060788ULL);
	ck_assert_uint_eq(bytes_get_le16(p), 0x0201);
	ck_assert_uint_eq(bytes_get_le32(p), 0x04030201);
	ck_assert_uint_eq(bytes_get_le64(p), 0x8807060504030201ULL);
	/* Top bits are not sign-extended. */
	ck_assert_uint_eq(bytes_get_be16(seq + 7), 0x0788);
	ck_assert_uint_eq(bytes_get_le16(seq + 7), 0x8807);
	ck_assert_uint_eq(bytes_get_be32(seq + 5), 0x05060788);
	ck_assert_uint_eq(bytes_get_le32(seq + 5), 0x88070605);
}
END_TEST

/* Puts touch only their bytes. */
START_TEST(test_put)
{
	uint8_t b[11];

	memset(b, 0xaa, sizeof(b));
	bytes_put_be16(b + 1, 0x0102);
	ck_assert_mem_eq(b, "\xaa\x01\x02\xaa", 4);
	memset(b, 0xaa, sizeof(b));
	bytes_put_be32(b + 1, 0x01020304);
	ck_assert_mem_eq(b, "\xaa\x01\x02\x03\x04\xaa", 6);
	memset(b, 0xaa, sizeof(b));
	bytes_put_be64(b + 1, 0x0102030405060708ULL);
	ck_assert_mem_eq(b, "\xaa\x01\x02\x03\x04\x05\x06\x07\x08\xaa", 10);
	memset(b, 0xaa, sizeof(b));
	bytes_put_le16(b + 1, 0x0102);
	ck_assert_mem_eq(b, "\xaa\x02\x01\xaa", 4);
	memset(b, 0xaa, sizeof(b));
	bytes_put_le32(b + 1, 0x01020304);
	ck_assert_mem_eq(b, "\xaa\x04\x03\x02\x01\xaa", 6);
	memset(b, 0xaa, sizeof(b));
	bytes_put_le64(b + 1, 0x0102030405060708ULL);
	ck_assert_mem_eq(b, "\xaa\x08\x07\x06\x05\x04\x03\x02\x01\xaa", 10);
}
END_TEST

START_TEST(test_round_trip)
{
	uint8_t b[9];
	uint64_t v = 0x8123456789abcdefULL;

	for (int i = 0; i < 64; i++, v = v * 6364136223846793005ULL + 1) {
		bytes_put_be16(b + 1, (uint16_t)v);
		ck_assert_uint_eq(bytes_get_be16(b + 1), (uint16_t)v);
		bytes_put_le16(b + 1, (uint16_t)v);
		ck_assert_uint_eq(bytes_get_le16(b + 1), (uint16_t)v);
		bytes_put_be32(b + 1, (uint32_t)v);
		ck_assert_uint_eq(bytes_get_be32(b + 1), (uint32_t)v);
		bytes_put_le32(b + 1, (uint32_t)v);
		ck_assert_uint_eq(bytes_get_le32(b + 1), (uint32_t)v);
		bytes_put_be64(b + 1, v);
		ck_assert_uint_eq(bytes_get_be64(b + 1), v);
		bytes_put_le64(b + 1, v);
		ck_assert_uint_eq(bytes_get_le64(b + 1), v);
	}
	/* A negative int64 through the cast keeps its bits. */
	bytes_put_be64(b, (uint64_t)(int64_t)-2);
	ck_assert_int_eq((int64_t)bytes_get_be64(b), -2);
}
END_TEST

static Suite *bytes_suite(void)
{
	Suite *s = suite_create("bytes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_get);
	tcase_add_test(tc, test_put);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(bytes_suite)
