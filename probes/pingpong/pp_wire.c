/* pp_wire.c — tapless-pingpong's wire format: a message encoded and
 * decoded (the layout is in pp_private.h); and the socket helpers both
 * roles use: an address option parsed, a socket's names, the interface of
 * its address. See pp_private.h for the other files.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addrport.h"
#include "base/bytes.h"
#include "base/log.h"
#include "probes/pingpong/pp_private.h"

/* ---- small helpers ------------------------------------------------------ */

/* b - a as a 32-bit difference, or PP_NONE32 when either is missing or it
 * does not fit. */
static int32_t pp_delta(int64_t a, int64_t b)
{
	int64_t d = b - a;

	if (!a || !b || d <= INT32_MIN || d > INT32_MAX)
		return PP_NONE32;
	return (int32_t)d;
}

static int64_t pp_undelta(int64_t base, int32_t d)
{
	return !base || d == PP_NONE32 ? 0 : base + d;
}

void pp_encode(uint8_t *b, const struct pp_msg *m)
{
	bytes_put_be32(b, PP_MAGIC);
	bytes_put_be16(b + 4, m->len);
	b[6] = m->kind;
	b[7] = m->flags;
	bytes_put_be32(b + 8, m->seq);
	bytes_put_be32(b + 12, m->prev_seq);
	bytes_put_be64(b + 16, (uint64_t)m->srv_recv);
	bytes_put_be32(b + 24, (uint32_t)pp_delta(m->srv_recv, m->srv_rx_sw));
	bytes_put_be32(b + 28, (uint32_t)pp_delta(m->prev_send, m->prev_sched));
	bytes_put_be64(b + 32, (uint64_t)m->srv_rx_hw);
	bytes_put_be64(b + 40, (uint64_t)m->prev_send);
	bytes_put_be64(b + 48, (uint64_t)m->prev_sw_tx);
	bytes_put_be64(b + 56, (uint64_t)m->prev_hw_tx);
}

/* Check and decode the message at b (n bytes available; a datagram is
 * exactly one message, a stream may hold less or more). Returns 0, -EAGAIN
 * (stream: not all there yet) or -EBADMSG with *why. */
int pp_decode(const uint8_t *b, size_t n, bool stream, size_t max,
	      struct pp_msg *m, const char **why)
{
	if (n < PP_HDR) {
		if (stream)
			return n >= 4 && bytes_get_be32(b) != PP_MAGIC ?
			       (*why = "bad magic", -EBADMSG) : -EAGAIN;
		*why = "shorter than the 64-byte header";
		return -EBADMSG;
	}
	if (bytes_get_be32(b) != PP_MAGIC) {
		*why = "bad magic";
		return -EBADMSG;
	}
	memset(m, 0, sizeof(*m));
	m->len = bytes_get_be16(b + 4);
	m->kind = b[6];
	m->flags = b[7];
	if (m->len < PP_HDR || m->len > max) {
		*why = "length field out of range";
		return -EBADMSG;
	}
	if (m->kind < PP_PING || m->kind > PP_FIN_ACK) {
		*why = "unknown message kind";
		return -EBADMSG;
	}
	if (!stream && m->len != n) {
		*why = "length field differs from the datagram's";
		return -EBADMSG;
	}
	if (stream && n < m->len)
		return -EAGAIN;
	m->seq = bytes_get_be32(b + 8);
	m->prev_seq = bytes_get_be32(b + 12);
	m->srv_recv = (int64_t)bytes_get_be64(b + 16);
	m->srv_rx_hw = (int64_t)bytes_get_be64(b + 32);
	m->prev_send = (int64_t)bytes_get_be64(b + 40);
	m->prev_sw_tx = (int64_t)bytes_get_be64(b + 48);
	m->prev_hw_tx = (int64_t)bytes_get_be64(b + 56);
	m->srv_rx_sw = pp_undelta(m->srv_recv, (int32_t)bytes_get_be32(b + 24));
	m->prev_sched = pp_undelta(m->prev_send, (int32_t)bytes_get_be32(b + 28));
	return 0;
}

/* addrport_parse() for option opt: 0, or -1 after saying why. */
int pp_parse_addr(const char *opt, const char *spec,
		  struct sockaddr_storage *ss, socklen_t *len)
{
	char err[ADDRPORT_ERRBUF];

	if (!addrport_parse(spec, NULL, ss, len, err))
		return 0;
	log_err("--%s %s", opt, err);
	return -1;
}

void pp_sock_names(int fd, char *local, char *peer, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (local && !getsockname(fd, (struct sockaddr *)&ss, &sl))
		addrport_format((const struct sockaddr *)&ss, sizeof(ss),
				local, len);
	sl = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (peer && !getpeername(fd, (struct sockaddr *)&ss, &sl))
		addrport_format((const struct sockaddr *)&ss, sizeof(ss),
				peer, len);
}

/* The interface holding the socket's local address, or "" (wildcard,
 * none found). */
void pp_iface_of(int fd, char name[IF_NAMESIZE])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct ifaddrs *all, *i;

	name[0] = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) || getifaddrs(&all))
		return;
	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;

		if (!a || a->sa_family != ss.ss_family)
			continue;
		if (a->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((struct sockaddr_in *)&ss)->sin_addr.s_addr)
			break;
		if (a->sa_family == AF_INET6 &&
		    !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			    &((struct sockaddr_in6 *)&ss)->sin6_addr,
			    sizeof(struct in6_addr)))
			break;
	}
	if (i)
		snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
	freeifaddrs(all);
}
