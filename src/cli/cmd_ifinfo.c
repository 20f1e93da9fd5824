/* cmd_ifinfo.c — tapless ifinfo: what each interface can timestamp, and what
 * tapless would use on it.
 */
#include <errno.h>
#include <linux/net_tstamp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "bpf/bpfstamp.h"
#include "cli/cmd.h"
#include "stamp/hwtstamp.h"
#include "stamp/iface.h"
#include "base/missing.h"
#include "base/opts.h"
#include "base/print.h"
#include "stamp/ts.h"
#include "stamp/tsinfo.h"
#include "base/xalloc.h"

static const struct opt_def ifinfo_opts[] = {
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "csv", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "CSV output, one row per interface", 0 },
	{ "pretty", 'p', OPT_FLAG, NULL, 0, 0, NULL, NULL, "indent JSON output", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

/* Print the set bits of mask, each by name, as an array of strings. */
static void ifinfo_bits(struct printer *p, const char *key, const char *label,
			uint32_t mask, const char *(*name)(unsigned))
{
	print_text(p, "  %-18s", label);
	print_array_begin(p, key);
	for (unsigned b = 0; b < 32; b++) {
		const char *n;
		char num[16];

		if (!(mask & (1u << b)))
			continue;
		n = name(b);
		if (!n) {
			snprintf(num, sizeof(num), "bit%u", b);
			n = num;
		}
		print_str(p, NULL, " %s", n);
	}
	print_array_end(p);
	print_text(p, "%s\n", mask ? "" : " none");
}

static const char *ifinfo_tx_name(unsigned b)
{
	return hwtstamp_tx_name((int)b);
}

static const char *ifinfo_rx_name(unsigned b)
{
	return hwtstamp_rx_name((int)b);
}

/* What the stamps are good for, and how to find out for sure: the
 * verdict a user came for, with the next step. Orders of magnitude, not
 * promises: validate measures. */
static void ifinfo_verdict(struct printer *p, const struct iface_entry *ife,
			   const struct tsinfo *ti, bool has_hw)
{
	char next[128];
	const char *v;

	if (has_hw && (ti->rx_filters & (1u << HWTSTAMP_FILTER_ALL)))
		v = "usable with hardware stamps: expect ns-level error "
		    "(the NIC's accuracy)";
	else if (has_hw)
		v = "hardware stamps for some packets only (no 'all' receive "
		    "filter): market data and orders get software stamps, "
		    "expect \u00b5s-level error";
	else
		v = "usable with software stamps: expect \u00b5s-level error";
	snprintf(next, sizeof(next), "check with 'tapless validate --loopback %s:PEER' "
		 "(PEER: the port it is cabled to)", ife->name);
	print_str(p, "verdict", "  verdict            %s", v);
	print_str(p, "next_step", "; %s\n", next);
}

static void ifinfo_one(struct printer *p, const struct iface_entry *ife,
		       const struct tsinfo *ti)
{
	struct hwtstamp_state hw;
	bool has_hw = tsinfo_has_hw(ti);
	char phc[32] = "";
	int err;

	if (ti->phc_index >= 0)
		snprintf(phc, sizeof(phc), "/dev/ptp%d", ti->phc_index);

	print_object_begin(p, NULL);
	print_str(p, "name", "%s:", ife->name);
	print_int(p, "index", " index %lld", ife->index);
	print_str(p, "kind", NULL, ife->kind);
	print_str(p, "driver", ", driver %s", ti->driver[0] ? ti->driver : NULL);
	print_bool(p, "up", ", up %s\n", ife->up);

	/* The verdict first: this is what the user came for. */
	print_str(p, "stamps", "  stamps             %s",
		  has_hw ? "hardware" : "software");
	if (has_hw)
		print_text(p, ", PHC %s\n", phc);
	else
		print_text(p, " only, no PHC\n");
	ifinfo_verdict(p, ife, ti, has_hw);
	if (ti->phc_index >= 0) {
		print_int(p, "phc_index", "  phc                %lld", ti->phc_index);
		print_str(p, "phc_device", " (%s)\n", phc);
	} else {
		print_null(p, "phc_index", "  phc                none\n");
		print_null(p, "phc_device", NULL);
	}
	ifinfo_bits(p, "capabilities", "capabilities", ti->so_timestamping,
		    tsinfo_sof_name);
	ifinfo_bits(p, "tx_types", "hw tx types", ti->tx_types, ifinfo_tx_name);
	ifinfo_bits(p, "rx_filters", "hw rx filters", ti->rx_filters,
		    ifinfo_rx_name);

	print_object_begin(p, "hwtstamp");
	err = hwtstamp_get(ife->name, &hw);
	if (!err) {
		print_str(p, "tx_type", "  hwtstamp config    tx %s",
			  hwtstamp_tx_name(hw.tx_type));
		print_str(p, "rx_filter", ", rx %s",
			  hwtstamp_rx_name(hw.rx_filter));
		print_null(p, "error", NULL);
		if (hw.rx_filter != HWTSTAMP_FILTER_ALL && has_hw)
			print_text(p, " (not every packet is stamped: "
				   "ptp4l needs 'hwts_filter full')");
		print_text(p, "\n");
	} else if (!has_hw && (err == -EOPNOTSUPP || err == -EINVAL)) {
		/* Nothing to configure is not a failure: a driver without
		 * hardware stamping refuses the ioctl. */
		print_null(p, "tx_type", "  hwtstamp config    none (the driver "
			   "has no hardware stamping)\n");
		print_null(p, "rx_filter", NULL);
		print_null(p, "error", NULL);
	} else {
		print_null(p, "tx_type", NULL);
		print_null(p, "rx_filter", NULL);
		print_str(p, "error", "  hwtstamp config    not available (%s)\n",
			  strerror(-err));
	}
	print_object_end(p);
	/* A capture cannot tell sent frames from received on loopback
	 * (capture.h): what that means for senders' stamps. */
	print_str(p, "sent_frames", "  sent frames        captured %s",
		  ife->loopback ? "as received" : "as sent");
	print_text(p, "%s\n", ife->loopback ? " (loopback: libpcap hands each "
		   "frame over once, as received); tapless-capd joins senders' keyed TX "
		   "stamps to them by flow" : "");
	print_str(p, "via", "  read through       %s\n",
		  ti->via == TSINFO_VIA_NETLINK ? "netlink" : "ioctl");
	print_object_end(p);
}

int cmd_ifinfo(int argc, char **argv)
{
	struct iface_entry *all = NULL;
	enum print_format fmt;
	unsigned pflags = 0;
	struct printer *p;
	struct utsname un;
	struct opts *o;
	int first, n = 0, rc = CMD_OK, err;

	err = cmd_options(ifinfo_opts, argc, argv, "[IFACE...]", &o, &first);
	if (err)
		return err < 0 ? CMD_OK : err;
	fmt = print_format_from_opts(o, &pflags);

	/* Resolve every name before printing anything: a typo should not
	 * leave half a JSON document behind. */
	if (first < argc) {
		n = argc - first;
		all = xcalloc((size_t)n, sizeof(*all));
		for (int i = 0; i < n; i++) {
			err = iface_get(argv[first + i], &all[i]);
			if (err) {
				fprintf(stderr, "tapless ifinfo: %s: %s\n",
					argv[first + i], err == -ENODEV ?
					"no such interface" : strerror(-err));
				rc = err == -ENODEV ? CMD_USAGE : CMD_SYSTEM;
			}
		}
	} else {
		n = iface_list(NULL, 0);
		if (n >= 0) {
			all = xcalloc((size_t)n + 1, sizeof(*all));
			n = iface_list(all, n);
		}
		if (n < 0) {
			fprintf(stderr, "tapless ifinfo: listing interfaces: %s\n",
				strerror(-n));
			rc = CMD_SYSTEM;
		}
	}
	if (rc) {
		free(all);
		opts_destroy(o);
		return rc;
	}

	p = print_create(stdout, fmt, pflags);
	print_object_begin(p, "kernel");
	print_str(p, "release", "kernel %s", uname(&un) ? NULL : un.release);
	print_bool(p, "opt_id_tcp", ", TCP stamps keyed from write_seq "
		   "(OPT_ID_TCP): %s\n",
		   ts_kernel_accepts(SOF_TIMESTAMPING_SOFTWARE |
				     SOF_TIMESTAMPING_OPT_ID |
				     TAPLESS_SOF_OPT_ID_TCP, SOCK_DGRAM));
	/* Whether capd can stamp a cgroup's sends with BPF, and if not, why
	 * (the reason names the fallback, tapless-stamp). */
	{
		char why[BPFSTAMP_ERRBUF];
		bool can = !bpfstamp_check(why);

		print_bool(p, "cgroup_stamping", "cgroup stamping (tapless-capd "
			   "--stamp-cgroup): %s", can);
		print_str(p, "cgroup_stamping_why", can ? NULL : ": %s",
			  can ? NULL : why);
		print_text(p, "\n\n");
	}
	print_object_end(p);

	print_array_begin(p, "interfaces");
	for (int i = 0; i < n; i++) {
		struct tsinfo ti;

		err = tsinfo_get(all[i].name, &ti);
		if (err) {
			/* Gone since listing, or no ethtool: say so, go on. */
			fprintf(stderr, "tapless ifinfo: %s: %s\n", all[i].name,
				strerror(-err));
			rc = CMD_SYSTEM;
			continue;
		}
		ifinfo_one(p, &all[i], &ti);
		if (i + 1 < n)
			print_text(p, "\n");
	}
	print_array_end(p);
	if (print_destroy(p))
		rc = CMD_SYSTEM;
	free(all);
	opts_destroy(o);
	return rc;
}
