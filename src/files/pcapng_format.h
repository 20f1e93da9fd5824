/* pcapng_format.h — block types and option codes of the pcapng format
 * (draft-ietf-opsawg-pcapng), shared by the writer and the reader. */
#ifndef TAPLESS_PCAPNG_FORMAT_H
#define TAPLESS_PCAPNG_FORMAT_H

#define PCAPNG_BT_SHB 0x0A0D0D0Au
#define PCAPNG_BT_IDB 0x00000001u
#define PCAPNG_BT_SPB 0x00000003u
#define PCAPNG_BT_ISB 0x00000005u
#define PCAPNG_BT_EPB 0x00000006u
#define PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du

#define PCAPNG_OPT_ENDOFOPT 0
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_OPT_CUSTOM_BIN 2989	/* PEN, binary data; copyable */
#define PCAPNG_SHB_HARDWARE 2
#define PCAPNG_SHB_OS 3
#define PCAPNG_SHB_USERAPPL 4
#define PCAPNG_IF_NAME 2
#define PCAPNG_IF_DESCRIPTION 3
#define PCAPNG_IF_TSRESOL 9
#define PCAPNG_IF_TSOFFSET 14
#define PCAPNG_EPB_FLAGS 2
#define PCAPNG_EPB_PACKETID 5
#define PCAPNG_ISB_IFRECV 4
#define PCAPNG_ISB_IFDROP 5

/* tapless's own options: opt_custom 2989, the PEN, then a 16-bit kind and
 * its data, every number in the section's byte order (tapless-pcapng(5)).
 * The PEN is RFC 5612's documentation number until tapless has one of its
 * own from IANA; readers will keep accepting it. */
#define PCAPNG_TAPLESS_PEN 32473u
/* In an IDB: kind 1, 16 bits reserved (0), 32 bits of interface flags. */
#define PCAPNG_TAPLESS_IF_FLAGS 1
#define PCAPNG_TAPLESS_IF_FLAGS_LEN 12
#define PCAPNG_TAPLESS_IF_SENDER 0x1u	/* frames stamped by their sender */

/* Interfaces per file: one per (interface, stamp source) on one host. */
#define PCAPNG_MAX_IFACES 64

#endif
