/* corr_print.c — the results through the printer (see corr.h,
 * corr_print()): inputs, hops, transactions, the FTTC tables by rate,
 * switches (by topology and against a baseline), unmatched; one code path
 * for text, CSV and JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/bound.h"
#include "files/calib.h"
#include "files/capset.h"
#include "files/topo.h"
#include "base/hist.h"
#include "base/print.h"
#include "base/summary.h"
#include "corr/corr_private.h"
#include "corr/corr_traffic.h"

static void corr_print_latency(struct printer *p, const char *key,
			       const struct hist *h)
{
	struct summary s;

	hist_summary(h, &s);
	summary_print(p, key, &s);
}

static void corr_print_rate(struct printer *p, const struct corr *c, int b)
{
	if (b == NO_BUCKET)
		return;
	print_double(p, "rate", "  rate %.0f/s", c->cfg.rates[b]);
}

/* Whether any host has a sync journal: without one there is no bound and
 * nothing is out of sync, said once (corr_print_hops()), not per line. */
static bool corr_any_journal(const struct corr *c)
{
	for (unsigned i = 0; i < c->nhosts; i++)
		if (c->hosts[i]->bound)
			return true;
	return false;
}

/* The bound's terms, each one's mean over the bounded samples: which one
 * dominates. The stamp term's is over the samples that had one (both
 * ends calibrated for their stamps' source), and how many had none is
 * said beside it. */
static void corr_print_terms(struct printer *p, const struct corr_stat *s)
{
	uint64_t with_stamp;

	if (!s->bound_known || s->bound_unknown) {
		print_null(p, "bound_terms_mean_ns", NULL);
		return;
	}
	with_stamp = s->bound_known - s->stamp_unknown;
	print_object_begin(p, "bound_terms_mean_ns");
	print_text(p, " (");
	for (int k = 0; k < CORR_TERMS; k++) {
		uint64_t n = k == CORR_TERM_STAMP ? with_stamp : s->bound_known;
		const char *sep = k ? ", " : "";
		char fmt[48];

		if (!n) {
			snprintf(fmt, sizeof(fmt), "%s%s not calibrated%%.0s",
				 sep, corr_term_names[k]);
			print_null(p, corr_term_names[k], fmt);
			continue;
		}
		snprintf(fmt, sizeof(fmt), "%s%s %%.0f", sep,
			 corr_term_names[k]);
		print_double(p, corr_term_names[k], fmt,
			     s->term_sum[k] / (double)n);
	}
	print_uint(p, "without_stamp_term", s->stamp_unknown && with_stamp ?
		   " (%llu samples without)" : NULL, s->stamp_unknown);
	print_text(p, ")");
	print_object_end(p);
}

static void corr_print_bound(struct printer *p, const struct corr *c,
			     const struct corr_stat *s)
{
	/* A bound only when every in-sync sample had one. */
	if (s->bound_known && !s->bound_unknown) {
		print_int(p, "sync_error_bound_ns", "  bound %lld ns", s->bound_max);
		print_double(p, "sync_error_bound_mean_ns", NULL,
			     s->bound_sum / (double)s->bound_known);
	} else {
		print_null(p, "sync_error_bound_ns",
			   corr_any_journal(c) ? "  bound %s" : NULL);
		print_null(p, "sync_error_bound_mean_ns", NULL);
	}
	corr_print_terms(p, s);
}

/* The samples whose bound rested on a clock in holdover (among those of
 * latency_ns), then those set apart out of sync. */
static void corr_print_out_of_sync(struct printer *p, const struct corr *c,
				   const struct corr_stat *s)
{
	print_uint(p, "holdover", corr_any_journal(c) || s->holdover ?
		   "  holdover: %llu" : NULL, s->holdover);
	print_object_begin(p, "out_of_sync");
	print_uint(p, "messages", corr_any_journal(c) || hist_count(s->out) ?
		   "  out of sync: %llu" : NULL, hist_count(s->out));
	if (hist_count(s->out)) {
		print_text(p, "\n     ");
		corr_print_latency(p, "latency_ns", s->out);
	}
	else
		print_text(p, "\n");
	print_object_end(p);
}

/* A hop's or a switch's figures after its heading: the bound, the
 * latency of the samples in sync, and those out of sync. */
static void corr_print_figures(struct printer *p, const struct corr *c,
			       const struct corr_stat *s)
{
	corr_print_bound(p, c, s);
	print_text(p, "\n   ");
	corr_print_latency(p, "latency_ns", s->h);
	print_text(p, "   ");
	corr_print_out_of_sync(p, c, s);
}

/* An input that is a tap's capture: the stamp format its frames carried
 * (files/tapfmt.h) and what it left out; the link it observes. */
static void corr_print_tap(struct printer *p, const struct corr *c,
			   const struct corr_host *h, const struct cap_stats *st)
{
	const char *a, *b;

	if (c->cfg.topo && topo_tap(c->cfg.topo, h->name, &a, &b)) {
		print_object_begin(p, "observes");
		print_str(p, "a", ", observes the link %s", a);
		print_str(p, "b", " - %s", b);
		print_object_end(p);
	}
	print_str(p, "tap_format", st->tap != TAPFMT_NONE ?
		  ", stamps from its frames' %s stamps" : NULL,
		  tapfmt_name(st->tap));
	if (st->tap == TAPFMT_NONE)
		return;
	print_object_begin(p, "tap");
	print_uint(p, "stamped", " (%llu", st->tap_stamped);
	print_uint(p, "device_frames", ", %llu device frames", st->tap_consumed);
	print_uint(p, "missing", ", %llu left out without one", st->tap_missing);
	print_uint(p, "bad", ", %llu with a bad one", st->tap_bad);
	print_uint(p, "degraded", ", %llu degraded", st->tap_degraded);
	print_uint(p, "degraded_messages", ": %llu messages without a bound)",
		   h->degraded_msgs);
	print_object_end(p);
}

/* A host's stamp calibration as applied: each direction and source's
 * offset and spread, or null (and said) without one. */
static void corr_print_calib(struct printer *p, const struct corr_host *h)
{
	if (!h->cal) {
		/* Said where there is a bound to be without the term. */
		print_null(p, "calibration", h->bound ? "\n             no "
			   "stamp calibration%.0s: stamps taken as on the "
			   "wire, bounds without a stamp term" : NULL);
		return;
	}
	print_object_begin(p, "calibration");
	print_str(p, "path", "\n             calibration %s", h->cal_path);
	print_str(p, "measured", NULL, h->cal->measured[0] ?
		  h->cal->measured : NULL);
	print_array_begin(p, "stamps");
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int k = 0; k < CALIB_SRCS; k++) {
			const struct calib_term *t = &h->cal->t[d][k];

			if (!t->set)
				continue;
			print_object_begin(p, NULL);
			print_str(p, "direction", ", %s", calib_dir_name(d));
			print_str(p, "source", " %s", calib_src_name(k));
			print_int(p, "offset_ns", " offset %lld", t->offset_ns);
			print_int(p, "spread_ns", " spread %lld ns",
				  t->spread_ns);
			print_uint(p, "samples", NULL, t->samples);
			print_object_end(p);
		}
	print_array_end(p);
	print_object_end(p);
}

void corr_print_inputs(const struct corr *c, struct printer *p)
{
	print_text(p, "inputs\n");
	print_array_begin(p, "inputs");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];
		const char *scale = "-";
		bool assumed = false;
		struct cap_stats cst;

		for (unsigned k = 0; k < h->nifs; k++) {
			const char *s = corr_scale_name(h->ifs[k].scale);

			assumed |= h->ifs[k].assumed;
			scale = (k == 0 || !strcmp(scale, s)) ? s : "mixed";
		}
		print_object_begin(p, NULL);
		print_str(p, "host", "  %-10s", h->name);
		print_array_begin(p, "files");
		for (unsigned k = 0; k < capset_files(h->cs); k++)
			print_str(p, NULL, NULL, capset_path(h->cs, k));
		print_array_end(p);
		print_uint(p, "packets", " %llu packets", h->packets);
		print_uint(p, "fix_messages", ", %llu FIX messages", h->messages);
		print_str(p, "timescale", ", timescale %s", scale);
		int64_t res = 0;
		for (unsigned k = 0; k < h->nifs; k++)
			if (h->ifs[k].resolution_ns > res)
				res = h->ifs[k].resolution_ns;
		print_int(p, "resolution_ns", res > 1 ? ", %lld ns stamps" : NULL, res);
		print_bool(p, "timescale_assumed", NULL, assumed);
		print_str(p, "direction", ", direction from %s",
			  h->dir_flags && h->dir_addr ? "flags+addresses" :
			  h->dir_flags ? "epb_flags" : h->dir_addr ? "addresses" :
			  "peers");
		print_uint(p, "seen_only_here", ", %llu seen only here", h->only_here);
		print_uint(p, "duplicates", NULL, h->duplicates);
		print_uint(p, "non_ip", NULL, h->non_ip);
		print_uint(p, "bad_frames", NULL, h->bad_frames);
		print_uint(p, "skipped_timescale", NULL, h->skipped_scale);
		print_uint(p, "clock_jumps", NULL, h->clock_jumps);
		print_uint(p, "clock_corrected", h->clock_corrected ?
			   ", %llu stamps put on their clock's reference by "
			   "phc2sys's readings" : NULL, h->clock_corrected);
		print_uint(p, "sender_stamped", h->sender_frames ?
			   ", %llu frames stamped by their sender" : NULL,
			   h->sender_frames);
		print_uint(p, "tap_tx_skipped", h->tap_tx_skipped ?
			   ", %llu sent frames with the sender's stamp instead" :
			   NULL, h->tap_tx_skipped);
		/* What the capture says it lost (capd's statistics blocks):
		 * stated either way, so that "none" is never silence. */
		capset_stats(h->cs, &cst);
		corr_print_tap(p, c, h, &cst);
		if (cst.drops_known)
			print_uint(p, "capture_drops", cst.drops ?
				   ", the capture dropped %llu frames" :
				   ", the capture dropped none", cst.drops);
		else
			print_null(p, "capture_drops", ", capture drops unknown "
				   "(no statistics in the files)");
		print_str(p, "error", NULL,
			  capset_damaged(h->cs) ? capset_error(h->cs) : NULL);
		print_object_begin(p, "streams");
		print_uint(p, "segments", NULL, h->st.segments);
		print_uint(p, "retransmits", ", %llu retransmits", h->st.retransmits);
		print_uint(p, "out_of_order", NULL, h->st.out_of_order);
		print_uint(p, "lost_bytes", NULL, h->st.lost_bytes);
		print_uint(p, "skipped_bytes", NULL, h->st.skipped_bytes);
		print_uint(p, "midstream_bytes", NULL, h->st.midstream_bytes);
		print_uint(p, "bad_checksum", ", %llu bad checksums",
			   h->st.bad_checksum);
		print_uint(p, "bad_framing", NULL, h->st.bad_framing);
		print_uint(p, "truncated", NULL, h->st.truncated);
		print_object_end(p);
		if (h->bound) {
			int off;

			print_object_begin(p, "journal");
			print_str(p, "path", "\n             journal %s", h->journal);
			print_uint(p, "samples", ", %llu samples",
				   bound_samples(h->bound));
			print_uint(p, "holdover_samples",
				   bound_holdover_samples(h->bound) ?
				   " (%llu in holdover)" : NULL,
				   bound_holdover_samples(h->bound));
			print_uint(p, "bad_lines", ", %llu bad lines",
				   bound_bad_lines(h->bound));
			print_bool(p, "torn_tail", NULL, bound_torn(h->bound));
			if (!bound_utc_offset(h->bound, &off))
				print_int(p, "utc_offset_s", NULL, off);
			else
				print_null(p, "utc_offset_s", NULL);
			print_object_end(p);
		} else {
			print_null(p, "journal", NULL);
		}
		corr_print_calib(p, h);
		print_text(p, "\n");
		print_object_end(p);
	}
	print_array_end(p);
}

static void corr_print_hops(const struct corr *c, struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->hops);

	print_text(p, "\none-way latency per hop (ns)\n");
	if (!corr_any_journal(c))
		print_text(p, "  no journals given: no error bound "
			   "(--sync NAME=JOURNAL)\n");
	print_array_begin(p, "hops");
	for (size_t i = 0; i < c->hops.n; i++) {
		const struct corr_stat *s = &v[i];

		print_object_begin(p, NULL);
		print_str(p, "from", "  %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "flow", "  %s", s->flow == ALL_FLOWS ? "all" :
			  c->flows[s->flow].name);
		corr_print_rate(p, c, s->bucket);
		/* All matched; the figures are of those in sync. */
		print_uint(p, "messages", "  %llu messages",
			   hist_count(s->h) + hist_count(s->out));
		corr_print_figures(p, c, s);
		print_object_end(p);
	}
	print_array_end(p);
	free(v);
}

/* The holes a host's capture never filled, per flow, and the samples
 * each hid: a figure the losses touched is named with them. */
static void corr_print_losses(const struct corr *c, struct printer *p,
			      const struct corr_host *h)
{
	print_array_begin(p, "capture_losses");
	for (unsigned i = 0; i < h->nlosses; i++) {
		const struct corr_loss *l = &h->losses[i];

		print_object_begin(p, NULL);
		print_str(p, "flow", "\n    capture lost bytes of %s:",
			  c->flows[l->flow].name);
		print_uint(p, "holes", " %llu holes", l->holes);
		print_uint(p, "hole_bytes", ", %llu bytes", l->bytes);
		print_uint(p, "samples_affected",
			   ", %llu transactions not measured for it",
			   l->affected);
		print_object_end(p);
	}
	print_array_end(p);
}

static void corr_print_txns(const struct corr *c, struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->txns);

	print_text(p, "\ntransactions at one host (ns; clock error cancels)\n");
	print_array_begin(p, "transactions");
	for (size_t i = 0; i < c->txns.n; i++) {
		const struct corr_stat *s = &v[i];

		print_object_begin(p, NULL);
		print_str(p, "name", "  %-14s", corr_txn_names[s->kind]);
		print_str(p, "host", " at %s", c->hosts[s->from]->name);
		corr_print_rate(p, c, s->bucket);
		print_uint(p, "count", "  %llu\n   ", hist_count(s->h));
		corr_print_latency(p, "latency_ns", s->h);
		if (s->bucket == NO_BUCKET && (s->kind == TXN_TICK_TO_TRADE ||
						s->kind == TXN_FILL_TO_SELL)) {
			const struct corr_host *h = c->hosts[s->from];

			print_uint(p, "no_trigger", NULL, h->no_trigger[s->kind]);
			if (h->trigger_lost[s->kind])
				print_uint(p, "trigger_lost", "   %llu orders not "
					   "measured: their trigger may be in "
					   "bytes the capture lost\n",
					   h->trigger_lost[s->kind]);
			else
				print_uint(p, "trigger_lost", NULL, 0);
		}
		print_object_end(p);
	}
	print_array_end(p);
	free(v);
}

static const struct corr_stat *corr_find_hop(const struct corr *c,
					     const char *from, const char *to)
{
	for (size_t i = 0; i < c->hops.n; i++) {
		const struct corr_stat *s = &c->hops.v[i];

		if (s->flow == ALL_FLOWS && s->bucket == NO_BUCKET &&
		    !strcmp(c->hosts[s->from]->name, from) &&
		    !strcmp(c->hosts[s->to]->name, to))
			return s;
	}
	return NULL;
}

/* Why no switch was measured: the first of no topology, no switch
 * between any two input hosts in it, no samples through one. */
static const char *corr_switches_none(const struct corr *c,
				      const struct corr *base)
{
	struct topo_path tp;
	bool sw = false;

	if (!c->cfg.topo && !base)
		return "no topology given (--topology FILE, or --baseline "
		       "for a back-to-back run)";
	for (unsigned a = 0; c->cfg.topo && a < c->nhosts; a++)
		for (unsigned b = 0; b < c->nhosts; b++)
			sw |= a != b && !topo_path(c->cfg.topo, c->hosts[a]->name,
						   c->hosts[b]->name, &tp) &&
			      tp.sw;
	if (!sw && !base)
		return "no switch in the topology between the input hosts";
	return "no samples through a switch";
}

static void corr_print_switches(const struct corr *c, const struct corr *base,
				struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->switches);

	size_t rows = 0;

	print_text(p, "\nswitch latency (ns)\n");
	print_array_begin(p, "switches");
	for (size_t i = 0; i < c->switches.n; i++) {
		const struct corr_stat *s = &v[i];
		struct summary sm;

		hist_summary(s->h, &sm);
		rows++;
		print_object_begin(p, NULL);
		print_str(p, "name", "  %s", s->sw);
		print_str(p, "from", " %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "method", "  (%s)", "topology");
		corr_print_rate(p, c, s->bucket);
		/* The samples behind the figures; out of sync apart. */
		print_uint(p, "messages", "  %llu messages", sm.n);
		if (sm.n > 1)
			print_double(p, "ci95_ns", "  mean ±%.1f (95%%)",
				     1.96 * sm.sd / sqrt((double)sm.n));
		else
			print_null(p, "ci95_ns", NULL);
		corr_print_figures(p, c, s);
		print_object_end(p);
	}
	/* Through-switch minus back-to-back, hop by hop, as the FTTC report
	 * measured switches. */
	for (size_t i = 0; base && i < c->hops.n; i++) {
		const struct corr_stat *s = &c->hops.v[i], *b;
		const struct topo_path *tp = NULL;
		struct summary st, sb;

		if (s->flow != ALL_FLOWS || s->bucket != NO_BUCKET)
			continue;
		b = corr_find_hop(base, c->hosts[s->from]->name,
				  c->hosts[s->to]->name);
		if (!b)
			continue;
		hist_summary(s->h, &st);
		hist_summary(b->h, &sb);
		if (!st.n || !sb.n)
			continue;
		if (c->cfg.topo && c->path_known[s->from][s->to] > 0)
			tp = &c->path[s->from][s->to];
		rows++;
		print_object_begin(p, NULL);
		print_str(p, "name", "  %s", tp && tp->sw ? tp->sw : "switch");
		print_str(p, "from", " %s", c->hosts[s->from]->name);
		print_str(p, "to", " -> %s", c->hosts[s->to]->name);
		print_str(p, "method", "  (%s)", "baseline");
		print_uint(p, "messages", "  %llu messages", st.n);
		print_uint(p, "baseline_messages", ", %llu back-to-back", sb.n);
		print_double(p, "ci95_ns", "  mean ±%.1f (95%%)",
			     1.96 * sqrt(st.sd * st.sd / (double)st.n +
					 sb.sd * sb.sd / (double)sb.n));
		corr_print_bound(p, c, s);
		print_object_begin(p, "latency_ns");
		print_uint(p, "count", NULL, st.n);
		print_double(p, "mean", "\n    mean %.1f", st.mean - sb.mean);
		print_double(p, "p50", "  p50 %.0f", (double)(st.p50 - sb.p50));
		print_double(p, "sd", "  sd %.1f ns\n",
			     sqrt(fmax(0, st.sd * st.sd - sb.sd * sb.sd)));
		print_object_end(p);
		print_object_end(p);
	}
	print_array_end(p);
	/* An empty section says why, so that "none" is never silence. */
	print_str(p, "switches_none", rows ? NULL : "  none: %s\n",
		  rows ? NULL : corr_switches_none(c, base));
	free(v);
}

static void corr_print_unmatched(const struct corr *c, struct printer *p)
{
	uint64_t only = 0, dup = 0;

	for (unsigned i = 0; i < c->nhosts; i++) {
		only += c->hosts[i]->only_here;
		dup += c->hosts[i]->duplicates;
	}
	print_text(p, "\nunmatched\n");
	print_object_begin(p, "unmatched");
	print_uint(p, "seen_at_one_host", "  %llu messages seen at one host only",
		   only);
	print_uint(p, "duplicates", ", %llu seen twice at one host", dup);
	print_uint(p, "direction_unknown_pairs",
		   ", %llu pairs of unknown direction", c->dir_unknown_pairs);
	print_uint(p, "window_overflow", ", %llu left the window early",
		   c->window_overflow);
	print_uint(p, "beyond_hosts", NULL, c->extra_obs);
	print_uint(p, "matched_by_session", ", %llu matched by FIX session keys",
		   c->by_session);
	print_array_begin(p, "hosts");
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct corr_host *h = c->hosts[i];

		print_object_begin(p, NULL);
		print_str(p, "host", "\n  %s:", h->name);
		print_uint(p, "seen_only_here", " %llu only here", h->only_here);
		print_uint(p, "direction_unknown", ", %llu of unknown direction",
			   h->dir_unknown);
		print_object_begin(p, "no_trigger");
		for (int k = 0; k < TXN_KINDS; k++)
			if (k == TXN_TICK_TO_TRADE || k == TXN_FILL_TO_SELL)
				print_uint(p, corr_txn_names[k],
					   k == TXN_TICK_TO_TRADE ?
					   ", %llu orders without a trigger" :
					   " + %llu", h->no_trigger[k]);
		print_object_end(p);
		print_object_begin(p, "trigger_lost");
		for (int k = 0; k < TXN_KINDS; k++)
			if (k == TXN_TICK_TO_TRADE || k == TXN_FILL_TO_SELL)
				print_uint(p, corr_txn_names[k],
					   k == TXN_TICK_TO_TRADE ?
					   ", %llu whose trigger the capture may "
					   "have lost" : " + %llu",
					   h->trigger_lost[k]);
		print_object_end(p);
		print_uint(p, "trigger_lost_waiting", h->pend_full ?
			   " (%llu of them: too many orders waiting)" : NULL,
			   h->pend_full);
		corr_print_losses(c, p, h);
		print_object_end(p);
	}
	print_array_end(p);
	print_text(p, "\n");
	print_object_end(p);
}

/* One FTTC row: a figure per rate bucket, from the entries of one kind. */
static void corr_fttc_row(const struct corr *c, struct printer *p,
			  const struct corr_stats_set *set, const char *label,
			  int kind, const char *sw, unsigned host, unsigned to,
			  int what)
{
	print_text(p, "  %-22s", label);
	for (unsigned b = 0; b < c->cfg.nrates; b++) {
		const struct corr_stat *s = NULL;
		struct summary sm;

		for (size_t i = 0; i < set->n && !s; i++)
			if (set->v[i].bucket == (int)b && set->v[i].kind == kind &&
			    set->v[i].from == host && set->v[i].to == to &&
			    (!sw || (set->v[i].sw && !strcmp(set->v[i].sw, sw))))
				s = &set->v[i];
		if (!s || !hist_count(s->h)) {
			print_text(p, " %9s", "-");
			continue;
		}
		hist_summary(s->h, &sm);
		if (what == 0)
			print_text(p, " %9.3f", sm.mean / 1000.0);
		else if (what == 1)
			print_text(p, " %9.3f", sm.sd / 1000.0);
		else
			print_text(p, " %9llu", (unsigned long long)sm.n);
	}
	print_text(p, "\n");
}

/* The FTTC report's tables: BUY and SELL (and switches) by market data
 * rate, in microseconds. Text only: JSON and CSV have every figure
 * already, each entry with its "rate". */
static void corr_print_fttc(const struct corr *c, struct printer *p)
{
	char label[64];

	if (!c->cfg.by_rate || print_format(p) != PRINT_TEXT)
		return;
	print_text(p, "\nby market data rate (us)\n  %-22s", "messages/s");
	for (unsigned b = 0; b < c->cfg.nrates; b++)
		print_text(p, " %9.0f", c->cfg.rates[b]);
	print_text(p, "\n");
	for (unsigned h = 0; h < c->nhosts; h++) {
		bool any = false;

		for (size_t i = 0; i < c->txns.n; i++)
			any |= c->txns.v[i].from == h && c->txns.v[i].bucket >= 0;
		if (!any)
			continue;
		snprintf(label, sizeof(label), "BUY  (%.14s)", c->hosts[h]->name);
		corr_fttc_row(c, p, &c->txns, label, TXN_TICK_TO_TRADE, NULL, h, h, 0);
		snprintf(label, sizeof(label), "SELL (%.14s)", c->hosts[h]->name);
		corr_fttc_row(c, p, &c->txns, label, TXN_FILL_TO_SELL, NULL, h, h, 0);
		corr_fttc_row(c, p, &c->txns, "SD B", TXN_TICK_TO_TRADE, NULL, h, h, 1);
		corr_fttc_row(c, p, &c->txns, "SD S", TXN_FILL_TO_SELL, NULL, h, h, 1);
	}
	for (size_t i = 0; i < c->switches.n; i++) {
		const struct corr_stat *s = &c->switches.v[i];
		char dir[48];

		/* A row group per switch and direction: the two directions
		 * differ by twice the clocks' offset. */
		if (s->bucket != NO_BUCKET)
			continue;
		snprintf(dir, sizeof(dir), "%.10s>%.10s", c->hosts[s->from]->name,
			 c->hosts[s->to]->name);
		snprintf(label, sizeof(label), "%.10s %s", s->sw, dir);
		corr_fttc_row(c, p, &c->switches, label, -1, s->sw, s->from,
			      s->to, 0);
		corr_fttc_row(c, p, &c->switches, "  SD", -1, s->sw, s->from,
			      s->to, 1);
		corr_fttc_row(c, p, &c->switches, "  packets", -1, s->sw,
			      s->from, s->to, 2);
	}
}

/* The traffic's bounds on the clocks (corr_traffic.h). */
static void corr_print_traffic(const struct corr *c, struct printer *p)
{
	const char *names[CORR_MAX_HOSTS];

	for (unsigned i = 0; i < c->nhosts; i++)
		names[i] = c->hosts[i]->name;
	corr_traffic_print(c->traffic, names, c->nhosts, p);
}

/* App to wire per sender, session and message type: the figures as a
 * hop's (bound, latency, out of sync), with the tag taken. */
static void corr_print_app(const struct corr *c, struct printer *p)
{
	struct corr_stat *v = corr_sorted(&c->app);
	bool unbounded = false;

	for (size_t i = 0; i < c->app.n; i++)
		unbounded |= c->app.v[i].bound_unknown > 0;
	print_text(p, "\napp to wire at each sender (ns; its TX stamp less the "
		   "SendingTime (52) or TransactTime (60) the engine wrote)\n");
	if (unbounded)
		print_text(p, "  no bound where the stamps are not on the system "
			   "clock and no sync journal measures it (sys)\n");
	print_array_begin(p, "app_to_wire");
	for (size_t i = 0; i < c->app.n; i++) {
		const struct corr_stat *s = &v[i];
		const struct corr_app_info *a = s->ext;
		const struct corr_flow *fl = &c->flows[s->flow];

		print_object_begin(p, NULL);
		print_str(p, "host", "  %s", c->hosts[s->from]->name);
		print_str(p, "flow", "  %s", fl->name);
		print_str(p, "session", fl->session[0] ? "  %s" : NULL,
			  fl->session);
		print_str(p, "msg_type", "  35=%s", corr_app_type_name(c, s->kind));
		print_int(p, "tag", "  from %lld", a->tag);
		print_int(p, "resolution_ns", " (to %lld ns)", a->resolution_ns);
		print_uint(p, "messages", "  %llu messages",
			   hist_count(s->h) + hist_count(s->out));
		corr_print_figures(p, c, s);
		print_object_end(p);
	}
	print_array_end(p);
	print_uint(p, "app_to_wire_unparsed", c->app_unparsed ?
		   "  %llu outbound messages whose SendingTime and "
		   "TransactTime did not parse\n" : NULL, c->app_unparsed);
	free(v);
}

void corr_print(const struct corr *c, const struct corr *baseline,
		struct printer *p)
{
	corr_print_inputs(c, p);
	corr_print_hops(c, p);
	corr_print_txns(c, p);
	corr_print_app(c, p);
	corr_print_fttc(c, p);
	corr_print_switches(c, baseline, p);
	corr_print_traffic(c, p);
	corr_print_unmatched(c, p);
	print_int(p, "histogram_error_ns", NULL, corr_hist_error(c));
	print_array_begin(p, "warnings");
	for (unsigned i = 0; i < c->nwarn; i++)
		print_str(p, NULL, NULL, c->warn[i]);
	print_array_end(p);
}
