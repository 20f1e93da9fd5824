/* hwsim_host.h — one simulated host of tapless-hwsim: its system clock and
 * its NICs' clocks (PHCs) and stamping configuration, in a file mapped
 * shared by every program of the host (DIR/HOST.hwsim), so that ptp4l,
 * phc2sys, tapless-syncd, tapless-capd and the probes see one set of
 * clocks, as on a real host.
 *
 * A PHC belongs to an interface (by name) and is /dev/ptpN for N its slot.
 * The first question about an interface (its timestamping capabilities,
 * its stamping configuration) gives it a PHC: the host's configured start
 * offset and frequency error when set (tapless-hwsim --phc-offset,
 * --phc-ppm), else drawn from the host's and the interface's names.
 *
 * Truth: every change of a clock (made, stepped, set, its frequency) is
 * appended to DIR/HOST.truth, one line each, in the order made:
 *
 *   # tapless-hwsim truth 1 host NAME
 *   TRUE_NS CLOCK VALUE_NS NATIVE_PPB ADJ_PPB
 *
 * CLOCK sys or phcN: from true time TRUE_NS on, the clock reads
 * VALUE_NS + (t - TRUE_NS) * (1 + (NATIVE_PPB + ADJ_PPB) / 1e9), until its
 * next line. A test knows from it where every clock was at any moment.
 *
 * Every access takes the host's lock (a spin lock in the mapping: the
 * critical sections are a few loads and stores, and a truth line's one
 * write). A program killed holding it wedges the host; a signal handler
 * that reads a simulated clock while its own thread holds the lock spins
 * for ever (signals are not blocked around it: that would cost two system
 * calls a clock read).
 */
#ifndef TAPLESS_HWSIM_HOST_H
#define TAPLESS_HWSIM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwsim/hwsim_clock.h"

#define HWSIM_MAX_PHC 8
#define HWSIM_NAME_MAX 64
#define HWSIM_NONE INT64_MIN

struct hwsim_host;

/* What a new host (and its new PHCs) starts with; HWSIM_NONE and NAN:
 * drawn from the names (hwsim_seed()). */
struct hwsim_params {
	int64_t phc_offset_ns;
	double phc_ppm;
	int64_t sys_offset_ns;
	double sys_ppm;
	int64_t quantum_ns;	/* PHC stamps cut down to a multiple; 0, 1: ns */
	int64_t noise_ns;	/* stamp noise, standard deviation */
};

/* The faults a NIC is under, switched at run time (tapless-hwsim
 * --fault). */
struct hwsim_faults {
	bool gm_gone;		/* takes no PTP message in (UDP 319, 320):
				 * its grandmaster is gone */
	int tx_loss_pct;	/* share of TX stamps lost (igc has 4 slots) */
	bool rx_ptp_only;	/* RX stamps only for PTP event packets, and
				 * a wider filter asked for is answered
				 * HWTSTAMP_FILTER_PTP_V2_EVENT (the X710
				 * trap) */
	int tx_late_pct;	/* share of TX stamps delivered late (a
				 * ConnectX's can be, by up to 500 ms) */
	int64_t tx_late_max_ns;	/* each by a delay drawn in [0, this) */
};

/* What the NIC's programs did under the faults, counted in the host's
 * state (every program of the host adds to it). */
struct hwsim_counts {
	uint64_t tx_lost;	/* TX stamps dropped (tx-loss) */
	uint64_t tx_late;	/* TX stamps held back (tx-late) */
	uint64_t tx_late_forced;	/* of these, handed over before due:
					 * the socket's ring was full */
};

enum hwsim_fault_kind {
	HWSIM_FAULT_STEP,	/* value: ns the PHC jumps by */
	HWSIM_FAULT_FREQ_JUMP,	/* value: ppb its oscillator moves by */
	HWSIM_FAULT_GM_GONE,	/* value: 1 on, 0 off */
	HWSIM_FAULT_TX_LOSS,	/* value: percent */
	HWSIM_FAULT_RX_PTP_ONLY,	/* value: 1 on, 0 off */
	HWSIM_FAULT_TX_LATE,	/* value: percent, max_ns: the longest delay */
};

struct hwsim_fault {
	enum hwsim_fault_kind kind;
	int64_t value;
	int64_t max_ns;		/* HWSIM_FAULT_TX_LATE only */
};

/* A PHC as the library reads it. */
struct hwsim_phc_info {
	char ifname[16];
	struct hwsim_clock clk;
	int64_t quantum_ns, noise_ns;
	int tx_type, rx_filter;	/* the stamping configuration set */
	struct hwsim_faults faults;
	struct hwsim_counts counts;
};

/* The machine's true time: CLOCK_REALTIME as the kernel keeps it, which
 * is also the time of its software stamps. */
int64_t hwsim_true_now(void);

/* Room for a hwsim_host_open() message: a path and why. */
#define HWSIM_HOST_ERRBUF 512

/* The host's file: DIR/HOST.hwsim. Made (mode 0644, with p, or defaults
 * when p is NULL) when create is set and it does not exist; an existing
 * one is used as it is. Returns 0, or -errno with why in err: -ENOENT (no
 * such host, create not set), -EINVAL (not a hwsim file, a host name with
 * '/' or over 63 characters). */
int hwsim_host_open(struct hwsim_host **out, const char *dir, const char *host,
		    bool create, const struct hwsim_params *p,
		    char err[HWSIM_HOST_ERRBUF]);
void hwsim_host_close(struct hwsim_host *h);
const char *hwsim_host_name(const struct hwsim_host *h);
/* What the host was made with. */
void hwsim_host_params(struct hwsim_host *h, struct hwsim_params *p);

/* The slot (N of /dev/ptpN) of ifname's PHC, made when create is set;
 * -ENOENT without one, -ENOSPC when all HWSIM_MAX_PHC are taken. */
int hwsim_phc_find(struct hwsim_host *h, const char *ifname, bool create);
/* How many PHCs the host has (slots 0..n-1). */
unsigned hwsim_phc_count(struct hwsim_host *h);
/* A copy of slot n's state; -ENOENT for a slot not in use. */
int hwsim_phc_get(struct hwsim_host *h, unsigned n, struct hwsim_phc_info *out);

/* A copy of the system clock's state. */
void hwsim_sys_get(struct hwsim_host *h, struct hwsim_clock *out);

/* The clocks: n a PHC's slot, or -1 the system clock. */
int64_t hwsim_read(struct hwsim_host *h, int n, int64_t t_true);
/* clock_adjtime(): the frequency in force, in ppb (the tick's part
 * included), the tick's part alone, and changes of either. */
double hwsim_get_freq(struct hwsim_host *h, int n);
double hwsim_get_tick(struct hwsim_host *h, int n);
void hwsim_set_freq(struct hwsim_host *h, int n, double adj_ppb);
void hwsim_set_tick(struct hwsim_host *h, int n, double tick_ppb);
void hwsim_step(struct hwsim_host *h, int n, int64_t delta_ns);
void hwsim_set(struct hwsim_host *h, int n, int64_t value);
/* The stamp a NIC's PHC n gives a packet at true time t_true: its value,
 * with the PHC's noise, cut to its quantum. */
int64_t hwsim_stamp(struct hwsim_host *h, int n, int64_t t_true);

/* Put PHC n under fault f (a step and a frequency jump go to the truth
 * journal). Returns 0 or -ENOENT. */
int hwsim_fault(struct hwsim_host *h, int n, const struct hwsim_fault *f);
/* True with probability pct %, from this process's generator. */
bool hwsim_draw_pct(struct hwsim_host *h, int pct);
/* A draw in [0, max) (0 when max <= 0), from the same generator. */
int64_t hwsim_draw_below(struct hwsim_host *h, int64_t max);

/* Whether any NIC of the host is under tx-late: one load, no lock, for
 * the library's fast paths. */
bool hwsim_tx_late_any(struct hwsim_host *h);
/* Add to PHC n's counts (struct hwsim_counts). */
void hwsim_count(struct hwsim_host *h, int n, uint64_t tx_lost,
		 uint64_t tx_late, uint64_t tx_late_forced);

/* SIOCSHWTSTAMP / SIOCGHWTSTAMP on slot n. */
void hwsim_set_hwtstamp(struct hwsim_host *h, int n, int tx_type, int rx_filter);

#endif
