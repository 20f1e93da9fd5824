/* hwsim_preload.c — libtapless-hwsim.so: a NIC's hardware clock and
 * hardware stamps for the programs of a simulated host, above the kernel.
 *
 * tapless-hwsim(1) preloads it with the host's name and directory in the
 * environment. The library then answers, for that host's shared state
 * (hwsim/hwsim_host.h):
 *
 *   clocks      open("/dev/ptpN") gives a descriptor of PHC N;
 *               clock_gettime/settime/adjtime/getres on its dynamic clock
 *               id, PTP_CLOCK_GETCAPS and PTP_SYS_OFFSET{,_EXTENDED,
 *               _PRECISE} on the descriptor act on the simulated PHC;
 *               CLOCK_REALTIME (clock_*, gettimeofday, time, adjtimex,
 *               ntp_adjtime) is the host's simulated system clock, so a
 *               phc2sys steers it and never the machine's;
 *   the NIC     ioctl SIOCETHTOOL ETHTOOL_GET_TS_INFO reports hardware
 *               stamping and the interface's PHC; SIOCSHWTSTAMP and
 *               SIOCGHWTSTAMP are taken and remembered;
 *   stamps      SO_TIMESTAMPING asking for hardware stamps asks the kernel
 *               for software ones instead; recvmsg() then turns each
 *               software stamp (the kernel's CLOCK_REALTIME: true time)
 *               into ts[2], the PHC of the socket's interface at that
 *               moment (noise and quantum applied), and ts[0] into the
 *               simulated system clock's time or 0, as the program asked;
 *   faults      (tapless-hwsim --fault, in the host's state) a share of
 *               TX stamps lost, a share delivered late (held in a ring per
 *               socket; poll, select and epoll wake when one comes due),
 *               RX stamps only on the PTP event port, PTP messages in made
 *               foreign (gm-gone); steps and frequency jumps act on the
 *               clocks themselves.
 *
 * Generic netlink sockets fail (EPROTONOSUPPORT), so that the ethtool
 * netlink TSINFO request falls back to the ioctl answered here. Not
 * covered: packet sockets' mmap rings (libpcap's), SO_TIMESTAMP(NS),
 * recvmmsg, timers on CLOCK_REALTIME (they run on the true time).
 * Without TAPLESS_HWSIM_HOST in the environment every call goes straight
 * to the C library.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/ptp_clock.h>
#include <linux/sockios.h>

#include "hwsim/hwsim_held.h"
#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_env.h"
#include "hwsimlib/hwsim_lib.h"

#define HWSIM_EXPORT __attribute__((visibility("default")))
#define HWSIM_FDS 4096
#define CLOCKFD 3
#define FD_TO_CLOCKID(fd) ((clockid_t)((((unsigned int)~(fd)) << 3) | CLOCKFD))
#define CLOCKID_TO_FD(clk) ((int)~((clk) >> 3))	/* arithmetic shift */

enum { FD_NONE, FD_PHC, FD_SOCK };

struct hwsim_fd {
	unsigned char kind;
	signed char phc;		/* FD_PHC: its slot */
	unsigned int want;		/* FD_SOCK: SO_TIMESTAMPING asked */
	int port;			/* FD_SOCK: its local port, 0: not
					 * asked yet, -1: none */
	char ifname[IF_NAMESIZE];	/* FD_SOCK: SO_BINDTODEVICE */
	char addrif[IF_NAMESIZE];	/* FD_SOCK: the interface of its local
					 * address, once it has a specific one */
	bool epoll;			/* an epoll instance we saw used */
	bool selerr;			/* FD_SOCK: SO_SELECT_ERR_QUEUE on */
	struct hwsim_held *held;	/* FD_SOCK: messages held back */
};

static struct hwsim_host *host;
static struct hwsim_fd fdtab[HWSIM_FDS];

struct hwsim_host *hwsim_host(void)
{
	return host;
}

static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_socket)(int, int, int);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
			 const sigset_t *);
static int (*real___poll_chk)(struct pollfd *, nfds_t, int, size_t);
static int (*real___ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *,
			       const sigset_t *, size_t);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_pselect)(int, fd_set *, fd_set *, fd_set *,
			   const struct timespec *, const sigset_t *);
static int (*real_epoll_ctl)(int, int, int, struct epoll_event *);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static int (*real_epoll_pwait)(int, struct epoll_event *, int, int,
			       const sigset_t *);
static int (*real_epoll_pwait2)(int, struct epoll_event *, int,
				const struct timespec *, const sigset_t *);

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_clock_settime)(clockid_t, const struct timespec *);
static int (*real_clock_adjtime)(clockid_t, struct timex *);
static int (*real_clock_getres)(clockid_t, struct timespec *);
static DIR *(*real_opendir)(const char *);
static struct dirent *(*real_readdir)(DIR *);
static int (*real_closedir)(DIR *);

#define REAL(name) do { if (!real_##name) \
	real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name); } while (0)

__attribute__((constructor)) static void hwsim_init(void)
{
	const char *name = getenv(HWSIM_ENV_HOST);
	const char *dir = getenv(HWSIM_ENV_DIR);
	char err[512];

	REAL(openat); REAL(close); REAL(ioctl); REAL(socket);
	REAL(bind);
	REAL(setsockopt); REAL(getsockopt); REAL(recvmsg);
	REAL(poll); REAL(ppoll); REAL(__poll_chk); REAL(__ppoll_chk);
	REAL(select); REAL(pselect); REAL(epoll_ctl); REAL(epoll_wait);
	REAL(epoll_pwait); REAL(epoll_pwait2);
	REAL(clock_gettime); REAL(clock_settime); REAL(clock_adjtime);
	REAL(clock_getres); REAL(opendir); REAL(readdir); REAL(closedir);
	if (!name || !*name)
		return;
	if (hwsim_host_open(&host, dir && *dir ? dir : HWSIM_DEFAULT_DIR,
			    name, true, NULL, err, sizeof(err))) {
		/* A program told to run on simulated clocks must not run on
		 * the real ones, where it would steer the machine's. */
		fprintf(stderr, "libtapless-hwsim: %s\n", err);
		_exit(126);
	}
	/* Every NIC of the host has its PHC from the start, as after boot:
	 * a program that lists /dev/ptp* before it asks about an interface
	 * finds them. */
	{
		struct if_nameindex *ifs = if_nameindex();

		for (struct if_nameindex *i = ifs; i && i->if_index; i++)
			if (strcmp(i->if_name, "lo"))
				hwsim_phc_find(host, i->if_name, true);
		if (ifs)
			if_freenameindex(ifs);
	}
}

static int64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void ns_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000LL;
		ts->tv_sec--;
	}
}

/* The simulated clock a clock id names: a PHC slot, -1 the system clock,
 * -2 none (the real clock). */
static int hwsim_clock_of(clockid_t id)
{
	if (!host)
		return -2;
	if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)
		return -1;
	if ((id & 7) == CLOCKFD) {
		int fd = CLOCKID_TO_FD(id);

		if (fd >= 0 && fd < HWSIM_FDS && fdtab[fd].kind == FD_PHC)
			return fdtab[fd].phc;
	}
	return -2;
}

/* ---- /dev/ptpN ---- */

static int hwsim_phc_path(const char *path)
{
	char *end;
	long n;

	if (!host || strncmp(path, "/dev/ptp", 8))
		return -1;
	n = strtol(path + 8, &end, 10);
	if (end == path + 8 || *end || n < 0 || n >= HWSIM_MAX_PHC)
		return -1;
	return (int)n;
}

static int hwsim_open_phc(int n, int flags)
{
	struct hwsim_phc_info p;
	int fd;

	if (hwsim_phc_get(host, (unsigned)n, &p)) {
		errno = ENOENT;
		return -1;
	}
	/* A descriptor of its own that nothing else will claim. */
	fd = memfd_create("tapless-hwsim-ptp", flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (fd >= HWSIM_FDS) {
		real_close(fd);
		errno = EMFILE;
		return -1;
	}
	fdtab[fd] = (struct hwsim_fd){ .kind = FD_PHC, .phc = (signed char)n };
	return fd;
}

/* open() and openat() of a path: a PHC's, or the C library's (openat with
 * AT_FDCWD is open). */
static int hwsim_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int n = hwsim_phc_path(path);

	REAL(openat);
	return n >= 0 ? hwsim_open_phc(n, flags) :
		real_openat(dirfd, path, flags, mode);
}

/* The mode argument, there only when a file may be made. */
#define HWSIM_MODE(flags, last, mode) do { \
	if ((flags) & (O_CREAT | O_TMPFILE)) { \
		va_list ap; \
		va_start(ap, last); \
		mode = va_arg(ap, mode_t); \
		va_end(ap); \
	} } while (0)

HWSIM_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	HWSIM_MODE(flags, flags, mode);
	return hwsim_openat(AT_FDCWD, path, flags, mode);
}

HWSIM_EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));

HWSIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	HWSIM_MODE(flags, flags, mode);
	return hwsim_openat(dirfd, path, flags, mode);
}

HWSIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));

/* The fortified entries (_FORTIFY_SOURCE) of open and open64. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

HWSIM_EXPORT int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

HWSIM_EXPORT int __open64_2(const char *path, int flags)
	__attribute__((alias("__open_2")));

static void hwsim_forget(int fd);

HWSIM_EXPORT int close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < HWSIM_FDS) {
		/* All of it: the next descriptor of the number is another
		 * socket (its port, device, address, flags and options
		 * asked anew). */
		hwsim_forget(fd);
		fdtab[fd] = (struct hwsim_fd){ .kind = FD_NONE };
	}
	return real_close(fd);
}

/* The simulated PHCs appear in a listing of /dev (after the real
 * entries), for programs that look for /dev/ptp* there. */
static DIR *devdir;
static unsigned devdir_next;
static struct dirent devdir_ent;

HWSIM_EXPORT DIR *opendir(const char *path)
{
	DIR *d;

	REAL(opendir);
	d = real_opendir(path);
	if (d && host && (!strcmp(path, "/dev") || !strcmp(path, "/dev/"))) {
		devdir = d;
		devdir_next = 0;
	}
	return d;
}

HWSIM_EXPORT struct dirent *readdir(DIR *d)
{
	struct dirent *e;

	REAL(readdir);
	e = real_readdir(d);
	if (e || d != devdir)
		return e;
	while (devdir_next < hwsim_phc_count(host)) {
		struct hwsim_phc_info p;
		unsigned n = devdir_next++;

		if (hwsim_phc_get(host, n, &p))
			continue;
		memset(&devdir_ent, 0, sizeof(devdir_ent));
		devdir_ent.d_type = DT_CHR;
		snprintf(devdir_ent.d_name, sizeof(devdir_ent.d_name), "ptp%u", n);
		return &devdir_ent;
	}
	return NULL;
}

HWSIM_EXPORT struct dirent64 *readdir64(DIR *d)
	__attribute__((alias("readdir")));

HWSIM_EXPORT int closedir(DIR *d)
{
	REAL(closedir);
	if (d == devdir)
		devdir = NULL;
	return real_closedir(d);
}

/* ---- clocks ---- */

HWSIM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	int n = hwsim_clock_of(id);

	REAL(clock_gettime);
	if (n == -2) {
		if (host && id == CLOCK_TAI) {
			struct timespec r;

			/* TAI keeps its distance from the system clock. */
			real_clock_gettime(CLOCK_TAI, ts);
			real_clock_gettime(CLOCK_REALTIME, &r);
			ns_ts(ts_ns(ts) - ts_ns(&r) + hwsim_read(host, -1, ts_ns(&r)), ts);
			return 0;
		}
		return real_clock_gettime(id, ts);
	}
	ns_ts(hwsim_read(host, n, hwsim_true_now()), ts);
	return 0;
}

HWSIM_EXPORT int clock_settime(clockid_t id, const struct timespec *ts)
{
	int n = hwsim_clock_of(id);

	REAL(clock_settime);
	if (n == -2)
		return real_clock_settime(id, ts);
	hwsim_set(host, n, ts_ns(ts));
	return 0;
}

HWSIM_EXPORT int clock_getres(clockid_t id, struct timespec *ts)
{
	REAL(clock_getres);
	if (hwsim_clock_of(id) == -2)
		return real_clock_getres(id, ts);
	if (ts)
		*ts = (struct timespec){ 0, 1 };
	return 0;
}

/* The system clock's tick, as the kernel has it for USER_HZ 100: 10000 us
 * a tick; each us more runs the clock 100 ppm faster. */
#define HWSIM_TICK_US 10000
#define HWSIM_TICK_PPB 100000.0

/* clock_adjtime on a simulated clock: a frequency (ADJ_FREQUENCY), for the
 * system clock a tick (ADJ_TICK), a step (ADJ_SETOFFSET); the NTP fields
 * a servo sets besides (status, errors, the leap flags) are taken and not
 * acted on; the answer gives the frequency and tick in force and the
 * kernel's tolerance (500 ppm). Never the machine's clock. */
static int hwsim_adjtime(int n, struct timex *tx)
{
	double tick;

	if (tx->modes & ADJ_SETOFFSET) {
		int64_t d = tx->time.tv_sec * 1000000000LL +
			(tx->modes & ADJ_NANO ? tx->time.tv_usec :
			 tx->time.tv_usec * 1000LL);

		hwsim_step(host, n, d);
	}
	if (n < 0 && (tx->modes & ADJ_TICK))
		hwsim_set_tick(host, n, (double)(tx->tick - HWSIM_TICK_US) *
			       HWSIM_TICK_PPB);
	if (tx->modes & ADJ_FREQUENCY)
		hwsim_set_freq(host, n, (double)tx->freq / 65.536);
	tick = hwsim_get_tick(host, n);
	tx->freq = (long)llround((hwsim_get_freq(host, n) - tick) * 65.536);
	tx->tick = HWSIM_TICK_US + (long)llround(tick / HWSIM_TICK_PPB);
	tx->tolerance = 500 * 65536;
	tx->offset = 0;
	tx->maxerror = tx->esterror = 0;
	if (n >= 0)
		tx->status = 0;
	return TIME_OK;
}

HWSIM_EXPORT int clock_adjtime(clockid_t id, struct timex *tx)
{
	int n = hwsim_clock_of(id);

	REAL(clock_adjtime);
	if (n == -2)
		return real_clock_adjtime(id, tx);
	return hwsim_adjtime(n, tx);
}

HWSIM_EXPORT int adjtimex(struct timex *tx)
{
	return clock_adjtime(CLOCK_REALTIME, tx);
}

HWSIM_EXPORT int ntp_adjtime(struct timex *tx)
	__attribute__((alias("adjtimex")));

HWSIM_EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

HWSIM_EXPORT time_t time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

/* ---- the PHC's ioctls ---- */

static int hwsim_phc_ioctl(int n, unsigned long req, void *arg)
{
	int64_t t;

	switch (req) {
	case PTP_CLOCK_GETCAPS:
	case PTP_CLOCK_GETCAPS2: {
		struct ptp_clock_caps *c = arg;

		memset(c, 0, sizeof(*c));
		c->max_adj = 1000000;		/* 1000 ppm */
		c->cross_timestamping = 1;
		return 0;
	}
	case PTP_SYS_OFFSET:
	case PTP_SYS_OFFSET2: {
		struct ptp_sys_offset *so = arg;
		unsigned k = so->n_samples;

		if (!k || k > PTP_MAX_SAMPLES) {
			errno = EINVAL;
			return -1;
		}
		/* sys, phc, sys, ..., sys: each pair at one true instant. */
		for (unsigned i = 0; i <= k; i++) {
			struct timespec s;

			t = hwsim_true_now();
			ns_ts(hwsim_read(host, -1, t), &s);
			so->ts[2 * i].sec = s.tv_sec;
			so->ts[2 * i].nsec = (unsigned)s.tv_nsec;
			if (i < k) {
				ns_ts(hwsim_read(host, n, t), &s);
				so->ts[2 * i + 1].sec = s.tv_sec;
				so->ts[2 * i + 1].nsec = (unsigned)s.tv_nsec;
			}
		}
		return 0;
	}
	case PTP_SYS_OFFSET_EXTENDED:
	case PTP_SYS_OFFSET_EXTENDED2: {
		struct ptp_sys_offset_extended *so = arg;

		if (!so->n_samples || so->n_samples > PTP_MAX_SAMPLES) {
			errno = EINVAL;
			return -1;
		}
		for (unsigned i = 0; i < so->n_samples; i++) {
			struct timespec s, p;

			t = hwsim_true_now();
			ns_ts(hwsim_read(host, -1, t), &s);
			ns_ts(hwsim_read(host, n, t), &p);
			so->ts[i][0].sec = so->ts[i][2].sec = s.tv_sec;
			so->ts[i][0].nsec = so->ts[i][2].nsec = (unsigned)s.tv_nsec;
			so->ts[i][1].sec = p.tv_sec;
			so->ts[i][1].nsec = (unsigned)p.tv_nsec;
		}
		return 0;
	}
	case PTP_SYS_OFFSET_PRECISE:
	case PTP_SYS_OFFSET_PRECISE2: {
		struct ptp_sys_offset_precise *so = arg;
		struct timespec s, p, raw;

		t = hwsim_true_now();
		ns_ts(hwsim_read(host, -1, t), &s);
		ns_ts(hwsim_read(host, n, t), &p);
		real_clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
		memset(so, 0, sizeof(*so));
		so->device.sec = p.tv_sec;
		so->device.nsec = (unsigned)p.tv_nsec;
		so->sys_realtime.sec = s.tv_sec;
		so->sys_realtime.nsec = (unsigned)s.tv_nsec;
		so->sys_monoraw.sec = raw.tv_sec;
		so->sys_monoraw.nsec = (unsigned)raw.tv_nsec;
		return 0;
	}
	default:
		errno = EOPNOTSUPP;	/* pins, PPS, alarms: not simulated */
		return -1;
	}
}

/* ---- the NIC's ioctls ---- */

static int hwsim_nic_ioctl(int fd, unsigned long req, struct ifreq *ifr,
			   bool *done)
{
	int n;

	*done = false;
	if (!strcmp(ifr->ifr_name, "lo"))
		return 0;
	if (req == SIOCETHTOOL) {
		struct ethtool_ts_info *ti = (void *)ifr->ifr_data;

		if (ti->cmd != ETHTOOL_GET_TS_INFO)
			return 0;
		n = hwsim_phc_find(host, ifr->ifr_name, true);
		if (n < 0)
			return 0;
		memset(ti, 0, sizeof(*ti));
		ti->cmd = ETHTOOL_GET_TS_INFO;
		ti->so_timestamping = SOF_TIMESTAMPING_TX_HARDWARE |
			SOF_TIMESTAMPING_TX_SOFTWARE |
			SOF_TIMESTAMPING_RX_HARDWARE |
			SOF_TIMESTAMPING_RX_SOFTWARE |
			SOF_TIMESTAMPING_SOFTWARE |
			SOF_TIMESTAMPING_RAW_HARDWARE;
		ti->phc_index = n;
		ti->tx_types = 1 << HWTSTAMP_TX_OFF | 1 << HWTSTAMP_TX_ON;
		ti->rx_filters = 1 << HWTSTAMP_FILTER_NONE |
			1 << HWTSTAMP_FILTER_ALL |
			1 << HWTSTAMP_FILTER_PTP_V2_EVENT;
		*done = true;
		return 0;
	}
	if (req == SIOCSHWTSTAMP || req == SIOCGHWTSTAMP) {
		struct hwtstamp_config *cfg = (void *)ifr->ifr_data;
		struct hwsim_phc_info p;

		n = hwsim_phc_find(host, ifr->ifr_name, true);
		if (n < 0)
			return 0;
		(void)fd;
		*done = true;
		if (req == SIOCSHWTSTAMP) {
			if (cfg->tx_type != HWTSTAMP_TX_OFF &&
			    cfg->tx_type != HWTSTAMP_TX_ON) {
				errno = ERANGE;
				return -1;
			}
			/* A filter wider than none stamps everything, as
			 * most NICs answer; under the X710 fault, PTP
			 * event packets only, whatever was asked. */
			hwsim_phc_get(host, (unsigned)n, &p);
			if (cfg->rx_filter != HWTSTAMP_FILTER_NONE)
				cfg->rx_filter = p.faults.rx_ptp_only ?
					HWTSTAMP_FILTER_PTP_V2_EVENT :
					HWTSTAMP_FILTER_ALL;
			hwsim_set_hwtstamp(host, n, cfg->tx_type, cfg->rx_filter);
			return 0;
		}
		hwsim_phc_get(host, (unsigned)n, &p);
		cfg->flags = 0;
		cfg->tx_type = p.tx_type;
		cfg->rx_filter = p.rx_filter;
		return 0;
	}
	return 0;
}

HWSIM_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	REAL(ioctl);
	if (host && fd >= 0 && fd < HWSIM_FDS && fdtab[fd].kind == FD_PHC)
		return hwsim_phc_ioctl(fdtab[fd].phc, req, arg);
	if (host && arg && (req == SIOCETHTOOL || req == SIOCSHWTSTAMP ||
			    req == SIOCGHWTSTAMP)) {
		bool done;
		int rc = hwsim_nic_ioctl(fd, req, arg, &done);

		if (done || rc)
			return rc;
	}
	return real_ioctl(fd, req, arg);
}

/* ---- sockets ---- */

/* Generic netlink is where ethtool's TSINFO request goes, and the kernel
 * would answer it for the real (software-only) interface. Without it,
 * tapless's tsinfo and ethtool(8) fall back to the ETHTOOL_GET_TS_INFO
 * ioctl, which is answered above. Route netlink (links, addresses) is
 * left alone. */
HWSIM_EXPORT int socket(int domain, int type, int protocol)
{
	REAL(socket);
	if (host && domain == AF_NETLINK && protocol == NETLINK_GENERIC) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return real_socket(domain, type, protocol);
}

#define HWSIM_HW_FLAGS (SOF_TIMESTAMPING_TX_HARDWARE | \
			SOF_TIMESTAMPING_RX_HARDWARE | \
			SOF_TIMESTAMPING_RAW_HARDWARE)

/* A packet socket bound to an interface stamps with that NIC's PHC. */
HWSIM_EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int rc;

	REAL(bind);
	rc = real_bind(fd, sa, len);
	if (!rc && host && sa && sa->sa_family == AF_PACKET && fd >= 0 &&
	    fd < HWSIM_FDS && len >= sizeof(struct sockaddr_ll)) {
		const struct sockaddr_ll *ll = (const void *)sa;

		if (ll->sll_ifindex > 0 &&
		    if_indextoname((unsigned)ll->sll_ifindex, fdtab[fd].ifname))
			fdtab[fd].kind = FD_SOCK;
	}
	return rc;
}

HWSIM_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			    socklen_t len)
{
	REAL(setsockopt);
	if (!host || level != SOL_SOCKET || fd < 0 || fd >= HWSIM_FDS || !val)
		return real_setsockopt(fd, level, name, val, len);
	if (name == SO_SELECT_ERR_QUEUE && len >= sizeof(int)) {
		int rc = real_setsockopt(fd, level, name, val, len);

		if (!rc)
			fdtab[fd].selerr = *(const int *)val != 0;
		return rc;
	}
	if (name == SO_BINDTODEVICE) {
		int rc = real_setsockopt(fd, level, name, val, len);

		if (!rc) {
			size_t n = len < IF_NAMESIZE - 1 ? len : IF_NAMESIZE - 1;

			memcpy(fdtab[fd].ifname, val, n);
			fdtab[fd].ifname[n] = 0;
			fdtab[fd].kind = FD_SOCK;
		}
		return rc;
	}
	if ((name == SO_TIMESTAMPING_OLD || name == SO_TIMESTAMPING_NEW) &&
	    len >= sizeof(int)) {
		unsigned int want = *(const unsigned int *)val, ask;
		char buf[64];
		int rc;

		if (!(want & HWSIM_HW_FLAGS)) {
			rc = real_setsockopt(fd, level, name, val, len);
			if (!rc) {
				fdtab[fd].want = want;
				fdtab[fd].kind = FD_SOCK;
			}
			return rc;
		}
		/* The kernel stamps in software what the NIC would have in
		 * hardware; recvmsg() maps the stamps. */
		ask = want & ~HWSIM_HW_FLAGS;
		if (want & SOF_TIMESTAMPING_TX_HARDWARE)
			ask |= SOF_TIMESTAMPING_TX_SOFTWARE;
		if (want & SOF_TIMESTAMPING_RX_HARDWARE)
			ask |= SOF_TIMESTAMPING_RX_SOFTWARE;
		if (want & SOF_TIMESTAMPING_RAW_HARDWARE)
			ask |= SOF_TIMESTAMPING_SOFTWARE;
		if (len > sizeof(buf))
			len = sizeof(buf);
		memcpy(buf, val, len);
		memcpy(buf, &ask, sizeof(ask));
		rc = real_setsockopt(fd, level, name, buf, len);
		if (!rc) {
			fdtab[fd].want = want;
			fdtab[fd].kind = FD_SOCK;
		}
		return rc;
	}
	return real_setsockopt(fd, level, name, val, len);
}

HWSIM_EXPORT int getsockopt(int fd, int level, int name, void *val,
			    socklen_t *len)
{
	REAL(getsockopt);
	if (host && level == SOL_SOCKET &&
	    (name == SO_TIMESTAMPING_OLD || name == SO_TIMESTAMPING_NEW) &&
	    fd >= 0 && fd < HWSIM_FDS && fdtab[fd].kind == FD_SOCK &&
	    (fdtab[fd].want & HWSIM_HW_FLAGS) && val && len &&
	    *len >= sizeof(int)) {
		/* What the program set, not what the kernel was given. */
		*(unsigned int *)val = fdtab[fd].want;
		*len = sizeof(int);
		return 0;
	}
	return real_getsockopt(fd, level, name, val, len);
}

/* The interface that holds fd's local address, into fdtab[fd].addrif:
 * false while the socket has none of its own (unbound, or bound to the
 * wildcard address: asked again on its next packet). A connected socket's
 * packets go out of, and come in through, the interface of its address
 * on the hosts a lab builds (one subnet per link). */
static bool hwsim_sock_addrif(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (fdtab[fd].addrif[0])
		return true;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return false;
	if (!(ss.ss_family == AF_INET &&
	      ((struct sockaddr_in *)&ss)->sin_addr.s_addr != htonl(INADDR_ANY)) &&
	    !(ss.ss_family == AF_INET6 &&
	      !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr)))
		return false;
	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != ss.ss_family)
			continue;
		if (ss.ss_family == AF_INET)
			found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
				((struct sockaddr_in *)&ss)->sin_addr.s_addr;
		else
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
					&((struct sockaddr_in6 *)&ss)->sin6_addr,
					sizeof(struct in6_addr));
		if (found)
			snprintf(fdtab[fd].addrif, sizeof(fdtab[fd].addrif), "%s",
				 i->ifa_name);
	}
	freeifaddrs(ifa);
	return found;
}

/* The PHC whose NIC carried a packet of fd: the interface in the stamp's
 * PKTINFO, else the one the socket is bound to, else the one that holds
 * its local address, else the host's only one. */
static int hwsim_sock_phc(int fd, int ifindex)
{
	char name[IF_NAMESIZE];
	const char *n = NULL;

	if (ifindex > 0 && if_indextoname((unsigned)ifindex, name))
		n = name;
	else if (fdtab[fd].ifname[0])
		n = fdtab[fd].ifname;
	else if (hwsim_phc_count(host) > 1 && hwsim_sock_addrif(fd))
		n = fdtab[fd].addrif;
	/* The loopback has no NIC, so no PHC: as on a real host. */
	if (n)
		return strcmp(n, "lo") ? hwsim_phc_find(host, n, true) : -1;
	return hwsim_phc_count(host) == 1 ? 0 : -1;
}

/* The socket's local port, asked once. */
static int hwsim_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!fdtab[fd].port) {
		fdtab[fd].port = -1;
		if (!getsockname(fd, (struct sockaddr *)&ss, &len)) {
			if (ss.ss_family == AF_INET)
				fdtab[fd].port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			else if (ss.ss_family == AF_INET6)
				fdtab[fd].port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	return fdtab[fd].port;
}

/* Whether an error-queue message is a TX stamp of the kind a NIC stamps
 * (SCM_TSTAMP_SND): not a TX_SCHED or TX_ACK stamp, nor an ICMP error. A
 * message without an extended error (a packet socket's, say) counts as
 * one. */
static bool hwsim_snd_stamp(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		struct sock_extended_err ee;

		if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
		      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR) ||
		      (c->cmsg_level == SOL_PACKET &&
		       c->cmsg_type == PACKET_TX_TIMESTAMP)) ||
		    c->cmsg_len < CMSG_LEN(sizeof(ee)))
			continue;
		memcpy(&ee, CMSG_DATA(c), sizeof(ee));
		return ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING &&
			ee.ee_info == SCM_TSTAMP_SND;
	}
	return true;
}

/* Map the stamps of a message of fd. false when a TX stamp is lost to the
 * NIC (the message is then to be dropped); *late_ns > 0 when the NIC
 * delivers it that late (tx-late), and *phc is the NIC's PHC (-1: none). */
static bool hwsim_map_stamps(int fd, struct msghdr *msg, bool errqueue,
			     int64_t *late_ns, int *phc)
{
	struct scm_timestamping *st = NULL;
	int ifindex = 0;
	unsigned int want = fdtab[fd].want;

	*late_ns = 0;
	*phc = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		/* _NEW has 64-bit times, which a 64-bit timespec is. */
		if ((c->cmsg_type == SO_TIMESTAMPING_OLD ||
		     (c->cmsg_type == SO_TIMESTAMPING_NEW &&
		      sizeof(time_t) == 8)) &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*st)))
			st = (void *)CMSG_DATA(c);
		else if (c->cmsg_type == SCM_TIMESTAMPING_PKTINFO &&
			 c->cmsg_len >= CMSG_LEN(sizeof(struct scm_ts_pktinfo)))
			ifindex = (int)((struct scm_ts_pktinfo *)CMSG_DATA(c))->if_index;
	}
	if (!st || (!st->ts[0].tv_sec && !st->ts[0].tv_nsec))
		return true;
	/* A packet socket's message names its interface. */
	if (!ifindex && msg->msg_name &&
	    msg->msg_namelen >= sizeof(struct sockaddr_ll) &&
	    ((struct sockaddr *)msg->msg_name)->sa_family == AF_PACKET)
		ifindex = ((struct sockaddr_ll *)msg->msg_name)->sll_ifindex;
	int64_t t = ts_ns(&st->ts[0]);
	if (want & HWSIM_HW_FLAGS) {
		int n = hwsim_sock_phc(fd, ifindex);
		struct hwsim_phc_info p;

		if (n >= 0 && !hwsim_phc_get(host, (unsigned)n, &p)) {
			*phc = n;
			if (errqueue && p.faults.tx_loss_pct &&
			    hwsim_draw_pct(host, p.faults.tx_loss_pct)) {
				hwsim_count(host, n, 1, 0, 0);
				return false;
			}
			/* The X710 trap: only PTP event packets (port 319)
			 * carry a receive stamp. */
			bool stamped = errqueue || !p.faults.rx_ptp_only ||
				hwsim_sock_port(fd) == 319;

			if (stamped && (want & SOF_TIMESTAMPING_RAW_HARDWARE))
				ns_ts(hwsim_stamp(host, n, t), &st->ts[2]);
			/* A ConnectX's stamp can come up to 500 ms late:
			 * the whole message (the software stamp the kernel
			 * gives in it too) is held back that long. */
			if (errqueue && p.faults.tx_late_pct &&
			    (want & SOF_TIMESTAMPING_TX_HARDWARE) &&
			    hwsim_snd_stamp(msg) &&
			    hwsim_draw_pct(host, p.faults.tx_late_pct))
				*late_ns = 1 + hwsim_draw_below(host,
							p.faults.tx_late_max_ns);
		}
	}
	/* The software stamp on the host's own (simulated) system clock,
	 * or none when only hardware ones were asked for. */
	if (want & SOF_TIMESTAMPING_SOFTWARE)
		ns_ts(hwsim_read(host, -1, t), &st->ts[0]);
	else
		st->ts[0] = (struct timespec){ 0, 0 };
	return true;
}

/* Its grandmaster gone: a PTP message (UDP 319, 320) that reaches a NIC
 * under gm-gone is put in domain 255 - its own, which no ptp4l of the
 * host serves, so it is ignored as ptp4l ignores a foreign domain's: no
 * error on the socket, no fault, only silence from the master. */
static void hwsim_gm_gone(int fd, struct msghdr *msg, ssize_t n)
{
	struct hwsim_phc_info p;
	int k, port = hwsim_sock_port(fd);
	unsigned char *b;

	if ((port != 319 && port != 320) || n < 34 || !msg->msg_iovlen ||
	    msg->msg_iov[0].iov_len < 34)
		return;
	k = hwsim_sock_phc(fd, 0);
	if (k < 0 || hwsim_phc_get(host, (unsigned)k, &p) || !p.faults.gm_gone)
		return;
	b = msg->msg_iov[0].iov_base;
	b[4] = (unsigned char)(255 - b[4]);	/* domainNumber */
}

/* ---- TX stamps held back (tx-late) ----
 *
 * An error-queue message the NIC delivers late is read from the kernel
 * when the program asks (or when its wait sees the error queue), kept in
 * the socket's ring (hwsim/hwsim_held.h, made at the socket's first such
 * message) and handed over by a later read once due; a wait (poll, ppoll,
 * select, pselect, epoll_wait, epoll_pwait, epoll_pwait2) on the socket
 * wakes then with POLLERR (EPOLLERR). A wait that sees the kernel's error
 * queue of a stamping socket while a NIC of the host is under tx-late
 * reads it into the ring first, so that it reports POLLERR only for what
 * is due, as a wait on real hardware would. A ring that is full gives its
 * oldest message at once (counted tx_late_forced) to make room.
 *
 * One lock over the rings and epoll registrations; everything here is off
 * the path of a program on a host without tx-late and without held
 * messages (hwsim_late_on()).
 */

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned held_total;	/* messages in all rings */

static int64_t mono_now(void)
{
	struct timespec ts;

	real_clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

/* Whether a wait may need more than the C library's: held messages, or a
 * NIC under tx-late. One or two loads. */
static bool hwsim_late_on(void)
{
	return host && (atomic_load_explicit(&held_total, memory_order_relaxed) ||
			hwsim_tx_late_any(host));
}

/* A socket that takes hardware TX stamps. */
static bool hwsim_late_sock(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && fdtab[fd].kind == FD_SOCK &&
		(fdtab[fd].want & SOF_TIMESTAMPING_TX_HARDWARE);
}

/* fd's ring holds messages: a peek without the lock. */
static bool hwsim_held_any(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && fdtab[fd].held &&
		hwsim_held_count(fdtab[fd].held);
}

/* fd's ring, made on first need (once per socket). With held_mu. */
static struct hwsim_held *hwsim_ring(int fd)
{
	if (!fdtab[fd].held) {
		fdtab[fd].held = malloc(sizeof(*fdtab[fd].held));
		if (fdtab[fd].held)
			hwsim_held_init(fdtab[fd].held);
	}
	return fdtab[fd].held;
}

/* With held_mu: the earliest due of fd's ring, INT64_MAX: none. */
static int64_t hwsim_due(int fd)
{
	return fd >= 0 && fd < HWSIM_FDS && fdtab[fd].held ?
		hwsim_held_next_due(fdtab[fd].held) : INT64_MAX;
}

/* What a wait reports for a due message: POLLERR, and POLLPRI on a socket
 * with SO_SELECT_ERR_QUEUE (ptp4l waits for that), as the kernel does for
 * a queued one. */
static short hwsim_due_bits(int fd)
{
	return (short)(POLLERR | (fdtab[fd].selerr ? POLLPRI : 0));
}

/* With held_mu: keep m in fd's ring. When it is full, its oldest
 * message goes into *out (return 1) to make room; 0 when m was kept, -1
 * when it could not be (no memory: hand m itself over). */
static int hwsim_hold(int fd, const struct hwsim_held_msg *m, int phc, bool late,
		      struct hwsim_held_msg *out)
{
	struct hwsim_held *h = hwsim_ring(fd);
	int rc = 0;

	if (!h)
		return -1;
	if (hwsim_held_put(h, m) == -ENOSPC) {
		hwsim_held_take_oldest(h, out);
		hwsim_held_put(h, m);
		atomic_fetch_sub(&held_total, 1);
		rc = 1;
	}
	atomic_fetch_add(&held_total, 1);
	if (late || rc)
		hwsim_count(host, phc, 0, late, (uint64_t)rc);
	return rc;
}

/* With held_mu: read what the kernel's error queue of fd holds into its
 * ring, each message due now or, held back by the NIC, later. Stops when
 * the ring is full (the rest stays queued). */
static void hwsim_ingest(int fd)
{
	struct hwsim_held *h = hwsim_ring(fd);

	while (h && hwsim_held_count(h) < HWSIM_HELD_SLOTS) {
		unsigned char data[HWSIM_HELD_DATA], name[HWSIM_HELD_NAME];
		union {
			unsigned char b[HWSIM_HELD_CTRL];
			struct cmsghdr align;
		} ctrl;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr msg = {
			.msg_name = name, .msg_namelen = sizeof(name),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl.b, .msg_controllen = sizeof(ctrl.b),
		};
		struct hwsim_held_msg m, old;
		int64_t late = 0;
		ssize_t n;
		int phc = -1;

		n = real_recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (msg.msg_controllen &&
		    !hwsim_map_stamps(fd, &msg, true, &late, &phc))
			continue;	/* lost to the NIC */
		hwsim_held_from_msg(&m, &msg, n, mono_now() + late);
		hwsim_hold(fd, &m, phc, late > 0, &old);	/* not full */
	}
}

/* With held_mu: the state a wait reports for fd, asked events: read its
 * error queue into the ring, then the kernel's state without the
 * queue, and POLLERR when a held message is due. */
static short hwsim_settle(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	hwsim_ingest(fd);
	if (real_poll(&p, 1, 0) < 0)
		p.revents = 0;
	if (hwsim_due(fd) <= mono_now())
		p.revents |= hwsim_due_bits(fd);
	return p.revents;
}

HWSIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	/* What the program gave: the kernel shortens them to each
	 * message's, and a message dropped or held is followed by another
	 * read. */
	size_t controllen = msg->msg_controllen;
	socklen_t namelen = msg->msg_namelen;
	ssize_t n;

	REAL(recvmsg);
	if (host && (flags & MSG_ERRQUEUE) && fd >= 0 && fd < HWSIM_FDS &&
	    fdtab[fd].kind == FD_SOCK &&
	    (hwsim_held_any(fd) || (hwsim_late_on() && hwsim_late_sock(fd)))) {
		/* What is due first; else the kernel's next message that is
		 * neither lost nor held back; else EAGAIN, as from an empty
		 * queue (the kernel never waits on an error queue, blocking
		 * socket or not, and neither does this). */
		struct hwsim_held_msg m, old;

		pthread_mutex_lock(&held_mu);
		for (;;) {
			int64_t late;
			int phc, rc;

			if (fdtab[fd].held &&
			    hwsim_held_take_due(fdtab[fd].held, mono_now(), &m)) {
				atomic_fetch_sub(&held_total, 1);
				n = hwsim_held_to_msg(&m, msg, flags);
				break;
			}
			msg->msg_controllen = controllen;
			msg->msg_namelen = namelen;
			n = real_recvmsg(fd, msg, flags);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || !msg->msg_controllen)
				break;
			if (!hwsim_map_stamps(fd, msg, true, &late, &phc))
				continue;	/* lost: as if it never came */
			if (!late)
				break;
			hwsim_held_from_msg(&m, msg, n, mono_now() + late);
			rc = hwsim_hold(fd, &m, phc, true, &old);
			if (rc < 0)
				break;		/* kept nowhere: now */
			if (rc == 1) {
				n = hwsim_held_to_msg(&old, msg, flags);
				break;
			}
		}
		pthread_mutex_unlock(&held_mu);
		return n;
	}
	for (;;) {
		int64_t late;
		int phc;

		n = real_recvmsg(fd, msg, flags);
		if (n > 0 && host && fd >= 0 && fd < HWSIM_FDS &&
		    fdtab[fd].kind == FD_SOCK && !(flags & MSG_ERRQUEUE))
			hwsim_gm_gone(fd, msg, n);
		if (n < 0 || !host || fd < 0 || fd >= HWSIM_FDS ||
		    fdtab[fd].kind != FD_SOCK || !msg->msg_controllen ||
		    hwsim_map_stamps(fd, msg, flags & MSG_ERRQUEUE, &late, &phc))
			return n;
		/* A TX stamp the NIC lost: as if it never came, the next
		 * message read instead (EAGAIN when none is queued). */
		msg->msg_controllen = controllen;
		msg->msg_namelen = namelen;
	}
}

/* ---- waits ---- */

/* What each socket is registered for in which epoll instance (two at
 * most a socket: the program's and, under tapless-stamp, its reaper's),
 * for the events a held message raises when due. */
#define HWSIM_EPREGS 2

struct hwsim_epreg {
	int epfd1;		/* the instance + 1; 0: slot free */
	bool armed;		/* EPOLLONESHOT: not yet reported */
	uint32_t events;
	uint64_t data;
};

static struct hwsim_epreg epreg[HWSIM_FDS][HWSIM_EPREGS];
static int epreg_hi = -1;	/* highest fd registered */

/* With held_mu: fd's slot in instance epfd (-1: a free slot), or NULL. */
static struct hwsim_epreg *hwsim_epreg(int epfd, int fd)
{
	for (int i = 0; i < HWSIM_EPREGS; i++)
		if (epreg[fd][i].epfd1 == epfd + 1)
			return &epreg[fd][i];
	return NULL;
}

/* A descriptor closed: its ring, its registrations, and an instance's
 * registrations of others. */
static void hwsim_forget(int fd)
{
	if (!fdtab[fd].held && !fdtab[fd].epoll && !epreg[fd][0].epfd1 &&
	    !epreg[fd][1].epfd1)
		return;
	pthread_mutex_lock(&held_mu);
	if (fdtab[fd].held) {
		atomic_fetch_sub(&held_total, hwsim_held_count(fdtab[fd].held));
		free(fdtab[fd].held);
		fdtab[fd].held = NULL;
	}
	memset(epreg[fd], 0, sizeof(epreg[fd]));
	if (fdtab[fd].epoll) {
		for (int k = 0; k <= epreg_hi; k++)
			for (int i = 0; i < HWSIM_EPREGS; i++)
				if (epreg[k][i].epfd1 == fd + 1)
					epreg[k][i].epfd1 = 0;
		fdtab[fd].epoll = false;
	}
	pthread_mutex_unlock(&held_mu);
}

HWSIM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct hwsim_epreg *r;
	int rc;

	REAL(epoll_ctl);
	rc = real_epoll_ctl(epfd, op, fd, ev);
	if (rc || !host || fd < 0 || fd >= HWSIM_FDS || epfd < 0 ||
	    epfd >= HWSIM_FDS)
		return rc;
	pthread_mutex_lock(&held_mu);
	fdtab[epfd].epoll = true;
	r = hwsim_epreg(epfd, fd);
	if (op == EPOLL_CTL_DEL) {
		if (r)
			r->epfd1 = 0;
	} else if (ev) {
		if (!r && op == EPOLL_CTL_ADD)
			r = hwsim_epreg(-1, fd);	/* a free slot */
		if (r) {	/* else a third instance: not followed */
			*r = (struct hwsim_epreg){ .epfd1 = epfd + 1,
				.armed = true, .events = ev->events,
				.data = ev->data.u64 };
			if (fd > epreg_hi)
				epreg_hi = fd;
		}
	}
	pthread_mutex_unlock(&held_mu);
	return rc;
}

/* A wait on a socket that may hold messages looks again at least this
 * often: another thread may have held a message (read it from the kernel)
 * since the wait began, to be due before the wait would end. */
#define HWSIM_LATE_STEP_NS 10000000LL

/* Milliseconds from now to the earliest of deadline (-1: none), due
 * (INT64_MAX: none) and the next look, rounded up. */
static int hwsim_wait_ms(int64_t now, int64_t deadline, int64_t due)
{
	int64_t until = deadline < 0 ? due : (due < deadline ? due : deadline);

	if (until > now + HWSIM_LATE_STEP_NS)
		until = now + HWSIM_LATE_STEP_NS;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

static int64_t hwsim_deadline_ts(const struct timespec *ts)
{
	return ts ? mono_now() + ts_ns(ts) : -1;
}

static int64_t hwsim_deadline_ms(int ms)
{
	return ms < 0 ? -1 : mono_now() + ms * 1000000LL;
}

/* A wait of any kind on sockets that hold, or may soon hold, messages:
 * in steps no longer than to the earliest due (and HWSIM_LATE_STEP_NS),
 * reporting what is due. */

static bool hwsim_poll_ours(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (hwsim_held_any(fds[i].fd) || hwsim_late_sock(fds[i].fd))
			return true;
	return false;
}

static int hwsim_poll_late(struct pollfd *fds, nfds_t n, int64_t deadline,
			   const sigset_t *sig)
{
	for (;;) {
		int64_t now = mono_now(), due = INT64_MAX;
		struct timespec ts;
		int r, cnt = 0;

		pthread_mutex_lock(&held_mu);
		for (nfds_t i = 0; i < n; i++) {
			int64_t d = hwsim_due(fds[i].fd);

			if (d < due)
				due = d;
		}
		pthread_mutex_unlock(&held_mu);
		ns_ts(hwsim_wait_ms(now, deadline, due) * 1000000LL, &ts);
		r = real_ppoll(fds, n, &ts, sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&held_mu);
		now = mono_now();
		for (nfds_t i = 0; i < n; i++) {
			struct pollfd *p = &fds[i];

			if ((p->revents & POLLERR) && hwsim_late_sock(p->fd))
				p->revents = hwsim_settle(p->fd, p->events);
			else if (hwsim_due(p->fd) <= now)
				p->revents |= hwsim_due_bits(p->fd);
			if (p->revents)
				cnt++;
		}
		pthread_mutex_unlock(&held_mu);
		if (cnt)
			return cnt;
		if (deadline >= 0 && mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return real_poll(fds, n, timeout);
	return hwsim_poll_late(fds, n, hwsim_deadline_ms(timeout), NULL);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);

HWSIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			    size_t fdslen)
{
	REAL(__poll_chk); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return real___poll_chk(fds, n, timeout, fdslen);
	return hwsim_poll_late(fds, n, hwsim_deadline_ms(timeout), NULL);
}

HWSIM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *sig)
{
	REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return real_ppoll(fds, n, ts, sig);
	return hwsim_poll_late(fds, n, hwsim_deadline_ts(ts), sig);
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *sig, size_t fdslen);

HWSIM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
			     const struct timespec *ts, const sigset_t *sig,
			     size_t fdslen)
{
	REAL(__ppoll_chk); REAL(ppoll);
	if (!hwsim_late_on() || !hwsim_poll_ours(fds, n))
		return real___ppoll_chk(fds, n, ts, sig, fdslen);
	return hwsim_poll_late(fds, n, hwsim_deadline_ts(ts), sig);
}

/* select reports a socket with POLLERR readable and writable (where
 * asked), and POLLPRI as an exception, as the kernel maps them. */
static bool hwsim_select_ours(int nfds, const fd_set *rd, const fd_set *wr,
			      const fd_set *ex)
{
	if (nfds > FD_SETSIZE)
		return false;		/* sets of another size: not followed */
	for (int fd = 0; fd < nfds; fd++)
		if (((rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) ||
		     (ex && FD_ISSET(fd, ex))) &&
		    (hwsim_held_any(fd) || hwsim_late_sock(fd)))
			return true;
	return false;
}

static int hwsim_select_late(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			     int64_t deadline, const sigset_t *sig)
{
	fd_set in_rd, in_wr, in_ex;

	FD_ZERO(&in_rd);
	FD_ZERO(&in_wr);
	FD_ZERO(&in_ex);
	if (rd)
		in_rd = *rd;
	if (wr)
		in_wr = *wr;
	if (ex)
		in_ex = *ex;
	for (;;) {
		int64_t now = mono_now(), due = INT64_MAX;
		struct timespec ts;
		int r, cnt = 0;

		pthread_mutex_lock(&held_mu);
		for (int fd = 0; fd < nfds; fd++)
			if (FD_ISSET(fd, &in_rd) || FD_ISSET(fd, &in_wr) ||
			    FD_ISSET(fd, &in_ex)) {
				int64_t d = hwsim_due(fd);

				if (d < due)
					due = d;
			}
		pthread_mutex_unlock(&held_mu);
		if (rd)
			*rd = in_rd;
		if (wr)
			*wr = in_wr;
		if (ex)
			*ex = in_ex;
		ns_ts(hwsim_wait_ms(now, deadline, due) * 1000000LL, &ts);
		r = real_pselect(nfds, rd, wr, ex, &ts, sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&held_mu);
		now = mono_now();
		for (int fd = 0; fd < nfds; fd++) {
			bool want_r = FD_ISSET(fd, &in_rd), want_w = FD_ISSET(fd, &in_wr),
			     want_x = FD_ISSET(fd, &in_ex);
			bool got_r = rd && FD_ISSET(fd, rd), got_w = wr && FD_ISSET(fd, wr),
			     got_x = ex && FD_ISSET(fd, ex);

			if ((got_r || got_w || got_x) && hwsim_late_sock(fd)) {
				short rev = hwsim_settle(fd, (short)((want_r ? POLLIN : 0) |
								    (want_w ? POLLOUT : 0) |
								    (want_x ? POLLPRI : 0)));

				got_r = want_r && (rev & (POLLIN | POLLHUP | POLLERR));
				got_w = want_w && (rev & (POLLOUT | POLLERR));
				got_x = want_x && (rev & POLLPRI);
			} else if ((want_r || want_w || want_x) && hwsim_due(fd) <= now) {
				got_r = want_r;
				got_w = want_w;
				got_x = want_x && (hwsim_due_bits(fd) & POLLPRI);
			}
			if (rd) {
				if (got_r)
					FD_SET(fd, rd);
				else
					FD_CLR(fd, rd);
			}
			if (wr) {
				if (got_w)
					FD_SET(fd, wr);
				else
					FD_CLR(fd, wr);
			}
			if (ex) {
				if (got_x)
					FD_SET(fd, ex);
				else
					FD_CLR(fd, ex);
			}
			cnt += got_r + got_w + got_x;
		}
		pthread_mutex_unlock(&held_mu);
		if (cnt)
			return cnt;
		if (deadline >= 0 && mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			struct timeval *tv)
{
	int64_t deadline;
	int r;

	REAL(select); REAL(pselect);
	if (!hwsim_late_on() || !hwsim_select_ours(nfds, rd, wr, ex))
		return real_select(nfds, rd, wr, ex, tv);
	deadline = tv ? mono_now() + tv->tv_sec * 1000000000LL +
		tv->tv_usec * 1000LL : -1;
	r = hwsim_select_late(nfds, rd, wr, ex, deadline, NULL);
	if (tv) {
		/* Linux counts the time left down in tv. */
		int64_t left = deadline - mono_now();

		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000000000LL;
		tv->tv_usec = left % 1000000000LL / 1000;
	}
	return r;
}

HWSIM_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			 const struct timespec *ts, const sigset_t *sig)
{
	REAL(pselect);
	if (!hwsim_late_on() || !hwsim_select_ours(nfds, rd, wr, ex))
		return real_pselect(nfds, rd, wr, ex, ts, sig);
	return hwsim_select_late(nfds, rd, wr, ex, hwsim_deadline_ts(ts), sig);
}

/* Instance epfd follows a socket that holds, or may soon hold, messages. */
static bool hwsim_epoll_ours(int epfd)
{
	if (epfd < 0 || epfd >= HWSIM_FDS || !fdtab[epfd].epoll)
		return false;
	for (int fd = 0; fd <= epreg_hi; fd++)
		if ((epreg[fd][0].epfd1 == epfd + 1 || epreg[fd][1].epfd1 == epfd + 1) &&
		    (hwsim_held_any(fd) || hwsim_late_sock(fd)))
			return true;
	return false;
}

/* With held_mu: the socket an event of instance epfd is of (by its
 * data, as registered), or -1. */
static int hwsim_epoll_fd(int epfd, uint64_t data)
{
	for (int fd = 0; fd <= epreg_hi; fd++)
		for (int i = 0; i < HWSIM_EPREGS; i++)
			if (epreg[fd][i].epfd1 == epfd + 1 && epreg[fd][i].data == data)
				return fd;
	return -1;
}

static int hwsim_epoll_late(int epfd, struct epoll_event *ev, int max,
			    int64_t deadline, const sigset_t *sig)
{
	for (;;) {
		int64_t now = mono_now(), due = INT64_MAX;
		int r, k;

		pthread_mutex_lock(&held_mu);
		for (int fd = 0; fd <= epreg_hi; fd++) {
			struct hwsim_epreg *g = hwsim_epreg(epfd, fd);
			int64_t d;

			if (g && g->armed && (d = hwsim_due(fd)) < due)
				due = d;
		}
		pthread_mutex_unlock(&held_mu);
		r = real_epoll_pwait(epfd, ev, max, hwsim_wait_ms(now, deadline, due), sig);
		if (r < 0)
			return r;
		pthread_mutex_lock(&held_mu);
		now = mono_now();
		/* The kernel's events: an error queue read into the ring
		 * raises EPOLLERR only for what is due. */
		k = 0;
		for (int i = 0; i < r; i++) {
			int fd = hwsim_epoll_fd(epfd, ev[i].data.u64);
			struct hwsim_epreg *g = fd >= 0 ? hwsim_epreg(epfd, fd) : NULL;
			uint32_t e = ev[i].events;

			if (g && (e & EPOLLERR) && hwsim_late_sock(fd)) {
				short rev = hwsim_settle(fd, (short)(g->events &
						(EPOLLIN | EPOLLOUT | EPOLLPRI)));

				e = (uint32_t)rev & (g->events | EPOLLERR | EPOLLHUP);
			} else if (g && hwsim_due(fd) <= now) {
				e |= (uint32_t)hwsim_due_bits(fd) & (g->events | EPOLLERR);
			}
			if (!e)
				continue;	/* all of it held back */
			if (g && (g->events & EPOLLONESHOT))
				g->armed = false;
			ev[k].events = e;
			ev[k].data = ev[i].data;
			k++;
		}
		/* What came due on sockets the kernel reported nothing for. */
		for (int fd = 0; fd <= epreg_hi && k < max; fd++) {
			struct hwsim_epreg *g = hwsim_epreg(epfd, fd);
			bool dup = false;

			if (!g || !g->armed || hwsim_due(fd) > now)
				continue;
			for (int i = 0; i < k && !dup; i++)
				dup = ev[i].data.u64 == g->data;
			if (dup)
				continue;
			ev[k].events = (uint32_t)hwsim_due_bits(fd) & (g->events | EPOLLERR);
			ev[k].data.u64 = g->data;
			k++;
			if (g->events & EPOLLONESHOT)
				g->armed = false;
		}
		pthread_mutex_unlock(&held_mu);
		if (k)
			return k;
		if (deadline >= 0 && mono_now() >= deadline)
			return 0;
	}
}

HWSIM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait); REAL(epoll_pwait);
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return real_epoll_wait(epfd, ev, max, timeout);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ms(timeout), NULL);
}

HWSIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			     int timeout, const sigset_t *sig)
{
	REAL(epoll_pwait);
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return real_epoll_pwait(epfd, ev, max, timeout, sig);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ms(timeout), sig);
}

HWSIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			      const struct timespec *ts, const sigset_t *sig)
{
	REAL(epoll_pwait2); REAL(epoll_pwait);
	if (!real_epoll_pwait2) {
		errno = ENOSYS;
		return -1;
	}
	if (!hwsim_late_on() || !hwsim_epoll_ours(epfd))
		return real_epoll_pwait2(epfd, ev, max, ts, sig);
	return hwsim_epoll_late(epfd, ev, max, hwsim_deadline_ts(ts), sig);
}
