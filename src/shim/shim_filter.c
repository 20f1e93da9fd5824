/* shim_filter.c — port and peer lists; see shim_filter.h. */
#include "shim/shim_filter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/errbuf.h"

/* Call fn on each item of the comma-separated list s (copied to item,
 * cut at the comma), with its offset in s. Stops at the first error. */
static int each_item(const char *s, int (*fn)(struct shim_filter *, const char *),
		     struct shim_filter *f, const char *what,
		     char err[SHIM_FILTER_ERRBUF])
{
	size_t off = 0;

	if (!s)
		return 0;
	while (s[off]) {
		size_t n = strcspn(s + off, ",");
		char item[64];

		if (n == 0 || n >= sizeof(item) ||
		    (memcpy(item, s + off, n), item[n] = 0, fn(f, item))) {
			return errbuf_set(err, SHIM_FILTER_ERRBUF, -EINVAL,
					  "bad %s '%.*s' at byte %zu", what,
					  (int)(n < 48 ? n : 48), s + off, off);
		}
		off += n;
		if (s[off] == ',' && !s[++off])
			return errbuf_set(err, SHIM_FILTER_ERRBUF, -EINVAL,
					  "empty %s at byte %zu", what, off);
	}
	return 0;
}

static int port_num(const char *s, uint16_t *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int add_port(struct shim_filter *f, const char *item)
{
	char lo[16] = "", *dash = strchr(item, '-');
	uint16_t a, b;

	if (f->nports >= SHIM_FILTER_MAX)
		return -1;
	if (dash) {
		if ((size_t)(dash - item) >= sizeof(lo))
			return -1;
		memcpy(lo, item, (size_t)(dash - item));
		if (port_num(lo, &a) || port_num(dash + 1, &b) || b < a)
			return -1;
	} else if (port_num(item, &a)) {
		return -1;
	} else {
		b = a;
	}
	f->ports[f->nports].lo = a;
	f->ports[f->nports].hi = b;
	f->nports++;
	return 0;
}

static int add_peer(struct shim_filter *f, const char *item)
{
	char addr[64];
	const char *slash = strchr(item, '/');
	unsigned long bits;
	int fam;

	if (f->npeers >= SHIM_FILTER_MAX)
		return -1;
	snprintf(addr, sizeof(addr), "%.*s",
		 (int)(slash ? (size_t)(slash - item) : strlen(item)), item);
	fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
	memset(f->peers[f->npeers].addr, 0, 16);
	if (inet_pton(fam, addr, f->peers[f->npeers].addr) != 1)
		return -1;
	bits = fam == AF_INET ? 32 : 128;
	if (slash) {
		char *end;
		unsigned long max = bits;

		if (slash[1] < '0' || slash[1] > '9')
			return -1;
		bits = strtoul(slash + 1, &end, 10);
		if (*end || bits > max)
			return -1;
	}
	f->peers[f->npeers].family = fam;
	f->peers[f->npeers].bits = (unsigned)bits;
	f->npeers++;
	return 0;
}

int shim_filter_ports(struct shim_filter *f, const char *s,
		      char err[SHIM_FILTER_ERRBUF])
{
	return each_item(s, add_port, f, "port", err);
}

int shim_filter_peers(struct shim_filter *f, const char *s,
		      char err[SHIM_FILTER_ERRBUF])
{
	return each_item(s, add_peer, f, "peer", err);
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	return !rest || ((a[whole] ^ b[whole]) & (0xff << (8 - rest)) & 0xff) == 0;
}

bool shim_filter_match(const struct shim_filter *f, int family,
		       const uint8_t *peer, uint16_t lport, uint16_t rport)
{
	bool ok = f->nports == 0;

	for (unsigned i = 0; i < f->nports && !ok; i++)
		ok = (lport >= f->ports[i].lo && lport <= f->ports[i].hi) ||
		     (rport >= f->ports[i].lo && rport <= f->ports[i].hi);
	if (!ok)
		return false;
	if (f->npeers == 0)
		return true;
	for (unsigned i = 0; i < f->npeers; i++)
		if (f->peers[i].family == family &&
		    prefix_match(f->peers[i].addr, peer, f->peers[i].bits))
			return true;
	return false;
}
