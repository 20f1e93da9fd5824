/* fixsess.c — the FIX session layer; see fixsess.h. */
#include "fix/fixsess.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/errbuf.h"
#include "base/nstime.h"
#include "fix/fix.h"
#include "stamp/ts.h"
#include "base/xalloc.h"

#define FIXSESS_BEGIN "FIX.4.4"

struct fixsess {
	struct fixsess_config cfg;
	struct fixsess_io io;
	enum fixsess_state state;
	char sender[64], target[64];
	uint64_t out_seq, in_seq;	/* next to send, next expected */
	int64_t hb_ns;
	int64_t last_sent, last_recv, test_sent;
	unsigned tests;
	bool test_pending;

	char *rbuf;
	size_t rcap, rhave;
	uint64_t rconsumed;	/* stream offset of rbuf[0] */

	char *wbuf;
	size_t wcap;
	struct fix_writer w;
	enum fixsess_type wtype;

	/* SendingTime: the date and time part changes once a second. */
	struct fix_utc_cache utc;	/* SendingTime's date and time of day */

	struct fix_msg msg;	/* large (an index of 512 fields): kept here */
	struct fixsess_stats st;
	char err[FIXSESS_ERRBUF];	/* fixsess_error() */
};

static const char *const type_codes[FIXSESS_T_COUNT] = {
	[FIXSESS_T_LOGON] = "A", [FIXSESS_T_HEARTBEAT] = "0",
	[FIXSESS_T_TEST_REQUEST] = "1", [FIXSESS_T_LOGOUT] = "5",
	[FIXSESS_T_MD_INCR] = "X", [FIXSESS_T_NEW_ORDER] = "D",
	[FIXSESS_T_EXEC_REPORT] = "8", [FIXSESS_T_OTHER] = NULL,
};

static const char *const type_names[FIXSESS_T_COUNT] = {
	"logon", "heartbeat", "test_request", "logout",
	"md_incremental_refresh", "new_order_single", "execution_report",
	"other",
};

const char *fixsess_type_name(enum fixsess_type t)
{
	return (unsigned)t < FIXSESS_T_COUNT ? type_names[t] : "?";
}

static enum fixsess_type type_of(const char *v, size_t len)
{
	for (int t = 0; t < FIXSESS_T_OTHER; t++)
		if (len == strlen(type_codes[t]) && !memcmp(v, type_codes[t], len))
			return (enum fixsess_type)t;
	return FIXSESS_T_OTHER;
}

int fixsess_create(struct fixsess **out, const struct fixsess_config *cfg,
		   const struct fixsess_io *io)
{
	struct fixsess *s;

	if (!cfg->sender || !cfg->target || !*cfg->sender || !*cfg->target ||
	    strlen(cfg->sender) >= 64 || strlen(cfg->target) >= 64 ||
	    strpbrk(cfg->sender, "\x01=") || strpbrk(cfg->target, "\x01="))
		return -EINVAL;
	s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->io = *io;
	strcpy(s->sender, cfg->sender);
	strcpy(s->target, cfg->target);
	s->cfg.sender = s->sender;
	s->cfg.target = s->target;
	if (!s->cfg.heartbeat_s)
		s->cfg.heartbeat_s = 30;
	if (!s->cfg.max_msg)
		s->cfg.max_msg = 8192;
	s->hb_ns = s->cfg.heartbeat_s * NS_PER_S;
	s->out_seq = s->in_seq = 1;
	/* Twice the largest message: a whole one always fits after a part. */
	s->rcap = 2 * s->cfg.max_msg;
	s->rbuf = xmalloc(s->rcap);
	s->wcap = s->cfg.max_msg + FIX_HEADER_ROOM;
	s->wbuf = xmalloc(s->wcap);
	fix_utc_cache_init(&s->utc);
	*out = s;
	return 0;
}

void fixsess_destroy(struct fixsess *s)
{
	if (!s)
		return;
	free(s->rbuf);
	free(s->wbuf);
	free(s);
}

enum fixsess_state fixsess_state(const struct fixsess *s) { return s->state; }
const char *fixsess_error(const struct fixsess *s) { return s->err; }
void fixsess_stats(const struct fixsess *s, struct fixsess_stats *st) { *st = s->st; }
uint64_t fixsess_next_out_seq(const struct fixsess *s) { return s->out_seq; }

struct fix_writer *fixsess_begin(struct fixsess *s, const char *msg_type,
				 int64_t real_ns)
{
	char t[32];

	fix_utc_time_digits(&s->utc, real_ns ? real_ns : ts_now_real(),
			    s->cfg.time_digits, t);
	fix_begin(&s->w, s->wbuf, s->wcap, FIXSESS_BEGIN, msg_type);
	fix_add_str(&s->w, 49, s->sender);
	fix_add_str(&s->w, 56, s->target);
	fix_add_int(&s->w, 34, (int64_t)s->out_seq);
	fix_add_str(&s->w, 52, t);
	s->wtype = type_of(msg_type, strlen(msg_type));
	return &s->w;
}

void fixsess_add_time(struct fixsess *s, uint32_t tag, int64_t real_ns)
{
	char t[32];

	fix_utc_time_digits(&s->utc, real_ns ? real_ns : ts_now_real(),
			    s->cfg.time_digits, t);
	fix_add_str(&s->w, tag, t);
}

static int send_all(struct fixsess *s, const char *p, size_t len)
{
	while (len) {
		ssize_t n = s->io.send(s->io.ctx, p, len);

		if (n == -EAGAIN || n == -EINTR || n == -ENOBUFS) {
			int err = s->io.wait_send ? s->io.wait_send(s->io.ctx, 1000) : 0;

			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return (int)n;
		p += n;
		len -= (size_t)n;
		s->st.bytes_out += (uint64_t)n;
	}
	return 0;
}

int fixsess_send(struct fixsess *s, int64_t now_ns)
{
	size_t len;
	const char *m = fix_end(&s->w, &len);
	int err;

	if (!m)
		return -EMSGSIZE;
	/* A Logout, ours or the peer's, is the last word on the session:
	 * nothing may follow it (the Logout itself is sent before the state
	 * changes). */
	if (s->state == FIXSESS_LOGOUT_SENT || s->state == FIXSESS_CLOSED)
		return -ESHUTDOWN;
	err = send_all(s, m, len);
	if (err)
		return err;
	s->out_seq++;
	s->st.sent[s->wtype]++;
	s->last_sent = now_ns;
	return 0;
}

static int send_admin(struct fixsess *s, const char *type, int64_t now_ns,
		      uint32_t tag, const char *value)
{
	struct fix_writer *w = fixsess_begin(s, type, 0);

	if (!strcmp(type, "A")) {
		fix_add_int(w, 98, 0);		/* EncryptMethod: none */
		fix_add_int(w, 108, s->cfg.heartbeat_s);
	}
	if (value)
		fix_add_str(w, tag, value);
	return fixsess_send(s, now_ns);
}

int fixsess_logon(struct fixsess *s, int64_t now_ns)
{
	s->last_recv = now_ns;
	return send_admin(s, "A", now_ns, 0, NULL);
}

int fixsess_logout(struct fixsess *s, const char *text, int64_t now_ns)
{
	int err;

	if (s->state == FIXSESS_CLOSED || s->state == FIXSESS_LOGOUT_SENT)
		return 0;
	err = send_admin(s, "5", now_ns, 58, text);
	s->state = FIXSESS_LOGOUT_SENT;
	return err;
}

/* End the session for a protocol error at stream offset off. */
static int proto_error(struct fixsess *s, uint64_t off, int64_t now_ns,
		       const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	errbuf_set(s->err, FIXSESS_ERRBUF, -EPROTO, "byte %llu of the peer's "
		   "stream: %s", (unsigned long long)off, why);
	if (s->state != FIXSESS_CLOSED)
		fixsess_logout(s, why, now_ns);	/* best effort */
	s->state = FIXSESS_CLOSED;
	return -EPROTO;
}

static bool value_is(const char *v, size_t len, const char *want)
{
	return v && len == strlen(want) && !memcmp(v, want, len);
}

/* One whole, checked message at stream offset off. */
static int handle(struct fixsess *s, uint64_t off, int64_t now_ns,
		  fixsess_app_fn fn, void *arg)
{
	const struct fix_msg *m = &s->msg;
	const char *v;
	size_t len;
	int64_t seq;
	enum fixsess_type t;

	if (!fix_is(m, 8, FIXSESS_BEGIN))
		return proto_error(s, off, now_ns, "BeginString (8) is not "
				   FIXSESS_BEGIN);
	v = fix_get(m, 35, &len);
	t = type_of(v, len);
	v = fix_get(m, 49, &len);
	if (!value_is(v, len, s->target))
		return proto_error(s, off, now_ns, "SenderCompID (49) '%.*s', "
				   "expected '%s'", v ? (int)len : 0, v ? v : "",
				   s->target);
	v = fix_get(m, 56, &len);
	if (!value_is(v, len, s->sender))
		return proto_error(s, off, now_ns, "TargetCompID (56) '%.*s', "
				   "expected '%s'", v ? (int)len : 0, v ? v : "",
				   s->sender);
	if (fix_get_int(m, 34, &seq) || seq < 1)
		return proto_error(s, off, now_ns, "MsgSeqNum (34) missing or "
				   "not a positive number");
	if ((uint64_t)seq < s->in_seq && !fix_is(m, 43, "Y"))
		return proto_error(s, off, now_ns, "MsgSeqNum too low, expecting "
				   "%llu but received %lld",
				   (unsigned long long)s->in_seq, (long long)seq);
	if ((uint64_t)seq > s->in_seq) {
		s->st.gaps++;
		s->st.gap_msgs += (uint64_t)seq - s->in_seq;
	}
	if ((uint64_t)seq >= s->in_seq)
		s->in_seq = (uint64_t)seq + 1;
	s->st.received[t]++;
	s->last_recv = now_ns;
	s->test_pending = false;	/* anything heard answers a test */

	if (s->state == FIXSESS_WAIT_LOGON && t != FIXSESS_T_LOGON)
		return proto_error(s, off, now_ns, "first message is not a Logon");
	switch (t) {
	case FIXSESS_T_LOGON: {
		int64_t hb;

		if (s->state != FIXSESS_WAIT_LOGON)
			return proto_error(s, off, now_ns, "Logon on a session "
					   "already logged on");
		if (fix_get_int(m, 108, &hb) || hb < 0 || hb > 3600)
			return proto_error(s, off, now_ns, "Logon without a "
					   "valid HeartBtInt (108)");
		if (!s->cfg.initiator) {
			/* The acceptor takes the initiator's interval. */
			s->cfg.heartbeat_s = hb ? (int)hb : s->cfg.heartbeat_s;
			s->hb_ns = s->cfg.heartbeat_s * NS_PER_S;
			int err = send_admin(s, "A", now_ns, 0, NULL);

			if (err)
				return err;
		}
		s->state = FIXSESS_ACTIVE;
		return 0;
	}
	case FIXSESS_T_HEARTBEAT:
		return 0;
	case FIXSESS_T_TEST_REQUEST:
		/* After our Logout nothing is sent, not even this answer. */
		if (s->state == FIXSESS_LOGOUT_SENT)
			return 0;
		v = fix_get(m, 112, &len);
		if (!v || len > 64)
			return proto_error(s, off, now_ns, "TestRequest without "
					   "a TestReqID (112)");
		{
			char id[65];

			memcpy(id, v, len);
			id[len] = 0;
			return send_admin(s, "0", now_ns, 112, id);
		}
	case FIXSESS_T_LOGOUT:
		if (s->state != FIXSESS_LOGOUT_SENT)
			send_admin(s, "5", now_ns, 0, NULL);
		s->state = FIXSESS_CLOSED;
		return 0;
	default:
		if (s->state == FIXSESS_CLOSED)
			return 0;
		return fn ? fn(arg, s, m, now_ns) : 0;
	}
}

int fixsess_read(struct fixsess *s, int64_t now_ns, fixsess_app_fn fn, void *arg)
{
	for (;;) {
		size_t off = 0;
		ssize_t n;
		int rc = 0;

		if (s->state == FIXSESS_CLOSED)
			return 0;
		n = s->io.recv(s->io.ctx, s->rbuf + s->rhave, s->rcap - s->rhave);
		if (n == -EAGAIN || n == -EINTR)
			return 0;
		if (n < 0)
			return (int)n;
		if (n == 0) {
			if (s->state != FIXSESS_CLOSED)
				errbuf_set(s->err, FIXSESS_ERRBUF, -ECONNRESET,
					   "the peer closed the connection%s%s",
					   s->state == FIXSESS_LOGOUT_SENT ?
					   " without answering our Logout" : "",
					   s->rhave ?
					   " in the middle of a message" : "");
			s->state = FIXSESS_CLOSED;
			return -ECONNRESET;
		}
		s->rhave += (size_t)n;
		s->st.bytes_in += (uint64_t)n;
		while (!rc && off < s->rhave && s->state != FIXSESS_CLOSED) {
			enum fix_error why;
			size_t skip;
			int k = fix_frame(s->rbuf + off, s->rhave - off,
					  s->cfg.max_msg, &skip, &why);

			if (k == 0)
				break;
			if (k < 0)
				return proto_error(s, s->rconsumed + off, now_ns,
						   "%s", fix_error_name(why));
			if (fix_parse(&s->msg, s->rbuf + off, (size_t)k, &why))
				return proto_error(s, s->rconsumed + off, now_ns,
						   "%s", fix_error_name(why));
			rc = handle(s, s->rconsumed + off, now_ns, fn, arg);
			off += (size_t)k;
		}
		memmove(s->rbuf, s->rbuf + off, s->rhave - off);
		s->rhave -= off;
		s->rconsumed += off;
		if (rc)
			return rc;
	}
}

int fixsess_tick(struct fixsess *s, int64_t now_ns)
{
	if (s->state != FIXSESS_ACTIVE)
		return 0;
	if (s->test_pending && now_ns - s->test_sent >= s->hb_ns) {
		errbuf_set(s->err, FIXSESS_ERRBUF, -ETIMEDOUT, "no answer to "
			   "TestRequest in %d s", s->cfg.heartbeat_s);
		fixsess_logout(s, "no answer to TestRequest", now_ns);
		s->state = FIXSESS_CLOSED;
		return -ETIMEDOUT;
	}
	/* The usual allowance: a fifth of the interval for transmission. */
	if (!s->test_pending && now_ns - s->last_recv >= s->hb_ns + s->hb_ns / 5) {
		char id[32];

		snprintf(id, sizeof(id), "TEST%u", ++s->tests);
		s->test_pending = true;
		s->test_sent = now_ns;
		return send_admin(s, "1", now_ns, 112, id);
	}
	if (now_ns - s->last_sent >= s->hb_ns)
		return send_admin(s, "0", now_ns, 0, NULL);
	return 0;
}
