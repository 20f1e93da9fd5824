/* hwsim_pcap.c — libtapless-hwsim.so's part for libpcap: a capture on a
 * simulated NIC gets its stamps as the NIC's clock gives them.
 *
 * A packet socket's stamps come through a ring the kernel fills (libpcap's
 * TPACKET_V3 mmap), where nothing above the kernel can reach them on the
 * way. What can be reached is libpcap's hand-over: pcap_dispatch(),
 * pcap_loop() and pcap_next_ex() of a program linked with libpcap are
 * interposed here (looked up with dlsym(RTLD_NEXT), so a program without
 * libpcap loads nothing of it), and each packet's header is handed on
 * with its time, the kernel's software stamp (true time), made:
 *
 *   PCAP_TSTAMP_ADAPTER_UNSYNCED   the NIC's PHC at that moment (noise and
 *                                  quantum applied): its raw hardware stamp
 *   anything else                  the host's simulated system clock
 *
 * libpcap itself learns that the NIC stamps in hardware from the ethtool
 * ioctl the library answers, and sets the NIC's stamping through
 * SIOCSHWTSTAMP, answered too. Under the rx-filter=ptp fault a packet that
 * is not a PTP event message (UDP port 319 over IPv4 and Ethernet) gets
 * the system clock's time, as the kernel falls back to its software stamp
 * for a frame the NIC did not stamp.
 */
#include <dlfcn.h>
#include <pcap/pcap.h>
#include <string.h>
#include <pthread.h>

#include "hwsim/hwsim_host.h"
#include "hwsimlib/hwsim_lib.h"

#define HWSIM_EXPORT __attribute__((visibility("default")))
#define HWSIM_PCAPS 64

struct hwsim_pcap {
	pcap_t *p;
	char ifname[16];
	int tstamp_type;
};

static struct hwsim_pcap pcaps[HWSIM_PCAPS];
static pthread_mutex_t pcaps_lock = PTHREAD_MUTEX_INITIALIZER;

#define PCAP_REAL(name) static __typeof__(name) *real; \
	if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static struct hwsim_pcap *hwsim_pcap_of(pcap_t *p)
{
	for (int i = 0; i < HWSIM_PCAPS; i++)
		if (pcaps[i].p == p)
			return &pcaps[i];
	return NULL;
}

HWSIM_EXPORT pcap_t *pcap_create(const char *dev, char *errbuf)
{
	PCAP_REAL(pcap_create);
	pcap_t *p = real(dev, errbuf);

	if (p && hwsim_host() && dev) {
		pthread_mutex_lock(&pcaps_lock);
		struct hwsim_pcap *e = hwsim_pcap_of(NULL);

		if (e) {
			e->p = p;
			snprintf(e->ifname, sizeof(e->ifname), "%s", dev);
			e->tstamp_type = PCAP_TSTAMP_HOST;
		}
		pthread_mutex_unlock(&pcaps_lock);
	}
	return p;
}

HWSIM_EXPORT int pcap_set_tstamp_type(pcap_t *p, int type)
{
	PCAP_REAL(pcap_set_tstamp_type);
	int rc = real(p, type);

	if (rc >= 0) {
		pthread_mutex_lock(&pcaps_lock);
		struct hwsim_pcap *e = hwsim_pcap_of(p);

		if (e)
			e->tstamp_type = type;
		pthread_mutex_unlock(&pcaps_lock);
	}
	return rc;
}

HWSIM_EXPORT void pcap_close(pcap_t *p)
{
	PCAP_REAL(pcap_close);

	pthread_mutex_lock(&pcaps_lock);
	struct hwsim_pcap *e = hwsim_pcap_of(p);

	if (e)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&pcaps_lock);
	real(p);
}

/* Whether a frame is a PTP event message: Ethernet, IPv4, UDP to 319. */
static bool hwsim_ptp_event(const u_char *b, bpf_u_int32 caplen)
{
	unsigned ihl;

	if (caplen < 14 + 20 + 8 || b[12] != 0x08 || b[13] != 0x00)
		return false;
	ihl = (b[14] & 0x0f) * 4u;
	if (b[14 + 9] != 17 || caplen < 14 + ihl + 8)
		return false;
	return b[14 + ihl + 2] == 0x01 && b[14 + ihl + 3] == 0x3f;
}

/* The header's time made the simulated NIC's or system clock's. */
static void hwsim_pcap_map(pcap_t *p, struct pcap_pkthdr *h, const u_char *b)
{
	PCAP_REAL(pcap_get_tstamp_precision);
	struct hwsim_host *host = hwsim_host();
	struct hwsim_phc_info info;
	struct hwsim_pcap e = { 0 };
	bool nano = real && real(p) == PCAP_TSTAMP_PRECISION_NANO;
	int64_t t, v;
	int n = -1;

	pthread_mutex_lock(&pcaps_lock);
	if (hwsim_pcap_of(p))
		e = *hwsim_pcap_of(p);
	pthread_mutex_unlock(&pcaps_lock);
	if (!e.p)
		return;
	t = h->ts.tv_sec * 1000000000LL + h->ts.tv_usec * (nano ? 1 : 1000);
	if (e.tstamp_type == PCAP_TSTAMP_ADAPTER_UNSYNCED &&
	    (n = hwsim_phc_find(host, e.ifname, true)) >= 0 &&
	    !hwsim_phc_get(host, (unsigned)n, &info) &&
	    (!info.faults.rx_ptp_only || hwsim_ptp_event(b, h->caplen)))
		v = hwsim_stamp(host, n, t);
	else
		v = hwsim_read(host, -1, t);
	h->ts.tv_sec = v / 1000000000LL;
	h->ts.tv_usec = (v % 1000000000LL) / (nano ? 1 : 1000);
}

struct hwsim_pcap_cb {
	pcap_handler cb;
	u_char *user;
	pcap_t *p;
};

static void hwsim_pcap_trampoline(u_char *arg, const struct pcap_pkthdr *h,
				  const u_char *bytes)
{
	struct hwsim_pcap_cb *c = (void *)arg;
	struct pcap_pkthdr copy = *h;

	hwsim_pcap_map(c->p, &copy, bytes);
	c->cb(c->user, &copy, bytes);
}

HWSIM_EXPORT int pcap_dispatch(pcap_t *p, int cnt, pcap_handler cb, u_char *user)
{
	PCAP_REAL(pcap_dispatch);
	struct hwsim_pcap_cb c = { cb, user, p };

	if (!hwsim_host())
		return real(p, cnt, cb, user);
	return real(p, cnt, hwsim_pcap_trampoline, (u_char *)&c);
}

HWSIM_EXPORT int pcap_loop(pcap_t *p, int cnt, pcap_handler cb, u_char *user)
{
	PCAP_REAL(pcap_loop);
	struct hwsim_pcap_cb c = { cb, user, p };

	if (!hwsim_host())
		return real(p, cnt, cb, user);
	return real(p, cnt, hwsim_pcap_trampoline, (u_char *)&c);
}

HWSIM_EXPORT int pcap_next_ex(pcap_t *p, struct pcap_pkthdr **h,
			      const u_char **bytes)
{
	PCAP_REAL(pcap_next_ex);
	int rc = real(p, h, bytes);

	/* The header is libpcap's own, the program's to read until the
	 * next call: made in place. */
	if (rc == 1 && hwsim_host())
		hwsim_pcap_map(p, *h, *bytes);
	return rc;
}
