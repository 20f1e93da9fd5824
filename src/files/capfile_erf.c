/* capfile_erf.c — the Endace ERF reader (erf_format.h): the Ethernet
 * records of a DAG capture card's file, one interface per card port.
 *
 * ERF says nothing of the capture's timescale, so its interfaces are
 * foreign (src_known false): the user names the timescale. Records of
 * other types (PAD, provenance metadata, raw IP, ATM, HDLC...) are skipped
 * and counted. A record is read whole into r->block, a 64 KiB buffer taken
 * at open: rlen is 16 bits, so no record is larger and nothing is allocated
 * per packet. An ERF file cannot be followed as it grows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/xalloc.h"
#include "files/capfile_private.h"
#include "files/erf_format.h"

#define ERF_LINK_ETHERNET 1	/* LINKTYPE_ETHERNET */

static bool erf_is_eth(unsigned type)
{
	return type == ERF_TYPE_ETH || type == ERF_TYPE_COLOR_ETH ||
	       type == ERF_TYPE_DSM_COLOR_ETH || type == ERF_TYPE_COLOR_HASH_ETH;
}

/* The public types and PAD: not 0, the ancient "legacy" record no current
 * card writes, nor 26, which Wireshark's list (erf_record.h) leaves out. */
static bool erf_known_type(unsigned type)
{
	return (type >= 1 && type <= ERF_TYPE_LAST_PUBLIC && type != 26) ||
	       type == ERF_TYPE_PAD;
}

/* One record header, judged without a magic number, so strictly: a text
 * or other binary file is seldom all of these at once. A PAD record may
 * carry no time (Wireshark's reader lets it pass unstamped too). */
static bool erf_header_ok(const unsigned char *hdr)
{
	unsigned type = hdr[8] & ERF_TYPE_MASK, rlen, wlen, need;

	rlen = bytes_get_be16(hdr + 10);
	wlen = bytes_get_be16(hdr + 14);
	need = ERF_HDR_LEN + (hdr[8] & ERF_TYPE_MORE_EXT ? ERF_EXT_LEN : 0) +
	       (erf_is_eth(type) ? ERF_ETH_PAD_LEN : 0);
	if (!erf_known_type(type) || (hdr[9] & ERF_FLAG_RESERVED) || rlen < need)
		return false;
	if (type == ERF_TYPE_PAD)
		return true;
	if (bytes_get_le32(hdr + 4) == 0)	/* the seconds: 1970 */
		return false;
	if (!erf_is_eth(type))
		return true;
	/* A frame on the wire has a length; a record of varying length
	 * holds at most the frame and the pad to 8 bytes. (Fixed-length
	 * records, of old cards, may hold much more; and behind a second
	 * extension header, unseen here, more headers.) */
	if (wlen == 0)
		return false;
	if (!(hdr[9] & ERF_FLAG_VLEN) || (hdr[8] & ERF_TYPE_MORE_EXT))
		return true;
	return rlen - need <= wlen + 7;
}

/* PAD records prove little (a filler's header is easily matched by
 * chance: '0' is type 48): look past them to the first other record, which
 * must lie within the n bytes. */
bool cap_erf_probe(const unsigned char *p, size_t n)
{
	size_t off = 0;

	while (off <= n && n - off >= ERF_HDR_LEN) {
		const unsigned char *hdr = p + off;

		if (!erf_header_ok(hdr))
			return false;
		if ((hdr[8] & ERF_TYPE_MASK) != ERF_TYPE_PAD)
			return true;
		off += bytes_get_be16(hdr + 10);
	}
	return false;
}

/* ts: seconds in the high 32 bits, a binary fraction in the low 32, to
 * the nearest ns. seconds * 1e9 < 2^62 and fraction * 1e9 + 2^31 < 2^62:
 * no overflow; a fraction that rounds up to a whole second carries. */
static int64_t erf_ts_ns(uint64_t ts)
{
	uint64_t frac = ts & 0xffffffffu;

	return (int64_t)((ts >> 32) * 1000000000u +
			 ((frac * 1000000000u + (1u << 31)) >> 32));
}

/* A short read that is not the end of the file: say so, not "cut". */
static int erf_io_error(struct cap_reader *r, uint64_t off)
{
	if (!ferror(r->f))
		return 0;
	return cap_fail(r, off, "ERF record %llu: read error: %s",
			(unsigned long long)r->erf_records, strerror(errno));
}

/* Read the record at r->offset into r->block: 1, 0 at a clean end of
 * file, or -EBADMSG (r->erf_records already counts it). */
static int erf_read_record(struct cap_reader *r, uint64_t off, uint32_t *rlen)
{
	size_t got = fread(r->block, 1, ERF_HDR_LEN, r->f);

	if (got == 0 && feof(r->f))
		return 0;
	r->erf_records++;
	if (got < ERF_HDR_LEN && erf_io_error(r, off))
		return -EBADMSG;
	if (got < ERF_HDR_LEN)
		return cap_fail(r, off, "ERF record %llu: file ends inside its "
				"header (%zu of %u bytes)",
				(unsigned long long)r->erf_records, got, ERF_HDR_LEN);
	*rlen = bytes_get_be16(r->block + 10);
	if (*rlen < ERF_HDR_LEN)
		return cap_fail(r, off, "ERF record %llu: record length %u is "
				"shorter than its %u-byte header",
				(unsigned long long)r->erf_records, *rlen, ERF_HDR_LEN);
	got = fread(r->block + ERF_HDR_LEN, 1, *rlen - ERF_HDR_LEN, r->f);
	if (got != *rlen - ERF_HDR_LEN && erf_io_error(r, off))
		return -EBADMSG;
	if (got != *rlen - ERF_HDR_LEN)
		return cap_fail(r, off, "ERF record %llu: file ends inside the "
				"record of %u bytes (truncated capture)",
				(unsigned long long)r->erf_records, *rlen);
	r->offset = off + *rlen;
	return 1;
}

/* Where the frame begins: after the header, the extension headers and
 * the Ethernet pad, each checked against rlen. */
static int erf_frame_start(struct cap_reader *r, uint64_t off, uint32_t rlen,
			   uint32_t *start)
{
	const unsigned char *b = r->block;
	uint32_t pos = ERF_HDR_LEN;
	unsigned more = b[8] & ERF_TYPE_MORE_EXT, next = 0;

	/* At most rlen / 8 of them: the loop is bounded by the record. */
	for (; more; next++) {
		if (rlen - pos < ERF_EXT_LEN)
			return cap_fail(r, off, "ERF record %llu: record length %u "
					"ends inside extension header %u",
					(unsigned long long)r->erf_records, rlen,
					next + 1);
		more = b[pos] & ERF_TYPE_MORE_EXT;
		pos += ERF_EXT_LEN;
	}
	if (rlen - pos < ERF_ETH_PAD_LEN)
		return cap_fail(r, off, "ERF record %llu: record length %u is "
				"shorter than its %u bytes of headers",
				(unsigned long long)r->erf_records, rlen,
				pos + ERF_ETH_PAD_LEN);
	*start = pos + ERF_ETH_PAD_LEN;
	return 0;
}

/* The cap_iface of an ERF interface, added the first time it is seen. */
static uint32_t erf_iface(struct cap_reader *r, unsigned n)
{
	uint32_t id;

	if (!r->erf_iface[n]) {
		/* At most ERF_MAX_IFACES, far below cap_add_iface()'s bound. */
		struct cap_iface *ifc = cap_add_iface(r, &id);

		snprintf(ifc->name, sizeof(ifc->name), "erf%u", n);
		ifc->linktype = ERF_LINK_ETHERNET;
		ifc->snaplen = ERF_MAX_RECORD;
		ifc->resolution_ns = 0;		/* 2^-32 s */
		r->erf_iface[n] = (uint8_t)(id + 1);
	}
	return r->erf_iface[n] - 1u;
}

static int erf_packet(struct cap_reader *r, uint64_t off, uint32_t rlen,
		      struct cap_packet *pkt)
{
	const unsigned char *b = r->block;
	uint32_t start = 0, wlen = bytes_get_be16(b + 14);
	int err = erf_frame_start(r, off, rlen, &start);

	if (err)
		return err;
	memset(pkt, 0, sizeof(*pkt));
	pkt->ts_ns = erf_ts_ns(bytes_get_le64(b));
	pkt->caplen = rlen - start < wlen ? rlen - start : wlen;
	pkt->origlen = wlen;
	pkt->data = b + start;
	pkt->iface = erf_iface(r, ERF_IFACE(b[9]));
	pkt->dir = PCAPNG_DIR_UNKNOWN;
	pkt->offset = off;
	return 0;
}

static int cap_erf_next(struct cap_reader *r, struct cap_packet *pkt)
{
	for (;;) {
		uint64_t off = r->offset;
		uint32_t rlen = 0;
		int rc = erf_read_record(r, off, &rlen);

		if (rc <= 0)
			return rc;
		if (erf_is_eth(r->block[8] & ERF_TYPE_MASK)) {
			rc = erf_packet(r, off, rlen, pkt);
			return rc ? rc : 1;
		}
		r->stats.blocks_skipped++;
	}
}

static int cap_erf_open(struct cap_reader *r)
{
	/* rlen is 16 bits: one buffer holds any record. */
	r->block_cap = ERF_MAX_RECORD + 1;
	r->block = xmalloc(r->block_cap);
	r->follow = false;
	r->offset = 0;
	r->stats.sections = 1;
	return 0;
}

static void cap_erf_close(struct cap_reader *r)
{
	free(r->block);
	r->block = NULL;
}

const struct cap_ops cap_erf_ops = {
	.format = CAP_ERF,
	.open = cap_erf_open,
	.next = cap_erf_next,
	.close = cap_erf_close,
};
