/* metrics.c — see metrics.h. */
#include "base/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/xalloc.h"

#define METRICS_BACKLOG 16
#define METRICS_ACCEPT_BURST 16		/* accepts per metrics_handle() */
#define METRICS_ACCEPT_PAUSE_NS 1000000000LL
/* A connection this young is not closed to make room for a new one. */
#define METRICS_EVICT_AGE_NS 250000000LL
#define METRICS_DRAIN_BURST 4		/* reads of a closing client per call */

#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PLAIN "text/plain; charset=utf-8"

enum conn_state {
	CONN_FREE,
	CONN_READ,	/* reading the request */
	CONN_WRITE,	/* sending the response */
	CONN_DRAIN,	/* sent and half-closed; waiting for the client's close */
};

struct metrics_conn {
	int fd;
	enum conn_state state;
	uint64_t seq;			/* accept order: the oldest is lowest */
	int64_t accept_ns;
	int64_t deadline_ns;
	size_t len;			/* request bytes in req */
	size_t sent;			/* response bytes sent, head then body */
	size_t head_len;
	size_t body_len;		/* bytes to send: 0 for HEAD */
	char *body;			/* owned; NULL for a static body */
	const char *static_body;
	char head[256];
	char req[METRICS_REQ_MAX + 1];
};

struct metrics {
	int lfd[2];
	int nl;				/* listeners: 1 or 2 */
	int port;
	uint64_t accepted;		/* connections so far */
	bool accept_paused;		/* out of descriptors: wait a moment */
	int64_t accept_resume_ns;
	struct metrics_conn conn[METRICS_MAX_CONN];
};

/* Listener */

/* One listening socket on a (port filled in by the caller). */
static int metrics_listen(const struct sockaddr_storage *a, int *out)
{
	int one = 1, fd, ret;

	fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A restarted daemon gets its port back while old connections
	 * linger in TIME_WAIT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	/* IPv6 only: an IPv4 address has its own socket, or is not asked
	 * for ("::" means IPv6's any address, not IPv4's too). Bound to ::1,
	 * Linux sets this anyway; said here so the intent does not rest on
	 * that, nor on net.ipv6.bindv6only. */
	if (a->ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto fail;
	ret = bind(fd, (const struct sockaddr *)a,
		   a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					      sizeof(struct sockaddr_in));
	if (ret < 0 || listen(fd, METRICS_BACKLOG) < 0)
		goto fail;
	*out = fd;
	return 0;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

static void metrics_set_port(struct sockaddr_storage *a, int port)
{
	if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

static int metrics_bound_port(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -errno;
	return a.ss_family == AF_INET6 ?
	       ntohs(((struct sockaddr_in6 *)&a)->sin6_port) :
	       ntohs(((struct sockaddr_in *)&a)->sin_port);
}

/* The host has no IPv6, or no ::1 on lo: 127.0.0.1 alone will do. */
static bool metrics_no_ipv6(int err)
{
	return err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT ||
	       err == -EADDRNOTAVAIL;
}

static bool metrics_is_localhost(const char *addr)
{
	return !addr || !strcmp(addr, "localhost");
}

/* A numeric address into a (port 0), or -EINVAL. */
static int metrics_sockaddr(const char *addr, struct sockaddr_storage *a)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)a;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		return 0;
	}
	/* Not an IPv4-mapped one (::ffff:a.b.c.d): a V6ONLY socket cannot
	 * bind it; a.b.c.d is what is meant. */
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1 &&
	    !IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
		a6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

int metrics_check_addr(const char *addr)
{
	struct sockaddr_storage a;

	return metrics_is_localhost(addr) ? 0 : metrics_sockaddr(addr, &a);
}

/* 127.0.0.1 and, when the host has it, ::1, on one port. */
static int metrics_open_localhost(struct metrics *m, int port)
{
	struct sockaddr_storage a4, a6;
	int ret = 0, p = 0;

	metrics_sockaddr("127.0.0.1", &a4);
	metrics_sockaddr("::1", &a6);
	/* With port 0 the kernel picks the IPv4 port and IPv6 must get the
	 * same one; if that one is taken on ::1, try another. */
	for (int tries = 0; tries < 8; tries++) {
		metrics_set_port(&a4, port);
		ret = metrics_listen(&a4, &m->lfd[0]);
		if (ret)
			return ret;
		p = metrics_bound_port(m->lfd[0]);
		if (p < 0)
			return p;
		metrics_set_port(&a6, p);
		ret = metrics_listen(&a6, &m->lfd[1]);
		if (!ret || metrics_no_ipv6(ret) ||
		    !(ret == -EADDRINUSE && port == 0))
			break;
		close(m->lfd[0]);
		m->lfd[0] = -1;
	}
	if (ret && !metrics_no_ipv6(ret))
		return ret;
	m->port = p;
	return 0;
}

int metrics_open(struct metrics **out, const char *addr, int port)
{
	struct sockaddr_storage a;
	struct metrics *m;
	int ret;

	*out = NULL;
	if (port < 0 || port > 65535)
		return -EINVAL;
	if (!metrics_is_localhost(addr) && metrics_sockaddr(addr, &a))
		return -EINVAL;
	m = xcalloc(1, sizeof(*m));
	m->lfd[0] = m->lfd[1] = -1;
	for (int i = 0; i < METRICS_MAX_CONN; i++)
		m->conn[i].fd = -1;
	if (metrics_is_localhost(addr)) {
		ret = metrics_open_localhost(m, port);
		if (ret)
			goto fail;
	} else {
		/* The operator's one address, alone (metrics.h). */
		metrics_set_port(&a, port);
		ret = metrics_listen(&a, &m->lfd[0]);
		if (ret)
			goto fail;
		ret = metrics_bound_port(m->lfd[0]);
		if (ret < 0)
			goto fail;
		m->port = ret;
	}
	m->nl = m->lfd[1] >= 0 ? 2 : 1;
	*out = m;
	return 0;
fail:
	metrics_close(m);
	return ret;
}

/* "[ADDR:]PORT"; see metrics.h. */
int metrics_parse_listen(const char *s, char *addr, size_t addrlen, int *port)
{
	const char *colon, *p, *a = s;
	size_t alen = 0;
	char buf[METRICS_ADDR_MAX];
	long v = 0;

	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		/* Brackets around an IPv6 address (RFC 3986's host), so its
		 * colons are not taken for the port's. */
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		a = s + 1;
		alen = (size_t)(rb - a);
		p = rb + 2;
		if (!alen)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (colon) {
			alen = (size_t)(colon - s);
			p = colon + 1;
			/* An IPv6 address without brackets is ambiguous. */
			if (memchr(s, ':', alen))
				return -EINVAL;
		} else {
			p = s;
		}
	}
	if (!*p || strlen(p) > 5)
		return -EINVAL;
	for (const char *d = p; *d; d++) {
		if (*d < '0' || *d > '9')
			return -EINVAL;
		v = v * 10 + (*d - '0');
	}
	if (v > 65535 || alen >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, a, alen);
	buf[alen] = '\0';
	if (!alen)
		snprintf(buf, sizeof(buf), "localhost");
	else if (metrics_check_addr(buf))
		return -EINVAL;
	/* Brackets hold IPv6 only; IPv6 needs them. */
	if (s[0] == '[' && !strchr(buf, ':'))
		return -EINVAL;
	if (strlen(buf) >= addrlen)
		return -EINVAL;
	memcpy(addr, buf, strlen(buf) + 1);
	*port = (int)v;
	return 0;
}

int metrics_port(const struct metrics *m)
{
	return m->port;
}

/* Connections */

static void conn_close(struct metrics_conn *c)
{
	close(c->fd);
	free(c->body);
	c->fd = -1;
	c->body = NULL;
	c->static_body = NULL;
	c->state = CONN_FREE;
}

static const char *conn_body(const struct metrics_conn *c)
{
	return c->body ? c->body : c->static_body;
}

/* Send what the socket takes. Once all is sent, half-close and wait for
 * the client to close: closing at once with request bytes still unread
 * (a POST body, pipelined requests) would make the kernel send a reset,
 * and the reset can destroy the response before the client reads it. */
static void conn_send(struct metrics_conn *c, int64_t now_ns)
{
	size_t total = c->head_len + c->body_len;

	while (c->sent < total) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		ssize_t n;

		if (c->sent < c->head_len) {
			iov[0].iov_base = c->head + c->sent;
			iov[0].iov_len = c->head_len - c->sent;
			iov[1].iov_base = (char *)conn_body(c);
			iov[1].iov_len = c->body_len;
			mh.msg_iovlen = c->body_len ? 2 : 1;
		} else {
			iov[0].iov_base = (char *)conn_body(c) +
					  (c->sent - c->head_len);
			iov[0].iov_len = total - c->sent;
			mh.msg_iovlen = 1;
		}
		/* MSG_NOSIGNAL: a client gone away must not SIGPIPE the
		 * daemon. */
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(c);
			return;
		}
		c->sent += (size_t)n;
	}
	free(c->body);
	c->body = NULL;
	c->static_body = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAIN;
	c->deadline_ns = now_ns + METRICS_READ_TIMEOUT_NS;
}

static const struct {
	int status;
	const char *reason;
	const char *body;	/* of an error response */
} statuses[] = {
	{ 200, "OK", "" },
	{ 400, "Bad Request", "Bad Request\n" },
	{ 404, "Not Found", "Not Found\n" },
	{ 405, "Method Not Allowed", "Method Not Allowed\n" },
	{ 408, "Request Timeout", "Request Timeout\n" },
	{ 431, "Request Header Fields Too Large",
	  "Request Header Fields Too Large\n" },
	{ 500, "Internal Server Error", "Internal Server Error\n" },
};

static unsigned status_index(int status)
{
	unsigned i;

	for (i = 0; i < sizeof(statuses) / sizeof(*statuses) - 1; i++)
		if (statuses[i].status == status)
			break;
	return i;	/* the last, 500, for anything else */
}

/* Queue the response and send what goes at once. body is owned (freed
 * here or later) unless static_body is set; for HEAD only the headers go,
 * with the Content-Length the body would have had. */
static void conn_respond(struct metrics_conn *c, int64_t now_ns, int status,
			 const char *ctype, char *body, const char *static_body,
			 size_t len, bool head_only)
{
	int n;

	n = snprintf(c->head, sizeof(c->head),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "Connection: close\r\n"
		     "\r\n",
		     status, statuses[status_index(status)].reason, ctype, len,
		     status == 405 ? "Allow: GET, HEAD\r\n" : "");
	/* The head is made of constants and a number: it always fits. */
	c->head_len = (size_t)n < sizeof(c->head) ? (size_t)n :
		      sizeof(c->head) - 1;
	if (head_only) {
		free(body);
		body = NULL;
		static_body = NULL;
		len = 0;
	}
	c->body = body;
	c->static_body = static_body;
	c->body_len = len;
	c->sent = 0;
	c->state = CONN_WRITE;
	c->deadline_ns = now_ns + METRICS_WRITE_TIMEOUT_NS;
	conn_send(c, now_ns);
}

static void conn_error(struct metrics_conn *c, int64_t now_ns, int status,
		       bool head_only)
{
	const char *text = statuses[status_index(status)].body;

	conn_respond(c, now_ns, status, CT_PLAIN, NULL, text, strlen(text),
		     head_only);
}

/* Accept header */

/* A qvalue (RFC 9110 12.4.2: "0", "0.5", "1.000") in thousandths; -1 when
 * it is not one. */
static int qvalue(const char *s, size_t len)
{
	int q, scale = 100;

	if (len == 0 || (s[0] != '0' && s[0] != '1'))
		return -1;
	q = (s[0] - '0') * 1000;
	if (len == 1)
		return q;
	if (s[1] != '.' || len > 5)
		return -1;
	for (size_t i = 2; i < len; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		q += (s[i] - '0') * scale;
	}
	return q <= 1000 ? q : -1;
}

/* The first ch in [s, end), or end. */
static const char *find_ch(const char *s, const char *end, char ch)
{
	while (s < end && *s != ch)
		s++;
	return s;
}

static const char *skip_ows(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *trim_ows(const char *s, const char *end)
{
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

static bool token_eq(const char *s, const char *end, const char *word)
{
	size_t len = strlen(word);

	return (size_t)(end - s) == len && !strncasecmp(s, word, len);
}

/* Raise *om and *text to the weights (thousandths) this Accept value gives
 * application/openmetrics-text and text/plain, whatever the version asked
 * for: we serve one version of each. Wildcards are not counted: a client
 * that names neither gets the classic format. */
static void accept_weigh(const char *v, const char *end, int *om, int *text)
{
	while (v < end) {
		const char *e = find_ch(v, end, ',');
		const char *p = find_ch(v, e, ';');
		const char *t = skip_ows(v, p);
		const char *t_end = trim_ows(t, p);
		int q = 1000;

		while (p < e) {
			const char *pe = find_ch(p + 1, e, ';');
			const char *n = skip_ows(p + 1, pe);
			const char *ne = trim_ows(n, pe);

			if (ne - n >= 2 && (n[0] == 'q' || n[0] == 'Q') &&
			    n[1] == '=')
				q = qvalue(n + 2, (size_t)(ne - n - 2));
			p = pe;
		}
		if (q < 0)
			q = 0;
		if (token_eq(t, t_end, "application/openmetrics-text") &&
		    q > *om)
			*om = q;
		if (token_eq(t, t_end, "text/plain") && q > *text)
			*text = q;
		v = e + 1;
	}
}

/* Request */

static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Parse the request (req[0..len), headers complete, NUL-terminated) and
 * queue its answer. Returns 1: one request answered. */
static int conn_request(struct metrics_conn *c, int64_t now_ns,
			metrics_render_fn render, void *arg)
{
	char *line = c->req, *eol, *sp1, *sp2, *target, *path_end, *h;
	int om = -1, text = -1, ret;
	enum metrics_format fmt;
	bool head_only;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	eol = strchr(line, '\n');
	if (!eol || memchr(c->req, '\0', c->len))
		goto bad;
	if (eol > line && eol[-1] == '\r')
		eol[-1] = '\0';
	*eol = '\0';
	/* METHOD SP target SP HTTP/1.x */
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) || strlen(sp2 + 1) != 8)
		goto bad;
	for (const char *s = line; s < sp1; s++)
		if (!is_tchar(*s))
			goto bad;
	*sp1 = *sp2 = '\0';
	head_only = !strcmp(line, "HEAD");
	if (!head_only && strcmp(line, "GET")) {
		conn_error(c, now_ns, 405, false);
		return 1;
	}
	target = sp1 + 1;
	/* The absolute form (RFC 9112 3.2.2) names the same resource. */
	if (!strncasecmp(target, "http://", 7)) {
		target = strchr(target + 7, '/');
		if (!target)
			target = "/";
	}
	path_end = target + strcspn(target, "?#");
	if (path_end - target == 1 && target[0] == '/') {
		static const char pointer[] =
			"Prometheus metrics are at /metrics\n";

		conn_respond(c, now_ns, 200, CT_PLAIN, NULL, pointer,
			     sizeof(pointer) - 1, head_only);
		return 1;
	}
	if (path_end - target != 8 || strncmp(target, "/metrics", 8)) {
		conn_error(c, now_ns, 404, head_only);
		return 1;
	}
	for (h = eol + 1; *h; ) {
		char *he = strchr(h, '\n'), *colon;

		if (!he)
			he = h + strlen(h);
		colon = memchr(h, ':', (size_t)(he - h));
		if (colon && token_eq(h, colon, "accept"))
			accept_weigh(colon + 1, trim_ows(colon + 1,
				     he > h && he[-1] == '\r' ? he - 1 : he),
				     &om, &text);
		h = *he ? he + 1 : he;
	}
	fmt = om > 0 && om >= text ? METRICS_OPENMETRICS : METRICS_TEXT;

	f = open_memstream(&body, &len);
	if (!f) {
		conn_error(c, now_ns, 500, head_only);
		return 1;
	}
	ret = render ? render(f, fmt, arg) : -ENOSYS;
	if (!ret && fmt == METRICS_OPENMETRICS && fputs("# EOF\n", f) < 0)
		ret = -EIO;
	if (ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret) {
		free(body);
		conn_error(c, now_ns, 500, head_only);
		return 1;
	}
	conn_respond(c, now_ns, 200,
		     fmt == METRICS_OPENMETRICS ? CT_OPENMETRICS : CT_TEXT,
		     body, NULL, len, head_only);
	return 1;
bad:
	conn_error(c, now_ns, 400, false);
	return 1;
}

/* The end of the headers in req[0..len), looking from `from` on: the
 * offset after the blank line, or 0. A bare LF ends a line too (RFC 9112
 * 2.2 lets a recipient accept it). */
static size_t header_end(const char *req, size_t len, size_t from)
{
	for (size_t i = from; i < len; i++) {
		if (req[i] != '\n')
			continue;
		if (i + 1 < len && req[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && req[i + 1] == '\r' && req[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int conn_read(struct metrics_conn *c, int64_t now_ns,
		     metrics_render_fn render, void *arg)
{
	for (;;) {
		size_t from = c->len > 2 ? c->len - 2 : 0, end;
		ssize_t n;

		if (c->len == METRICS_REQ_MAX) {
			conn_error(c, now_ns, 431, false);
			return 1;
		}
		n = recv(c->fd, c->req + c->len, METRICS_REQ_MAX - c->len,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			/* Gone before the request was whole. */
			conn_close(c);
			return 0;
		}
		c->len += (size_t)n;
		end = header_end(c->req, c->len, from);
		if (end) {
			/* Anything after the headers (a body, a pipelined
			 * request) is not looked at: one answer, then close. */
			c->len = end;
			c->req[end] = '\0';
			return conn_request(c, now_ns, render, arg);
		}
	}
}

static void conn_drain(struct metrics_conn *c)
{
	char sink[4096];

	for (int i = 0; i < METRICS_DRAIN_BURST; i++) {
		ssize_t n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);

		if (n > 0)
			continue;
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(c);
		return;
	}
}

static struct metrics_conn *conn_find(struct metrics *m, int fd)
{
	for (int i = 0; i < METRICS_MAX_CONN; i++)
		if (m->conn[i].state != CONN_FREE && m->conn[i].fd == fd)
			return &m->conn[i];
	return NULL;
}

/* The table is full: the connection to close for a new one. Answered ones
 * waiting for the client's close go first, then those still reading a
 * request, then those being sent to, each oldest first; but none younger
 * than METRICS_EVICT_AGE_NS but answered ones: NULL then, and the new
 * connection waits in the kernel's queue, in turn. So a client holding
 * slots idle loses them to the next ones (issue 17 item 7), and one that
 * reconnects at once cannot churn a new client out before its request is
 * read. */
static struct metrics_conn *conn_victim(struct metrics *m, int64_t now_ns)
{
	static const int rank[] = { [CONN_FREE] = 0, [CONN_DRAIN] = 0,
				    [CONN_READ] = 1, [CONN_WRITE] = 2 };
	struct metrics_conn *v = NULL;

	for (int i = 0; i < METRICS_MAX_CONN; i++) {
		struct metrics_conn *c = &m->conn[i];

		if (c->state != CONN_DRAIN &&
		    now_ns - c->accept_ns < METRICS_EVICT_AGE_NS)
			continue;
		if (!v || rank[c->state] < rank[v->state] ||
		    (rank[c->state] == rank[v->state] && c->seq < v->seq))
			v = c;
	}
	return v;
}

/* When the youngest-protected table first has a connection to give up. */
static int64_t conn_evictable_ns(const struct metrics *m)
{
	int64_t first = INT64_MAX;

	for (int i = 0; i < METRICS_MAX_CONN; i++)
		if (m->conn[i].accept_ns + METRICS_EVICT_AGE_NS < first)
			first = m->conn[i].accept_ns + METRICS_EVICT_AGE_NS;
	return first;
}

static int metrics_accept(struct metrics *m, int lfd, int64_t now_ns,
			  metrics_render_fn render, void *arg)
{
	int answered = 0;

	for (int k = 0; k < METRICS_ACCEPT_BURST; k++) {
		struct metrics_conn *c = NULL, *v = NULL;
		int fd;

		for (int i = 0; i < METRICS_MAX_CONN && !c; i++)
			if (m->conn[i].state == CONN_FREE)
				c = &m->conn[i];
		if (!c && !(v = conn_victim(m, now_ns))) {
			struct pollfd p = { .fd = lfd, .events = POLLIN };

			/* Full of young ones: a new connection waits in the
			 * kernel's queue until one may go. */
			if (poll(&p, 1, 0) == 1) {
				m->accept_paused = true;
				m->accept_resume_ns = conn_evictable_ns(m);
			}
			break;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* Out of descriptors or memory: the listener stays
			 * readable, so stop polling it for a while rather
			 * than spin. */
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				m->accept_paused = true;
				m->accept_resume_ns = now_ns +
						      METRICS_ACCEPT_PAUSE_NS;
			}
			break;
		}
		if (!c) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			c = v;
			if (c->state == CONN_WRITE)	/* see metrics_handle() */
				setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg,
					   sizeof(lg));
			conn_close(c);
		}
		c->fd = fd;
		c->state = CONN_READ;
		c->seq = ++m->accepted;
		c->accept_ns = now_ns;
		c->deadline_ns = now_ns + METRICS_READ_TIMEOUT_NS;
		c->len = 0;
		c->sent = 0;
		/* The request often arrives with the connection. */
		answered += conn_read(c, now_ns, render, arg);
	}
	return answered;
}

int metrics_pollfds(const struct metrics *m, struct pollfd *fds, int max)
{
	int n = 0, need = m->accept_paused ? 0 : m->nl;

	for (int i = 0; i < METRICS_MAX_CONN; i++)
		need += m->conn[i].state != CONN_FREE;
	if (need > max)
		return -ENOSPC;
	for (int i = 0; i < m->nl && !m->accept_paused; i++)
		fds[n++] = (struct pollfd){ .fd = m->lfd[i], .events = POLLIN };
	for (int i = 0; i < METRICS_MAX_CONN; i++) {
		const struct metrics_conn *c = &m->conn[i];

		if (c->state == CONN_FREE)
			continue;
		fds[n++] = (struct pollfd){
			.fd = c->fd,
			.events = c->state == CONN_WRITE ? POLLOUT : POLLIN,
		};
	}
	return n;
}

int metrics_timeout_ms(const struct metrics *m, int64_t now_ns)
{
	int64_t first = INT64_MAX, ms;

	for (int i = 0; i < METRICS_MAX_CONN; i++)
		if (m->conn[i].state != CONN_FREE &&
		    m->conn[i].deadline_ns < first)
			first = m->conn[i].deadline_ns;
	if (m->accept_paused && m->accept_resume_ns < first)
		first = m->accept_resume_ns;
	if (first == INT64_MAX)
		return -1;
	if (first <= now_ns)
		return 0;
	ms = (first - now_ns + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int metrics_handle(struct metrics *m, const struct pollfd *fds, int n,
		   int64_t now_ns, metrics_render_fn render, void *arg)
{
	bool ready[2] = { false, false };
	int answered = 0;

	for (int i = 0; i < n; i++) {
		struct metrics_conn *c;

		if (!fds[i].revents)
			continue;
		if (fds[i].fd == m->lfd[0] || fds[i].fd == m->lfd[1]) {
			ready[fds[i].fd == m->lfd[1]] = true;
			continue;
		}
		c = conn_find(m, fds[i].fd);
		if (!c)
			continue;
		switch (c->state) {
		case CONN_READ:
			answered += conn_read(c, now_ns, render, arg);
			break;
		case CONN_WRITE:
			conn_send(c, now_ns);
			break;
		case CONN_DRAIN:
			conn_drain(c);
			break;
		case CONN_FREE:
			break;
		}
	}
	for (int i = 0; i < METRICS_MAX_CONN; i++) {
		struct metrics_conn *c = &m->conn[i];

		if (c->state == CONN_FREE || now_ns < c->deadline_ns)
			continue;
		if (c->state == CONN_READ) {
			conn_error(c, now_ns, 408, false);
			answered++;
		} else if (c->state == CONN_WRITE) {
			/* Given up on: reset, so the kernel does not go on
			 * trying to deliver the rest for minutes. */
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg,
				   sizeof(lg));
			conn_close(c);
		} else {
			conn_close(c);
		}
	}
	if (m->accept_paused && now_ns >= m->accept_resume_ns)
		m->accept_paused = false;
	/* Accept last: a descriptor closed above and reused by a new
	 * connection cannot then be mistaken for an entry of fds. */
	for (int i = 0; i < m->nl && !m->accept_paused; i++)
		if (ready[i])
			answered += metrics_accept(m, m->lfd[i], now_ns,
						   render, arg);
	return answered;
}

void metrics_close(struct metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < METRICS_MAX_CONN; i++)
		if (m->conn[i].state != CONN_FREE)
			conn_close(&m->conn[i]);
	for (int i = 0; i < 2; i++)
		if (m->lfd[i] >= 0)
			close(m->lfd[i]);
	free(m);
}

/* Exposition text */

static bool name_char(char ch, bool first, bool colon)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch == '_' || (colon && ch == ':') ||
	       (!first && ch >= '0' && ch <= '9');
}

/* Metric names may hold ':', label names may not. */
static bool name_ok(const char *s, bool colon)
{
	if (!s || !name_char(*s, true, colon))
		return false;
	while (*++s)
		if (!name_char(*s, false, colon))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* Write s escaped: backslash and newline always, the double quote when
 * asked (label values; HELP text in OpenMetrics). */
static void put_escaped(FILE *out, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (*s == '"' && quote)
			fputs("\\\"", out);
		else
			fputc(*s, out);
	}
}

int metrics_family(FILE *out, enum metrics_format fmt, const char *name,
		   enum metrics_type type, const char *help, const char *unit)
{
	static const char *const tnames[] = {
		[METRICS_GAUGE] = "gauge",
		[METRICS_COUNTER] = "counter",
		[METRICS_HISTOGRAM] = "histogram",
	};
	const char *tname;
	/* The classic format names a counter's family as its samples. */
	const char *suffix = fmt == METRICS_TEXT && type == METRICS_COUNTER ?
			     "_total" : "";

	if ((fmt != METRICS_TEXT && fmt != METRICS_OPENMETRICS) ||
	    (unsigned)type >= sizeof(tnames) / sizeof(*tnames) ||
	    !name_ok(name, true) ||
	    (type == METRICS_COUNTER && ends_with(name, "_total")))
		return -EINVAL;
	tname = tnames[type];
	if (unit && *unit) {
		size_t ln = strlen(name), lu = strlen(unit);

		for (const char *s = unit; *s; s++)
			if (!name_char(*s, false, true))
				return -EINVAL;
		if (ln <= lu + 1 || name[ln - lu - 1] != '_' ||
		    strcmp(name + ln - lu, unit))
			return -EINVAL;
	}
	if (fmt == METRICS_OPENMETRICS) {
		/* The order the spec recommends: TYPE, UNIT, HELP. */
		fprintf(out, "# TYPE %s %s\n", name, tname);
		if (unit && *unit)
			fprintf(out, "# UNIT %s %s\n", name, unit);
	}
	if (help && *help) {
		fprintf(out, "# HELP %s%s ", name, suffix);
		put_escaped(out, help, fmt == METRICS_OPENMETRICS);
		fputc('\n', out);
	}
	if (fmt == METRICS_TEXT)
		fprintf(out, "# TYPE %s%s %s\n", name, suffix, tname);
	return ferror(out) ? -EIO : 0;
}

void metrics_format_value(char *buf, double v)
{
	if (isnan(v)) {
		strcpy(buf, "NaN");
	} else if (isinf(v)) {
		strcpy(buf, v > 0 ? "+Inf" : "-Inf");
	} else if (v == trunc(v) && v >= -9223372036854775808.0 &&
		   v < 9223372036854775808.0) {
		/* Counts print as counts, every digit exact; OpenMetrics
		 * wants integers without a decimal point. */
		snprintf(buf, 32, "%" PRId64, (int64_t)v);
	} else {
		/* The fewest digits that read back as the same double, so
		 * 0.1 stays "0.1"; 17 always do. */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, 32, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
}

/* Label keys well formed and unique, every key with a value. */
static bool labels_ok(const char *const *labels)
{
	for (int i = 0; labels && labels[i]; i += 2) {
		if (!name_ok(labels[i], false) || !labels[i + 1])
			return false;
		for (int j = 0; j < i; j += 2)
			if (!strcmp(labels[i], labels[j]))
				return false;
	}
	return true;
}

/* name{labels...[,le="le"]}, the sample's name and labels, checked. */
static void put_series(FILE *out, const char *name, const char *suffix,
		       const char *const *labels, const char *le)
{
	bool any = false;

	fprintf(out, "%s%s", name, suffix);
	for (int i = 0; labels && labels[i]; i += 2) {
		fprintf(out, "%s%s=\"", any ? "," : "{", labels[i]);
		put_escaped(out, labels[i + 1], true);
		fputc('"', out);
		any = true;
	}
	if (le)
		fprintf(out, "%sle=\"%s\"", any ? "," : "{", le);
	if (any || le)
		fputc('}', out);
}

int metrics_sample(FILE *out, const char *name, const char *const *labels,
		   double value)
{
	char num[32];

	/* Check everything before writing anything: a refused sample
	 * leaves no half line behind. */
	if (!name_ok(name, true) || !labels_ok(labels))
		return -EINVAL;
	put_series(out, name, "", labels, NULL);
	metrics_format_value(num, value);
	fprintf(out, " %s\n", num);
	return ferror(out) ? -EIO : 0;
}

/* A bucket bound as OpenMetrics wants "le" spelt ("Canonical Numbers"):
 * what Go's strconv.FormatFloat(v, 'g', -1, 64) gives, the fewest digits
 * that read back the same, exponent form below 1e-4 and from 1e+6 on,
 * with ".0" added when there is neither a point nor an exponent. So 1e-07,
 * 0.0001, 1.0, 100000.0, 1e+06. A label value is compared as text: one
 * spelling in both formats keeps a scraper that changes format on the same
 * series. v is finite; buf holds at least 32 bytes. */
static void metrics_format_le(char *buf, double v)
{
	char e[32], digits[20], *p = buf;
	int prec, exp, nd = 0;

	if (v == 0)
		v = 0;		/* -0 too */
	for (prec = 0; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, v);
		if (strtod(e, NULL) == v)
			break;
	}
	/* "-d.ddde-07": the digits without the point, and the exponent. */
	for (const char *s = e; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			digits[nd++] = *s;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	exp = atoi(strchr(e, 'e') + 1);
	if (v < 0)
		*p++ = '-';
	if (exp < -4 || exp >= 6) {
		*p++ = digits[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, digits + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		sprintf(p, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
		return;
	}
	if (exp < 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = -1; i > exp; i--)
			*p++ = '0';
		memcpy(p, digits, (size_t)nd);
		p += nd;
	} else {
		for (int i = 0; i <= exp; i++)
			*p++ = i < nd ? digits[i] : '0';
		*p++ = '.';
		if (nd > exp + 1) {
			memcpy(p, digits + exp + 1, (size_t)(nd - exp - 1));
			p += nd - exp - 1;
		} else {
			*p++ = '0';
		}
	}
	*p = '\0';
}

int metrics_histogram(FILE *out, const char *name, const char *const *labels,
		      const double *le, const uint64_t *cum, unsigned n,
		      uint64_t count, double sum)
{
	char num[32];

	/* Everything checked first, as metrics_sample(). Bounds from 0 up:
	 * OpenMetrics allows negative ones only without a sum, and there
	 * always is one here. */
	if (!name_ok(name, true) || !labels_ok(labels) || (n && (!le || !cum)) ||
	    isnan(sum) || sum < 0)
		return -EINVAL;
	for (int i = 0; labels && labels[i]; i += 2)
		if (!strcmp(labels[i], "le"))
			return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (!isfinite(le[i]) || le[i] < 0 || cum[i] > count ||
		    (i && (le[i] <= le[i - 1] || cum[i] < cum[i - 1])))
			return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		metrics_format_le(num, le[i]);
		put_series(out, name, "_bucket", labels, num);
		fprintf(out, " %" PRIu64 "\n", cum[i]);
	}
	put_series(out, name, "_bucket", labels, "+Inf");
	fprintf(out, " %" PRIu64 "\n", count);
	/* _count: OpenMetrics wants it whenever there is a _sum. */
	put_series(out, name, "_count", labels, NULL);
	fprintf(out, " %" PRIu64 "\n", count);
	metrics_format_value(num, sum);
	put_series(out, name, "_sum", labels, NULL);
	fprintf(out, " %s\n", num);
	return ferror(out) ? -EIO : 0;
}
