/* wholefile.c — files under their final name only when whole
 * (wholefile.h). */
#include "base/wholefile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xalloc.h"

int wholefile_open(struct wholefile *w, const char *path)
{
	size_t n = strlen(path);

	w->path = xstrdup(path);
	w->tmp = xmalloc(n + sizeof(".part"));
	memcpy(w->tmp, path, n);
	memcpy(w->tmp + n, ".part", sizeof(".part"));
	w->f = fopen(w->tmp, "w");
	return w->f ? 0 : -errno;
}

int wholefile_close(struct wholefile *w, bool discard)
{
	int err = 0;

	if (w->f) {
		errno = 0;	/* a write error may leave none */
		if (fflush(w->f) || ferror(w->f))
			err = errno ? -errno : -EIO;
		if (!err && fsync(fileno(w->f)))
			err = -errno;
		if (fclose(w->f) && !err)
			err = -errno;
		if (!err && !discard && rename(w->tmp, w->path))
			err = -errno;
		if (err || discard)
			unlink(w->tmp);
	}
	free(w->path);
	free(w->tmp);
	w->f = NULL;
	w->path = w->tmp = NULL;
	return err;
}
