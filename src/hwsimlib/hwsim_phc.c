/* hwsim_phc.c — libtapless-hwsim.so's clocks: /dev/ptpN opened as a
 * descriptor of a simulated PHC (and listed in /dev), close() of any
 * descriptor, and the clock calls (clock_gettime/settime/getres/adjtime,
 * adjtimex, ntp_adjtime, gettimeofday, time) on a PHC's dynamic clock id
 * or on CLOCK_REALTIME, the host's simulated system clock.
 * hwsim_preload.c says what the library answers as a whole.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_private.h"

/* The simulated clock a clock id names: a PHC slot, -1 the system clock,
 * -2 none (the real clock). */
static int hwsim_clock_of(clockid_t id)
{
	if (!hwsim_prog_host)
		return -2;
	if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)
		return -1;
	if ((id & 7) == CLOCKFD) {
		int fd = CLOCKID_TO_FD(id);

		if (fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].kind == FD_PHC)
			return hwsim_fdtab[fd].phc;
	}
	return -2;
}

/* ---- /dev/ptpN ---- */

static int hwsim_phc_path(const char *path)
{
	char *end;
	long n;

	if (!hwsim_prog_host || strncmp(path, "/dev/ptp", 8))
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

	if (hwsim_phc_get(hwsim_prog_host, (unsigned)n, &p)) {
		errno = ENOENT;
		return -1;
	}
	/* A descriptor of its own that nothing else will claim. */
	fd = memfd_create("tapless-hwsim-ptp", flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (fd >= HWSIM_FDS) {
		hwsim_real_close(fd);
		errno = EMFILE;
		return -1;
	}
	hwsim_fdtab[fd] = (struct hwsim_fd){ .kind = FD_PHC, .phc = (signed char)n };
	return fd;
}

/* open() and openat() of a path: a PHC's, or the C library's (openat with
 * AT_FDCWD is open). */
static int hwsim_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int n = hwsim_phc_path(path);

	REAL(openat);
	return n >= 0 ? hwsim_open_phc(n, flags) :
		hwsim_real_openat(dirfd, path, flags, mode);
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


HWSIM_EXPORT int close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < HWSIM_FDS) {
		/* All of it: the next descriptor of the number is another
		 * socket (its port, device, address, flags and options
		 * asked anew). */
		hwsim_forget(fd);
		hwsim_fdtab[fd] = (struct hwsim_fd){ .kind = FD_NONE };
	}
	return hwsim_real_close(fd);
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
	d = hwsim_real_opendir(path);
	if (d && hwsim_prog_host && (!strcmp(path, "/dev") || !strcmp(path, "/dev/"))) {
		devdir = d;
		devdir_next = 0;
	}
	return d;
}

HWSIM_EXPORT struct dirent *readdir(DIR *d)
{
	struct dirent *e;

	REAL(readdir);
	e = hwsim_real_readdir(d);
	if (e || d != devdir)
		return e;
	while (devdir_next < hwsim_phc_count(hwsim_prog_host)) {
		struct hwsim_phc_info p;
		unsigned n = devdir_next++;

		if (hwsim_phc_get(hwsim_prog_host, n, &p))
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
	return hwsim_real_closedir(d);
}

/* ---- clocks ---- */

HWSIM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	int n = hwsim_clock_of(id);

	REAL(clock_gettime);
	if (n == -2) {
		if (hwsim_prog_host && id == CLOCK_TAI) {
			struct timespec r;

			/* TAI keeps its distance from the system clock. */
			hwsim_real_clock_gettime(CLOCK_TAI, ts);
			hwsim_real_clock_gettime(CLOCK_REALTIME, &r);
			hwsim_ns_ts(hwsim_ts_ns(ts) - hwsim_ts_ns(&r) +
				    hwsim_read(hwsim_prog_host, -1, hwsim_ts_ns(&r)), ts);
			return 0;
		}
		return hwsim_real_clock_gettime(id, ts);
	}
	hwsim_ns_ts(hwsim_read(hwsim_prog_host, n, hwsim_true_now()), ts);
	return 0;
}

HWSIM_EXPORT int clock_settime(clockid_t id, const struct timespec *ts)
{
	int n = hwsim_clock_of(id);

	REAL(clock_settime);
	if (n == -2)
		return hwsim_real_clock_settime(id, ts);
	hwsim_set(hwsim_prog_host, n, hwsim_ts_ns(ts));
	return 0;
}

HWSIM_EXPORT int clock_getres(clockid_t id, struct timespec *ts)
{
	REAL(clock_getres);
	if (hwsim_clock_of(id) == -2)
		return hwsim_real_clock_getres(id, ts);
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

		hwsim_step(hwsim_prog_host, n, d);
	}
	if (n < 0 && (tx->modes & ADJ_TICK))
		hwsim_set_tick(hwsim_prog_host, n, (double)(tx->tick - HWSIM_TICK_US) *
			       HWSIM_TICK_PPB);
	if (tx->modes & ADJ_FREQUENCY)
		hwsim_set_freq(hwsim_prog_host, n, (double)tx->freq / 65.536);
	tick = hwsim_get_tick(hwsim_prog_host, n);
	tx->freq = (long)llround((hwsim_get_freq(hwsim_prog_host, n) - tick) * 65.536);
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
		return hwsim_real_clock_adjtime(id, tx);
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
