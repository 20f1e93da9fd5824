/* pktring.h — a packet socket's receive ring (PACKET_RX_RING, TPACKET_V2):
 * frames read from shared memory, with no system call per frame.
 *
 * The kernel copies each frame it hands the socket into the next free slot
 * of a ring mapped into both address spaces, with its length, its stamp and
 * a status word, and gives the slot to user space by setting the status;
 * pktring_next() reads the slot at the head, pktring_release() gives it
 * back. Nothing is allocated per frame; the ring is mapped once.
 *
 * TPACKET_V2, not V3: V3 hands whole blocks over, when a block is full or
 * its retire timer (milliseconds) fires, so a lone frame can wait a
 * millisecond before user space may read it; V2 hands each frame over as
 * soon as it is copied, which is what a program forwarding frames on a
 * schedule needs. V3's gain, fewer status words to read per frame at
 * millions of frames a second, does not matter at these rates.
 *
 * Every frame comes with a stamp of the kernel's, and its kind says which:
 * - PKTRING_TS_HW: the NIC's (PHC time), when pktring_create() was asked
 *   for hardware stamps and the frame has one;
 * - PKTRING_TS_SW: the software stamp taken when the stack first saw the
 *   frame (skb->tstamp, CLOCK_REALTIME), what SO_TIMESTAMPING would give;
 *   it exists only while some socket has RX software stamping on (ts.h:
 *   the kernel-wide switch);
 * - PKTRING_TS_COPY: neither, so the kernel took CLOCK_REALTIME as it
 *   copied the frame into the ring: later than an arrival stamp by the
 *   time the frame waited in the stack's backlog (usually under a
 *   microsecond), still before user space could see it. A frame sent by a
 *   local TCP socket over veth gets this kind: its skb->tstamp holds the
 *   sender's departure time (EDT, CLOCK_MONOTONIC), which the kernel keeps
 *   across the veth and does not overwrite with an arrival stamp. (A
 *   recvmsg on a packet socket, given such a frame, reports instead the
 *   time of the recvmsg call as its software stamp: later still.)
 */
#ifndef TAPLESS_PKTRING_H
#define TAPLESS_PKTRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pktring;

enum pktring_stamp { PKTRING_TS_COPY, PKTRING_TS_SW, PKTRING_TS_HW };

/* One received frame, valid until pktring_release(); its bytes are the
 * caller's to change until then (a checksum completed in place). */
struct pktring_frame {
	uint8_t *data;		/* the frame, from its Ethernet header */
	uint32_t len;		/* its length on the wire (without FCS) */
	uint32_t caplen;	/* bytes at data: less than len when the
				 * frame did not fit its slot */
	int64_t ns;		/* the kernel's stamp, of kind: */
	enum pktring_stamp kind;
	bool losing;		/* the kernel dropped frames for lack of a
				 * free slot since the last statistics read */
	/* The sender left a checksum to the NIC (CHECKSUM_PARTIAL): it goes
	 * at csum_start + csum_offset, over csum_start to the end (only with
	 * vnet in pktring_create()). */
	bool needs_csum;
	uint16_t csum_start, csum_offset;
};

/* Map a receive ring of at least frames slots of frame_bytes each (rounded
 * up: a slot also holds the kernel's header) on the packet socket fd, which
 * must not be bound yet or must not have received anything the caller
 * wants (the ring starts empty). vnet: frames come with a virtio header
 * (PACKET_VNET_HDR), set here because the kernel takes it only before the
 * ring. hw: ask for the NIC's stamps (PACKET_TIMESTAMP raw hardware); the
 * caller enables hardware stamping on the interface. Returns 0 or -errno;
 * the caller still owns fd and closes it after pktring_destroy(). */
int pktring_create(struct pktring **out, int fd, size_t frame_bytes,
		   unsigned frames, bool vnet, bool hw);
void pktring_destroy(struct pktring *r);

/* The frame at the head of the ring: 1 with *f filled, 0 when the ring is
 * empty. Reading an empty ring costs one memory read, no system call. The
 * same frame comes back until pktring_release(). */
int pktring_next(struct pktring *r, struct pktring_frame *f);

/* Give the head slot back to the kernel and move on. */
void pktring_release(struct pktring *r);

#endif
