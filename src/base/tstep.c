/* tstep.c — greatest common step of a stream of values (tstep.h). */
#include "base/tstep.h"

#include <string.h>

void tstep_init(struct tstep *s)
{
	memset(s, 0, sizeof(*s));
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void tstep_add(struct tstep *s, int64_t v)
{
	uint64_t d;

	if (s->any && s->g != 1 && v != s->last) {
		/* Unsigned: the difference of two int64_t may not fit one. */
		d = v > s->last ? (uint64_t)v - (uint64_t)s->last :
				  (uint64_t)s->last - (uint64_t)v;
		s->g = gcd_u64(d, s->g);
	}
	s->last = v;
	s->any = true;
}

int64_t tstep_get(const struct tstep *s)
{
	return s->g > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)s->g;
}
