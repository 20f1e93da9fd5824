/* sim.h — captures with known truth: two hosts (an algo and a venue) running
 * the FTTC FIX 4.4 workload through a modelled switch, each host's NIC
 * stamping every frame with its own imperfect clock.
 *
 * sim_run() writes into one directory what a real measurement would leave
 * behind — one capture per host (pcapng or classic pcap), one sync journal
 * per host, a topology file — and, beside them, truth.json: every one-way,
 * transaction and switch latency the correlator should find, computed from
 * the true times of the model and from the very stamps written, with the
 * same definitions the correlator uses (tapless-sim(1)).
 *
 * Everything is deterministic from the seed: the same configuration gives
 * byte-identical files. Memory is bounded by what is in flight (a few
 * microseconds of frames), not by the number of messages, except for the
 * truth samples (8 bytes per message and distribution, and per frame of a
 * tapped host, or fixed-size histograms with no_truth_stats).
 *
 * With a tap on a host (tap[]), a third kind of file: what an optical tap
 * and a capture card with a clock of their own saw on the host's fibres,
 * the reference tapless validate measures the host's stamps against. *
 * With capture_drop on a host, frames are missing from its capture file
 * and nowhere else (a capture that drops in bursts): every other byte of
 * the run is the same, and the truth counts only what the files still let
 * the correlator measure.
 */
#ifndef TAPLESS_SIM_H
#define TAPLESS_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_RATES 32
#define SIM_MAX_RATE 1e7	/* market data messages/s, at most */
#define SIM_MAX_UNSYNC 8
#define SIM_MAX_SYMBOLS 64
#define SIM_ERRBUF 512

enum sim_host_id { SIM_ALGO, SIM_VENUE, SIM_HOSTS };

enum sim_switch {
	SIM_SWITCH_NONE,		/* back to back: one cable */
	SIM_SWITCH_ARISTA_7124SX,	/* cut-through, N(576.9, 8.9) ns */
	SIM_SWITCH_MELLANOX_SX1036,	/* cut-through, N(394, 9) ns */
	SIM_SWITCH_GNODAL_GS7200,	/* store and forward, N(487.5, 15) ns
					 * plus the frame's serialisation */
	SIM_SWITCH_COUNT
};

enum sim_format { SIM_FMT_PCAPNG, SIM_FMT_PCAP, SIM_FMT_PCAP_US, SIM_FMT_COUNT };

/* A clock: error(t) = offset + rate * t + wander * sin(2 pi t / period +
 * phase) + noise (gaussian, SD noise, clamped at 4 SD, drawn per stamp),
 * t the true time since the start; a stamp is floor((t + error) / quantum)
 * * quantum, in whole nanoseconds (floor). A quantum that is a whole number
 * of nanoseconds is on the absolute grid; another (the tap's 7.5 ns) on a
 * grid aligned to the start (picoseconds since 1970 overflow int64). */
struct sim_clock {
	double offset_ns;
	double rate_ppb;	/* |rate| <= 1e6; ns of error per s */
	double wander_ns;
	double period_s;	/* > 0 */
	double noise_ns;	/* >= 0 */
	int64_t quantum_ps;	/* >= 1 (0.001 ns) */
};

/* Seconds after the start, [from, to). */
struct sim_window {
	double from_s, to_s;
};

struct sim_host_config {
	struct sim_clock clock;
	bool tai;			/* stamps on TAI (UTC + 37 s), else UTC */
	enum sim_format format;
	double start_late_s;		/* capture starts this long after start */
	/* Added to every stamp, and unknown to the journal (its offset and
	 * bound are the clock model's): a clock wrong without its sync
	 * daemon knowing, as a misconfigured ptp4l or an edited journal. */
	double clock_error_ns;
	struct sim_window unsync[SIM_MAX_UNSYNC];
	unsigned nunsync;
	/* Probability that a frame is missing from this host's capture file
	 * (and only from it: the host and the network behave as if it was
	 * captured), drawn per frame from a stream of its own. 0 <= p < 1. */
	double capture_drop;
	bool capture_drop_set;		/* given on the command line */
};

struct sim_config {
	const char *out_dir;
	uint64_t seed;
	int64_t rates[SIM_MAX_RATES];	/* market data messages per second */
	unsigned nrates;
	double duration_s;		/* of each run */
	int64_t messages;		/* per run, overrides duration; 0: none */
	const char *symbols;		/* comma-separated */
	int64_t md_jitter_ns;		/* exponential mean added to publication */
	int64_t algo_reaction_ns, algo_reaction_exp_ns;
	int64_t venue_reaction_ns, venue_reaction_exp_ns;
	double coalesce;		/* New and Filled in one segment */
	enum sim_switch sw;
	double cable_m;			/* per cable */
	int64_t speed_bps;
	int64_t stack_delay_ns, stack_jitter_ns;	/* receive side */
	struct sim_host_config host[SIM_HOSTS];
	int64_t start_s;		/* true time of the first packet, UTC */
	unsigned mss;
	double retransmit, reorder, pure_acks, noise;	/* probabilities */
	double journal_interval_s;
	int64_t qty;
	bool no_truth_stats;		/* histograms instead of every sample */
	bool truth_samples;		/* truth-samples: one line per hop message */
	/* Optical taps: tap[h] writes tap-HOST.pcapng, every frame on host
	 * h's fibres at its true wire instant, stamped by tap_clock (on UTC;
	 * default perfect with a 7.5 ns quantum, as an Endace DAG). */
	bool tap[SIM_HOSTS];
	struct sim_clock tap_clock;
};

/* What a run wrote. */
struct sim_result {
	uint64_t md_messages;		/* market data published */
	uint64_t trades;		/* BUYs (each with its SELL) */
	uint64_t fix_messages;		/* all FIX messages sent */
	uint64_t packets[SIM_HOSTS];	/* frames in each capture */
	char file[SIM_HOSTS][32];	/* capture file names in out_dir */
	uint64_t tap_packets[SIM_HOSTS];	/* frames in each tap file */
	char tap_file[SIM_HOSTS][32];	/* "" when not tapped */
	uint64_t capture_dropped[SIM_HOSTS];	/* frames left out of each */
};

/* The defaults of tapless-sim(1): one run of 5 s at 1000/s, arista-7124sx,
 * 2 m cables at 10G, both hosts on TAI, seed 1, ... */
void sim_config_init(struct sim_config *c);

/* Parsers for the command-line forms; each returns 0, or -EINVAL with a
 * message in err naming what is wrong. */
int sim_parse_rates(struct sim_config *c, const char *text,
		    char err[SIM_ERRBUF]);
/* "10G", "25G", "1G", "100M": bits per second (M or G, a whole number;
 * the bit time must be a whole number of picoseconds). */
int sim_parse_speed(const char *text, int64_t *bps);
/* "HOST:offset=NS,rate=PPB,wander=NS,period=S,noise=NS,quantum=NS" (any
 * subset); HOST is algo, venue or tap (the clock of every tap). quantum
 * takes up to 3 decimals (7.5). */
int sim_parse_clock(struct sim_config *c, const char *text,
		    char err[SIM_ERRBUF]);
/* "HOST=tai" or "HOST=utc". */
int sim_parse_timescale(struct sim_config *c, const char *text,
			char err[SIM_ERRBUF]);
/* "HOST=FROM-TO", seconds after the start. */
int sim_parse_unsync(struct sim_config *c, const char *text,
		     char err[SIM_ERRBUF]);
/* "HOST=S". */
/* "HOST=TIME": host's clock_error_ns, TIME a duration with a unit, maybe
 * negative ("-20us"). */
int sim_parse_clock_error(struct sim_config *c, const char *text,
			  char err[SIM_ERRBUF]);
int sim_parse_start_late(struct sim_config *c, const char *text,
			 char err[SIM_ERRBUF]);
/* "HOST": tap that host (algo or venue). */
int sim_parse_tap(struct sim_config *c, const char *text, char err[SIM_ERRBUF]);
/* "HOST=P" or "HOST=P%": capture_drop, 0 <= P < 1 (0% to below 100%);
 * once per host. */
int sim_parse_capture_drop(struct sim_config *c, const char *text,
			   char err[SIM_ERRBUF]);
/* "HOST=pcapng", "HOST=pcap" (nanoseconds) or "HOST=pcap-us". */
int sim_parse_format(struct sim_config *c, const char *text,
		     char err[SIM_ERRBUF]);

int sim_switch_from_name(const char *name);		/* or -1 */

/* Generate. Creates out_dir if missing and writes ALGO.pcapng (or .pcap),
 * VENUE.pcapng, algo.journal, venue.journal, topology, truth.json, for
 * each tapped host, tap-HOST.pcapng and, with truth_samples,
 * truth-samples.
 * Returns 0; -EINVAL for a configuration that cannot run (err says why);
 * another -errno when a file cannot be written (err names the path). Each
 * file appears under its final name only when whole. */
int sim_run(const struct sim_config *c, struct sim_result *res,
	    char err[SIM_ERRBUF]);

#endif
