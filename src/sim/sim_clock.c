/* sim_clock.c — sim's clock model (struct sim_clock in sim.h): the stamp
 * a host or a tap gives a true instant, the bounds of its error, and what
 * the host's sync journal says of it at any time.
 */
#include <math.h>
#include <stdio.h>

#include "base/rng.h"
#include "ptp/journal.h"
#include "sim/sim_private.h"

#define UNSYNC_NS 5000.0		/* extra clock error out of sync */
#define JOURNAL_DELAY_NS 500
#define SIM_GM "001b21.fffe.7a5e01"

static bool host_unsync(const struct host *h, int64_t t_ps)
{
	for (unsigned i = 0; i < h->cfg->nunsync; i++)
		if (t_ps >= h->unsync_ps[i][0] && t_ps < h->unsync_ps[i][1])
			return true;
	return false;
}

static double host_theta(const struct host *h, int64_t t_ps)
{
	return 2 * M_PI * ((double)t_ps / (double)PS_PER_S) /
	       h->cfg->clock.period_s + h->phase;
}

/* The rate's part of the clock error at true time t_ps: ppb times seconds
 * since the start is ns. */
double sim_clock_rate_ns(const struct sim_clock *k, int64_t t_ps)
{
	return k->rate_ppb * ((double)t_ps / (double)PS_PER_S);
}

/* Whole ns a stamp can lose to the quantum (and to the floor to ns of a
 * fractional one). */
int64_t sim_clock_quantum_bound_ns(const struct sim_clock *k)
{
	int64_t q = (k->quantum_ps + PS_PER_NS - 1) / PS_PER_NS;

	return k->quantum_ps % PS_PER_NS ? q + 1 : q;
}

/* offset + rate (t - start) + wander sin at true time t_ps: the clock's
 * deterministic error when in sync. */
double sim_host_det_sync_ns(const struct host *h, int64_t t_ps)
{
	const struct sim_clock *k = &h->cfg->clock;
	double e = k->offset_ns;

	if (k->rate_ppb != 0)
		e += sim_clock_rate_ns(k, t_ps);
	if (k->wander_ns != 0)
		e += k->wander_ns * sin(host_theta(h, t_ps));
	return e;
}

/* The deterministic part of the clock error at true time t_ps. */
static double host_det_ns(const struct host *h, int64_t t_ps)
{
	double e = sim_host_det_sync_ns(h, t_ps);

	if (host_unsync(h, t_ps))
		e += UNSYNC_NS;
	return e;
}

/* The range of offset + rate t + wander sin over true times [a, b) ps (the
 * rate's and the wander's ranges added: a bound, exact without a rate). */
static void host_det_range(const struct host *h, int64_t a, int64_t b,
			   double *lo, double *hi)
{
	const struct sim_clock *k = &h->cfg->clock;
	double ta = host_theta(h, a), tb = host_theta(h, b), smax, smin;

	if (k->wander_ns == 0) {
		*lo = *hi = k->offset_ns;
	} else {
		smax = fmax(sin(ta), sin(tb));
		smin = fmin(sin(ta), sin(tb));
		/* A crest (pi/2 + 2k pi) or a trough (3pi/2 + 2k pi) inside. */
		if (ceil((ta - M_PI / 2) / (2 * M_PI)) <= floor((tb - M_PI / 2) / (2 * M_PI)))
			smax = 1;
		if (ceil((ta - 3 * M_PI / 2) / (2 * M_PI)) <= floor((tb - 3 * M_PI / 2) / (2 * M_PI)))
			smin = -1;
		*lo = k->offset_ns + fmin(k->wander_ns * smax, k->wander_ns * smin);
		*hi = k->offset_ns + fmax(k->wander_ns * smax, k->wander_ns * smin);
	}
	if (k->rate_ppb != 0) {
		double ra = sim_clock_rate_ns(k, a), rb = sim_clock_rate_ns(k, b);

		*lo += fmin(ra, rb);
		*hi += fmax(ra, rb);
	}
}

/* The stamp host h gives an event at true time t_ps, on its timescale. */
int64_t sim_host_stamp(struct host *h, int64_t t_ps, int64_t start_ns)
{
	const struct sim_clock *k = &h->cfg->clock;
	double e = host_det_ns(h, t_ps) + h->cfg->clock_error_ns;
	int64_t ns, x;

	if (k->noise_ns > 0) {
		double z = rng_gauss(&h->rng);

		e += k->noise_ns * fmax(-4, fmin(4, z));
	}
	x = t_ps + llround(e * PS_PER_NS);
	if (k->quantum_ps % PS_PER_NS == 0) {
		int64_t q = k->quantum_ps / PS_PER_NS;

		ns = start_ns + h->tai_ns + sim_floordiv(x, PS_PER_NS);
		ns = sim_floordiv(ns, q) * q;
	} else {
		/* On a grid aligned to the start: ps since 1970 overflow. */
		ns = start_ns + h->tai_ns +
		     sim_floordiv(sim_floordiv(x, k->quantum_ps) * k->quantum_ps, PS_PER_NS);
	}
	if (h->res_ns > 1)
		ns = sim_floordiv(ns, h->res_ns) * h->res_ns;
	return ns;
}

void sim_host_init(struct sim *s, int id)
{
	const struct sim_config *c = s->c;
	struct host *h = &s->h[id];
	const struct sim_clock *k;
	double lo;

	h->id = id;
	h->cfg = &c->host[id];
	k = &h->cfg->clock;
	rng_seed(&h->rng, c->seed, 10 + (uint64_t)id);
	h->phase = rng_unit(&s->misc) * 2 * M_PI;
	for (unsigned i = 0; i < h->cfg->nunsync; i++) {
		h->unsync_ps[i][0] = llround(h->cfg->unsync[i].from_s * PS_PER_S);
		h->unsync_ps[i][1] = llround(h->cfg->unsync[i].to_s * PS_PER_S);
	}
	h->tai_ns = h->cfg->tai ? TAI_UTC_NS : 0;
	h->res_ns = h->cfg->format == SIM_FMT_PCAP_US ? 1000 : 1;
	/* Without the rate, which sim_host_flush() adds at the time and
	 * sim_host_span() over the run. */
	lo = k->offset_ns - fabs(k->wander_ns) - 4 * k->noise_ns;
	/* The journal's range leaves the --clock-error out: it does not
	 * know; the stamps' order (sim_host_flush()) does not. */
	h->err_lo_ns = (int64_t)floor(lo) - 2 - sim_clock_quantum_bound_ns(k) -
		       h->res_ns - 1;
	h->min_err_ns = (int64_t)floor(lo + fmin(0, h->cfg->clock_error_ns)) - 2;
	h->err_hi_ns = (int64_t)ceil(k->offset_ns + fabs(k->wander_ns) +
				     4 * k->noise_ns) + 1;
	h->cap_start_ps = llround(h->cfg->start_late_s * PS_PER_S);
}

/* Once the run's span is known: the bounds of stamp - true time the
 * journals use, widened by the rate's error over the run. */
void sim_host_span(struct sim *s, struct host *h)
{
	const struct sim_clock *k = &h->cfg->clock;
	double r;

	if (k->rate_ppb == 0)
		return;
	r = sim_clock_rate_ns(k, s->last_ps);
	h->err_lo_ns += (int64_t)floor(fmin(0, r)) - 1;
	h->err_hi_ns += (int64_t)ceil(fmax(0, r)) + 1;
}

/* ------------------------------------------------------------- journals */

int64_t sim_start_ns(const struct sim *s)
{
	return s->c->start_s * NS_PER_S;
}

int64_t sim_interval_ns(const struct sim *s)
{
	return llround(s->c->journal_interval_s * NS_PER_S);
}

/* Sample j's time: one interval before the first packet, then every
 * interval. */
int64_t sim_journal_time(const struct sim *s, int64_t j)
{
	return sim_start_ns(s) + s->first_ps / PS_PER_NS + (j - 1) * sim_interval_ns(s);
}

/* Sample j covers stamps in [t, t + interval) (UTC). It says sync 0 when
 * the host was out of sync at some time in that interval. */
static bool sim_journal_sync(const struct sim *s, const struct host *h,
			     int64_t t_ns)
{
	int64_t a = (t_ns - sim_start_ns(s)) * PS_PER_NS;
	int64_t b = a + sim_interval_ns(s) * PS_PER_NS;

	for (unsigned i = 0; i < h->cfg->nunsync; i++)
		if (a < h->unsync_ps[i][1] && b > h->unsync_ps[i][0])
			return false;
	return true;
}

/* What the journal says for a stamp (UTC): in sync or not. */
bool sim_journal_lookup(const struct sim *s, const struct host *h,
			int64_t stamp_utc)
{
	int64_t t0 = sim_journal_time(s, 0), j;

	if (stamp_utc < t0)
		return false;
	j = (stamp_utc - t0) / sim_interval_ns(s);
	return sim_journal_sync(s, h, sim_journal_time(s, j));
}

/* The largest |stamp - true time| of a stamp in [t, t + interval): from
 * the true times that can land there, in sync (error within [err_lo,
 * err_hi]) or, shifted by the extra error, in an unsync window just
 * before. */
static int64_t sim_journal_bound(const struct sim *s, const struct host *h,
				 int64_t t_ns)
{
	const struct sim_clock *k = &h->cfg->clock;
	int64_t a = t_ns - sim_start_ns(s), b = a + sim_interval_ns(s);
	double lo, hi, m;

	host_det_range(h, (a - h->err_hi_ns) * PS_PER_NS,
		       (b - h->err_lo_ns) * PS_PER_NS, &lo, &hi);
	m = fmax(fabs(lo), fabs(hi));
	for (unsigned i = 0; i < h->cfg->nunsync; i++) {
		int64_t x = (a - h->err_hi_ns - (int64_t)UNSYNC_NS) * PS_PER_NS;
		int64_t y = (b - h->err_lo_ns - (int64_t)UNSYNC_NS) * PS_PER_NS;

		if (x < h->unsync_ps[i][0])
			x = h->unsync_ps[i][0];
		if (y > h->unsync_ps[i][1])
			y = h->unsync_ps[i][1];
		if (x >= y)
			continue;
		host_det_range(h, x, y, &lo, &hi);
		m = fmax(m, fmax(fabs(lo + UNSYNC_NS), fabs(hi + UNSYNC_NS)));
	}
	return (int64_t)ceil(m) + (int64_t)ceil(4 * k->noise_ns) +
	       sim_clock_quantum_bound_ns(k) + 1;
}

/* Sample at t_ns: the deterministic error as the offset, d(error)/dt as
 * the frequency the servo is chasing, and the bound while in sync. */
void sim_journal_sample(const struct sim *s, const struct host *h,
			int64_t t_ns, struct journal_sample *js)
{
	const struct sim_clock *k = &h->cfg->clock;
	int64_t rel = t_ns - sim_start_ns(s);

	*js = (struct journal_sample){
		.ts_ns = t_ns,
		.delay_ns = JOURNAL_DELAY_NS,
		.steps = 1,
	};
	snprintf(js->clock, sizeof(js->clock), "%s", h->cfg->tai ? "phc0" : "sys");
	snprintf(js->state, sizeof(js->state), "SLAVE");
	snprintf(js->gm, sizeof(js->gm), SIM_GM);
	snprintf(js->servo, sizeof(js->servo), "s2");
	js->offset_ns = llround(host_det_ns(h, rel * PS_PER_NS));
	/* d(error)/dt in ns/s: the frequency the servo is chasing. */
	js->freq_ppb = round(k->wander_ns * 2 * M_PI / k->period_s *
			     cos(host_theta(h, rel * PS_PER_NS)) * 1000) / 1000;
	if (k->rate_ppb != 0)
		js->freq_ppb = round((js->freq_ppb + k->rate_ppb) * 1000) / 1000;
	js->in_sync = sim_journal_sync(s, h, t_ns);
	js->bound_ns = js->in_sync ? sim_journal_bound(s, h, t_ns) : JOURNAL_NONE;
}
