/* test_record.c — the rows of tapless-records(5) and the export state
 * file: a RowBinary row walked back column by column from the column
 * table's types (so encoder and table cannot drift apart), a TSV row and
 * a JSON row checked byte for byte, escapes of awkward bytes, dates across
 * month and year ends, transactions; the state file written and read back,
 * refused for another host, input or destination, and a bad line named. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>

#include "corr/corr.h"
#include "export/expstate.h"
#include "export/record.h"
#include "files/frame.h"
#include "unit.h"

static struct frame_flow flow;
static struct corr_record rec;

/* 2026-11-26 01:02:03.000000123 UTC, and a message's fields. */
#define TS 1795654923000000123LL

static void set_field(int k, const char *v)
{
	rec.field[k] = v;
	rec.field_len[k] = (uint32_t)strlen(v);
}

static void make_record(void)
{
	memset(&flow, 0, sizeof(flow));
	flow.family = AF_INET;
	flow.proto = 6;
	inet_pton(AF_INET, "198.18.0.1", flow.src);
	inet_pton(AF_INET, "198.18.0.2", flow.dst);
	flow.sport = 40001;
	flow.dport = 9001;
	memset(&rec, 0, sizeof(rec));
	rec.iface = "eth1";
	rec.dir = 2;
	rec.flow = &flow;
	rec.seq = 4000000000u;
	set_field(CORR_REC_35, "D");
	set_field(CORR_REC_49, "ALGO");
	set_field(CORR_REC_56, "VENUE");
	set_field(CORR_REC_34, "1234");
	set_field(CORR_REC_11, "ord\t1\\x\n");
	set_field(CORR_REC_55, "\"Ü\"");
	set_field(CORR_REC_54, "1");
	rec.ts = TS;
	rec.ts_last = TS + 5;
	rec.wire = 140;
	rec.hw = true;
	rec.sender = false;
	rec.sync = 1;
	rec.bound_ns = 42;
	rec.file = "/cap/algo-000001.pcapng";
	rec.offset = 808;
}

static uint64_t get_le(const unsigned char **p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	return v;
}

/* Walk one RowBinary row by the column types; each value into vals[i]
 * (numbers) or strs[i] (strings). Returns the bytes used. */
static size_t walk(const struct record_column *cols, const unsigned char *p,
		   size_t len, uint64_t *vals, char strs[][64])
{
	const unsigned char *start = p;

	for (unsigned i = 0; cols[i].name; i++) {
		const char *t = cols[i].type;

		ck_assert_uint_lt((size_t)(p - start), len);
		if (!strcmp(t, "String")) {
			uint64_t n = 0;
			unsigned sh = 0;

			do {
				n |= (uint64_t)(*p & 0x7f) << sh;
				sh += 7;
			} while (*p++ & 0x80);
			ck_assert_uint_lt(n, 64);
			memcpy(strs[i], p, n);
			strs[i][n] = '\0';
			p += n;
		} else if (!strcmp(t, "Date") || !strcmp(t, "UInt16")) {
			vals[i] = get_le(&p, 2);
		} else if (!strncmp(t, "Enum8", 5) || !strcmp(t, "UInt8")) {
			vals[i] = get_le(&p, 1);
		} else if (!strcmp(t, "UInt32")) {
			vals[i] = get_le(&p, 4);
		} else if (!strcmp(t, "UInt64") || !strcmp(t, "Int64")) {
			vals[i] = get_le(&p, 8);
		} else {
			ck_abort_msg("column %s: type %s unknown to the test",
				     cols[i].name, t);
		}
	}
	return (size_t)(p - start);
}

static int col(const struct record_column *cols, const char *name)
{
	for (int i = 0; cols[i].name; i++)
		if (!strcmp(cols[i].name, name))
			return i;
	ck_abort_msg("no column %s", name);
	return -1;
}

START_TEST(rowbinary_walks_back)
{
	struct record_buf b = { 0 };
	uint64_t v[64] = { 0 };
	char s[64][64] = { { 0 } };
	const struct record_column *c = record_columns;

	make_record();
	record_encode(&b, RECORD_ROWBINARY, "algo", &rec);
	record_encode(&b, RECORD_ROWBINARY, "algo", &rec);
	/* Two rows, each exactly as long as the columns say. */
	size_t one = walk(c, (unsigned char *)b.p, b.len, v, s);
	ck_assert_uint_eq(one * 2, b.len);
	ck_assert_uint_eq(v[col(c, "day")], (uint64_t)(TS / 86400000000000LL));
	ck_assert_str_eq(s[col(c, "host")], "algo");
	ck_assert_str_eq(s[col(c, "iface")], "eth1");
	ck_assert_uint_eq(v[col(c, "dir")], 2);
	ck_assert_uint_eq(v[col(c, "proto")], 6);
	ck_assert_str_eq(s[col(c, "src_addr")], "198.18.0.1");
	ck_assert_uint_eq(v[col(c, "src_port")], 40001);
	ck_assert_str_eq(s[col(c, "dst_addr")], "198.18.0.2");
	ck_assert_uint_eq(v[col(c, "dst_port")], 9001);
	ck_assert_uint_eq(v[col(c, "seq")], 4000000000u);
	ck_assert_str_eq(s[col(c, "sender_comp")], "ALGO");
	ck_assert_str_eq(s[col(c, "target_comp")], "VENUE");
	ck_assert_uint_eq(v[col(c, "msg_seq")], 1234);
	ck_assert_str_eq(s[col(c, "msg_type")], "D");
	ck_assert_str_eq(s[col(c, "cl_ord_id")], "ord\t1\\x\n");
	ck_assert_str_eq(s[col(c, "ord_status")], "");
	ck_assert_uint_eq(v[col(c, "ts")], (uint64_t)TS);
	ck_assert_uint_eq(v[col(c, "ts_last")], (uint64_t)TS + 5);
	ck_assert_uint_eq(v[col(c, "wire")], 140);
	ck_assert_uint_eq(v[col(c, "stamp")], 1);
	ck_assert_uint_eq(v[col(c, "stamped_by")], 0);
	ck_assert_uint_eq(v[col(c, "sync")], 1);
	ck_assert_uint_eq(v[col(c, "bound_ns")], 42);
	ck_assert_str_eq(s[col(c, "file")], "/cap/algo-000001.pcapng");
	ck_assert_uint_eq(v[col(c, "offset")], 808);
	record_buf_free(&b);
}
END_TEST

START_TEST(tsv_row)
{
	struct record_buf b = { 0 };

	make_record();
	rec.bound_ns = -1;
	set_field(CORR_REC_34, "12x");	/* not a number: 0 */
	record_header(&b, RECORD_TSV, record_columns);
	record_encode(&b, RECORD_TSV, "algo", &rec);
	b.p[b.len] = '\0';	/* the buffer has room: it grew in 64 KiB */
	ck_assert_str_eq(b.p,
		"day\thost\tiface\tdir\tproto\tsrc_addr\tsrc_port\tdst_addr\t"
		"dst_port\tseq\tsender_comp\ttarget_comp\tmsg_seq\tmsg_type\t"
		"cl_ord_id\tsymbol\tside\tord_status\tts\tts_last\twire\tstamp\t"
		"stamped_by\tsync\tbound_ns\tfile\toffset\n"
		"2026-11-26\talgo\teth1\tout\t6\t198.18.0.1\t40001\t198.18.0.2\t"
		"9001\t4000000000\tALGO\tVENUE\t0\tD\tord\\t1\\\\x\\n\t\"Ü\"\t1\t\t"
		"1795654923000000123\t1795654923000000128\t140\thw\tcapture\tin\t"
		"-1\t/cap/algo-000001.pcapng\t808\n");
	record_buf_free(&b);
}
END_TEST

START_TEST(json_row)
{
	struct record_buf b = { 0 };

	make_record();
	rec.sync = 2;
	rec.sender = true;
	rec.hw = false;
	rec.file = NULL;
	record_header(&b, RECORD_JSON, record_columns);	/* nothing */
	ck_assert_uint_eq(b.len, 0);
	record_encode(&b, RECORD_JSON, "al\"go", &rec);
	b.p[b.len] = '\0';
	ck_assert_str_eq(b.p,
		"{\"day\":\"2026-11-26\",\"host\":\"al\\\"go\",\"iface\":\"eth1\","
		"\"dir\":\"out\",\"proto\":6,\"src_addr\":\"198.18.0.1\","
		"\"src_port\":40001,\"dst_addr\":\"198.18.0.2\",\"dst_port\":9001,"
		"\"seq\":4000000000,\"sender_comp\":\"ALGO\",\"target_comp\":"
		"\"VENUE\",\"msg_seq\":1234,\"msg_type\":\"D\",\"cl_ord_id\":"
		"\"ord\\u00091\\\\x\\u000a\",\"symbol\":\"\\\"\\u00c3\\u009c\\\"\","
		"\"side\":\"1\",\"ord_status\":\"\",\"ts\":1795654923000000123,"
		"\"ts_last\":1795654923000000128,\"wire\":140,\"stamp\":\"sw\","
		"\"stamped_by\":\"sender\",\"sync\":\"out\",\"bound_ns\":42,"
		"\"file\":\"\",\"offset\":808}\n");
	record_buf_free(&b);
}
END_TEST

/* Holdover: value 3 in RowBinary (the Enum8's), "holdover" in text; a
 * sync beyond the Enum8's values is written as none. */
START_TEST(sync_holdover)
{
	struct record_buf b = { 0 };
	uint64_t v[64] = { 0 };
	char s[64][64] = { { 0 } };
	const struct record_column *c = record_columns;

	make_record();
	rec.sync = 3;
	record_encode(&b, RECORD_ROWBINARY, "algo", &rec);
	ck_assert_uint_eq(walk(c, (unsigned char *)b.p, b.len, v, s), b.len);
	ck_assert_uint_eq(v[col(c, "sync")], 3);
	ck_assert_ptr_nonnull(strstr(c[col(c, "sync")].type, "'holdover' = 3"));
	record_buf_reset(&b);
	record_encode(&b, RECORD_JSON, "algo", &rec);
	b.p[b.len] = '\0';
	ck_assert_ptr_nonnull(strstr(b.p, "\"sync\":\"holdover\",\"bound_ns\":42,"));
	record_buf_reset(&b);
	rec.sync = 4;
	record_encode(&b, RECORD_JSON, "algo", &rec);
	b.p[b.len] = '\0';
	ck_assert_ptr_nonnull(strstr(b.p, "\"sync\":\"none\","));
	record_buf_free(&b);
}
END_TEST

/* Dates at the edges of months, leap days and years. */
START_TEST(dates)
{
	static const struct { int64_t day; const char *txt; } d[] = {
		{ 0, "1970-01-01" }, { 59, "1970-03-01" },
		{ 11016, "2000-02-29" }, { 11017, "2000-03-01" },
		{ 20453, "2025-12-31" }, { 20454, "2026-01-01" },
	};

	make_record();
	for (unsigned i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct record_buf b = { 0 };

		rec.ts = d[i].day * 86400000000000LL + 1;
		record_encode(&b, RECORD_TSV, "h", &rec);
		ck_assert_msg(!strncmp(b.p, d[i].txt, 10), "day %lld: %.10s",
			      (long long)d[i].day, b.p);
		record_buf_free(&b);
	}
}
END_TEST

START_TEST(transactions)
{
	struct record_buf b = { 0 };
	uint64_t v[16] = { 0 };
	char s[16][64] = { { 0 } };
	const struct record_column *c = record_txn_columns;

	record_encode_txn(&b, RECORD_ROWBINARY, "algo", "order_to_fill", TS,
			  3304);
	ck_assert_uint_eq(walk(c, (unsigned char *)b.p, b.len, v, s), b.len);
	ck_assert_uint_eq(v[col(c, "kind")], 3);
	ck_assert_uint_eq(v[col(c, "latency_ns")], 3304);
	ck_assert_uint_eq(v[col(c, "computed_by")], 0);
	record_buf_reset(&b);
	record_encode_txn(&b, RECORD_TSV, "algo", "fill_to_sell", TS, 7);
	b.p[b.len] = '\0';
	ck_assert_str_eq(b.p, "2026-11-26\talgo\tfill_to_sell\t"
			 "1795654923000000123\t7\thost\n");
	record_buf_free(&b);
}
END_TEST

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "record");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

START_TEST(state_round_trip)
{
	char path[128], err[EXPSTATE_ERRBUF];
	struct expstate st = { 0 }, got;

	snprintf(path, sizeof(path), "%s/h.state", dir);
	ck_assert_int_eq(expstate_load(path, "h", "/in", "u t", &got, err),
			 -ENOENT);
	st.records = 5034;
	st.txns = 30;
	st.have_at = true;
	snprintf(st.at_file, sizeof(st.at_file), "/cap/a b/x-000002.pcapng");
	st.at_offset = 1195756;
	st.at_index = 3;
	ck_assert_int_eq(expstate_save(path, "h", "/in", "http://x/ t", &st,
				       err), 0);
	ck_assert_int_eq(expstate_load(path, "h", "/in", "http://x/ t", &got,
				       err), 0);
	ck_assert_uint_eq(got.records, 5034);
	ck_assert_uint_eq(got.txns, 30);
	ck_assert(got.have_at);
	ck_assert_str_eq(got.at_file, "/cap/a b/x-000002.pcapng");
	ck_assert_uint_eq(got.at_offset, 1195756);
	ck_assert_uint_eq(got.at_index, 3);
	/* Another host's, input's or destination's state is refused. */
	ck_assert_int_eq(expstate_load(path, "g", "/in", "http://x/ t", &got,
				       err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "host 'h'"));
	ck_assert_int_eq(expstate_load(path, "h", "/other", "http://x/ t",
				       &got, err), -EINVAL);
	ck_assert_int_eq(expstate_load(path, "h", "/in", "http://y/ t", &got,
				       err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":5:"));
}
END_TEST

START_TEST(state_bad)
{
	char path[128], err[EXPSTATE_ERRBUF];
	struct expstate got;

	snprintf(path, sizeof(path), "%s/bad.state", dir);
	unit_write_file(path, "version 1\nhost h\ninput /in\n"
			"destination d\nrecords many\n");
	ck_assert_int_eq(expstate_load(path, "h", "/in", "d", &got, err),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad.state:5:"));
	unit_write_file(path, "version 1\nhost h\ninput /in\n");
	ck_assert_int_eq(expstate_load(path, "h", "/in", "d", &got, err),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a whole"));
	unit_write_file(path, "version 2\nhost h\ninput /in\ndestination d\n"
			"records 1\n");
	ck_assert_int_eq(expstate_load(path, "h", "/in", "d", &got, err),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "another version"));
	unit_write_file(path, "version 1\nhost h\ninput /in\ndestination d\n"
			"records 1\nat nospaces\n");
	ck_assert_int_eq(expstate_load(path, "h", "/in", "d", &got, err),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":6:"));
}
END_TEST

static Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");
	TCase *ts = tcase_create("state");

	tcase_add_test(tc, rowbinary_walks_back);
	tcase_add_test(tc, tsv_row);
	tcase_add_test(tc, json_row);
	tcase_add_test(tc, sync_holdover);
	tcase_add_test(tc, dates);
	tcase_add_test(tc, transactions);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_test(ts, state_round_trip);
	tcase_add_test(ts, state_bad);
	suite_add_tcase(s, ts);
	return s;
}

UNIT_MAIN(record_suite)
