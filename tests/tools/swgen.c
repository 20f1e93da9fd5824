/* swgen — a switch emulator's ground truth with known figures, for the
 * replay test of tapless report.
 *
 *   swgen DIR COUNT RESIDENCE_NS JITTER_NS MD_SOURCE [PAYLOAD]
 *
 * writes DIR/port1.pcapng (the venue's port) and DIR/port2.pcapng (the
 * algo's) as tapless-swemu does: every frame has an ingress block (direction
 * in, its RX stamp) in its ingress port's file and an egress block
 * (direction out, TX stamp) in the egress port's, both with one
 * epb_packetid. COUNT market data frames (TCP from MD_SOURCE, PAYLOAD bytes,
 * default 100) cross venue → algo with residence RESIDENCE_NS +
 * ((i % 5) - 2) * JITTER_NS: with COUNT a multiple of 5 the mean is exactly
 * RESIDENCE_NS. Beside each, frames the report must leave out, with other
 * residences: an order algo → venue, a pure ACK and a UDP datagram from
 * MD_SOURCE, and one frame without a packet id. Prints the frame length
 * of the market data frames (for serialisation) on stdout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "files/frame.h"
#include "files/pcapng.h"

#define BASE 1763900000000000000LL

struct ev {
	int64_t ts;
	int port;			/* 0, 1 */
	enum pcapng_dir dir;
	uint64_t id;
	bool has_id;
	uint8_t frame[256];
	uint32_t len;
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static struct ev *evs;
static size_t nev;

/* One frame crossing the switch from port `from` to the other. */
static void cross(const struct frame_flow *f, uint8_t flags, size_t payload,
		  int64_t t, int64_t res, int from, uint64_t id, bool has_id)
{
	uint8_t pl[160] = { 0 };
	struct ev e = { .id = id, .has_id = has_id };
	int len = frame_build(e.frame, sizeof(e.frame), f, 1000, 1, flags, pl, payload);

	if (len < 0) {
		fprintf(stderr, "swgen: frame_build: %s\n", strerror(-len));
		exit(1);
	}
	e.len = (uint32_t)len;
	e.ts = t;
	e.port = from;
	e.dir = PCAPNG_DIR_IN;
	evs[nev++] = e;
	e.ts = t + res;
	e.port = !from;
	e.dir = PCAPNG_DIR_OUT;
	evs[nev++] = e;
}

int main(int argc, char **argv)
{
	struct pcapng_section sec = { .hostname = "swemu", .userappl = "swgen" };
	struct pcapng_writer *w[2];
	struct frame_flow md = { .family = AF_INET, .proto = IPPROTO_TCP };
	struct frame_flow order, udp;
	char path[2][4096], addr[64];
	uint32_t ifid[2];
	long count, res, jit, payload = 100;
	char *colon;
	uint64_t id = 1;
	int err = 0;

	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: swgen DIR COUNT RESIDENCE_NS JITTER_NS "
			"MD_ADDR:PORT [PAYLOAD]\n");
		return 1;
	}
	count = atol(argv[2]);
	res = atol(argv[3]);
	jit = atol(argv[4]);
	if (argc == 7)
		payload = atol(argv[6]);
	snprintf(addr, sizeof(addr), "%s", argv[5]);
	colon = strrchr(addr, ':');
	if (count < 1 || payload < 1 || payload > 160 || !colon) {
		fprintf(stderr, "swgen: bad arguments\n");
		return 1;
	}
	*colon = 0;
	if (inet_pton(AF_INET, addr, md.src) != 1) {
		fprintf(stderr, "swgen: %s: not an IPv4 address\n", addr);
		return 1;
	}
	md.sport = (uint16_t)atoi(colon + 1);
	inet_pton(AF_INET, "198.18.1.2", md.dst);
	md.dport = 40000;
	order = md;
	frame_flow_reverse(&order);
	order.sport = 40001;		/* another session, algo → venue */
	udp = md;
	udp.proto = IPPROTO_UDP;

	evs = calloc((size_t)count * 10, sizeof(*evs));
	if (!evs)
		return 1;
	for (long i = 0; i < count; i++) {
		int64_t t = BASE + i * 100000;

		cross(&md, 0, (size_t)payload, t, res + ((i % 5) - 2) * jit, 0, id++, true);
		cross(&order, 0, 60, t + 20000, 10 * res, 1, id++, true);
		cross(&md, FRAME_TCP_ACK, 0, t + 40000, 5 * res, 0, id++, true);
		cross(&udp, 0, 40, t + 60000, 7 * res, 0, id++, true);
		cross(&md, 0, (size_t)payload, t + 80000, 3 * res, 0, 0, false);
	}
	qsort(evs, nev, sizeof(*evs), ev_cmp);
	for (int p = 0; p < 2; p++) {
		struct pcapng_iface ifc = { "swp", 1, 0, { true, 0, 0, "" }, false };

		snprintf(path[p], sizeof(path[p]), "%s/port%d.pcapng", argv[1], p + 1);
		err = pcapng_open(&w[p], path[p], &sec);
		if (!err)
			err = pcapng_add_iface(w[p], &ifc, &ifid[p]);
		if (err) {
			fprintf(stderr, "swgen: %s: %s\n", path[p], strerror(-err));
			return 1;
		}
	}
	for (size_t i = 0; i < nev && !err; i++) {
		struct ev *e = &evs[i];

		err = pcapng_write_packet_id(w[e->port], ifid[e->port], e->ts, e->frame,
					     e->len, e->len, e->dir,
					     e->has_id ? &e->id : NULL);
	}
	for (int p = 0; p < 2; p++) {
		int c = pcapng_close(w[p], err != 0);

		if (!err)
			err = c;
	}
	if (err) {
		fprintf(stderr, "swgen: %s\n", strerror(-err));
		return 1;
	}
	printf("%d\n", (int)frame_header_len(&md) + (int)payload);
	free(evs);
	return 0;
}
