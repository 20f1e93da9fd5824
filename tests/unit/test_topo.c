/* test_topo.c — the topology file: hosts own their IPv4 and IPv6
 * addresses; paths are a direct link or two links through one switch, with
 * propagation summed from lengths ("2m", "0.5", a custom ns/m) and the
 * switch's kind and speed; serialisation counts the FCS; and every kind of
 * bad line is refused with PATH:LINE naming it; addresses given on a
 * command line join the same structure. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <sys/socket.h>

#include "files/topo.h"
#include "unit.h"

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "topo");
	snprintf(path, sizeof(path), "%s/topology", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static const char good[] =
	"# a test bench\n"
	"\n"
	"host algo1 10.0.0.1 fd00::1   # two addresses\n"
	"host venue\t10.0.0.2\n"
	"host venue 10.0.1.2 fe80::2\n"		/* more for the same host */
	"link algo1 sw1 2m\n"			/* before sw1's line */
	"switch sw1 cut-through 25G\n"
	"switch sw2 store-and-forward 1G\n"
	"switch sw3 cut-through\n"
	"link sw1 venue 0.5\n"
	"link algo1 sw2 3 5.0ns/m\n"
	"link sw2 venue 10m 4\n"
	"host md 192.168.1.9\n"
	"link md algo1 1.5\n"
	"link lonely sw3 1\n";

static void near(double got, double want)
{
	ck_assert_msg(fabs(got - want) < 1e-9, "got %.12g, want %.12g", got, want);
}

START_TEST(good_file)
{
	struct topo *t;
	struct topo_path p;
	char err[TOPO_ERRBUF] = "";
	uint8_t a4[4], a6[16];

	unit_write_file(path, good);
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert_str_eq(err, "");
	/* Addresses, by family. */
	inet_pton(AF_INET, "10.0.0.1", a4);
	ck_assert(topo_owns(t, "algo1", AF_INET, a4));
	ck_assert(!topo_owns(t, "venue", AF_INET, a4));
	ck_assert(!topo_owns(t, "nobody", AF_INET, a4));
	inet_pton(AF_INET, "10.0.1.2", a4);
	ck_assert(topo_owns(t, "venue", AF_INET, a4));
	inet_pton(AF_INET6, "fd00::1", a6);
	ck_assert(topo_owns(t, "algo1", AF_INET6, a6));
	ck_assert(!topo_owns(t, "algo1", AF_INET, a6));	/* 253.0.0.0 */
	inet_pton(AF_INET6, "fe80::2", a6);
	ck_assert(topo_owns(t, "venue", AF_INET6, a6));
	ck_assert(!topo_owns(t, "algo1", AF_INET6, a6));
	ck_assert(topo_has_host(t, "algo1"));
	ck_assert(topo_has_host(t, "lonely"));	/* named by a link only */
	ck_assert(!topo_has_host(t, "sw1"));
	ck_assert(!topo_has_host(t, "nobody"));

	/* A direct link, either way round. */
	ck_assert_int_eq(topo_path(t, "md", "algo1", &p), 0);
	near(p.prop_ns, 1.5 * 4.9);
	ck_assert_ptr_null(p.sw);
	ck_assert(!p.store_forward);
	ck_assert_int_eq(topo_path(t, "algo1", "md", &p), 0);
	near(p.prop_ns, 1.5 * 4.9);
	/* Through a switch: the first one found with both links, sw1
	 * (2 m and 0.5 m at 4.9 ns/m). */
	ck_assert_int_eq(topo_path(t, "algo1", "venue", &p), 0);
	near(p.prop_ns, 2.5 * 4.9);
	ck_assert_str_eq(p.sw, "sw1");
	ck_assert(!p.store_forward);
	ck_assert_double_eq(p.speed_bps, 25e9);
	ck_assert_int_eq(topo_path(t, "venue", "algo1", &p), 0);
	ck_assert_str_eq(p.sw, "sw1");
	/* Only through the store-and-forward switch. */
	ck_assert_int_eq(topo_path(t, "sw2", "algo1", &p), 0);
	near(p.prop_ns, 15.0);
	ck_assert_ptr_null(p.sw);
	ck_assert_int_eq(topo_path(t, "venue", "sw2", &p), 0);
	near(p.prop_ns, 40.0);
	/* Two switches apart, or unknown: no path; p is cleared. */
	ck_assert_int_eq(topo_path(t, "md", "venue", &p), -ENOENT);
	ck_assert_ptr_null(p.sw);
	ck_assert(p.prop_ns == 0);
	ck_assert_int_eq(topo_path(t, "lonely", "algo1", &p), -ENOENT);
	ck_assert_int_eq(topo_path(t, "algo1", "nobody", &p), -ENOENT);
	topo_destroy(t);

	/* Where sw1 is missing, the store-and-forward one is the path. */
	unit_write_file(path, "host a\nhost b\nswitch s store-and-forward 100M\n"
		   "link a s 3 5.0ns/m\nlink s b 10m 4\n");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert_int_eq(topo_path(t, "a", "b", &p), 0);
	near(p.prop_ns, 3 * 5.0 + 10 * 4.0);
	ck_assert_str_eq(p.sw, "s");
	ck_assert(p.store_forward);
	ck_assert_double_eq(p.speed_bps, 100e6);
	topo_destroy(t);
	/* A switch without a speed is taken as 10G. */
	unit_write_file(path, "switch s cut-through\nlink a s 1\nlink s b 1\n");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert_int_eq(topo_path(t, "a", "b", &p), 0);
	ck_assert_double_eq(p.speed_bps, 10e9);
	ck_assert(!p.store_forward);
	topo_destroy(t);
}
END_TEST

START_TEST(serialisation)
{
	/* 60 bytes + 4 of FCS at 10 Gb/s: 64 * 8 / 10 ns. */
	near(topo_serialisation_ns(60, 10e9), 51.2);
	near(topo_serialisation_ns(1514, 10e9), 1214.4);
	near(topo_serialisation_ns(60, 1e9), 512.0);
	near(topo_serialisation_ns(60, 25e9), 20.48);
	near(topo_serialisation_ns(60, 0), 0);
}
END_TEST

START_TEST(missing_file)
{
	struct topo *t = (struct topo *)1;
	char err[TOPO_ERRBUF];

	ck_assert_int_eq(topo_load(&t, path, err), -ENOENT);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

/* Each bad line, after two good ones, at line 3 (or later, as given). */
static void expect_bad(const char *body, unsigned line, const char *why)
{
	struct topo *t = (struct topo *)1;
	char err[TOPO_ERRBUF], text[4096], want[256];

	snprintf(text, sizeof(text), "host a 10.0.0.1\n# fine\n%s", body);
	unit_write_file(path, text);
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	ck_assert_ptr_null(t);
	snprintf(want, sizeof(want), "%s:%u: ", path, line);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "'%s' for '%s', want '%s'",
		      err, body, want);
	ck_assert_msg(strstr(err, why), "'%s' for '%s', want '%s'", err, body, why);
}

START_TEST(bad_lines)
{
	char many[600], longline[1500];

	expect_bad("router r\n", 3, "expected host, switch, link or tap");
	expect_bad("host\n", 3, "host: expected");
	expect_bad("host b 10.0.0.256\n", 3, "not an IPv4 or IPv6 address");
	expect_bad("host b fd00::1::2\n", 3, "not an IPv4 or IPv6 address");
	expect_bad("host b 10.0.0.0/8\n", 3, "not an IPv4 or IPv6 address");
	expect_bad("switch s cut-through\nhost s\n", 4, "already used by a switch");
	expect_bad("switch s\n", 3, "switch: expected");
	expect_bad("switch s wormhole\n", 3, "switch: expected");
	expect_bad("switch s cut-through 10G extra\n", 3, "switch: expected");
	expect_bad("switch s cut-through 10T\n", 3, "SPEED");
	expect_bad("switch s cut-through -10G\n", 3, "SPEED");
	expect_bad("switch s cut-through G\n", 3, "SPEED");
	expect_bad("switch s cut-through inf\n", 3, "SPEED");
	expect_bad("switch s cut-through nan\n", 3, "SPEED");
	expect_bad("switch a cut-through\n", 3, "name already used");
	expect_bad("switch s cut-through\nswitch s cut-through\n", 4,
		   "name already used");
	expect_bad("link a b\n", 3, "link: expected");
	expect_bad("link a b 1 2 3\n", 3, "link: expected");
	expect_bad("link a b 2km\n", 3, "LENGTH");
	expect_bad("link a b -1\n", 3, "LENGTH");
	expect_bad("link a b m\n", 3, "LENGTH");
	expect_bad("link a b nan\n", 3, "LENGTH");
	expect_bad("link a b 1 0\n", 3, "NS_PER_M");
	expect_bad("link a b 1 -4.9\n", 3, "NS_PER_M");
	expect_bad("link a b 1 5ns\n", 3, "NS_PER_M");
	expect_bad("link a b 1 inf\n", 3, "NS_PER_M");
	expect_bad("link a a 1\n", 3, "same");
	expect_bad("\n\nhost b\nlink b x123456789012345678901234567890"
		   "1234567890123456789012345678901234567890 1\n", 6,
		   "name too long");
	/* 17 addresses. */
	strcpy(many, "host b");
	for (int i = 0; i < 17; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 " 10.1.0.%d", i);
	strcat(many, "\n");
	expect_bad(many, 3, "too many addresses");
	/* 25 fields. */
	strcpy(many, "host b");
	for (int i = 0; i < 24; i++)
		strcat(many, " ::1");
	strcat(many, "\n");
	expect_bad(many, 3, "too many fields");
	/* A line longer than the reader's buffer. */
	memset(longline, ' ', sizeof(longline) - 2);
	memcpy(longline, "host b", 6);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	expect_bad(longline, 3, "line too long");
}
END_TEST

START_TEST(limits)
{
	struct topo *t;
	char err[TOPO_ERRBUF];
	static char text[40000];
	size_t n = 0;

	/* 256 nodes fit; the 257th does not. */
	for (int i = 0; i < 257; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "host h%d\n", i);
	unit_write_file(path, text);
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	snprintf(text, sizeof(text), "%s:257: ", path);
	ck_assert_msg(!strncmp(err, text, strlen(text)), "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "too many hosts and switches"));
	/* 16 addresses fit. */
	n = (size_t)snprintf(text, sizeof(text), "host b");
	for (int i = 0; i < 16; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, " 10.1.0.%d", i);
	snprintf(text + n, sizeof(text) - n, "\n");
	unit_write_file(path, text);
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	uint8_t a4[4] = { 10, 1, 0, 15 };
	ck_assert(topo_owns(t, "b", AF_INET, a4));
	topo_destroy(t);
	/* A last line without its newline still counts. */
	unit_write_file(path, "host a\nlink a b 7");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	struct topo_path p;
	ck_assert_int_eq(topo_path(t, "a", "b", &p), 0);
	near(p.prop_ns, 7 * 4.9);
	topo_destroy(t);
}
END_TEST

/* Hosts' addresses from a command line (NAME@ADDR[,ADDR]=FILE): IPv4 and
 * IPv6, added to a file's; a bad address is named and leaves the
 * topology as it was. */
START_TEST(add_host)
{
	struct topo *t = topo_create();
	char err[TOPO_ERRBUF] = "";
	uint8_t a4[4], a6[16];

	ck_assert(!topo_has_host(t, "algo"));
	ck_assert_int_eq(topo_add_host(t, "algo", "198.18.0.1", err), 0);
	ck_assert_int_eq(topo_add_host(t, "venue", "198.18.0.2,2001:db8::2", err), 0);
	inet_pton(AF_INET, "198.18.0.1", a4);
	ck_assert(topo_owns(t, "algo", AF_INET, a4));
	ck_assert(!topo_owns(t, "venue", AF_INET, a4));
	inet_pton(AF_INET6, "2001:db8::2", a6);
	ck_assert(topo_owns(t, "venue", AF_INET6, a6));
	ck_assert(topo_has_host(t, "venue"));
	/* Bad addresses: named, nothing added, not even the host. */
	ck_assert_int_eq(topo_add_host(t, "x", "198.18.0.999", err), -EINVAL);
	ck_assert_str_eq(err, "'198.18.0.999': not an IPv4 or IPv6 address");
	ck_assert(!topo_has_host(t, "x"));
	ck_assert_int_eq(topo_add_host(t, "algo", "198.18.0.5,,198.18.0.6", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not an IPv4 or IPv6 address"));
	inet_pton(AF_INET, "198.18.0.5", a4);
	ck_assert(!topo_owns(t, "algo", AF_INET, a4));
	ck_assert_int_eq(topo_add_host(t, "algo", "", err), -EINVAL);
	ck_assert_int_eq(topo_add_host(t, "algo", "fd00::1/64", err), -EINVAL);
	ck_assert_str_eq(err, "'fd00::1/64': not an IPv4 or IPv6 address");
	topo_destroy(t);

	/* Added to a file's host, which keeps its own addresses and links. */
	unit_write_file(path, "host a 10.0.0.1\nlink a b 2\n");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert_int_eq(topo_add_host(t, "a", "10.0.0.9", err), 0);
	ck_assert_int_eq(topo_add_host(t, "b", "10.0.0.2", err), 0);
	inet_pton(AF_INET, "10.0.0.1", a4);
	ck_assert(topo_owns(t, "a", AF_INET, a4));
	inet_pton(AF_INET, "10.0.0.9", a4);
	ck_assert(topo_owns(t, "a", AF_INET, a4));
	inet_pton(AF_INET, "10.0.0.2", a4);
	ck_assert(topo_owns(t, "b", AF_INET, a4));
	struct topo_path p;
	ck_assert_int_eq(topo_path(t, "a", "b", &p), 0);
	topo_destroy(t);
	/* A switch's name is not a host's. */
	unit_write_file(path, "switch s cut-through\n");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert_int_eq(topo_add_host(t, "s", "10.0.0.3", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "switch"));
	topo_destroy(t);
}
END_TEST

/* Observation points: a tap line, NAME@A-B on a command line (names with
 * dashes), the link they must be on, and their frames' way told by A's
 * addresses; they lie on no path. */
START_TEST(taps)
{
	struct topo *t;
	struct topo_path p;
	char err[TOPO_ERRBUF] = "";
	const char *a, *b;
	uint8_t a4[4];

	unit_write_file(path, "tap t1 md-1 sw\nhost md-1 10.0.0.1\n"
			"switch sw cut-through\nlink md-1 sw 2\nlink sw algo 2\n"
			"host algo 10.0.0.2\n");
	ck_assert_int_eq(topo_load(&t, path, err), 0);
	ck_assert(topo_tap(t, "t1", &a, &b));
	ck_assert_str_eq(a, "md-1");
	ck_assert_str_eq(b, "sw");
	ck_assert(!topo_tap(t, "algo", &a, &b));
	inet_pton(AF_INET, "10.0.0.1", a4);
	ck_assert(topo_owns(t, "t1", AF_INET, a4));	/* as md-1 sees */
	inet_pton(AF_INET, "10.0.0.2", a4);
	ck_assert(!topo_owns(t, "t1", AF_INET, a4));
	ck_assert_int_eq(topo_path(t, "t1", "algo", &p), -ENOENT);
	ck_assert_int_eq(topo_path(t, "md-1", "algo", &p), 0);
	/* The split the topology knows, dashes in names or not. */
	ck_assert_int_eq(topo_add_tap(t, "t2", "md-1-sw", err), 0);
	ck_assert(topo_tap(t, "t2", &a, &b));
	ck_assert_str_eq(a, "md-1");
	ck_assert_str_eq(b, "sw");
	ck_assert_int_eq(topo_add_tap(t, "t3", "sw-algo", err), 0);
	/* Named again the same way: the same point; else taken. */
	ck_assert_int_eq(topo_add_tap(t, "t3", "sw-algo", err), 0);
	ck_assert_int_eq(topo_add_tap(t, "t3", "md-1-sw", err), -EINVAL);
	ck_assert_int_eq(topo_add_tap(t, "algo", "md-1-sw", err), -EINVAL);
	/* No such link, not A-B. */
	ck_assert_int_eq(topo_add_tap(t, "t4", "md-1-algo", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no link between md-1 and algo"));
	ck_assert_int_eq(topo_add_tap(t, "t5", "algo", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not A-B"));
	ck_assert_int_eq(topo_add_tap(t, "t6", "-sw", err), -EINVAL);
	topo_destroy(t);
	/* Without links, any A-B with one dash. */
	t = topo_create();
	ck_assert_int_eq(topo_add_tap(t, "t", "x-y", err), 0);
	ck_assert_int_eq(topo_add_tap(t, "u", "x-y-z", err), -EINVAL);
	topo_destroy(t);
	/* Bad tap lines. */
	unit_write_file(path, "tap t a\n");
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "tap NAME A B"));
	unit_write_file(path, "tap t a a\n");
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	unit_write_file(path, "host t\ntap t a b\n");
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	/* On no link of a topology that has links. */
	unit_write_file(path, "tap t a b\nlink a c 2\n");
	ck_assert_int_eq(topo_load(&t, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "tap t: no link between a and b"));
}
END_TEST

static Suite *topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc = tcase_create("topo");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, good_file);
	tcase_add_test(tc, serialisation);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, add_host);
	tcase_add_test(tc, taps);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(topo_suite)
