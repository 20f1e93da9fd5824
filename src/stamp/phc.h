/* phc.h — read a PTP hardware clock (/dev/ptpN) and its offset to the system
 * clock.
 *
 * The index comes from the interface each time (tsinfo_get), never from a
 * cached /dev/ptpN: indexes change across driver resets.
 */
#ifndef TAPLESS_PHC_H
#define TAPLESS_PHC_H

#include <stdint.h>
#include <sys/types.h>	/* clockid_t, also without _GNU_SOURCE */

struct phc;

enum phc_method {
	PHC_METHOD_PRECISE,	/* PTP_SYS_OFFSET_PRECISE: device cross-stamp */
	PHC_METHOD_EXTENDED,	/* PTP_SYS_OFFSET_EXTENDED: sys-phc-sys */
	PHC_METHOD_BASIC,	/* PTP_SYS_OFFSET: older sys-phc-sys */
};

/* One PHC-to-system comparison, the best of the samples taken. */
struct phc_offset {
	int64_t phc_ns;		/* PHC time */
	int64_t sys_ns;		/* CLOCK_REALTIME at the same instant */
	int64_t offset_ns;	/* phc_ns - sys_ns */
	int64_t window_ns;	/* width of the sys bracket; 0 for PRECISE */
	enum phc_method method;
};

/* Open /dev/ptp<index> read-only. Returns 0, -ENOENT, -EACCES, ...;
 * -EINVAL for a negative index. */
int phc_open(struct phc **out, int index);
void phc_close(struct phc *phc);
int phc_index(const struct phc *phc);
clockid_t phc_clockid(const struct phc *phc);

/* Read the PHC's time. */
int phc_gettime(const struct phc *phc, int64_t *ns);

struct ptp_clock_caps;

/* The device's capabilities (PTP_CLOCK_GETCAPS: max_adj, pins, whether it
 * cross-stamps). Returns 0 or -errno. */
int phc_caps(const struct phc *phc, struct ptp_clock_caps *caps);

/* Compare with CLOCK_REALTIME: PRECISE, else EXTENDED, else BASIC; samples
 * (1..25) readings, keep the narrowest window. Remembers which method the
 * device accepted. Returns 0 or -errno: -EINVAL for samples out of range,
 * -EAGAIN when the system clock was stepped during every sample. */
int phc_sys_offset(struct phc *phc, int samples, struct phc_offset *out);

/* "precise", "extended", "basic"; "?" for an unknown value. */
const char *phc_method_name(enum phc_method m);

struct ptp_sys_offset;
struct ptp_sys_offset_extended;

/* The narrowest (sys before, phc, sys after) sample of a reading, as an
 * offset with the PHC set against the midpoint of its sys bracket (before +
 * window / 2, integer ns); the first of equally narrow ones. Samples whose
 * bracket is negative (CLOCK_REALTIME stepped back in between) are skipped.
 * Pure, so tests run without a PHC. -EINVAL for 0 or more than 25 samples,
 * -EAGAIN when every sample was skipped; *out is written only on success. */
int phc_pick_extended(const struct ptp_sys_offset_extended *x,
		      struct phc_offset *out);
int phc_pick_basic(const struct ptp_sys_offset *x, struct phc_offset *out);

#endif
