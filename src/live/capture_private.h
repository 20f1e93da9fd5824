/* capture_private.h — inside struct capture, shared by capture.c and the
 * stamp sources (capture_hw.c, capture_sw.c). Not for other modules. */
#ifndef TAPLESS_CAPTURE_PRIVATE_H
#define TAPLESS_CAPTURE_PRIVATE_H

#include <pcap/pcap.h>

#include "live/capture.h"
#include "stamp/hwtstamp.h"

struct capture;

/* How received frames get their stamps. */
struct capture_source_ops {
	const char *name;
	/* Before pcap_activate() of the inbound handle: check the device,
	 * choose the libpcap timestamp type, note the source. 0 or -errno
	 * (-ENODEV: no hardware here, AUTO falls back). */
	int (*prepare)(struct capture *c, pcap_t *in);
	/* After activation: check what libpcap did to the device. */
	void (*activated)(struct capture *c);
};

extern const struct capture_source_ops capture_hw_ops;
extern const struct capture_source_ops capture_sw_ops;

struct capture {
	const struct capture_source_ops *ops;
	char ifname[64];
	pcap_t *h[2];			/* per enum capture_dir */
	bool kdir[2];			/* the kernel keeps the other
					 * direction out of the handle */
	struct capture_info info;
	struct hwtstamp_state before;	/* device state before we opened */
	bool have_before;
	char err[CAPTURE_ERRBUF];	/* capture_error() */
	/* capture_dispatch() context for the libpcap callback */
	capture_fn fn;
	void *arg;
	enum capture_dir cur;
	unsigned count;
};

#endif
