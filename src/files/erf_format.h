/* erf_format.h — the layout of Endace ERF records (the Extensible Record
 * Format of DAG capture cards; Endace's "ERF Types" document, as Wireshark's
 * wiretap/erf_record.h numbers it), shared by the reader (capfile_erf.c) and
 * the test writer (tests/tools/erfwrite.c).
 *
 * A file is records back to back, with no file header. Each record:
 *    0  8  ts     little-endian 32.32 fixed point: seconds since 1970 in
 *                 the high 32 bits, a binary fraction of a second in the low
 *    8  1  type   record type in the low 7 bits; bit 7: an extension
 *                 header follows
 *    9  1  flags  ERF_FLAG_*
 *   10  2  rlen   big-endian: the whole record, this header included
 *   12  2  lctr   big-endian: loss counter (or colour)
 *   14  2  wlen   big-endian: the frame's length on the wire (for Ethernet
 *                 with its 4-byte FCS, which the frame keeps)
 *   16     8 bytes per extension header, each with the same "another
 *          follows" bit in its first byte; then, for the Ethernet types,
 *          2 bytes (offset, pad); then the frame. The frame's captured
 *          length is the rest of rlen, but at most wlen: a card pads a
 *          record to a multiple of 8 bytes, and the pad is not frame.
 */
#ifndef TAPLESS_ERF_FORMAT_H
#define TAPLESS_ERF_FORMAT_H

#define ERF_HDR_LEN 16
#define ERF_EXT_LEN 8
#define ERF_ETH_PAD_LEN 2

#define ERF_TYPE_MASK 0x7f
#define ERF_TYPE_MORE_EXT 0x80

/* Record types. */
#define ERF_TYPE_ETH 2
#define ERF_TYPE_COLOR_ETH 11
#define ERF_TYPE_DSM_COLOR_ETH 16
#define ERF_TYPE_COLOR_HASH_ETH 20
#define ERF_TYPE_IPV4 22
#define ERF_TYPE_IPV6 23
#define ERF_TYPE_META 27	/* provenance metadata */
#define ERF_TYPE_LAST_PUBLIC 29
#define ERF_TYPE_PAD 48		/* filler: no frame, stamp may be unset */

/* Flags. The capture interface is 3 bits: 0-1 here, and bit 6 on the
 * cards that have more than four ports (bit 6 was reserved before). */
#define ERF_FLAG_IFACE_LO 0x03
#define ERF_FLAG_VLEN 0x04	/* varying record length */
#define ERF_FLAG_TRUNC 0x08	/* truncated: the card was short of buffer */
#define ERF_FLAG_RXE 0x10	/* receive error */
#define ERF_FLAG_DSE 0x20	/* DS error: the card's own */
#define ERF_FLAG_IFACE_HI 0x40
#define ERF_FLAG_RESERVED 0x80
#define ERF_MAX_IFACES 8

#define ERF_IFACE(flags) \
	(((flags) & ERF_FLAG_IFACE_LO) | ((flags) & ERF_FLAG_IFACE_HI) >> 4)

/* rlen is 16 bits: no record is longer. */
#define ERF_MAX_RECORD 65535

#endif
