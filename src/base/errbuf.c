/* errbuf.c — see errbuf.h. */
#include "base/errbuf.h"

#include <stdio.h>

int errbuf_vset(char *err, size_t size, int rc, const char *fmt, va_list ap)
{
	if (err && size)
		vsnprintf(err, size, fmt, ap);
	return rc;
}

int errbuf_set(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, size, rc, fmt, ap);
	va_end(ap);
	return rc;
}
