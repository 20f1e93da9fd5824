/* errbuf.h — a library function's error message, for the program to
 * report: the text goes into the caller's buffer (HACKING.md: the library
 * never prints), and the -errno goes back as the return value, in one
 * statement: return errbuf_set(err, errlen, -EINVAL, "...", ...).
 */
#ifndef TAPLESS_ERRBUF_H
#define TAPLESS_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format the message into err (when err is not NULL and errlen is not 0;
 * cut to fit). Returns rc. */
int errbuf_set(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int errbuf_vset(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
