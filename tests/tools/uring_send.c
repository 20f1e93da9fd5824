/* uring_send — TCP sends through io_uring from a statically linked binary,
 * for test_stamp_cgroup.sh: both are out of reach of an LD_PRELOAD shim
 * (tapless-stamp), which sees neither send(2) calls nor a dynamic loader
 * here; capd --stamp-cgroup stamps them all the same.
 *
 *   uring_send ADDR PORT COUNT [SIZE [RATE]]
 *
 * Connects to the IPv4 ADDR:PORT and sends COUNT messages of SIZE bytes
 * (default 200) at RATE messages/s (default 1000; 0: as fast as they
 * go), each an IORING_OP_SEND whose completion is waited for before the
 * next. Prints "sent N" at the end. Not installed; only liburing and libc.
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

static long uring_arg(const char *s, const char *what, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "uring_send: %s '%s': want %ld to %ld\n", what,
			s, lo, hi);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct io_uring ring;
	struct timespec t0, next;
	long count, size = 200, rate = 1000, sent = 0;
	char *buf;
	int fd, one = 1, rc;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: uring_send ADDR PORT COUNT [SIZE [RATE]]\n");
		return 1;
	}
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "uring_send: '%s' is not an IPv4 address\n",
			argv[1]);
		return 1;
	}
	sin.sin_port = htons((uint16_t)uring_arg(argv[2], "port", 1, 65535));
	count = uring_arg(argv[3], "count", 1, 100000000);
	if (argc > 4)
		size = uring_arg(argv[4], "size", 1, 1 << 20);
	if (argc > 5)
		rate = uring_arg(argv[5], "rate", 0, 10000000);
	buf = malloc((size_t)size);
	if (!buf) {
		fprintf(stderr, "uring_send: out of memory\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "uring_send: %s:%s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 2;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rc = io_uring_queue_init(8, &ring, 0);
	if (rc) {
		fprintf(stderr, "uring_send: io_uring: %s\n", strerror(-rc));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	for (long i = 0; i < count; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		memset(buf, 'a' + (int)(i % 26), (size_t)size);
		snprintf(buf, (size_t)size, "%ld|", i);
		io_uring_prep_send(sqe, fd, buf, (size_t)size, 0);
		io_uring_submit(&ring);
		rc = io_uring_wait_cqe(&ring, &cqe);
		if (rc) {
			fprintf(stderr, "uring_send: completion: %s\n",
				strerror(-rc));
			return 2;
		}
		rc = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (rc != size) {
			fprintf(stderr, "uring_send: send %ld: %s\n", i,
				rc < 0 ? strerror(-rc) : "short send");
			return 2;
		}
		sent++;
		if (rate) {
			long ns = next.tv_nsec + 1000000000L / rate;

			next.tv_sec += ns / 1000000000L;
			next.tv_nsec = ns % 1000000000L;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					NULL);
		}
	}
	io_uring_queue_exit(&ring);
	shutdown(fd, SHUT_WR);
	close(fd);
	printf("sent %ld\n", sent);
	free(buf);
	return 0;
}
