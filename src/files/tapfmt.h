/* tapfmt.h — the stamps taps and timestamping switches carry inside the
 * frames they capture or mirror, as opposed to the capture record's own.
 *
 * A MetaWatch (Arista 7130, Metamako) appends a trailer with the true
 * stamp; an Arista 7280 inserts a header after the MAC addresses; an
 * ExaNIC or Nexus 3550 appends its HPT trailer; an ExaLINK Fusion replaces
 * the FCS with a counter that keyframes place in time; an Ixia (Keysight)
 * packet broker appends its own trailer. The pcap record around such a
 * frame is stamped by the capture server, often milliseconds off. Each
 * format is one module (tap_NAME.c) with its ops; this one names them,
 * detects them by content, and cuts what they added, so that what IP, TCP
 * and FIX are parsed from is the frame as it crossed the wire.
 *
 * The capture readers (capfile.h) apply them: the device's stamp becomes
 * the packet's, the bytes it added are cut, and a frame whose stamp cannot
 * be read is counted and left out with a warning naming its record.
 */
#ifndef TAPLESS_TAPFMT_H
#define TAPLESS_TAPFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tapfmt_kind {
	TAPFMT_NONE,		/* the record's own stamp */
	TAPFMT_METAWATCH,	/* trailer: orig FCS, TLVs, s, ns, flags, device, port */
	TAPFMT_ARISTA,		/* header after the MACs: EtherType 0xD28B */
	TAPFMT_EXABLAZE,	/* HPT trailer: orig FCS, device, port, s, 40-bit fraction */
	TAPFMT_EXALINK,		/* FCS replaced by a 350 MHz counter, keyframes */
	TAPFMT_IXIA,		/* trailer: source, length, s, ns, length, 0xAF12, checksum */
	TAPFMT_COUNT,
	TAPFMT_AUTO = -1,	/* detected from the first frames (tapfmt_detect) */
};

/* A frame as a reader found it. */
struct tapfmt_frame {
	const uint8_t *data;
	uint32_t caplen, origlen;
	/* Where the bytes past the IP datagram begin (the Ethernet trailer:
	 * padding, FCS, what the device added); for a frame that is not IP,
	 * just past its Ethernet header (its end is not known); caplen when
	 * the frame is cut before either. Trailer formats look there, as
	 * Wireshark's eth.trailer heuristics do. */
	uint32_t trailer_off;
	int64_t record_ns;	/* the record's stamp: for plausibility, and
				 * to complete stamps that carry only the
				 * low bits of the seconds */
};

/* What a format found in one frame. */
struct tapfmt_stamp {
	int64_t ts_ns;		/* ns since 1970 on the device's timescale */
	uint16_t ps;		/* picoseconds past ts_ns (0-999), when the
				 * format carries finer than 1 ns */
	int timescale;		/* enum ts_timescale (stamp/ts.h) when the
				 * format says (Arista's version), else
				 * TS_SCALE_UNKNOWN */
	bool degraded;		/* the device flagged its stamp (MetaWatch:
				 * timestamp degraded; Ixia: holdover) */
	bool has_port;		/* device and port are known */
	uint16_t device, port;
	/* What to cut: head_len bytes at head_off (a header inside the
	 * frame), and tail_len bytes off its end (a trailer, an FCS the
	 * counter replaced). Both within caplen. */
	uint32_t head_off, head_len;
	uint32_t tail_len;
};

/* decode() results. */
#define TAPFMT_NOT_MINE 0	/* no stamp of this format in the frame */
#define TAPFMT_STAMPED 1	/* *s filled in */
#define TAPFMT_CONSUMED 2	/* the device's own frame (a keyframe),
				 * taken in: not a packet of the traffic */

/* A decode()'s reason, in the caller's array: the form of an error
 * message (HACKING.md), named why as it is not always a failure. */
#define TAPFMT_WHYBUF 160

struct tapfmt_ops {
	enum tapfmt_kind kind;
	const char *name;	/* as --reference-format takes it */
	const char *what;	/* the devices, for --help and messages */
	size_t state_size;	/* per-reader state, zeroed before the first
				 * frame (keyframes); 0: none */
	/* One frame: TAPFMT_NOT_MINE, TAPFMT_STAMPED, TAPFMT_CONSUMED, or
	 * -EBADMSG when the format's bytes are there but cannot be right
	 * (seconds absurd, an unknown version, lengths that disagree). why
	 * says what, for NOT_MINE too where there is more to say than
	 * "none" (a counter before any keyframe). Never reads outside
	 * f->data[0, f->caplen). */
	int (*decode)(void *state, const struct tapfmt_frame *f,
		      struct tapfmt_stamp *s, char why[TAPFMT_WHYBUF]);
};

extern const struct tapfmt_ops tapfmt_metawatch_ops;
extern const struct tapfmt_ops tapfmt_arista_ops;
extern const struct tapfmt_ops tapfmt_exablaze_ops;
extern const struct tapfmt_ops tapfmt_exalink_ops;
extern const struct tapfmt_ops tapfmt_ixia_ops;

/* For the formats' modules: why (may be NULL) set to the printf-style
 * text, with errbuf_set(); and a ÷ b rounded down (record stamps may
 * precede 1970 in a damaged file). */
void tapfmt_why(char why[TAPFMT_WHYBUF], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int64_t tapfmt_floor_div(int64_t a, int64_t b);

/* The ops of kind, NULL for TAPFMT_NONE and TAPFMT_AUTO. */
const struct tapfmt_ops *tapfmt_ops(enum tapfmt_kind kind);

/* "metawatch" ... ; "none" and "auto" for the two others. */
const char *tapfmt_name(enum tapfmt_kind kind);

/* The kind named name (as tapfmt_name() spells it, "auto" and "none"
 * included): 0, or -EINVAL. */
int tapfmt_parse(const char *name, enum tapfmt_kind *kind);

/* The names, space-separated, for help and error messages. */
const char *tapfmt_names(void);

/* Where the frame's trailer begins (struct tapfmt_frame.trailer_off) for
 * an Ethernet frame (linktype 1). */
uint32_t tapfmt_trailer_off(const uint8_t *data, uint32_t caplen);

/* Detection: feed the first frames of a file (Ethernet ones) one by one,
 * then ask. A format matches a frame it stamped, consumed or found bad
 * (its bytes are there); it is chosen when it matched at least 3/4 of the
 * frames from its first match on, and at least min(4, frames fed) of
 * them; the most matches win. Frames are only looked at, never kept. */
struct tapfmt_detect;
struct tapfmt_detect *tapfmt_detect_new(void);
void tapfmt_detect_feed(struct tapfmt_detect *d, const struct tapfmt_frame *f);
enum tapfmt_kind tapfmt_detect_result(const struct tapfmt_detect *d);
/* The format that matched the most frames, chosen or not, with its
 * matches and the frames fed: where none was chosen, a reader says that
 * some frames looked like it. */
enum tapfmt_kind tapfmt_detect_hint(const struct tapfmt_detect *d,
				   unsigned *matched, unsigned *frames);
void tapfmt_detect_free(struct tapfmt_detect *d);

#endif
