/* pcapng.c — the pcapng writer; see pcapng.h. */
#include "files/pcapng.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "files/pcapng_format.h"
#include "stamp/ts.h"
#include "base/wholefile.h"
#include "base/xalloc.h"

#define PCAPNG_BUF (1u << 20)
/* Largest packet body kept: the block must fit the buffer with room for its
 * headers and options. */
#define PCAPNG_MAX_SNAP 262144u

struct pcapng_writer {
	struct wholefile wf;	/* PATH.part while writing; write to wf.fd */
	unsigned char *buf;
	size_t used;
	uint64_t written;	/* bytes already in the file */
	uint64_t lost;		/* packets taken, then kept from the file by a
				 * write error */
	uint32_t nifaces;
	uint32_t snaplen[PCAPNG_MAX_IFACES];
	int err;		/* first write error, sticky */
};

/* A write failed after off bytes of the buffer reached the file: what is
 * there ends with whole blocks (the tail of a block cut short is cut off
 * again, so the file reads to its end), and the packets of every block not
 * wholly written are counted lost. The buffer is dropped: the error is
 * sticky. */
static void pcapng_cut(struct pcapng_writer *w, size_t off)
{
	size_t b = 0, whole = 0;
	uint32_t type, len;

	while (b + 8 <= w->used) {
		memcpy(&type, w->buf + b, 4);
		memcpy(&len, w->buf + b + 4, 4);
		if (len < 12 || b + len > w->used)
			break;		/* cannot happen: blocks are whole */
		if (b + len <= off)
			whole = b + len;
		else if (type == PCAPNG_BT_EPB)
			w->lost++;
		b += len;
	}
	if (off > whole && !ftruncate(w->wf.fd, (off_t)(w->written - (off - whole))))
		w->written -= off - whole;
	w->used = 0;
}

static int pcapng_drain(struct pcapng_writer *w)
{
	size_t off = 0;

	while (off < w->used) {
		ssize_t n = write(w->wf.fd, w->buf + off, w->used - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!w->err)
				w->err = -errno;
			pcapng_cut(w, off);
			return w->err;
		}
		off += (size_t)n;
		/* Counted as it reaches the file: after a failure part way,
		 * close must know that the file holds something. */
		w->written += (uint64_t)n;
	}
	w->used = 0;
	return 0;
}

/* Room for len more bytes in the buffer. */
static unsigned char *pcapng_room(struct pcapng_writer *w, size_t len)
{
	if (w->used + len > PCAPNG_BUF && pcapng_drain(w))
		return NULL;
	return w->buf + w->used;
}

static size_t pcapng_pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Options are built into a small scratch area, then copied in one go. */
struct pcapng_opts {
	unsigned char b[1024];
	size_t n;
};

static void pcapng_opt(struct pcapng_opts *o, uint16_t code, const void *v,
		       size_t len)
{
	uint16_t h[2] = { code, (uint16_t)len };
	size_t padded = pcapng_pad4(len);

	if (len > 0xffff || o->n + 4 + padded + 4 > sizeof(o->b))
		return;		/* our own options are short: cannot happen */
	memcpy(o->b + o->n, h, 4);
	if (len)
		memcpy(o->b + o->n + 4, v, len);
	memset(o->b + o->n + 4 + len, 0, padded - len);
	o->n += 4 + padded;
}

static void pcapng_opt_str(struct pcapng_opts *o, uint16_t code, const char *s)
{
	if (s && *s)
		pcapng_opt(o, code, s, strlen(s));
}

static void pcapng_opt_end(struct pcapng_opts *o)
{
	if (o->n)
		pcapng_opt(o, PCAPNG_OPT_ENDOFOPT, NULL, 0);
}

/* Write a block: type, total length, fixed body, data (padded), options. */
static int pcapng_block(struct pcapng_writer *w, uint32_t type,
			const void *fixed, size_t flen, const void *data,
			size_t dlen, const struct pcapng_opts *o)
{
	size_t total = 12 + flen + pcapng_pad4(dlen) + (o ? o->n : 0);
	uint32_t hdr[2] = { type, (uint32_t)total };
	uint32_t trailer = (uint32_t)total;
	unsigned char *p;

	if (w->err)
		return w->err;
	p = pcapng_room(w, total);
	if (!p)
		return w->err;
	memcpy(p, hdr, 8);
	p += 8;
	if (flen)
		memcpy(p, fixed, flen);
	p += flen;
	if (dlen) {
		memcpy(p, data, dlen);
		memset(p + dlen, 0, pcapng_pad4(dlen) - dlen);
		p += pcapng_pad4(dlen);
	}
	if (o && o->n) {
		memcpy(p, o->b, o->n);
		p += o->n;
	}
	memcpy(p, &trailer, 4);
	w->used += total;
	return 0;
}

int pcapng_describe(const struct pcapng_source *src, char *buf, size_t len)
{
	int n = snprintf(buf, len, "tapless: source=%s phc=%d timescale=%s%s%s",
			 src->hw ? "hw" : "sw", src->phc,
			 ts_timescale_name((enum ts_timescale)src->timescale),
			 src->note[0] ? "; " : "", src->note);

	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int pcapng_parse_description(const char *desc, struct pcapng_source *src)
{
	static const enum ts_timescale scales[] = {
		TS_SCALE_UTC, TS_SCALE_PHC, TS_SCALE_TAI, TS_SCALE_UNKNOWN,
	};
	char source[8], scale[16];
	int phc, used = 0;
	const char *rest;

	if (sscanf(desc, "tapless: source=%7[a-z] phc=%d timescale=%15[a-z]%n",
		   source, &phc, scale, &used) != 3 || !used)
		return -EINVAL;
	if (strcmp(source, "hw") && strcmp(source, "sw"))
		return -EINVAL;
	memset(src, 0, sizeof(*src));
	src->hw = !strcmp(source, "hw");
	src->phc = phc;
	src->timescale = TS_SCALE_UNKNOWN;
	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++)
		if (!strcmp(scale, ts_timescale_name(scales[i])))
			src->timescale = scales[i];
	rest = desc + used;
	if (!strncmp(rest, "; ", 2))
		snprintf(src->note, sizeof(src->note), "%s", rest + 2);
	return 0;
}

int pcapng_open(struct pcapng_writer **out, const char *path,
		const struct pcapng_section *sec)
{
	struct pcapng_writer *w;
	struct pcapng_opts o = { .n = 0 };
	struct utsname un;
	char comment[300], hw[80], os[200];
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int64_t section_len;
	} __attribute__((packed)) shb = { PCAPNG_BYTE_ORDER_MAGIC, 1, 0, -1 };
	int err;

	w = xcalloc(1, sizeof(*w));
	/* O_EXCL: two writers on one name would interleave blocks. */
	err = wholefile_open_fd(&w->wf, path);
	if (err)
		goto fail;
	w->buf = xmalloc(PCAPNG_BUF);

	if (uname(&un))
		memset(&un, 0, sizeof(un));
	snprintf(hw, sizeof(hw), "%s", un.machine);
	snprintf(os, sizeof(os), "%s %s", un.sysname, un.release);
	pcapng_opt_str(&o, PCAPNG_SHB_HARDWARE, sec->hardware ? sec->hardware : hw);
	pcapng_opt_str(&o, PCAPNG_SHB_OS, sec->os ? sec->os : os);
	pcapng_opt_str(&o, PCAPNG_SHB_USERAPPL, sec->userappl ? sec->userappl : "tapless");
	if (sec->hostname) {
		snprintf(comment, sizeof(comment), "host %s", sec->hostname);
		pcapng_opt_str(&o, PCAPNG_OPT_COMMENT, comment);
	}
	pcapng_opt_end(&o);
	err = pcapng_block(w, PCAPNG_BT_SHB, &shb, sizeof(shb), NULL, 0, &o);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	/* Removes the .part only when this writer created it. */
	wholefile_end(&w->wf, WHOLEFILE_DISCARD, err);
	free(w->buf);
	free(w);
	return err;
}

int pcapng_add_iface(struct pcapng_writer *w, const struct pcapng_iface *ifc,
		     uint32_t *id)
{
	char desc[200];

	if (pcapng_describe(&ifc->src, desc, sizeof(desc)))
		return -EINVAL;
	return pcapng_add_iface_desc(w, ifc, desc, id);
}

int pcapng_add_iface_desc(struct pcapng_writer *w,
			  const struct pcapng_iface *ifc, const char *desc,
			  uint32_t *id)
{
	struct pcapng_opts o = { .n = 0 };
	uint8_t resol = 9;	/* 10^-9 s */
	struct {
		uint16_t linktype, reserved;
		uint32_t snaplen;
	} idb = { ifc->linktype, 0, ifc->snaplen };
	uint32_t snap = ifc->snaplen && ifc->snaplen < PCAPNG_MAX_SNAP ?
			ifc->snaplen : PCAPNG_MAX_SNAP;
	int err;

	if (w->nifaces >= PCAPNG_MAX_IFACES)
		return -ENOSPC;
	if (strlen(desc) >= 200)	/* as pcapng_add_iface() allows */
		return -EINVAL;
	idb.snaplen = snap;
	pcapng_opt_str(&o, PCAPNG_IF_NAME, ifc->name);
	pcapng_opt_str(&o, PCAPNG_IF_DESCRIPTION, desc);
	pcapng_opt(&o, PCAPNG_IF_TSRESOL, &resol, 1);
	if (ifc->sender) {
		/* Native byte order, as the section's (pcapng_open()). */
		struct {
			uint32_t pen;
			uint16_t kind, reserved;
			uint32_t flags;
		} cust = { PCAPNG_TAPLESS_PEN, PCAPNG_TAPLESS_IF_FLAGS, 0,
			   PCAPNG_TAPLESS_IF_SENDER };

		_Static_assert(sizeof(cust) == PCAPNG_TAPLESS_IF_FLAGS_LEN,
			       "tapless interface flags option");
		pcapng_opt(&o, PCAPNG_OPT_CUSTOM_BIN, &cust, sizeof(cust));
	}
	pcapng_opt_end(&o);
	err = pcapng_block(w, PCAPNG_BT_IDB, &idb, sizeof(idb), NULL, 0, &o);
	if (err)
		return err;
	w->snaplen[w->nifaces] = snap;
	*id = w->nifaces++;
	return 0;
}

int pcapng_write_packet(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
			const void *data, uint32_t caplen, uint32_t origlen,
			enum pcapng_dir dir)
{
	return pcapng_write_packet_id(w, id, ts_ns, data, caplen, origlen, dir,
				      NULL);
}

int pcapng_write_packet_id(struct pcapng_writer *w, uint32_t id,
			   int64_t ts_ns, const void *data, uint32_t caplen,
			   uint32_t origlen, enum pcapng_dir dir,
			   const uint64_t *packet_id)
{
	uint64_t ts = (uint64_t)ts_ns;
	uint32_t flags = (uint32_t)dir & 3;
	/* Header and fixed body: type, length, interface, stamp (high,
	 * low), captured and original length. */
	uint32_t h[7];
	size_t pad, olen, total;
	unsigned char *p;

	if (id >= w->nifaces)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (caplen > w->snaplen[id])
		caplen = w->snaplen[id];
	/* Every frame comes through here: the block is built in the write
	 * buffer in one pass, the way pcapng_block() lays it out (its
	 * options as pcapng_opt() would: epb_flags, epb_packetid, end of
	 * options), without the scratch copy of the options. */
	pad = pcapng_pad4(caplen);
	olen = (flags ? 8 : 0) + (packet_id ? 12 : 0);
	if (olen)
		olen += 4;
	total = 12 + sizeof(h) - 8 + pad + olen;
	p = pcapng_room(w, total);
	if (!p)
		return w->err;
	h[0] = PCAPNG_BT_EPB;
	h[1] = (uint32_t)total;
	h[2] = id;
	h[3] = (uint32_t)(ts >> 32);
	h[4] = (uint32_t)ts;
	h[5] = caplen;
	h[6] = origlen < caplen ? caplen : origlen;
	memcpy(p, h, sizeof(h));
	p += sizeof(h);
	memcpy(p, data, caplen);
	memset(p + caplen, 0, pad - caplen);
	p += pad;
	if (flags) {
		uint16_t oh[2] = { PCAPNG_EPB_FLAGS, 4 };

		memcpy(p, oh, 4);
		memcpy(p + 4, &flags, 4);
		p += 8;
	}
	if (packet_id) {
		uint16_t oh[2] = { PCAPNG_EPB_PACKETID, 8 };

		memcpy(p, oh, 4);
		memcpy(p + 4, packet_id, 8);
		p += 12;
	}
	if (olen) {
		memset(p, 0, 4);	/* opt_endofopt */
		p += 4;
	}
	memcpy(p, &h[1], 4);
	w->used += total;
	return 0;
}

int pcapng_write_stats(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
		       uint64_t recv, uint64_t drop)
{
	return pcapng_write_event(w, id, ts_ns, recv, drop, NULL);
}

int pcapng_write_event(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
		       uint64_t recv, uint64_t drop, const char *comment)
{
	uint64_t ts = (uint64_t)ts_ns;
	struct pcapng_opts o = { .n = 0 };
	struct {
		uint32_t ifid, ts_high, ts_low;
	} isb = { id, (uint32_t)(ts >> 32), (uint32_t)ts };

	if (id >= w->nifaces || (comment && strlen(comment) > 200))
		return -EINVAL;
	pcapng_opt_str(&o, PCAPNG_OPT_COMMENT, comment);
	if (recv != ~0ULL)
		pcapng_opt(&o, PCAPNG_ISB_IFRECV, &recv, 8);
	if (drop != ~0ULL)
		pcapng_opt(&o, PCAPNG_ISB_IFDROP, &drop, 8);
	pcapng_opt_end(&o);
	return pcapng_block(w, PCAPNG_BT_ISB, &isb, sizeof(isb), NULL, 0, &o);
}

int pcapng_write_heartbeat(struct pcapng_writer *w, uint32_t id,
			   int64_t ts_ns)
{
	return pcapng_write_event(w, id, ts_ns, ~0ULL, ~0ULL, PCAPNG_HEARTBEAT);
}

int pcapng_flush(struct pcapng_writer *w)
{
	return w->err ? w->err : pcapng_drain(w);
}

uint64_t pcapng_bytes(const struct pcapng_writer *w)
{
	return w->written + w->used;
}

uint64_t pcapng_lost(const struct pcapng_writer *w)
{
	return w->lost;
}

int pcapng_close(struct pcapng_writer *w, bool discard)
{
	enum wholefile_end how = WHOLEFILE_KEEP_PART;
	int err = 0;

	if (!w)
		return 0;
	if (!discard)
		err = pcapng_flush(w);
	/* A file that never got a byte to disk (full disk) holds nothing
	 * worth keeping; one with whole blocks stays under .part, cut back
	 * to its last whole block (pcapng_cut()), never under its final
	 * name: that name says the file holds everything it was given.
	 * Synced before the rename (wholefile). */
	if (discard || (err && !w->written))
		how = WHOLEFILE_DISCARD;
	err = wholefile_end(&w->wf, how, err);
	free(w->buf);
	free(w);
	return err;
}
