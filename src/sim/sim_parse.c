/* sim_parse.c — the command-line forms of sim's configuration (sim.h):
 * rate lists, link speeds, clock models and the per-host HOST=VALUE
 * options. Library functions, for tapless sim and the unit tests.
 */
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "base/ratelist.h"
#include "files/topo.h"
#include "sim/sim_private.h"

static bool sim_number(const char *s, size_t n, double *v)
{
	char buf[64], *end;

	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*v = strtod(buf, &end);
	return !errno && *end == 0 && isfinite(*v) && !strchr(buf, ' ');
}

int sim_parse_rates(struct sim_config *c, const char *text,
		    char err[SIM_ERRBUF])
{
	struct ratelist rl;
	char why[RATELIST_ERRBUF];

	/* The message is cut where it always was (a 160-byte buffer). */
	if (ratelist_parse(&rl, text, SIM_MAX_RATES, RATELIST_WHOLE, why))
		return sim_fail(err, "--rates: %.159s", why);
	for (unsigned i = 0; i < rl.n; i++) {
		if (rl.rate[i] > SIM_MAX_RATE)
			return sim_fail(err, "--rates: %.0f is more than "
					"%.0f messages/s", rl.rate[i],
					SIM_MAX_RATE);
		c->rates[i] = (int64_t)rl.rate[i];
	}
	c->nrates = rl.n;
	return 0;
}

int sim_parse_speed(const char *text, int64_t *bps)
{
	double v;

	/* The topology file's grammar, since sim writes the speed there. */
	if (topo_parse_speed(text, &v) || v > 1e12 || v != floor(v))
		return -EINVAL;
	*bps = (int64_t)v;
	/* Serialisation in whole picoseconds per byte. */
	if ((8 * PS_PER_S) % *bps)
		return -EINVAL;
	return 0;
}

/* "HOST" then sep: the host's index and the rest after sep. */
static int sim_host_prefix(const char *opt, const char *text, char sep,
			   const char **rest, char err[SIM_ERRBUF])
{
	const char *s = strchr(text, sep);

	for (int h = 0; s && h < SIM_HOSTS; h++)
		if ((size_t)(s - text) == strlen(sim_hosts[h]) &&
		    !strncmp(text, sim_hosts[h], (size_t)(s - text))) {
			*rest = s + 1;
			return h;
		}
	return sim_fail(err, "--%s: '%s': expected algo%c... or venue%c...",
			opt, text, sep, sep);
}

/* A quantum in ns with at most 3 decimals, in ps; false if it has more. */
static bool sim_quantum_ps(double v, int64_t *ps)
{
	double x = v * PS_PER_NS;

	if (!(v >= 0.001 && v <= 1e6))
		return false;
	*ps = llround(x);
	return fabs(x - (double)*ps) < 1e-3;
}

int sim_parse_clock(struct sim_config *c, const char *text,
		    char err[SIM_ERRBUF])
{
	const char *p;
	struct sim_clock k, *dst;
	int h;

	if (!strncmp(text, "tap:", 4)) {
		dst = &c->tap_clock;
		p = text + 4;
	} else {
		h = sim_host_prefix("clock", text, ':', &p, err);
		if (h < 0)
			return sim_fail(err, "--clock: '%s': expected algo:..., "
					"venue:... or tap:...", text);
		dst = &c->host[h].clock;
	}
	k = *dst;
	while (*p) {
		size_t n = strcspn(p, ","), klen = strcspn(p, "=");
		const char *range;
		double v;
		bool ok;

		if (klen >= n || !sim_number(p + klen + 1, n - klen - 1, &v))
			return sim_fail(err, "--clock: '%.*s' is not KEY=NUMBER",
					(int)n, p);
#define KEY(s) (klen == strlen(s) && !strncmp(p, s, klen))
		if (KEY("offset")) {
			ok = fabs(v) <= 1e9;
			k.offset_ns = v;
			range = "ns, -1e9 to 1e9";
		} else if (KEY("rate")) {
			ok = fabs(v) <= 1e6;
			k.rate_ppb = v;
			range = "ppb, -1e6 to 1e6";
		} else if (KEY("wander")) {
			ok = fabs(v) <= 1e9;
			k.wander_ns = v;
			range = "ns, -1e9 to 1e9";
		} else if (KEY("period")) {
			ok = v > 0 && v <= 1e9;
			k.period_s = v;
			range = "s, above 0, up to 1e9";
		} else if (KEY("noise")) {
			ok = v >= 0 && v <= 1e6;
			k.noise_ns = v;
			range = "ns, 0 to 1e6";
		} else if (KEY("quantum")) {
			ok = sim_quantum_ps(v, &k.quantum_ps);
			range = "ns, 0.001 to 1e6, at most 3 decimals";
		} else {
			return sim_fail(err, "--clock: '%.*s': unknown key (offset, "
					"rate, wander, period, noise, quantum)", (int)n, p);
		}
		if (!ok)
			return sim_fail(err, "--clock: '%.*s': %.*s out of range (%s)",
					(int)n, p, (int)klen, p, range);
#undef KEY
		p += n + (p[n] == ',');
	}
	*dst = k;
	return 0;
}

int sim_parse_tap(struct sim_config *c, const char *text, char err[SIM_ERRBUF])
{
	for (int h = 0; h < SIM_HOSTS; h++)
		if (!strcmp(text, sim_hosts[h])) {
			c->tap[h] = true;
			return 0;
		}
	return sim_fail(err, "--tap: '%s': expected algo or venue", text);
}

int sim_parse_timescale(struct sim_config *c, const char *text,
			char err[SIM_ERRBUF])
{
	const char *v;
	int h = sim_host_prefix("timescale", text, '=', &v, err);

	if (h < 0)
		return h;
	if (strcmp(v, "tai") && strcmp(v, "utc"))
		return sim_fail(err, "--timescale: '%s': expected tai or utc", v);
	c->host[h].tai = !strcmp(v, "tai");
	return 0;
}

int sim_parse_unsync(struct sim_config *c, const char *text,
		     char err[SIM_ERRBUF])
{
	const char *v, *dash;
	int h = sim_host_prefix("unsync", text, '=', &v, err);
	struct sim_host_config *hc;
	double from, to;

	if (h < 0)
		return h;
	hc = &c->host[h];
	dash = strchr(v, '-');
	if (!dash || !sim_number(v, (size_t)(dash - v), &from) ||
	    !sim_number(dash + 1, strlen(dash + 1), &to) || from < 0 || to <= from ||
	    to > 1e6)
		return sim_fail(err, "--unsync: '%s': expected FROM-TO, seconds "
				"after the start, FROM < TO", v);
	if (hc->nunsync == SIM_MAX_UNSYNC)
		return sim_fail(err, "--unsync: more than %d windows for %s",
				SIM_MAX_UNSYNC, sim_hosts[h]);
	hc->unsync[hc->nunsync].from_s = from;
	hc->unsync[hc->nunsync++].to_s = to;
	return 0;
}

int sim_parse_clock_error(struct sim_config *c, const char *text,
			  char err[SIM_ERRBUF])
{
	const char *v;
	int h = sim_host_prefix("clock-error", text, '=', &v, err);
	bool neg;
	long long ns;

	if (h < 0)
		return h;
	neg = *v == '-';
	if (opts_parse_ns(v + neg, 1, &ns) || ns > 1000000000LL)
		return sim_fail(err, "--clock-error: '%s': expected a time "
				"with a unit, at most 1 s either way (-20us)", v);
	c->host[h].clock_error_ns = neg ? -(double)ns : (double)ns;
	return 0;
}

int sim_parse_start_late(struct sim_config *c, const char *text,
			 char err[SIM_ERRBUF])
{
	const char *v;
	int h = sim_host_prefix("start-late", text, '=', &v, err);
	double s;

	if (h < 0)
		return h;
	if (!sim_number(v, strlen(v), &s) || s < 0 || s > 1e6)
		return sim_fail(err, "--start-late: '%s': expected seconds >= 0", v);
	c->host[h].start_late_s = s;
	return 0;
}

int sim_parse_format(struct sim_config *c, const char *text,
		     char err[SIM_ERRBUF])
{
	const char *v;
	int h = sim_host_prefix("format", text, '=', &v, err);

	if (h < 0)
		return h;
	for (int f = 0; f < SIM_FMT_COUNT; f++)
		if (!strcmp(v, sim_formats[f])) {
			c->host[h].format = (enum sim_format)f;
			return 0;
		}
	return sim_fail(err, "--format: '%s': expected pcapng, pcap or pcap-us", v);
}

int sim_parse_capture_drop(struct sim_config *c, const char *text,
			   char err[SIM_ERRBUF])
{
	const char *v;
	int h = sim_host_prefix("capture-drop", text, '=', &v, err);
	size_t n;
	double p;

	if (h < 0)
		return h;
	n = strlen(v);
	/* "0.1%" is 0.001: the way drop rates are usually quoted. */
	if (n && v[n - 1] == '%') {
		if (!sim_number(v, n - 1, &p))
			goto bad;
		p /= 100;
	} else if (!sim_number(v, n, &p)) {
		goto bad;
	}
	if (!(p >= 0 && p < 1))
		goto bad;
	if (c->host[h].capture_drop_set)
		return sim_fail(err, "--capture-drop: '%s': %s given twice",
				text, sim_hosts[h]);
	c->host[h].capture_drop = p;
	c->host[h].capture_drop_set = true;
	return 0;
bad:
	return sim_fail(err, "--capture-drop: '%s': expected a probability "
			"from 0 to below 1, or a percentage below 100%%", text);
}
