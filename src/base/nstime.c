/* nstime.c — see nstime.h. */
#include <stdio.h>

#include "base/nstime.h"

/* Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
 * civil_from_days): exact over all of int64_t / NS_PER_S, where gmtime_r
 * depends on time_t and would need a struct tm per call besides. */
static void nstime_civil(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

char *nstime_iso(int64_t ns, char buf[NSTIME_ISO_BUF])
{
	/* Floor, not truncation: -1 ns is 23:59:59.999999999 the day before. */
	int64_t s = ns / NS_PER_S, frac = ns % NS_PER_S;
	int64_t days, sod, y;
	unsigned m, d;

	if (frac < 0) {
		frac += NS_PER_S;
		s--;
	}
	days = s / 86400;
	sod = s % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	nstime_civil(days, &y, &m, &d);
	snprintf(buf, NSTIME_ISO_BUF, "%04lld-%02u-%02uT%02u:%02u:%02u.%09lldZ",
		 (long long)y, m, d, (unsigned)(sod / 3600),
		 (unsigned)(sod / 60 % 60), (unsigned)(sod % 60),
		 (long long)frac);
	return buf;
}
