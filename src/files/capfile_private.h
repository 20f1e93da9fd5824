/* capfile_private.h — inside struct cap_reader, shared by capfile.c and the
 * readers (capfile_pcapng.c, capfile_pcap.c, capfile_erf.c). Not for other
 * modules. */
#ifndef TAPLESS_CAPFILE_PRIVATE_H
#define TAPLESS_CAPFILE_PRIVATE_H

#include <stdio.h>

#include "files/capfile.h"
#include "files/pcapng_format.h"

struct cap_reader;

struct cap_ops {
	enum cap_format format;
	int (*open)(struct cap_reader *r);
	int (*next)(struct cap_reader *r, struct cap_packet *pkt);
	void (*close)(struct cap_reader *r);
};

extern const struct cap_ops cap_pcapng_ops;
extern const struct cap_ops cap_pcap_ops;
extern const struct cap_ops cap_erf_ops;

struct cap_reader {
	const struct cap_ops *ops;
	char *path;
	FILE *f;
	uint64_t offset;	/* of the next byte to read */
	bool follow;		/* the file grows: its end is "not yet" */
	char err[CAP_ERRBUF];	/* cap_error(): errors of cap_next() */
	struct cap_stats stats;
	char host[64];		/* recorded host name, "" when none */

	/* Interfaces of every section, in order; a section's ids are
	 * relative to its first entry. */
	struct cap_iface *ifaces;
	uint32_t nifaces, cap_ifaces;
	uint32_t section_first;
	int64_t tsoffset_s[PCAPNG_MAX_IFACES * 4];
	uint8_t tsresol[PCAPNG_MAX_IFACES * 4];

	/* Latest isb_ifdrop of each interface (~0: none seen). */
	uint64_t isb_drop[PCAPNG_MAX_IFACES * 4];

	/* pcapng */
	unsigned char *block;	/* block buffer, grown up to CAP_MAX_BLOCK */
	uint32_t block_cap;
	const unsigned char *blk;	/* the current block: in block, or
					 * in map */
	unsigned char *map;	/* the whole file, read in place; NULL: stdio */
	uint64_t map_len, map_dropped;	/* bytes mapped; [0, dropped)
					 * let go (cap_map_drop()) */
	bool big;		/* section written big-endian */

	/* pcap */
	void *pcap;		/* pcap_t */

	/* ERF (r->block holds the current record) */
	uint64_t erf_records;	/* records read, for messages */
	uint8_t erf_iface[8];	/* 1 + cap_iface id of each ERF interface,
				 * 0 while it has not been seen */

	/* Tap stamps (cap_set_tapfmt()): the format, its state, whether a
	 * packet was read yet, the frames read ahead to detect it, and room
	 * for a frame a header was cut out of. */
	enum tapfmt_kind tap;
	const struct tapfmt_ops *tap_ops;
	void *tap_state;
	bool started;
	uint64_t records;		/* packets the format read, for messages */
	struct cap_ahead *ahead;
	unsigned nahead, next_ahead;
	int ahead_end;			/* what the reader said after them */
	unsigned char *ahead_buf;
	size_t ahead_len;
	unsigned char *cut;
	size_t cut_cap;
	char warning[CAP_ERRBUF];
};

/* A packet read ahead while detecting the tap format; its data is at
 * data_off in ahead_buf. */
struct cap_ahead {
	struct cap_packet pkt;
	size_t data_off;
};

/* Set r->err to "PATH: offset OFF: fmt..." and return -EBADMSG. */
/* (Following a growing file, a read that ends early is not an error: the
 * reader goes back to the block's start and returns -EAGAIN instead.) */
int cap_fail(struct cap_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ERF has no magic number: true when the n bytes at p (the file's start)
 * begin with what looks like ERF records — a known record type, lengths
 * that can hold its headers, reserved flags clear, a time after 1970 — up
 * to the first that is not PAD (filler), which must lie within the n.
 * CAP_ERF_PROBE bytes hold the largest PAD record and the header after. */
#define CAP_ERF_PROBE (65535 + 16)
bool cap_erf_probe(const unsigned char *p, size_t n);

/* A new interface slot (the table grows, bounded by PCAPNG_MAX_IFACES*4). */
struct cap_iface *cap_add_iface(struct cap_reader *r, uint32_t *id);

#endif
