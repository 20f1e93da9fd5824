/* metrics.h — a tiny localhost-only HTTP server that answers Prometheus
 * scrapes of tapless-syncd, and the helpers that write the exposition text.
 *
 * Off by default: the daemon opens it only when configured with a port. It
 * listens on 127.0.0.1 and, when the host has IPv6, on [::1] (IPV6_V6ONLY),
 * never on any other address: like the chrony and ptp4l exporters, anything
 * beyond the host goes through a proxy the operator chooses (TLS, auth).
 *
 * It lives inside the daemon's one poll() loop and never blocks on a client:
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
 * have to know, so it writes only through metrics_family() and
 * metrics_sample() and passes on the format it is given:
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
};

/* Writes the whole exposition to out in format fmt (through
 * metrics_family() and metrics_sample()), once per request. Returns 0, or
 * -errno to have the client answered 500. */
typedef int (*metrics_render_fn)(FILE *out, enum metrics_format fmt,
				 void *arg);

/* Listen on 127.0.0.1:port and [::1]:port (skipped when the host has no
 * IPv6 or no ::1). Port 0 lets the kernel pick one port for both; see
 * metrics_port(). Returns 0, or -errno: -EINVAL for a port out of range,
 * -EADDRINUSE, -EACCES (a port below 1024 without CAP_NET_BIND_SERVICE). */
int metrics_open(struct metrics **out, int port);

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

/* The number as metrics_sample() writes it; buf holds at least 32 bytes. */
void metrics_format_value(char *buf, double value);

#endif
