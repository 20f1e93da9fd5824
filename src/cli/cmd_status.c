/* cmd_status.c — tapless status: the live state of tapless-syncd over its
 * control socket, or a summary of a sync journal file.
 *
 * Live, the daemon renders the answer with the same printer (ctl.h), so
 * this side only picks the format and copies. A journal is summarised
 * here: per clock, the share of samples in sync and the offset, path delay
 * and bound over the whole file and its last 60, 10 and 1 minutes, then
 * the events.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "ptp/ctl.h"
#include "ptp/journal.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/summary.h"
#include "ptp/syncconf.h"
#include "base/xalloc.h"

#define STATUS_MAX_CLOCKS 32
#define STATUS_LAST_EVENTS 10

static const struct opt_def status_opts[] = {
	{ "socket", 0, OPT_STRING, SYNCCONF_DEFAULT_SOCKET, 0, 0, NULL, "PATH", "the daemon's control socket", OPT_OLD_LETTER('s') },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "csv", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "CSV output", 0 },
	{ "timeout", 0, OPT_DURATION, "5000", 100, 600000, NULL, "TIME", "wait this long for the daemon", OPT_OLD_LETTER('t') | OPT_MS },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

struct status_point {
	int64_t ts, offset, delay, bound;
	bool in_sync, holdover;
};

struct status_clock {
	char name[16];
	struct status_point *pt;
	size_t n, cap;
	struct journal_sample last;
};

struct status_event_count {
	char name[32];
	unsigned n;
};

struct status_file {
	struct status_clock clock[STATUS_MAX_CLOCKS];
	unsigned nclocks;
	struct status_event_count count[64];
	unsigned ncounts;
	struct journal_event last_ev[STATUS_LAST_EVENTS];
	struct journal_ring last;
	uint64_t events;
};

static struct status_clock *status_clock(struct status_file *sf, const char *name)
{
	struct status_clock *c;

	for (unsigned i = 0; i < sf->nclocks; i++)
		if (!strcmp(sf->clock[i].name, name))
			return &sf->clock[i];
	if (sf->nclocks == STATUS_MAX_CLOCKS)
		return NULL;
	c = &sf->clock[sf->nclocks++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static void status_add_sample(struct status_file *sf,
			      const struct journal_sample *s)
{
	struct status_clock *c = status_clock(sf, s->clock);

	if (!c)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->pt = xrealloc(c->pt, c->cap * sizeof(*c->pt));
	}
	c->pt[c->n++] = (struct status_point){
		.ts = s->ts_ns, .offset = s->offset_ns, .delay = s->delay_ns,
		.bound = s->bound_ns, .in_sync = s->in_sync,
		.holdover = s->holdover,
	};
	c->last = *s;
}

static void status_add_event(struct status_file *sf,
			     const struct journal_event *e)
{
	unsigned i;

	sf->events++;
	for (i = 0; i < sf->ncounts; i++)
		if (!strcmp(sf->count[i].name, e->name))
			break;
	if (i == sf->ncounts && sf->ncounts < 64)
		snprintf(sf->count[sf->ncounts++].name, 32, "%s", e->name);
	if (i < sf->ncounts)
		sf->count[i].n++;
	*journal_ring_add(&sf->last) = *e;
}

/* The samples of c in (end - span, end], span 0: all. */
static void status_window(struct printer *p, const char *key,
			  const struct status_clock *c, int64_t end, int64_t span)
{
	int64_t *off = xcalloc(c->n + 1, sizeof(*off));
	int64_t *del = xcalloc(c->n + 1, sizeof(*del));
	int64_t *bnd = xcalloc(c->n + 1, sizeof(*bnd));
	size_t no = 0, nd = 0, nb = 0, n = 0, sync = 0, hold = 0;
	struct summary s;

	for (size_t i = 0; i < c->n; i++) {
		const struct status_point *q = &c->pt[i];

		if (span && q->ts <= end - span)
			continue;
		n++;
		if (q->offset != JOURNAL_NONE)
			off[no++] = q->offset;
		if (q->delay != JOURNAL_NONE)
			del[nd++] = q->delay;
		/* Holdover apart: its bound is grown, not measured. */
		hold += q->holdover;
		if (q->in_sync) {
			sync++;
			if (q->bound != JOURNAL_NONE)
				bnd[nb++] = q->bound;
		}
	}
	print_object_begin(p, key);
	print_text(p, "  %s:", key);
	print_uint(p, "samples", " %llu samples", n);
	print_uint(p, "in_sync", ", %llu in sync", sync);
	print_double(p, "in_sync_fraction", " (%.1f %%)",
		     n ? 100.0 * (double)sync / (double)n : 0);
	print_uint(p, "holdover", ", %llu in holdover\n", hold);
	summary_of(off, no, &s);
	print_text(p, "    offset ");
	summary_print(p, "offset_ns", &s);
	summary_of(del, nd, &s);
	print_text(p, "    delay  ");
	summary_print(p, "delay_ns", &s);
	summary_of(bnd, nb, &s);
	print_text(p, "    bound  ");
	summary_print(p, "bound_ns", &s);
	print_object_end(p);
	free(off);
	free(del);
	free(bnd);
}

static void status_print_file(struct printer *p, const char *path,
			      struct journal_reader *r, struct status_file *sf)
{
	static const struct { const char *key; int64_t span; } win[] = {
		{ "all", 0 }, { "60min", 3600000000000LL },
		{ "10min", 600000000000LL }, { "1min", 60000000000LL },
	};

	print_object_begin(p, NULL);
	print_str(p, "journal", "journal %s", path);
	print_str(p, "host", "  host %s", *journal_host(r) ? journal_host(r) : NULL);
	print_uint(p, "bad_lines", "  bad lines %llu", journal_bad_lines(r));
	print_bool(p, "torn_tail", "  torn tail %s\n", journal_torn(r));
	print_array_begin(p, "clocks");
	for (unsigned i = 0; i < sf->nclocks; i++) {
		const struct status_clock *c = &sf->clock[i];
		const struct journal_sample *l = &c->last;
		int64_t end = c->n ? c->pt[c->n - 1].ts : 0;

		print_object_begin(p, NULL);
		print_str(p, "clock", "\nclock %s", c->name);
		print_time(p, "first_ns", "  from %s", c->n ? c->pt[0].ts : 0);
		print_time(p, "last_ns", " to %s\n", end);
		print_object_begin(p, "last");
		print_str(p, "state", "  last: state %s", l->state);
		print_bool(p, "in_sync", "  in sync %s", l->in_sync);
		print_bool(p, "holdover", l->holdover ? "  holdover %s" : NULL,
			   l->holdover);
		if (l->bound_ns != JOURNAL_NONE)
			print_int(p, "bound_ns", "  bound %lld ns", l->bound_ns);
		else
			print_null(p, "bound_ns", "  bound %s");
		if (l->offset_ns != JOURNAL_NONE)
			print_int(p, "offset_ns", "  offset %lld ns", l->offset_ns);
		else
			print_null(p, "offset_ns", "  offset %s");
		print_str(p, "gm", "  grandmaster %s\n", strcmp(l->gm, "-") ? l->gm : NULL);
		print_object_end(p);
		print_object_begin(p, "windows");
		for (size_t w = 0; w < sizeof(win) / sizeof(win[0]); w++)
			status_window(p, win[w].key, c, end, win[w].span);
		print_object_end(p);
		print_object_end(p);
	}
	print_array_end(p);
	print_object_begin(p, "events");
	print_uint(p, "count", "\nevents: %llu", sf->events);
	print_object_begin(p, "by_name");
	for (unsigned i = 0; i < sf->ncounts; i++)
		print_uint(p, sf->count[i].name, NULL, sf->count[i].n);
	print_object_end(p);
	print_text(p, "\n");
	for (unsigned i = 0; i < sf->ncounts; i++)
		print_text(p, "  %-18s %u\n", sf->count[i].name, sf->count[i].n);
	journal_ring_print(p, "last", "last events:\n", &sf->last);
	print_object_end(p);
	print_object_end(p);
}

static int status_journal(struct printer *p, const char *path)
{
	char err[JOURNAL_ERRBUF];
	struct journal_reader *r;
	struct journal_record rec;
	struct status_file *sf;
	uint64_t records = 0;
	int rc = journal_open(&r, path, err);

	if (rc) {
		fprintf(stderr, "tapless status: %s\n", err);
		return CMD_USAGE;
	}
	sf = xcalloc(1, sizeof(*sf));
	sf->last = (struct journal_ring){ .ev = sf->last_ev,
					  .cap = STATUS_LAST_EVENTS };
	while ((rc = journal_next(r, &rec)) != 0) {
		if (rc < 0) {
			/* Reported, skipped: the rest of the file counts. */
			fprintf(stderr, "tapless status: %s\n", journal_error(r));
			continue;
		}
		records++;
		if (rec.type == JOURNAL_SAMPLE)
			status_add_sample(sf, &rec.sample);
		else
			status_add_event(sf, &rec.event);
	}
	status_print_file(p, path, r, sf);
	for (unsigned i = 0; i < sf->nclocks; i++)
		free(sf->clock[i].pt);
	free(sf);
	journal_close(r);
	if (!records) {
		fprintf(stderr, "tapless status: %s: no samples or events\n", path);
		return CMD_USAGE;
	}
	return CMD_OK;
}

int cmd_status(int argc, char **argv)
{
	struct opts *o;
	struct printer *p;
	enum print_format fmt;
	unsigned pflags = PRINT_PRETTY;	/* no --pretty: JSON indented */
	int first, rc = CMD_OK;

	rc = cmd_options(status_opts, argc, argv, "[JOURNAL...]", &o, &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	fmt = print_format_from_opts(o, &pflags);
	if (first == argc) {
		const char *sock = opts_str(o, "socket");

		rc = ctl_request(sock, ctl_status_requests[fmt], stdout, (int)(opts_ns(o, "timeout") / 1000000));
		if (rc == -EPROTO) {
			rc = CMD_USAGE;
		} else if (rc) {
			const char *hint = "";

			if (rc == -ENOENT || rc == -ECONNREFUSED)
				hint = " (is tapless-syncd running? a journal "
				       "file can be given instead)";
			else if (rc == -EACCES || rc == -EPERM)
				hint = " (only root and the daemon's "
				       "control_group may ask)";
			else if (rc == -ECONNRESET || rc == -EPIPE ||
				 rc == -EAGAIN || rc == -ETIMEDOUT)
				hint = " (the daemon is busy or not "
				       "answering; tried several times)";
			fprintf(stderr, "tapless status: %s: %s%s\n", sock,
				strerror(-rc), hint);
			rc = CMD_SYSTEM;
		}
		opts_destroy(o);
		return rc;
	}
	p = print_create(stdout, fmt, pflags);
	print_array_begin(p, "journals");
	for (int i = first; i < argc; i++) {
		int r = status_journal(p, argv[i]);

		if (r > rc)
			rc = r;
	}
	print_array_end(p);
	if (print_destroy(p) && !rc)
		rc = CMD_SYSTEM;
	opts_destroy(o);
	return rc;
}
