/* cmd_correlate.c — tapless correlate: several hosts' captures in, one-way
 * latency per hop, transactions and switch latency out (corr.h does the
 * work; this file turns the command line into its configuration).
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "corr/corr.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/ratelist.h"
#include "files/samples.h"
#include "files/topo.h"
#include "stamp/ts.h"
#include "base/wholefile.h"
#include "base/xalloc.h"

static const struct opt_def correlate_opts[] = {
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "csv", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "CSV output, one table per section", 0 },
	{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent JSON output", 0 },
	{ "sync", 's', OPT_LIST, NULL, 0, 0, NULL, "NAME=JOURNAL",
	  "the sync journal of host NAME (repeat per host)", 0 },
	{ "tap_format", 0, OPT_LIST, NULL, 0, 0, NULL, "NAME=FORMAT",
	  "where input NAME's stamps are: a tap's trailer or header format, none (the records'), or auto (detected: the default)", 0 },
	{ "calibration", 'k', OPT_LIST, NULL, 0, 0, NULL, "NAME=FILE",
	  "host NAME's stamp calibration, tapless-calibration(5) (repeat per host)", 0 },
	{ "topology", 't', OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "hosts' addresses, switches and cables", 0 },
	{ "baseline", 0, OPT_LIST, NULL, 0, 0, NULL, "NAME=FILE",
	  "a back-to-back run of host NAME, to subtract (repeat per host)", OPT_OLD_LETTER('b') },
	{ "window", 0, OPT_DURATION, "1000000000", 1000, 3600e9, NULL, "TIME",
	  "how long a message waits for its peers", OPT_OLD_LETTER('w') | OPT_NS },
	{ "traffic_window", 0, OPT_DURATION, "1000000000", 1e6, 3600e9, NULL, "TIME",
	  "window of the traffic's check on the clocks", OPT_NS },
	{ "by_rate", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "results per market data rate bucket", OPT_OLD_LETTER('r') },
	{ "rates", 0, OPT_STRING, RATELIST_FTTC,
	  0, 0, NULL, "LIST", "rate bucket centres, messages/s", 0 },
	{ "first_byte", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "stamp of the frame with a message's first byte (default)", 0 },
	{ "last_byte", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "stamp of the frame with a message's last byte", 0 },
	CMD_INPUT_OPTS,
	{ "max_pending", 0, OPT_INT, "262144", 16, 1 << 26, NULL, "N",
	  "messages waiting for their peers, at most", 0 },
	{ "threads", 0, OPT_INT, "1", 0, 64, NULL, "N",
	  "N threads in all: the first N-1 hosts' captures each read and parsed on its own (0: as many as cores; 1: one thread)", 0 },
	{ "samples", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE",
	  "write every sample to FILE, one line each (for plots)", 0 },
	{ "follow", 'F', OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "live: follow each host's directory as tapless-capd writes it", 0 },
	{ "interval", 0, OPT_DURATION, "1", 0.01, 3600, NULL, "TIME",
	  "with --follow: results this often", OPT_S },
	{ "stall", 0, OPT_DURATION, "2", 0.1, 3600, NULL, "TIME",
	  "with --follow: a host without new data this long has stalled", OPT_S },
	{ "flow_series", 0, OPT_INT, "1000", 0, 1000000, NULL, "N",
	  "with --follow: per-flow metric series kept at most", 0 },
	{ "from_oldest", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL,
	  "with --follow: read the files already there first (default: start at the newest)", 0 },
	{ "metrics", 0, OPT_STRING, NULL, 0, 0, NULL, "[ADDR:]PORT",
	  "with --follow: serve Prometheus/OpenMetrics text (ADDR: localhost)", OPT_OLD_LETTER('m') },
	{ "alert", 'a', OPT_LIST, NULL, 0, 0, NULL, "RULE",
	  "with --follow: an alert rule, e.g. 'tick_to_trade.p99>50us' (repeat)", 0 },
	{ "alert_for", 0, OPT_INT, "1", 1, 1000, NULL, "N",
	  "intervals in breach before a rule fires", 0 },
	{ "alert_clear", 0, OPT_INT, "3", 1, 1000, NULL, "N",
	  "intervals out of breach before a firing rule clears", 0 },
	{ "alert_exec", 0, OPT_STRING, NULL, 0, 0, NULL, "CMD",
	  "run CMD (sh -c) when a rule fires or clears", 0 },
	{ "socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH",
	  "with --follow: answer 'tapless status --socket PATH' here", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

#define CORRELATE_SYNOPSIS "[NAME[@ADDR[,ADDR...]]=]FILE_OR_DIR ..."

/* --rates into cfg: 0, or -EINVAL with err saying which item is wrong. */
static int correlate_rates(const char *text, struct corr_config *cfg,
			   char err[RATELIST_ERRBUF])
{
	struct ratelist rl;
	int rc = ratelist_parse(&rl, text, CORR_MAX_RATES, 0, err);

	if (rc)
		return rc;
	cfg->nrates = rl.n;
	memcpy(cfg->rates, rl.rate, rl.n * sizeof(rl.rate[0]));
	return 0;
}

static void correlate_warnings(const struct corr *c, const char *what)
{
	for (unsigned i = 0; i < corr_warnings(c); i++)
		fprintf(stderr, "tapless correlate: %s%s\n", what,
			corr_warning(c, i));
}

/* A tap format given for a name no input has is a typo, most likely. */
static int correlate_tapfmt_used(const struct corr *c)
{
	const char *name = corr_tapfmt_unused(c);

	if (!name)
		return 0;
	fprintf(stderr, "tapless correlate: --tap-format for '%s', which is not "
		"an input host\n", name);
	return CMD_USAGE;
}

/* What the steps of cmd_correlate() share. */
struct correlate_cmd {
	struct opts *o;
	struct corr_config cfg;
	struct corr *c, *base;
	struct topo *topo;
	struct wholefile samples;
	char **operands;
	int nops;
	const char *const *bl;	/* --baseline operands */
	size_t nbl;
	unsigned pflags;
};

/* The options that go together or exclude each other: 0 or CMD_USAGE. */
static int correlate_check(const struct correlate_cmd *r)
{
	const struct opts *o = r->o;

	if (!r->nops) {
		fprintf(stderr, "tapless correlate: no captures given\n"
			"usage: tapless correlate [OPTIONS] %s\n",
			CORRELATE_SYNOPSIS);
		return CMD_USAGE;
	}
	if (opts_flag(o, "first_byte") && opts_flag(o, "last_byte")) {
		fprintf(stderr, "tapless correlate: --first-byte and --last-byte "
			"exclude each other\n");
		return CMD_USAGE;
	}
	static const char *const live_only[] = {
		"metrics", "alert", "alert-exec", "socket", "from-oldest",
		"interval", "stall", "alert-for", "alert-clear", "flow-series",
		NULL,
	};
	for (unsigned i = 0; !opts_flag(o, "follow") && live_only[i]; i++)
		if (opts_given(o, live_only[i])) {
			fprintf(stderr, "tapless correlate: --%s needs --follow\n",
				live_only[i]);
			return CMD_USAGE;
		}
	const char *const *bl0;
	if (opts_flag(o, "follow") && opts_list(o, "baseline", &bl0)) {
		fprintf(stderr, "tapless correlate: --baseline is for files "
			"read whole, not with --follow\n");
		return CMD_USAGE;
	}
	if (opts_flag(o, "follow") && opts_given(o, "threads")) {
		fprintf(stderr, "tapless correlate: --threads is for files "
			"read whole, not with --follow\n");
		return CMD_USAGE;
	}
	return 0;
}

/* The options into r->cfg, the topology loaded (with the operands'
 * addresses), the samples file open: 0 or the exit status. */
static int correlate_configure(struct correlate_cmd *r)
{
	struct corr_config *cfg = &r->cfg;
	const struct opts *o = r->o;
	char terr[TOPO_ERRBUF], rerr[RATELIST_ERRBUF];
	int rc;

	cfg->threads = (unsigned)opts_int(o, "threads");
	if (!cfg->threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		cfg->threads = n > 0 ? (unsigned)n : 1;
	}
	cfg->follow = opts_flag(o, "follow");
	cfg->from_oldest = opts_flag(o, "from_oldest");
	cfg->interval_ns = opts_ns(o, "interval");
	cfg->stall_ns = opts_ns(o, "stall");
	cfg->flow_series = (unsigned)opts_int(o, "flow_series");
	cfg->window_ns = opts_ns(o, "window");
	cfg->traffic_window_ns = opts_ns(o, "traffic_window");
	cmd_input_config(o, cfg);
	cfg->max_pending = (unsigned)opts_int(o, "max_pending");
	cfg->last_byte = opts_flag(o, "last_byte");
	cfg->by_rate = opts_flag(o, "by_rate");
	if (correlate_rates(opts_str(o, "rates"), cfg, rerr)) {
		fprintf(stderr, "tapless correlate: --rates: %s\n", rerr);
		return CMD_USAGE;
	}
	if (opts_str(o, "topology")) {
		if (topo_load(&r->topo, opts_str(o, "topology"), terr)) {
			fprintf(stderr, "tapless correlate: %s\n", terr);
			return CMD_USAGE;
		}
	}
	r->nbl = opts_list(o, "baseline", &r->bl);
	if ((rc = cmd_input_addrs("correlate", &r->topo, r->operands, r->nops)) ||
	    (rc = cmd_input_addrs("correlate", &r->topo, (char *const *)r->bl,
				  (int)r->nbl)))
		return rc;
	cfg->topo = r->topo;
	if (opts_str(o, "samples")) {
		int e = wholefile_open(&r->samples, opts_str(o, "samples"));

		if (e) {
			fprintf(stderr, "tapless correlate: %s: %s\n",
				r->samples.tmp, strerror(-e));
			wholefile_close(&r->samples, true);
			return CMD_SYSTEM;
		}
		cfg->samples = r->samples.f;
		(void)samples_write_header(cfg->samples);	/* checked at close */
	}
	return 0;
}

/* The correlator of the operands, with their journals, tap formats and
 * calibrations: 0 or the exit status. */
static int correlate_inputs(struct correlate_cmd *r)
{
	struct opts *o = r->o;
	int rc;

	r->cfg.samples_run = "main";
	corr_create(&r->c, &r->cfg);
	if ((rc = cmd_input_files("correlate", r->c, o, false, "tap-format",
				  "FORMAT", corr_set_tapfmt)) ||
	    (rc = cmd_input_hosts("correlate", r->c, r->operands, r->nops)) ||
	    (rc = correlate_tapfmt_used(r->c)) ||
	    (rc = cmd_input_lists("correlate", r->c, o, false)) ||
	    (rc = cmd_input_files("correlate", r->c, o, false, "calibration",
				  "FILE", corr_set_calibration)))
		return rc;
	return 0;
}

/* The --baseline run, read whole before the main one: 0 or the exit
 * status. */
static int correlate_baseline(struct correlate_cmd *r)
{
	struct opts *o = r->o;
	char err[CORR_ERRBUF];
	int rc;

	r->cfg.samples_run = "baseline";
	corr_create(&r->base, &r->cfg);
	/* The baseline's stamps come from the same clocks: the
	 * same journals (bounds, UTC offset) and timescales. */
	if ((rc = cmd_input_files("correlate", r->base, o, false,
				  "tap-format", "FORMAT",
				  corr_set_tapfmt)) ||
	    (rc = cmd_input_hosts("correlate", r->base, (char **)r->bl,
				  (int)r->nbl)) ||
	    (rc = cmd_input_lists("correlate", r->base, o, true)) ||
	    (rc = cmd_input_files("correlate", r->base, o, true,
				  "calibration", "FILE",
				  corr_set_calibration)))
		return rc;
	if (corr_run(r->base, err)) {
		fprintf(stderr, "tapless correlate: baseline: %s\n", err);
		return CMD_USAGE;
	}
	correlate_warnings(r->base, "baseline: ");
	return 0;
}

/* The main run, read whole, and its results on stdout: the exit status. */
static int correlate_report(struct correlate_cmd *r)
{
	struct printer *p;
	enum print_format fmt;
	char err[CORR_ERRBUF];

	if (corr_run(r->c, err)) {
		fprintf(stderr, "tapless correlate: %s\n", err);
		return CMD_USAGE;
	}
	correlate_warnings(r->c, "");
	fmt = print_format_from_opts(r->o, &r->pflags);
	p = print_create(stdout, fmt, r->pflags);
	corr_print(r->c, r->base, p);
	if (print_destroy(p)) {
		fprintf(stderr, "tapless correlate: writing the results: %s\n",
			strerror(EIO));
		return CMD_SYSTEM;
	}
	unsigned long long unknown = corr_direction_unknown(r->c);
	if (!corr_measured(r->c) && unknown) {
		fprintf(stderr, "tapless correlate: nothing could be measured: "
			"%llu messages were seen at two hosts but the direction "
			"is unknown (the captures do not record it, as classic "
			"pcap does not): name each host's addresses with "
			"NAME@ADDR[,ADDR...]=FILE or --topology FILE\n", unknown);
		return CMD_USAGE;
	}
	if (!corr_measured(r->c)) {
		fprintf(stderr, "tapless correlate: nothing could be measured "
			"(no message was seen leaving one host and arriving at "
			"another, and no transaction was complete)\n");
		return CMD_USAGE;
	}
	if (unknown)
		fprintf(stderr, "tapless correlate: warning: %llu messages "
			"seen at two hosts were not measured: the direction is "
			"unknown (the captures do not record it, as classic pcap "
			"does not): name each host's addresses with "
			"NAME@ADDR[,ADDR...]=FILE or --topology FILE\n", unknown);
	return CMD_OK;
}

/* The samples file closed and everything freed: the exit status, rc or
 * CMD_SYSTEM if the samples could not be completed. */
static int correlate_close(struct correlate_cmd *r, int rc)
{
	if (r->cfg.samples) {
		/* Under its final name only when whole. */
		const char *path = opts_str(r->o, "samples");
		int e = wholefile_close(&r->samples, rc != CMD_OK);

		if (e && rc == CMD_OK) {
			fprintf(stderr, "tapless correlate: %s: %s\n", path,
				strerror(-e));
			rc = CMD_SYSTEM;
		}
	}
	corr_destroy(r->base);
	corr_destroy(r->c);
	topo_destroy(r->topo);
	free(r->operands);
	opts_destroy(r->o);
	return rc;
}

int cmd_correlate(int argc, char **argv)
{
	struct correlate_cmd r = { .samples = { 0 } };
	int first, rc;

	corr_config_init(&r.cfg);
	rc = cmd_options(correlate_opts, argc, argv, CORRELATE_SYNOPSIS, &r.o,
			 &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	r.operands = xcalloc((size_t)argc, sizeof(char *));
	if ((rc = cmd_operands("correlate", r.o, argc, argv, first, r.operands,
			       &r.nops)))
		return correlate_close(&r, rc);
	if (opts_flag(r.o, "help")) {
		printf("usage: tapless correlate [OPTIONS] %s\n\noptions:\n",
		       CORRELATE_SYNOPSIS);
		opts_usage(stdout, correlate_opts);
		return correlate_close(&r, CMD_OK);
	}
	if ((rc = correlate_check(&r)) ||
	    (rc = correlate_configure(&r)) ||
	    (rc = correlate_inputs(&r)))
		return correlate_close(&r, rc);
	if (r.cfg.follow) {
		rc = cmd_correlate_follow(r.c, r.o,
					  print_format_from_opts(r.o, &r.pflags),
					  r.cfg.samples);
		correlate_warnings(r.c, "");
		return correlate_close(&r, rc);
	}
	if (r.nbl && (rc = correlate_baseline(&r)))
		return correlate_close(&r, rc);
	return correlate_close(&r, correlate_report(&r));
}
