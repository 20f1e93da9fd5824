/* cmd_lab.c — tapless lab: the FTTC benchmark in network namespaces on one
 * machine (tapless-lab(8)).
 *
 * The lab is namespaces, links and processes: iproute2 builds the first
 * two and the lab script (scripts/lab, installed in the libexec directory)
 * starts the tapless programs in them, so this command finds the script
 * and hands over to it, telling it where this build's programs are.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "base/datadir.h"
#include "base/xalloc.h"

int cmd_lab(int argc, char **argv)
{
	char script[2 * PATH_MAX + 16], bindir[PATH_MAX];
	char **args;

	if (datadir_find("TAPLESS_LAB_SCRIPT", "../scripts/lab",
			 DATADIR_LIBEXEC, "lab", script, sizeof(script))) {
		fprintf(stderr, "tapless lab: the lab script is not installed "
			"(looked for %s)\n", script);
		return CMD_SYSTEM;
	}
	/* The script runs the programs next to this one, unless told. */
	if (!getenv("TAPLESS_BINDIR") && !datadir_exe_dir(bindir, sizeof(bindir)))
		setenv("TAPLESS_BINDIR", bindir, 1);
	args = xcalloc((size_t)argc + 2, sizeof(*args));
	args[0] = "bash";
	args[1] = script;
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execv("/bin/bash", args);
	fprintf(stderr, "tapless lab: /bin/bash: %s\n", strerror(errno));
	free(args);
	return CMD_SYSTEM;
}
