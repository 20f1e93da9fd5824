/* shimrun.c — tapless-stamp: run a program with its sends stamped.
 *
 * Checks the options, passes them to libtapless-stamp.so in the
 * environment (shim_env.h), puts the library first in LD_PRELOAD and
 * executes the program in its own place (same pid, so a service manager
 * or a shell sees the program itself). Children and programs it executes
 * inherit the environment and are stamped too.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datadir.h"
#include "base/opts.h"
#include "base/preload.h"
#include "base/prog.h"
#include "shim/shim_env.h"
#include "shim/shim_filter.h"

static const char *const modes[] = { "auto", "hw", "sw", NULL };

static const struct opt_def stamp_opts[] = {
	{ "tx_socket", 0, OPT_STRING, SHIM_DEFAULT_TX_SOCKET, 0, 0, NULL, "PATH", "tapless-capd's --tx-socket, where the stamps go", 0 },
	{ "ports", 0, OPT_STRING, NULL, 0, 0, NULL, "LIST", "stamp only sockets with a local or remote port in LIST (9001,9100-9199)", 0 },
	{ "peers", 0, OPT_STRING, NULL, 0, 0, NULL, "LIST", "stamp only sockets whose peer is in LIST (198.18.1.2,10.0.0.0/8,2001:db8::/32)", 0 },
	{ "mode", 0, OPT_ENUM, "auto", 0, 0, modes, "MODE", "auto (hardware where the NIC stamps, else software), hw or sw", 0 },
	{ "log_file", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE", "the library's log lines go to FILE (appended) instead of the program's stderr", 0 },
	PROG_OPT_LOG_LEVEL,
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog stamp_prog = {
	.name = "tapless-stamp",
	.opts = stamp_opts,
	.usage = "usage: tapless-stamp [OPTIONS] [--] PROGRAM [ARGS...]\n\n"
		 "Run PROGRAM with the TX stamps of its TCP and UDP sends handed to\n"
		 "tapless-capd (see tapless-stamp(8)).\n\n"
		 "options:\n",
	.config = PROG_CONFIG_NONE,
	.operands = true,
};

static int set(const char *name, const char *value)
{
	if (!value)
		return unsetenv(name);
	return setenv(name, value, 1);
}

int main(int argc, char **argv)
{
	struct shim_filter f = { 0 };
	char err[SHIM_FILTER_ERRBUF], lib[2 * PATH_MAX + 64];
	struct opts *o;
	int first, rc;

	o = prog_start(&stamp_prog, argc, argv, &first);
	if (!o)
		return first;
	rc = PROG_USAGE;
	if (first >= argc) {
		fprintf(stderr, "tapless-stamp: no program to run\n"
			"try 'tapless-stamp --help'\n");
		goto out;
	}
	if (shim_filter_ports(&f, opts_str(o, "ports"), err)) {
		fprintf(stderr, "tapless-stamp: --ports: %s\n", err);
		goto out;
	}
	if (shim_filter_peers(&f, opts_str(o, "peers"), err)) {
		fprintf(stderr, "tapless-stamp: --peers: %s\n", err);
		goto out;
	}
	if (strlen(opts_str(o, "tx_socket")) >= 108) {
		fprintf(stderr, "tapless-stamp: --tx-socket: path longer than "
			"a UNIX socket's 107 bytes\n");
		goto out;
	}
	rc = 2;
	if (datadir_find("TAPLESS_STAMP_LIB", SHIM_LIB_NAME, DATADIR_LIBEXEC,
			 SHIM_LIB_NAME, lib, sizeof(lib))) {
		fprintf(stderr, "tapless-stamp: %s not found (looked at %s)\n",
			SHIM_LIB_NAME, lib);
		goto out;
	}
	if (lib[0] != '/' || strpbrk(lib, ": \t")) {
		fprintf(stderr, "tapless-stamp: %s: LD_PRELOAD needs an absolute "
			"path without ':' or blanks\n", lib);
		goto out;
	}
	if (set(SHIM_ENV_TX_SOCKET, opts_str(o, "tx_socket")) ||
	    set(SHIM_ENV_PORTS, opts_str(o, "ports")) ||
	    set(SHIM_ENV_PEERS, opts_str(o, "peers")) ||
	    set(SHIM_ENV_MODE, modes[opts_enum(o, "mode")]) ||
	    set(SHIM_ENV_LOG_LEVEL, opts_str(o, "log_level")) ||
	    set(SHIM_ENV_LOG_FILE, opts_str(o, "log_file")) || preload_first(lib)) {
		fprintf(stderr, "tapless-stamp: environment: %s\n", strerror(errno));
		goto out;
	}
	execvp(argv[first], argv + first);
	rc = errno == ENOENT ? 127 : 126;
	fprintf(stderr, "tapless-stamp: %s: %s\n", argv[first], strerror(errno));
out:
	opts_destroy(o);
	return rc;
}
