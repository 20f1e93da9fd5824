/* test_opts.c — options tables: command line, config file, precedence,
 * errors that name the option (and the file and line), --help. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/opts.h"
#include "unit.h"

static const char *const modes[] = { "auto", "hw", "sw", NULL };

static const struct opt_def defs[] = {
	{ "interface", 'i', OPT_LIST, NULL, 0, 0, NULL, "IFACE", "capture on IFACE", 0 },
	{ "rate", 'r', OPT_INT, "1000", 1, 100000, NULL, "N", "messages per second", 0 },
	{ "window", 0, OPT_DOUBLE, "0.5", 0, 10, NULL, "S", "window", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, modes, "MODE", "stamp source", 0 },
	{ "out", 'w', OPT_STRING, NULL, 0, 0, NULL, "DIR", "output directory", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "config file", OPT_CLI_ONLY },
	{ "journal_dir", 0, OPT_STRING, "/var/lib/tapless", 0, 0, NULL, NULL, "journals", OPT_FILE_ONLY },
	{ "offset", 0, OPT_INT, "0", 0, 0, NULL, "NS", "unbounded", 0 },
	OPT_END
};

static int parse(struct opts *o, struct opts_error *err, ...)
{
	char *argv[32] = { "prog" };
	int argc = 1;
	va_list ap;
	char *a;

	va_start(ap, err);
	while ((a = va_arg(ap, char *)))
		argv[argc++] = a;
	va_end(ap);
	return opts_parse_args(o, argc, argv, err);
}

static char *write_file(const char *text)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/tapless-opts.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(defaults)
{
	struct opts *o = opts_create(defs);
	const char *const *items;

	ck_assert_int_eq(opts_int(o, "rate"), 1000);
	ck_assert(opts_double(o, "window") == 0.5);
	ck_assert_int_eq(opts_enum(o, "mode"), 0);
	ck_assert_ptr_null(opts_str(o, "out"));
	ck_assert(!opts_flag(o, "json"));
	ck_assert_uint_eq(opts_list(o, "interface", &items), 0);
	ck_assert_str_eq(opts_str(o, "journal_dir"), "/var/lib/tapless");
	ck_assert(!opts_given(o, "rate"));
	opts_destroy(o);
}
END_TEST

START_TEST(command_line)
{
	struct opts *o = opts_create(defs);
	struct opts_error err;
	const char *const *items;

	ck_assert_int_eq(parse(o, &err, "-i", "eth1", "--interface=eth2",
			       "--rate", "0x10", "-m", "sw", "--window=2.5",
			       "-j", "--out", "/tmp/x", "tcp", "port", "9001",
			       NULL), 12);
	ck_assert_uint_eq(opts_list(o, "interface", &items), 2);
	ck_assert_str_eq(items[0], "eth1");
	ck_assert_str_eq(items[1], "eth2");
	ck_assert_int_eq(opts_int(o, "rate"), 16);
	ck_assert_int_eq(opts_enum(o, "mode"), 2);
	ck_assert(opts_double(o, "window") == 2.5);
	ck_assert(opts_flag(o, "json"));
	ck_assert_str_eq(opts_str(o, "out"), "/tmp/x");
	ck_assert(opts_given(o, "rate"));
	/* "--" ends the options. */
	ck_assert_int_eq(parse(o, &err, "-j", "--", "-r", NULL), 3);
	/* Unbounded: 0, 0 in the table. */
	ck_assert_int_eq(parse(o, &err, "--offset", "-99999999999", NULL), 3);
	ck_assert(opts_int(o, "offset") == -99999999999LL);
	opts_destroy(o);
}
END_TEST

START_TEST(command_line_errors)
{
	static const struct {
		const char *a, *b, *want;
	} cases[] = {
		{ "--foo", NULL, "unknown option '--foo'" },
		{ "-x", NULL, "unknown option '-x'" },
		{ "--rate", NULL, "option '--rate' needs an argument" },
		{ "-r", NULL, "option '-r' needs an argument" },
		{ "--rate", "12x", "--rate: '12x' is not a number" },
		{ "--rate", "0", "--rate: 0 is out of range [1, 100000]" },
		{ "--rate", "99999999999999999999", "--rate: '99999999999999999999' is too large" },
		{ "--window", "nan", "--window: 'nan' is not a number" },
		{ "--window", "11", "--window: 11 is out of range [0, 10]" },
		{ "--mode", "h", "--mode: 'h' is not one of: auto, hw, sw" },
		{ "--journal_dir", "/x", "unknown option '--journal_dir'" },
		{ "--journal-dir", "/x", "unknown option '--journal-dir'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct opts *o = opts_create(defs);
		struct opts_error err = { "" };

		ck_assert_int_lt(parse(o, &err, cases[i].a, cases[i].b, NULL), 0);
		ck_assert_msg(strstr(err.msg, cases[i].want), "case %zu: '%s'",
			      i, err.msg);
		opts_destroy(o);
	}
}
END_TEST

static int sections_seen;

static int on_section(void *arg, const char *section, const char *key,
		      const char *value, const char *path, int line,
		      struct opts_error *err)
{
	(void)arg;
	(void)path;
	if (!key) {
		ck_assert_str_eq(section, "eth1");
		ck_assert_int_eq(line, 5);
		sections_seen++;
		return 0;
	}
	if (strcmp(key, "role")) {
		snprintf(err->msg, sizeof(err->msg), "%d: bad key %s", line, key);
		return -1;
	}
	ck_assert_str_eq(section, "eth1");
	ck_assert_str_eq(value, "client");
	ck_assert_int_eq(line, 6);
	sections_seen++;
	return 0;
}

START_TEST(config_file)
{
	struct opts *o = opts_create(defs);
	struct opts_error err;
	const char *const *items;
	char *p = write_file("# tapless test\n\nrate 5000\n[global]\n"
			     "journal_dir /srv/j # not a comment\n"
			     "[eth1]\nrole client\n");

	sections_seen = 0;
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), -EINVAL);
	ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, ":6: [eth1] is not allowed"),
		      "%s", err.msg);
	unlink(p);

	p = write_file("rate 5000\njournal_dir /srv/j # not a comment\n"
		       "interface eth3\njson yes\n[eth1]\nrole client\n");
	ck_assert_int_eq(opts_parse_file(o, p, on_section, NULL, &err), 0);
	ck_assert_int_eq(sections_seen, 2);
	ck_assert_int_eq(opts_int(o, "rate"), 5000);
	ck_assert_str_eq(opts_str(o, "journal_dir"), "/srv/j # not a comment");
	ck_assert(opts_flag(o, "json"));
	ck_assert_uint_eq(opts_list(o, "interface", &items), 1);
	unlink(p);
	opts_destroy(o);
}
END_TEST

START_TEST(config_file_errors)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "rate 1\nfoo 2\n", ":2: unknown option 'foo'" },
		{ "\n\nrate 12x\n", ":3: rate: '12x' is not a number" },
		{ "config /etc/x\n", ":1: 'config' is only allowed on the command line" },
		{ "rate\n", ":1: rate needs a value" },
		{ "[eth1\n", ":1: bad section header" },
		{ "json maybe\n", ":1: json: 'maybe' is not one of" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct opts *o = opts_create(defs);
		struct opts_error err = { "" };
		char *p = write_file(cases[i].text);

		ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), -EINVAL);
		ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, cases[i].want),
			      "case %zu: '%s'", i, err.msg);
		unlink(p);
		opts_destroy(o);
	}
	{
		struct opts *o = opts_create(defs);
		struct opts_error err;

		ck_assert_int_eq(opts_parse_file(o, "/nonexistent/tapless.conf",
						 NULL, NULL, &err), -ENOENT);
		ck_assert(strstr(err.msg, "/nonexistent/tapless.conf"));
		opts_destroy(o);
	}
}
END_TEST

START_TEST(long_line)
{
	struct opts *o = opts_create(defs);
	struct opts_error err;
	char *text = malloc(10000);
	char *p;

	strcpy(text, "out ");
	memset(text + 4, 'x', 9000);
	strcpy(text + 9004, "\n");
	p = write_file(text);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), -EINVAL);
	ck_assert_msg(strstr(err.msg, ":1: line longer"), "%s", err.msg);
	unlink(p);
	free(text);
	opts_destroy(o);
}
END_TEST

/* Where each value came from: the file's line, per list item, and 0 for
 * what the command line or the default set (tapless-syncd names FILE:LINE
 * of a value it refuses after parsing, issue 17 item 9). */
START_TEST(lines)
{
	struct opts *o = opts_create(defs);
	struct opts_error err;
	char *p = write_file("# first\ninterface eth1\n\nrate 5000\n"
			     "interface eth2\nrate 6000\nwindow 1\n");

	ck_assert_int_eq(parse(o, &err, "--window", "2", NULL), 3);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), 0);
	ck_assert_int_eq(opts_line(o, "interface", 0), 2);
	ck_assert_int_eq(opts_line(o, "interface", 1), 5);
	ck_assert_int_eq(opts_line(o, "interface", 2), 0);	/* no such item */
	ck_assert_int_eq(opts_line(o, "rate", 0), 6);		/* the last counts */
	ck_assert_int_eq(opts_line(o, "window", 0), 0);		/* command line */
	ck_assert_int_eq(opts_line(o, "mode", 0), 0);		/* default */
	ck_assert_int_eq(opts_line(o, "nonesuch", 0), 0);
	/* A list the command line gives replaces the file's, lines too. */
	ck_assert_int_eq(parse(o, &err, "-i", "eth7", NULL), 3);
	ck_assert_int_eq(opts_line(o, "interface", 0), 0);
	unlink(p);
	opts_destroy(o);
}
END_TEST

START_TEST(precedence)
{
	struct opts *o = opts_create(defs);
	struct opts_error err;
	const char *const *items;
	char *p = write_file("rate 5000\nmode hw\ninterface eth9\nwindow 1\n");

	/* Command line first (as programs do, to learn -f), then the file:
	 * the file fills in only what the command line left alone. */
	ck_assert_int_eq(parse(o, &err, "--rate", "7", "-i", "eth1", NULL), 5);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), 0);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_int_eq(opts_enum(o, "mode"), 1);
	ck_assert(opts_double(o, "window") == 1);
	ck_assert_uint_eq(opts_list(o, "interface", &items), 1);
	ck_assert_str_eq(items[0], "eth1");
	opts_destroy(o);

	/* File first, then the command line: same result. */
	o = opts_create(defs);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), 0);
	ck_assert_int_eq(parse(o, &err, "--rate", "7", "-i", "eth1", NULL), 5);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_uint_eq(opts_list(o, "interface", &items), 1);
	ck_assert_str_eq(items[0], "eth1");
	/* opts_set_value as the file would: the command line still wins. */
	ck_assert_int_eq(opts_set_value(o, "rate", "9", false, &err), 0);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_int_eq(opts_set_value(o, "nope", "9", true, &err), -EINVAL);
	unlink(p);
	opts_destroy(o);
}
END_TEST

START_TEST(usage_lists_everything)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts_usage(f, defs);
	fclose(f);
	for (const struct opt_def *d = defs; d->name; d++) {
		char want[OPTS_NAME_MAX + 2], name[OPTS_NAME_MAX];

		opts_cli_name(name, sizeof(name), d->name);
		snprintf(want, sizeof(want), "--%s", name);
		if (d->flags & OPT_FILE_ONLY)
			ck_assert_msg(!strstr(buf, want), "%s shown", want);
		else
			ck_assert_msg(strstr(buf, want), "%s missing:\n%s", want, buf);
	}
	ck_assert(strstr(buf, "-i, --interface IFACE"));
	ck_assert(strstr(buf, "[default: 1000]"));
	ck_assert(strstr(buf, "[range: 1..100000]"));
	ck_assert(strstr(buf, "[one of: auto, hw, sw]"));
	ck_assert(strstr(buf, "(repeatable)"));
	free(buf);
}
END_TEST

/* Keys with '_' (a file's spelling, linuxptp's) are hyphenated on the
 * command line; the old underscore spelling is still taken there. */
static const struct opt_def udefs[] = {
	{ "sync_threshold", 0, OPT_INT, "1000", 1, 1e9, NULL, "NS", "in sync below NS", 0 },
	{ "free_running", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "measure only", 0 },
	{ "log_level", 'l', OPT_STRING, "notice", 0, 0, NULL, "LEVEL", "level", 0 },
	{ "dry-run", 'n', OPT_FLAG, NULL, 0, 0, NULL, NULL, "check only", OPT_CLI_ONLY },
	OPT_END
};

START_TEST(hyphens)
{
	struct opts *o = opts_create(udefs);
	struct opts_error err = { "" };
	char name[OPTS_NAME_MAX], small[5], *buf = NULL;
	size_t len = 0;
	FILE *f;
	char *p;

	opts_cli_name(name, sizeof(name), "journal_rotate_size");
	ck_assert_str_eq(name, "journal-rotate-size");
	opts_cli_name(name, sizeof(name), "dry-run");
	ck_assert_str_eq(name, "dry-run");
	opts_cli_name(small, sizeof(small), "log_level");
	ck_assert_str_eq(small, "log-");

	/* Hyphens on the command line; the program asks by key. */
	ck_assert_int_eq(parse(o, &err, "--sync-threshold", "5", "--free-running",
			       "--log-level=debug", "-n", NULL), 6);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 5);
	ck_assert(opts_flag(o, "free_running"));
	ck_assert_str_eq(opts_str(o, "log_level"), "debug");
	ck_assert(opts_flag(o, "dry-run"));
	/* The underscore spelling: the same option. */
	ck_assert_int_eq(parse(o, &err, "--sync_threshold=7", "--log_level",
			       "info", NULL), 4);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 7);
	ck_assert_str_eq(opts_str(o, "log_level"), "info");
	/* Two spellings of one option make no abbreviation ambiguous. */
	ck_assert_int_eq(parse(o, &err, "--sync", "8", NULL), 3);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 8);
	opts_destroy(o);

	/* Messages name the option as the command line spells it, whichever
	 * spelling was typed. */
	o = opts_create(udefs);
	ck_assert_int_lt(parse(o, &err, "--sync_threshold", "0", NULL), 0);
	ck_assert_str_eq(err.msg, "--sync-threshold: 0 is out of range [1, 1000000000]");
	ck_assert_int_lt(parse(o, &err, "--sync-threshold", NULL), 0);
	ck_assert_str_eq(err.msg, "option '--sync-threshold' needs an argument");
	ck_assert_int_lt(parse(o, &err, "--free-running=1", NULL), 0);
	ck_assert_int_lt(parse(o, &err, "--dry_run", NULL), 0);
	ck_assert_str_eq(err.msg, "unknown option '--dry_run'");

	/* A file keeps the key: underscores, and only them. */
	p = write_file("sync_threshold 9\nfree_running 1\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), 0);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 9);
	ck_assert(opts_flag(o, "free_running"));
	unlink(p);
	p = write_file("sync-threshold 9\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), -EINVAL);
	ck_assert_msg(strstr(err.msg, ":1: unknown option 'sync-threshold'"),
		      "%s", err.msg);
	unlink(p);
	opts_destroy(o);

	/* --help shows the hyphenated spelling only. */
	f = open_memstream(&buf, &len);
	opts_usage(f, udefs);
	fclose(f);
	ck_assert_msg(strstr(buf, "    --sync-threshold NS "), "%s", buf);
	ck_assert_msg(strstr(buf, "-l, --log-level LEVEL "), "%s", buf);
	ck_assert_msg(strstr(buf, "    --free-running "), "%s", buf);
	ck_assert_msg(!strchr(buf, '_'), "%s", buf);
	free(buf);
}
END_TEST

/* A daemon re-reading its file starts from fresh options and takes the
 * command line's values again: they keep winning over the file. */
START_TEST(copy_cli)
{
	struct opts *cli = opts_create(defs), *o = opts_create(defs);
	struct opts_error err;
	const char *const *items;
	char *p;

	ck_assert_int_ge(parse(cli, &err, "-r", "7", "-i", "eth1", "-i", "eth2",
			       "-w", "/srv", NULL), 0);
	opts_copy_cli(o, cli);
	p = write_file("rate 9\nout /tmp\nwindow 2\ninterface eth9\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, &err), 0);
	unlink(p);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_str_eq(opts_str(o, "out"), "/srv");
	ck_assert_double_eq(opts_double(o, "window"), 2);	/* file's */
	ck_assert_uint_eq(opts_list(o, "interface", &items), 2);
	ck_assert_str_eq(items[1], "eth2");
	ck_assert(opts_given(o, "rate"));
	opts_destroy(cli);
	/* The copy owns its strings. */
	ck_assert_str_eq(opts_str(o, "out"), "/srv");
	opts_destroy(o);
}
END_TEST

static Suite *opts_suite(void)
{
	Suite *s = suite_create("opts");
	TCase *t = tcase_create("opts");

	tcase_add_test(t, defaults);
	tcase_add_test(t, command_line);
	tcase_add_test(t, command_line_errors);
	tcase_add_test(t, config_file);
	tcase_add_test(t, config_file_errors);
	tcase_add_test(t, long_line);
	tcase_add_test(t, precedence);
	tcase_add_test(t, copy_cli);
	tcase_add_test(t, lines);
	tcase_add_test(t, hyphens);
	tcase_add_test(t, usage_lists_everything);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(opts_suite)
