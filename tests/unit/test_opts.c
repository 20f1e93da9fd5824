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

static int parse(struct opts *o, char *err, ...)
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
	char err[OPTS_ERRBUF];
	const char *const *items;

	ck_assert_int_eq(parse(o, err, "-i", "eth1", "--interface=eth2",
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
	ck_assert_int_eq(parse(o, err, "-j", "--", "-r", NULL), 3);
	/* Unbounded: 0, 0 in the table. */
	ck_assert_int_eq(parse(o, err, "--offset", "-99999999999", NULL), 3);
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
		char err[OPTS_ERRBUF] = "";

		ck_assert_int_lt(parse(o, err, cases[i].a, cases[i].b, NULL), 0);
		ck_assert_msg(strstr(err, cases[i].want), "case %zu: '%s'",
			      i, err);
		opts_destroy(o);
	}
}
END_TEST

static int sections_seen;

static int on_section(void *arg, const char *section, const char *key,
		      const char *value, const char *path, int line,
		      char err[OPTS_ERRBUF])
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
		snprintf(err, OPTS_ERRBUF, "%d: bad key %s", line, key);
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
	char err[OPTS_ERRBUF];
	const char *const *items;
	char *p = write_file("# tapless test\n\nrate 5000\n[global]\n"
			     "journal_dir /srv/j # not a comment\n"
			     "[eth1]\nrole client\n");

	sections_seen = 0;
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, p) && strstr(err, ":6: [eth1] is not allowed"),
		      "%s", err);
	unlink(p);

	p = write_file("rate 5000\njournal_dir /srv/j # not a comment\n"
		       "interface eth3\njson yes\n[eth1]\nrole client\n");
	ck_assert_int_eq(opts_parse_file(o, p, on_section, NULL, err), 0);
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
		char err[OPTS_ERRBUF] = "";
		char *p = write_file(cases[i].text);

		ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
		ck_assert_msg(strstr(err, p) && strstr(err, cases[i].want),
			      "case %zu: '%s'", i, err);
		unlink(p);
		opts_destroy(o);
	}
	{
		struct opts *o = opts_create(defs);
		char err[OPTS_ERRBUF];

		ck_assert_int_eq(opts_parse_file(o, "/nonexistent/tapless.conf",
						 NULL, NULL, err), -ENOENT);
		ck_assert(strstr(err, "/nonexistent/tapless.conf"));
		opts_destroy(o);
	}
}
END_TEST

START_TEST(long_line)
{
	struct opts *o = opts_create(defs);
	char err[OPTS_ERRBUF];
	char *text = malloc(10000);
	char *p;

	strcpy(text, "out ");
	memset(text + 4, 'x', 9000);
	strcpy(text + 9004, "\n");
	p = write_file(text);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: line longer"), "%s", err);
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
	char err[OPTS_ERRBUF];
	char *p = write_file("# first\ninterface eth1\n\nrate 5000\n"
			     "interface eth2\nrate 6000\nwindow 1\n");

	ck_assert_int_eq(parse(o, err, "--window", "2", NULL), 3);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
	ck_assert_int_eq(opts_line(o, "interface", 0), 2);
	ck_assert_int_eq(opts_line(o, "interface", 1), 5);
	ck_assert_int_eq(opts_line(o, "interface", 2), 0);	/* no such item */
	ck_assert_int_eq(opts_line(o, "rate", 0), 6);		/* the last counts */
	ck_assert_int_eq(opts_line(o, "window", 0), 0);		/* command line */
	ck_assert_int_eq(opts_line(o, "mode", 0), 0);		/* default */
	ck_assert_int_eq(opts_line(o, "nonesuch", 0), 0);
	/* A list the command line gives replaces the file's, lines too. */
	ck_assert_int_eq(parse(o, err, "-i", "eth7", NULL), 3);
	ck_assert_int_eq(opts_line(o, "interface", 0), 0);
	unlink(p);
	opts_destroy(o);
}
END_TEST

START_TEST(precedence)
{
	struct opts *o = opts_create(defs);
	char err[OPTS_ERRBUF];
	const char *const *items;
	char *p = write_file("rate 5000\nmode hw\ninterface eth9\nwindow 1\n");

	/* Command line first (as programs do, to learn -f), then the file:
	 * the file fills in only what the command line left alone. */
	ck_assert_int_eq(parse(o, err, "--rate", "7", "-i", "eth1", NULL), 5);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_int_eq(opts_enum(o, "mode"), 1);
	ck_assert(opts_double(o, "window") == 1);
	ck_assert_uint_eq(opts_list(o, "interface", &items), 1);
	ck_assert_str_eq(items[0], "eth1");
	opts_destroy(o);

	/* File first, then the command line: same result. */
	o = opts_create(defs);
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
	ck_assert_int_eq(parse(o, err, "--rate", "7", "-i", "eth1", NULL), 5);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_uint_eq(opts_list(o, "interface", &items), 1);
	ck_assert_str_eq(items[0], "eth1");
	/* opts_set_value as the file would: the command line still wins. */
	ck_assert_int_eq(opts_set_value(o, "rate", "9", false, err), 0);
	ck_assert_int_eq(opts_int(o, "rate"), 7);
	ck_assert_int_eq(opts_set_value(o, "nope", "9", true, err), -EINVAL);
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

/* One name, two spellings: '_' in a file (linuxptp's), '-' on the command
 * line; each place takes the other spelling too. */
static const struct opt_def udefs[] = {
	{ "sync_threshold", 0, OPT_INT, "1000", 1, 1e9, NULL, "NS", "in sync below NS", 0 },
	{ "free_running", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "measure only", 0 },
	{ "log_level", 'l', OPT_STRING, "notice", 0, 0, NULL, "LEVEL", "level", 0 },
	{ "dry_run", 'n', OPT_FLAG, NULL, 0, 0, NULL, NULL, "check only", OPT_CLI_ONLY },
	OPT_END
};

START_TEST(hyphens)
{
	struct opts *o = opts_create(udefs);
	char err[OPTS_ERRBUF] = "";
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
	ck_assert_int_eq(parse(o, err, "--sync-threshold", "5", "--free-running",
			       "--log-level=debug", "-n", NULL), 6);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 5);
	ck_assert(opts_flag(o, "free_running"));
	ck_assert_str_eq(opts_str(o, "log_level"), "debug");
	ck_assert(opts_flag(o, "dry_run"));
	/* The underscore spelling: the same option. */
	ck_assert_int_eq(parse(o, err, "--sync_threshold=7", "--log_level",
			       "info", NULL), 4);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 7);
	ck_assert_str_eq(opts_str(o, "log_level"), "info");
	/* Two spellings of one option make no abbreviation ambiguous. */
	ck_assert_int_eq(parse(o, err, "--sync", "8", NULL), 3);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 8);
	opts_destroy(o);

	/* Messages name the option as the command line spells it, whichever
	 * spelling was typed. */
	o = opts_create(udefs);
	ck_assert_int_lt(parse(o, err, "--sync_threshold", "0", NULL), 0);
	ck_assert_str_eq(err, "--sync-threshold: 0 is out of range [1, 1000000000]");
	ck_assert_int_lt(parse(o, err, "--sync-threshold", NULL), 0);
	ck_assert_str_eq(err, "option '--sync-threshold' needs an argument");
	ck_assert_int_lt(parse(o, err, "--free-running=1", NULL), 0);
	ck_assert_int_lt(parse(o, err, "--dry-runs", NULL), 0);
	ck_assert_str_eq(err, "unknown option '--dry-runs'");

	/* A file spells the key with underscores. */
	p = write_file("sync_threshold 9\nfree_running 1\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 9);
	ck_assert(opts_flag(o, "free_running"));
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
/* A file may spell a key with dashes (tapless-capd's and tapless-swemu's
 * files did): the same key, and messages quote it as the file wrote it. */
START_TEST(dashed_keys)
{
	struct opts *o = opts_create(udefs);
	char err[OPTS_ERRBUF] = "";
	char *p;

	p = write_file("sync-threshold 9\nfree-running 1\nlog_level info\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
	ck_assert_int_eq(opts_int(o, "sync_threshold"), 9);
	ck_assert_int_eq(opts_line(o, "sync_threshold", 0), 1);
	ck_assert(opts_flag(o, "free_running"));
	ck_assert_str_eq(opts_str(o, "log_level"), "info");
	ck_assert(opts_given(o, "sync-threshold"));
	unlink(p);

	p = write_file("sync-threshold 0\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: sync-threshold: 0 is out of range"),
		      "%s", err);
	unlink(p);
	p = write_file("dry-run 1\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: 'dry-run' is only allowed on the command "
			     "line"), "%s", err);
	unlink(p);
	/* Only '-' and '_' are one: other near names stay unknown. */
	p = write_file("sync.threshold 9\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: unknown option 'sync.threshold'"),
		      "%s", err);
	unlink(p);
	opts_destroy(o);

	ck_assert(opts_name_eq("write_dir", "write-dir"));
	ck_assert(opts_name_eq("a-b_c", "a_b-c"));
	ck_assert(!opts_name_eq("write_dir", "write_di"));
	ck_assert(!opts_name_eq("write_dir", "writedir"));
}
END_TEST

/* An old long name (OPT_OLD_NAME) sets the row before it, is shown in
 * --help, and is no row of its own anywhere else. */
static const struct opt_def adefs[] = {
	{ "output", 'o', OPT_STRING, NULL, 0, 0, NULL, "DIR", "write into DIR", 0 },
	OPT_OLD_NAME("out"),
	{ "seed", 0, OPT_INT, "1", 0, 100, NULL, "N", "seed", 0 },
	OPT_END
};

START_TEST(old_names)
{
	struct opts *o = opts_create(adefs);
	char err[OPTS_ERRBUF] = "";
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(parse(o, err, "--out", "d1", NULL), 3);
	ck_assert_str_eq(opts_str(o, "output"), "d1");
	ck_assert(opts_given(o, "output"));
	ck_assert_int_eq(parse(o, err, "--out=d2", "--seed", "5", NULL), 4);
	ck_assert_str_eq(opts_str(o, "output"), "d2");
	ck_assert_int_eq(opts_int(o, "seed"), 5);
	ck_assert_int_eq(parse(o, err, "--output", "d3", NULL), 3);
	ck_assert_str_eq(opts_str(o, "output"), "d3");
	ck_assert_int_eq(parse(o, err, "-o", "d4", NULL), 3);
	ck_assert_str_eq(opts_str(o, "output"), "d4");
	/* A message names the spelling typed. */
	ck_assert_int_lt(parse(o, err, "--out", NULL), 0);
	ck_assert_str_eq(err, "option '--out' needs an argument");
	ck_assert(!opts_has(o, "out"));
	/* Not a key of a file. */
	p = write_file("out d5\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: unknown option 'out'"), "%s", err);
	unlink(p);
	opts_destroy(o);

	f = open_memstream(&buf, &len);
	opts_usage(f, adefs);
	fclose(f);
	ck_assert_msg(strstr(buf, "-o, --output DIR") &&
		      strstr(buf, "write into DIR (also --out, deprecated)\n"),
		      "%s", buf);
	ck_assert_msg(!strstr(buf, "  --out "), "%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	opts_print_table(f, adefs);
	fclose(f);
	ck_assert_str_eq(buf, "output\to\t-\tstring\toutput\n"
			 "seed\t-\t-\tint\tseed\n");
	free(buf);
}
END_TEST

START_TEST(copy_cli)
{
	struct opts *cli = opts_create(defs), *o = opts_create(defs);
	char err[OPTS_ERRBUF];
	const char *const *items;
	char *p;

	ck_assert_int_ge(parse(cli, err, "-r", "7", "-i", "eth1", "-i", "eth2",
			       "-w", "/srv", NULL), 0);
	opts_copy_cli(o, cli);
	p = write_file("rate 9\nout /tmp\nwindow 2\ninterface eth9\n");
	ck_assert_int_eq(opts_parse_file(o, p, NULL, NULL, err), 0);
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

/* Durations: a number with a unit, or bare in the option's own unit. */
static const struct opt_def tdefs[] = {
	{ "window", 'w', OPT_DURATION, "1000000000", 1000, 3600e9, NULL, NULL, "window", OPT_NS },
	{ "timeout_ms", 0, OPT_DURATION, "5000", 100, 600000, NULL, "MS", "wait", OPT_MS },
	{ "interval", 0, OPT_DURATION, "1", 0.01, 3600, NULL, NULL, "every", OPT_S },
	{ "spin", 0, OPT_DURATION, "20", 0, 100000, NULL, NULL, "spin", OPT_US },
	{ "free", 0, OPT_DURATION, NULL, 0, 0, NULL, NULL, "unbounded", OPT_S },
	{ "skew", 0, OPT_DURATION, "0", -1000, 1000, NULL, NULL, "signed", OPT_NS },
	{ "big", 0, OPT_INT, "0", 0, 1e15, NULL, "N", "count", 0 },
	{ "neg", 0, OPT_INT, "-1", -1, 4095, NULL, "N", "cpu", 0 },
	{ "frac", 0, OPT_DOUBLE, "0.1", 1e-6, 1e7, NULL, "S", "seconds", 0 },
	OPT_END
};

static long long ns_of(const char *name, const char *text, int *rc,
		       char err[OPTS_ERRBUF])
{
	struct opts *o = opts_create(tdefs);
	long long ns = -42;

	*rc = opts_set_value(o, name, text, true, err);
	if (!*rc)
		ns = opts_ns(o, name);
	opts_destroy(o);
	return ns;
}

START_TEST(durations)
{
	static const struct {
		const char *name, *text;
		long long ns;
	} ok[] = {
		{ "window", "100ns", 100000 / 1000 * 10 },	/* below: range */
		{ "window", "1000", 1000 },			/* bare: ns */
		{ "window", "50us", 50000 },
		{ "window", "250ms", 250000000 },
		{ "window", "1s", 1000000000 },
		{ "window", "1.5s", 1500000000 },
		{ "window", "2m", 120000000000LL },
		{ "window", "1e6", 1000000 },
		{ "window", "3600s", 3600000000000LL },
		{ "timeout_ms", "5000", 5000000000LL },		/* bare: ms */
		{ "timeout_ms", "2s", 2000000000 },
		{ "timeout_ms", "100ms", 100000000 },
		{ "interval", "1", 1000000000 },		/* bare: s */
		{ "interval", "0.25", 250000000 },
		{ "interval", "10ms", 10000000 },
		{ "spin", "20", 20000 },			/* bare: us */
		{ "spin", "0", 0 },
		{ "skew", "-500ns", -500 },
		{ "free", "100000000s", 100000000000000000LL },
	};
	char err[OPTS_ERRBUF];
	struct opts *o;
	int rc;

	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		long long want = ok[k].ns, got;

		if (!strcmp(ok[k].text, "100ns"))
			continue;
		got = ns_of(ok[k].name, ok[k].text, &rc, err);
		ck_assert_msg(rc == 0, "%s %s: %s", ok[k].name, ok[k].text, err);
		ck_assert_msg(got == want, "%s %s: %lld, not %lld", ok[k].name,
			      ok[k].text, got, want);
	}
	/* Defaults are in the bare unit too. */
	o = opts_create(tdefs);
	ck_assert_int_eq(opts_ns(o, "window"), 1000000000);
	ck_assert_int_eq(opts_ns(o, "timeout_ms"), 5000000000LL);
	ck_assert_int_eq(opts_ns(o, "interval"), 1000000000);
	ck_assert_int_eq(opts_ns(o, "spin"), 20000);
	/* On the command line, through the long name and the letter. */
	ck_assert_int_eq(parse(o, err, "--window", "250us", "--timeout-ms",
			       "1s", NULL), 5);
	ck_assert_int_eq(opts_ns(o, "window"), 250000);
	ck_assert_int_eq(opts_ns(o, "timeout_ms"), 1000000000);
	ck_assert_int_eq(parse(o, err, "-w", "2ms", NULL), 3);
	ck_assert_int_eq(opts_ns(o, "window"), 2000000);
	opts_destroy(o);
}
END_TEST

START_TEST(duration_errors)
{
	static const struct {
		const char *name, *text, *msg;
	} bad[] = {
		{ "window", "5parsecs", "window: '5parsecs' is not a duration (a number with ns, us, ms, s or m)" },
		{ "window", "5 s", "is not a duration" },
		{ "window", "s", "is not a duration" },
		{ "window", "", "is not a duration" },
		{ "window", "1h", "is not a duration" },
		{ "window", "1S", "is not a duration" },
		{ "window", "0x10", "is not a duration" },
		{ "window", "inf", "is not a duration" },
		{ "window", "nans", "is not a duration" },
		{ "window", "1e", "is not a duration" },
		{ "window", "1..2s", "is not a duration" },
		{ "window", "999ns", "'999ns' is out of range [1us, 3600s]" },
		{ "window", "3601s", "out of range [1us, 3600s]" },
		{ "window", "61m", "out of range" },
		{ "window", "-1s", "out of range" },
		{ "spin", "-1", "out of range [0s, 100ms]" },
		{ "free", "-1ns", "'-1ns' is negative" },
		{ "free", "9223372037s", "'9223372037s' is too large" },
		{ "free", "99999999999999999999", "is too large" },
		{ "free", "1e300s", "is too large" },
		{ "free", "153722868m", "is too large" },
		{ "skew", "-1001", "out of range [-1us, 1us]" },
	};
	char err[OPTS_ERRBUF];
	int rc;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = 0;
		ns_of(bad[k].name, bad[k].text, &rc, err);
		ck_assert_msg(rc == -EINVAL, "%s '%s' taken", bad[k].name, bad[k].text);
		ck_assert_msg(strstr(err, bad[k].msg), "%s '%s': %s",
			      bad[k].name, bad[k].text, err);
	}
	/* The message names the option as the command line spells it. */
	{
		struct opts *o = opts_create(tdefs);

		ck_assert_int_eq(parse(o, err, "--window", "5parsecs", NULL), -EINVAL);
		ck_assert_str_eq(err, "--window: '5parsecs' is not a duration "
				 "(a number with ns, us, ms, s or m)");
		opts_destroy(o);
	}
}
END_TEST

START_TEST(duration_text)
{
	static const long long v[] = {
		0, 1, 999, 1000, 1500, 250000000, 1000000000, 1500000000,
		3600000000000LL, 60000000000LL, -2000, 9223372036854775807LL,
	};
	char buf[32];

	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		long long back = -42;

		opts_format_ns(buf, sizeof(buf), v[k]);
		ck_assert_msg(opts_parse_ns(buf, 1, &back) == 0, "%s", buf);
		ck_assert_msg(back == v[k], "%lld -> %s -> %lld", v[k], buf, back);
	}
	opts_format_ns(buf, sizeof(buf), 250000000);
	ck_assert_str_eq(buf, "250ms");
	opts_format_ns(buf, sizeof(buf), 1500);
	ck_assert_str_eq(buf, "1500ns");
	ck_assert_int_eq(opts_parse_ns("1s", 1, &(long long){0}), 0);
	ck_assert_int_eq(opts_parse_ns("9223372037s", 1, &(long long){0}), -ERANGE);
}
END_TEST

/* An integer option takes the forms a help text prints: 1e+15. */
START_TEST(int_forms)
{
	struct opts *o = opts_create(tdefs);
	char err[OPTS_ERRBUF];

	ck_assert_int_eq(opts_set_value(o, "big", "1e+15", true, err), 0);
	ck_assert_int_eq(opts_int(o, "big"), 1000000000000000LL);
	ck_assert_int_eq(opts_set_value(o, "big", "2.5e3", true, err), 0);
	ck_assert_int_eq(opts_int(o, "big"), 2500);
	ck_assert_int_eq(opts_set_value(o, "big", "7.0", true, err), 0);
	ck_assert_int_eq(opts_int(o, "big"), 7);
	ck_assert_int_eq(opts_set_value(o, "neg", "-1e0", true, err), 0);
	ck_assert_int_eq(opts_int(o, "neg"), -1);
	ck_assert_int_eq(opts_set_value(o, "big", "0x10", true, err), 0);
	ck_assert_int_eq(opts_int(o, "big"), 16);
	ck_assert_int_eq(opts_set_value(o, "big", "1.5", true, err), -EINVAL);
	ck_assert_str_eq(err, "big: '1.5' is not a whole number");
	ck_assert_int_eq(opts_set_value(o, "big", "2e15", true, err), -EINVAL);
	ck_assert(strstr(err, "out of range [0, 1e+15]"));
	ck_assert_int_eq(opts_set_value(o, "big", "1e30", true, err), -EINVAL);
	ck_assert(strstr(err, "too large"));
	ck_assert_int_eq(opts_set_value(o, "big", "1e", true, err), -EINVAL);
	ck_assert(strstr(err, "not a number"));
	ck_assert_int_eq(opts_set_value(o, "big", "1e5x", true, err), -EINVAL);
	ck_assert_int_eq(opts_set_value(o, "big", "nan", true, err), -EINVAL);
	ck_assert_int_eq(opts_set_value(o, "big", "1.5e", true, err), -EINVAL);
	opts_destroy(o);
}
END_TEST

/* Every "[range: A..B]" and "[default: X]" --help prints parses back as
 * the option's value. */
static void help_forms_parse(const struct opt_def *table)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int checked = 0;

	opts_usage(f, table);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[OPTS_NAME_MAX], *p = strstr(line, "--"), *q;
		const char *tags[] = { "[range: ", "[default: " };

		if (!p)
			continue;
		sscanf(p + 2, "%63[a-z0-9-]", name);
		for (const struct opt_def *d = table; d->name; d++) {
			char cli[OPTS_NAME_MAX];

			opts_cli_name(cli, sizeof(cli), d->name);
			if (strcmp(cli, name))
				continue;
			for (int t = 0; t < 2; t++) {
				char val[2][64] = { "", "" };
				struct opts *o;
				char err[OPTS_ERRBUF];

				q = strstr(line, tags[t]);
				if (!q)
					continue;
				q += strlen(tags[t]);
				ck_assert_int_eq(sscanf(q, "%63[^]]", val[0]), 1);
				if (t == 0) {
					char *dots = strstr(val[0], "..");

					ck_assert_ptr_nonnull(dots);
					snprintf(val[1], sizeof(val[1]), "%s", dots + 2);
					*dots = 0;
				}
				for (int k = 0; k < 2 && *val[k]; k++) {
					o = opts_create(table);
					ck_assert_msg(opts_set_value(o, d->name, val[k], true,
								     err) == 0,
						      "--%s %s (from '%s'): %s", cli,
						      val[k], line, err);
					opts_destroy(o);
					checked++;
				}
			}
		}
	}
	ck_assert_int_gt(checked, 3);
	free(buf);
}

START_TEST(help_forms)
{
	help_forms_parse(tdefs);
	help_forms_parse(defs);
}
END_TEST

/* Old letters: still taken, shown in --help, and never two in a table. */
static const struct opt_def odefs[] = {
	{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent", 0 },
	{ "metrics", 0, OPT_STRING, NULL, 0, 0, NULL, "PORT", "serve", OPT_OLD_LETTER('m') },
	{ "socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH", "ask", OPT_OLD_LETTER('s') },
	OPT_END
};

START_TEST(old_letters)
{
	struct opts *o = opts_create(odefs);
	char err[OPTS_ERRBUF];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(parse(o, err, "-m", "9100", "-s", "/x", "-p", NULL), 6);
	ck_assert_str_eq(opts_str(o, "metrics"), "9100");
	ck_assert_str_eq(opts_str(o, "socket"), "/x");
	ck_assert(opts_flag(o, "pretty"));
	ck_assert_int_eq(parse(o, err, "-x", NULL), -EINVAL);
	opts_destroy(o);
	f = open_memstream(&buf, &len);
	opts_usage(f, odefs);
	fclose(f);
	ck_assert_msg(strstr(buf, "    --metrics PORT") &&
		      strstr(buf, "(old letter -m still taken)"), "%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	opts_print_table(f, odefs);
	fclose(f);
	ck_assert_str_eq(buf, "pretty\tp\t-\tflag\tpretty\n"
			 "metrics\t-\tm\tstring\tmetrics\n"
			 "socket\t-\ts\tstring\tsocket\n");
	free(buf);
}
END_TEST

/* The letter check: it must catch what it is for. */
START_TEST(letters)
{
	static const struct opt_def capd[] = {
		{ "no_promiscuous", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "x", 0 },
		{ "write_dir", 'w', OPT_STRING, NULL, 0, 0, NULL, "DIR", "x", 0 },
		OPT_END
	};
	static const struct opt_def capd_old[] = {
		{ "no_promiscuous", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "x", OPT_OLD_LETTER('p') },
		{ "write_dir", 'w', OPT_STRING, NULL, 0, 0, NULL, "DIR", "x", 0 },
		OPT_END
	};
	static const struct opt_def probe[] = {
		{ "write", 'w', OPT_STRING, NULL, 0, 0, NULL, "FILE", "x", 0 },
		{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "x", 0 },
		OPT_END
	};
	static const struct opt_def self_clash[] = {
		{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "x", 0 },
		{ "proto", 0, OPT_STRING, NULL, 0, 0, NULL, NULL, "x", OPT_OLD_LETTER('p') },
		OPT_END
	};
	static const char *const w_names[] = { "write", "write-dir", NULL };
	static const char *const p_names[] = { "pretty", NULL };
	const struct opts_letter table[] = {
		{ 'w', w_names }, { 'p', p_names },
	};
	struct opts_program progs[2] = {
		{ "tapless-capd", capd }, { "tapless-algo", probe },
	};
	char err[OPTS_ERRBUF];

	/* No letter table: -w (and -p) each have two meanings. */
	ck_assert_int_eq(opts_letters_check(progs, 2, NULL, 0, err), -EINVAL);
	ck_assert_str_eq(err, "-w has two meanings: --write-dir in "
			 "tapless-capd, --write in tapless-algo");
	/* The table makes -w one meaning; -p is still two. */
	ck_assert_int_eq(opts_letters_check(progs, 2, table, 2, err), -EINVAL);
	ck_assert_msg(strstr(err, "tapless-capd: -p is --no-promiscuous"),
		      "%s", err);
	/* With -p an old letter of capd's, noted as such: clean. */
	progs[0].defs = capd_old;
	ck_assert_int_eq(opts_letters_check(progs, 2, table, 2, err), 0);
	/* ...but not without the table's word for -w. */
	ck_assert_int_eq(opts_letters_check(progs, 2, NULL, 0, err), -EINVAL);
	ck_assert(strstr(err, "-w has two meanings"));
	/* An old letter must not clash inside its own program. */
	progs[0] = (struct opts_program){ "tapless-pingpong", self_clash };
	ck_assert_int_eq(opts_letters_check(progs, 1, table, 2, err), -EINVAL);
	ck_assert_str_eq(err, "tapless-pingpong: old letter -p of --proto is "
			 "also --pretty");
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
	tcase_add_test(t, dashed_keys);
	tcase_add_test(t, old_names);
	tcase_add_test(t, usage_lists_everything);
	tcase_add_test(t, durations);
	tcase_add_test(t, duration_errors);
	tcase_add_test(t, duration_text);
	tcase_add_test(t, int_forms);
	tcase_add_test(t, help_forms);
	tcase_add_test(t, old_letters);
	tcase_add_test(t, letters);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(opts_suite)
