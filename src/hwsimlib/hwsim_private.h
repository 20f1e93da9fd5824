/* hwsim_private.h — the insides of libtapless-hwsim.so's preload part,
 * shared by its files and by nobody else (hwsim_preload.c lists them).
 *
 * The library is built with -fvisibility=hidden, and what is declared
 * here is hidden besides: none of it enters the library's dynamic
 * symbols. Only the functions marked HWSIM_EXPORT, the C library's calls
 * that the library interposes, are exported.
 */
#ifndef TAPLESS_HWSIM_PRIVATE_H
#define TAPLESS_HWSIM_PRIVATE_H

#include <dirent.h>
#include <dlfcn.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <time.h>

struct hwsim_host;
struct hwsim_held;

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

#pragma GCC visibility push(hidden)

/* hwsim_preload.c: the program's simulated host (NULL: it runs on the
 * real clocks), what the library knows of each descriptor, and the C
 * library's functions it hands calls on to (looked up with
 * dlsym(RTLD_NEXT) at start, and by REAL() on first need). */
extern struct hwsim_host *hwsim_prog_host;
extern struct hwsim_fd hwsim_fdtab[HWSIM_FDS];

extern int (*hwsim_real_openat)(int, const char *, int, ...);
extern int (*hwsim_real_close)(int);
extern int (*hwsim_real_socket)(int, int, int);
extern int (*hwsim_real_bind)(int, const struct sockaddr *, socklen_t);
extern int (*hwsim_real_ioctl)(int, unsigned long, ...);
extern int (*hwsim_real_setsockopt)(int, int, int, const void *, socklen_t);
extern int (*hwsim_real_getsockopt)(int, int, int, void *, socklen_t *);
extern ssize_t (*hwsim_real_recvmsg)(int, struct msghdr *, int);
extern int (*hwsim_real_poll)(struct pollfd *, nfds_t, int);
extern int (*hwsim_real_ppoll)(struct pollfd *, nfds_t, const struct timespec *,
			       const sigset_t *);
extern int (*hwsim_real___poll_chk)(struct pollfd *, nfds_t, int, size_t);
extern int (*hwsim_real___ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *,
				     const sigset_t *, size_t);
extern int (*hwsim_real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
extern int (*hwsim_real_pselect)(int, fd_set *, fd_set *, fd_set *,
				 const struct timespec *, const sigset_t *);
extern int (*hwsim_real_epoll_ctl)(int, int, int, struct epoll_event *);
extern int (*hwsim_real_epoll_wait)(int, struct epoll_event *, int, int);
extern int (*hwsim_real_epoll_pwait)(int, struct epoll_event *, int, int,
				     const sigset_t *);
extern int (*hwsim_real_epoll_pwait2)(int, struct epoll_event *, int,
				      const struct timespec *, const sigset_t *);

extern int (*hwsim_real_clock_gettime)(clockid_t, struct timespec *);
extern int (*hwsim_real_clock_settime)(clockid_t, const struct timespec *);
extern int (*hwsim_real_clock_adjtime)(clockid_t, struct timex *);
extern int (*hwsim_real_clock_getres)(clockid_t, struct timespec *);
extern DIR *(*hwsim_real_opendir)(const char *);
extern struct dirent *(*hwsim_real_readdir)(DIR *);
extern int (*hwsim_real_closedir)(DIR *);

#define REAL(name) do { if (!hwsim_real_##name) \
	hwsim_real_##name = \
		(__typeof__(hwsim_real_##name))dlsym(RTLD_NEXT, #name); \
	} while (0)

int64_t hwsim_ts_ns(const struct timespec *ts);
void hwsim_ns_ts(int64_t ns, struct timespec *ts);

/* hwsim_sock.c: TX stamps held back (tx-late); the section there says
 * how. */
extern pthread_mutex_t hwsim_held_mu;
extern _Atomic unsigned hwsim_held_total;	/* messages in all rings */
int64_t hwsim_mono_now(void);
bool hwsim_late_on(void);
bool hwsim_late_sock(int fd);
bool hwsim_held_any(int fd);
int64_t hwsim_due(int fd);
short hwsim_due_bits(int fd);
short hwsim_settle(int fd, short events);

/* hwsim_wait.c: a descriptor closed: its ring, its registrations, and an
 * instance's registrations of others. */
void hwsim_forget(int fd);

#pragma GCC visibility pop

#endif
