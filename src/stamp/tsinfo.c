/* tsinfo.c — what an interface can timestamp: ETHTOOL_MSG_TSINFO_GET over
 * ethtool netlink (libnl-genl), the ETHTOOL_GET_TS_INFO ioctl as fallback.
 *
 * The reply carries three bitsets (capabilities, TX types, RX filters) and
 * an optional PHC index. A bitset comes compact (ETHTOOL_A_BITSET_SIZE and a
 * u32 array) or verbose (a nest of bits, each with index, name and value
 * flag); we decode both and keep the low 32 bits, which is all struct tsinfo
 * has room for and more than any current kernel sends for these sets.
 */
#include "stamp/nlerr.h"
#include "stamp/tsinfo.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Our own maxima: attributes newer than the ones we know (TSINFO stats,
 * hwtstamp provider, header PHY index, ...) are above them and so ignored. */
#define TSINFO_A_MAX	ETHTOOL_A_TSINFO_PHC_INDEX
#define HEADER_A_MAX	ETHTOOL_A_HEADER_FLAGS
#define BITSET_A_MAX	ETHTOOL_A_BITSET_MASK
#define BIT_A_MAX	ETHTOOL_A_BITSET_BIT_VALUE

static const struct nla_policy tsinfo_policy[TSINFO_A_MAX + 1] = {
	[ETHTOOL_A_TSINFO_HEADER] = { .type = NLA_NESTED },
	[ETHTOOL_A_TSINFO_TIMESTAMPING] = { .type = NLA_NESTED },
	[ETHTOOL_A_TSINFO_TX_TYPES] = { .type = NLA_NESTED },
	[ETHTOOL_A_TSINFO_RX_FILTERS] = { .type = NLA_NESTED },
	[ETHTOOL_A_TSINFO_PHC_INDEX] = { .type = NLA_U32, .maxlen = 4 },
};

static const struct nla_policy header_policy[HEADER_A_MAX + 1] = {
	[ETHTOOL_A_HEADER_DEV_INDEX] = { .type = NLA_U32, .maxlen = 4 },
	[ETHTOOL_A_HEADER_DEV_NAME] = { .type = NLA_STRING },
	[ETHTOOL_A_HEADER_FLAGS] = { .type = NLA_U32, .maxlen = 4 },
};

static const struct nla_policy bitset_policy[BITSET_A_MAX + 1] = {
	[ETHTOOL_A_BITSET_NOMASK] = { .type = NLA_FLAG },
	[ETHTOOL_A_BITSET_SIZE] = { .type = NLA_U32, .maxlen = 4 },
	[ETHTOOL_A_BITSET_BITS] = { .type = NLA_NESTED },
	[ETHTOOL_A_BITSET_VALUE] = { .type = NLA_UNSPEC },
	[ETHTOOL_A_BITSET_MASK] = { .type = NLA_UNSPEC },
};

static const struct nla_policy bit_policy[BIT_A_MAX + 1] = {
	[ETHTOOL_A_BITSET_BIT_INDEX] = { .type = NLA_U32, .maxlen = 4 },
	[ETHTOOL_A_BITSET_BIT_NAME] = { .type = NLA_STRING },
	[ETHTOOL_A_BITSET_BIT_VALUE] = { .type = NLA_FLAG },
};

/* Kernel names (string set "ts-sof-flags"), which ethtool -T prints. */
static const char *const sof_names[] = {
	"hardware-transmit",	/* SOF_TIMESTAMPING_TX_HARDWARE */
	"software-transmit",	/* TX_SOFTWARE */
	"hardware-receive",	/* RX_HARDWARE */
	"software-receive",	/* RX_SOFTWARE */
	"software-system-clock",	/* SOFTWARE */
	"hardware-legacy-clock",	/* SYS_HARDWARE */
	"hardware-raw-clock",	/* RAW_HARDWARE */
	"option-id",		/* OPT_ID */
	"sched-transmit",	/* TX_SCHED */
	"ack-transmit",		/* TX_ACK */
	"option-cmsg",		/* OPT_CMSG */
	"option-tsonly",	/* OPT_TSONLY */
	"option-stats",		/* OPT_STATS */
	"option-pktinfo",	/* OPT_PKTINFO */
	"option-tx-swhw",	/* OPT_TX_SWHW */
	"bind-phc",		/* BIND_PHC */
	"option-id-tcp",	/* OPT_ID_TCP (6.2) */
	"option-rx-filter",	/* OPT_RX_FILTER (6.9) */
	"tx-completion",	/* TX_COMPLETION (6.15) */
};

const char *tsinfo_sof_name(unsigned bit)
{
	if (bit >= sizeof(sof_names) / sizeof(sof_names[0]))
		return NULL;
	return sof_names[bit];
}

bool tsinfo_has_hw(const struct tsinfo *info)
{
	const uint32_t need = SOF_TIMESTAMPING_TX_HARDWARE |
			      SOF_TIMESTAMPING_RX_HARDWARE |
			      SOF_TIMESTAMPING_RAW_HARDWARE;

	return info && info->phc_index >= 0 &&
	       (info->so_timestamping & need) == need;
}

/* True when the attribute stream [head, head + len) is consumed exactly by
 * well-formed attributes. nla_parse() stops quietly at the first bad
 * nla_len; we want to call that malformed, not "fewer attributes". */
static bool attrs_whole(const struct nlattr *head, int len)
{
	const struct nlattr *nla;
	int rem;

	nla_for_each_attr(nla, head, len, rem)
		;
	return rem <= 0;
}

static int parse_nested(struct nlattr **tb, int max, struct nlattr *nest,
			const struct nla_policy *policy)
{
	if (nla_parse_nested(tb, max, nest, policy) < 0 ||
	    !attrs_whole(nla_data(nest), nla_len(nest)))
		return -EBADMSG;
	return 0;
}

static uint32_t first_word(const struct nlattr *nla)
{
	uint32_t w;

	memcpy(&w, nla_data(nla), sizeof(w));	/* may be unaligned in tests */
	return w;
}

/* Compact: SIZE bits in DIV_ROUND_UP(SIZE, 32) host-order u32 words of
 * VALUE, and of MASK when NOMASK is absent and a mask is sent. */
static int bitset_compact(struct nlattr **tb, uint32_t size, bool nomask,
			  uint32_t *out)
{
	uint64_t nbytes = ((uint64_t)size + 31) / 32 * 4;
	uint32_t v = 0;

	if (!tb[ETHTOOL_A_BITSET_VALUE] ||
	    (uint64_t)nla_len(tb[ETHTOOL_A_BITSET_VALUE]) != nbytes)
		return -EBADMSG;
	if (size)
		v = first_word(tb[ETHTOOL_A_BITSET_VALUE]);
	if (!nomask && tb[ETHTOOL_A_BITSET_MASK]) {
		if ((uint64_t)nla_len(tb[ETHTOOL_A_BITSET_MASK]) != nbytes)
			return -EBADMSG;
		if (size)
			v &= first_word(tb[ETHTOOL_A_BITSET_MASK]);
	}
	if (size < 32)
		v &= (UINT32_C(1) << size) - 1;
	*out = v;
	return 0;
}

/* Verbose: one ETHTOOL_A_BITSETS_BIT nest per listed bit. With NOMASK the
 * listed bits are the set ones; without, a bit is set when it carries the
 * VALUE flag. Bits above 31 are valid but have no room in struct tsinfo. */
static int bitset_verbose(struct nlattr *bits, uint32_t size, bool nomask,
			  uint32_t *out)
{
	struct nlattr *btb[BIT_A_MAX + 1];
	struct nlattr *bit;
	uint32_t v = 0;
	int rem;

	nla_for_each_nested(bit, bits, rem) {
		uint32_t idx;

		if (nla_type(bit) != ETHTOOL_A_BITSET_BITS_BIT)
			continue;
		if (parse_nested(btb, BIT_A_MAX, bit, bit_policy) < 0 ||
		    !btb[ETHTOOL_A_BITSET_BIT_INDEX])
			return -EBADMSG;
		idx = nla_get_u32(btb[ETHTOOL_A_BITSET_BIT_INDEX]);
		if (idx >= size)
			return -EBADMSG;
		if (idx < 32 && (nomask || btb[ETHTOOL_A_BITSET_BIT_VALUE]))
			v |= UINT32_C(1) << idx;
	}
	if (rem > 0)
		return -EBADMSG;
	*out = v;
	return 0;
}

static int bitset_decode(struct nlattr *nest, uint32_t *out)
{
	struct nlattr *tb[BITSET_A_MAX + 1];
	uint32_t size = UINT32_MAX;
	bool nomask;

	if (parse_nested(tb, BITSET_A_MAX, nest, bitset_policy) < 0)
		return -EBADMSG;
	nomask = tb[ETHTOOL_A_BITSET_NOMASK] != NULL;
	if (tb[ETHTOOL_A_BITSET_SIZE])
		size = nla_get_u32(tb[ETHTOOL_A_BITSET_SIZE]);
	if (tb[ETHTOOL_A_BITSET_BITS]) {
		if (tb[ETHTOOL_A_BITSET_VALUE] || tb[ETHTOOL_A_BITSET_MASK])
			return -EBADMSG;	/* both encodings at once */
		return bitset_verbose(tb[ETHTOOL_A_BITSET_BITS], size, nomask,
				      out);
	}
	if (!tb[ETHTOOL_A_BITSET_SIZE])
		return -EBADMSG;
	return bitset_compact(tb, size, nomask, out);
}

int tsinfo_decode(const struct nlmsghdr *nlh, struct tsinfo *info)
{
	/* libnl's parsers take non-const pointers but only read. */
	struct nlmsghdr *h = (struct nlmsghdr *)nlh;
	struct nlattr *tb[TSINFO_A_MAX + 1];
	struct nlattr *htb[HEADER_A_MAX + 1];
	const struct genlmsghdr *gh;
	struct tsinfo t;
	uint32_t phc;

	if (!nlh || !info)
		return -EBADMSG;
	if (genlmsg_parse(h, 0, tb, TSINFO_A_MAX, tsinfo_policy) < 0)
		return -EBADMSG;
	gh = nlmsg_data(h);
	if (gh->cmd != ETHTOOL_MSG_TSINFO_GET_REPLY ||
	    !attrs_whole(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0)))
		return -EBADMSG;
	/* The kernel always sends the header; without it this is not a
	 * reply of ours. */
	if (!tb[ETHTOOL_A_TSINFO_HEADER] ||
	    parse_nested(htb, HEADER_A_MAX, tb[ETHTOOL_A_TSINFO_HEADER],
			 header_policy) < 0)
		return -EBADMSG;

	t = *info;
	t.so_timestamping = 0;
	t.tx_types = 0;
	t.rx_filters = 0;
	t.phc_index = -1;
	t.via = TSINFO_VIA_NETLINK;
	/* The kernel leaves out empty bitsets and an absent PHC. */
	if (tb[ETHTOOL_A_TSINFO_TIMESTAMPING] &&
	    bitset_decode(tb[ETHTOOL_A_TSINFO_TIMESTAMPING],
			  &t.so_timestamping) < 0)
		return -EBADMSG;
	if (tb[ETHTOOL_A_TSINFO_TX_TYPES] &&
	    bitset_decode(tb[ETHTOOL_A_TSINFO_TX_TYPES], &t.tx_types) < 0)
		return -EBADMSG;
	if (tb[ETHTOOL_A_TSINFO_RX_FILTERS] &&
	    bitset_decode(tb[ETHTOOL_A_TSINFO_RX_FILTERS], &t.rx_filters) < 0)
		return -EBADMSG;
	if (tb[ETHTOOL_A_TSINFO_PHC_INDEX]) {
		phc = nla_get_u32(tb[ETHTOOL_A_TSINFO_PHC_INDEX]);
		if (phc > INT32_MAX)
			return -EBADMSG;
		t.phc_index = (int)phc;
	}
	*info = t;
	return 0;
}

struct tsinfo_req {
	struct tsinfo *info;
	int err;		/* first failure: kernel errno or decode */
	bool got;		/* a reply was decoded (or tried) */
	bool done;		/* ACK or error seen */
};

static int tsinfo_valid_cb(struct nl_msg *msg, void *arg)
{
	struct tsinfo_req *rq = arg;

	if (!rq->got) {
		rq->got = true;
		rq->err = tsinfo_decode(nlmsg_hdr(msg), rq->info);
	}
	return NL_OK;
}

static int tsinfo_ack_cb(struct nl_msg *msg, void *arg)
{
	struct tsinfo_req *rq = arg;

	(void)msg;
	rq->done = true;
	return NL_STOP;
}

static int tsinfo_err_cb(struct sockaddr_nl *who, struct nlmsgerr *e,
			 void *arg)
{
	struct tsinfo_req *rq = arg;

	(void)who;
	rq->err = e->error < 0 ? e->error : -EIO;
	rq->done = true;
	return NL_STOP;
}

static int tsinfo_netlink(const char *ifname, struct tsinfo *info)
{
	struct tsinfo_req rq = { .info = info, .err = 0 };
	struct nlattr *nest;
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, err;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	err = genl_connect(sk);
	if (err < 0) {
		err = nlerr_errno(err);
		goto out_sock;
	}
	family = genl_ctrl_resolve(sk, ETHTOOL_GENL_NAME);
	if (family < 0) {
		err = nlerr_errno(family);
		goto out_sock;
	}

	msg = nlmsg_alloc();
	if (!msg) {
		err = -ENOMEM;
		goto out_sock;
	}
	err = -EMSGSIZE;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 ETHTOOL_MSG_TSINFO_GET, ETHTOOL_GENL_VERSION))
		goto out_msg;
	nest = nla_nest_start(msg, ETHTOOL_A_TSINFO_HEADER);
	if (!nest ||
	    nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname) < 0 ||
	    nla_put_u32(msg, ETHTOOL_A_HEADER_FLAGS,
			ETHTOOL_FLAG_COMPACT_BITSETS) < 0)
		goto out_msg;
	nla_nest_end(msg, nest);

	if (nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, tsinfo_valid_cb,
				&rq) < 0 ||
	    nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, tsinfo_ack_cb,
				&rq) < 0 ||
	    nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, tsinfo_err_cb, &rq) < 0) {
		err = -ENOMEM;
		goto out_msg;
	}
	err = nl_send_auto(sk, msg);
	if (err < 0) {
		err = nlerr_errno(err);
		goto out_msg;
	}
	/* The reply, then the ACK that nl_send_auto() asked for. */
	while (!rq.done) {
		err = nl_recvmsgs_default(sk);
		if (err < 0) {
			if (!rq.done)
				rq.err = nlerr_errno(err);
			break;
		}
	}
	err = rq.err;
	if (!err && !rq.got)
		err = -ENODATA;

out_msg:
	nlmsg_free(msg);
out_sock:
	nl_socket_free(sk);
	return err;
}

static int tsinfo_ioctl(int fd, const char *ifname, struct tsinfo *info)
{
	struct ethtool_ts_info ts = { .cmd = ETHTOOL_GET_TS_INFO };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
	ifr.ifr_data = (void *)&ts;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return -errno;
	info->so_timestamping = ts.so_timestamping;
	info->phc_index = ts.phc_index;
	info->tx_types = ts.tx_types;
	info->rx_filters = ts.rx_filters;
	info->via = TSINFO_VIA_IOCTL;
	return 0;
}

static void tsinfo_driver(int fd, const char *ifname, struct tsinfo *info)
{
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
	ifr.ifr_data = (void *)&drv;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return;		/* lo and friends have no driver info */
	memcpy(info->driver, drv.driver, sizeof(info->driver) - 1);
	info->driver[sizeof(info->driver) - 1] = '\0';
}

static int ioctl_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

int tsinfo_get(const char *ifname, struct tsinfo *info)
{
	size_t len;
	int fd, err;

	if (!ifname || !info)
		return -EINVAL;
	len = strlen(ifname);
	if (len == 0 || len >= IF_NAMESIZE)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	memcpy(info->ifname, ifname, len + 1);
	info->phc_index = -1;
	info->ifindex = (int)if_nametoindex(ifname);
	if (info->ifindex == 0)
		return errno && errno != ENODEV && errno != ENXIO ? -errno
								  : -ENODEV;

	fd = ioctl_socket();
	if (fd >= 0)
		tsinfo_driver(fd, ifname, info);

	err = tsinfo_netlink(ifname, info);
	/* Anything but a vanished device: old kernel without the family or
	 * the command, netlink denied, a reply we cannot read. The ioctl
	 * answers the same question. */
	if (err && err != -ENODEV) {
		if (fd < 0)
			err = fd;
		else
			err = tsinfo_ioctl(fd, ifname, info);
	}
	if (fd >= 0)
		close(fd);
	return err;
}
