/* test_syncconf.c — tapless.conf and what ptpgen makes of it: the issue's
 * minimal file works as written; every kind of bad file is refused with
 * PATH:LINE; the plan groups ports by clock (one ptp4l per PHC, software
 * ports on "sys"), refuses a clock asked for two domains, lays tapless.conf
 * over the profile template, and starts phc2sys only where a PHC needs it.
 */
#include <errno.h>
#include <unistd.h>

#include "base/opts.h"
#include "ptp/ptpgen.h"
#include "ptp/syncconf.h"
#include "unit.h"

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "syncconf");
	snprintf(path, sizeof(path), "%s/tapless.conf", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static int load(struct syncconf *c, const char *text, char err[OPTS_ERRBUF])
{
	struct opts *o = opts_create(syncconf_opts);
	int rc;

	unit_write_file(path, text);
	rc = syncconf_load(c, o, path, err);
	if (rc)
		opts_destroy(o);
	return rc;
}

static const char minimal[] =
	"[global]\n"
	"domain 0\n"
	"journal_dir /var/lib/tapless\n"
	"control_socket /run/tapless/syncd.sock\n"
	"[eth1]\n"
	"role client\n";

START_TEST(minimal_file)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	const struct syncconf_port *p;

	ck_assert_int_eq(load(&c, minimal, err), 0);
	ck_assert_uint_eq(c.nports, 1);
	p = syncconf_port(&c, "eth1");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->line, 5);
	ck_assert_int_eq(p->role, SYNCCONF_CLIENT);
	ck_assert_int_eq(p->stamping, SYNCCONF_TS_AUTO);
	ck_assert_int_eq(p->transport, SYNCCONF_UNSET);
	ck_assert_int_eq(p->sync_interval, SYNCCONF_UNSET);
	ck_assert_int_eq(syncconf_profile(&c, p), SYNCCONF_PROFILE_DEFAULT);
	ck_assert_int_eq(syncconf_domain(&c, p, 24), 0);	/* given */
	ck_assert_str_eq(opts_str(c.opts, "journal_dir"), "/var/lib/tapless");
	ck_assert_ptr_null(syncconf_port(&c, "eth2"));
	syncconf_free(&c);
}
END_TEST

START_TEST(port_settings)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	const struct syncconf_port *p;

	ck_assert_int_eq(load(&c, "profile g8275.1\n"
			      "[eth1]\nrole server\ntransport L2\n"
			      "sync_interval -4\ndelay_mechanism P2P\n"
			      "ptp4l_option tx_timestamp_timeout 10\n"
			      "[eth2]\n"		/* empty: all defaults */
			      "[eth3]\ndomain 7\nprofile enterprise\n", err), 0);
	ck_assert_uint_eq(c.nports, 3);
	p = &c.port[0];
	ck_assert_int_eq(p->role, SYNCCONF_SERVER);
	ck_assert_int_eq(p->transport, SYNCCONF_L2);
	ck_assert_int_eq(p->delay_mechanism, SYNCCONF_P2P);
	ck_assert_int_eq(p->sync_interval, -4);
	ck_assert_uint_eq(p->nextra, 1);
	ck_assert_str_eq(p->extra[0], "tx_timestamp_timeout 10");
	p = &c.port[1];
	ck_assert_str_eq(p->name, "eth2");
	ck_assert_int_eq(p->line, 8);
	ck_assert_int_eq(p->role, SYNCCONF_AUTO);
	/* Domain: not given globally, so the profile's. */
	ck_assert_int_eq(syncconf_profile(&c, p), SYNCCONF_PROFILE_G8275_1);
	ck_assert_int_eq(syncconf_domain(&c, p, 24), 24);
	p = &c.port[2];
	ck_assert_int_eq(syncconf_domain(&c, p, 24), 7);
	ck_assert_int_eq(syncconf_profile(&c, p), SYNCCONF_PROFILE_ENTERPRISE);
	syncconf_free(&c);
}
END_TEST

START_TEST(bad_files)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "domain 0\n", ": no interface section" },
		{ "domain 300\n[eth1]\n", ":1: domain" },
		{ "domian 0\n[eth1]\n", ":1: unknown option 'domian'" },
		{ "[eth1]\nrole cleint\n", ":2: [eth1] role" },
		{ "[eth1]\nrol client\n", ":2: unknown key 'rol' in [eth1]" },
		{ "[eth1]\nrole client\n[eth2]\n[eth1]\n", ":4: [eth1] given twice (first at line 1)" },
		{ "[eth1]\nsync_interval 9\n", ":2: [eth1] sync_interval" },
		{ "[eth1]\nrole\n", ":2: role needs a value" },
		{ "[a/b]\n", ":1: [a/b] is not an interface name" },
		{ "[averyveryverylongname]\n", ":1: [averyveryverylongname] is not an interface name" },
		{ "[eth1]\nptp4l_option justakey\n", ":2: [eth1]: ptp4l_option 'justakey'" },
		{ "ptp4l_option [x] y\n[eth1]\n", ":1: ptp4l_option '[x] y' is not 'KEY VALUE'" },
		/* Quoted as on the command line: ptp4l would exit on it. */
		{ "ptp4l_option 'tx_timestamp_timeout 100'\n[eth1]\n",
		  ":1: ptp4l_option ''tx_timestamp_timeout 100'': ''tx_timestamp_timeout' is not a ptp4l setting name" },
		{ "[eth1]\nptp4l_option uds_address /tmp/x\n", ":2: [eth1]: ptp4l_option uds_address: tapless-syncd sets it itself" },
		{ "control_socket relative.sock\n[eth1]\n", ":1: control_socket 'relative.sock' is not an absolute path" },
		{ "run_dir /" "0123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789\n[eth1]\n",
		  ":1: run_dir '/0123" },
		{ "dry-run 1\n[eth1]\n", ":1: 'dry-run' is only allowed on the command line" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct syncconf c;
		char err[OPTS_ERRBUF] = "";
		int rc = load(&c, cases[i].text, err);

		if (!rc)
			syncconf_free(&c);
		ck_assert_msg(rc == -EINVAL, "case %zu: rc %d", i, rc);
		ck_assert_msg(strstr(err, path) && strstr(err, cases[i].want),
			      "case %zu: '%s'", i, err);
	}
}
END_TEST

/* Issue 17 item 9: a refused ptp4l_option names its own line, in [global]
 * (it named none) and in a port section (it named the header). */
START_TEST(option_lines)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "# comment\n[global]\ndomain 0\nptp4l_option logging_level 6\n"
		  "ptp4l_option free_running 0\n[eth1]\nrole client\n",
		  ":5: ptp4l_option free_running: tapless-syncd sets it itself" },
		{ "domain 0\n\nptp4l_option justakey\n[eth1]\n",
		  ":3: ptp4l_option 'justakey' is not 'KEY VALUE'" },
		{ "[eth1]\nrole client\n# x\nptp4l_option tx_timestamp_timeout 9\n"
		  "ptp4l_option hwts_filter normal\n",
		  ":5: [eth1]: ptp4l_option hwts_filter: tapless-syncd sets it itself" },
		{ "[eth0]\n[eth1]\nrole client\n\n\nptp4l_option nokey\n",
		  ":6: [eth1]: ptp4l_option 'nokey' is not 'KEY VALUE'" },
		{ "[eth1]\n[global]\njournal_dir /x\njournal_dir var\n",
		  ":4: journal_dir 'var' is not an absolute path" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct syncconf c;
		char err[OPTS_ERRBUF] = "";
		char want[512];
		int rc = load(&c, cases[i].text, err);

		if (!rc)
			syncconf_free(&c);
		snprintf(want, sizeof(want), "%s%s", path, cases[i].want);
		ck_assert_msg(rc == -EINVAL, "case %zu: rc %d", i, rc);
		ck_assert_msg(!strncmp(err, want, strlen(want)),
			      "case %zu: '%s', want '%s'", i, err, want);
	}
}
END_TEST

/* From the command line, an item has no line: said so. */
START_TEST(option_cli)
{
	struct syncconf c;
	char err[OPTS_ERRBUF] = "";
	struct opts *o = opts_create(syncconf_opts);

	ck_assert_int_eq(opts_set_value(o, "ptp4l_option", "uds_address /x",
					true, err), 0);
	unit_write_file(path, "[eth1]\n");
	ck_assert_int_eq(syncconf_load(&c, o, path, err), -EINVAL);
	ck_assert_str_eq(err, "command line --ptp4l-option: ptp4l_option "
			 "uds_address: tapless-syncd sets it itself");
	opts_destroy(o);
}
END_TEST

START_TEST(missing_file)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct opts *o = opts_create(syncconf_opts);

	ck_assert_int_eq(syncconf_load(&c, o, "/nonexistent/tapless.conf", err),
			 -ENOENT);
	ck_assert(strstr(err, "/nonexistent/tapless.conf"));
	opts_destroy(o);
}
END_TEST

START_TEST(cli_wins)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct opts *o = opts_create(syncconf_opts);

	ck_assert_int_eq(opts_set_value(o, "domain", "5", true, err), 0);
	unit_write_file(path, "domain 3\n[eth1]\n");
	ck_assert_int_eq(syncconf_load(&c, o, path, err), 0);
	ck_assert_int_eq(opts_int(c.opts, "domain"), 5);
	syncconf_free(&c);
}
END_TEST

/* ---- ptpgen ---- */

static const char *cfg_value(const char *text, const char *section,
			     const char *key, char *buf, size_t len)
{
	char want[64];
	const char *s = strstr(text, section), *k, *end;

	if (!s)
		return NULL;
	end = strstr(s + 1, "\n[");
	snprintf(want, sizeof(want), "\n%s ", key);
	k = strstr(s, want);
	if (!k || (end && k > end))
		return NULL;
	k += strlen(want);
	k += strspn(k, " ");
	snprintf(buf, len, "%.*s", (int)strcspn(k, " \n"), k);
	return buf;
}

static int count_key(const char *text, const char *key)
{
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), "\n%s ", key);
	for (const char *s = strstr(text, want); s; s = strstr(s + 1, want))
		n++;
	return n;
}

START_TEST(plan_software)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct ptpgen_plan plan;
	struct ptpgen_port_info info[2] = { { -1, false }, { -1, false } };
	const struct ptpgen_instance *in;
	char v[64];

	ck_assert_int_eq(load(&c, "free_running 1\nrun_dir /tmp/x\n"
			      "[veth0]\nrole client\nsync_interval -3\n"
			      "[veth1]\nrole client\n", err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), 0);
	ck_assert_uint_eq(plan.ninst, 1);		/* both on sys */
	ck_assert_uint_eq(plan.nphc2sys, 0);		/* no PHC, free running */
	in = &plan.inst[0];
	ck_assert_str_eq(in->clock, "sys");
	ck_assert_uint_eq(in->nports, 2);
	ck_assert_str_eq(in->uds_path, "/tmp/x/ptp4l-sys.sock");
	ck_assert_str_eq(in->cfg_path, "/tmp/x/ptp4l-sys.cfg");
	ck_assert_str_eq(in->proc.argv[2], "/tmp/x/ptp4l-sys.cfg");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[global]", "time_stamping", v, sizeof(v)), "software");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[global]", "hwts_filter", v, sizeof(v)), "full");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[global]", "uds_address", v, sizeof(v)), "/tmp/x/ptp4l-sys.sock");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[global]", "free_running", v, sizeof(v)), "1");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[global]", "slaveOnly", v, sizeof(v)), "1");
	ck_assert_str_eq(cfg_value(in->cfg_text, "[veth0]", "logSyncInterval", v, sizeof(v)), "-3");
	ck_assert_ptr_null(cfg_value(in->cfg_text, "[veth1]", "logSyncInterval", v, sizeof(v)));
	ck_assert_int_eq(count_key(in->cfg_text, "domainNumber"), 1);
	ck_assert_ptr_eq(ptpgen_instance_of(&plan, &c, "veth1"), in);
	ptpgen_plan_free(&plan);
	syncconf_free(&c);
}
END_TEST

START_TEST(plan_hardware)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct ptpgen_plan plan;
	/* eth1, eth2 on phc0 (a dual-port NIC), eth3 on phc1 with no PTP,
	 * eth4 software-only. */
	struct ptpgen_port_info info[4] = {
		{ 0, true }, { 0, true }, { 1, true }, { -1, false },
	};
	char v[64];

	ck_assert_int_eq(load(&c, "profile g8275.1\n"
			      "[eth1]\nrole client\n[eth2]\nrole server\n"
			      "[eth3]\nrole none\n[eth4]\nrole server\n"
			      "time_stamping software\ndomain 24\n", err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), 0);
	ck_assert_uint_eq(plan.ninst, 2);
	ck_assert_str_eq(plan.inst[0].clock, "phc0");
	ck_assert(plan.inst[0].hw);
	ck_assert_uint_eq(plan.inst[0].nports, 2);
	ck_assert_int_eq(plan.inst[0].domain, 24);	/* the profile's */
	ck_assert_str_eq(plan.inst[1].clock, "sys");
	/* A client beside a server: a boundary clock, no slaveOnly. */
	ck_assert_ptr_null(cfg_value(plan.inst[0].cfg_text, "[global]", "slaveOnly", v, sizeof(v)));
	ck_assert_str_eq(cfg_value(plan.inst[0].cfg_text, "[eth2]", "masterOnly", v, sizeof(v)), "1");
	ck_assert_str_eq(cfg_value(plan.inst[0].cfg_text, "[global]", "network_transport", v, sizeof(v)), "L2");
	ck_assert_str_eq(cfg_value(plan.inst[0].cfg_text, "[global]", "dataset_comparison", v, sizeof(v)), "G.8275.x");
	ck_assert_str_eq(cfg_value(plan.inst[0].cfg_text, "[global]", "time_stamping", v, sizeof(v)), "hardware");
	/* phc2sys: automatic with -r on phc0's ptp4l, and phc1 kept on the
	 * PTP port's clock. */
	/* eth4's software ptp4l steers CLOCK_REALTIME: no phc2sys -r, only
	 * phc1 kept on the PTP port's clock. */
	ck_assert_int_eq(plan.phc2sys_ref, 0);
	ck_assert(!plan.phc2sys_sys);
	ck_assert_uint_eq(plan.nphc2sys, 1);
	ck_assert_str_eq(plan.phc2sys[0].proc.name, "phc2sys-eth3");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[2], "eth1");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[4], "eth3");
	/* Held back until phc0's ptp4l is synchronized (after its step),
	 * asked on that ptp4l's own socket. */
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[7], "-w");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[8], "-z");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[9], plan.inst[0].uds_path);
	ck_assert_str_eq(plan.phc2sys[0].clock, "phc1");
	ck_assert_int_eq(plan.phc2sys[0].phc, 1);
	ptpgen_plan_free(&plan);
	syncconf_free(&c);

	/* Without it: phc2sys -a -r on phc0's ptp4l as well. */
	ck_assert_int_eq(load(&c, "[eth1]\nrole client\n[eth3]\nrole none\n", err), 0);
	info[1] = info[2];
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), 0);
	ck_assert_uint_eq(plan.nphc2sys, 2);
	ck_assert(plan.phc2sys_sys);
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[1], "-a");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[2], "-r");
	ck_assert_str_eq(plan.phc2sys[0].proc.argv[4], plan.inst[0].uds_path);
	ck_assert_str_eq(plan.phc2sys[0].clock, "sys");
	ck_assert_int_eq(plan.phc2sys[0].phc, -1);
	ck_assert_str_eq(plan.phc2sys[1].proc.name, "phc2sys-eth3");
	ptpgen_plan_free(&plan);
	syncconf_free(&c);
}
END_TEST

START_TEST(plan_conflicts)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct ptpgen_plan plan;
	struct ptpgen_port_info info[2] = { { 0, true }, { 0, true } };
	struct ptpgen_port_info none[1] = { { -1, false } };

	ck_assert_int_eq(load(&c, "[eth1]\nrole client\n[eth2]\ndomain 5\n", err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), -EINVAL);
	ck_assert_msg(strstr(err, ":3: [eth2] shares phc0 with [eth1] (line 1)"),
		      "%s", err);
	syncconf_free(&c);

	ck_assert_int_eq(load(&c, "[eth1]\ntime_stamping hardware\n", err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, none, err), -EINVAL);
	ck_assert_msg(strstr(err, ":1: [eth1] time_stamping hardware"),
		      "%s", err);
	syncconf_free(&c);

	/* free_running: no phc2sys even with PHCs. */
	ck_assert_int_eq(load(&c, "free_running 1\n[eth1]\n[eth2]\n", err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), 0);
	ck_assert_uint_eq(plan.nphc2sys, 0);
	ptpgen_plan_free(&plan);
	syncconf_free(&c);
}
END_TEST

START_TEST(write_whole)
{
	struct syncconf c;
	char err[OPTS_ERRBUF];
	struct ptpgen_plan plan;
	struct ptpgen_port_info info[1] = { { -1, false } };
	char rd[128], buf[8192];
	FILE *f;
	size_t n;

	snprintf(rd, sizeof(rd), "run_dir %s\n[eth1]\n", dir);
	ck_assert_int_eq(load(&c, rd, err), 0);
	ck_assert_int_eq(ptpgen_plan(&plan, &c, info, err), 0);
	ck_assert_int_eq(ptpgen_write(&plan, err), 0);
	f = fopen(plan.inst[0].cfg_path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	ck_assert_str_eq(buf, plan.inst[0].cfg_text);
	snprintf(buf, sizeof(buf), "%s.tmp", plan.inst[0].cfg_path);
	ck_assert_int_ne(access(buf, F_OK), 0);
	/* A run_dir that is not there: the error names the file. */
	snprintf(plan.inst[0].cfg_path, sizeof(plan.inst[0].cfg_path),
		 "%s/nodir/x.cfg", dir);
	ck_assert_int_eq(ptpgen_write(&plan, err), -ENOENT);
	ck_assert(strstr(err, "nodir/x.cfg"));
	ptpgen_plan_free(&plan);
	syncconf_free(&c);
}
END_TEST

START_TEST(profiles_built_in)
{
	ck_assert_int_eq(ptpgen_profile_domain(SYNCCONF_PROFILE_DEFAULT), 0);
	ck_assert_int_eq(ptpgen_profile_domain(SYNCCONF_PROFILE_G8275_1), 24);
	ck_assert(strstr(ptpgen_profile_text(SYNCCONF_PROFILE_ENTERPRISE),
			 "hybrid_e2e"));
}
END_TEST

static Suite *syncconf_suite(void)
{
	Suite *s = suite_create("syncconf");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, minimal_file);
	tcase_add_test(tc, port_settings);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, option_lines);
	tcase_add_test(tc, option_cli);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, cli_wins);
	tcase_add_test(tc, plan_software);
	tcase_add_test(tc, plan_hardware);
	tcase_add_test(tc, plan_conflicts);
	tcase_add_test(tc, write_whole);
	tcase_add_test(tc, profiles_built_in);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(syncconf_suite)
