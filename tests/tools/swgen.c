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
 *
 *   swgen --from CAPTURE DIR OFFSET_NS RESIDENCE_NS STEP_NS MD_ADDR
 *
 * writes the truth of the frames a venue sent, as its capture holds them:
 * every TCP frame with payload from MD_ADDR (any port) that CAPTURE has
 * outbound (or without direction), stamped T there, enters port1 at
 * T + OFFSET_NS and leaves by port2 RESIDENCE_NS + (T mod 10^6 mod 7) *
 * STEP_NS later: a residence each frame's own stamp gives, so that a test
 * can work out from a samples line (whose time_ns is that stamp) which
 * residence its frame had, and so the error tapless report must find.
 * Prints the number of frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "files/capfile.h"
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

/* Two port files from evs; 0 or 1. */
static int write_ports(const char *dir, const uint8_t *const *data)
{
	struct pcapng_section sec = { .hostname = "swemu", .userappl = "swgen" };
	struct pcapng_writer *w[2];
	char path[2][4096];
	uint32_t ifid[2];
	int err = 0;

	qsort(evs, nev, sizeof(*evs), ev_cmp);
	for (int p = 0; p < 2; p++) {
		struct pcapng_iface ifc = { "swp", 1, 0, { true, 0, 0, "" }, false };

		snprintf(path[p], sizeof(path[p]), "%s/port%d.pcapng", dir, p + 1);
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

		err = pcapng_write_packet_id(w[e->port], ifid[e->port], e->ts,
					     data ? data[e->id - 1] : e->frame,
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
	return 0;
}

/* --from: the truth of a venue's capture (see the top). */
static int from_capture(int argc, char **argv)
{
	struct cap_reader *r;
	struct cap_packet pkt;
	char err[CAP_ERRBUF];
	uint8_t **data = NULL, src[4];
	size_t cap = 0, n = 0;
	long off, res, step;
	int rc;

	if (argc != 8) {
		fprintf(stderr, "usage: swgen --from CAPTURE DIR OFFSET_NS "
			"RESIDENCE_NS STEP_NS MD_ADDR\n");
		return 1;
	}
	off = atol(argv[4]);
	res = atol(argv[5]);
	step = atol(argv[6]);
	if (inet_pton(AF_INET, argv[7], src) != 1) {
		fprintf(stderr, "swgen: %s: not an IPv4 address\n", argv[7]);
		return 1;
	}
	if (cap_open(&r, argv[2], err)) {
		fprintf(stderr, "swgen: %s\n", err);
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) == 1) {
		const struct cap_iface *ifc = cap_iface(r, pkt.iface);
		struct frame_info fi;
		struct ev e = { .has_id = true };
		int64_t t = pkt.ts_ns;

		if (pkt.dir == PCAPNG_DIR_IN || !ifc ||
		    frame_parse(pkt.data, pkt.caplen, ifc->linktype, &fi) ||
		    fi.flow.proto != IPPROTO_TCP || !fi.payload_wire ||
		    fi.flow.family != AF_INET || memcmp(fi.flow.src, src, 4))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			data = realloc(data, cap * sizeof(*data));
			evs = realloc(evs, 2 * cap * sizeof(*evs));
			if (!data || !evs)
				return 1;
		}
		data[n] = malloc(pkt.caplen);
		if (!data[n])
			return 1;
		memcpy(data[n], pkt.data, pkt.caplen);
		e.id = ++n;
		e.len = pkt.caplen;
		e.ts = t + off;
		e.port = 0;
		e.dir = PCAPNG_DIR_IN;
		evs[nev++] = e;
		e.ts = t + off + res + (t % 1000000 % 7) * step;
		e.port = 1;
		e.dir = PCAPNG_DIR_OUT;
		evs[nev++] = e;
	}
	if (rc < 0) {
		fprintf(stderr, "swgen: %s\n", cap_error(r));
		return 1;
	}
	cap_close(r);
	if (write_ports(argv[3], (const uint8_t *const *)data))
		return 1;
	printf("%zu\n", n);
	for (size_t i = 0; i < n; i++)
		free(data[i]);
	free(data);
	free(evs);
	return 0;
}

int main(int argc, char **argv)
{
	struct frame_flow md = { .family = AF_INET, .proto = IPPROTO_TCP };
	struct frame_flow order, udp;
	char addr[64];
	long count, res, jit, payload = 100;
	char *colon;
	uint64_t id = 1;

	if (argc > 1 && !strcmp(argv[1], "--from"))
		return from_capture(argc, argv);
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
	if (write_ports(argv[1], NULL))
		return 1;
	printf("%d\n", (int)frame_header_len(&md) + (int)payload);
	free(evs);
	return 0;
}
