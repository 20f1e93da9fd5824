/* exalinkwrite — turn a capture whose stamps are true wire times (tapless
 * sim's tap-HOST.pcapng) into what an ExaLINK Fusion's mirror port and a
 * capture server behind it would have recorded, for the replay tests:
 *
 *   exalinkwrite [--freq HZ] [--keyframe-freq HZ] [--keyframe-every-ms N]
 *                [--record-offset-ms N] [--counter-start N]
 *                [--mode fcs|append|fcs-compat|append-compat] IN OUT
 *
 * OUT is a classic pcap with nanosecond stamps, Ethernet. The device's
 * counter runs at --freq (default 350000000) from --counter-start at the
 * first keyframe (default: 0.5 s short of a 2^32 wrap, so that the test
 * crosses one); keyframes, at every multiple of --keyframe-every-ms
 * (default 1000) of UTC from the first frame on, carry freq
 * --keyframe-freq (default --freq; the device itself says 350000000).
 * Each frame's counter, big-endian, goes where its FCS is:
 *   fcs, fcs-compat     in place of the FCS;
 *   append, append-compat  before a recomputed FCS.
 * A frame whose last 4 bytes are not a correct FCS (tapless sim's frames
 * carry none, as most captures do) is taken to have had it stripped: the
 * counter is appended (and in the append modes a new FCS after it). The
 * compat modes write compat keyframes and the 31-bit counter. A frame
 * cut by the snap length keeps its captured bytes, 4 (or 8) more on the
 * wire: its counter is not in the file, as in a real capture.
 * Every record is stamped with its true time plus --record-offset-ms
 * (default 0): the capture server's clock.
 *
 * On stderr: "exalinkwrite: frames N before-keyframe M keyframes K
 * appended A replaced R cut C first-keyframe-ns T". Exit 0, or 1. */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "files/capfile.h"
#include "files/frame.h"

#define NS 1000000000LL
#define MAX_FRAME 65535

struct wopts {
	uint64_t freq, kf_freq, counter_start;
	int64_t every_ns, record_off_ns;
	bool append, compat, counter_set;
};

static uint32_t crc32_eth(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* The counter at t: counter_start at k0, running at freq. */
static uint64_t count_at(const struct wopts *o, int64_t k0, int64_t t)
{
	__int128 x = (__int128)(t - k0) * (__int128)o->freq, q = x / NS;

	if (x % NS < 0)
		q--;
	return o->counter_start + (uint64_t)(int64_t)q;
}

static uint32_t field_of(const struct wopts *o, uint64_t c)
{
	uint32_t t = (uint32_t)c & 0x7fffffffu;

	if (!o->compat)
		return (uint32_t)c;
	return (t & ~0x7fu) << 1 | (t & 0x7fu);
}

static void dump(pcap_dumper_t *d, const uint8_t *b, uint32_t caplen,
		 uint32_t len, int64_t ts)
{
	struct pcap_pkthdr h = { .caplen = caplen, .len = len };

	/* A nanosecond dumper takes ns in tv_usec. */
	h.ts.tv_sec = ts / NS;
	h.ts.tv_usec = ts % NS;
	pcap_dump((u_char *)d, &h, b);
}

/* A keyframe at utc with count c: 78 bytes (the device's length), or 100
 * for a compat one; the append modes add an FCS. */
static void keyframe(pcap_dumper_t *d, const struct wopts *o, int64_t utc,
		     uint64_t c)
{
	uint8_t b[128] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			   0x02, 0x00, 0x5f, 0x80, 0x19, 0xa1 };
	uint32_t n;

	if (o->compat) {
		static const uint8_t ip[20] = { 0x45, 0, 0, 82, 0, 0, 0, 0, 64, 253,
						0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
		uint32_t sum = 0;

		bytes_put_be16(b + 12, 0x0800);
		memcpy(b + 14, ip, 20);
		for (int i = 0; i < 20; i += 2)
			sum += bytes_get_be16(b + 14 + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		bytes_put_be16(b + 24, (uint16_t)~sum);
		bytes_put_be64(b + 34, c);		/* asic_time */
		bytes_put_be64(b + 42, (uint64_t)utc);
		bytes_put_be64(b + 58, 1);		/* skew 1/1 */
		bytes_put_be64(b + 66, 1);
		bytes_put_be64(b + 74, c);		/* timestamp */
		b[94] = 2;				/* fcs type, as seen */
		n = 100;
	} else {
		bytes_put_be16(b + 12, 0x88b5);
		bytes_put_le32(b + 14, 0x464b5845u);	/* "EXKF" */
		b[18] = 1;
		bytes_put_be64(b + 22, (uint64_t)utc);
		bytes_put_be64(b + 30, c);
		bytes_put_be64(b + 38, o->kf_freq);
		bytes_put_be64(b + 46, c);		/* last_sync */
		n = 78;
	}
	if (o->append) {
		bytes_put_le32(b + n, crc32_eth(b, n));
		n += 4;
	}
	dump(d, b, n, n, utc + o->record_off_ns);
}

static int parse_num(const char *s, const char *name, int64_t min, int64_t max,
		     int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "exalinkwrite: %s: '%s' is not a number in "
			"[%lld, %lld]\n", name, s, (long long)min, (long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: exalinkwrite [--freq HZ] [--keyframe-freq HZ] "
		"[--keyframe-every-ms N] [--record-offset-ms N] [--counter-start N] "
		"[--mode fcs|append|fcs-compat|append-compat] IN OUT\n");
	return 1;
}

static int options(int argc, char **argv, struct wopts *o, int *first)
{
	int64_t v;
	int i;

	*first = 0;
	*o = (struct wopts){ .freq = 350000000, .every_ns = NS };
	for (i = 1; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		const char *a = argv[i], *val = argv[i + 1];

		if (!strcmp(a, "--mode")) {
			o->append = !strncmp(val, "append", 6);
			o->compat = strstr(val, "-compat") != NULL;
			if (strcmp(val, "fcs") && strcmp(val, "append") &&
			    strcmp(val, "fcs-compat") && strcmp(val, "append-compat"))
				return usage();
			continue;
		}
		if (!strcmp(a, "--freq")) {
			if (parse_num(val, a, 100000000, 1000000000, &v))
				return 1;
			o->freq = (uint64_t)v;
		} else if (!strcmp(a, "--keyframe-freq")) {
			if (parse_num(val, a, 0, INT64_MAX, &v))
				return 1;
			o->kf_freq = (uint64_t)v;
		} else if (!strcmp(a, "--keyframe-every-ms")) {
			if (parse_num(val, a, 1, 10000, &v))
				return 1;
			o->every_ns = v * 1000000;
		} else if (!strcmp(a, "--record-offset-ms")) {
			if (parse_num(val, a, -86400000, 86400000, &v))
				return 1;
			o->record_off_ns = v * 1000000;
		} else if (!strcmp(a, "--counter-start")) {
			if (parse_num(val, a, 0, INT64_MAX, &v))
				return 1;
			o->counter_start = (uint64_t)v;
			o->counter_set = true;
		} else {
			return usage();
		}
	}
	if (argc - i != 2)
		return usage();
	if (!o->kf_freq)
		o->kf_freq = o->freq;
	if (!o->counter_set)
		o->counter_start = 0x17e00000000ull - o->freq / 2;
	*first = i;
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t b[MAX_FRAME + 8];
	uint64_t frames = 0, before = 0, keys = 0, appended = 0, replaced = 0,
		 cut = 0, skipped = 0;
	int64_t k0 = 0, next_kf = 0;
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	pcap_dumper_t *d;
	struct wopts o;
	pcap_t *p;
	int first, rc;

	if (options(argc, argv, &o, &first))
		return 1;
	if (cap_open(&r, argv[first], err) < 0) {
		fprintf(stderr, "exalinkwrite: %s\n", err);
		return 1;
	}
	p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, MAX_FRAME,
						 PCAP_TSTAMP_PRECISION_NANO);
	d = p ? pcap_dump_open(p, argv[first + 1]) : NULL;
	if (!d) {
		fprintf(stderr, "exalinkwrite: %s: %s\n", argv[first + 1],
			p ? pcap_geterr(p) : "pcap_open_dead failed");
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) > 0) {
		uint32_t n = pkt.caplen, len = pkt.origlen, extra;
		bool whole = pkt.caplen == pkt.origlen, fcs;
		uint64_t c;

		if (cap_iface(r, pkt.iface)->linktype != FRAME_LINK_ETHERNET ||
		    n > MAX_FRAME - 8) {
			skipped++;
			continue;
		}
		if (!frames++) {
			/* The first multiple of the interval after it. */
			k0 = (pkt.ts_ns / o.every_ns + 1) * o.every_ns;
			next_kf = k0;
		}
		while (next_kf <= pkt.ts_ns) {
			keyframe(d, &o, next_kf, count_at(&o, k0, next_kf));
			keys++;
			next_kf += o.every_ns;
		}
		if (!keys)
			before++;
		memcpy(b, pkt.data, n);
		fcs = whole && n >= 18 &&
		      crc32_eth(b, n - 4) == bytes_get_le32(b + n - 4);
		c = count_at(&o, k0, pkt.ts_ns);
		/* The counter's place: the FCS's, or where it was stripped. */
		if (fcs) {
			replaced++;
			n -= 4;
			len -= 4;
		} else {
			appended++;
		}
		extra = o.append ? 8 : 4;
		if (whole) {
			bytes_put_be32(b + n, field_of(&o, c));
			if (o.append)
				bytes_put_le32(b + n + 4, crc32_eth(b, n + 4));
			n += extra;
		} else {
			cut++;
		}
		len += extra;
		dump(d, b, n, len, pkt.ts_ns + o.record_off_ns);
	}
	if (rc < 0)
		fprintf(stderr, "exalinkwrite: %s\n", cap_error(r));
	pcap_dump_close(d);
	pcap_close(p);
	cap_close(r);
	fprintf(stderr, "exalinkwrite: frames %" PRIu64 " before-keyframe %" PRIu64
		" keyframes %" PRIu64 " appended %" PRIu64 " replaced %" PRIu64
		" cut %" PRIu64 " first-keyframe-ns %" PRId64 "\n", frames, before,
		keys, appended, replaced, cut, k0);
	if (skipped)
		fprintf(stderr, "exalinkwrite: %" PRIu64 " frames not Ethernet "
			"or too long, left out\n", skipped);
	return rc < 0 ? 1 : 0;
}
