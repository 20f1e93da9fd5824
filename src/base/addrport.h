/* addrport.h — "ADDR:PORT" to a socket address and back.
 *
 * Accepted: "192.0.2.1:8000", "[2001:db8::1]:8000", "[fe80::1%eth0]:8000",
 * an unbracketed IPv6 address before the last colon ("::1:8000"), and with
 * a default address a port alone ("8000", ":8000"). Addresses are numeric
 * (no name lookups: nothing blocks); what getaddrinfo(AI_NUMERICHOST)
 * takes is taken. The port is decimal digits, 0 to 65535.
 */
#ifndef TAPLESS_BASE_ADDRPORT_H
#define TAPLESS_BASE_ADDRPORT_H

#include <stddef.h>
#include <sys/socket.h>

/* Room for any addrport_parse() message: quoting a spec of a hundred
 * bytes or so, twice. */
#define ADDRPORT_ERRBUF 256

/* Room for any addrport_format() text: "[v6%ifname]:65535". */
#define ADDRPORT_STRLEN 80

/* Parse spec into *ss and *len (a sockaddr_in or sockaddr_in6).
 * default_addr: used when spec is a port alone; NULL: a port alone is an
 * error. Returns 0, or -EINVAL with err (may be NULL) saying which part
 * is wrong, quoting it; *ss and *len are then untouched. */
int addrport_parse(const char *spec, const char *default_addr,
		   struct sockaddr_storage *ss, socklen_t *len,
		   char err[ADDRPORT_ERRBUF]);

/* "192.0.2.1:8000" or "[2001:db8::1]:8000" into buf (size bytes,
 * ADDRPORT_STRLEN is always enough). Returns 0, or -EAFNOSUPPORT for
 * anything but IPv4 or IPv6, with "?" in buf. */
int addrport_format(const struct sockaddr *sa, socklen_t len, char *buf,
		    size_t size);

#endif
