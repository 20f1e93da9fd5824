/* test_txsock.c — the TX stamp hand-over: records survive encoding, partial
 * and hostile input is told apart, and a client reaches a listening daemon
 * through a real socket, in order, without blocking when nobody listens. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live/txsock.h"
#include "unit.h"

static char dir[64];

static void setup(void) { unit_tmpdir(dir, "txsock"); }
static void teardown(void) { unit_rmdir(dir); }

static struct txsock_rec rec(const uint8_t *frame, uint32_t len, int64_t ts)
{
	struct txsock_rec r = { .ifindex = 7, .ts_ns = ts, .origlen = len + 4,
				.flags = TXSOCK_F_HW | TXSOCK_F_TAI,
				.linktype = 1, .phc = 2, .frame = frame,
				.caplen = len };
	return r;
}

START_TEST(round_trip)
{
	uint8_t frame[100], buf[200];
	struct txsock_rec in, out;
	int n;

	for (unsigned i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 7);
	in = rec(frame, sizeof(frame), 1700000000123456789LL);
	in.dropped = 123456;
	n = txsock_encode(buf, sizeof(buf), &in);
	ck_assert_int_eq(n, TXSOCK_HDR_LEN + 100);
	/* Every proper prefix is "read more", never a record or an error. */
	for (int len = 0; len < n; len++)
		ck_assert_int_eq(txsock_decode(buf, (size_t)len, &out), 0);
	ck_assert_int_eq(txsock_decode(buf, sizeof(buf), &out), n);
	ck_assert_uint_eq(out.ifindex, 7);
	ck_assert(out.ts_ns == in.ts_ns);
	ck_assert_uint_eq(out.origlen, 104);
	ck_assert_uint_eq(out.flags, TXSOCK_F_HW | TXSOCK_F_TAI);
	ck_assert_uint_eq(out.linktype, 1);
	ck_assert_int_eq(out.phc, 2);
	ck_assert_uint_eq(out.dropped, 123456);
	ck_assert_uint_eq(out.caplen, 100);
	ck_assert_mem_eq(out.frame, frame, 100);
	/* Little-endian on the wire whatever the host: magic reads "TLTX". */
	ck_assert_mem_eq(buf, "TLTX", 4);
	ck_assert_int_eq(txsock_encode(buf, 139, &in), -EMSGSIZE);
}
END_TEST

START_TEST(bad_records)
{
	uint8_t frame[8] = { 0 }, buf[64], bad[64];
	struct txsock_rec in = rec(frame, 8, 1), out;
	int n = txsock_encode(buf, sizeof(buf), &in);

	memcpy(bad, buf, (size_t)n);
	bad[0] = 'X';
	ck_assert_int_eq(txsock_decode(bad, 4, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[4] = 3;		/* 2 is a key record: see keyed_bad */
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EPROTONOSUPPORT);
	memcpy(bad, buf, (size_t)n);
	bad[6] = 39;		/* hdr_len below the header we know */
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[8] = 10;		/* rec_len below hdr_len */
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[10] = 0x10;		/* rec_len of 1 MiB: refused before reading it */
	ck_assert_int_eq(txsock_decode(bad, 12, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[24] = 1;		/* origlen below caplen */
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	/* A longer header than ours: the frame starts where hdr_len says. */
	uint8_t lng[80] = { 0 };
	memcpy(lng, buf, TXSOCK_HDR_LEN);
	lng[6] = 48;
	lng[8] = 56;
	memset(lng + 48, 0xab, 8);
	ck_assert_int_eq(txsock_decode(lng, sizeof(lng), &out), 56);
	ck_assert_uint_eq(out.caplen, 8);
	ck_assert_uint_eq(out.frame[0], 0xab);
}
END_TEST

START_TEST(client_server)
{
	char path[128];
	uint8_t frame[60], buf[1 << 16];
	struct txsock_client *c;
	struct txsock_client_stats st;
	struct txsock_rec r, out;
	struct stat sb;
	pid_t pid;
	uid_t uid;
	size_t have = 0;
	int lfd, fd, got = 0;

	snprintf(path, sizeof(path), "%s/capd.sock", dir);
	/* Nobody listening yet: sends are dropped and counted, not blocked. */
	ck_assert_int_eq(txsock_connect(&c, path), 0);
	r = rec(frame, sizeof(frame), 5);
	ck_assert_int_eq(txsock_send(c, &r), -ENOBUFS);
	txsock_client_stats(c, &st);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.connects, 0);
	txsock_close(c);

	lfd = txsock_listen(path, (gid_t)-1);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0660);

	ck_assert_int_eq(txsock_connect(&c, path), 0);
	fd = txsock_accept(lfd, (gid_t)-1, &pid, &uid);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pid, getpid());
	ck_assert_uint_eq(uid, geteuid());
	/* Records the caller dropped before the client: every record tells
	 * the daemon the sender's count. */
	txsock_client_add_dropped(c, 5);
	for (int i = 0; i < 100; i++) {
		memset(frame, i, sizeof(frame));
		r = rec(frame, (uint32_t)(20 + i % 40), 1000 + i);
		ck_assert_int_eq(txsock_send(c, &r), 0);
	}
	ck_assert_int_eq(txsock_flush(c, 1000), 0);
	txsock_client_stats(c, &st);
	ck_assert_uint_eq(st.sent, 100);
	ck_assert_uint_eq(st.dropped, 5);
	txsock_close(c);

	/* Read until EOF, decoding across read boundaries. */
	for (;;) {
		ssize_t n = read(fd, buf + have, 97);	/* odd size on purpose */

		if (n < 0 && errno == EAGAIN) {
			usleep(1000);
			continue;
		}
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		have += (size_t)n;
		int k;
		size_t off = 0;
		while ((k = txsock_decode(buf + off, have - off, &out)) > 0) {
			ck_assert(out.ts_ns == 1000 + got);
			ck_assert_uint_eq(out.caplen, 20 + got % 40);
			ck_assert_uint_eq(out.frame[0], got);
			ck_assert_uint_eq(out.dropped, 5);
			got++;
			off += (size_t)k;
		}
		ck_assert_int_eq(k, 0);
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	ck_assert_int_eq(got, 100);
	ck_assert_uint_eq(have, 0);
	close(fd);
	/* A second daemon on the same path is refused while the first lives
	 * (its probe connection is what the first one accepts next). */
	ck_assert_int_eq(txsock_listen(path, (gid_t)-1), -EADDRINUSE);
	close(lfd);

	/* The daemon died without unlinking: a restart replaces the stale
	 * socket; a regular file in the way is never removed. */
	lfd = txsock_listen(path, (gid_t)-1);
	ck_assert_int_ge(lfd, 0);
	close(lfd);
	unlink(path);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(txsock_listen(path, (gid_t)-1), -EEXIST);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

START_TEST(peer_check)
{
	char path[128];
	struct txsock_client *c;
	pid_t pid;
	uid_t uid;
	int lfd, fd;

	/* Only runs as root: a child that drops to nobody must be refused,
	 * and admitted once nobody's group is the socket's group. */
	if (geteuid() != 0)
		return;
	snprintf(path, sizeof(path), "%s/capd.sock", dir);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	lfd = txsock_listen(path, (gid_t)-1);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(chmod(path, 0666), 0);	/* someone loosened it */
	for (int round = 0; round < 2; round++) {
		gid_t gid = round ? 65534 : (gid_t)-1;
		pid_t child = fork();

		if (child == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(3);
			if (txsock_connect(&c, path))
				_exit(4);
			txsock_close(c);
			_exit(0);
		}
		fd = -EAGAIN;
		for (int i = 0; i < 1000 && fd == -EAGAIN; i++) {
			fd = txsock_accept(lfd, gid, &pid, &uid);
			if (fd == -EAGAIN)
				usleep(1000);
		}
		int status;
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		ck_assert_int_eq(WEXITSTATUS(status), 0);
		ck_assert_uint_eq(uid, 65534);
		if (round == 0) {
			ck_assert_int_eq(fd, -EACCES);
		} else {
			ck_assert_int_ge(fd, 0);
			close(fd);
		}
	}
	close(lfd);
}
END_TEST

static struct txsock_rec keyed(void)
{
	struct txsock_rec r = { .ifindex = 3, .ts_ns = 42, .flags = TXSOCK_F_KEYED,
				.phc = -1 };

	r.key.flow.family = AF_INET6;
	r.key.flow.proto = IPPROTO_UDP;
	r.key.flow.sport = 9001;
	r.key.flow.dport = 65535;
	for (int i = 0; i < 16; i++) {
		r.key.flow.src[i] = (uint8_t)i;
		r.key.flow.dst[i] = (uint8_t)(255 - i);
	}
	r.key.stage = TXSOCK_STAGE_ACK;
	r.key.len = 1400;
	r.key.hash = txsock_hash(TXSOCK_HASH_INIT, "8=FIX.4.4", 9);
	return r;
}

START_TEST(keyed_round_trip)
{
	struct txsock_rec in = keyed(), out;
	uint8_t buf[200];
	int n = txsock_encode(buf, sizeof(buf), &in);

	ck_assert_int_eq(n, TXSOCK_HDR_LEN + TXSOCK_KEY_LEN);
	ck_assert_uint_eq(buf[4], TXSOCK_VERSION_KEYED);
	for (int len = 0; len < n; len++)
		ck_assert_int_eq(txsock_decode(buf, (size_t)len, &out), 0);
	ck_assert_int_eq(txsock_decode(buf, sizeof(buf), &out), n);
	ck_assert_uint_eq(out.flags, TXSOCK_F_KEYED);
	ck_assert_ptr_null(out.frame);
	ck_assert_uint_eq(out.caplen, 0);
	ck_assert_int_eq(out.key.flow.family, AF_INET6);
	ck_assert_uint_eq(out.key.flow.proto, IPPROTO_UDP);
	ck_assert_uint_eq(out.key.flow.sport, 9001);
	ck_assert_uint_eq(out.key.flow.dport, 65535);
	ck_assert_mem_eq(out.key.flow.src, in.key.flow.src, 16);
	ck_assert_mem_eq(out.key.flow.dst, in.key.flow.dst, 16);
	ck_assert_uint_eq(out.key.stage, TXSOCK_STAGE_ACK);
	ck_assert_uint_eq(out.key.len, 1400);
	ck_assert(out.key.hash == in.key.hash);
	/* The hash is FNV-1a and must never change: it is on the wire. */
	ck_assert(txsock_hash(TXSOCK_HASH_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);

	/* IPv4 keeps its 4 address bytes, the rest zero on the wire. */
	in.key.flow.family = AF_INET;
	in.key.flow.proto = IPPROTO_TCP;
	in.key.seq = 0xfffffffeu;
	ck_assert_int_eq(txsock_encode(buf, sizeof(buf), &in), n);
	ck_assert_uint_eq(buf[TXSOCK_HDR_LEN + 12], 0);
	ck_assert_int_eq(txsock_decode(buf, sizeof(buf), &out), n);
	ck_assert_mem_eq(out.key.flow.src, in.key.flow.src, 4);
	ck_assert_uint_eq(out.key.seq, 0xfffffffeu);
}
END_TEST

START_TEST(keyed_bad)
{
	struct txsock_rec in = keyed(), out;
	uint8_t buf[200], bad[200];
	int n;

	in.key.stage = 9;
	ck_assert_int_eq(txsock_encode(buf, sizeof(buf), &in), -EINVAL);
	in = keyed();
	in.key.flow.proto = 1;
	ck_assert_int_eq(txsock_encode(buf, sizeof(buf), &in), -EINVAL);
	in = keyed();
	n = txsock_encode(buf, sizeof(buf), &in);
	ck_assert_int_eq(txsock_encode(buf, (size_t)n - 1, &in), -EMSGSIZE);
	/* A key block of another length, a family byte of neither 4 nor 6,
	 * a version 2 record without the flag, a version 1 record with it. */
	memcpy(bad, buf, (size_t)n);
	bad[8] = (uint8_t)(n + 1);
	ck_assert_int_eq(txsock_decode(bad, (size_t)n + 1, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[TXSOCK_HDR_LEN] = 5;
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[28] = 0;
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[4] = TXSOCK_VERSION;
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EBADMSG);
	memcpy(bad, buf, (size_t)n);
	bad[4] = 3;
	ck_assert_int_eq(txsock_decode(bad, (size_t)n, &out), -EPROTONOSUPPORT);
}
END_TEST

static Suite *txsock_suite(void)
{
	Suite *s = suite_create("txsock");
	TCase *tc = tcase_create("txsock");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, bad_records);
	tcase_add_test(tc, keyed_round_trip);
	tcase_add_test(tc, keyed_bad);
	tcase_add_test(tc, client_server);
	tcase_add_test(tc, peer_check);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(txsock_suite)
