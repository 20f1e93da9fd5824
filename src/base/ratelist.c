/* ratelist.c — see ratelist.h. */
#include "base/ratelist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errbuf.h"

/* Every error of this module is bad input. */
#define bad(err, ...) errbuf_set(err, RATELIST_ERRBUF, -EINVAL, __VA_ARGS__)

/* One item, s[0..n) with spaces trimmed: its rate, or false. */
static bool parse_rate(const char *s, size_t n, unsigned flags, double *out)
{
	char buf[64], *end;
	double v, scale = 1;

	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (buf[n - 1] == 'k' || buf[n - 1] == 'K')
		scale = 1e3;
	else if (buf[n - 1] == 'M')
		scale = 1e6;
	if (scale != 1)
		buf[--n] = 0;
	/* strtod would also take hex, "inf", "nan" and leading spaces or
	 * signs: a rate starts with a digit or a point ("1e3" is fine). */
	if (!n || !strchr("0123456789.", buf[0]) || strpbrk(buf, "xX"))
		return false;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || end == buf)
		return false;
	v *= scale;
	if (!(v > 0) || v > RATELIST_MAX_RATE)
		return false;
	if ((flags & RATELIST_WHOLE) && v != floor(v))
		return false;
	*out = v;
	return true;
}

int ratelist_parse(struct ratelist *rl, const char *text, unsigned max,
		   unsigned flags, char err[RATELIST_ERRBUF])
{
	const char *p = text ? text : "";

	if (!max || max > RATELIST_MAX)
		max = RATELIST_MAX;
	rl->n = 0;
	for (;;) {
		size_t k = strcspn(p, ","), a = 0, b = k;
		double v;

		while (a < b && isspace((unsigned char)p[a]))
			a++;
		while (b > a && isspace((unsigned char)p[b - 1]))
			b--;
		if (a == b && !rl->n && !p[k])
			return bad(err, "no rate given");
		if (a == b)
			return bad(err, "'%s': an empty item", text);
		if (rl->n == max)
			return bad(err, "more than %u rates in '%s'",
				   max, text);
		if (!parse_rate(p + a, b - a, flags, &v))
			return bad(err, "'%.*s' is not a rate (%s messages/s "
				   "up to 1e9, k or M after it: 500, 71k, 0.1M)",
				   (int)(b - a), p + a,
				   flags & RATELIST_WHOLE ? "whole" : "positive");
		for (unsigned i = 0; i < rl->n; i++)
			if (rl->rate[i] == v)
				return bad(err, "'%.*s' twice (%g)",
					   (int)(b - a), p + a, v);
		rl->rate[rl->n++] = v;
		if (!p[k])
			return 0;
		p += k + 1;
	}
}

void ratelist_fttc(struct ratelist *rl)
{
	if (ratelist_parse(rl, RATELIST_FTTC, 0, RATELIST_WHOLE, NULL))
		abort();	/* a constant: cannot happen */
}

void ratelist_label(double rate, char *buf, size_t len)
{
	if (rate >= 5000 && fmod(rate, 1000) == 0)
		snprintf(buf, len, "%.0fk", rate / 1000);
	else if (rate >= 10000)
		snprintf(buf, len, "%.1fk", rate / 1000);
	else
		snprintf(buf, len, "%g", rate);
}
