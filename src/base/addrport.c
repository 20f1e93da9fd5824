/* addrport.c — see addrport.h. */
#include "base/addrport.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "base/errbuf.h"

#define HOST_MAX 128	/* an IPv6 address, a scope name, room to spare */

/* Every error of this module is bad input. */
#define bad(err, ...) errbuf_set(err, ADDRPORT_ERRBUF, -EINVAL, __VA_ARGS__)

/* Decimal digits only (getaddrinfo would take " 80" and "+80", and wrap
 * 65616 to 80), 0 to 65535. */
static int parse_port(const char *s, unsigned short *port)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	*port = (unsigned short)v;
	return 0;
}

int addrport_parse(const char *spec, const char *default_addr,
		   struct sockaddr_storage *ss, socklen_t *len,
		   char err[ADDRPORT_ERRBUF])
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai;
	const char *host, *port;
	char hbuf[HOST_MAX];
	unsigned short pn;
	size_t hl;

	if (!spec || !*spec)
		return bad(err, "empty address (expected ADDR:PORT)");
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':')
			return bad(err, "'%s': expected [IPV6]:PORT", spec);
		host = spec + 1;
		hl = (size_t)(close - host);
		port = close + 2;
		if (!hl)
			return bad(err, "'%s': no address in '[]'", spec);
	} else {
		const char *colon = strrchr(spec, ':');

		if (!colon && !default_addr)
			return bad(err, "'%s': no port (expected "
				   "ADDR:PORT)", spec);
		host = spec;
		hl = colon ? (size_t)(colon - spec) : 0;
		port = colon ? colon + 1 : spec;
	}
	if (parse_port(port, &pn))
		return bad(err, "'%s': port '%s' is not a number from "
			   "0 to 65535", spec, port);
	if (!hl) {
		if (!default_addr)
			return bad(err, "'%s': no address (expected "
				   "ADDR:PORT)", spec);
		host = default_addr;
		hl = strlen(default_addr);
	}
	if (hl >= sizeof(hbuf))
		return bad(err, "'%s': address '%.*s' is too long",
			   spec, (int)hl, host);
	memcpy(hbuf, host, hl);
	hbuf[hl] = 0;
	if (getaddrinfo(hbuf, NULL, &hints, &ai))
		return bad(err, "'%s': '%s' is not a numeric IPv4 or "
			   "IPv6 address", spec, hbuf);
	if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
	    ai->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(ai);
		return bad(err, "'%s': '%s' is not an IPv4 or IPv6 "
			   "address", spec, hbuf);
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(pn);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(pn);
	return 0;
}

int addrport_format(const struct sockaddr *sa, socklen_t len, char *buf,
		    size_t size)
{
	char h[NI_MAXHOST], s[NI_MAXSERV];

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    getnameinfo(sa, len, h, sizeof(h), s, sizeof(s),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, size, "?");
		return -EAFNOSUPPORT;
	}
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, s);
	return 0;
}
