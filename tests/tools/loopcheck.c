/* loopcheck — loopcheck_run() on two ports, for the namespace test:
 *
 *   loopcheck [--stamps auto|hw|sw] [--count N] [--rate PPS] [--len BYTES]
 *             [--expect NS] [--tx-timeout-ms MS] [--one-way] [--json] A B
 *
 * Prints the result (loopcheck_print) and both checks (loopcheck_judge,
 * default limits) as text or JSON. Exit status: 0 whatever the verdicts
 * (the test judges the figures itself), 1 usage, 2 the run failed (the
 * error on stderr). Not installed: tapless validate is the tool for users.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "loopcheck.h"
#include "opts.h"
#include "print.h"
#include "verdict.h"

static const char *const lc_modes[] = { "auto", "hw", "sw", NULL };

static const struct opt_def lc_opts[] = {
	{ "stamps", 's', OPT_ENUM, "auto", 0, 0, lc_modes, "SOURCE", "stamps: auto, hw or sw", 0 },
	{ "count", 'n', OPT_INT, "1000", 1, 16777216, NULL, "N", "frames per direction", 0 },
	{ "rate", 'r', OPT_DOUBLE, "1000", 1, 1e7, NULL, "PPS", "frames a second per direction", 0 },
	{ "len", 'l', OPT_INT, "64", 60, 9216, NULL, "BYTES", "frame length less FCS", 0 },
	{ "expect", 'e', OPT_INT, "-1", -1, 1e12, NULL, "NS", "expected one-way (-1: not known)", 0 },
	{ "tx-timeout-ms", 0, OPT_INT, "100", 1, 60000, NULL, "MS", "a TX stamp later than this is late", 0 },
	{ "one-way", '1', OPT_FLAG, NULL, 0, 0, NULL, NULL, "only A -> B", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "print JSON", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

int main(int argc, char **argv)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	struct loopcheck_config cfg;
	struct loopcheck_result res;
	struct verdict_limits lim;
	struct verdict_check loop, hwsw;
	struct opts_error oerr;
	struct printer *p;
	struct opts *o;
	char err[256];
	int i, rc;

	log_init("loopcheck", false, LOG_NOTICE);
	o = opts_create(lc_opts);
	i = opts_parse_args(o, argc, argv, &oerr);
	if (i >= 0 && opts_flag(o, "help")) {
		printf("usage: loopcheck [options] A B\n");
		opts_usage(stdout, lc_opts);
		opts_destroy(o);
		return 0;
	}
	if (i < 0 || argc - i != 2) {
		fprintf(stderr, "loopcheck: %s\n", i < 0 ? oerr.msg :
			"two ports wanted (--help)");
		opts_destroy(o);
		return 1;
	}
	loopcheck_config_init(&cfg);
	cfg.port[0] = argv[i];
	cfg.port[1] = argv[i + 1];
	cfg.mode = modes[opts_enum(o, "stamps")];
	cfg.count = (unsigned)opts_int(o, "count");
	cfg.rate_pps = opts_double(o, "rate");
	cfg.frame_len = (unsigned)opts_int(o, "len");
	cfg.expect_ns = opts_int(o, "expect");
	cfg.tx_timeout_ns = opts_int(o, "tx-timeout-ms") * 1000000;
	cfg.one_way = opts_flag(o, "one-way");

	rc = loopcheck_run(&cfg, &res, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "loopcheck: %s\n", err);
		opts_destroy(o);
		return 2;
	}
	verdict_limits_init(&lim);
	loopcheck_judge(&res, &lim, &loop, &hwsw);
	p = print_create(stdout, opts_flag(o, "json") ? PRINT_JSON : PRINT_TEXT, 0);
	loopcheck_print(p, &res);
	print_array_begin(p, "checks");
	verdict_print(p, &loop);
	verdict_print(p, &hwsw);
	print_array_end(p);
	rc = print_destroy(p);
	loopcheck_result_free(&res);
	opts_destroy(o);
	return rc ? 2 : 0;
}
