/* unixsend — write standard input to a UNIX stream socket and wait for the
 * peer to close (or 2 s). For tests feeding tapless-capd's TX stamp socket
 * bytes that are not records. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	char buf[4096];
	ssize_t n;
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(a.sun_path)) {
		fprintf(stderr, "usage: unixsend PATH < DATA\n");
		return 1;
	}
	strcpy(a.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "unixsend: %s: %m\n", argv[1]);
		return 2;
	}
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			fprintf(stderr, "unixsend: write: %m\n");
			return 2;
		}
	shutdown(fd, SHUT_WR);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* 0: the peer closed on us, as capd does on a bad stream. */
	n = read(fd, buf, sizeof(buf));
	printf("%s\n", n == 0 ? "closed" : "open");
	return 0;
}
