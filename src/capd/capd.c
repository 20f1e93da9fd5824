/* capd.c — tapless-capd: capture interfaces with the best stamps the host
 * has into pcapng files, rotated by size or time, each file whole under its
 * final name. See tapless-capd(8).
 */
#include <errno.h>
#include <limits.h>
#include <grp.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/bpfstamp.h"
#include "live/capture.h"
#include "stamp/iface.h"
#include "base/log.h"
#include "base/mkpath.h"
#include "base/opts.h"
#include "files/pcapng.h"
#include "base/pidfile.h"
#include "base/prog.h"
#include "live/reorder.h"
#include "stamp/ts.h"
#include "live/txmatch.h"
#include "live/txsock.h"
#include "base/xalloc.h"

#define CAPD_MAX_IFACES 16
#define CAPD_MAX_CLIENTS 64
/* A client's read buffer holds at least one whole record. */
#define CAPD_CLIENT_BUF (2 * TXSOCK_MAX_RECORD)
/* Frames held for reordering: ~260 ms at 500,000 frames/s. */
#define CAPD_REORDER_ENTRIES (128u * 1024)
#define CAPD_REORDER_BYTES (64u << 20)
/* Frames read from one ring per pass; fewer means the ring was read to
 * its end. */
#define CAPD_BATCH 10000
/* How much later than its stamp a frame can reach the capture ring: the
 * kernel delivers it to the packet socket right after it takes a host
 * stamp; a NIC's stamp waits for the interrupt (microseconds), and its PHC
 * is kept within far less than this of the system clock. */
#define CAPD_HB_MARGIN_NS 1000000
/* Drained passes kept for the heartbeat until their frames are out of the
 * reorder buffer: one every hold/32, so 128 cover four holds. */
#define CAPD_HB_PASSES 128

static const char *const capd_modes[] = { "auto", "hw", "sw", NULL };

/* tcpdump's letters where tcpdump has one, so habits carry over. */
static const struct opt_def capd_opts[] = {
	{ "interface", 'i', OPT_LIST, NULL, 0, 0, NULL, "IFACE", "capture on IFACE", 0 },
	{ "write-dir", 'w', OPT_STRING, ".", 0, 0, NULL, "DIR", "directory for the capture files", 0 },
	{ "snaplen", 0, OPT_INT, "262144", 64, 262144, NULL, "BYTES", "bytes kept of each frame", OPT_OLD_LETTER('s') },
	{ "buffer-size", 'B', OPT_INT, "32768", 1024, 4194304, NULL, "KIB", "kernel ring per interface and direction", 0 },
	{ "file-size", 'C', OPT_INT, "0", 0, 1000000, NULL, "MB", "start a new file after MB million bytes (0: never)", 0 },
	{ "rotate-seconds", 'G', OPT_DURATION, "0", 0, 86400 * 7, NULL, "TIME", "start a new file this often (0: never)", OPT_S },
	{ "count", 'n', OPT_INT, "0", 0, 1e15, NULL, "N", "stop after N frames (0: never)", OPT_OLD_LETTER('c') },
	{ "duration", 0, OPT_DURATION, "0", 0, 86400 * 365, NULL, "TIME", "stop after TIME (0: never)", OPT_S },
	{ "no-promiscuous", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "do not put the interfaces in promiscuous mode", OPT_OLD_LETTER('p') },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, capd_modes, "MODE", "stamps on received frames: auto, hw or sw", 0 },
	{ "hostname", 'H', OPT_STRING, NULL, 0, 0, NULL, "NAME", "host name written in the files (default: this host's)", 0 },
	{ "prefix", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "file name prefix (default: the host name)", 0 },
	{ "stats-interval", 0, OPT_DURATION, "10", 1, 3600, NULL, "TIME", "log kernel drops, and write the counters into the file, this often", OPT_S },
	{ "heartbeat-ms", 0, OPT_DURATION, "50", 0, 60000, NULL, "TIME", "write a heartbeat (complete up to a time) this often, 0 or 10ms to 60s (0: none)", OPT_MS },
	{ "iface-grace", 0, OPT_DURATION, "5", 0, 86400, NULL, "TIME", "exit when every interface has been gone this long", OPT_S },
	{ "tx-socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH", "take TX stamps of instrumented senders on this UNIX socket", 0 },
	{ "tx-group", 0, OPT_STRING, NULL, 0, 0, NULL, "GROUP", "group whose members may hand over TX stamps", 0 },
	{ "stamp-cgroup", 0, OPT_LIST, NULL, 0, 0, NULL, "PATH", "stamp every TCP send of the programs in cgroup v2 PATH (BPF, Linux >= 6.15)", 0 },
	{ "stamp-ports", 0, OPT_STRING, NULL, 0, 0, NULL, "LIST", "with --stamp-cgroup, only connections with an end on these ports (9001,9100-9199)", 0 },
	{ "sender-copy-only", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "of a frame that got a keyed sender stamp, write only the sender-stamped copy (not the captured one)", 0 },
	{ "reorder-ms", 0, OPT_DURATION, "100", 1, 10000, NULL, "TIME", "hold frames this long to write them in time order", OPT_MS },
	{ "user", 'u', OPT_STRING, NULL, 0, 0, NULL, "USER", "run as USER once the interfaces are open", 0 },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "read options from FILE", OPT_CLI_ONLY },
	PROG_OPT_SYSLOG,
	PROG_OPT_LOG_LEVEL("log-level"),
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

static const struct prog capd_prog = {
	.name = "tapless-capd",
	.opts = capd_opts,
	.usage = "usage: tapless-capd [OPTIONS] [FILTER...]\n\n"
		 "FILTER: a pcap filter expression, e.g. tcp port 9001\n\n"
		 "options:\n",
	.config = PROG_CONFIG_FILE,
	.operands = true,
};

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

static volatile sig_atomic_t capd_stop, capd_hup;

static void capd_signal(int sig)
{
	if (sig == SIGHUP)
		capd_hup = 1;
	else
		capd_stop = 1;
}

/* A link event into the file, so a reader tells a gap from a quiet link:
 * an Interface Statistics Block with an opt_comment (PCAPNG_LINK_DOWN or
 * _UP, then text for people) on interface i's received-frames interface
 * (one block per event: the link is one, whatever the directions). */
static void capd_link_event(struct capd *d, unsigned i, const char *what)
{
	uint64_t recv = ~0ULL, drop = ~0ULL;

	if (!d->w || d->broken)
		return;
	if (d->ifc[i].cap &&
	    capture_stats(d->ifc[i].cap, CAPTURE_IN, &recv, &drop))
		recv = drop = ~0ULL;
	if (pcapng_write_event(d->w, d->ifc[i].id[CAPTURE_IN], ts_now_real(),
			       recv, drop, what))
		d->broken = true;	/* a new file is tried */
}

static int capd_open_file(struct capd *d)
{
	struct pcapng_section sec = {
		.hostname = d->host, .userappl = prog_version(),
	};
	char path[4400], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int err;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s/%s-%s-%04u.pcapng", d->dir, d->prefix,
		 stamp, d->seq++);
	err = pcapng_open(&d->w, path, &sec);
	for (unsigned i = 0; !err && i < d->n; i++) {
		/* As first opened, or as it came back: a gone interface
		 * keeps its ids, so frames after its return fit the file. */
		struct capture_info info = d->ifc[i].info;

		for (int dir = CAPTURE_IN; !err && dir <= CAPTURE_OUT; dir++) {
			struct pcapng_iface pi = {
				.name = d->ifc[i].name,
				.linktype = (uint16_t)info.linktype,
				.snaplen = info.snaplen,
				.src = info.src[dir],
			};

			err = pcapng_add_iface(d->w, &pi, &d->ifc[i].id[dir]);
		}
		/* Frames instrumented senders hand over get interfaces of
		 * their own, flagged as sender-stamped: their stamps are of
		 * another kind than what the packet socket saw leave. The
		 * note says so to people. */
		for (int hw = 0; !err && d->tx && hw <= 1; hw++) {
			struct pcapng_iface pi = {
				.name = d->ifc[i].name,
				.linktype = (uint16_t)info.linktype,
				.snaplen = info.snaplen,
				.src = {
					.hw = hw, .phc = hw ? d->ifc[i].phc : -1,
					.timescale = hw ? TS_SCALE_PHC : TS_SCALE_UTC,
				},
				.sender = true,
			};

			if (hw && d->ifc[i].phc < 0)
				break;
			snprintf(pi.src.note, sizeof(pi.src.note),
				 PCAPNG_NOTE_SENDER "%s",
				 hw ? "" : ", host stamps");
			err = pcapng_add_iface(d->w, &pi, &d->ifc[i].id_tx[hw]);
		}
	}
	if (err) {
		log_err("%s: %s", path, strerror(-err));
		pcapng_close(d->w, true);
		d->w = NULL;
		return err;
	}
	d->opened_ns = ts_now_mono();
	d->broken = false;
	d->rotate = false;
	log_info("writing %s", path);
	/* Each file says which links are down as it starts. */
	for (unsigned i = 0; i < d->n; i++)
		if (!d->ifc[i].cap || d->ifc[i].down)
			capd_link_event(d, i, PCAPNG_LINK_DOWN);
	return 0;
}

static void capd_write(struct capd *d, uint32_t id, int64_t ts_ns,
		       const uint8_t *data, uint32_t caplen, uint32_t len, bool out)
{
	int err;

	if (!d->w || d->broken) {
		d->unwritten++;
		d->taken--;	/* -c N counts frames written */
		return;
	}
	err = pcapng_write_packet(d->w, id, ts_ns, data, caplen, len,
				  out ? PCAPNG_DIR_OUT : PCAPNG_DIR_IN);
	if (err) {
		d->write_errors++;
		d->broken = true;
		d->taken--;
		log_err("writing capture: %s", strerror(-err));
		return;
	}
	d->frames++;
}

static void capd_write_entry(struct capd *d, const struct reorder_entry *e)
{
	capd_write(d, e->id, e->ts_ns, e->data, e->caplen, e->origlen,
		   e->flags & CAPD_F_OUT);
}

/* Every frame goes through here: straight to the file, or through the
 * reorder buffer when TX frames of senders join captured ones. */
static void capd_take(struct capd *d, unsigned group, uint32_t id,
		      int64_t ts_ns, const uint8_t *data, uint32_t caplen,
		      uint32_t len, bool out, int64_t now)
{
	struct reorder_entry e = {
		.ts_ns = ts_ns, .arrival_ns = now, .id = id, .origlen = len,
		.caplen = caplen, .flags = out ? CAPD_F_OUT : 0, .group = group,
		.data = data,
	};

	if (d->max_frames && d->taken >= d->max_frames)
		return;		/* -c N means N, as in tcpdump */
	d->taken++;
	if (!d->ro || !reorder_fits_ever(d->ro, caplen)) {
		capd_write(d, id, ts_ns, data, caplen, len, out);
		return;
	}
	while (!reorder_room(d->ro, caplen)) {
		struct reorder_entry old;

		if (!reorder_pop_oldest(d->ro, &old))
			break;
		capd_write_entry(d, &old);
		d->forced++;
	}
	reorder_push(d->ro, &e);
}

/* Write the frames whose hold is up (now_ns), or all of them (< 0). */
static void capd_release(struct capd *d, int64_t now_ns)
{
	struct reorder_entry e;

	if (!d->ro)
		return;
	while (now_ns < 0 ? reorder_pop_oldest(d->ro, &e) :
	       reorder_pop(d->ro, now_ns, &e))
		capd_write_entry(d, &e);
}

/* ---- Heartbeats ----
 *
 * A heartbeat stamped T promises that every frame capd captured with a
 * stamp at or before T is already in the file, before it, or in a file
 * written before this one (tapless-pcapng(5)). capd cannot see what the
 * kernel has not handed over yet, so T comes from what it did read and
 * from how long a frame can take to be read and written:
 *
 * - A pass of the loop reads CLOCK_REALTIME (real), then every capture
 *   ring. When each gave less than a batch, the pass drained them: every
 *   frame handed over by then was read in this pass or an earlier one.
 * - A frame reaches its ring a little after its stamp (CAPD_HB_MARGIN_NS),
 *   but the ring (TPACKET_V3) hands frames over a block at a time: when the
 *   block is full or when the block timer fires, at most the ring's block
 *   timeout after the frame went in (a periodic hrtimer since Linux 6.18, a
 *   timer re-armed per block and jiffy-grained before). Until then the
 *   frame is invisible and poll() does not wake for it; on a quiet link
 *   that is the whole timeout. Twice the timeout covers the timer's
 *   lateness. So a drained pass has read every frame stamped up to
 *   real - margin - 2 * timeout.
 * - Without the reorder buffer frames are written as they are read: T is
 *   that, for the latest drained pass, written at the end of that pass.
 * - With it (--tx-socket, --stamp-cgroup) a frame read in a pass is
 *   labelled with the pass's CLOCK_MONOTONIC reading and written once it
 *   is the earliest of its group and held --reorder-ms (reorder.h). If
 *   every frame stamped up to T is labelled at or before the release's
 *   reading minus the hold, each group's earliest frame is due for as long
 *   as its stamp is at or before T, so the release writes them all. A
 *   drained pass labelled that old gives this for the captured frames.
 *   Frames with sender stamps (frame records, keyed stamps joined to their
 *   frame) reach capd after their stamp: the hold exists for them, and
 *   the file is in time order only when they come within it. On that same
 *   assumption, one stamped s is labelled by s + hold: one more hold off.
 *   So T = real - margin - 2 * timeout - hold, for the latest drained pass
 *   labelled at least a hold before the last release.
 *
 * T never goes back: after a clock step back, heartbeats wait until the
 * clock has caught up. Not covered: frames the kernel dropped (counted in
 * the statistics blocks), frames lost to a write error (logged, exit 2),
 * sender stamps later than the hold (written out of order anyway).
 */

/* A pass after poll(): real and mono read before the rings, drained when
 * every open ring was read to its end. Kept until its frames are written. */
static void capd_hb_pass(struct capd *d, int64_t mono, int64_t real,
			 bool drained)
{
	const struct capd_pass *last;

	if (!d->hb_every_ns || !drained)
		return;
	if (!d->ro) {
		d->hb_best = real;
		return;
	}
	/* A few per hold are enough: one skipped costs T at most hold/32. */
	last = &d->hb_pass[(d->hb_head + d->hb_n + CAPD_HB_PASSES - 1) %
			   CAPD_HB_PASSES];
	if (d->hb_n == CAPD_HB_PASSES ||
	    (d->hb_n && mono - last->mono < d->hold_ns / 32))
		return;
	d->hb_pass[(d->hb_head + d->hb_n++) % CAPD_HB_PASSES] =
		(struct capd_pass){ .mono = mono, .real = real };
}

/* After the release at mono: the kept passes whose frames are out of the
 * reorder buffer (labelled at least the hold before) are done with, the
 * latest of them is the heartbeat's. */
static void capd_hb_ready(struct capd *d, int64_t mono)
{
	while (d->hb_n && d->hb_pass[d->hb_head].mono <= mono - d->hold_ns) {
		d->hb_best = d->hb_pass[d->hb_head].real;
		d->hb_head = (d->hb_head + 1) % CAPD_HB_PASSES;
		d->hb_n--;
	}
}

/* A heartbeat into the file, and the file's buffer written out with it, so
 * a reader following the file sees frames at most one interval old. On
 * the sent-frames interface of an open capture: host stamps (system time)
 * always. final: the last file closes and nothing more will come, so
 * everything captured is in. */
static void capd_heartbeat(struct capd *d, bool final)
{
	unsigned i;
	int64_t t;
	int err;

	if (!d->hb_every_ns || !d->w || d->broken)
		return;
	for (i = 0; i < d->n && !d->ifc[i].cap; i++)
		;
	if (i == d->n)
		return;		/* every interface gone: nothing captured */
	if (final) {
		t = ts_now_real();
		if (t < d->hb_last)
			t = d->hb_last;
	} else {
		capd_hb_ready(d, d->now);
		if (d->hb_best == INT64_MIN)
			return;
		t = d->hb_best - d->hb_back_ns;
		if (t < d->hb_last) {
			log_warn_rl("the system clock went back %.3f s: no "
				    "heartbeat until it is past the last one",
				    (double)(d->hb_last - t) / 1e9);
			return;
		}
	}
	err = pcapng_write_heartbeat(d->w, d->ifc[i].id[CAPTURE_OUT], t);
	if (!err)
		err = pcapng_flush(d->w);
	d->flushed_ns = ts_now_mono();
	if (err) {
		log_err("writing capture: %s", strerror(-err));
		d->broken = true;	/* a new file is tried */
		return;
	}
	d->hb_last = t;
}

/* The senders' stamps as counted since start: what the periodic line,
 * the file's statistics and the exit account all say. Every field only
 * grows. */
struct capd_txcount {
	uint64_t written;	/* sender-stamped frames taken (records, pairs) */
	uint64_t lost;		/* stamps that will never be written: the sum
				 * of the five below */
	uint64_t no_frame;	/* keyed: no captured frame within the hold */
	uint64_t waiting_full;	/* keyed: too many waiting for their frame */
	uint64_t no_iface;	/* for no captured interface (or wrong PHC) */
	uint64_t ring_full;	/* --stamp-cgroup: BPF ring buffer full */
	uint64_t bpf_bad;	/* --stamp-cgroup: records of no known kind */
	uint64_t by_senders;	/* dropped by the senders themselves, by
				 * their own count (tapless-stamp, probes) */
	uint64_t late;		/* written out of time order (hold full) */
	uint64_t refused;	/* sender streams cut off: malformed records */
};

static void capd_txcount(const struct capd *d, struct capd_txcount *c)
{
	memset(c, 0, sizeof(*c));
	c->written = d->tx_records;
	c->no_iface = d->tx_unmatched;
	c->late = d->forced;
	c->refused = d->tx_refused;
	if (d->tm) {
		struct txmatch_stats st;

		txmatch_stats(d->tm, &st);
		c->no_frame = st.unmatched;
		c->waiting_full = st.stamps_full;
	}
	if (d->bs) {
		struct bpfstamp_stats bst;

		/* Read from the kernel's map: a failed read leaves the
		 * last figures out rather than make them go back. */
		if (!bpfstamp_stats(d->bs, &bst)) {
			c->ring_full = bst.ring_full;
			c->bpf_bad = bst.bad;
		}
	}
	c->by_senders = d->sdrop.retired;
	for (unsigned i = 0; i < d->sdrop.ngone; i++)
		c->by_senders += d->sdrop.gone[i].dropped;
	for (unsigned i = 0; i < d->ncl; i++)
		c->by_senders += d->cl[i].dropped;
	c->lost = c->no_frame + c->waiting_full + c->no_iface + c->ring_full +
		  c->bpf_bad + c->by_senders;
}

/* The kernel's counters of every open capture, per interface and
 * direction, into the file at ts_ns (system time): since the capture was
 * opened, as libpcap gives them. With senders' stamps, the stamps lost
 * since start as the drop counter of the first interface's sender-stamped
 * (host stamps) interface: a lost stamp's interface is not known, and one
 * counter keeps a reader that sums the interfaces' drops from counting it
 * twice. */
static void capd_write_stats(struct capd *d, int64_t ts_ns)
{
	if (!d->w || d->broken)
		return;
	if (d->tx) {
		struct capd_txcount c;

		capd_txcount(d, &c);
		if (pcapng_write_stats(d->w, d->ifc[0].id_tx[0], ts_ns, ~0ULL,
				       c.lost)) {
			d->broken = true;	/* a new file is tried */
			return;
		}
	}
	for (unsigned i = 0; i < d->n; i++)
		for (int dir = CAPTURE_IN; d->ifc[i].cap && dir <= CAPTURE_OUT; dir++) {
			uint64_t recv, drop;

			if (capture_stats(d->ifc[i].cap, (enum capture_dir)dir,
					  &recv, &drop))
				continue;
			if (pcapng_write_stats(d->w, d->ifc[i].id[dir], ts_ns,
					       recv, drop)) {
				d->broken = true;	/* a new file is tried */
				return;
			}
		}
}

/* A last heartbeat and the interface statistics into the file, then close
 * it under its final name. */
static void capd_close_file(struct capd *d)
{
	uint64_t lost;
	int err;

	/* Frames still held stay for the next file: written here they would
	 * end this file with stamps later than the next one's first frames
	 * (those still in the rings), and a reader taking the files one
	 * after another would see time go back at every rotation. Only the
	 * last file takes everything. */
	if (d->stopping)
		capd_release(d, -1);
	if (!d->w)
		return;
	capd_heartbeat(d, d->stopping);
	capd_write_stats(d, ts_now_real());
	/* Flushed here, not in close, to count what a failing flush loses:
	 * the frames in the buffer (the file is cut back to its last whole
	 * block and stays under .part). */
	err = pcapng_flush(d->w);
	lost = pcapng_lost(d->w);
	if (!err)
		err = pcapng_close(d->w, false);
	else
		pcapng_close(d->w, false);
	if (lost) {
		d->write_errors += lost;
		d->frames -= lost;
	}
	if (err) {
		d->close_failed = true;
		log_err("closing capture file: %s (%llu frames in its write "
			"buffer lost; its whole blocks stay in the .part file)",
			strerror(-err), (unsigned long long)lost);
	}
	d->w = NULL;
}

struct capd_ctx {
	struct capd *d;
	unsigned i;
};

/* Reorder groups: 0 is system time (host stamps); 1 + i the PHC of
 * interface i. Stamps of different groups are never compared. */
static unsigned capd_group(unsigned i, bool hw)
{
	return hw ? 1 + i : 0;
}

static void capd_packet(void *arg, const struct capture_packet *p)
{
	struct capd_ctx *x = arg;
	struct capd *d = x->d;
	bool hw = p->dir == CAPTURE_IN && d->ifc[x->i].hw_rx;

	/* Kept for a sender's keyed stamp of it (may write that pair now:
	 * after this frame, as the pair's stamp is the later one). Where
	 * every frame comes as received (lo, capture.h), received frames are
	 * kept too: a key names its frame by flow, sender first, so the
	 * sender's side of a connection between two local programs is
	 * still told apart from the peer's, and a received frame never
	 * takes a stamp of the other side. */
	if (d->tm && (p->dir == CAPTURE_OUT || d->ifc[x->i].dir_unknown)) {
		d->in_packet = true;
		d->pkt_tag = reorder_next_seq(d->ro);
		d->pkt_paired = false;
		txmatch_frame_tagged(d->tm, x->i, d->ifc[x->i].linktype, p->data,
				     p->caplen, p->len, d->now, d->pkt_tag);
		d->in_packet = false;
		if (d->pkt_paired) {
			d->copies_dropped++;
			return;
		}
	}

	capd_take(d, capd_group(x->i, hw), d->ifc[x->i].id[p->dir], p->ts_ns,
		  p->data, p->caplen, p->len, p->dir == CAPTURE_OUT, d->now);
}

/* ---- TX stamps handed over by instrumented senders ---- */

/* A keyed stamp found its frame, captured on interface i: the frame goes
 * into the file again, on the sender-stamped interface, with the sender's
 * stamp — exactly as a frame record would. */
static void capd_tx_pair(void *arg, unsigned i, uint64_t tag,
			 const uint8_t *frame, uint32_t caplen, uint32_t origlen,
			 const struct txsock_rec *r)
{
	struct capd *d = arg;
	bool hw = r->flags & TXSOCK_F_HW;

	if (hw && (d->ifc[i].phc < 0 || d->ifc[i].phc != r->phc)) {
		d->tx_unmatched++;
		log_warn_rl("keyed TX stamp: a hardware stamp of PHC %d for a frame "
			    "that left by %s (PHC %d); dropped", r->phc,
			    d->ifc[i].name, d->ifc[i].phc);
		return;
	}
	d->tx_records++;
	/* The captured copy: not taken yet (capd_packet leaves it out), or
	 * held (taken back by its handle and bytes), or written already
	 * when the stamp came later than the hold, or forced out. */
	if (d->sender_only) {
		if (d->in_packet && tag == d->pkt_tag)
			d->pkt_paired = true;
		else if (reorder_drop(d->ro, tag, frame, caplen))
			d->copies_dropped++;
		else
			d->copies_both++;
	}
	capd_take(d, capd_group(i, hw), d->ifc[i].id_tx[hw], r->ts_ns, frame,
		  caplen, origlen, true, d->now);
}

static void capd_tx_record(struct capd *d, struct capd_client *c,
			   const struct txsock_rec *r, int64_t now)
{
	bool hw = r->flags & TXSOCK_F_HW;
	unsigned i;

	if (r->flags & TXSOCK_F_KEYED) {
		txmatch_stamp(d->tm, r, now);
		return;
	}

	for (i = 0; i < d->n; i++)
		if (d->ifc[i].ifindex == r->ifindex ||
		    (r->ifindex == 0 && d->n == 1))
			break;
	if (i == d->n || d->ifc[i].linktype != r->linktype ||
	    (hw && d->ifc[i].phc < 0)) {
		d->tx_unmatched++;
		log_warn_rl("tx socket: pid %d: frame for interface index %u "
			    "(link type %u, %s stamp) matches no captured "
			    "interface; dropped", (int)c->pid, r->ifindex,
			    r->linktype, hw ? "hardware" : "host");
		return;
	}
	d->tx_records++;
	capd_take(d, capd_group(i, hw), d->ifc[i].id_tx[hw], r->ts_ns,
		  r->frame, r->caplen, r->origlen, true, now);
}

static void capd_accept(struct capd *d)
{
	for (;;) {
		struct capd_client *c;
		pid_t pid = 0;
		uid_t uid = 0;
		int fd = txsock_accept(d->lfd, d->tx_gid, &pid, &uid);

		if (fd == -EAGAIN || fd == -EWOULDBLOCK || fd == -EINTR)
			return;
		if (fd == -EACCES) {
			log_warn("tx socket: refused pid %d (uid %u): not root, "
				 "not this daemon's user and not in --tx-group",
				 (int)pid, (unsigned)uid);
			continue;
		}
		if (fd < 0) {
			log_warn_rl("tx socket: accept: %s", strerror(-fd));
			return;
		}
		if (d->ncl == CAPD_MAX_CLIENTS) {
			log_warn("tx socket: refused pid %d: %d senders already",
				 (int)pid, CAPD_MAX_CLIENTS);
			close(fd);
			continue;
		}
		c = &d->cl[d->ncl++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->pid = pid;
		/* Back after a disconnection: its count goes on from there. */
		for (unsigned i = 0; i < d->sdrop.ngone; i++)
			if (d->sdrop.gone[i].pid == pid) {
				c->dropped = d->sdrop.gone[i].dropped;
				d->sdrop.gone[i] = d->sdrop.gone[--d->sdrop.ngone];
				break;
			}
		c->uid = uid;
		c->buf = xmalloc(CAPD_CLIENT_BUF);
		log_info("tx socket: pid %d (uid %u) connected", (int)pid,
			 (unsigned)uid);
	}
}

/* Read what a sender wrote and take its records. Returns false when the
 * client is gone or broke the protocol: the caller drops it. */
static bool capd_client_read(struct capd *d, struct capd_client *c, int64_t now)
{
	for (int round = 0; round < 8; round++) {
		struct txsock_rec r;
		size_t off = 0;
		ssize_t n;
		int k;

		n = read(c->fd, c->buf + c->have, CAPD_CLIENT_BUF - c->have);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return true;
			log_warn("tx socket: pid %d: %m; disconnecting", (int)c->pid);
			return false;
		}
		if (n == 0) {
			if (c->have)
				log_warn("tx socket: pid %d: closed inside a record "
					 "at byte %llu (%zu bytes of it lost)",
					 (int)c->pid, (unsigned long long)c->offset,
					 c->have);
			log_info("tx socket: pid %d disconnected after %llu records",
				 (int)c->pid, (unsigned long long)c->records);
			return false;
		}
		c->have += (size_t)n;
		while ((k = txsock_decode(c->buf + off, c->have - off, &r)) > 0) {
			if (r.dropped > c->dropped)
				c->dropped = r.dropped;
			capd_tx_record(d, c, &r, now);
			off += (size_t)k;
			c->offset += (uint64_t)k;
			c->records++;
		}
		if (k < 0) {
			d->tx_refused++;
			log_err("tx socket: pid %d: %s at byte %llu of its stream; "
				"disconnecting", (int)c->pid,
				k == -EPROTONOSUPPORT ? "unsupported record version" :
				"malformed record", (unsigned long long)c->offset);
			return false;
		}
		memmove(c->buf, c->buf + off, c->have - off);
		c->have -= off;
	}
	return true;
}

static void capd_client_drop(struct capd *d, unsigned k)
{
	struct capd_senders_dropped *g = &d->sdrop;

	if (d->cl[k].dropped) {
		if (g->ngone == CAPD_GONE) {
			g->retired += g->gone[0].dropped;
			g->gone[0] = g->gone[--g->ngone];
		}
		g->gone[g->ngone].pid = d->cl[k].pid;
		g->gone[g->ngone++].dropped = d->cl[k].dropped;
	}
	close(d->cl[k].fd);
	free(d->cl[k].buf);
	d->cl[k] = d->cl[--d->ncl];
}

/* Read every sender with something waiting (ready[k] from poll, or all
 * when ready is NULL). */
static void capd_clients(struct capd *d, const struct pollfd *ready, int64_t now)
{
	bool drop[CAPD_MAX_CLIENTS] = { false };
	unsigned n = d->ncl;

	for (unsigned k = 0; k < n; k++)
		if (!ready || ready[k].revents)
			drop[k] = !capd_client_read(d, &d->cl[k], now);
	for (unsigned k = n; k-- > 0;)
		if (drop[k])
			capd_client_drop(d, k);
}

/* ---- TX stamps of a cgroup's sends, taken by the kernel for BPF ---- */

/* Sender stamps waiting: what tx socket clients wrote (ready[k] from
 * poll, or all of them when ready is NULL) and what the BPF program put in
 * its ring. */
static void capd_senders(struct capd *d, const struct pollfd *ready)
{
	if (d->lfd >= 0)
		capd_clients(d, ready, d->now);
	if (d->bs)
		bpfstamp_consume(d->bs);
}

static void capd_bpf_stamp(void *arg, const struct txsock_rec *r)
{
	struct capd *d = arg;

	txmatch_stamp(d->tm, r, d->now);
}

/* A connection that was up before the program was attached. */
static void capd_bpf_conn(void *arg, const struct bpfstamp_conn *c)
{
	(void)arg;
	if (c->err)
		log_warn("--stamp-cgroup: %s, up before the program was "
			 "attached, is left unstamped: the kernel refused to "
			 "arm it (%s)", c->text, strerror(-c->err));
	else
		log_info("--stamp-cgroup: armed %s, up before the program was "
			 "attached", c->text);
}

/* --stamp-cgroup: the program on every cgroup given, and the connections
 * already up armed. Asked for and impossible is an error: exit 2 (1 for a
 * bad port list). */
static int capd_stamp_cgroups(struct capd *d, struct opts *o)
{
	const char *const *cgs;
	size_t ncg = opts_list(o, "stamp-cgroup", &cgs);
	struct bpfstamp_config bc = { .on_stamp = capd_bpf_stamp, .arg = d };
	uint16_t *ports = NULL;
	char err[512];
	int rc = 2, n;

	if (bpfstamp_check(err, sizeof(err))) {
		fprintf(stderr, "tapless-capd: --stamp-cgroup: %s\n", err);
		return rc;
	}
	if (opts_str(o, "stamp-ports")) {
		ports = xcalloc(65536, sizeof(*ports));
		if (bpfstamp_parse_ports(opts_str(o, "stamp-ports"), ports,
					 &bc.n_ports, err, sizeof(err))) {
			fprintf(stderr, "tapless-capd: --stamp-ports: %s\n", err);
			rc = 1;
			goto out;
		}
		bc.ports = ports;
	}
	if (bpfstamp_open(&d->bs, &bc, err, sizeof(err))) {
		fprintf(stderr, "tapless-capd: --stamp-cgroup: %s\n", err);
		goto out;
	}
	for (size_t i = 0; i < ncg; i++)
		if (bpfstamp_attach(d->bs, cgs[i], err, sizeof(err))) {
			fprintf(stderr, "tapless-capd: --stamp-cgroup %s\n", err);
			goto out;
		}
	n = bpfstamp_arm_existing(d->bs, capd_bpf_conn, d, err, sizeof(err));
	if (n < 0)
		log_warn("--stamp-cgroup: connections up before now are left "
			 "unstamped: %s", err);
	for (size_t i = 0; i < ncg; i++)
		log_notice("stamping the TCP sends of cgroup %s%s%s", cgs[i],
			   bc.n_ports ? ", ports " : "",
			   bc.n_ports ? opts_str(o, "stamp-ports") : "");
	if (n > 0)
		log_notice("--stamp-cgroup: armed %d connections that were up "
			   "already", n);
	rc = 0;
out:
	free(ports);
	return rc;
}

/* Keyed stamps that found no frame, as they are found out (rate-limited),
 * and the whole account at the end. */
static void capd_log_keyed(struct capd *d, bool end)
{
	struct txmatch_stats st;

	txmatch_stats(d->tm, &st);
	if (st.unmatched + st.stamps_full > d->keyed_logged) {
		log_warn_rl("%llu keyed TX stamps (tapless-stamp's or "
			    "--stamp-cgroup's) found no captured frame within "
			    "--reorder-ms (is the flow inside the capture filter "
			    "and interfaces?)",
			    (unsigned long long)(st.unmatched + st.stamps_full));
		d->keyed_logged = st.unmatched + st.stamps_full;
	}
	if (end && st.stamps + st.other_stages)
		log_notice("keyed stamps: %llu taken, %llu joined to "
			   "their frame, %llu found none, %llu dropped (too many "
			   "waiting), %llu duplicates, %llu of other stages",
			   (unsigned long long)st.stamps,
			   (unsigned long long)st.matched,
			   (unsigned long long)st.unmatched,
			   (unsigned long long)st.stamps_full,
			   (unsigned long long)st.duplicates,
			   (unsigned long long)st.other_stages);
}

/* --sender-copy-only's account. */
static void capd_log_copies(const struct capd *d, int level)
{
	log_at(level, "--sender-copy-only: %llu captured copies of "
	       "sender-stamped frames left out, %llu written anyway (their "
	       "stamp came after --reorder-ms)",
	       (unsigned long long)d->copies_dropped,
	       (unsigned long long)d->copies_both);
}

static void capd_log_stats(struct capd *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		uint64_t recv = 0, drop = 0, r, k;
		struct capture_info info;

		if (!d->ifc[i].cap) {
			log_info("%s: gone", d->ifc[i].name);
			continue;
		}

		/* Each handle counts its direction's frames when the kernel
		 * sorts them, else both count every frame that passes the
		 * filter (capture.h); drops can happen in either. */
		capture_info(d->ifc[i].cap, &info);
		if (!capture_stats(d->ifc[i].cap, CAPTURE_IN, &r, &k)) {
			recv = r;
			drop = k;
		}
		if (!capture_stats(d->ifc[i].cap, CAPTURE_OUT, &r, &k)) {
			recv += info.dir_split ? r : 0;
			drop += k;
		}
		if (drop > d->ifc[i].drop_logged)
			log_warn("%s: %llu frames, %llu dropped by the kernel "
				 "(raise -B or lower the load)",
				 capture_ifname(d->ifc[i].cap),
				 (unsigned long long)recv, (unsigned long long)drop);
		else
			log_info("%s: %llu frames, no drops",
				 capture_ifname(d->ifc[i].cap), (unsigned long long)recv);
		d->ifc[i].drop_logged = drop;
	}
	if (d->tx) {
		struct capd_txcount c;

		capd_txcount(d, &c);
		log_at(c.lost > d->tx_lost_logged ? LOG_WARNING : LOG_INFO,
		       "tx stamps: %llu written, %llu lost (%llu found no frame, "
		       "%llu too many waiting, %llu for no captured interface, "
		       "%llu ring buffer full, %llu bad BPF records, %llu "
		       "dropped by the senders); %llu "
		       "written out of order; %llu senders cut off",
		       (unsigned long long)c.written, (unsigned long long)c.lost,
		       (unsigned long long)c.no_frame,
		       (unsigned long long)c.waiting_full,
		       (unsigned long long)c.no_iface,
		       (unsigned long long)c.ring_full,
		       (unsigned long long)c.bpf_bad,
		       (unsigned long long)c.by_senders, (unsigned long long)c.late,
		       (unsigned long long)c.refused);
		d->tx_lost_logged = c.lost;
	}
	if (d->sender_only)
		capd_log_copies(d, LOG_INFO);
}

/* ---- Interfaces that go down, disappear and come back ---- */

static unsigned capd_open_ifaces(const struct capd *d)
{
	unsigned k = 0;

	for (unsigned i = 0; i < d->n; i++)
		k += d->ifc[i].cap != NULL;
	return k;
}

/* Interface i was removed: close it (its ids stay in the file), say so
 * once, and try to reopen it by name every second from now on. */
static void capd_iface_gone(struct capd *d, unsigned i, int64_t now)
{
	struct capd_iface *ifc = &d->ifc[i];

	if (!ifc->cap)
		return;
	/* A link set down before it is deleted has its event already. */
	if (!ifc->down)
		capd_link_event(d, i, PCAPNG_LINK_DOWN " (interface removed)");
	capture_close(ifc->cap);
	ifc->cap = NULL;
	ifc->gone_ns = now;
	ifc->retry_ns = now + 1000000000;
	if (capd_open_ifaces(d))
		log_warn("%s: interface removed: closed; reopened by name when "
			 "it comes back", ifc->name);
	else
		log_warn("%s: interface removed: closed; no interface left: "
			 "exiting unless one is back within %lld s (--iface-grace)",
			 ifc->name, (long long)(d->grace_ns / 1000000000));
}

/* Try to reopen a gone interface by its name (quietly: it is tried every
 * second while it stays away). */
static void capd_iface_reopen(struct capd *d, unsigned i, int64_t now)
{
	struct capd_iface *ifc = &d->ifc[i];
	struct capture_config cc = d->cc;
	char err[CAPTURE_ERRBUF];
	struct capture_info info;
	struct iface_entry e;
	unsigned idx;

	ifc->retry_ns = now + 1000000000;
	idx = if_nametoindex(ifc->name);
	if (!idx)
		return;
	cc.ifname = ifc->name;
	if (capture_open(&ifc->cap, &cc, err)) {
		log_debug("%s: back, but cannot be opened yet: %s", ifc->name, err);
		return;
	}
	capture_info(ifc->cap, &info);
	if (info.linktype != ifc->info.linktype || info.hw != ifc->info.hw ||
	    info.phc != ifc->info.phc || info.snaplen != ifc->info.snaplen) {
		/* Not what the file says of it: a new file describes it. */
		ifc->info = info;
		ifc->phc = info.phc;
		ifc->linktype = info.linktype;
		ifc->hw_rx = info.hw;
		d->rotate = true;
	}
	ifc->ifindex = idx;
	ifc->dir_unknown = info.dir_unknown;
	ifc->drop_logged = 0;
	ifc->down = iface_get(ifc->name, &e) == 0 && !(e.up && e.running);
	log_notice("%s: interface back after %.1f s (index %u)%s: capturing again",
		   ifc->name, (double)(now - ifc->gone_ns) / 1e9, idx,
		   ifc->down ? ", link down" : "");
	ifc->gone_ns = 0;
	if (!ifc->down)
		capd_link_event(d, i, PCAPNG_LINK_UP " (interface back)");
}

/* A link as rtnetlink announces it (iface_watch), or as read again after
 * the kernel dropped announcements. */
static void capd_link(void *arg, const struct iface_entry *e, bool removed)
{
	struct capd *d = arg;
	int64_t now = ts_now_mono();

	for (unsigned i = 0; i < d->n; i++) {
		struct capd_iface *ifc = &d->ifc[i];
		bool down;

		if (strcmp(ifc->name, e->name))
			continue;
		if (!ifc->cap) {
			if (!removed)
				ifc->retry_ns = 0;	/* it is back: now */
			continue;
		}
		if ((unsigned)e->index != ifc->ifindex)
			continue;	/* another link of that name */
		if (removed) {
			capd_iface_gone(d, i, now);
			continue;
		}
		down = !(e->up && e->running);
		if (down == ifc->down)
			continue;
		ifc->down = down;
		if (down)
			log_warn("%s: link down (%s): no frames until it is up",
				 ifc->name, e->up ? "no carrier" : "set down");
		else
			log_notice("%s: link up", ifc->name);
		capd_link_event(d, i, down ? PCAPNG_LINK_DOWN : PCAPNG_LINK_UP);
	}
}

/* Read the links' state (at start, and when rtnetlink lost messages). */
static void capd_links_resync(struct capd *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		struct iface_entry e;
		int err = iface_get(d->ifc[i].name, &e);

		if (!err)
			capd_link(d, &e, false);
		else if (err == -ENODEV && d->ifc[i].cap) {
			snprintf(e.name, sizeof(e.name), "%s", d->ifc[i].name);
			e.index = (int)d->ifc[i].ifindex;
			capd_link(d, &e, true);
		}
	}
}

static void capd_warn_iface(struct capture *c)
{
	static const char *const names[] = { "tso", "gso", "gro", "lro" };
	struct capture_info info;
	char list[64] = "", fix[128] = "";

	capture_info(c, &info);
	if (info.hw)
		log_notice("%s: received frames with hardware stamps (PHC %d), "
			   "sent frames with host stamps", capture_ifname(c), info.phc);
	else
		log_notice("%s: host stamps (no PHC): software, system time",
			   capture_ifname(c));
	if (info.dir_unknown)
		log_notice("%s: loopback: every frame is captured once, as "
			   "received (libpcap drops the outgoing copy); senders' "
			   "keyed TX stamps are joined to frames by flow",
			   capture_ifname(c));
	if (info.hw && info.rx_narrow)
		log_warn("%s: the NIC stamps only some received frames (rx filter "
			 "%d): another program narrowed it; ptp4l needs "
			 "'hwts_filter full'", capture_ifname(c), info.rx_filter);
	for (int b = 0; b < 4; b++) {
		if (!(info.offloads & (1u << b)))
			continue;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 list[0] ? ", " : "", names[b]);
		snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix), " %s off",
			 names[b]);
	}
	if (list[0])
		log_warn("%s: %s on: the capture sees merged super-frames, not "
			 "wire frames; turn off with: ethtool -K %s%s",
			 capture_ifname(c), list, capture_ifname(c), fix);
}

static int capd_drop_privileges(const char *user)
{
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		log_err("user '%s' does not exist", user);
		return -1;
	}
	if (setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid)) {
		log_err("cannot become %s: %m", user);
		return -1;
	}
	return 0;
}

static char *capd_filter(int argc, char **argv, int first)
{
	size_t len = 1;
	char *f;

	for (int i = first; i < argc; i++)
		len += strlen(argv[i]) + 1;
	f = xcalloc(1, len);
	for (int i = first; i < argc; i++) {
		strcat(f, argv[i]);
		if (i + 1 < argc)
			strcat(f, " ");
	}
	return f;
}

/* One tapless-capd per --tx-socket and per output DIR/PREFIX: two would
 * take each other's socket and write into each other's files. */
static int capd_lock(struct pidfile **p, const char *path, const char *what,
		     const char *note)
{
	struct pidfile_holder h;
	int rc = pidfile_take(p, path, note, &h);

	if (rc == -EWOULDBLOCK)
		fprintf(stderr, "tapless-capd: %s is in use by another "
			"tapless-capd, pid %ld (%s; lock %s)\n", what,
			(long)h.pid, h.note, path);
	else if (rc)
		fprintf(stderr, "tapless-capd: %s: %s\n", path, strerror(-rc));
	return rc;
}

int main(int argc, char **argv)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	struct capd *d = xcalloc(1, sizeof(*d));
	const char *const *ifnames, *const *cgroups, *tx_path = NULL;
	struct opts *o;
	struct sigaction sa;
	int64_t end_ns = 0, next_stats;
	char *filter = NULL;
	int first, rc = 1, block_ms, derr;
	size_t nif, ncg;
	int poll_ms = 100;
	struct pidfile *out_lock = NULL, *tx_lock = NULL;
	char lock[4400], note[PIDFILE_NOTE_MAX];

	d->lfd = -1;
	d->tx_gid = (gid_t)-1;
	d->hb_last = d->hb_best = INT64_MIN;
	o = prog_start(&capd_prog, argc, argv, &first);
	if (!o) {
		rc = first;
		goto out;
	}
	nif = opts_list(o, "interface", &ifnames);
	ncg = opts_list(o, "stamp-cgroup", &cgroups);
	d->tx = opts_str(o, "tx-socket") || ncg;
	d->sender_only = opts_flag(o, "sender-copy-only");
	if (d->sender_only && !d->tx) {
		fprintf(stderr, "tapless-capd: --sender-copy-only needs sender "
			"stamps: --tx-socket or --stamp-cgroup\n");
		goto out;
	}
	if (!nif || nif > CAPD_MAX_IFACES) {
		fprintf(stderr, "tapless-capd: give 1 to %d interfaces with -i\n",
			CAPD_MAX_IFACES);
		goto out;
	}
	snprintf(d->dir, sizeof(d->dir), "%s", opts_str(o, "write-dir"));
	if ((derr = mkpath_is_dir(d->dir))) {
		fprintf(stderr, "tapless-capd: -w %s: %s%s\n", d->dir,
			mkpath_why(derr), derr == -ENOENT ? " (create it first)" : "");
		goto out;
	}
	if (opts_str(o, "tx-socket")) {
		/* Its directory, named as given (not the lock beside it, the
		 * first file made there): a bad option, exit 1. */
		char sdir[PATH_MAX];
		const char *slash;

		snprintf(sdir, sizeof(sdir), "%s", opts_str(o, "tx-socket"));
		slash = strrchr(sdir, '/');
		if (slash && slash != sdir) {
			sdir[slash - sdir] = 0;
			if ((derr = mkpath_is_dir(sdir))) {
				fprintf(stderr, "tapless-capd: --tx-socket %s: "
					"%s: %s\n", opts_str(o, "tx-socket"),
					sdir, mkpath_why(derr));
				goto out;
			}
		}
	}
	if (opts_str(o, "hostname"))
		snprintf(d->host, sizeof(d->host), "%s", opts_str(o, "hostname"));
	else if (gethostname(d->host, sizeof(d->host) - 1))
		strcpy(d->host, "localhost");
	snprintf(d->prefix, sizeof(d->prefix), "%s",
		 opts_str(o, "prefix") ? opts_str(o, "prefix") : d->host);
	if (snprintf(note, sizeof(note), "writing %s/%s-*, TX stamps on %s",
		     d->dir, d->prefix, opts_str(o, "tx-socket") ?
		     opts_str(o, "tx-socket") : "-") >= (int)sizeof(note))
		note[sizeof(note) - 2] = '~';	/* cut short: say so */
	snprintf(lock, sizeof(lock), "%s/%s.lock", d->dir, d->prefix);
	if (capd_lock(&out_lock, lock, "the output prefix", note) ||
	    (opts_str(o, "tx-socket") &&
	     (snprintf(lock, sizeof(lock), "%s.lock", opts_str(o, "tx-socket")),
	      capd_lock(&tx_lock, lock, "--tx-socket", note)))) {
		rc = 2;
		goto out;
	}
	if (opts_ns(o, "heartbeat-ms") && opts_ns(o, "heartbeat-ms") < 10000000) {
		char hb[32];

		opts_format_ns(hb, sizeof(hb), opts_ns(o, "heartbeat-ms"));
		fprintf(stderr, "tapless-capd: --heartbeat-ms: %s is out of "
			"range: 0 (none) or 10ms to 60s\n", hb);
		goto out;
	}
	d->limit_bytes = (uint64_t)opts_int(o, "file-size") * 1000000;
	d->rotate_ns = opts_ns(o, "rotate-seconds");
	d->max_frames = (uint64_t)opts_int(o, "count");
	filter = capd_filter(argc, argv, first);
	/* The ring hands over a block of frames when it is full or this old:
	 * under the reorder hold, or late frames of a quiet link would miss
	 * their place. */
	block_ms = 100;
	if (opts_ns(o, "reorder-ms") / 2000000 + 1 < block_ms)
		block_ms = (int)(opts_ns(o, "reorder-ms") / 2000000 + 1);
	d->hold_ns = opts_ns(o, "reorder-ms");
	d->hb_every_ns = opts_ns(o, "heartbeat-ms");
	d->hb_back_ns = CAPD_HB_MARGIN_NS + 2 * block_ms * 1000000LL + d->hold_ns;

	for (size_t i = 0; i < nif; i++) {
		struct capture_config cc = {
			.ifname = ifnames[i],
			.mode = modes[opts_enum(o, "mode")],
			.snaplen = (uint32_t)opts_int(o, "snaplen"),
			.buffer_kib = (uint32_t)opts_int(o, "buffer-size"),
			.filter = filter,
			.promisc = !opts_flag(o, "no-promiscuous"),
			.timeout_ms = block_ms,
		};
		char err[CAPTURE_ERRBUF];
		int cerr = capture_open(&d->ifc[d->n].cap, &cc, err);

		if (cerr) {
			fprintf(stderr, "tapless-capd: %s\n", err);
			rc = cerr == -EPERM ? 2 : 1;
			goto out;
		}
		struct capture_info info;
		struct capd_iface *ifc = &d->ifc[d->n];

		capture_info(ifc->cap, &info);
		ifc->ifindex = if_nametoindex(ifnames[i]);
		ifc->phc = info.phc;
		ifc->linktype = info.linktype;
		ifc->hw_rx = info.hw;
		ifc->dir_unknown = info.dir_unknown;
		ifc->name = ifnames[i];
		ifc->info = info;
		capd_warn_iface(ifc->cap);
		d->n++;
		d->cc = cc;
	}
	/* Links that go down, disappear and come back are followed over
	 * rtnetlink; without it, a removal is found by the capture's errors
	 * and a return by trying every second. */
	d->grace_ns = opts_ns(o, "iface-grace");
	{
		int werr = iface_watch_open(&d->watch);

		if (werr)
			log_warn("link changes: rtnetlink: %s: link down and up "
				 "will not be recorded", strerror(-werr));
		capd_links_resync(d);
	}
	if (opts_str(o, "tx-socket")) {
		const char *path = opts_str(o, "tx-socket");
		int err;

		if (opts_str(o, "tx-group")) {
			struct group *g = getgrnam(opts_str(o, "tx-group"));

			if (!g) {
				fprintf(stderr, "tapless-capd: --tx-group: no group "
					"'%s'\n", opts_str(o, "tx-group"));
				goto out;
			}
			d->tx_gid = g->gr_gid;
		}
		d->lfd = txsock_listen(path, d->tx_gid);
		if (d->lfd < 0) {
			err = d->lfd;
			fprintf(stderr, "tapless-capd: --tx-socket %s: %s\n", path,
				err == -EADDRINUSE ? "another tapless-capd is "
				"listening there" : err == -EEXIST ? "a file that is "
				"not a socket is in the way" : strerror(-err));
			rc = 2;
			goto out;
		}
		tx_path = path;
		log_notice("taking TX stamps of instrumented senders on %s", path);
	}
	/* Always: the received and sent frames of an interface come from
	 * two rings, a block of each at a time, so even without senders'
	 * stamps they reach capd up to a block timeout out of order, and a
	 * reply could be written before what it answers. */
	int rerr = reorder_create(&d->ro, CAPD_REORDER_BYTES,
				  CAPD_REORDER_ENTRIES, 1 + d->n,
				  opts_ns(o, "reorder-ms"));
	if (rerr) {
		fprintf(stderr, "tapless-capd: reorder buffer: %s\n",
			strerror(-rerr));
		goto out;
	}
	if (d->tx) {
		int err;

		/* Keyed stamps wait for their frame as long as frames wait
		 * for reordering: a pair made later could not be written in
		 * time order any more. */
		struct txmatch_config tc = {
			.hold_ns = opts_ns(o, "reorder-ms"),
			.on_match = capd_tx_pair, .arg = d,
		};
		err = txmatch_create(&d->tm, &tc);
		if (err) {
			fprintf(stderr, "tapless-capd: TX stamp matching: %s\n",
				strerror(-err));
			goto out;
		}
	}
	/* Before privileges go: loading BPF needs CAP_BPF and friends. */
	if (ncg) {
		int srv = capd_stamp_cgroups(d, o);

		if (srv) {
			rc = srv;
			goto out;
		}
	}
	/* The interfaces are open: nothing after this needs privileges. */
	if (opts_str(o, "user") && capd_drop_privileges(opts_str(o, "user")))
		goto out;
	if (capd_open_file(d)) {
		rc = 2;
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = capd_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (opts_ns(o, "duration"))
		end_ns = ts_now_mono() + opts_ns(o, "duration");
	next_stats = ts_now_mono() + opts_ns(o, "stats-interval");
	log_notice("capturing on %zu interface(s) into %s%s%s", nif, d->dir,
		   filter[0] ? ", filter: " : "", filter);

	/* The loop never exits on an error: a file that fails is closed with
	 * what it holds and a new one opened; only a signal, --count or
	 * --duration end it. */
	if (d->ro)
		poll_ms = (int)(opts_ns(o, "reorder-ms") / 4000000 + 1 < 100 ?
				opts_ns(o, "reorder-ms") / 4000000 + 1 : 100);
	d->hb_next = ts_now_mono();
	while (!capd_stop) {
		struct pollfd pfd[2 * CAPD_MAX_IFACES + 3 + CAPD_MAX_CLIENTS];
		unsigned np = 2 * d->n, wi = 0;
		int64_t now, real = 0;
		int wait_ms = poll_ms;
		bool drained = true;

		for (unsigned i = 0; i < d->n; i++) {
			int fds[2] = { -1, -1 };	/* gone: poll skips it */

			if (d->ifc[i].cap)
				capture_fds(d->ifc[i].cap, fds);
			pfd[2 * i] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
			pfd[2 * i + 1] = (struct pollfd){ .fd = fds[1], .events = POLLIN };
		}
		if (d->lfd >= 0) {
			pfd[np++] = (struct pollfd){ .fd = d->lfd, .events = POLLIN };
			for (unsigned k = 0; k < d->ncl; k++)
				pfd[np++] = (struct pollfd){ .fd = d->cl[k].fd,
							     .events = POLLIN };
		}
		if (d->watch) {
			wi = np;
			pfd[np++] = (struct pollfd){ .fd = iface_watch_fd(d->watch),
						     .events = POLLIN };
		}
		if (d->bs)
			pfd[np++] = (struct pollfd){ .fd = bpfstamp_fd(d->bs),
						     .events = POLLIN };
		if (d->hb_every_ns) {
			int64_t left = d->hb_next - ts_now_mono();

			if (left < (int64_t)wait_ms * 1000000)
				wait_ms = left > 0 ? (int)((left + 999999) / 1000000) : 0;
		}
		if (poll(pfd, np, wait_ms) < 0 && errno != EINTR)
			log_warn_rl("poll: %m");
		/* Before the rings are read: a pass that reads them all to
		 * their end has every frame handed over by then (the
		 * heartbeats' T). */
		if (d->hb_every_ns)
			real = ts_now_real();
		now = d->now = ts_now_mono();
		for (unsigned i = 0; i < d->n; i++) {
			struct capd_ctx x = { d, i };
			int got;

			if (!d->ifc[i].cap)
				continue;
			got = capture_dispatch(d->ifc[i].cap, CAPD_BATCH,
					       capd_packet, &x);
			if (got >= 0) {
				/* Under a batch: both rings read to the end. */
				drained &= got < CAPD_BATCH;
				continue;
			}
			drained = false;
			/* libpcap says "The interface disappeared" on every
			 * call once it is gone: close it at the first. */
			if (if_nametoindex(d->ifc[i].name) != d->ifc[i].ifindex)
				capd_iface_gone(d, i, now);
			else
				log_warn_rl("%s", capture_error(d->ifc[i].cap));
		}
		capd_hb_pass(d, now, real, drained);
		if (d->watch && pfd[wi].revents) {
			int werr = iface_watch_read(d->watch, capd_link, d);

			if (werr == -ENOBUFS)
				capd_links_resync(d);
			else if (werr)
				log_warn_rl("link changes: rtnetlink: %s", strerror(-werr));
		}
		for (unsigned i = 0; i < d->n; i++)
			if (!d->ifc[i].cap && now >= d->ifc[i].retry_ns)
				capd_iface_reopen(d, i, now);
		capd_senders(d, pfd + 2 * d->n + 1);
		if (d->lfd >= 0 && pfd[2 * d->n].revents)
			capd_accept(d);
		if (d->tm) {
			txmatch_expire(d->tm, now);
			capd_log_keyed(d, false);
		}
		capd_release(d, now);
		now = ts_now_mono();
		/* A failed file is closed with what it holds at once; a new
		 * one is tried a second later (a full disk would otherwise
		 * turn every frame into a new, failing file). */
		if (d->broken && d->w) {
			capd_close_file(d);
			d->retry_ns = now + 1000000000;
		}
		if ((!d->w && now >= d->retry_ns) || (d->w && (capd_hup || d->rotate ||
		    (d->limit_bytes && pcapng_bytes(d->w) >= d->limit_bytes) ||
		    (d->rotate_ns && now - d->opened_ns >= d->rotate_ns)))) {
			if (capd_hup)
				log_notice("SIGHUP: starting a new file");
			capd_hup = 0;
			capd_close_file(d);
			if (capd_open_file(d))
				d->retry_ns = now + 1000000000;
		}
		if (d->hb_every_ns && now >= d->hb_next) {
			capd_heartbeat(d, false);
			d->hb_next = now + d->hb_every_ns;
		}
		/* The write buffer holds minutes of a quiet link: written out
		 * every second (and at every heartbeat), a crash or SIGKILL
		 * loses at most that. */
		if (d->w && !d->broken && now - d->flushed_ns >= 1000000000) {
			int ferr = pcapng_flush(d->w);

			d->flushed_ns = now;
			if (ferr) {
				log_err("writing capture: %s", strerror(-ferr));
				d->broken = true;
			}
		}
		if (now >= next_stats) {
			capd_log_stats(d);
			/* In the file as well, so a reader following it sees
			 * drops as they happen. */
			capd_write_stats(d, ts_now_real());
			next_stats = now + opts_ns(o, "stats-interval");
		}
		if ((d->max_frames && d->taken >= d->max_frames) ||
		    (end_ns && now >= end_ns))
			break;
		if (!capd_open_ifaces(d)) {
			int64_t last = 0;

			for (unsigned i = 0; i < d->n; i++)
				if (d->ifc[i].gone_ns > last)
					last = d->ifc[i].gone_ns;
			if (now - last >= d->grace_ns) {
				log_err("no interface left to capture: none came "
					"back within %lld s (--iface-grace); exiting",
					(long long)(d->grace_ns / 1000000000));
				d->no_iface = true;
				break;
			}
		}
	}
	/* Frames the kernel already took are in the ring, some in a block it
	 * hands over only when the block times out (100 ms): keep reading
	 * past that so a stop loses nothing that was captured. */
	for (int64_t until = ts_now_mono() + 250000000; ts_now_mono() < until;) {
		d->now = ts_now_mono();
		for (unsigned i = 0; i < d->n; i++) {
			struct capd_ctx x = { d, i };

			if (d->ifc[i].cap)
				capture_dispatch(d->ifc[i].cap, 0, capd_packet, &x);
		}
		capd_senders(d, NULL);
		usleep(10000);
	}
	if (d->tm) {
		txmatch_expire(d->tm, INT64_MAX);
		capd_log_keyed(d, true);
	}
	capd_log_stats(d);
	d->stopping = true;
	capd_close_file(d);
	log_notice("stopped after %llu frames%s", (unsigned long long)d->frames,
		   d->write_errors ? ", with write errors" : "");
	if (d->sender_only)
		capd_log_copies(d, LOG_NOTICE);
	if (d->lfd >= 0)
		log_notice("tx socket: %llu frames handed over, %llu matched no "
			   "interface; %llu written out of order (reorder buffer "
			   "full)", (unsigned long long)d->tx_records,
			   (unsigned long long)d->tx_unmatched,
			   (unsigned long long)d->forced);
	if (d->bs) {
		struct bpfstamp_stats bst;

		if (!bpfstamp_stats(d->bs, &bst))
			log_notice("--stamp-cgroup: %llu connections armed "
				   "(%llu refused), %llu sends stamped, %llu "
				   "stamps taken, %llu lost (ring buffer full)",
				   (unsigned long long)bst.armed,
				   (unsigned long long)bst.arm_failed,
				   (unsigned long long)bst.sends,
				   (unsigned long long)bst.taken,
				   (unsigned long long)bst.ring_full);
	}
	if (d->write_errors || d->unwritten)
		log_err("%llu frames lost to write errors: %llu refused or in a "
			"failed write, %llu captured while no file could be "
			"written", (unsigned long long)(d->write_errors + d->unwritten),
			(unsigned long long)d->write_errors,
			(unsigned long long)d->unwritten);
	rc = d->write_errors || d->unwritten || d->close_failed ? 2 :
	     d->no_iface ? 1 : 0;
out:
	while (d->ncl)
		capd_client_drop(d, d->ncl - 1);
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(tx_path);
	}
	/* Detaches the program: its links die with their descriptors. */
	bpfstamp_close(d->bs);
	pidfile_release(tx_lock);
	pidfile_release(out_lock);
	reorder_destroy(d->ro);
	txmatch_destroy(d->tm);
	iface_watch_close(d->watch);
	for (unsigned i = 0; i < d->n; i++)
		capture_close(d->ifc[i].cap);
	free(filter);
	free(d);
	opts_destroy(o);
	return rc;
}
