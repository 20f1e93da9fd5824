/* capset.c — see capset.h. */
#include "files/capset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/errbuf.h"
#include "base/heap.h"
#include "base/xalloc.h"

struct capset_src {
	struct cap_reader *r;
	struct cap_packet next;	/* read ahead, valid while held */
	char *path;		/* kept after the reader is closed */
	bool live;		/* next holds a packet not yet handed out */
};

/* Directory mtimes are the kernel's coarse clock (a tick, at most 10 ms
 * at HZ=100), and whole seconds on some file systems (NFS, ext3): a scan
 * is trusted only once the directory has been still for longer. */
#define CAPSET_MTIME_SLACK_NS 2000000000LL

/* Drop counters across files: capd's are the capture's since it was
 * opened, so each file of one capd run repeats what the one before said
 * and adds its increase, and a new run starts from zero again. */
struct capset_drops {
	uint64_t base;		/* totals of earlier runs */
	uint64_t run;		/* latest counter of the current run */
};

struct capset {
	struct capset_src *src;
	unsigned n, cap;
	struct heap *heap;	/* unsigned indexes of live sources, min ts first */
	int last;		/* source handed out last, to advance; -1 */
	enum tapfmt_kind tap;	/* for every file opened (cap_set_tapfmt()) */
	/* capset_error(): the first error of capset_next(); last_err the
	 * latest, for live readers (capset_last_error()). */
	char err[CAP_ERRBUF];
	char last_err[CAP_ERRBUF];
	unsigned damaged;

	/* Following (capset_follow()): one file at a time, in src[n - 1]
	 * while open; the ones before are closed (r NULL). */
	bool following, stopping;
	char *fpath;		/* the directory or file followed */
	bool fdir;		/* fpath is a directory */
	bool open;		/* src[n - 1] is being read */
	char taken[256];	/* base name (no .part) of the newest taken */
	long last_num;		/* its number in capd's naming, -1: none */
	struct cap_stats closed;	/* of the files closed */
	struct capset_drops drops;	/* of the files closed */
	struct capset_follow_stats fst;
	/* The last scan found nothing after scan_taken, at this mtime. */
	bool scanned_empty;
	struct timespec scan_mtime;
	char scan_taken[256];
};

static int capset_follow_next(struct capset *s, struct capset_packet *p);

static bool capset_less(const void *pa, const void *pb, void *ctx)
{
	const struct capset *s = ctx;
	unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
	const struct cap_packet *x = &s->src[a].next, *y = &s->src[b].next;

	/* Equal times: the earlier file first, so the order is stable. */
	return x->ts_ns < y->ts_ns || (x->ts_ns == y->ts_ns && a < b);
}

/* Read the next packet of source i; false when it has none left. */
static bool capset_advance(struct capset *s, unsigned i)
{
	int rc = cap_next(s->src[i].r, &s->src[i].next);

	if (rc < 0) {
		if (!s->damaged++)
			errbuf_set(s->err, CAP_ERRBUF, rc, "%s",
				   cap_error(s->src[i].r));
	}
	s->src[i].live = rc == 1;
	return rc == 1;
}

static int capset_add(struct capset *s, const char *path,
		      char err[CAP_ERRBUF])
{
	struct cap_reader *r;
	int rc = cap_open(&r, path, err);

	if (rc)
		return rc;
	cap_set_tapfmt(r, s->tap);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->src = xrealloc(s->src, s->cap * sizeof(*s->src));
	}
	memset(&s->src[s->n], 0, sizeof(s->src[0]));
	s->src[s->n].path = xstrdup(path);
	s->src[s->n++].r = r;
	return 0;
}

static bool capset_wanted(const char *name)
{
	size_t n = strlen(name);
	static const char *const ends[] = { ".pcapng", ".pcap", ".erf", ".part" };

	if (name[0] == '.')
		return false;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t k = strlen(ends[i]);

		if (n > k && !strcmp(name + n - k, ends[i]))
			return true;
	}
	return false;
}

static int capset_add_dir(struct capset *s, const char *dir,
			  char err[CAP_ERRBUF])
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), rc = 0, added = 0;

	if (n < 0)
		return errbuf_set(err, CAP_ERRBUF, -errno, "%s: %s", dir,
				  strerror(errno));
	for (int i = 0; i < n; i++) {
		char path[4096];

		if (!rc && capset_wanted(names[i]->d_name)) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			rc = capset_add(s, path, err);
			added += !rc;
		}
		free(names[i]);
	}
	free(names);
	if (!rc && !added)
		rc = errbuf_set(err, CAP_ERRBUF, -ENOENT,
				"%s: no .pcapng, .pcap "
				"or .part file", dir);
	return rc;
}

int capset_open(struct capset **out, const char *const *paths, unsigned n,
		char err[CAP_ERRBUF])
{
	return capset_open_tap(out, paths, n, TAPFMT_AUTO, err);
}

int capset_open_tap(struct capset **out, const char *const *paths, unsigned n,
		    enum tapfmt_kind tap, char err[CAP_ERRBUF])
{
	struct capset *s = xcalloc(1, sizeof(*s));
	int rc = 0;

	err[0] = 0;
	*out = NULL;
	s->last = -1;
	s->tap = tap;
	for (unsigned i = 0; !rc && i < n; i++) {
		struct stat st;

		if (stat(paths[i], &st))
			rc = errbuf_set(err, CAP_ERRBUF, -errno, "%s: %s",
					paths[i], strerror(errno));
		else if (S_ISDIR(st.st_mode)) {
			rc = capset_add_dir(s, paths[i], err);
		} else {
			rc = capset_add(s, paths[i], err);
		}
	}
	if (rc) {
		capset_close(s);
		return rc;
	}
	rc = heap_create(&s->heap, sizeof(unsigned), s->n, capset_less, s);
	if (rc) {
		capset_close(s);
		return rc;
	}
	for (unsigned i = 0; i < s->n; i++)
		if (capset_advance(s, i))
			heap_push(s->heap, &i);
	*out = s;
	return 0;
}

int capset_next(struct capset *s, struct capset_packet *p)
{
	unsigned i;

	if (s->following)
		return capset_follow_next(s, p);
	/* Advance the source handed out last only now: its data had to stay
	 * valid until this call. */
	if (s->last >= 0) {
		/* It is the top: its key moved on, or it has no more. */
		if (capset_advance(s, (unsigned)s->last))
			heap_fix_top(s->heap);
		else
			heap_pop(s->heap, NULL);
		s->last = -1;
	}
	if (!heap_count(s->heap))
		return 0;
	i = *(const unsigned *)heap_top(s->heap);
	p->pkt = s->src[i].next;
	p->file = i;
	s->last = (int)i;
	return 1;
}

/* ---- following ---- */

/* name without ".part": a file renamed to its final name is the same. */
static void capset_base(const char *name, char *base, size_t len)
{
	size_t n = strlen(name);

	snprintf(base, len, "%s", name);
	if (n > 5 && !strcmp(name + n - 5, ".part") && n - 5 < len)
		base[n - 5] = 0;
}

/* capd's file number: PREFIX-STAMP-NNNN.pcapng; -1 for other names. */
static long capset_num(const char *base)
{
	const char *dot = strrchr(base, '.'), *p;
	long v = 0;

	if (!dot)
		return -1;
	for (p = dot; p > base && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	if (p == dot || p == base || p[-1] != '-')
		return -1;
	for (; p < dot; p++)
		v = v * 10 + (*p - '0');
	return v;
}

/* The file to take after s->taken: the smallest base name above it (the
 * newest one when nothing was taken yet and not from the oldest); its
 * name as it is now in *name. 1 when there is one, 0 when not, -errno. */
static int capset_scan(struct capset *s, bool newest, char *name, size_t len)
{
	struct dirent **names;
	struct timespec now;
	struct stat st;
	int n, found = 0;
	char best[256] = "", base[256];

	/* Asked at every end of data, many times a second: a directory not
	 * changed since it last had nothing newer still has nothing newer
	 * (a file created, renamed or removed in it changes its mtime). The
	 * kernel's mtime is coarse (a tick): only an mtime well before the
	 * scan proves that a change after the scan would show as another. */
	if (stat(s->fpath, &st)) {
		s->scanned_empty = false;
		memset(&st, 0, sizeof(st));
	} else if (s->scanned_empty && !strcmp(s->taken, s->scan_taken) &&
		   st.st_mtim.tv_sec == s->scan_mtime.tv_sec &&
		   st.st_mtim.tv_nsec == s->scan_mtime.tv_nsec) {
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	n = scandir(s->fpath, &names, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name;

		if (capset_wanted(d) && strlen(d) < sizeof(base)) {
			capset_base(d, base, sizeof(base));
			if (strcmp(base, s->taken) > 0 &&
			    (!found || (newest ? strcmp(base, best) > 0 :
					strcmp(base, best) < 0))) {
				snprintf(best, sizeof(best), "%s", base);
				snprintf(name, len, "%s", d);
				found = 1;
			}
		}
		free(names[i]);
	}
	free(names);
	s->scanned_empty = !found && st.st_mtim.tv_sec &&
		(now.tv_sec - st.st_mtim.tv_sec) * 1000000000LL +
		(now.tv_nsec - st.st_mtim.tv_nsec) > CAPSET_MTIME_SLACK_NS;
	s->scan_mtime = st.st_mtim;
	snprintf(s->scan_taken, sizeof(s->scan_taken), "%s", s->taken);
	return found;
}

/* The followed file's counters join the closed ones'. */
static void capset_drops_add(struct capset_drops *d, uint64_t v)
{
	if (v < d->run)		/* counting from zero again: a new capd */
		d->base += d->run;
	d->run = v;
}

/* One file's stats into a sum of several: counters added, the first
 * link down and the latest heartbeat kept, drops carried across files. */
static void capset_stats_add(struct cap_stats *sum, struct capset_drops *d,
			     const struct cap_stats *st)
{
	if (!sum->link_down && st->link_down) {
		sum->first_link_down_ns = st->first_link_down_ns;
		sum->first_link_down_iface = st->first_link_down_iface;
	}
	sum->packets += st->packets;
	sum->blocks_skipped += st->blocks_skipped;
	sum->sections += st->sections;
	sum->link_down += st->link_down;
	sum->link_up += st->link_up;
	if (st->heartbeats && (!sum->heartbeats ||
			       st->heartbeat_ns > sum->heartbeat_ns)) {
		sum->heartbeat_ns = st->heartbeat_ns;
		sum->heartbeat_iface = st->heartbeat_iface;
	}
	sum->heartbeats += st->heartbeats;
	if (st->drops_known)
		capset_drops_add(d, st->drops);
	sum->drops_known |= st->drops_known;
	if (st->tap != TAPFMT_NONE)
		sum->tap = st->tap;
	sum->tap_stamped += st->tap_stamped;
	sum->tap_consumed += st->tap_consumed;
	sum->tap_missing += st->tap_missing;
	sum->tap_bad += st->tap_bad;
	sum->tap_degraded += st->tap_degraded;
}

static void capset_close_current(struct capset *s)
{
	struct capset_src *src = &s->src[s->n - 1];
	struct cap_stats st;

	cap_stats(src->r, &st);
	capset_stats_add(&s->closed, &s->drops, &st);
	cap_close(src->r);
	src->r = NULL;
	s->open = false;
}

/* Open the next file, if there is one: 1, 0 (none yet), -EAGAIN (it is
 * too new to read), or another -errno after which the next call goes on. */
static int capset_take_next(struct capset *s)
{
	char name[256], path[4096], base[256], err[CAP_ERRBUF];
	struct cap_reader *r;
	long num;
	int ret;

	if (!s->fdir) {
		if (s->fst.files || s->fst.unreadable)
			return 0;
		snprintf(path, sizeof(path), "%s", s->fpath);
		snprintf(name, sizeof(name), "%s", s->fpath);
	} else {
		ret = capset_scan(s, !s->fst.files && !s->taken[0] &&
				  s->last_num == -2, name, sizeof(name));
		if (ret < 0)	/* cannot be read (removed?): nothing new */
			return 0;
		if (!ret)
			return 0;
		snprintf(path, sizeof(path), "%s/%s", s->fpath, name);
	}
	ret = cap_open_follow(&r, path, err);
	capset_base(name, base, sizeof(base));
	if (ret == -ENOENT && s->fdir && strcmp(base, name)) {
		/* Renamed from .part to its final name since the scan: the
		 * same file. */
		snprintf(path, sizeof(path), "%s/%s", s->fpath, base);
		ret = cap_open_follow(&r, path, err);
	}
	if (ret == -EAGAIN) {
		char keep[256], newer[256];
		bool done = s->stopping;

		/* Too short for its section header: a file being started,
		 * unless its writer is done with it — we stop, or a newer
		 * file exists (capd buffers the header until its first
		 * flush: killed before it, capd leaves an empty .part). */
		if (!done && s->fdir) {
			snprintf(keep, sizeof(keep), "%s", s->taken);
			snprintf(s->taken, sizeof(s->taken), "%s", base);
			done = capset_scan(s, false, newer, sizeof(newer)) == 1;
			snprintf(s->taken, sizeof(s->taken), "%s", keep);
		}
		if (!done)
			return -EAGAIN;
		snprintf(err, sizeof(err), "%.400s: ends before its section "
			 "header (its writer stopped)", path);
		ret = -EBADMSG;
	}
	num = capset_num(base);
	if (s->fdir) {
		if (num >= 0 && s->last_num >= 0) {
			if (num <= s->last_num) {
				/* A new capd: its drop counters start
				 * from zero, whatever they say first. */
				s->fst.restarts++;
				s->drops.base += s->drops.run;
				s->drops.run = 0;
			} else if (num > s->last_num + 1)
				s->fst.missed += (unsigned)(num - s->last_num - 1);
		}
		snprintf(s->taken, sizeof(s->taken), "%s", base);
		s->last_num = num;
	}
	if (ret == -ENOENT) {	/* removed between the scan and the open */
		s->fst.missed++;
		return ret;
	}
	if (ret) {
		s->fst.unreadable++;
		errbuf_set(s->last_err, CAP_ERRBUF, ret, "%s", err);
		if (!s->damaged++)
			errbuf_set(s->err, CAP_ERRBUF, ret, "%s", err);
		return ret;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->src = xrealloc(s->src, s->cap * sizeof(*s->src));
	}
	/* Closed files keep their slot (an index is a file, for the caller's
	 * tables) but not their reader. */
	memset(&s->src[s->n], 0, sizeof(s->src[0]));
	/* Its final name: capd renames a .part file as it closes it. */
	if (s->fdir)
		snprintf(path, sizeof(path), "%s/%s", s->fpath, base);
	s->src[s->n].path = xstrdup(path);
	s->src[s->n++].r = r;
	s->open = true;
	s->fst.files++;
	return 1;
}

static int capset_follow_next(struct capset *s, struct capset_packet *p)
{
	for (;;) {
		struct cap_reader *r;
		int rc;

		if (!s->open) {
			rc = capset_take_next(s);
			if (rc == 0 || rc == -EAGAIN) {
				s->fst.waiting = true;
				return s->stopping && rc == 0 ? 0 : -EAGAIN;
			}
			if (rc < 0)
				continue;	/* gone or not a capture: next */
		}
		r = s->src[s->n - 1].r;
		rc = cap_next(r, &p->pkt);
		if (rc == 1) {
			p->file = s->n - 1;
			s->fst.waiting = false;
			return 1;
		}
		if (rc == -EAGAIN) {
			char name[256];
			int newer;

			/* Done being written once a newer file exists (capd
			 * closes one before it creates the next) or we
			 * stop: read to its real end, then go on. Looked at
			 * only here, after the read came up short, so no
			 * byte written before the newer file is missed. */
			newer = s->stopping || !s->fdir ? s->stopping :
				capset_scan(s, false, name, sizeof(name)) == 1;
			if (newer) {
				cap_follow(r, false);
				continue;
			}
			s->fst.waiting = true;
			return -EAGAIN;
		}
		if (rc < 0) {
			errbuf_set(s->last_err, CAP_ERRBUF, rc, "%s",
				   cap_error(r));
			if (!s->damaged++)
				errbuf_set(s->err, CAP_ERRBUF, rc, "%s",
					   cap_error(r));
		}
		capset_close_current(s);
		if (!s->fdir && !s->stopping)
			return -EAGAIN;	/* one file, damaged: nothing more */
	}
}

int capset_follow(struct capset **out, const char *path, bool from_oldest,
		  char err[CAP_ERRBUF])
{
	struct capset *s;
	struct stat st;

	*out = NULL;
	err[0] = 0;
	if (stat(path, &st))
		return errbuf_set(err, CAP_ERRBUF, -errno, "%s: %s", path,
				  strerror(errno));
	s = xcalloc(1, sizeof(*s));
	s->last = -1;
	s->following = true;
	s->fpath = xstrdup(path);
	s->fdir = S_ISDIR(st.st_mode);
	/* -2: nothing taken yet and start at the newest file. */
	s->last_num = from_oldest ? -1 : -2;
	*out = s;
	return 0;
}

void capset_stop(struct capset *s)
{
	s->stopping = true;
	if (s->open)
		cap_follow(s->src[s->n - 1].r, false);
}

const struct capset_follow_stats *capset_follow_stats(const struct capset *s)
{
	return s->following ? &s->fst : NULL;
}

void capset_stats(const struct capset *s, struct cap_stats *sum)
{
	struct capset_drops d = s->drops;

	*sum = s->closed;
	for (unsigned i = 0; i < s->n; i++) {
		struct cap_stats st;

		if (!s->src[i].r)
			continue;
		cap_stats(s->src[i].r, &st);
		capset_stats_add(sum, &d, &st);
	}
	sum->drops = d.base + d.run;
}

bool capset_heartbeat(const struct capset *s, int64_t *ts_ns, unsigned *file,
		      uint32_t *iface)
{
	struct cap_stats st;

	if (!s->following || !s->open)
		return false;
	cap_stats(s->src[s->n - 1].r, &st);
	if (!st.heartbeats)
		return false;
	*ts_ns = st.heartbeat_ns;
	*file = s->n - 1;
	*iface = st.heartbeat_iface;
	return true;
}

unsigned capset_files(const struct capset *s)
{
	return s->n;
}

const struct cap_reader *capset_reader(const struct capset *s, unsigned file)
{
	return file < s->n ? s->src[file].r : NULL;
}

const char *capset_path(const struct capset *s, unsigned file)
{
	return file < s->n ? s->src[file].path : NULL;
}

const char *capset_error(const struct capset *s)
{
	return s->err;
}

const char *capset_last_error(const struct capset *s)
{
	return s->last_err;
}

const char *capset_warning(const struct capset *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->src[i].r && cap_warning(s->src[i].r)[0])
			return cap_warning(s->src[i].r);
	return "";
}

unsigned capset_damaged(const struct capset *s)
{
	return s->damaged;
}

void capset_close(struct capset *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++) {
		cap_close(s->src[i].r);
		free(s->src[i].path);
	}
	free(s->src);
	free(s->fpath);
	heap_destroy(s->heap);
	free(s);
}
