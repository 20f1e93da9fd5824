/* test_fix.c — FIX framing, checks, field access and writing: a published
 * example message, round trips, a stream cut at every byte, and each kind
 * of bad input a peer can send. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fix/fix.h"
#include "unit.h"

/* The FIX 4.2 Logon often used as an example: BodyLength 65, CheckSum 062
 * (both checked independently of this code). '|' stands for SOH. */
static const char *example = "8=FIX.4.2|9=65|35=A|49=SERVER|56=CLIENT|34=177|"
			     "52=20090107-18:15:16|98=0|108=30|10=062|";

static char *soh(const char *s, char *out)
{
	size_t i;

	for (i = 0; s[i]; i++)
		out[i] = s[i] == '|' ? FIX_SOH : s[i];
	out[i] = 0;
	return out;
}

START_TEST(published_example)
{
	static struct fix_msg m;
	char buf[256];
	enum fix_error why;
	size_t skip, len;
	int64_t v;

	soh(example, buf);
	ck_assert_int_eq(fix_frame(buf, strlen(buf), 4096, &skip, &why),
			 (int)strlen(buf));
	ck_assert_int_eq(fix_parse(&m, buf, strlen(buf), &why), 0);
	ck_assert_uint_eq(m.nfields, 10);
	ck_assert(fix_is(&m, 35, "A"));
	ck_assert(fix_is(&m, 49, "SERVER"));
	ck_assert_int_eq(fix_get_int(&m, 34, &v), 0);
	ck_assert(v == 177);
	ck_assert_int_eq(fix_get_int(&m, 108, &v), 0);
	ck_assert(v == 30);
	ck_assert_ptr_nonnull(fix_get(&m, 52, &len));
	ck_assert_uint_eq(len, 17);
	ck_assert_ptr_null(fix_get(&m, 11, &len));
	ck_assert_int_eq(fix_get_int(&m, 11, &v), -EINVAL);
}
END_TEST

START_TEST(write_and_read_back)
{
	static struct fix_msg m;
	char buf[512], again[512];
	struct fix_writer w;
	enum fix_error why;
	const char *msg;
	unsigned sum = 0;
	size_t len;
	int64_t v;

	fix_begin(&w, buf, sizeof(buf), "FIX.4.4", "D");
	fix_add_str(&w, 49, "ALGO");
	fix_add_str(&w, 56, "VENUE");
	fix_add_int(&w, 34, 42);
	fix_add_str(&w, 11, "ord-1");
	fix_add_str(&w, 55, "TPL1");
	fix_add_str(&w, 54, "1");
	fix_add_int(&w, 38, 100);
	fix_add_fixed(&w, 44, 1000, 3);
	msg = fix_end(&w, &len);
	ck_assert_ptr_nonnull(msg);
	ck_assert_int_eq(memcmp(msg, "8=FIX.4.4\0019=", 12), 0);
	/* CheckSum as the standard defines it, computed here. */
	for (size_t i = 0; i < len - 7; i++)
		sum += (unsigned char)msg[i];
	snprintf(again, sizeof(again), "10=%03u\001", sum % 256);
	ck_assert_int_eq(memcmp(msg + len - 7, again, 7), 0);
	ck_assert_int_eq(fix_parse(&m, msg, len, &why), 0);
	ck_assert(fix_is(&m, 35, "D"));
	ck_assert(fix_is(&m, 44, "1.000"));
	ck_assert_int_eq(fix_get_int(&m, 38, &v), 0);
	ck_assert(v == 100);
	ck_assert_uint_eq(m.f[m.nfields - 1].tag, 10);
}
END_TEST

START_TEST(fixed_point)
{
	static const struct {
		int64_t units;
		unsigned dec;
		const char *want;
	} cases[] = {
		{ 1, 3, "0.001" }, { 1000, 3, "1.000" }, { 123456, 3, "123.456" },
		{ -5, 2, "-0.05" }, { 7, 0, "7" }, { 0, 3, "0.000" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct fix_msg m;
		char buf[256];
		struct fix_writer w;
		enum fix_error why;
		const char *msg;
		size_t len;

		fix_begin(&w, buf, sizeof(buf), "FIX.4.4", "X");
		fix_add_fixed(&w, 270, cases[i].units, cases[i].dec);
		msg = fix_end(&w, &len);
		ck_assert_int_eq(fix_parse(&m, msg, len, &why), 0);
		ck_assert_msg(fix_is(&m, 270, cases[i].want), "case %zu", i);
	}
}
END_TEST

START_TEST(repeating_group)
{
	static struct fix_msg m;
	char buf[512];
	struct fix_writer w;
	enum fix_error why;
	const char *msg, *v;
	const char *want[] = { "AAA", "BBB", "CCC" };
	int pos = -1, n = 0;
	size_t len;

	fix_begin(&w, buf, sizeof(buf), "FIX.4.4", "X");
	fix_add_int(&w, 268, 3);
	for (int i = 0; i < 3; i++) {
		fix_add_str(&w, 279, "0");
		fix_add_str(&w, 269, "0");
		fix_add_fixed(&w, 270, 1000 + i, 3);
		fix_add_str(&w, 55, want[i]);
	}
	msg = fix_end(&w, &len);
	ck_assert_int_eq(fix_parse(&m, msg, len, &why), 0);
	while ((v = fix_next(&m, 55, &pos, &len))) {
		ck_assert_uint_eq(len, 3);
		ck_assert_int_eq(memcmp(v, want[n], 3), 0);
		/* The entry's price is the 270 just before its 55. */
		ck_assert_uint_eq(m.f[pos - 1].tag, 270);
		n++;
	}
	ck_assert_int_eq(n, 3);
}
END_TEST

START_TEST(stream_cut_everywhere)
{
	char one[256], two[600];
	size_t l1, total;

	soh(example, one);
	l1 = strlen(one);
	memcpy(two, one, l1);
	memcpy(two + l1, one, l1);
	total = 2 * l1;
	/* Every prefix: nothing until the first message is whole, then
	 * exactly its length; never an error. */
	for (size_t n = 0; n <= total; n++) {
		enum fix_error why;
		size_t skip;
		int r = fix_frame(two, n, 4096, &skip, &why);

		ck_assert_msg(r == (n < l1 ? 0 : (int)l1), "prefix %zu: %d (%s)",
			      n, r, fix_error_name(why));
	}
}
END_TEST

START_TEST(garbage_then_message)
{
	char buf[400], msg[256];
	enum fix_error why;
	size_t skip, len;

	soh(example, msg);
	len = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.0\r\n%s", msg);
	ck_assert_int_eq(fix_frame(buf, len, 4096, &skip, &why), -EBADMSG);
	ck_assert_int_eq(why, FIX_E_BEGIN);
	ck_assert_uint_eq(skip, 16);	/* to the 8= */
	ck_assert_int_eq(fix_frame(buf + skip, len - skip, 4096, &skip, &why),
			 (int)strlen(msg));
}
END_TEST

START_TEST(bad_peers)
{
	static const struct {
		const char *text;
		enum fix_error why;
		bool at_frame;	/* refused by fix_frame already */
	} cases[] = {
		/* Wrong checksum. */
		{ "8=FIX.4.2|9=65|35=A|49=SERVER|56=CLIENT|34=177|52=20090107-18:15:16|98=0|108=30|10=063|",
		  FIX_E_CHECKSUM, false },
		/* BodyLength that lies short. */
		{ "8=FIX.4.2|9=60|35=A|49=SERVER|56=CLIENT|34=177|52=20090107-18:15:16|98=0|108=30|10=062|",
		  FIX_E_BODYLENGTH, true },
		/* BodyLength that is not a number. */
		{ "8=FIX.4.2|9=6x|35=A|10=000|", FIX_E_BODYLENGTH, true },
		/* Over the size limit (4096 here). */
		{ "8=FIX.4.4|9=5000|35=A|", FIX_E_TOO_LONG, true },
		/* A BodyLength far over the limit is over it, not
		 * malformed (issue 17 item 11: 999,999,999 was "bad"). */
		{ "8=FIX.4.4|9=999999999|35=A|", FIX_E_TOO_LONG, true },
		{ "8=FIX.4.4|9=99999999999999999999999999999|35=A|", FIX_E_TOO_LONG, true },
		/* ... but a number cut by a non-digit is malformed, however
		 * big it was, and so is an empty one. */
		{ "8=FIX.4.4|9=999999999x|35=A|", FIX_E_BODYLENGTH, true },
		{ "8=FIX.4.4|9=|35=A|10=000|", FIX_E_BODYLENGTH, true },
		/* Second field not 9=. */
		{ "8=FIX.4.4|35=A|9=5|10=000|", FIX_E_BODYLENGTH, true },
		/* A field without '=' (BodyLength and checksum right). */
		{ "8=FIX.4.4|9=10|35=A|49SV|10=247|", FIX_E_FIELD, false },
		/* MsgType missing. */
		{ "8=FIX.4.4|9=5|49=S|10=203|", FIX_E_MSGTYPE, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct fix_msg m;
		char buf[256];
		enum fix_error why;
		size_t skip, len;
		int r;

		soh(cases[i].text, buf);
		len = strlen(buf);
		r = fix_frame(buf, len, 4096, &skip, &why);
		if (cases[i].at_frame) {
			ck_assert_msg(r == -EBADMSG && why == cases[i].why,
				      "case %zu: frame %d %s", i, r, fix_error_name(why));
			ck_assert_uint_ge(skip, 1);
			continue;
		}
		ck_assert_msg(r == (int)len, "case %zu: frame %d (%s)", i, r,
			      fix_error_name(why));
		ck_assert_int_eq(fix_parse(&m, buf, len, &why), -EBADMSG);
		ck_assert_msg(why == cases[i].why, "case %zu: %s", i,
			      fix_error_name(why));
	}
}
END_TEST

START_TEST(lying_long_waits_then_fails)
{
	char buf[600], msg[256];
	enum fix_error why;
	size_t skip, l;

	/* Claims 100 body bytes: incomplete until 100 more arrive, then the
	 * 10= is not where it says. */
	soh("8=FIX.4.2|9=100|35=A|49=SERVER|56=CLIENT|34=177|52=20090107-18:15:16|98=0|108=30|10=062|", msg);
	l = strlen(msg);
	ck_assert_int_eq(fix_frame(msg, l, 4096, &skip, &why), 0);
	memcpy(buf, msg, l);
	soh(example, buf + l);
	ck_assert_int_eq(fix_frame(buf, strlen(buf), 4096, &skip, &why), -EBADMSG);
	ck_assert_int_eq(why, FIX_E_BODYLENGTH);
	/* Resync finds the next message. */
	ck_assert_int_gt(skip, 0);
}
END_TEST

START_TEST(huge_bodylength_decided_early)
{
	char buf[64];
	enum fix_error why;
	size_t skip;

	/* A run of digits longer than any length: no need to wait for its
	 * end, it is over the limit. */
	soh("8=FIX.4.4|9=", buf);
	memset(buf + strlen(buf), '9', 30);
	buf[strlen("8=FIX.4.4|9=") + 30] = 0;
	ck_assert_int_eq(fix_frame(buf, strlen(buf), 4096, &skip, &why), -EBADMSG);
	ck_assert_int_eq(why, FIX_E_TOO_LONG);
	/* A few digits not yet ended: wait for them. */
	soh("8=FIX.4.4|9=99999", buf);
	ck_assert_int_eq(fix_frame(buf, strlen(buf), 4096, &skip, &why), 0);
	ck_assert_str_eq(fix_error_name(FIX_E_TOO_LONG), "message over the size limit");
}
END_TEST

START_TEST(get_int_edges)
{
	static struct fix_msg m;
	char buf[256];
	struct fix_writer w;
	enum fix_error why;
	const char *msg;
	size_t len;
	int64_t v;

	fix_begin(&w, buf, sizeof(buf), "FIX.4.4", "0");
	fix_add_str(&w, 1, "-12");
	fix_add_str(&w, 2, "99999999999999999999");
	fix_add_str(&w, 3, "12a");
	fix_add_str(&w, 4, "-");
	fix_add_str(&w, 5, "");
	msg = fix_end(&w, &len);
	ck_assert_int_eq(fix_parse(&m, msg, len, &why), 0);
	ck_assert_int_eq(fix_get_int(&m, 1, &v), 0);
	ck_assert(v == -12);
	ck_assert_int_eq(fix_get_int(&m, 2, &v), -EINVAL);
	ck_assert_int_eq(fix_get_int(&m, 3, &v), -EINVAL);
	ck_assert_int_eq(fix_get_int(&m, 4, &v), -EINVAL);
	ck_assert_int_eq(fix_get_int(&m, 5, &v), -EINVAL);
}
END_TEST

/* UTCTimestamps both ways: written to 3, 6 or 9 digits (cut, not
 * rounded; before 1970 too), read back to the ns they say with their
 * digits; against dates computed by hand, and refused when not real. */
START_TEST(utc_timestamps)
{
	static const struct {
		const char *text;
		int64_t ns;
		unsigned digits;
	} ok[] = {
		{ "19700101-00:00:00", 0, 0 },
		{ "20251123-12:13:20.5", 1763900000500000000LL, 1 },
		{ "20251123-12:13:20.000999", 1763900000000999000LL, 6 },
		{ "20000229-23:59:59.999999999", 951868799999999999LL, 9 },
		{ "21000301-00:00:00.001", 4107542400001000000LL, 3 },
		/* A leap second: the next second's start, as UTC clocks say. */
		{ "20161231-23:59:60", 1483228800000000000LL, 0 },
	};
	static const char *const bad[] = {
		"", "20251123-12:13:2", "20251123 12:13:20", "20251323-12:13:20",
		"20251100-12:13:20", "20250229-12:13:20", "21000229-00:00:00",
		"19691231-23:59:59", "20251123-24:00:00", "20251123-12:60:00",
		"20251123-12:13:61", "20251123-12:13:20.", "20251123-12:13:20.1234567890",
		"20251123-12:13:20,5", "2025112a-12:13:20", "20251123-12:13:20.5x",
		/* Found by fuzz_fix: past 64-bit nanoseconds. */
		"62021123-04:00:00.001", "22620101-00:00:00",
	};
	struct fix_utc_cache cache;
	char out[FIX_UTC_LEN];
	int64_t ns;
	unsigned digits;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(fix_utc_parse(ok[i].text, strlen(ok[i].text), &ns,
					    &digits) == 0, "%s", ok[i].text);
		ck_assert_msg(ns == ok[i].ns && digits == ok[i].digits,
			      "%s: %lld, %u digits", ok[i].text, (long long)ns,
			      digits);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(fix_utc_parse(bad[i], strlen(bad[i]), &ns,
					    &digits) == -EINVAL, "%s", bad[i]);
	/* Not NUL-terminated: only len bytes are read. */
	ck_assert_int_eq(fix_utc_parse("20251123-12:13:20.5|9", 19, &ns,
				       &digits), 0);
	ck_assert_int_eq(digits, 1);

	fix_utc_cache_init(&cache);
	ck_assert_str_eq(fix_utc_time_digits(&cache, 1763900000123456789LL, 9,
					     out), "20251123-12:13:20.123456789");
	ck_assert_str_eq(fix_utc_time_digits(&cache, 1763900000123456789LL, 6,
					     out), "20251123-12:13:20.123456");
	ck_assert_str_eq(fix_utc_time(&cache, 1763900000123456789LL, out),
			 "20251123-12:13:20.123");
	/* Another digit count falls back to ms. */
	ck_assert_str_eq(fix_utc_time_digits(&cache, 1763900000999999999LL, 4,
					     out), "20251123-12:13:20.999");
	/* Before 1970: the second rounds down, the digits count up. */
	ck_assert_str_eq(fix_utc_time_digits(&cache, -1, 9, out),
			 "19691231-23:59:59.999999999");
	/* Written and read back, every digit count. */
	for (unsigned d = 3; d <= 9; d += 3) {
		fix_utc_time_digits(&cache, 1763900000123456789LL, d, out);
		ck_assert_int_eq(fix_utc_parse(out, strlen(out), &ns, &digits), 0);
		ck_assert_uint_eq(digits, d);
		ck_assert(ns <= 1763900000123456789LL &&
			  1763900000123456789LL - ns < (d == 3 ? 1000000 :
						       d == 6 ? 1000 : 1));
	}
}
END_TEST

START_TEST(writer_overflow)
{
	char buf[48];
	struct fix_writer w;
	size_t len;

	fix_begin(&w, buf, sizeof(buf), "FIX.4.4", "D");
	fix_add_str(&w, 58, "a text far too long for a 48-byte buffer");
	ck_assert_ptr_null(fix_end(&w, &len));
}
END_TEST

static Suite *fix_suite(void)
{
	Suite *s = suite_create("fix");
	TCase *t = tcase_create("fix");

	tcase_add_test(t, published_example);
	tcase_add_test(t, write_and_read_back);
	tcase_add_test(t, fixed_point);
	tcase_add_test(t, repeating_group);
	tcase_add_test(t, stream_cut_everywhere);
	tcase_add_test(t, garbage_then_message);
	tcase_add_test(t, bad_peers);
	tcase_add_test(t, lying_long_waits_then_fails);
	tcase_add_test(t, huge_bodylength_decided_early);
	tcase_add_test(t, get_int_edges);
	tcase_add_test(t, writer_overflow);
	tcase_add_test(t, utc_timestamps);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(fix_suite)
