/* hwsim_clock.h — one simulated clock of tapless-hwsim: its value as a
 * function of the machine's true time and of what was done to it.
 *
 *   value(t) = ref_val + (t - ref_true) * (1 + (native_ppb + adj_ppb) / 1e9)
 *
 * native_ppb is the oscillator's own error (what a servo must correct),
 * adj_ppb the frequency a program set: clock_adjtime(ADJ_FREQUENCY), and
 * for the system clock its tick too (ADJ_TICK: phc2sys steers beyond
 * 500 ppm with it), kept apart in tick_ppb and counted in adj_ppb.
 * Each change rebases (ref_true, ref_val) at the moment it is made, so a
 * clock's history is a chain of straight pieces, and value() is exact for
 * the piece in force. Pure computation on a plain struct: it lives in
 * shared memory (hwsim_host.h) and is copied under the host's lock.
 */
#ifndef TAPLESS_HWSIM_CLOCK_H
#define TAPLESS_HWSIM_CLOCK_H

#include <stdint.h>

struct hwsim_clock {
	int64_t ref_true;	/* true time (ns) at the last change */
	int64_t ref_val;	/* the clock's value then */
	double native_ppb;	/* the oscillator's frequency error */
	double adj_ppb;		/* the adjustment in force, tick included */
	double tick_ppb;	/* of which the tick's (system clock) */
};

/* A clock offset_ns from true time at t_true, running native_ppb fast. */
void hwsim_clock_init(struct hwsim_clock *c, int64_t t_true, int64_t offset_ns,
		      double native_ppb);
/* Its value at true time t_true (at or after its last change). */
int64_t hwsim_clock_at(const struct hwsim_clock *c, int64_t t_true);
/* clock_adjtime(ADJ_FREQUENCY) at t_true: the adjustment, in ppb. */
void hwsim_clock_set_freq(struct hwsim_clock *c, int64_t t_true, double adj_ppb);
/* clock_adjtime(ADJ_SETOFFSET) at t_true: delta_ns added. */
void hwsim_clock_step(struct hwsim_clock *c, int64_t t_true, int64_t delta_ns);
/* clock_settime() at t_true. */
void hwsim_clock_set(struct hwsim_clock *c, int64_t t_true, int64_t value);

/* The start offset (within +-1 ms) and frequency error (within +-50 ppm)
 * a clock gets when nothing was configured: drawn from the host's and the
 * clock's names (FNV-1a), so every run of a test starts alike. */
void hwsim_seed(const char *host, const char *name, int64_t *offset_ns,
		double *native_ppb);

#endif
