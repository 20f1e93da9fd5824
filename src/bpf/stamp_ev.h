/* stamp_ev.h — what the BPF stamping program (stamp.bpf.c) hands to
 * bpfstamp.c: one record per stamp through a BPF ring buffer, and one per
 * armed connection through the TCP iterator. Both sides compile this
 * header: the program against vmlinux.h, user space against the uapi
 * types. Field order keeps every member naturally aligned, so both sides
 * agree on the layout without packing.
 */
#ifndef TAPLESS_STAMP_EV_H
#define TAPLESS_STAMP_EV_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The most cgroups one program serves (capd --stamp-cgroup, repeated). */
#define STAMP_MAX_CGROUPS 16
/* The deepest cgroup (levels below the root) the iterator looks through. */
#define STAMP_MAX_DEPTH 64

/* Which stamp of a send: the values of enum txsock_stage (txsock.h),
 * which bpfstamp.c checks at build time. */
enum {
	STAMP_STAGE_SND = 0,
	STAMP_STAGE_SCHED = 1,
	STAMP_STAGE_ACK = 2,
};

enum {
	STAMP_EV_HW = 1 << 0,	/* ts is the NIC's stamp, not system time */
};

/* One stamp of one send (the kernel keys it by the send's last byte). */
struct stamp_ev {
	__u64 ts;		/* TAI ns (software), or the NIC's stamp */
	__u32 seq;		/* sequence number of the stamped byte */
	__u32 ifindex;		/* device of SND stamps; 0 for others */
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 stage;		/* STAMP_STAGE_* */
	__u16 sport, dport;	/* host order */
	__u8 src[16], dst[16];	/* network order; IPv4 in the first 4 */
	__u32 flags;		/* STAMP_EV_* */
	__u32 pad;
};

/* One connection the iterator found in a chosen cgroup that was up
 * before the program was attached. */
struct stamp_conn {
	__u16 family;
	__u16 state;		/* TCP_ESTABLISHED, ... */
	__u16 sport, dport;	/* host order */
	__u8 src[16], dst[16];
	__s32 err;		/* what bpf_setsockopt said: 0 armed */
	__u32 pad;
};

/* Counters, one set per CPU (indices of the stats map). */
enum {
	STAMP_ST_ARMED,		/* connections armed on establishment */
	STAMP_ST_ARM_FAILED,	/* ... that the kernel refused */
	STAMP_ST_SENDS,		/* sends asked to be stamped */
	STAMP_ST_SEND_FAILED,	/* ... that the kfunc refused */
	STAMP_ST_STAMPS,	/* records written to the ring */
	STAMP_ST_RING_FULL,	/* records lost: ring buffer full */
	STAMP_ST_MAX,
};

#endif
