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
#include <unistd.h>

#include "base/log.h"
#include "live/txsock.h"
#include "shim/shim_env.h"

struct shim_conf shim_conf;
struct shim_stats shim_stats;
pid_t shim_pid;

static int log_max = LOG_NOTICE;
bool shim_log_debug;
static char log_path[PATH_MAX];
static _Atomic int log_fd = -1;		/* log_path's, once opened */

static pthread_mutex_t client_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct txsock_client *client;
static bool client_bad;			/* the path itself is wrong */
static _Atomic int client_fd = -1;

/* ---- log ---- */

static int log_target(void)
{
	int fd, none = -1;

	if (!log_path[0])
		return STDERR_FILENO;
	fd = atomic_load(&log_fd);
	if (fd >= 0)
		return fd;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return STDERR_FILENO;
	if (!atomic_compare_exchange_strong(&log_fd, &none, fd)) {
		REAL(close)(fd);
		fd = none;
	}
	return fd;
}

void shim_log(int level, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	int n, saved = errno;

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
	if (REAL(write)(log_target(), line, (size_t)n) < 0)
		(void)0;
	errno = saved;
}

/* ---- our own descriptors ---- */

bool shim_own_fd(int fd)
{
	return fd >= 0 && ((log_path[0] && fd == atomic_load(&log_fd)) ||
			   fd == atomic_load(&client_fd));
}

int shim_own_fds(int out[2])
{
	int n = 0, a = log_path[0] ? atomic_load(&log_fd) : -1,
	    b = atomic_load(&client_fd);

	if (a >= 0)
		out[n++] = a;
	if (b >= 0 && b != a)
		out[n++] = b;
	if (n == 2 && out[0] > out[1]) {
		out[0] = b;
		out[1] = a;
	}
	return n;
}

void shim_own_fd_lost(int fd)
{
	int cur = fd;

	if (log_path[0])
		atomic_compare_exchange_strong(&log_fd, &cur, -1);
	if (fd != atomic_load(&client_fd))
		return;
	pthread_mutex_lock(&client_mtx);
	if (client && txsock_client_fd(client) == fd) {
		/* Reconnect later, on another number; what was queued and
		 * not yet written is lost. */
		atomic_store(&client_fd, -1);
		txsock_close(client);
		client = NULL;
	}
	pthread_mutex_unlock(&client_mtx);
}

/* ---- hand-over ---- */

void shim_hand(const struct txsock_rec *r, size_t n)
{
	size_t queued = 0;

	if (!n)
		return;
	pthread_mutex_lock(&client_mtx);
	if (!client && !client_bad) {
		int err = txsock_connect(&client, shim_conf.tx_socket);

		if (err) {
			client = NULL;
			client_bad = true;
			shim_log(LOG_WARNING, "tx socket %s: %s: stamps are "
				 "dropped", shim_conf.tx_socket, strerror(-err));
		}
	}
	if (client)
		queued = txsock_send_batch(client, r, n);
	atomic_store(&client_fd, client ? txsock_client_fd(client) : -1);
	pthread_mutex_unlock(&client_mtx);
	atomic_fetch_add(&shim_stats.handed, queued);
	if (queued < n) {
		atomic_fetch_add(&shim_stats.dropped, n - queued);
		shim_log_once(LOG_NOTICE, "tapless-capd is not taking stamps "
			      "at %s (not running, or slow): dropping them, "
			      "counted; reconnecting at most once a second",
			      shim_conf.tx_socket);
	}
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
	char err[200];
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
	if (shim_filter_ports(&shim_conf.filter, getenv(SHIM_ENV_PORTS), err,
			      sizeof(err)) ||
	    shim_filter_peers(&shim_conf.filter, getenv(SHIM_ENV_PEERS), err,
			      sizeof(err))) {
		shim_log(LOG_ERR, "%s/%s: %s: stamping is off", SHIM_ENV_PORTS,
			 SHIM_ENV_PEERS, err);
		return;
	}
	shim_conf.tcp_ok = looped_ok();
	/* For tests: UDP ids counted by the kernel, as before Linux 6.13. */
	v = getenv(SHIM_ENV_UDP_IDS);
	shim_conf.udp_kernel_ids = v && !strcmp(v, "kernel");
	shim_conf.on = true;
}

/* ---- fork, start, exit ---- */

static void after_fork_child(void)
{
	shim_pid = getpid();
	pthread_mutex_init(&client_mtx, NULL);
	if (client) {
		/* The parent's connection is the parent's: close our copy,
		 * drop our copy of its queue, connect anew when needed. */
		atomic_store(&client_fd, -1);
		txsock_close(client);
		client = NULL;
	}
	client_bad = false;
	memset(&shim_stats, 0, sizeof(shim_stats));
	shim_sock_after_fork();
	shim_ep_after_fork();
}

__attribute__((constructor)) static void shim_init(void)
{
	shim_real_resolve();
	shim_pid = getpid();
	conf_init();
	pthread_atfork(NULL, NULL, after_fork_child);
	if (shim_conf.on)
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
		 "%llu not wanted, %llu UDP stamps never came; stepped aside from %llu sockets%s; "
		 "%llu POLLERR hidden, %llu passed on; on stamped sockets: "
		 "sendfile %llu, splice %llu; io_uring set-ups %llu; %llu foreign "
		 "messages read, %llu anchor mismatches", when,
		 N(sends), N(armed_tcp) + N(armed_udp), N(armed_tcp),
		 N(armed_udp), N(adopted), N(stamps), N(handed), N(dropped),
		 N(unkeyed), N(filtered), N(lost), naside, aside, N(masked), N(real_err),
		 N(sendfile), N(splice), N(io_uring), N(foreign), N(mismatch));
}

void shim_settle_all(const char *when)
{
	shim_sock_reap_all();
	pthread_mutex_lock(&client_mtx);
	/* What is queued goes to capd if it takes it soon; never long. */
	if (client && txsock_flush(client, 200) < 0)
		shim_log(LOG_INFO, "stamps still queued %s were lost", when);
	pthread_mutex_unlock(&client_mtx);
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
