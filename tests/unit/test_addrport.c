/* test_addrport.c — ADDR:PORT forms the probes and tools are given parse
 * to the right address, family, length and port; wrong ones are refused
 * naming the wrong part; format gives the text back. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "base/addrport.h"
#include "unit.h"

/* Parse spec and format the result; "ERR" when refused. */
static const char *round_trip(const char *spec, const char *dflt, char *buf,
			      size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char err[ADDRPORT_ERRBUF];

	if (addrport_parse(spec, dflt, &ss, &len, err))
		return "ERR";
	ck_assert_uint_eq(len, ss.ss_family == AF_INET ?
			  sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	ck_assert_int_eq(addrport_format((struct sockaddr *)&ss, len, buf, size), 0);
	return buf;
}

START_TEST(test_good)
{
	static const struct { const char *in, *dflt, *out; } t[] = {
		{ "192.0.2.1:8000", NULL, "192.0.2.1:8000" },
		{ "127.0.0.1:0", NULL, "127.0.0.1:0" },
		{ "0.0.0.0:65535", NULL, "0.0.0.0:65535" },
		{ "[2001:db8::1]:8000", NULL, "[2001:db8::1]:8000" },
		{ "[::1]:9", NULL, "[::1]:9" },
		{ "::1:8000", NULL, "[::1]:8000" },	/* the last colon */
		{ "[::ffff:192.0.2.1]:80", NULL, "[::ffff:192.0.2.1]:80" },
		{ "[fe80::1%lo]:80", NULL, "[fe80::1%lo]:80" },
		{ "8000", "127.0.0.1", "127.0.0.1:8000" },
		{ ":8000", "::", "[::]:8000" },
		{ "192.0.2.7:1", "127.0.0.1", "192.0.2.7:1" },
	};
	char buf[ADDRPORT_STRLEN];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_str_eq(round_trip(t[i].in, t[i].dflt, buf, sizeof(buf)),
				 t[i].out);
}
END_TEST

START_TEST(test_fields)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const struct sockaddr_in *in = (const void *)&ss;
	const struct sockaddr_in6 *in6 = (const void *)&ss;

	ck_assert_int_eq(addrport_parse("10.1.2.3:4567", NULL, &ss, &len, NULL), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(ntohs(in->sin_port), 4567);
	ck_assert_uint_eq(ntohl(in->sin_addr.s_addr), 0x0a010203);
	ck_assert_int_eq(addrport_parse("[::2]:65535", NULL, &ss, &len, NULL), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_uint_eq(len, sizeof(*in6));
	ck_assert_uint_eq(ntohs(in6->sin6_port), 65535);
	ck_assert_uint_eq(in6->sin6_addr.s6_addr[15], 2);
}
END_TEST

/* Refused, the message quoting the bad part; *ss untouched. */
START_TEST(test_bad)
{
	static const struct { const char *in, *dflt, *says; } t[] = {
		{ "", NULL, "empty" },
		{ "192.0.2.1", NULL, "no port" },
		{ "192.0.2.1:", NULL, "port ''" },
		{ "192.0.2.1:http", NULL, "port 'http'" },
		{ "192.0.2.1:65536", NULL, "port '65536'" },
		{ "192.0.2.1:99999", NULL, "port '99999'" },	/* no wrap */
		{ "192.0.2.1: 80", NULL, "port ' 80'" },
		{ "192.0.2.1:+80", NULL, "port '+80'" },
		{ "192.0.2.1:-1", NULL, "port '-1'" },
		{ ":80", NULL, "no address" },
		{ "host.example:80", NULL, "'host.example' is not a numeric" },
		{ "192.0.2.300:80", NULL, "'192.0.2.300' is not a numeric" },
		{ "[::1:80", NULL, "expected [IPV6]:PORT" },
		{ "[::1]", NULL, "expected [IPV6]:PORT" },
		{ "[]:80", NULL, "no address in '[]'" },
		{ "[::1]:x", NULL, "port 'x'" },
		{ "x", "127.0.0.1", "port 'x'" },
		{ "80", "nowhere", "'nowhere' is not a numeric" },
	};
	struct sockaddr_storage ss;
	socklen_t len = 77;
	char err[ADDRPORT_ERRBUF], spec[ADDRPORT_ERRBUF + 16];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&ss, 0x5a, sizeof(ss));
		err[0] = 0;
		ck_assert_int_eq(addrport_parse(t[i].in, t[i].dflt, &ss, &len, err), -EINVAL);
		ck_assert_msg(strstr(err, t[i].says), "'%s': '%s' lacks '%s'",
			      t[i].in, err, t[i].says);
		ck_assert_uint_eq(len, 77);
		ck_assert_uint_eq(((unsigned char *)&ss)[0], 0x5a);
	}
	/* NULL spec, NULL err: refused quietly. */
	ck_assert_int_eq(addrport_parse(NULL, NULL, &ss, &len, NULL), -EINVAL);
	/* A message longer than the buffer is cut, not overrun. */
	memset(spec, '1', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = 0;
	ck_assert_int_eq(addrport_parse(spec, NULL, &ss, &len, err), -EINVAL);
	ck_assert_uint_eq(strlen(err), ADDRPORT_ERRBUF - 1);
}
END_TEST

START_TEST(test_format_other)
{
	struct sockaddr_storage ss;
	char buf[ADDRPORT_STRLEN];

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	ck_assert_int_eq(addrport_format((struct sockaddr *)&ss, sizeof(ss), buf,
					 sizeof(buf)), -EAFNOSUPPORT);
	ck_assert_str_eq(buf, "?");
	/* sizeof(storage) as the length is fine (getsockname callers). */
	ck_assert_int_eq(addrport_parse("[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
					NULL, &ss, &(socklen_t){ 0 }, NULL), 0);
	ck_assert_int_eq(addrport_format((struct sockaddr *)&ss, sizeof(ss), buf,
					 sizeof(buf)), 0);
	ck_assert_str_eq(buf, "[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
}
END_TEST

static Suite *addrport_suite(void)
{
	Suite *s = suite_create("addrport");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_bad);
	tcase_add_test(tc, test_format_other);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(addrport_suite)
