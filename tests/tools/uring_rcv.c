/* uring_rcv — a TCP client that does all its I/O through io_uring,
 * linked to liburing's shared library, for test_shim_conform.sh: under
 * tapless-stamp its socket is stamped (connect() is a C library call)
 * but no send or receive passes a wrapper, so only the library's reaper
 * thread reads the stamps. The bytes it receives must be the same bare
 * and under the library.
 *
 *   uring_rcv PORT COUNT
 *
 * Connects to 127.0.0.1:PORT (shimcheck peer-bulk), sends COUNT 16-byte
 * messages, then "G", and reads what the peer sends back until it closes
 * (3 s at most). Prints "uring: read N bytes". Not installed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int op(struct io_uring *r, int send, int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { 0, 100000000 };
	int res;

	if (send)
		io_uring_prep_send(sqe, fd, buf, len, 0);
	else
		io_uring_prep_recv(sqe, fd, buf, len, 0);
	io_uring_submit(r);
	if (io_uring_wait_cqe_timeout(r, &cqe, send ? NULL : &ts) < 0)
		return -ETIME;	/* the recv stays queued: reaped next time */
	res = cqe->res;
	io_uring_cqe_seen(r, cqe);
	return res;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char buf[65536];
	struct io_uring r;
	struct timespec t0, t;
	int s, one = 1, count;
	long got = 0;

	if (argc < 3)
		return 2;
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	count = atoi(argv[2]);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		return 2;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (io_uring_queue_init(8, &r, 0) < 0) {
		perror("io_uring_queue_init");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		struct timespec nap = { 0, 100000 };

		if (op(&r, 1, s, "0123456789abcdef", 16) != 16) {
			fprintf(stderr, "send failed\n");
			return 2;
		}
		nanosleep(&nap, NULL);
	}
	usleep(300000);
	if (op(&r, 1, s, "G", 1) != 1)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = op(&r, 0, s, buf, sizeof(buf));

		if (n == 0)
			break;
		if (n > 0)
			got += n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 3)
			break;
	}
	printf("uring: read %ld bytes\n", got);
	return 0;
}
