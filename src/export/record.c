/* record.c — see record.h. Rows are written straight into the batch's
 * buffer, field by field: no allocation per row once the buffer has grown
 * to a batch.
 */
#include "export/record.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr/corr.h"
#include "files/frame.h"
#include "base/xalloc.h"

#define NS_PER_DAY 86400000000000LL

const struct record_column record_columns[] = {
	{ "day", "Date" },
	{ "host", "String" },
	{ "iface", "String" },
	{ "dir", "Enum8('unknown' = 0, 'in' = 1, 'out' = 2)" },
	{ "proto", "UInt8" },
	{ "src_addr", "String" },
	{ "src_port", "UInt16" },
	{ "dst_addr", "String" },
	{ "dst_port", "UInt16" },
	{ "seq", "UInt32" },
	{ "sender_comp", "String" },
	{ "target_comp", "String" },
	{ "msg_seq", "UInt64" },
	{ "msg_type", "String" },
	{ "cl_ord_id", "String" },
	{ "symbol", "String" },
	{ "side", "String" },
	{ "ord_status", "String" },
	{ "ts", "Int64" },
	{ "ts_last", "Int64" },
	{ "wire", "UInt32" },
	{ "stamp", "Enum8('sw' = 0, 'hw' = 1)" },
	{ "stamped_by", "Enum8('capture' = 0, 'sender' = 1)" },
	{ "sync", "Enum8('none' = 0, 'in' = 1, 'out' = 2, 'holdover' = 3)" },
	{ "bound_ns", "Int64" },
	{ "file", "String" },
	{ "offset", "UInt64" },
	{ NULL, NULL }
};

const struct record_column record_txn_columns[] = {
	{ "day", "Date" },
	{ "host", "String" },
	{ "kind", "Enum8('tick_to_trade' = 0, 'fill_to_sell' = 1, "
		  "'order_to_ack' = 2, 'order_to_fill' = 3)" },
	{ "ts", "Int64" },
	{ "latency_ns", "Int64" },
	{ "computed_by", "Enum8('host' = 0)" },
	{ NULL, NULL }
};

const char *const record_txn_kinds[] = {
	"tick_to_trade", "fill_to_sell", "order_to_ack", "order_to_fill", NULL
};

static const char *const dir_names[] = { "unknown", "in", "out" };
static const char *const sync_names[] = { "none", "in", "out", "holdover" };

void record_buf_reset(struct record_buf *b)
{
	b->len = 0;
}

void record_buf_free(struct record_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static char *need(struct record_buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;

		while (cap < b->len + n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

void record_buf_add(struct record_buf *b, const void *p, size_t n)
{
	memcpy(need(b, n), p, n);
	b->len += n;
}

/* ---- one writer per format: the same calls, column after column ---- */

struct rw {
	struct record_buf *b;
	enum record_format fmt;
	const struct record_column *first;
	const struct record_column *col;	/* the next column */
};

static void rw_sep(struct rw *w)
{
	const char *name = w->col->name;
	size_t n;
	char *p;

	if (w->fmt == RECORD_TSV) {
		if (w->col != w->first)
			record_buf_add(w->b, "\t", 1);
	} else if (w->fmt == RECORD_JSON) {
		/* Only JSON names its columns: strlen() of every column's
		 * name for every row was a tenth of a RowBinary row. */
		n = strlen(name);
		p = need(w->b, n + 5);
		*p++ = w->col == w->first ? '{' : ',';
		*p++ = '"';
		memcpy(p, name, n);
		p += n;
		*p++ = '"';
		*p++ = ':';
		w->b->len = (size_t)(p - w->b->p);
	}
	w->col++;
}

static void rw_end(struct rw *w)
{
	if (w->fmt == RECORD_TSV)
		record_buf_add(w->b, "\n", 1);
	else if (w->fmt == RECORD_JSON)
		record_buf_add(w->b, "}\n", 2);
}

static void rw_uint(struct rw *w, uint64_t v, unsigned bytes)
{
	rw_sep(w);
	if (w->fmt == RECORD_ROWBINARY) {
		/* Little-endian, as the machine is. */
		record_buf_add(w->b, &v, bytes);
		return;
	}
	char *p = need(w->b, 24);
	w->b->len += (size_t)snprintf(p, 24, "%llu", (unsigned long long)v);
}

static void rw_int(struct rw *w, int64_t v)
{
	rw_sep(w);
	if (w->fmt == RECORD_ROWBINARY) {
		record_buf_add(w->b, &v, 8);
		return;
	}
	char *p = need(w->b, 24);
	w->b->len += (size_t)snprintf(p, 24, "%lld", (long long)v);
}

/* TSV escapes as ClickHouse's TabSeparated reads it back; JSON escapes
 * control characters and, so that any byte survives as valid UTF-8, every
 * byte above 0x7f as \u00XX (Latin-1): FIX values are ASCII in practice. */
static void rw_str(struct rw *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *p;

	rw_sep(w);
	if (!s)
		n = 0;
	if (w->fmt == RECORD_ROWBINARY) {
		uint64_t v = n;

		p = need(w->b, 10 + n);
		do {
			*p++ = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		if (n)
			memcpy(p, s, n);
		w->b->len = (size_t)(p - w->b->p) + n;
		return;
	}
	p = need(w->b, 6 * n + 2);
	if (w->fmt == RECORD_JSON)
		*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (w->fmt == RECORD_TSV) {
			switch (c) {
			case '\t': *p++ = '\\'; *p++ = 't'; continue;
			case '\n': *p++ = '\\'; *p++ = 'n'; continue;
			case '\r': *p++ = '\\'; *p++ = 'r'; continue;
			case '\\': *p++ = '\\'; *p++ = '\\'; continue;
			case '\0': *p++ = '\\'; *p++ = '0'; continue;
			default: *p++ = (char)c; continue;
			}
		}
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20 || c > 0x7e) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 15];
			p += 6;
		} else {
			*p++ = (char)c;
		}
	}
	if (w->fmt == RECORD_JSON)
		*p++ = '"';
	w->b->len = (size_t)(p - w->b->p);
}

static void rw_cstr(struct rw *w, const char *s)
{
	rw_str(w, s, s ? strlen(s) : 0);
}

/* An Enum8: its value in RowBinary, its name in text. */
static void rw_enum(struct rw *w, int v,
		    const char *const *names)
{
	if (w->fmt == RECORD_ROWBINARY) {
		int8_t x = (int8_t)v;

		rw_sep(w);
		record_buf_add(w->b, &x, 1);
		return;
	}
	rw_cstr(w, names[v]);
}

/* A Date from a stamp: days since 1970 (UTC). */
static void rw_day(struct rw *w, int64_t ts)
{
	int64_t d = ts > 0 ? ts / NS_PER_DAY : 0;

	if (d > 65535)
		d = 65535;
	if (w->fmt == RECORD_ROWBINARY) {
		uint16_t x = (uint16_t)d;

		rw_sep(w);
		record_buf_add(w->b, &x, 2);
		return;
	}
	/* Civil date from days (Howard Hinnant's algorithm). */
	int64_t z = d + 719468, era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned day = doy - (153 * mp + 2) / 5 + 1;
	unsigned mon = mp < 10 ? mp + 3 : mp - 9;
	long long year = (long long)yoe + era * 400 + (mon <= 2);
	char txt[48];

	snprintf(txt, sizeof(txt), "%04lld-%02u-%02u", year, mon, day);
	rw_cstr(w, txt);
}

/* IPv4 as text without inet_ntop(): glibc formats it with sprintf(),
 * which took a fifth of a RowBinary row for the two addresses. */
static size_t ip4_text(char *p, const uint8_t *a)
{
	char *s = p;

	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];

		if (i)
			*p++ = '.';
		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
	}
	*p = '\0';
	return (size_t)(p - s);
}

static void rw_addr(struct rw *w, int family, const uint8_t *a)
{
	char txt[INET6_ADDRSTRLEN];

	if (family == AF_INET) {
		rw_str(w, txt, ip4_text(txt, a));
		return;
	}
	if (!inet_ntop(family, a, txt, sizeof(txt)))
		txt[0] = '\0';
	rw_cstr(w, txt);
}

/* MsgSeqNum as a number; 0 when absent or not all digits. */
static uint64_t field_uint(const char *s, uint32_t n)
{
	uint64_t v = 0;

	if (!s || !n || n > 19)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v;
}

void record_header(struct record_buf *b, enum record_format fmt,
		   const struct record_column *cols)
{
	if (fmt != RECORD_TSV)
		return;
	for (const struct record_column *c = cols; c->name; c++) {
		if (c != cols)
			record_buf_add(b, "\t", 1);
		record_buf_add(b, c->name, strlen(c->name));
	}
	record_buf_add(b, "\n", 1);
}

void record_encode(struct record_buf *b, enum record_format fmt,
		   const char *host, const struct corr_record *r)
{
	const struct record_column *cols = record_columns;
	struct rw w = { b, fmt, cols, cols };
	const struct frame_flow *f = r->flow;
	int dir = r->dir >= 0 && r->dir <= 2 ? r->dir : 0;
	int sync = r->sync >= 0 && r->sync <= 3 ? r->sync : 0;

	rw_day(&w, r->ts);
	rw_cstr(&w, host);
	rw_cstr(&w, r->iface);
	rw_enum(&w, dir, dir_names);
	rw_uint(&w, f->proto, 1);
	rw_addr(&w, f->family, f->src);
	rw_uint(&w, f->sport, 2);
	rw_addr(&w, f->family, f->dst);
	rw_uint(&w, f->dport, 2);
	rw_uint(&w, r->seq, 4);
	rw_str(&w, r->field[CORR_REC_49], r->field_len[CORR_REC_49]);
	rw_str(&w, r->field[CORR_REC_56], r->field_len[CORR_REC_56]);
	rw_uint(&w, field_uint(r->field[CORR_REC_34],
				     r->field_len[CORR_REC_34]), 8);
	rw_str(&w, r->field[CORR_REC_35], r->field_len[CORR_REC_35]);
	rw_str(&w, r->field[CORR_REC_11], r->field_len[CORR_REC_11]);
	rw_str(&w, r->field[CORR_REC_55], r->field_len[CORR_REC_55]);
	rw_str(&w, r->field[CORR_REC_54], r->field_len[CORR_REC_54]);
	rw_str(&w, r->field[CORR_REC_39], r->field_len[CORR_REC_39]);
	rw_int(&w, r->ts);
	rw_int(&w, r->ts_last);
	rw_uint(&w, r->wire, 4);
	rw_enum(&w, r->hw, (const char *const[]){ "sw", "hw" });
	rw_enum(&w, r->sender,
		(const char *const[]){ "capture", "sender" });
	rw_enum(&w, sync, sync_names);
	rw_int(&w, r->bound_ns);
	rw_cstr(&w, r->file ? r->file : "");
	rw_uint(&w, r->offset, 8);
	rw_end(&w);
}

void record_encode_txn(struct record_buf *b, enum record_format fmt,
		       const char *host, const char *kind, int64_t ts_ns,
		       int64_t latency_ns)
{
	const struct record_column *cols = record_txn_columns;
	struct rw w = { b, fmt, cols, cols };
	int k = 0;

	while (record_txn_kinds[k] && strcmp(record_txn_kinds[k], kind))
		k++;
	if (!record_txn_kinds[k])
		k = 0;
	rw_day(&w, ts_ns);
	rw_cstr(&w, host);
	rw_enum(&w, k, record_txn_kinds);
	rw_int(&w, ts_ns);
	rw_int(&w, latency_ns);
	rw_enum(&w, 0, (const char *const[]){ "host" });
	rw_end(&w);
}
