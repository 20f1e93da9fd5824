/* capd.c — tapless-capd: capture interfaces with the best stamps the host
 * has into pcapng files, rotated by size or time, each file whole under its
 * final name. See tapless-capd(8).
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "log.h"
#include "opts.h"
#include "pcapng.h"
#include "ts.h"
#include "xalloc.h"

#define CAPD_VERSION "tapless-capd 0.1"
#define CAPD_MAX_IFACES 16

static const char *const capd_modes[] = { "auto", "hw", "sw", NULL };

/* tcpdump's letters where tcpdump has one, so habits carry over. */
static const struct opt_def capd_opts[] = {
	{ "interface", 'i', OPT_LIST, NULL, 0, 0, NULL, "IFACE", "capture on IFACE", 0 },
	{ "write-dir", 'w', OPT_STRING, ".", 0, 0, NULL, "DIR", "directory for the capture files", 0 },
	{ "snaplen", 's', OPT_INT, "262144", 64, 262144, NULL, "BYTES", "bytes kept of each frame", 0 },
	{ "buffer-size", 'B', OPT_INT, "32768", 1024, 4194304, NULL, "KIB", "kernel ring per interface and direction", 0 },
	{ "file-size", 'C', OPT_INT, "0", 0, 1000000, NULL, "MB", "start a new file after MB million bytes (0: never)", 0 },
	{ "rotate-seconds", 'G', OPT_INT, "0", 0, 86400 * 7, NULL, "SECONDS", "start a new file every SECONDS (0: never)", 0 },
	{ "count", 'c', OPT_INT, "0", 0, 1e15, NULL, "N", "stop after N frames (0: never)", 0 },
	{ "duration", 0, OPT_INT, "0", 0, 86400 * 365, NULL, "SECONDS", "stop after SECONDS (0: never)", 0 },
	{ "no-promiscuous", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "do not put the interfaces in promiscuous mode", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, capd_modes, "MODE", "stamps on received frames: auto, hw or sw", 0 },
	{ "hostname", 'H', OPT_STRING, NULL, 0, 0, NULL, "NAME", "host name written in the files (default: this host's)", 0 },
	{ "prefix", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "file name prefix (default: the host name)", 0 },
	{ "stats-interval", 0, OPT_INT, "10", 1, 3600, NULL, "SECONDS", "log kernel drops this often", 0 },
	{ "user", 'u', OPT_STRING, NULL, 0, 0, NULL, "USER", "run as USER once the interfaces are open", 0 },
	{ "config", 'f', OPT_STRING, NULL, 0, 0, NULL, "FILE", "read options from FILE", OPT_CLI_ONLY },
	{ "syslog", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "log to syslog instead of stderr", 0 },
	{ "log-level", 'l', OPT_STRING, "notice", 0, 0, NULL, "LEVEL", "err, warning, notice, info or debug", 0 },
	{ "version", 'V', OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the version and exit", OPT_CLI_ONLY },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", OPT_CLI_ONLY },
	OPT_END
};

struct capd_iface {
	struct capture *cap;
	uint32_t id[2];		/* pcapng interface per direction */
	uint64_t drop_logged;
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
	uint64_t write_errors;
	uint64_t unwritten;	/* frames read while no file could take them */
	bool broken;		/* the current file failed: rotate */
	int64_t retry_ns;	/* no new file before this after a failure */
};

static volatile sig_atomic_t capd_stop, capd_hup;

static void capd_signal(int sig)
{
	if (sig == SIGHUP)
		capd_hup = 1;
	else
		capd_stop = 1;
}

static int capd_open_file(struct capd *d)
{
	struct pcapng_section sec = {
		.hostname = d->host, .userappl = CAPD_VERSION,
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
		struct capture_info info;

		capture_info(d->ifc[i].cap, &info);
		for (int dir = CAPTURE_IN; !err && dir <= CAPTURE_OUT; dir++) {
			struct pcapng_iface pi = {
				.name = capture_ifname(d->ifc[i].cap),
				.linktype = (uint16_t)info.linktype,
				.snaplen = info.snaplen,
				.src = info.src[dir],
			};

			err = pcapng_add_iface(d->w, &pi, &d->ifc[i].id[dir]);
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
	log_info("writing %s", path);
	return 0;
}

/* Interface statistics into the file, then close it under its final name. */
static void capd_close_file(struct capd *d)
{
	int64_t now = ts_now_real();
	int err;

	if (!d->w)
		return;
	for (unsigned i = 0; i < d->n; i++)
		for (int dir = CAPTURE_IN; dir <= CAPTURE_OUT; dir++) {
			uint64_t recv, drop;

			if (!capture_stats(d->ifc[i].cap, (enum capture_dir)dir,
					   &recv, &drop))
				pcapng_write_stats(d->w, d->ifc[i].id[dir], now,
						   recv, drop);
		}
	err = pcapng_close(d->w, false);
	if (err)
		log_err("closing capture file: %s (its whole blocks stay in the "
			".part file)", strerror(-err));
	d->w = NULL;
}

struct capd_ctx {
	struct capd *d;
	unsigned i;
};

static void capd_packet(void *arg, const struct capture_packet *p)
{
	struct capd_ctx *x = arg;
	struct capd *d = x->d;
	int err;

	if (d->max_frames && d->frames >= d->max_frames)
		return;		/* -c N means N, as in tcpdump */
	if (!d->w || d->broken) {
		d->unwritten++;
		return;
	}
	err = pcapng_write_packet(d->w, d->ifc[x->i].id[p->dir], p->ts_ns,
				  p->data, p->caplen, p->len,
				  p->dir == CAPTURE_IN ? PCAPNG_DIR_IN : PCAPNG_DIR_OUT);
	if (err) {
		d->write_errors++;
		d->broken = true;
		log_err("writing capture: %s", strerror(-err));
		return;
	}
	d->frames++;
}

static void capd_log_stats(struct capd *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		uint64_t recv = 0, drop = 0, r, k;

		/* Both handles see every frame that passes the filter (the
		 * direction is chosen after the kernel), so frames are one
		 * handle's count; drops can happen in either. */
		if (!capture_stats(d->ifc[i].cap, CAPTURE_IN, &r, &k)) {
			recv = r;
			drop = k;
		}
		if (!capture_stats(d->ifc[i].cap, CAPTURE_OUT, &r, &k))
			drop += k;
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

int main(int argc, char **argv)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	struct capd *d = xcalloc(1, sizeof(*d));
	const char *const *ifnames;
	struct opts_error oerr;
	struct opts *o = opts_create(capd_opts);
	struct sigaction sa;
	struct stat st;
	int64_t end_ns = 0, next_stats;
	char *filter = NULL;
	int first, level, rc = 1;
	size_t nif;

	log_init("tapless-capd", false, LOG_NOTICE);
	first = opts_parse_args(o, argc, argv, &oerr);
	if (first < 0) {
		fprintf(stderr, "tapless-capd: %s\ntry 'tapless-capd --help'\n", oerr.msg);
		goto out;
	}
	if (opts_flag(o, "help")) {
		printf("usage: tapless-capd [OPTIONS] [FILTER...]\n\n"
		       "FILTER: a pcap filter expression, e.g. tcp port 9001\n\n"
		       "options:\n");
		opts_usage(stdout, capd_opts);
		rc = 0;
		goto out;
	}
	if (opts_flag(o, "version")) {
		printf("%s\n", CAPD_VERSION);
		rc = 0;
		goto out;
	}
	if (opts_str(o, "config") &&
	    opts_parse_file(o, opts_str(o, "config"), NULL, NULL, &oerr)) {
		fprintf(stderr, "tapless-capd: %s\n", oerr.msg);
		goto out;
	}
	level = log_level_parse(opts_str(o, "log-level"));
	if (level < 0) {
		fprintf(stderr, "tapless-capd: --log-level: '%s' is not a level\n",
			opts_str(o, "log-level"));
		goto out;
	}
	log_init("tapless-capd", opts_flag(o, "syslog"), level);
	nif = opts_list(o, "interface", &ifnames);
	if (!nif || nif > CAPD_MAX_IFACES) {
		fprintf(stderr, "tapless-capd: give 1 to %d interfaces with -i\n",
			CAPD_MAX_IFACES);
		goto out;
	}
	snprintf(d->dir, sizeof(d->dir), "%s", opts_str(o, "write-dir"));
	if (stat(d->dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tapless-capd: %s: not a directory\n", d->dir);
		goto out;
	}
	if (opts_str(o, "hostname"))
		snprintf(d->host, sizeof(d->host), "%s", opts_str(o, "hostname"));
	else if (gethostname(d->host, sizeof(d->host) - 1))
		strcpy(d->host, "localhost");
	snprintf(d->prefix, sizeof(d->prefix), "%s",
		 opts_str(o, "prefix") ? opts_str(o, "prefix") : d->host);
	d->limit_bytes = (uint64_t)opts_int(o, "file-size") * 1000000;
	d->rotate_ns = opts_int(o, "rotate-seconds") * 1000000000LL;
	d->max_frames = (uint64_t)opts_int(o, "count");
	filter = capd_filter(argc, argv, first);

	for (size_t i = 0; i < nif; i++) {
		struct capture_config cc = {
			.ifname = ifnames[i],
			.mode = modes[opts_enum(o, "mode")],
			.snaplen = (uint32_t)opts_int(o, "snaplen"),
			.buffer_kib = (uint32_t)opts_int(o, "buffer-size"),
			.filter = filter,
			.promisc = !opts_flag(o, "no-promiscuous"),
		};
		char err[CAPTURE_ERRBUF];
		int cerr = capture_open(&d->ifc[d->n].cap, &cc, err);

		if (cerr) {
			fprintf(stderr, "tapless-capd: %s\n", err);
			rc = cerr == -EPERM ? 2 : 1;
			goto out;
		}
		capd_warn_iface(d->ifc[d->n].cap);
		d->n++;
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
	if (opts_int(o, "duration"))
		end_ns = ts_now_mono() + opts_int(o, "duration") * 1000000000LL;
	next_stats = ts_now_mono() + opts_int(o, "stats-interval") * 1000000000LL;
	log_notice("capturing on %zu interface(s) into %s%s%s", nif, d->dir,
		   filter[0] ? ", filter: " : "", filter);

	/* The loop never exits on an error: a file that fails is closed with
	 * what it holds and a new one opened; only a signal, --count or
	 * --duration end it. */
	while (!capd_stop) {
		struct pollfd pfd[2 * CAPD_MAX_IFACES];
		int64_t now;

		for (unsigned i = 0; i < d->n; i++) {
			int fds[2];

			capture_fds(d->ifc[i].cap, fds);
			pfd[2 * i] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
			pfd[2 * i + 1] = (struct pollfd){ .fd = fds[1], .events = POLLIN };
		}
		if (poll(pfd, 2 * d->n, 100) < 0 && errno != EINTR)
			log_warn_rl("poll: %m");
		for (unsigned i = 0; i < d->n; i++) {
			struct capd_ctx x = { d, i };

			if (capture_dispatch(d->ifc[i].cap, 10000, capd_packet, &x) < 0)
				log_warn_rl("%s", capture_error(d->ifc[i].cap));
		}
		now = ts_now_mono();
		/* A failed file is closed with what it holds at once; a new
		 * one is tried a second later (a full disk would otherwise
		 * turn every frame into a new, failing file). */
		if (d->broken && d->w) {
			capd_close_file(d);
			d->retry_ns = now + 1000000000;
		}
		if ((!d->w && now >= d->retry_ns) || (d->w && (capd_hup ||
		    (d->limit_bytes && pcapng_bytes(d->w) >= d->limit_bytes) ||
		    (d->rotate_ns && now - d->opened_ns >= d->rotate_ns)))) {
			if (capd_hup)
				log_notice("SIGHUP: starting a new file");
			capd_hup = 0;
			capd_close_file(d);
			if (capd_open_file(d))
				d->retry_ns = now + 1000000000;
		}
		if (now >= next_stats) {
			capd_log_stats(d);
			next_stats = now + opts_int(o, "stats-interval") * 1000000000LL;
		}
		if ((d->max_frames && d->frames >= d->max_frames) ||
		    (end_ns && now >= end_ns))
			break;
	}
	/* Frames the kernel already took are in the ring, some in a block it
	 * hands over only when the block times out (100 ms): keep reading
	 * past that so a stop loses nothing that was captured. */
	for (int64_t until = ts_now_mono() + 250000000; ts_now_mono() < until;) {
		for (unsigned i = 0; i < d->n; i++) {
			struct capd_ctx x = { d, i };

			capture_dispatch(d->ifc[i].cap, 0, capd_packet, &x);
		}
		usleep(10000);
	}
	capd_log_stats(d);
	capd_close_file(d);
	log_notice("stopped after %llu frames%s", (unsigned long long)d->frames,
		   d->write_errors ? ", with write errors" : "");
	if (d->unwritten)
		log_err("%llu frames were captured while no file could be written",
			(unsigned long long)d->unwritten);
	rc = d->write_errors ? 2 : 0;
out:
	for (unsigned i = 0; i < d->n; i++)
		capture_close(d->ifc[i].cap);
	free(filter);
	free(d);
	opts_destroy(o);
	return rc;
}
