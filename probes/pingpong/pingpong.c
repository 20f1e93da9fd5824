/* pingpong.c — tapless-pingpong: UDP and TCP ping-pong, one message in
 * flight, stamped with SO_TIMESTAMPING on both ends. See tapless-pingpong(1).
 *
 * The client sends ping k; the server echoes it as pong k, of the same size,
 * carrying its own stamps: the RX stamps of ping k and the time its
 * application received it, and the TX stamps of an earlier pong (normally
 * pong k-1: a TX stamp is known only after the send). The client so has, for
 * each message, its own application clocks and stamps and the server's, and
 * reports the half round trip from its application clock, both one-way
 * latencies from the stamps, and each host's share, stage by stage.
 *
 * This file: the options, the checks between them, signals and main, which
 * runs the server or the client. See pp_private.h for the other files.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/log.h"
#include "base/opts.h"
#include "base/prog.h"
#include "probes/pingpong/pp_private.h"

/* ---- options ----------------------------------------------------------- */

static const char *const pp_protos[] = { "udp", "tcp", NULL };
static const char *const pp_modes[] = { "auto", "hw", "sw", NULL };

static const struct opt_def pp_opts[] = {
	{ "server", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "run the echo server (else the client)", 0 },
	{ "bind", 'b', OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "server: address to listen on; client: local address", 0 },
	{ "to", 0, OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "client: the server", OPT_OLD_LETTER('t') },
	{ "proto", 0, OPT_ENUM, "udp", 0, 0, pp_protos, "PROTO", "udp or tcp", OPT_OLD_LETTER('p') },
	{ "size", 0, OPT_INT, "64", PP_MIN_SIZE, PP_MAX_TCP, NULL, "BYTES", "client: message size (UDP: up to 1472)", OPT_OLD_LETTER('s') },
	{ "count", 'n', OPT_INT, NULL, 1, PP_MAX_MESSAGES, NULL, "N", "client: messages to measure (default 10000); server: exit after echoing N", 0 },
	{ "duration", 'd', OPT_DURATION, NULL, 0.001, 31536000, NULL, "TIME", "client: measure this long instead of a count", OPT_S },
	{ "rate", 'r', OPT_INT, "0", 0, 10000000, NULL, "N", "client: messages per second (0: each as soon as the last is answered)", 0 },
	{ "warmup", 0, OPT_INT, "100", 0, 1000000, NULL, "N", "client: messages exchanged before measuring", 0 },
	{ "timeout_ms", 0, OPT_DURATION, "1000", 1, 600000, NULL, "TIME", "client: wait this long for an answer", OPT_MS },
	{ "tx_timeout", 0, OPT_DURATION, "200ms", 1, 60000, NULL, "TIME", "wait this long for a message's TX stamps, then count them lost", OPT_MS },
	{ "idle_ms", 0, OPT_DURATION, "0", 0, 86400000, NULL, "TIME", "server: exit after TIME without a message (0: never)", OPT_MS },
	{ "no_stamps", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "plain send and recv, no SO_TIMESTAMPING (half round trip only)", 0 },
	{ "write", 'w', OPT_STRING, NULL, 0, 0, NULL, "FILE", "write this side's messages with their stamps to FILE (pcapng)", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "cpu", 0, OPT_INT, NULL, 0, CPU_SETSIZE - 1, NULL, "CPU", "run on CPU only", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, pp_modes, "MODE", "stamp source: auto, hw or sw", 0 },
	{ "interface", 'i', OPT_STRING, NULL, 0, 0, NULL, "IFACE", "interface for hardware stamps (default: the one holding the local address)", 0 },
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog pp_prog = {
	.name = "tapless-pingpong",
	.opts = pp_opts,
	.usage = "usage: tapless-pingpong --server --bind ADDR:PORT [options]\n"
		 "       tapless-pingpong --to ADDR:PORT [options]\n"
		 "UDP or TCP ping-pong with SO_TIMESTAMPING stamps: half round "
		 "trip, one-way latencies\nand each host's share.\n\n",
};

volatile sig_atomic_t pp_stop;

static void pp_signal(int sig)
{
	(void)sig;
	pp_stop = 1;
}

/* ---- main ---------------------------------------------------------------- */

/* Options that make sense for one role only. */
static int pp_check_opts(const struct opts *o)
{
	static const char *const client_only[] = {
		"to", "size", "duration", "rate", "warmup", "timeout-ms",
	};
	static const char *const server_only[] = { "idle-ms" };
	bool server = opts_flag(o, "server");

	for (size_t i = 0; i < sizeof(client_only) / sizeof(*client_only); i++)
		if (server && opts_given(o, client_only[i])) {
			log_err("--%s is for the client, not with --server",
				client_only[i]);
			return PP_USAGE;
		}
	for (size_t i = 0; i < sizeof(server_only) / sizeof(*server_only); i++)
		if (!server && opts_given(o, server_only[i])) {
			log_err("--%s is for the server (--server)", server_only[i]);
			return PP_USAGE;
		}
	if (server && !opts_str(o, "bind")) {
		log_err("--server needs --bind ADDR:PORT");
		return PP_USAGE;
	}
	if (!server && !opts_str(o, "to")) {
		log_err("give --to ADDR:PORT (client) or --server --bind "
			"ADDR:PORT; --help lists the options");
		return PP_USAGE;
	}
	if (opts_given(o, "count") && opts_given(o, "duration")) {
		log_err("give --count or --duration, not both");
		return PP_USAGE;
	}
	if (opts_enum(o, "proto") == 0 && opts_int(o, "size") > PP_MAX_UDP) {
		log_err("--size %lld: UDP messages are at most %d bytes",
			opts_int(o, "size"), PP_MAX_UDP);
		return PP_USAGE;
	}
	if (opts_flag(o, "no_stamps") && opts_str(o, "write")) {
		log_err("--write needs stamps: not with --no-stamps");
		return PP_USAGE;
	}
	if (opts_flag(o, "no_stamps") &&
	    (opts_given(o, "mode") || opts_given(o, "interface"))) {
		log_err("--mode and --interface choose stamps: not with --no-stamps");
		return PP_USAGE;
	}
	return PP_OK;
}

int main(int argc, char **argv)
{
	struct opts *o;
	int rc;

	o = prog_start(&pp_prog, argc, argv, &rc);
	if (!o)
		return rc;
	rc = pp_check_opts(o);
	if (rc) {
		opts_destroy(o);
		return rc;
	}
	if (opts_given(o, "cpu")) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)opts_int(o, "cpu"), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			rc = errno == EINVAL ? PP_USAGE : PP_SYSTEM;
			if (errno == EINVAL)
				log_err("--cpu %lld: no such CPU, or not one this "
					"process may use", opts_int(o, "cpu"));
			else
				log_err("--cpu %lld: %m", opts_int(o, "cpu"));
			opts_destroy(o);
			return rc;
		}
	}
	/* No SA_RESTART: a blocked recv returns, and the run ends cleanly. */
	prog_signals(pp_signal, NULL);
	rc = opts_flag(o, "server") ? pp_server(o) : pp_client(o);
	opts_destroy(o);
	return rc;
}
