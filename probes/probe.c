/* probe.c — the FIX probes' shared plumbing; see probe.h. */
#include "probes/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/addrport.h"
#include "base/errbuf.h"
#include "fix/fixsess.h"
#include "base/log.h"
#include "base/opts.h"
#include "files/pcapng.h"
#include "base/print.h"
#include "live/sockcap.h"
#include "stamp/hwtstamp.h"
#include "stamp/ts.h"
#include "live/txsock.h"

/* Room for a burst of connections (scans, health checks) ahead of the
 * real session's: a probe accepts and sorts them (tapless-venue(1)). */
#define PROBE_BACKLOG 128
/* Receive buffer of a session's socket (see probe_conn_open). */
#define PROBE_RCVBUF (8 << 20)

const char *const probe_modes[] = { "auto", "hw", "sw", NULL };

/* addrport_parse() writes into the caller's buffer. */
_Static_assert(PROBE_ERRBUF >= ADDRPORT_ERRBUF, "PROBE_ERRBUF too small");

int probe_listen(const char *spec, char err[PROBE_ERRBUF])
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, rc;

	if (addrport_parse(spec, NULL, &ss, &len, err))
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, PROBE_BACKLOG))
		goto fail;
	rc = ts_listen_enable(fd);
	if (rc) {
		errno = -rc;
		goto fail;
	}
	return fd;
fail:
	rc = -errno;
	errbuf_set(err, PROBE_ERRBUF, rc,
		   "listen on %s: %s", spec, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

int probe_connect(const char *spec, int wait_ms, char err[PROBE_ERRBUF])
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct timespec t0, t;
	int fd, rc;

	if (addrport_parse(spec, NULL, &ss, &len, err))
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (!connect(fd, (struct sockaddr *)&ss, len))
			return fd;
		rc = errno;
		close(fd);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (rc != ECONNREFUSED ||
		    (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= wait_ms) {
			errno = rc;
			break;
		}
		usleep(50000);
	}
	rc = -errno;
	errbuf_set(err, PROBE_ERRBUF, rc,
		   "connect to %s: %s", spec, strerror(errno));
	return rc;
}

static ssize_t io_send(void *ctx, const void *buf, size_t len)
{
	struct probe_conn *c = ctx;

	return sockcap_send(c->sc, buf, len, MSG_DONTWAIT);
}

static ssize_t io_recv(void *ctx, void *buf, size_t len)
{
	struct probe_conn *c = ctx;

	return sockcap_recv(c->sc, buf, len, MSG_DONTWAIT, NULL, NULL);
}

/* The session's wait for room to send. POLLERR here is usually a TX stamp
 * on the error queue, not trouble (at 50,000 messages/s it came every few
 * thousand sends, and taking it for EPIPE ended the run): the stamps are
 * reaped and only a real socket error, or a hang-up, ends the wait with an
 * error. */
static int io_wait_send(void *ctx, int timeout_ms)
{
	struct probe_conn *c = ctx;
	int64_t end = ts_now_mono() + (int64_t)timeout_ms * 1000000;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		int64_t left = end - ts_now_mono();
		int n, err;

		/* A full stamp window also refuses sends: taking stamps
		 * makes room. */
		probe_conn_stamps(c, ts_now_mono());
		n = poll(&p, 1, left > 0 ? (int)((left + 999999) / 1000000) : 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			return 0;	/* time is up: the caller tries again */
		if (p.revents & POLLERR) {
			err = sockcap_pollerr(c->sc, ts_now_mono());
			if (err)
				return err;
		}
		if (p.revents & POLLOUT)
			return 0;
		if (p.revents & (POLLHUP | POLLNVAL))
			return -EPIPE;
		if (left <= 0)
			return 0;
	}
}

int probe_conn_open(struct probe_conn *c, const char *name, int fd,
		    const struct probe_ctx *x, const struct fixsess_config *fc,
		    char err[PROBE_ERRBUF])
{
	struct fixsess_io io = { io_send, io_recv, io_wait_send, c };
	struct sockcap_config scc = { .w = x->w, .txsock = x->txc };
	struct ts_config cfg;
	int one = 1, rcvbuf = PROBE_RCVBUF, rc;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* TX stamps wait on the error queue, charged to the receive buffer:
	 * when it is full the kernel drops them. A probe descheduled for a
	 * millisecond at 100,000 messages/s has 100 waiting, more than the
	 * default 128 KiB holds beside received data; room for a few
	 * thousand. FORCE (root) passes rmem_max; else take what is given. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	ts_config_init(&cfg);
	cfg.mode = (enum ts_mode)x->mode;
	cfg.ifname = x->ifname;
	rc = ts_sock_create(&c->ts, fd, &cfg);
	if (rc) {
		char why[200];

		errbuf_set(err, PROBE_ERRBUF, rc, "%s: stamps: %s", name,
			   hwtstamp_why(x->ifname, rc, why, sizeof(why)));
		goto fail;
	}
	{
		struct ts_info ti;
		char note[96];

		ts_sock_info(c->ts, &ti);
		if (ts_hw_set_text(&ti, note, sizeof(note)))
			log_info("%s: %s", x->ifname, note);
	}
	if (x->w) {
		struct pcapng_iface ifc;

		sockcap_iface(c->ts, x->ifname, true, &ifc);
		rc = pcapng_add_iface(x->w, &ifc, &scc.id_tx);
		sockcap_iface(c->ts, x->ifname, false, &ifc);
		if (!rc)
			rc = pcapng_add_iface(x->w, &ifc, &scc.id_rx);
		if (rc) {
			errbuf_set(err, PROBE_ERRBUF, rc,
				   "%s: capture file: %s", name, strerror(-rc));
			goto fail;
		}
	}
	if (x->ifname)
		scc.ifindex = if_nametoindex(x->ifname);
	rc = sockcap_create(&c->sc, c->ts, fd, &scc);
	if (!rc)
		rc = fixsess_create(&c->fs, fc, &io);
	if (rc) {
		errbuf_set(err, PROBE_ERRBUF, rc,
			   "%s: %s", name, strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	probe_conn_close(c);
	return rc;
}

void probe_conn_close(struct probe_conn *c)
{
	fixsess_destroy(c->fs);
	sockcap_destroy(c->sc);
	ts_sock_destroy(c->ts);
	if (c->fd >= 0)
		close(c->fd);
	c->fs = NULL;
	c->sc = NULL;
	c->ts = NULL;
	c->fd = -1;
}

int probe_conn_read(struct probe_conn *c, int64_t now_ns, fixsess_app_fn fn,
		    void *arg)
{
	int rc = fixsess_read(c->fs, now_ns, fn, arg);

	if (rc == -EPROTO)
		log_err("%s session: %s; logged out", c->name, fixsess_error(c->fs));
	else if (rc == -ECONNRESET && *fixsess_error(c->fs))
		log_err("%s session: %s", c->name, fixsess_error(c->fs));
	else if (rc && rc != -ECONNRESET)
		log_err("%s session: %s", c->name, strerror(-rc));
	return rc;
}

int probe_conn_event(struct probe_conn *c, short revents, int64_t now_ns,
		     fixsess_app_fn fn, void *arg)
{
	int err = 0, rc;

	if (!revents || !c->fs)
		return 0;
	if (revents & POLLERR)
		err = sockcap_pollerr(c->sc, now_ns);
	if (!(revents & (POLLIN | POLLHUP)) && !err)
		return 0;	/* only stamps */
	/* Data first, even beside an error: the peer's Logout may be
	 * there, and a session that ended with one ended well. */
	rc = probe_conn_read(c, now_ns, fn, arg);
	if (rc || !err)
		return rc;
	if (fixsess_state(c->fs) == FIXSESS_CLOSED && !*fixsess_error(c->fs))
		return 0;
	log_err("%s session: %s", c->name, strerror(-err));
	return err;
}

void probe_end(struct probe_conn *const *c, const fixsess_app_fn *fn, int n,
	       void *arg, const char *text)
{
	struct pollfd p[8];

	if (n > 8)
		n = 8;
	for (int i = 0; i < n; i++)
		if (c[i]->fs && fixsess_state(c[i]->fs) == FIXSESS_ACTIVE)
			fixsess_logout(c[i]->fs, text, ts_now_mono());
	for (int64_t end = ts_now_mono() + 2000000000LL; ts_now_mono() < end;) {
		int open = 0;

		for (int i = 0; i < n; i++) {
			bool live = c[i]->fs && fixsess_state(c[i]->fs) != FIXSESS_CLOSED;

			p[i] = (struct pollfd){ .fd = live ? c[i]->fd : -1,
						.events = POLLIN };
			open += live;
		}
		if (!open)
			break;
		poll(p, (nfds_t)n, 50);
		for (int i = 0; i < n; i++)
			probe_conn_event(c[i], p[i].revents, ts_now_mono(),
					 fn[i], arg);
	}
}

void probe_conn_stamps(struct probe_conn *c, int64_t now_ns)
{
	if (!c->sc)
		return;
	if (now_ns < 0) {
		/* Stamps still in flight get their time to arrive. */
		for (int64_t end = ts_now_mono() + 500000000LL;
		     ts_tx_pending(c->ts) && ts_now_mono() < end;) {
			ts_tx_wait(c->ts, 10);
			sockcap_poll(c->sc, ts_now_mono());
		}
	}
	sockcap_poll(c->sc, now_ns);
}

uint64_t probe_conn_print(struct printer *p, const struct probe_conn *c)
{
	struct fixsess_stats fs;
	struct sockcap_stats ss;
	struct ts_info info;

	fixsess_stats(c->fs, &fs);
	sockcap_stats(c->sc, &ss);
	ts_sock_info(c->ts, &info);
	print_object_begin(p, c->name);
	print_text(p, "%s session:\n", c->name);
	for (int dir = 0; dir < 2; dir++) {
		const uint64_t *n = dir ? fs.received : fs.sent;

		print_object_begin(p, dir ? "received" : "sent");
		print_text(p, dir ? "  received" : "  sent    ");
		for (int t = 0; t < FIXSESS_T_COUNT; t++) {
			const char *name = fixsess_type_name((enum fixsess_type)t);

			if (!n[t] && print_format(p) == PRINT_TEXT)
				continue;	/* text shows what happened */
			print_uint(p, name, " %llu", n[t]);
			print_text(p, " %s", name);
		}
		print_text(p, "\n");
		print_object_end(p);
	}
	print_uint(p, "sequence_gaps", "  sequence gaps %llu", fs.gaps);
	print_uint(p, "messages_missing", " (%llu messages missing)\n", fs.gap_msgs);
	print_str(p, "stamps", "  stamps %s", ts_source_name(info.source));
	print_uint(p, "tx_frames", ": %llu TX frames", ss.tx_frames);
	print_uint(p, "rx_frames", ", %llu RX frames", ss.rx_frames);
	print_uint(p, "tx_unstamped", ", %llu TX", ss.tx_unstamped);
	print_uint(p, "rx_unstamped", " and %llu RX without a stamp", ss.rx_unstamped);
	print_bool(p, "relative_tcp_seq", ", relative TCP sequence numbers: %s\n",
		   sockcap_relative(c->sc));
	print_object_end(p);
	return ss.tx_unstamped + ss.rx_unstamped;
}

int probe_start(struct probe_ctx *x, const struct opts *o, const char *appl,
		char err[PROBE_ERRBUF])
{
	int rc;

	memset(x, 0, sizeof(*x));
	x->mode = opts_enum(o, "mode");
	x->ifname = opts_str(o, "interface");
	if (opts_int(o, "cpu") >= 0 && (rc = probe_pin((int)opts_int(o, "cpu")))) {
		errbuf_set(err, PROBE_ERRBUF, rc,
			   "--cpu %lld: %s", opts_int(o, "cpu"),
			   strerror(-rc));
		return rc;
	}
	if (opts_str(o, "write")) {
		char host[256];
		struct pcapng_section sec = { .hostname = host, .userappl = appl };

		if (gethostname(host, sizeof(host) - 1))
			strcpy(host, "localhost");
		host[sizeof(host) - 1] = 0;
		rc = pcapng_open(&x->w, opts_str(o, "write"), &sec);
		if (rc) {
			errbuf_set(err, PROBE_ERRBUF, rc,
				   "%s: %s", opts_str(o, "write"),
				   strerror(-rc));
			return rc;
		}
	}
	if (opts_str(o, "tx_socket")) {
		rc = txsock_connect(&x->txc, opts_str(o, "tx_socket"));
		if (rc) {
			errbuf_set(err, PROBE_ERRBUF, rc, "--tx-socket %s: %s",
				   opts_str(o, "tx_socket"), strerror(-rc));
			probe_finish(x);
			return rc;
		}
	}
	return 0;
}

uint64_t probe_tx_print(struct printer *p, struct probe_ctx *x)
{
	struct txsock_client_stats st;

	if (!x->txc)
		return 0;
	txsock_flush(x->txc, 1000);
	txsock_client_stats(x->txc, &st);
	print_object_begin(p, "tx_socket");
	print_uint(p, "sent", "tx socket: %llu records handed to tapless-capd",
		   st.sent);
	print_uint(p, "dropped", ", %llu dropped (its queue full, or no capd)",
		   st.dropped);
	print_uint(p, "connects", ", %llu connections\n", st.connects);
	print_object_end(p);
	return st.dropped;
}

int probe_finish(struct probe_ctx *x)
{
	int rc = 0;

	if (x->txc) {
		txsock_flush(x->txc, 1000);
		txsock_close(x->txc);
		x->txc = NULL;
	}
	if (x->w)
		rc = pcapng_close(x->w, false);
	x->w = NULL;
	return rc;
}

int probe_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}
