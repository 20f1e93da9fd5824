/* shim_real.c — the C library's functions behind the wrappers. */
#include "shim/shim.h"

#include <dlfcn.h>

struct shim_real shim_real;

/* Each pointer is written once, with the same value by whichever thread
 * gets there; readers see NULL (and resolve themselves) or the value. */
#define LOOK(field, name) \
	do { if (!shim_real.field) \
		*(void **)&shim_real.field = dlsym(RTLD_NEXT, name); } while (0)

void shim_real_resolve(void)
{
	LOOK(socket, "socket");
	LOOK(connect, "connect");
	LOOK(accept, "accept");
	LOOK(accept4, "accept4");
	LOOK(close, "close");
	LOOK(close_range, "close_range");
	LOOK(closefrom, "closefrom");
	LOOK(dup, "dup");
	LOOK(dup2, "dup2");
	LOOK(dup3, "dup3");
	LOOK(fcntl, "fcntl");
	LOOK(fcntl64, "fcntl64");
	LOOK(setsockopt, "setsockopt");
	LOOK(getsockopt, "getsockopt");
	LOOK(send, "send");
	LOOK(sendto, "sendto");
	LOOK(sendmsg, "sendmsg");
	LOOK(sendmmsg, "sendmmsg");
	LOOK(write, "write");
	LOOK(writev, "writev");
	LOOK(sendfile, "sendfile");
	LOOK(sendfile64, "sendfile64");
	LOOK(splice, "splice");
	LOOK(recv, "recv");
	LOOK(recvfrom, "recvfrom");
	LOOK(recvmsg, "recvmsg");
	LOOK(recvmmsg, "recvmmsg");
	LOOK(read, "read");
	LOOK(readv, "readv");
	LOOK(recv_chk, "__recv_chk");
	LOOK(recvfrom_chk, "__recvfrom_chk");
	LOOK(read_chk, "__read_chk");
	LOOK(poll, "poll");
	LOOK(ppoll, "ppoll");
	LOOK(poll_chk, "__poll_chk");
	LOOK(ppoll_chk, "__ppoll_chk");
	LOOK(select, "select");
	LOOK(pselect, "pselect");
	LOOK(epoll_ctl, "epoll_ctl");
	LOOK(epoll_wait, "epoll_wait");
	LOOK(epoll_pwait, "epoll_pwait");
	LOOK(epoll_pwait2, "epoll_pwait2");
	LOOK(io_uring_queue_init, "io_uring_queue_init");
	LOOK(io_uring_queue_init_params, "io_uring_queue_init_params");
}

void *shim_real_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* The library's own modules' calls (see shim.h): straight to the C
 * library, past our wrappers. */

int __wrap_socket(int domain, int type, int proto)
{
	return shim_own_high(REAL(socket)(domain, type, proto));
}

int __wrap_connect(int fd, const struct sockaddr *a, socklen_t len)
{
	return REAL(connect)(fd, a, len);
}

int __wrap_close(int fd)
{
	return REAL(close)(fd);
}

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	return REAL(send)(fd, buf, len, flags);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	return REAL(poll)(fds, n, timeout);
}

int __wrap_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	return REAL(getsockopt)(fd, level, name, val, len);
}
