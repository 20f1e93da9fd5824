/* frame.c — building and parsing Ethernet/IP/TCP|UDP frames; see frame.h. */
#include "files/frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "base/bytes.h"

#define ETH_HLEN_ 14
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_VLAN 0x8100
#define ETH_P_QINQ 0x88a8

/* One's complement sum, folded at the end (RFC 1071). */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += bytes_get_be16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

static int flow_from_sockaddr(const struct sockaddr_storage *ss, uint8_t addr[16],
			      uint16_t *port, int *family)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		memcpy(addr, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		*family = AF_INET;
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		*port = ntohs(s6->sin6_port);
		if (!memcmp(&s6->sin6_addr, v4mapped, 12)) {
			memcpy(addr, (const uint8_t *)&s6->sin6_addr + 12, 4);
			*family = AF_INET;
		} else {
			memcpy(addr, &s6->sin6_addr, 16);
			*family = AF_INET6;
		}
		return 0;
	}
	return -EPROTONOSUPPORT;
}

int frame_flow_of_socket(struct frame_flow *f, int fd, int reverse)
{
	struct sockaddr_storage ls, ps;
	socklen_t llen = sizeof(ls), plen = sizeof(ps), tlen;
	int type, fam2, err;

	memset(f, 0, sizeof(*f));
	tlen = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen))
		return -errno;
	if (type == SOCK_STREAM)
		f->proto = IPPROTO_TCP;
	else if (type == SOCK_DGRAM)
		f->proto = IPPROTO_UDP;
	else
		return -EPROTONOSUPPORT;
	if (getsockname(fd, (struct sockaddr *)&ls, &llen) ||
	    getpeername(fd, (struct sockaddr *)&ps, &plen))
		return -errno;
	err = flow_from_sockaddr(&ls, f->src, &f->sport, &f->family);
	if (!err)
		err = flow_from_sockaddr(&ps, f->dst, &f->dport, &fam2);
	if (err)
		return err;
	if (fam2 != f->family)
		return -EPROTONOSUPPORT;
	if (reverse)
		frame_flow_reverse(f);
	return 0;
}

void frame_flow_reverse(struct frame_flow *f)
{
	uint8_t a[16];
	uint16_t p = f->sport;

	memcpy(a, f->src, 16);
	memcpy(f->src, f->dst, 16);
	memcpy(f->dst, a, 16);
	f->sport = f->dport;
	f->dport = p;
}

size_t frame_header_len(const struct frame_flow *f)
{
	return ETH_HLEN_ + (f->family == AF_INET6 ? 40 : 20) +
	       (f->proto == IPPROTO_TCP ? 20 : 8);
}

/* A locally administered unicast MAC naming the address (02:74:6c = "tl"). */
static void frame_mac(uint8_t mac[6], const struct frame_flow *f, const uint8_t *addr)
{
	size_t n = addr_len(f->family);

	mac[0] = 0x02;
	mac[1] = 0x74;
	mac[2] = 0x6c;
	mac[3] = addr[n - 3];
	mac[4] = addr[n - 2];
	mac[5] = addr[n - 1];
}

int frame_build(void *buf, size_t cap, const struct frame_flow *f, uint32_t seq,
		uint32_t ack, uint8_t flags, const void *payload, size_t len)
{
	size_t hlen = frame_header_len(f), l4len, alen = addr_len(f->family);
	uint8_t *p = buf, *ip = p + ETH_HLEN_, *l4;
	uint32_t sum;

	l4len = (f->proto == IPPROTO_TCP ? 20 : 8) + len;
	if (len > 65535 - 40 - 20 || hlen + len > cap)
		return -EMSGSIZE;
	frame_mac(p, f, f->dst);
	frame_mac(p + 6, f, f->src);
	if (f->family == AF_INET6) {
		bytes_put_be16(p + 12, ETH_P_IPV6);
		bytes_put_be32(ip, 6u << 28);
		bytes_put_be16(ip + 4, (uint16_t)l4len);
		ip[6] = f->proto;
		ip[7] = 64;
		memcpy(ip + 8, f->src, 16);
		memcpy(ip + 24, f->dst, 16);
		l4 = ip + 40;
	} else {
		bytes_put_be16(p + 12, ETH_P_IPV4);
		ip[0] = 0x45;
		ip[1] = 0;
		bytes_put_be16(ip + 2, (uint16_t)(20 + l4len));
		bytes_put_be16(ip + 4, 0);
		bytes_put_be16(ip + 6, 0x4000);	/* DF, as Linux sends TCP */
		ip[8] = 64;
		ip[9] = f->proto;
		bytes_put_be16(ip + 10, 0);
		memcpy(ip + 12, f->src, 4);
		memcpy(ip + 16, f->dst, 4);
		bytes_put_be16(ip + 10, csum_fold(csum_add(0, ip, 20)));
		l4 = ip + 20;
	}
	bytes_put_be16(l4, f->sport);
	bytes_put_be16(l4 + 2, f->dport);
	if (f->proto == IPPROTO_TCP) {
		bytes_put_be32(l4 + 4, seq);
		bytes_put_be32(l4 + 8, ack);
		l4[12] = 5 << 4;
		l4[13] = flags ? flags : FRAME_TCP_PSH | FRAME_TCP_ACK;
		bytes_put_be16(l4 + 14, 65535);
		bytes_put_be16(l4 + 16, 0);
		bytes_put_be16(l4 + 18, 0);
		memcpy(l4 + 20, payload, len);
	} else {
		bytes_put_be16(l4 + 4, (uint16_t)l4len);
		bytes_put_be16(l4 + 6, 0);
		memcpy(l4 + 8, payload, len);
	}
	/* Pseudo-header, then the segment. */
	sum = csum_add(0, f->src, alen);
	sum = csum_add(sum, f->dst, alen);
	sum += f->proto + (uint32_t)l4len;
	sum = csum_add(sum, l4, l4len);
	{
		uint16_t c = csum_fold(sum);

		/* UDP sends a zero sum as all ones (0 means "none"). */
		if (f->proto == IPPROTO_UDP && !c)
			c = 0xffff;
		bytes_put_be16(l4 + (f->proto == IPPROTO_TCP ? 16 : 6), c);
	}
	return (int)(hlen + len);
}

/* From the network header on. */
static int frame_parse_ip(const uint8_t *p, size_t len, struct frame_info *out)
{
	const uint8_t *l4;
	size_t ihl, l4cap, l4wire;
	uint8_t proto;

	if (len < 1)
		return -EBADMSG;
	if (p[0] >> 4 == 4) {
		uint16_t tot, frag;

		if (len < 20 || (ihl = (size_t)(p[0] & 15) * 4) < 20 || len < ihl)
			return -EBADMSG;
		tot = bytes_get_be16(p + 2);
		if (tot < ihl)
			return -EBADMSG;
		frag = bytes_get_be16(p + 6);
		/* Only first fragments carry the L4 header. */
		if (frag & 0x1fff)
			return -EPROTONOSUPPORT;
		out->flow.family = AF_INET;
		memcpy(out->flow.src, p + 12, 4);
		memcpy(out->flow.dst, p + 16, 4);
		proto = p[9];
		out->ip_len = tot;
		l4wire = tot - ihl;
	} else if (p[0] >> 4 == 6) {
		if (len < 40)
			return -EBADMSG;
		/* Extension headers are rare on trading links; not followed. */
		ihl = 40;
		out->flow.family = AF_INET6;
		memcpy(out->flow.src, p + 8, 16);
		memcpy(out->flow.dst, p + 24, 16);
		proto = p[6];
		l4wire = bytes_get_be16(p + 4);
		out->ip_len = (uint16_t)(40 + l4wire);
	} else {
		return -EPROTONOSUPPORT;
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return -EPROTONOSUPPORT;
	out->flow.proto = proto;
	l4 = p + ihl;
	/* Trailing Ethernet padding is not payload: trust the IP length. */
	l4cap = len - ihl < l4wire ? len - ihl : l4wire;
	if (proto == IPPROTO_TCP) {
		size_t doff;

		if (l4cap < 20 || (doff = (size_t)(l4[12] >> 4) * 4) < 20 ||
		    doff > l4wire || l4cap < doff)
			return -EBADMSG;
		out->seq = bytes_get_be32(l4 + 4);
		out->ack = bytes_get_be32(l4 + 8);
		out->tcp_flags = l4[13];
		out->payload = l4 + doff;
		out->payload_len = (uint32_t)(l4cap - doff);
		out->payload_wire = (uint32_t)(l4wire - doff);
	} else {
		if (l4cap < 8 || l4wire < 8)
			return -EBADMSG;
		out->payload = l4 + 8;
		out->payload_len = (uint32_t)(l4cap - 8);
		out->payload_wire = (uint32_t)(l4wire - 8);
	}
	out->flow.sport = bytes_get_be16(l4);
	out->flow.dport = bytes_get_be16(l4 + 2);
	return 0;
}

int frame_parse(const void *data, size_t caplen, int linktype,
		struct frame_info *out)
{
	const uint8_t *p = data;
	size_t off;
	uint16_t type;

	memset(out, 0, sizeof(*out));
	switch (linktype) {
	case FRAME_LINK_RAW:
		return frame_parse_ip(p, caplen, out);
	case FRAME_LINK_SLL:
		if (caplen < 16)
			return -EBADMSG;
		type = bytes_get_be16(p + 14);
		off = 16;
		break;
	case FRAME_LINK_SLL2:
		if (caplen < 20)
			return -EBADMSG;
		type = bytes_get_be16(p);
		off = 20;
		break;
	case FRAME_LINK_ETHERNET:
		if (caplen < ETH_HLEN_)
			return -EBADMSG;
		type = bytes_get_be16(p + 12);
		off = ETH_HLEN_;
		/* 802.1Q and QinQ tags. */
		while (type == ETH_P_VLAN || type == ETH_P_QINQ) {
			if (caplen < off + 4)
				return -EBADMSG;
			type = bytes_get_be16(p + off + 2);
			off += 4;
		}
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	if (type != ETH_P_IPV4 && type != ETH_P_IPV6)
		return -EPROTONOSUPPORT;
	return frame_parse_ip(p + off, caplen - off, out);
}
