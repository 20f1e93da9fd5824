/* record.h — the rows tapless export writes (tapless-records(5)): one per
 * FIX message seen at a host (tapless.records), one per transaction the
 * host's correlator computed (tapless.transactions), encoded for
 * ClickHouse's RowBinary, for TabSeparated (TSV) or for JSON lines.
 *
 * The column tables below are the format: the encoders write exactly
 * these columns in this order, scripts/clickhouse/schema.sql creates them,
 * and the exporter checks a server's table against them before inserting.
 */
#ifndef TAPLESS_RECORD_H
#define TAPLESS_RECORD_H

#include <stddef.h>
#include <stdint.h>

struct corr_record;

enum record_format { RECORD_ROWBINARY, RECORD_TSV, RECORD_JSON };

struct record_column {
	const char *name;
	const char *type;	/* as ClickHouse's DESCRIBE TABLE says it */
};

/* The columns of each table, ending with a { NULL, NULL }. */
extern const struct record_column record_columns[];
extern const struct record_column record_txn_columns[];

/* A growing byte buffer (rows of one batch). */
struct record_buf {
	char *p;
	size_t len, cap;
};

void record_buf_reset(struct record_buf *b);
void record_buf_free(struct record_buf *b);
/* n more bytes at its end. */
void record_buf_add(struct record_buf *b, const void *p, size_t n);

/* The header line a TSV file starts with (TabSeparatedWithNames); nothing
 * for the other formats. */
void record_header(struct record_buf *b, enum record_format fmt,
		   const struct record_column *cols);

/* One row of tapless.records: r seen at host. */
void record_encode(struct record_buf *b, enum record_format fmt,
		   const char *host, const struct corr_record *r);

/* One row of tapless.transactions. */
void record_encode_txn(struct record_buf *b, enum record_format fmt,
		       const char *host, const char *kind, int64_t ts_ns,
		       int64_t latency_ns);

/* The transaction kinds, in their Enum8's order (their values). */
extern const char *const record_txn_kinds[];

#endif
