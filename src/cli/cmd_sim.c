/* cmd_sim.c — tapless sim: captures, sync journals and a topology with
 * known truth, for testing the correlator. See tapless-sim(1).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "base/opts.h"
#include "sim/sim.h"

static const char *const sim_switch_choices[] = {
	"none", "arista-7124sx", "mellanox-sx1036", "gnodal-gs7200", NULL,
};

static const struct opt_def sim_opts[] = {
	{ "output", 'o', OPT_STRING, NULL, 0, 0, NULL, "DIR", "write the files into DIR (created if missing)", 0 },
	OPT_OLD_NAME("out"),	/* its name before --output everywhere */
	{ "seed", 0, OPT_INT, "1", 0, 4294967295.0, NULL, "N", "seed of every random draw", 0 },
	{ "rate", 'r', OPT_INT, "1000", 1, 10000000, NULL, "N", "market data messages per second", 0 },
	{ "rates", 0, OPT_STRING, NULL, 0, 0, NULL, "R1,R2,...", "runs at these rates in turn, 1 s apart (instead of --rate)", 0 },
	{ "duration", 'd', OPT_DURATION, "5", 0.000001, 86400, NULL, "TIME", "length of each run", OPT_S },
	{ "messages", 'n', OPT_INT, "0", 0, 1000000000, NULL, "N", "market data messages per run, instead of --duration (0: from --duration)", 0 },
	{ "symbols", 0, OPT_STRING, "AAPL,MSFT,GOOG", 0, 0, NULL, "LIST", "symbols (55) bid on, comma-separated", 0 },
	{ "md_jitter", 0, OPT_DURATION, "0", 0, 1000000000, NULL, "TIME", "mean of an exponential delay added to each publication", OPT_NS },
	{ "algo_reaction", 0, OPT_DURATION, "3000", 0, 1000000000, NULL, "TIME", "algo's fixed reaction time", OPT_NS },
	{ "algo_reaction_exp", 0, OPT_DURATION, "500", 0, 1000000000, NULL, "TIME", "mean of the algo's exponential extra reaction time", OPT_NS },
	{ "venue_reaction", 0, OPT_DURATION, "2000", 0, 1000000000, NULL, "TIME", "venue's fixed reaction time", OPT_NS },
	{ "venue_reaction_exp", 0, OPT_DURATION, "300", 0, 1000000000, NULL, "TIME", "mean of the venue's exponential extra reaction time", OPT_NS },
	{ "coalesce", 0, OPT_DOUBLE, "0.5", 0, 1, NULL, "P", "probability that New and Filled share one segment", 0 },
	{ "switch", 0, OPT_ENUM, "arista-7124sx", 0, 0, sim_switch_choices, "MODEL", "switch between the hosts", 0 },
	{ "cable", 0, OPT_DOUBLE, "2", 0, 100000, NULL, "METRES", "length of each cable (4.9 ns/m)", 0 },
	{ "speed", 0, OPT_STRING, "10G", 0, 0, NULL, "SPEED", "link speed: 100M, 1G, 10G, 25G, 40G, 100G", 0 },
	{ "stack_delay", 0, OPT_DURATION, "0", 0, 1000000000, NULL, "TIME", "receive stamps taken this long after the frame arrives", OPT_NS },
	{ "stack_jitter", 0, OPT_DURATION, "0", 0, 1000000000, NULL, "TIME", "mean of an exponential delay added to --stack-delay", OPT_NS },
	{ "clock", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST:KEY=V,...", "clock model of algo, venue or tap (offset, rate, wander, period, noise, quantum)", 0 },
	{ "tap", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST", "tap a host's fibres: tap-HOST.pcapng, true wire times by the tap's clock (7.5 ns)", 0 },
	{ "timescale", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=tai|utc", "timescale of a host's stamps (default tai)", 0 },
	{ "clock_error", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=TIME", "a host's stamps off by TIME (e.g. 20us, -5us) without its journal knowing", 0 },
	{ "unsync", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=FROM-TO", "a host out of sync from FROM to TO seconds after the start", 0 },
	{ "start", 0, OPT_INT, "1763900000", 0, 4102444800.0, NULL, "SECONDS", "UTC time of the first packet, seconds since 1970", 0 },
	{ "mss", 0, OPT_INT, "1448", 16, 8960, NULL, "BYTES", "TCP payload bytes per segment", 0 },
	{ "retransmit", 0, OPT_DOUBLE, "0", 0, 1, NULL, "P", "probability that a data segment is sent again 200 us later", 0 },
	{ "reorder", 0, OPT_DOUBLE, "0", 0, 1, NULL, "P", "probability that a data segment arrives after the next one", 0 },
	{ "start_late", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=S", "a host's capture starts S seconds after the start", 0 },
	{ "pure_acks", 0, OPT_DOUBLE, "0.1", 0, 1, NULL, "P", "probability of a payload-less ACK after a data segment", 0 },
	{ "noise", 0, OPT_DOUBLE, "0", 0, 1, NULL, "P", "probability of a non-FIX packet after a data segment", 0 },
	{ "capture_drop", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=P", "frames missing from a host's capture file only, each with probability P (0.001 or 0.1%)", 0 },
	{ "format", 0, OPT_LIST, NULL, 0, 0, NULL, "HOST=FORMAT", "capture format of a host: pcapng, pcap (ns) or pcap-us", 0 },
	{ "journal_interval", 0, OPT_DURATION, "1", 0.001, 3600, NULL, "TIME", "time between sync journal samples", OPT_S },
	{ "qty", 0, OPT_INT, "100", 1, 1000000000, NULL, "N", "OrderQty (38) of each order", 0 },
	{ "no_truth_stats", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "keep histograms, not every sample, for the truth", 0 },
	{ "truth_samples", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "write truth-samples: every hop message's stamps and true latency", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

typedef int (*sim_list_fn)(struct sim_config *c, const char *text,
			   char err[SIM_ERRBUF]);

static int sim_lists(struct sim_config *c, const struct opts *o,
		     char err[SIM_ERRBUF])
{
	static const struct {
		const char *name;
		sim_list_fn fn;
	} lists[] = {
		{ "clock", sim_parse_clock },
		{ "timescale", sim_parse_timescale },
		{ "unsync", sim_parse_unsync },
		{ "clock-error", sim_parse_clock_error },
		{ "start-late", sim_parse_start_late },
		{ "format", sim_parse_format },
		{ "tap", sim_parse_tap },
		{ "capture-drop", sim_parse_capture_drop },
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		const char *const *items;
		size_t n = opts_list(o, lists[i].name, &items);

		for (size_t k = 0; k < n; k++) {
			int rc = lists[i].fn(c, items[k], err);

			if (rc)
				return rc;
		}
	}
	return 0;
}

int cmd_sim(int argc, char **argv)
{
	struct sim_config c;
	struct sim_result r;
	char err[SIM_ERRBUF] = "";
	struct opts *o;
	int first, rc;

	rc = cmd_options(sim_opts, argc, argv, "--output DIR", &o, &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	sim_config_init(&c);
	if (first < argc) {
		snprintf(err, sizeof(err), "unexpected operand '%s'", argv[first]);
		goto usage;
	}
	c.out_dir = opts_str(o, "output");
	if (!c.out_dir) {
		snprintf(err, sizeof(err), "--output: an output directory is needed");
		goto usage;
	}
	c.seed = (uint64_t)opts_int(o, "seed");
	c.rates[0] = opts_int(o, "rate");
	if (opts_str(o, "rates")) {
		if (opts_given(o, "rate")) {
			snprintf(err, sizeof(err), "--rate and --rates: give one of them");
			goto usage;
		}
		if (sim_parse_rates(&c, opts_str(o, "rates"), err))
			goto usage;
	}
	c.duration_s = (double)opts_ns(o, "duration") / 1e9;
	c.messages = opts_int(o, "messages");
	c.symbols = opts_str(o, "symbols");
	c.md_jitter_ns = opts_ns(o, "md_jitter");
	c.algo_reaction_ns = opts_ns(o, "algo_reaction");
	c.algo_reaction_exp_ns = opts_ns(o, "algo_reaction_exp");
	c.venue_reaction_ns = opts_ns(o, "venue_reaction");
	c.venue_reaction_exp_ns = opts_ns(o, "venue_reaction_exp");
	c.coalesce = opts_double(o, "coalesce");
	c.sw = (enum sim_switch)opts_enum(o, "switch");
	c.cable_m = opts_double(o, "cable");
	if (sim_parse_speed(opts_str(o, "speed"), &c.speed_bps)) {
		snprintf(err, sizeof(err), "--speed: '%s' is not a speed such as "
			 "100M, 1G, 10G, 25G, 40G or 100G", opts_str(o, "speed"));
		goto usage;
	}
	c.stack_delay_ns = opts_ns(o, "stack_delay");
	c.stack_jitter_ns = opts_ns(o, "stack_jitter");
	c.start_s = opts_int(o, "start");
	c.mss = (unsigned)opts_int(o, "mss");
	c.retransmit = opts_double(o, "retransmit");
	c.reorder = opts_double(o, "reorder");
	c.pure_acks = opts_double(o, "pure_acks");
	c.noise = opts_double(o, "noise");
	c.journal_interval_s = (double)opts_ns(o, "journal_interval") / 1e9;
	c.qty = opts_int(o, "qty");
	c.no_truth_stats = opts_flag(o, "no_truth_stats");
	c.truth_samples = opts_flag(o, "truth_samples");
	if (sim_lists(&c, o, err))
		goto usage;

	rc = sim_run(&c, &r, err);
	if (rc == -EINVAL)
		goto usage;
	if (rc) {
		fprintf(stderr, "tapless sim: %s\n", err);
		opts_destroy(o);
		return CMD_SYSTEM;
	}
	printf("tapless sim: %llu market data messages, %llu trades, %llu FIX "
	       "messages; wrote %s/{%s (%llu frames), %s (%llu frames), ",
	       (unsigned long long)r.md_messages, (unsigned long long)r.trades,
	       (unsigned long long)r.fix_messages, c.out_dir,
	       r.file[SIM_ALGO], (unsigned long long)r.packets[SIM_ALGO],
	       r.file[SIM_VENUE], (unsigned long long)r.packets[SIM_VENUE]);
	for (int h = 0; h < SIM_HOSTS; h++)
		if (r.tap_file[h][0])
			printf("%s (%llu frames), ", r.tap_file[h],
			       (unsigned long long)r.tap_packets[h]);
	printf("algo.journal, venue.journal, topology, truth.json%s}",
	       c.truth_samples ? ", truth-samples" : "");
	if (c.host[SIM_ALGO].capture_drop_set || c.host[SIM_VENUE].capture_drop_set)
		printf("; dropped from the captures: %llu algo, %llu venue",
		       (unsigned long long)r.capture_dropped[SIM_ALGO],
		       (unsigned long long)r.capture_dropped[SIM_VENUE]);
	printf("\n");
	opts_destroy(o);
	return CMD_OK;
usage:
	fprintf(stderr, "tapless sim: %s\ntry 'tapless sim --help'\n", err);
	opts_destroy(o);
	return CMD_USAGE;
}
