/* blast — send small UDP datagrams at a fixed rate as cheaply as possible
 * (sendmmsg in batches, paced per batch), for the capture benchmark.
 *
 *   blast ADDR PORT RATE SECONDS [SIZE]
 *
 * Prints how many datagrams were sent and the rate achieved. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BATCH 64

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	char buf[1500] = { 0 };
	double rate, secs, start, next;
	unsigned long long sent = 0, want;
	int fd, size = 18;	/* 18 + 42 bytes of headers: a 60-byte frame */

	if (argc < 5) {
		fprintf(stderr, "usage: blast ADDR PORT RATE SECONDS [SIZE]\n");
		return 1;
	}
	if (argc > 5)
		size = atoi(argv[5]);
	if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1 || size < 1 || size > 1472) {
		fprintf(stderr, "blast: bad address or size\n");
		return 1;
	}
	to.sin_port = htons((unsigned short)atoi(argv[2]));
	rate = atof(argv[3]);
	secs = atof(argv[4]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		perror("blast");
		return 2;
	}
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = (size_t)size;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	want = (unsigned long long)(rate * secs);
	start = next = now();
	while (sent < want) {
		int n = sendmmsg(fd, msg, BATCH, 0);

		if (n > 0)
			sent += (unsigned long long)n;
		next += BATCH / rate;
		while (now() < next)
			;	/* spin: sleeping would make bursts */
	}
	printf("blast: sent %llu datagrams in %.3f s: %.0f/s\n", sent,
	       now() - start, (double)sent / (now() - start));
	return 0;
}
