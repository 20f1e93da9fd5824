/* stamp.bpf.c — TX stamps of every send of a cgroup's TCP connections,
 * taken by the kernel for BPF (Linux >= 6.15), for tapless-capd
 * --stamp-cgroup. Loaded and attached by bpfstamp.c.
 *
 * A sock_ops program attached to a cgroup sees its TCP sockets' events.
 * On establishment it sets SK_BPF_CB_TX_TIMESTAMPING on the connections
 * of the chosen ports; the kernel then calls it once per send
 * (TSTAMP_SENDMSG_CB), where bpf_sock_ops_enable_tx_tstamp() asks for the
 * stamps of that send's last skb, keyed by the sequence number of its last
 * byte (skb_shinfo(skb)->tskey). Then come SCHED (entering the qdisc),
 * SND_SW (the driver's skb_tx_timestamp) or SND_HW (the NIC's stamp), and
 * ACK: each becomes one stamp_ev in the ring buffer. Nothing reaches the
 * socket's error queue and the application sees nothing.
 *
 * The kernel takes no time itself for BPF: a software stamp is the time
 * the callback runs, read here from CLOCK_TAI (bpf_ktime_get_tai_ns), which
 * is CLOCK_REALTIME plus the kernel's whole-second TAI offset; user space
 * takes that offset back out exactly (bpfstamp.c).
 *
 * Connections already up when the program is attached get no
 * establishment event: the iter/tcp program arms those of the chosen
 * cgroups and ports in the caller's network namespace.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bpf/stamp_ev.h"

/* Macros of the uapi headers, which vmlinux.h does not carry. */
#define AF_INET 2
#define AF_INET6 10
#define SOL_SOCKET 1

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
extern int bpf_sock_ops_enable_tx_tstamp(struct bpf_sock_ops_kern *skops,
					 __u64 flags) __ksym;

/* Set before load: 0 stamps every port, 1 only those set in ports. */
const volatile __u32 port_filter = 0;
/* Set before load: wake the reader once this much waits in the ring. */
const volatile __u64 wake_bytes = 1 << 20;


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} ports SEC(".maps");

/* The cgroups attached to, by id, for the iterator (the sock_ops program
 * runs only in them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STAMP_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by bpfstamp.c */
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAMP_ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		*v += 1;
}

static __always_inline int port_chosen(__u32 sport, __u32 dport)
{
	__u8 *a, *b;

	if (!port_filter)
		return 1;
	a = bpf_map_lookup_elem(&ports, &sport);
	b = bpf_map_lookup_elem(&ports, &dport);
	return (a && *a) || (b && *b);
}

/* Set the TX timestamping flag, keeping any other the socket has. */
static __always_inline int arm(void *ctx)
{
	int flags = 0, err;

	err = bpf_getsockopt(ctx, SOL_SOCKET, SK_BPF_CB_FLAGS, &flags,
			     sizeof(flags));
	if (err)
		return err;
	flags |= SK_BPF_CB_TX_TIMESTAMPING;
	return bpf_setsockopt(ctx, SOL_SOCKET, SK_BPF_CB_FLAGS, &flags,
			      sizeof(flags));
}

static __always_inline void flow_of(struct stamp_ev *e,
				    struct bpf_sock_ops *skops)
{
	e->family = (__u16)skops->family;
	e->sport = (__u16)skops->local_port;
	e->dport = bpf_ntohl(skops->remote_port);
	if (skops->family == AF_INET) {
		__u32 s = skops->local_ip4, d = skops->remote_ip4;

		__builtin_memcpy(e->src, &s, 4);
		__builtin_memcpy(e->dst, &d, 4);
	} else {
		__u32 s[4], d[4];

		s[0] = skops->local_ip6[0];
		s[1] = skops->local_ip6[1];
		s[2] = skops->local_ip6[2];
		s[3] = skops->local_ip6[3];
		d[0] = skops->remote_ip6[0];
		d[1] = skops->remote_ip6[1];
		d[2] = skops->remote_ip6[2];
		d[3] = skops->remote_ip6[3];
		__builtin_memcpy(e->src, s, 16);
		__builtin_memcpy(e->dst, d, 16);
	}
}

static __always_inline void report(struct bpf_sock_ops *skops, __u16 stage)
{
	struct bpf_sock_ops_kern *k = bpf_cast_to_kern_ctx(skops);
	struct sk_buff *skb = k->skb;
	struct skb_shared_info *sh;
	struct stamp_ev *e;
	__u64 ts;

	/* The time first: everything after it is bookkeeping. */
	if (skops->op == BPF_SOCK_OPS_TSTAMP_SND_HW_CB)
		ts = skops->skb_hwtstamp;
	else
		ts = bpf_ktime_get_tai_ns();
	if (!skb)
		return;
	e = bpf_ringbuf_reserve(&ring, sizeof(*e), 0);
	if (!e) {
		stat_inc(STAMP_ST_RING_FULL);
		return;
	}
	sh = bpf_rdonly_cast(skb->head + skb->end,
			     bpf_core_type_id_kernel(struct skb_shared_info));
	e->ts = ts;
	e->seq = sh->tskey;
	e->stage = stage;
	e->flags = skops->op == BPF_SOCK_OPS_TSTAMP_SND_HW_CB ? STAMP_EV_HW : 0;
	e->ifindex = 0;
	e->pad = 0;
	if (stage == STAMP_STAGE_SND && skb->dev)
		e->ifindex = skb->dev->ifindex;
	flow_of(e, skops);
	/* No wakeup per record: on a VM each is a self-IPI costing about
	 * 1.7 µs inside the send (bench/stamp-cgroup.sh). capd reads the
	 * ring on its own clock; a ring filling up wakes it. */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) >
			   wake_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	stat_inc(STAMP_ST_STAMPS);
}

SEC("sockops")
int stamp_sockops(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		if (!port_chosen(skops->local_port,
				 bpf_ntohl(skops->remote_port)))
			break;
		stat_inc(arm(skops) ? STAMP_ST_ARM_FAILED : STAMP_ST_ARMED);
		break;
	case BPF_SOCK_OPS_TSTAMP_SENDMSG_CB:
		if (bpf_sock_ops_enable_tx_tstamp(bpf_cast_to_kern_ctx(skops), 0))
			stat_inc(STAMP_ST_SEND_FAILED);
		else
			stat_inc(STAMP_ST_SENDS);
		break;
	case BPF_SOCK_OPS_TSTAMP_SCHED_CB:
		report(skops, STAMP_STAGE_SCHED);
		break;
	case BPF_SOCK_OPS_TSTAMP_SND_SW_CB:
	case BPF_SOCK_OPS_TSTAMP_SND_HW_CB:
		report(skops, STAMP_STAGE_SND);
		break;
	case BPF_SOCK_OPS_TSTAMP_ACK_CB:
		report(skops, STAMP_STAGE_ACK);
		break;
	}
	return 1;
}

/* Is sk's cgroup one of ours, or below one? Its ancestors, from the root
 * down to itself, against the attached cgroups' ids. */
static __always_inline int in_our_cgroups(struct sock *sk)
{
	struct cgroup *cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
	int level;

	if (!cg)
		return 0;
	level = BPF_CORE_READ(cg, level);
	for (int l = 0; l <= level && l < STAMP_MAX_DEPTH; l++) {
		struct cgroup *anc = NULL;
		__u64 id;

		bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[l]);
		if (!anc)
			return 0;
		id = BPF_CORE_READ(anc, kn, id);
		if (bpf_map_lookup_elem(&cgroups, &id))
			return 1;
	}
	return 0;
}

SEC("iter/tcp")
int stamp_arm_existing(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct stamp_conn c = {};
	struct tcp_sock *tp;
	struct sock *sk;
	int flags = 0;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;	/* time-wait, request: nothing to send */
	sk = (struct sock *)tp;
	c.state = skc->skc_state;
	/* Connections that can still send; those being set up now get
	 * their establishment event. */
	if (c.state != 1 /* TCP_ESTABLISHED */ && c.state != 8 /* CLOSE_WAIT */)
		return 0;
	if (!in_our_cgroups(sk))
		return 0;
	c.family = skc->skc_family;
	c.sport = skc->skc_num;
	c.dport = bpf_ntohs(skc->skc_dport);
	if (!port_chosen(c.sport, c.dport))
		return 0;
	if (c.family == AF_INET) {
		__builtin_memcpy(c.src, &skc->skc_rcv_saddr, 4);
		__builtin_memcpy(c.dst, &skc->skc_daddr, 4);
	} else {
		BPF_CORE_READ_INTO(&c.src, skc, skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&c.dst, skc, skc_v6_daddr);
	}
	c.err = bpf_getsockopt(tp, SOL_SOCKET, SK_BPF_CB_FLAGS, &flags,
			       sizeof(flags));
	if (!c.err) {
		flags |= SK_BPF_CB_TX_TIMESTAMPING;
		c.err = bpf_setsockopt(tp, SOL_SOCKET, SK_BPF_CB_FLAGS, &flags,
				       sizeof(flags));
	}
	bpf_seq_write(ctx->meta->seq, &c, sizeof(c));
	return 0;
}
