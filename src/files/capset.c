/* capset.c — see capset.h. */
#include "files/capset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/heap.h"
#include "base/xalloc.h"

struct capset_src {
	struct cap_reader *r;
	struct cap_packet next;	/* read ahead, valid while held */
	bool live;		/* next holds a packet not yet handed out */
};

struct capset {
	struct capset_src *src;
	unsigned n, cap;
	struct heap *heap;	/* unsigned indexes of live sources, min ts first */
	int last;		/* source handed out last, to advance; -1 */
	char error[CAP_ERRBUF];
	unsigned damaged;
};

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
			snprintf(s->error, sizeof(s->error), "%s",
				 cap_error(s->src[i].r));
	}
	s->src[i].live = rc == 1;
	return rc == 1;
}

static int capset_add(struct capset *s, const char *path, char *errbuf)
{
	struct cap_reader *r;
	int err = cap_open(&r, path, errbuf);

	if (err)
		return err;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->src = xrealloc(s->src, s->cap * sizeof(*s->src));
	}
	memset(&s->src[s->n], 0, sizeof(s->src[0]));
	s->src[s->n++].r = r;
	return 0;
}

static bool capset_wanted(const char *name)
{
	size_t n = strlen(name);
	static const char *const ends[] = { ".pcapng", ".pcap", ".part" };

	if (name[0] == '.')
		return false;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t k = strlen(ends[i]);

		if (n > k && !strcmp(name + n - k, ends[i]))
			return true;
	}
	return false;
}

static int capset_add_dir(struct capset *s, const char *dir, char *errbuf)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), err = 0, added = 0;

	if (n < 0) {
		snprintf(errbuf, CAP_ERRBUF, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];

		if (!err && capset_wanted(names[i]->d_name)) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			err = capset_add(s, path, errbuf);
			added += !err;
		}
		free(names[i]);
	}
	free(names);
	if (!err && !added) {
		snprintf(errbuf, CAP_ERRBUF, "%s: no .pcapng, .pcap or .part file", dir);
		err = -ENOENT;
	}
	return err;
}

int capset_open(struct capset **out, const char *const *paths, unsigned n,
		char errbuf[CAP_ERRBUF])
{
	struct capset *s = xcalloc(1, sizeof(*s));
	int err = 0;

	errbuf[0] = 0;
	*out = NULL;
	s->last = -1;
	for (unsigned i = 0; !err && i < n; i++) {
		struct stat st;

		if (stat(paths[i], &st)) {
			err = -errno;
			snprintf(errbuf, CAP_ERRBUF, "%s: %s", paths[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			err = capset_add_dir(s, paths[i], errbuf);
		} else {
			err = capset_add(s, paths[i], errbuf);
		}
	}
	if (err) {
		capset_close(s);
		return err;
	}
	err = heap_create(&s->heap, sizeof(unsigned), s->n, capset_less, s);
	if (err) {
		capset_close(s);
		return err;
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

unsigned capset_files(const struct capset *s)
{
	return s->n;
}

const struct cap_reader *capset_reader(const struct capset *s, unsigned file)
{
	return file < s->n ? s->src[file].r : NULL;
}

const char *capset_error(const struct capset *s)
{
	return s->error;
}

unsigned capset_damaged(const struct capset *s)
{
	return s->damaged;
}

void capset_close(struct capset *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		cap_close(s->src[i].r);
	free(s->src);
	heap_destroy(s->heap);
	free(s);
}
