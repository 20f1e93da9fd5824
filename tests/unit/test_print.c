/* test_print.c — the one printer: exact JSON, CSV and text output, and
 * misuse that must neither crash nor break the output's shape. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "base/print.h"
#include "unit.h"

static char *mem_buf;
static size_t mem_len;
static FILE *mem;

static struct printer *open_printer(enum print_format fmt, unsigned flags)
{
	mem_buf = NULL;
	mem_len = 0;
	mem = open_memstream(&mem_buf, &mem_len);
	ck_assert_ptr_nonnull(mem);
	return print_create(mem, fmt, flags);
}

/* Destroy p and compare everything it wrote with want. */
static void expect(struct printer *p, const char *want)
{
	ck_assert_int_eq(print_destroy(p), 0);
	fclose(mem);
	ck_assert_str_eq(mem_buf, want);
	free(mem_buf);
}

/* ---- JSON ---- */

START_TEST(json_top_level)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	ck_assert_int_eq(print_format(p), PRINT_JSON);
	print_str(p, "a", "%s", "x");
	expect(p, "{\"a\":\"x\"}\n");

	p = open_printer(PRINT_JSON, 0);
	expect(p, "{}\n");
}
END_TEST

START_TEST(json_nesting)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_int(p, "n", NULL, 1);
	print_array_begin(p, "list");
	print_object_begin(p, NULL);
	print_str(p, "k", NULL, "v");
	print_object_begin(p, "in");
	print_int(p, "x", NULL, -2);
	print_uint(p, "y", NULL, 3);
	print_object_end(p);
	print_object_end(p);
	print_object_begin(p, NULL);
	print_object_end(p);
	print_array_begin(p, NULL);
	print_array_end(p);
	print_int(p, NULL, NULL, 7);
	print_array_end(p);
	print_array_begin(p, "empty");
	print_array_end(p);
	print_object_begin(p, "none");
	print_object_end(p);
	expect(p, "{\"n\":1,\"list\":[{\"k\":\"v\",\"in\":{\"x\":-2,\"y\":3}},"
		  "{},[],7],\"empty\":[],\"none\":{}}\n");
}
END_TEST

START_TEST(json_escape)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_str(p, "q\"k", NULL, "a\"b\\c/d");
	print_str(p, "ctl", NULL, "\n\t\r\b\f\x01\x1f\x7f");
	print_str(p, "utf8", NULL, "\xc3\xa9\xe2\x82\xac");
	expect(p, "{\"q\\\"k\":\"a\\\"b\\\\c/d\","
		  "\"ctl\":\"\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\","
		  "\"utf8\":\"\xc3\xa9\xe2\x82\xac\"}\n");
}
END_TEST

START_TEST(json_numbers)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_int(p, "imin", NULL, INT64_MIN);
	print_uint(p, "umax", NULL, UINT64_MAX);
	print_double(p, "three", NULL, 3.0);
	print_double(p, "half", NULL, -0.5);
	print_double(p, "tenth", NULL, 0.1);
	print_double(p, "third", NULL, 1.0 / 3.0);
	print_double(p, "big", NULL, 1e20);
	print_double(p, "tiny", NULL, 1.5e-7);
	print_double(p, "nan", NULL, NAN);
	print_double(p, "inf", NULL, INFINITY);
	print_double(p, "ninf", NULL, -INFINITY);
	expect(p, "{\"imin\":-9223372036854775808,"
		  "\"umax\":18446744073709551615,"
		  "\"three\":3,\"half\":-0.5,\"tenth\":0.1,"
		  "\"third\":0.333333333333333,\"big\":1e+20,"
		  "\"tiny\":1.5e-07,\"nan\":null,\"inf\":null,"
		  "\"ninf\":null}\n");
}
END_TEST

START_TEST(json_null_bool)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_null(p, "z", "%s");
	print_str(p, "s", "%s", NULL);
	print_bool(p, "t", "%s", true);
	print_bool(p, "f", "%s", false);
	print_array_begin(p, "a");
	print_null(p, NULL, NULL);
	print_bool(p, NULL, NULL, true);
	print_array_end(p);
	expect(p, "{\"z\":null,\"s\":null,\"t\":true,\"f\":false,"
		  "\"a\":[null,true]}\n");
}
END_TEST

START_TEST(json_pretty)
{
	struct printer *p = open_printer(PRINT_JSON, PRINT_PRETTY);

	print_str(p, "a", NULL, "x");
	print_array_begin(p, "b");
	print_int(p, NULL, NULL, 1);
	print_object_begin(p, NULL);
	print_bool(p, "c", NULL, false);
	print_object_end(p);
	print_array_end(p);
	print_object_begin(p, "e");
	print_object_end(p);
	print_array_begin(p, "f");
	print_array_end(p);
	expect(p, "{\n"
		  "  \"a\": \"x\",\n"
		  "  \"b\": [\n"
		  "    1,\n"
		  "    {\n"
		  "      \"c\": false\n"
		  "    }\n"
		  "  ],\n"
		  "  \"e\": {},\n"
		  "  \"f\": []\n"
		  "}\n");

	p = open_printer(PRINT_JSON, PRINT_PRETTY);
	expect(p, "{}\n");
}
END_TEST

START_TEST(json_destroy_closes)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_array_begin(p, "a");
	print_object_begin(p, NULL);
	print_int(p, "x", NULL, 1);
	expect(p, "{\"a\":[{\"x\":1}]}\n");
}
END_TEST

START_TEST(json_misuse)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_object_end(p);			/* nothing open */
	print_array_end(p);
	print_int(p, NULL, NULL, 1);	/* keyless in object: dropped */
	print_array_begin(p, "a");
	print_object_end(p);			/* wrong kind: ignored */
	print_int(p, "k", NULL, 2);	/* key in array: key dropped */
	print_object_begin(p, "o");		/* key dropped */
	print_int(p, "x", NULL, 3);
	print_object_end(p);
	print_array_end(p);
	print_object_begin(p, NULL);	/* keyless in object: dropped */
	print_int(p, "in", NULL, 4);
	print_array_begin(p, "deep");
	print_int(p, NULL, NULL, 5);
	print_array_end(p);
	print_object_end(p);
	print_str(p, "after", NULL, "y");
	print_array_end(p);
	print_object_end(p);
	expect(p, "{\"a\":[2,{\"x\":3}],\"after\":\"y\"}\n");
}
END_TEST

START_TEST(json_deep)
{
	enum { DEPTH = 100 };
	char want[2 * DEPTH + 16], *w = want;
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_array_begin(p, "d");
	for (int i = 1; i < DEPTH; i++)
		print_array_begin(p, NULL);
	print_int(p, NULL, NULL, 0);
	/* Left open on purpose: print_destroy closes all of them. */
	w += sprintf(w, "{\"d\":");
	for (int i = 0; i < DEPTH; i++)
		*w++ = '[';
	*w++ = '0';
	for (int i = 0; i < DEPTH; i++)
		*w++ = ']';
	strcpy(w, "}\n");
	expect(p, want);
}
END_TEST

START_TEST(write_error)
{
	FILE *f = fopen("/dev/full", "w");
	struct printer *p;

	ck_assert_ptr_nonnull(f);
	p = print_create(f, PRINT_JSON, 0);
	print_str(p, "a", NULL, "x");
	ck_assert_int_eq(print_destroy(p), -EIO);
	fclose(f);
}
END_TEST

/* ---- text ---- */

START_TEST(text_formats)
{
	struct printer *p = open_printer(PRINT_TEXT, 0);

	ck_assert_int_eq(print_format(p), PRINT_TEXT);
	print_object_begin(p, "o");
	print_str(p, "s", "s=%s", "abc");
	print_str(p, "n", " n=%s", NULL);
	print_int(p, "i", " i=%lld", INT64_MIN);
	print_uint(p, "u", " u=%llu", UINT64_MAX);
	print_double(p, "d", " d=%.2f", 2.5);
	print_bool(p, "t", " t=%s", true);
	print_bool(p, "f", " f=%s", false);
	print_null(p, "z", " z=%s");
	print_str(p, "hidden", NULL, "nope");
	print_int(p, "hidden2", NULL, 9);
	print_array_begin(p, "a");
	print_str(p, NULL, " [%s]", "el");
	print_array_end(p);
	print_object_end(p);
	print_text(p, "\n%s %d\n", "line", 2);
	expect(p, "s=abc n=- i=-9223372036854775808 u=18446744073709551615"
		  " d=2.50 t=yes f=no z=- [el]\nline 2\n");
}
END_TEST

START_TEST(text_only_in_text)
{
	struct printer *p = open_printer(PRINT_JSON, 0);

	print_text(p, "heading\n");
	print_int(p, "x", "x %lld\n", 1);
	expect(p, "{\"x\":1}\n");

	p = open_printer(PRINT_CSV, 0);
	print_text(p, "heading\n");
	expect(p, "");
}
END_TEST

/* ---- CSV ---- */

START_TEST(csv_table)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	ck_assert_int_eq(print_format(p), PRINT_CSV);
	print_array_begin(p, "rows");
	for (int i = 0; i < 2; i++) {
		print_object_begin(p, NULL);
		print_str(p, "name", "%s", i ? "eth1" : "eth0");
		print_int(p, "index", "%lld", i + 2);
		print_double(p, "ratio", "%f", i ? NAN : 0.25);
		print_bool(p, "up", "%s", !i);
		print_null(p, "none", NULL);
		print_object_end(p);
	}
	print_array_end(p);
	expect(p, "name,index,ratio,up,none\n"
		  "eth0,2,0.25,true,\n"
		  "eth1,3,,false,\n");
}
END_TEST

START_TEST(csv_flatten)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	print_array_begin(p, "flows");
	for (int i = 0; i < 2; i++) {
		print_object_begin(p, NULL);
		print_int(p, "id", NULL, i);
		print_object_begin(p, "latency_ns");
		print_int(p, "p50", NULL, 100 + i);
		print_object_begin(p, "x");
		print_int(p, "y", NULL, 7);
		print_object_end(p);
		print_array_begin(p, "tags");
		print_str(p, NULL, NULL, "a");
		print_null(p, NULL, NULL);
		print_str(p, NULL, NULL, "b");
		print_array_end(p);
		print_object_end(p);
		print_array_begin(p, "flags");
		if (i)
			print_str(p, NULL, NULL, "tx");
		print_str(p, NULL, NULL, "rx");
		print_array_end(p);
		print_object_end(p);
	}
	print_array_end(p);
	expect(p, "id,latency_ns.p50,latency_ns.x.y,latency_ns.tags,flags\n"
		  "0,100,7,a;;b,rx\n"
		  "1,101,7,a;;b,tx;rx\n");
}
END_TEST

START_TEST(csv_quoting)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	print_array_begin(p, "r");
	print_object_begin(p, NULL);
	print_str(p, "a,b", NULL, "x,y");
	print_str(p, "q", NULL, "say \"hi\"");
	print_str(p, "nl", NULL, "l1\nl2");
	print_str(p, "cr", NULL, "c\r");
	print_str(p, "plain", NULL, "semi;colon 'ok'");
	print_array_begin(p, "list");
	print_str(p, NULL, NULL, "1,2");
	print_str(p, NULL, NULL, "3");
	print_array_end(p);
	print_object_end(p);
	print_array_end(p);
	expect(p, "\"a,b\",q,nl,cr,plain,list\n"
		  "\"x,y\",\"say \"\"hi\"\"\",\"l1\nl2\",\"c\r\","
		  "semi;colon 'ok',\"1,2;3\"\n");
}
END_TEST

START_TEST(csv_two_tables)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	print_str(p, "title", "%s\n", "ignored");
	print_object_begin(p, "meta");
	print_int(p, "version", NULL, 1);
	print_array_begin(p, "scalars");
	print_int(p, NULL, NULL, 1);
	print_array_end(p);
	print_object_end(p);
	print_array_begin(p, "first");
	print_object_begin(p, NULL);
	print_int(p, "a", NULL, 1);
	print_object_end(p);
	print_object_begin(p, NULL);
	print_int(p, "a", NULL, 2);
	print_object_end(p);
	print_array_end(p);
	print_int(p, "between", NULL, 5);
	print_array_begin(p, "second");
	print_object_begin(p, NULL);
	print_str(p, "b", NULL, "x");
	print_str(p, "c", NULL, "y");
	print_object_end(p);
	print_array_end(p);
	expect(p, "a\n1\n2\n\nb,c\nx,y\n");
}
END_TEST

START_TEST(csv_later_rows)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	print_array_begin(p, "r");
	print_object_begin(p, NULL);
	print_int(p, "a", NULL, 1);
	print_int(p, "b", NULL, 2);
	print_int(p, "c", NULL, 3);
	print_object_end(p);
	print_object_begin(p, NULL);	/* reordered, b missing, d extra */
	print_int(p, "c", NULL, 6);
	print_int(p, "d", NULL, 7);
	print_int(p, "a", NULL, 4);
	print_object_end(p);
	print_object_begin(p, NULL);	/* empty: no line */
	print_object_end(p);
	print_array_end(p);
	expect(p, "a,b,c\n1,2,3\n4,,6,7\n");
}
END_TEST

START_TEST(csv_misuse)
{
	struct printer *p = open_printer(PRINT_CSV, 0);

	print_array_end(p);			/* nothing open */
	print_object_end(p);
	print_array_begin(p, "r");
	print_object_end(p);			/* wrong kind: ignored */
	print_object_begin(p, NULL);
	print_int(p, NULL, NULL, 9);	/* keyless in a row: dropped */
	print_int(p, "a", NULL, 1);
	print_object_begin(p, NULL);	/* keyless in a row: dropped */
	print_int(p, "lost", NULL, 2);
	print_object_end(p);
	print_array_begin(p, "l");
	print_object_begin(p, NULL);	/* a row in a cell: dropped */
	print_int(p, "lost", NULL, 3);
	print_object_end(p);
	print_int(p, NULL, NULL, 4);
	print_array_end(p);
	/* Left open: print_destroy ends the row and writes it. */
	expect(p, "a,l\n1,4\n");
}
END_TEST

/* The format the options ask for: one rule for every command. */
static enum print_format from_args(const struct opt_def *defs, unsigned *flags,
				   const char *a, const char *b)
{
	char *argv[] = { "prog", (char *)a, (char *)b, NULL };
	int argc = 1 + !!a + !!b;
	struct opts *o = opts_create(defs);
	char err[OPTS_ERRBUF];
	enum print_format f;

	ck_assert_int_eq(opts_parse_args(o, argc, argv, err), argc);
	f = print_format_from_opts(o, flags);
	opts_destroy(o);
	return f;
}

START_TEST(format_from_opts)
{
	static const struct opt_def all[] = {
		{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON", 0 },
		{ "csv", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "CSV", 0 },
		{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent", 0 },
		OPT_END
	};
	static const struct opt_def json_only[] = {
		{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON", 0 },
		OPT_END
	};
	static const struct opt_def none[] = {
		{ "rate", 'r', OPT_INT, "1", 0, 0, NULL, NULL, "rate", 0 },
		OPT_END
	};
	unsigned flags;

	flags = 0;
	ck_assert_int_eq(from_args(all, &flags, NULL, NULL), PRINT_TEXT);
	ck_assert_uint_eq(flags, 0);
	ck_assert_int_eq(from_args(all, &flags, "--csv", NULL), PRINT_CSV);
	/* --json wins over --csv, in either order. */
	ck_assert_int_eq(from_args(all, &flags, "--csv", "-j"), PRINT_JSON);
	ck_assert_int_eq(from_args(all, &flags, "-j", "--csv"), PRINT_JSON);
	ck_assert_uint_eq(flags, 0);
	ck_assert_int_eq(from_args(all, &flags, "-j", "-p"), PRINT_JSON);
	ck_assert_uint_eq(flags, PRINT_PRETTY);
	/* With --pretty in the table, not giving it means not indented. */
	flags = PRINT_PRETTY;
	ck_assert_int_eq(from_args(all, &flags, "-j", NULL), PRINT_JSON);
	ck_assert_uint_eq(flags, 0);
	/* Without it, the command's own choice stays. */
	flags = PRINT_PRETTY;
	ck_assert_int_eq(from_args(json_only, &flags, "-j", NULL), PRINT_JSON);
	ck_assert_uint_eq(flags, PRINT_PRETTY);
	flags = 0;
	ck_assert_int_eq(from_args(json_only, &flags, NULL, NULL), PRINT_TEXT);
	ck_assert_uint_eq(flags, 0);
	ck_assert_int_eq(from_args(none, &flags, "-r", "2"), PRINT_TEXT);
}
END_TEST

static Suite *print_suite(void)
{
	Suite *s = suite_create("print");
	TCase *json = tcase_create("json");
	TCase *text = tcase_create("text");
	TCase *csv = tcase_create("csv");
	TCase *opts = tcase_create("opts");

	tcase_add_test(json, json_top_level);
	tcase_add_test(json, json_nesting);
	tcase_add_test(json, json_escape);
	tcase_add_test(json, json_numbers);
	tcase_add_test(json, json_null_bool);
	tcase_add_test(json, json_pretty);
	tcase_add_test(json, json_destroy_closes);
	tcase_add_test(json, json_misuse);
	tcase_add_test(json, json_deep);
	tcase_add_test(json, write_error);
	suite_add_tcase(s, json);
	tcase_add_test(text, text_formats);
	tcase_add_test(text, text_only_in_text);
	suite_add_tcase(s, text);
	tcase_add_test(csv, csv_table);
	tcase_add_test(csv, csv_flatten);
	tcase_add_test(csv, csv_quoting);
	tcase_add_test(csv, csv_two_tables);
	tcase_add_test(csv, csv_later_rows);
	tcase_add_test(csv, csv_misuse);
	suite_add_tcase(s, csv);
	tcase_add_test(opts, format_from_opts);
	suite_add_tcase(s, opts);
	return s;
}

UNIT_MAIN(print_suite)
