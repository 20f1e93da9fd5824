/* linfit.h — a straight line through (x, y) samples by least squares,
 * streamed: a clock's offset and rate from error samples over time.
 *
 * Co-moments are updated one sample at a time (Welford), so the fit stays
 * exact to double precision even when x spans hours of nanoseconds. Give x
 * relative to a nearby origin (the first sample) all the same: the result is
 * y = a + b (x - x0) with x0 the first x seen.
 */
#ifndef TAPLESS_LINFIT_H
#define TAPLESS_LINFIT_H

#include <stdint.h>

struct linfit {
	uint64_t n;
	double x0;		/* first x */
	double mx, my;		/* means of x - x0 and y */
	double cxx, cxy, cyy;	/* co-moments about the means */
};

struct linfit_result {
	uint64_t n;
	double x0;
	double a;		/* y at x0 */
	double b;		/* slope: dy/dx */
	double resid_sd;	/* SD of y about the line (n - 2); 0 below 3 */
};

void linfit_init(struct linfit *f);
void linfit_add(struct linfit *f, double x, double y);

/* The line so far. Below two samples, or with every x equal, the slope is
 * 0 and a is the mean of y. */
void linfit_result(const struct linfit *f, struct linfit_result *r);

#endif
