/* linfit.c — streamed least-squares line (linfit.h). */
#include "base/linfit.h"

#include <math.h>
#include <string.h>

void linfit_init(struct linfit *f)
{
	memset(f, 0, sizeof(*f));
}

void linfit_add(struct linfit *f, double x, double y)
{
	double dx, dy;

	if (!f->n)
		f->x0 = x;
	x -= f->x0;
	f->n++;
	dx = x - f->mx;
	dy = y - f->my;
	f->mx += dx / (double)f->n;
	f->my += dy / (double)f->n;
	/* Old deviation times new: the Welford update of each co-moment. */
	f->cxx += dx * (x - f->mx);
	f->cxy += dx * (y - f->my);
	f->cyy += dy * (y - f->my);
}

void linfit_result(const struct linfit *f, struct linfit_result *r)
{
	double ss;

	r->n = f->n;
	r->x0 = f->x0;
	r->b = f->n >= 2 && f->cxx > 0 ? f->cxy / f->cxx : 0;
	r->a = f->my - r->b * f->mx;
	ss = f->cyy - r->b * f->cxy;
	r->resid_sd = f->n >= 3 ? sqrt(fmax(0, ss) / (double)(f->n - 2)) : 0;
}
