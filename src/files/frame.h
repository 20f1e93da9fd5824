/* frame.h — Ethernet/IP/TCP|UDP frames: built for packets a program sent or
 * received through a socket, and parsed back out of captures.
 *
 * An instrumented program knows a message's bytes, its socket's addresses
 * and ports and, for TCP, the sequence number of its first byte; it does not
 * see the headers the kernel put on the wire. To write its packets in a
 * capture file that Wireshark and the correlator read like any other, it
 * builds them: Ethernet II (locally administered MACs derived from the IP
 * addresses, since the real ones are not known), IPv4 or IPv6, TCP or UDP,
 * with correct checksums. The parser takes what captures hold (Ethernet with
 * 802.1Q tags, Linux cooked SLL/SLL2, raw IP) back to the same fields.
 * Neither allocates.
 */
#ifndef TAPLESS_FRAME_H
#define TAPLESS_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* pcap LINKTYPE_* values the parser knows. */
#define FRAME_LINK_ETHERNET 1
#define FRAME_LINK_RAW 101
#define FRAME_LINK_SLL 113
#define FRAME_LINK_SLL2 276

/* TCP flags. */
#define FRAME_TCP_FIN 0x01
#define FRAME_TCP_SYN 0x02
#define FRAME_TCP_RST 0x04
#define FRAME_TCP_PSH 0x08
#define FRAME_TCP_ACK 0x10

/* Room for the longest header frame_build() writes (Ethernet, IPv6, TCP). */
#define FRAME_MAX_HEADER (14 + 40 + 20)

struct frame_flow {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint8_t src[16], dst[16];	/* network order; IPv4 in the first 4 */
	uint16_t sport, dport;	/* host order */
};

struct frame_info {
	struct frame_flow flow;
	uint32_t seq, ack;	/* TCP */
	uint8_t tcp_flags;
	uint16_t ip_len;	/* IP total length as the header says */
	const uint8_t *payload;	/* into the parsed data */
	uint32_t payload_len;	/* captured payload (may be cut by snaplen) */
	uint32_t payload_wire;	/* payload length per the IP header */
};

/* The flow of a connected socket as seen from it (local → peer); IPv4
 * mapped in IPv6 becomes IPv4. reverse swaps the ends (what it receives).
 * Returns 0, -EPROTONOSUPPORT for a socket that is not TCP or UDP over IP,
 * or -errno. */
int frame_flow_of_socket(struct frame_flow *f, int fd, int reverse);

/* Swap source and destination. */
void frame_flow_reverse(struct frame_flow *f);

/* Header length frame_build() writes for f. */
size_t frame_header_len(const struct frame_flow *f);

/* Build one Ethernet frame carrying payload into buf (cap bytes). For TCP,
 * seq, ack and flags fill the TCP header (flags 0: PSH|ACK); UDP ignores
 * them. Returns the frame length, or -EMSGSIZE when cap is too small or the
 * payload does not fit one IP packet. */
int frame_build(void *buf, size_t cap, const struct frame_flow *f, uint32_t seq,
		uint32_t ack, uint8_t flags, const void *payload, size_t len);

/* Parse a captured frame of the given linktype. Returns 0, -EPROTONOSUPPORT
 * for a frame that is not TCP or UDP over IPv4/IPv6 (ARP, ICMP, ...), or
 * -EBADMSG when headers are cut short or inconsistent. */
int frame_parse(const void *data, size_t caplen, int linktype,
		struct frame_info *out);

#endif
