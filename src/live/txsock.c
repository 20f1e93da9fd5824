/* txsock.c — TX stamp hand-over to tapless-capd; see txsock.h. */
#include "live/txsock.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/hmap.h"
#include "base/nstime.h"

/* A sender that outruns capd keeps about this much queued before dropping:
 * room for a ~1 ms burst at line rate of small frames, bounded memory. */
#define CLIENT_BUF (1u << 20)
#define RECONNECT_NS 1000000000LL

uint64_t txsock_hash(uint64_t h, const void *data, size_t len)
{
	return hmap_fnv1a(h, data, len);
}

static bool key_valid(const struct txsock_key *k)
{
	return (k->flow.family == AF_INET || k->flow.family == AF_INET6) &&
	       (k->flow.proto == IPPROTO_TCP || k->flow.proto == IPPROTO_UDP) &&
	       k->stage <= TXSOCK_STAGE_MAX;
}

static void key_put(uint8_t *p, const struct txsock_key *k)
{
	memset(p, 0, TXSOCK_KEY_LEN);
	p[0] = k->flow.family == AF_INET ? 4 : 6;
	p[1] = k->flow.proto;
	bytes_put_le16(p + 2, k->flow.sport);
	bytes_put_le16(p + 4, k->flow.dport);
	bytes_put_le16(p + 6, k->stage);
	memcpy(p + 8, k->flow.src, k->flow.family == AF_INET ? 4 : 16);
	memcpy(p + 24, k->flow.dst, k->flow.family == AF_INET ? 4 : 16);
	bytes_put_le32(p + 40, k->seq);
	bytes_put_le32(p + 44, k->len);
	bytes_put_le64(p + 48, k->hash);
}

static int key_get(const uint8_t *p, struct txsock_key *k)
{
	memset(k, 0, sizeof(*k));
	if (p[0] != 4 && p[0] != 6)
		return -EBADMSG;
	k->flow.family = p[0] == 4 ? AF_INET : AF_INET6;
	k->flow.proto = p[1];
	k->flow.sport = bytes_get_le16(p + 2);
	k->flow.dport = bytes_get_le16(p + 4);
	k->stage = bytes_get_le16(p + 6);
	memcpy(k->flow.src, p + 8, k->flow.family == AF_INET ? 4 : 16);
	memcpy(k->flow.dst, p + 24, k->flow.family == AF_INET ? 4 : 16);
	k->seq = bytes_get_le32(p + 40);
	k->len = bytes_get_le32(p + 44);
	k->hash = bytes_get_le64(p + 48);
	return key_valid(k) ? 0 : -EBADMSG;
}

_Static_assert(TXSOCK_HASH_INIT == HMAP_FNV1A_INIT, "the wire hash is hmap_fnv1a");

int txsock_encode(void *buf, size_t cap, const struct txsock_rec *r)
{
	bool keyed = r->flags & TXSOCK_F_KEYED;
	uint8_t *p = buf;
	size_t body = keyed ? TXSOCK_KEY_LEN : (size_t)r->caplen;
	size_t len = TXSOCK_HDR_LEN + body;

	if (keyed && !key_valid(&r->key))
		return -EINVAL;
	if ((!keyed && r->caplen > TXSOCK_MAX_FRAME) || len > cap)
		return -EMSGSIZE;
	bytes_put_le32(p, TXSOCK_MAGIC);
	bytes_put_le16(p + 4, keyed ? TXSOCK_VERSION_KEYED : TXSOCK_VERSION);
	bytes_put_le16(p + 6, TXSOCK_HDR_LEN);
	bytes_put_le32(p + 8, (uint32_t)len);
	bytes_put_le32(p + 12, r->ifindex);
	bytes_put_le64(p + 16, (uint64_t)r->ts_ns);
	bytes_put_le32(p + 24, keyed ? 0 :
		       r->origlen < r->caplen ? r->caplen : r->origlen);
	bytes_put_le16(p + 28, r->flags);
	bytes_put_le16(p + 30, keyed ? 0 : r->linktype);
	bytes_put_le32(p + 32, (uint32_t)r->phc);
	bytes_put_le32(p + 36, r->dropped);
	if (keyed)
		key_put(p + TXSOCK_HDR_LEN, &r->key);
	else if (r->caplen)
		memcpy(p + TXSOCK_HDR_LEN, r->frame, r->caplen);
	return (int)len;
}

int txsock_decode(const void *buf, size_t len, struct txsock_rec *r)
{
	const uint8_t *p = buf;
	uint32_t hdr_len, rec_len;
	unsigned version;

	/* Check what we have as soon as we have it, so a stream of garbage is
	 * refused at its first bytes instead of after a whole "record". */
	if (len >= 4 && bytes_get_le32(p) != TXSOCK_MAGIC)
		return -EBADMSG;
	if (len < 12)
		return 0;
	version = bytes_get_le16(p + 4);
	if (version != TXSOCK_VERSION && version != TXSOCK_VERSION_KEYED)
		return -EPROTONOSUPPORT;
	hdr_len = bytes_get_le16(p + 6);
	rec_len = bytes_get_le32(p + 8);
	if (hdr_len < TXSOCK_HDR_LEN || rec_len < hdr_len ||
	    rec_len - hdr_len > TXSOCK_MAX_FRAME)
		return -EBADMSG;
	/* A key block has its length: a reader of this version knows every
	 * byte of it (later fields would come with a later version). */
	if (version == TXSOCK_VERSION_KEYED && rec_len - hdr_len != TXSOCK_KEY_LEN)
		return -EBADMSG;
	if (len < rec_len)
		return 0;
	memset(r, 0, sizeof(*r));
	r->ifindex = bytes_get_le32(p + 12);
	r->ts_ns = (int64_t)bytes_get_le64(p + 16);
	r->flags = bytes_get_le16(p + 28);
	r->phc = (int32_t)bytes_get_le32(p + 32);
	r->dropped = bytes_get_le32(p + 36);
	if (version == TXSOCK_VERSION_KEYED) {
		if (!(r->flags & TXSOCK_F_KEYED))
			return -EBADMSG;
		if (key_get(p + hdr_len, &r->key))
			return -EBADMSG;
		return (int)rec_len;
	}
	if (r->flags & TXSOCK_F_KEYED)
		return -EBADMSG;
	r->caplen = rec_len - hdr_len;
	r->origlen = bytes_get_le32(p + 24);
	r->linktype = bytes_get_le16(p + 30);
	r->frame = p + hdr_len;
	if (r->origlen < r->caplen)
		return -EBADMSG;
	return (int)rec_len;
}

/* ---- client ---- */

struct txsock_client {
	struct sockaddr_un addr;
	int fd;
	int64_t next_try;	/* CLOCK_MONOTONIC ns of the next connect try */
	uint8_t *buf;		/* queued bytes: [head, tail) */
	size_t head, tail;
	struct txsock_client_stats st;
};

static int set_addr(struct sockaddr_un *a, const char *path)
{
	if (!path || !*path || strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return 0;
}

static void client_drop_conn(struct txsock_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	/* A record half written is useless to the daemon, which will see a new
	 * connection start at a record boundary. */
	c->head = c->tail = 0;
	c->next_try = nstime_now(CLOCK_MONOTONIC) + RECONNECT_NS;
}

static void client_try_connect(struct txsock_client *c)
{
	int fd;

	if (c->fd >= 0 || nstime_now(CLOCK_MONOTONIC) < c->next_try)
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->next_try = nstime_now(CLOCK_MONOTONIC) + RECONNECT_NS;
		return;
	}
	/* A non-blocking connect on a UNIX stream socket completes or fails
	 * at once (EAGAIN only when the backlog is full: retry later). */
	if (connect(fd, (struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		close(fd);
		c->next_try = nstime_now(CLOCK_MONOTONIC) + RECONNECT_NS;
		return;
	}
	c->fd = fd;
	c->head = c->tail = 0;
	c->st.connects++;
}

/* Write what the socket takes now. Returns 0 or -errno of a dead peer. */
static int client_push(struct txsock_client *c)
{
	while (c->fd >= 0 && c->head < c->tail) {
		ssize_t n = send(c->fd, c->buf + c->head, c->tail - c->head,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			int err = -errno;

			client_drop_conn(c);
			return err;
		}
		c->head += (size_t)n;
	}
	if (c->head == c->tail)
		c->head = c->tail = 0;
	return 0;
}

int txsock_client_new(struct txsock_client **out, const char *path)
{
	struct txsock_client *c;
	int err;

	/* malloc, not xalloc: out of memory in a preloaded library must not
	 * end the program it runs in. */
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = set_addr(&c->addr, path);
	if (err) {
		free(c);
		return err;
	}
	c->fd = -1;
	c->buf = malloc(CLIENT_BUF);
	if (!c->buf) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

int txsock_connect(struct txsock_client **out, const char *path)
{
	int err = txsock_client_new(out, path);

	if (!err)
		client_try_connect(*out);
	return err;
}

void txsock_forget(struct txsock_client *c)
{
	c->fd = -1;
	c->head = c->tail = 0;
	c->next_try = 0;
}

void txsock_reset(struct txsock_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	txsock_forget(c);
	memset(&c->st, 0, sizeof(c->st));	/* a new sender's counts */
}

/* Queue r without writing. Returns 0 or -ENOBUFS (dropped, counted). */
static int client_queue(struct txsock_client *c, const struct txsock_rec *r)
{
	int n;

	if (c->fd < 0) {
		c->st.dropped++;
		return -ENOBUFS;
	}
	if (CLIENT_BUF - c->tail < TXSOCK_HDR_LEN + TXSOCK_KEY_LEN +
	    (size_t)r->caplen &&
	    c->head) {
		memmove(c->buf, c->buf + c->head, c->tail - c->head);
		c->tail -= c->head;
		c->head = 0;
	}
	{
		struct txsock_rec rr = *r;

		rr.dropped = (uint32_t)c->st.dropped;
		n = txsock_encode(c->buf + c->tail, CLIENT_BUF - c->tail, &rr);
	}
	if (n < 0) {
		c->st.dropped++;
		return -ENOBUFS;
	}
	c->tail += (size_t)n;
	c->st.sent++;
	return 0;
}

int txsock_send(struct txsock_client *c, const struct txsock_rec *r)
{
	int err;

	client_try_connect(c);
	err = client_queue(c, r);
	client_push(c);
	return err;
}

size_t txsock_send_batch(struct txsock_client *c, const struct txsock_rec *r,
			 size_t n)
{
	size_t queued = 0;

	client_try_connect(c);
	for (size_t i = 0; i < n; i++) {
		/* Full: write what the socket takes, then try again. */
		if (client_queue(c, &r[i]) == 0) {
			queued++;
		} else if (c->fd >= 0) {
			c->st.dropped--;
			client_push(c);
			if (client_queue(c, &r[i]) == 0)
				queued++;
		}
	}
	client_push(c);
	return queued;
}

int txsock_flush(struct txsock_client *c, int timeout_ms)
{
	int64_t end = nstime_now(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000LL;

	while (c->fd >= 0 && c->head < c->tail) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		int64_t left = end - nstime_now(CLOCK_MONOTONIC);
		int err;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(left / 1000000 + 1)) < 0 && errno != EINTR)
			return -errno;
		err = client_push(c);
		if (err)
			return err;
	}
	return c->fd >= 0 ? 0 : -ENOTCONN;
}

void txsock_client_stats(const struct txsock_client *c,
			 struct txsock_client_stats *st)
{
	*st = c->st;
}

void txsock_client_add_dropped(struct txsock_client *c, uint64_t n)
{
	c->st.dropped += n;
}

int txsock_client_fd(const struct txsock_client *c)
{
	return c->fd;
}

void txsock_close(struct txsock_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c);
}

/* ---- daemon ---- */

int txsock_listen(const char *path, gid_t gid)
{
	struct sockaddr_un a;
	struct stat sb;
	int fd, err;

	err = set_addr(&a, path);
	if (err)
		return err;
	if (lstat(path, &sb) == 0) {
		int probe;

		if (!S_ISSOCK(sb.st_mode))
			return -EEXIST;
		/* A socket someone answers on belongs to a live daemon. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe < 0)
			return -errno;
		if (connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(probe);
			return -EADDRINUSE;
		}
		close(probe);
		if (unlink(path) < 0)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Create it with no access for anyone else, then open it up to the
	 * group: no window where the world can connect. */
	mode_t old = umask(0177);

	err = bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : 0;
	umask(old);
	if (err)
		goto fail;
	if (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	if (chmod(path, 0660) < 0 || listen(fd, 64) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	return fd;
fail_unlink:
	unlink(path);
fail:
	close(fd);
	return err;
}

static int uid_in_group(uid_t uid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	char sbuf[4096];
	gid_t groups[256];
	int n = 256;

	if (getpwuid_r(uid, &pw, sbuf, sizeof(sbuf), &res) || !res)
		return 0;
	if (pw.pw_gid == gid)
		return 1;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
		n = 256;	/* truncated: check the ones we got */
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

int txsock_accept(int lfd, gid_t gid, pid_t *pid, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	*pid = cred.pid;
	*uid = cred.uid;
	/* The file mode already keeps strangers out; this check also holds
	 * when someone loosened the mode or passed the socket on. */
	if (cred.uid == 0 || cred.uid == geteuid() ||
	    (gid != (gid_t)-1 && (cred.gid == gid || uid_in_group(cred.uid, gid))))
		return fd;
	close(fd);
	return -EACCES;
}
