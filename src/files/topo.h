/* topo.h — the topology file: which hosts own which addresses, which
 * switches sit between them, and the cables, so that the correlator can
 * tell a packet's direction when the capture does not say it, and take
 * cable propagation (and, for store-and-forward switches, serialisation)
 * out of a one-way latency to leave the switch's own.
 *
 *   # comment
 *   host NAME [ADDRESS ...]              IPv4 or IPv6 addresses of the host
 *   switch NAME cut-through|store-and-forward [SPEED]   e.g. 10G, 25G, 1G, 100M
 *   link A B LENGTH [NS_PER_M]           metres ("2", "2m", "0.5m"), default
 *                                        4.9 ns/m (fibre)
 *   tap NAME A B                         an observation point (a tap, a
 *                                        port mirror) on the link A-B
 *
 * Documented in tapless-correlate(8).
 */
#ifndef TAPLESS_TOPO_H
#define TAPLESS_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#define TOPO_ERRBUF 512
#define TOPO_NS_PER_M 4.9	/* light in fibre, about 2/3 c */

struct topo;

/* How a message gets from one host to another. */
struct topo_path {
	double prop_ns;		/* cable propagation, all links */
	const char *sw;		/* the switch crossed, or NULL (back-to-back) */
	bool store_forward;
	double speed_bps;	/* the switch's link speed */
};

/* Parse path. Returns 0, -errno (cannot read) or -EINVAL with err as
 * "PATH:LINE: why". */
int topo_load(struct topo **out, const char *path, char err[TOPO_ERRBUF]);
void topo_destroy(struct topo *t);

/* An empty topology, for hosts named on a command line. */
struct topo *topo_create(void);

/* Give host name (added when new) the addresses in addrs, a comma-
 * separated list of IPv4 or IPv6 addresses ("198.18.0.1,2001:db8::1"), as
 * a topology file's host line would. Returns 0, or -EINVAL with err as
 * "why" naming the bad address; t is unchanged then. */
int topo_add_host(struct topo *t, const char *name, const char *addrs,
		  char err[TOPO_ERRBUF]);

/* Observation point name on the link between a and b, given as "A-B"
 * (names may hold dashes: the split whose sides the topology knows, else
 * the only dash), as a topology file's tap line would. Its frames' way is
 * told by A's addresses, as A would see them; it lies on no path
 * (topo_path() gives -ENOENT), so no switch figure comes from it.
 * Returns 0, or -EINVAL with err. */
int topo_add_tap(struct topo *t, const char *name, const char *link,
		 char err[TOPO_ERRBUF]);

/* Whether name is an observation point; *a and *b its link's ends. */
bool topo_tap(const struct topo *t, const char *name, const char **a,
	      const char **b);

/* Whether host owns the address (family AF_INET/AF_INET6, network order). */
bool topo_owns(const struct topo *t, const char *host, int family,
	       const uint8_t *addr);
/* Whether the file names host at all. */
bool topo_has_host(const struct topo *t, const char *host);

/* The path from a to b: a direct link, or two links through one switch.
 * Returns 0, or -ENOENT when the file has no such path. */
int topo_path(const struct topo *t, const char *a, const char *b,
	      struct topo_path *p);

/* A link speed as the file writes it ("10G", "25G", "1G", "100M"; a bare
 * number is bits per second): 0, or -EINVAL. */
int topo_parse_speed(const char *s, double *bps);

/* Serialisation time of a frame of wire_len bytes (plus the 4-byte FCS the
 * capture does not show) at speed_bps. */
double topo_serialisation_ns(uint32_t wire_len, double speed_bps);

#endif
