/* bpfstamp_ports.c — the port list of capd --stamp-ports; see bpfstamp.h.
 */
#include "bpf/bpfstamp.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "base/errbuf.h"

/* A decimal port at s, 1 to 65535, with *end past it; -1 if none. */
static long bpfstamp_port(const char *s, const char **end)
{
	long v = 0;
	const char *p = s;

	while (isdigit((unsigned char)*p) && v <= 65535)
		v = v * 10 + (*p++ - '0');
	*end = p;
	return p == s || v < 1 || v > 65535 || isdigit((unsigned char)*p) ?
	       -1 : v;
}

static int bpfstamp_ports_bad(const char *list, const char *at,
			      char err[BPFSTAMP_ERRBUF])
{
	return errbuf_set(err, BPFSTAMP_ERRBUF, -EINVAL,
			  "'%s': byte %zu: expected a "
			  "port (1 to 65535) or a range (9100-9199), "
			  "separated by commas", list, (size_t)(at - list) + 1);
}

int bpfstamp_parse_ports(const char *list, uint16_t *ports, unsigned *n,
			 char err[BPFSTAMP_ERRBUF])
{
	uint8_t seen[65536 / 8];
	const char *p = list, *end;

	memset(seen, 0, sizeof(seen));
	*n = 0;
	for (;;) {
		long lo = bpfstamp_port(p, &end), hi;

		if (lo < 0)
			return bpfstamp_ports_bad(list, p, err);
		p = end;
		hi = lo;
		if (*p == '-') {
			hi = bpfstamp_port(++p, &end);
			if (hi < lo)	/* none, or backwards */
				return bpfstamp_ports_bad(list, p, err);
			p = end;
		}
		for (long v = lo; v <= hi; v++)
			if (!(seen[v / 8] & (1u << (v % 8)))) {
				seen[v / 8] |= (uint8_t)(1u << (v % 8));
				ports[(*n)++] = (uint16_t)v;
			}
		if (!*p)
			return 0;
		if (*p != ',')
			return bpfstamp_ports_bad(list, p, err);
		p++;
	}
}
