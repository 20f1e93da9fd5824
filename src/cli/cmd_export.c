/* cmd_export.c — tapless export: hosts' captures in, one row per FIX
 * message per host out (tapless-records(5)), into ClickHouse or a file.
 * export.h does the work; this file turns the command line into its
 * configuration and runs the correlator's reader, once or following.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "corr/corr.h"
#include "export/export.h"
#include "files/topo.h"
#include "base/log.h"
#include "base/mkpath.h"
#include "base/nstime.h"
#include "base/prog.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/wholefile.h"
#include "base/xalloc.h"

#define EXPORT_TICK_NS (20 * NS_PER_MS)

static const struct opt_def export_opts[] = {
	{ "clickhouse", 0, OPT_STRING, NULL, 0, 0, NULL, "URL",
	  "ClickHouse's HTTP interface, e.g. http://127.0.0.1:8123/", OPT_OLD_LETTER('c') },
	{ "user", 'u', OPT_STRING, NULL, 0, 0, NULL, "USER",
	  "ClickHouse user (else the URL's, else 'default')", 0 },
	{ "password_file", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "read the ClickHouse password from FILE (its first line)", 0 },
	{ "table", 0, OPT_STRING, "tapless.records", 0, 0, NULL, "TABLE",
	  "the table of records", 0 },
	{ "txn_table", 0, OPT_STRING, "tapless.transactions", 0, 0, NULL,
	  "TABLE", "the table of the transactions each host computed", 0 },
	{ "no_transactions", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "export records only", 0 },
	{ "batch", 0, OPT_INT, "100000", 1, 10000000, NULL, "N",
	  "rows per insert", OPT_OLD_LETTER('b') },
	{ "flush", 0, OPT_DURATION, "1", 0.01, 3600, NULL, "TIME",
	  "with --follow: a row waits this long at most before it is sent", OPT_S },
	{ "state", 0, OPT_STRING, NULL, 0, 0, NULL, "DIR",
	  "keep each input's state file here (default $STATE_DIRECTORY, "
	  "else /var/lib/tapless/export)", 0 },
	{ "fresh", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "ignore the state files: export everything again", 0 },
	{ "retry_for", 0, OPT_DURATION, "0", 0, 1e7, NULL, "TIME",
	  "give up on a server down this long (0: wait for ever)", OPT_S },
	{ "output", 'o', OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "write records to FILE (- for stdout) instead of ClickHouse", 0 },
	{ "txn_output", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "with --output: write the transactions to FILE", 0 },
	{ "format", 0, OPT_ENUM, "tsv", 0, 0, (const char *const[]){
	  "tsv", "json", NULL }, "FMT",
	  "with --output: tsv (TabSeparatedWithNames) or json (one object a line)",
	  OPT_OLD_LETTER('f') },
	{ "follow", 'F', OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "follow each host's directory as tapless-capd writes it", 0 },
	{ "from_newest", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "with --follow and no state: start at the newest file, not the oldest", 0 },
	{ "sync", 's', OPT_LIST, NULL, 0, 0, NULL, "NAME=JOURNAL",
	  "the sync journal of host NAME (repeat per host)", 0 },
	{ "topology", 't', OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "hosts' addresses (for captures that do not record direction)", 0 },
	CMD_INPUT_OPTS,
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON summary", 0 },
	{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent JSON output", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

#define EXPORT_SYNOPSIS "[NAME[@ADDR[,ADDR...]]=]FILE_OR_DIR ..."

static volatile sig_atomic_t export_stop;

static void export_signal(int sig)
{
	(void)sig;
	export_stop = 1;
}

/* The first line of path, for --password-file. */
/* The exporter's notes go where this program's messages go. */
static void export_log_note(void *arg, int level, const char *msg)
{
	(void)arg;
	log_at(level, "%s", msg);
}

static int export_read_password(const char *path, char **out)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	*out = xstrdup(line);
	memset(line, 0, sizeof(line));
	return 0;
}

/* Following until SIGINT or SIGTERM: the batch goes out as it fills, or
 * once its oldest row has waited --flush. */
static int export_follow(struct corr *c, struct export *e)
{
	char err[CORR_ERRBUF];

	while (!export_stop) {
		int64_t mono = nstime_now(CLOCK_MONOTONIC);

		if (corr_follow_step(c, nstime_now(CLOCK_REALTIME), err)) {
			fprintf(stderr, "tapless export: %s\n", err);
			return CMD_USAGE;
		}
		if (export_tick(e, nstime_now(CLOCK_MONOTONIC)))
			return CMD_SYSTEM;
		int64_t left = mono + EXPORT_TICK_NS - nstime_now(CLOCK_MONOTONIC);
		if (left > 0)
			poll(NULL, 0, (int)(left / NS_PER_MS) + 1);
	}
	/* Stopped: what the files hold is read to the end. */
	if (corr_follow_stop(c, nstime_now(CLOCK_REALTIME), err)) {
		fprintf(stderr, "tapless export: %s\n", err);
		return CMD_USAGE;
	}
	return CMD_OK;
}

/* An export's error as an exit status: the server or the input refused
 * us for good (credentials, no such table, a table or state file of
 * another shape, a state file another exporter holds) is the user's to
 * mend; the rest is the system's. */
static int export_status(int err)
{
	return err == -EACCES || err == -ENOENT || err == -EINVAL ||
	       err == -EBUSY ? CMD_USAGE : CMD_SYSTEM;
}

/* A file written whole: renamed to its name if all went well (rc), else
 * removed. Returns the status now. */
static int export_close(struct wholefile *w, const char *name, int rc)
{
	int x;

	if (!w->path)
		return rc;
	x = wholefile_close(w, rc != CMD_OK);
	if (x && rc == CMD_OK) {
		fprintf(stderr, "tapless export: %s: %s\n", name, strerror(-x));
		rc = CMD_SYSTEM;
	}
	return rc;
}

static int export_usage_error(const char *msg)
{
	fprintf(stderr, "tapless export: %s\nusage: tapless export [OPTIONS] %s\n",
		msg, EXPORT_SYNOPSIS);
	return CMD_USAGE;
}

/* What the steps of cmd_export() share. */
struct export_cmd {
	struct opts *o;
	struct corr_config cfg;
	struct export_config ec;
	struct corr *c;
	struct export *e;
	struct topo *topo;
	struct wholefile out, tout;
	char **operands, *password, state[4096];
	char **inputs;
	int nops;
	bool to_stdout;
	bool owned;	/* operands[] made here, to free */
};

/* The options that go together or exclude each other, and the password
 * read: 0 or CMD_USAGE. */
static int export_check(struct export_cmd *r)
{
	const struct opts *o = r->o;

	if (!r->nops)
		return export_usage_error("no captures given");
	if (!opts_str(o, "clickhouse") == !opts_str(o, "output"))
		return export_usage_error("give --clickhouse URL or --output "
					  "FILE (one)");
	static const char *const ch_only[] = {
		"user", "password-file", "state", "fresh", "retry-for", NULL,
	};
	for (unsigned i = 0; opts_str(o, "output") && ch_only[i]; i++)
		if (opts_given(o, ch_only[i])) {
			fprintf(stderr, "tapless export: --%s is for "
				"--clickhouse, not --output\n", ch_only[i]);
			return CMD_USAGE;
		}
	if (opts_str(o, "clickhouse") &&
	    (opts_given(o, "txn_output") || opts_given(o, "format"))) {
		fprintf(stderr, "tapless export: --txn-output and --format are "
			"for --output\n");
		return CMD_USAGE;
	}
	if (!opts_flag(o, "follow") && (opts_given(o, "flush") ||
					opts_flag(o, "from_newest"))) {
		fprintf(stderr, "tapless export: --flush and --from-newest need "
			"--follow\n");
		return CMD_USAGE;
	}
	if (opts_str(o, "password_file")) {
		int x = export_read_password(opts_str(o, "password_file"),
					     &r->password);

		if (x) {
			fprintf(stderr, "tapless export: --password-file %s: %s\n",
				opts_str(o, "password_file"), strerror(-x));
			return CMD_USAGE;
		}
	}
	return 0;
}

/* The reader's configuration: correlate's, without matching; the
 * topology loaded with the operands' addresses. 0 or the exit status. */
static int export_reader(struct export_cmd *r)
{
	struct opts *o = r->o;
	char terr[TOPO_ERRBUF];
	int rc;

	r->cfg.follow = opts_flag(o, "follow");
	r->cfg.from_oldest = !opts_flag(o, "from_newest");
	cmd_input_config(o, &r->cfg);
	if (opts_str(o, "topology") &&
	    topo_load(&r->topo, opts_str(o, "topology"), terr)) {
		fprintf(stderr, "tapless export: %s\n", terr);
		return CMD_USAGE;
	}
	if ((rc = cmd_input_addrs("export", &r->topo, r->operands, r->nops)))
		return rc;
	r->cfg.topo = r->topo;
	return 0;
}

/* The writer to ClickHouse: its state directory made. 0 or CMD_SYSTEM. */
static int export_clickhouse(struct export_cmd *r)
{
	struct export_config *ec = &r->ec;
	const struct opts *o = r->o;
	const char *dir = opts_str(o, "state");

	if (!dir)
		dir = getenv("STATE_DIRECTORY");
	if (!dir || !*dir)
		dir = "/var/lib/tapless/export";
	/* systemd may give several, colon-separated: the first. */
	snprintf(r->state, sizeof(r->state), "%.*s", (int)strcspn(dir, ":"),
		 dir);
	if (mkpath_p(r->state, 0755)) {
		fprintf(stderr, "tapless export: --state %s: %s\n", r->state,
			strerror(errno));
		return CMD_SYSTEM;
	}
	ec->url = opts_str(o, "clickhouse");
	ec->user = opts_str(o, "user");
	ec->password = r->password;
	ec->table = opts_str(o, "table");
	ec->txn_table = opts_flag(o, "no_transactions") ? NULL :
			opts_str(o, "txn_table");
	ec->state_dir = r->state;
	ec->fresh = opts_flag(o, "fresh");
	ec->retry_for_ns = opts_ns(o, "retry_for");
	return 0;
}

/* The writer to files: --output and --txn-output open. 0 or CMD_SYSTEM. */
static int export_files(struct export_cmd *r)
{
	struct export_config *ec = &r->ec;
	const struct opts *o = r->o;
	const char *path = opts_str(o, "output");

	ec->fmt = opts_enum(o, "format") ? RECORD_JSON : RECORD_TSV;
	r->to_stdout = !strcmp(path, "-");
	if (r->to_stdout) {
		ec->out = stdout;
	} else if (r->cfg.follow) {
		/* Following, rows are appended batch by batch. */
		ec->out = fopen(path, "a");
		if (!ec->out) {
			fprintf(stderr, "tapless export: %s: %s\n", path,
				strerror(errno));
			return CMD_SYSTEM;
		}
	} else {
		int x = wholefile_open(&r->out, path);

		if (x) {
			fprintf(stderr, "tapless export: %s: %s\n",
				r->out.tmp ? r->out.tmp : path, strerror(-x));
			return CMD_SYSTEM;
		}
		ec->out = r->out.f;
	}
	if (opts_str(o, "txn_output") && !opts_flag(o, "no_transactions") &&
	    r->cfg.follow) {
		ec->txn_out = fopen(opts_str(o, "txn_output"), "a");
		if (!ec->txn_out) {
			fprintf(stderr, "tapless export: %s: %s\n",
				opts_str(o, "txn_output"), strerror(errno));
			return CMD_SYSTEM;
		}
	} else if (opts_str(o, "txn_output") &&
		   !opts_flag(o, "no_transactions")) {
		int x = wholefile_open(&r->tout, opts_str(o, "txn_output"));

		if (x) {
			fprintf(stderr, "tapless export: %s: %s\n",
				r->tout.tmp ? r->tout.tmp :
				opts_str(o, "txn_output"), strerror(-x));
			return CMD_SYSTEM;
		}
		ec->txn_out = r->tout.f;
	}
	return 0;
}

/* The writer's configuration, its outputs open: 0 or CMD_SYSTEM. */
static int export_writer(struct export_cmd *r)
{
	struct export_config *ec = &r->ec;
	const struct opts *o = r->o;

	ec->batch = (unsigned)opts_int(o, "batch");
	ec->flush_ns = opts_ns(o, "flush");
	ec->follow = r->cfg.follow;
	ec->from_newest = opts_flag(o, "from_newest");
	ec->stop = &export_stop;
	ec->note = export_log_note;
	return opts_str(o, "clickhouse") ? export_clickhouse(r) :
					   export_files(r);
}

/* The exporter and the correlator's reader, given the inputs: 0 or the
 * exit status. */
static int export_inputs(struct export_cmd *r)
{
	int rc;

	export_create(&r->e, &r->ec);
	export_hooks(r->e, &r->cfg);
	if (corr_create(&r->c, &r->cfg)) {
		fprintf(stderr, "tapless export: bad configuration\n");
		return CMD_USAGE;
	}
	/* Inputs by their absolute paths: the state file knows an input by
	 * it (a rerun from another directory is the same input), and each
	 * record names its capture file by it. */
	r->inputs = xcalloc((size_t)r->nops, sizeof(*r->inputs));
	for (int i = 0; i < r->nops; i++) {
		const char *path;
		char name[64], *abs, *op;

		cmd_input_split(r->operands[i], name, sizeof(name), &path, NULL);
		abs = realpath(path, NULL);
		r->inputs[i] = abs ? abs : xstrdup(path);
		/* NAME[@ADDRS]= as given, then the absolute path. */
		op = xmalloc((size_t)(path - r->operands[i]) +
			     strlen(r->inputs[i]) + 1);
		sprintf(op, "%.*s%s", (int)(path - r->operands[i]),
			r->operands[i], r->inputs[i]);
		r->operands[i] = op;
		r->owned = true;
	}
	if ((rc = cmd_input_hosts("export", r->c, r->operands, r->nops)) ||
	    (rc = cmd_input_lists("export", r->c, r->o, false)))
		return rc;
	return 0;
}

/* The export itself, once or following until a signal, then the summary:
 * the exit status. */
static int export_run(struct export_cmd *r)
{
	char err[EXPORT_ERRBUF], cerr[CORR_ERRBUF];
	unsigned pflags = 0;
	int rc;

	prog_signals(export_signal, NULL);
	if ((rc = export_begin(r->e, r->c, (const char *const *)r->inputs,
			       err))) {
		fprintf(stderr, "tapless export: %s\n", err);
		return export_status(rc);
	}
	if (r->cfg.follow) {
		rc = export_follow(r->c, r->e);
	} else if (corr_run(r->c, cerr)) {
		fprintf(stderr, "tapless export: %s\n", cerr);
		rc = CMD_USAGE;
	} else {
		rc = CMD_OK;
	}
	for (unsigned i = 0; i < corr_warnings(r->c); i++)
		fprintf(stderr, "tapless export: %s\n", corr_warning(r->c, i));
	int end = export_end(r->e, err);
	if (end) {
		fprintf(stderr, "tapless export: %s\n", err);
		rc = export_status(end);
	}
	/* The summary: to stderr when the rows go to stdout. */
	struct printer *p = print_create(r->to_stdout ? stderr : stdout,
					 print_format_from_opts(r->o, &pflags),
					 pflags);
	corr_print_inputs(r->c, p);
	export_print(r->e, p);
	if (print_destroy(p) && rc == CMD_OK)
		rc = CMD_SYSTEM;
	return rc;
}

/* The outputs closed (complete ones under their names) and everything
 * freed: the exit status, rc or CMD_SYSTEM if an output failed. */
static int export_finish(struct export_cmd *r, int rc)
{
	struct export_config *ec = &r->ec;

	if (ec->out && ec->out != stdout && !r->out.f)
		fclose(ec->out);
	if (ec->txn_out && !r->tout.f)
		fclose(ec->txn_out);
	rc = export_close(&r->out, opts_str(r->o, "output"), rc);
	rc = export_close(&r->tout, opts_str(r->o, "txn_output"), rc);
	if (r->to_stdout)
		fflush(stdout);
	export_destroy(r->e);
	corr_destroy(r->c);
	topo_destroy(r->topo);
	for (int i = 0; r->inputs && i < r->nops; i++) {
		free(r->inputs[i]);
		if (r->owned)
			free(r->operands[i]);
	}
	free(r->inputs);
	free(r->operands);
	if (r->password) {
		memset(r->password, 0, strlen(r->password));
		free(r->password);
	}
	opts_destroy(r->o);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	struct export_cmd r = {
		.out = { .fd = -1 }, .tout = { .fd = -1 },
	};
	int first, rc;

	corr_config_init(&r.cfg);
	log_init("tapless export", false, LOG_WARNING);
	rc = cmd_options(export_opts, argc, argv, EXPORT_SYNOPSIS, &r.o, &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	r.operands = xcalloc((size_t)argc, sizeof(char *));
	if ((rc = cmd_operands("export", r.o, argc, argv, first, r.operands,
			       &r.nops)))
		return export_finish(&r, rc);
	if (opts_flag(r.o, "help")) {
		printf("usage: tapless export [OPTIONS] %s\n\noptions:\n",
		       EXPORT_SYNOPSIS);
		opts_usage(stdout, export_opts);
		return export_finish(&r, CMD_OK);
	}
	if ((rc = export_check(&r)) ||
	    (rc = export_reader(&r)) ||
	    (rc = export_writer(&r)) ||
	    (rc = export_inputs(&r)))
		return export_finish(&r, rc);
	return export_finish(&r, export_run(&r));
}
