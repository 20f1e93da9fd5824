/* test_chttp.c — ClickHouse's HTTP client (export/chttp.h) against a
 * server of the test's own: a thread on 127.0.0.1, on a port the kernel
 * picks, answering each request as told. An answer over CHTTP_ANSWER_MAX
 * is cut there and is an error naming the limit (with or without a
 * Content-Length, so curl cannot refuse it up front), an answer of
 * exactly the limit is whole, a short error answer is classified and
 * quoted; a password over http:// (not https://, not none) is flagged,
 * and never in the URL shown. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "export/chttp.h"
#include "export/record.h"
#include "unit.h"

/* What the server answers. */
struct fake {
	int ls;
	int port;
	int status;
	size_t body_len;	/* bytes: the first line, then 'x's */
	const char *first;	/* the body's first line */
	int content_length;	/* 1: sent; 0: the body ends at close */
	pthread_t thread;
	size_t sent;		/* bytes of body the client took */
};

/* Read one request's head and its body (Content-Length). */
static int fake_read_request(int c)
{
	char buf[8192];
	size_t got = 0, need = 0;
	char *end = NULL;

	while (!end) {
		ssize_t n = recv(c, buf + got, sizeof(buf) - 1 - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = 0;
		end = strstr(buf, "\r\n\r\n");
	}
	char *cl = strcasestr(buf, "Content-Length:");
	if (cl && cl < end)
		need = strtoul(cl + 15, NULL, 10);
	size_t have = got - (size_t)(end + 4 - buf);
	while (have < need) {
		ssize_t n = recv(c, buf, sizeof(buf), 0);

		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
	return 0;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int c = accept(f->ls, NULL, NULL);
	char head[256], chunk[65536];
	size_t first = strlen(f->first);

	if (c < 0)
		return NULL;
	if (fake_read_request(c)) {
		close(c);
		return NULL;
	}
	if (f->content_length)
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Length: "
			 "%zu\r\nConnection: close\r\n\r\n", f->status, f->body_len);
	else
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nConnection: "
			 "close\r\n\r\n", f->status);
	send(c, head, strlen(head), MSG_NOSIGNAL);
	memset(chunk, 'x', sizeof(chunk));
	/* The first line, then 'x's to body_len; the client may hang up. */
	if (send(c, f->first, first, MSG_NOSIGNAL) == (ssize_t)first) {
		f->sent = first;
		while (f->sent < f->body_len) {
			size_t n = f->body_len - f->sent;
			ssize_t w = send(c, chunk, n < sizeof(chunk) ? n :
					 sizeof(chunk), MSG_NOSIGNAL);

			if (w <= 0)
				break;
			f->sent += (size_t)w;
		}
	}
	close(c);
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(f->ls, 0);
	ck_assert_int_eq(bind(f->ls, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(f->ls, 4), 0);
	ck_assert_int_eq(getsockname(f->ls, (struct sockaddr *)&a, &len), 0);
	f->port = ntohs(a.sin_port);
	ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
	pthread_join(f->thread, NULL);
	close(f->ls);
}

/* One POST to a fake server answering status with body_len bytes. */
static int post_to(struct fake *f, struct record_buf *resp, char *err)
{
	struct chttp *h;
	char url[128], cerr[CHTTP_ERRBUF];
	int rc;

	fake_start(f);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", f->port);
	ck_assert_int_eq(chttp_create(&h, url, NULL, NULL, cerr), 0);
	rc = chttp_post(h, "SELECT 1", "abc", 3, resp, err);
	chttp_destroy(h);
	fake_stop(f);
	return rc;
}

/* 64 times the limit: more than the kernel's socket buffers hold, so a
 * client that stops reading stops the server's sending. */
static void check_cut(int content_length)
{
	struct fake f = {
		.status = 200, .body_len = 64 * (size_t)CHTTP_ANSWER_MAX,
		.first = "a proxy's page\n", .content_length = content_length,
	};
	struct record_buf resp = { 0 };
	char err[CHTTP_ERRBUF];
	int rc = post_to(&f, &resp, err);

	ck_assert_int_eq(rc, -EMSGSIZE);
	ck_assert_msg(strstr(err, "1 MiB"), "the limit not named: %s", err);
	ck_assert_msg(strstr(err, "a proxy's page"), "no first line: %s", err);
	/* Kept up to the limit, no further; the transfer stopped early. */
	ck_assert_uint_eq(resp.len, CHTTP_ANSWER_MAX);
	ck_assert_uint_lt(f.sent, f.body_len);
	ck_assert_int_eq(memcmp(resp.p, "a proxy's page\n", 15), 0);
	record_buf_free(&resp);
}

START_TEST(answer_over_limit_with_length)
{
	check_cut(1);
}
END_TEST

START_TEST(answer_over_limit_until_close)
{
	check_cut(0);
}
END_TEST

START_TEST(answer_at_limit_whole)
{
	struct fake f = {
		.status = 200, .body_len = CHTTP_ANSWER_MAX, .first = "1\n",
		.content_length = 1,
	};
	struct record_buf resp = { 0 };
	char err[CHTTP_ERRBUF];

	ck_assert_int_eq(post_to(&f, &resp, err), 0);
	ck_assert_uint_eq(resp.len, CHTTP_ANSWER_MAX);
	ck_assert_uint_eq(f.sent, f.body_len);
	ck_assert_int_eq(resp.p[resp.len], 0);	/* a string */
	record_buf_free(&resp);
}
END_TEST

/* A short error answer, into the handle's own buffer (resp NULL): its
 * first line in err, its code classified. */
START_TEST(error_answer_quoted)
{
	struct fake f = {
		.status = 500, .first = "Code: 60, e.displayText() = no table\n",
		.content_length = 1,
	};
	char err[CHTTP_ERRBUF];

	f.body_len = strlen(f.first);
	ck_assert_int_eq(post_to(&f, NULL, err), -ENOENT);
	ck_assert_msg(strstr(err, "HTTP 500: Code: 60"), "%s", err);
}
END_TEST

START_TEST(password_in_clear)
{
	struct chttp *h;
	char cerr[CHTTP_ERRBUF];

	ck_assert_int_eq(chttp_create(&h, "http://u:secret@127.0.0.1:1/", NULL,
				      NULL, cerr), 0);
	ck_assert(chttp_password_in_clear(h));
	ck_assert_ptr_null(strstr(chttp_where(h), "secret"));
	chttp_destroy(h);
	ck_assert_int_eq(chttp_create(&h, "http://127.0.0.1:1/", "u", "secret",
				      cerr), 0);
	ck_assert(chttp_password_in_clear(h));
	chttp_destroy(h);
	ck_assert_int_eq(chttp_create(&h, "https://u:secret@127.0.0.1:1/",
				      NULL, NULL, cerr), 0);
	ck_assert(!chttp_password_in_clear(h));
	chttp_destroy(h);
	ck_assert_int_eq(chttp_create(&h, "http://u@127.0.0.1:1/", NULL, NULL,
				      cerr), 0);
	ck_assert(!chttp_password_in_clear(h));
	chttp_destroy(h);
	ck_assert_int_eq(chttp_create(&h, "http://127.0.0.1:1/", "u", "", cerr),
			 0);
	ck_assert(!chttp_password_in_clear(h));
	chttp_destroy(h);
}
END_TEST

static Suite *chttp_suite(void)
{
	Suite *s = suite_create("chttp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, answer_over_limit_with_length);
	tcase_add_test(tc, answer_over_limit_until_close);
	tcase_add_test(tc, answer_at_limit_whole);
	tcase_add_test(tc, error_answer_quoted);
	tcase_add_test(tc, password_in_clear);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chttp_suite)
