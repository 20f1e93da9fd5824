/* test_fixsess.c — the FIX session layer over a socketpair: Logon both
 * ways, application messages with sequence numbers, heartbeats and test
 * requests on time, gaps counted; and every bad input a peer can send ends
 * the session with a Logout that says why and an error naming the offset. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fix/fix.h"
#include "fix/fixsess.h"
#include "unit.h"

#define S 1000000000LL

static ssize_t io_send(void *ctx, const void *buf, size_t len)
{
	ssize_t n = send(*(int *)ctx, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	return n < 0 ? -errno : n;
}

static ssize_t io_recv(void *ctx, void *buf, size_t len)
{
	ssize_t n = recv(*(int *)ctx, buf, len, MSG_DONTWAIT);

	return n < 0 ? -errno : n;
}

static int fd[2];
static struct fixsess *ini, *acc;
static int app_seen;
static char app_type[8];

static int on_app(void *arg, struct fixsess *s, const struct fix_msg *m,
		  int64_t now)
{
	size_t len;
	const char *t = fix_get(m, 35, &len);

	(void)arg; (void)s; (void)now;
	app_seen++;
	snprintf(app_type, sizeof(app_type), "%.*s", (int)len, t);
	return 0;
}

static void setup(void)
{
	struct fixsess_io io0 = { io_send, io_recv, NULL, &fd[0] };
	struct fixsess_io io1 = { io_send, io_recv, NULL, &fd[1] };
	struct fixsess_config ci = { .sender = "ALGO", .target = "VENUE",
				     .heartbeat_s = 2, .initiator = true,
				     .max_msg = 512 };
	struct fixsess_config ca = { .sender = "VENUE", .target = "ALGO",
				     .max_msg = 512 };

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	ck_assert_int_eq(fixsess_create(&ini, &ci, &io0), 0);
	ck_assert_int_eq(fixsess_create(&acc, &ca, &io1), 0);
	app_seen = 0;
}

static void teardown(void)
{
	fixsess_destroy(ini);
	fixsess_destroy(acc);
	close(fd[0]);
	close(fd[1]);
}

static void logon(void)
{
	ck_assert_int_eq(fixsess_logon(ini, 0), 0);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_state(acc), FIXSESS_ACTIVE);
	ck_assert_int_eq(fixsess_read(ini, 0, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_state(ini), FIXSESS_ACTIVE);
}

/* What the acceptor sent back, as text with '|' for SOH. */
static void peer_reply(char *out, size_t cap)
{
	ssize_t n = recv(fd[0], out, cap - 1, MSG_DONTWAIT);

	ck_assert_int_gt(n, 0);
	out[n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == FIX_SOH)
			out[i] = '|';
}

START_TEST(logon_and_messages)
{
	struct fixsess_stats st;
	struct fix_writer *w;

	logon();
	for (int i = 0; i < 3; i++) {
		w = fixsess_begin(ini, "D", 0);
		fix_add_str(w, 11, "X1");
		ck_assert_int_eq(fixsess_send(ini, 0), 0);
	}
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(app_seen, 3);
	ck_assert_str_eq(app_type, "D");
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.received[FIXSESS_T_NEW_ORDER], 3);
	ck_assert_uint_eq(st.received[FIXSESS_T_LOGON], 1);
	ck_assert_uint_eq(st.gaps, 0);
	ck_assert_uint_eq(fixsess_next_out_seq(ini), 5);	/* Logon + 3 */
	/* Logout both ways closes both. */
	ck_assert_int_eq(fixsess_logout(ini, NULL, 0), 0);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_state(acc), FIXSESS_CLOSED);
	ck_assert_int_eq(fixsess_read(ini, 0, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_state(ini), FIXSESS_CLOSED);
}
END_TEST

START_TEST(heartbeats_and_tests)
{
	struct fixsess_stats st;

	logon();
	/* Quiet for HeartBtInt (2 s, the acceptor took the initiator's):
	 * a Heartbeat. */
	ck_assert_int_eq(fixsess_tick(acc, 1 * S), 0);
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.sent[FIXSESS_T_HEARTBEAT], 0);
	ck_assert_int_eq(fixsess_tick(acc, 2 * S), 0);
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.sent[FIXSESS_T_HEARTBEAT], 1);
	/* Nothing heard for 2.4 s: a TestRequest, which the peer answers. */
	ck_assert_int_eq(fixsess_tick(ini, 2400000000LL), 0);
	fixsess_stats(ini, &st);
	ck_assert_uint_eq(st.sent[FIXSESS_T_TEST_REQUEST], 1);
	ck_assert_int_eq(fixsess_read(acc, 2400000000LL, on_app, NULL), 0);
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.received[FIXSESS_T_TEST_REQUEST], 1);
	ck_assert_uint_eq(st.sent[FIXSESS_T_HEARTBEAT], 2);
	ck_assert_int_eq(fixsess_read(ini, 2500000000LL, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_tick(ini, 4 * S), 0);
	ck_assert_int_eq(fixsess_state(ini), FIXSESS_ACTIVE);
	/* A peer that never answers a TestRequest is given up on. */
	ck_assert_int_eq(fixsess_tick(ini, 5 * S), 0);	/* test sent */
	ck_assert_int_eq(fixsess_tick(ini, 7 * S), -ETIMEDOUT);
	ck_assert_int_eq(fixsess_state(ini), FIXSESS_CLOSED);
	ck_assert_ptr_nonnull(strstr(fixsess_error(ini), "TestRequest"));
}
END_TEST

/* Raw bytes from the initiator's end, after a good Logon. */
static int feed(const char *bytes, size_t len)
{
	logon();
	ck_assert_int_eq(write(fd[0], bytes, len), (ssize_t)len);
	return fixsess_read(acc, 0, on_app, NULL);
}

/* A message with a correct BodyLength and CheckSum around body. */
static size_t build(char *out, size_t cap, const char *body)
{
	char b[1024];
	unsigned sum = 0;
	int n;

	snprintf(b, sizeof(b), "%s", body);
	for (char *p = b; *p; p++)
		if (*p == '|')
			*p = FIX_SOH;
	n = snprintf(out, cap, "8=FIX.4.4\x01" "9=%zu\x01%s", strlen(b), b);
	for (int i = 0; i < n; i++)
		sum += (unsigned char)out[i];
	n += snprintf(out + n, cap - (size_t)n, "10=%03u\x01", sum % 256);
	return (size_t)n;
}

START_TEST(bad_peers)
{
	static const struct { const char *body, *why; } cases[] = {
		{ NULL, "does not start with 8=" },	/* garbage */
		{ "35=D|49=ALGO|56=VENUE|34=2|", "bad CheckSum" },
		{ "35=D|49=ALGO|56=VENUE|34=2|", "bad BodyLength" },
		{ "35=D|49=ALGO|56=VENUE|34=2|58=", "over the size limit" },
		{ "35=D|49=EVIL|56=VENUE|34=2|", "SenderCompID (49) 'EVIL'" },
		{ "35=D|49=ALGO|56=OTHER|34=2|", "TargetCompID (56) 'OTHER'" },
		{ "35=D|49=ALGO|56=VENUE|34=1|", "MsgSeqNum too low" },
		{ "35=D|49=ALGO|56=VENUE|", "MsgSeqNum (34) missing" },
		{ "35=A|49=ALGO|56=VENUE|34=2|108=30|", "already logged on" },
		/* The man page's words for a BodyLength of 999,999,999. */
		{ "8=FIX.4.4|9=999999999|35=D|", "over the size limit" },
	};
	char msg[2048], reply[1024];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;

		if (i)
			setup();
		if (!cases[i].body) {
			strcpy(msg, "GET / HTTP/1.1\r\n\r\n");
			len = strlen(msg);
		} else if (!strncmp(cases[i].body, "8=", 2)) {
			/* Raw bytes, not a built message. */
			len = strlen(cases[i].body);
			for (size_t k = 0; k < len; k++)
				msg[k] = cases[i].body[k] == '|' ? '\x01' :
					 cases[i].body[k];
		} else if (i == 3) {
			char body[700];

			snprintf(body, sizeof(body), "%s%0600d|", cases[i].body, 0);
			len = build(msg, sizeof(msg), body);
		} else {
			len = build(msg, sizeof(msg), cases[i].body);
		}
		if (i == 1)
			msg[len - 2] = msg[len - 2] == '0' ? '1' : '0';
		if (i == 2) {
			/* BodyLength 2x -> 9x: a lie, found out when the
			 * next message's bytes do not end where it says. */
			msg[12] = '9';
			len += build(msg + len, sizeof(msg) - len, cases[i].body);
			len += build(msg + len, sizeof(msg) - len, cases[i].body);
		}
		ck_assert_msg(feed(msg, len) == -EPROTO, "case %u", i);
		ck_assert_msg(strstr(fixsess_error(acc), cases[i].why),
			      "case %u: '%s'", i, fixsess_error(acc));
		ck_assert_ptr_nonnull(strstr(fixsess_error(acc), "byte "));
		ck_assert_int_eq(fixsess_state(acc), FIXSESS_CLOSED);
		ck_assert_int_eq(app_seen, 0);
		/* The peer was told: a Logout after our Logon, with Text. */
		peer_reply(reply, sizeof(reply));
		ck_assert_msg(strstr(reply, "|35=5|") && strstr(reply, "|58="),
			      "case %u: reply '%s'", i, reply);
		teardown();
	}
	setup();
}
END_TEST

START_TEST(gaps_counted)
{
	char msg[512];
	struct fixsess_stats st;
	size_t len = build(msg, sizeof(msg), "35=D|49=ALGO|56=VENUE|34=7|");

	ck_assert_int_eq(feed(msg, len), 0);
	ck_assert_int_eq(app_seen, 1);
	len = build(msg, sizeof(msg), "35=D|49=ALGO|56=VENUE|34=8|");
	ck_assert_int_eq(write(fd[0], msg, len), (ssize_t)len);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.gaps, 1);
	ck_assert_uint_eq(st.gap_msgs, 5);	/* 2..6 missing, 7 came */
	ck_assert_int_eq(app_seen, 2);
	/* A message cut in two reads is taken whole. */
	len = build(msg, sizeof(msg), "35=D|49=ALGO|56=VENUE|34=9|");
	ck_assert_int_eq(write(fd[0], msg, 10), 10);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(app_seen, 2);
	ck_assert_int_eq(write(fd[0], msg + 10, len - 10), (ssize_t)(len - 10));
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(app_seen, 3);
	/* The peer leaving without Logout is reported. */
	shutdown(fd[0], SHUT_WR);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(fixsess_error(acc), "closed"));
}
END_TEST

/* Once a side has sent its Logout it sends nothing more: no application
 * message, no answer to a TestRequest, no Heartbeat; and a Logout
 * received ends its sending as well. */
START_TEST(nothing_after_logout)
{
	char msg[512], reply[512];
	struct fixsess_stats st;
	struct fix_writer *w;
	size_t len;

	logon();
	ck_assert_int_eq(fixsess_logout(acc, "bye", 0), 0);
	ck_assert_int_eq(fixsess_state(acc), FIXSESS_LOGOUT_SENT);
	peer_reply(reply, sizeof(reply));
	ck_assert_ptr_nonnull(strstr(reply, "|35=5|"));
	w = fixsess_begin(acc, "8", 0);
	fix_add_str(w, 11, "X1");
	ck_assert_int_eq(fixsess_send(acc, 0), -ESHUTDOWN);
	/* An order and a TestRequest that crossed the Logout: the order is
	 * handed over (the caller decides), the test is not answered. */
	len = build(msg, sizeof(msg), "35=D|49=ALGO|56=VENUE|34=2|11=X2|");
	ck_assert_int_eq(write(fd[0], msg, len), (ssize_t)len);
	len = build(msg, sizeof(msg), "35=1|49=ALGO|56=VENUE|34=3|112=T|");
	ck_assert_int_eq(write(fd[0], msg, len), (ssize_t)len);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(app_seen, 1);
	ck_assert_int_eq(fixsess_tick(acc, 10 * S), 0);
	ck_assert_int_eq(recv(fd[0], reply, sizeof(reply), MSG_DONTWAIT), -1);
	fixsess_stats(acc, &st);
	ck_assert_uint_eq(st.sent[FIXSESS_T_HEARTBEAT], 0);
	ck_assert_uint_eq(st.sent[FIXSESS_T_EXEC_REPORT], 0);
	/* The peer's Logout closes it, and nothing goes after that either. */
	len = build(msg, sizeof(msg), "35=5|49=ALGO|56=VENUE|34=4|");
	ck_assert_int_eq(write(fd[0], msg, len), (ssize_t)len);
	ck_assert_int_eq(fixsess_read(acc, 0, on_app, NULL), 0);
	ck_assert_int_eq(fixsess_state(acc), FIXSESS_CLOSED);
	fixsess_begin(acc, "0", 0);
	ck_assert_int_eq(fixsess_send(acc, 0), -ESHUTDOWN);
	ck_assert_int_eq(recv(fd[0], reply, sizeof(reply), MSG_DONTWAIT), -1);
}
END_TEST

START_TEST(bad_config)
{
	struct fixsess *s;
	struct fixsess_io io = { io_send, io_recv, NULL, &fd[0] };
	struct fixsess_config c = { .sender = "A\x01" "B", .target = "V" };

	ck_assert_int_eq(fixsess_create(&s, &c, &io), -EINVAL);
	c.sender = "";
	ck_assert_int_eq(fixsess_create(&s, &c, &io), -EINVAL);
}
END_TEST

static Suite *fixsess_suite(void)
{
	Suite *s = suite_create("fixsess");
	TCase *tc = tcase_create("fixsess");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, logon_and_messages);
	tcase_add_test(tc, heartbeats_and_tests);
	tcase_add_test(tc, bad_peers);
	tcase_add_test(tc, gaps_counted);
	tcase_add_test(tc, nothing_after_logout);
	tcase_add_test(tc, bad_config);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(fixsess_suite)
