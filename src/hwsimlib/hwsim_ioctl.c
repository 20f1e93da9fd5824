/* hwsim_ioctl.c — libtapless-hwsim.so's ioctl(): a PHC descriptor's
 * (PTP_CLOCK_GETCAPS, PTP_SYS_OFFSET{,_EXTENDED,_PRECISE}) on the
 * simulated PHC, and the NIC's (SIOCETHTOOL ETHTOOL_GET_TS_INFO,
 * SIOCSHWTSTAMP, SIOCGHWTSTAMP) for an interface of the simulated host.
 * hwsim_preload.c says what the library answers as a whole.
 */
#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/ptp_clock.h>
#include <linux/sockios.h>

#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_private.h"

/* ---- the PHC's ioctls ---- */

static int hwsim_phc_ioctl(int n, unsigned long req, void *arg)
{
	int64_t t;

	switch (req) {
	case PTP_CLOCK_GETCAPS:
	case PTP_CLOCK_GETCAPS2: {
		struct ptp_clock_caps *c = arg;

		memset(c, 0, sizeof(*c));
		c->max_adj = 1000000;		/* 1000 ppm */
		c->cross_timestamping = 1;
		return 0;
	}
	case PTP_SYS_OFFSET:
	case PTP_SYS_OFFSET2: {
		struct ptp_sys_offset *so = arg;
		unsigned k = so->n_samples;

		if (!k || k > PTP_MAX_SAMPLES) {
			errno = EINVAL;
			return -1;
		}
		/* sys, phc, sys, ..., sys: each pair at one true instant. */
		for (unsigned i = 0; i <= k; i++) {
			struct timespec s;

			t = hwsim_true_now();
			hwsim_ns_ts(hwsim_read(hwsim_prog_host, -1, t), &s);
			so->ts[2 * i].sec = s.tv_sec;
			so->ts[2 * i].nsec = (unsigned)s.tv_nsec;
			if (i < k) {
				hwsim_ns_ts(hwsim_read(hwsim_prog_host, n, t), &s);
				so->ts[2 * i + 1].sec = s.tv_sec;
				so->ts[2 * i + 1].nsec = (unsigned)s.tv_nsec;
			}
		}
		return 0;
	}
	case PTP_SYS_OFFSET_EXTENDED:
	case PTP_SYS_OFFSET_EXTENDED2: {
		struct ptp_sys_offset_extended *so = arg;

		if (!so->n_samples || so->n_samples > PTP_MAX_SAMPLES) {
			errno = EINVAL;
			return -1;
		}
		for (unsigned i = 0; i < so->n_samples; i++) {
			struct timespec s, p;

			t = hwsim_true_now();
			hwsim_ns_ts(hwsim_read(hwsim_prog_host, -1, t), &s);
			hwsim_ns_ts(hwsim_read(hwsim_prog_host, n, t), &p);
			so->ts[i][0].sec = so->ts[i][2].sec = s.tv_sec;
			so->ts[i][0].nsec = so->ts[i][2].nsec = (unsigned)s.tv_nsec;
			so->ts[i][1].sec = p.tv_sec;
			so->ts[i][1].nsec = (unsigned)p.tv_nsec;
		}
		return 0;
	}
	case PTP_SYS_OFFSET_PRECISE:
	case PTP_SYS_OFFSET_PRECISE2: {
		struct ptp_sys_offset_precise *so = arg;
		struct timespec s, p, raw;

		t = hwsim_true_now();
		hwsim_ns_ts(hwsim_read(hwsim_prog_host, -1, t), &s);
		hwsim_ns_ts(hwsim_read(hwsim_prog_host, n, t), &p);
		hwsim_real_clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
		memset(so, 0, sizeof(*so));
		so->device.sec = p.tv_sec;
		so->device.nsec = (unsigned)p.tv_nsec;
		so->sys_realtime.sec = s.tv_sec;
		so->sys_realtime.nsec = (unsigned)s.tv_nsec;
		so->sys_monoraw.sec = raw.tv_sec;
		so->sys_monoraw.nsec = (unsigned)raw.tv_nsec;
		return 0;
	}
	default:
		errno = EOPNOTSUPP;	/* pins, PPS, alarms: not simulated */
		return -1;
	}
}

/* ---- the NIC's ioctls ---- */

static int hwsim_nic_ioctl(int fd, unsigned long req, struct ifreq *ifr,
			   bool *done)
{
	int n;

	*done = false;
	if (!strcmp(ifr->ifr_name, "lo"))
		return 0;
	if (req == SIOCETHTOOL) {
		struct ethtool_ts_info *ti = (void *)ifr->ifr_data;

		if (ti->cmd != ETHTOOL_GET_TS_INFO)
			return 0;
		n = hwsim_phc_find(hwsim_prog_host, ifr->ifr_name, true);
		if (n < 0)
			return 0;
		memset(ti, 0, sizeof(*ti));
		ti->cmd = ETHTOOL_GET_TS_INFO;
		ti->so_timestamping = SOF_TIMESTAMPING_TX_HARDWARE |
			SOF_TIMESTAMPING_TX_SOFTWARE |
			SOF_TIMESTAMPING_RX_HARDWARE |
			SOF_TIMESTAMPING_RX_SOFTWARE |
			SOF_TIMESTAMPING_SOFTWARE |
			SOF_TIMESTAMPING_RAW_HARDWARE;
		ti->phc_index = n;
		ti->tx_types = 1 << HWTSTAMP_TX_OFF | 1 << HWTSTAMP_TX_ON;
		ti->rx_filters = 1 << HWTSTAMP_FILTER_NONE |
			1 << HWTSTAMP_FILTER_ALL |
			1 << HWTSTAMP_FILTER_PTP_V2_EVENT;
		*done = true;
		return 0;
	}
	if (req == SIOCSHWTSTAMP || req == SIOCGHWTSTAMP) {
		struct hwtstamp_config *cfg = (void *)ifr->ifr_data;
		struct hwsim_phc_info p;

		n = hwsim_phc_find(hwsim_prog_host, ifr->ifr_name, true);
		if (n < 0)
			return 0;
		(void)fd;
		*done = true;
		if (req == SIOCSHWTSTAMP) {
			if (cfg->tx_type != HWTSTAMP_TX_OFF &&
			    cfg->tx_type != HWTSTAMP_TX_ON) {
				errno = ERANGE;
				return -1;
			}
			/* A filter wider than none stamps everything, as
			 * most NICs answer; under the X710 fault, PTP
			 * event packets only, whatever was asked. */
			hwsim_phc_get(hwsim_prog_host, (unsigned)n, &p);
			if (cfg->rx_filter != HWTSTAMP_FILTER_NONE)
				cfg->rx_filter = p.faults.rx_ptp_only ?
					HWTSTAMP_FILTER_PTP_V2_EVENT :
					HWTSTAMP_FILTER_ALL;
			hwsim_set_hwtstamp(hwsim_prog_host, n, cfg->tx_type, cfg->rx_filter);
			return 0;
		}
		hwsim_phc_get(hwsim_prog_host, (unsigned)n, &p);
		cfg->flags = 0;
		cfg->tx_type = p.tx_type;
		cfg->rx_filter = p.rx_filter;
		return 0;
	}
	return 0;
}

HWSIM_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	REAL(ioctl);
	if (hwsim_prog_host && fd >= 0 && fd < HWSIM_FDS && hwsim_fdtab[fd].kind == FD_PHC)
		return hwsim_phc_ioctl(hwsim_fdtab[fd].phc, req, arg);
	if (hwsim_prog_host && arg && (req == SIOCETHTOOL || req == SIOCSHWTSTAMP ||
			    req == SIOCGHWTSTAMP)) {
		bool done;
		int rc = hwsim_nic_ioctl(fd, req, arg, &done);

		if (done || rc)
			return rc;
	}
	return hwsim_real_ioctl(fd, req, arg);
}
