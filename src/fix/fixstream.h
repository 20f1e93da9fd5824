/* fixstream.h — one direction of one flow, as seen by one capture, turned
 * back into FIX messages, each with the stamps of the frames that carried
 * its first and last bytes.
 *
 * TCP: segments are put back in sequence order. A retransmitted byte keeps
 * the stamp of its first transmission in this capture (a retransmission is
 * counted, its bytes are not used again). A segment after a hole is held
 * until the hole fills; a hole still open when the held bytes pass
 * FIXSTREAM_HOLD_BYTES, or older than the hold time, is given up: its bytes
 * are counted as lost and parsing resumes at the next "8=". A capture that
 * starts in the middle of a stream (no SYN seen) resumes the same way: the
 * bytes before the first whole message are counted, not parsed. Sequence
 * numbers wrap (serial arithmetic).
 *
 * UDP: each datagram is parsed on its own; a message cut at the end of one
 * is an error.
 *
 * A message whose BodyLength or CheckSum is wrong is counted and skipped,
 * never fatal. Memory per stream is a buffer for one partial message and a
 * small fixed area for held segments; no allocation per segment once a
 * stream has grown to its largest message.
 */
#ifndef TAPLESS_FIXSTREAM_H
#define TAPLESS_FIXSTREAM_H

#include <stdbool.h>
#include <stdint.h>

struct fix_msg;
struct fixstream;

#define FIXSTREAM_MAX_MSG (64u << 10)	/* longest FIX message accepted */
/* Held past a hole, at most. A lost segment is resent after an RTO of
 * 200 us or more: at a million messages a second, hundreds of segments
 * follow it before the hole fills. */
#define FIXSTREAM_HOLD_BYTES (1u << 20)
#define FIXSTREAM_HOLD_SEGS 2048

/* One message handed to the caller. */
struct fixstream_msg {
	const struct fix_msg *fix;	/* parsed, checksum good */
	uint32_t seq;		/* TCP: sequence number of the first byte */
	int64_t ts_first;	/* stamp of the frame carrying the first byte */
	int64_t ts_last;	/* ... and the last byte */
	uint32_t wire_first;	/* that frame's length on the wire */
	uint32_t wire_last;
	uint64_t ref_first;	/* the caller's ref of the first byte's frame */
};

typedef void (*fixstream_fn)(void *arg, const struct fixstream_msg *m);

/* Bytes given up in a hole (tapless never saw them: a capture drop, or
 * the bytes after a snaplen cut), with the bytes before it of a message
 * the hole cut (bytes, what lost_bytes counts at once; the rest of that
 * message is counted as it is skipped): they were on the wire at or
 * after lo
 * (the stamp of the first byte of the message they cut, or of the last
 * bytes before them) and before hi (the stamp of the first byte after
 * them, or the newest stamp of the stream at the end). */
typedef void (*fixstream_lost_fn)(void *arg, int64_t lo, int64_t hi,
				  uint64_t bytes);

struct fixstream_stats {
	uint64_t segments;	/* with payload */
	uint64_t bytes;		/* payload bytes used */
	uint64_t messages;	/* good messages handed out */
	uint64_t retransmits;	/* segments carrying bytes seen before */
	uint64_t out_of_order;	/* segments held for a hole */
	uint64_t lost_bytes;	/* in holes given up */
	uint64_t skipped_bytes;	/* not part of any FIX message */
	uint64_t midstream_bytes;	/* skipped before the first message */
	uint64_t bad_checksum;	/* messages dropped: CheckSum wrong */
	uint64_t bad_framing;	/* BodyLength wrong, fields malformed, ... */
	uint64_t truncated;	/* cut by snaplen or a datagram's end */
};

/* A stream for TCP (tcp true) or UDP. scratch is where messages are
 * parsed (shared by the caller's streams: it is only used during a call).
 * hold_ns: how long a hole may stay open (stamp time). */
struct fixstream *fixstream_create(bool tcp, struct fix_msg *scratch,
				   int64_t hold_ns, fixstream_fn fn, void *arg);
void fixstream_destroy(struct fixstream *s);
/* Be told of every hole given up (fn called before the messages after
 * it are handed out). */
void fixstream_on_lost(struct fixstream *s, fixstream_lost_fn fn);

/* One segment or datagram: TCP seq and flags (SYN: the next byte is
 * seq + 1), payload[0..caplen) of wire_payload bytes (less when the
 * capture cut it), the frame's stamp and wire length, and ref, the
 * caller's name for the frame (where it is in a file), handed back with
 * each message as the ref of its first byte's frame. Messages completed by
 * it are handed to fn before this returns. */
void fixstream_segment(struct fixstream *s, uint32_t seq, uint8_t tcp_flags,
		       const uint8_t *payload, uint32_t caplen,
		       uint32_t wire_payload, int64_t ts, uint32_t wire_len,
		       uint64_t ref);

/* The end of the capture: give up open holes, parse what was held. */
void fixstream_finish(struct fixstream *s);

const struct fixstream_stats *fixstream_stats(const struct fixstream *s);
/* Newest stamp seen, for expiring idle streams. */
int64_t fixstream_last_ts(const struct fixstream *s);
/* Whether bytes are held behind an open hole; then *lo is the stamp from
 * which messages may still be missing (as fixstream_lost_fn's lo): every
 * message whose first byte was stamped before it has been handed out. */
bool fixstream_hole(const struct fixstream *s, int64_t *lo);

#endif
