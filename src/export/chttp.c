/* chttp.c — see chttp.h. One curl handle, kept: its connection is reused
 * from batch to batch (HTTP keep-alive).
 */
#include "export/chttp.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/record.h"
#include "base/xalloc.h"

struct chttp {
	CURL *curl;
	char *base;		/* the URL without its credentials */
	char *where;		/* the same, for messages */
	char *user, *password;
	bool https;
	struct record_buf scratch;
	/* The answer being received (chttp_write()). */
	struct record_buf *answer;
	bool cut;		/* it went over CHTTP_ANSWER_MAX */
};

/* ClickHouse's error codes (its "Code: N" line) that no retry mends: the
 * statement, its data or its table is wrong. The others (too many parts,
 * memory limits, timeouts, a server shutting down) pass. */
static const int chttp_fatal[] = {
	6, 16, 26, 27, 33, 36, 44, 46, 47, 49, 53, 60, 62, 70, 72, 81, 117,
	0
};
/* ... and those that say who may do what. */
static const int chttp_denied[] = { 164, 192, 193, 194, 195, 497, 516, 0 };

static bool chttp_in(const int *list, int code)
{
	for (; *list; list++)
		if (*list == code)
			return true;
	return false;
}

int chttp_create(struct chttp **out, const char *url, const char *user,
		 const char *password, char err[CHTTP_ERRBUF])
{
	static bool inited;
	struct chttp *h;
	char *uu = NULL, *up = NULL, *clean = NULL;
	CURLU *u;

	*out = NULL;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(err, CHTTP_ERRBUF, "'%s': expected http://HOST:PORT/",
			 url);
		return -EINVAL;
	}
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = true;
	}
	/* The credentials come out of the URL: never in a message, and the
	 * options' take precedence over them (libcurl would prefer the
	 * URL's). */
	u = curl_url();
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0)) {
		snprintf(err, CHTTP_ERRBUF, "'%s': not a URL", url);
		curl_url_cleanup(u);
		return -EINVAL;
	}
	curl_url_get(u, CURLUPART_USER, &uu, CURLU_URLDECODE);
	curl_url_get(u, CURLUPART_PASSWORD, &up, CURLU_URLDECODE);
	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &clean, 0) || !clean) {
		snprintf(err, CHTTP_ERRBUF, "'%s': not a URL", url);
		curl_free(uu);
		curl_free(up);
		curl_url_cleanup(u);
		return -EINVAL;
	}
	curl_url_cleanup(u);
	h = xcalloc(1, sizeof(*h));
	h->curl = curl_easy_init();
	if (!h->curl) {
		snprintf(err, CHTTP_ERRBUF, "libcurl could not start");
		curl_free(uu);
		curl_free(up);
		curl_free(clean);
		free(h);
		return -ENOMEM;
	}
	h->https = !strncmp(url, "https://", 8);
	h->base = xstrdup(clean);
	h->where = xstrdup(clean);
	user = user ? user : uu;
	password = password ? password : up;
	h->user = user ? xstrdup(user) : NULL;
	h->password = password ? xstrdup(password) : NULL;
	if (up)
		memset(up, 0, strlen(up));
	curl_free(uu);
	curl_free(up);
	curl_free(clean);
	*out = h;
	return 0;
}

void chttp_destroy(struct chttp *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	free(h->base);
	free(h->where);
	free(h->user);
	if (h->password) {
		memset(h->password, 0, strlen(h->password));
		free(h->password);
	}
	record_buf_free(&h->scratch);
	free(h);
}

const char *chttp_where(const struct chttp *h)
{
	return h->where;
}

bool chttp_password_in_clear(const struct chttp *h)
{
	return h->password && *h->password && !h->https;
}

/* The answer kept up to CHTTP_ANSWER_MAX bytes; past it, what fits is
 * kept (its first line is the error message) and the transfer stopped:
 * curl ends it with CURLE_WRITE_ERROR when we take less than we got. */
static size_t chttp_write(char *p, size_t size, size_t n, void *arg)
{
	struct chttp *h = arg;
	struct record_buf *b = h->answer;
	size_t len = size * n, room = CHTTP_ANSWER_MAX - b->len;

	if (len > room) {
		record_buf_add(b, p, room);
		h->cut = true;
		return 0;
	}
	record_buf_add(b, p, len);
	return len;
}

/* The first line of the server's answer, for an error message. */
static void chttp_said(const struct record_buf *b, char *out, size_t len)
{
	size_t n = strcspn(b->p, "\n");

	if (n >= len)
		n = len - 1;
	memcpy(out, b->p, n);
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "(no message)");
}

int chttp_post(struct chttp *h, const char *sql, const void *body,
	       size_t len, struct record_buf *resp, char err[CHTTP_ERRBUF])
{
	struct record_buf *b = resp ? resp : &h->scratch;
	char *q, *url, said[320];
	long status = 0;
	CURLcode rc;
	int code = 0;

	b->len = 0;
	h->answer = b;
	h->cut = false;
	q = curl_easy_escape(h->curl, sql, 0);
	if (!q) {
		snprintf(err, CHTTP_ERRBUF, "libcurl could not escape a query");
		return -EINVAL;
	}
	url = xmalloc(strlen(h->base) + strlen(q) + 16);
	sprintf(url, "%s%squery=%s", h->base, strchr(h->base, '?') ? "&" : "?", q);
	curl_free(q);
	curl_easy_reset(h->curl);
	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(body ? len : 0));
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, chttp_write);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	/* A batch of a million rows takes a second or two to insert; a
	 * server silent for this long is as good as gone. */
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT, 120L);
	if (h->user)
		curl_easy_setopt(h->curl, CURLOPT_USERNAME, h->user);
	if (h->password)
		curl_easy_setopt(h->curl, CURLOPT_PASSWORD, h->password);
	rc = curl_easy_perform(h->curl);
	free(url);
	/* The answer as a string (for sscanf()), the NUL not counted. */
	record_buf_add(b, "", 1);
	b->len--;
	if (h->cut) {
		chttp_said(b, said, sizeof(said));
		snprintf(err, CHTTP_ERRBUF, "%s: the answer is longer than %d MiB, "
			 "the limit (not ClickHouse's HTTP interface?): %s",
			 h->where, CHTTP_ANSWER_MAX / (1024 * 1024), said);
		return -EMSGSIZE;
	}
	if (rc != CURLE_OK) {
		snprintf(err, CHTTP_ERRBUF, "%s: %s", h->where,
			 curl_easy_strerror(rc));
		return rc == CURLE_URL_MALFORMAT ||
		       rc == CURLE_UNSUPPORTED_PROTOCOL ? -EINVAL : -EAGAIN;
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		return 0;
	chttp_said(b, said, sizeof(said));
	sscanf(b->p, "Code: %d", &code);
	snprintf(err, CHTTP_ERRBUF, "%s: HTTP %ld: %s", h->where, status, said);
	if (status == 401 || status == 403 || chttp_in(chttp_denied, code))
		return -EACCES;
	if (status == 404 || code == 60 || code == 81)
		return -ENOENT;
	if ((status >= 400 && status < 500) || chttp_in(chttp_fatal, code))
		return -EINVAL;
	return -EAGAIN;
}
