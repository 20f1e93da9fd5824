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
#include "base/errbuf.h"
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
	{ "phc_offset", 0, OPT_DURATION, NULL, -1e12, 1e12, NULL, "TIME", "a new host's PHCs start TIME from true time (default: drawn within 1 ms)", OPT_NS },
	{ "phc_ppm", 0, OPT_DOUBLE, NULL, -1000, 1000, NULL, "PPM", "and run PPM fast (default: drawn within 50 ppm)", 0 },
	{ "sys_offset", 0, OPT_DURATION, NULL, -1e12, 1e12, NULL, "TIME", "a new host's system clock starts TIME from true time (default: drawn within 1 ms)", OPT_NS },
	{ "sys_ppm", 0, OPT_DOUBLE, NULL, -1000, 1000, NULL, "PPM", "and runs PPM fast (default: drawn within 50 ppm)", 0 },
	{ "quantum", 0, OPT_DURATION, "0", 0, 1e6, NULL, "TIME", "a new host's PHC stamps are cut down to a multiple of TIME", OPT_NS },
	{ "noise", 0, OPT_DURATION, "0", 0, 1e6, NULL, "TIME", "and carry noise of standard deviation TIME", OPT_NS },
	{ "truth", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "run nothing: print each of the host's clocks against true time", 0 },
	{ "fault", 0, OPT_LIST, NULL, 0, 0, NULL, "KIND=VALUE", "run nothing: put the host's NICs under a fault now: step=TIME, freq-jump=PPM, gm-gone=on|off, tx-loss=PERCENT, tx-late=PERCENT[,MAX], rx-filter=ptp|all", 0 },
	{ "iface", 0, OPT_STRING, NULL, 0, 0, NULL, "IFACE", "with --fault: only this interface's NIC (default: every NIC of the host)", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "with --truth: JSON", 0 },
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog hwsim_prog = {
	.name = "tapless-hwsim",
	.opts = hwsim_opts,
	.usage = "usage: tapless-hwsim --host NAME [OPTIONS] [--] PROGRAM [ARGS...]\n"
		 "       tapless-hwsim --host NAME --truth [--json]\n"
		 "       tapless-hwsim --host NAME --fault KIND=VALUE... [--iface IFACE]\n\n"
		 "Run PROGRAM on the simulated NIC clocks (PHCs), hardware stamps\n"
		 "and system clock of host NAME (see tapless-hwsim(1)).\n\n"
		 "options:\n",
	.config = PROG_CONFIG_NONE,
	.operands = true,
};

static void hwsim_params_from(const struct opts *o, struct hwsim_params *p)
{
	*p = (struct hwsim_params){
		.phc_offset_ns = opts_given(o, "phc_offset") ?
			opts_ns(o, "phc_offset") : HWSIM_NONE,
		.phc_ppm = opts_given(o, "phc_ppm") ? opts_double(o, "phc_ppm") : NAN,
		.sys_offset_ns = opts_given(o, "sys_offset") ?
			opts_ns(o, "sys_offset") : HWSIM_NONE,
		.sys_ppm = opts_given(o, "sys_ppm") ? opts_double(o, "sys_ppm") : NAN,
		.quantum_ns = opts_ns(o, "quantum"),
		.noise_ns = opts_ns(o, "noise"),
	};
}

/* Options that shape a new host, given to one that exists with others. */
static const char *hwsim_differs(const struct opts *o,
				 const struct hwsim_params *want,
				 const struct hwsim_params *have)
{
	if (opts_given(o, "phc_offset") && want->phc_offset_ns != have->phc_offset_ns)
		return "--phc-offset";
	if (opts_given(o, "phc_ppm") && want->phc_ppm != have->phc_ppm)
		return "--phc-ppm";
	if (opts_given(o, "sys_offset") && want->sys_offset_ns != have->sys_offset_ns)
		return "--sys-offset";
	if (opts_given(o, "sys_ppm") && want->sys_ppm != have->sys_ppm)
		return "--sys-ppm";
	if (opts_given(o, "quantum") && want->quantum_ns != have->quantum_ns)
		return "--quantum";
	if (opts_given(o, "noise") && want->noise_ns != have->noise_ns)
		return "--noise";
	return NULL;
}

static void hwsim_print_clock(struct printer *pr, const char *host,
			      const char *name, const struct hwsim_clock *c,
			      int64_t t, const struct hwsim_faults *f,
			      const struct hwsim_counts *k)
{
	print_object_begin(pr, NULL);
	print_str(pr, "host", "%s", host);
	print_str(pr, "clock", " %s", name);
	print_int(pr, "offset_ns", " %+lld ns", hwsim_clock_at(c, t) - t);
	print_double(pr, "native_ppb", "  native %+.0f ppb", c->native_ppb);
	print_double(pr, "adj_ppb", "  adjusted %+.3f ppb", c->adj_ppb);
	print_double(pr, "rate_ppb", "  rate %+.3f ppb",
		     c->native_ppb + c->adj_ppb);
	if (f) {
		print_bool(pr, "gm_gone", "  gm gone %s", f->gm_gone);
		print_int(pr, "tx_loss_pct", "  tx loss %lld %%", f->tx_loss_pct);
		print_bool(pr, "rx_ptp_only", "  rx ptp only %s", f->rx_ptp_only);
		print_int(pr, "tx_late_pct", "  tx late %lld %%", f->tx_late_pct);
		print_int(pr, "tx_late_max_ns", " up to %lld ns", f->tx_late_max_ns);
		print_uint(pr, "tx_lost", "  tx stamps lost %llu", k->tx_lost);
		print_uint(pr, "tx_late", ", held late %llu", k->tx_late);
		print_uint(pr, "tx_late_forced", " (%llu given before due: ring full)",
			   k->tx_late_forced);
	}
	print_text(pr, "\n");
	print_object_end(pr);
}

/* Every clock of the host at one true instant. */
static int hwsim_truth(struct hwsim_host *h, bool json)
{
	struct printer *pr = print_create(stdout, json ? PRINT_JSON : PRINT_TEXT,
					  json ? PRINT_PRETTY : 0);
	int64_t t = hwsim_true_now();
	struct hwsim_clock sys;

	hwsim_sys_get(h, &sys);
	print_int(pr, "true_ns", NULL, t);
	print_array_begin(pr, "clocks");
	hwsim_print_clock(pr, hwsim_host_name(h), "sys", &sys, t, NULL, NULL);
	for (unsigned n = 0; n < hwsim_phc_count(h); n++) {
		struct hwsim_phc_info p;
		char name[40];

		if (hwsim_phc_get(h, n, &p))
			continue;
		snprintf(name, sizeof(name), "phc%u(%s)", n, p.ifname);
		hwsim_print_clock(pr, hwsim_host_name(h), name, &p.clk, t,
				  &p.faults, &p.counts);
	}
	print_array_end(pr);
	print_destroy(pr);
	return ferror(stdout) ? 1 : 0;
}

static const char *const hwsim_fault_names[] = {
	[HWSIM_FAULT_STEP] = "step", [HWSIM_FAULT_FREQ_JUMP] = "freq-jump",
	[HWSIM_FAULT_GM_GONE] = "gm-gone", [HWSIM_FAULT_TX_LOSS] = "tx-loss",
	[HWSIM_FAULT_RX_PTP_ONLY] = "rx-filter", [HWSIM_FAULT_TX_LATE] = "tx-late",
};

#define HWSIM_LATE_MAX_DEF 500000000LL	/* tx-late's MAX: 500 ms */
#define HWSIM_FAULT_ERRBUF 300	/* a --fault message, quoting the value */
#define HWSIM_LATE_MAX_MAX 60000000000LL	/* at most a minute */

/* "KIND=VALUE" into *f; -EINVAL with why in err. */
static int hwsim_parse_fault(const char *text, struct hwsim_fault *f,
			     char err[HWSIM_FAULT_ERRBUF])
{
	const char *eq = strchr(text, '=');
	size_t k;
	char *end;
	double v;

	for (k = 0; k < sizeof(hwsim_fault_names) / sizeof(hwsim_fault_names[0]); k++)
		if (eq && (size_t)(eq - text) == strlen(hwsim_fault_names[k]) &&
		    !strncmp(text, hwsim_fault_names[k], (size_t)(eq - text)))
			break;
	if (!eq || k == sizeof(hwsim_fault_names) / sizeof(hwsim_fault_names[0]))
		return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
				  "--fault '%s': KIND=VALUE with KIND step, "
				  "freq-jump, gm-gone, tx-loss, tx-late or rx-filter", text);
	f->kind = (enum hwsim_fault_kind)k;
	f->max_ns = 0;
	eq++;
	switch (f->kind) {
	case HWSIM_FAULT_STEP: {
		long long ns;
		int neg = *eq == '-';

		if (opts_parse_ns(eq + neg, 1, &ns))
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault step=%s: not a time (a number "
					  "with ns, us, ms, s or m, a sign allowed)", eq);
		f->value = neg ? -ns : ns;
		return 0;
	}
	case HWSIM_FAULT_FREQ_JUMP:
		v = strtod(eq, &end);
		if (end == eq || *end || fabs(v) > 1000)
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault freq-jump=%s: ppm, -1000 to 1000", eq);
		f->value = (int64_t)llround(v * 1000);
		return 0;
	case HWSIM_FAULT_TX_LOSS:
		v = strtod(eq, &end);
		if (end == eq || *end || v < 0 || v > 100 || v != floor(v))
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault tx-loss=%s: a whole percent, 0 to 100", eq);
		f->value = (int64_t)v;
		return 0;
	case HWSIM_FAULT_TX_LATE: {
		/* PERCENT[,MAX]: MAX a time as step= takes it, 500ms when
		 * not given. */
		const char *comma = strchr(eq, ',');
		char pct[32];
		long long ns = HWSIM_LATE_MAX_DEF;
		size_t plen = comma ? (size_t)(comma - eq) : strlen(eq);

		if (plen >= sizeof(pct))
			plen = sizeof(pct) - 1;
		memcpy(pct, eq, plen);
		pct[plen] = 0;
		v = strtod(pct, &end);
		if (end == pct || *end || v < 0 || v > 100 || v != floor(v))
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault tx-late=%s: PERCENT[,MAX] with "
					  "a whole percent, 0 to 100", eq);
		if (comma && (opts_parse_ns(comma + 1, 1, &ns) || ns <= 0 ||
			      ns > HWSIM_LATE_MAX_MAX)) {
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault tx-late=%s: MAX a time over 0 "
					  "and up to 60s (a number with ns, us, ms, s or m)", eq);
		}
		f->value = (int64_t)v;
		f->max_ns = ns;
		return 0;
	}
	case HWSIM_FAULT_GM_GONE:
		if (strcmp(eq, "on") && strcmp(eq, "off"))
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault gm-gone=%s: on or off", eq);
		f->value = !strcmp(eq, "on");
		return 0;
	case HWSIM_FAULT_RX_PTP_ONLY:
		if (strcmp(eq, "ptp") && strcmp(eq, "all"))
			return errbuf_set(err, HWSIM_FAULT_ERRBUF, -EINVAL,
					  "--fault rx-filter=%s: ptp (PTP event "
					  "packets only) or all", eq);
		f->value = !strcmp(eq, "ptp");
		return 0;
	}
	return -EINVAL;
}

/* Every --fault on the NIC of --iface, or on every NIC of the host. */
static int hwsim_faults(struct hwsim_host *h, const struct opts *o)
{
	const char *const *items, *iface = opts_str(o, "iface");
	size_t n = opts_list(o, "fault", &items);
	struct hwsim_fault f[16];
	char err[HWSIM_FAULT_ERRBUF];
	int one = -1;

	if (n > sizeof(f) / sizeof(f[0])) {
		fprintf(stderr, "tapless-hwsim: at most %zu --fault\n",
			sizeof(f) / sizeof(f[0]));
		return PROG_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		if (hwsim_parse_fault(items[i], &f[i], err)) {
			fprintf(stderr, "tapless-hwsim: %s\n", err);
			return PROG_USAGE;
		}
	if (iface && (one = hwsim_phc_find(h, iface, false)) < 0) {
		fprintf(stderr, "tapless-hwsim: host %s has no NIC %s (a PHC is "
			"made when a program first asks about the interface)\n",
			hwsim_host_name(h), iface);
		return 1;
	}
	if (!iface && !hwsim_phc_count(h)) {
		fprintf(stderr, "tapless-hwsim: host %s has no NIC yet\n",
			hwsim_host_name(h));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < hwsim_phc_count(h); k++)
			if (one < 0 || (int)k == one)
				hwsim_fault(h, (int)k, &f[i]);
	return 0;
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
	bool control = opts_flag(o, "truth") || opts_given(o, "fault");

	if (!control && first >= argc) {
		fprintf(stderr, "tapless-hwsim: no program to run\n"
			"try 'tapless-hwsim --help'\n");
		goto out;
	}
	rc = 1;
	if (!control && (errno = -mkpath_p(dir, 0755))) {
		fprintf(stderr, "tapless-hwsim: --dir %s: %s\n", dir, strerror(errno));
		goto out;
	}
	hwsim_params_from(o, &want);
	if (hwsim_host_open(&h, dir, host, !control, &want, err)) {
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
	if (opts_given(o, "fault")) {
		rc = hwsim_faults(h, o);
		if (rc || !opts_flag(o, "truth"))
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
