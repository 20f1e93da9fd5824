/* shim_filter.h — which sockets tapless-stamp stamps: --ports and --peers.
 *
 * A port list names ports and ranges ("9001,9100-9199"); a peer list names
 * addresses and prefixes, IPv4 or IPv6 ("198.18.1.2,10.0.0.0/8,2001:db8::/32").
 * A socket is stamped when its local or its remote port is in the port
 * list and its peer's address is in the peer list; an empty list takes
 * everything. Parsed once (tapless-stamp checks the options, the preload
 * library reads the same text from its environment); matching allocates
 * nothing and makes no system call.
 */
#ifndef TAPLESS_SHIM_FILTER_H
#define TAPLESS_SHIM_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHIM_FILTER_MAX 64	/* items in each list */

struct shim_filter {
	unsigned nports, npeers;
	struct {
		uint16_t lo, hi;
	} ports[SHIM_FILTER_MAX];
	struct {
		int family;		/* AF_INET or AF_INET6 */
		uint8_t addr[16];	/* network order, IPv4 in the first 4 */
		unsigned bits;		/* prefix length */
	} peers[SHIM_FILTER_MAX];
};

/* A shim_filter_*() message, quoting at most 48 bytes of the item. */
#define SHIM_FILTER_ERRBUF 200

/* Add the items of a comma-separated list to f. Returns 0, or -EINVAL with
 * err saying which item is wrong and at which byte of s it starts ("bad
 * port 'x' at byte 5"). NULL or "" adds nothing. */
int shim_filter_ports(struct shim_filter *f, const char *s,
		      char err[SHIM_FILTER_ERRBUF]);
int shim_filter_peers(struct shim_filter *f, const char *s,
		      char err[SHIM_FILTER_ERRBUF]);

/* Whether a socket of family with that peer address (network order, IPv4
 * in the first 4 bytes) and ports (host order) is to be stamped. */
bool shim_filter_match(const struct shim_filter *f, int family,
		       const uint8_t *peer, uint16_t lport, uint16_t rport);

#endif
