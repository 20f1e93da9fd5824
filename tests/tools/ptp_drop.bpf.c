/* ptp_drop.bpf.c — a tc classifier (direct action) that drops PTP Sync
 * messages (UDP port 319, messageType 0) and passes everything else: the
 * tests' way to starve a PTP client of Sync while Announce, Follow_Up and
 * Delay_Resp still flow. This kernel has no tc actions to load (act_gact),
 * so a filter cannot drop on its own: a BPF program in direct-action mode
 * can. IPv4 without options over Ethernet, as the test bridge carries. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int ptp_drop_sync(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u8 *ptp = (void *)(udp + 1);

	if ((void *)(ptp + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || udp->dest != bpf_htons(319))
		return TC_ACT_OK;
	return (ptp[0] & 0x0f) == 0 ? TC_ACT_SHOT : TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
