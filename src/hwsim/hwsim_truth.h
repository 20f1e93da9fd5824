/* hwsim_truth.h — reading a simulated host's truth journal (DIR/HOST.truth,
 * its format in hwsim_host.h): where each of the host's clocks really was
 * at any true time, and the true time at which one of them read a value.
 *
 * A journal stamped on a simulated host's clock (tapless-syncd's, on the
 * host's system clock) is set against the truth by the second: its times
 * become true times, at which the first gives every clock's true value.
 * tapless report does this for a lab run on simulated clocks; the tests
 * judge syncd's bounds the same way.
 *
 * The whole journal is read into memory: a line per change of a clock, a
 * few dozen a second while ptp4l and phc2sys steer.
 */
#ifndef TAPLESS_HWSIM_TRUTH_H
#define TAPLESS_HWSIM_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#define HWSIM_TRUTH_ERRBUF 512

struct hwsim_truth;

/* Read path. 0, or -errno with why in err ("PATH:LINE: why" for a bad
 * line, -EINVAL; a torn last line, without its newline, is left out as a
 * crash leaves it). */
int hwsim_truth_load(struct hwsim_truth **out, const char *path,
		     char err[HWSIM_TRUTH_ERRBUF]);
void hwsim_truth_free(struct hwsim_truth *t);
/* The host the header names. */
const char *hwsim_truth_host(const struct hwsim_truth *t);

/* Clock ("sys", "phcN")'s value at true time t_true, into *value: 0, or
 * -ENOENT (no such clock), -ERANGE (before its first line). */
int hwsim_truth_at(const struct hwsim_truth *t, const char *clock,
		   int64_t t_true, int64_t *value);

/* The first true time, not before after, at which clock read value, into
 * *t_true: 0, or -ENOENT (no such clock), -ERANGE (never). A clock stepped
 * back reads some values twice; a journal's lines come in true-time
 * order, so the last answer is the next question's after. */
int hwsim_truth_when(const struct hwsim_truth *t, const char *clock,
		     int64_t value, int64_t after, int64_t *t_true);

#endif
