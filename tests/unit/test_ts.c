/* test_ts.c — the timestamping core: control-message parsing from constructed
 * buffers, flag probing, and live UDP/TCP stamping over loopback (software
 * stamps; deterministic, no namespace needed). */
#include <errno.h>
#include <time.h> /* before linux/errqueue.h, which uses struct timespec */
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/missing.h"
#include "stamp/ts.h"
#include "unit.h"

/* ---- constructed control messages ---------------------------------- */

struct cbuf {
	union {
		char buf[512];
		struct cmsghdr align;
	} u;
	size_t len;
};

static void *cb_add(struct cbuf *cb, int level, int type, size_t datalen)
{
	struct cmsghdr *c = (struct cmsghdr *)(cb->u.buf + cb->len);

	ck_assert_uint_le(cb->len + CMSG_SPACE(datalen), sizeof(cb->u.buf));
	memset(c, 0, CMSG_SPACE(datalen));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(datalen);
	cb->len += CMSG_SPACE(datalen);
	return CMSG_DATA(c);
}

static void cb_stamps(struct cbuf *cb, int64_t sw, int64_t hw)
{
	struct __kernel_timespec t[3] = {
		{ sw / 1000000000, sw % 1000000000 }, { 0, 0 },
		{ hw / 1000000000, hw % 1000000000 },
	};

	memcpy(cb_add(cb, SOL_SOCKET, SCM_TIMESTAMPING_NEW, sizeof(t)), t,
	       sizeof(t));
}

static void cb_err(struct cbuf *cb, int level, int type, uint8_t origin,
		   uint32_t info, uint32_t key)
{
	struct sock_extended_err e = {
		.ee_errno = ENOMSG, .ee_origin = origin,
		.ee_info = info, .ee_data = key,
	};

	memcpy(cb_add(cb, level, type, sizeof(e)), &e, sizeof(e));
}

static struct msghdr cb_msg(struct cbuf *cb)
{
	struct msghdr m = { .msg_control = cb->u.buf, .msg_controllen = cb->len };

	return m;
}

START_TEST(rx_software_only)
{
	struct cbuf cb = { .len = 0 };
	struct ts_stamp st[2];
	struct in_pktinfo *pi;
	struct msghdr m;

	cb_stamps(&cb, 1700000000123456789LL, 0);
	pi = cb_add(&cb, SOL_IP, IP_PKTINFO, sizeof(*pi));
	pi->ipi_ifindex = 7;
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_rx(&m, -1, TS_SCALE_PHC, st), 1);
	ck_assert_int_eq(st[0].stage, TS_STAGE_SW_RX);
	ck_assert(st[0].ns == 1700000000123456789LL);
	ck_assert_int_eq(st[0].timescale, TS_SCALE_UTC);
	ck_assert_int_eq(st[0].phc, -1);
	ck_assert_uint_eq(st[0].ifindex, 7);
	ck_assert_int_eq(ts_stage_source(st[0].stage), TS_SOURCE_SW);
}
END_TEST

START_TEST(rx_hardware_and_software)
{
	struct cbuf cb = { .len = 0 };
	struct scm_ts_pktinfo *pi;
	struct ts_stamp st[2];
	struct msghdr m;

	pi = cb_add(&cb, SOL_SOCKET, SCM_TIMESTAMPING_PKTINFO, sizeof(*pi));
	pi->if_index = 3;
	pi->pkt_length = 98;
	cb_stamps(&cb, 2000000000000000500LL, 2000000037000000100LL);
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_rx(&m, 2, TS_SCALE_TAI, st), 2);
	/* Hardware first. */
	ck_assert_int_eq(st[0].stage, TS_STAGE_HW_RX);
	ck_assert(st[0].ns == 2000000037000000100LL);
	ck_assert_int_eq(st[0].phc, 2);
	ck_assert_int_eq(st[0].timescale, TS_SCALE_TAI);
	ck_assert_uint_eq(st[0].ifindex, 3);
	ck_assert_uint_eq(st[0].pktlen, 98);
	ck_assert_int_eq(st[1].stage, TS_STAGE_SW_RX);
	ck_assert_int_eq(st[1].timescale, TS_SCALE_UTC);
	ck_assert_uint_eq(st[1].pktlen, 0);
}
END_TEST

START_TEST(rx_none_and_malformed)
{
	struct cbuf cb = { .len = 0 };
	struct ts_stamp st[2];
	struct msghdr m = { 0 };
	struct cmsghdr *c;

	ck_assert_int_eq(ts_parse_rx(&m, -1, TS_SCALE_PHC, st), 0);

	/* A control message claiming more bytes than the buffer has. */
	cb_stamps(&cb, 1, 0);
	c = (struct cmsghdr *)cb.u.buf;
	c->cmsg_len = cb.len + 64;
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_rx(&m, -1, TS_SCALE_PHC, st), -EBADMSG);

	/* A timestamping message too short for three timespecs. */
	c->cmsg_len = CMSG_LEN(16);
	ck_assert_int_eq(ts_parse_rx(&m, -1, TS_SCALE_PHC, st), -EBADMSG);

	/* cmsg_len smaller than the header itself. */
	c->cmsg_len = 4;
	ck_assert_int_eq(ts_parse_rx(&m, -1, TS_SCALE_PHC, st), -EBADMSG);
}
END_TEST

START_TEST(tx_kinds_and_keys)
{
	static const struct {
		uint32_t info;
		int64_t sw, hw;
		int n;
		enum ts_stage first;
	} cases[] = {
		{ SCM_TSTAMP_SND, 1000, 0, 1, TS_STAGE_SW_TX },
		{ SCM_TSTAMP_SCHED, 900, 0, 1, TS_STAGE_SCHED },
		{ SCM_TSTAMP_ACK, 5000, 0, 1, TS_STAGE_ACK },
		{ SCM_TSTAMP_SND, 0, 77, 1, TS_STAGE_HW_TX },
		{ SCM_TSTAMP_SND, 1000, 77, 2, TS_STAGE_HW_TX },
		{ 9, 1000, 0, 0, TS_STAGE_SW_TX },	/* unknown kind */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cbuf cb = { .len = 0 };
		struct ts_stamp st[2];
		struct msghdr m;

		cb_stamps(&cb, cases[i].sw, cases[i].hw);
		cb_err(&cb, SOL_IP, IP_RECVERR, SO_EE_ORIGIN_TIMESTAMPING,
		       cases[i].info, 4242 + (uint32_t)i);
		m = cb_msg(&cb);
		ck_assert_int_eq(ts_parse_tx(&m, 4, TS_SCALE_PHC, st), cases[i].n);
		if (!cases[i].n)
			continue;
		ck_assert_int_eq(st[0].stage, cases[i].first);
		ck_assert_uint_eq(st[0].key, 4242 + i);
		if (cases[i].first == TS_STAGE_HW_TX) {
			ck_assert(st[0].ns == cases[i].hw);
			ck_assert_int_eq(st[0].phc, 4);
		}
		if (cases[i].n == 2) {
			ck_assert_int_eq(st[1].stage, TS_STAGE_SW_TX);
			ck_assert_uint_eq(st[1].key, 4242 + i);
		}
	}
}
END_TEST

START_TEST(tx_ipv6_and_foreign_errors)
{
	struct cbuf cb = { .len = 0 };
	struct ts_stamp st[2];
	struct msghdr m;

	cb_stamps(&cb, 123, 0);
	cb_err(&cb, SOL_IPV6, IPV6_RECVERR, SO_EE_ORIGIN_TIMESTAMPING,
	       SCM_TSTAMP_SND, 9);
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_tx(&m, -1, TS_SCALE_PHC, st), 1);
	ck_assert_uint_eq(st[0].key, 9);

	/* An ICMP error on the queue is not a stamp. */
	cb.len = 0;
	cb_stamps(&cb, 123, 0);
	cb_err(&cb, SOL_IP, IP_RECVERR, SO_EE_ORIGIN_ICMP, 0, 0);
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_tx(&m, -1, TS_SCALE_PHC, st), 0);

	/* A stamp with no extended error has no key: not usable on TX. */
	cb.len = 0;
	cb_stamps(&cb, 123, 0);
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_tx(&m, -1, TS_SCALE_PHC, st), 0);
}
END_TEST

/* A packet socket (a switch emulator's port) reports TX stamps as
 * SOL_PACKET PACKET_TX_TIMESTAMP; a packet socket is taken, a raw IP socket
 * is not (needs CAP_NET_RAW: skipped without it). */
START_TEST(tx_packet_socket)
{
	struct cbuf cb = { .len = 0 };
	struct ts_stamp st[2];
	struct ts_config cfg;
	struct ts_sock *ts;
	struct msghdr m;
	int fd;

	cb_stamps(&cb, 456, 789);
	cb_err(&cb, SOL_PACKET, PACKET_TX_TIMESTAMP, SO_EE_ORIGIN_TIMESTAMPING,
	       SCM_TSTAMP_SND, 3);
	m = cb_msg(&cb);
	ck_assert_int_eq(ts_parse_tx(&m, 1, TS_SCALE_PHC, st), 2);
	ck_assert_int_eq(st[0].stage, TS_STAGE_HW_TX);
	ck_assert_int_eq(st[0].ns, 789);
	ck_assert_int_eq(st[1].ns, 456);
	ck_assert_uint_eq(st[1].key, 3);

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		return;
	ts_config_init(&cfg);
	cfg.mode = TS_MODE_SW;
	ck_assert_int_eq(ts_sock_create(&ts, fd, &cfg), 0);
	ts_sock_destroy(ts);
	close(fd);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ts_sock_create(&ts, fd, &cfg), -EPROTONOSUPPORT);
	close(fd);
}
END_TEST

START_TEST(flag_probing)
{
	ck_assert(ts_kernel_accepts(SOF_TIMESTAMPING_SOFTWARE |
				    SOF_TIMESTAMPING_TX_SOFTWARE, SOCK_DGRAM));
	/* A bit no kernel defines. */
	ck_assert(!ts_kernel_accepts(SOF_TIMESTAMPING_SOFTWARE | (1u << 30),
				     SOCK_DGRAM));
	/* OPT_ID_TCP without OPT_ID is refused wherever it is known, and
	 * unknown flags are refused elsewhere: false either way. */
	ck_assert(!ts_kernel_accepts(SOF_TIMESTAMPING_SOFTWARE |
				     TAPLESS_SOF_OPT_ID_TCP, SOCK_DGRAM));
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(ts_stage_name(TS_STAGE_HW_TX), "hw_tx");
	ck_assert_str_eq(ts_stage_name(TS_STAGE_COUNT), "?");
	ck_assert_str_eq(ts_source_name(TS_SOURCE_SW), "sw");
	ck_assert_str_eq(ts_timescale_name(TS_SCALE_TAI), "tai");
}
END_TEST

/* ---- live loopback -------------------------------------------------- */

static void udp_pair(int *tx, int *rx)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*rx = socket(AF_INET, SOCK_DGRAM, 0);
	*tx = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(*rx, 0);
	ck_assert_int_eq(bind(*rx, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(*rx, (struct sockaddr *)&a, &al), 0);
	ck_assert_int_eq(connect(*tx, (struct sockaddr *)&a, sizeof(a)), 0);
}

static void tcp_pair(int *cl, int *sv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(ls, 1), 0);
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	*cl = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(*cl, (struct sockaddr *)&a, sizeof(a)), 0);
	*sv = accept(ls, NULL, NULL);
	ck_assert_int_ge(*sv, 0);
	close(ls);
}

/* RX software stamping is switched on kernel-wide from a workqueue (see
 * ts.h): send throw-away datagrams to rx until one comes back stamped. */
static void rx_warmup(struct ts_sock *rx, int rxfd)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_int_eq(getsockname(rxfd, (struct sockaddr *)&a, &al), 0);
	for (int i = 0; i < 500; i++) {
		struct ts_stamp st[2];
		char b[8];
		int ns = 0;

		ck_assert_int_eq(sendto(fd, "w", 1, 0, (struct sockaddr *)&a, al), 1);
		ck_assert_int_eq(ts_recv(rx, b, sizeof(b), 0, st, &ns), 1);
		if (ns > 0) {
			close(fd);
			return;
		}
		usleep(2000);
	}
	ck_abort_msg("RX software stamps never switched on");
}

static struct ts_sock *sw_sock(int fd, int64_t timeout_ns, unsigned window)
{
	struct ts_config cfg;
	struct ts_sock *ts = NULL;

	ts_config_init(&cfg);
	cfg.mode = TS_MODE_SW;
	if (timeout_ns)
		cfg.tx_timeout_ns = timeout_ns;
	if (window)
		cfg.tx_window = window;
	ck_assert_int_eq(ts_sock_create(&ts, fd, &cfg), 0);
	return ts;
}

/* Collect n records, waiting for stamps up to ~2 s. */
static int collect(struct ts_sock *ts, struct ts_tx_record *rec, int n)
{
	int got = 0;

	for (int tries = 0; got < n && tries < 200; tries++) {
		ck_assert_int_ge(ts_tx_wait(ts, 10), 0);
		while (got < n && ts_tx_next(ts, &rec[got], ts_now_mono()) == 1)
			got++;
	}
	return got;
}

START_TEST(udp_loopback)
{
	enum { N = 200 };
	struct ts_tx_record rec[N];
	struct ts_sock *tx, *rx;
	struct ts_stats stats;
	struct ts_info info;
	char buf[256];
	int a, b;

	udp_pair(&a, &b);
	tx = sw_sock(a, 0, 0);
	rx = sw_sock(b, 0, 0);
	rx_warmup(rx, b);
	ts_sock_info(tx, &info);
	ck_assert_int_eq(info.source, TS_SOURCE_SW);
	ck_assert(!info.stream);
	for (int i = 0; i < N; i++) {
		memset(buf, i, sizeof(buf));
		ck_assert_int_eq(ts_send(tx, buf, 16 + i % 200, 0, 1000 + i),
				 16 + i % 200);
	}
	ck_assert_int_eq(collect(tx, rec, N), N);
	for (int i = 0; i < N; i++) {
		struct ts_stamp st[2];
		int ns;
		ssize_t r = ts_recv(rx, buf, sizeof(buf), 0, st, &ns);

		ck_assert_int_eq(r, 16 + i % 200);
		ck_assert_int_eq(ns, 1);
		ck_assert_int_eq(st[0].stage, TS_STAGE_SW_RX);
		ck_assert_uint_eq(rec[i].cookie, 1000 + i);
		ck_assert_uint_eq(rec[i].first, i);	/* datagram counter */
		ck_assert_uint_eq(rec[i].lost, 0);
		ck_assert(rec[i].ns[TS_STAGE_SW_TX] > 0);
		ck_assert(rec[i].ns[TS_STAGE_SW_TX] >= rec[i].app_ns);
		ck_assert(st[0].ns >= rec[i].ns[TS_STAGE_SW_TX]);
		ck_assert_uint_eq(st[0].ifindex, 1);	/* lo */
	}
	ts_sock_stats(tx, &stats);
	ck_assert_uint_eq(stats.sends, N);
	ck_assert_uint_eq(stats.records, N);
	ck_assert_uint_eq(stats.unmatched, 0);
	ts_sock_destroy(tx);
	ts_sock_destroy(rx);
	close(a);
	close(b);
}
END_TEST

START_TEST(tcp_loopback_sizes)
{
	enum { N = 120 };
	static char big[70000];
	struct ts_tx_record rec[N];
	struct ts_sock *tx, *rx;
	struct ts_info info;
	uint64_t offset = 0, total = 0;
	int a, b;

	int wu, wv;
	struct ts_sock *warm;

	/* A UDP receiver kept open holds the kernel's RX stamp switch on. */
	udp_pair(&wu, &wv);
	warm = sw_sock(wv, 0, 0);
	rx_warmup(warm, wv);
	tcp_pair(&a, &b);
	tx = sw_sock(a, 0, 0);
	rx = sw_sock(b, 0, 0);
	ts_sock_info(tx, &info);
	ck_assert(info.stream);
	/* Sizes from 1 byte to more than one loopback skb (64 KiB): the
	 * large ones are split and still stamped at their last byte. */
	for (int i = 0; i < N; i++) {
		size_t len = i % 10 == 9 ? sizeof(big) : 1 + (size_t)i * 13;
		size_t done = 0;

		while (done < len) {
			ssize_t n = ts_send(tx, big + done, len - done, 0, i);

			ck_assert_int_gt(n, 0);
			done += (size_t)n;
		}
		total += len;
		/* Drain the receiver so the sender never blocks. */
		while (1) {
			char sink[65536];
			struct ts_stamp st[2];
			int ns;
			ssize_t r = ts_recv(rx, sink, sizeof(sink), MSG_DONTWAIT,
					    st, &ns);
			if (r <= 0)
				break;
			ck_assert_int_ge(ns, 1);
		}
	}
	int n = collect(tx, rec, N);
	ck_assert_int_ge(n, N);	/* partial sends add records, never fewer */
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(rec[i].first, offset);
		ck_assert_uint_eq(rec[i].lost, 0);
		ck_assert_uint_eq(rec[i].shared, 0);
		ck_assert(rec[i].ns[TS_STAGE_SW_TX] >= rec[i].app_ns);
		offset += rec[i].len;
	}
	ck_assert_uint_eq(offset, total);
	ts_sock_destroy(warm);
	close(wu);
	close(wv);
	ts_sock_destroy(tx);
	ts_sock_destroy(rx);
	close(a);
	close(b);
}
END_TEST

START_TEST(tcp_coalesced_writes_share_a_stamp)
{
	struct ts_tx_record rec[5];
	struct ts_sock *tx;
	int a, b, on = 1, off = 0;

	tcp_pair(&a, &b);
	tx = sw_sock(a, 0, 0);
	/* Under TCP_CORK plain writes are appended to one skb, whose stamp
	 * request each write replaces: one stamp, keyed by the last byte. */
	ck_assert_int_eq(setsockopt(a, IPPROTO_TCP, TCP_CORK, &on, sizeof(on)), 0);
	for (int i = 0; i < 5; i++) {
		int64_t app = ts_now_real();

		ck_assert_int_eq(send(a, "0123456789", 10, 0), 10);
		ck_assert_int_eq(ts_tx_sent(tx, 50 + i, 10, app), 0);
	}
	ck_assert_int_eq(setsockopt(a, IPPROTO_TCP, TCP_CORK, &off, sizeof(off)), 0);
	ck_assert_int_eq(collect(tx, rec, 5), 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(rec[i].cookie, 50 + i);
		ck_assert_uint_eq(rec[i].first, 10 * i);
		ck_assert_uint_eq(rec[i].lost, 0);
		ck_assert(rec[i].ns[TS_STAGE_SW_TX] == rec[4].ns[TS_STAGE_SW_TX]);
		ck_assert_uint_eq(rec[i].shared,
				  i < 4 ? 1u << TS_STAGE_SW_TX : 0);
	}
	ts_sock_destroy(tx);
	close(a);
	close(b);
}
END_TEST

START_TEST(lost_stamps_time_out)
{
	struct ts_tx_record rec;
	struct ts_sock *tx;
	struct ts_stats st;
	int a, b;

	udp_pair(&a, &b);
	tx = sw_sock(a, 20 * 1000 * 1000, 0);
	/* Recorded but never sent: its stamp can never come. */
	ck_assert_int_eq(ts_tx_sent(tx, 1, 10, 0), 0);
	ck_assert_int_eq(ts_tx_reap(tx), 0);
	ck_assert_int_eq(ts_tx_next(tx, &rec, ts_now_mono()), 0);
	ck_assert_int_eq(ts_tx_next(tx, &rec, ts_now_mono() + 30 * 1000 * 1000), 1);
	ck_assert_uint_eq(rec.lost, 1u << TS_STAGE_SW_TX);
	ck_assert(rec.ns[TS_STAGE_SW_TX] == 0);
	ts_sock_stats(tx, &st);
	ck_assert_uint_eq(st.lost[TS_STAGE_SW_TX], 1);
	ts_sock_destroy(tx);
	close(a);
	close(b);
}
END_TEST

START_TEST(window_full)
{
	struct ts_sock *tx;
	struct ts_stats st;
	int a, b;

	udp_pair(&a, &b);
	tx = sw_sock(a, 0, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(ts_tx_sent(tx, i, 1, 0), 0);
	ck_assert_int_eq(ts_tx_sent(tx, 4, 1, 0), -ENOBUFS);
	ck_assert_int_eq(ts_send(tx, "x", 1, 0, 5), -ENOBUFS);
	ck_assert_uint_eq(ts_tx_pending(tx), 4);
	ts_sock_stats(tx, &st);
	ck_assert_uint_eq(st.window_full, 2);
	ts_sock_destroy(tx);
	close(a);
	close(b);
}
END_TEST

START_TEST(modes_and_refusals)
{
	struct ts_config cfg;
	struct ts_sock *ts = NULL;
	struct ts_info info;
	int fd = socket(AF_INET, SOCK_STREAM, 0), u, v;

	ts_config_init(&cfg);
	/* TCP before connect: refused, enable after connect(). */
	ck_assert_int_eq(ts_sock_create(&ts, fd, &cfg), -ENOTCONN);
	close(fd);

	udp_pair(&u, &v);
	/* Hardware on loopback: no PHC. */
	cfg.mode = TS_MODE_HW;
	cfg.ifname = "lo";
	ck_assert_int_lt(ts_sock_create(&ts, u, &cfg), 0);
	/* AUTO falls back to software. */
	cfg.mode = TS_MODE_AUTO;
	ck_assert_int_eq(ts_sock_create(&ts, u, &cfg), 0);
	ts_sock_info(ts, &info);
	ck_assert_int_eq(info.source, TS_SOURCE_SW);
	ck_assert_int_eq(info.phc, -1);
	ck_assert(info.so_flags & SOF_TIMESTAMPING_OPT_ID);
	ck_assert(info.so_flags & SOF_TIMESTAMPING_OPT_TSONLY);
	ck_assert_uint_eq(info.tx_expect, 1u << TS_STAGE_SW_TX);
	ts_sock_destroy(ts);
	close(u);
	close(v);
}
END_TEST

START_TEST(sched_and_ack_stages)
{
	struct ts_tx_record rec[10];
	struct ts_config cfg;
	struct ts_sock *tx = NULL;
	int a, b;

	tcp_pair(&a, &b);
	ts_config_init(&cfg);
	cfg.mode = TS_MODE_SW;
	cfg.tx_stages = (1u << TS_STAGE_SCHED) | (1u << TS_STAGE_ACK);
	ck_assert_int_eq(ts_sock_create(&tx, a, &cfg), 0);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(ts_send(tx, "abcdefgh", 8, 0, i), 8);
	ck_assert_int_eq(collect(tx, rec, 10), 10);
	for (int i = 0; i < 10; i++) {
		ck_assert_uint_eq(rec[i].lost, 0);
		/* The order the stages happen in. */
		ck_assert(rec[i].ns[TS_STAGE_SCHED] <= rec[i].ns[TS_STAGE_SW_TX]);
		ck_assert(rec[i].ns[TS_STAGE_SW_TX] <= rec[i].ns[TS_STAGE_ACK]);
	}
	ts_sock_destroy(tx);
	close(a);
	close(b);
}
END_TEST

static Suite *ts_suite(void)
{
	Suite *s = suite_create("ts");
	TCase *p = tcase_create("parse");
	TCase *l = tcase_create("loopback");

	tcase_add_test(p, rx_software_only);
	tcase_add_test(p, rx_hardware_and_software);
	tcase_add_test(p, rx_none_and_malformed);
	tcase_add_test(p, tx_kinds_and_keys);
	tcase_add_test(p, tx_ipv6_and_foreign_errors);
	tcase_add_test(p, tx_packet_socket);
	tcase_add_test(p, flag_probing);
	tcase_add_test(p, names);
	tcase_add_test(l, udp_loopback);
	tcase_add_test(l, tcp_loopback_sizes);
	tcase_add_test(l, tcp_coalesced_writes_share_a_stamp);
	tcase_add_test(l, lost_stamps_time_out);
	tcase_add_test(l, window_full);
	tcase_add_test(l, modes_and_refusals);
	tcase_add_test(l, sched_and_ack_stages);
	tcase_set_timeout(l, 20);
	suite_add_tcase(s, p);
	suite_add_tcase(s, l);
	return s;
}

UNIT_MAIN(ts_suite)
