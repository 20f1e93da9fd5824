/* wholefile.c — files under their final name only when whole
 * (wholefile.h). */
#include "base/wholefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xalloc.h"

static void wholefile_names(struct wholefile *w, const char *path)
{
	size_t n = strlen(path);
	struct stat st;

	w->path = xstrdup(path);
	/* stat(), not lstat(): /dev/stdout is a link to what it is. */
	w->direct = !stat(path, &st) && (S_ISCHR(st.st_mode) ||
		    S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
		    S_ISSOCK(st.st_mode));
	if (w->direct) {
		w->tmp = xstrdup(path);
	} else {
		w->tmp = xmalloc(n + sizeof(".part"));
		memcpy(w->tmp, path, n);
		memcpy(w->tmp + n, ".part", sizeof(".part"));
	}
	w->f = NULL;
	w->fd = -1;
}

int wholefile_open(struct wholefile *w, const char *path)
{
	wholefile_names(w, path);
	w->f = fopen(w->tmp, "w");
	if (!w->f)
		return -errno;
	w->fd = fileno(w->f);
	return 0;
}

int wholefile_open_fd(struct wholefile *w, const char *path)
{
	wholefile_names(w, path);
	w->fd = w->direct ? open(w->tmp, O_WRONLY | O_CLOEXEC) :
		open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	return w->fd < 0 ? -errno : 0;
}

int wholefile_end(struct wholefile *w, enum wholefile_end how, int err)
{
	bool keep = how != WHOLEFILE_DISCARD;

	if (w->fd >= 0) {
		if (w->f) {
			errno = 0;	/* a write error may leave none */
			if ((fflush(w->f) || ferror(w->f)) && !err)
				err = errno ? -errno : -EIO;
		}
		/* The data must be on disk before the name says it is
		 * whole. (A device or a pipe has no disk, nor a .part.) */
		if (!err && keep && !w->direct && fsync(w->fd))
			err = -errno;
		if ((w->f ? fclose(w->f) : close(w->fd)) && !err)
			err = -errno;
		if (!err && keep && !w->direct && rename(w->tmp, w->path))
			err = -errno;
		if (!w->direct && (!keep || (err && how != WHOLEFILE_KEEP_PART)))
			unlink(w->tmp);
	}
	free(w->path);
	free(w->tmp);
	w->f = NULL;
	w->fd = -1;
	w->path = w->tmp = NULL;
	return err;
}

int wholefile_close(struct wholefile *w, bool discard)
{
	return wholefile_end(w, discard ? WHOLEFILE_DISCARD : WHOLEFILE_RENAME,
			     0);
}
