/* test_erf.c — the Endace ERF reader (capfile_erf.c): files written here
 * byte by byte, so the test does not lean on the code it checks. Ethernet
 * records on several interfaces, extension headers, records skipped (PAD,
 * metadata), the 32.32 stamp rounded to the nearest ns, the pad a card
 * adds after a frame; what is not ERF; and damaged files, each cut at
 * every byte, ending with the file and the record's offset named. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/capfile.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "erf");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* ---- a tiny ERF writer ---- */

struct blob {
	unsigned char b[200000];
	size_t n;
};

struct rec {
	uint32_t sec, frac;
	uint8_t type, flags;
	unsigned ext;		/* extension headers */
	uint32_t frame;		/* frame bytes written (i + k pattern) */
	uint32_t pad;		/* bytes after the frame */
	uint16_t wlen;
	int rlen;		/* 0: the true length; else this */
	bool eth_pad;		/* the 2 bytes before an Ethernet frame */
};

static void put_be16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* Append a record; returns its offset. */
static size_t add(struct blob *x, const struct rec *r)
{
	size_t off = x->n;
	unsigned char *p = x->b + off;
	uint64_t ts = (uint64_t)r->sec << 32 | r->frac;
	uint32_t len = 16 + 8 * r->ext + (r->eth_pad ? 2 : 0) + r->frame + r->pad;

	ck_assert_uint_le(off + len, sizeof(x->b));
	memset(p, 0, len);
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(ts >> (8 * i));	/* little-endian */
	p[8] = (unsigned char)(r->type | (r->ext ? 0x80 : 0));
	p[9] = r->flags;
	put_be16(p + 10, r->rlen ? (uint32_t)r->rlen : len);
	put_be16(p + 12, 0);
	put_be16(p + 14, r->wlen);
	for (unsigned e = 0; e < r->ext; e++) {
		unsigned char *h = p + 16 + 8 * e;

		h[0] = (unsigned char)(15 | (e + 1 < r->ext ? 0x80 : 0));
		memset(h + 1, 0xee, 7);
	}
	for (uint32_t k = 0; k < r->frame; k++)
		p[16 + 8 * r->ext + (r->eth_pad ? 2 : 0) + k] = (unsigned char)(off + k);
	x->n += len;
	return off;
}

/* An Ethernet record of a whole frame of n bytes, padded to 8. */
static struct rec eth(uint32_t sec, uint32_t frac, uint8_t flags, uint32_t n)
{
	uint32_t len = 16 + 2 + n;

	return (struct rec){ .sec = sec, .frac = frac, .type = 2, .eth_pad = true,
			     .flags = flags | 0x04, .frame = n, .wlen = (uint16_t)n,
			     .pad = (8 - len % 8) % 8 };
}

static const char *save(const struct blob *x, size_t n, const char *name)
{
	static char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(x->b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	return p;
}

/* Packets of path: count, *end the last cap_next(), err the message. */
static int count(const char *path, int *end, char err[CAP_ERRBUF])
{
	struct cap_reader *r;
	struct cap_packet pkt;
	int n = 0;

	*end = cap_open(&r, path, err);
	if (*end)
		return -1;
	while ((*end = cap_next(r, &pkt)) == 1)
		n++;
	snprintf(err, CAP_ERRBUF, "%s", cap_error(r));
	cap_close(r);
	return n;
}

/* ---- tests ---- */

/* Frame bytes as add() wrote them. */
static void check_frame(const struct cap_packet *pkt, size_t off)
{
	for (uint32_t k = 0; k < pkt->caplen; k++)
		ck_assert_uint_eq(pkt->data[k], (unsigned char)(off + k));
}

START_TEST(interfaces_extensions_skipped)
{
	static struct blob x;
	struct rec r;
	size_t off[7];
	char err[CAP_ERRBUF];
	struct cap_reader *rd;
	struct cap_packet pkt;
	struct cap_stats st;
	const struct cap_iface *ifc;

	x.n = 0;
	/* 0: interface 2, two extension headers, 61 bytes padded to 8. */
	r = eth(1763800000, 0x80000000u, 2, 61);
	r.ext = 2;
	off[0] = add(&x, &r);
	/* 1: a PAD record: skipped. */
	off[1] = add(&x, &(struct rec){ .sec = 0, .type = 48, .pad = 16 });
	/* 2: interface 0, colour Ethernet (type 11), 60 bytes, no pad. */
	r = eth(1763800001, 0, 0, 60);
	r.type = 11;
	r.pad = 0;
	off[2] = add(&x, &r);
	/* 3: provenance metadata (type 27) with an extension header: skipped. */
	off[3] = add(&x, &(struct rec){ .sec = 1763800001, .type = 27, .ext = 1,
					.pad = 24 });
	/* 4: interface 2 again; wire length 1518 (a DAG's, FCS included),
	 * 64 bytes captured: caplen is what the record holds. */
	r = eth(1763800002, 1, 2, 64);
	r.wlen = 1518;
	r.pad = 0;
	off[4] = add(&x, &r);
	/* 5: interface 6: bit 6 of the flags is the interface's third bit. */
	r = eth(1763800003, 0, 0x42, 100);
	off[5] = add(&x, &r);
	/* 6: DSM colour (16) and colour hash (20) Ethernet, interface 0. */
	r = eth(1763800004, 0, 0, 70);
	r.type = 16;
	off[6] = add(&x, &r);
	r.type = 20;
	add(&x, &r);

	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "a.erf"), err), 0);
	ck_assert_int_eq(cap_format(rd), CAP_ERF);

	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 1763800000500000000LL);
	ck_assert_uint_eq(pkt.caplen, 61);
	ck_assert_uint_eq(pkt.origlen, 61);	/* the pad is not frame */
	ck_assert_uint_eq(pkt.iface, 0);	/* first seen: id 0 */
	ck_assert_int_eq(pkt.dir, PCAPNG_DIR_UNKNOWN);
	ck_assert_uint_eq(pkt.offset, off[0]);
	ck_assert(!pkt.has_packet_id);
	check_frame(&pkt, off[0]);

	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 1763800001000000000LL);
	ck_assert_uint_eq(pkt.caplen, 60);
	ck_assert_uint_eq(pkt.iface, 1);
	ck_assert_uint_eq(pkt.offset, off[2]);
	check_frame(&pkt, off[2]);

	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_int_eq(pkt.ts_ns, 1763800002000000000LL);	/* 2^-32 s: 0 ns */
	ck_assert_uint_eq(pkt.caplen, 64);
	ck_assert_uint_eq(pkt.origlen, 1518);
	ck_assert_uint_eq(pkt.iface, 0);
	ck_assert_uint_eq(pkt.offset, off[4]);

	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_uint_eq(pkt.iface, 2);
	ck_assert_uint_eq(pkt.caplen, 100);
	ck_assert_uint_eq(pkt.offset, off[5]);
	check_frame(&pkt, off[5]);

	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_uint_eq(pkt.iface, 1);
	ck_assert_uint_eq(pkt.offset, off[6]);
	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_uint_eq(pkt.caplen, 70);
	ck_assert_int_eq(cap_next(rd, &pkt), 0);
	ck_assert_str_eq(cap_error(rd), "");

	ck_assert_uint_eq(cap_iface_count(rd), 3);
	{
		static const char *const names[] = { "erf2", "erf0", "erf6" };

		for (uint32_t i = 0; i < 3; i++) {
			ifc = cap_iface(rd, i);
			ck_assert_str_eq(ifc->name, names[i]);
			ck_assert_uint_eq(ifc->linktype, 1);
			ck_assert_uint_eq(ifc->snaplen, 65535);
			ck_assert_int_eq(ifc->resolution_ns, 0);
			ck_assert(!ifc->src_known && !ifc->sender);
		}
	}
	cap_stats(rd, &st);
	ck_assert_uint_eq(st.packets, 6);
	ck_assert_uint_eq(st.blocks_skipped, 2);
	ck_assert_uint_eq(st.sections, 1);
	ck_assert(!st.drops_known);
	ck_assert_str_eq(cap_host(rd), "");
	cap_close(rd);
}
END_TEST

/* The nearest ns, halves up, by long division: independent of the
 * reader's shift. */
static int64_t nearest_ns(uint32_t sec, uint32_t frac)
{
	unsigned __int128 num = (unsigned __int128)frac * 1000000000u;
	uint64_t ns = (uint64_t)(num / ((unsigned __int128)1 << 32));
	unsigned __int128 rem = num % ((unsigned __int128)1 << 32);

	if (rem * 2 >= ((unsigned __int128)1 << 32))
		ns++;
	return (int64_t)sec * 1000000000 + (int64_t)ns;
}

START_TEST(stamp_rounding)
{
	static const struct { uint32_t sec, frac; int64_t want; } cases[] = {
		{ 1, 0, 1000000000LL },
		{ 1, 1, 1000000000LL },			/* 0.23 ns */
		{ 1, 2, 1000000000LL },			/* 0.47 ns */
		{ 1, 3, 1000000001LL },			/* 0.70 ns */
		{ 1, 0x400000u, 1000976563LL },		/* 976562.5: up */
		{ 1, 0x80000000u, 1500000000LL },
		{ 1, 0xfffffffeu, 2000000000LL },	/* 0.9999999995 s */
		{ 1, 0xffffffffu, 2000000000LL },	/* carries */
		{ 1763800000, 0xffffffffu, 1763800001000000000LL },
		{ 0xffffffffu, 0xffffffffu, 4294967296000000000LL },
	};
	static struct blob x;
	char err[CAP_ERRBUF];
	struct cap_reader *rd;
	struct cap_packet pkt;
	uint32_t seed = 12345, n = sizeof(cases) / sizeof(cases[0]);

	x.n = 0;
	for (uint32_t i = 0; i < n; i++)
		add(&x, &(struct rec){ .sec = cases[i].sec, .frac = cases[i].frac,
				       .type = 2, .eth_pad = true, .frame = 14,
				       .wlen = 14 });
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		add(&x, &(struct rec){ .sec = 1763800000, .frac = seed,
				       .type = 2, .eth_pad = true, .frame = 14,
				       .wlen = 14 });
	}
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "r.erf"), err), 0);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(cap_next(rd, &pkt), 1);
		ck_assert_msg(pkt.ts_ns == cases[i].want, "frac 0x%08x: %lld, want %lld",
			      cases[i].frac, (long long)pkt.ts_ns,
			      (long long)cases[i].want);
		ck_assert_int_eq(pkt.ts_ns, nearest_ns(cases[i].sec, cases[i].frac));
	}
	seed = 12345;
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		ck_assert_int_eq(cap_next(rd, &pkt), 1);
		ck_assert_int_eq(pkt.ts_ns, nearest_ns(1763800000, seed));
	}
	ck_assert_int_eq(cap_next(rd, &pkt), 0);
	cap_close(rd);
}
END_TEST

/* The largest record rlen allows, between small ones: read whole. */
START_TEST(largest_record)
{
	static struct blob x;
	char err[CAP_ERRBUF];
	struct cap_reader *rd;
	struct cap_packet pkt;
	struct rec r = eth(1763800000, 0, 1, 65535 - 18);
	size_t off;

	x.n = 0;
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .wlen = 64 });
	r.wlen = 65535;
	r.pad = 0;	/* rlen 65535: no room for it */
	off = add(&x, &r);
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .wlen = 64 });
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "big.erf"), err), 0);
	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_uint_eq(pkt.caplen, 60);
	ck_assert_uint_eq(pkt.origlen, 64);
	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_uint_eq(pkt.caplen, 65535 - 18);
	ck_assert_uint_eq(pkt.origlen, 65535);
	ck_assert_uint_eq(pkt.iface, 1);
	check_frame(&pkt, off);
	ck_assert_int_eq(cap_next(rd, &pkt), 1);
	ck_assert_int_eq(cap_next(rd, &pkt), 0);
	cap_close(rd);
}
END_TEST

/* What is not ERF is refused at open, with pcap and pcapng named as
 * before and ERF too. */
START_TEST(not_erf)
{
	static struct blob x;
	static const struct { const char *what; uint8_t type, flags; uint32_t sec;
			      uint16_t wlen; int rlen; } bad[] = {
		{ "type 0 (legacy)", 0, 0, 1763800000, 60, 0 },
		{ "type 26", 26, 0, 1763800000, 60, 0 },
		{ "internal type 40", 40, 0, 1763800000, 60, 0 },
		{ "reserved flag", 2, 0x80, 1763800000, 60, 0 },
		{ "time 0", 2, 0, 0, 60, 0 },
		{ "no wire length", 2, 0, 1763800000, 0, 0 },
		{ "rlen 17", 2, 0, 1763800000, 60, 17 },
		{ "rlen 8", 2, 0, 1763800000, 60, 8 },
		{ "record far longer than its frame", 2, 0x04, 1763800000, 20, 0 },
	};
	char err[CAP_ERRBUF], name[32];
	struct cap_reader *rd;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		x.n = 0;
		add(&x, &(struct rec){ .sec = bad[i].sec, .type = bad[i].type,
				       .flags = bad[i].flags, .eth_pad = true,
				       .frame = 60, .wlen = bad[i].wlen,
				       .rlen = bad[i].rlen });
		snprintf(name, sizeof(name), "bad%zu.erf", i);
		ck_assert_msg(cap_open(&rd, save(&x, x.n, name), err) == -EBADMSG,
			      "%s: opened", bad[i].what);
		ck_assert_msg(strstr(err, "offset 0: not a pcap or pcapng file, nor ERF"),
			      "%s: %s", bad[i].what, err);
		ck_assert_ptr_null(rd);
	}
	/* Text: "0" at byte 8 is type 48, PAD, whose header is easily
	 * matched; past it there must be a record of another type. */
	memcpy(x.b, "timestamp0,type,flags,rlen\n", 27);
	ck_assert_int_eq(cap_open(&rd, save(&x, 27, "t.csv"), err), -EBADMSG);
	x.n = 0;
	add(&x, &(struct rec){ .type = 48, .pad = 8 });
	add(&x, &(struct rec){ .type = 48, .pad = 16 });
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "pads.erf"), err), -EBADMSG);
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .wlen = 60, .flags = 0x80 });
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "padbad.erf"), err), -EBADMSG);
	x.b[x.n - 60 - 2 - 16 + 9] = 0;
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "padok.erf"), err), 0);
	cap_close(rd);
	/* And a PAD as long as rlen allows before it. */
	x.n = 0;
	add(&x, &(struct rec){ .type = 48, .pad = 65535 - 16 });
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .wlen = 60 });
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "bigpad.erf"), err), 0);
	cap_close(rd);
	/* A file shorter than a record header. */
	x.n = 0;
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .wlen = 60 });
	ck_assert_int_eq(cap_open(&rd, save(&x, 15, "short.erf"), err), -EBADMSG);
	ck_assert_msg(strstr(err, "short.erf: offset 0: not a pcap"), "%s", err);
	/* Fixed-length records (no varying-length flag) may be longer. */
	x.n = 0;
	add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
			       .frame = 60, .pad = 200, .wlen = 60 });
	ck_assert_int_eq(cap_open(&rd, save(&x, x.n, "fixed.erf"), err), 0);
	cap_close(rd);
}
END_TEST

/* A damaged record after good ones (two_good()): the good ones, then
 * -EBADMSG naming the file, the record's offset and number and what is
 * wrong. */
static void expect_damage(struct blob *x, const char *name, size_t bad_off,
			  const char *what)
{
	char err[CAP_ERRBUF], want[256];
	int end, n = count(save(x, x->n, name), &end, err);

	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(end, -EBADMSG);
	snprintf(want, sizeof(want), "%s: offset %zu: ERF record 4: %s", name,
		 bad_off, what);
	ck_assert_msg(strstr(err, want), "got \"%s\", want \"%s\"", err, want);
}

/* Records 1-3: two packets and a PAD between them. */
static void two_good(struct blob *x)
{
	struct rec r = eth(1763800000, 0, 0, 60);

	x->n = 0;
	add(x, &r);
	add(x, &(struct rec){ .sec = 1, .type = 48, .pad = 8 });	/* PAD */
	add(x, &r);
}

START_TEST(damaged_records)
{
	static struct blob x;
	size_t off;

	/* rlen below the 16-byte header. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .rlen = 15 });
	x.n = off + 16;
	expect_damage(&x, "rlen15.erf", off, "record length 15 is shorter than its 16-byte header");
	/* rlen 0 too. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .rlen = 0, .pad = 0 });
	x.b[off + 10] = x.b[off + 11] = 0;
	expect_damage(&x, "rlen0.erf", off, "record length 0 is shorter");
	/* Extension headers that rlen cannot hold. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .ext = 3,
				     .eth_pad = true, .frame = 10, .wlen = 10,
				     .rlen = 16 + 8 + 4 });
	expect_damage(&x, "ext.erf", off, "record length 28 ends inside extension header 2");
	/* Header and extension header fit, the Ethernet pad does not. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .ext = 1,
				     .eth_pad = true, .frame = 10, .wlen = 10,
				     .rlen = 16 + 8 + 1 });
	expect_damage(&x, "pad.erf", off, "record length 25 is shorter than its 26 bytes of headers");
	/* rlen 65535 in a file that ends long before. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 2, .eth_pad = true,
				     .frame = 100, .wlen = 100, .rlen = 65535 });
	expect_damage(&x, "huge.erf", off, "file ends inside the record of 65535 bytes");
	/* A record of a type we skip is checked only for its length. */
	two_good(&x);
	off = add(&x, &(struct rec){ .sec = 1763800000, .type = 27, .rlen = 3 });
	expect_damage(&x, "meta.erf", off, "record length 3 is shorter");
}
END_TEST

/* Cut at every byte: the records whole before the cut, then a clean end
 * (at a record's end) or an error naming the record cut. Never more. */
START_TEST(truncated_everywhere)
{
	static struct blob x;
	size_t ends[8];
	char err[CAP_ERRBUF], name[32];
	struct rec r = eth(1763800000, 7, 1, 61);
	int nrec = 0, end;

	x.n = 0;
	r.ext = 1;
	add(&x, &r);
	ends[nrec++] = x.n;
	add(&x, &(struct rec){ .sec = 1, .type = 48, .pad = 8 });
	ends[nrec++] = x.n;
	r = eth(1763800001, 0, 3, 200);
	add(&x, &r);
	ends[nrec++] = x.n;
	r = eth(1763800002, 0, 0, 14);
	add(&x, &r);
	ends[nrec++] = x.n;
	for (size_t cut = 16; cut <= x.n; cut++) {
		int whole = 0, packets, n;

		while (whole < nrec && ends[whole] <= cut)
			whole++;
		packets = whole - (whole >= 2);	/* record 2 is the PAD */
		snprintf(name, sizeof(name), "cut%zu.erf", cut);
		n = count(save(&x, cut, name), &end, err);
		ck_assert_msg(n == packets, "cut %zu: %d packets, want %d", cut, n, packets);
		if (whole < nrec && (whole == 0 || ends[whole - 1] != cut)) {
			char want[80];

			snprintf(want, sizeof(want), "offset %zu: ERF record %d: file ends inside",
				 whole ? ends[whole - 1] : 0, whole + 1);
			ck_assert_int_eq(end, -EBADMSG);
			ck_assert_msg(strstr(err, name) && strstr(err, want), "cut %zu: %s", cut, err);
		} else {
			ck_assert_msg(end == 0, "cut %zu: %d %s", cut, end, err);
		}
	}
}
END_TEST

static Suite *erf_suite(void)
{
	Suite *s = suite_create("erf");
	TCase *t = tcase_create("erf");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, interfaces_extensions_skipped);
	tcase_add_test(t, stamp_rounding);
	tcase_add_test(t, largest_record);
	tcase_add_test(t, not_erf);
	tcase_add_test(t, damaged_records);
	tcase_add_test(t, truncated_everywhere);
	tcase_set_timeout(t, 60);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(erf_suite)
