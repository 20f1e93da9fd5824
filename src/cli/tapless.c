/* tapless.c — the tapless command: one table of subcommands, exact names.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "base/log.h"
#include "base/opts.h"
#include "base/prog.h"

struct cmd_entry {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static int cmd_help(int argc, char **argv);

static const struct cmd_entry cmd_table[] = {
	{ "ifinfo", cmd_ifinfo, "timestamping capabilities of network interfaces" },
	{ "status", cmd_status, "clock sync state from tapless-syncd, or a summary of a sync journal" },
	{ "correlate", cmd_correlate, "one-way, transaction and switch latency from several hosts' captures" },
	{ "report", cmd_report, "FTTC-style tables and gnuplot plots from a lab run directory" },
	{ "validate", cmd_validate, "NIC timestamp accuracy: PHCs, loopback, hardware vs software, against a tap" },
	{ "lab", cmd_lab, "the FTTC benchmark in network namespaces: up, run, down" },
	{ "export", cmd_export, "captures into per-message records, for ClickHouse or a file" },
	{ "sim", cmd_sim, "captures with known truth, for testing the correlator" },
	{ "help", cmd_help, "list commands, or show a command's options" },
};

#define CMD_COUNT (sizeof(cmd_table) / sizeof(cmd_table[0]))

static const struct cmd_entry *cmd_find(const char *name)
{
	/* Exact names only: a prefix that matches today may match two
	 * commands tomorrow and silently run the wrong one. */
	for (size_t i = 0; i < CMD_COUNT; i++)
		if (!strcmp(cmd_table[i].name, name))
			return &cmd_table[i];
	return NULL;
}

static void cmd_list(FILE *f)
{
	fprintf(f, "usage: tapless [-V|--version] COMMAND [OPTIONS] [ARGS]\n\n"
		"commands:\n");
	for (size_t i = 0; i < CMD_COUNT; i++)
		fprintf(f, "  %-10s %s\n", cmd_table[i].name, cmd_table[i].summary);
	fprintf(f, "\n'tapless help COMMAND' or 'tapless COMMAND --help' shows a "
		"command's options; man tapless-COMMAND has the details.\n");
}

static int cmd_help(int argc, char **argv)
{
	const struct cmd_entry *c;
	char help[] = "--help";
	char *args[3];

	if (argc < 2) {
		cmd_list(stdout);
		return CMD_OK;
	}
	c = cmd_find(argv[1]);
	if (!c || c->run == cmd_help) {
		fprintf(stderr, "tapless: unknown command '%s'; try 'tapless help'\n",
			argv[1]);
		return CMD_USAGE;
	}
	args[0] = argv[1];
	args[1] = help;
	args[2] = NULL;
	return c->run(2, args);
}

int cmd_options(const struct opt_def *defs, int argc, char **argv,
		const char *synopsis, struct opts **out, int *first)
{
	char err[OPTS_ERRBUF];
	struct opts *o;
	int rc;

	/* For tools (tests/optcheck, completion): the table itself. */
	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		opts_print_table(stdout, defs);
		return -1;
	}
	o = opts_create(defs);
	rc = opts_parse_args(o, argc, argv, err);

	if (rc < 0) {
		fprintf(stderr, "tapless %s: %s\n", argv[0], err);
		fprintf(stderr, "try 'tapless %s --help'\n", argv[0]);
		opts_destroy(o);
		return CMD_USAGE;
	}
	if (opts_flag(o, "help")) {
		printf("usage: tapless %s [OPTIONS]%s%s\n\noptions:\n", argv[0],
		       synopsis ? " " : "", synopsis ? synopsis : "");
		opts_usage(stdout, defs);
		opts_destroy(o);
		return -1;
	}
	*out = o;
	*first = rc;
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd_entry *c;

	log_init("tapless", false, LOG_WARNING);
	if (argc < 2) {
		cmd_list(stderr);
		return CMD_USAGE;
	}
	/* -V as every tapless program takes it (PROG_OPT_VERSION). */
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tapless %s\n", tapless_version);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cmd_list(stdout);
		return CMD_OK;
	}
	c = cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "tapless: unknown command '%s'; try 'tapless help'\n",
			argv[1]);
		return CMD_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
