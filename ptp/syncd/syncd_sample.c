/* syncd_sample.c — tapless-syncd's sampling: ptp4l's answers on its
 * management socket, PHC-vs-system readings, one sample per clock and
 * sample_interval judged by syncq, and the journal those and the events go
 * to. See syncd_private.h for the other files.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <linux/net_tstamp.h>

#include "base/log.h"
#include "base/opts.h"
#include "ptp/child.h"
#include "ptp/fresh.h"
#include "ptp/journal.h"
#include "ptp/mgmt.h"
#include "ptp/pmc.h"
#include "ptp/ptpgen.h"
#include "ptp/syncconf.h"
#include "ptp/syncd/syncd_private.h"
#include "ptp/syncq.h"
#include "stamp/hwtstamp.h"
#include "stamp/phc.h"

#define SYNCD_SUBSCRIBE_S 180		/* subscription lifetime asked */
#define SYNCD_STEP_NS 500000LL		/* a jump this large is a step... */
#define SYNCD_STEP_PPM 500		/* ...or what a servo could not slew */

/* ---- events ---- */

/* Journal an event, keep it for status, and log it. */
void syncd_event(struct syncd *d, const char *clock, const char *name,
		 const char *fmt, ...)
{
	struct journal_event *e = journal_ring_add(&d->events);
	va_list ap;
	int rc;

	e->ts_ns = syncd_now();
	snprintf(e->clock, sizeof(e->clock), "%s", clock ? clock : "-");
	snprintf(e->name, sizeof(e->name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(e->text, SYNCD_EVENT_TEXT, fmt, ap);
	va_end(ap);
	log_notice("%s %s: %s", e->clock, e->name, e->text);
	if (d->jw) {
		rc = journal_write_event(d->jw, e->ts_ns, clock, name, e->text);
		if (rc && !d->journal_errors++)
			log_err("%s: %s", d->journal_path, strerror(-rc));
	}
}

/* ---- management answers ---- */

static struct syncd_port *syncd_port_no(struct syncd_inst *in, uint16_t n)
{
	for (unsigned i = 0; i < in->nports; i++)
		if (in->port[i].number == n)
			return &in->port[i];
	return NULL;
}

static void syncd_port_state(struct syncd *d, struct syncd_inst *in,
			     struct syncd_port *p, int state)
{
	if (p->state == state)
		return;
	syncd_event(d, in->pi->clock, "port_state", "%s %s -> %s", p->cp->name,
		    p->state < 0 ? "-" : mgmt_port_state_name(p->state),
		    mgmt_port_state_name(state));
	p->state = state;
}

static void syncd_answer(struct syncd *d, struct syncd_inst *in,
			 const struct mgmt_msg *m)
{
	struct syncd_port *p;

	in->last_answer_ns = syncd_mono();
	in->answered = true;
	if (m->tlv_type == MGMT_TLV_ERROR_STATUS) {
		if (m->id == MGMT_ID_TIME_STATUS_NP && !in->ts_refused) {
			in->ts_refused = true;
			log_notice("%s: ptp4l refuses TIME_STATUS_NP (%s): a "
				   "measurement counts as fresh on its Sync "
				   "counters alone", in->pi->clock,
				   mgmt_error_name(m->error.error_id));
		}
		if (m->id == MGMT_ID_SUBSCRIBE_EVENTS_NP && in->subscribed == 0) {
			in->subscribed = -1;
			log_notice("%s: ptp4l refuses SUBSCRIBE_EVENTS_NP (%s): "
				   "polling port states every sample instead",
				   in->pi->clock, mgmt_error_name(m->error.error_id));
		}
		return;
	}
	if (!m->decoded)
		return;
	switch (m->id) {
	case MGMT_ID_TIME_STATUS_NP:
		in->have_ts = true;
		in->ts_offset_ns = m->time_status.master_offset_ns;
		in->ingress_ns = m->time_status.ingress_time_ns;
		break;
	case MGMT_ID_CURRENT_DATA_SET:
		in->have_cds = true;
		in->steps = m->current_ds.steps_removed;
		in->offset_ns = llround(mgmt_ti_ns(m->current_ds.offset_from_master));
		in->delay_ns = llround(mgmt_ti_ns(m->current_ds.mean_path_delay));
		break;
	case MGMT_ID_PARENT_DATA_SET:
		in->have_parent = true;
		mgmt_clock_id_str(&m->parent_ds.gm_identity, in->gm);
		in->gm_class_now = m->parent_ds.gm_clock_quality.clock_class;
		break;
	case MGMT_ID_PORT_DATA_SET:
		mgmt_clock_id_str(&m->port_ds.port.clock, in->self);
		p = syncd_port_no(in, m->port_ds.port.port);
		if (p)
			syncd_port_state(d, in, p, m->port_ds.port_state);
		break;
	case MGMT_ID_PORT_STATS_NP:
		p = syncd_port_no(in, m->port_stats.port.port);
		if (p) {
			memcpy(p->rx, m->port_stats.rx, sizeof(p->rx));
			memcpy(p->tx, m->port_stats.tx, sizeof(p->tx));
			p->have_stats = true;
		}
		break;
	case MGMT_ID_TIME_PROPERTIES_DATA_SET:
		if (m->time_props.current_utc_offset != in->utc_offset &&
		    (m->time_props.flags & MGMT_TP_UTC_OFFSET_VALID)) {
			in->utc_offset = m->time_props.current_utc_offset;
			syncd_event(d, in->pi->clock, "utc_offset", "%d",
				    in->utc_offset);
		}
		break;
	case MGMT_ID_SUBSCRIBE_EVENTS_NP:
		if (in->subscribed == 0)
			log_info("%s: subscribed to ptp4l's port events",
				 in->pi->clock);
		in->subscribed = 1;
		break;
	default:
		break;
	}
}

void syncd_pmc_read(struct syncd *d, struct syncd_inst *in)
{
	struct mgmt_msg m;
	int rc;

	while ((rc = pmc_recv(in->pmc, &m)) != 0) {
		if (rc == -EBADMSG)
			log_warn_rl("%s: bad management message from ptp4l: %s",
				    in->pi->clock, pmc_error(in->pmc));
		else if (rc < 0)
			break;
		else
			syncd_answer(d, in, &m);
	}
}

static void syncd_ask(struct syncd *d, struct syncd_inst *in, int64_t mono)
{
	/* TIME_STATUS_NP first and the counters last: ptp4l answers in
	 * order, and a Sync it takes in between then shows in the counters
	 * no later than in the ingress time. */
	static const uint16_t ids[] = {
		MGMT_ID_TIME_STATUS_NP, MGMT_ID_CURRENT_DATA_SET,
		MGMT_ID_PARENT_DATA_SET, MGMT_ID_PORT_DATA_SET,
		MGMT_ID_TIME_PROPERTIES_DATA_SET, MGMT_ID_PORT_STATS_NP,
	};
	int rc = 0;

	(void)d;
	if (!in->pmc || !child_running(in->ch))
		return;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if ((rc = pmc_get(in->pmc, ids[i])) < 0)
			break;		/* not listening (yet) */
	in->send_err = rc < 0 ? rc : 0;
	/* Pushed port states: renewed well before the lifetime ends. A
	 * ptp4l that refused is asked again only after a restart. */
	if (in->subscribed >= 0 && mono >= in->subscribe_at) {
		if (pmc_subscribe(in->pmc, SYNCD_SUBSCRIBE_S,
				  MGMT_EVENT(MGMT_NOTIFY_PORT_STATE)) >= 0)
			in->subscribe_at = mono + SYNCD_SUBSCRIBE_S / 3 * 1000000000LL;
	}
}

/* How long a running ptp4l may leave the daemon without an answer before
 * it is restarted: its socket removed, or the process stopped. */
static int64_t syncd_mgmt_grace(const struct syncd *d)
{
	return 4 * d->interval_ns > 2000000000LL ? 4 * d->interval_ns
						 : 2000000000LL;
}

/* A ptp4l nobody can reach keeps steering a clock nobody measures: say
 * so, and restart it (the exit then takes the usual path: ptp4l_exit,
 * restart). */
static void syncd_check_mgmt(struct syncd *d, struct syncd_inst *in,
			     int64_t mono)
{
	int64_t quiet = mono - in->last_answer_ns;

	if (!child_running(in->ch) || in->mgmt_lost ||
	    quiet <= syncd_mgmt_grace(d))
		return;
	in->mgmt_lost = true;
	syncd_event(d, in->pi->clock, "mgmt_lost", "%s: no answer on %s for "
		    "%.1f s (%s): restarting it", child_name(in->ch),
		    in->pi->uds_path, (double)quiet / 1e9,
		    in->send_err ? strerror(-in->send_err) : "sent, unanswered");
	child_signal(in->ch, SIGKILL);
}

bool syncd_blind(const struct syncd *d, const struct syncd_inst *in,
		 int64_t mono, char *buf, size_t len)
{
	unsigned down = 0;

	if (!child_running(in->ch)) {
		snprintf(buf, len, "%s not running, restart in %.0f s",
			 child_name(in->ch),
			 (double)(child_next_start(in->ch) - mono) / 1e9);
		return true;
	}
	if (mono - in->last_answer_ns > 3 * d->interval_ns) {
		snprintf(buf, len, "%s not answering management messages on "
			 "%s for %.1f s%s%s", child_name(in->ch),
			 in->pi->uds_path,
			 (double)(mono - in->last_answer_ns) / 1e9,
			 in->send_err ? ": " : "",
			 in->send_err ? strerror(-in->send_err) : "");
		return true;
	}
	for (unsigned i = 0; i < in->nports; i++)
		down += in->port[i].link == 0;
	if (in->nports && down == in->nports) {
		snprintf(buf, len, "%s link down", in->port[0].cp->name);
		return true;
	}
	return false;
}

int64_t syncd_drift_ppb(const struct syncd *d, bool hw, const char **why)
{
	const struct opts *o = d->conf.opts;

	if (opts_given(o, "holdover_drift")) {
		*why = "configured";
		return opts_int(o, "holdover_drift");
	}
	if (opts_flag(o, "free_running")) {
		*why = "free running";
		return SYNCD_DRIFT_FREE_PPB;
	}
	*why = hw ? "hardware" : "software";
	return hw ? SYNCD_DRIFT_HW_PPB : SYNCD_DRIFT_SW_PPB;
}

void syncd_rules(struct syncd *d)
{
	const struct opts *o = d->conf.opts;

	for (unsigned k = 0; k < d->ninst + d->nder; k++) {
		bool der = k >= d->ninst;
		const struct syncd_inst *in = der ? d->der[k - d->ninst].ref
						  : &d->inst[k];
		const char *why;
		int64_t drift = syncd_drift_ppb(d, in->pi->hw, &why);

		syncd_event(d, der ? d->der[k - d->ninst].clock : in->pi->clock,
			    "rules", "threshold_ns=%lld drift_ppb=%" PRId64
			    " (%s) interval_ms=%lld settle=%d spread=%d "
			    "fresh=%s", opts_int(o, "sync_threshold"), drift, why,
			    (long long)(d->interval_ns / 1000000), SYNCD_SETTLE,
			    SYNCQ_SPREAD, der ? "reading+reference" :
			    "new-sync-ingress");
	}
}

void syncd_count_step(struct syncd *d, const char *clock)
{
	for (unsigned k = 0; k < d->ninst; k++)
		if (!strcmp(d->inst[k].pi->clock, clock))
			d->inst[k].clock_steps++;
	for (unsigned k = 0; k < d->nder; k++)
		if (!strcmp(d->der[k].clock, clock))
			d->der[k].clock_steps++;
}

/* ---- samples ---- */

static double syncd_freq_ppb(clockid_t id)
{
	struct timex tx = { .modes = 0 };

	/* modes 0 reads without adjusting anything. */
	if (clock_adjtime(id, &tx) < 0)
		return NAN;
	return (double)tx.freq / 65.536;
}

/* The clock's state from its ports', and in *port the index of the port
 * that follows a master (-1: none). */
static void syncd_judge(struct syncd_inst *in, const char **state_out,
			int *port)
{
	const struct syncd_port *follow = NULL, *calib = NULL, *master = NULL;

	for (unsigned i = 0; i < in->nports; i++) {
		const struct syncd_port *p = &in->port[i];

		if (p->state == MGMT_PS_SLAVE)
			follow = p;
		else if (p->state == MGMT_PS_UNCALIBRATED)
			calib = p;
		else if (p->state == MGMT_PS_MASTER ||
			 p->state == MGMT_PS_GRAND_MASTER)
			master = p;
	}
	if (!child_running(in->ch) || !in->answered) {
		in->qstate = SYNCQ_LOST;
		*state_out = child_running(in->ch) ? "-" : "DOWN";
	} else if (follow || calib) {
		in->qstate = follow ? SYNCQ_FOLLOWING : SYNCQ_CALIBRATING;
		*state_out = mgmt_port_state_name((follow ? follow : calib)->state);
		*port = (int)((follow ? follow : calib) - in->port);
	} else if (master && in->have_parent && !strcmp(in->gm, in->self)) {
		in->qstate = SYNCQ_GRANDMASTER;
		*state_out = "MASTER";
	} else {
		const struct syncd_port *p = &in->port[0];

		in->qstate = SYNCQ_LOST;
		*state_out = p->state < 0 ? "-" : mgmt_port_state_name(p->state);
	}
}

static void syncd_write(struct syncd *d, const struct journal_sample *js)
{
	int rc;

	if (!d->jw)
		return;
	rc = journal_write_sample(d->jw, js);
	if (rc && !d->journal_errors++)
		log_err("%s: %s", d->journal_path, strerror(-rc));
}

/* The answers of this sample, for fresh_judge(). */
static bool syncd_fresh(struct syncd_inst *in, int port)
{
	struct fresh_input fi = {
		.port = port, .have_ts = in->have_ts,
		.ingress_ns = in->ingress_ns, .ts_offset_ns = in->ts_offset_ns,
		.ts_refused = in->ts_refused, .have_cds = in->have_cds,
		.delay_ns = in->delay_ns,
	};

	if (port >= 0 && in->port[port].have_stats) {
		fi.have_stats = true;
		fi.rx_sync = in->port[port].rx[0];	/* messageType Sync */
		fi.rx_follow_up = in->port[port].rx[8];	/* Follow_Up */
	}
	return fresh_judge(&in->fr, &fi);
}

static void syncd_sample_inst(struct syncd *d, struct syncd_inst *in,
			      int64_t now)
{
	struct journal_sample js = { .ts_ns = now, .steps = -1 };
	struct syncq_sample s = { .ts_ns = now };
	const char *state;
	int port = -1;
	uint64_t changes;

	syncd_judge(in, &state, &port);
	s.state = in->qstate;
	/* Offset and delay mean something only while a master is followed,
	 * and only when measured since the sample before. */
	s.fresh = syncd_fresh(in, s.state == SYNCQ_FOLLOWING ||
				  s.state == SYNCQ_CALIBRATING ? port : -1);
	s.offset_ns = s.fresh ? (in->have_ts ? in->ts_offset_ns : in->offset_ns)
			      : SYNCQ_NONE;
	s.delay_ns = s.fresh ? in->delay_ns : SYNCQ_NONE;
	changes = syncq_delay_changes(in->q);
	syncq_add(in->q, &s, &in->v);
	if (syncq_delay_changes(in->q) != changes)
		syncd_event(d, in->pi->clock, "delay_change",
			    "mean path delay %" PRId64 " ns", s.delay_ns);
	in->fresh = s.fresh || s.state == SYNCQ_GRANDMASTER;
	if (in->fresh)
		in->fresh_mono = syncd_mono();
	snprintf(in->state_name, sizeof(in->state_name), "%s", state);

	snprintf(js.clock, sizeof(js.clock), "%s", in->pi->clock);
	snprintf(js.state, sizeof(js.state), "%s", state);
	js.offset_ns = s.state == SYNCQ_GRANDMASTER ? 0 : s.offset_ns;
	js.delay_ns = s.delay_ns;
	js.freq_ppb = syncd_freq_ppb(in->phc ? phc_clockid(in->phc)
					     : CLOCK_REALTIME);
	in->freq_ppb = js.freq_ppb;
	/* While a port only starts to follow, ptp4l can still name itself
	 * as grandmaster: not a grandmaster change worth an event. */
	if (in->have_parent && s.state != SYNCQ_LOST &&
	    (s.state == SYNCQ_GRANDMASTER || strcmp(in->gm, in->self))) {
		snprintf(js.gm, sizeof(js.gm), "%s", in->gm);
		if (*in->last_gm && strcmp(in->last_gm, in->gm))
			syncd_event(d, in->pi->clock, "gm_change", "%s -> %s",
				    in->last_gm, in->gm);
		snprintf(in->last_gm, sizeof(in->last_gm), "%s", in->gm);
		if (in->gm_class >= 0 && in->gm_class != in->gm_class_now)
			syncd_event(d, in->pi->clock, "clock_class", "%d -> %d",
				    in->gm_class, in->gm_class_now);
		in->gm_class = in->gm_class_now;
		js.gm_class = in->gm_class;
	}
	js.steps = in->have_cds && s.state != SYNCQ_LOST ? in->steps : -1;
	/* ptp4l moves a port to SLAVE exactly when its servo locks. */
	snprintf(js.servo, sizeof(js.servo), "%s",
		 s.state == SYNCQ_FOLLOWING ? "s2" :
		 s.state == SYNCQ_CALIBRATING ? "s0" : "-");
	js.in_sync = in->v.in_sync;
	js.holdover = in->v.holdover;
	js.bound_ns = in->v.bound_ns;
	syncd_write(d, &js);
	in->have_cds = in->have_parent = in->have_ts = in->answered = false;
}

/* PHC against CLOCK_REALTIME, for derived clocks and for steps of the
 * PHC that ptp4l does not announce. */
static int syncd_phc_sys(struct phc *phc, struct phc_offset *po)
{
	return phc_sys_offset(phc, 5, po);
}

static void syncd_sample_derived(struct syncd *d, struct syncd_derived *dv,
				 int64_t now)
{
	struct journal_sample js = { .ts_ns = now, .steps = -1 };
	struct syncq_sample s = { .ts_ns = now, .delay_ns = SYNCQ_NONE };
	struct phc_offset ref, own;
	int64_t width = 0;
	bool ok = dv->ref->phc && !syncd_phc_sys(dv->ref->phc, &ref);

	if (ok && dv->phc)
		ok = !syncd_phc_sys(dv->phc, &own);
	s.offset_ns = SYNCQ_NONE;
	if (ok) {
		/* Pure from here: the offset, then the verdict chained to
		 * the reference's (syncq.h, "Derived clocks"). */
		struct syncq_reading r = { ref.offset_ns, ref.window_ns }, o;

		if (dv->phc)
			o = (struct syncq_reading){ own.offset_ns, own.window_ns };
		ok = !syncq_derived_offset(&r, dv->phc ? &o : NULL,
					   dv->ref->utc_offset, &s.offset_ns,
					   &width);
	}
	s.state = ok ? SYNCQ_FOLLOWING : SYNCQ_LOST;
	s.fresh = ok;			/* read just now */
	syncq_add(dv->q, &s, &dv->v);
	syncq_derived_bound(&dv->v, &dv->ref->v, width,
			    opts_int(d->conf.opts, "sync_threshold"));
	dv->offset_ns = s.offset_ns;
	snprintf(js.clock, sizeof(js.clock), "%s", dv->clock);
	snprintf(js.state, sizeof(js.state), "%s", ok ? "phc2sys" : "-");
	js.offset_ns = s.offset_ns;
	js.delay_ns = JOURNAL_NONE;
	js.freq_ppb = syncd_freq_ppb(dv->phc ? phc_clockid(dv->phc)
					     : CLOCK_REALTIME);
	dv->freq_ppb = js.freq_ppb;
	snprintf(js.gm, sizeof(js.gm), "%s", dv->ref->gm[0] ? dv->ref->gm : "-");
	js.gm_class = dv->ref->gm_class > 0 ? dv->ref->gm_class : 0;
	snprintf(js.servo, sizeof(js.servo), "-");
	js.in_sync = dv->v.in_sync;
	js.holdover = dv->v.holdover;
	js.bound_ns = dv->v.bound_ns;
	syncd_write(d, &js);
}

/* Another program (or the driver) may change a NIC's stamping under us:
 * ptp4l with hwts_filter normal, a capture tool, a link reset. */
static void syncd_check_hwtstamp(struct syncd *d, struct syncd_inst *in)
{
	for (unsigned i = 0; in->pi->hw && i < in->nports; i++) {
		struct syncd_port *p = &in->port[i];
		struct hwtstamp_state st;
		static const struct hwtstamp_state want = {
			.tx_type = HWTSTAMP_TX_ON,
			.rx_filter = HWTSTAMP_FILTER_ALL,
		};

		if (hwtstamp_get(p->cp->name, &st))
			continue;
		if (p->hwts_known && (st.tx_type != p->hwts.tx_type ||
				      st.rx_filter != p->hwts.rx_filter))
			syncd_event(d, in->pi->clock, "hwtstamp_change",
				    "%s tx %s rx %s -> tx %s rx %s", p->cp->name,
				    hwtstamp_tx_name(p->hwts.tx_type) ?: "?",
				    hwtstamp_rx_name(p->hwts.rx_filter) ?: "?",
				    hwtstamp_tx_name(st.tx_type) ?: "?",
				    hwtstamp_rx_name(st.rx_filter) ?: "?");
		p->hwts = st;
		p->hwts_known = true;
		p->hwts_narrow = child_running(in->ch) &&
			hwtstamp_narrower(&want, &st);
	}
}

static void syncd_check_phc_step(struct syncd *d, struct syncd_inst *in)
{
	struct phc_offset po;

	if (!in->phc || syncd_phc_sys(in->phc, &po))
		return;
	/* Servos slew at most a few hundred ppm: a millisecond in one
	 * interval is a step, of the PHC or of the system clock (the
	 * latter is reported by the timerfd as well). */
	if (in->phc_sys_known &&
	    llabs(po.offset_ns - in->phc_sys_ns) >
	    SYNCD_STEP_NS + d->interval_ns / 1000000 * SYNCD_STEP_PPM) {
		syncd_event(d, in->pi->clock, "step", "%+" PRId64 " ns against sys",
			    po.offset_ns - in->phc_sys_ns);
		syncd_count_step(d, in->pi->clock);
		syncq_reset(in->q);
	}
	in->phc_sys_ns = po.offset_ns;
	in->phc_sys_known = true;
}

static void syncd_rotate(struct syncd *d, int64_t now)
{
	uint64_t limit = (uint64_t)opts_int(d->conf.opts, "journal_rotate_size")
		* 1000000;
	char old[4300];
	int rc;

	if (!d->jw || !limit || journal_writer_size(d->jw) < limit)
		return;
	rc = journal_writer_rotate(d->jw, now,
				   (unsigned)opts_int(d->conf.opts, "journal_keep"),
				   old, sizeof(old));
	if (rc)
		log_err("%s: rotation failed: %s", d->journal_path, strerror(-rc));
	else
		syncd_event(d, NULL, "journal_rotated", "previous file %s", old);
}

void syncd_tick(struct syncd *d)
{
	int64_t now = syncd_now(), mono = syncd_mono();

	for (unsigned k = 0; k < d->ninst; k++) {
		syncd_check_hwtstamp(d, &d->inst[k]);
		syncd_check_phc_step(d, &d->inst[k]);
		syncd_sample_inst(d, &d->inst[k], now);
	}
	for (unsigned k = 0; k < d->nder; k++)
		syncd_sample_derived(d, &d->der[k], now);
	for (unsigned k = 0; k < d->ninst; k++) {
		syncd_check_mgmt(d, &d->inst[k], mono);
		syncd_ask(d, &d->inst[k], mono);
	}
	syncd_rotate(d, now);
}
