/* ctl.c — the control socket. See ctl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ptp/ctl.h"
#include "base/xalloc.h"

const char *const ctl_status_requests[3] = {
	"status text", "status csv", "status json",
};

struct ctl_conn {
	int fd;			/* -1: free */
	uint64_t seq;		/* accept order: the oldest is lowest */
	int64_t accept_ns;	/* CLOCK_MONOTONIC */
	int64_t deadline_ns;	/* CLOCK_MONOTONIC, CTL_TIMEOUT_MS after accept */
	char req[CTL_REQUEST_MAX];
	size_t have;
	char *out;		/* the answer, while it is being sent */
	size_t len, sent;
};

struct ctl {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct ctl_conn conn[CTL_MAX_CLIENTS];
	uint64_t accepted;	/* connections so far */
	bool accept_paused;	/* full of young ones: the listener waits */
};

static int ctl_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

static int64_t ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int ctl_listen(struct ctl **out, const char *path, gid_t gid)
{
	struct sockaddr_un sa;
	struct ctl *c;
	mode_t old_mask;
	int fd, rc = ctl_addr(&sa, path);

	*out = NULL;
	if (rc)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Made with no access for anyone else, then opened to the group:
	 * no moment where the world can connect. */
	old_mask = umask(0177);
	errno = 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EADDRINUSE) {
		rc = -errno;
	} else if (errno == EADDRINUSE) {
		/* A leftover file, or a daemon still running: only the
		 * second answers a connect. */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		rc = probe >= 0 && !connect(probe, (struct sockaddr *)&sa,
					    sizeof(sa)) ? -EADDRINUSE : 0;
		if (probe >= 0)
			close(probe);
		if (!rc && unlink(path) && errno != ENOENT)
			rc = -errno;
		if (!rc && bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			rc = -errno;
	}
	umask(old_mask);
	if (!rc && gid != (gid_t)-1 && chown(path, (uid_t)-1, gid))
		rc = -errno;
	if (!rc && (chmod(path, 0660) || listen(fd, CTL_MAX_CLIENTS)))
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	c = xcalloc(1, sizeof(*c));
	c->lfd = fd;
	snprintf(c->path, sizeof(c->path), "%s", path);
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		c->conn[i].fd = -1;
	*out = c;
	return 0;
}

int ctl_pollfds(const struct ctl *c, struct pollfd *fds, int max)
{
	int n = 0;

	if (max < 1)
		return 0;
	if (!c->accept_paused)
		fds[n++] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
	for (int i = 0; i < CTL_MAX_CLIENTS && n < max; i++) {
		const struct ctl_conn *k = &c->conn[i];

		if (k->fd >= 0)
			fds[n++] = (struct pollfd){
				.fd = k->fd, .events = k->out ? POLLOUT : POLLIN };
	}
	return n;
}

static void ctl_drop(struct ctl_conn *k)
{
	if (k->fd >= 0)
		close(k->fd);
	free(k->out);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}

static void ctl_answer(struct ctl_conn *k, ctl_answer_fn fn, void *arg)
{
	FILE *f = open_memstream(&k->out, &k->len);

	if (!f) {
		ctl_drop(k);
		return;
	}
	k->req[strcspn(k->req, "\r\n")] = 0;
	if (fn(arg, k->req, f))
		fprintf(f, "error: request '%s' not understood; try '%s', "
			"'%s' or '%s'\n", k->req, ctl_status_requests[0],
			ctl_status_requests[1], ctl_status_requests[2]);
	fclose(f);
	k->sent = 0;
}

static void ctl_send(struct ctl_conn *k)
{
	while (k->sent < k->len) {
		ssize_t n = send(k->fd, k->out + k->sent, k->len - k->sent,
				 MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			break;
		}
		k->sent += (size_t)n;
	}
	ctl_drop(k);
}

static void ctl_read(struct ctl_conn *k, ctl_answer_fn fn, void *arg)
{
	ssize_t n = recv(k->fd, k->req + k->have, sizeof(k->req) - 1 - k->have, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctl_drop(k);
		return;
	}
	k->have += (size_t)n;
	k->req[k->have] = 0;
	if (strchr(k->req, '\n') || k->have == sizeof(k->req) - 1) {
		ctl_answer(k, fn, arg);
		if (k->out)
			ctl_send(k);
	}
}

/* Every slot taken: the client to close for a new one. Those that sent
 * nothing yet go first, oldest first, then the oldest of the rest; none
 * younger than CTL_EVICT_AGE_MS: NULL then, and the new one waits in the
 * kernel's queue, in turn. So a client holding a slot idle loses it to
 * the next one, and one that reconnects at once cannot churn a new client
 * out before its request is read (issue 17 item 7). */
static struct ctl_conn *ctl_victim(struct ctl *c, int64_t now)
{
	struct ctl_conn *v = NULL;

	for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_conn *k = &c->conn[i];
		bool ki, vi;

		if (now - k->accept_ns < CTL_EVICT_AGE_MS * 1000000LL)
			continue;
		if (!v) {
			v = k;
			continue;
		}
		ki = !k->have && !k->out;
		vi = !v->have && !v->out;
		if ((ki && !vi) || (ki == vi && k->seq < v->seq))
			v = k;
	}
	return v;
}

static void ctl_accept(struct ctl *c, int64_t now, ctl_answer_fn fn,
		       void *arg)
{
	int fd;

	for (;;) {
		struct ctl_conn *k = NULL, *v = NULL;

		for (int i = 0; i < CTL_MAX_CLIENTS && !k; i++)
			if (c->conn[i].fd < 0)
				k = &c->conn[i];
		if (!k && !(v = ctl_victim(c, now))) {
			struct pollfd p = { .fd = c->lfd, .events = POLLIN };

			/* Full of young ones: a new connection waits in the
			 * kernel's queue until one may go. */
			if (poll(&p, 1, 0) == 1)
				c->accept_paused = true;
			break;
		}
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		if (!k) {
			k = v;
			ctl_drop(k);
		}
		k->fd = fd;
		k->seq = ++c->accepted;
		k->accept_ns = now;
		k->deadline_ns = now + CTL_TIMEOUT_MS * 1000000LL;
		/* The request usually comes with the connection: answered
		 * now, the slot is free again before the next accept. */
		ctl_read(k, fn, arg);
	}
}

/* When the first connection becomes old enough to give up its slot. */
static int64_t ctl_evictable(const struct ctl *c)
{
	int64_t first = INT64_MAX;

	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->conn[i].fd >= 0 &&
		    c->conn[i].accept_ns + CTL_EVICT_AGE_MS * 1000000LL < first)
			first = c->conn[i].accept_ns + CTL_EVICT_AGE_MS * 1000000LL;
	return first;
}

void ctl_handle(struct ctl *c, const struct pollfd *fds, int n,
		int64_t now_ns, ctl_answer_fn fn, void *arg)
{
	int64_t now = ctl_now();
	bool accept = false;

	(void)now_ns;	/* deadlines run on the monotonic clock */
	for (int j = 0; j < n; j++) {
		if (!fds[j].revents)
			continue;
		if (fds[j].fd == c->lfd) {
			accept = true;
			continue;
		}
		for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
			struct ctl_conn *k = &c->conn[i];

			if (k->fd != fds[j].fd)
				continue;
			if (k->out)
				ctl_send(k);
			else
				ctl_read(k, fn, arg);
		}
	}
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->conn[i].fd >= 0 && now >= c->conn[i].deadline_ns)
			ctl_drop(&c->conn[i]);
	/* Accept last: a descriptor closed above and reused by a new
	 * connection cannot then be mistaken for an entry of fds. A paused
	 * listener was not polled: its queue is looked at once one of the
	 * connections may go. */
	if (c->accept_paused && ctl_evictable(c) <= now) {
		c->accept_paused = false;
		accept = true;
	}
	if (accept)
		ctl_accept(c, now, fn, arg);
}

int ctl_timeout_ms(const struct ctl *c)
{
	int64_t first = INT64_MAX, now = ctl_now();

	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->conn[i].fd >= 0 && c->conn[i].deadline_ns < first)
			first = c->conn[i].deadline_ns;
	if (c->accept_paused && ctl_evictable(c) < first)
		first = ctl_evictable(c);
	if (first == INT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

void ctl_close(struct ctl *c)
{
	if (!c)
		return;
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->conn[i].fd >= 0)
			ctl_drop(&c->conn[i]);
	close(c->lfd);
	unlink(c->path);
	free(c);
}

/* One try of ctl_request(); *answered once a byte went to out (then the
 * request cannot be tried again). */
static int ctl_request_once(const struct sockaddr_un *sa, const char *request,
			    FILE *out, int timeout_ms, bool *answered)
{
	char buf[4096];
	bool first = true, error = false;
	int fd, rc = 0;
	size_t len = strlen(request);
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		rc = errno == EAGAIN ? -EAGAIN : -errno;
		close(fd);
		return rc;
	}
	/* MSG_NOSIGNAL: a daemon closing on us is an error to report (or
	 * retry), not a SIGPIPE that kills the client without a word. */
	if (len + 1 > sizeof(buf)) {
		close(fd);
		return -EINVAL;
	}
	memcpy(buf, request, len);
	buf[len] = '\n';
	if (send(fd, buf, len + 1, MSG_NOSIGNAL) != (ssize_t)(len + 1)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0)
			break;
		if (first && n >= 6 && !memcmp(buf, "error:", 6))
			error = true;
		first = false;
		*answered = true;
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) {
			rc = -EIO;
			break;
		}
	}
	close(fd);
	if (!rc && first)
		rc = -ECONNRESET;	/* closed without a word: busy */
	return rc ? rc : error ? -EPROTO : 0;
}

int ctl_request(const char *path, const char *request, FILE *out,
		int timeout_ms)
{
	struct sockaddr_un sa;
	int64_t end = ctl_now() + timeout_ms * 1000000LL;
	int rc = ctl_addr(&sa, path), nap_ms = 50;

	if (rc)
		return rc;
	for (int t = 0; t < CTL_TRIES; t++) {
		bool answered = false;
		int64_t left = (end - ctl_now()) / 1000000;
		struct timespec ts;

		rc = ctl_request_once(&sa, request, out, left > 0 ? (int)left : 1,
				      &answered);
		/* Busy, restarting or closed on us before a word: again,
		 * a little later, while time is left. */
		if (answered || (rc != -ECONNREFUSED && rc != -EAGAIN &&
				 rc != -EPIPE && rc != -ECONNRESET))
			break;
		if (ctl_now() + nap_ms * 1000000LL >= end)
			break;
		ts = (struct timespec){ 0, nap_ms * 1000000L };
		nanosleep(&ts, NULL);
		nap_ms *= 2;
	}
	return rc;
}
