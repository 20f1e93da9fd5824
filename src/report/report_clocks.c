/* report_clocks.c — the hosts' clocks against the truth (report_private.h).
 *
 * A lab run on simulated NIC clocks (lab.conf "clocks hwsim") leaves the
 * simulator's truth journals in DIR/clocks/HOST.truth: where every clock
 * of every host really was. Each sample of a host's sync journal is put
 * at its true time (the journal stamps it on the host's own system
 * clock, which the truth maps back) and set beside the truth there:
 *
 *   journalled  the offset syncd wrote (ptp4l's, or phc2sys's for a clock
 *               kept on the PTP one) and its error bound;
 *   true        the clock minus PTP time at that moment: the grandmaster's
 *               PHC (lab.conf clock_reference), less the UTC offset the
 *               grandmaster announces for a system clock, which keeps UTC.
 *
 * Per rate, over its runs' true window (run.conf *_start_ns, *_end_ns):
 * the offsets' means, the true offset's worst, the bound's median and
 * how often it held the true offset. The reference clock itself is left
 * out: it is PTP time, its offset 0 by definition.
 */
#include "report/report_private.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/summary.h"
#include "base/xalloc.h"
#include "hwsim/hwsim_truth.h"
#include "ptp/journal.h"

/* The grandmaster's UTC offset when lab.conf does not give it: TAI - UTC
 * since 2017. */
#define REPORT_TAI_UTC 37

struct report_htruth {
	char host[REPORT_NAME];
	struct hwsim_truth *t;
};

static struct hwsim_truth *report_truth_of(struct report *r,
					   struct report_htruth *ht, size_t *nht,
					   const char *host)
{
	char path[PATH_MAX + 2 * REPORT_NAME], err[HWSIM_TRUTH_ERRBUF];
	struct hwsim_truth *t;

	for (size_t i = 0; i < *nht; i++)
		if (!strcmp(ht[i].host, host))
			return ht[i].t;
	if (*nht == REPORT_MAX_CLOCKS)
		return NULL;
	snprintf(path, sizeof(path), "%s/clocks/%s.truth", r->dir, host);
	if (hwsim_truth_load(&t, path, err)) {
		report_notef(r, true, "the clocks against the truth: %s", err);
		t = NULL;
	}
	snprintf(ht[*nht].host, sizeof(ht[*nht].host), "%s", host);
	ht[(*nht)++].t = t;
	return t;
}

/* "HOST:phcN" of lab.conf's clock_reference into host and clock. */
static bool report_ref(const struct report *r, char *host, char *clock)
{
	const char *v = report_conf(r, "clock_reference"), *colon;

	if (!v || !(colon = strchr(v, ':')) || colon == v ||
	    (size_t)(colon - v) >= REPORT_NAME || strlen(colon + 1) >= 16)
		return false;
	snprintf(host, REPORT_NAME, "%.*s", (int)(colon - v), v);
	snprintf(clock, 16, "%s", colon + 1);
	return true;
}

/* Where each journal sample of c was in true time, and its clock's true
 * offset from PTP time then, into c->tt and c->toff (JOURNAL_NONE where
 * the truth cannot say). */
static void report_clock_truth(struct report_clock *c,
			       struct hwsim_truth *own, struct hwsim_truth *ref,
			       const char *ref_clock, int64_t utc_ns)
{
	int64_t after = INT64_MIN;
	bool sys = !strcmp(c->clock, "sys");

	c->tt = xcalloc(c->n + 1, sizeof(*c->tt));
	c->toff = xcalloc(c->n + 1, sizeof(*c->toff));
	for (size_t j = 0; j < c->n; j++) {
		int64_t tt, v, p;

		c->tt[j] = c->toff[j] = JOURNAL_NONE;
		/* The journal's time is the host's system clock's. */
		if (hwsim_truth_when(own, "sys", c->ts[j], after, &tt))
			continue;
		after = tt;
		c->tt[j] = tt;
		if (hwsim_truth_at(own, c->clock, tt, &v) ||
		    hwsim_truth_at(ref, ref_clock, tt, &p))
			continue;
		c->toff[j] = v - (sys ? p - utc_ns : p);
	}
	c->have_truth = true;
}

void report_clocks_load(struct report *r)
{
	struct report_htruth ht[REPORT_MAX_CLOCKS];
	char ref_host[REPORT_NAME], ref_clock[16];
	const char *c = report_conf(r, "clocks"), *u;
	struct hwsim_truth *ref;
	size_t nht = 0;
	int64_t utc_ns = REPORT_TAI_UTC * 1000000000LL;

	if (!c || strcmp(c, "hwsim"))
		return;		/* the machine's clock: nothing to set beside */
	if (!report_ref(r, ref_host, ref_clock)) {
		report_notef(r, true, "the clocks against the truth: lab.conf's "
			     "clock_reference is not HOST:phcN");
		return;
	}
	u = report_conf(r, "clock_utc_offset");
	if (u) {
		double d;

		if (sscanf(u, "%lf", &d) == 1 && d >= 0 && d < 1000)
			utc_ns = (int64_t)llround(d * 1e9);
		else
			report_notef(r, true, "lab.conf: clock_utc_offset '%s' is "
				     "not seconds: %d taken", u, REPORT_TAI_UTC);
	}
	ref = report_truth_of(r, ht, &nht, ref_host);
	for (size_t i = 0; ref && i < r->nclk; i++) {
		struct report_clock *k = &r->clk[i];
		struct hwsim_truth *own;

		if (!strcmp(k->host, ref_host) && !strcmp(k->clock, ref_clock))
			continue;	/* PTP time itself */
		own = report_truth_of(r, ht, &nht, k->host);
		if (own)
			report_clock_truth(k, own, ref, ref_clock, utc_ns);
	}
	if (ref) {
		/* Where PTP time itself stood against the machine's: said,
		 * as every figure is relative to it. */
		int64_t t0 = INT64_MAX, v;

		for (size_t i = 0; i < r->nrates; i++)
			if (r->rate[i].win_start != JOURNAL_NONE &&
			    r->rate[i].win_start < t0)
				t0 = r->rate[i].win_start;
		if (t0 != INT64_MAX && !hwsim_truth_at(ref, ref_clock, t0, &v)) {
			r->have_ref = true;
			r->ref_offset_ns = v - t0;
			snprintf(r->ref_name, sizeof(r->ref_name), "%s %s",
				 ref_host, ref_clock);
		}
	}
	for (size_t i = 0; i < nht; i++)
		hwsim_truth_free(ht[i].t);
	r->have_clock_truth = ref != NULL;
}

bool report_clock_window(const struct report_clock *c,
			 const struct report_rate *rt, struct report_ctruth *ct)
{
	int64_t *jo, *to, *bd;
	size_t nj = 0, nt = 0, nb = 0;
	double sq = 0;
	struct summary s;

	memset(ct, 0, sizeof(*ct));
	if (!c->have_truth)
		return false;
	jo = xcalloc(c->n + 1, sizeof(*jo));
	to = xcalloc(c->n + 1, sizeof(*to));
	bd = xcalloc(c->n + 1, sizeof(*bd));
	for (size_t j = 0; j < c->n; j++) {
		if (c->tt[j] == JOURNAL_NONE || c->tt[j] < rt->win_start ||
		    c->tt[j] > rt->win_end)
			continue;
		ct->samples++;
		if (c->off[j] != JOURNAL_NONE)
			jo[nj++] = c->off[j];
		if (c->toff[j] == JOURNAL_NONE)
			continue;
		to[nt++] = c->toff[j];
		sq += (double)c->toff[j] * (double)c->toff[j];
		if (c->bnd[j] == JOURNAL_NONE)
			continue;
		bd[nb++] = c->bnd[j];
		ct->judged++;
		if (llabs(c->toff[j]) <= c->bnd[j]) {
			ct->held++;
		} else if (llabs(c->toff[j]) - c->bnd[j] > ct->worst_excess_ns) {
			ct->worst_excess_ns = llabs(c->toff[j]) - c->bnd[j];
		}
	}
	ct->have_journal = nj > 0;
	summary_of(jo, nj, &s);
	ct->journal_mean_ns = s.mean;
	ct->have_true = nt > 0;
	summary_of(to, nt, &s);
	ct->true_mean_ns = s.mean;
	ct->true_max_abs_ns = nt ? (llabs(s.min) > llabs(s.max) ? llabs(s.min) :
				    llabs(s.max)) : 0;
	ct->true_rms_ns = nt ? sqrt(sq / (double)nt) : 0;
	summary_of(bd, nb, &s);
	ct->bound_p50_ns = s.p50;
	free(jo);
	free(to);
	free(bd);
	return true;
}
