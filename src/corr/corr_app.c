/* corr_app.c — app to wire (see corr_private.h, corr_app()): how long an
 * unmodified engine's message took from the moment the engine stamped it
 * into SendingTime (52), or TransactTime (60) where that is finer, to its
 * first bit on the wire, by the host's TX stamp.
 *
 * The engine stamps with the system clock, read to ms, us or ns, and cuts
 * the rest (a SendingTime is never later than the moment it names), so the
 * figure is a little long: by up to the tag's resolution. Its bound is
 * that resolution, the TX stamp's own (its clock's bound, holdover,
 * calibration and resolution, as a hop's TX end has) and the system
 * clock's error, from the journal's "sys" clock (phc2sys's readings).
 * Stamped on the system clock itself (software stamps), the engine and the
 * stamp read one clock: its error cancels and only the resolutions stay.
 * Without a journal, or without "sys" in it, there is no bound.
 */
#include <string.h>

#include "ptp/bound.h"
#include "files/calib.h"
#include "fix/fix.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

/* The index of message type v (len bytes), kept on first sight; past
 * CORR_APP_TYPES - 1 types, all share the last, "other". */
static int corr_app_type(struct corr *c, const char *v, uint32_t len)
{
	unsigned n = c->napp_types;

	if (len >= sizeof(c->app_type[0]))
		len = sizeof(c->app_type[0]) - 1;
	for (unsigned i = 0; i < n; i++)
		if (strlen(c->app_type[i]) == len &&
		    !memcmp(c->app_type[i], v, len))
			return (int)i;
	if (n == CORR_APP_TYPES - 1) {
		snprintf(c->app_type[n], sizeof(c->app_type[n]), "other");
		c->napp_types = CORR_APP_TYPES;
	}
	if (n >= CORR_APP_TYPES - 1)
		return CORR_APP_TYPES - 1;
	memcpy(c->app_type[n], v, len);
	c->app_type[n][len] = 0;
	c->napp_types++;
	return (int)n;
}

const char *corr_app_type_name(const struct corr *c, int k)
{
	return k >= 0 && (unsigned)k < c->napp_types ? c->app_type[k] : "?";
}

/* The application's time of f: the finer of 52 and 60 (52 when they
 * are alike), in *ns (UTC), its resolution in *res_ns, the tag in *tag.
 * Returns false when neither parses. */
static bool corr_app_time(const struct corr_fields *f, int64_t *ns,
			  int64_t *res_ns, int *tag)
{
	static const int keys[2] = { F_52, F_60 }, tags[2] = { 52, 60 };
	bool got = false;

	for (int i = 0; i < 2; i++) {
		int64_t t, r = 1;
		unsigned digits;

		if (!f->v[keys[i]] ||
		    fix_utc_parse(f->v[keys[i]], f->len[keys[i]], &t, &digits))
			continue;
		for (unsigned d = digits; d < 9; d++)
			r *= 10;
		if (!got || r < *res_ns) {
			*ns = t;
			*res_ns = r;
			*tag = tags[i];
			got = true;
		}
	}
	return got;
}

/* The system clock's error at utc (the engine's clock): its bound from the
 * journal's "sys" clock in *b, and its sync state returned; SYNC_NONE with
 * *b -1 when the journal does not measure it. */
static int corr_app_sys(const struct corr_host *h, int64_t utc, int64_t *b)
{
	*b = -1;
	if (!h->bound || !bound_has_clock(h->bound, "sys"))
		return SYNC_NONE;
	return corr_sync_of(bound_at(h->bound, "sys", utc, b));
}

/* The sample's sync state and bound: the stamp's clock and the system
 * clock both (x->sync, x->bound, *t), or, stamped on the system clock,
 * the resolutions alone. */
static void corr_app_bound(const struct corr_host *h,
			   const struct corr_iface *ifc,
			   const struct corr_obs *o, int64_t res,
			   const struct calib_term *ct,
			   struct corr_sample *x, struct corr_terms *t)
{
	/* The stamp's resolution (a stamp cut to it is up to that much
	 * early), and what of o->bound is not the clock's. */
	int64_t sres = ifc->resolution_ns - 1, sysb;
	int ss;

	x->sync = SYNC_NONE;
	x->bound = -1;
	if (!strcmp(ifc->clock, "sys")) {
		/* One clock for both: its error cancels, in sync or not
		 * (so no claim about it is made). */
		t->v[CORR_TERM_CLOCK] = t->v[CORR_TERM_HOLDOVER] = 0;
		x->bound = 0;
	} else {
		ss = corr_app_sys(h, o->ts + ifc->journal_ns, &sysb);
		if (o->sync == SYNC_OUT || ss == SYNC_OUT)
			x->sync = SYNC_OUT;
		else if (ss == SYNC_NONE || o->sync == SYNC_NONE)
			return;		/* a clock unmeasured: no bound */
		else
			x->sync = o->sync == SYNC_HOLD || ss == SYNC_HOLD ?
				  SYNC_HOLD : SYNC_IN;
		if (x->sync == SYNC_OUT || o->bound < 0 || sysb < 0)
			return;
		t->v[CORR_TERM_HOLDOVER] = o->hold;
		t->v[CORR_TERM_CLOCK] = o->bound - o->cut - o->hold - o->res +
					sysb;
		x->bound = o->bound - o->cut - o->res + sysb;
	}
	t->v[CORR_TERM_RESOLUTION] = res + sres;
	x->bound += res + sres;
	if (ct) {
		t->v[CORR_TERM_STAMP] = ct->spread_ns;
		x->bound += ct->spread_ns;
	}
}

void corr_app(struct corr *c, struct corr_stream *s,
	      const struct corr_fields *f, const struct corr_obs *o)
{
	const struct calib_term *ct = corr_calib(s->h, DIR_OUT, o->hw);
	struct corr_terms t = { { -1, -1, -1, -1 } };
	struct corr_app_info info;
	struct corr_sample x = {
		.set = CORR_SET_APP, .from = o->host, .to = o->host,
		.flow = s->flow, .bucket = NO_BUCKET, .ts = o->ts,
		.terms = &t, .app = &info,
	};
	int64_t app, wire;

	if (!f->v[F_52] && !f->v[F_60])
		return;
	if (!corr_app_time(f, &app, &info.resolution_ns, &info.tag)) {
		c->app_unparsed++;
		return;
	}
	x.kind = f->v[F_35] ? corr_app_type(c, f->v[F_35], f->len[F_35]) :
			      corr_app_type(c, "?", 1);
	/* The stamp on UTC (the journals'), on its clock's reference
	 * (phc2sys's reading) and brought to the wire (calibration). */
	wire = o->ts + s->ifc->journal_ns - o->clk - (ct ? ct->offset_ns : 0);
	x.v = wire - app;
	corr_app_bound(s->h, s->ifc, o, info.resolution_ns, ct, &x, &t);
	corr_emit(c, &x);
}
