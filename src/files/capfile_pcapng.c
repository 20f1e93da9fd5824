/* capfile_pcapng.c — the pcapng reader: every section, both byte orders,
 * any if_tsresol; unknown blocks and options skipped; every length checked
 * against the block before it is used. */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "files/capfile_private.h"
#include "base/xalloc.h"

/* A mapped file's pages already read are let go every CAP_MAP_DROP bytes,
 * all but the last CAP_MAP_MARGIN (cap_map_drop()). */
#define CAP_MAP_DROP (8u << 20)
#define CAP_MAP_MARGIN (1u << 20)

/* A number in the section's byte order. */
static uint16_t rd16(const struct cap_reader *r, const unsigned char *p)
{
	return r->big ? bytes_get_be16(p) : bytes_get_le16(p);
}

static uint32_t rd32(const struct cap_reader *r, const unsigned char *p)
{
	return r->big ? bytes_get_be32(p) : bytes_get_le32(p);
}

static uint64_t rd64(const struct cap_reader *r, const unsigned char *p)
{
	return r->big ? bytes_get_be64(p) : bytes_get_le64(p);
}

static uint32_t pad4(uint32_t n)
{
	return (n + 3) & ~3u;
}

/* Walk the options in [p, end). For each, call fn; stop at opt_endofopt or
 * at the end. -EBADMSG when one runs past the block. */
static int cap_options(struct cap_reader *r, uint64_t boff,
		       const unsigned char *base, const unsigned char *p,
		       const unsigned char *end,
		       void (*fn)(struct cap_reader *, uint16_t, const unsigned char *,
				  uint16_t, void *),
		       void *arg)
{
	while (end - p >= 4) {
		uint16_t code = rd16(r, p), len = rd16(r, p + 2);

		if (code == PCAPNG_OPT_ENDOFOPT)
			return 0;
		if ((size_t)(end - p - 4) < pad4(len))
			return cap_fail(r, boff + (uint64_t)(p - base),
					"option %u of %u bytes runs past the end of its block",
					code, len);
		fn(r, code, p + 4, len, arg);
		p += 4 + pad4(len);
	}
	/* 1 to 3 bytes left over, or none: not worth refusing the block. */
	return 0;
}

static void cap_copy_str(char *dst, size_t cap, const unsigned char *v,
			 uint16_t len)
{
	size_t n = len < cap - 1 ? len : cap - 1;

	memcpy(dst, v, n);
	dst[n] = 0;
	/* Options may be NUL-padded or NUL-terminated: stop at the first. */
	dst[strnlen(dst, n)] = 0;
}

struct cap_idb_opts {
	struct cap_iface *ifc;
	uint8_t tsresol;
	int64_t tsoffset;
	bool has_flags;		/* tapless's interface flags option came */
};

static void cap_idb_opt(struct cap_reader *r, uint16_t code,
			const unsigned char *v, uint16_t len, void *arg)
{
	struct cap_idb_opts *o = arg;

	switch (code) {
	case PCAPNG_IF_NAME:
		cap_copy_str(o->ifc->name, sizeof(o->ifc->name), v, len);
		break;
	case PCAPNG_IF_DESCRIPTION:
		cap_copy_str(o->ifc->description, sizeof(o->ifc->description),
			     v, len);
		break;
	case PCAPNG_IF_TSRESOL:
		if (len >= 1)
			o->tsresol = v[0];
		break;
	case PCAPNG_IF_TSOFFSET:
		if (len >= 8)
			o->tsoffset = (int64_t)rd64(r, v);
		break;
	case PCAPNG_OPT_CUSTOM_BIN:
		/* Another enterprise's custom options, and kinds of ours we
		 * do not know, are skipped. */
		if (len >= PCAPNG_TAPLESS_IF_FLAGS_LEN &&
		    rd32(r, v) == PCAPNG_TAPLESS_PEN &&
		    rd16(r, v + 4) == PCAPNG_TAPLESS_IF_FLAGS) {
			o->has_flags = true;
			o->ifc->sender = rd32(r, v + 8) & PCAPNG_TAPLESS_IF_SENDER;
		}
		break;
	}
}

static void cap_epb_opt(struct cap_reader *r, uint16_t code,
			const unsigned char *v, uint16_t len, void *arg)
{
	struct cap_packet *pkt = arg;

	if (code == PCAPNG_EPB_FLAGS && len >= 4)
		pkt->dir = (enum pcapng_dir)(rd32(r, v) & 3);
	else if (code == PCAPNG_EPB_PACKETID && len >= 8) {
		pkt->packet_id = rd64(r, v);
		pkt->has_packet_id = true;
	}
}

/* Resolution of a tsresol byte in ns: 0 when finer than 1 ns. */
static int64_t cap_resolution(uint8_t tsresol)
{
	unsigned n = tsresol & 0x7f;
	int64_t unit = 1;

	if (tsresol & 0x80)
		return n >= 30 ? 0 : (1000000000LL + (1LL << n) - 1) >> n;
	if (n >= 9)
		return n == 9 ? 1 : 0;
	while (n++ < 9)
		unit *= 10;
	return unit;
}

/* Units of tsresol since 1970 (+ tsoffset seconds) to nanoseconds. */
static int cap_to_ns(uint64_t ts, uint8_t tsresol, int64_t tsoffset,
		     int64_t *ns)
{
	unsigned n = tsresol & 0x7f;
	__int128 v = ts;

	if (tsresol & 0x80) {
		if (n > 64)
			return -EINVAL;
		v = v * 1000000000 >> n;
	} else {
		if (n > 19)
			return -EINVAL;
		for (; n < 9; n++)
			v *= 10;
		for (; n > 9; n--)
			v /= 10;
	}
	v += (__int128)tsoffset * 1000000000;
	if (v > INT64_MAX || v < INT64_MIN)
		return -ERANGE;
	*ns = (int64_t)v;
	return 0;
}

/* Read one whole block into r->blk. Returns its length, 0 at a clean end
 * of file, or -EBADMSG. */
/* Following a file still being written, its end is where the writer has
 * got to: go back to the start of the block (stdio's buffer and end-of-
 * file mark are dropped by the seek) and say "not yet". */
static int64_t cap_wait(struct cap_reader *r, uint64_t off)
{
	if (fseeko(r->f, (off_t)off, SEEK_SET))
		return cap_fail(r, off, "cannot seek back to wait for the rest: %s",
				strerror(errno));
	return -EAGAIN;
}

/* A whole regular file read in place: each block is read where the page
 * cache holds it instead of copied through stdio's buffer into r->block,
 * which was a sixth of the correlator's time. Not while following (the
 * file grows under us) and not where mmap fails: stdio reads those. The
 * mapping is private and writable, so nothing written through a packet's
 * data can reach the file or fault. */
static void cap_map(struct cap_reader *r)
{
	struct stat st;
	void *m;

	if (r->follow || fstat(fileno(r->f), &st) || !S_ISREG(st.st_mode) ||
	    st.st_size <= 0 || (uint64_t)st.st_size <= r->offset)
		return;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE, fileno(r->f), 0);
	if (m == MAP_FAILED)
		return;
	(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	r->map = m;
	r->map_len = (uint64_t)st.st_size;
	r->map_dropped = 0;
}

/* What was read, less a margin, leaves memory: only the current block's
 * bytes are still pointed at, and a mapping kept whole would make a 10 GB
 * file's read look like 10 GB of memory in use. */
static void cap_map_drop(struct cap_reader *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t to = (r->offset - CAP_MAP_MARGIN) / page * page;

	if (to <= r->map_dropped)
		return;
	(void)madvise(r->map + r->map_dropped, to - r->map_dropped,
		      MADV_DONTNEED);
	r->map_dropped = to;
}

static void cap_unmap(struct cap_reader *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/* A mapped file's next block (cap_pcapng_map()): r->blk points into the
 * mapping, nothing is copied. Returns its length, or 0 where stdio's path
 * must take over: at the mapping's end (a file that grew since it was
 * mapped goes on from there) and at anything malformed, which that path
 * reports with its offset. */
static uint32_t cap_map_block(struct cap_reader *r, uint32_t *type)
{
	uint64_t off = r->offset, left = r->map_len - off;
	const unsigned char *b = r->map + off;
	uint32_t len;

	if (left < 12)
		return 0;
	*type = bytes_get_le32(b);	/* the section header's reads alike */
	if (*type == PCAPNG_BT_SHB) {
		uint32_t magic = bytes_get_le32(b + 8);

		if (magic == PCAPNG_BYTE_ORDER_MAGIC)
			r->big = false;
		else if (magic == bswap_32(PCAPNG_BYTE_ORDER_MAGIC))
			r->big = true;
		else
			return 0;
	} else {
		*type = rd32(r, b);
	}
	len = rd32(r, b + 4);
	if (len < 12 || len % 4 || len > CAP_MAX_BLOCK || len > left ||
	    rd32(r, b + len - 4) != len)
		return 0;
	r->blk = b;
	r->offset = off + len;
	if (r->offset - r->map_dropped >= CAP_MAP_DROP)
		cap_map_drop(r);
	return len;
}

static int64_t cap_read_block(struct cap_reader *r, uint32_t *type)
{
	unsigned char hdr[12];
	uint64_t off = r->offset;
	size_t got;
	uint32_t len;

	if (r->map) {
		len = cap_map_block(r, type);
		if (len)
			return len;
		/* Once on stdio's path, the reader stays there. */
		cap_unmap(r);
		if (fseeko(r->f, (off_t)off, SEEK_SET))
			return cap_fail(r, off, "cannot seek to %llu: %s",
					(unsigned long long)off, strerror(errno));
	}
	got = fread(hdr, 1, 12, r->f);

	if (got < 12 && r->follow)
		return cap_wait(r, off);	/* every block has 12 */
	if (got == 0 && feof(r->f))
		return 0;
	if (got < 8)
		return cap_fail(r, off, "file ends inside a block header "
				"(%zu of 8 bytes)", got);
	memcpy(type, hdr, 4);
	if (*type == PCAPNG_BT_SHB) {
		uint32_t magic;

		if (got < 12)
			return cap_fail(r, off, "file ends inside a section header");
		magic = bytes_get_le32(hdr + 8);
		if (magic == PCAPNG_BYTE_ORDER_MAGIC)
			r->big = false;
		else if (magic == bswap_32(PCAPNG_BYTE_ORDER_MAGIC))
			r->big = true;
		else
			return cap_fail(r, off + 8, "bad byte-order magic 0x%08x",
					magic);
	} else {
		*type = rd32(r, hdr);
	}
	len = rd32(r, hdr + 4);
	if (len < 12 || len % 4)
		return cap_fail(r, off + 4, "block length %u is not a multiple of 4 "
				"of at least 12", len);
	if (len > CAP_MAX_BLOCK)
		return cap_fail(r, off + 4, "block length %u is over the %u-byte limit",
				len, CAP_MAX_BLOCK);
	if (len > r->block_cap) {
		/* Grows to the largest block seen, never past CAP_MAX_BLOCK. */
		r->block_cap = len < 65536 ? 65536 : len;
		r->block = xrealloc(r->block, r->block_cap);
	}
	/* len >= 12 >= got: the header read never takes the next block's bytes. */
	memcpy(r->block, hdr, got);
	if (got < len && fread(r->block + got, 1, len - got, r->f) != len - got) {
		if (r->follow)
			return cap_wait(r, off);
		return cap_fail(r, off, "file ends inside a block of %u bytes "
				"(truncated capture)", len);
	}
	if (rd32(r, r->block + len - 4) != len)
		return cap_fail(r, off + len - 4, "block length %u at its end "
				"differs from %u at its start",
				rd32(r, r->block + len - 4), len);
	r->blk = r->block;
	r->offset = off + len;
	return len;
}

/* The host name pcapng_open() records ("host NAME" in the section's
 * opt_comment, from tapless-capd -H): the first section's, so that a
 * file names one host. */
static void cap_shb_opt(struct cap_reader *r, uint16_t code,
			const unsigned char *v, uint16_t len, void *arg)
{
	static const char mark[] = "host ";
	const size_t n = sizeof(mark) - 1;

	(void)arg;
	if (code != PCAPNG_OPT_COMMENT || r->host[0] || len <= n ||
	    memcmp(v, mark, n))
		return;
	cap_copy_str(r->host, sizeof(r->host), v + n, (uint16_t)(len - n));
}

static int cap_pcapng_shb(struct cap_reader *r, uint64_t off, uint32_t len)
{
	if (len < 28)
		return cap_fail(r, off, "section header of %u bytes is too short", len);
	if (rd16(r, r->blk + 12) != 1)
		return cap_fail(r, off + 12, "pcapng major version %u, not 1",
				rd16(r, r->blk + 12));
	r->section_first = r->nifaces;
	r->stats.sections++;
	/* Only a name rides on the options here: a malformed one costs the
	 * name, never the file (nor leaves an error behind). */
	if (r->stats.sections == 1 && len > 28) {
		char saved[CAP_ERRBUF];

		memcpy(saved, r->err, sizeof(saved));
		if (cap_options(r, off, r->blk, r->blk + 24,
				r->blk + len - 4, cap_shb_opt, NULL)) {
			memcpy(r->err, saved, sizeof(saved));
			r->host[0] = 0;
		}
	}
	return 0;
}

static int cap_pcapng_idb(struct cap_reader *r, uint64_t off, uint32_t len)
{
	struct cap_idb_opts o = { .tsresol = 6 };	/* default: µs */
	uint32_t id;
	int err;

	if (len < 20)
		return cap_fail(r, off, "interface block of %u bytes is too short", len);
	o.ifc = cap_add_iface(r, &id);
	if (!o.ifc)
		return cap_fail(r, off, "more than %u interfaces",
				PCAPNG_MAX_IFACES * 4);
	o.ifc->linktype = rd16(r, r->blk + 8);
	o.ifc->snaplen = rd32(r, r->blk + 12);
	err = cap_options(r, off, r->blk, r->blk + 16, r->blk + len - 4,
			  cap_idb_opt, &o);
	if (err)
		return err;
	if ((o.tsresol & 0x80 ? (o.tsresol & 0x7f) > 64 : o.tsresol > 19))
		return cap_fail(r, off, "if_tsresol 0x%02x is out of range", o.tsresol);
	r->tsresol[id] = o.tsresol;
	r->tsoffset_s[id] = o.tsoffset;
	o.ifc->resolution_ns = cap_resolution(o.tsresol);
	o.ifc->src_known = o.ifc->description[0] &&
		pcapng_parse_description(o.ifc->description, &o.ifc->src) == 0;
	/* A file written before the flags option: the note said it. */
	if (!o.has_flags && o.ifc->src_known)
		o.ifc->sender = !strncmp(o.ifc->src.note, PCAPNG_NOTE_SENDER,
					 strlen(PCAPNG_NOTE_SENDER));
	return 0;
}

static int cap_pcapng_epb(struct cap_reader *r, uint64_t off, uint32_t len,
			  struct cap_packet *pkt)
{
	uint32_t ifid, caplen;
	uint64_t ts;

	if (len < 32)
		return cap_fail(r, off, "packet block of %u bytes is too short", len);
	ifid = rd32(r, r->blk + 8);
	ts = (uint64_t)rd32(r, r->blk + 12) << 32 | rd32(r, r->blk + 16);
	caplen = rd32(r, r->blk + 20);
	if (caplen > len - 32 || pad4(caplen) > len - 32)
		return cap_fail(r, off + 20, "captured length %u runs past the end "
				"of its %u-byte block", caplen, len);
	if (ifid >= r->nifaces - r->section_first || r->nifaces == r->section_first)
		return cap_fail(r, off + 8, "packet on interface %u, which the "
				"section has not described", ifid);
	memset(pkt, 0, sizeof(*pkt));
	pkt->iface = r->section_first + ifid;
	if (cap_to_ns(ts, r->tsresol[pkt->iface], r->tsoffset_s[pkt->iface],
		      &pkt->ts_ns))
		return cap_fail(r, off + 12, "timestamp out of range");
	pkt->caplen = caplen;
	pkt->origlen = rd32(r, r->blk + 24);
	pkt->data = r->blk + 28;
	pkt->offset = off;
	return cap_options(r, off, r->blk, r->blk + 28 + pad4(caplen),
			   r->blk + len - 4, cap_epb_opt, pkt);
}

enum { CAP_ISB_STATS, CAP_ISB_DOWN, CAP_ISB_UP, CAP_ISB_HEARTBEAT };

struct cap_isb {
	int event;		/* CAP_ISB_* */
	bool has_drop;
	uint64_t drop;
};

static bool cap_isb_mark(const unsigned char *v, uint16_t len, const char *mark)
{
	size_t n = strlen(mark);

	return len >= n && !memcmp(v, mark, n);
}

static void cap_isb_opt(struct cap_reader *r, uint16_t code,
			const unsigned char *v, uint16_t len, void *arg)
{
	struct cap_isb *x = arg;

	if (code == PCAPNG_ISB_IFDROP && len >= 8) {
		x->has_drop = true;
		x->drop = rd64(r, v);
	}
	if (code != PCAPNG_OPT_COMMENT)
		return;
	if (cap_isb_mark(v, len, PCAPNG_LINK_DOWN))
		x->event = CAP_ISB_DOWN;
	else if (cap_isb_mark(v, len, PCAPNG_LINK_UP))
		x->event = CAP_ISB_UP;
	else if (cap_isb_mark(v, len, PCAPNG_HEARTBEAT))
		x->event = CAP_ISB_HEARTBEAT;
}

/* An Interface Statistics Block: link events and heartbeats are kept
 * (in the stats), and the latest drop counter of each interface; the rest
 * is for people and tshark. Nothing in it is needed to read the packets,
 * so a malformed one is skipped, as before link events were read, never
 * an error. */
static void cap_pcapng_isb(struct cap_reader *r, uint64_t off, uint32_t len)
{
	char saved[CAP_ERRBUF];
	uint32_t ifid, iface;
	int64_t ts_ns;
	uint64_t ts;
	struct cap_isb x = { .event = CAP_ISB_STATS };

	r->stats.blocks_skipped++;
	if (len < 24)
		return;
	ifid = rd32(r, r->blk + 8);
	if (ifid >= r->nifaces - r->section_first || r->nifaces == r->section_first)
		return;
	memcpy(saved, r->err, sizeof(saved));
	if (cap_options(r, off, r->blk, r->blk + 20, r->blk + len - 4,
			cap_isb_opt, &x)) {
		memcpy(r->err, saved, sizeof(saved));
		return;
	}
	iface = r->section_first + ifid;
	if (x.has_drop)
		r->isb_drop[iface] = x.drop;
	if (x.event == CAP_ISB_UP)
		r->stats.link_up++;
	if (x.event != CAP_ISB_DOWN && x.event != CAP_ISB_HEARTBEAT)
		return;
	ts = (uint64_t)rd32(r, r->blk + 12) << 32 | rd32(r, r->blk + 16);
	if (cap_to_ns(ts, r->tsresol[iface], r->tsoffset_s[iface], &ts_ns))
		return;
	if (x.event == CAP_ISB_HEARTBEAT) {
		r->stats.heartbeats++;
		if (r->stats.heartbeats == 1 || ts_ns > r->stats.heartbeat_ns) {
			r->stats.heartbeat_ns = ts_ns;
			r->stats.heartbeat_iface = iface;
		}
		return;
	}
	if (!r->stats.link_down++) {
		r->stats.first_link_down_ns = ts_ns;
		r->stats.first_link_down_iface = iface;
	}
}

static int cap_pcapng_next(struct cap_reader *r, struct cap_packet *pkt)
{
	for (;;) {
		uint64_t off = r->offset;
		uint32_t type;
		int64_t len = cap_read_block(r, &type);
		int err;

		if (len <= 0)
			return (int)len;
		switch (type) {
		case PCAPNG_BT_SHB:
			err = cap_pcapng_shb(r, off, (uint32_t)len);
			break;
		case PCAPNG_BT_IDB:
			err = cap_pcapng_idb(r, off, (uint32_t)len);
			break;
		case PCAPNG_BT_EPB:
			err = cap_pcapng_epb(r, off, (uint32_t)len, pkt);
			if (!err)
				return 1;
			break;
		case PCAPNG_BT_ISB:
			cap_pcapng_isb(r, off, (uint32_t)len);
			err = 0;
			break;
		default:
			/* SPB (no timestamp: useless here), NRB,
			 * custom and future blocks. */
			r->stats.blocks_skipped++;
			err = 0;
			break;
		}
		if (err)
			return err;
	}
}

static int cap_pcapng_open(struct cap_reader *r)
{
	/* The first block must be a section header; read it now so a
	 * non-file fails at open, not at the first packet. */
	uint32_t type;
	int64_t len = cap_read_block(r, &type);
	int err;

	if (len < 0)
		return (int)len;	/* -EAGAIN too: the header is on its way */
	if (len == 0 || type != PCAPNG_BT_SHB)
		return cap_fail(r, 0, "no section header block");
	err = cap_pcapng_shb(r, 0, (uint32_t)len);
	if (!err)
		cap_map(r);
	return err;
}

static void cap_pcapng_close(struct cap_reader *r)
{
	cap_unmap(r);
	free(r->block);
	r->block = NULL;
}

const struct cap_ops cap_pcapng_ops = {
	.format = CAP_PCAPNG,
	.open = cap_pcapng_open,
	.next = cap_pcapng_next,
	.close = cap_pcapng_close,
};
