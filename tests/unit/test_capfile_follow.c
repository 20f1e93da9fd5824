/* test_capfile_follow.c — one pcapng file read while it is written
 * (cap_open_follow(), cap_follow()): written in pieces cut at every byte
 * offset and at random ones, inside headers and inside blocks, the reader
 * gives every packet exactly once, in order, as soon as its block is whole,
 * -EAGAIN in between, and in the end the same packets, statistics
 * (heartbeats, drops) and errors as cap_open() of the finished file. A
 * block cut short is damage only once the reader is told the writer is
 * done; a corrupt block is damage at once, with the offline reader's
 * message. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/capfile.h"
#include "files/pcapng.h"
#include "files/pcapng_format.h"
#include "stamp/ts.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "capfollow");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static char *path_of(const char *name)
{
	static char p[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* ---- a reference capture ---- */

/* What a reader gave for one packet, its bytes hashed. */
struct pk {
	int64_t ts_ns;
	uint32_t caplen, origlen, iface;
	enum pcapng_dir dir;
	bool has_id;
	uint64_t id, offset, sum;
};

static uint64_t fnv(const uint8_t *p, uint32_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static struct pk pk_of(const struct cap_packet *p)
{
	struct pk k = {
		.ts_ns = p->ts_ns, .caplen = p->caplen, .origlen = p->origlen,
		.iface = p->iface, .dir = p->dir, .has_id = p->has_packet_id,
		.id = p->packet_id, .offset = p->offset,
		.sum = fnv(p->data, p->caplen),
	};
	return k;
}

#define MAXPK 2048

/* The bytes of a capture and where its blocks end. */
struct ref {
	unsigned char *b;
	size_t len;
	size_t shb_len;			/* the first section header's */
	size_t epb_end[MAXPK];		/* end of each packet's block */
	unsigned nepb;
	size_t hb_end[MAXPK];		/* end of each heartbeat ISB */
	unsigned nhb;
	struct pk pk[MAXPK];		/* cap_open() of the whole file */
	unsigned npk;
	struct cap_stats st;
	int end_rc;			/* its last cap_next() */
	char err[CAP_ERRBUF];
};

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* One section of n packets from t0 on two interfaces: sizes from 1 to
 * 300 bytes, both directions, some with a packet id, a heartbeat after
 * every 7th packet and statistics with a growing drop counter after every
 * 11th (on the other interface), appended to name. */
static void write_section(const char *name, const char *host, int64_t t0,
			  int n)
{
	struct pcapng_section sec = { .hostname = host };
	struct pcapng_iface i0 = { "eth0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_iface i1 = { "eth1", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char data[300];
	uint32_t id[2];
	char cmd[400];

	ck_assert_int_eq(pcapng_open(&w, path_of("section.pcapng"), &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &i0, &id[0]), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &i1, &id[1]), 0);
	for (int i = 0; i < n; i++) {
		uint32_t len = (uint32_t)(1 + (i * 37) % 300);
		int64_t ts = t0 + (int64_t)i * 1000003;
		uint64_t pid = 1000 + (uint64_t)i;

		for (uint32_t j = 0; j < len; j++)
			data[j] = (unsigned char)(i * 7 + j);
		ck_assert_int_eq(pcapng_write_packet_id(w, id[i % 2], ts, data,
				 len, len + 4, i % 3 ? PCAPNG_DIR_IN : PCAPNG_DIR_OUT,
				 i % 3 == 1 ? &pid : NULL), 0);
		if (i % 7 == 6)
			ck_assert_int_eq(pcapng_write_event(w, id[0], ts, ~0ULL,
					 ~0ULL, PCAPNG_HEARTBEAT), 0);
		if (i % 11 == 10)
			ck_assert_int_eq(pcapng_write_stats(w, id[1], ts,
					 (uint64_t)i, (uint64_t)i / 11), 0);
	}
	ck_assert_int_eq(pcapng_close(w, false), 0);
	snprintf(cmd, sizeof(cmd), "cat '%s' >> '%s' && rm '%s'",
		 path_of("section.pcapng"), path_of(name), path_of("section.pcapng"));
	ck_assert_int_eq(system(cmd), 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spill(const char *path, const unsigned char *b, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Read path whole with cap_open(): the packets, stats and how it ended. */
static void read_whole(const char *path, struct ref *r)
{
	struct cap_reader *rd;
	struct cap_packet p;
	char err[CAP_ERRBUF];
	int rc;

	r->npk = 0;
	ck_assert_int_eq(cap_open(&rd, path, err), 0);
	while ((rc = cap_next(rd, &p)) == 1) {
		ck_assert_uint_lt(r->npk, MAXPK);
		r->pk[r->npk++] = pk_of(&p);
	}
	r->end_rc = rc;
	snprintf(r->err, sizeof(r->err), "%s", cap_error(rd));
	cap_stats(rd, &r->st);
	cap_close(rd);
}

/* Where the blocks of r->b end (walked here, not with the reader). */
static void walk(struct ref *r)
{
	size_t off = 0;

	r->nepb = r->nhb = 0;
	r->shb_len = le32(r->b + 4);
	while (off + 12 <= r->len) {
		uint32_t type = le32(r->b + off), len = le32(r->b + off + 4);

		ck_assert_uint_ge(len, 12);
		if (off + len > r->len)
			break;
		if (type == PCAPNG_BT_EPB)
			r->epb_end[r->nepb++] = off + len;
		if (type == PCAPNG_BT_ISB &&
		    memmem(r->b + off, len, PCAPNG_HEARTBEAT, strlen(PCAPNG_HEARTBEAT)))
			r->hb_end[r->nhb++] = off + len;
		off += len;
	}
}

/* Two sections (the second as when a capture goes on in a new one) of
 * n packets each, in file name, read whole into r. */
static void make_ref(struct ref *r, const char *name, int n)
{
	memset(r, 0, sizeof(*r));
	write_section(name, "h1", 1763800000123456789LL, n);
	write_section(name, "h2", 1763800000123456789LL + (int64_t)n * 1000003, n);
	r->b = slurp(path_of(name), &r->len);
	walk(r);
	read_whole(path_of(name), r);
	ck_assert_int_eq(r->end_rc, 0);
	ck_assert_uint_eq(r->npk, (unsigned)(2 * n));
	ck_assert_uint_eq(r->nepb, r->npk);
	ck_assert_uint_gt(r->nhb, 2);
	ck_assert(r->st.drops_known);
}

/* ---- following ---- */

struct follower {
	const char *path;
	struct cap_reader *r;
	struct pk pk[MAXPK];
	unsigned npk;
};

static unsigned count_le(const size_t *ends, unsigned n, size_t size)
{
	unsigned k = 0;

	while (k < n && ends[k] <= size)
		k++;
	return k;
}

/* The file now holds size bytes of ref: open it if not yet, take every
 * packet there is. Every packet whose block is whole must have come, and
 * nothing else; every heartbeat whose block is whole counted once. */
static void follow_step(struct follower *f, const struct ref *ref, size_t size)
{
	struct cap_packet p;
	char err[CAP_ERRBUF];
	int rc;

	if (!f->r) {
		rc = cap_open_follow(&f->r, f->path, err);
		if (size < ref->shb_len) {
			ck_assert_msg(rc == -EAGAIN, "open at %zu of %zu bytes: %d %s",
				      size, ref->shb_len, rc, err);
			ck_assert_ptr_null(f->r);
			return;
		}
		ck_assert_msg(rc == 0, "open at %zu bytes: %d %s", size, rc, err);
	}
	while ((rc = cap_next(f->r, &p)) == 1) {
		ck_assert_uint_lt(f->npk, MAXPK);
		f->pk[f->npk++] = pk_of(&p);
	}
	ck_assert_msg(rc == -EAGAIN, "at %zu bytes: %d %s", size, rc,
		      cap_error(f->r));
	ck_assert_msg(f->npk == count_le(ref->epb_end, ref->nepb, size),
		      "at %zu bytes: %u packets, %u whole", size, f->npk,
		      count_le(ref->epb_end, ref->nepb, size));
	{
		struct cap_stats st;

		cap_stats(f->r, &st);
		ck_assert_msg(st.heartbeats == count_le(ref->hb_end, ref->nhb, size),
			      "at %zu bytes: %llu heartbeats, %u whole", size,
			      (unsigned long long)st.heartbeats,
			      count_le(ref->hb_end, ref->nhb, size));
		ck_assert_uint_eq(st.packets, f->npk);
	}
}

static void same_packets(const struct pk *a, unsigned na, const struct pk *b,
			 unsigned nb)
{
	ck_assert_uint_eq(na, nb);
	for (unsigned i = 0; i < na; i++)
		ck_assert_msg(a[i].ts_ns == b[i].ts_ns && a[i].caplen == b[i].caplen &&
			      a[i].origlen == b[i].origlen && a[i].iface == b[i].iface &&
			      a[i].dir == b[i].dir && a[i].has_id == b[i].has_id &&
			      a[i].id == b[i].id && a[i].offset == b[i].offset &&
			      a[i].sum == b[i].sum,
			      "packet %u differs (ts %lld / %lld, offset %llu / %llu)",
			      i, (long long)a[i].ts_ns, (long long)b[i].ts_ns,
			      (unsigned long long)a[i].offset,
			      (unsigned long long)b[i].offset);
}

static void same_stats(const struct cap_stats *a, const struct cap_stats *b)
{
	ck_assert_uint_eq(a->packets, b->packets);
	ck_assert_uint_eq(a->blocks_skipped, b->blocks_skipped);
	ck_assert_uint_eq(a->sections, b->sections);
	ck_assert_uint_eq(a->heartbeats, b->heartbeats);
	ck_assert_int_eq(a->heartbeat_ns, b->heartbeat_ns);
	ck_assert_uint_eq(a->heartbeat_iface, b->heartbeat_iface);
	ck_assert_uint_eq(a->drops, b->drops);
	ck_assert_int_eq(a->drops_known, b->drops_known);
	ck_assert_uint_eq(a->link_down, b->link_down);
}

/* Write ref's first `upto` bytes to name in pieces (cuts[] are the piece
 * ends, ascending, the last == upto), following after each; then the
 * writer is done: the rest is read and how it ends compared with
 * cap_open() of the same bytes. */
static void follow_pieces(const struct ref *ref, const char *name,
			  const size_t *cuts, unsigned ncuts)
{
	struct follower *f = calloc(1, sizeof(*f));
	struct ref *whole = calloc(1, sizeof(*whole));
	struct cap_packet p;
	struct cap_stats st;
	size_t at = 0;
	int fd, rc;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(whole);
	f->path = path_of(name);
	unlink(f->path);
	fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	ck_assert_int_ge(fd, 0);
	follow_step(f, ref, 0);		/* created, nothing in it yet */
	for (unsigned i = 0; i < ncuts; i++) {
		ck_assert_uint_ge(cuts[i], at);
		ck_assert_int_eq(write(fd, ref->b + at, cuts[i] - at),
				 (ssize_t)(cuts[i] - at));
		at = cuts[i];
		follow_step(f, ref, at);
	}
	close(fd);
	read_whole(f->path, whole);
	if (!f->r) {
		/* Stopped before its section header: cap_open() refuses it. */
		ck_assert_uint_lt(at, ref->shb_len);
		goto out;
	}
	/* Still following: the end is "not yet", however often asked. */
	ck_assert_int_eq(cap_next(f->r, &p), -EAGAIN);
	ck_assert_int_eq(cap_next(f->r, &p), -EAGAIN);
	cap_follow(f->r, false);
	while ((rc = cap_next(f->r, &p)) == 1)
		f->pk[f->npk++] = pk_of(&p);
	ck_assert_int_eq(rc, whole->end_rc);
	ck_assert_str_eq(cap_error(f->r), whole->err);
	same_packets(f->pk, f->npk, whole->pk, whole->npk);
	cap_stats(f->r, &st);
	same_stats(&st, &whole->st);
	/* A block cut short, and only then, is damage. */
	{
		size_t o = 0;

		while (o + 12 <= ref->len && o + le32(ref->b + o + 4) <= at)
			o += le32(ref->b + o + 4);
		ck_assert_int_eq(rc, o == at ? 0 : -EBADMSG);
	}
	cap_close(f->r);
out:
	free(whole);
	free(f);
}

/* Every byte written on its own: cuts at every offset of every block. */
START_TEST(follow_every_byte)
{
	struct ref *ref = calloc(1, sizeof(*ref));
	size_t *cuts;

	ck_assert_ptr_nonnull(ref);
	make_ref(ref, "ref.pcapng", 30);
	cuts = malloc(ref->len * sizeof(*cuts));
	for (size_t i = 0; i < ref->len; i++)
		cuts[i] = i + 1;
	follow_pieces(ref, "grow.pcapng", cuts, (unsigned)ref->len);
	free(cuts);
	free(ref->b);
	free(ref);
}
END_TEST

/* Pieces of random sizes (fixed seeds), the file left at a random length
 * when the writer is done: the whole file, a truncated one, and every
 * truncation read as cap_open() reads it. */
START_TEST(follow_random_pieces)
{
	struct ref *ref = calloc(1, sizeof(*ref));
	size_t cuts[4096];
	unsigned seed = 22;

	ck_assert_ptr_nonnull(ref);
	make_ref(ref, "ref.pcapng", 200);
	for (int run = 0; run < 60; run++) {
		size_t end = run % 3 ? ref->len :
			     (size_t)rand_r(&seed) % (ref->len + 1);
		size_t at = 0;
		unsigned n = 0;

		while (at < end && n < 4095) {
			/* Mostly small pieces (headers cut), some large. */
			size_t step = rand_r(&seed) % 4 ? 1 + rand_r(&seed) % 40 :
				      1 + rand_r(&seed) % 3000;

			at = at + step > end ? end : at + step;
			cuts[n++] = at;
		}
		if (at < end)
			cuts[n++] = end;
		follow_pieces(ref, "grow.pcapng", cuts, n);
	}
	free(ref->b);
	free(ref);
}
END_TEST

/* A file cut inside each kind of place (a block's header, its body, its
 * trailer; the section header of the second section), then completed: no
 * error, every packet once. Then the same cut with the writer done: the
 * offline reader's error, at the same byte. */
START_TEST(follow_truncated_tail)
{
	struct ref *ref = calloc(1, sizeof(*ref));
	size_t second = 0, o;

	ck_assert_ptr_nonnull(ref);
	make_ref(ref, "ref.pcapng", 40);
	for (o = 0; o < ref->len; o += le32(ref->b + o + 4))
		if (o && le32(ref->b + o) == PCAPNG_BT_SHB)
			second = o;
	ck_assert_uint_gt(second, 0);
	{
		size_t e = ref->epb_end[5], s = e - le32(ref->b + e - 4);
		size_t at[] = { s + 3, s + 8, s + 11, s + 20, e - 2,
				second + 5, second + 13, ref->hb_end[1] - 1 };

		for (unsigned i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			size_t cuts[2] = { at[i], ref->len };

			follow_pieces(ref, "grow.pcapng", cuts, 2);	/* completes */
			follow_pieces(ref, "cut.pcapng", cuts, 1);	/* does not */
		}
	}
	{
		struct follower f = { .path = path_of("cut.pcapng") };
		char err[CAP_ERRBUF];

		/* The message names the file and the block's offset. */
		spill(f.path, ref->b, ref->epb_end[3] - 1);
		ck_assert_int_eq(cap_open_follow(&f.r, f.path, err), 0);
		while (cap_next(f.r, &(struct cap_packet){ 0 }) == 1)
			f.npk++;
		ck_assert_uint_eq(f.npk, 3);
		cap_follow(f.r, false);
		ck_assert_int_eq(cap_next(f.r, &(struct cap_packet){ 0 }), -EBADMSG);
		snprintf(err, sizeof(err), "%s: offset %zu: file ends inside a block",
			 f.path, (size_t)(ref->epb_end[3] -
					  le32(ref->b + ref->epb_end[3] - 4)));
		ck_assert_msg(!strncmp(cap_error(f.r), err, strlen(err)), "%s",
			      cap_error(f.r));
		cap_close(f.r);
	}
	free(ref->b);
	free(ref);
}
END_TEST

/* Corrupt blocks are damage as soon as they are whole, while following,
 * with the message cap_open() gives: a length at the end that disagrees
 * with the one at the start, a length that is not a multiple of 4, one
 * over the limit. */
START_TEST(follow_corrupt_block)
{
	struct ref *ref = calloc(1, sizeof(*ref));
	struct ref *bad = calloc(1, sizeof(*bad));

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(bad);
	make_ref(ref, "ref.pcapng", 40);
	for (int kind = 0; kind < 3; kind++) {
		size_t e = ref->epb_end[10], s = e - le32(ref->b + e - 4);
		struct follower *f = calloc(1, sizeof(*f));
		struct cap_packet p;
		size_t at = 0;
		int fd, rc = 1;

		ck_assert_ptr_nonnull(f);
		memcpy(bad, ref, sizeof(*bad));
		bad->b = malloc(ref->len);
		memcpy(bad->b, ref->b, ref->len);
		if (kind == 0)
			put_le32(bad->b + e - 4, le32(ref->b + s + 4) + 4);
		else if (kind == 1)
			put_le32(bad->b + s + 4, le32(ref->b + s + 4) + 2);
		else
			put_le32(bad->b + s + 4, CAP_MAX_BLOCK + 4);
		spill(path_of("bad.pcapng"), bad->b, bad->len);
		read_whole(path_of("bad.pcapng"), bad);
		ck_assert_int_eq(bad->end_rc, -EBADMSG);
		ck_assert_uint_eq(bad->npk, 10);

		/* Followed in pieces of 7 bytes: packets until the bad block,
		 * then its error, once it can be told. */
		f->path = path_of("grow.pcapng");
		fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ck_assert_int_ge(fd, 0);
		while (at < bad->len && rc != -EBADMSG) {
			size_t n = bad->len - at < 7 ? bad->len - at : 7;
			char err[CAP_ERRBUF];

			ck_assert_int_eq(write(fd, bad->b + at, n), (ssize_t)n);
			at += n;
			if (!f->r && cap_open_follow(&f->r, f->path, err))
				continue;
			while ((rc = cap_next(f->r, &p)) == 1)
				f->pk[f->npk++] = pk_of(&p);
			if (rc == -EAGAIN)
				continue;
			ck_assert_int_eq(rc, -EBADMSG);
			/* As soon as the block (kind 0) or its header
			 * (1, 2) is there. */
			ck_assert_uint_le(at, kind ? s + 12 + 6 : e + 6);
		}
		close(fd);
		ck_assert_int_eq(rc, -EBADMSG);
		same_packets(f->pk, f->npk, bad->pk, bad->npk);
		{
			/* Same text, but for the path. */
			const char *a = strstr(cap_error(f->r), ": offset ");
			const char *b = strstr(bad->err, ": offset ");

			ck_assert_ptr_nonnull(a);
			ck_assert_ptr_nonnull(b);
			ck_assert_str_eq(a, b);
		}
		/* The stream is over: no packet of the blocks after it. */
		ck_assert_int_lt(cap_next(f->r, &p), 0);
		cap_close(f->r);
		free(bad->b);
		free(f);
	}
	free(bad);
	free(ref->b);
	free(ref);
}
END_TEST

/* A block whose length runs past what is written looks like one still
 * being written: the reader waits; once the writer is done, the offline
 * reader's error. */
START_TEST(follow_long_length_waits)
{
	struct ref *ref = calloc(1, sizeof(*ref));
	struct ref *bad = calloc(1, sizeof(*bad));
	struct cap_reader *r;
	struct cap_packet p;
	char err[CAP_ERRBUF];
	size_t e, s;
	int n = 0, rc;

	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(bad);
	make_ref(ref, "ref.pcapng", 40);
	e = ref->epb_end[ref->nepb - 3];
	s = e - le32(ref->b + e - 4);
	put_le32(ref->b + s + 4, (uint32_t)(ref->len - s + 400));
	spill(path_of("bad.pcapng"), ref->b, ref->len);
	read_whole(path_of("bad.pcapng"), bad);
	ck_assert_int_eq(bad->end_rc, -EBADMSG);
	ck_assert_int_eq(cap_open_follow(&r, path_of("bad.pcapng"), err), 0);
	while ((rc = cap_next(r, &p)) == 1)
		n++;
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_eq(n, (int)ref->nepb - 3);
	cap_follow(r, false);
	ck_assert_int_eq(cap_next(r, &p), -EBADMSG);
	ck_assert_str_eq(cap_error(r), bad->err);
	cap_close(r);
	free(ref->b);
	free(ref);
	free(bad);
}
END_TEST

/* Heartbeats and drop counters: each heartbeat counted once, however the
 * pieces cut it; the latest one's stamp and interface; drops the sum over
 * interfaces of each one's latest isb_ifdrop. */
START_TEST(follow_heartbeats_and_drops)
{
	struct pcapng_section sec = { .hostname = "hb" };
	struct pcapng_iface ifc = { "eth0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	struct cap_reader *r;
	struct cap_packet p;
	struct cap_stats st;
	unsigned char *b, f[60] = { 0 };
	char err[CAP_ERRBUF];
	uint32_t id[2];
	size_t len;
	int fd;

	ck_assert_int_eq(pcapng_open(&w, path_of("hb.pcapng"), &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id[0]), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id[1]), 0);
	ck_assert_int_eq(pcapng_write_packet(w, id[0], 1000, f, 60, 60, PCAPNG_DIR_IN), 0);
	ck_assert_int_eq(pcapng_write_event(w, id[0], 2000, 1, 3, PCAPNG_HEARTBEAT), 0);
	ck_assert_int_eq(pcapng_write_stats(w, id[1], 2500, 10, 4), 0);
	ck_assert_int_eq(pcapng_write_event(w, id[1], 3000, ~0ULL, ~0ULL,
					    PCAPNG_HEARTBEAT " (quiet)"), 0);
	/* capd's writer of them. */
	ck_assert_int_eq(pcapng_write_heartbeat(w, id[0], 2800), 0);
	/* An older promise after a newer one changes nothing. */
	ck_assert_int_eq(pcapng_write_event(w, id[0], 2500, ~0ULL, ~0ULL,
					    PCAPNG_HEARTBEAT), 0);
	/* An ordinary comment is no heartbeat. */
	ck_assert_int_eq(pcapng_write_event(w, id[0], 9000, ~0ULL, ~0ULL,
					    "tapless: something else"), 0);
	ck_assert_int_eq(pcapng_write_stats(w, id[0], 3500, 2, 5), 0);
	ck_assert_int_eq(pcapng_close(w, false), 0);

	b = slurp(path_of("hb.pcapng"), &len);
	fd = open(path_of("grow.pcapng"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	r = NULL;
	for (size_t at = 0; at < len; at += 5) {
		size_t n = len - at < 5 ? len - at : 5;

		ck_assert_int_eq(write(fd, b + at, n), (ssize_t)n);
		if (!r && cap_open_follow(&r, path_of("grow.pcapng"), err))
			continue;
		while (cap_next(r, &p) == 1)
			;
	}
	close(fd);
	ck_assert_ptr_nonnull(r);
	cap_stats(r, &st);
	ck_assert_uint_eq(st.packets, 1);
	ck_assert_uint_eq(st.heartbeats, 4);
	ck_assert_int_eq(st.heartbeat_ns, 3000);
	ck_assert_uint_eq(st.heartbeat_iface, id[1]);
	ck_assert(st.drops_known);
	ck_assert_uint_eq(st.drops, 5 + 4);	/* latest of eth0 + of eth1 */
	ck_assert_uint_eq(st.blocks_skipped, 7);	/* every ISB */
	cap_close(r);
	free(b);
}
END_TEST

/* A classic pcap file cannot be waited for (libpcap reads it): it is
 * read as it stands and ends with 0, not -EAGAIN. */
START_TEST(follow_classic_pcap_as_it_stands)
{
	unsigned char b[24 + 16 + 60] = { 0 };
	struct cap_reader *r;
	struct cap_packet p;
	char err[CAP_ERRBUF];

	put_le32(b, 0xa1b2c3d4);
	b[4] = 2;		/* version 2.4 */
	b[6] = 4;
	put_le32(b + 16, 65535);
	put_le32(b + 20, 1);	/* Ethernet */
	put_le32(b + 24, 1763800000);
	put_le32(b + 28, 5);
	put_le32(b + 32, 60);
	put_le32(b + 36, 60);
	spill(path_of("classic.pcap"), b, sizeof(b));
	ck_assert_int_eq(cap_open_follow(&r, path_of("classic.pcap"), err), 0);
	ck_assert_int_eq(cap_format(r), CAP_PCAP);
	ck_assert_int_eq(cap_next(r, &p), 1);
	ck_assert_int_eq(p.ts_ns, 1763800000000005000LL);
	ck_assert_int_eq(cap_next(r, &p), 0);
	cap_close(r);
}
END_TEST

static Suite *capfile_follow_suite(void)
{
	Suite *s = suite_create("capfile_follow");
	TCase *t = tcase_create("follow");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, follow_every_byte);
	tcase_add_test(t, follow_random_pieces);
	tcase_add_test(t, follow_truncated_tail);
	tcase_add_test(t, follow_corrupt_block);
	tcase_add_test(t, follow_long_length_waits);
	tcase_add_test(t, follow_heartbeats_and_drops);
	tcase_add_test(t, follow_classic_pcap_as_it_stands);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(capfile_follow_suite)
