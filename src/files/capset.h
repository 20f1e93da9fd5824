/* capset.h — several capture files read as one stream in time order: a
 * directory of rotated files from one host, or a list of files.
 *
 * Each file keeps its own reader; a heap picks the earliest next packet, so
 * memory is one block buffer per file, not the captures' length. Packets of
 * one file keep their order; across files they are merged by timestamp (for
 * rotated files of one host that is the order they were captured in).
 * Files named *.part (a capture still being written, or cut by a crash) are
 * read too: every whole block in them is good.
 */
#ifndef TAPLESS_CAPSET_H
#define TAPLESS_CAPSET_H

#include "files/capfile.h"

struct capset;

/* A packet and where it came from. */
struct capset_packet {
	struct cap_packet pkt;
	unsigned file;		/* index for capset_reader() */
};

/* Open every path: a file, or a directory whose *.pcapng, *.pcap and
 * *.part files are taken in name order. Returns 0, or -errno / -EBADMSG
 * with errbuf naming the path; -ENOENT when a directory holds no capture. */
int capset_open(struct capset **out, const char *const *paths, unsigned n,
		char errbuf[CAP_ERRBUF]);

/* The next packet in time order: 1, 0 at the end of every file, or a
 * negative error (errbuf-style message from capset_error()). A damaged file
 * ends its own stream only: the others go on, and capset_error() keeps the
 * first error. Data stays valid until the next call. */
int capset_next(struct capset *s, struct capset_packet *p);

unsigned capset_files(const struct capset *s);
const struct cap_reader *capset_reader(const struct capset *s, unsigned file);

/* The first error met, "" if none; how many files ended in error. */
const char *capset_error(const struct capset *s);
unsigned capset_damaged(const struct capset *s);

void capset_close(struct capset *s);

#endif
