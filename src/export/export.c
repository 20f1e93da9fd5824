/* export.c — see export.h. */
#include "export/export.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "corr/corr.h"
#include "export/backoff.h"
#include "export/chttp.h"
#include "export/expstate.h"
#include "base/errbuf.h"
#include "base/hmap.h"
#include "base/pidfile.h"
#include "base/nstime.h"
#include "base/print.h"
#include "base/xalloc.h"

#define EXPORT_BACKOFF_MIN_NS 100000000LL	/* 100 ms */
#define EXPORT_BACKOFF_MAX_NS 5000000000LL	/* 5 s */
#define EXPORT_TXQ 64		/* transactions found by one message */
#define EXPORT_SLICE_NS 50000000LL	/* a backoff's sleep, between looks
					 * at cfg.stop */

struct export_host {
	char *name, *input, *state_path;
	struct pidfile *lock;		/* state_path.lock, held for the run */
	struct expstate st;		/* what the database has */
	struct expstate pend;		/* ... once the batch is taken */
	uint64_t emitted;		/* records out of the correlator */
	unsigned batch_rows, batch_txns;	/* in the batch being filled */
	bool skipping;			/* following: before st's position */
	/* The reader's position now, and records out there so far. */
	char cur_file[EXPSTATE_PATH];
	uint64_t cur_offset, cur_index;
	/* Figures. */
	uint64_t sent, skipped, txns_sent, txns_skipped;
};

struct export_txn {
	unsigned host;
	const char *kind;
	int64_t ts, v;
};

/* A batch on its way to ClickHouse: the sender thread posts it while the
 * next one is read and encoded (the server's insert took more than half
 * the wall time when the two took turns). One at a time, so batches are
 * taken, and states saved, in order. The thread touches only this and
 * e->ch; the rest waits for export_reap(). */
struct export_sending {
	pthread_t thread;
	bool running;
	atomic_bool done;
	struct export *e;
	struct record_buf rows, txns;
	unsigned nrows, ntxns;
	/* Per host: its rows and transactions in it, its state once taken. */
	unsigned *host_rows, *host_txns;
	struct expstate *pend;
	/* What came of it. */
	int rc;
	uint64_t retries;
	char error[EXPORT_ERRBUF];
};

struct export {
	struct export_config cfg;
	struct corr *c;
	struct chttp *ch;
	char dest[1024];		/* URL (no credentials) and table */
	struct export_host *hosts;
	unsigned nhosts;
	struct record_buf rows, txns;
	unsigned nrows, ntxns;
	int64_t first_ns;		/* monotonic, when the batch began */
	struct export_txn *txq;		/* found, waiting for a record */
	size_t ntxq, cap_txq;
	bool last_skip;			/* the last record was already in */
	uint64_t batches, retries;
	struct export_sending snd;
	int err;
	char error[EXPORT_ERRBUF];
};

int export_create(struct export **out, const struct export_config *cfg)
{
	struct export *e = xcalloc(1, sizeof(*e));

	e->cfg = *cfg;
	if (!e->cfg.batch)
		e->cfg.batch = 100000;
	*out = e;
	return 0;
}

static void export_reap(struct export *e);

void export_destroy(struct export *e)
{
	if (!e)
		return;
	export_reap(e);
	for (unsigned i = 0; i < e->nhosts; i++) {
		free(e->hosts[i].name);
		free(e->hosts[i].input);
		free(e->hosts[i].state_path);
		pidfile_release(e->hosts[i].lock);
	}
	free(e->hosts);
	free(e->txq);
	chttp_destroy(e->ch);
	record_buf_free(&e->rows);
	record_buf_free(&e->txns);
	record_buf_free(&e->snd.rows);
	record_buf_free(&e->snd.txns);
	free(e->snd.host_rows);
	free(e->snd.host_txns);
	free(e->snd.pend);
	free(e);
}

static void export_fail(struct export *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void export_fail(struct export *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (e->err)
		return;
	e->err = err;
	va_start(ap, fmt);
	errbuf_vset(e->error, EXPORT_ERRBUF, err, fmt, ap);
	va_end(ap);
}

static void export_note(const struct export *e, int level, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));

static void export_note(const struct export *e, int level, const char *fmt,
			...)
{
	char msg[4096];		/* two paths and words */
	va_list ap;

	if (!e->cfg.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->cfg.note(e->cfg.note_arg, level, msg);
}

/* In slices, looking at cfg.stop between them: the sender thread does
 * not get the signals, which would have ended a sleep early. */
static void export_sleep(const struct export *e, int64_t ns)
{
	while (ns > 0 && !(e->cfg.stop && *e->cfg.stop)) {
		int64_t n = ns < EXPORT_SLICE_NS ? ns : EXPORT_SLICE_NS;
		struct timespec t = { (time_t)(n / 1000000000),
				      (long)(n % 1000000000) };

		nanosleep(&t, NULL);
		ns -= n;
	}
}

/* Send sql with body until the server takes it, or for good refuses it,
 * or we are told to stop or have waited retry_for. Returns 0 or a
 * negative errno with err set; counts its retries. Called from the
 * sender thread too: it writes nothing else of e. */
static int export_post_to(struct export *e, const char *sql,
			  const void *body, size_t len,
			  struct record_buf *resp, uint64_t *retries,
			  char err[EXPORT_ERRBUF])
{
	char cerr[CHTTP_ERRBUF];
	int64_t pause, start = 0, waited;
	struct backoff bo;
	int rc;

	/* Seeded by the process and the moment: exporters started together
	 * draw different pauses (backoff.h). */
	backoff_init(&bo, EXPORT_BACKOFF_MIN_NS, EXPORT_BACKOFF_MAX_NS,
		     (uint64_t)getpid() << 32 ^
		     (uint64_t)nstime_now(CLOCK_REALTIME));
	for (;;) {
		rc = chttp_post(e->ch, sql, body, len, resp, cerr);
		if (!rc) {
			if (start)
				export_note(e, LOG_WARNING, "ClickHouse at %s "
					    "answers again after %.1f s",
					    chttp_where(e->ch),
					    (double)(nstime_now(CLOCK_MONOTONIC) -
						     start) / 1e9);
			return 0;
		}
		if (rc != -EAGAIN)
			return errbuf_set(err, EXPORT_ERRBUF, rc, "%s", cerr);
		if (!start) {
			start = nstime_now(CLOCK_MONOTONIC);
			export_note(e, LOG_WARNING, "%s: waiting for it, "
				    "retrying (rows wait, none is dropped)", cerr);
		}
		waited = nstime_now(CLOCK_MONOTONIC) - start;
		if (e->cfg.stop && *e->cfg.stop)
			return errbuf_set(err, EXPORT_ERRBUF, -EINTR,
					  "stopped while waiting for ClickHouse "
					  "(%s): the rows not taken are sent by "
					  "the next run", cerr);
		if (e->cfg.retry_for_ns && waited >= e->cfg.retry_for_ns)
			return errbuf_set(err, EXPORT_ERRBUF, -ETIMEDOUT,
					  "%s: gave up after %.0f s (--retry-for)",
					  cerr, (double)waited / 1e9);
		(*retries)++;
		pause = backoff_next(&bo);
		/* The last pause ends at retry_for, not up to 5 s after it. */
		if (e->cfg.retry_for_ns && pause > e->cfg.retry_for_ns - waited)
			pause = e->cfg.retry_for_ns - waited;
		export_sleep(e, pause);
	}
}

/* From the main thread (DESCRIBE TABLE). */
static int export_post(struct export *e, const char *sql, const void *body,
		       size_t len, struct record_buf *resp)
{
	char err[EXPORT_ERRBUF];
	int rc = export_post_to(e, sql, body, len, resp, &e->retries, err);

	if (rc)
		export_fail(e, rc, "%s", err);
	return rc;
}

/* pend[i]: host i's state once its batch is taken. */
static void export_save_states(struct export *e, const struct expstate *pend)
{
	char err[EXPSTATE_ERRBUF];

	for (unsigned i = 0; i < e->nhosts; i++) {
		struct export_host *h = &e->hosts[i];

		if (!h->state_path ||
		    !memcmp(&h->st, &pend[i], sizeof(h->st)))
			continue;
		h->st = pend[i];
		if (expstate_save(h->state_path, h->name, h->input, e->dest,
				  &h->st, err))
			export_fail(e, -EIO, "%s", err);
	}
}

/* The sender thread: transactions first, then records. */
static void *export_send_main(void *arg)
{
	struct export_sending *snd = arg;
	struct export *e = snd->e;
	char sql[512];

	snd->rc = 0;
	if (snd->ntxns) {
		snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT RowBinary",
			 e->cfg.txn_table);
		snd->rc = export_post_to(e, sql, snd->txns.p, snd->txns.len,
					 NULL, &snd->retries, snd->error);
	}
	if (!snd->rc && snd->nrows) {
		snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT RowBinary",
			 e->cfg.table);
		snd->rc = export_post_to(e, sql, snd->rows.p, snd->rows.len,
					 NULL, &snd->retries, snd->error);
	}
	atomic_store(&snd->done, true);
	return NULL;
}

/* The batch on its way, once it is: its rows counted and the states
 * saved if it was taken, its error the export's if not. */
static void export_reap(struct export *e)
{
	struct export_sending *snd = &e->snd;

	if (!snd->running)
		return;
	pthread_join(snd->thread, NULL);
	snd->running = false;
	e->retries += snd->retries;
	snd->retries = 0;
	if (snd->rc) {
		export_fail(e, snd->rc, "%s", snd->error);
		return;
	}
	e->batches++;
	for (unsigned i = 0; i < e->nhosts; i++) {
		e->hosts[i].sent += snd->host_rows[i];
		e->hosts[i].txns_sent += snd->host_txns[i];
	}
	export_save_states(e, snd->pend);
}

/* The batch filled to the sender thread, once the one before is taken;
 * reading goes on into the buffers that one used. */
static int export_send(struct export *e)
{
	struct export_sending *snd = &e->snd;
	struct record_buf t;
	sigset_t all, old;
	int rc;

	export_reap(e);
	if (e->err)
		return e->err;
	if (!snd->pend) {
		unsigned n = e->nhosts ? e->nhosts : 1;

		snd->host_rows = xcalloc(n, sizeof(*snd->host_rows));
		snd->host_txns = xcalloc(n, sizeof(*snd->host_txns));
		snd->pend = xcalloc(n, sizeof(*snd->pend));
	}
	t = snd->rows, snd->rows = e->rows, e->rows = t;
	t = snd->txns, snd->txns = e->txns, e->txns = t;
	record_buf_reset(&e->rows);
	record_buf_reset(&e->txns);
	snd->nrows = e->nrows;
	snd->ntxns = e->ntxns;
	e->nrows = e->ntxns = 0;
	for (unsigned i = 0; i < e->nhosts; i++) {
		struct export_host *h = &e->hosts[i];

		snd->host_rows[i] = h->batch_rows;
		snd->host_txns[i] = h->batch_txns;
		snd->pend[i] = h->pend;
		h->batch_rows = h->batch_txns = 0;
	}
	snd->e = e;
	atomic_store(&snd->done, false);
	/* Signals stay with the main thread (cfg.stop). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&snd->thread, NULL, export_send_main, snd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		export_fail(e, -rc, "cannot start a thread to send rows: %s",
			    strerror(rc));
		return e->err;
	}
	snd->running = true;
	return 0;
}

/* The batch out: to the sender thread (ClickHouse), or written (a
 * file). */
static int export_flush(struct export *e)
{
	if (e->err)
		return e->err;
	if (!e->nrows && !e->ntxns)
		return 0;
	if (e->ch)
		return export_send(e);
	if ((e->txns.len && fwrite(e->txns.p, 1, e->txns.len,
				   e->cfg.txn_out) != e->txns.len) ||
	    (e->cfg.txn_out && fflush(e->cfg.txn_out)) ||
	    (e->rows.len && fwrite(e->rows.p, 1, e->rows.len,
				   e->cfg.out) != e->rows.len) ||
	    fflush(e->cfg.out)) {
		export_fail(e, -EIO, "writing the rows: %s", strerror(errno));
		return e->err;
	}
	e->batches++;
	for (unsigned i = 0; i < e->nhosts; i++) {
		struct export_host *h = &e->hosts[i];

		h->sent += h->batch_rows;
		h->txns_sent += h->batch_txns;
		h->batch_rows = h->batch_txns = 0;
	}
	record_buf_reset(&e->rows);
	record_buf_reset(&e->txns);
	e->nrows = e->ntxns = 0;
	return e->err;
}

/* Following: positions compare by file name (capd's sort in the order it
 * writes them), then offset, then index. */
static int export_pos_cmp(const char *fa, uint64_t oa, uint64_t ia,
			  const char *fb, uint64_t ob, uint64_t ib)
{
	const char *ba = strrchr(fa, '/'), *bb = strrchr(fb, '/');
	int c = strcmp(ba ? ba + 1 : fa, bb ? bb + 1 : fb);

	if (c)
		return c;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static void export_on_txn(void *arg, unsigned host, const char *kind,
			  int64_t ts_ns, int64_t latency_ns)
{
	struct export *e = arg;

	/* Held until the message that found it comes out as a record: they
	 * are sent, or skipped as already in, together. Orders paired by
	 * stamp order come out together when a hole is settled, and at the
	 * end (tapless-correlate(8), Transactions): no fixed limit. */
	if (e->ntxq == e->cap_txq) {
		e->cap_txq = e->cap_txq ? e->cap_txq * 2 : EXPORT_TXQ;
		e->txq = xrealloc(e->txq, e->cap_txq * sizeof(*e->txq));
	}
	e->txq[e->ntxq++] = (struct export_txn){ host, kind, ts_ns, latency_ns };
}

/* The transactions found since the last record, with a record (skip:
 * already in, as that record is) or at the end. */
static void export_txq_take(struct export *e, bool skip)
{
	for (size_t i = 0; i < e->ntxq; i++) {
		const struct export_txn *t = &e->txq[i];
		struct export_host *th = &e->hosts[t->host];

		if (skip) {
			th->txns_skipped++;
			continue;
		}
		if (e->ch ? !e->cfg.txn_table : !e->cfg.txn_out)
			continue;
		record_encode_txn(&e->txns, e->ch ? RECORD_ROWBINARY :
				  e->cfg.fmt, th->name, t->kind, t->ts, t->v);
		e->ntxns++;
		th->batch_txns++;
		th->pend.txns++;
	}
	e->ntxq = 0;
}

static void export_on_record(void *arg, const struct corr_record *r)
{
	struct export *e = arg;
	struct export_host *h = &e->hosts[r->host];
	const char *at = r->at_file ? r->at_file : "";
	bool skip;

	/* Files read whole stop at a signal (following, the loop stops
	 * and the files are read to their end first). */
	if (!e->err && !e->cfg.follow && e->cfg.stop && *e->cfg.stop)
		export_fail(e, -EINTR, "stopped by a signal: the rows not "
			    "taken are sent by the next run");
	if (e->err) {
		/* Nothing more is taken: no use reading on. */
		e->ntxq = 0;
		if (e->c && !e->cfg.follow)
			corr_abort(e->c);
		return;
	}
	if (strcmp(at, h->cur_file) || r->at_offset != h->cur_offset) {
		snprintf(h->cur_file, sizeof(h->cur_file), "%s", at);
		h->cur_offset = r->at_offset;
		h->cur_index = 0;
	} else {
		h->cur_index++;
	}
	if (e->cfg.follow) {
		if (h->skipping &&
		    export_pos_cmp(at, r->at_offset, h->cur_index,
				   h->st.at_file, h->st.at_offset,
				   h->st.at_index) > 0)
			h->skipping = false;
		skip = h->skipping;
	} else {
		skip = h->emitted < h->st.records;
		if (h->emitted + 1 == h->st.records && h->st.have_at &&
		    (strcmp(at, h->st.at_file) ||
		     r->at_offset != h->st.at_offset))
			export_note(e, LOG_WARNING, "%s: %s has changed since "
				    "the last export (its record %" PRIu64 " came "
				    "from %s at %" PRIu64 ", now from %s at %"
				    PRIu64 "): rows may be missing or repeated; "
				    "--fresh starts over", h->name, h->input,
				    h->st.records, h->st.at_file,
				    h->st.at_offset, at, r->at_offset);
	}
	h->emitted++;
	if (!e->nrows && !e->ntxns)
		e->first_ns = nstime_now(CLOCK_MONOTONIC);
	export_txq_take(e, skip);
	e->last_skip = skip;
	if (skip) {
		h->skipped++;
		return;
	}
	if (!e->nrows && !e->ntxns)
		e->first_ns = nstime_now(CLOCK_MONOTONIC);
	record_encode(&e->rows, e->ch ? RECORD_ROWBINARY : e->cfg.fmt,
		      h->name, r);
	e->nrows++;
	h->batch_rows++;
	/* Files read whole come out the same every time: the count says
	 * where we are. Following, the files there change: the position. */
	if (e->cfg.follow)
		h->pend.records++;
	else
		h->pend.records = h->emitted;
	h->pend.have_at = true;
	/* The file changes once in many records: a copy (snprintf()) for
	 * each was a tenth of a row. */
	if (strcmp(h->pend.at_file, at))
		snprintf(h->pend.at_file, sizeof(h->pend.at_file), "%s", at);
	h->pend.at_offset = r->at_offset;
	h->pend.at_index = h->cur_index;
	if (e->nrows >= e->cfg.batch)
		export_flush(e);
}

void export_hooks(struct export *e, struct corr_config *cc)
{
	cc->on_record = export_on_record;
	cc->on_txn = export_on_txn;
	cc->rec_arg = e;
	cc->no_match = true;
	cc->utc_target = true;
}

/* TabSeparated's escapes undone in place (DESCRIBE writes Enum8('a' = 0)
 * as Enum8(\'a\' = 0)). */
static void export_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*d++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* The server's table against the columns we write. */
static int export_check_table(struct export *e, const char *table,
			      const struct record_column *cols,
			      char err[EXPORT_ERRBUF])
{
	struct record_buf resp = { 0 };
	char sql[512];
	char *line, *save = NULL;
	const struct record_column *c = cols;
	int rc;

	snprintf(sql, sizeof(sql), "DESCRIBE TABLE %s FORMAT TabSeparated",
		 table);
	rc = export_post(e, sql, NULL, 0, &resp);
	if (rc) {
		if (rc == -ENOENT)
			snprintf(err, EXPORT_ERRBUF, "table %s does not exist at "
				 "%s: create it with scripts/clickhouse/schema.sql "
				 "(%.400s)", table, chttp_where(e->ch), e->error);
		else if (rc == -EACCES)
			snprintf(err, EXPORT_ERRBUF, "ClickHouse refused us: %.900s "
				 "(--user, --password-file)", e->error);
		else
			snprintf(err, EXPORT_ERRBUF, "%s", e->error);
		record_buf_free(&resp);
		return rc;
	}
	for (line = resp.p ? strtok_r(resp.p, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save), c++) {
		char *tab = strchr(line, '\t'), *type = tab ? tab + 1 : "";
		char *end = strchr(type, '\t');

		if (tab)
			*tab = '\0';
		if (end)
			*end = '\0';
		export_unescape(line);
		export_unescape(type);
		if (!c->name || strcmp(c->name, line) || strcmp(c->type, type)) {
			snprintf(err, EXPORT_ERRBUF, "table %s at %s: column %u "
				 "is '%.64s %.160s', tapless-records(5) has %s%s%s%s%s "
				 "(create the table with "
				 "scripts/clickhouse/schema.sql)", table,
				 chttp_where(e->ch), (unsigned)(c - cols) + 1,
				 line, type, c->name ? "'" : "no more columns",
				 c->name ? c->name : "", c->name ? " " : "",
				 c->name ? c->type : "", c->name ? "'" : "");
			record_buf_free(&resp);
			return -EINVAL;
		}
	}
	record_buf_free(&resp);
	if (c->name) {
		snprintf(err, EXPORT_ERRBUF, "table %s at %s has no column "
			 "'%s' (create it with scripts/clickhouse/schema.sql)",
			 table, chttp_where(e->ch), c->name);
		return -EINVAL;
	}
	return 0;
}

static bool export_file_has_data(FILE *f)
{
	struct stat st;

	return !fstat(fileno(f), &st) && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* A state file's name: the host, and a hash of the input and the
 * destination, so that one input exported to two places keeps two. */
static char *export_state_path(const struct export *e, const char *host,
			       const char *input)
{
	size_t n = strlen(input) + strlen(e->dest) + 2;
	char *key = xmalloc(n), *path;

	snprintf(key, n, "%s\n%s", input, e->dest);
	uint64_t hash = hmap_hash(key, strlen(key));
	free(key);
	n = strlen(e->cfg.state_dir) + strlen(host) + 40;
	path = xmalloc(n);
	snprintf(path, n, "%s/%s-%016" PRIx64 ".state", e->cfg.state_dir,
		 host, hash);
	return path;
}

/* Host h's state file for this run alone: two exporters on one state
 * file would interleave its .part and each save its own count over the
 * other's. The lock file sits beside it, with the holder's pid. */
static int export_lock_state(struct export_host *h, char err[EXPORT_ERRBUF])
{
	struct pidfile_holder who;
	size_t n = strlen(h->state_path) + 8;
	char *path = xmalloc(n), note[PIDFILE_NOTE_MAX];
	int rc;

	snprintf(path, n, "%s.lock", h->state_path);
	snprintf(note, sizeof(note), "tapless export of %s", h->input);
	rc = pidfile_take(&h->lock, path, note, &who);
	if (rc == -EWOULDBLOCK) {
		char pid[64] = "its pid not written yet";

		if (who.pid)
			snprintf(pid, sizeof(pid), "pid %ld", (long)who.pid);
		snprintf(err, EXPORT_ERRBUF, "%s: another tapless export (%s) "
			 "is using this state file (locked: %s): one exporter "
			 "per state file", h->state_path, pid, path);
		rc = -EBUSY;
	} else if (rc) {
		snprintf(err, EXPORT_ERRBUF, "%s: %s", path, strerror(-rc));
	}
	free(path);
	return rc;
}

int export_begin(struct export *e, struct corr *c, const char *const *inputs,
		 char err[EXPORT_ERRBUF])
{
	char cerr[CHTTP_ERRBUF], serr[EXPSTATE_ERRBUF];
	int rc;

	e->c = c;
	while (corr_host_name(c, e->nhosts))
		e->nhosts++;
	e->hosts = xcalloc(e->nhosts ? e->nhosts : 1, sizeof(*e->hosts));
	for (unsigned i = 0; i < e->nhosts; i++) {
		e->hosts[i].name = xstrdup(corr_host_name(c, i));
		e->hosts[i].input = xstrdup(inputs[i]);
	}
	if (e->cfg.url) {
		rc = chttp_create(&e->ch, e->cfg.url, e->cfg.user,
				  e->cfg.password, cerr);
		if (rc) {
			snprintf(err, EXPORT_ERRBUF, "--clickhouse %s", cerr);
			return rc;
		}
		snprintf(e->dest, sizeof(e->dest), "%s %s", chttp_where(e->ch),
			 e->cfg.table);
		if (chttp_password_in_clear(e->ch))
			export_note(e, LOG_WARNING, "the password goes to %s "
				    "in clear (http://, not https://): anyone "
				    "on the path can read it",
				    chttp_where(e->ch));
		/* The states locked before anything is asked of the server:
		 * a second exporter refuses at once, even while the server
		 * is down. */
		for (unsigned i = 0; e->cfg.state_dir && i < e->nhosts; i++) {
			struct export_host *h = &e->hosts[i];

			h->state_path = export_state_path(e, h->name, h->input);
			if ((rc = export_lock_state(h, err)))
				return rc;
		}
		if ((rc = export_check_table(e, e->cfg.table, record_columns,
					     err)) ||
		    (e->cfg.txn_table &&
		     (rc = export_check_table(e, e->cfg.txn_table,
					      record_txn_columns, err))))
			return rc;
	} else {
		/* A file appended to (following again) has its header. */
		if (!export_file_has_data(e->cfg.out))
			record_header(&e->rows, e->cfg.fmt, record_columns);
		if (e->cfg.txn_out && !export_file_has_data(e->cfg.txn_out))
			record_header(&e->txns, e->cfg.fmt, record_txn_columns);
	}
	for (unsigned i = 0; i < e->nhosts; i++) {
		struct export_host *h = &e->hosts[i];

		if (!h->state_path || e->cfg.fresh)
			continue;
		rc = expstate_load(h->state_path, h->name, h->input, e->dest,
				   &h->st, serr);
		if (rc == -ENOENT) {
			memset(&h->st, 0, sizeof(h->st));
			continue;
		}
		if (rc) {
			snprintf(err, EXPORT_ERRBUF, "%s (--fresh ignores it)", serr);
			return rc;
		}
		if (e->cfg.from_newest && h->st.have_at) {
			snprintf(err, EXPORT_ERRBUF, "%s: %s says where the last "
				 "export stopped: --from-newest would skip the "
				 "files since (--fresh to start over)", h->name,
				 h->state_path);
			return -EINVAL;
		}
		h->pend = h->st;
		h->skipping = e->cfg.follow && h->st.have_at;
		export_note(e, LOG_INFO, "%s: %" PRIu64 " records already "
			    "in (%s): going on after them", h->name,
			    h->st.records, h->state_path);
	}
	if (!e->ch) {
		/* The TSV headers, written at once. */
		if ((e->rows.len && fwrite(e->rows.p, 1, e->rows.len,
					   e->cfg.out) != e->rows.len) ||
		    (e->txns.len && e->cfg.txn_out &&
		     fwrite(e->txns.p, 1, e->txns.len, e->cfg.txn_out) !=
		     e->txns.len)) {
			snprintf(err, EXPORT_ERRBUF, "writing the rows: %s",
				 strerror(errno));
			return -EIO;
		}
		record_buf_reset(&e->rows);
		record_buf_reset(&e->txns);
	}
	return 0;
}

int export_tick(struct export *e, int64_t now_ns)
{
	/* A batch taken: its state saved now, not at the next batch. */
	if (e->snd.running && atomic_load(&e->snd.done))
		export_reap(e);
	if (!e->err && (e->nrows || e->ntxns) &&
	    now_ns - e->first_ns >= e->cfg.flush_ns)
		export_flush(e);
	return e->err;
}

int export_end(struct export *e, char err[EXPORT_ERRBUF])
{
	/* Found after the last record (orders waiting for holes until the
	 * end): in, unless the last record was (a rerun). */
	if (!e->err && e->ntxq) {
		if (!e->nrows && !e->ntxns)
			e->first_ns = nstime_now(CLOCK_MONOTONIC);
		export_txq_take(e, e->last_skip);
	}
	export_flush(e);
	export_reap(e);
	if (e->err)
		snprintf(err, EXPORT_ERRBUF, "%s", e->error);
	return e->err;
}

void export_print(const struct export *e, struct printer *p)
{
	print_text(p, "\nexport\n");
	print_array_begin(p, "export");
	for (unsigned i = 0; i < e->nhosts; i++) {
		const struct export_host *h = &e->hosts[i];

		print_object_begin(p, NULL);
		print_str(p, "host", "  %-10s", h->name);
		print_uint(p, "records", " %llu records sent", h->sent);
		print_uint(p, "records_already_in", ", %llu already in",
			   h->skipped);
		print_uint(p, "transactions", ", %llu transactions",
			   h->txns_sent);
		print_uint(p, "transactions_already_in", NULL, h->txns_skipped);
		print_str(p, "state", h->state_path ? "\n             state %s" :
			  NULL, h->state_path);
		print_text(p, "\n");
		print_object_end(p);
	}
	print_array_end(p);
	print_object_begin(p, "batches");
	print_uint(p, "sent", "  %llu batches", e->batches);
	print_uint(p, "retries", ", %llu retries", e->retries);
	print_str(p, "destination", " to %s", e->ch ? e->dest : "a file");
	print_text(p, "\n");
	print_object_end(p);
}
