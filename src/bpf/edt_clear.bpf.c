/* edt_clear.bpf.c — a tc classifier (direct action) that clears a frame's
 * delivery time and passes it. A local TCP sender leaves its departure
 * time (EDT, monotonic) in skb->tstamp, and over veth the kernel keeps it
 * across to the peer instead of stamping the frame's arrival: the peer's
 * receive stamp is then taken when the frame is delivered or copied, a
 * backlog's wait later. Cleared on the sender's egress, every frame is
 * stamped on arrival, as a NIC would, whatever sent it. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int edt_clear(struct __sk_buff *skb)
{
	bpf_skb_set_tstamp(skb, 0, BPF_SKB_TSTAMP_UNSPEC);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
