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
 *
 * The library's files (hwsim_private.h: what they share):
 *
 *   hwsim_preload.c  start-up (the host's state opened, the C library's
 *                    functions looked up), the state the files share
 *   hwsim_phc.c      /dev/ptpN descriptors, /dev listings, close(), the
 *                    clock calls
 *   hwsim_ioctl.c    ioctl(): the PHC's and the NIC's
 *   hwsim_sock.c     socket options, recvmsg() and its stamps, the rings
 *                    of TX stamps held back (tx-late)
 *   hwsim_wait.c     poll, select and epoll over held TX stamps
 *   hwsim_pcap.c     libpcap's hand-over of a capture's stamps
 */
#include <dlfcn.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_env.h"
#include "hwsimlib/hwsim_lib.h"
#include "hwsimlib/hwsim_private.h"

struct hwsim_host *hwsim_prog_host;
struct hwsim_fd hwsim_fdtab[HWSIM_FDS];

struct hwsim_host *hwsim_host(void)
{
	return hwsim_prog_host;
}

int (*hwsim_real_openat)(int, const char *, int, ...);
int (*hwsim_real_close)(int);
int (*hwsim_real_socket)(int, int, int);
int (*hwsim_real_bind)(int, const struct sockaddr *, socklen_t);
int (*hwsim_real_ioctl)(int, unsigned long, ...);
int (*hwsim_real_setsockopt)(int, int, int, const void *, socklen_t);
int (*hwsim_real_getsockopt)(int, int, int, void *, socklen_t *);
ssize_t (*hwsim_real_recvmsg)(int, struct msghdr *, int);
int (*hwsim_real_poll)(struct pollfd *, nfds_t, int);
int (*hwsim_real_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);
int (*hwsim_real___poll_chk)(struct pollfd *, nfds_t, int, size_t);
int (*hwsim_real___ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *,
			      const sigset_t *, size_t);
int (*hwsim_real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
int (*hwsim_real_pselect)(int, fd_set *, fd_set *, fd_set *,
			  const struct timespec *, const sigset_t *);
int (*hwsim_real_epoll_ctl)(int, int, int, struct epoll_event *);
int (*hwsim_real_epoll_wait)(int, struct epoll_event *, int, int);
int (*hwsim_real_epoll_pwait)(int, struct epoll_event *, int, int,
			      const sigset_t *);
int (*hwsim_real_epoll_pwait2)(int, struct epoll_event *, int,
			       const struct timespec *, const sigset_t *);

int (*hwsim_real_clock_gettime)(clockid_t, struct timespec *);
int (*hwsim_real_clock_settime)(clockid_t, const struct timespec *);
int (*hwsim_real_clock_adjtime)(clockid_t, struct timex *);
int (*hwsim_real_clock_getres)(clockid_t, struct timespec *);
DIR *(*hwsim_real_opendir)(const char *);
struct dirent *(*hwsim_real_readdir)(DIR *);
int (*hwsim_real_closedir)(DIR *);

__attribute__((constructor)) static void hwsim_init(void)
{
	const char *name = getenv(HWSIM_ENV_HOST);
	const char *dir = getenv(HWSIM_ENV_DIR);
	char err[HWSIM_HOST_ERRBUF];

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
	if (hwsim_host_open(&hwsim_prog_host, dir && *dir ? dir : HWSIM_DEFAULT_DIR,
			    name, true, NULL, err)) {
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
				hwsim_phc_find(hwsim_prog_host, i->if_name, true);
		if (ifs)
			if_freenameindex(ifs);
	}
}

int64_t hwsim_ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

void hwsim_ns_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000LL;
		ts->tv_sec--;
	}
}
