/* test_frame.c — frames built for sent/received messages parse back to the
 * same fields, with checksums a receiver would accept. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files/frame.h"
#include "unit.h"

static struct frame_flow flow4(uint8_t proto)
{
	struct frame_flow f = { .family = AF_INET, .proto = proto,
				.sport = 40001, .dport = 9001 };

	inet_pton(AF_INET, "198.18.0.1", f.src);
	inet_pton(AF_INET, "198.18.0.2", f.dst);
	return f;
}

/* The one's complement sum of a region plus start, folded: 0xffff when the
 * region carries a correct checksum. */
static uint16_t sum16(const uint8_t *p, size_t len, uint32_t start)
{
	uint32_t s = start;

	for (; len > 1; p += 2, len -= 2)
		s += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint32_t pseudo(const struct frame_flow *f, size_t l4len)
{
	size_t n = f->family == AF_INET6 ? 16 : 4;
	uint32_t s = 0;

	for (size_t i = 0; i < n; i += 2) {
		s += (uint32_t)(f->src[i] << 8 | f->src[i + 1]);
		s += (uint32_t)(f->dst[i] << 8 | f->dst[i + 1]);
	}
	return s + f->proto + (uint32_t)l4len;
}

START_TEST(tcp4_round_trip)
{
	struct frame_flow f = flow4(IPPROTO_TCP);
	const char msg[] = "8=FIX.4.4\x01" "9=5\x01" "35=0\x01" "10=000\x01";
	uint8_t buf[256];
	struct frame_info fi;
	int n = frame_build(buf, sizeof(buf), &f, 0xfffffff0u, 77, 0, msg,
			    sizeof(msg) - 1);

	ck_assert_int_eq(n, (int)(14 + 20 + 20 + sizeof(msg) - 1));
	ck_assert_int_eq(frame_parse(buf, (size_t)n, FRAME_LINK_ETHERNET, &fi), 0);
	ck_assert_int_eq(fi.flow.family, AF_INET);
	ck_assert_int_eq(fi.flow.proto, IPPROTO_TCP);
	ck_assert_mem_eq(fi.flow.src, f.src, 4);
	ck_assert_mem_eq(fi.flow.dst, f.dst, 4);
	ck_assert_uint_eq(fi.flow.sport, 40001);
	ck_assert_uint_eq(fi.flow.dport, 9001);
	ck_assert_uint_eq(fi.seq, 0xfffffff0u);
	ck_assert_uint_eq(fi.ack, 77);
	ck_assert_uint_eq(fi.tcp_flags, FRAME_TCP_PSH | FRAME_TCP_ACK);
	ck_assert_uint_eq(fi.payload_len, sizeof(msg) - 1);
	ck_assert_uint_eq(fi.payload_wire, sizeof(msg) - 1);
	ck_assert_mem_eq(fi.payload, msg, sizeof(msg) - 1);
	/* IP header and TCP checksums verify. */
	ck_assert_uint_eq(sum16(buf + 14, 20, 0), 0xffff);
	ck_assert_uint_eq(sum16(buf + 34, (size_t)n - 34,
				pseudo(&f, (size_t)n - 34)), 0xffff);
}
END_TEST

START_TEST(udp6_round_trip)
{
	struct frame_flow f = { .family = AF_INET6, .proto = IPPROTO_UDP,
				.sport = 5000, .dport = 6000 };
	uint8_t buf[128], odd[3] = { 1, 2, 3 };
	struct frame_info fi;
	int n;

	inet_pton(AF_INET6, "2001:db8::1", f.src);
	inet_pton(AF_INET6, "2001:db8::2", f.dst);
	n = frame_build(buf, sizeof(buf), &f, 0, 0, 0, odd, sizeof(odd));
	ck_assert_int_eq(n, 14 + 40 + 8 + 3);
	ck_assert_int_eq(frame_parse(buf, (size_t)n, FRAME_LINK_ETHERNET, &fi), 0);
	ck_assert_int_eq(fi.flow.family, AF_INET6);
	ck_assert_mem_eq(fi.flow.dst, f.dst, 16);
	ck_assert_uint_eq(fi.payload_len, 3);
	ck_assert_uint_eq(sum16(buf + 54, 11, pseudo(&f, 11)), 0xffff);
	/* The same packet without its Ethernet header, as raw IP. */
	ck_assert_int_eq(frame_parse(buf + 14, (size_t)n - 14, FRAME_LINK_RAW, &fi), 0);
	ck_assert_uint_eq(fi.flow.sport, 5000);
}
END_TEST

START_TEST(too_small)
{
	struct frame_flow f = flow4(IPPROTO_TCP);
	uint8_t buf[60], big[70000] = { 0 };

	ck_assert_int_eq(frame_build(buf, sizeof(buf), &f, 0, 0, 0, "x", 7),
			 -EMSGSIZE);
	ck_assert_int_eq(frame_build(big, sizeof(big), &f, 0, 0, 0, big, 65500),
			 -EMSGSIZE);
}
END_TEST

START_TEST(cut_and_foreign)
{
	struct frame_flow f = flow4(IPPROTO_TCP);
	uint8_t buf[128], vlan[132], arp[42] = { 0 };
	struct frame_info fi;
	int n = frame_build(buf, sizeof(buf), &f, 1, 2, 0, "abcdef", 6);

	/* Every cut inside the headers is an error, never a read past. */
	for (int cut = 0; cut < 14 + 20 + 20; cut++)
		ck_assert_int_eq(frame_parse(buf, (size_t)cut, FRAME_LINK_ETHERNET, &fi),
				 -EBADMSG);
	/* Cut inside the payload (snaplen): what is there, and the wire length. */
	ck_assert_int_eq(frame_parse(buf, (size_t)n - 2, FRAME_LINK_ETHERNET, &fi), 0);
	ck_assert_uint_eq(fi.payload_len, 4);
	ck_assert_uint_eq(fi.payload_wire, 6);
	/* Ethernet padding after the IP packet is not payload. */
	memset(buf + n, 0xee, 10);
	ck_assert_int_eq(frame_parse(buf, (size_t)n + 10, FRAME_LINK_ETHERNET, &fi), 0);
	ck_assert_uint_eq(fi.payload_len, 6);
	/* A VLAN tag is skipped. */
	memcpy(vlan, buf, 12);
	vlan[12] = 0x81; vlan[13] = 0; vlan[14] = 0; vlan[15] = 5;
	memcpy(vlan + 16, buf + 12, (size_t)n - 12);
	ck_assert_int_eq(frame_parse(vlan, (size_t)n + 4, FRAME_LINK_ETHERNET, &fi), 0);
	ck_assert_uint_eq(fi.seq, 1);
	/* ARP, and a link type we do not know. */
	arp[12] = 0x08; arp[13] = 0x06;
	ck_assert_int_eq(frame_parse(arp, sizeof(arp), FRAME_LINK_ETHERNET, &fi),
			 -EPROTONOSUPPORT);
	ck_assert_int_eq(frame_parse(buf, (size_t)n, 147, &fi), -EPROTONOSUPPORT);
	/* An IP total length shorter than its header. */
	buf[14 + 2] = 0; buf[14 + 3] = 10;
	ck_assert_int_eq(frame_parse(buf, (size_t)n, FRAME_LINK_ETHERNET, &fi), -EBADMSG);
}
END_TEST

START_TEST(socket_flow)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct frame_flow f, r;
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
	int s;

	ck_assert_int_eq(bind(l, (void *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (void *)&a, &alen), 0);
	ck_assert_int_eq(connect(c, (void *)&a, sizeof(a)), 0);
	s = accept(l, NULL, NULL);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(frame_flow_of_socket(&f, c, 0), 0);
	ck_assert_int_eq(frame_flow_of_socket(&r, s, 1), 0);
	ck_assert_int_eq(f.proto, IPPROTO_TCP);
	ck_assert_uint_eq(f.dport, ntohs(a.sin_port));
	/* What the server receives is what the client sends. */
	ck_assert_mem_eq(&f, &r, sizeof(f));
	ck_assert_int_eq(frame_flow_of_socket(&f, l, 0), -ENOTCONN);
	close(s);
	close(c);
	close(l);
}
END_TEST

static Suite *frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tcp4_round_trip);
	tcase_add_test(tc, udp6_round_trip);
	tcase_add_test(tc, too_small);
	tcase_add_test(tc, cut_and_foreign);
	tcase_add_test(tc, socket_flow);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(frame_suite)
