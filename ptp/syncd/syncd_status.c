/* syncd_status.c — what tapless-syncd tells: its state for the control
 * socket (`tapless status`, as text, CSV or JSON through one printer) and
 * the metrics endpoint's text. Reads struct syncd, changes nothing. See
 * syncd_private.h for the other files.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/opts.h"
#include "base/print.h"
#include "base/prog.h"
#include "ptp/child.h"
#include "ptp/ctl.h"
#include "ptp/journal.h"
#include "base/metrics.h"
#include "ptp/mgmt.h"
#include "ptp/ptpgen.h"
#include "ptp/syncconf.h"
#include "ptp/syncd/syncd_private.h"
#include "ptp/syncq.h"
#include "stamp/hwtstamp.h"

/* ---- status ---- */

/* In sync as its last sample said, unless something since says it cannot
 * be: status never claims sync beside an alarm that denies it. */
static bool syncd_inst_in_sync(const struct syncd *d,
			       const struct syncd_inst *in, int64_t mono)
{
	char why[200];

	return in->v.in_sync && !syncd_blind(d, in, mono, why, sizeof(why));
}

/* What was missing when the last sample was not fresh. */
static const char *syncd_unfresh_why(const struct syncd_inst *in)
{
	if (in->qstate == SYNCQ_LOST)
		return "the master was lost";
	if (in->fr.rx_moved == 0)
		return "no Sync received: ptp4l's rx Sync counter unchanged";
	if (in->fr.rx_moved > 0)
		return "Syncs received but none taken by the servo";
	return "no new Sync";
}

static const char *const syncd_windows[] = { "1min", "10min", "60min" };
static const int syncd_window_s[] = { 60, 600, 3600 };

/* fmt has one %lld; a value not known prints as fmt's text with "-". */
static void syncd_print_i64(struct printer *pr, const char *key,
			    const char *fmt, int64_t v)
{
	char nfmt[64];
	const char *c;

	if (v != SYNCQ_NONE) {
		print_int(pr, key, fmt, v);
		return;
	}
	c = fmt ? strstr(fmt, "%lld") : NULL;
	if (c)
		snprintf(nfmt, sizeof(nfmt), "%.*s%%s%s", (int)(c - fmt), fmt,
			 c + 4);
	print_null(pr, key, c ? nfmt : NULL);
}

static void syncd_print_stats(struct printer *pr, const struct syncq *q,
			      int64_t now)
{
	print_object_begin(pr, "stats");
	for (int w = 0; w < 3; w++) {
		struct syncq_stats st;

		syncq_window(q, now, syncd_window_s[w] * 1000000000LL, &st);
		print_object_begin(pr, syncd_windows[w]);
		print_text(pr, "    %-6s", syncd_windows[w]);
		print_uint(pr, "samples", " %5llu samples", st.samples);
		print_uint(pr, "in_sync", " %5llu in sync", st.in_sync);
		print_uint(pr, "holdover", " %5llu holdover", st.holdover);
		if (st.measured) {
			print_double(pr, "offset_mean_ns", "  offset %.0f", st.offset_mean);
			print_double(pr, "offset_sd_ns", " sd %.0f", st.offset_sd);
			print_int(pr, "offset_min_ns", " [%lld", st.offset_min);
			print_int(pr, "offset_max_ns", ", %lld] ns", st.offset_max);
		} else {
			print_null(pr, "offset_mean_ns", "  offset %s");
		}
		if (st.delays) {
			print_double(pr, "delay_mean_ns", "  delay %.0f", st.delay_mean);
			print_double(pr, "delay_sd_ns", " sd %.0f", st.delay_sd);
			print_int(pr, "delay_min_ns", NULL, st.delay_min);
			print_int(pr, "delay_max_ns", NULL, st.delay_max);
		}
		syncd_print_i64(pr, "bound_max_ns", "  bound <= %lld ns",
				st.bound_max);
		print_text(pr, "\n");
		print_object_end(pr);
	}
	print_object_end(pr);
}

static void syncd_print_child(struct printer *pr, const struct child *ch,
			      int64_t mono)
{
	const struct child_exit *ex = child_last_exit(ch);
	char why[96] = "";

	print_str(pr, "name", "  %s", child_name(ch));
	print_bool(pr, "running", " running %s", child_running(ch));
	if (child_running(ch))
		print_int(pr, "pid", " pid %lld", child_pid(ch));
	else
		print_double(pr, "restart_in_s", " restart in %.1f s",
			     (double)(child_next_start(ch) - mono) / 1e9);
	print_uint(pr, "restarts", " restarts %llu", child_restarts(ch));
	if (ex) {
		child_exit_str(ex, why, sizeof(why));
		print_str(pr, "last_exit", " (last %s)", why);
	}
	print_text(pr, "\n");
}

static void syncd_alarms(struct syncd *d, struct printer *pr, int64_t mono)
{
	char a[256];

	print_array_begin(pr, "alarms");
	print_text(pr, "alarms:");
#define ALARM(...) do { snprintf(a, sizeof(a), __VA_ARGS__); \
		print_str(pr, NULL, "\n  %s", a); n++; } while (0)
	unsigned n = 0;

	for (unsigned k = 0; k < d->ninst; k++) {
		struct syncd_inst *in = &d->inst[k];
		char why[200];
		bool blind = syncd_blind(d, in, mono, why, sizeof(why));

		/* Not answering is no alarm while ptp4l is just starting. */
		if (blind && (!child_running(in->ch) ||
			      mono - d->started_ns > 3 * d->interval_ns))
			ALARM("%s: %s", in->pi->clock, why);
		if (in->v.holdover)
			ALARM("%s: holdover for %.1f s, nothing measured (%s); "
			      "bound grown to %lld ns", in->pi->clock,
			      (double)(mono - in->fresh_mono) / 1e9,
			      syncd_unfresh_why(in), (long long)in->v.bound_ns);
		else if (!in->v.in_sync && in->qstate != SYNCQ_GRANDMASTER)
			ALARM("%s: not in sync (%s%s)", in->pi->clock,
			      in->state_name[0] ? in->state_name : "starting",
			      in->qstate == SYNCQ_LOST || in->fresh ? "" :
			      ", nothing measured");
		for (unsigned i = 0; i < in->nports; i++) {
			if (in->port[i].link == 0 && in->nports > 1)
				ALARM("%s: link down", in->port[i].cp->name);
			if (in->port[i].hwts_narrow)
				ALARM("%s: hardware stamps narrowed to rx %s: "
				      "captures lose stamps",
				      in->port[i].cp->name,
				      hwtstamp_rx_name(in->port[i].hwts.rx_filter) ?: "?");
		}
	}
	for (unsigned k = 0; k < d->naux; k++)
		if (!child_running(d->aux[k]))
			ALARM("%s not running", child_name(d->aux[k]));
	for (unsigned k = 0; k < d->nder; k++)
		if (d->der[k].v.holdover)
			ALARM("%s: holdover: %s is in holdover", d->der[k].clock,
			      d->der[k].ref->pi->clock);
		else if (!d->der[k].v.in_sync)
			ALARM("%s: not in sync with %s", d->der[k].clock,
			      d->der[k].ref->pi->clock);
	if (d->journal_errors)
		ALARM("journal %.200s: %" PRIu64 " writes failed", d->journal_path,
		      d->journal_errors);
#undef ALARM
	if (!n)
		print_text(pr, " none");
	print_text(pr, "\n");
	print_array_end(pr);
}

/* The PTP facts of a clock beside its sync: the state the metrics give
 * (tapless_clock_state), the frequency and the counters; class and
 * path delay changes for ptp4l's clocks (q, class >= 0). */
static void syncd_print_ptp(struct printer *pr, enum syncq_clock_state st,
			    int gm_class, double freq_ppb, uint64_t steps,
			    const struct syncq *q)
{
	print_str(pr, "clock_state", "  %s", syncq_clock_state_name(st));
	if (q) {
		if (gm_class >= 0)
			print_int(pr, "clock_class", "  clock class %lld", gm_class);
		else
			print_null(pr, "clock_class", "  clock class %s");
	}
	if (isfinite(freq_ppb))
		print_double(pr, "freq_adj_ppb", "  freq %.3f ppb", freq_ppb);
	else
		print_null(pr, "freq_adj_ppb", "  freq %s");
	print_uint(pr, "clock_steps", "  steps %llu", steps);
	if (q)
		print_uint(pr, "delay_changes", "  path delay changes %llu",
			   syncq_delay_changes(q));
	print_text(pr, "\n");
}

static void syncd_status(struct syncd *d, struct printer *pr)
{
	int64_t now = syncd_now(), mono = syncd_mono();
	bool all = d->ninst > 0;
	char why[200];

	for (unsigned k = 0; k < d->ninst; k++)
		if (!syncd_inst_in_sync(d, &d->inst[k], mono))
			all = false;
	for (unsigned k = 0; k < d->nder; k++)
		if (!d->der[k].v.in_sync)
			all = false;
	print_str(pr, "host", "host %s", d->host);
	print_str(pr, "version", NULL, SYNCD_VERSION);
	print_str(pr, "config", "  config %s", d->cfg_path);
	print_str(pr, "journal", "  journal %s", d->journal_path);
	print_double(pr, "uptime_s", "  up %.0f s\n",
		     (double)(mono - d->started_ns) / 1e9);
	print_bool(pr, "in_sync", "in sync: %s", all);
	print_bool(pr, "free_running", "  free running: %s\n",
		   opts_flag(d->conf.opts, "free_running"));
	print_array_begin(pr, "clocks");
	for (unsigned k = 0; k < d->ninst; k++) {
		struct syncd_inst *in = &d->inst[k];
		bool stale = mono - in->last_answer_ns > 2 * d->interval_ns;
		struct syncq_verdict v;
		struct syncq_sample s;

		print_object_begin(pr, NULL);
		print_str(pr, "clock", "\nclock %s", in->pi->clock);
		print_str(pr, "state", "  %s", in->state_name[0] ? in->state_name : "-");
		print_bool(pr, "in_sync", "  in sync %s",
			   syncd_inst_in_sync(d, in, mono));
		print_bool(pr, "holdover", NULL, in->v.holdover);
		print_text(pr, in->v.holdover ? " (holdover)" : "");
		syncd_print_i64(pr, "bound_ns", "  bound %lld ns", in->v.bound_ns);
		if (syncq_last(in->q, &s, &v)) {
			syncd_print_i64(pr, "offset_ns", "  offset %lld ns", s.offset_ns);
			syncd_print_i64(pr, "delay_ns", "  delay %lld ns", s.delay_ns);
		}
		print_bool(pr, "fresh", NULL, in->fresh);
		if (in->fresh_mono)
			print_double(pr, "measured_s_ago", "  measured %.1f s ago",
				     (double)(mono - in->fresh_mono) / 1e9);
		else
			print_null(pr, "measured_s_ago", "  never measured");
		if (syncd_blind(d, in, mono, why, sizeof(why)))
			print_str(pr, "blind", "  (%s)", why);
		else
			print_null(pr, "blind", NULL);
		print_double(pr, "answered_s_ago", NULL,
			     (double)(mono - in->last_answer_ns) / 1e9);
		print_text(pr, "\n");
		print_str(pr, "gm", "  grandmaster %s", in->last_gm[0] ? in->last_gm : NULL);
		print_str(pr, "identity", "  self %s", in->self[0] ? in->self : NULL);
		print_int(pr, "steps_removed", "  steps removed %lld",
			  in->steps);
		print_bool(pr, "hardware", "  hardware %s", in->pi->hw);
		print_int(pr, "domain", "  domain %lld", in->pi->domain);
		print_str(pr, "profile", "  profile %s\n",
			  syncconf_profile_names[in->pi->profile]);
		syncd_print_ptp(pr, syncq_clock_state(syncd_inst_in_sync(d, in, mono),
						      in->v.holdover),
				in->gm_class, in->freq_ppb, in->clock_steps, in->q);
		/* Nothing older than the last answer is shown as current. */
		print_str(pr, "events", NULL, stale ? "unanswered" :
			  in->subscribed > 0 ? "subscribed" :
			  in->subscribed < 0 ? "polled" : "asked");
		print_object_begin(pr, "ptp4l");
		syncd_print_child(pr, in->ch, mono);
		print_object_end(pr);
		print_array_begin(pr, "ports");
		for (unsigned i = 0; i < in->nports; i++) {
			const struct syncd_port *p = &in->port[i];

			print_object_begin(pr, NULL);
			print_str(pr, "interface", "  port %s", p->cp->name);
			print_int(pr, "number", " (%lld)", p->number);
			print_str(pr, "role", " role %s", syncconf_role_names[p->cp->role]);
			print_str(pr, "state", " state %s",
				  p->state < 0 || stale ? NULL :
				  mgmt_port_state_name(p->state));
			print_str(pr, "link", " link %s", p->link < 0 ? NULL :
				  p->link ? "up" : "down");
			if (p->hwts_known)
				print_str(pr, "hwtstamp_rx", " rx stamps %s",
					  hwtstamp_rx_name(p->hwts.rx_filter));
			if (p->have_stats && !stale) {
				print_uint(pr, "rx_sync", " rx sync %llu", p->rx[0]);
				print_uint(pr, "rx_announce", " announce %llu", p->rx[0xB]);
				print_uint(pr, "tx_delay_req", " tx delay_req %llu", p->tx[1]);
				print_uint(pr, "rx_delay_resp", " rx delay_resp %llu", p->rx[9]);
			}
			print_text(pr, "\n");
			print_object_end(pr);
		}
		print_array_end(pr);
		syncd_print_stats(pr, in->q, now);
		print_object_end(pr);
	}
	for (unsigned k = 0; k < d->nder; k++) {
		struct syncd_derived *dv = &d->der[k];

		print_object_begin(pr, NULL);
		print_str(pr, "clock", "\nclock %s", dv->clock);
		print_str(pr, "state", "  follows %s (phc2sys)", dv->ref->pi->clock);
		print_bool(pr, "in_sync", "  in sync %s", dv->v.in_sync);
		print_bool(pr, "holdover", NULL, dv->v.holdover);
		print_text(pr, dv->v.holdover ? " (holdover)" : "");
		syncd_print_i64(pr, "bound_ns", "  bound %lld ns", dv->v.bound_ns);
		syncd_print_i64(pr, "offset_ns", "  offset %lld ns\n", dv->offset_ns);
		syncd_print_ptp(pr, syncq_clock_state(dv->v.in_sync, dv->v.holdover),
				-1, dv->freq_ppb, dv->clock_steps, NULL);
		syncd_print_stats(pr, dv->q, now);
		print_object_end(pr);
	}
	print_array_end(pr);
	print_array_begin(pr, "helpers");
	if (d->naux)
		print_text(pr, "\n");
	for (unsigned k = 0; k < d->naux; k++) {
		print_object_begin(pr, NULL);
		syncd_print_child(pr, d->aux[k], mono);
		print_object_end(pr);
	}
	print_array_end(pr);
	print_text(pr, "\n");
	syncd_alarms(d, pr, mono);
	journal_ring_print(pr, "events", "recent events:\n", &d->events);
}

int syncd_ctl_answer(void *arg, const char *req, FILE *out)
{
	struct printer *pr;

	for (int f = 0; f < 3; f++) {
		if (strcmp(req, ctl_status_requests[f]))
			continue;
		pr = print_create(out, (enum print_format)f,
				  f == PRINT_JSON ? PRINT_PRETTY : 0);
		syncd_status(arg, pr);
		print_destroy(pr);
		return 0;
	}
	return -EINVAL;
}

/* The clock state of instance or derived clock k (instances first), from
 * the same in-sync answer as tapless_clock_in_sync. */
static enum syncq_clock_state syncd_clock_state(const struct syncd *d,
						unsigned k, int64_t mono)
{
	if (k >= d->ninst)
		return syncq_clock_state(d->der[k - d->ninst].v.in_sync,
					 d->der[k - d->ninst].v.holdover);
	return syncq_clock_state(syncd_inst_in_sync(d, &d->inst[k], mono),
				 d->inst[k].v.holdover);
}

static const char *syncd_clock_name(const struct syncd *d, unsigned k)
{
	return k >= d->ninst ? d->der[k - d->ninst].clock : d->inst[k].pi->clock;
}

/* What syncd knows of the PTP side per clock: state, grandmaster, ports,
 * servo, steps and path changes (tapless-syncd(8), Metrics). */
static void syncd_metrics_ptp(FILE *f, enum metrics_format fmt,
			      const struct syncd *d)
{
	int64_t mono = syncd_mono();
	unsigned all = d->ninst + d->nder;

	metrics_family(f, fmt, "tapless_clock_state", METRICS_GAUGE,
		       "0 FREERUN, 1 LOCKED (in sync), 2 HOLDOVER", NULL);
	for (unsigned k = 0; k < all; k++) {
		const char *lab[] = { "clock", syncd_clock_name(d, k), NULL };

		metrics_sample(f, "tapless_clock_state", lab,
			       syncd_clock_state(d, k, mono));
	}
	metrics_family(f, fmt, "tapless_clock_class", METRICS_GAUGE,
		       "the grandmaster's clockClass", NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };

		if (d->inst[k].gm_class >= 0)
			metrics_sample(f, "tapless_clock_class", lab,
				       d->inst[k].gm_class);
	}
	metrics_family(f, fmt, "tapless_clock_gm_info", METRICS_GAUGE,
		       "1, labelled with the grandmaster the clock follows",
		       NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock,
				      "gm_identity", d->inst[k].last_gm, NULL };

		if (d->inst[k].last_gm[0])
			metrics_sample(f, "tapless_clock_gm_info", lab, 1);
	}
	metrics_family(f, fmt, "tapless_ptp_port_state", METRICS_GAUGE,
		       "ptp4l's portState (IEEE 1588: 1 INITIALIZING ... "
		       "6 MASTER ... 9 SLAVE)", NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const struct syncd_inst *in = &d->inst[k];

		/* Nothing older than the last answer is shown as current. */
		if (mono - in->last_answer_ns > 2 * d->interval_ns)
			continue;
		for (unsigned i = 0; i < in->nports; i++) {
			const char *lab[] = { "clock", in->pi->clock, "port",
					      in->port[i].cp->name, NULL };

			if (in->port[i].state >= 0)
				metrics_sample(f, "tapless_ptp_port_state", lab,
					       in->port[i].state);
		}
	}
	metrics_family(f, fmt, "tapless_clock_frequency_adjustment_ppb",
		       METRICS_GAUGE, "the clock's frequency adjustment at the "
		       "last sample, parts per billion", NULL);
	for (unsigned k = 0; k < all; k++) {
		const char *lab[] = { "clock", syncd_clock_name(d, k), NULL };
		double ppb = k >= d->ninst ? d->der[k - d->ninst].freq_ppb
					   : d->inst[k].freq_ppb;

		if (isfinite(ppb))
			metrics_sample(f, "tapless_clock_frequency_adjustment_ppb",
				       lab, ppb);
	}
	metrics_family(f, fmt, "tapless_clock_steps", METRICS_COUNTER,
		       "steps of the clock seen since start or reload", NULL);
	for (unsigned k = 0; k < all; k++) {
		const char *lab[] = { "clock", syncd_clock_name(d, k), NULL };

		metrics_sample(f, "tapless_clock_steps_total", lab,
			       (double)(k >= d->ninst ?
					d->der[k - d->ninst].clock_steps :
					d->inst[k].clock_steps));
	}
	metrics_family(f, fmt, "tapless_clock_path_delay_changes",
		       METRICS_COUNTER, "changes of the mean path delay by "
		       "more than 100 ns and 10 %", NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };

		metrics_sample(f, "tapless_clock_path_delay_changes_total", lab,
			       (double)syncq_delay_changes(d->inst[k].q));
	}
}

int syncd_metrics(FILE *f, enum metrics_format fmt, void *arg)
{
	struct syncd *d = arg;

	metrics_family(f, fmt, "tapless_clock_in_sync", METRICS_GAUGE,
		       "1 while the clock is in sync with PTP time", NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };

		metrics_sample(f, "tapless_clock_in_sync", lab,
			       syncd_inst_in_sync(d, &d->inst[k], syncd_mono()));
	}
	for (unsigned k = 0; k < d->nder; k++) {
		const char *lab[] = { "clock", d->der[k].clock, NULL };

		metrics_sample(f, "tapless_clock_in_sync", lab, d->der[k].v.in_sync);
	}
	metrics_family(f, fmt, "tapless_clock_holdover", METRICS_GAUGE,
		       "1 while nothing measures the clock and its bound grows "
		       "from the last measurement", NULL);
	for (unsigned k = 0; k < d->ninst + d->nder; k++) {
		bool der = k >= d->ninst;
		const char *lab[] = { "clock", der ? d->der[k - d->ninst].clock :
				      d->inst[k].pi->clock, NULL };

		metrics_sample(f, "tapless_clock_holdover", lab,
			       der ? d->der[k - d->ninst].v.holdover :
			       d->inst[k].v.holdover);
	}
	metrics_family(f, fmt, "tapless_clock_error_bound_seconds", METRICS_GAUGE,
		       "how far from PTP time the clock can be", "seconds");
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };

		if (d->inst[k].v.bound_ns != SYNCQ_NONE)
			metrics_sample(f, "tapless_clock_error_bound_seconds", lab,
				       (double)d->inst[k].v.bound_ns / 1e9);
	}
	for (int w = 0; w < 2; w++) {
		const char *name = w ? "tapless_clock_path_delay_seconds"
				     : "tapless_clock_offset_seconds";

		metrics_family(f, fmt, name, METRICS_GAUGE, w ?
			       "mean path delay at the last sample" :
			       "offset from the master at the last sample",
			       "seconds");
		for (unsigned k = 0; k < d->ninst; k++) {
			const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };
			struct syncq_verdict vd;
			struct syncq_sample s;
			int64_t v;

			if (!syncq_last(d->inst[k].q, &s, &vd))
				continue;
			v = w ? s.delay_ns : s.offset_ns;
			if (v != SYNCQ_NONE)
				metrics_sample(f, name, lab, (double)v / 1e9);
		}
	}
	syncd_metrics_ptp(f, fmt, d);
	metrics_family(f, fmt, "tapless_ptp4l_restarts", METRICS_COUNTER,
		       "times ptp4l was restarted", NULL);
	for (unsigned k = 0; k < d->ninst; k++) {
		const char *lab[] = { "clock", d->inst[k].pi->clock, NULL };

		metrics_sample(f, "tapless_ptp4l_restarts_total", lab,
			       child_restarts(d->inst[k].ch));
	}
	metrics_family(f, fmt, "tapless_journal_write_errors", METRICS_COUNTER,
		       "journal lines that could not be written", NULL);
	metrics_sample(f, "tapless_journal_write_errors_total", NULL,
		       (double)d->journal_errors);
	return ferror(f) ? -EIO : 0;
}
