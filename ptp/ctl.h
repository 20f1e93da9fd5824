/* ctl.h — the control socket of tapless-syncd: a UNIX stream socket where
 * `tapless status` asks one question per connection and reads the answer
 * until the daemon closes.
 *
 * The protocol is one request line ("status json", "status text",
 * "status csv") and the answer as the printer renders it, so the daemon
 * and the client never disagree about a format. The daemon side never
 * blocks: connections are non-blocking, a request must arrive within
 * CTL_TIMEOUT_MS, and the answer is sent as the client takes it.
 */
#ifndef TAPLESS_CTL_H
#define TAPLESS_CTL_H

#include <stdint.h>
#include <stdio.h>

#define CTL_MAX_CLIENTS 8
#define CTL_TIMEOUT_MS 2000
#define CTL_REQUEST_MAX 128

struct ctl;
struct pollfd;

/* The status requests, by enum print_format (text, CSV, JSON). */
extern const char *const ctl_status_requests[3];

/* Write the answer to request into out; return 0, or -EINVAL for a
 * request not understood (the client gets "error: ..." instead). */
typedef int (*ctl_answer_fn)(void *arg, const char *request, FILE *out);

/* Listen on path. A socket file left by a dead daemon is replaced; one a
 * live daemon answers on is not (-EADDRINUSE). Mode 0666: the socket
 * only reports, it changes nothing. */
int ctl_listen(struct ctl **out, const char *path);
/* Fill fds with what to poll; returns how many (at most
 * 1 + CTL_MAX_CLIENTS). */
int ctl_pollfds(const struct ctl *c, struct pollfd *fds, int max);
/* Serve what fds say is ready. */
void ctl_handle(struct ctl *c, const struct pollfd *fds, int n,
		int64_t now_ns, ctl_answer_fn fn, void *arg);
/* Close connections and the listener; unlink the path. */
void ctl_close(struct ctl *c);

/* The client: send request to the daemon at path and copy the answer to
 * out. Returns 0, -errno when the daemon cannot be reached, or -EPROTO
 * when it answered "error: ..." (the message copied to out too). */
int ctl_request(const char *path, const char *request, FILE *out,
		int timeout_ms);

#endif
