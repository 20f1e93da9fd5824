/* prog.c — program start-up; see prog.h. */
#include "base/prog.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/opts.h"

static char prog_ident[256];

const char *prog_version(void)
{
	return prog_ident;
}

/* The row of defs whose command-line name is cli, or NULL. */
static const struct opt_def *prog_find(const struct opt_def *defs,
				       const char *cli)
{
	char name[OPTS_NAME_MAX];

	for (; defs->name; defs++) {
		opts_cli_name(name, sizeof(name), defs->name);
		if (!strcmp(name, cli))
			return defs;
	}
	return NULL;
}

int prog_log(const struct prog *p, const struct opts *o)
{
	const struct opt_def *d = prog_find(p->opts, "log-level");
	bool use_syslog = false;
	int level = LOG_NOTICE;

	if (d) {
		level = log_level_parse(opts_str(o, d->name));
		if (level < 0) {
			fprintf(stderr, "%s: --log-level: '%s' is not a level\n",
				p->name, opts_str(o, d->name));
			return PROG_USAGE;
		}
	}
	d = prog_find(p->opts, "syslog");
	if (d)
		use_syslog = opts_flag(o, d->name);
	log_init(p->name, use_syslog, level);
	return 0;
}

struct opts *prog_start(const struct prog *p, int argc, char **argv,
			int *ret)
{
	const struct opt_def *d;
	char err[OPTS_ERRBUF];
	struct opts *o;
	int first;

	snprintf(prog_ident, sizeof(prog_ident), "%s %s", p->name,
		 tapless_version);
	log_init(p->name, false, LOG_NOTICE);
	/* For tools (tests/optcheck, completion): the table itself. */
	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		opts_print_table(stdout, p->opts);
		*ret = 0;
		return NULL;
	}
	o = opts_create(p->opts);
	first = opts_parse_args(o, argc, argv, err);
	if (first >= 0 && first < argc && !p->operands)
		snprintf(err, sizeof(err), "unexpected operand '%s'",
			 argv[first]);
	if (first < 0 || (first < argc && !p->operands)) {
		fprintf(stderr, "%s: %s\ntry '%s --help'\n", p->name, err,
			p->name);
		*ret = PROG_USAGE;
		goto stop;
	}
	d = prog_find(p->opts, "help");
	if (d && opts_flag(o, d->name)) {
		fputs(p->usage, stdout);
		opts_usage(stdout, p->opts);
		*ret = 0;
		goto stop;
	}
	d = prog_find(p->opts, "version");
	if (d && opts_flag(o, d->name)) {
		printf("%s\n", prog_ident);
		*ret = 0;
		goto stop;
	}
	d = prog_find(p->opts, "config");
	if (p->config == PROG_CONFIG_FILE && d && opts_str(o, d->name) &&
	    opts_parse_file(o, opts_str(o, d->name), NULL, NULL, err)) {
		fprintf(stderr, "%s: %s\n", p->name, err);
		*ret = PROG_USAGE;
		goto stop;
	}
	if (p->config != PROG_CONFIG_OWN && (*ret = prog_log(p, o)))
		goto stop;
	*ret = first;
	return o;
stop:
	opts_destroy(o);
	return NULL;
}

void prog_signals(void (*on_stop)(int), void (*on_hup)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (on_hup) {
		sa.sa_handler = on_hup;
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}
