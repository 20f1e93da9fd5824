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
	{ "password-file", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "read the ClickHouse password from FILE (its first line)", 0 },
	{ "table", 0, OPT_STRING, "tapless.records", 0, 0, NULL, "TABLE",
	  "the table of records", 0 },
	{ "txn-table", 0, OPT_STRING, "tapless.transactions", 0, 0, NULL,
	  "TABLE", "the table of the transactions each host computed", 0 },
	{ "no-transactions", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
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
	{ "retry-for", 0, OPT_DURATION, "0", 0, 1e7, NULL, "TIME",
	  "give up on a server down this long (0: wait for ever)", OPT_S },
	{ "output", 'o', OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "write records to FILE (- for stdout) instead of ClickHouse", 0 },
	{ "txn-output", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "with --output: write the transactions to FILE", 0 },
	{ "format", 0, OPT_ENUM, "tsv", 0, 0, (const char *const[]){
	  "tsv", "json", NULL }, "FMT",
	  "with --output: tsv (TabSeparatedWithNames) or json (one object a line)",
	  OPT_OLD_LETTER('f') },
	{ "follow", 'F', OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "follow each host's directory as tapless-capd writes it", 0 },
	{ "from-newest", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
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

int cmd_export(int argc, char **argv)
{
	struct corr_config cfg;
	struct export_config ec;
	struct corr *c = NULL;
	struct export *e = NULL;
	struct topo *topo = NULL;
	struct wholefile out = { .fd = -1 }, tout = { .fd = -1 };
	struct opts *o;
	struct sigaction sa;
	char err[EXPORT_ERRBUF], terr[TOPO_ERRBUF], cerr[CORR_ERRBUF];
	char **operands = NULL, *password = NULL, state[4096];
	char **inputs = NULL;
	int first, rc, nops = 0;
	unsigned pflags = 0;
	bool to_stdout = false;
	bool owned = false;	/* operands[] made here, to free */

	corr_config_init(&cfg);
	memset(&ec, 0, sizeof(ec));
	log_init("tapless export", false, LOG_WARNING);
	rc = cmd_options(export_opts, argc, argv, EXPORT_SYNOPSIS, &o, &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	operands = xcalloc((size_t)argc, sizeof(char *));
	if ((rc = cmd_operands("export", o, argc, argv, first, operands, &nops)))
		goto out;
	if (opts_flag(o, "help")) {
		printf("usage: tapless export [OPTIONS] %s\n\noptions:\n",
		       EXPORT_SYNOPSIS);
		opts_usage(stdout, export_opts);
		rc = CMD_OK;
		goto out;
	}
	rc = CMD_USAGE;
	if (!nops) {
		export_usage_error("no captures given");
		goto out;
	}
	if (!opts_str(o, "clickhouse") == !opts_str(o, "output")) {
		export_usage_error("give --clickhouse URL or --output FILE (one)");
		goto out;
	}
	static const char *const ch_only[] = {
		"user", "password-file", "state", "fresh", "retry-for", NULL,
	};
	for (unsigned i = 0; opts_str(o, "output") && ch_only[i]; i++)
		if (opts_given(o, ch_only[i])) {
			fprintf(stderr, "tapless export: --%s is for "
				"--clickhouse, not --output\n", ch_only[i]);
			goto out;
		}
	if (opts_str(o, "clickhouse") &&
	    (opts_given(o, "txn-output") || opts_given(o, "format"))) {
		fprintf(stderr, "tapless export: --txn-output and --format are "
			"for --output\n");
		goto out;
	}
	if (!opts_flag(o, "follow") && (opts_given(o, "flush") ||
					opts_flag(o, "from-newest"))) {
		fprintf(stderr, "tapless export: --flush and --from-newest need "
			"--follow\n");
		goto out;
	}
	if (opts_str(o, "password-file")) {
		int x = export_read_password(opts_str(o, "password-file"),
					     &password);

		if (x) {
			fprintf(stderr, "tapless export: --password-file %s: %s\n",
				opts_str(o, "password-file"), strerror(-x));
			goto out;
		}
	}

	/* The reader: correlate's, without matching. */
	cfg.follow = opts_flag(o, "follow");
	cfg.from_oldest = !opts_flag(o, "from-newest");
	cmd_input_config(o, &cfg);
	if (opts_str(o, "topology") &&
	    topo_load(&topo, opts_str(o, "topology"), terr)) {
		fprintf(stderr, "tapless export: %s\n", terr);
		goto out;
	}
	if ((rc = cmd_input_addrs("export", &topo, operands, nops)))
		goto out;
	rc = CMD_USAGE;
	cfg.topo = topo;

	/* The writer. */
	ec.batch = (unsigned)opts_int(o, "batch");
	ec.flush_ns = opts_ns(o, "flush");
	ec.follow = cfg.follow;
	ec.from_newest = opts_flag(o, "from-newest");
	ec.stop = &export_stop;
	ec.note = export_log_note;
	if (opts_str(o, "clickhouse")) {
		const char *dir = opts_str(o, "state");

		if (!dir)
			dir = getenv("STATE_DIRECTORY");
		if (!dir || !*dir)
			dir = "/var/lib/tapless/export";
		/* systemd may give several, colon-separated: the first. */
		snprintf(state, sizeof(state), "%.*s", (int)strcspn(dir, ":"), dir);
		if (mkpath_p(state, 0755)) {
			fprintf(stderr, "tapless export: --state %s: %s\n", state,
				strerror(errno));
			rc = CMD_SYSTEM;
			goto out;
		}
		ec.url = opts_str(o, "clickhouse");
		ec.user = opts_str(o, "user");
		ec.password = password;
		ec.table = opts_str(o, "table");
		ec.txn_table = opts_flag(o, "no-transactions") ? NULL :
			       opts_str(o, "txn-table");
		ec.state_dir = state;
		ec.fresh = opts_flag(o, "fresh");
		ec.retry_for_ns = opts_ns(o, "retry-for");
	} else {
		const char *path = opts_str(o, "output");

		ec.fmt = opts_enum(o, "format") ? RECORD_JSON : RECORD_TSV;
		to_stdout = !strcmp(path, "-");
		if (to_stdout) {
			ec.out = stdout;
		} else if (cfg.follow) {
			/* Following, rows are appended batch by batch. */
			ec.out = fopen(path, "a");
			if (!ec.out) {
				fprintf(stderr, "tapless export: %s: %s\n", path,
					strerror(errno));
				rc = CMD_SYSTEM;
				goto out;
			}
		} else {
			int x = wholefile_open(&out, path);

			if (x) {
				fprintf(stderr, "tapless export: %s: %s\n",
					out.tmp ? out.tmp : path, strerror(-x));
				rc = CMD_SYSTEM;
				goto out;
			}
			ec.out = out.f;
		}
		if (opts_str(o, "txn-output") && !opts_flag(o, "no-transactions") &&
		    cfg.follow) {
			ec.txn_out = fopen(opts_str(o, "txn-output"), "a");
			if (!ec.txn_out) {
				fprintf(stderr, "tapless export: %s: %s\n",
					opts_str(o, "txn-output"), strerror(errno));
				rc = CMD_SYSTEM;
				goto out;
			}
		} else if (opts_str(o, "txn-output") &&
			   !opts_flag(o, "no-transactions")) {
			int x = wholefile_open(&tout, opts_str(o, "txn-output"));

			if (x) {
				fprintf(stderr, "tapless export: %s: %s\n",
					tout.tmp ? tout.tmp : opts_str(o, "txn-output"),
					strerror(-x));
				rc = CMD_SYSTEM;
				goto out;
			}
			ec.txn_out = tout.f;
		}
	}
	export_create(&e, &ec);
	export_hooks(e, &cfg);
	if (corr_create(&c, &cfg)) {
		fprintf(stderr, "tapless export: bad configuration\n");
		goto out;
	}
	/* Inputs by their absolute paths: the state file knows an input by
	 * it (a rerun from another directory is the same input), and each
	 * record names its capture file by it. */
	inputs = xcalloc((size_t)nops, sizeof(*inputs));
	for (int i = 0; i < nops; i++) {
		const char *path;
		char name[64], *abs, *op;

		cmd_input_split(operands[i], name, sizeof(name), &path, NULL);
		abs = realpath(path, NULL);
		inputs[i] = abs ? abs : xstrdup(path);
		/* NAME[@ADDRS]= as given, then the absolute path. */
		op = xmalloc((size_t)(path - operands[i]) + strlen(inputs[i]) + 1);
		sprintf(op, "%.*s%s", (int)(path - operands[i]), operands[i],
			inputs[i]);
		operands[i] = op;
		owned = true;
	}
	if ((rc = cmd_input_hosts("export", c, operands, nops)) ||
	    (rc = cmd_input_lists("export", c, o, false)))
		goto out;
	rc = CMD_USAGE;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = export_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = export_begin(e, c, (const char *const *)inputs, err))) {
		fprintf(stderr, "tapless export: %s\n", err);
		rc = export_status(rc);
		goto out;
	}
	if (cfg.follow) {
		rc = export_follow(c, e);
	} else if (corr_run(c, cerr)) {
		fprintf(stderr, "tapless export: %s\n", cerr);
		rc = CMD_USAGE;
	} else {
		rc = CMD_OK;
	}
	for (unsigned i = 0; i < corr_warnings(c); i++)
		fprintf(stderr, "tapless export: %s\n", corr_warning(c, i));
	int end = export_end(e, err);
	if (end) {
		fprintf(stderr, "tapless export: %s\n", err);
		rc = export_status(end);
	}
	/* The summary: to stderr when the rows go to stdout. */
	struct printer *p = print_create(to_stdout ? stderr : stdout,
					 print_format_from_opts(o, &pflags),
					 pflags);
	corr_print_inputs(c, p);
	export_print(e, p);
	if (print_destroy(p) && rc == CMD_OK)
		rc = CMD_SYSTEM;
out:
	if (ec.out && ec.out != stdout && !out.f)
		fclose(ec.out);
	if (ec.txn_out && !tout.f)
		fclose(ec.txn_out);
	rc = export_close(&out, opts_str(o, "output"), rc);
	rc = export_close(&tout, opts_str(o, "txn-output"), rc);
	if (to_stdout)
		fflush(stdout);
	export_destroy(e);
	corr_destroy(c);
	topo_destroy(topo);
	for (int i = 0; inputs && i < nops; i++) {
		free(inputs[i]);
		if (owned)
			free(operands[i]);
	}
	free(inputs);
	free(operands);
	if (password) {
		memset(password, 0, strlen(password));
		free(password);
	}
	opts_destroy(o);
	return rc;
}
