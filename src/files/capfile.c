/* capfile.c — reading captures: the common part and the choice of reader
 * (see capfile.h). */
#include "files/capfile_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"
#include "base/xalloc.h"
#include "stamp/ts.h"

/* Frames looked at to detect a tap format: enough for a trailer that is on
 * every frame; a keyframe (ExaLINK, once a second) only shows this early
 * in a slow feed, so a busy one needs its format named. */
#define CAP_DETECT_FRAMES 64

int cap_fail(struct cap_reader *r, uint64_t off, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return errbuf_set(r->err, CAP_ERRBUF, -EBADMSG, "%s: offset %llu: %s",
			  r->path, (unsigned long long)off, what);
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
		       char err[CAP_ERRBUF], bool follow)
{
	struct cap_reader *r = xcalloc(1, sizeof(*r));
	uint32_t magic = 0;
	size_t got;
	int rc;

	*out = NULL;
	err[0] = 0;
	r->path = xstrdup(path);
	r->follow = follow;
	r->tap = follow ? TAPFMT_NONE : TAPFMT_AUTO;
	memset(r->isb_drop, 0xff, sizeof(r->isb_drop));
	r->f = fopen(path, "rb");
	if (!r->f) {
		rc = errbuf_set(r->err, CAP_ERRBUF, -errno, "%s: %s", path,
				strerror(errno));
		goto fail;
	}
	got = fread(&magic, 1, 4, r->f);
	if (got != 4 && follow) {
		rc = -EAGAIN;	/* just created: its header is on the way */
		goto fail;
	}
	if (got != 4) {
		rc = cap_fail(r, 0, "too short for a capture file");
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
		rc = cap_fail(r, 0, "not a pcap or pcapng file, nor ERF "
			       "(magic 0x%08x)", magic);
		goto fail;
	}
	rc = r->ops->open(r);
	if (rc)
		goto fail;
	*out = r;
	return 0;
fail:
	if (rc == -EAGAIN)
		errbuf_set(err, CAP_ERRBUF, rc, "%s: not written yet", path);
	else if (r->err[0])
		errbuf_set(err, CAP_ERRBUF, rc, "%s", r->err);
	else
		errbuf_set(err, CAP_ERRBUF, rc, "%s: %s", path, strerror(-rc));
	cap_close(r);
	return rc;
}

int cap_open(struct cap_reader **out, const char *path, char err[CAP_ERRBUF])
{
	return cap_open_as(out, path, err, false);
}

int cap_open_follow(struct cap_reader **out, const char *path,
		    char err[CAP_ERRBUF])
{
	return cap_open_as(out, path, err, true);
}

void cap_follow(struct cap_reader *r, bool on)
{
	r->follow = on && r->ops->format == CAP_PCAPNG;
}

int cap_set_tapfmt(struct cap_reader *r, enum tapfmt_kind kind)
{
	if (r->started)
		return -EBUSY;
	r->tap = kind;
	return 0;
}

/* Whether pkt is a frame a tap format may have stamped: Ethernet, from an
 * interface tapless did not describe (tapless's own files carry hosts'
 * stamps). */
static bool cap_tap_frame(const struct cap_reader *r,
			  const struct cap_packet *pkt)
{
	const struct cap_iface *ci = cap_iface(r, pkt->iface);

	return ci && ci->linktype == 1 && !ci->src_known;
}

static void cap_tap_frame_of(const struct cap_packet *pkt,
			     struct tapfmt_frame *f)
{
	f->data = pkt->data;
	f->caplen = pkt->caplen;
	f->origlen = pkt->origlen;
	f->trailer_off = tapfmt_trailer_off(pkt->data, pkt->caplen);
	f->record_ns = pkt->ts_ns;
}

/* Read ahead up to CAP_DETECT_FRAMES packets, copied (their data would not
 * outlive the next read), and let the Ethernet ones pick the format. */
static void cap_tap_detect(struct cap_reader *r)
{
	struct tapfmt_detect *d = tapfmt_detect_new();
	size_t cap = 4096;

	r->ahead = xcalloc(CAP_DETECT_FRAMES, sizeof(*r->ahead));
	r->ahead_buf = xmalloc(cap);	/* never NULL, even for empty frames */
	r->ahead_end = 1;
	while (r->nahead < CAP_DETECT_FRAMES) {
		struct cap_ahead *a = &r->ahead[r->nahead];
		int n = r->ops->next(r, &a->pkt);

		if (n != 1) {
			r->ahead_end = n;
			break;
		}
		if (cap_tap_frame(r, &a->pkt)) {
			struct tapfmt_frame f;

			cap_tap_frame_of(&a->pkt, &f);
			tapfmt_detect_feed(d, &f);
		}
		if (r->ahead_len + a->pkt.caplen > cap) {
			cap = (r->ahead_len + a->pkt.caplen) * 2;
			r->ahead_buf = xrealloc(r->ahead_buf, cap);
		}
		memcpy(r->ahead_buf + r->ahead_len, a->pkt.data, a->pkt.caplen);
		a->data_off = r->ahead_len;
		r->ahead_len += a->pkt.caplen;
		r->nahead++;
	}
	r->tap = tapfmt_detect_result(d);
	if (r->tap == TAPFMT_NONE) {
		unsigned matched, frames;
		enum tapfmt_kind k = tapfmt_detect_hint(d, &matched, &frames);

		/* Too few to trust, too many to keep quiet about. */
		if (matched)
			snprintf(r->warning, sizeof(r->warning), "%s: %u of its "
				 "first %u frames look like %s stamps, too few to "
				 "read it as such: its records' stamps are taken "
				 "(name the format to read them)", r->path,
				 matched, frames, tapfmt_name(k));
	}
	tapfmt_detect_free(d);
}

/* The next packet as the reader gives it: from what detection read ahead
 * first, then the file. */
static int cap_read(struct cap_reader *r, struct cap_packet *pkt)
{
	if (r->next_ahead < r->nahead) {
		*pkt = r->ahead[r->next_ahead].pkt;
		pkt->data = r->ahead_buf + r->ahead[r->next_ahead].data_off;
		r->next_ahead++;
		return 1;
	}
	if (r->ahead) {
		int end = r->ahead_end;

		free(r->ahead);
		free(r->ahead_buf);
		r->ahead = NULL;
		r->ahead_buf = NULL;
		r->nahead = r->next_ahead = 0;
		if (end != 1)
			return end;
	}
	return r->ops->next(r, pkt);
}

/* Cut what the device added: a tail off the end, a header from inside
 * (copied, the reader's buffer is not ours to move). */
static void cap_tap_cut(struct cap_reader *r, struct cap_packet *pkt,
			const struct tapfmt_stamp *s)
{
	uint32_t tail = s->tail_len, head = s->head_len;

	pkt->caplen -= tail;
	pkt->origlen = pkt->origlen > tail ? pkt->origlen - tail : 0;
	if (!head)
		return;
	if (pkt->caplen > r->cut_cap) {
		r->cut_cap = pkt->caplen;
		r->cut = xrealloc(r->cut, r->cut_cap);
	}
	memcpy(r->cut, pkt->data, s->head_off);
	memcpy(r->cut + s->head_off, pkt->data + s->head_off + head,
	       pkt->caplen - s->head_off - head);
	pkt->data = r->cut;
	pkt->caplen -= head;
	pkt->origlen = pkt->origlen > head ? pkt->origlen - head : 0;
}

/* A frame of the format in force: 1 stamped (or not a tap frame at all),
 * 0 to leave out (a keyframe taken in, no stamp, a bad one). */
static int cap_tap_apply(struct cap_reader *r, struct cap_packet *pkt)
{
	struct tapfmt_stamp s;
	struct tapfmt_frame f;
	char why[TAPFMT_WHYBUF] = "";
	int rc;

	if (!cap_tap_frame(r, pkt))
		return 1;
	r->records++;
	memset(&s, 0, sizeof(s));
	cap_tap_frame_of(pkt, &f);
	rc = r->tap_ops->decode(r->tap_state, &f, &s, why);
	if (rc == TAPFMT_STAMPED && (s.tail_len > pkt->caplen ||
				      s.head_off + s.head_len > pkt->caplen - s.tail_len)) {
		rc = -EBADMSG;
		snprintf(why, sizeof(why), "cut past the frame's end");
	}
	if (rc == TAPFMT_STAMPED) {
		cap_tap_cut(r, pkt, &s);
		pkt->tap = r->tap;
		pkt->record_ns = pkt->ts_ns;
		pkt->ts_ns = s.ts_ns;
		pkt->ps = s.ps;
		pkt->timescale = s.timescale;
		pkt->degraded = s.degraded;
		pkt->has_port = s.has_port;
		pkt->device = s.device;
		pkt->port = s.port;
		r->stats.tap_stamped++;
		r->stats.tap_degraded += s.degraded;
		return 1;
	}
	if (rc == TAPFMT_CONSUMED) {
		r->stats.tap_consumed++;
		return 0;
	}
	if (rc == TAPFMT_NOT_MINE)
		r->stats.tap_missing++;
	else
		r->stats.tap_bad++;
	if (!r->warning[0])
		snprintf(r->warning, sizeof(r->warning),
			 "%s: record %llu (offset %llu): %s: %s", r->path,
			 (unsigned long long)r->records,
			 (unsigned long long)pkt->offset, r->tap_ops->name,
			 why[0] ? why : "no stamp of the format");
	return 0;
}

/* The format in force from the first packet on: detected, or as set. */
static void cap_tap_start(struct cap_reader *r)
{
	r->started = true;
	if (r->tap == TAPFMT_AUTO)
		cap_tap_detect(r);
	r->tap_ops = tapfmt_ops(r->tap);
	if (!r->tap_ops)
		r->tap = TAPFMT_NONE;
	else if (r->tap_ops->state_size)
		r->tap_state = xcalloc(1, r->tap_ops->state_size);
	r->stats.tap = r->tap;
}

int cap_next(struct cap_reader *r, struct cap_packet *pkt)
{
	int n;

	if (!r->started)
		cap_tap_start(r);
	for (;;) {
		n = cap_read(r, pkt);
		if (n != 1)
			return n;
		pkt->tap = TAPFMT_NONE;
		pkt->record_ns = pkt->ts_ns;
		pkt->ps = 0;
		pkt->timescale = TS_SCALE_UNKNOWN;
		pkt->degraded = pkt->has_port = false;
		pkt->device = pkt->port = 0;
		if (!r->tap_ops || cap_tap_apply(r, pkt))
			break;
	}
	r->stats.packets++;
	return 1;
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
	return r->err;
}

const char *cap_warning(const struct cap_reader *r)
{
	return r->warning;
}

void cap_close(struct cap_reader *r)
{
	if (!r)
		return;
	if (r->ops)	/* NULL when cap_open() failed before choosing */
		r->ops->close(r);
	if (r->f)
		fclose(r->f);
	free(r->ahead);
	free(r->ahead_buf);
	free(r->cut);
	free(r->tap_state);
	free(r->ifaces);
	free(r->path);
	free(r);
}
