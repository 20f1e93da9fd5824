/* capfile.h — reading capture files: pcapng (our own reader, which keeps
 * interface ids, directions and any timestamp resolution), classic pcap
 * with microsecond or nanosecond stamps (through libpcap) and Endace ERF
 * (DAG capture cards' records, Ethernet ones), behind one interface.
 * cap_open() picks the reader from the file's magic number, or, for ERF,
 * which has none, from a first record that looks like one.
 *
 * Bad input never crashes and never makes the reader allocate without
 * bound: a block larger than CAP_MAX_BLOCK, lengths that disagree, options
 * that run past their block, a file cut mid-block — each ends the stream with
 * -EBADMSG and a message naming the file and the byte offset (cap_error()),
 * after every whole packet before it was returned.
 */
#ifndef TAPLESS_CAPFILE_H
#define TAPLESS_CAPFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "files/pcapng.h"
#include "files/tapfmt.h"

#define CAP_MAX_BLOCK (16u << 20)

struct cap_reader;

enum cap_format { CAP_PCAPNG, CAP_PCAP, CAP_ERF };

struct cap_iface {
	char name[64];		/* if_name, or "" */
	char description[256];	/* if_description, or "" */
	uint16_t linktype;
	uint32_t snaplen;
	int64_t resolution_ns;	/* stamp resolution in ns (1 for ns, 1000
				 * for µs, 0 when finer than 1 ns) */
	bool src_known;		/* description was ours: src is valid */
	struct pcapng_source src;
	bool sender;		/* frames stamped by the program that sent
				 * them, not by the capture point: tapless's
				 * interface flags option (pcapng_iface.sender)
				 * or, in a file written before it, an
				 * if_description of ours whose note begins
				 * PCAPNG_NOTE_SENDER */
};

struct cap_packet {
	int64_t ts_ns;		/* nanoseconds since 1970 (of the timescale) */
	uint32_t caplen, origlen;
	const uint8_t *data;	/* valid until the next cap_next() */
	uint32_t iface;		/* index for cap_iface() */
	enum pcapng_dir dir;
	bool has_packet_id;	/* epb_packetid, same on every interface the
				 * packet crossed (tapless-swemu) */
	uint64_t packet_id;
	uint64_t offset;	/* byte offset of the packet's block/record */
	/* A tap or switch stamp found in the frame (tapfmt.h): ts_ns is the
	 * device's, the bytes it added are cut from data, caplen and
	 * origlen, and record_ns keeps the record's own stamp (the capture
	 * server's). tap is TAPFMT_NONE when the record's stamp is all. */
	enum tapfmt_kind tap;
	int64_t record_ns;
	uint16_t ps;		/* picoseconds past ts_ns, when the tap says */
	int timescale;		/* enum ts_timescale when the tap says, else
				 * TS_SCALE_UNKNOWN (0) */
	bool degraded;		/* the device flagged the stamp */
	bool has_port;		/* device and port are known */
	uint16_t device, port;
};

struct cap_stats {
	uint64_t packets;
	uint64_t blocks_skipped;	/* unknown or unused block types (and
					 * ISBs, link events or not) */
	uint64_t sections;
	/* Link events written by tapless-capd (an ISB whose opt_comment
	 * begins PCAPNG_LINK_DOWN / PCAPNG_LINK_UP): a gap in the packets
	 * after a link down is a link event, not a quiet link. */
	uint64_t link_down, link_up;
	int64_t first_link_down_ns;	/* stamp of the first link down */
	uint32_t first_link_down_iface;	/* its interface, for cap_iface() */
	/* Heartbeats (PCAPNG_HEARTBEAT): the writer has put in the file
	 * every frame stamped at or before the latest one's stamp. */
	uint64_t heartbeats;
	int64_t heartbeat_ns;		/* the latest, on its interface's scale */
	uint32_t heartbeat_iface;	/* its interface, for cap_iface() */
	/* Capture drops: the sum over interfaces of each one's latest
	 * isb_ifdrop (counters of the capture since it was opened). */
	uint64_t drops;
	bool drops_known;		/* an ISB said */
	/* Tap and switch stamps (cap_set_tapfmt()): frames stamped by the
	 * device, its own frames taken in (keyframes), frames left out for
	 * want of a readable stamp (none, or bytes that cannot be right),
	 * and stamps the device flagged as degraded. */
	enum tapfmt_kind tap;		/* the format in force */
	uint64_t tap_stamped, tap_consumed, tap_missing, tap_bad;
	uint64_t tap_degraded;
};

#define CAP_ERRBUF 512

/* Open path. Returns 0, -errno, or -EBADMSG (not a capture we read). On
 * failure *out is NULL and err says why, naming the file. */
int cap_open(struct cap_reader **out, const char *path, char err[CAP_ERRBUF]);

/* The next packet: 1, 0 at the end, or -EBADMSG / -errno (the stream is
 * over; cap_error() says why and where). While following (cap_follow()),
 * -EAGAIN where the file ends for now, whether at a block boundary or
 * inside a block still being written: call again once it has grown. */
int cap_next(struct cap_reader *r, struct cap_packet *pkt);

/* Open a file that may still be written (pcapng only: a classic pcap file
 * is read as it stands, through libpcap, which cannot wait for more, and
 * so is an ERF file).
 * Returns -EAGAIN, with nothing open, while the file is too short to hold
 * its section header; otherwise as cap_open(). The reader follows the
 * file (cap_next() returns -EAGAIN at its end) until cap_follow(r, false). */
int cap_open_follow(struct cap_reader **out, const char *path,
		    char err[CAP_ERRBUF]);

/* Follow the file's growth, or stop: once the writer is known to be done
 * (the file was closed, a newer one exists), the end is the end and a
 * block cut short is damage, as in a file read whole. */
void cap_follow(struct cap_reader *r, bool on);

const struct cap_iface *cap_iface(const struct cap_reader *r, uint32_t id);
uint32_t cap_iface_count(const struct cap_reader *r);
enum cap_format cap_format(const struct cap_reader *r);
const char *cap_path(const struct cap_reader *r);
void cap_stats(const struct cap_reader *r, struct cap_stats *st);

/* How frames' own stamps are read (tapfmt.h), before the first cap_next():
 * TAPFMT_AUTO (cap_open()'s default) looks at the first 64 Ethernet frames
 * of interfaces tapless did not describe and picks the format they carry,
 * if any; TAPFMT_NONE takes every record's stamp as it is (and is all a
 * followed file gets unless set); a format applies that one. Frames of a
 * format in force whose stamp cannot be read are left out, counted
 * (cap_stats()), and the first is described by cap_warning(). Returns 0,
 * or -EBUSY once packets were read. */
int cap_set_tapfmt(struct cap_reader *r, enum tapfmt_kind kind);

/* The first frame left out for its tap stamp, as "PATH: record N (offset
 * OFF): FORMAT: why", or "" when none was. */
const char *cap_warning(const struct cap_reader *r);

/* The host name the file records, as pcapng_open() writes it (an
 * opt_comment "host NAME" in its first section header; tapless-capd -H,
 * tapless sim), or "" when it records none (classic pcap never does). */
const char *cap_host(const struct cap_reader *r);

/* The last error as "PATH: offset N: what", or "" when there was none. */
const char *cap_error(const struct cap_reader *r);

void cap_close(struct cap_reader *r);

#endif
