/* shim_errq.h — what tapless-stamp reads from a socket's error queue: the
 * TX stamp of one message, and for TCP the absolute sequence number of the
 * stamped byte (the anchor of the keys).
 *
 * The kernel keys a TCP TX stamp by ee_data = (sequence number of the
 * stamped byte) - sk_tskey, where sk_tskey is the socket's write_seq when
 * SOF_TIMESTAMPING_OPT_ID was first set (snd_una before Linux 6.2's
 * OPT_ID_TCP), a number a program cannot read without CAP_NET_ADMIN. The
 * stamped byte is the last byte of a send, tskey, set on the skb holding
 * it when the send returns. But a stamp taken without OPT_TSONLY comes
 * with the packet that was stamped, headers from the link layer on (from
 * the IP header on a device without one), and that packet holds the
 * stamped byte: the kernel moves the request to the part holding tskey
 * when it splits an skb (tcp_fragment_tstamp, tcp_gso_tstamp). So with
 * its sequence number S and payload length L,
 *
 *	S - ee_data <= base <= S + L - 1 - ee_data,
 *
 * and the upper end is the base itself when the stamped byte is the
 * segment's last, as it is unless a later send appended bytes to the skb
 * after its stamp was asked for (then tskey stays the earlier send's last
 * byte, inside the segment). No packet gives an upper end below the base:
 * the smallest upper end seen is the base once one segment ended with its
 * stamped byte, and several stamps reaching that same smallest upper end
 * confirm it. Every later stamp's byte is then base + ee_data (mod 2^32).
 *
 * Pure: no socket, no allocation; the unit tests feed built messages.
 */
#ifndef TAPLESS_SHIM_ERRQ_H
#define TAPLESS_SHIM_ERRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct msghdr;
struct frame_flow;

/* One TX stamp from the error queue. */
struct shim_errq_stamp {
	int64_t ns;		/* ns since the epoch of its clock */
	bool hw;		/* a hardware (PHC) stamp, else software */
	uint16_t stage;		/* enum txsock_stage */
	uint32_t key;		/* ee_data: the OPT_ID key */
};

/* Parse the control messages of an error queue message. Returns 1 with
 * *st filled for a TX stamp (origin SO_EE_ORIGIN_TIMESTAMPING with an
 * SCM_TIMESTAMPING stamp), 0 for a message that is something else (an
 * ICMP error, a zerocopy completion: not ours to read), -EBADMSG for a
 * stamp message without a usable stamp. */
int shim_errq_parse(const struct msghdr *m, struct shim_errq_stamp *st);

/* The looped packet of a stamp taken without OPT_TSONLY: len bytes (maybe
 * cut short by the buffer: only headers are needed), from the link layer
 * (Ethernet) or from the IP header. When it is a TCP segment of flow (the
 * sender's side) with payload, sets *first and *last to the sequence
 * numbers of its first and last payload bytes and returns 0; else
 * -EBADMSG or -EPROTONOSUPPORT. */
int shim_errq_segment(const void *pkt, size_t len, const struct frame_flow *flow,
		      uint32_t *first, uint32_t *last);

/* Finding a TCP socket's base from its first looped stamps. */
#define SHIM_ANCHOR_AGREE 3	/* stamps reaching the smallest upper end */
#define SHIM_ANCHOR_TRIES 64	/* looped stamps before giving up */

struct shim_anchor {
	uint32_t base;		/* valid once done */
	uint32_t ref;		/* the first upper end: offsets from it */
	int32_t hi, lo;		/* smallest upper end, largest lower end */
	unsigned hits, tries;
	bool have, done;
};

/* Feed the key of a looped stamp and the first and last bytes of its
 * segment. Returns 1 when the base is set by this stamp, 0 while still
 * anchoring or once done (then a stamp whose segment does not hold
 * base + key is counted in *mismatch), -1 when no base was confirmed
 * after SHIM_ANCHOR_TRIES stamps. */
int shim_anchor_feed(struct shim_anchor *a, uint32_t key, uint32_t first,
		     uint32_t last, uint64_t *mismatch);

#endif
