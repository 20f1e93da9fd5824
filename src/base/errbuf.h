/* errbuf.h — a library function's error message, for the program to
 * report: the text goes into the caller's buffer (HACKING.md: the library
 * never prints), and the -errno goes back as the return value, in one
 * statement:
 *
 *	int topo_load(struct topo **out, const char *path,
 *		      char err[TOPO_ERRBUF]);
 *	...
 *	return errbuf_set(err, TOPO_ERRBUF, -EINVAL, "%s:%u: ...", ...);
 *
 * The same call fills the buffer an object keeps for a failure that
 * surfaces later, read with its X_error() (cap_error(): r->err).
 */
#ifndef TAPLESS_ERRBUF_H
#define TAPLESS_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format the message into err, size bytes (a module's X_ERRBUF), cut to
 * fit; nothing when err is NULL or size 0. Returns rc. */
int errbuf_set(char *err, size_t size, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int errbuf_vset(char *err, size_t size, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
