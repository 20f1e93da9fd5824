/* capd.c — tapless-capd: capture interfaces with the best stamps the host
 * has into pcapng files, rotated by size or time, each file whole under its
 * final name. See tapless-capd(8).
 *
 * This file: the options, start-up in steps (options and locks, the
 * interfaces, the TX socket, the buffers), the poll loop and the stop. See
 * capd_private.h for the other files.
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
#include "capd/capd_private.h"
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

static const char *const capd_modes[] = { "auto", "hw", "sw", NULL };

/* tcpdump's letters where tcpdump has one, so habits carry over. */
static const struct opt_def capd_opts[] = {
	{ "interface", 'i', OPT_LIST, NULL, 0, 0, NULL, "IFACE", "capture on IFACE", 0 },
	{ "write_dir", 'w', OPT_STRING, ".", 0, 0, NULL, "DIR", "directory for the capture files", 0 },
	{ "snaplen", 0, OPT_INT, "262144", 64, 262144, NULL, "BYTES", "bytes kept of each frame", OPT_OLD_LETTER('s') },
	{ "buffer_size", 'B', OPT_INT, "32768", 1024, 4194304, NULL, "KIB", "kernel ring per interface and direction", 0 },
	{ "file_size", 'C', OPT_INT, "0", 0, 1000000, NULL, "MB", "start a new file after MB million bytes (0: never)", 0 },
	{ "rotate_seconds", 'G', OPT_DURATION, "0", 0, 86400 * 7, NULL, "TIME", "start a new file this often (0: never)", OPT_S },
	{ "count", 'n', OPT_INT, "0", 0, 1e15, NULL, "N", "stop after N frames (0: never)", OPT_OLD_LETTER('c') },
	{ "duration", 0, OPT_DURATION, "0", 0, 86400 * 365, NULL, "TIME", "stop after TIME (0: never)", OPT_S },
	{ "no_promiscuous", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "do not put the interfaces in promiscuous mode", OPT_OLD_LETTER('p') },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, capd_modes, "MODE", "stamps on received frames: auto, hw or sw", 0 },
	{ "hostname", 'H', OPT_STRING, NULL, 0, 0, NULL, "NAME", "host name written in the files (default: this host's)", 0 },
	{ "prefix", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "file name prefix (default: the host name)", 0 },
	{ "stats_interval", 0, OPT_DURATION, "10", 1, 3600, NULL, "TIME", "log kernel drops, and write the counters into the file, this often", OPT_S },
	{ "heartbeat_ms", 0, OPT_DURATION, "50", 0, 60000, NULL, "TIME", "write a heartbeat (complete up to a time) this often, 0 or 10ms to 60s (0: none)", OPT_MS },
	{ "iface_grace", 0, OPT_DURATION, "5", 0, 86400, NULL, "TIME", "exit when every interface has been gone this long", OPT_S },
	{ "tx_socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH", "take TX stamps of instrumented senders on this UNIX socket", 0 },
	{ "tx_group", 0, OPT_STRING, NULL, 0, 0, NULL, "GROUP", "group whose members may hand over TX stamps", 0 },
	{ "stamp_cgroup", 0, OPT_LIST, NULL, 0, 0, NULL, "PATH", "stamp every TCP send of the programs in cgroup v2 PATH (BPF, Linux >= 6.15)", 0 },
	{ "stamp_ports", 0, OPT_STRING, NULL, 0, 0, NULL, "LIST", "with --stamp-cgroup, only connections with an end on these ports (9001,9100-9199)", 0 },
	{ "sender_copy_only", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "of a frame that got a keyed sender stamp, write only the sender-stamped copy (not the captured one)", 0 },
	{ "reorder_ms", 0, OPT_DURATION, "100", 1, 10000, NULL, "TIME", "hold frames this long to write them in time order", OPT_MS },
	{ "user", 'u', OPT_STRING, NULL, 0, 0, NULL, "USER", "run as USER once the interfaces are open", 0 },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "read options from FILE", OPT_CLI_ONLY },
	PROG_OPT_SYSLOG,
	PROG_OPT_LOG_LEVEL,
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

static volatile sig_atomic_t capd_stop, capd_hup;

static void capd_signal(int sig)
{
	if (sig == SIGHUP)
		capd_hup = 1;
	else
		capd_stop = 1;
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
/* The options checked and taken into d, the locks taken: 0, or the exit
 * code (1 for a bad option, 2 for a lock held). *block_ms: the rings'
 * block timeout. */
static int capd_configure(struct capd *d, struct opts *o, int argc,
			  char **argv, int first, char **filter, int *block_ms,
			  struct pidfile **out_lock, struct pidfile **tx_lock)
{
	const char *const *ifnames, *const *cgroups;
	size_t nif, ncg;
	int derr;
	char lock[4400], note[PIDFILE_NOTE_MAX];

	nif = opts_list(o, "interface", &ifnames);
	ncg = opts_list(o, "stamp_cgroup", &cgroups);
	d->tx = opts_str(o, "tx_socket") || ncg;
	d->sender_only = opts_flag(o, "sender_copy_only");
	if (d->sender_only && !d->tx) {
		fprintf(stderr, "tapless-capd: --sender-copy-only needs sender "
			"stamps: --tx-socket or --stamp-cgroup\n");
		return 1;
	}
	if (!nif || nif > CAPD_MAX_IFACES) {
		fprintf(stderr, "tapless-capd: give 1 to %d interfaces with -i\n",
			CAPD_MAX_IFACES);
		return 1;
	}
	snprintf(d->dir, sizeof(d->dir), "%s", opts_str(o, "write_dir"));
	if ((derr = mkpath_is_dir(d->dir))) {
		fprintf(stderr, "tapless-capd: -w %s: %s%s\n", d->dir,
			mkpath_why(derr), derr == -ENOENT ? " (create it first)" : "");
		return 1;
	}
	if (opts_str(o, "tx_socket")) {
		/* Its directory, named as given (not the lock beside it, the
		 * first file made there): a bad option, exit 1. */
		char sdir[PATH_MAX];
		const char *slash;

		snprintf(sdir, sizeof(sdir), "%s", opts_str(o, "tx_socket"));
		slash = strrchr(sdir, '/');
		if (slash && slash != sdir) {
			sdir[slash - sdir] = 0;
			if ((derr = mkpath_is_dir(sdir))) {
				fprintf(stderr, "tapless-capd: --tx-socket %s: "
					"%s: %s\n", opts_str(o, "tx_socket"),
					sdir, mkpath_why(derr));
				return 1;
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
		     d->dir, d->prefix, opts_str(o, "tx_socket") ?
		     opts_str(o, "tx_socket") : "-") >= (int)sizeof(note))
		note[sizeof(note) - 2] = '~';	/* cut short: say so */
	snprintf(lock, sizeof(lock), "%s/%s.lock", d->dir, d->prefix);
	if (capd_lock(out_lock, lock, "the output prefix", note) ||
	    (opts_str(o, "tx_socket") &&
	     (snprintf(lock, sizeof(lock), "%s.lock", opts_str(o, "tx_socket")),
	      capd_lock(tx_lock, lock, "--tx-socket", note))))
		return 2;
	if (opts_ns(o, "heartbeat_ms") && opts_ns(o, "heartbeat_ms") < 10000000) {
		char hb[32];

		opts_format_ns(hb, sizeof(hb), opts_ns(o, "heartbeat_ms"));
		fprintf(stderr, "tapless-capd: --heartbeat-ms: %s is out of "
			"range: 0 (none) or 10ms to 60s\n", hb);
		return 1;
	}
	d->limit_bytes = (uint64_t)opts_int(o, "file_size") * 1000000;
	d->rotate_ns = opts_ns(o, "rotate_seconds");
	d->max_frames = (uint64_t)opts_int(o, "count");
	*filter = capd_filter(argc, argv, first);
	/* The ring hands over a block of frames when it is full or this old:
	 * under the reorder hold, or late frames of a quiet link would miss
	 * their place. */
	*block_ms = 100;
	if (opts_ns(o, "reorder_ms") / 2000000 + 1 < *block_ms)
		*block_ms = (int)(opts_ns(o, "reorder_ms") / 2000000 + 1);
	d->hold_ns = opts_ns(o, "reorder_ms");
	d->hb_every_ns = opts_ns(o, "heartbeat_ms");
	d->hb_back_ns = CAPD_HB_MARGIN_NS + 2 * *block_ms * 1000000LL +
			d->hold_ns;
	return 0;
}

/* Every -i interface opened, and their links followed: 0, or the exit
 * code (2 without the privileges). */
static int capd_open_captures(struct capd *d, struct opts *o,
			      const char *filter, int block_ms)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	const char *const *ifnames;
	size_t nif = opts_list(o, "interface", &ifnames);

	for (size_t i = 0; i < nif; i++) {
		struct capture_config cc = {
			.ifname = ifnames[i],
			.mode = modes[opts_enum(o, "mode")],
			.snaplen = (uint32_t)opts_int(o, "snaplen"),
			.buffer_kib = (uint32_t)opts_int(o, "buffer_size"),
			.filter = filter,
			.promisc = !opts_flag(o, "no_promiscuous"),
			.timeout_ms = block_ms,
		};
		char err[CAPTURE_ERRBUF];
		int cerr = capture_open(&d->ifc[d->n].cap, &cc, err);

		if (cerr) {
			fprintf(stderr, "tapless-capd: %s\n", err);
			return cerr == -EPERM ? 2 : 1;
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
	d->grace_ns = opts_ns(o, "iface_grace");
	{
		int werr = iface_watch_open(&d->watch);

		if (werr)
			log_warn("link changes: rtnetlink: %s: link down and up "
				 "will not be recorded", strerror(-werr));
		capd_links_resync(d);
	}
	return 0;
}

/* --tx-socket: listening, for --tx-group's members too: 0, or the exit
 * code. *tx_path: the socket to remove at the end. */
static int capd_open_tx(struct capd *d, struct opts *o, const char **tx_path)
{
	const char *path = opts_str(o, "tx_socket");
	int err;

	if (!path)
		return 0;
	if (opts_str(o, "tx_group")) {
		struct group *g = getgrnam(opts_str(o, "tx_group"));

		if (!g) {
			fprintf(stderr, "tapless-capd: --tx-group: no group "
				"'%s'\n", opts_str(o, "tx_group"));
			return 1;
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
		return 2;
	}
	*tx_path = path;
	log_notice("taking TX stamps of instrumented senders on %s", path);
	return 0;
}

/* The reorder buffer, keyed stamps' matching and --stamp-cgroup's BPF
 * program: 0, or the exit code. */
static int capd_open_buffers(struct capd *d, struct opts *o)
{
	const char *const *cgroups;
	size_t ncg = opts_list(o, "stamp_cgroup", &cgroups);

	/* Always: the received and sent frames of an interface come from
	 * two rings, a block of each at a time, so even without senders'
	 * stamps they reach capd up to a block timeout out of order, and a
	 * reply could be written before what it answers. */
	int rerr = reorder_create(&d->ro, CAPD_REORDER_BYTES,
				  CAPD_REORDER_ENTRIES, 1 + d->n,
				  opts_ns(o, "reorder_ms"));
	if (rerr) {
		fprintf(stderr, "tapless-capd: reorder buffer: %s\n",
			strerror(-rerr));
		return 1;
	}
	if (d->tx) {
		int err;

		/* Keyed stamps wait for their frame as long as frames wait
		 * for reordering: a pair made later could not be written in
		 * time order any more. */
		struct txmatch_config tc = {
			.hold_ns = opts_ns(o, "reorder_ms"),
			.on_match = capd_tx_pair, .arg = d,
		};
		err = txmatch_create(&d->tm, &tc);
		if (err) {
			fprintf(stderr, "tapless-capd: TX stamp matching: %s\n",
				strerror(-err));
			return 1;
		}
	}
	/* Before privileges go: loading BPF needs CAP_BPF and friends. */
	if (ncg)
		return capd_stamp_cgroups(d, o);
	return 0;
}

/* The poll set: both rings of every open interface (a gone one's -1,
 * which poll skips), the TX socket and its clients, rtnetlink (*wi) and
 * the BPF ring. Returns how many. */
static unsigned capd_pollfds(struct capd *d, struct pollfd *pfd, unsigned *wi)
{
	unsigned np = 2 * d->n;

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
		*wi = np;
		pfd[np++] = (struct pollfd){ .fd = iface_watch_fd(d->watch),
					     .events = POLLIN };
	}
	if (d->bs)
		pfd[np++] = (struct pollfd){ .fd = bpfstamp_fd(d->bs),
					     .events = POLLIN };
	return np;
}

/* Every open capture ring read: returns whether the pass drained them. */
static bool capd_read_rings(struct capd *d, int64_t now)
{
	bool drained = true;

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
	return drained;
}

/* The file's turn in a pass: a failed one closed, a new one when it is
 * time, the heartbeat, the write buffer written out. */
static void capd_file_pass(struct capd *d, int64_t now)
{
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
}

/* Every interface gone for --iface-grace: time to stop. */
static bool capd_none_left(struct capd *d, int64_t now)
{
	int64_t last = 0;

	if (capd_open_ifaces(d))
		return false;
	for (unsigned i = 0; i < d->n; i++)
		if (d->ifc[i].gone_ns > last)
			last = d->ifc[i].gone_ns;
	if (now - last >= d->grace_ns) {
		log_err("no interface left to capture: none came "
			"back within %lld s (--iface-grace); exiting",
			(long long)(d->grace_ns / 1000000000));
		d->no_iface = true;
		return true;
	}
	return false;
}

/* The capture, until a signal, --count, --duration or every interface
 * gone for good. */
static void capd_run(struct capd *d, struct opts *o, const char *filter)
{
	const char *const *ifnames;
	size_t nif = opts_list(o, "interface", &ifnames);
	int64_t end_ns = 0, next_stats;
	int poll_ms = 100;

	prog_signals(capd_signal, capd_signal);
	if (opts_ns(o, "duration"))
		end_ns = ts_now_mono() + opts_ns(o, "duration");
	next_stats = ts_now_mono() + opts_ns(o, "stats_interval");
	log_notice("capturing on %zu interface(s) into %s%s%s", nif, d->dir,
		   filter[0] ? ", filter: " : "", filter);

	/* The loop never exits on an error: a file that fails is closed with
	 * what it holds and a new one opened; only a signal, --count or
	 * --duration end it. */
	if (d->ro)
		poll_ms = (int)(opts_ns(o, "reorder_ms") / 4000000 + 1 < 100 ?
				opts_ns(o, "reorder_ms") / 4000000 + 1 : 100);
	d->hb_next = ts_now_mono();
	while (!capd_stop) {
		struct pollfd pfd[2 * CAPD_MAX_IFACES + 3 + CAPD_MAX_CLIENTS];
		unsigned np, wi = 0;
		int64_t now, real = 0;
		int wait_ms = poll_ms;
		bool drained;

		np = capd_pollfds(d, pfd, &wi);
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
		drained = capd_read_rings(d, now);
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
		capd_file_pass(d, now);
		if (now >= next_stats) {
			capd_log_stats(d);
			/* In the file as well, so a reader following it sees
			 * drops as they happen. */
			capd_write_stats(d, ts_now_real());
			next_stats = now + opts_ns(o, "stats_interval");
		}
		if ((d->max_frames && d->taken >= d->max_frames) ||
		    (end_ns && now >= end_ns))
			break;
		if (capd_none_left(d, now))
			break;
	}
}

/* The stop: what the rings still hold read, the last file closed, the
 * account logged. Returns the exit code. */
static int capd_shutdown(struct capd *d)
{
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
	return d->write_errors || d->unwritten || d->close_failed ? 2 :
	       d->no_iface ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct capd *d = xcalloc(1, sizeof(*d));
	const char *tx_path = NULL;
	struct opts *o;
	char *filter = NULL;
	int first, rc, block_ms;
	struct pidfile *out_lock = NULL, *tx_lock = NULL;

	d->lfd = -1;
	d->tx_gid = (gid_t)-1;
	d->hb_last = d->hb_best = INT64_MIN;
	o = prog_start(&capd_prog, argc, argv, &first);
	if (!o) {
		rc = first;
		goto out;
	}
	if ((rc = capd_configure(d, o, argc, argv, first, &filter, &block_ms,
				 &out_lock, &tx_lock)) ||
	    (rc = capd_open_captures(d, o, filter, block_ms)) ||
	    (rc = capd_open_tx(d, o, &tx_path)) ||
	    (rc = capd_open_buffers(d, o)))
		goto out;
	/* The interfaces are open: nothing after this needs privileges. */
	if (opts_str(o, "user") && capd_drop_privileges(opts_str(o, "user"))) {
		rc = 1;
		goto out;
	}
	if (capd_open_file(d)) {
		rc = 2;
		goto out;
	}
	capd_run(d, o, filter);
	rc = capd_shutdown(d);
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
