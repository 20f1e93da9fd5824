/* capfile.c — reading captures: the common part and the choice of reader
 * (see capfile.h). */
#include "files/capfile_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

int cap_fail(struct cap_reader *r, uint64_t off, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->error, sizeof(r->error), "%s: offset %llu: %s", r->path,
		 (unsigned long long)off, what);
	return -EBADMSG;
}

struct cap_iface *cap_add_iface(struct cap_reader *r, uint32_t *id)
{
	if (r->nifaces >= PCAPNG_MAX_IFACES * 4)
		return NULL;
	if (r->nifaces == r->cap_ifaces) {
		r->cap_ifaces = r->cap_ifaces ? r->cap_ifaces * 2 : 4;
		r->ifaces = xrealloc(r->ifaces, r->cap_ifaces * sizeof(*r->ifaces));
	}
	memset(&r->ifaces[r->nifaces], 0, sizeof(r->ifaces[0]));
	*id = r->nifaces;
	return &r->ifaces[r->nifaces++];
}

/* ERF has no magic number: its first records must look like ERF. The
 * file is left at its start. */
static bool cap_is_erf(struct cap_reader *r)
{
	unsigned char *p = xmalloc(CAP_ERF_PROBE);
	size_t got = fread(p, 1, CAP_ERF_PROBE, r->f);
	bool erf = cap_erf_probe(p, got);

	free(p);
	rewind(r->f);
	return erf;
}

static int cap_open_as(struct cap_reader **out, const char *path,
		       char errbuf[CAP_ERRBUF], bool follow)
{
	struct cap_reader *r = xcalloc(1, sizeof(*r));
	uint32_t magic = 0;
	size_t got;
	int err;

	*out = NULL;
	errbuf[0] = 0;
	r->path = xstrdup(path);
	r->follow = follow;
	memset(r->isb_drop, 0xff, sizeof(r->isb_drop));
	r->f = fopen(path, "rb");
	if (!r->f) {
		err = -errno;
		snprintf(r->error, sizeof(r->error), "%s: %s", path, strerror(errno));
		goto fail;
	}
	got = fread(&magic, 1, 4, r->f);
	if (got != 4 && follow) {
		err = -EAGAIN;	/* just created: its header is on the way */
		goto fail;
	}
	if (got != 4) {
		err = cap_fail(r, 0, "too short for a capture file");
		goto fail;
	}
	rewind(r->f);
	switch (magic) {
	case PCAPNG_BT_SHB:
		r->ops = &cap_pcapng_ops;
		break;
	case 0xa1b2c3d4: case 0xd4c3b2a1:	/* pcap, microseconds */
	case 0xa1b23c4d: case 0x4d3cb2a1:	/* pcap, nanoseconds */
		r->ops = &cap_pcap_ops;
		r->follow = false;
		break;
	default:
		if (cap_is_erf(r)) {
			r->ops = &cap_erf_ops;
			r->follow = false;
			break;
		}
		/* Worded as before ERF came: scripts grep for it. */
		err = cap_fail(r, 0, "not a pcap or pcapng file, nor ERF "
			       "(magic 0x%08x)", magic);
		goto fail;
	}
	err = r->ops->open(r);
	if (err)
		goto fail;
	*out = r;
	return 0;
fail:
	if (err == -EAGAIN)
		snprintf(errbuf, CAP_ERRBUF, "%s: not written yet", path);
	else if (r->error[0])
		snprintf(errbuf, CAP_ERRBUF, "%s", r->error);
	else
		snprintf(errbuf, CAP_ERRBUF, "%s: %s", path, strerror(-err));
	cap_close(r);
	return err;
}

int cap_open(struct cap_reader **out, const char *path, char errbuf[CAP_ERRBUF])
{
	return cap_open_as(out, path, errbuf, false);
}

int cap_open_follow(struct cap_reader **out, const char *path,
		    char errbuf[CAP_ERRBUF])
{
	return cap_open_as(out, path, errbuf, true);
}

void cap_follow(struct cap_reader *r, bool on)
{
	r->follow = on && r->ops->format == CAP_PCAPNG;
}

int cap_next(struct cap_reader *r, struct cap_packet *pkt)
{
	int n = r->ops->next(r, pkt);

	if (n == 1)
		r->stats.packets++;
	return n;
}

const struct cap_iface *cap_iface(const struct cap_reader *r, uint32_t id)
{
	return id < r->nifaces ? &r->ifaces[id] : NULL;
}

uint32_t cap_iface_count(const struct cap_reader *r)
{
	return r->nifaces;
}

enum cap_format cap_format(const struct cap_reader *r)
{
	return r->ops->format;
}

const char *cap_path(const struct cap_reader *r)
{
	return r->path;
}

void cap_stats(const struct cap_reader *r, struct cap_stats *st)
{
	*st = r->stats;
	st->drops = 0;
	st->drops_known = false;
	for (uint32_t i = 0; i < r->nifaces; i++)
		if (r->isb_drop[i] != ~0ULL) {
			st->drops += r->isb_drop[i];
			st->drops_known = true;
		}
}

const char *cap_host(const struct cap_reader *r)
{
	return r->host;
}

const char *cap_error(const struct cap_reader *r)
{
	return r->error;
}

void cap_close(struct cap_reader *r)
{
	if (!r)
		return;
	if (r->ops)	/* NULL when cap_open() failed before choosing */
		r->ops->close(r);
	if (r->f)
		fclose(r->f);
	free(r->ifaces);
	free(r->path);
	free(r);
}
