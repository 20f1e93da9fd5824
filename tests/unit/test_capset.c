/* test_capset.c — several captures as one time-ordered stream: rotated files
 * in a directory, a .part file, a damaged file, and what is not a capture;
 * and a directory followed as tapless-capd writes it (capset_follow()):
 * files appearing under .part, growing in pieces, renamed, removed by
 * clean-up, a new capd run, a crash's leftovers, stopping. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files/capset.h"
#include "files/pcapng.h"
#include "files/pcapng_format.h"
#include "stamp/ts.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "capset");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* n packets at first, first + step, ...; leaves name.part if !finish. */
static void write_file(const char *name, int64_t first, int64_t step, int n,
		       bool finish)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct pcapng_iface ifc = { "eth0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char f[60] = { 0 };
	char path[160];
	uint32_t id;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pcapng_write_packet(w, id, first + i * step, f,
						     60, 60, PCAPNG_DIR_IN), 0);
	if (finish) {
		ck_assert_int_eq(pcapng_close(w, false), 0);
	} else {
		/* As after a crash: flushed, never renamed. */
		ck_assert_int_eq(pcapng_flush(w), 0);
		ck_assert_int_eq(pcapng_close(w, true) , 0);
	}
}

START_TEST(rotated_directory_in_time_order)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF], p[160];
	struct capset_packet pk;
	struct capset *s;
	int64_t last = -1;
	int count = 0;
	FILE *f;

	/* Three files whose packets interleave in time. */
	write_file("a-0001.pcapng", 0, 3, 100, true);
	write_file("a-0002.pcapng", 1, 3, 100, true);
	write_file("a-0003.pcap.pcapng", 2, 3, 100, true);
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	f = fopen(p, "w");
	fputs("not a capture\n", f);
	fclose(f);

	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	ck_assert_uint_eq(capset_files(s), 3);
	while (capset_next(s, &pk) == 1) {
		ck_assert(pk.pkt.ts_ns == last + 1);
		ck_assert_uint_eq(pk.file, (unsigned)(pk.pkt.ts_ns % 3));
		ck_assert_uint_eq(pk.pkt.caplen, 60);
		last = pk.pkt.ts_ns;
		count++;
	}
	ck_assert_int_eq(count, 300);
	ck_assert_str_eq(capset_error(s), "");
	ck_assert_ptr_nonnull(capset_reader(s, 2));
	ck_assert_ptr_null(capset_reader(s, 3));
	capset_close(s);
}
END_TEST

START_TEST(damaged_file_ends_only_itself)
{
	const char *paths[2];
	char err[CAP_ERRBUF], a[160], b[160];
	struct capset_packet pk;
	struct capset *s;
	struct stat st;
	int count = 0;

	write_file("a.pcapng", 0, 2, 50, true);
	write_file("b.pcapng", 1, 2, 50, true);
	snprintf(a, sizeof(a), "%s/a.pcapng", dir);
	snprintf(b, sizeof(b), "%s/b.pcapng", dir);
	ck_assert_int_eq(stat(b, &st), 0);
	ck_assert_int_eq(truncate(b, st.st_size / 2), 0);
	paths[0] = a;
	paths[1] = b;
	ck_assert_int_eq(capset_open(&s, paths, 2, err), 0);
	while (capset_next(s, &pk) == 1)
		count++;
	/* All 50 of a, and the whole packets of b before the cut. */
	ck_assert_int_gt(count, 50);
	ck_assert_int_lt(count, 100);
	ck_assert_uint_eq(capset_damaged(s), 1);
	ck_assert_msg(strstr(capset_error(s), "b.pcapng: offset"), "%s",
		      capset_error(s));
	capset_close(s);
}
END_TEST

START_TEST(part_file_is_read)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset_packet pk;
	struct capset *s;
	int count = 0;

	write_file("crashed.pcapng", 0, 1, 40, false);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), -ENOENT);
	ck_assert_msg(strstr(err, "no .pcapng"), "%s", err);
	/* The writer removed it on discard: write one left behind by hand. */
	write_file("ok.pcapng", 0, 1, 40, true);
	{
		char from[160], to[160];

		snprintf(from, sizeof(from), "%s/ok.pcapng", dir);
		snprintf(to, sizeof(to), "%s/ok.pcapng.part", dir);
		ck_assert_int_eq(rename(from, to), 0);
	}
	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	while (capset_next(s, &pk) == 1)
		count++;
	ck_assert_int_eq(count, 40);
	capset_close(s);
}
END_TEST

START_TEST(bad_paths)
{
	const char *missing[] = { "/nonexistent/tapless" };
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset *s;

	ck_assert_int_eq(capset_open(&s, missing, 1, err), -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/tapless"), "%s", err);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), -ENOENT);
}
END_TEST

START_TEST(equal_times_stable)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset_packet pk;
	struct capset *s;
	unsigned prev_file = 0;
	int64_t prev_ts = -1;

	write_file("1.pcapng", 0, 1, 20, true);
	write_file("2.pcapng", 0, 1, 20, true);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	while (capset_next(s, &pk) == 1) {
		if (pk.pkt.ts_ns == prev_ts)
			ck_assert_uint_gt(pk.file, prev_file);
		prev_ts = pk.pkt.ts_ns;
		prev_file = pk.file;
	}
	capset_close(s);
}
END_TEST

/* ---- following a directory as tapless-capd writes it ---- */

/* Between capset's scan of the directory and its open of the file it
 * picked, the writer or the clean-up may act: fopen() of hook_path first
 * renames it to hook_to, or removes it (hook_to ""). Calls to other paths
 * go straight to the C library's fopen(). */
static char hook_path[200], hook_to[200];

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "fopen");
	if (hook_path[0] && !strcmp(path, hook_path)) {
		if (hook_to[0])
			ck_assert_int_eq(rename(hook_path, hook_to), 0);
		else
			ck_assert_int_eq(unlink(hook_path), 0);
		hook_path[0] = 0;
	}
	return real(path, mode);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);	/* the writer's (native) byte order */
	return v;
}

/* One capture file's bytes, before it is written where it is followed,
 * and where its packet blocks end. */
struct cfile {
	char name[80];		/* final name, capd's: h-STAMP-NNNN.pcapng */
	unsigned char *b;
	size_t len;
	size_t epb_end[256];
	unsigned nepb, nhb;
};

/* capd's name for file num of the run that started at minute min. */
static void cfile_name(struct cfile *f, int min, unsigned num)
{
	snprintf(f->name, sizeof(f->name), "h-20251123T00%02d00Z-%04u.pcapng",
		 min, num);
}

/* n packets from t0, 1 µs apart, sizes 1..200; a heartbeat after every
 * 5th; at the end capd's statistics block (drop counter drop, ~0: none). */
static void cfile_make(struct cfile *f, int64_t t0, int n, uint64_t drop)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct pcapng_iface ifc = { "eth0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char d[200];
	char path[160];
	uint32_t id;
	size_t off = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/stage.pcapng", dir);
	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	for (int i = 0; i < n; i++) {
		uint32_t len = (uint32_t)(1 + (i * 53) % 200);

		memset(d, i, len);
		ck_assert_int_eq(pcapng_write_packet(w, id, t0 + i * 1000, d,
						     len, len, PCAPNG_DIR_IN), 0);
		if (i % 5 == 4)
			ck_assert_int_eq(pcapng_write_event(w, id, t0 + i * 1000,
					 ~0ULL, ~0ULL, PCAPNG_HEARTBEAT), 0);
	}
	if (drop != ~0ULL)
		ck_assert_int_eq(pcapng_write_stats(w, id, t0 + n * 1000,
						    (uint64_t)n, drop), 0);
	ck_assert_int_eq(pcapng_close(w, false), 0);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	f->b = malloc(1 << 20);
	ck_assert_ptr_nonnull(f->b);
	f->len = fread(f->b, 1, 1 << 20, in);
	fclose(in);
	unlink(path);
	f->nepb = f->nhb = 0;
	while (off + 12 <= f->len) {
		uint32_t type = get32(f->b + off), len = get32(f->b + off + 4);

		if (type == PCAPNG_BT_EPB)
			f->epb_end[f->nepb++] = off + len;
		if (type == PCAPNG_BT_ISB &&
		    memmem(f->b + off, len, PCAPNG_HEARTBEAT, strlen(PCAPNG_HEARTBEAT)))
			f->nhb++;
		off += len;
	}
	ck_assert_uint_eq(f->nepb, (unsigned)n);
}

/* Packet blocks of f whole in its first at bytes. */
static unsigned cfile_whole(const struct cfile *f, size_t at)
{
	unsigned k = 0;

	while (k < f->nepb && f->epb_end[k] <= at)
		k++;
	return k;
}

/* The writer: f under cap/NAME.part, piece after piece, renamed when
 * done, as capd does. */
struct writer {
	const struct cfile *f;
	int fd;
	size_t at;
};

static char *capd_path(const char *name, const char *suffix)
{
	static char p[4][200];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/cap/%s%s", dir, name, suffix);
	return p[k];
}

/* The directory followed, as an operand would name it. */
static char *capd_dir(void)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/cap", dir);
	return p;
}

static void writer_begin(struct writer *w, const struct cfile *f)
{
	w->f = f;
	w->at = 0;
	w->fd = open(capd_path(f->name, ".part"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(w->fd, 0);
}

static void writer_put(struct writer *w, size_t n)
{
	if (n > w->f->len - w->at)
		n = w->f->len - w->at;
	ck_assert_int_eq(write(w->fd, w->f->b + w->at, n), (ssize_t)n);
	w->at += n;
}

static void writer_end(struct writer *w)
{
	writer_put(w, w->f->len);
	close(w->fd);
	ck_assert_int_eq(rename(capd_path(w->f->name, ".part"),
				capd_path(w->f->name, "")), 0);
}

/* A file as capd leaves it when done, all at once. */
static void writer_whole(const struct cfile *f)
{
	struct writer w;

	writer_begin(&w, f);
	writer_end(&w);
}

/* What the follower has handed out. */
struct taken {
	struct capset *s;
	int64_t ts[1024];
	uint64_t sum[1024];
	unsigned n;
};

static uint64_t pk_sum(const struct cap_packet *p)
{
	uint64_t h = 1469598103934665603ULL ^ p->caplen;

	for (uint32_t i = 0; i < p->caplen; i++)
		h = (h ^ p->data[i]) * 1099511628211ULL;
	return h;
}

/* Take every packet there is: the return that ended it. */
static int drain(struct taken *t)
{
	struct capset_packet p;
	int rc;

	while ((rc = capset_next(t->s, &p)) == 1) {
		ck_assert_uint_lt(t->n, 1024);
		ck_assert_ptr_nonnull(capset_reader(t->s, p.file));
		t->ts[t->n] = p.pkt.ts_ns;
		t->sum[t->n++] = pk_sum(&p.pkt);
	}
	return rc;
}

static void follow_cap(struct taken *t, bool from_oldest)
{
	char err[CAP_ERRBUF];

	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(capset_follow(&t->s, capd_dir(), from_oldest, err), 0);
	ck_assert_ptr_nonnull(capset_follow_stats(t->s));
}

/* The taken packets are those of files[], each whole, in order. */
static void taken_are(const struct taken *t, struct cfile *const *files,
		      unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		struct cfile *f = files[i];
		size_t off = 0;

		for (unsigned j = 0; j < f->nepb; j++, k++) {
			struct cap_packet p = { 0 };

			ck_assert_msg(k < t->n, "only %u packets taken", t->n);
			while (get32(f->b + off) != PCAPNG_BT_EPB)
				off += get32(f->b + off + 4);
			p.caplen = get32(f->b + off + 20);
			p.data = f->b + off + 28;
			ck_assert_msg(t->sum[k] == pk_sum(&p),
				      "packet %u (file %u, packet %u) differs", k, i, j);
			off += get32(f->b + off + 4);
		}
	}
	ck_assert_uint_eq(t->n, k);
}

static void cap_dir(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/cap", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

/* Four files written in pieces of random sizes (fixed seed), each under
 * .part and renamed when done, the next created only then: after every
 * piece every whole packet has been taken, and nothing else; in the end
 * the same packets as capset_open() of the finished directory, each once
 * (the rename does not make a file new), nothing missed or restarted. */
START_TEST(follow_dir_file_after_file)
{
	static struct cfile f[4];
	struct cfile *all[4] = { &f[0], &f[1], &f[2], &f[3] };
	const char *paths[1];
	static struct taken t, off;
	const struct capset_follow_stats *fst;
	struct cap_stats st;
	char err[CAP_ERRBUF];
	unsigned seed = 7, before = 0, hb = 0;

	cap_dir();
	follow_cap(&t, _i);	/* from the oldest, and not: nothing there */
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert(capset_follow_stats(t.s)->waiting);
	for (unsigned i = 0; i < 4; i++) {
		struct writer w;

		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 60,
			   10 * i);
		hb += f[i].nhb;
		writer_begin(&w, &f[i]);
		ck_assert_int_eq(drain(&t), -EAGAIN);	/* empty .part */
		while (w.at < f[i].len) {
			writer_put(&w, rand_r(&seed) % 3 ? 1 + rand_r(&seed) % 30 :
				   1 + rand_r(&seed) % 2000);
			ck_assert_int_eq(drain(&t), -EAGAIN);
			ck_assert_uint_eq(t.n, before + cfile_whole(&f[i], w.at));
		}
		writer_end(&w);		/* renamed while being read */
		ck_assert_int_eq(drain(&t), -EAGAIN);
		before += f[i].nepb;
		ck_assert_uint_eq(t.n, before);
	}
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, all, 4);
	fst = capset_follow_stats(t.s);
	ck_assert_uint_eq(fst->files, 4);
	ck_assert_uint_eq(fst->missed, 0);
	ck_assert_uint_eq(fst->restarts, 0);
	ck_assert_uint_eq(fst->unreadable, 0);
	ck_assert_uint_eq(capset_damaged(t.s), 0);
	capset_stats(t.s, &st);
	ck_assert_uint_eq(st.packets, before);
	ck_assert_uint_eq(st.heartbeats, hb);
	ck_assert_uint_eq(st.drops, 30);	/* one run: the latest counter */
	/* The same as the finished directory read whole. */
	memset(&off, 0, sizeof(off));
	paths[0] = capd_dir();
	ck_assert_int_eq(capset_open(&off.s, paths, 1, err), 0);
	ck_assert_int_eq(drain(&off), 0);
	ck_assert_uint_eq(off.n, t.n);
	for (unsigned k = 0; k < t.n; k++)
		ck_assert(off.ts[k] == t.ts[k] && off.sum[k] == t.sum[k]);
	capset_close(off.s);
	capset_close(t.s);
	for (unsigned i = 0; i < 4; i++)
		free(f[i].b);
}
END_TEST

/* Started on a directory with a history: from the newest file (being
 * written), or with from_oldest from the first; then the next file. */
START_TEST(follow_start_newest_or_oldest)
{
	static struct cfile f[5];
	struct cfile *want[5];
	static struct taken t;
	struct writer w;
	unsigned n = 0;

	cap_dir();
	for (unsigned i = 0; i < 5; i++) {
		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 20, ~0ULL);
	}
	for (unsigned i = 0; i < 3; i++)
		writer_whole(&f[i]);
	writer_begin(&w, &f[3]);
	writer_put(&w, f[3].len / 2);
	follow_cap(&t, _i);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	writer_end(&w);
	writer_whole(&f[4]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	for (unsigned i = _i ? 0 : 3; i < 5; i++)
		want[n++] = &f[i];
	taken_are(&t, want, n);
	ck_assert_uint_eq(capset_follow_stats(t.s)->files, n);
	ck_assert_uint_eq(capset_follow_stats(t.s)->missed, 0);
	capset_close(t.s);
	for (unsigned i = 0; i < 5; i++)
		free(f[i].b);
}
END_TEST

/* Clean-up removes files before they are read: counted as missed when
 * the numbering skips them. A new capd run numbers from 0 again (its
 * stamp is later, so its names sort after): a restart, not a miss. */
START_TEST(follow_missed_and_restart)
{
	static struct cfile f[7];
	struct cfile *want[] = { &f[0], &f[1], &f[4], &f[5], &f[6] };
	const struct capset_follow_stats *fst;
	static struct taken t;
	struct writer w;

	cap_dir();
	for (unsigned i = 0; i < 5; i++)
		cfile_name(&f[i], 0, i);
	cfile_name(&f[5], 1, 0);	/* the next run */
	cfile_name(&f[6], 1, 1);
	for (unsigned i = 0; i < 7; i++)
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 10, ~0ULL);
	follow_cap(&t, true);
	writer_whole(&f[0]);
	/* 1 is opened under .part: its number is the final name's. */
	writer_begin(&w, &f[1]);
	writer_put(&w, f[1].len / 2);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	writer_end(&w);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	/* 2 and 3 come and go while the follower looks elsewhere. */
	writer_whole(&f[2]);
	writer_whole(&f[3]);
	writer_whole(&f[4]);
	ck_assert_int_eq(unlink(capd_path(f[2].name, "")), 0);
	ck_assert_int_eq(unlink(capd_path(f[3].name, "")), 0);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	fst = capset_follow_stats(t.s);
	ck_assert_uint_eq(fst->missed, 2);
	ck_assert_uint_eq(fst->restarts, 0);
	writer_whole(&f[5]);
	writer_whole(&f[6]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, want, 5);
	fst = capset_follow_stats(t.s);
	ck_assert_uint_eq(fst->files, 5);
	ck_assert_uint_eq(fst->missed, 2);
	ck_assert_uint_eq(fst->restarts, 1);
	capset_close(t.s);
	for (unsigned i = 0; i < 7; i++)
		free(f[i].b);
}
END_TEST

/* A file removed by clean-up between the follower's scan and its open:
 * missed, and the next one read. */
START_TEST(follow_removed_before_open)
{
	static struct cfile f[3];
	struct cfile *want[] = { &f[0], &f[2] };
	static struct taken t;

	cap_dir();
	for (unsigned i = 0; i < 3; i++) {
		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 10, ~0ULL);
	}
	follow_cap(&t, true);
	writer_whole(&f[0]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	writer_whole(&f[1]);
	writer_whole(&f[2]);
	snprintf(hook_path, sizeof(hook_path), "%s", capd_path(f[1].name, ""));
	hook_to[0] = 0;
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_str_eq(hook_path, "");	/* the hook was met */
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, want, 2);
	ck_assert_uint_eq(capset_follow_stats(t.s)->missed, 1);
	ck_assert_uint_eq(capset_follow_stats(t.s)->files, 2);
	capset_close(t.s);
	for (unsigned i = 0; i < 3; i++)
		free(f[i].b);
}
END_TEST

/* capd renames a file from .part to its final name between the
 * follower's scan and its open (the follower was behind): it is the same
 * file, to be read, not a missed one. */
START_TEST(follow_renamed_before_open)
{
	static struct cfile f[3];
	struct cfile *want[] = { &f[0], &f[1], &f[2] };
	static struct taken t;
	struct writer w;

	cap_dir();
	for (unsigned i = 0; i < 3; i++) {
		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 10, ~0ULL);
	}
	follow_cap(&t, true);
	writer_whole(&f[0]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	writer_begin(&w, &f[1]);
	writer_put(&w, f[1].len);
	close(w.fd);
	snprintf(hook_path, sizeof(hook_path), "%s", capd_path(f[1].name, ".part"));
	snprintf(hook_to, sizeof(hook_to), "%s", capd_path(f[1].name, ""));
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_str_eq(hook_path, "");	/* the hook was met */
	writer_whole(&f[2]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	ck_assert_uint_eq(capset_follow_stats(t.s)->missed, 0);
	taken_are(&t, want, 3);
	capset_close(t.s);
	for (unsigned i = 0; i < 3; i++)
		free(f[i].b);
}
END_TEST

/* Drop counters across files: a rotation repeats its run's counter and
 * adds its increase; a new capd run (the numbering went back) counts
 * from zero, whatever its first counter is. Heartbeats add up. */
START_TEST(follow_drops_and_heartbeats)
{
	static struct cfile f[4];
	static struct taken t;
	struct cap_stats st;
	int64_t hb_ts;
	unsigned file;
	uint32_t iface;

	cap_dir();
	cfile_name(&f[0], 0, 0);
	cfile_name(&f[1], 0, 1);
	cfile_name(&f[2], 1, 0);
	cfile_name(&f[3], 1, 1);
	cfile_make(&f[0], 1763856000000000000LL, 10, 5);
	cfile_make(&f[1], 1763856001000000000LL, 10, 8);
	cfile_make(&f[2], 1763856002000000000LL, 10, 9);	/* new run */
	cfile_make(&f[3], 1763856003000000000LL, 10, 12);
	follow_cap(&t, true);
	ck_assert(!capset_heartbeat(t.s, &hb_ts, &file, &iface));
	writer_whole(&f[0]);
	writer_whole(&f[1]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	capset_stats(t.s, &st);
	ck_assert_uint_eq(st.drops, 8);
	ck_assert(capset_heartbeat(t.s, &hb_ts, &file, &iface));
	ck_assert_int_eq(hb_ts, 1763856001000009000LL);	/* packet 9's */
	ck_assert_uint_eq(file, 1);
	writer_whole(&f[2]);
	writer_whole(&f[3]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_uint_eq(capset_follow_stats(t.s)->restarts, 1);
	capset_stats(t.s, &st);
	ck_assert_uint_eq(st.heartbeats, f[0].nhb + f[1].nhb + f[2].nhb + f[3].nhb);
	ck_assert_uint_eq(st.packets, 40);
	ck_assert_msg(st.drops == 8 + 12, "drops %llu, want 8 + 12",
		      (unsigned long long)st.drops);
	capset_close(t.s);
	for (unsigned i = 0; i < 4; i++)
		free(f[i].b);
}
END_TEST

/* Stopping with the newest file cut inside a block (a crash, or a
 * writer stopped mid-write): the whole packets are read, the cut block is
 * damage with capset_open()'s message, and next() says 0. */
START_TEST(follow_stop_truncated)
{
	static struct cfile f[2];
	const char *paths[1];
	static struct taken t, off;
	char err[CAP_ERRBUF];
	struct writer w;
	size_t cut;

	cap_dir();
	for (unsigned i = 0; i < 2; i++) {
		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 20, ~0ULL);
	}
	follow_cap(&t, true);
	writer_whole(&f[0]);
	writer_begin(&w, &f[1]);
	cut = f[1].epb_end[7] - 9;
	writer_put(&w, cut);
	close(w.fd);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_uint_eq(t.n, 20 + 7);
	ck_assert_uint_eq(capset_damaged(t.s), 0);	/* not yet: it may grow */
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	ck_assert_uint_eq(t.n, 20 + 7);
	ck_assert_uint_eq(capset_damaged(t.s), 1);
	memset(&off, 0, sizeof(off));
	paths[0] = capd_dir();
	ck_assert_int_eq(capset_open(&off.s, paths, 1, err), 0);
	ck_assert_int_eq(drain(&off), 0);
	ck_assert_uint_eq(off.n, t.n);
	ck_assert_str_eq(capset_error(t.s), capset_error(off.s));
	ck_assert_msg(strstr(capset_error(t.s), ".part: offset "), "%s",
		      capset_error(t.s));
	capset_close(off.s);
	capset_close(t.s);
	for (unsigned i = 0; i < 2; i++)
		free(f[i].b);
}
END_TEST

/* capd buffers a new file's section header until its first flush: one
 * killed just after a rotation leaves an empty (or, cut by a full disk, a
 * too short) .part for good. Stopping then, next() still says 0 at the
 * end; a new capd run's files are read past it. */
START_TEST(follow_stop_with_empty_part)
{
	static struct cfile f[1];
	static struct taken t;
	int fd;

	cap_dir();
	cfile_name(&f[0], 0, 0);
	cfile_make(&f[0], 1763856000000000000LL, 10, ~0ULL);
	follow_cap(&t, true);
	writer_whole(&f[0]);
	fd = open(capd_path("h-20251123T000000Z-0001.pcapng", ".part"),
		  O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	if (_i)
		ck_assert_int_eq(write(fd, f[0].b, 10), 10);	/* part of an SHB */
	close(fd);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_uint_eq(t.n, 10);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	capset_close(t.s);
	free(f[0].b);
}
END_TEST

START_TEST(follow_past_abandoned_part)
{
	static struct cfile f[3];
	struct cfile *want[] = { &f[0], &f[1], &f[2] };
	static struct taken t;
	int fd;

	cap_dir();
	cfile_name(&f[0], 0, 0);
	cfile_name(&f[1], 1, 0);	/* the next run */
	cfile_name(&f[2], 1, 1);
	for (unsigned i = 0; i < 3; i++)
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 10, ~0ULL);
	follow_cap(&t, true);
	writer_whole(&f[0]);
	/* The killed run's last file: created, nothing flushed. */
	fd = open(capd_path("h-20251123T000000Z-0001.pcapng", ".part"),
		  O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	writer_whole(&f[1]);
	writer_whole(&f[2]);
	ck_assert_int_eq(drain(&t), -EAGAIN);
	ck_assert_msg(t.n == 30, "%u packets taken: stuck on the empty .part", t.n);
	ck_assert_uint_eq(capset_follow_stats(t.s)->restarts, 1);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, want, 3);
	capset_close(t.s);
	for (unsigned i = 0; i < 3; i++)
		free(f[i].b);
}
END_TEST

/* One file followed, not a directory: it grows, then the follower
 * stops. */
START_TEST(follow_one_file)
{
	static struct cfile f[1];
	struct cfile *want[] = { &f[0] };
	static struct taken t;
	char err[CAP_ERRBUF];
	struct writer w;

	cap_dir();
	cfile_name(&f[0], 0, 0);
	cfile_make(&f[0], 1763856000000000000LL, 30, ~0ULL);
	writer_begin(&w, &f[0]);
	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(capset_follow(&t.s, capd_path(f[0].name, ".part"), false,
				       err), 0);
	while (w.at < f[0].len) {
		writer_put(&w, 33);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		ck_assert_uint_eq(t.n, cfile_whole(&f[0], w.at));
	}
	close(w.fd);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, want, 1);
	ck_assert_uint_eq(capset_follow_stats(t.s)->files, 1);
	capset_close(t.s);
	free(f[0].b);
}
END_TEST

/* A directory quiet for a while: a scan that found nothing newer is
 * trusted until the directory changes (capset.c keys it on the mtime), and
 * a file created after it is still found, under .part and then renamed. */
START_TEST(follow_quiet_directory)
{
	static struct cfile f[3];
	struct cfile *want[] = { &f[0], &f[1], &f[2] };
	struct timespec old[2];
	static struct taken t;
	struct writer w;

	cap_dir();
	for (unsigned i = 0; i < 3; i++) {
		cfile_name(&f[i], 0, i);
		cfile_make(&f[i], 1763856000000000000LL + i * 1000000000LL, 10, ~0ULL);
	}
	follow_cap(&t, true);
	writer_whole(&f[0]);
	for (unsigned i = 1; i < 3; i++) {
		/* Nothing happened in the directory for 10 s. */
		clock_gettime(CLOCK_REALTIME, &old[0]);
		old[0].tv_sec -= 10;
		old[1] = old[0];
		ck_assert_int_eq(utimensat(AT_FDCWD, capd_dir(), old, 0), 0);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		writer_begin(&w, &f[i]);
		writer_put(&w, f[i].len / 2);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		ck_assert_uint_eq(t.n, 10 * i + cfile_whole(&f[i], f[i].len / 2));
		writer_end(&w);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		ck_assert_uint_eq(t.n, 10 * (i + 1));
	}
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	taken_are(&t, want, 3);
	capset_close(t.s);
	for (unsigned i = 0; i < 3; i++)
		free(f[i].b);
}
END_TEST

/* The directory followed is removed (by the operator, or a clean-up gone
 * wrong): next() still returns — waiting, then 0 once stopped — and does
 * not spin on the failing scan. With a file open (_i == 1) it is read to
 * its end first. Check's timeout catches a spin. */
START_TEST(follow_directory_removed)
{
	static struct cfile f[1];
	static struct taken t;
	int rc;

	cap_dir();
	cfile_name(&f[0], 0, 0);
	cfile_make(&f[0], 1763856000000000000LL, 10, ~0ULL);
	follow_cap(&t, true);
	if (_i) {
		writer_whole(&f[0]);
		ck_assert_int_eq(drain(&t), -EAGAIN);
		ck_assert_uint_eq(t.n, 10);
		ck_assert_int_eq(unlink(capd_path(f[0].name, "")), 0);
	} else {
		ck_assert_int_eq(drain(&t), -EAGAIN);
	}
	ck_assert_int_eq(rmdir(capd_dir()), 0);
	rc = drain(&t);
	ck_assert_msg(rc == -EAGAIN || rc == 0 || rc == -ENOENT, "next: %d", rc);
	capset_stop(t.s);
	ck_assert_int_eq(drain(&t), 0);
	ck_assert_uint_eq(t.n, _i ? 10 : 0);
	capset_close(t.s);
	free(f[0].b);
}
END_TEST

static Suite *capset_suite(void)
{
	Suite *s = suite_create("capset");
	TCase *t = tcase_create("capset");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, rotated_directory_in_time_order);
	tcase_add_test(t, damaged_file_ends_only_itself);
	tcase_add_test(t, part_file_is_read);
	tcase_add_test(t, bad_paths);
	tcase_add_test(t, equal_times_stable);
	suite_add_tcase(s, t);

	t = tcase_create("follow");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_loop_test(t, follow_dir_file_after_file, 0, 2);
	tcase_add_loop_test(t, follow_start_newest_or_oldest, 0, 2);
	tcase_add_test(t, follow_missed_and_restart);
	tcase_add_test(t, follow_removed_before_open);
	tcase_add_test(t, follow_renamed_before_open);
	tcase_add_test(t, follow_drops_and_heartbeats);
	tcase_add_test(t, follow_stop_truncated);
	tcase_add_loop_test(t, follow_stop_with_empty_part, 0, 2);
	tcase_add_test(t, follow_past_abandoned_part);
	tcase_add_test(t, follow_one_file);
	tcase_add_test(t, follow_quiet_directory);
	tcase_add_loop_test(t, follow_directory_removed, 0, 2);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(capset_suite)
