/* shim.c — libtapless-stamp.so: start-up from the environment, the log,
 * the hand-over to capd, fork(), and the summary at exit. */
#include "shim/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "shim/shim_env.h"

struct shim_conf shim_conf;
struct shim_stats shim_stats;
pid_t shim_pid;

static int log_max = LOG_NOTICE;
bool shim_log_debug;
static char log_path[PATH_MAX];
/* The file the log goes to: the one named by --log-file once opened, or
 * the program's standard error as it was at start-up. Each line first
 * checks that the descriptor still names that file: a program that
 * closed fd 2 and reused the number (a daemon whose fd 2 is now a
 * socket), or closed ours by a system call, never gets our lines. */
static struct { dev_t dev; ino_t ino; bool ok; } log_id;

/* ---- our own descriptors ---- */

static _Atomic int own[SHIM_OWN_COUNT] = { -1, -1, -1, -1 };
static int own_base;

int shim_own_high(int fd)
{
	int nfd;

	if (fd < 0 || fd >= own_base)
		return fd;
	nfd = REAL(fcntl)(fd, F_DUPFD_CLOEXEC, own_base);
	if (nfd < 0)
		return fd;	/* no room up there: kept where it is */
	REAL(close)(fd);
	return nfd;
}

void shim_own_set(enum shim_own which, int fd)
{
	atomic_store(&own[which], fd);
}

bool shim_own_fd(int fd)
{
	if (fd < 0)
		return false;
	for (int i = 0; i < SHIM_OWN_COUNT; i++)
		if (atomic_load(&own[i]) == fd)
			return true;
	return false;
}

int shim_own_fds(int out[SHIM_OWN_COUNT])
{
	int n = 0;

	for (int i = 0; i < SHIM_OWN_COUNT; i++) {
		int fd = atomic_load(&own[i]), j = n;

		if (fd < 0)
			continue;
		while (j > 0 && out[j - 1] > fd) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = fd;
		n++;
	}
	return n;
}

void shim_own_fd_lost(int fd)
{
	for (int i = 0; i < SHIM_OWN_COUNT; i++) {
		int cur = fd;

		if (!atomic_compare_exchange_strong(&own[i], &cur, -1))
			continue;
		/* The number is about to be the program's: forgotten, not
		 * closed (dup2 closes our file). */
		if (i == SHIM_OWN_CLIENT)
			shim_hand_lost();
		else if (i == SHIM_OWN_REAPER || i == SHIM_OWN_WAKE)
			shim_reaper_lost();
	}
}

/* ---- log ---- */

static bool same_file(int fd)
{
	struct stat sb;

	return log_id.ok && fstat(fd, &sb) == 0 && sb.st_dev == log_id.dev &&
	       sb.st_ino == log_id.ino;
}

static int log_target(void)
{
	int fd, none = -1;
	struct stat sb;

	if (!log_path[0])
		return same_file(STDERR_FILENO) ? STDERR_FILENO : -1;
	fd = atomic_load(&own[SHIM_OWN_LOG]);
	if (fd >= 0)
		return same_file(fd) ? fd : -1;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	fd = shim_own_high(fd);
	if (!atomic_compare_exchange_strong(&own[SHIM_OWN_LOG], &none, fd)) {
		REAL(close)(fd);
		return same_file(none) ? none : -1;
	}
	if (fstat(fd, &sb) == 0) {
		log_id.dev = sb.st_dev;
		log_id.ino = sb.st_ino;
		log_id.ok = true;
	}
	return fd;
}

void shim_log(int level, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	int n, fd, saved = errno;

	if (level > log_max)
		return;
	n = snprintf(line, sizeof(line), "tapless-stamp[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line: lines of threads and processes stay whole. */
	fd = log_target();
	if (fd >= 0 && REAL(write)(fd, line, (size_t)n) < 0)
		(void)0;
	errno = saved;
}

/* ---- configuration ---- */

static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = REAL(read)(fd, buf, len - 1);
	REAL(close)(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* Whether the kernel hands this process the looped packets of its TCP
 * stamps (skb_may_tx_timestamp()): net.core.tstamp_allow_data, or
 * CAP_NET_RAW. */
static bool looped_ok(void)
{
	char buf[4096], *p;
	unsigned long long caps;

	if (!read_small("/proc/sys/net/core/tstamp_allow_data", buf, 16) ||
	    buf[0] != '0')
		return true;
	if (!read_small("/proc/self/status", buf, sizeof(buf)) ||
	    !(p = strstr(buf, "\nCapEff:")))
		return false;
	caps = strtoull(p + 8, NULL, 16);
	return caps & (1ull << 13);	/* CAP_NET_RAW */
}

static void conf_init(void)
{
	const char *v;
	char err[SHIM_FILTER_ERRBUF];
	int level;

	v = getenv(SHIM_ENV_LOG_FILE);
	if (v && *v)
		snprintf(log_path, sizeof(log_path), "%s", v);
	v = getenv(SHIM_ENV_LOG_LEVEL);
	if (v && *v) {
		level = log_level_parse(v);
		if (level < 0) {
			shim_log(LOG_ERR, "%s=%s: not a level (err, warning, "
				 "notice, info, debug): stamping is off",
				 SHIM_ENV_LOG_LEVEL, v);
			return;
		}
		log_max = level;
		shim_log_debug = level >= LOG_DEBUG;
	}
	v = getenv(SHIM_ENV_TX_SOCKET);
	if (!v || !*v)
		v = SHIM_DEFAULT_TX_SOCKET;
	if (strlen(v) >= sizeof(shim_conf.tx_socket)) {
		shim_log(LOG_ERR, "%s: path too long: stamping is off",
			 SHIM_ENV_TX_SOCKET);
		return;
	}
	strcpy(shim_conf.tx_socket, v);
	v = getenv(SHIM_ENV_MODE);
	if (!v || !*v || !strcmp(v, "auto"))
		shim_conf.mode = SHIM_MODE_AUTO;
	else if (!strcmp(v, "hw"))
		shim_conf.mode = SHIM_MODE_HW;
	else if (!strcmp(v, "sw"))
		shim_conf.mode = SHIM_MODE_SW;
	else {
		shim_log(LOG_ERR, "%s=%s: not auto, hw or sw: stamping is off",
			 SHIM_ENV_MODE, v);
		return;
	}
	if (shim_filter_ports(&shim_conf.filter, getenv(SHIM_ENV_PORTS), err) ||
	    shim_filter_peers(&shim_conf.filter, getenv(SHIM_ENV_PEERS), err)) {
		shim_log(LOG_ERR, "%s/%s: %s: stamping is off", SHIM_ENV_PORTS,
			 SHIM_ENV_PEERS, err);
		return;
	}
	shim_conf.tcp_ok = looped_ok();
	/* For tests: UDP ids counted by the kernel, as before Linux 6.13. */
	v = getenv(SHIM_ENV_UDP_IDS);
	shim_conf.udp_kernel_ids = v && !strcmp(v, "kernel");
	v = getenv(SHIM_ENV_RX_FILTER);
	if (v && !strcmp(v, "off"))
		atomic_store(&shim_conf.rx_unfiltered, true);
	shim_conf.on = true;
}

/* ---- fork, start, exit ---- */

static void after_fork_child(void)
{
	shim_pid = getpid();
	shim_hand_after_fork();
	memset(&shim_stats, 0, sizeof(shim_stats));
	shim_sock_after_fork();
	shim_ep_after_fork();
	shim_reaper_after_fork();
}

/* Our descriptors live near the top of the first 1024 (960 and up with
 * the usual limit): far from the numbers programs get (the lowest free)
 * or pick (closefrom(3), dup2 onto 3..9), below FD_SETSIZE, and without
 * growing the kernel's descriptor table for a program with a high
 * limit. */
static void own_init(void)
{
	struct rlimit rl;
	rlim_t lim = 1024;
	struct stat sb;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	own_base = lim > 128 ? (int)lim - 64 : (int)lim / 2;
	if (!log_path[0] && fstat(STDERR_FILENO, &sb) == 0) {
		log_id.dev = sb.st_dev;
		log_id.ino = sb.st_ino;
		log_id.ok = true;
	}
}

__attribute__((constructor)) static void shim_init(void)
{
	shim_real_resolve();
	shim_pid = getpid();
	conf_init();
	own_init();
	pthread_atfork(NULL, NULL, after_fork_child);
	if (!shim_conf.on)
		return;
	/* Everything a send may need later is allocated now. */
	shim_hand_init();
	shim_sock_init();
	shim_log(LOG_DEBUG, "loaded: stamps to %s, mode %s%s",
		 shim_conf.tx_socket,
		 shim_conf.mode == SHIM_MODE_HW ? "hw" :
		 shim_conf.mode == SHIM_MODE_SW ? "sw" : "auto",
		 shim_conf.tcp_ok ? "" : ", TCP off (no looped packets)");
}

#define N(x) ((unsigned long long)atomic_load(&shim_stats.x))

static void summary(const char *when)
{
	static const char *const why[SHIM_ASIDE_COUNT] = {
		"own-stamps", "recverr", "zerocopy", "errqueue", "cork",
		"no-anchor", "unstampable", "failed",
	};
	char aside[256] = "";
	unsigned long long naside = 0;
	size_t off = 0;
	bool busy;

	for (int i = 0; i < SHIM_ASIDE_COUNT; i++) {
		unsigned long long n = N(aside[i]);

		naside += n;
		if (n && off < sizeof(aside))
			off += (size_t)snprintf(aside + off, sizeof(aside) - off,
						"%s%s %llu", off ? ", " : " (",
						why[i], n);
	}
	if (off && off < sizeof(aside) - 1)
		strcat(aside, ")");
	busy = N(armed_tcp) + N(armed_udp) + naside + N(sendfile) +
	       N(splice) + N(io_uring) > 0;
	shim_log(busy ? LOG_NOTICE : LOG_INFO,
		 "summary%s: %llu sends on %llu stamped sockets (%llu TCP, "
		 "%llu UDP, %llu adopted); %llu stamps read, %llu handed to "
		 "capd, %llu dropped (capd absent or slow), %llu not keyed, "
		 "%llu not wanted, %llu UDP stamps never came; stepped aside from %llu sockets%s, "
		 "%llu late stamps read after; "
		 "%llu POLLERR hidden, %llu passed on; on stamped sockets: "
		 "sendfile %llu, splice %llu; io_uring set-ups %llu; %llu foreign "
		 "messages read, %llu anchor mismatches", when,
		 N(sends), N(armed_tcp) + N(armed_udp), N(armed_tcp),
		 N(armed_udp), N(adopted), N(stamps), N(handed), N(dropped),
		 N(unkeyed), N(filtered), N(lost), naside, aside, N(late),
		 N(masked), N(real_err),
		 N(sendfile), N(splice), N(io_uring), N(foreign), N(mismatch));
	/* The line above is long and at notice: a deployment whose capd
	 * listens elsewhere gets a line of its own that says so. */
	if (N(stamps) && N(dropped) && !N(handed))
		shim_log(LOG_WARNING, "summary%s: 0 handed: no stamp reached "
			 "tapless-capd at %s — is it running with --tx-socket "
			 "%s?", when, shim_conf.tx_socket, shim_conf.tx_socket);
}

void shim_settle_all(const char *when)
{
	shim_sock_reap_all();
	/* What is queued goes to capd if it takes it soon; never long. */
	if (shim_hand_flush(200) < 0)
		shim_log(LOG_INFO, "stamps still queued%s were lost", when);
	shim_stats_sum();
	summary(when);
	memset(&shim_stats, 0, sizeof(shim_stats));
}

__attribute__((destructor)) static void shim_fini(void)
{
	if (!shim_conf.on || shim_in_vfork_child())
		return;
	shim_settle_all("");
}
