/* chttp.h — ClickHouse's HTTP interface, through libcurl: a statement
 * with an optional body (the rows of an INSERT), its answer, and what a
 * failure means for whoever sends it: try again later (the server is down,
 * restarting, overloaded) or give up (wrong credentials, no such table, a
 * statement the server refuses).
 */
#ifndef TAPLESS_CHTTP_H
#define TAPLESS_CHTTP_H

#include <stdbool.h>
#include <stddef.h>

struct chttp;
struct record_buf;

#define CHTTP_ERRBUF 512
/* The most of a server's answer kept: 1 MiB. ClickHouse answers an
 * INSERT with nothing, DESCRIBE TABLE with a few kilobytes, an error with
 * a line or a stack trace; more than this is not an answer we asked for
 * (a wrong URL, a proxy's page, a server gone astray), and holding it all
 * would let whatever is at the URL fill our memory. */
#define CHTTP_ANSWER_MAX (1024 * 1024)

/* url: http[s]://[USER[:PASSWORD]@]HOST:PORT/. user and password (or
 * NULL) take precedence over the URL's. Returns 0 or -EINVAL (a URL curl
 * cannot take), with err. Nothing is sent yet. */
int chttp_create(struct chttp **out, const char *url, const char *user,
		 const char *password, char err[CHTTP_ERRBUF]);
void chttp_destroy(struct chttp *h);

/* The URL without its credentials, for messages. */
const char *chttp_where(const struct chttp *h);

/* Whether a password goes to the server in clear: there is one (not
 * empty), and the URL is http://, not https:// (basic authentication is the password in
 * base64, read by anyone on the path). */
bool chttp_password_in_clear(const struct chttp *h);

/* POST sql (in the URL's query) with body[0..len) (NULL: none). The
 * answer's body goes to resp (reset first; may be NULL), its first
 * CHTTP_ANSWER_MAX bytes at most. Returns 0, or with err saying what the
 * server (or the network) said:
 *   -EAGAIN  worth trying again: no connection, a timeout, a server error
 *            that passes (too many parts, memory, a restart)
 *   -EACCES  the credentials were refused, or the user may not do this
 *   -ENOENT  no such table or database
 *   -EINVAL  the server refused the statement or its data for good
 *   -EMSGSIZE the answer was longer than CHTTP_ANSWER_MAX: the transfer
 *            was cut there, err names the limit and the answer's first
 *            line (resp holds what came before the cut) */
int chttp_post(struct chttp *h, const char *sql, const void *body,
	       size_t len, struct record_buf *resp, char err[CHTTP_ERRBUF]);

#endif
