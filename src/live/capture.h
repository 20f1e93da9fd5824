/* capture.h — capture one interface's frames with libpcap (TPACKET_V3), with
 * the best stamps the host has, and say which.
 *
 * Two libpcap handles per interface, one per direction, because the two get
 * different stamps: received frames carry the NIC's hardware stamp (raw PHC
 * time, PCAP_TSTAMP_ADAPTER_UNSYNCED — PCAP_TSTAMP_ADAPTER would silently
 * give software stamps on current kernels) when the interface has a PHC;
 * sent frames are looped to packet sockets before the NIC stamps them, so
 * they only ever carry the host's software stamp. Each direction therefore
 * has its own stamp source, and its own pcapng interface.
 *
 * The stamp source is chosen by an ops struct (capture_hw.c, capture_sw.c):
 * hardware when asked or when AUTO finds a PHC, else software.
 */
#ifndef TAPLESS_CAPTURE_H
#define TAPLESS_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "files/pcapng.h"
#include "stamp/ts.h"

struct capture;

#define CAPTURE_ERRBUF 512

/* Offloads that make a capture see super-frames instead of wire frames. */
enum {
	CAPTURE_OFF_TSO = 1 << 0,
	CAPTURE_OFF_GSO = 1 << 1,
	CAPTURE_OFF_GRO = 1 << 2,
	CAPTURE_OFF_LRO = 1 << 3,
};

struct capture_config {
	const char *ifname;
	enum ts_mode mode;
	uint32_t snaplen;	/* 0: 262144 */
	uint32_t buffer_kib;	/* kernel ring per handle; 0: 32768 */
	const char *filter;	/* BPF expression, NULL or "": everything */
	bool promisc;
	int timeout_ms;		/* ring block timeout; 0: 100 */
};

enum capture_dir { CAPTURE_IN, CAPTURE_OUT };

struct capture_info {
	bool hw;		/* received frames carry hardware stamps */
	int phc;		/* their PHC, -1 */
	int rx_filter;		/* HWTSTAMP_FILTER_* in force, -1 unknown */
	bool rx_narrow;		/* hw, but the NIC does not stamp every frame */
	/* libpcap wrote TX stamping "on" over a one-step mode (ptp4l's) and
	 * it could not be put back: HWTSTAMP_TX_* it was and is; else -1. */
	int tx_was, tx_left;
	unsigned offloads;	/* CAPTURE_OFF_* that are on */
	int linktype;
	uint32_t snaplen;
	struct pcapng_source src[2];	/* per enum capture_dir */
	/* Sent frames come as received (loopback): the kernel hands a
	 * packet socket each looped frame twice, PACKET_OUTGOING then
	 * PACKET_HOST, and libpcap (1.10.3, tcpdump -Q in/out on lo) drops
	 * the outgoing copy, so the CAPTURE_IN handle gets every frame once
	 * and the CAPTURE_OUT handle none. A frame's direction is then only
	 * known from its addresses. */
	bool dir_unknown;
	/* Each handle's ring gets only its direction's frames (the kernel
	 * sorts them): capture_stats() counts per direction. Else (kernels
	 * before 4.20) both rings get every frame and libpcap sorts them:
	 * each handle counts every frame that passed the filter. */
	bool dir_split;
};

struct capture_packet {
	int64_t ts_ns;
	const uint8_t *data;
	uint32_t caplen, len;
	enum capture_dir dir;
};

typedef void (*capture_fn)(void *arg, const struct capture_packet *pkt);

/* Open both handles. Returns 0 or a negative error with err saying what
 * failed, naming the interface. */
int capture_open(struct capture **out, const struct capture_config *cfg,
		 char err[CAPTURE_ERRBUF]);

/* Pollable descriptors of the two handles (readable when frames wait). */
void capture_fds(const struct capture *c, int fds[2]);

/* Hand every waiting frame of both handles to fn without blocking (at most
 * max per handle, 0: no limit). Returns the number handed over, or a
 * negative error (the message in capture_error()). No allocation:
 * data points into the kernel ring and is valid only during the call. */
int capture_dispatch(struct capture *c, int max, capture_fn fn, void *arg);

/* Kernel counters of one direction's handle since open: frames that passed
 * the filter (of that direction with capture_info.dir_split, else of both),
 * and frames dropped for lack of ring space. */
int capture_stats(struct capture *c, enum capture_dir dir, uint64_t *recv,
		  uint64_t *drop);

void capture_info(const struct capture *c, struct capture_info *info);
const char *capture_error(const struct capture *c);
const char *capture_ifname(const struct capture *c);

/* Which of TSO, GSO, GRO, LRO are on (CAPTURE_OFF_*), or -errno. */
int capture_offloads(const char *ifname);

void capture_close(struct capture *c);

#endif
