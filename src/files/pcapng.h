/* pcapng.h — writing pcapng capture files.
 *
 * libpcap reads pcapng but writes only classic pcap, which has no interface
 * ids, no per-packet direction and one timestamp resolution per file; tapless
 * needs all three, so it writes pcapng itself (draft-ietf-opsawg-pcapng):
 * - a Section Header Block with shb_hardware, shb_os, shb_userappl and the
 *   host name in opt_comment ("host NAME");
 * - one Interface Description Block per (interface, stamp source), with
 *   if_name, if_tsresol 9 (nanoseconds) and if_description saying where its
 *   stamps come from, in a form readers parse back (pcapng_describe());
 * - Enhanced Packet Blocks with epb_flags for the direction (and
 *   epb_packetid where one packet crosses several interfaces);
 * - Interface Statistics Blocks with receive and drop counters, and, when
 *   a captured link went down or came back, one whose opt_comment says so
 *   (PCAPNG_LINK_DOWN, PCAPNG_LINK_UP, then free text); heartbeats are
 *   ISBs too (PCAPNG_HEARTBEAT, pcapng_write_heartbeat()).
 *
 * A file is written under a temporary name in the same directory and renamed
 * to its final name only when closed (after fsync), so a reader never sees a
 * half-written file under the final name and a crash leaves the temporary
 * file, whose whole blocks are readable. When a write fails (a full disk)
 * the file is cut back to its last whole block, stays under its temporary
 * name, and the packets that did not reach it are counted (pcapng_lost()). Writes are buffered (one 1 MiB
 * buffer per file, allocated at open); no allocation per packet.
 */
#ifndef TAPLESS_PCAPNG_H
#define TAPLESS_PCAPNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pcapng_writer;

/* epb_flags direction bits. */
enum pcapng_dir { PCAPNG_DIR_UNKNOWN = 0, PCAPNG_DIR_IN = 1, PCAPNG_DIR_OUT = 2 };

/* Where an interface's stamps come from; stored in if_description. */
struct pcapng_source {
	bool hw;		/* NIC hardware stamps, else host (software) */
	int phc;		/* PHC index, -1 if none */
	int timescale;		/* enum ts_timescale */
	char note[96];		/* free text kept after the fields, or "" */
};

/* The note tapless-capd gives an interface whose frames were handed over
 * with their TX stamps by the program that sent them (tapless-capd
 * --tx-socket), for people. Files written before the interface flag
 * (pcapng_iface.sender) said so with this note alone: readers fall back on
 * it when the flag's option is absent (capfile.h). */
#define PCAPNG_NOTE_SENDER "sent, stamped by the sending program"

struct pcapng_iface {
	const char *name;	/* if_name */
	uint16_t linktype;	/* DLT/LINKTYPE_*, e.g. 1 (Ethernet) */
	uint32_t snaplen;	/* 0: unlimited */
	struct pcapng_source src;
	bool sender;		/* frames are sender-side records stamped on
				 * the sending socket, not the capture
				 * point's: tapless's interface flags option
				 * (tapless-pcapng(5)) */
};

struct pcapng_section {
	const char *hostname;	/* opt_comment "host NAME" */
	const char *hardware;	/* shb_hardware, NULL: from uname */
	const char *os;		/* shb_os, NULL: from uname */
	const char *userappl;	/* shb_userappl, e.g. "tapless-capd 0.1" */
};

/* Create path's temporary sibling and write the section header. Returns 0 or
 * -errno. */
int pcapng_open(struct pcapng_writer **out, const char *path,
		const struct pcapng_section *sec);

/* Add an interface; *id receives its interface id for packets. */
int pcapng_add_iface(struct pcapng_writer *w, const struct pcapng_iface *ifc,
		     uint32_t *id);

/* The same with if_description desc instead of src's (src is ignored): an
 * interface whose stamps come from no tapless source, such as tapless
 * sim's optical tap (as an Endace DAG's file has it), which readers must
 * not take for one. desc must not be parsed back by
 * pcapng_parse_description(). */
int pcapng_add_iface_desc(struct pcapng_writer *w,
			  const struct pcapng_iface *ifc, const char *desc,
			  uint32_t *id);

/* One packet. caplen bytes of data are written (truncated to the
 * interface's snaplen), origlen is its length on the wire. */
int pcapng_write_packet(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
			const void *data, uint32_t caplen, uint32_t origlen,
			enum pcapng_dir dir);

/* The same with an epb_packetid: a packet seen on several interfaces (a
 * switch's ingress and egress ports) carries one id in each of its blocks,
 * so readers pair them without looking at the bytes. NULL: no id. */
int pcapng_write_packet_id(struct pcapng_writer *w, uint32_t id,
			   int64_t ts_ns, const void *data, uint32_t caplen,
			   uint32_t origlen, enum pcapng_dir dir,
			   const uint64_t *packet_id);

/* Interface statistics at ts_ns: packets received and dropped by the
 * capture (~0ULL: unknown, the option is left out). */
int pcapng_write_stats(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
		       uint64_t recv, uint64_t drop);

/* Link events, in an ISB's opt_comment: a comment that begins with one of
 * these marks a gap in the capture as a link event (the interface went
 * down, lost its carrier or was removed; it came back), not a quiet link.
 * Text after the mark (" (interface removed)") is for people. */
#define PCAPNG_LINK_DOWN "tapless: link down"
#define PCAPNG_LINK_UP "tapless: link up"

/* A heartbeat, in an ISB's opt_comment: the writer promises that every
 * frame it captured with a stamp at or before the ISB's timestamp is
 * already in the file, earlier in it. Written periodically on an
 * interface whose stamps are host (system) time, even while the links are
 * quiet, so a reader following the file tells a quiet link from a capture
 * that stopped, and knows how far it may read without waiting for frames
 * still on their way. Readers that do not know it see an ordinary ISB. */
#define PCAPNG_HEARTBEAT "tapless: complete to"

/* A heartbeat at ts_ns on interface id: an ISB whose opt_comment is
 * PCAPNG_HEARTBEAT, without counters. id must be an interface whose stamps
 * are host (system) time; keeping the promise is the caller's part (what
 * it has written, what it still holds). Returns 0 or -errno, as
 * pcapng_write_stats(). */
int pcapng_write_heartbeat(struct pcapng_writer *w, uint32_t id,
			   int64_t ts_ns);

/* The same as pcapng_write_stats() with an opt_comment (NULL: none; at most
 * 200 bytes), e.g. a link event at ts_ns. */
int pcapng_write_event(struct pcapng_writer *w, uint32_t id, int64_t ts_ns,
		       uint64_t recv, uint64_t drop, const char *comment);

/* Write out the buffer (the file stays under its temporary name). */
int pcapng_flush(struct pcapng_writer *w);

/* Bytes written so far, including the buffer (for rotation by size). */
uint64_t pcapng_bytes(const struct pcapng_writer *w);

/* Packets that pcapng_write_packet*() took (returned 0 for) and that a
 * write error then kept from the file: they were in the buffer when a write
 * failed. A packet whose own call failed is not among them. */
uint64_t pcapng_lost(const struct pcapng_writer *w);

/* Flush, fsync, rename to the final name, free. With discard, remove the
 * temporary file instead. Returns 0 or the first -errno met; after an error
 * the file stays under its temporary name, holding whole blocks only (or is
 * removed when nothing reached it). Call pcapng_flush() and pcapng_lost()
 * first to know what a failing close loses. */
int pcapng_close(struct pcapng_writer *w, bool discard);

/* The if_description text for a source ("tapless: source=hw phc=2
 * timescale=tai; NOTE"), and back. Parsing returns -EINVAL when desc is not
 * ours (another writer's file): the caller then knows nothing of the
 * source. */
int pcapng_describe(const struct pcapng_source *src, char *buf, size_t len);
int pcapng_parse_description(const char *desc, struct pcapng_source *src);

#endif
