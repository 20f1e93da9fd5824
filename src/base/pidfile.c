/* pidfile.c — see pidfile.h. */
#include "base/pidfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/xalloc.h"

/* A holder writes its pid right after it locks: a reader that finds the
 * file empty waits this many times 10 ms for it. */
#define PIDFILE_READ_TRIES 50

struct pidfile {
	int fd;
	char *path;
};

static void pidfile_nap(void)
{
	struct timespec ts = { 0, 10000000 };

	nanosleep(&ts, NULL);
}

/* Parse "PID\nNOTE\n" from fd; 0 when the pid is there. */
static int pidfile_parse(int fd, struct pidfile_holder *h)
{
	char buf[32 + PIDFILE_NOTE_MAX], *end, *nl;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;

	memset(h, 0, sizeof(*h));
	if (n < 0)
		return -errno;
	buf[n] = 0;
	nl = strchr(buf, '\n');
	if (!nl)
		return -EAGAIN;		/* not written yet, or torn */
	*nl = 0;
	pid = strtol(buf, &end, 10);
	if (end == buf || *end || pid <= 0)
		return -EAGAIN;
	h->pid = (pid_t)pid;
	snprintf(h->note, sizeof(h->note), "%.*s", (int)strcspn(nl + 1, "\n"),
		 nl + 1);
	return 0;
}

static void pidfile_read_holder(int fd, struct pidfile_holder *h)
{
	for (int i = 0; i < PIDFILE_READ_TRIES; i++) {
		if (pidfile_parse(fd, h) != -EAGAIN)
			return;
		pidfile_nap();
	}
}

/* The file locked through fd is still the one named path: not unlinked
 * (and perhaps replaced) by a holder letting go meanwhile. */
static int pidfile_same(int fd, const char *path)
{
	struct stat a, b;

	if (fstat(fd, &a))
		return -errno;
	if (stat(path, &b))
		return errno == ENOENT ? 0 : -errno;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int pidfile_take(struct pidfile **out, const char *path, const char *note,
		 struct pidfile_holder *holder)
{
	struct pidfile *p;
	char buf[32 + PIDFILE_NOTE_MAX];
	int fd, rc, len;

	*out = NULL;
	if (holder)
		memset(holder, 0, sizeof(*holder));
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			rc = -errno;
			if (rc == -EWOULDBLOCK && holder)
				pidfile_read_holder(fd, holder);
			close(fd);
			return rc;
		}
		rc = pidfile_same(fd, path);
		if (rc == 1)
			break;
		close(fd);
		if (rc < 0)
			return rc;
		/* Locked a file its holder had just removed: again. */
	}
	len = snprintf(buf, sizeof(buf), "%ld\n%s\n", (long)getpid(),
		       note ? note : "");
	if (len >= (int)sizeof(buf))
		len = (int)sizeof(buf) - 1;
	if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)len, 0) != len) {
		rc = errno ? -errno : -EIO;
		close(fd);
		return rc;
	}
	p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	p->path = xstrdup(path);
	*out = p;
	return 0;
}

int pidfile_holder(const char *path, struct pidfile_holder *holder)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc;

	memset(holder, 0, sizeof(*holder));
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* A shared lock granted: nobody holds an exclusive one. */
	if (!flock(fd, LOCK_SH | LOCK_NB)) {
		close(fd);
		return 0;
	}
	rc = errno == EWOULDBLOCK ? 1 : -errno;
	if (rc == 1)
		pidfile_read_holder(fd, holder);
	close(fd);
	return rc;
}

const char *pidfile_path(const struct pidfile *p)
{
	return p->path;
}

void pidfile_release(struct pidfile *p)
{
	if (!p)
		return;
	/* Still ours while locked: unlink first, so nobody takes the name
	 * between our letting go and the file going away. */
	if (pidfile_same(p->fd, p->path) == 1)
		unlink(p->path);
	close(p->fd);
	free(p->path);
	free(p);
}
