/* shim_errq.c — error queue messages and TCP anchors; see shim_errq.h. */
#include "shim/shim_errq.h"

#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/missing.h"
#include "base/nstime.h"
#include "files/frame.h"
#include "live/txsock.h"

int shim_errq_parse(const struct msghdr *m, struct shim_errq_stamp *st)
{
	const struct sock_extended_err *ee = NULL;
	struct timespec ts[3];
	bool have_ts = false;

	memset(st, 0, sizeof(*st));
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c;
	     c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    (c->cmsg_type == SCM_TIMESTAMPING_OLD ||
		     c->cmsg_type == SCM_TIMESTAMPING_NEW)) {
			/* Both are three {s64 sec, s64 nsec} on 64-bit hosts;
			 * the old one is struct timespec everywhere. */
			if (c->cmsg_len < CMSG_LEN(sizeof(ts)))
				return -EBADMSG;
			memcpy(ts, CMSG_DATA(c), sizeof(ts));
			have_ts = true;
		} else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			   (c->cmsg_level == SOL_IPV6 &&
			    c->cmsg_type == IPV6_RECVERR)) {
			if (c->cmsg_len < CMSG_LEN(sizeof(*ee)))
				return -EBADMSG;
			ee = (const struct sock_extended_err *)CMSG_DATA(c);
		}
	}
	if (!ee || ee->ee_origin != SO_EE_ORIGIN_TIMESTAMPING ||
	    ee->ee_errno != ENOMSG)
		return 0;
	if (!have_ts)
		return -EBADMSG;
	switch (ee->ee_info) {
	case SCM_TSTAMP_SND:
		st->stage = TXSOCK_STAGE_SND;
		break;
	case SCM_TSTAMP_SCHED:
		st->stage = TXSOCK_STAGE_SCHED;
		break;
	case SCM_TSTAMP_ACK:
		st->stage = TXSOCK_STAGE_ACK;
		break;
	default:
		return -EBADMSG;
	}
	/* ts[2] is the raw hardware stamp, ts[0] the software one; the kernel
	 * fills the one it took. */
	if (ts[2].tv_sec || ts[2].tv_nsec) {
		st->hw = true;
		st->ns = nstime_of(&ts[2]);
	} else if (ts[0].tv_sec || ts[0].tv_nsec) {
		st->ns = nstime_of(&ts[0]);
	} else {
		return -EBADMSG;
	}
	st->key = ee->ee_data;
	return 1;
}

int shim_errq_segment(const void *pkt, size_t len, const struct frame_flow *flow,
		      uint32_t *first, uint32_t *last)
{
	const uint8_t *p = pkt;
	struct frame_info fi;
	int err;

	/* From the IP header on a device without a link header (tun, ip
	 * tunnels); from the Ethernet header otherwise. An Ethernet header
	 * starts with a MAC address, which can begin with 0x45 too: take
	 * Ethernet first and raw IP only when that fails. */
	err = frame_parse(p, len, FRAME_LINK_ETHERNET, &fi);
	if (err && len && (p[0] >> 4 == 4 || p[0] >> 4 == 6))
		err = frame_parse(p, len, FRAME_LINK_RAW, &fi);
	if (err)
		return err;
	if (fi.flow.proto != IPPROTO_TCP || fi.flow.sport != flow->sport ||
	    fi.flow.dport != flow->dport || fi.payload_wire == 0)
		return -EPROTONOSUPPORT;
	*first = fi.seq;
	*last = fi.seq + fi.payload_wire - 1;
	return 0;
}

int shim_anchor_feed(struct shim_anchor *a, uint32_t key, uint32_t first,
		     uint32_t last, uint64_t *mismatch)
{
	uint32_t hi = last - key, lo = first - key;
	int32_t dhi, dlo;

	if (a->done) {
		/* lo <= base <= hi, modulo 2^32. */
		if (a->base - lo > hi - lo)
			(*mismatch)++;
		return 0;
	}
	if (a->tries >= SHIM_ANCHOR_TRIES)
		return -1;
	a->tries++;
	if (!a->have) {
		a->have = true;
		a->ref = hi;
		a->hi = 0;
		a->lo = (int32_t)(lo - hi);
		a->hits = 1;
	} else {
		dhi = (int32_t)(hi - a->ref);
		dlo = (int32_t)(lo - a->ref);
		if (dhi < a->hi) {
			a->hi = dhi;
			a->hits = 1;
		} else if (dhi == a->hi) {
			a->hits++;
		}
		if (dlo > a->lo)
			a->lo = dlo;
		/* Ranges that do not overlap: no segment held its byte (not
		 * seen on Linux); start again. */
		if (a->lo > a->hi)
			a->have = false;
	}
	if (a->have && a->hits >= SHIM_ANCHOR_AGREE) {
		a->base = a->ref + (uint32_t)a->hi;
		a->done = true;
		return 1;
	}
	return a->tries >= SHIM_ANCHOR_TRIES ? -1 : 0;
}
