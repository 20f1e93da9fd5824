/* txmatch.h — sender stamps that name a frame (keyed records, txsock.h)
 * joined to the outbound frame the packet socket captured.
 *
 * tapless-stamp (a preload shim in an unmodified program) and capd's BPF
 * sock_ops program stamp sends without seeing the frames: each stamp comes
 * with a key — the flow and, for TCP, the sequence number of the stamped
 * byte; for UDP, the datagram's length and payload hash. The packet socket
 * saw every such frame leave (its stamp taken before the driver). txmatch
 * keeps the outbound frames of the last hold_ns, and the stamps that came
 * before their frame, and hands each pair on once both are in: capd writes
 * the frame again, on the interface's sender-stamped interface, with the
 * sender's stamp.
 *
 * A TCP stamp belongs to the newest kept frame of its flow whose sequence
 * range holds the stamped byte (a retransmission's stamp comes after it);
 * a UDP stamp to the newest unstamped datagram of its flow with that length
 * and hash. Only SND stamps are joined; SCHED and ACK stamps are counted.
 *
 * Memory is allocated once at create: frames are copied into a ring of
 * arena_bytes, indexed per flow; nothing is allocated per frame or stamp.
 * Frames and stamps older than hold_ns are dropped and counted.
 */
#ifndef TAPLESS_TXMATCH_H
#define TAPLESS_TXMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/txsock.h"

struct txmatch;

/* A pair made: the frame (as captured on interface slot `slot`, with the
 * tag txmatch_frame_tagged() gave it, else 0) and the sender's stamp of
 * it. frame points into txmatch's arena, valid during the call only. */
typedef void (*txmatch_fn)(void *arg, unsigned slot, uint64_t tag,
			   const uint8_t *frame, uint32_t caplen,
			   uint32_t origlen, const struct txsock_rec *stamp);

struct txmatch_config {
	int64_t hold_ns;	/* how long frames and stamps wait: 0 → 1 s */
	size_t arena_bytes;	/* frame copies: 0 → 32 MiB */
	unsigned max_stamps;	/* stamps waiting for their frame: 0 → 65536 */
	unsigned max_flows;	/* flows with kept frames: 0 → 4096 */
	txmatch_fn on_match;
	void *arg;
};

struct txmatch_stats {
	uint64_t frames;	/* outbound TCP/UDP frames with payload kept */
	uint64_t stamps;	/* SND stamps taken */
	uint64_t matched;	/* pairs handed on */
	uint64_t unmatched;	/* stamps no frame came for within hold_ns */
	uint64_t stamps_full;	/* stamps dropped: max_stamps waiting */
	uint64_t flows_full;	/* frames not kept: max_flows flows */
	uint64_t duplicates;	/* stamps of a frame stamped already */
	uint64_t other_stages;	/* SCHED and ACK stamps (not joined) */
};

int txmatch_create(struct txmatch **out, const struct txmatch_config *cfg);
void txmatch_destroy(struct txmatch *m);

/* An outbound frame the packet socket captured on interface slot `slot`,
 * linktype as pcap gives it, at now_ns (CLOCK_MONOTONIC). Frames that are
 * not TCP or UDP over IP, or carry no payload, are ignored. May call
 * on_match for stamps that were waiting for this frame. */
void txmatch_frame(struct txmatch *m, unsigned slot, int linktype,
		   const uint8_t *frame, uint32_t caplen, uint32_t origlen,
		   int64_t now_ns);
/* The same, with the caller's tag for the frame, handed back with its
 * pair (capd: where the captured copy waits in its reorder buffer). */
void txmatch_frame_tagged(struct txmatch *m, unsigned slot, int linktype,
			  const uint8_t *frame, uint32_t caplen,
			  uint32_t origlen, int64_t now_ns, uint64_t tag);

/* A keyed record (TXSOCK_F_KEYED). Calls on_match at once when its frame
 * is kept, else holds it until the frame comes or hold_ns passes. */
void txmatch_stamp(struct txmatch *m, const struct txsock_rec *r,
		   int64_t now_ns);

/* Drop frames and stamps older than hold_ns (counting stamps as
 * unmatched). Call at least a few times per hold_ns. */
void txmatch_expire(struct txmatch *m, int64_t now_ns);

void txmatch_stats(const struct txmatch *m, struct txmatch_stats *st);

#endif
