/* test_shim.c — the pure parts of tapless-stamp's preload library: its
 * port and peer lists, reading an error queue message, finding the TCP
 * segment of a looped packet, and agreeing on a socket's sequence base. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "files/frame.h"
#include "live/txsock.h"
#include "shim/shim_errq.h"
#include "shim/shim_filter.h"
#include "unit.h"

static const uint8_t *v4(const char *s)
{
	static uint8_t a[16];

	memset(a, 0, sizeof(a));
	ck_assert_int_eq(inet_pton(AF_INET, s, a), 1);
	return a;
}

START_TEST(filter_lists)
{
	struct shim_filter f = { 0 };
	char err[SHIM_FILTER_ERRBUF];
	uint8_t a6[16];

	/* Empty lists take everything. */
	ck_assert(shim_filter_match(&f, AF_INET, v4("10.1.2.3"), 1, 2));
	ck_assert_int_eq(shim_filter_ports(&f, "9001,9100-9199", err), 0);
	ck_assert(shim_filter_match(&f, AF_INET, v4("10.1.2.3"), 9001, 40000));
	ck_assert(shim_filter_match(&f, AF_INET, v4("10.1.2.3"), 40000, 9150));
	ck_assert(!shim_filter_match(&f, AF_INET, v4("10.1.2.3"), 40000, 9200));
	ck_assert_int_eq(shim_filter_peers(&f, "198.18.1.2,10.0.0.0/8,2001:db8::/32", err), 0);
	ck_assert(shim_filter_match(&f, AF_INET, v4("10.200.0.1"), 9001, 1));
	ck_assert(shim_filter_match(&f, AF_INET, v4("198.18.1.2"), 9001, 1));
	ck_assert(!shim_filter_match(&f, AF_INET, v4("198.18.1.3"), 9001, 1));
	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8:ff::1", a6), 1);
	ck_assert(shim_filter_match(&f, AF_INET6, a6, 9001, 1));
	a6[3] ^= 1;	/* 2001:db9:... */
	ck_assert(!shim_filter_match(&f, AF_INET6, a6, 9001, 1));
}
END_TEST

START_TEST(filter_errors)
{
	struct shim_filter f = { 0 };
	char err[SHIM_FILTER_ERRBUF];

	ck_assert_int_eq(shim_filter_ports(&f, "9001,x9", err), -EINVAL);
	ck_assert_str_eq(err, "bad port 'x9' at byte 5");
	ck_assert_int_eq(shim_filter_ports(&f, "70000", err), -EINVAL);
	ck_assert_int_eq(shim_filter_ports(&f, "20-10", err), -EINVAL);
	ck_assert_int_eq(shim_filter_ports(&f, "1,,2", err), -EINVAL);
	ck_assert_int_eq(shim_filter_ports(&f, "1,", err), -EINVAL);
	ck_assert_str_eq(err, "empty port at byte 2");
	ck_assert_int_eq(shim_filter_peers(&f, "10.0.0.0/33", err), -EINVAL);
	ck_assert_str_eq(err, "bad peer '10.0.0.0/33' at byte 0");
	ck_assert_int_eq(shim_filter_peers(&f, "::1/129", err), -EINVAL);
	ck_assert_int_eq(shim_filter_peers(&f, "1.2.3.4,host", err), -EINVAL);
	ck_assert_str_eq(err, "bad peer 'host' at byte 8");
	ck_assert_int_eq(shim_filter_ports(&f, NULL, err), 0);
	ck_assert_int_eq(shim_filter_peers(&f, "", err), 0);
}
END_TEST

/* An error queue message as the kernel builds it. */
struct errq_msg {
	union {
		char buf[256];
		struct cmsghdr align;
	} ctl;
	struct msghdr m;
};

static void errq_build(struct errq_msg *q, int origin, int info, uint32_t key,
		       long sw_sec, long hw_sec, int with_ts)
{
	struct cmsghdr *c;
	struct timespec ts[3] = { { sw_sec, sw_sec ? 5 : 0 }, { 0, 0 },
				  { hw_sec, hw_sec ? 7 : 0 } };
	struct sock_extended_err ee = { .ee_errno = ENOMSG, .ee_origin = (uint8_t)origin,
					.ee_info = (uint32_t)info, .ee_data = key };
	size_t len = 0;

	memset(q, 0, sizeof(*q));
	q->m.msg_control = q->ctl.buf;
	q->m.msg_controllen = sizeof(q->ctl.buf);
	c = CMSG_FIRSTHDR(&q->m);
	if (with_ts) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SO_TIMESTAMPING;
		c->cmsg_len = CMSG_LEN(sizeof(ts));
		memcpy(CMSG_DATA(c), ts, sizeof(ts));
		len += CMSG_SPACE(sizeof(ts));
		c = (struct cmsghdr *)(q->ctl.buf + len);
	}
	c->cmsg_level = SOL_IP;
	c->cmsg_type = IP_RECVERR;
	c->cmsg_len = CMSG_LEN(sizeof(ee));
	memcpy(CMSG_DATA(c), &ee, sizeof(ee));
	len += CMSG_SPACE(sizeof(ee));
	q->m.msg_controllen = len;
}

START_TEST(errq_messages)
{
	struct errq_msg q;
	struct shim_errq_stamp st;

	errq_build(&q, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 4242, 1700000000, 0, 1);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), 1);
	ck_assert(!st.hw);
	ck_assert_int_eq(st.stage, TXSOCK_STAGE_SND);
	ck_assert_uint_eq(st.key, 4242);
	ck_assert(st.ns == 1700000000000000005LL);
	/* A hardware stamp wins, and says so. */
	errq_build(&q, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SCHED, 1, 0, 55, 1);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), 1);
	ck_assert(st.hw);
	ck_assert_int_eq(st.stage, TXSOCK_STAGE_SCHED);
	ck_assert(st.ns == 55000000007LL);
	/* Not ours: an ICMP error; a zerocopy completion. */
	errq_build(&q, SO_EE_ORIGIN_ICMP, 0, 0, 0, 0, 0);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), 0);
	errq_build(&q, SO_EE_ORIGIN_ZEROCOPY, 0, 0, 0, 0, 0);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), 0);
	/* A stamp message without a stamp, or with none set. */
	errq_build(&q, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 1, 0, 0, 0);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), -EBADMSG);
	errq_build(&q, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 1, 0, 0, 1);
	ck_assert_int_eq(shim_errq_parse(&q.m, &st), -EBADMSG);
}
END_TEST

START_TEST(errq_segment)
{
	struct frame_flow f = { .family = AF_INET, .proto = IPPROTO_TCP,
				.sport = 40000, .dport = 9001 };
	uint8_t buf[256];
	char payload[1000];
	uint32_t first, last;
	int n;

	memcpy(f.src, v4("198.18.1.1"), 4);
	memcpy(f.dst, v4("198.18.1.2"), 4);
	memset(payload, 'x', sizeof(payload));
	n = frame_build(buf, sizeof(buf), &f, 0xfffffff0u, 1, 0, payload, 100);
	ck_assert_int_gt(n, 0);
	/* Ethernet, whole. */
	ck_assert_int_eq(shim_errq_segment(buf, (size_t)n, &f, &first, &last), 0);
	ck_assert_uint_eq(first, 0xfffffff0u);
	ck_assert_uint_eq(last, 0xfffffff0u + 99);	/* wraps */
	/* Cut short by the buffer: the IP header still gives the length. */
	{
		static uint8_t big[2000];

		n = frame_build(big, sizeof(big), &f, 1000, 1, 0, payload, 1000);
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(shim_errq_segment(big, 80, &f, &first, &last), 0);
		ck_assert_uint_eq(last, 1999);
		/* From the IP header on (a device without a link header). */
		ck_assert_int_eq(shim_errq_segment(big + 14, 80, &f, &first, &last), 0);
		ck_assert_uint_eq(first, 1000);
	}
	/* Another flow's segment, or no payload: not ours to anchor with. */
	f.sport = 40001;
	ck_assert_int_eq(shim_errq_segment(buf, 120, &f, &first, &last), -EPROTONOSUPPORT);
	f.sport = 40000;
	n = frame_build(buf, sizeof(buf), &f, 5, 1, 0, payload, 0);
	ck_assert_int_eq(shim_errq_segment(buf, (size_t)n, &f, &first, &last), -EPROTONOSUPPORT);
	ck_assert_int_lt(shim_errq_segment(buf, 20, &f, &first, &last), 0);
}
END_TEST

START_TEST(anchor_exact)
{
	struct shim_anchor a = { 0 };
	uint64_t mism = 0;
	uint32_t base = 0xfffffff0u;	/* wraps within the run */

	/* Sends of 100 bytes, each its own segment ending with its byte. */
	ck_assert_int_eq(shim_anchor_feed(&a, 99, base, base + 99, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 199, base + 100, base + 199, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 299, base + 200, base + 299, &mism), 1);
	ck_assert(a.done);
	ck_assert_uint_eq(a.base, base);
	/* Later looped packets are checked, not used. */
	ck_assert_int_eq(shim_anchor_feed(&a, 399, base + 300, base + 399, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 450, base + 400, base + 499, &mism), 0);
	ck_assert_uint_eq(mism, 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 600, base + 400, base + 499, &mism), 0);
	ck_assert_uint_eq(mism, 1);
}
END_TEST

START_TEST(anchor_merged)
{
	struct shim_anchor a = { 0 };
	uint64_t mism = 0;
	uint32_t base = 1000;

	/* A send whose skb took later bytes: its key (149) is inside the
	 * segment [100, 299], whose end would say base 1150. Stamps like it
	 * never pull the base up; exact ones set it. */
	ck_assert_int_eq(shim_anchor_feed(&a, 149, base + 100, base + 299, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 349, base + 300, base + 349, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 399, base + 350, base + 499, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 549, base + 500, base + 549, &mism), 0);
	ck_assert_int_eq(shim_anchor_feed(&a, 649, base + 550, base + 649, &mism), 1);
	ck_assert_uint_eq(a.base, base);
}
END_TEST

START_TEST(anchor_gives_up)
{
	struct shim_anchor a = { 0 };
	uint64_t mism = 0;
	int r = 0;

	/* Every stamp a different base: never confirmed. */
	for (int i = 0; i < SHIM_ANCHOR_TRIES && r == 0; i++)
		r = shim_anchor_feed(&a, 10, (uint32_t)(1000 * i), (uint32_t)(1000 * i + 10 + i % 2),
				     &mism);
	ck_assert_int_eq(r, -1);
	ck_assert(!a.done);
}
END_TEST

static Suite *shim_suite(void)
{
	Suite *s = suite_create("shim");
	TCase *t = tcase_create("core");

	tcase_add_test(t, filter_lists);
	tcase_add_test(t, filter_errors);
	tcase_add_test(t, errq_messages);
	tcase_add_test(t, errq_segment);
	tcase_add_test(t, anchor_exact);
	tcase_add_test(t, anchor_merged);
	tcase_add_test(t, anchor_gives_up);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(shim_suite)
