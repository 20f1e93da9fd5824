/* capd_private.h — tapless-capd's insides, shared by its files and by
 * nobody else; the program's interface is tapless-capd(8).
 *
 *   capd.c        options, start-up (interfaces, TX socket, buffers), the
 *                 poll loop, the stop
 *   capd_file.c   the pcapng files: opening, rotating, closing; every
 *                 frame into them, through the reorder buffer
 *   capd_hb.c     heartbeats: how late a promise of completeness can be
 *   capd_stats.c  the counters: logged, and written into the file
 *   capd_tx.c     sender stamps: the TX socket's clients and --stamp-cgroup
 *   capd_iface.c  interfaces that go down, disappear and come back
 */
#ifndef TAPLESS_CAPD_PRIVATE_H
#define TAPLESS_CAPD_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "live/capture.h"	/* struct capture_info, _config, _packet */

struct bpfstamp;
struct iface_entry;
struct iface_watch;
struct opts;
struct pcapng_writer;
struct pollfd;
struct reorder;
struct txmatch;
struct txsock_rec;

#define CAPD_MAX_IFACES 16
#define CAPD_MAX_CLIENTS 64
/* Drained passes kept for the heartbeat until their frames are out of the
 * reorder buffer: one every hold/32, so 128 cover four holds. */
#define CAPD_HB_PASSES 128


struct capd_iface {
	struct capture *cap;	/* NULL while the interface is gone */
	const char *name;	/* as given: reopened by it */
	struct capture_info info;	/* as described in the file */
	bool down;		/* link down (not up, or no carrier), as logged */
	int64_t gone_ns;	/* when it disappeared; 0 while open */
	int64_t retry_ns;	/* next try to reopen it */
	uint32_t id[2];		/* pcapng interface per direction */
	uint32_t id_tx[2];	/* handed-over TX frames: [0] sw, [1] hw */
	unsigned ifindex;
	int phc;		/* for hardware TX stamps, -1: none */
	int linktype;
	bool hw_rx;		/* received frames carry PHC stamps */
	bool dir_unknown;	/* sent frames come as received (loopback) */
	uint64_t drop_logged;
};

/* A sender handing over TX stamps (txsock.h). */
struct capd_client {
	int fd;
	pid_t pid;
	uid_t uid;
	uint8_t *buf;
	size_t have;
	uint64_t offset;	/* stream bytes consumed, for error messages */
	uint64_t records;
	uint32_t dropped;	/* the sender's own count of records it
				 * dropped (since it started) */
};

/* Senders' own counts of the records they dropped (capd absent, slow,
 * their queue full), by pid: a sender that reconnects reports its count
 * since it started again, so each process is counted once, at its
 * latest figure. Ended senders are kept up to CAPD_GONE; older ones are
 * retired into one sum. */
#define CAPD_GONE 256
struct capd_senders_dropped {
	struct {
		pid_t pid;
		uint32_t dropped;
	} gone[CAPD_GONE];
	unsigned ngone;
	uint64_t retired;
};

/* Frame flags carried through the reorder buffer. */
enum { CAPD_F_OUT = 1 };

/* A pass of the loop that read every capture ring to its end. */
struct capd_pass {
	int64_t mono;		/* its clock reading, the frames' arrival */
	int64_t real;		/* CLOCK_REALTIME, read before the rings */
};

struct capd {
	struct capd_iface ifc[CAPD_MAX_IFACES];
	unsigned n;
	struct pcapng_writer *w;
	char dir[4096], prefix[256], host[256];
	unsigned seq;		/* files opened */
	uint64_t limit_bytes;
	int64_t rotate_ns, opened_ns;
	uint64_t frames, max_frames;
	uint64_t write_errors;	/* frames a write error kept from the file:
				 * refused, or lost in the writer's buffer */
	uint64_t unwritten;	/* frames read while no file could take them */
	bool close_failed;	/* a file could not be closed whole */
	bool broken;		/* the current file failed: rotate */
	int64_t flushed_ns;	/* write buffer last written out */
	int64_t retry_ns;	/* no new file before this after a failure */

	/* Interfaces that disappear and come back (rtnetlink). */
	struct capture_config cc;	/* every interface's but the name */
	struct iface_watch *watch;	/* NULL: found by errors and retries */
	int64_t grace_ns;	/* --iface-grace */
	bool rotate;		/* one came back unlike its description */
	bool no_iface;		/* stopped: every interface gone */

	/* TX stamp hand-over, when --tx-socket is given. */
	int lfd;
	gid_t tx_gid;
	struct capd_client cl[CAPD_MAX_CLIENTS];
	unsigned ncl;
	struct reorder *ro;
	uint64_t taken;		/* frames accepted (for -c) */
	uint64_t tx_records, tx_unmatched, forced;
	/* Keyed stamps (tapless-stamp's) joined to captured outbound frames. */
	struct txmatch *tm;
	/* --sender-copy-only: the captured copy of a frame paired with its
	 * sender stamp is taken back from the reorder buffer (the tag it was
	 * kept in txmatch with is its reorder handle), or, when the stamp was
	 * waiting for it, never put in. */
	bool sender_only;
	bool in_packet;		/* in capd_packet(), for the frame tagged: */
	uint64_t pkt_tag;
	bool pkt_paired;	/* its stamp was waiting: the copy is not taken */
	uint64_t copies_dropped;	/* captured copies left out */
	uint64_t copies_both;	/* written already when their stamp came */
	int64_t now;		/* the loop's clock reading (CLOCK_MONOTONIC):
				 * frames and stamps of one batch share it */
	uint64_t keyed_logged;	/* unmatched keyed stamps already logged */
	uint64_t tx_refused;	/* sender streams cut off: malformed records */
	struct capd_senders_dropped sdrop;
	uint64_t tx_lost_logged;	/* capd_txcount.lost at the last stats */
	/* Sender stamps come (--tx-socket, --stamp-cgroup): the files get
	 * sender-stamped interfaces, frames are held for reordering. */
	bool tx;
	struct bpfstamp *bs;	/* --stamp-cgroup */

	/* Heartbeats (--heartbeat-ms; capd_heartbeat() says how T is found). */
	int64_t hb_every_ns;	/* 0: none */
	int64_t hb_next;	/* CLOCK_MONOTONIC of the next one */
	int64_t hb_back_ns;	/* T = a drained pass's real - this */
	int64_t hold_ns;	/* the reorder hold; 0 without the buffer */
	int64_t hb_last;	/* T of the last one written, INT64_MIN: none */
	int64_t hb_best;	/* real of the latest drained pass whose frames
				 * are all written, INT64_MIN: none yet */
	struct capd_pass hb_pass[CAPD_HB_PASSES];	/* drained passes
							 * whose frames may
							 * still be held */
	unsigned hb_head, hb_n;
	bool stopping;		/* the last file is being closed */
};

/* capture_dispatch()'s argument to capd_packet(): the frame's interface. */
struct capd_ctx {
	struct capd *d;
	unsigned i;
};

/* capd_file.c */
int capd_open_file(struct capd *d);
void capd_take(struct capd *d, unsigned group, uint32_t id, int64_t ts_ns,
	       const uint8_t *data, uint32_t caplen, uint32_t len, bool out,
	       int64_t now);
void capd_release(struct capd *d, int64_t now_ns);
void capd_close_file(struct capd *d);
unsigned capd_group(unsigned i, bool hw);
void capd_packet(void *arg, const struct capture_packet *p);

/* capd_hb.c */
void capd_hb_pass(struct capd *d, int64_t mono, int64_t real, bool drained);
void capd_heartbeat(struct capd *d, bool final);

/* capd_stats.c */
void capd_write_stats(struct capd *d, int64_t ts_ns);
void capd_log_keyed(struct capd *d, bool end);
void capd_log_copies(const struct capd *d, int level);
void capd_log_stats(struct capd *d);

/* capd_tx.c */
void capd_tx_pair(void *arg, unsigned i, uint64_t tag, const uint8_t *frame,
		  uint32_t caplen, uint32_t origlen,
		  const struct txsock_rec *r);
void capd_accept(struct capd *d);
void capd_client_drop(struct capd *d, unsigned k);
void capd_senders(struct capd *d, const struct pollfd *ready);
int capd_stamp_cgroups(struct capd *d, struct opts *o);

/* capd_iface.c */
void capd_link_event(struct capd *d, unsigned i, const char *what);
unsigned capd_open_ifaces(const struct capd *d);
void capd_iface_gone(struct capd *d, unsigned i, int64_t now);
void capd_iface_reopen(struct capd *d, unsigned i, int64_t now);
void capd_link(void *arg, const struct iface_entry *e, bool removed);
void capd_links_resync(struct capd *d);
void capd_warn_iface(struct capture *c);

#endif
