/* txsock.h — handing the TX stamps of instrumented senders to tapless-capd.
 *
 * A packet socket never sees the hardware TX stamp of another socket's
 * packet, so a program that sends with the tapless timestamping core (ts.h)
 * hands each sent packet — its bytes as a frame (frame.h) and its stamp — to
 * the capture daemon over a local stream socket; capd writes it into the
 * same pcapng file as the frames it captures, in time order.
 *
 * Wire format (all fields little-endian; documented in tapless-capd(8)): a
 * stream of records, each a 40-byte header followed by a body: caplen frame
 * bytes (version 1), or a key block naming a frame on the wire (version 2).
 *
 *   off len field
 *     0   4 magic     "TLTX" (0x58544c54 read little-endian)
 *     4   2 version   1
 *     6   2 hdr_len   40 (a reader skips header bytes it does not know)
 *     8   4 rec_len   hdr_len + caplen, at most TXSOCK_MAX_RECORD
 *    12   4 ifindex   interface the packet left by
 *    16   8 ts_ns     the TX stamp, ns since the epoch of its timescale
 *    24   4 origlen   frame length on the wire (>= caplen)
 *    28   2 flags     TXSOCK_F_*
 *    30   2 linktype  LINKTYPE_* of the frame (1: Ethernet)
 *    32   4 phc       PHC index of a hardware stamp, -1 for software
 *    36   4 dropped   records this sender has dropped since it started
 *                     (mod 2^32): capd reports senders' losses while
 *                     they run; 0 from a sender that does not count
 *
 * A version 1 record carries the frame its sender built (the probes know
 * every byte they send). A version 2 record carries only the stamp and the
 * key of the frame it belongs to, for senders that do not see the frame
 * (tapless-stamp's TSONLY stamps, the BPF sock_ops stamps of capd
 * --stamp-cgroup): capd finds that frame among the outbound frames it
 * captured and writes a copy of it with the sender's stamp. Its header has
 * TXSOCK_F_KEYED set, origlen and linktype 0, and a 56-byte body:
 *
 *   off len field
 *     0   1 family    4 (IPv4) or 6 (IPv6)
 *     1   1 proto     6 (TCP) or 17 (UDP)
 *     2   2 sport     the sender's port
 *     4   2 dport     the peer's port (UDP: also a multicast group's)
 *     6   2 stage     TXSOCK_STAGE_*: which stamp of the frame this is
 *     8  16 src       the sender's address, network order (IPv4 in the
 *                     first 4 bytes, the rest 0)
 *    24  16 dst       the peer's address, likewise
 *    40   4 seq       TCP: sequence number of the stamped byte (the last
 *                     byte of the send, as the kernel keys it); UDP: 0
 *    44   4 len       UDP: payload length of the datagram; TCP: 0
 *    48   8 hash      UDP: txsock_hash() of the whole payload; TCP: 0
 *
 * Version 1 senders keep writing version 1, so an older capd still takes
 * them; a capd older than keyed records refuses version 2 with a clear
 * "unsupported record version".
 * The sender never blocks: records go into a buffer that is written without
 * waiting; when the buffer is full (capd stalled or gone) records are
 * dropped and counted, and the connection is retried at most once a second.
 */
#ifndef TAPLESS_TXSOCK_H
#define TAPLESS_TXSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "files/frame.h"

#define TXSOCK_MAGIC 0x58544c54u
#define TXSOCK_VERSION 1	/* frame records */
#define TXSOCK_VERSION_KEYED 2	/* key records */
#define TXSOCK_HDR_LEN 40
#define TXSOCK_KEY_LEN 56
#define TXSOCK_MAX_FRAME 65536
#define TXSOCK_MAX_RECORD (TXSOCK_HDR_LEN + TXSOCK_MAX_FRAME)

enum {
	TXSOCK_F_HW = 1 << 0,		/* hardware stamp (PHC time) */
	TXSOCK_F_TAI = 1 << 1,		/* hardware stamp known to be TAI */
	TXSOCK_F_SHARED = 1 << 2,	/* stamp of a later send this one was
					 * merged with */
	TXSOCK_F_KEYED = 1 << 3,	/* a key, not a frame (version 2) */
};

/* Which of a frame's stamps a keyed record carries. Only SND stamps are
 * written as the frame's TX stamp; the others time the stages before and
 * after it. */
enum txsock_stage {
	TXSOCK_STAGE_SND = 0,	/* left the host: the driver's software
				 * stamp, or the NIC's hardware stamp */
	TXSOCK_STAGE_SCHED = 1,	/* entered the qdisc (software) */
	TXSOCK_STAGE_ACK = 2,	/* TCP: acknowledged by the peer */
	TXSOCK_STAGE_MAX = 2,
};

/* The frame a keyed record names. */
struct txsock_key {
	struct frame_flow flow;	/* sender → peer */
	uint16_t stage;		/* enum txsock_stage */
	uint32_t seq;		/* TCP: the stamped byte's sequence number */
	uint32_t len;		/* UDP: payload length */
	uint64_t hash;		/* UDP: txsock_hash() of the payload */
};

/* A UDP payload's hash: 64-bit FNV-1a (hmap_fnv1a, fixed for the wire),
 * fed in pieces (an iovec's) from TXSOCK_HASH_INIT. */
#define TXSOCK_HASH_INIT 0xcbf29ce484222325ull
uint64_t txsock_hash(uint64_t h, const void *data, size_t len);

struct txsock_rec {
	uint32_t ifindex;
	int64_t ts_ns;
	uint32_t origlen;
	uint16_t flags;
	uint16_t linktype;
	int32_t phc;
	const uint8_t *frame;
	uint32_t caplen;
	uint32_t dropped;	/* decoded: the header's dropped (encoding
				 * takes the client's own count) */
	struct txsock_key key;	/* with TXSOCK_F_KEYED (frame NULL,
				 * caplen, origlen and linktype 0) */
};

/* Encode r into buf (cap bytes): version 1 with a frame, version 2 with a
 * key (TXSOCK_F_KEYED). Returns the record length, -EMSGSIZE, or -EINVAL
 * for a key of no known family, protocol or stage. */
int txsock_encode(void *buf, size_t cap, const struct txsock_rec *r);

/* Decode the record at the start of buf (len bytes). Returns the record
 * length, 0 when buf holds only part of a record (read more), -EBADMSG for
 * a bad magic or lengths or a bad key, -EPROTONOSUPPORT for another
 * version. r->frame points into buf; a keyed record's key is in r->key. */
int txsock_decode(const void *buf, size_t len, struct txsock_rec *r);

/* The sending side, for instrumented programs. */
struct txsock_client;

struct txsock_client_stats {
	uint64_t sent;		/* records queued on a live connection (a
				 * daemon that dies can lose the last
				 * ones queued) */
	uint64_t dropped;	/* records dropped: buffer full or no daemon */
	uint64_t connects;	/* successful connections */
};

/* Connect to capd's socket at path. A daemon that is not there yet is not
 * an error: the client retries at most once a second on later sends, and
 * counts what it drops meanwhile. Returns 0 or -errno (bad path, -ENOMEM:
 * the client never aborts the program it runs in). */
int txsock_connect(struct txsock_client **out, const char *path);

/* The same, without trying to connect yet: all the memory the client
 * will use is taken now (a preload library allocates at start-up, never
 * on a path a signal handler may run). The first send connects. */
int txsock_client_new(struct txsock_client **out, const char *path);

/* Close the connection, drop what is queued and start the counts afresh;
 * the next send connects anew at once (a forked child, which must not
 * write on its parent's connection, nor report its parent's losses). */
void txsock_reset(struct txsock_client *c);
/* The same without closing the descriptor: it is no longer ours (the
 * program made that number a copy of one of its own). */
void txsock_forget(struct txsock_client *c);

/* Queue one record and write what the socket takes, without blocking.
 * Returns 0, or -ENOBUFS when the record was dropped (counted). */
int txsock_send(struct txsock_client *c, const struct txsock_rec *r);

/* Queue n records and write them with as few system calls as the socket
 * allows (a sender that reads many stamps at once). Returns how many
 * were queued; the rest were dropped, counted. */
size_t txsock_send_batch(struct txsock_client *c, const struct txsock_rec *r,
			 size_t n);

/* Write what is queued, waiting up to timeout_ms for the daemon to take it
 * (at exit). Returns 0 when everything is written, else -errno. */
int txsock_flush(struct txsock_client *c, int timeout_ms);

void txsock_client_stats(const struct txsock_client *c,
			 struct txsock_client_stats *st);
/* Count n records the caller dropped before they reached the client (a
 * full queue of its own): they go into dropped, and so into the count
 * each record tells capd. */
void txsock_client_add_dropped(struct txsock_client *c, uint64_t n);
/* The descriptor of the connection, or -1 while there is none: a preload
 * library keeps the program it runs in from closing it. */
int txsock_client_fd(const struct txsock_client *c);
void txsock_close(struct txsock_client *c);

/* The daemon's side: a listening socket at path, owned by the caller's uid
 * and gid (or group gid when gid != (gid_t)-1), mode 0660; a stale socket
 * left by a dead daemon is replaced, any other file is not. Returns the
 * descriptor or -errno (-EADDRINUSE: a daemon is listening there). */
int txsock_listen(const char *path, gid_t gid);

/* Accept one connection and check who it is: root, our own uid, or a
 * member of gid (when gid != (gid_t)-1). Returns the connected descriptor
 * (non-blocking) with *pid and *uid of the peer, -EACCES for a peer that
 * may not hand over stamps (closed), or -errno. */
int txsock_accept(int lfd, gid_t gid, pid_t *pid, uid_t *uid);

#endif
