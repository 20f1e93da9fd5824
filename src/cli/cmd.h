/* cmd.h — what the tapless subcommands share: their entry points (one
 * cmd_<name>.c each, listed in the table in tapless.c) and option parsing.
 *
 * Exit status of every subcommand: 0 success, 1 usage or input error,
 * 2 system error (a socket, a file, the kernel said no).
 */
#ifndef TAPLESS_CMD_H
#define TAPLESS_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct corr;
struct opt_def;
struct opts;
struct topo;

enum { CMD_OK = 0, CMD_USAGE = 1, CMD_SYSTEM = 2 };

int cmd_ifinfo(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_correlate(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* tapless correlate --follow: run c (made with cfg.follow) live until
 * SIGINT or SIGTERM, lines in fmt (enum print_format), samples (or NULL)
 * flushed each interval. Returns a CMD_* status. */
int cmd_correlate_follow(struct corr *c, const struct opts *o, int fmt,
			 FILE *samples);

/* Operands and options after the first operand (cmd_options() stops
 * there): operands[] (argc long) gets the operands, *nops their count.
 * Returns 0 or CMD_USAGE after printing the error as "tapless PROG: ". */
int cmd_operands(const char *prog, struct opts *o, int argc, char **argv,
		 int first, char **operands, int *nops);

/* NAME=PATH, or PATH whose file name up to its first dot is the name.
 * With addrs, NAME@ADDRS=PATH too: *addrs points at ADDRS (up to the '='),
 * else NULL. */
void cmd_input_split(const char *arg, char *name, size_t len,
		     const char **path, const char **addrs);
/* The addresses of NAME@ADDR[,ADDR...]=PATH operands into *topo (made
 * when there is none). 0 or CMD_USAGE (printed). */
int cmd_input_addrs(const char *prog, struct topo **topo, char *const *args,
		    int n);
/* Each NAME[@ADDRS]=PATH a host of c. 0 or CMD_USAGE (printed). */
int cmd_input_hosts(const char *prog, struct corr *c, char **args, int n);
/* The options of how hosts' captures are read, alike in every
 * subcommand that reads them (their options tables take it whole), and
 * their values into a correlator's configuration. */
#define CMD_INPUT_OPTS \
	{ "utc_offset", 0, OPT_INT, NULL, 0, 1000, NULL, "S", \
	  "TAI - UTC in seconds (else from the sync journals)", 0 }, \
	{ "timescale", 0, OPT_LIST, NULL, 0, 0, NULL, "NAME=tai|utc", \
	  "the timescale of host NAME's stamps, when its files do not say", 0 }, \
	{ "hold", 0, OPT_DURATION, "200000000", 0, 60e9, NULL, "TIME", \
	  "how long a TCP hole may stay open before its bytes count as lost", \
	  OPT_NS }, \
	{ "sync_max_age", 0, OPT_DURATION, "3000000000", 1, 3600e9, NULL, "TIME", \
	  "how long a journal sample vouches for a clock", OPT_NS }
struct corr_config;
void cmd_input_config(const struct opts *o, struct corr_config *cfg);
/* --sync NAME=JOURNAL and --timescale NAME=tai|utc into c; with some,
 * only for the hosts c has (a baseline run: its hosts are those of the
 * main run, or some of them, on the same clocks and journals). */
int cmd_input_lists(const char *prog, struct corr *c, const struct opts *o,
		    bool some);
/* Option opt's NAME=FILE items (FILE: what, for the error) through set
 * (corr_set_journal(), corr_set_calibration()), some as above. Returns 0
 * or CMD_USAGE, said on stderr. */
int cmd_input_files(const char *prog, struct corr *c, const struct opts *o,
		    bool some, const char *opt, const char *what,
		    int (*set)(struct corr *, const char *, const char *,
			       char *));

/* Parse a subcommand's options from argv (argv[0] is the subcommand name)
 * against defs, which must have a "help" flag. On success *out holds the
 * options and *first the index of the first operand; returns 0. Returns
 * CMD_USAGE after printing the error, or -1 after printing --help or, for
 * "--list-options" alone, the table (opts_print_table) (the
 * caller exits 0). synopsis is the operand part of the usage line. */
int cmd_options(const struct opt_def *defs, int argc, char **argv,
		const char *synopsis, struct opts **out, int *first);

#endif
