/* ctl.h — the control socket of tapless-syncd: a UNIX stream socket where
 * `tapless status` asks one question per connection and reads the answer
 * until the daemon closes.
 *
 * The protocol is one request line ("status json", "status text",
 * "status csv") and the answer as the printer renders it, so the daemon
 * and the client never disagree about a format. The daemon side never
 * blocks: connections are non-blocking, each is closed CTL_TIMEOUT_MS
 * after its accept whether or not its request came and its answer went,
 * and when all CTL_MAX_CLIENTS slots are taken a new connection takes the
 * place of the oldest (one that sent nothing first) at least
 * CTL_EVICT_AGE_MS old, or waits in the kernel's queue until there is
 * one: clients holding connections open cannot lock others out. The
 * client retries a refused or wordless connection a few times within its
 * timeout.
 */
#ifndef TAPLESS_CTL_H
#define TAPLESS_CTL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CTL_MAX_CLIENTS 8
#define CTL_TIMEOUT_MS 2000
#define CTL_REQUEST_MAX 128
#define CTL_EVICT_AGE_MS 250	/* younger connections keep their slot */
#define CTL_TRIES 5		/* client: 50, 100, 200, 400 ms apart */

struct ctl;
struct pollfd;

/* The status requests, by enum print_format (text, CSV, JSON). */
extern const char *const ctl_status_requests[3];

/* Write the answer to request into out; return 0, or -EINVAL for a
 * request not understood (the client gets "error: ..." instead). */
typedef int (*ctl_answer_fn)(void *arg, const char *request, FILE *out);

/* Listen on path. A socket file left by a dead daemon is replaced; one a
 * live daemon answers on is not (-EADDRINUSE). Mode 0660, group gid
 * ((gid_t)-1: the daemon's): who may ask is a group, not every user. */
int ctl_listen(struct ctl **out, const char *path, gid_t gid);
/* Fill fds with what to poll; returns how many (at most
 * 1 + CTL_MAX_CLIENTS). */
int ctl_pollfds(const struct ctl *c, struct pollfd *fds, int max);
/* Serve what fds say is ready. */
void ctl_handle(struct ctl *c, const struct pollfd *fds, int n,
		int64_t now_ns, ctl_answer_fn fn, void *arg);
/* Milliseconds until the first connection's deadline (0: past), -1 when
 * none is open: the longest the caller's poll() may wait. */
int ctl_timeout_ms(const struct ctl *c);
/* Close connections and the listener; unlink the path. */
void ctl_close(struct ctl *c);

/* The client: send request to the daemon at path and copy the answer to
 * out, within timeout_ms in all. A refused connection, or one closed
 * before a word, is tried again (CTL_TRIES in all, backing off). Returns
 * 0, -errno when the daemon cannot be reached (the last try's), or
 * -EPROTO when it answered "error: ..." (the message copied to out too).
 * Never raises SIGPIPE. */
int ctl_request(const char *path, const char *request, FILE *out,
		int timeout_ms);

#endif
