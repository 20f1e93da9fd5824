/* chttp.h — ClickHouse's HTTP interface, through libcurl: a statement
 * with an optional body (the rows of an INSERT), its answer, and what a
 * failure means for whoever sends it: try again later (the server is down,
 * restarting, overloaded) or give up (wrong credentials, no such table, a
 * statement the server refuses).
 */
#ifndef TAPLESS_CHTTP_H
#define TAPLESS_CHTTP_H

#include <stddef.h>

struct chttp;
struct record_buf;

#define CHTTP_ERRBUF 512

/* url: http[s]://[USER[:PASSWORD]@]HOST:PORT/. user and password (or
 * NULL) take precedence over the URL's. Returns 0 or -EINVAL (a URL curl
 * cannot take), with err. Nothing is sent yet. */
int chttp_create(struct chttp **out, const char *url, const char *user,
		 const char *password, char err[CHTTP_ERRBUF]);
void chttp_destroy(struct chttp *h);

/* The URL without its credentials, for messages. */
const char *chttp_where(const struct chttp *h);

/* POST sql (in the URL's query) with body[0..len) (NULL: none). The
 * answer's body goes to resp (reset first; may be NULL). Returns 0, or
 * with err saying what the server (or the network) said:
 *   -EAGAIN  worth trying again: no connection, a timeout, a server error
 *            that passes (too many parts, memory, a restart)
 *   -EACCES  the credentials were refused, or the user may not do this
 *   -ENOENT  no such table or database
 *   -EINVAL  the server refused the statement or its data for good */
int chttp_post(struct chttp *h, const char *sql, const void *body,
	       size_t len, struct record_buf *resp, char err[CHTTP_ERRBUF]);

#endif
