/* nstime.h — the units every stamp in tapless is counted in, and the one
 * offset between the two timescales stamps come on.
 *
 * Stamps are int64_t nanoseconds. A PHC run by ptp4l keeps TAI; the system
 * clock, and everything stamped from it, keeps UTC; the two differ by the
 * leap seconds since 1972, 37 s since 2017-01-01 (IERS Bulletin C
 * announces the next; none is scheduled). Code that must tell the two
 * apart takes TAI_UTC_S from here, so a new leap second is one edit.
 */
#ifndef TAPLESS_NSTIME_H
#define TAPLESS_NSTIME_H

#include <stdint.h>
#include <time.h>

#define NS_PER_US 1000LL
#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

/* A timespec in nanoseconds, and a clock's reading: the one conversion,
 * inline for the programs that run inside others (tapless-stamp's
 * library links no timestamping core for it). */
static inline int64_t nstime_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NS_PER_S + t->tv_nsec;
}

static inline int64_t nstime_now(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return nstime_of(&t);
}

/* A stamp as people read it: ISO-8601 UTC with every nanosecond digit,
 * "2026-11-29T02:03:04.123456789Z" (a stamp before 1970 too: the digits
 * count forward from the second before it). Text output only; JSON and
 * CSV keep the integer. Returns buf. */
#define NSTIME_ISO_BUF 64
char *nstime_iso(int64_t ns, char buf[NSTIME_ISO_BUF]);

#define TAI_UTC_S 37
#define TAI_UTC_NS (TAI_UTC_S * NS_PER_S)
/* The same as text, for an options table's default. */
#define NSTIME_STR_(x) #x
#define NSTIME_STR(x) NSTIME_STR_(x)
#define TAI_UTC_S_TEXT NSTIME_STR(TAI_UTC_S)

#endif
