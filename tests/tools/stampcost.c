/* stampcost — what reading a stamped message costs: a UDP socket sends
 * COUNT datagrams to a peer on another host (namespace) and, per
 * datagram, reads its transmit stamp off the error queue and the peer
 * reads the datagram with its receive stamp; the time of those two
 * recvmsg() calls alone is measured (CLOCK_MONOTONIC, which no preload
 * library changes) and printed: "errqueue_ns P50 MEAN rx_ns P50 MEAN
 * stamped N". Hardware stamps are asked for, software ones besides, so
 * the same program measures the bare kernel (software stamps only on
 * veth) and the same calls under libtapless-hwsim.so (bench/hwsim.sh).
 *
 *   stampcost SRC_NETNS SRC_ADDR SRC_IFACE DST_NETNS DST_ADDR DST_IFACE PORT COUNT
 * The sender's socket is made in network namespace SRC_NETNS (a path,
 * /run/netns/NAME), the receiver's in DST_NETNS, so the datagrams cross
 * the veth between them rather than the loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int sock(const char *netns, const char *addr, int port,
		const char *ifname)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	unsigned int f = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
		SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_TX_SOFTWARE |
		SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_OPT_ID;
	int nfd = open(netns, O_RDONLY | O_CLOEXEC), fd;

	if (nfd < 0 || setns(nfd, CLONE_NEWNET)) {
		perror(netns);
		exit(1);
	}
	close(nfd);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, addr, &sa.sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
				 (socklen_t)strlen(ifname)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("stampcost: socket");
		exit(1);
	}
	return fd;
}

/* One recvmsg, timed; whether it carried a hardware stamp. */
static int64_t timed_recv(int fd, int flags, int *hw)
{
	char buf[256], ctl[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct pollfd p = { fd, flags ? POLLERR : POLLIN, 0 };
	int64_t t0, t1;

	poll(&p, 1, 1000);
	t0 = mono();
	if (recvmsg(fd, &m, flags | MSG_DONTWAIT) < 0)
		return -1;
	t1 = mono();
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
			struct scm_timestamping *st = (void *)CMSG_DATA(c);

			*hw += st->ts[2].tv_sec || st->ts[2].tv_nsec;
		}
	return t1 - t0;
}

int main(int argc, char **argv)
{
	int port, n, tx, rx, hw = 0;
	struct sockaddr_in to = { .sin_family = AF_INET };
	int64_t *e, *r;
	double se = 0, sr = 0;

	if (argc != 9) {
		fprintf(stderr, "usage: stampcost SRC_NETNS SRC_ADDR SRC_IFACE "
			"DST_NETNS DST_ADDR DST_IFACE PORT COUNT\n");
		return 2;
	}
	port = atoi(argv[7]);
	n = atoi(argv[8]);
	tx = sock(argv[1], argv[2], port, argv[3]);
	rx = sock(argv[4], argv[5], port, argv[6]);
	to.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, argv[5], &to.sin_addr);
	e = calloc((size_t)n, sizeof(*e));
	r = calloc((size_t)n, sizeof(*r));
	for (int i = 0; i < n; i++) {
		if (sendto(tx, "stampcost", 9, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			perror("stampcost: sendto");
			return 1;
		}
		r[i] = timed_recv(rx, 0, &hw);
		e[i] = timed_recv(tx, MSG_ERRQUEUE, &hw);
		if (r[i] < 0 || e[i] < 0) {
			fprintf(stderr, "stampcost: message %d: %s\n", i, strerror(errno));
			return 1;
		}
		se += (double)e[i];
		sr += (double)r[i];
	}
	qsort(e, (size_t)n, sizeof(*e), cmp);
	qsort(r, (size_t)n, sizeof(*r), cmp);
	printf("errqueue_ns %lld %.0f rx_ns %lld %.0f hw_stamped %d\n",
	       (long long)e[n / 2], se / n, (long long)r[n / 2], sr / n, hw);
	free(e);
	free(r);
	return 0;
}
