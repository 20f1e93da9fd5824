/* capture.c — one interface through libpcap, a handle per direction; see
 * capture.h. */
#include "live/capture_private.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/xalloc.h"

#define CAPTURE_SNAPLEN 262144

static int capture_fail(struct capture *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int capture_fail(struct capture *c, int err, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return errbuf_set(c->err, CAPTURE_ERRBUF, err, "%s: %s", c->ifname,
			  what);
}

int capture_offloads(const char *ifname)
{
	/* The legacy get commands still answer on every kernel and need no
	 * feature-name table, unlike ETHTOOL_GFEATURES. */
	static const struct {
		uint32_t cmd;
		unsigned bit;
	} q[] = {
		{ ETHTOOL_GTSO, CAPTURE_OFF_TSO },
		{ ETHTOOL_GGSO, CAPTURE_OFF_GSO },
		{ ETHTOOL_GGRO, CAPTURE_OFF_GRO },
	};
	struct ethtool_value v;
	struct ifreq ifr;
	int fd, mask = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&v;
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		v.cmd = q[i].cmd;
		v.data = 0;
		if (!ioctl(fd, SIOCETHTOOL, &ifr) && v.data)
			mask |= (int)q[i].bit;
	}
	v.cmd = ETHTOOL_GFLAGS;
	v.data = 0;
	if (!ioctl(fd, SIOCETHTOOL, &ifr) && (v.data & ETH_FLAG_LRO))
		mask |= CAPTURE_OFF_LRO;
	close(fd);
	return mask;
}

/* Whether ifname is a loopback interface (capture_info.dir_unknown);
 * false when it cannot be told (the interface is gone: opening fails). */
static bool capture_loopback(const char *ifname)
{
	struct ifreq ifr;
	bool lo;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.*s",
		 (int)sizeof(ifr.ifr_name) - 1, ifname);
	lo = !ioctl(fd, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_LOOPBACK);
	close(fd);
	return lo;
}

/* Have the kernel hand the handle only frames of its direction.
 *
 * pcap_setdirection() on Linux filters in user space: without this both
 * handles get every frame that passes the filter, the kernel copies each
 * into both rings and libpcap walks both, throwing half away — a second
 * capture's worth of work per frame that tcpdump (one handle) never does.
 *
 * The receive handle asks the kernel not to loop sent frames to it
 * (PACKET_IGNORE_OUTGOING, Linux 4.20). The send handle has no such option:
 * its kernel filter gets a prefix that refuses every frame whose packet type
 * is not PACKET_OUTGOING, ahead of the filter libpcap compiled (prog, NULL
 * for none), whose relative jumps stay valid behind it. It is attached over
 * libpcap's own after pcap_setfilter(), which goes on filtering the blocks
 * already in the ring in user space with its own program. Compiling
 * "outbound" into the expression instead lost the first frames after
 * activation, most likely those: user-space BPF cannot run the ancillary
 * packet-type load, and the prefix is never run there.
 *
 * libpcap's own direction check stays in force, so if either step fails
 * (an old kernel) frames are still told apart, at the old cost. Returns
 * whether the kernel now keeps other frames out (capture_info.dir_split). */
static bool capture_kernel_direction(pcap_t *h, enum capture_dir dir,
				     const struct bpf_program *prog)
{
	struct sock_filter f[BPF_MAXINSNS];
	struct sock_fprog fp = { .filter = f };
	int fd = pcap_fileno(h), one = 1;
	unsigned n = 0;

	if (dir == CAPTURE_IN)
		return !setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
				   sizeof(one));
	if (prog && prog->bf_len > BPF_MAXINSNS - 3)
		return false;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
					      (uint32_t)SKF_AD_OFF + SKF_AD_PKTTYPE);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      PACKET_OUTGOING, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	if (prog) {
		/* struct bpf_insn and struct sock_filter are the same
		 * {code, jt, jf, k}. */
		for (unsigned i = 0; i < prog->bf_len; i++)
			f[n++] = (struct sock_filter){
				.code = prog->bf_insns[i].code,
				.jt = prog->bf_insns[i].jt,
				.jf = prog->bf_insns[i].jf,
				.k = prog->bf_insns[i].k,
			};
	} else {
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      (uint32_t)pcap_snapshot(h));
	}
	fp.len = (unsigned short)n;
	return !setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
}

/* Create, configure and activate one handle. */
static int capture_handle(struct capture *c, const struct capture_config *cfg,
			  enum capture_dir dir)
{
	char err[PCAP_ERRBUF_SIZE];
	struct bpf_program prog;
	pcap_t *h;
	int rc;

	h = pcap_create(c->ifname, err);
	if (!h)
		return capture_fail(c, -ENODEV, "%s", err);
	c->h[dir] = h;
	pcap_set_snaplen(h, (int)(cfg->snaplen ? cfg->snaplen : CAPTURE_SNAPLEN));
	pcap_set_promisc(h, cfg->promisc && dir == CAPTURE_IN);
	pcap_set_timeout(h, cfg->timeout_ms > 0 ? cfg->timeout_ms : 100);
	pcap_set_buffer_size(h, (int)(cfg->buffer_kib ? cfg->buffer_kib : 32768) * 1024);
	if (pcap_set_tstamp_precision(h, PCAP_TSTAMP_PRECISION_NANO))
		return capture_fail(c, -EOPNOTSUPP, "no nanosecond stamps in this libpcap");
	if (dir == CAPTURE_IN) {
		rc = c->ops->prepare(c, h);
		if (rc)
			return rc;
	}
	rc = pcap_activate(h);
	if (rc < 0) {
		/* PERM_DENIED, NO_SUCH_DEVICE, IFACE_NOT_UP... */
		return capture_fail(c, rc == PCAP_ERROR_NO_SUCH_DEVICE ? -ENODEV :
				    rc == PCAP_ERROR_PERM_DENIED ? -EPERM : -EIO,
				    "%s", pcap_geterr(h));
	}
	if (pcap_setdirection(h, dir == CAPTURE_IN ? PCAP_D_IN : PCAP_D_OUT))
		return capture_fail(c, -EOPNOTSUPP, "cannot select direction: %s",
				    pcap_geterr(h));
	if (cfg->filter && *cfg->filter) {
		if (pcap_compile(h, &prog, cfg->filter, 1, PCAP_NETMASK_UNKNOWN))
			return capture_fail(c, -EINVAL, "filter '%s': %s",
					    cfg->filter, pcap_geterr(h));
		rc = pcap_setfilter(h, &prog);
		if (!rc)
			c->kdir[dir] = capture_kernel_direction(h, dir, &prog);
		pcap_freecode(&prog);
		if (rc)
			return capture_fail(c, -EINVAL, "filter: %s", pcap_geterr(h));
	} else {
		c->kdir[dir] = capture_kernel_direction(h, dir, NULL);
	}
	if (pcap_setnonblock(h, 1, err))
		return capture_fail(c, -EIO, "%s", err);
	if (dir == CAPTURE_IN)
		c->ops->activated(c);
	return 0;
}

int capture_open(struct capture **out, const struct capture_config *cfg,
		 char err[CAPTURE_ERRBUF])
{
	struct capture *c = xcalloc(1, sizeof(*c));
	int rc, off;

	*out = NULL;
	snprintf(c->ifname, sizeof(c->ifname), "%s", cfg->ifname);
	c->info.phc = -1;
	c->info.rx_filter = -1;
	c->info.tx_was = c->info.tx_left = -1;
	c->ops = cfg->mode == TS_MODE_SW ? &capture_sw_ops : &capture_hw_ops;
	rc = capture_handle(c, cfg, CAPTURE_IN);
	if (rc == -ENODEV && cfg->mode == TS_MODE_AUTO && c->ops == &capture_hw_ops &&
	    !c->err[0]) {
		/* No PHC here: host stamps, said so in the file. */
		pcap_close(c->h[CAPTURE_IN]);
		c->h[CAPTURE_IN] = NULL;
		c->ops = &capture_sw_ops;
		rc = capture_handle(c, cfg, CAPTURE_IN);
	} else if (rc == -ENODEV && !c->err[0]) {
		capture_fail(c, rc, "no hardware stamps (no PHC, or no "
			     "'all' receive filter)");
	}
	if (!rc)
		rc = capture_handle(c, cfg, CAPTURE_OUT);
	if (!rc && c->ops == &capture_sw_ops) {
		/* The kernel hands a frame to an interface's packet sockets
		 * newest first, and each takes its software stamp in its turn:
		 * reopened last, the receive handle is served first, and its
		 * stamps do not wait for the send handle's copy of the frame
		 * (microseconds on veth). Hardware stamps are the NIC's. */
		pcap_close(c->h[CAPTURE_IN]);
		c->h[CAPTURE_IN] = NULL;
		rc = capture_handle(c, cfg, CAPTURE_IN);
	}
	if (rc) {
		if (!c->err[0])
			capture_fail(c, rc, "%s", strerror(-rc));
		errbuf_set(err, CAPTURE_ERRBUF, rc, "%s", c->err);
		capture_close(c);
		return rc;
	}
	c->info.linktype = pcap_datalink(c->h[CAPTURE_IN]);
	c->info.snaplen = (uint32_t)pcap_snapshot(c->h[CAPTURE_IN]);
	off = capture_offloads(c->ifname);
	c->info.offloads = off > 0 ? (unsigned)off : 0;
	c->info.dir_unknown = capture_loopback(c->ifname);
	c->info.dir_split = c->kdir[CAPTURE_IN] && c->kdir[CAPTURE_OUT];

	c->info.src[CAPTURE_IN] = (struct pcapng_source){
		.hw = c->info.hw, .phc = c->info.phc,
		.timescale = c->info.hw ? TS_SCALE_PHC : TS_SCALE_UTC,
	};
	snprintf(c->info.src[CAPTURE_IN].note, sizeof(c->info.src[0].note),
		 "received%s", c->info.rx_narrow ?
		 ", NIC rx filter narrowed: not every frame stamped" : "");
	c->info.src[CAPTURE_OUT] = (struct pcapng_source){
		.hw = false, .phc = -1, .timescale = TS_SCALE_UTC,
	};
	snprintf(c->info.src[CAPTURE_OUT].note, sizeof(c->info.src[0].note),
		 "sent, host stamps");
	*out = c;
	return 0;
}

void capture_fds(const struct capture *c, int fds[2])
{
	fds[0] = pcap_get_selectable_fd(c->h[CAPTURE_IN]);
	fds[1] = pcap_get_selectable_fd(c->h[CAPTURE_OUT]);
}

static void capture_one(u_char *arg, const struct pcap_pkthdr *h,
			const u_char *data)
{
	struct capture *c = (struct capture *)arg;
	struct capture_packet p = {
		/* Nanosecond precision: libpcap puts ns in tv_usec. */
		.ts_ns = (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec,
		.data = data,
		.caplen = h->caplen,
		.len = h->len,
		.dir = c->cur,
	};

	c->fn(c->arg, &p);
	c->count++;
}

int capture_dispatch(struct capture *c, int max, capture_fn fn, void *arg)
{
	c->fn = fn;
	c->arg = arg;
	c->count = 0;
	for (int d = CAPTURE_IN; d <= CAPTURE_OUT; d++) {
		c->cur = (enum capture_dir)d;
		if (pcap_dispatch(c->h[d], max > 0 ? max : -1, capture_one,
				  (u_char *)c) == PCAP_ERROR)
			return capture_fail(c, -EIO, "%s", pcap_geterr(c->h[d]));
	}
	return (int)c->count;
}

int capture_stats(struct capture *c, enum capture_dir dir, uint64_t *recv,
		  uint64_t *drop)
{
	struct pcap_stat st;

	*recv = *drop = 0;
	if (pcap_stats(c->h[dir], &st))
		return capture_fail(c, -EIO, "%s", pcap_geterr(c->h[dir]));
	*recv = st.ps_recv;
	*drop = st.ps_drop;
	return 0;
}

void capture_info(const struct capture *c, struct capture_info *info)
{
	*info = c->info;
}

const char *capture_error(const struct capture *c)
{
	return c->err;
}

const char *capture_ifname(const struct capture *c)
{
	return c->ifname;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	for (int d = CAPTURE_IN; d <= CAPTURE_OUT; d++)
		if (c->h[d])
			pcap_close(c->h[d]);
	free(c);
}
