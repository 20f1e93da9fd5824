/* fuzz_fixstream — libFuzzer target for stream reassembly: the input is a
 * sequence of records, each a captured segment,
 *
 *   1 byte flags   bit 0 SYN; bit 1 cut by the snaplen (a quarter of the
 *                  payload missing); bits 2-4 how far the stamp moves on
 *                  (0-7 quarters of the hold time); bit 5 a wide delta
 *   4 bytes        sequence number delta, added to the last: all 32 bits
 *                  (little-endian) when wide, else the first two as a
 *                  signed 16-bit number
 *   2 bytes        payload length (little-endian; what is left if less)
 *   payload
 *
 * fed to a TCP stream and, as datagrams, to a UDP one, then
 * fixstream_finish(). Whatever the order, overlaps and holes, reassembly
 * must never read or write out of bounds, and every message handed out
 * must pass the FIX checks again, carry stamps that were fed, and (TCP)
 * never overlap or go back on the one before it. Every hole given up
 * (fixstream_on_lost()) names stamps that were fed (or 0 before the
 * first bytes) and at least a byte, and no hole is open after
 * fixstream_finish(). That holds in sequence
 * space only while every segment since the last SYN lies within a window
 * of the others: narrow deltas keep them so (9000 records of at most
 * 2^15 span less than 2^30); after a wide one the order is not checked. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fix/fix.h"
#include "fix/fixstream.h"
#include "files/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HOLD_NS 8000
#define TS0 1000000

static volatile size_t fuzz_sink;

struct seen {
	bool tcp;
	bool have_prev;
	bool in_syn;		/* a SYN may end one connection, start another */
	bool wide;		/* a wide jump since: order not checked */
	uint32_t prev_end;	/* sequence number after the last message */
	int64_t ts_min, ts_max;	/* stamps fed so far */
	uint32_t dgram_len;	/* UDP: the datagram being parsed */
	int64_t dgram_ts;
	uint64_t messages;
	uint64_t lost_reported;
};

static void on_lost(void *arg, int64_t lo, int64_t hi, uint64_t bytes)
{
	struct seen *s = arg;

	if ((lo && (lo < s->ts_min || lo > s->ts_max)) || hi < s->ts_min ||
	    hi > s->ts_max || !bytes)
		__builtin_trap();
	s->lost_reported += bytes;
}

static uint32_t wire_of(int64_t ts)
{
	return (uint32_t)(ts % 1500) + 54;
}

static void on_msg(void *arg, const struct fixstream_msg *m)
{
	static struct fix_msg again;
	struct seen *s = arg;
	enum fix_error why;
	size_t sum = 0;

	/* The message is whole, checked and indexed over its own bytes. */
	if (!m->fix || m->fix->len < 20 ||
	    m->fix->len > FIXSTREAM_MAX_MSG + 64 ||
	    fix_parse(&again, m->fix->buf, m->fix->len, &why) ||
	    again.nfields != m->fix->nfields)
		__builtin_trap();
	for (uint32_t i = 0; i < m->fix->nfields; i++) {
		const struct fix_field *f = &m->fix->f[i];

		if (f->off + f->len > m->fix->len)
			__builtin_trap();
		sum += f->tag + (f->len ? (unsigned char)m->fix->buf[f->off] : 0);
	}
	/* Stamps are ones that were fed, with their frames' lengths. */
	if (m->ts_first < s->ts_min || m->ts_first > s->ts_max ||
	    m->ts_last < s->ts_min || m->ts_last > s->ts_max ||
	    m->wire_first != wire_of(m->ts_first) ||
	    m->wire_last != wire_of(m->ts_last) ||
	    m->ref_first != (uint64_t)m->ts_first * 3 + 1)
		__builtin_trap();
	if (s->tcp && !s->in_syn) {
		int32_t d = (int32_t)(m->seq - s->prev_end);

		if (s->have_prev && !s->wide && d < 0)
			__builtin_trap();
		s->have_prev = true;
		s->prev_end = m->seq + m->fix->len;
	} else if (!s->tcp && (m->ts_first != s->dgram_ts ||
			       m->ts_last != s->dgram_ts ||
			       (uint64_t)m->seq + m->fix->len > s->dgram_len)) {
		__builtin_trap();
	}
	s->messages++;
	fuzz_sink += sum;
}

static void run(const uint8_t *data, size_t size, bool tcp)
{
	static struct fix_msg scratch;
	struct seen s = { .tcp = tcp, .ts_min = TS0, .ts_max = TS0 };
	struct fixstream *fs = fixstream_create(tcp, &scratch, HOLD_NS,
						on_msg, &s);
	const struct fixstream_stats *st;
	uint64_t fed = 0, records = 0;
	uint32_t seq = 0;
	int64_t ts = TS0, lo;

	fixstream_on_lost(fs, on_lost);
	while (size >= 7) {
		uint8_t flags = data[0];
		uint32_t delta = (uint32_t)data[1] | (uint32_t)data[2] << 8 |
				 (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
		uint32_t len = (uint32_t)data[5] | (uint32_t)data[6] << 8;
		uint32_t caplen;

		if (!(flags & 0x20))
			delta = (delta & 0x8000 ? 0xffff0000u : 0) |
				(delta & 0xffff);
		data += 7;
		size -= 7;
		if (len > size)
			len = (uint32_t)size;
		caplen = flags & 2 ? len - len / 4 : len;
		seq += delta;
		ts += ((flags >> 2) & 7) * (HOLD_NS / 4);
		s.ts_max = ts;
		s.in_syn = flags & 1;
		/* A wide SYN keeps the order checkable: a new ISN starts
		 * the stream afresh, the same one again changes nothing. */
		if ((flags & 0x20) && !s.in_syn)
			s.wide = true;
		s.dgram_len = caplen;
		s.dgram_ts = ts;
		fixstream_segment(fs, seq, flags & 1 ? FRAME_TCP_SYN |
				  FRAME_TCP_ACK : FRAME_TCP_ACK, data, caplen, len,
				  ts, wire_of(ts), (uint64_t)ts * 3 + 1);
		if (s.in_syn)
			s.have_prev = false;
		fed += caplen;
		records++;
		if (fixstream_hole(fs, &lo) &&
		    (!tcp || (lo && (lo < s.ts_min || lo > s.ts_max))))
			__builtin_trap();
		data += len;
		size -= len;
	}
	fixstream_finish(fs);
	if (fixstream_hole(fs, &lo))
		__builtin_trap();
	st = fixstream_stats(fs);
	if (st->messages != s.messages || st->bytes > fed ||
	    fixstream_last_ts(fs) != (records ? s.ts_max : 0))
		__builtin_trap();
	fuzz_sink += st->lost_bytes + st->skipped_bytes + st->midstream_bytes +
		     st->bad_checksum + st->bad_framing + st->truncated +
		     st->retransmits + st->out_of_order + st->segments;
	fixstream_destroy(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, true);
	run(data, size, false);
	return 0;
}
