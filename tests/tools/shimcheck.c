/* shimcheck — small programs that do one awkward thing each to their
 * sockets and descriptors, and print what they observe. The shim
 * conformance test (tests/system/test_shim_conform.sh) runs each mode bare
 * and under tapless-stamp and requires the same output: the library must
 * change nothing a program can see.
 *
 *   errno                  errno after successful calls (a write to a pipe,
 *                          a first send, a self-pipe signal handler)
 *   fdleak PORT SECONDS    UDP datagrams to 127.0.0.1:PORT every ms; the
 *                          growth of the open descriptors after the first
 *                          second
 *   sig PORT SECONDS       main sends on UDP socket A while a SIGALRM every
 *                          500 us sends on socket B from the handler
 *   rcvbuf PORT COUNT      TCP to a 'bulk' peer: COUNT sends by raw system
 *                          call (no library call sees them), then the bytes
 *                          the peer sends back, read by raw system call
 *   closefrom PORT FILE    send, closefrom(3), open FILE (fd 3), send,
 *                          write FILE, close it: what FILE holds and what
 *                          close did
 *   stderr-sock            fd 2 closed and reused by a UDP socket: what its
 *                          receiver gets
 *   aside PORT             UDP to a shaped lo: 30 datagrams queued, then
 *                          UDP_CORK (the library steps aside): poll and
 *                          epoll of the socket once they have left
 *   select N PORT [high]   N UDP sockets, one datagram each by raw system
 *                          call, then select() for readable (high: the
 *                          sockets above fd 1100, nfds > FD_SETSIZE)
 *   epdup PORT             two UDP sockets registered in epoll with the
 *                          same data; stamps queued on the first
 *   closerace PORT SECONDS one thread sends on a UDP descriptor while
 *                          another closes it and opens a new socket on the
 *                          same number
 *   unconnected P Q        two unconnected UDP sockets: one sends 10
 *                          datagrams to 127.0.0.1:P then 10 to Q, the
 *                          other 10 to P only
 *   forkexec PORT          stamps queued on a UDP socket (raw sends), then
 *                          a child forked to execute true(1) at once
 *   pktinfo                RX stamps turned on host-wide; a UDP socket
 *                          reads with IP_PKTINFO and a control buffer
 *                          sized for it alone (recvmsg, recvmmsg)
 *   peer-closer PATH       (peer) a UNIX listener that closes every
 *                          connection it accepts
 *   peer-sink PATH         (peer) a UNIX listener that reads and discards
 *   peer-bulk PORT BYTES   (peer) TCP: on "G" send BYTES, then read to EOF
 *   peer-udp PORT          (peer) UDP: read and discard
 *
 * Not part of the library; only the test runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static void die(const char *what)
{
	fprintf(stderr, "shimcheck: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static struct sockaddr_in lo_addr(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	return a;
}

static int udp_to(int port)
{
	struct sockaddr_in a = lo_addr(port);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		die("socket");
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	return s;
}

/* Open descriptors below (or, high, at and above) 900: the numbers a
 * program gets, and the range tapless-stamp(8) keeps its own (at most
 * three) in. */
static int count_fds(bool high)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		die("/proc/self/fd");
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && (atoi(e->d_name) >= 900) == high &&
		    atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

/* ---- errno ---- */

static int sig_pipe[2];

static void on_usr1(int sig)
{
	(void)sig;
	/* A self-pipe handler that, like many, does not save errno: it
	 * relies on a successful write() leaving errno alone. */
	if (write(sig_pipe[1], "x", 1) < 0)
		_exit(3);
}

static int mode_errno(void)
{
	int p[2], s;
	struct sockaddr_in a = lo_addr(9);

	if (pipe(p) < 0 || pipe(sig_pipe) < 0)
		die("pipe");
	errno = EAGAIN;
	if (write(p[1], "a", 1) != 1)
		die("write");
	printf("write to a pipe: errno %d\n", errno);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		die("socket");
	errno = EAGAIN;
	if (sendto(s, "b", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1)
		die("sendto");
	printf("first sendto: errno %d\n", errno);
	errno = EAGAIN;
	if (send(udp_to(9), "c", 1, 0) != 1)
		die("send");
	printf("first send, connected: errno %d\n", errno);
	signal(SIGUSR1, on_usr1);
	errno = EAGAIN;
	raise(SIGUSR1);
	printf("after a self-pipe handler: errno %d\n", errno);
	return 0;
}

/* ---- fdleak ---- */

static int mode_fdleak(int port, double secs)
{
	int s = udp_to(port), base = -1, high = 0;
	double t0 = now();

	while (now() - t0 < secs) {
		int h;

		if (send(s, "fdleak", 6, 0) < 0 && errno != ECONNREFUSED)
			die("send");
		if (base < 0 && now() - t0 > 1)
			base = count_fds(false);
		if ((h = count_fds(true)) > high)
			high = h;
		nap_us(1000);
	}
	printf("descriptors grown after the first second: %d\n",
	       count_fds(false) - base);
	/* The library's own, kept high: its log, the capd connection, the
	 * reaper's epoll instance and the eventfd that wakes it. */
	printf("never more than 4 at 900 and above: %s\n", high <= 4 ? "yes" : "no");
	return 0;
}

/* ---- sig ---- */

static int sig_sock;
static atomic_long sig_sends;

static void on_alrm(int sig)
{
	int e = errno;

	(void)sig;
	if (send(sig_sock, "handler", 7, MSG_DONTWAIT) > 0)
		atomic_fetch_add(&sig_sends, 1);
	errno = e;
}

static int mode_sig(int port, double secs)
{
	struct sigaction sa = { .sa_handler = on_alrm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	int a = udp_to(port);
	long sends = 0;
	double t0 = now();

	sig_sock = udp_to(port);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (now() - t0 < secs)
		if (send(a, "main", 4, MSG_DONTWAIT) > 0)
			sends++;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("sig: finished, main and handler both sent: %s\n",
	       sends > 0 && atomic_load(&sig_sends) > 0 ? "yes" : "no");
	return 0;
}

/* ---- rcvbuf ---- */

static int mode_rcvbuf(int port, int count)
{
	struct sockaddr_in a = lo_addr(port);
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	long got = 0;
	char buf[65536];
	double t0;

	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Sends no library call sees (a program on io_uring or raw system
	 * calls): their stamps are queued on the socket all the same. */
	for (int i = 0; i < count; i++) {
		if (syscall(SYS_sendto, s, "0123456789abcdef", 16, 0, NULL, 0) != 16)
			die("sendto");
		nap_us(100);
	}
	nap_us(300000);
	if (syscall(SYS_sendto, s, "G", 1, 0, NULL, 0) != 1)
		die("sendto G");
	t0 = now();
	while (now() - t0 < 3) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		struct timespec z = { 0, 50000000 };
		long n;

		if (syscall(SYS_ppoll, &p, 1, &z, NULL, 8) <= 0 ||
		    !(p.revents & POLLIN))
			continue;
		n = syscall(SYS_recvfrom, s, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL);
		if (n == 0)
			break;
		if (n > 0)
			got += n;
	}
	printf("rcvbuf: read %ld bytes\n", got);
	return 0;
}

/* ---- closefrom ---- */

static int mode_closefrom(int port, const char *file)
{
	static const char line[] = "the program's own journal line\n";
	int s = udp_to(port), fd, r, e;
	char buf[4096];
	ssize_t n;

	for (int i = 0; i < 20; i++) {
		send(s, "before", 6, 0);
		nap_us(1000);
	}
	closefrom(3);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	printf("journal opened on fd %d\n", fd);
	s = udp_to(port);
	for (int i = 0; i < 20; i++) {
		send(s, "after", 5, 0);
		nap_us(1000);
	}
	if (write(fd, line, sizeof(line) - 1) < 0)
		die("write");
	errno = 0;
	r = close(fd);
	e = errno;
	printf("close: %d (errno %d); then fcntl: %d\n", r, e,
	       fcntl(fd, F_GETFD) < 0 ? -errno : 0);
	fd = open(file, O_RDONLY);
	n = read(fd, buf, sizeof(buf));
	printf("journal holds %zd bytes, only its own line: %s\n", n,
	       n == (ssize_t)sizeof(line) - 1 && !memcmp(buf, line, sizeof(line) - 1) ?
	       "yes" : "no");
	return 0;
}

/* ---- stderr-sock ---- */

static int mode_stderr_sock(void)
{
	struct sockaddr_in a = lo_addr(0);
	socklen_t len = sizeof(a);
	int r = socket(AF_INET, SOCK_DGRAM, 0), s, n = 0, own = 0;
	char buf[2048];

	if (r < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &len) < 0)
		die("receiver");
	fflush(stderr);
	close(2);
	s = udp_to(ntohs(a.sin_port));
	printf("socket on fd %d\n", s);
	for (int i = 0; i < 20; i++) {
		if (send(s, "app", 3, 0) != 3)
			die("send");
		nap_us(2000);
	}
	nap_us(100000);
	for (;;) {
		ssize_t k = recv(r, buf, sizeof(buf), MSG_DONTWAIT);

		if (k < 0)
			break;
		n++;
		own += k == 3 && !memcmp(buf, "app", 3);
	}
	printf("receiver got %d datagrams, %d of them the program's\n", n, own);
	return 0;
}

/* ---- aside ---- */

static int mode_aside(int port)
{
	int s = udp_to(port), on = 1, off = 0, ep, err;
	char big[1000];
	struct pollfd p;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT }, out;
	socklen_t len = sizeof(err);

	memset(big, 'a', sizeof(big));
	for (int i = 0; i < 30; i++)
		if (send(s, big, sizeof(big), 0) < 0)
			die("send");
	/* Corking: the library steps aside while most datagrams still wait
	 * in the shaped qdisc, their stamps to come. */
	setsockopt(s, IPPROTO_UDP, UDP_CORK, &on, sizeof(on));
	setsockopt(s, IPPROTO_UDP, UDP_CORK, &off, sizeof(off));
	nap_us(800000);
	ep = epoll_create1(0);
	ev.data.fd = s;
	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	for (int round = 0; round < 2; round++) {
		int k;

		p.fd = s;
		p.events = POLLIN | POLLOUT;
		p.revents = 0;
		poll(&p, 1, 0);
		k = epoll_wait(ep, &out, 1, 0);
		getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
		printf("aside round %d: poll revents 0x%x, epoll events 0x%x, "
		       "SO_ERROR %d\n", round, p.revents, k > 0 ? out.events : 0, err);
		nap_us(500000);
	}
	return 0;
}

/* ---- select ---- */

#define BITS (8 * sizeof(unsigned long))

static int mode_select(int n, int port, int high)
{
	int *fds = calloc((size_t)n, sizeof(int)), maxfd = 0, readable = 0,
	    eagain = 0, r;
	unsigned long *set;
	size_t words;
	struct timeval tv = { 0, 0 };

	if (high) {
		struct rlimit rl = { 4096, 4096 };

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			die("setrlimit");
	}
	for (int i = 0; i < n; i++) {
		fds[i] = udp_to(port);
		if (high) {
			int h = 1100 + i;

			if (dup2(fds[i], h) < 0)
				die("dup2");
			close(fds[i]);
			fds[i] = h;
		}
		if (fds[i] > maxfd)
			maxfd = fds[i];
	}
	/* Sends no library call sees: their stamps stay queued (a program
	 * on io_uring; a kernel slow to stamp). */
	for (int i = 0; i < n; i++)
		if (syscall(SYS_sendto, fds[i], "sel", 3, 0, NULL, 0) != 3)
			die("sendto");
	words = ((size_t)maxfd + BITS) / BITS;
	set = calloc(words, sizeof(unsigned long));
	for (int i = 0; i < n; i++)
		set[fds[i] / BITS] |= 1ul << (fds[i] % BITS);
	r = select(maxfd + 1, (fd_set *)set, NULL, NULL, &tv);
	for (int i = 0; r > 0 && i < n; i++) {
		char b[16];

		if (!(set[fds[i] / BITS] >> (fds[i] % BITS) & 1))
			continue;
		readable++;
		if (recv(fds[i], b, sizeof(b), MSG_DONTWAIT) < 0 && errno == EAGAIN)
			eagain++;
	}
	printf("select: %d sockets, %d readable, %d of them EAGAIN\n", n,
	       readable, eagain);
	return 0;
}

/* ---- epdup ---- */

static int mode_epdup(int port)
{
	int a = udp_to(port), b = udp_to(port), ep = epoll_create1(0), k;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 }, out[4];
	struct rusage r0, r1;
	double cpu;

	/* Data 0 for both: a program keying events by something else. */
	epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev);
	epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev);
	for (int i = 0; i < 5; i++)
		if (syscall(SYS_sendto, a, "dup", 3, 0, NULL, 0) != 3)
			die("sendto");
	k = epoll_wait(ep, out, 4, 0);
	printf("epdup: %d events", k);
	for (int i = 0; i < k; i++)
		printf(" 0x%x", out[i].events);
	printf("\n");
	/* Nothing to wait for: the wait must sleep, not spin on stamps left
	 * queued under the other descriptor's name. */
	getrusage(RUSAGE_THREAD, &r0);
	k = epoll_wait(ep, out, 4, 300);
	getrusage(RUSAGE_THREAD, &r1);
	cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec +
		       r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	      (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec +
		       r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	printf("epdup: a 300 ms wait gave %d events and spun: %s\n", k,
	       cpu > 0.1 ? "yes" : "no");
	return 0;
}

/* ---- closerace ---- */

static atomic_int race_fd = -1;
static atomic_bool race_stop;
static int race_port;

static void *race_sender(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop))
		send(atomic_load(&race_fd), "race", 4, MSG_DONTWAIT);
	return NULL;
}

static int mode_closerace(int port, double secs)
{
	pthread_t t[2];
	double t0 = now();
	long rounds = 0;

	race_port = port;
	atomic_store(&race_fd, udp_to(port));
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, race_sender, NULL);
	while (now() - t0 < secs) {
		int fd = atomic_load(&race_fd), s;

		close(fd);
		s = udp_to(race_port);
		atomic_store(&race_fd, s);
		rounds++;
	}
	atomic_store(&race_stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("closerace: finished: %s\n", rounds > 0 ? "yes" : "no");
	return 0;
}

/* ---- unconnected ---- */

static int mode_unconnected(int p, int q)
{
	struct sockaddr_in ap = lo_addr(p), aq = lo_addr(q);
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
	int sent = 0;

	for (int i = 0; i < 10; i++) {
		sent += sendto(a, "p", 1, 0, (struct sockaddr *)&ap, sizeof(ap)) == 1;
		sent += sendto(b, "p", 1, 0, (struct sockaddr *)&ap, sizeof(ap)) == 1;
		nap_us(1000);
	}
	for (int i = 0; i < 10; i++) {
		sent += sendto(a, "q", 1, 0, (struct sockaddr *)&aq, sizeof(aq)) == 1;
		nap_us(1000);
	}
	printf("unconnected: %d datagrams sent\n", sent);
	return 0;
}

/* ---- forkexec ---- */

static int mode_forkexec(int port)
{
	int s = udp_to(port), st = 0;
	pid_t pid;

	for (int i = 0; i < 20; i++)
		if (syscall(SYS_sendto, s, "fe", 2, 0, NULL, 0) != 2)
			die("sendto");
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		die("fork");
	printf("forkexec: child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* ---- pktinfo ---- */

static void show_ctl(const char *how, const struct msghdr *m, ssize_t n)
{
	printf("pktinfo %s: %zd bytes, ctrunc %d, cmsgs", how, n,
	       !!(m->msg_flags & MSG_CTRUNC));
	for (struct cmsghdr *c = m->msg_controllen ? CMSG_FIRSTHDR((struct msghdr *)m) : NULL;
	     c; c = CMSG_NXTHDR((struct msghdr *)m, c))
		printf(" %d/%d", c->cmsg_level, c->cmsg_type);
	printf("\n");
}

static int mode_pktinfo(void)
{
	struct sockaddr_in a = lo_addr(0), b = lo_addr(0);
	socklen_t len = sizeof(a);
	int h = socket(AF_INET, SOCK_DGRAM, 0), r = socket(AF_INET, SOCK_DGRAM, 0),
	    s = socket(AF_INET, SOCK_DGRAM, 0), on = 1, f = 1 << 3;
	char data[64];
	union {
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m;
	struct mmsghdr mm;

	/* What capd does for software RX stamps: every received packet is
	 * stamped (SOF_TIMESTAMPING_RX_SOFTWARE on any socket). */
	if (setsockopt(h, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) < 0)
		die("SO_TIMESTAMPING");
	if (bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &len) < 0 ||
	    bind(s, (struct sockaddr *)&b, sizeof(b)) < 0 ||
	    getsockname(s, (struct sockaddr *)&b, &len) < 0)
		die("bind");
	setsockopt(s, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    connect(r, (struct sockaddr *)&b, sizeof(b)) < 0)
		die("connect");
	send(s, "hello", 5, 0);	/* the socket is stamped from its first send */
	for (int i = 0; i < 2; i++) {
		ssize_t n;

		if (send(r, "pktinfo", 7, 0) != 7)
			die("send");
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		if (i == 0) {
			n = recvmsg(s, &m, 0);
			show_ctl("recvmsg", &m, n);
		} else {
			memset(&mm, 0, sizeof(mm));
			mm.msg_hdr = m;
			n = recvmmsg(s, &mm, 1, 0, NULL);
			show_ctl("recvmmsg", &mm.msg_hdr, n > 0 ? (ssize_t)mm.msg_len : n);
		}
	}
	return 0;
}

/* ---- peers (run bare) ---- */

static int unix_listen(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 64) < 0)
		die(path);
	printf("listening\n");
	fflush(stdout);
	return l;
}

static _Noreturn void peer_closer(const char *path)
{
	int l = unix_listen(path);

	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c >= 0)
			close(c);
	}
}

static _Noreturn void peer_sink(const char *path)
{
	int l = unix_listen(path);
	char buf[65536];

	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c < 0)
			continue;
		if (fork() == 0) {
			while (read(c, buf, sizeof(buf)) > 0)
				;
			_exit(0);
		}
		close(c);
	}
}

static _Noreturn void peer_bulk(int port, long bytes)
{
	struct sockaddr_in a = lo_addr(port);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	static char buf[65536];

	a.sin_addr.s_addr = htonl(INADDR_ANY);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 8) < 0)
		die("bulk");
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		int c = accept(l, NULL, NULL);
		long sent = 0;
		ssize_t n;
		bool go = false;

		if (c < 0)
			continue;
		while (!go && (n = read(c, buf, sizeof(buf))) > 0)
			go = memchr(buf, 'G', (size_t)n) != NULL;
		memset(buf, 'r', sizeof(buf));
		while (go && sent < bytes) {
			size_t k = bytes - sent < (long)sizeof(buf) ?
				   (size_t)(bytes - sent) : sizeof(buf);

			n = write(c, buf, k);
			if (n <= 0)
				break;
			sent += n;
		}
		shutdown(c, SHUT_WR);
		while (read(c, buf, sizeof(buf)) > 0)
			;
		close(c);
	}
}

static _Noreturn void peer_udp(int port)
{
	struct sockaddr_in a = lo_addr(port);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[65536];

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("udp");
	printf("listening\n");
	fflush(stdout);
	for (;;)
		if (recv(s, buf, sizeof(buf), 0) < 0 && errno != EINTR)
			die("recv");
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
#define ARG(i) (argc > (i) ? argv[i] : "0")
	if (!strcmp(m, "errno"))
		return mode_errno();
	if (!strcmp(m, "fdleak"))
		return mode_fdleak(atoi(ARG(2)), atof(ARG(3)));
	if (!strcmp(m, "sig"))
		return mode_sig(atoi(ARG(2)), atof(ARG(3)));
	if (!strcmp(m, "rcvbuf"))
		return mode_rcvbuf(atoi(ARG(2)), atoi(ARG(3)));
	if (!strcmp(m, "closefrom") && argc > 3)
		return mode_closefrom(atoi(argv[2]), argv[3]);
	if (!strcmp(m, "stderr-sock"))
		return mode_stderr_sock();
	if (!strcmp(m, "aside"))
		return mode_aside(atoi(ARG(2)));
	if (!strcmp(m, "select"))
		return mode_select(atoi(ARG(2)), atoi(ARG(3)),
				   argc > 4 && !strcmp(argv[4], "high"));
	if (!strcmp(m, "epdup"))
		return mode_epdup(atoi(ARG(2)));
	if (!strcmp(m, "unconnected"))
		return mode_unconnected(atoi(ARG(2)), atoi(ARG(3)));
	if (!strcmp(m, "pktinfo"))
		return mode_pktinfo();
	if (!strcmp(m, "forkexec"))
		return mode_forkexec(atoi(ARG(2)));
	if (!strcmp(m, "closerace"))
		return mode_closerace(atoi(ARG(2)), atof(ARG(3)));
	if (!strcmp(m, "peer-closer") && argc > 2)
		peer_closer(argv[2]);
	if (!strcmp(m, "peer-sink") && argc > 2)
		peer_sink(argv[2]);
	if (!strcmp(m, "peer-bulk"))
		peer_bulk(atoi(ARG(2)), atol(ARG(3)));
	if (!strcmp(m, "peer-udp"))
		peer_udp(atoi(ARG(2)));
	fprintf(stderr, "usage: shimcheck MODE ARGS (see the source)\n");
	return 2;
}
