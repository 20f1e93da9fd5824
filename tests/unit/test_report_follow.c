/* test_report_follow.c — the report's reader of the live stream
 * (report_follow.c): report_follow_parse() on lines as tapless correlate
 * --follow --json writes them (hop, txn with and without samples, host,
 * event, alert, a type of a later version), on the same objects written
 * otherwise (keys in another order, blanks, unknown keys holding nested
 * values, escapes, numbers in other forms, a key twice, names too long),
 * and on every kind of bad line (not JSON, cut short, a NUL, nested too
 * deep, a hop without its hosts, no interval, samples without
 * percentiles, flags that are not an array, more after the object),
 * refused with a reason and never read past; random bytes never crash it.
 * Then the loader and the data files on a small run directory: series,
 * counts, the first bad line named in a note, blank lines where an
 * interval has no samples or the stream has a gap, the flagged intervals.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "report/report.h"
#include "report/report_private.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "rfollow");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static int parse(const char *line, struct report_frec *rec, const char **why)
{
	return report_follow_parse(line, strlen(line), rec, why);
}

/* The line must be refused, with a reason. */
static void bad(const char *line, size_t len)
{
	struct report_frec rec;
	const char *why = NULL;

	ck_assert_msg(report_follow_parse(line, len, &rec, &why) == -EBADMSG,
		      "taken: %.*s", (int)len, line);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(rec.type, REPORT_FREC_OTHER);
}

#define BAD(s) bad(s, strlen(s))

START_TEST(parse_hop)
{
	struct report_frec rec;
	const char *why;

	ck_assert_int_eq(parse("{\"type\":\"hop\",\"start_ns\":1795648113000000000,"
			       "\"end_ns\":1795648114000000000,\"emitted_ns\":1795648114623649955,"
			       "\"from\":\"venue\",\"to\":\"algo\",\"count\":1215,\"min_ns\":3150,"
			       "\"p50_ns\":4833,\"p90_ns\":7471,\"p99_ns\":11537,\"p999_ns\":15098,"
			       "\"max_ns\":26135,\"mean_ns\":5342.3975308642,\"bound_ns\":3981,"
			       "\"out_of_sync\":0,\"flags\":[\"stalled\",\"late\"]}\n", &rec, &why), 1);
	ck_assert_int_eq(rec.type, REPORT_FREC_HOP);
	ck_assert_str_eq(rec.a, "venue");
	ck_assert_str_eq(rec.b, "algo");
	/* 19 digits, exact: more than a double holds. */
	ck_assert(rec.start_ns == 1795648113000000000LL);
	ck_assert(rec.end_ns == 1795648114000000000LL);
	ck_assert(rec.have_interval);
	ck_assert_uint_eq(rec.count, 1215);
	ck_assert(rec.have_q);
	ck_assert_int_eq(rec.p50_ns, 4833);
	ck_assert_int_eq(rec.p99_ns, 11537);
	ck_assert_str_eq(rec.flags, "stalled,late");
}
END_TEST

/* The shape since December 2026, as tapless correlate --follow --json writes it:
 * the figures in "latency_ns", as in the offline results. Its members
 * named as the old line's (p50_ns) are not read there. */
START_TEST(parse_hop_nested)
{
	struct report_frec rec;
	const char *why;

	ck_assert_int_eq(parse("{\"type\":\"hop\",\"start_ns\":1763900037000000000,"
			       "\"end_ns\":1763900037100000000,\"emitted_ns\":1795991265801346924,"
			       "\"from\":\"algo\",\"to\":\"venue\",\"latency_ns\":{\"count\":2,"
			       "\"min\":568,\"mean\":572,\"p50\":568,\"p90\":576,\"p99\":577,"
			       "\"p999\":578,\"max\":578,\"sd\":5.65685424949238},"
			       "\"sync_error_bound_ns\":null,\"out_of_sync\":{\"messages\":0},"
			       "\"holdover\":0,\"flags\":[\"late\"]}", &rec, &why), 1);
	ck_assert_int_eq(rec.type, REPORT_FREC_HOP);
	ck_assert_str_eq(rec.a, "algo");
	ck_assert_str_eq(rec.b, "venue");
	ck_assert_uint_eq(rec.count, 2);
	ck_assert(rec.have_q);
	ck_assert_int_eq(rec.p50_ns, 568);
	ck_assert_int_eq(rec.p99_ns, 577);
	ck_assert_str_eq(rec.flags, "late");
	/* No samples: figures null. */
	ck_assert_int_eq(parse("{\"type\":\"txn\",\"start_ns\":0,\"end_ns\":1,"
			       "\"kind\":\"tick_to_trade\",\"host\":\"algo\",\"latency_ns\":"
			       "{\"count\":0,\"min\":null,\"p50\":null,\"p99\":null}}",
			       &rec, &why), 1);
	ck_assert_uint_eq(rec.count, 0);
	ck_assert(!rec.have_q);
	/* Counted, but the percentiles under the old names inside: refused. */
	ck_assert_int_eq(parse("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,"
			       "\"end_ns\":1,\"latency_ns\":{\"count\":3,\"p50_ns\":1,"
			       "\"p99_ns\":2}}", &rec, &why), -EBADMSG);
	ck_assert_str_eq(why, "samples counted but no p50 and p99");
	/* An object "latency_ns" inside another is not the line's. */
	ck_assert_int_eq(parse("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,"
			       "\"end_ns\":1,\"out_of_sync\":{\"latency_ns\":{\"count\":3}}}",
			       &rec, &why), -EBADMSG);
	ck_assert_str_eq(why, "no count");
}
END_TEST

START_TEST(parse_txn)
{
	struct report_frec rec;
	const char *why;

	/* Keys in another order, blanks everywhere, unknown keys holding
	 * nested values (skipped whole, strings with brackets and quotes in
	 * them too), flags empty. */
	ck_assert_int_eq(parse(" { \"flags\" : [ ] , \"extra\" : {\"a\":[1,{\"b\":\"]}\\\"\"}],"
			       "\"c\":null}, \"count\" : 2 , \"p99_ns\" : 921088 ,\t\"host\":\"algo\","
			       "\"p50_ns\":29450, \"kind\":\"order_to_ack\", \"end_ns\":2000,"
			       "\"start_ns\":1000, \"type\":\"txn\", \"ok\":true, \"no\":false } \r\n",
			       &rec, &why), 1);
	ck_assert_int_eq(rec.type, REPORT_FREC_TXN);
	ck_assert_str_eq(rec.a, "order_to_ack");
	ck_assert_str_eq(rec.b, "algo");
	ck_assert_int_eq(rec.start_ns, 1000);
	ck_assert_int_eq(rec.end_ns, 2000);
	ck_assert_uint_eq(rec.count, 2);
	ck_assert_int_eq(rec.p50_ns, 29450);
	ck_assert_int_eq(rec.p99_ns, 921088);
	ck_assert_str_eq(rec.flags, "");

	/* No samples: percentiles null, no flags key at all. */
	ck_assert_int_eq(parse("{\"type\":\"txn\",\"start_ns\":0,\"end_ns\":1000000000,"
			       "\"kind\":\"tick_to_trade\",\"host\":\"algo\",\"count\":0,"
			       "\"p50_ns\":null,\"p99_ns\":null,\"mean_ns\":null}", &rec, &why), 1);
	ck_assert(!rec.have_q);
	ck_assert_uint_eq(rec.count, 0);
	ck_assert_str_eq(rec.flags, "");
	/* flags null is no flags. */
	ck_assert_int_eq(parse("{\"type\":\"txn\",\"start_ns\":0,\"end_ns\":1,\"kind\":\"k\","
			       "\"host\":\"h\",\"count\":0,\"flags\":null}", &rec, &why), 1);
	ck_assert_str_eq(rec.flags, "");
}
END_TEST

START_TEST(parse_forms)
{
	struct report_frec rec;
	const char *why;
	char line[512], longname[200];

	/* Numbers in other forms: a count as 1e3, percentiles with a
	 * fraction (rounded), a negative one-way p50. */
	ck_assert_int_eq(parse("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":-5,"
			       "\"end_ns\":5,\"count\":1e3,\"p50_ns\":-12.4,\"p99_ns\":99.5E0}",
			       &rec, &why), 1);
	ck_assert_uint_eq(rec.count, 1000);
	ck_assert_int_eq(rec.start_ns, -5);
	ck_assert_int_eq(rec.p50_ns, -12);
	ck_assert_int_eq(rec.p99_ns, 100);
	/* Escapes: \u of ASCII decoded, of anything else '?'; the others. */
	ck_assert_int_eq(parse("{\"type\":\"hop\",\"from\":\"\\u0076enue\\/1\",\"to\":\"caf\\u00e9\\t\","
			       "\"start_ns\":0,\"end_ns\":1,\"count\":0}", &rec, &why), 1);
	ck_assert_str_eq(rec.a, "venue/1");
	ck_assert_str_eq(rec.b, "caf?\t");
	/* A key twice: the last counts. */
	ck_assert_int_eq(parse("{\"type\":\"event\",\"type\":\"hop\",\"from\":\"x\",\"from\":\"y\","
			       "\"to\":\"z\",\"start_ns\":0,\"end_ns\":1,\"count\":0}", &rec, &why), 1);
	ck_assert_str_eq(rec.a, "y");
	/* A name longer than the report keeps: cut, not refused. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	snprintf(line, sizeof(line), "{\"type\":\"hop\",\"from\":\"%s\",\"to\":\"b\","
		 "\"start_ns\":0,\"end_ns\":1,\"count\":0}", longname);
	ck_assert_int_eq(parse(line, &rec, &why), 1);
	ck_assert_uint_eq(strlen(rec.a), REPORT_NAME - 1);
	/* More flags than rec->flags holds: those that fit. */
	ck_assert_int_eq(parse("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,"
			       "\"end_ns\":1,\"count\":0,\"flags\":[\"stalled\",1,{\"x\":1},"
			       "\"late\"]}", &rec, &why), 1);
	ck_assert_str_eq(rec.flags, "stalled,late");
}
END_TEST

START_TEST(parse_other)
{
	struct report_frec rec;
	const char *why;

	ck_assert_int_eq(parse("{\"type\":\"event\",\"event\":\"stalled\",\"host\":\"venue\","
			       "\"time_ns\":0,\"count\":0,\"detail\":\"no new data for 2030 ms\"}",
			       &rec, &why), 0);
	ck_assert(!rec.have_interval);
	/* A host line: not drawn, but its interval is the stream's. */
	ck_assert_int_eq(parse("{\"type\":\"host\",\"start_ns\":1795648112000000000,"
			       "\"end_ns\":1795648113000000000,\"host\":\"algo\",\"state\":\"stalled\","
			       "\"packets\":0,\"flags\":[\"stalled\"]}", &rec, &why), 0);
	ck_assert(rec.have_interval);
	ck_assert(rec.start_ns == 1795648112000000000LL);
	ck_assert_int_eq(parse("{\"type\":\"alert\",\"rule\":\"tick_to_trade.p99>50us\","
			       "\"state\":\"firing\",\"value\":51000,\"threshold\":50000}", &rec, &why), 0);
	ck_assert_int_eq(parse("{\"type\":\"switch\",\"switch\":\"swemu\",\"start_ns\":0}",
			       &rec, &why), 0);
	/* A type of a later version. */
	ck_assert_int_eq(parse("{\"type\":\"future\",\"what\":[1,2,3]}", &rec, &why), 0);
}
END_TEST

START_TEST(parse_bad)
{
	static const char nul[] = "{\"type\":\"hop\",\"from\":\"a\0b\",\"to\":\"b\","
		"\"start_ns\":0,\"end_ns\":1,\"count\":0}";
	char deep[400];
	size_t n = 0;

	BAD("");
	BAD("   ");
	BAD("garbage");
	BAD("[1,2]");
	BAD("\"type\"");
	BAD("{");
	BAD("{}");			/* no type */
	BAD("{\"type\":1}");
	BAD("{\"type\":\"hop\",\"start_ns\":1");	/* cut short */
	BAD("{\"type\":\"hop\",\"from\":\"a");
	BAD("{\"type\":\"hop\",\"from\":\"a\\");
	BAD("{\"type\":\"hop\",\"from\":\"a\\x\"}");	/* bad escape */
	BAD("{\"type\":\"hop\",\"from\":\"a\\u12\"}");
	BAD("{\"type\":\"hop\",\"from\":\"a\nb\"}");	/* control character */
	BAD("{\"type\" \"hop\"}");
	BAD("{\"type\":\"hop\" \"from\":\"a\"}");
	BAD("{\"type\":\"hop\",}");
	BAD("{type:\"hop\"}");
	BAD("{\"type\":\"hop\",\"count\":01}");
	BAD("{\"type\":\"hop\",\"count\":-}");
	BAD("{\"type\":\"hop\",\"count\":1.}");
	BAD("{\"type\":\"hop\",\"count\":1e}");
	BAD("{\"type\":\"hop\",\"count\":tru}");
	BAD("{\"type\":\"hop\",\"x\":[1,2}");
	BAD("{\"type\":\"event\"} {\"type\":\"event\"}");	/* two objects */
	BAD("{\"type\":\"event\"} x");
	bad(nul, sizeof(nul) - 1);
	/* A hop or txn line without what it must have. */
	BAD("{\"type\":\"hop\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":1,\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"txn\",\"host\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":1,\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":\"0\",\"end_ns\":1,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1e300,\"count\":0}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":-1}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":3,"
	    "\"p50_ns\":null,\"p99_ns\":5}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":3,"
	    "\"p50_ns\":4}");
	BAD("{\"type\":\"hop\",\"from\":\"a\",\"to\":\"b\",\"start_ns\":0,\"end_ns\":1,\"count\":0,"
	    "\"flags\":\"stalled\"}");
	/* Nested deeper than any line of the stream: refused, not recursed
	 * into. */
	n += (size_t)snprintf(deep, sizeof(deep), "{\"type\":\"event\",\"x\":");
	while (n < 300)
		deep[n++] = '[';
	while (n < 390)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = 0;
	BAD(deep);
}
END_TEST

/* Random bytes, and a good line cut at every length and with each byte
 * changed: never a crash or a read past the end (ASan watches), and a
 * cut line is never taken. */
START_TEST(parse_noise)
{
	static const char good[] = "{\"type\":\"hop\",\"start_ns\":1000,\"end_ns\":2000,"
		"\"from\":\"venue\",\"to\":\"algo\",\"count\":12,\"p50_ns\":4833,"
		"\"p99_ns\":11537,\"flags\":[\"late\"]}";
	struct report_frec rec;
	const char *why;
	char buf[sizeof(good)];
	unsigned seed = 22;

	for (size_t len = 0; len < sizeof(good) - 1; len++) {
		char *cut = malloc(len ? len : 1);	/* exactly len bytes */

		memcpy(cut, good, len);
		ck_assert_int_eq(report_follow_parse(cut, len, &rec, &why), -EBADMSG);
		free(cut);
	}
	for (size_t i = 0; i < sizeof(good) - 1; i++)
		for (int c = 0; c < 256; c += 7) {
			memcpy(buf, good, sizeof(good));
			buf[i] = (char)c;
			(void)report_follow_parse(buf, sizeof(good) - 1, &rec, &why);
		}
	for (int k = 0; k < 20000; k++) {
		size_t len = (size_t)(rand_r(&seed) % 64);
		char *b = malloc(len ? len : 1);

		for (size_t i = 0; i < len; i++) {
			static const char alpha[] = "{}[]\":,0123456789-.eE+ \\untrlfasx";

			b[i] = rand_r(&seed) % 4 ? alpha[rand_r(&seed) % (sizeof(alpha) - 1)] :
						   (char)rand_r(&seed);
		}
		(void)report_follow_parse(b, len, &rec, &why);
		free(b);
	}
}
END_TEST

/* ---- the loader and the data files ---- */

static void put(const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unit_write_file(path, text);
}

static char *slurp(const char *name)
{
	char path[256], *text = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(getdelim(&text, &cap, 0, f), 0);
	fclose(f);
	return text;
}

/* Stamps of 19 digits: S, then the second, then the nanoseconds. */
#define S "179564811"
#define HOP(t, n, p50, p99, fl) "{\"type\":\"hop\",\"start_ns\":" S t "000000000,\"end_ns\":" \
	S t "999999999,\"from\":\"venue\",\"to\":\"algo\",\"count\":" n ",\"p50_ns\":" p50 \
	",\"p99_ns\":" p99 ",\"flags\":[" fl "]}\n"

START_TEST(load_write)
{
	struct report *r;
	char err[REPORT_ERRBUF] = "", out[128];
	const char *n;
	bool w, noted = false;
	char *text;

	put("lab.conf", "rates 1000\nfollow 1\n");
	put("follow.jsonl",
	    /* A host line first: the stream's first interval, 0 s. */
	    "{\"type\":\"host\",\"start_ns\":" S "0000000000,\"end_ns\":" S "0999999999,"
	    "\"host\":\"algo\",\"flags\":[\"stalled\"]}\n"
	    HOP("1", "10", "4000", "9000", "\"stalled\",\"late\"")
	    "{\"type\":\"txn\",\"start_ns\":" S "1000000000,\"end_ns\":" S "1999999999,"
	    "\"kind\":\"tick_to_trade\",\"host\":\"algo\",\"count\":1,\"p50_ns\":35000,"
	    "\"p99_ns\":35000,\"flags\":[\"late\"]}\n"
	    "{\"type\":\"txn\",\"start_ns\":" S "1000000000,\"end_ns\":" S "1999999999,"
	    "\"kind\":\"fill_to_sell\",\"host\":\"algo\",\"count\":1,\"p50_ns\":5,\"p99_ns\":5}\n"
	    "{\"type\":\"hop\",\"start_ns\":\n"
	    "\n"
	    HOP("2", "0", "null", "null", "\"restart\"")
	    HOP("3", "3", "-20", "5000", "")
	    /* Interval 4 is missing: a gap. */
	    HOP("5", "4", "4100", "8000", "")
	    "{\"type\":\"event\",\"event\":\"stalled\",\"host\":\"venue\",\"time_ns\":0}\n"
	    "not json at all\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(r->follow.present);
	ck_assert(r->follow.have);
	ck_assert_uint_eq(r->follow.lines, 10);	/* not the blank one */
	ck_assert_uint_eq(r->follow.bad, 2);
	ck_assert_uint_eq(r->follow.used, 5);	/* 4 hop, 1 tick to trade */
	ck_assert_uint_eq(r->follow.other, 3);	/* host, fill_to_sell, event */
	ck_assert_uint_eq(r->follow.ns, 2);
	ck_assert(r->follow.s[0].hop);
	ck_assert(!r->follow.s[1].hop);
	ck_assert_str_eq(r->follow.s[1].a, "algo");
	ck_assert_uint_eq(r->follow.s[0].intervals, 3);
	ck_assert_uint_eq(r->follow.flagged, 2);
	ck_assert_str_eq(r->follow.flags, "stalled,late,restart");
	ck_assert(r->follow.interval_ns == 999999999);
	for (size_t i = 0; (n = report_note(r, i, &w)); i++)
		if (strstr(n, "follow.jsonl:5: ") && strstr(n, "2 such lines of 10")) {
			noted = true;
			ck_assert(w);
		}
	ck_assert_msg(noted, "no note of the bad line 5");

	snprintf(out, sizeof(out), "%s/rep", dir);
	ck_assert_int_eq(report_write_data(r, out, err), 0);
	text = slurp("rep/data/follow-1.dat");
	/* Seconds from the host line's interval; blank lines where the
	 * interval had no samples and where one is missing; a value that
	 * is no point on a log axis as '-'. */
	ck_assert_ptr_nonnull(strstr(text, ")\n1.000 4000 9000 10 1 stalled,late\n\n"
				     "3.000 - 5000 3 0 -\n\n5.000 4100 8000 4 0 -\n"));
	free(text);
	text = slurp("rep/data/follow-2.dat");
	ck_assert_ptr_nonnull(strstr(text, "tick to trade at algo"));
	ck_assert_ptr_nonnull(strstr(text, "\n1.000 35000 35000 1 1 late\n"));
	free(text);
	text = slurp("rep/data/follow-flags.dat");
	ck_assert_ptr_nonnull(strstr(text, "\n1.000 1.000 stalled,late\n2.000 1.000 restart\n"));
	free(text);
	{
		char v[256];

		report_follow_value(r, "FOLLOW_HOPS", v, sizeof(v));
		ck_assert_str_eq(v, "1");
		report_follow_value(r, "FOLLOW_HOP_NAMES", v, sizeof(v));
		ck_assert_str_eq(v, "venue→algo");
		report_follow_value(r, "FOLLOW_TXN", v, sizeof(v));
		ck_assert_str_eq(v, "2");
		report_follow_value(r, "FOLLOW_FLAGS", v, sizeof(v));
		ck_assert_str_eq(v, "stalled, late, restart");
		report_follow_value(r, "FOLLOW_FLAGGED", v, sizeof(v));
		ck_assert_str_eq(v, "1");
	}
	ck_assert(report_plot_wanted(r, P_FOLLOW, &n));
	report_destroy(r);
}
END_TEST

START_TEST(load_none)
{
	struct report *r;
	char err[REPORT_ERRBUF] = "";
	const char *why;

	/* No stream: the plot is not wanted, and says why. */
	put("lab.conf", "rates 1000\n");
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(!r->follow.present);
	ck_assert(!report_plot_wanted(r, P_FOLLOW, &why));
	ck_assert_ptr_nonnull(strstr(why, "--follow"));
	report_destroy(r);

	/* A stream with no sample in it. */
	put("follow.jsonl", HOP("1", "0", "null", "null", "\"stalled\""));
	ck_assert_int_eq(report_load(&r, dir, err), 0);
	ck_assert(r->follow.present);
	ck_assert(!r->follow.have);
	ck_assert(!report_plot_wanted(r, P_FOLLOW, &why));
	ck_assert_ptr_nonnull(strstr(why, "no interval"));
	report_destroy(r);
}
END_TEST

static Suite *report_follow_suite(void)
{
	Suite *s = suite_create("report_follow");
	TCase *tc = tcase_create("parse");
	TCase *tl = tcase_create("load");

	tcase_add_test(tc, parse_hop);
	tcase_add_test(tc, parse_hop_nested);
	tcase_add_test(tc, parse_txn);
	tcase_add_test(tc, parse_forms);
	tcase_add_test(tc, parse_other);
	tcase_add_test(tc, parse_bad);
	tcase_add_test(tc, parse_noise);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tl, setup, teardown);
	tcase_add_test(tl, load_write);
	tcase_add_test(tl, load_none);
	suite_add_tcase(s, tl);
	return s;
}

UNIT_MAIN(report_follow_suite)
