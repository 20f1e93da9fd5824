/* ratelist.h — lists of market data rates: "500,1000,5k,20k,100k".
 *
 * One rate is a positive decimal number of messages per second, optionally
 * with a suffix k (thousands) or M (millions): "71000", "71k", "0.5M",
 * "2.5", "1e5". Items are separated by commas; spaces around an item are ignored.
 * Every item must be a rate: no empty items, none twice, at most 1e9.
 */
#ifndef TAPLESS_BASE_RATELIST_H
#define TAPLESS_BASE_RATELIST_H

#include <stddef.h>

/* The FTTC report's rates (its market data buckets), the default of
 * tapless correlate --rates and tapless lab (scripts/lab repeats the list
 * in RATES: change both). */
#define RATELIST_FTTC "500,1000,5000,12000,20000,50000,71000,100000"

#define RATELIST_MAX 64		/* rates in one list, at most */
#define RATELIST_MAX_RATE 1e9	/* messages/s, at most */
#define RATELIST_ERRBUF 256	/* a message quoting an item or the list */

/* Flags of ratelist_parse(). */
#define RATELIST_WHOLE 1u	/* whole numbers only (1.5k yes, 2.5 no) */

struct ratelist {
	unsigned n;
	double rate[RATELIST_MAX];	/* in the order given */
};

/* Parse text into *rl. max: most rates the caller takes (0 or more than
 * RATELIST_MAX: RATELIST_MAX). Returns 0, or -EINVAL with err (may be
 * NULL) quoting the item at fault; *rl is then undefined. */
int ratelist_parse(struct ratelist *rl, const char *text, unsigned max,
		   unsigned flags, char err[RATELIST_ERRBUF]);

/* *rl = RATELIST_FTTC, parsed. */
void ratelist_fttc(struct ratelist *rl);

/* A rate as the FTTC tables write it: "100k", "71k", "5k", "1000", "500",
 * "12.5k" (from 10000 on), "2.5". */
void ratelist_label(double rate, char *buf, size_t len);

#endif
