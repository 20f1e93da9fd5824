/* test_prog.c — program start-up: --help, --version, usage errors and their
 * exit status, operands, the config file, the log level and sink. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "base/log.h"
#include "base/opts.h"
#include "base/prog.h"
#include "unit.h"

static const struct opt_def defs[] = {
	{ "rate", 'r', OPT_INT, "1000", 1, 100000, NULL, "N", "messages per second", 0 },
	{ "run_dir", 0, OPT_STRING, "/run/x", 0, 0, NULL, "DIR", "where", 0 },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "read options from FILE", OPT_CLI_ONLY },
	PROG_OPT_SYSLOG,
	PROG_OPT_LOG_LEVEL,
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog tprog = {
	.name = "tapless-test",
	.opts = defs,
	.usage = "usage: tapless-test [OPTIONS]\n\noptions:\n",
	.config = PROG_CONFIG_FILE,
};

/* A table without the standard options but --help. */
static const struct opt_def bare_defs[] = {
	{ "size", 's', OPT_INT, "64", 1, 100, NULL, "BYTES", "size", 0 },
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog bare = {
	.name = "tapless-bare",
	.opts = bare_defs,
	.usage = "bare\n",
	.operands = true,
};

/* What prog_start wrote on stdout and stderr, whole. */
static char out[8192], errs[8192];

static void slurp(int fd, char *buf, size_t size)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, size - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
	close(fd);
}

/* prog_start(p) on "prog" and the arguments (NULL-terminated), stdout and
 * stderr caught in out and errs. */
static struct opts *start(const struct prog *p, int *ret, ...)
{
	char *argv[32] = { "prog" }, *a;
	char po[] = "/tmp/tapless-prog-out.XXXXXX";
	char pe[] = "/tmp/tapless-prog-err.XXXXXX";
	int argc = 1, fo = mkstemp(po), fe = mkstemp(pe);
	int so = dup(1), se = dup(2);
	struct opts *o;
	va_list ap;

	va_start(ap, ret);
	while ((a = va_arg(ap, char *)))
		argv[argc++] = a;
	va_end(ap);
	ck_assert(fo >= 0 && fe >= 0 && so >= 0 && se >= 0);
	unlink(po);
	unlink(pe);
	fflush(stdout);
	fflush(stderr);
	dup2(fo, 1);
	dup2(fe, 2);
	o = prog_start(p, argc, argv, ret);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, out, sizeof(out));
	slurp(fe, errs, sizeof(errs));
	return o;
}

/* prog_log, its message to /dev/null. */
static int log_quiet(const struct prog *p, const struct opts *o)
{
	int se = dup(2), null = open("/dev/null", O_WRONLY);
	int rc;

	ck_assert(se >= 0 && null >= 0);
	fflush(stderr);
	dup2(null, 2);
	rc = prog_log(p, o);
	fflush(stderr);
	dup2(se, 2);
	close(se);
	close(null);
	return rc;
}

START_TEST(help)
{
	int ret = -1;

	ck_assert_ptr_null(start(&tprog, &ret, "--help", NULL));
	ck_assert_int_eq(ret, 0);
	ck_assert_str_eq(errs, "");
	ck_assert_msg(!strncmp(out, "usage: tapless-test [OPTIONS]\n\noptions:\n"
			       "  -r, --rate N ", 41), "%s", out);
	ck_assert_msg(strstr(out, "\n      --run-dir DIR "), "%s", out);
	ck_assert_msg(strstr(out, "\n  -l, --log-level LEVEL "), "%s", out);
	ck_assert_msg(strstr(out, "\n  -V, --version "), "%s", out);
	ck_assert_msg(strstr(out, "\n  -h, --help "), "%s", out);
	/* -h too; and --help wins over a bad level, which is not looked at. */
	ck_assert_ptr_null(start(&tprog, &ret, "-l", "bogus", "-h", NULL));
	ck_assert_int_eq(ret, 0);
	ck_assert(strstr(out, "usage: tapless-test"));
	ck_assert_ptr_null(start(&bare, &ret, "-h", NULL));
	ck_assert_int_eq(ret, 0);
	ck_assert(!strncmp(out, "bare\n  -s, --size BYTES", 23));
}
END_TEST

START_TEST(version)
{
	char want[256];
	int ret = -1;

	ck_assert(tapless_version[0]);
	ck_assert(!strchr(tapless_version, ' ') && !strchr(tapless_version, '\n'));
	ck_assert_ptr_null(start(&tprog, &ret, "--version", NULL));
	ck_assert_int_eq(ret, 0);
	snprintf(want, sizeof(want), "tapless-test %s\n", tapless_version);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(errs, "");
	want[strlen(want) - 1] = 0;
	ck_assert_str_eq(prog_version(), want);
	ck_assert_ptr_null(start(&tprog, &ret, "-V", NULL));
	ck_assert_int_eq(ret, 0);
	/* No --version in the table: an unknown option. */
	ck_assert_ptr_null(start(&bare, &ret, "--version", NULL));
	ck_assert_int_eq(ret, PROG_USAGE);
}
END_TEST

START_TEST(usage_errors)
{
	static const struct {
		const char *a, *b, *want;
	} cases[] = {
		{ "--nope", NULL, "tapless-test: unknown option '--nope'\n"
		  "try 'tapless-test --help'\n" },
		{ "-Z", NULL, "tapless-test: unknown option '-Z'\n"
		  "try 'tapless-test --help'\n" },
		{ "--rate", NULL, "tapless-test: option '--rate' needs an argument\n"
		  "try 'tapless-test --help'\n" },
		{ "--rate", "0", "tapless-test: --rate: 0 is out of range [1, 100000]\n"
		  "try 'tapless-test --help'\n" },
		{ "extra", NULL, "tapless-test: unexpected operand 'extra'\n"
		  "try 'tapless-test --help'\n" },
		{ "--log-level", "bogus", "tapless-test: --log-level: 'bogus' is not "
		  "a level\n" },
		{ "-f", "/nonexistent/x.conf", "tapless-test: /nonexistent/x.conf: "
		  "No such file or directory\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = -1;

		ck_assert_ptr_null(start(&tprog, &ret, cases[i].a, cases[i].b, NULL));
		ck_assert_int_eq(ret, PROG_USAGE);
		ck_assert_msg(!strcmp(errs, cases[i].want), "case %zu: '%s'", i, errs);
		ck_assert_str_eq(out, "");
	}
}
END_TEST

START_TEST(runs)
{
	struct opts *o;
	int ret = -1;

	/* Nothing given: the defaults, notice to stderr. */
	o = start(&tprog, &ret, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ret, 1);
	ck_assert_int_eq(opts_int(o, "rate"), 1000);
	ck_assert_int_eq(log_level, LOG_NOTICE);
	ck_assert_str_eq(out, "");
	ck_assert_str_eq(errs, "");
	opts_destroy(o);

	/* The level, under either spelling. */
	o = start(&tprog, &ret, "-r", "5", "--log-level", "debug", NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ret, 5);
	ck_assert_int_eq(opts_int(o, "rate"), 5);
	ck_assert_int_eq(log_level, LOG_DEBUG);
	opts_destroy(o);
	o = start(&tprog, &ret, "--log_level", "err", NULL);
	ck_assert_int_eq(log_level, LOG_ERR);
	opts_destroy(o);

	/* Operands where the program takes them: the index of the first. */
	o = start(&bare, &ret, "-s", "9", "tcp", "port", "9001", NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ret, 3);
	ck_assert_int_eq(opts_int(o, "size"), 9);
	/* No --log-level in the table: notice. */
	ck_assert_int_eq(log_level, LOG_NOTICE);
	opts_destroy(o);
}
END_TEST

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "prog");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

START_TEST(config_file)
{
	char path[128];
	struct opts *o;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/x.conf", dir);
	unit_write_file(path, "rate 7\nrun_dir /srv/r\nlog_level info\n");
	/* The file fills in what the command line left alone. */
	o = start(&tprog, &ret, "-f", path, "-r", "9", NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ret, 5);
	ck_assert_int_eq(opts_int(o, "rate"), 9);
	ck_assert_str_eq(opts_str(o, "run_dir"), "/srv/r");
	ck_assert_int_eq(log_level, LOG_INFO);
	opts_destroy(o);

	/* Errors name the file and line, without "try --help". */
	unit_write_file(path, "\nrate 12x\n");
	ck_assert_ptr_null(start(&tprog, &ret, "--config", path, NULL));
	ck_assert_int_eq(ret, PROG_USAGE);
	ck_assert_msg(strstr(errs, ":2: rate: '12x' is not a number\n") &&
		      !strncmp(errs, "tapless-test: ", 14) && !strstr(errs, "try"),
		      "%s", errs);

	/* A level from the file that is not one. */
	unit_write_file(path, "log_level loud\n");
	ck_assert_ptr_null(start(&tprog, &ret, "-f", path, NULL));
	ck_assert_int_eq(ret, PROG_USAGE);
	ck_assert_str_eq(errs, "tapless-test: --log-level: 'loud' is not a level\n");
}
END_TEST

/* A program that reads its file itself: prog_start stops before the
 * file and the log; prog_log does the log after. */
START_TEST(own_config)
{
	struct prog own = tprog;
	char path[128];
	struct opts *o;
	int ret = -1;

	own.config = PROG_CONFIG_OWN;
	snprintf(path, sizeof(path), "%s/own.conf", dir);
	unit_write_file(path, "rate 12x\n");
	log_init("x", false, LOG_ERR);
	o = start(&own, &ret, "-f", path, "-l", "bogus", NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ret, 5);
	ck_assert_int_eq(log_level, LOG_NOTICE);	/* as at every start */
	ck_assert_int_eq(opts_int(o, "rate"), 1000);	/* file not read */
	ck_assert_int_eq(log_quiet(&own, o), PROG_USAGE);
	opts_destroy(o);
	o = start(&own, &ret, "-l", "7", NULL);
	ck_assert_int_eq(prog_log(&own, o), 0);
	ck_assert_int_eq(log_level, LOG_DEBUG);
	opts_destroy(o);
}
END_TEST

static Suite *prog_suite(void)
{
	Suite *s = suite_create("prog");
	TCase *t = tcase_create("prog");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, help);
	tcase_add_test(t, version);
	tcase_add_test(t, usage_errors);
	tcase_add_test(t, runs);
	tcase_add_test(t, config_file);
	tcase_add_test(t, own_config);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(prog_suite)
