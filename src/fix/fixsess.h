/* fixsess.h — a FIX 4.4 session over one TCP connection: Logon with
 * HeartBtInt, Heartbeat, TestRequest, Logout; MsgSeqNum kept per direction
 * with gaps detected and counted; SenderCompID/TargetCompID checked on
 * every message. Application messages go to the caller's handler.
 *
 * The session does its I/O through the caller's functions, so a probe can
 * send and receive through its stamped, recorded socket (sockcap.h). It
 * never allocates after create: one receive buffer and one send buffer.
 *
 * Protocol errors end the session: a peer sending garbage, a bad checksum,
 * a lying BodyLength, a message over the size limit, a wrong CompID or a
 * MsgSeqNum lower than expected gets a Logout whose Text (58) says why, and
 * fixsess_read() returns -EPROTO with fixsess_error() saying the same with
 * the byte offset in the peer's stream. Gaps (MsgSeqNum higher than
 * expected) are counted and the session goes on: no resend is asked, since
 * a measurement cannot wait for one.
 */
#ifndef TAPLESS_FIXSESS_H
#define TAPLESS_FIXSESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fixsess;
struct fix_msg;
struct fix_writer;

struct fixsess_io {
	/* Like send(2)/recv(2) on a non-blocking socket: bytes, 0 at EOF
	 * (recv), or -errno (-EAGAIN: nothing now). */
	ssize_t (*send)(void *ctx, const void *buf, size_t len);
	ssize_t (*recv)(void *ctx, void *buf, size_t len);
	/* Wait until fd can take more (send) — the session calls it when a
	 * send would block. Returns 0 or -errno. */
	int (*wait_send)(void *ctx, int timeout_ms);
	void *ctx;
};

struct fixsess_config {
	const char *sender;	/* our SenderCompID (49) */
	const char *target;	/* the peer's, our TargetCompID (56) */
	int heartbeat_s;	/* HeartBtInt (108) we send in Logon; 0: 30 */
	size_t max_msg;		/* largest message taken; 0: 8192 */
	bool initiator;		/* we send the first Logon */
	unsigned time_digits;	/* of the second in 52 and 60: 3, 6 or 9;
				 * 0: 3 (ms, as most engines write) */
};

enum fixsess_state {
	FIXSESS_WAIT_LOGON,	/* connected, no Logon exchanged yet */
	FIXSESS_ACTIVE,		/* logged on */
	FIXSESS_LOGOUT_SENT,	/* waiting for the peer's Logout */
	FIXSESS_CLOSED,		/* Logout exchanged, or the peer left */
};

/* Message types counted one by one; anything else is FIXSESS_T_OTHER. */
enum fixsess_type {
	FIXSESS_T_LOGON, FIXSESS_T_HEARTBEAT, FIXSESS_T_TEST_REQUEST,
	FIXSESS_T_LOGOUT, FIXSESS_T_MD_INCR, FIXSESS_T_NEW_ORDER,
	FIXSESS_T_EXEC_REPORT, FIXSESS_T_OTHER, FIXSESS_T_COUNT
};

struct fixsess_stats {
	uint64_t sent[FIXSESS_T_COUNT], received[FIXSESS_T_COUNT];
	uint64_t gaps;		/* times MsgSeqNum jumped ahead */
	uint64_t gap_msgs;	/* messages missing in those jumps */
	uint64_t bytes_in, bytes_out;
};

/* Called for each application message (not Logon, Heartbeat, TestRequest,
 * Logout). m is valid during the call only. A non-zero return stops
 * fixsess_read() and is returned by it. */
typedef int (*fixsess_app_fn)(void *arg, struct fixsess *s,
			      const struct fix_msg *m, int64_t now_ns);

int fixsess_create(struct fixsess **out, const struct fixsess_config *cfg,
		   const struct fixsess_io *io);
void fixsess_destroy(struct fixsess *s);

/* Initiator: send Logon. */
int fixsess_logon(struct fixsess *s, int64_t now_ns);

/* Read what the connection has and handle every whole message. Returns 0,
 * -ECONNRESET when the peer closed (the state says whether after a
 * Logout), -EPROTO after a protocol error (a Logout was sent; close the
 * connection), another -errno from the I/O, or the handler's non-zero. */
int fixsess_read(struct fixsess *s, int64_t now_ns, fixsess_app_fn fn,
		 void *arg);

/* Start an application message: header fields (35, 49, 56, 34, 52) are
 * written; add the body with fix_add_*() on the returned writer, then
 * fixsess_send(). */
struct fix_writer *fixsess_begin(struct fixsess *s, const char *msg_type,
				 int64_t real_ns);
/* Add a UTCTimestamp field (e.g. TransactTime, 60) to the message begun:
 * real_ns, or now when 0. */
void fixsess_add_time(struct fixsess *s, uint32_t tag, int64_t real_ns);

/* Close and send the message begun. Returns 0 or -errno (-EMSGSIZE when it
 * did not fit, -ESHUTDOWN once a Logout was sent or received: nothing
 * follows a Logout, and a TestRequest after ours goes unanswered). */
int fixsess_send(struct fixsess *s, int64_t now_ns);

/* Heartbeats due at now_ns: a Heartbeat when we have been quiet for
 * HeartBtInt, a TestRequest when the peer has, and -ETIMEDOUT when it
 * stays quiet after that. */
int fixsess_tick(struct fixsess *s, int64_t now_ns);

/* Send Logout with text (may be NULL). */
int fixsess_logout(struct fixsess *s, const char *text, int64_t now_ns);

enum fixsess_state fixsess_state(const struct fixsess *s);
/* Why the session ended (a protocol error, the peer closing, no answer
 * to a TestRequest): "" while it has not, kept in a buffer of
 * FIXSESS_ERRBUF bytes. */
#define FIXSESS_ERRBUF 256
const char *fixsess_error(const struct fixsess *s);
void fixsess_stats(const struct fixsess *s, struct fixsess_stats *st);
const char *fixsess_type_name(enum fixsess_type t);
uint64_t fixsess_next_out_seq(const struct fixsess *s);

#endif
