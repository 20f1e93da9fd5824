/* preload.c — see preload.h. */
#include "base/preload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int preload_first(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(lib);
	char *v;
	int rc;

	if (lib[0] != '/' || strpbrk(lib, ": \t")) {
		errno = EINVAL;
		return -1;
	}
	if (old) {
		for (const char *p = old; *p;) {
			size_t k = strcspn(p, ": \t");

			if (k == n && !strncmp(p, lib, n))
				return 0;
			p += k;
			p += strspn(p, ": \t");
		}
	}
	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	v = malloc(n + strlen(old) + 2);
	if (!v)
		return -1;
	sprintf(v, "%s:%s", lib, old);
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}
