/* pmc.c — see pmc.h. */
#include "ptp/pmc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "ptp/mgmt.h"
#include "base/xalloc.h"

/* ptp4l's own messages fit in 1500 bytes (struct message_data); anything
 * longer is not from it. */
#define PMC_MAX_DGRAM 1500

struct pmc {
	int fd;
	struct sockaddr_un server;
	struct sockaddr_un client;
	struct mgmt_hdr hdr;	/* seq is the next one to use */
	char err[PMC_ERRBUF];	/* pmc_error() */
	uint8_t buf[PMC_MAX_DGRAM + 1];
};

/* Port numbers of this process's clients: distinct identities for ptp4l,
 * whose subscriptions are keyed by the subscriber's port identity. */
static atomic_uint pmc_instances;

static int pmc_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* Remove a socket left by an earlier run; leave anything else alone. */
static int pmc_unlink_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int pmc_open(struct pmc **out, const char *server_path,
	     const char *client_path, uint8_t domain)
{
	struct pmc *p;
	unsigned int pid = (unsigned int)getpid();
	uint8_t *c;
	int ret;

	*out = NULL;
	p = xcalloc(1, sizeof(*p));
	p->fd = -1;
	ret = pmc_addr(&p->server, server_path);
	if (!ret)
		ret = pmc_addr(&p->client, client_path);
	if (ret)
		goto fail;
	ret = pmc_unlink_stale(client_path);
	if (ret)
		goto fail;
	p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (bind(p->fd, (struct sockaddr *)&p->client, sizeof(p->client)) < 0) {
		ret = -errno;
		goto fail_close;
	}
	/* ptp4l must be able to write to it; root can anyway, a ptp4l run
	 * as another user of our group can with 0660 (linuxptp's
	 * UDS_FILEMODE for its own clients). */
	if (chmod(client_path, 0660) < 0) {
		ret = -errno;
		goto fail_unlink;
	}
	p->hdr.domain = domain;
	c = p->hdr.source.clock.id;
	c[0] = 0x74;	/* 't' */
	c[1] = 0x6c;	/* 'l' */
	c[2] = 0x00;
	c[3] = 0xff;	/* EUI-48 to EUI-64 filler, as linuxptp's */
	c[4] = 0xfe;
	c[5] = (uint8_t)(pid >> 16);
	c[6] = (uint8_t)(pid >> 8);
	c[7] = (uint8_t)pid;
	p->hdr.source.port = (uint16_t)(atomic_fetch_add(&pmc_instances, 1) + 1);
	mgmt_target_all(&p->hdr.target);
	p->hdr.boundary_hops = 0;
	*out = p;
	return 0;
fail_unlink:
	unlink(client_path);
fail_close:
	close(p->fd);
fail:
	free(p);
	return ret;
}

int pmc_fd(const struct pmc *p)
{
	return p->fd;
}

/* Send a request encoded under p->hdr (len < 0: the encoder's error):
 * its sequence number, the next request's then moved on; or -errno. */
static int pmc_request(struct pmc *p, const uint8_t *msg, int len)
{
	uint16_t seq = p->hdr.seq;
	ssize_t n;

	if (len < 0)
		return len;
	n = sendto(p->fd, msg, (size_t)len, 0,
		   (const struct sockaddr *)&p->server, sizeof(p->server));
	if (n < 0)
		return -errno;
	if (n != len)
		return -EIO;
	p->hdr.seq++;
	return seq;
}

int pmc_get(struct pmc *p, uint16_t id)
{
	uint8_t msg[MGMT_GET_LEN];

	return pmc_request(p, msg, mgmt_encode_get(msg, sizeof(msg), &p->hdr, id));
}

int pmc_subscribe(struct pmc *p, uint16_t duration_s, uint64_t events)
{
	uint8_t msg[MGMT_SUBSCRIBE_LEN];

	return pmc_request(p, msg, mgmt_encode_subscribe(msg, sizeof(msg), &p->hdr,
							 duration_s, events));
}

/* Whether the sender is the server: anyone may write to our path. */
static bool pmc_from_server(const struct pmc *p, const struct sockaddr_un *sa,
			    socklen_t salen)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n;

	if (salen <= off || sa->sun_family != AF_UNIX)
		return false;
	n = strnlen(sa->sun_path, salen - off);
	return n == strlen(p->server.sun_path) &&
	       !memcmp(sa->sun_path, p->server.sun_path, n);
}

int pmc_recv(struct pmc *p, struct mgmt_msg *msg)
{
	struct sockaddr_un from;
	socklen_t fromlen;
	ssize_t n;
	int ret;

	for (;;) {
		fromlen = sizeof(from);
		n = recvfrom(p->fd, p->buf, sizeof(p->buf), MSG_TRUNC,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pmc_from_server(p, &from, fromlen))
			break;
	}
	if (n > PMC_MAX_DGRAM) {
		return errbuf_set(p->err, PMC_ERRBUF, -EBADMSG,
				  "byte %d: datagram of %zd bytes, over %d",
				  PMC_MAX_DGRAM, n, PMC_MAX_DGRAM);
	}
	ret = mgmt_decode(p->buf, (size_t)n, msg);
	if (ret) {
		return errbuf_set(p->err, PMC_ERRBUF, ret, "byte %zu: %s",
				  msg->err_offset, msg->why);
	}
	return 1;
}

const char *pmc_error(const struct pmc *p)
{
	return p->err;
}

void pmc_close(struct pmc *p)
{
	if (!p)
		return;
	close(p->fd);
	unlink(p->client.sun_path);
	free(p);
}
