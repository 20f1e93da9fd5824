/* hwsimrun.c — tapless-hwsim: run a program on a simulated host's NIC
 * clocks and hardware stamps (tapless-hwsim(1)).
 *
 * Makes the host's shared state when it does not exist yet (with the
 * options given, else clocks drawn from the names), passes its name and
 * directory to libtapless-hwsim.so in the environment, puts the library
 * first in LD_PRELOAD and executes the program in its own place. With
 * --truth it runs nothing and prints where each of the host's clocks is
 * against true time.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datadir.h"
#include "base/mkpath.h"
#include "base/opts.h"
#include "base/preload.h"
#include "base/print.h"
#include "base/prog.h"
#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_env.h"

static const struct opt_def hwsim_opts[] = {
	{ "host", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "the simulated host: programs run with one name share its clocks", 0 },
	{ "dir", 0, OPT_STRING, HWSIM_DEFAULT_DIR, 0, 0, NULL, "DIR", "where the hosts' state files are", 0 },
	{ "phc-offset", 0, OPT_DURATION, NULL, -1e12, 1e12, NULL, "TIME", "a new host's PHCs start TIME from true time (default: drawn within 1 ms)", OPT_NS },
	{ "phc-ppm", 0, OPT_DOUBLE, NULL, -1000, 1000, NULL, "PPM", "and run PPM fast (default: drawn within 50 ppm)", 0 },
	{ "sys-offset", 0, OPT_DURATION, NULL, -1e12, 1e12, NULL, "TIME", "a new host's system clock starts TIME from true time (default: drawn within 1 ms)", OPT_NS },
	{ "sys-ppm", 0, OPT_DOUBLE, NULL, -1000, 1000, NULL, "PPM", "and runs PPM fast (default: drawn within 50 ppm)", 0 },
	{ "quantum", 0, OPT_DURATION, "0", 0, 1e6, NULL, "TIME", "a new host's PHC stamps are cut down to a multiple of TIME", OPT_NS },
	{ "noise", 0, OPT_DURATION, "0", 0, 1e6, NULL, "TIME", "and carry noise of standard deviation TIME", OPT_NS },
	{ "truth", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "run nothing: print each of the host's clocks against true time", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "with --truth: JSON", 0 },
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog hwsim_prog = {
	.name = "tapless-hwsim",
	.opts = hwsim_opts,
	.usage = "usage: tapless-hwsim --host NAME [OPTIONS] [--] PROGRAM [ARGS...]\n"
		 "       tapless-hwsim --host NAME --truth [--json]\n\n"
		 "Run PROGRAM on the simulated NIC clocks (PHCs), hardware stamps\n"
		 "and system clock of host NAME (see tapless-hwsim(1)).\n\n"
		 "options:\n",
	.config = PROG_CONFIG_NONE,
	.operands = true,
};

static void hwsim_params_from(const struct opts *o, struct hwsim_params *p)
{
	*p = (struct hwsim_params){
		.phc_offset_ns = opts_given(o, "phc-offset") ?
			opts_ns(o, "phc-offset") : HWSIM_NONE,
		.phc_ppm = opts_given(o, "phc-ppm") ? opts_double(o, "phc-ppm") : NAN,
		.sys_offset_ns = opts_given(o, "sys-offset") ?
			opts_ns(o, "sys-offset") : HWSIM_NONE,
		.sys_ppm = opts_given(o, "sys-ppm") ? opts_double(o, "sys-ppm") : NAN,
		.quantum_ns = opts_ns(o, "quantum"),
		.noise_ns = opts_ns(o, "noise"),
	};
}

/* Options that shape a new host, given to one that exists with others. */
static const char *hwsim_differs(const struct opts *o,
				 const struct hwsim_params *want,
				 const struct hwsim_params *have)
{
	if (opts_given(o, "phc-offset") && want->phc_offset_ns != have->phc_offset_ns)
		return "--phc-offset";
	if (opts_given(o, "phc-ppm") && want->phc_ppm != have->phc_ppm)
		return "--phc-ppm";
	if (opts_given(o, "sys-offset") && want->sys_offset_ns != have->sys_offset_ns)
		return "--sys-offset";
	if (opts_given(o, "sys-ppm") && want->sys_ppm != have->sys_ppm)
		return "--sys-ppm";
	if (opts_given(o, "quantum") && want->quantum_ns != have->quantum_ns)
		return "--quantum";
	if (opts_given(o, "noise") && want->noise_ns != have->noise_ns)
		return "--noise";
	return NULL;
}

static void hwsim_print_clock(struct printer *pr, const char *host,
			      const char *name, const struct hwsim_clock *c,
			      int64_t t)
{
	print_object_begin(pr, NULL);
	print_str(pr, "host", "%s", host);
	print_str(pr, "clock", " %s", name);
	print_int(pr, "offset_ns", " %+lld ns", hwsim_clock_at(c, t) - t);
	print_double(pr, "native_ppb", "  native %+.0f ppb", c->native_ppb);
	print_double(pr, "adj_ppb", "  adjusted %+.3f ppb", c->adj_ppb);
	print_double(pr, "rate_ppb", "  rate %+.3f ppb\n",
		     c->native_ppb + c->adj_ppb);
	print_object_end(pr);
}

/* Every clock of the host at one true instant. */
static int hwsim_truth(struct hwsim_host *h, bool json)
{
	struct printer *pr = print_create(stdout, json ? PRINT_JSON : PRINT_TEXT,
					  json ? PRINT_PRETTY : 0);
	int64_t t = hwsim_true_now();
	struct hwsim_clock sys = { .ref_true = t,
				   .ref_val = hwsim_read(h, -1, t) };

	print_int(pr, "true_ns", NULL, t);
	print_array_begin(pr, "clocks");
	sys.adj_ppb = hwsim_get_freq(h, -1);
	hwsim_print_clock(pr, hwsim_host_name(h), "sys", &sys, t);
	for (unsigned n = 0; n < hwsim_phc_count(h); n++) {
		struct hwsim_phc_info p;
		char name[40];

		if (hwsim_phc_get(h, n, &p))
			continue;
		snprintf(name, sizeof(name), "phc%u(%s)", n, p.ifname);
		hwsim_print_clock(pr, hwsim_host_name(h), name, &p.clk, t);
	}
	print_array_end(pr);
	print_destroy(pr);
	return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct hwsim_params want, have;
	struct hwsim_host *h = NULL;
	char err[600], lib[2 * PATH_MAX + 64];
	const char *host, *dir, *bad;
	struct opts *o;
	int first, rc;

	o = prog_start(&hwsim_prog, argc, argv, &first);
	if (!o)
		return first;
	rc = PROG_USAGE;
	host = opts_str(o, "host");
	dir = opts_str(o, "dir");
	if (!host) {
		fprintf(stderr, "tapless-hwsim: --host NAME is needed\n"
			"try 'tapless-hwsim --help'\n");
		goto out;
	}
	if (!opts_flag(o, "truth") && first >= argc) {
		fprintf(stderr, "tapless-hwsim: no program to run\n"
			"try 'tapless-hwsim --help'\n");
		goto out;
	}
	rc = 1;
	if (!opts_flag(o, "truth") && (errno = -mkpath_p(dir, 0755))) {
		fprintf(stderr, "tapless-hwsim: --dir %s: %s\n", dir, strerror(errno));
		goto out;
	}
	hwsim_params_from(o, &want);
	if (hwsim_host_open(&h, dir, host, !opts_flag(o, "truth"), &want, err,
			    sizeof(err))) {
		fprintf(stderr, "tapless-hwsim: %s\n", err);
		goto out;
	}
	hwsim_host_params(h, &have);
	if ((bad = hwsim_differs(o, &want, &have))) {
		fprintf(stderr, "tapless-hwsim: host %s exists in %s with another "
			"%s: its clocks run on as they are (remove %s/%s.hwsim to "
			"start it anew)\n", host, dir, bad, dir, host);
		goto out;
	}
	if (opts_flag(o, "truth")) {
		rc = hwsim_truth(h, opts_flag(o, "json"));
		goto out;
	}
	rc = 2;
	if (datadir_find("TAPLESS_HWSIM_LIB", HWSIM_LIB_NAME, DATADIR_LIBEXEC,
			 HWSIM_LIB_NAME, lib, sizeof(lib))) {
		fprintf(stderr, "tapless-hwsim: %s not found (looked at %s)\n",
			HWSIM_LIB_NAME, lib);
		goto out;
	}
	if (setenv(HWSIM_ENV_HOST, host, 1) || setenv(HWSIM_ENV_DIR, dir, 1) ||
	    preload_first(lib)) {
		fprintf(stderr, "tapless-hwsim: %s: %s\n", lib, errno == EINVAL ?
			"LD_PRELOAD needs an absolute path without ':' or blanks" :
			strerror(errno));
		goto out;
	}
	hwsim_host_close(h);
	h = NULL;
	execvp(argv[first], argv + first);
	rc = errno == ENOENT ? 127 : 126;
	fprintf(stderr, "tapless-hwsim: %s: %s\n", argv[first], strerror(errno));
out:
	hwsim_host_close(h);
	opts_destroy(o);
	return rc;
}
