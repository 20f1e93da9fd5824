/* cmd_inputs.c — what the subcommands that read several hosts' captures
 * (correlate, export) take alike: NAME[@ADDRS]=PATH operands, options
 * among them, and the per-host --sync and --timescale lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "corr/corr.h"
#include "base/opts.h"
#include "files/topo.h"
#include "stamp/ts.h"
#include "base/xalloc.h"

int cmd_operands(const char *prog, struct opts *o, int argc, char **argv,
		 int first, char **operands, int *nops)
{
	/* Options may follow operands too: gather operands, parse the
	 * rest, until argv is used up. */
	*nops = 0;
	while (first < argc) {
		char oerr[OPTS_ERRBUF];
		int rc;

		if (argv[first][0] != '-' || !argv[first][1]) {
			operands[(*nops)++] = argv[first++];
			continue;
		}
		if (!strcmp(argv[first], "--")) {
			while (++first < argc)
				operands[(*nops)++] = argv[first];
			break;
		}
		rc = opts_parse_args(o, argc - first + 1, argv + first - 1, oerr);
		if (rc < 0) {
			fprintf(stderr, "tapless %s: %s\n", prog, oerr);
			return CMD_USAGE;
		}
		first += rc - 1;
	}
	return 0;
}

void cmd_input_split(const char *arg, char *name, size_t len,
		     const char **path, const char **addrs)
{
	const char *eq = strchr(arg, '='), *from;
	size_t n;

	if (addrs)
		*addrs = NULL;
	if (eq && eq != arg) {
		const char *at = addrs ? memchr(arg, '@', (size_t)(eq - arg)) : NULL;

		from = arg;
		n = (size_t)((at ? at : eq) - arg);
		*path = eq + 1;
		if (at)
			*addrs = at + 1;
	} else {
		/* The last path component, trailing slashes aside. */
		size_t end = strlen(arg), start;
		const char *dot;

		while (end > 1 && arg[end - 1] == '/')
			end--;
		start = end;
		while (start > 0 && arg[start - 1] != '/')
			start--;
		from = arg + start;
		dot = memchr(from, '.', end - start);
		n = dot && dot != from ? (size_t)(dot - from) : end - start;
		*path = arg;
	}
	if (n >= len)
		n = len - 1;
	memcpy(name, from, n);
	name[n] = '\0';
}

/* The addresses of NAME@ADDR[,ADDR...]=PATH into *topo (made when there
 * is none), as a topology file's host line gives them: they say which
 * way a packet went where the capture does not. NAME@A-B=PATH places an
 * observation point on the link A-B, as a tap line does. */
int cmd_input_addrs(const char *prog, struct topo **topo, char *const *args,
		    int n)
{
	char terr[TOPO_ERRBUF], name[64];
	const char *path, *addrs;

	for (int i = 0; i < n; i++) {
		cmd_input_split(args[i], name, sizeof(name), &path, &addrs);
		if (!addrs || !*name)
			continue;
		const char *eq = strchr(addrs, '=');
		char *list = xstrdup(addrs);

		list[eq - addrs] = '\0';
		if (!*topo)
			*topo = topo_create();
		/* Addresses have dots or colons; NAME@A-B is an observation
		 * point on the link between A and B (a tap's capture). */
		int e = strpbrk(list, ".:") ? topo_add_host(*topo, name, list, terr) :
			topo_add_tap(*topo, name, list, terr);
		free(list);
		if (e) {
			fprintf(stderr, "tapless %s: '%s': %s\n", prog, args[i],
				terr);
			return CMD_USAGE;
		}
	}
	return 0;
}

/* Add each [NAME[@ADDRS]=]PATH as a host of c. */
int cmd_input_hosts(const char *prog, struct corr *c, char **args, int n)
{
	char err[CORR_ERRBUF], name[64];
	const char *path, *addrs;

	for (int i = 0; i < n; i++) {
		cmd_input_split(args[i], name, sizeof(name), &path, &addrs);
		if (!*name || !*path) {
			fprintf(stderr, "tapless %s: '%s': expected "
				"NAME[@ADDR[,ADDR...]]=FILE_OR_DIR\n", prog,
				args[i]);
			return CMD_USAGE;
		}
		/* Without NAME=, the host is the one its files name
		 * (tapless-capd -H), so that two hosts' .../eth1 do not
		 * collide; else the last path component, as before. */
		if ((strchr(args[i], '=') ?
		     corr_add_host(c, name, &path, 1, err) :
		     corr_add_host_found(c, name, &path, 1, err))) {
			fprintf(stderr, "tapless %s: %s\n", prog, err);
			return CMD_USAGE;
		}
	}
	return 0;
}

void cmd_input_config(const struct opts *o, struct corr_config *cfg)
{
	cfg->hold_ns = opts_ns(o, "hold");
	cfg->sync_max_age_ns = opts_ns(o, "sync_max_age");
	if (opts_given(o, "utc_offset")) {
		cfg->utc_offset_known = true;
		cfg->utc_offset_s = (int)opts_int(o, "utc_offset");
	}
}

/* Whether c has a host of that name. */
static bool cmd_input_has(const struct corr *c, const char *name)
{
	const char *h;

	for (unsigned i = 0; (h = corr_host_name(c, i)) != NULL; i++)
		if (!strcmp(h, name))
			return true;
	return false;
}

int cmd_input_files(const char *prog, struct corr *c, const struct opts *o,
		    bool some, const char *opt, const char *what,
		    int (*set)(struct corr *, const char *, const char *,
			       char *))
{
	const char *const *items;
	char err[CORR_ERRBUF], name[64];
	const char *val;
	size_t n = opts_list(o, opt, &items);

	for (size_t i = 0; i < n; i++) {
		cmd_input_split(items[i], name, sizeof(name), &val, NULL);
		if (some && strchr(items[i], '=') && !cmd_input_has(c, name))
			continue;
		if (!strchr(items[i], '=') || set(c, name, val, err)) {
			if (!strchr(items[i], '='))
				snprintf(err, sizeof(err), "--%s '%s': expected "
					 "NAME=%s", opt, items[i], what);
			fprintf(stderr, "tapless %s: %s\n", prog, err);
			return CMD_USAGE;
		}
	}
	return 0;
}

int cmd_input_lists(const char *prog, struct corr *c, const struct opts *o,
		    bool some)
{
	const char *const *items;
	char name[64];
	const char *val;
	size_t n;

	int rc = cmd_input_files(prog, c, o, some, "sync", "JOURNAL",
				 corr_set_journal);

	if (rc)
		return rc;
	n = opts_list(o, "timescale", &items);
	for (size_t i = 0; i < n; i++) {
		int scale;

		cmd_input_split(items[i], name, sizeof(name), &val, NULL);
		if (some && strchr(items[i], '=') && !cmd_input_has(c, name))
			continue;
		scale = !strcmp(val, "tai") ? TS_SCALE_TAI :
			!strcmp(val, "utc") ? TS_SCALE_UTC : -1;
		if (!strchr(items[i], '=') || scale < 0 ||
		    corr_set_timescale(c, name, scale)) {
			fprintf(stderr, "tapless %s: --timescale '%s': "
				"expected NAME=tai|utc for an input host\n",
				prog, items[i]);
			return CMD_USAGE;
		}
	}
	return 0;
}

