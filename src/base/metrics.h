/* metrics.h — a tiny HTTP server that answers Prometheus scrapes of a
 * tapless program (tapless-syncd, tapless correlate --follow), and the
 * helpers that write the exposition text, so every endpoint follows the
 * same conventions.
 *
 * Off by default: a program opens it only when configured with a port. By
 * default ("localhost") it listens on 127.0.0.1 and, when the host has
 * IPv6, on [::1] (IPV6_V6ONLY), and on no other address: like the chrony
 * and ptp4l exporters, anything beyond the host goes through a proxy the
 * operator chooses (TLS, auth), since the server has neither. An operator
 * may name one numeric address instead (0.0.0.0 or :: for every address
 * of that family); then the endpoint is reachable from wherever that
 * address is, unauthenticated and in clear, and keeping it to the
 * scrapers (a firewall, a management network) is the operator's job.
 *
 * It lives inside the program's one poll() loop and never blocks on a client:
 * every socket is non-blocking, a request must end its headers within
 * METRICS_REQ_MAX bytes and METRICS_READ_TIMEOUT_NS (from the accept), a
 * response within METRICS_WRITE_TIMEOUT_NS, at most METRICS_MAX_CONN
 * connections are open at once (a new one takes the place of the oldest
 * at least METRICS_EVICT_AGE_NS old: answered first, then idle, then being
 * sent to; or waits in the kernel's queue until there is one; so clients
 * holding connections open cannot lock others out), and each response is
 * kept whole and sent as the client takes it.
 *
 *   GET /metrics   200; the body is what the renderer writes (query ignored)
 *   GET /          200; a line pointing to /metrics
 *   HEAD           as GET without the body
 *   other paths    404; other methods 405 with "Allow: GET, HEAD"
 *   bad request    400; headers too long 431; too slow 408
 * Every response carries Content-Length and "Connection: close".
 *
 * Two formats, chosen by the Accept header: OpenMetrics 1.0.0
 * ("application/openmetrics-text; version=1.0.0; charset=utf-8") when the
 * client weighs application/openmetrics-text at least as high as
 * text/plain, else the classic Prometheus text format 0.0.4
 * ("text/plain; version=0.0.4; charset=utf-8"), which is also what a client
 * naming neither (curl) gets. The two differ in ways a renderer should not
 * have to know, so it writes only through metrics_family(),
 * metrics_sample() and metrics_histogram() and passes on the format it is
 * given:
 *
 *  - OpenMetrics requires the exposition to end with "# EOF"; the server
 *    appends "# EOF\n" itself, for OpenMetrics only (the classic format has
 *    no end marker). A renderer never writes it.
 *  - Counters. A counter family is named without "_total" (OpenMetrics:
 *    "# TYPE foo counter") and its samples with it ("foo_total 17"); the
 *    classic format names the family as its samples ("# TYPE foo_total
 *    counter"). So: pass metrics_family() the name without "_total" (it
 *    refuses one ending in "_total") and metrics_sample() the name with it.
 *  - Units. With a unit, the family name must end in "_" unit
 *    (foo_seconds, unit "seconds"); OpenMetrics gets a "# UNIT" line, the
 *    classic format none. Use base units (seconds, not nanoseconds).
 *  - HELP escaping: backslash and newline in both, the double quote too in
 *    OpenMetrics.
 *  - Histograms. The family is named without a suffix, with its unit
 *    ("# TYPE foo_seconds histogram", unit "seconds") in both formats; its
 *    samples (foo_seconds_bucket, _count, _sum) come from
 *    metrics_histogram(), one call per label set, which spells the bounds
 *    the way OpenMetrics asks in both formats.
 * Samples of one family follow its metrics_family() call, not interleaved
 * with another family's.
 */
#ifndef TAPLESS_METRICS_H
#define TAPLESS_METRICS_H

#include <stdint.h>
#include <stdio.h>

struct metrics;
struct pollfd;

#define METRICS_MAX_CONN 8		/* open connections at once */
#define METRICS_POLLFDS (2 + METRICS_MAX_CONN)	/* listeners + connections */
#define METRICS_REQ_MAX 4096		/* request line and headers, bytes */
#define METRICS_READ_TIMEOUT_NS 2000000000LL	/* whole request, from accept */
#define METRICS_WRITE_TIMEOUT_NS 10000000000LL	/* whole response */

enum metrics_format {
	METRICS_TEXT,		/* Prometheus text format 0.0.4 */
	METRICS_OPENMETRICS,	/* OpenMetrics 1.0.0 */
};

enum metrics_type {
	METRICS_GAUGE,
	METRICS_COUNTER,
	METRICS_HISTOGRAM,	/* samples through metrics_histogram() */
};

/* Room for an address metrics_parse_listen() gives back: INET6_ADDRSTRLEN
 * (an IPv6 address, possibly with an IPv4 tail), and the NUL. */
#define METRICS_ADDR_MAX 46

/* Writes the whole exposition to out in format fmt (through
 * metrics_family() and metrics_sample()), once per request. Returns 0, or
 * -errno to have the client answered 500. */
typedef int (*metrics_render_fn)(FILE *out, enum metrics_format fmt,
				 void *arg);

/* Listen on addr:port. addr NULL or "localhost": on 127.0.0.1:port and
 * [::1]:port (the latter skipped when the host has no IPv6 or no ::1).
 * Otherwise addr is one numeric IPv4 or IPv6 address ("0.0.0.0" and "::"
 * included; no brackets, no scope, not IPv4-mapped), listened on alone;
 * an IPv6 one with IPV6_V6ONLY, so "::" does not take IPv4 too. Port 0
 * lets the kernel pick one (the same for both localhost addresses); see
 * metrics_port(). Returns 0, or -errno: -EINVAL for a port out of range or
 * an address that is not numeric, -EADDRNOTAVAIL for one the host does
 * not have, -EADDRINUSE, -EACCES (a port below 1024 without
 * CAP_NET_BIND_SERVICE). */
int metrics_open(struct metrics **out, const char *addr, int port);

/* 0 when metrics_open() would take addr ("localhost", NULL, or a numeric
 * IPv4 or IPv6 address, not IPv4-mapped), else -EINVAL; for checking a
 * configuration before anything is opened. */
int metrics_check_addr(const char *addr);

/* A command line's "[ADDR:]PORT": "9464", "127.0.0.1:9464", "[::1]:9464",
 * "0.0.0.0:9464", "localhost:9464"; an IPv6 address always in brackets.
 * PORT is 0 to 65535 in decimal (0: the kernel picks). Puts the address
 * into addr (addrlen bytes; METRICS_ADDR_MAX is enough), "localhost" when
 * none is given (":9464" too), and the port into *port, for
 * metrics_open(). Returns 0, or -EINVAL (nothing written): a malformed
 * string, an address that is not numeric, a port out of range, or addr
 * too small. */
int metrics_parse_listen(const char *s, char *addr, size_t addrlen, int *port);

/* The port listened on. */
int metrics_port(const struct metrics *m);

/* Fill fds with what to poll (the listeners first, then the connections,
 * each with its events). Returns the count, or -ENOSPC when max is less
 * than that; METRICS_POLLFDS entries are always enough. */
int metrics_pollfds(const struct metrics *m, struct pollfd *fds, int max);

/* Milliseconds until the earliest connection deadline (0 when one has
 * passed), or -1 when there is none: a bound for the poll() timeout. */
int metrics_timeout_ms(const struct metrics *m, int64_t now_ns);

/* Handle what poll() reported in fds (as filled by metrics_pollfds(); other
 * entries are ignored): read requests, answer them (calling render for
 * /metrics), send, accept, and close connections past their deadlines.
 * Call it after every poll() return, timeouts included, with now_ns from
 * CLOCK_MONOTONIC. Never blocks. Returns the number of requests answered. */
int metrics_handle(struct metrics *m, const struct pollfd *fds, int n,
		   int64_t now_ns, metrics_render_fn render, void *arg);

/* Close the listeners and every connection. NULL is fine. */
void metrics_close(struct metrics *m);

/* "# TYPE", "# UNIT" (OpenMetrics only) and "# HELP" lines of a family.
 * name matches [a-zA-Z_:][a-zA-Z0-9_:]*; a counter's name does not end in
 * "_total"; unit (or NULL) is [a-zA-Z0-9_:]+ and name ends in "_" unit;
 * help may be NULL or "" for none. Returns 0, -EINVAL, or -EIO. */
int metrics_family(FILE *out, enum metrics_format fmt, const char *name,
		   enum metrics_type type, const char *help, const char *unit);

/* One sample line: name{k1="v1",...} value. labels is NULL or an array of
 * key, value, key, value, ..., NULL; keys match [a-zA-Z_][a-zA-Z0-9_]*,
 * values are any UTF-8 (backslash, double quote and newline are escaped).
 * Integral values print as integers, exact up to 2^63; others with as few
 * digits as read back to the same double (at most 17); NaN, +Inf, -Inf as
 * both formats spell them. Returns 0, -EINVAL, or -EIO. */
int metrics_sample(FILE *out, const char *name, const char *const *labels,
		   double value);

/* The samples of one histogram (a family opened with METRICS_HISTOGRAM):
 *   name_bucket{labels...,le="X"} cum[i]   for each of the n bounds le[i]
 *   name_bucket{labels...,le="+Inf"} count
 *   name_count{labels...} count
 *   name_sum{labels...} sum
 * the same in both formats. le[] are finite, from 0 up, strictly
 * increasing, without +Inf (written here); cum[i] counts the observations
 * at most le[i], non-decreasing and at most count (all observations).
 * Each bound is spelt as OpenMetrics' canonical numbers ask, in both
 * formats so a series keeps its name whatever the scraper negotiates:
 * 1e-07, 2e-07, ... 0.0001, 0.01, 1.0, 100000.0, 1e+06. Give bounds as
 * literals (2e-07, not 2 * 1e-07 computed in a loop that drifts), since
 * each is written with the digits that read back its exact double. sum
 * is the sum of the observations, not NaN and not negative (OpenMetrics
 * treats it as a counter: a caller that can observe negative values
 * clamps or counts them apart). labels as metrics_sample(), without "le".
 * Returns 0, -EINVAL (nothing written), or -EIO. */
int metrics_histogram(FILE *out, const char *name, const char *const *labels,
		      const double *le, const uint64_t *cum, unsigned n,
		      uint64_t count, double sum);

/* The number as metrics_sample() writes it; buf holds at least 32 bytes. */
void metrics_format_value(char *buf, double value);

#endif
