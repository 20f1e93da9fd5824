/* pcapq.h — pcapng packets written on a thread of their own.
 *
 * A program on a latency-critical path (the switch emulator forwarding a
 * frame on its due time) must not wait on write(2), nor on the copy of a
 * block into a writer's buffer while its next frame waits. pcapq takes a
 * packet for a pcapng writer (pcapng.h), copies it into a ring allocated
 * once, and returns; a writer thread started by pcapq_create() takes the
 * packets out in the order they went in and writes them with
 * pcapng_write_packet_id(). One producer thread, one writer thread: the
 * ring is lock-free (a head and a tail, acquire and release), so the
 * producer makes no system call and no allocation per packet.
 *
 * The ring never drops: a producer that finds it full waits until the
 * writer has made room (a disk slower than the traffic for longer than
 * the ring holds), and the wait is counted (pcapq_stats()). The truth is
 * late rather than incomplete.
 *
 * Between pcapq_create() and pcapq_finish() the writer thread owns every
 * writer it was handed: the caller must not touch them (write, flush,
 * close) until pcapq_finish() has returned.
 */
#ifndef TAPLESS_PCAPQ_H
#define TAPLESS_PCAPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "files/pcapng.h"

struct pcapq;

struct pcapq_stats {
	uint64_t packets;	/* taken by pcapq_packet() */
	uint64_t written;	/* written by the writer thread, 0 returned */
	uint64_t failed;	/* pcapng_write_packet_id() refused */
	uint64_t stalls;	/* pcapq_packet() calls that found the ring
				 * full and waited */
	uint64_t peak_bytes;	/* most bytes the ring ever held */
	uint64_t boosts;	/* background writer raised to normal
				 * priority: the ring was half full */
	int error;		/* first write error (-errno), 0: none */
};

/* A ring of at least bytes bytes (rounded up to a power of two, 64 KiB at
 * least) and its writer thread, started with every signal blocked (signals
 * stay the caller's). Returns 0 or -errno (the thread could not start). */
int pcapq_create(struct pcapq **out, size_t bytes);

/* Keep the writer thread off CPU cpu (the one a busy-polling caller pins
 * itself to), when the thread may run elsewhere. Returns 0 or -errno. */
int pcapq_avoid_cpu(struct pcapq *q, int cpu);

/* Run the writer thread at idle priority (SCHED_IDLE): it takes a CPU
 * only when nothing else wants it and gives it up at once to any other
 * thread that wakes, so on a CPU it shares with the producer it never
 * holds a frame back. On CPUs kept busy by other work it would get little
 * time and the ring would fill: once the ring is half full the writer
 * runs at normal priority until it has emptied it (counted, boosts).
 * Returns 0 or -errno. */
int pcapq_background(struct pcapq *q);

/* Queue one packet for pcapng_write_packet_id(w, iface, ts_ns, data,
 * caplen, origlen, dir, packet_id ? &id : NULL); data is copied. Only one
 * thread may call it. Returns 0, or -EMSGSIZE when the packet is larger
 * than the ring can ever hold. */
int pcapq_packet(struct pcapq *q, struct pcapng_writer *w, uint32_t iface,
		 int64_t ts_ns, const void *data, uint32_t caplen,
		 uint32_t origlen, enum pcapng_dir dir, bool packet_id,
		 uint64_t id);

/* The first write error so far (-errno), 0: none. Any thread. */
int pcapq_error(const struct pcapq *q);

/* Write everything queued, stop the writer thread and wait for it. The
 * writers are the caller's again. Returns 0 or the first write error. */
int pcapq_finish(struct pcapq *q);

/* Counters; after pcapq_finish(), final. */
void pcapq_stats(const struct pcapq *q, struct pcapq_stats *st);

/* Finish (if not yet) and free. NULL is ignored. */
void pcapq_destroy(struct pcapq *q);

#endif
