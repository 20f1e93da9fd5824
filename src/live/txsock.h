/* txsock.h — handing the TX stamps of instrumented senders to tapless-capd.
 *
 * A packet socket never sees the hardware TX stamp of another socket's
 * packet, so a program that sends with the tapless timestamping core (ts.h)
 * hands each sent packet — its bytes as a frame (frame.h) and its stamp — to
 * the capture daemon over a local stream socket; capd writes it into the
 * same pcapng file as the frames it captures, in time order.
 *
 * Wire format (all fields little-endian; documented in tapless-capd(8)): a
 * stream of records, each a 40-byte header followed by caplen frame bytes.
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
 *    36   4 reserved  0
 *
 * The sender never blocks: records go into a buffer that is written without
 * waiting; when the buffer is full (capd stalled or gone) records are
 * dropped and counted, and the connection is retried at most once a second.
 */
#ifndef TAPLESS_TXSOCK_H
#define TAPLESS_TXSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TXSOCK_MAGIC 0x58544c54u
#define TXSOCK_VERSION 1
#define TXSOCK_HDR_LEN 40
#define TXSOCK_MAX_FRAME 65536
#define TXSOCK_MAX_RECORD (TXSOCK_HDR_LEN + TXSOCK_MAX_FRAME)

enum {
	TXSOCK_F_HW = 1 << 0,		/* hardware stamp (PHC time) */
	TXSOCK_F_TAI = 1 << 1,		/* hardware stamp known to be TAI */
	TXSOCK_F_SHARED = 1 << 2,	/* stamp of a later send this one was
					 * merged with */
};

struct txsock_rec {
	uint32_t ifindex;
	int64_t ts_ns;
	uint32_t origlen;
	uint16_t flags;
	uint16_t linktype;
	int32_t phc;
	const uint8_t *frame;
	uint32_t caplen;
};

/* Encode r into buf (cap bytes). Returns the record length or -EMSGSIZE. */
int txsock_encode(void *buf, size_t cap, const struct txsock_rec *r);

/* Decode the record at the start of buf (len bytes). Returns the record
 * length, 0 when buf holds only part of a record (read more), -EBADMSG for
 * a bad magic or lengths, -EPROTONOSUPPORT for another version. r->frame
 * points into buf. */
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
 * counts what it drops meanwhile. Returns 0 or -errno (bad path). */
int txsock_connect(struct txsock_client **out, const char *path);

/* Queue one record and write what the socket takes, without blocking.
 * Returns 0, or -ENOBUFS when the record was dropped (counted). */
int txsock_send(struct txsock_client *c, const struct txsock_rec *r);

/* Write what is queued, waiting up to timeout_ms for the daemon to take it
 * (at exit). Returns 0 when everything is written, else -errno. */
int txsock_flush(struct txsock_client *c, int timeout_ms);

void txsock_client_stats(const struct txsock_client *c,
			 struct txsock_client_stats *st);
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
