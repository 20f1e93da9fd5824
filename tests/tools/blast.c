/* blast — send small UDP datagrams at a fixed rate as cheaply as possible
 * (sendmmsg in batches, paced per batch), for the capture benchmark.
 *
 *   blast [-i IFACE] [--paced] ADDR PORT RATE SECONDS [SIZE]
 *
 * With --paced, one datagram per period instead: each is sent alone (one
 * sendto) at its own time, start + k / RATE, spinning for the last
 * PACED_SPIN_NS before it (sleeping before that, so a slow rate leaves
 * the CPU to others), so what
 * receives them sees single frames spaced evenly, never a burst of 64 (the
 * switch emulator's benchmark measures the switch, not a queue the sender
 * made). A send that starts more than a period after its time is counted
 * late and the schedule moves on from it, with no burst to catch up.
 *
 * With -i, whole frames go out of IFACE on a packet socket that bypasses the
 * qdisc, addressed to a made-up Ethernet address: the receiving host's stack
 * drops them at once (not for this host) while a promiscuous capture sees
 * them, so the sender's core spends its time sending, not in the UDP stack
 * of both ends. Prints how many datagrams were sent and the rate achieved.
 *
 * A failed send (a full device queue, a port unreachable) is retried after
 * a millisecond; when no datagram has gone out for FAIL_SECONDS (the
 * interface was deleted or went down), blast gives up with status 3 and
 * the error instead of retrying forever. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "files/frame.h"

#define BATCH 64
#define FAIL_SECONDS 2.0
#define PACED_SPIN_NS 30000LL

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* One datagram per period, each at its time; see the top. */
static int blast_paced(int fd, const struct msghdr *m, double rate,
		       unsigned long long want)
{
	int64_t period = (int64_t)(1e9 / rate), start, next, t, last_ok;
	unsigned long long sent = 0, late = 0, failed = 0;

	if (period < 1)
		period = 1;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	start = next = last_ok = now_ns();
	while (sent < want) {
		if (next - now_ns() > 2 * PACED_SPIN_NS) {
			int64_t w = next - PACED_SPIN_NS;
			struct timespec ts = { w / 1000000000LL, w % 1000000000LL };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
		/* Spin, a sleep would wake late; yielding, so what else must
		 * run here (the softirq thread that may take the frames just
		 * sent on to the switch) is not held off for a tick. */
		while ((t = now_ns()) < next)
			sched_yield();
		if (t - next > period) {
			late++;
			next = t;	/* no burst to catch up */
		}
		if (sendmsg(fd, m, 0) >= 0) {
			sent++;
			last_ok = t;
		} else {
			int e = errno;

			failed++;
			if (t - last_ok > (int64_t)(FAIL_SECONDS * 1e9)) {
				fprintf(stderr, "blast: sendmsg: %s: %llu failed "
					"sends, none succeeded for %.1f s; giving up "
					"after %llu datagrams\n", strerror(e), failed,
					(double)(t - last_ok) / 1e9, sent);
				return 3;
			}
		}
		next += period;
	}
	t = now_ns();
	printf("blast: sent %llu datagrams in %.3f s: %.0f/s, paced, %llu late, "
	       "%llu failed\n", sent, (double)(t - start) / 1e9,
	       (double)sent * 1e9 / (double)(t - start), late, failed);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	char buf[1500] = { 0 };
	double rate, secs, start, next;
	unsigned long long sent = 0, want, failed = 0;
	double last_ok;
	int fd, size = 18;	/* 18 + 42 bytes of headers: a 60-byte frame */
	const char *ifname = NULL;
	uint8_t frame[1600];
	int flen = 0;

	bool paced = false;

	for (;;) {
		if (argc > 2 && !strcmp(argv[1], "-i")) {
			ifname = argv[2];
			argc -= 2;
			argv += 2;
		} else if (argc > 1 && !strcmp(argv[1], "--paced")) {
			paced = true;
			argc--;
			argv++;
		} else {
			break;
		}
	}
	if (argc < 5) {
		fprintf(stderr, "usage: blast [-i IFACE] [--paced] ADDR PORT RATE SECONDS [SIZE]\n");
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
	if (ifname) {
		struct frame_flow f = { .family = AF_INET, .proto = IPPROTO_UDP,
					.sport = 40000, .dport = ntohs(to.sin_port) };
		struct sockaddr_ll ll = { .sll_family = AF_PACKET,
					  .sll_protocol = htons(ETH_P_IP) };
		int one = 1;

		memcpy(f.dst, &to.sin_addr, 4);
		memcpy(f.src, &to.sin_addr, 4);
		f.src[3] ^= 0x80;
		flen = frame_build(frame, sizeof(frame), &f, 0, 0, 0, buf,
				   (size_t)size);
		ll.sll_ifindex = (int)if_nametoindex(ifname);
		fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (fd < 0 || !ll.sll_ifindex || flen < 0 ||
		    bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
			perror("blast");
			return 2;
		}
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	} else {
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to))) {
			perror("blast");
			return 2;
		}
	}
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = ifname ? (void *)frame : buf;
		iov[i].iov_len = ifname ? (size_t)flen : (size_t)size;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	want = (unsigned long long)(rate * secs);
	if (rate <= 0 || secs < 0) {
		fprintf(stderr, "blast: bad rate or duration\n");
		return 1;
	}
	if (paced)
		return blast_paced(fd, &msg[0].msg_hdr, rate, want);
	start = next = last_ok = now();
	while (sent < want) {
		int n = sendmmsg(fd, msg, BATCH, 0);

		if (n > 0) {
			sent += (unsigned long long)n;
			last_ok = now();
		} else {
			int e = errno;

			failed++;
			if (now() - last_ok > FAIL_SECONDS) {
				fprintf(stderr, "blast: sendmmsg: %s: %llu failed "
					"sends, none succeeded for %.1f s; giving up "
					"after %llu datagrams\n", strerror(e), failed,
					now() - last_ok, sent);
				return 3;
			}
			usleep(1000);	/* e.g. a full device queue: let it drain */
			next = now();	/* no burst to catch up */
			continue;
		}
		next += BATCH / rate;
		while (now() < next)
			;	/* spin: sleeping would make bursts */
	}
	printf("blast: sent %llu datagrams in %.3f s: %.0f/s\n", sent,
	       now() - start, (double)sent / (now() - start));
	return 0;
}
