/* pktring.c — a packet socket's receive ring; see pktring.h.
 *
 * Slots are a power of two in size and tile the ring's blocks exactly, so
 * slot i is at i * slot bytes from the start of the mapping. Ownership of a
 * slot passes through its tp_status word: the kernel writes the frame, then
 * the status (TP_STATUS_USER, with a barrier between); we read the status
 * with acquire order before the frame, and hand the slot back by storing
 * TP_STATUS_KERNEL with release order after we are done with the frame.
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <linux/virtio_net.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/xalloc.h"
#include "live/pktring.h"

/* Blocks of at most this size; a bigger slot gets a block of its own. */
#define PKTRING_BLOCK_MAX (128u << 10)

struct pktring {
	uint8_t *base;
	size_t bytes;
	size_t slot;		/* bytes per slot, a power of two */
	unsigned n;		/* slots */
	unsigned head;
	bool vnet;
};

int pktring_create(struct pktring **out, int fd, size_t frame_bytes,
		   unsigned frames, bool vnet, bool hw)
{
	/* What precedes the frame in a slot: the kernel's header and
	 * address, aligned, room for a VLAN header's worth of link header
	 * (the kernel reserves at least 16 bytes), the virtio header. */
	size_t need = TPACKET_ALIGN(TPACKET2_HDRLEN + 32) +
		      (vnet ? sizeof(struct virtio_net_hdr) : 0) + frame_bytes;
	struct tpacket_req req;
	size_t slot = 64, block, pg = (size_t)sysconf(_SC_PAGESIZE);
	int v = TPACKET_V2, one = 1, ts = SOF_TIMESTAMPING_RAW_HARDWARE;
	struct pktring *r;
	unsigned per_block;
	void *m;

	if (!frames || !frame_bytes || frame_bytes > (256u << 10))
		return -EINVAL;
	while (slot < need)
		slot <<= 1;
	block = slot < pg ? pg : slot;
	while (block < PKTRING_BLOCK_MAX && block / slot < frames)
		block <<= 1;
	per_block = (unsigned)(block / slot);
	memset(&req, 0, sizeof(req));
	req.tp_block_size = (unsigned)block;
	req.tp_block_nr = (frames + per_block - 1) / per_block;
	req.tp_frame_size = (unsigned)slot;
	req.tp_frame_nr = req.tp_block_nr * per_block;

	/* The virtio header must be asked for before the ring exists. */
	if (vnet && setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		return -errno;
	if (hw && setsockopt(fd, SOL_PACKET, PACKET_TIMESTAMP, &ts, sizeof(ts)))
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		return -errno;
	/* MAP_POPULATE: no page fault on the first frame of each slot. */
	m = mmap(NULL, block * req.tp_block_nr, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		memset(&req, 0, sizeof(req));
		(void)setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req));
		return -e;
	}
	r = xcalloc(1, sizeof(*r));
	r->base = m;
	r->bytes = block * req.tp_block_nr;
	r->slot = slot;
	r->n = req.tp_frame_nr;
	r->vnet = vnet;
	*out = r;
	return 0;
}

void pktring_destroy(struct pktring *r)
{
	if (!r)
		return;
	munmap(r->base, r->bytes);
	free(r);
}

int pktring_next(struct pktring *r, struct pktring_frame *f)
{
	struct tpacket2_hdr *h = (struct tpacket2_hdr *)(r->base +
							 (size_t)r->head * r->slot);
	uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
	uint32_t mac, snap;

	if (!(st & TP_STATUS_USER))
		return 0;
	mac = h->tp_mac;
	snap = h->tp_snaplen;
	/* The kernel keeps to the slot; a slot that says otherwise is read
	 * as empty of data rather than past its end. */
	if (mac > r->slot || snap > r->slot - mac)
		snap = 0;
	memset(f, 0, sizeof(*f));
	f->data = (uint8_t *)h + mac;
	f->len = h->tp_len;
	f->caplen = snap;
	f->ns = (int64_t)h->tp_sec * 1000000000LL + h->tp_nsec;
	f->kind = st & TP_STATUS_TS_RAW_HARDWARE ? PKTRING_TS_HW :
		  st & TP_STATUS_TS_SOFTWARE ? PKTRING_TS_SW : PKTRING_TS_COPY;
	f->losing = (st & TP_STATUS_LOSING) != 0;
	if (r->vnet && mac >= sizeof(struct virtio_net_hdr) + TPACKET2_HDRLEN) {
		struct virtio_net_hdr vh;

		memcpy(&vh, f->data - sizeof(vh), sizeof(vh));
		if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
			f->needs_csum = true;
			f->csum_start = le16toh(vh.csum_start);
			f->csum_offset = le16toh(vh.csum_offset);
		}
	}
	return 1;
}

void pktring_release(struct pktring *r)
{
	struct tpacket2_hdr *h = (struct tpacket2_hdr *)(r->base +
							 (size_t)r->head * r->slot);

	__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	if (++r->head == r->n)
		r->head = 0;
}
