/* ts.h — SO_TIMESTAMPING on one socket: enable it, reap TX stamps from the
 * error queue and match them to what was sent, read RX stamps with the data.
 *
 * A struct ts_sock wraps a socket the caller owns. ts_sock_create() picks the
 * stamp source from the configuration and the interface: hardware when the
 * interface has a PHC and hardware modes, software otherwise (mode AUTO), or
 * exactly what was asked (HW, SW). Every stamp it hands back says which stage
 * it was taken at, which clock (PHC index) and which timescale.
 *
 * TX stamps are matched by OPT_ID key: the byte offset of the last byte of a
 * send on TCP, the datagram counter on UDP, the frame counter on a packet
 * socket (AF_PACKET, SOCK_RAW: a switch emulator's port). The caller reports each successful
 * send with ts_tx_sent(); ts_tx_reap() drains the error queue without
 * blocking; ts_tx_next() hands back finished sends in send order, each with the
 * stamps that came and, after tx_timeout_ns, a mark on those that never did.
 * No allocation happens per send: the window of sends awaiting stamps is a
 * ring allocated once.
 *
 * Traps handled here so callers need not know them:
 * - TCP: stamping is enabled only once the socket is connected (the kernel
 *   refuses OPT_ID on LISTEN/CLOSE sockets) — call ts_sock_create() after
 *   connect()/accept(). OPT_ID_TCP (Linux 6.2+) is used when the kernel takes
 *   it; plain OPT_ID counts from snd_una and is wrong by the unsent backlog if
 *   enabled with data in flight, so ts_sock_create() refuses (-EBUSY) to
 *   enable it then.
 * - TCP: one skb carries one stamp request; sends the kernel merges into one
 *   skb yield one stamp, keyed by the last. ts_tx_sent() callers should use
 *   TCP_NODELAY and MSG_EOR (ts_sock_create() sets TCP_NODELAY); any send
 *   still left without a stamp when a later key arrives is given that later
 *   stamp and marked shared in the record, since its bytes left in that skb.
 * - TCP RX: a recvmsg reports the stamp of the last skb it read from.
 * - RX software stamps depend on a kernel-wide switch that the first
 *   stamping socket turns on from a workqueue: packets arriving in the first
 *   moments after ts_sock_create() may carry no stamp. Open receivers before
 *   traffic starts; ts_recv() reports such packets with *nstamps == 0.
 * - Hardware stamps are PHC time (TAI when ptp4l disciplines the PHC);
 *   software stamps are UTC. They are never mixed unmarked.
 */
#ifndef TAPLESS_TS_H
#define TAPLESS_TS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct msghdr;
struct ts_sock;

/* Where along the path a stamp was taken. */
enum ts_stage {
	TS_STAGE_SCHED,		/* TX: entered the packet scheduler (software) */
	TS_STAGE_SW_TX,		/* TX: handed to the driver (software) */
	TS_STAGE_HW_TX,		/* TX: left the NIC (hardware) */
	TS_STAGE_ACK,		/* TX, TCP: acknowledged by the peer (software) */
	TS_STAGE_HW_RX,		/* RX: arrived at the NIC (hardware) */
	TS_STAGE_SW_RX,		/* RX: entered the stack (software) */
	TS_STAGE_COUNT
};

enum ts_source { TS_SOURCE_NONE, TS_SOURCE_SW, TS_SOURCE_HW };

enum ts_timescale {
	TS_SCALE_UNKNOWN,
	TS_SCALE_UTC,		/* CLOCK_REALTIME: software stamps */
	TS_SCALE_PHC,		/* raw PHC time, timescale not known here */
	TS_SCALE_TAI,		/* PHC time known to be TAI (PTP-disciplined) */
};

enum ts_mode { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };

/* One stamp, as parsed from a control message. */
struct ts_stamp {
	int64_t ns;		/* nanoseconds since the epoch of .timescale */
	uint32_t key;		/* TX: OPT_ID key (ee_data); RX: 0 */
	uint32_t ifindex;	/* RX: arrival interface if known, else 0 */
	uint32_t pktlen;	/* RX hardware: length seen by the NIC, else 0 */
	int16_t phc;		/* PHC index of a hardware stamp, else -1 */
	uint8_t stage;		/* enum ts_stage */
	uint8_t timescale;	/* enum ts_timescale */
};

struct ts_config {
	enum ts_mode mode;
	const char *ifname;	/* interface the socket uses; needed for HW */
	unsigned tx_stages;	/* bitmask of 1u << TS_STAGE_{SCHED,SW_TX,ACK}
				 * wanted on TX; the source's own TX stage
				 * (SW_TX or HW_TX) is always added when any
				 * TX stamps are wanted. 0: no TX stamps */
	bool tx;		/* collect TX stamps */
	bool rx;		/* collect RX stamps */
	bool both;		/* HW mode: software stamps as well */
	bool phc_is_tai;	/* hardware stamps are TAI (PHC under PTP) */
	int64_t tx_timeout_ns;	/* a TX stamp not in by then is lost */
	unsigned tx_window;	/* sends awaiting stamps, rounded up to 2^n */
};

/* Counters since ts_sock_create(). */
struct ts_stats {
	uint64_t sends;		/* ts_tx_sent() calls recorded */
	uint64_t records;	/* records handed out by ts_tx_next() */
	uint64_t stamps;	/* TX stamps read from the error queue */
	uint64_t lost[TS_STAGE_COUNT];	/* expected TX stamps that never came */
	uint64_t shared;	/* sends stamped by a later send's stamp */
	uint64_t unmatched;	/* stamps with no pending send (late or stray) */
	/* Per stage, TX stamps that came late: joined to their send though
	 * a later send's stamp of the stage came first (within
	 * tx_timeout_ns), and past it (the send handed out with the stage
	 * lost; the stamp, counted in unmatched too, joined to nothing). */
	uint64_t reordered[TS_STAGE_COUNT];
	uint64_t past_timeout[TS_STAGE_COUNT];
	uint64_t window_full;	/* ts_tx_sent() refused: window full */
};

/* What a ts_sock ended up with, for logs and summaries. */
struct ts_info {
	enum ts_source source;
	int phc;		/* PHC index for HW, else -1 */
	unsigned so_flags;	/* SOF_TIMESTAMPING_* in force */
	bool stream;		/* TCP */
	bool opt_id_tcp;	/* keys from write_seq (Linux 6.2+) */
	unsigned tx_expect;	/* bitmask of TX stages each send expects */
	/* HW: the device's stamping as this socket set it up (SIOCSHWTSTAMP:
	 * HWTSTAMP_TX_*, HWTSTAMP_FILTER_*), for the program to say; -1
	 * when it was already as wanted and was left alone. */
	int hw_set_tx, hw_set_rx;
};

/* Defaults: AUTO, TX and RX on, SW_TX (or HW_TX) only, 200 ms, 65536. */
void ts_config_init(struct ts_config *cfg);

/* Enable stamping on fd (UDP or connected TCP, IPv4 or IPv6, or an
 * AF_PACKET SOCK_RAW socket bound to cfg->ifname's interface). Returns 0,
 * -ENODEV (HW asked, interface has no PHC or no hardware modes), -EBUSY (TCP
 * with unsent data and no OPT_ID_TCP), -ENOTCONN (TCP not connected), or
 * another -errno from the kernel. The caller still owns fd. */
int ts_sock_create(struct ts_sock **out, int fd, const struct ts_config *cfg);
void ts_sock_destroy(struct ts_sock *ts);

/* On a listening TCP socket: switch software RX stamping on now, so the
 * kernel-wide switch (see above) is on before the first connection sends
 * data; accepted sockets inherit it. Still call ts_sock_create() on each
 * accepted socket. Returns 0 or -errno. */
int ts_listen_enable(int fd);

void ts_sock_info(const struct ts_sock *ts, struct ts_info *info);
/* "hardware stamping set to tx on, rx all" into buf when the socket's
 * set-up changed the device (info->hw_set_tx >= 0), for the program to
 * say; else false. */
bool ts_hw_set_text(const struct ts_info *info, char *buf, size_t len);
void ts_sock_stats(const struct ts_sock *ts, struct ts_stats *st);

/* Record a successful send of len bytes (TCP: what send() accepted, which
 * may be less than asked; UDP: one datagram) carrying the caller's cookie.
 * app_ns is the caller's clock just before the send, or 0. Returns 0, or
 * -ENOBUFS when the window is full: reap and take records first. */
int ts_tx_sent(struct ts_sock *ts, uint64_t cookie, size_t len, int64_t app_ns);

/* send() on a connected socket and record it: the usual way to send. On
 * TCP it adds MSG_EOR so no later write is merged into this one's skb. A
 * partial TCP send is recorded for the bytes sent; send the rest with another
 * call. Returns bytes sent or -errno; -ENOBUFS (nothing sent) when the window
 * is full. */
ssize_t ts_send(struct ts_sock *ts, const void *buf, size_t len, int flags,
		uint64_t cookie);

/* Read every stamp waiting on the error queue, without blocking, and match
 * it. Returns the number of stamps read, or -errno. */
int ts_tx_reap(struct ts_sock *ts);

/* Wait up to timeout_ms for stamps on the error queue, then reap. */
int ts_tx_wait(struct ts_sock *ts, int timeout_ms);

/* A send and its TX stamps; ns[stage] is 0 where there is none. */
struct ts_tx_record {
	uint64_t cookie;
	uint64_t first;		/* TCP: stream offset of the first byte;
				 * UDP: datagram number, from 0 */
	uint32_t len;
	uint16_t lost;		/* stages expected and never delivered */
	uint16_t shared;	/* stages taken from a later send's stamp */
	int16_t phc;		/* PHC of the HW_TX stamp, else -1 */
	uint8_t timescale[TS_STAGE_COUNT];
	int64_t app_ns;
	int64_t ns[TS_STAGE_COUNT];
};

/* Hand back the oldest send once all its expected stamps are in, or once it
 * is older than tx_timeout_ns at now_ns (CLOCK_MONOTONIC). With now_ns < 0,
 * hand it back regardless (shutting down). Returns 1 with *rec filled, 0 when
 * nothing is ready. */
int ts_tx_next(struct ts_sock *ts, struct ts_tx_record *rec, int64_t now_ns);

/* Sends still awaiting stamps. */
unsigned ts_tx_pending(const struct ts_sock *ts);

/* recvmsg() with stamps: reads into buf like recv(fd, buf, len, flags) and
 * fills stamps[0..2) with what came with the data (hardware first). Returns
 * the bytes read (0 at EOF) or -errno; *nstamps says how many stamps. */
ssize_t ts_recv(struct ts_sock *ts, void *buf, size_t len, int flags,
		struct ts_stamp stamps[2], int *nstamps);

/* Parse the control messages of a received packet (RX) or of an error queue
 * message (TX). Fills out[0..2) and returns how many stamps it found (0, 1 or
 * 2), or -EBADMSG when a control message is malformed. Pure: no socket
 * needed, so tests feed it constructed buffers. phc goes into hardware
 * stamps; hw_scale is their timescale (TS_SCALE_PHC or TS_SCALE_TAI). */
int ts_parse_rx(const struct msghdr *msg, int phc, enum ts_timescale hw_scale,
		struct ts_stamp out[2]);
int ts_parse_tx(const struct msghdr *msg, int phc, enum ts_timescale hw_scale,
		struct ts_stamp out[2]);

enum ts_source ts_stage_source(enum ts_stage stage);
const char *ts_stage_name(enum ts_stage stage);		/* "sw_tx", ... */
const char *ts_source_name(enum ts_source src);		/* "hw", "sw" */
const char *ts_timescale_name(enum ts_timescale scale);	/* "utc", ... */

/* CLOCK_REALTIME and CLOCK_MONOTONIC in nanoseconds. */
int64_t ts_now_real(void);
int64_t ts_now_mono(void);

/* Probe once whether the running kernel accepts SOF flags (e.g. OPT_ID_TCP):
 * true when setsockopt on a scratch socket of this type takes them. */
bool ts_kernel_accepts(unsigned so_flags, int sock_type);

#endif
