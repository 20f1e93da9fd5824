/* bpfstamp.h — TX stamps of every TCP send of chosen cgroups, taken by the
 * kernel for a BPF sock_ops program (Linux >= 6.15), for tapless-capd
 * --stamp-cgroup.
 *
 * The program (stamp.bpf.c) is attached to each cgroup through a BPF link
 * whose only reference is the descriptor held here: when the process ends,
 * however it ends, the kernel detaches it. Connections of the chosen ports
 * are armed as they are established; those already up are armed by
 * bpfstamp_arm_existing(). Every send of an armed connection yields its
 * stamps (the stage a record carries: SCHED, SND — software, or hardware
 * where the NIC stamps — and ACK) as keyed TX stamp records (txsock.h,
 * TXSOCK_F_KEYED): the flow and the TCP sequence number of the send's last
 * byte. Software stamps are CLOCK_REALTIME, as capd's own host stamps;
 * hardware stamps are the NIC's PHC time.
 *
 * Only TCP: the kernel has no BPF stamping path for UDP (6.18).
 *
 * This folder is not part of libtapless.a: the loader needs libbpf, which
 * only programs that stamp cgroups link (capd). bpfstamp_check() needs no
 * libbpf and is linked into the tapless CLI too.
 */
#ifndef TAPLESS_BPFSTAMP_H
#define TAPLESS_BPFSTAMP_H

#include <stddef.h>
#include <stdint.h>

#include "files/frame.h"

struct bpfstamp;
struct txsock_rec;

/* Room for any bpfstamp_*() message: a path or a port list, the reason,
 * and libbpf's or the kernel's words. */
#define BPFSTAMP_ERRBUF 512

/* Whether this host can stamp cgroups: 0, or -errno with the reason in err
 * (a sentence naming what is missing: built without BPF, no kernel BTF,
 * a kernel older than 6.15, no cgroup v2, missing capabilities). */
int bpfstamp_check(char err[BPFSTAMP_ERRBUF]);

/* Parse a list of ports and ranges ("9001,9100-9199") into ports (room
 * for 65535; duplicates once) and *n. Returns 0, or -EINVAL with err
 * naming the byte where it goes wrong. */
int bpfstamp_parse_ports(const char *list, uint16_t *ports, unsigned *n,
			 char err[BPFSTAMP_ERRBUF]);

/* One stamp, as a keyed record (r->key); valid during the call only. */
typedef void (*bpfstamp_fn)(void *arg, const struct txsock_rec *r);

struct bpfstamp_config {
	const uint16_t *ports;	/* stamp connections with one end on these
				 * ports; NULL: every TCP connection */
	unsigned n_ports;
	size_t ring_bytes;	/* ring buffer: 0 → 4 MiB; a power of two
				 * of at least a page */
	bpfstamp_fn on_stamp;
	void *arg;
};

/* Load the program. Returns 0, or -errno with a message in err (the
 * kernel's or libbpf's reason where there is one). */
int bpfstamp_open(struct bpfstamp **out, const struct bpfstamp_config *cfg,
		  char err[BPFSTAMP_ERRBUF]);

/* Attach to the cgroup v2 directory path (and so to everything below it).
 * At most BPFSTAMP_MAX_CGROUPS. Returns 0, or -errno with a message. */
#define BPFSTAMP_MAX_CGROUPS 16
int bpfstamp_attach(struct bpfstamp *b, const char *path,
		    char err[BPFSTAMP_ERRBUF]);

/* A connection that was up before the program was attached. */
struct bpfstamp_conn {
	struct frame_flow flow;
	char text[128];		/* "ADDR:PORT > ADDR:PORT", for logs */
	int state;		/* TCP state: 1 established, 8 close-wait */
	int err;		/* 0: armed; else -errno from the kernel */
};
typedef void (*bpfstamp_conn_fn)(void *arg, const struct bpfstamp_conn *c);

/* Arm the connections of the attached cgroups (and chosen ports) that
 * were established before bpfstamp_attach(), in the caller's network
 * namespace, through a BPF TCP iterator; on_conn is called for each one
 * found. Returns how many were armed, or -errno with a message (the kernel
 * refused the iterator: then none is armed). */
int bpfstamp_arm_existing(struct bpfstamp *b, bpfstamp_conn_fn on_conn,
			  void *arg, char err[BPFSTAMP_ERRBUF]);

/* A descriptor that polls readable once a quarter of the ring buffer is
 * full. The program wakes no reader per stamp (on a VM a wakeup costs the
 * sender about 1.7 µs per stamp): call bpfstamp_consume() on a clock of
 * your own as well, often enough that the ring never fills (4 MiB hold
 * about 58,000 stamps). */
int bpfstamp_fd(const struct bpfstamp *b);

/* Hand every waiting stamp to on_stamp. Returns how many, or -errno. */
int bpfstamp_consume(struct bpfstamp *b);

struct bpfstamp_stats {
	uint64_t armed;		/* connections armed on establishment */
	uint64_t arm_failed;	/* ... that the kernel refused */
	uint64_t sends;		/* sends asked to be stamped */
	uint64_t send_failed;	/* ... that the kernel refused */
	uint64_t stamps;	/* stamps written by the program */
	uint64_t ring_full;	/* stamps lost: ring buffer full */
	uint64_t taken;		/* stamps handed to on_stamp */
	uint64_t bad;		/* records of no known stage or family */
};

/* Read the counters (summed over CPUs). Returns 0 or -errno. */
int bpfstamp_stats(const struct bpfstamp *b, struct bpfstamp_stats *st);

/* Detach from every cgroup and unload. */
void bpfstamp_close(struct bpfstamp *b);

#endif
