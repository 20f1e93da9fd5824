/* pp_private.h — tapless-pingpong's insides, shared by its files and by
 * nobody else; the program's interface is tapless-pingpong(1).
 *
 *   pingpong.c   options, the checks between them, signals, main: runs
 *                the server or the client
 *   pp_wire.c    the wire format: encoding and decoding a message;
 *                addresses, socket names, the interface of an address
 *   pp_ep.c      one end of the conversation (struct pp_ep): its stamps,
 *                its sockcap and --write file, sending, receiving whole
 *                messages, TX records
 *   pp_client.c  the client: pings, the slots that collect each message's
 *                parts, the samples, the report
 *   pp_server.c  the server: echoes, the TX stamps it owes, FIN, the report
 *
 * Both roles own a struct pp_ep; it hands each TX record back to the
 * role's callback (pp_record_fn) with the send it belongs to.
 */
#ifndef TAPLESS_PINGPONG_PRIVATE_H
#define TAPLESS_PINGPONG_PRIVATE_H

#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "stamp/ts.h"	/* struct ts_stamp, ts_tx_record, enum ts_stage */

struct opts;
struct pcapng_writer;
struct printer;
struct sockcap;
struct ts_sock;

/* ---- wire format ------------------------------------------------------
 *
 * Every message starts with this 64-byte header, big-endian; the rest of a
 * ping is filler the pong echoes. Stamps are nanoseconds since the epoch of
 * their clock (UTC for software stamps and application times, the PHC's for
 * hardware stamps), 0 when there is none; a 32-bit difference of INT32_MIN
 * is none.
 *
 *   0  u32 magic "TLPP"          32 i64 srv_rx_hw   hardware RX of seq
 *   4  u16 len (whole message)   40 i64 prev_send   app send of pong prev_seq
 *   6  u8  kind                  48 i64 prev_sw_tx  its software TX stamp
 *   7  u8  flags                 56 i64 prev_hw_tx  its hardware TX stamp
 *   8  u32 seq
 *  12  u32 prev_seq              (pongs only; zero in pings)
 *  16  i64 srv_recv     server application receive of seq (UTC)
 *  24  i32 srv_rx_sw  - srv_recv (software RX stamp of seq)
 *  28  i32 prev_sched - prev_send (TX_SCHED stamp of pong prev_seq)
 */
#define PP_MAGIC 0x544c5050u
#define PP_HDR 64
#define PP_MIN_SIZE 64
#define PP_MAX_UDP 1472
#define PP_MAX_TCP 2048
#define PP_NONE32 INT32_MIN

enum pp_kind { PP_PING = 1, PP_PONG = 2, PP_FIN = 3, PP_FIN_ACK = 4 };

enum {
	PP_F_STAMPS = 0x01,	/* the server stamps: srv_* are meant */
	PP_F_HW = 0x02,		/* ... with hardware stamps */
	PP_F_PREV = 0x04,	/* prev_* carry the stamps of pong prev_seq */
	PP_F_LAST = 0x08,	/* FIN_ACK: the last one */
};

struct pp_msg {
	uint16_t len;
	uint8_t kind, flags;
	uint32_t seq, prev_seq;
	int64_t srv_recv, srv_rx_sw, srv_rx_hw;
	int64_t prev_send, prev_sched, prev_sw_tx, prev_hw_tx;
};

/* Limits. */
#define PP_MAX_MESSAGES 5000000	/* samples kept per quantity */
#define PP_GROW_FIRST 65536	/* --duration: first sample array size */
#define PP_SLOTS 4096		/* client: messages awaiting their parts */
#define PP_SENT 65536		/* sends awaiting their TX record (= window) */
#define PP_REPORTS 256		/* server: TX stamps waiting for a pong */
#define PP_RBUF 4096
#define PP_DRAIN_NS (100 * 1000 * 1000LL)	/* beyond --tx-timeout */

/* Exit status: 0 done, 1 usage or a peer that broke the protocol, 2 a
 * system error. */
enum { PP_OK = 0, PP_USAGE = 1, PP_SYSTEM = 2 };

/* Set by SIGINT and SIGTERM (pingpong.c): the run ends cleanly. */
extern volatile sig_atomic_t pp_stop;

/* ---- one end of the conversation ---------------------------------------- */

/* A send awaiting its TX record. */
struct pp_sent {
	uint64_t cookie;
	uint32_t seq;
	uint8_t kind;
};

typedef void (*pp_record_fn)(void *arg, const struct ts_tx_record *rec,
			     const struct pp_sent *sent);

struct pp_ep {
	int fd;
	bool tcp;
	size_t max;		/* largest message accepted */
	struct ts_sock *ts;	/* NULL: --no-stamps */
	int64_t tx_timeout_ns;	/* --tx-timeout */
	bool hw;		/* hardware stamps */
	char ifname[IF_NAMESIZE];
	char local[64], peer[64];

	uint8_t *rbuf;
	size_t rhave, mlen;	/* bytes buffered; length of the message */
	struct ts_stamp st[2];	/* stamps of the last recv */
	int nst;
	int64_t recv_real, recv_mono;	/* just after the last recv */
	uint64_t rx_off;	/* bytes received */

	/* With stamps, sends and receives go through sockcap: it hands
	 * every TX record back (pp_record) for the figures and, with
	 * --write, writes each message as a frame into w. */
	struct sockcap *sc;
	struct pp_sent *sent;	/* PP_SENT */
	pp_record_fn on_record;
	void *arg;

	struct pcapng_writer *w;	/* --write */
	const char *wpath;
	/* --write: received frames are written when their message is
	 * consumed, after the answer to it is sent; the client first writes
	 * the frames of sends finished by then, to keep the file in time
	 * order as far as the stamps are. */
	bool records_first;
};

/* pp_wire.c */
void pp_encode(uint8_t *b, const struct pp_msg *m);
int pp_decode(const uint8_t *b, size_t n, bool stream, size_t max,
	      struct pp_msg *m, const char **why);
int pp_parse_addr(const char *opt, const char *spec,
		  struct sockaddr_storage *ss, socklen_t *len);
void pp_sock_names(int fd, char *local, char *peer, size_t len);
void pp_iface_of(int fd, char name[IF_NAMESIZE]);

/* pp_ep.c */
int64_t pp_stamp(const struct ts_stamp *st, int n, enum ts_stage stage);
void pp_ep_init(struct pp_ep *ep, int fd, bool tcp, size_t max);
void pp_ep_free(struct pp_ep *ep);
int pp_ep_stamps(struct pp_ep *ep, const struct opts *o);
enum ts_stage pp_rx_stage(const struct pp_ep *ep);
int pp_cap_open(struct pp_ep *ep, const char *path);
int pp_cap_close(struct pp_ep *ep);
void pp_cap_print(struct printer *p, const struct pp_ep *ep,
		  const char *fmt);
void pp_records(struct pp_ep *ep, int64_t now_ns);
void pp_drain(struct pp_ep *ep);
int pp_send(struct pp_ep *ep, const uint8_t *buf, size_t len,
	    uint32_t seq, uint8_t kind);
int pp_recv(struct pp_ep *ep, struct pp_msg *m, const char **why);
void pp_consume(struct pp_ep *ep);
void pp_timeout(int fd, long long ms);

/* pp_client.c, pp_server.c: run the role; the exit status. */
int pp_client(const struct opts *o);
int pp_server(const struct opts *o);

#endif
