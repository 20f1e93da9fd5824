/* sockcap.h — a stamped socket's traffic as captured frames.
 *
 * An instrumented program (the FIX probes, tsx) sends and receives through a
 * ts_sock; sockcap turns each send, once its TX stamp is in, and each receive
 * into an Ethernet frame (frame.h) with the socket's real addresses and
 * ports and, for TCP, the real sequence numbers, and hands it to:
 * - a pcapng writer the caller owns (the probe's own capture file), and/or
 * - a txsock client (TX frames only), so tapless-capd puts the hardware TX
 *   stamp the packet socket cannot see into the host's capture file.
 *
 * Real TCP sequence numbers come from TCP_REPAIR's queue sequence numbers
 * read once at create (CAP_NET_ADMIN; the socket leaves repair mode at once
 * without a window probe). Without the capability, sequence numbers count
 * from 1 in each direction (as Wireshark's relative numbers do) and
 * sockcap_relative() says so; addresses and ports are real either way.
 *
 * A frame carries what one send() took or one recv() returned: TCP segments
 * the kernel cut or merged are not re-created, and a TCP receive carries the
 * stamp of the last segment it read (the kernel's rule).
 *
 * Sent bytes wait in a ring allocated once until their stamp arrives; a send
 * that finds the ring full is recorded without bytes and counted.
 */
#ifndef TAPLESS_SOCKCAP_H
#define TAPLESS_SOCKCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pcapng_writer;
struct sockcap;
struct pcapng_iface;
struct txsock_client;
struct ts_sock;
struct ts_stamp;
struct ts_tx_record;

/* A TX record sockcap_poll() took, handed on once its frame is out. */
typedef void (*sockcap_record_fn)(void *arg, const struct ts_tx_record *r);

/* Receives whose frames wait for sockcap_flush_rx() (rx_later), at most. */
#define SOCKCAP_RX_LATER 16

struct sockcap_config {
	struct pcapng_writer *w;	/* NULL: no file */
	uint32_t id_tx, id_rx;		/* w's interfaces (sockcap_iface()) */
	struct txsock_client *txsock;	/* NULL: no hand-over */
	uint32_t ifindex;		/* interface for txsock records, 0 */
	size_t ring_bytes;		/* 0: 4 MiB */
	/* For programs that want the stamps of their sends too (figures of
	 * their own): every TX record sockcap_poll() takes, matched to a
	 * send or not, goes to on_record(arg, ...) after its frame. The
	 * record's cookie is sockcap_next_cookie() before its send. */
	sockcap_record_fn on_record;	/* NULL: none */
	void *arg;
	/* A received frame's ACK claims every byte sent before the receive,
	 * not only those whose TX frames are out: for a peer that answers
	 * each message (ping-pong), whose answer proves the request came. */
	bool ack_sent;
	/* Received frames are written by sockcap_flush_rx(), not by
	 * sockcap_recv(): a program answering a message writes them after
	 * the answer is out. The received bytes must stay where
	 * sockcap_recv() put them until then; a receive that finds
	 * SOCKCAP_RX_LATER waiting writes those first. */
	bool rx_later;
};

struct sockcap_stats {
	uint64_t tx_frames;	/* sends written as frames */
	uint64_t rx_frames;	/* receives written as frames */
	uint64_t tx_unstamped;	/* sends whose stamp never came */
	uint64_t rx_unstamped;	/* receives without a stamp */
	uint64_t ring_full;	/* sends whose bytes were not kept */
	uint64_t handed;	/* TX frames given to txsock */
	uint64_t write_errors;	/* pcapng writes that failed */
};

/* Start recording fd, which ts wraps (connected TCP or UDP). Returns 0 or
 * -errno (-ENOTCONN: no peer). */
int sockcap_create(struct sockcap **out, struct ts_sock *ts, int fd,
		   const struct sockcap_config *cfg);
void sockcap_destroy(struct sockcap *sc);

/* The pcapng interface that frames of ts in direction tx/rx belong on:
 * name from ifname (or "sock"), the stamp source of ts, the TX one flagged
 * as stamped by its sender (pcapng_iface.sender). For
 * pcapng_add_iface(). */
void sockcap_iface(const struct ts_sock *ts, const char *ifname, bool tx,
		   struct pcapng_iface *ifc);

/* ts_send() and keep the bytes until their stamp. Same returns. */
ssize_t sockcap_send(struct sockcap *sc, const void *buf, size_t len,
		     int flags);

/* ts_recv() and write the frame. Same returns; stamps and nstamps may be
 * NULL when the caller does not want them. */
ssize_t sockcap_recv(struct sockcap *sc, void *buf, size_t len, int flags,
		     struct ts_stamp *stamps, int *nstamps);

/* Reap TX stamps and write the frames of sends that are complete (now_ns is
 * CLOCK_MONOTONIC; < 0 at shutdown: everything, lost or not). Returns the
 * number of frames written or -errno. */
int sockcap_poll(struct sockcap *sc, int64_t now_ns);

/* poll(2) reported POLLERR on the socket. TX stamps waiting on the error
 * queue raise POLLERR just as a socket error does, so it says nothing by
 * itself: reap the stamps (as sockcap_poll() at now_ns), then read
 * SO_ERROR. Returns 0 when the socket is fine (it was stamps), or the
 * -errno of its pending error, which reading clears: the caller reports
 * it. */
int sockcap_pollerr(struct sockcap *sc, int64_t now_ns);

/* rx_later: write the frames of the receives since the last flush. */
void sockcap_flush_rx(struct sockcap *sc);

/* The cookie the next sockcap_send() gives ts_send(): its TX record's. */
uint64_t sockcap_next_cookie(const struct sockcap *sc);

bool sockcap_relative(const struct sockcap *sc);

/* The sequence numbers of the next byte sent and of the first byte not yet
 * read by the program on a connected TCP socket, through TCP_REPAIR (needs
 * CAP_NET_ADMIN; the socket leaves repair mode without a window probe).
 * Consistent even while data arrives: the unread count is read before and
 * after, and the reading retried until it held still (-EAGAIN after 100
 * tries). For programs that build their own frames. Returns 0 or -errno. */
int sockcap_tcp_seqs(int fd, uint32_t *snd, uint32_t *rcv);
void sockcap_stats(const struct sockcap *sc, struct sockcap_stats *st);

#endif
