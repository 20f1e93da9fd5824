/* test_sockcap.c — a TCP exchange over loopback, recorded by sockcap on both
 * ends: each side's file holds its sends and receives as frames that parse
 * back to the socket's real ports, the messages' bytes and matching TCP
 * sequence numbers, with stamps in time order; the txsock hand-over carries
 * the same TX frames. What a ping-pong program asks for besides: TX records
 * handed back, received frames written later and claiming every byte sent,
 * and counting without a file. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files/capfile.h"
#include "files/frame.h"
#include "files/pcapng.h"
#include "live/sockcap.h"
#include "stamp/ts.h"
#include "live/txsock.h"
#include "unit.h"

static char dir[64];

static void setup(void) { unit_tmpdir(dir, "sockcap"); }
static void teardown(void) { unit_rmdir(dir); }

#define MSGS 50

struct side {
	int fd;
	struct ts_sock *ts;
	struct sockcap *sc;
	struct pcapng_writer *w;
	char path[128];
};

static void side_open_cfg(struct side *s, int fd, const char *name,
			  struct txsock_client *tx,
			  const struct sockcap_config *base)
{
	struct ts_config cfg;
	struct pcapng_section sec = { .hostname = name, .userappl = "test" };
	struct pcapng_iface ifc;
	struct sockcap_config sc = *base;

	s->fd = fd;
	ts_config_init(&cfg);
	cfg.mode = TS_MODE_SW;
	ck_assert_int_eq(ts_sock_create(&s->ts, fd, &cfg), 0);
	snprintf(s->path, sizeof(s->path), "%s/%s.pcapng", dir, name);
	ck_assert_int_eq(pcapng_open(&s->w, s->path, &sec), 0);
	sockcap_iface(s->ts, "lo", true, &ifc);
	ck_assert_int_eq(pcapng_add_iface(s->w, &ifc, &sc.id_tx), 0);
	sockcap_iface(s->ts, "lo", false, &ifc);
	ck_assert_int_eq(pcapng_add_iface(s->w, &ifc, &sc.id_rx), 0);
	sc.w = s->w;
	sc.txsock = tx;
	sc.ifindex = 1;
	ck_assert_int_eq(sockcap_create(&s->sc, s->ts, fd, &sc), 0);
}

static void side_open(struct side *s, int fd, const char *name,
		      struct txsock_client *tx)
{
	struct sockcap_config sc = { 0 };

	side_open_cfg(s, fd, name, tx, &sc);
}

static void side_close(struct side *s)
{
	ck_assert_int_ge(sockcap_poll(s->sc, -1), 0);
	sockcap_destroy(s->sc);
	ts_sock_destroy(s->ts);
	ck_assert_int_eq(pcapng_close(s->w, false), 0);
	close(s->fd);
}

struct seen {
	uint32_t seq[MSGS];
	uint16_t sport[MSGS];
	int n;
};

/* Read a side's file: messages are "msg NN" payloads; record each one's TCP
 * seq and source port per direction, checking stamps rise per direction. */
static void read_side(const char *path, struct seen *tx, struct seen *rx)
{
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet p;
	int64_t last[3] = { 0 };
	int rc;

	ck_assert_msg(cap_open(&r, path, err) == 0, "%s", err);
	while ((rc = cap_next(r, &p)) == 1) {
		struct frame_info fi;
		struct seen *s = p.dir == PCAPNG_DIR_OUT ? tx : rx;
		int k;

		ck_assert_int_eq(frame_parse(p.data, p.caplen, 1, &fi), 0);
		ck_assert_int_eq(fi.flow.proto, IPPROTO_TCP);
		ck_assert_uint_eq(p.origlen, p.caplen);
		ck_assert_int_ge(p.ts_ns, last[p.dir]);
		last[p.dir] = p.ts_ns;
		/* One send or one recv per frame; a recv may hold several
		 * messages when they queued up: take each. */
		for (uint32_t off = 0; off + 6 <= fi.payload_len; off += 6) {
			ck_assert_int_eq(sscanf((const char *)fi.payload + off,
						"m%03d", &k), 1);
			ck_assert_int_eq(k, s->n);
			s->seq[s->n] = fi.seq + off;
			s->sport[s->n] = fi.flow.sport;
			s->n++;
		}
		ck_assert(cap_iface(r, p.iface)->src_known);
		ck_assert(!cap_iface(r, p.iface)->src.hw);
		/* Sent frames: stamped on the sending socket. */
		ck_assert(cap_iface(r, p.iface)->sender ==
			  (p.dir == PCAPNG_DIR_OUT));
	}
	ck_assert_int_eq(rc, 0);
	cap_close(r);
}

START_TEST(tcp_exchange)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd, cfd, afd, one = 1;
	struct side c, s;
	struct seen ctx = { 0 }, crx = { 0 }, stx = { 0 }, srx = { 0 };
	char path[128], buf[4096];
	struct txsock_client *tx;
	struct sockcap_stats st;

	snprintf(path, sizeof(path), "%s/capd.sock", dir);
	int txl = txsock_listen(path, (gid_t)-1);
	ck_assert_int_ge(txl, 0);
	ck_assert_int_eq(txsock_connect(&tx, path), 0);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(ts_listen_enable(lfd), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);
	setsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	side_open(&c, cfd, "client", tx);
	side_open(&s, afd, "server", NULL);
	usleep(20000);	/* the RX software stamp switch (see ts.h) */

	/* Client sends m000..; server echoes each back. */
	for (int i = 0; i < MSGS; i++) {
		char m[7];
		int got = 0;

		snprintf(m, sizeof(m), "m%03d ", i);
		ck_assert_int_eq(sockcap_send(c.sc, m, 6, 0), 6);
		while (got < 6) {
			ssize_t n = sockcap_recv(s.sc, buf, 6 - got, 0, NULL, NULL);
			ck_assert_int_gt(n, 0);
			got += (int)n;
		}
		ck_assert_int_eq(sockcap_send(s.sc, m, 6, 0), 6);
		for (got = 0; got < 6;) {
			ssize_t n = sockcap_recv(c.sc, buf, 6 - got, 0, NULL, NULL);
			ck_assert_int_gt(n, 0);
			got += (int)n;
		}
		ts_tx_wait(c.ts, 0);
		sockcap_poll(c.sc, ts_now_mono());
		sockcap_poll(s.sc, ts_now_mono());
	}
	ts_tx_wait(c.ts, 50);
	ts_tx_wait(s.ts, 50);
	sockcap_stats(c.sc, &st);
	bool relative = sockcap_relative(c.sc);
	side_close(&c);
	sockcap_stats(s.sc, &st);
	ck_assert_uint_eq(st.rx_unstamped, 0);
	side_close(&s);

	read_side(c.path, &ctx, &crx);
	read_side(s.path, &stx, &srx);
	ck_assert_int_eq(ctx.n, MSGS);
	ck_assert_int_eq(srx.n, MSGS);
	ck_assert_int_eq(stx.n, MSGS);
	ck_assert_int_eq(crx.n, MSGS);
	for (int i = 0; i < MSGS; i++) {
		/* Both ends agree on every byte's sequence number... */
		ck_assert_uint_eq(ctx.seq[i], srx.seq[i]);
		ck_assert_uint_eq(stx.seq[i], crx.seq[i]);
		ck_assert_uint_eq(ctx.seq[i], ctx.seq[0] + 6u * (uint32_t)i);
		ck_assert_uint_eq(ctx.sport[i], srx.sport[i]);
		ck_assert_uint_eq(stx.sport[i], ntohs(a.sin_port));
	}
	/* ...and as root they are the kernel's, not relative ones (a random
	 * ISN is 1 with probability 2^-32). */
	if (geteuid() == 0) {
		ck_assert(!relative);
		ck_assert_uint_ne(ctx.seq[0], 1);
	} else {
		ck_assert_uint_eq(ctx.seq[0], 1);
	}

	/* The client's TX frames went to the listener too, in order. */
	int fd = -1;
	pid_t pid;
	uid_t uid;
	for (int i = 0; i < 100 && fd < 0; i++) {
		fd = txsock_accept(txl, (gid_t)-1, &pid, &uid);
		if (fd < 0)
			usleep(1000);
	}
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(txsock_flush(tx, 1000), 0);
	txsock_close(tx);
	size_t have = 0;
	int recs = 0;
	uint8_t rb[1 << 16];
	for (;;) {
		ssize_t n = read(fd, rb + have, sizeof(rb) - have);
		if (n < 0 && errno == EAGAIN) {
			usleep(1000);
			continue;
		}
		ck_assert_int_ge(n, 0);
		if (!n)
			break;
		have += (size_t)n;
	}
	for (size_t off = 0; off < have;) {
		struct txsock_rec rec;
		struct frame_info fi;
		int k = txsock_decode(rb + off, have - off, &rec);

		ck_assert_int_gt(k, 0);
		ck_assert_int_eq(frame_parse(rec.frame, rec.caplen, rec.linktype, &fi), 0);
		ck_assert_uint_eq(fi.seq, ctx.seq[recs]);
		ck_assert_uint_eq(rec.ifindex, 1);
		ck_assert_uint_eq(rec.flags & TXSOCK_F_HW, 0);
		recs++;
		off += (size_t)k;
	}
	ck_assert_int_eq(recs, MSGS);
	close(fd);
	close(txl);
	close(lfd);
}
END_TEST

/* POLLERR on a stamped socket: a TX stamp on the error queue raises it and
 * is no error (issue 17 item 1: the venue took it for EPIPE); a reset by
 * the peer is one. */
START_TEST(pollerr_stamp_or_error)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int lfd, cfd, afd, one = 1, n;
	struct pollfd p;
	struct side c;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	side_open(&c, cfd, "pollerr", NULL);

	/* A send's stamp: POLLERR, yet SO_ERROR is 0. */
	ck_assert_int_eq(sockcap_send(c.sc, "stamp me", 8, 0), 8);
	p = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	for (n = 0; n < 100 && !(p.revents & POLLERR); n++) {
		ck_assert_int_ge(poll(&p, 1, 10), 0);
		if (!(p.revents & POLLERR))
			p.revents = 0;
	}
	ck_assert_msg(p.revents & POLLERR, "no POLLERR for a pending stamp");
	ck_assert_int_eq(sockcap_pollerr(c.sc, ts_now_mono()), 0);
	/* Reaped: no POLLERR left. */
	p = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	ck_assert_int_eq(poll(&p, 1, 0), 1);
	ck_assert_int_eq(p.revents & POLLERR, 0);

	/* The peer resets: a real error, reported once. */
	setsockopt(afd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(afd);
	p = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	ck_assert_int_eq(poll(&p, 1, 1000), 1);
	ck_assert(p.revents & POLLERR);
	ck_assert_int_eq(sockcap_pollerr(c.sc, ts_now_mono()), -ECONNRESET);
	side_close(&c);
	close(lfd);
}
END_TEST

struct records {
	uint64_t cookie[MSGS];
	int n;
};

static void on_record(void *arg, const struct ts_tx_record *r)
{
	struct records *rs = arg;

	ck_assert_int_lt(rs->n, MSGS);
	ck_assert_uint_ne(r->ns[TS_STAGE_SW_TX], 0);
	rs->cookie[rs->n++] = r->cookie;
}

/* tapless-pingpong's use: every TX record back to the caller under the
 * cookie sockcap_next_cookie() said; received frames written only by
 * sockcap_flush_rx(), from the caller's buffer, each claiming every byte
 * sent before it (ack_sent); and a sockcap with no file nor txsock still
 * counting its frames. */
START_TEST(records_later_ack_sent)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct records rs = { 0 };
	struct sockcap_config ccfg = { .on_record = on_record, .arg = &rs,
				       .ack_sent = true, .rx_later = true };
	struct sockcap_config scfg = { 0 };
	struct ts_config tcfg;
	struct sockcap_stats st;
	struct sockcap *ssc;
	struct ts_sock *sts;
	int lfd, cfd, afd, one = 1, rx = 0, flushed = 0;
	char sbuf[64], cbuf[MSGS * 6];
	struct side c;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(ts_listen_enable(lfd), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	side_open_cfg(&c, cfd, "later", NULL, &ccfg);
	ts_config_init(&tcfg);
	tcfg.mode = TS_MODE_SW;
	ck_assert_int_eq(ts_sock_create(&sts, afd, &tcfg), 0);
	ck_assert_int_eq(sockcap_create(&ssc, sts, afd, &scfg), 0);
	usleep(20000);	/* the RX software stamp switch (see ts.h) */

	for (int i = 0; i < MSGS; i++) {
		char m[7];
		int got = 0;

		snprintf(m, sizeof(m), "m%03d ", i);
		ck_assert_uint_eq(sockcap_next_cookie(c.sc), (uint64_t)i);
		ck_assert_int_eq(sockcap_send(c.sc, m, 6, 0), 6);
		while (got < 6) {
			ssize_t n = sockcap_recv(ssc, sbuf, 6 - got, 0, NULL, NULL);
			ck_assert_int_gt(n, 0);
			got += (int)n;
		}
		ck_assert_int_eq(sockcap_send(ssc, m, 6, 0), 6);
		for (got = 0; got < 6; rx++) {
			/* Each receive into its own bytes: they stay put
			 * until the flush. */
			ssize_t n = sockcap_recv(c.sc, cbuf + 6 * i + got,
						 (size_t)(6 - got), 0, NULL, NULL);
			ck_assert_int_gt(n, 0);
			got += (int)n;
		}
		/* Written only by the flush (or a receive finding
		 * SOCKCAP_RX_LATER waiting). */
		sockcap_stats(c.sc, &st);
		ck_assert_uint_eq(st.rx_unstamped, 0);
		if (rx - flushed <= SOCKCAP_RX_LATER)
			ck_assert_uint_eq(st.rx_frames, (uint64_t)flushed);
		if (i % 3 == 0) {
			sockcap_flush_rx(c.sc);
			flushed = rx;
			sockcap_stats(c.sc, &st);
			ck_assert_uint_eq(st.rx_frames, (uint64_t)rx);
		}
		ts_tx_wait(c.ts, 0);
		sockcap_poll(c.sc, ts_now_mono());
		sockcap_poll(ssc, ts_now_mono());
	}
	sockcap_flush_rx(c.sc);
	ts_tx_wait(c.ts, 50);
	ts_tx_wait(sts, 50);
	ck_assert_int_ge(sockcap_poll(ssc, -1), 0);
	sockcap_stats(ssc, &st);
	ck_assert_uint_eq(st.tx_frames, MSGS);
	ck_assert_uint_eq(st.rx_frames + st.rx_unstamped, MSGS);
	sockcap_destroy(ssc);
	ts_sock_destroy(sts);
	close(afd);
	side_close(&c);
	ck_assert_int_eq(rs.n, MSGS);
	for (int i = 0; i < MSGS; i++)
		ck_assert_uint_eq(rs.cookie[i], (uint64_t)i);

	/* The file: each receive's bytes as they were received, its ACK the
	 * end of everything sent before it: the ping of its message. */
	char err[CAP_ERRBUF], want[MSGS * 6 + 1];
	struct cap_reader *r;
	struct cap_packet p;
	uint32_t tx0 = 0, rx0 = 0, off[MSGS * 6], ack[MSGS * 6];
	int ntx = 0, nrx = 0, rc;

	for (int i = 0; i < MSGS; i++)
		snprintf(want + 6 * i, 7, "m%03d ", i);
	ck_assert_msg(cap_open(&r, c.path, err) == 0, "%s", err);
	while ((rc = cap_next(r, &p)) == 1) {
		struct frame_info fi;

		ck_assert_int_eq(frame_parse(p.data, p.caplen, 1, &fi), 0);
		if (p.dir == PCAPNG_DIR_OUT) {
			if (!ntx++)
				tx0 = fi.seq;
			continue;
		}
		ck_assert_int_lt(nrx, MSGS * 6);
		if (!nrx)
			rx0 = fi.seq;
		off[nrx] = fi.seq - rx0;
		ack[nrx] = fi.ack;
		ck_assert_uint_le(off[nrx] + fi.payload_len, sizeof(want) - 1);
		ck_assert(!memcmp(fi.payload, want + off[nrx], fi.payload_len));
		nrx++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(ntx, MSGS);
	ck_assert_int_eq(nrx, rx);
	for (int i = 0; i < nrx; i++)
		ck_assert_uint_eq(ack[i], tx0 + 6u * (off[i] / 6 + 1));
	cap_close(r);
	close(lfd);
}
END_TEST

static Suite *sockcap_suite(void)
{
	Suite *s = suite_create("sockcap");
	TCase *tc = tcase_create("sockcap");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, tcp_exchange);
	tcase_add_test(tc, pollerr_stamp_or_error);
	tcase_add_test(tc, records_later_ack_sent);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sockcap_suite)
