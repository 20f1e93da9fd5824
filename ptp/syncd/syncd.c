/* syncd.c — tapless-syncd: keep the host's clocks on PTP time with
 * linuxptp (ptp4l, phc2sys: supervised here, never reimplemented) and
 * journal how well they follow it. See tapless-syncd(8), tapless.conf(5).
 *
 * One poll loop: signals (signalfd), the children's exits (pidfds) and
 * output, ptp4l's management answers, link changes, the control socket and
 * the metrics port. Once per sample_interval every clock gets a journal
 * sample judged by syncq, and new management questions go out; the answers
 * to those make the next sample.
 *
 * Here: start-up, the configuration (re)load, the children's supervision,
 * links and system clock steps, the loop and the stop. The sampling is in
 * syncd_sample.c, status and metrics in syncd_status.c, what they share in
 * syncd_private.h.
 */
#include <errno.h>
#include <math.h>
#include <grp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "ptp/child.h"
#include "ptp/fresh.h"
#include "ptp/ctl.h"
#include "stamp/iface.h"
#include "ptp/journal.h"
#include "base/log.h"
#include "base/errbuf.h"
#include "base/mkpath.h"
#include "base/metrics.h"
#include "base/opts.h"
#include "stamp/phc.h"
#include "base/pidfile.h"
#include "ptp/pmc.h"
#include "base/prog.h"
#include "ptp/ptpgen.h"
#include "ptp/syncconf.h"
#include "ptp/syncd/syncd_private.h"
#include "ptp/syncq.h"
#include "stamp/tsinfo.h"
#include "base/xalloc.h"

#define SYNCD_MAX_FDS 128
#define SYNCD_PIDFILE "tapless-syncd.pid"	/* in run_dir */

static int64_t syncd_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t syncd_now(void) { return syncd_clock(CLOCK_REALTIME); }
int64_t syncd_mono(void) { return syncd_clock(CLOCK_MONOTONIC); }

/* ---- the host's facts and the plan ---- */

static int syncd_resolve(const struct syncconf *c,
			 struct ptpgen_port_info *info, char err[SYNCCONF_ERRBUF])
{
	for (unsigned i = 0; i < c->nports; i++) {
		const struct syncconf_port *p = &c->port[i];
		struct tsinfo ts;
		int rc = tsinfo_get(p->name, &ts);

		if (rc == -ENODEV) {
			snprintf(err, SYNCCONF_ERRBUF, "%s:%d: [%s]: no such "
				 "interface", c->path, p->line, p->name);
			return -EINVAL;
		}
		if (rc) {
			snprintf(err, SYNCCONF_ERRBUF, "%s:%d: [%s]: cannot "
				 "read its timestamping capabilities: %s", c->path,
				 p->line, p->name, strerror(-rc));
			return rc;
		}
		info[i].phc = ts.phc_index;
		info[i].hw = tsinfo_has_hw(&ts);
	}
	return 0;
}

/* Read the file and plan; nothing runs yet. */
static int syncd_load(struct syncd *d, struct syncconf *c,
		      struct ptpgen_plan *plan, char err[SYNCCONF_ERRBUF])
{
	struct ptpgen_port_info info[SYNCCONF_MAX_PORTS];
	struct opts *o = opts_create(syncconf_opts);
	int rc;

	/* The command line again: it wins over the file, at every reload. */
	opts_copy_cli(o, d->cli);
	rc = syncconf_load(c, o, d->cfg_path, err);
	if (rc) {
		opts_destroy(o);
		return rc;
	}
	rc = syncd_resolve(c, info, err);
	if (!rc)
		rc = ptpgen_plan(plan, c, info, err);
	if (rc)
		syncconf_free(c);
	return rc;
}

/* ---- children ---- */

static void syncd_child_line(void *arg, const char *name, const char *line)
{
	(void)arg;
	log_info("%s: %s", name, line);
}

static void syncd_start_child(struct syncd *d, struct child *ch,
			      const char *clock)
{
	int rc = child_start(ch, syncd_mono());

	if (rc)
		syncd_event(d, clock, "child_fail", "%s: cannot start: %s",
			    child_name(ch), strerror(-rc));
	else
		log_info("%s started, pid %d", child_name(ch), (int)child_pid(ch));
}

static void syncd_teardown(struct syncd *d)
{
	for (unsigned k = 0; k < d->ninst; k++) {
		struct syncd_inst *in = &d->inst[k];

		child_destroy(in->ch);		/* stops it */
		pmc_close(in->pmc);
		syncq_destroy(in->q);
		phc_close(in->phc);
		unlink(in->pi->cfg_path);
		memset(in, 0, sizeof(*in));
	}
	for (unsigned k = 0; k < d->naux; k++)
		child_destroy(d->aux[k]);
	for (unsigned k = 0; k < d->nder; k++) {
		phc_close(d->der[k].phc);
		syncq_destroy(d->der[k].q);
	}
	d->ninst = d->naux = d->nder = 0;
	ptpgen_plan_free(&d->plan);
	syncconf_free(&d->conf);
}

static struct syncq *syncd_syncq(const struct syncd *d, bool derived,
				 bool hw)
{
	const struct opts *o = d->conf.opts;
	const char *why;
	struct syncq_params p = {
		.threshold_ns = opts_int(o, "sync_threshold"),
		.asym_ns = derived ? 0 : opts_int(o, "asymmetry_allowance"),
		.asym_fraction = derived ? 0 : opts_double(o, "asymmetry_fraction"),
		.free_running = opts_flag(o, "free_running"),
		.settle = SYNCD_SETTLE,
		.interval_ns = d->interval_ns,
		.drift_ppb = syncd_drift_ppb(d, hw, &why),
	};

	return syncq_create(&p);
}

/* Start what the plan says. The plan and conf are d's from here on. */
static void syncd_apply(struct syncd *d)
{
	const struct syncconf *c = &d->conf;
	char err[SYNCCONF_ERRBUF];
	int rc;

	d->interval_ns = opts_ns(c->opts, "sample_interval");
	rc = ptpgen_write(&d->plan, err);
	if (rc)
		syncd_event(d, NULL, "config_fail", "%s", err);
	for (unsigned k = 0; k < d->plan.ninst; k++) {
		const struct ptpgen_instance *pi = &d->plan.inst[k];
		struct syncd_inst *in = &d->inst[d->ninst++];

		in->pi = pi;
		in->q = syncd_syncq(d, false, pi->hw);
		in->utc_offset = -1;
		in->gm_class = in->gm_class_now = -1;
		in->freq_ppb = NAN;
		in->subscribe_at = 0;
		in->v.bound_ns = in->v.fresh_ns = SYNCQ_NONE;
		fresh_reset(&in->fr);
		in->last_answer_ns = syncd_mono();
		for (unsigned i = 0; i < pi->nports; i++) {
			struct syncd_port *p = &in->port[in->nports++];

			p->cp = &c->port[pi->port[i]];
			p->number = (uint16_t)(i + 1);	/* file order */
			p->state = -1;
			p->link = -1;
		}
		if (pi->hw && (rc = phc_open(&in->phc, pi->phc)))
			log_warn("%s: cannot open /dev/ptp%d: %s", pi->clock,
				 pi->phc, strerror(-rc));
		rc = pmc_open(&in->pmc, pi->uds_path, pi->pmc_path,
			      (uint8_t)pi->domain);
		if (rc)
			syncd_event(d, pi->clock, "pmc_fail", "%s: %s",
				    pi->pmc_path, strerror(-rc));
		child_create(&in->ch, pi->proc.name,
			     (const char *const *)pi->proc.argv);
		syncd_start_child(d, in->ch, pi->clock);
	}
	for (unsigned k = 0; k < d->plan.nphc2sys; k++) {
		const struct ptpgen_proc *pr = &d->plan.phc2sys[k].proc;

		child_create(&d->aux[d->naux], pr->name,
			     (const char *const *)pr->argv);
		syncd_start_child(d, d->aux[d->naux++], NULL);
	}
	/* The clocks phc2sys steers, measured against the one it follows. */
	if (d->plan.phc2sys_ref >= 0 && d->inst[d->plan.phc2sys_ref].phc) {
		struct syncd_inst *ref = &d->inst[d->plan.phc2sys_ref];

		for (unsigned k = 0; k < d->plan.nphc2sys; k++) {
			const struct ptpgen_phc2sys *ps = &d->plan.phc2sys[k];
			struct syncd_derived *dv = &d->der[d->nder];

			if (ps->phc >= 0 && (rc = phc_open(&dv->phc, ps->phc))) {
				log_warn("%s: cannot open /dev/ptp%d: %s",
					 ps->clock, ps->phc, strerror(-rc));
				continue;
			}
			snprintf(dv->clock, sizeof(dv->clock), "%s", ps->clock);
			dv->ref = ref;
			dv->q = syncd_syncq(d, true, ref->pi->hw);
			dv->v.bound_ns = dv->v.fresh_ns = SYNCQ_NONE;
			dv->freq_ppb = NAN;
			dv->clock_steps = 0;
			d->nder++;
		}
	}
}

static void syncd_child_exited(struct syncd *d, struct child *ch,
			       struct syncd_inst *in)
{
	struct child_exit ex;
	char why[96];

	if (child_reap(ch, syncd_mono(), &ex) != 1)
		return;
	child_read_output(ch, syncd_child_line, d);
	child_exit_str(&ex, why, sizeof(why));
	syncd_event(d, in ? in->pi->clock : NULL,
		    in ? "ptp4l_exit" : "phc2sys_exit",
		    "%s (pid %d) %s; restart in %.0f s", child_name(ch),
		    (int)ex.pid, why,
		    (double)(child_next_start(ch) - syncd_mono()) / 1e9);
	if (in) {
		syncq_reset(in->q);
		/* A new ptp4l's offsets start from its placeholder. */
		fresh_reset(&in->fr);
		for (unsigned i = 0; i < in->nports; i++)
			in->port[i].state = -1;
		in->subscribed = 0;
		in->subscribe_at = 0;
	}
}

static void syncd_restart_one(struct syncd *d, struct child *ch,
			      const char *clock, int64_t now)
{
	if (child_running(ch) || now < child_next_start(ch))
		return;
	syncd_start_child(d, ch, clock);
	if (child_running(ch))
		syncd_event(d, clock, "restart", "%s restarted, pid %d (restart %u)",
			    child_name(ch), (int)child_pid(ch),
			    child_restarts(ch));
}

static void syncd_restart_due(struct syncd *d)
{
	int64_t now = syncd_mono();

	for (unsigned k = 0; k < d->ninst; k++) {
		struct syncd_inst *in = &d->inst[k];
		bool was = child_running(in->ch);

		syncd_restart_one(d, in->ch, in->pi->clock, now);
		if (!was && child_running(in->ch)) {
			/* A new ptp4l gets the management grace again. */
			in->last_answer_ns = now;
			in->mgmt_lost = false;
			in->send_err = 0;
		}
	}
	for (unsigned k = 0; k < d->naux; k++)
		syncd_restart_one(d, d->aux[k], NULL, now);
}

/* ---- links and the system clock ---- */

static void syncd_link(void *arg, const struct iface_entry *e, bool removed)
{
	struct syncd *d = arg;

	for (unsigned k = 0; k < d->ninst; k++)
		for (unsigned i = 0; i < d->inst[k].nports; i++) {
			struct syncd_port *p = &d->inst[k].port[i];
			int up = !removed && e->up && e->running;

			if (strcmp(p->cp->name, e->name) || p->link == up)
				continue;
			if (p->link >= 0 || !up)
				syncd_event(d, d->inst[k].pi->clock,
					    up ? "link_up" : "link_down", "%s%s",
					    e->name, removed ? " removed" : "");
			p->link = up;
		}
}

static void syncd_links_now(struct syncd *d)
{
	for (unsigned k = 0; k < d->ninst; k++)
		for (unsigned i = 0; i < d->inst[k].nports; i++) {
			struct iface_entry e;

			if (!iface_get(d->inst[k].port[i].cp->name, &e))
				syncd_link(d, &e, false);
		}
}

/* CLOCK_REALTIME set by anyone: the timerfd is cancelled (Linux's
 * TFD_TIMER_CANCEL_ON_SET), and realtime - monotonic tells by how much. */
static int syncd_arm_step_timer(struct syncd *d)
{
	struct itimerspec its = { .it_value = { .tv_sec = INT32_MAX } };

	d->rt_minus_mono = syncd_now() - syncd_mono();
	return timerfd_settime(d->tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
			       &its, NULL);
}

static void syncd_step_timer(struct syncd *d)
{
	uint64_t n;

	if (read(d->tfd, &n, sizeof(n)) < 0 && errno == ECANCELED) {
		int64_t was = d->rt_minus_mono;

		syncd_arm_step_timer(d);
		syncd_event(d, "sys", "step", "%+" PRId64 " ns",
			    d->rt_minus_mono - was);
		syncd_count_step(d, "sys");
		for (unsigned k = 0; k < d->ninst; k++) {
			if (!d->inst[k].pi->hw)
				syncq_reset(d->inst[k].q);
			/* PHC - sys jumped too, but the PHC did not. */
			d->inst[k].phc_sys_known = false;
		}
	}
}

/* ---- start-up and the loop ---- */

/* What ptp4l and phc2sys need, so all the daemon keeps (issue 17 item 8;
 * tapless-syncd(8), Privileges):
 *   CAP_SYS_TIME          they adjust clocks (ptp4l's servo, phc2sys);
 *   CAP_NET_RAW           ptp4l's L2 transport opens packet sockets;
 *   CAP_NET_ADMIN         ptp4l sets the NICs' timestamping (SIOCSHWTSTAMP);
 *   CAP_NET_BIND_SERVICE  ptp4l binds UDP ports 319 and 320 (and the
 *                         daemon a metrics_port below 1024, on reload).
 * The daemon itself needs none of them in its effective set: it stays uid
 * 0 and owns what it opens again later (run_dir, the journal, the control
 * socket, /dev/ptp*), and signals only its own children. */
static const int syncd_keep_caps[] = { CAP_SYS_TIME, CAP_NET_RAW,
				       CAP_NET_ADMIN, CAP_NET_BIND_SERVICE };

static uint64_t syncd_keep_mask(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < sizeof(syncd_keep_caps) / sizeof(syncd_keep_caps[0]); i++)
		m |= 1ULL << syncd_keep_caps[i];
	return m;
}

/* The bounding set cut to the kept ones, and no_new_privs: what ptp4l and
 * phc2sys can ever hold (as root, exec gives them the bounding set,
 * clamped by no_new_privs to the daemon's permitted set). */
static void syncd_drop_bounding(void)
{
	uint64_t keep = syncd_keep_mask();

	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (!(keep & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
		    errno != EINVAL && errno != EPERM)
			log_warn("cannot drop capability %d: %m", cap);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* This process's permitted and effective sets; -errno. */
static int syncd_caps(uint64_t *permitted, uint64_t permitted_set,
		      uint64_t effective_set, bool set)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2];

	memset(c, 0, sizeof(c));
	if (!set) {
		if (syscall(SYS_capget, &h, c))
			return -errno;
		*permitted = c[0].permitted | (uint64_t)c[1].permitted << 32;
		return 0;
	}
	c[0].permitted = (uint32_t)permitted_set;
	c[1].permitted = (uint32_t)(permitted_set >> 32);
	c[0].effective = (uint32_t)effective_set;
	c[1].effective = (uint32_t)(effective_set >> 32);
	return syscall(SYS_capset, &h, c) ? -errno : 0;
}

/* Once everything that needs privilege is open: permitted cut to what the
 * children need, effective empty. The children still get the kept set:
 * see syncd_drop_bounding(). */
static void syncd_drop_caps(struct syncd *d)
{
	uint64_t have;
	int rc = syncd_caps(&have, 0, 0, false);

	if (!rc) {
		d->caps = have & syncd_keep_mask();
		rc = syncd_caps(NULL, d->caps, 0, true);
	}
	if (rc)
		log_warn("cannot drop capabilities: %s", strerror(-rc));
	else
		d->caps_dropped = true;
}

/* Raise (or lower again) CAP_NET_BIND_SERVICE for a metrics port below
 * 1024 opened after the drop. */
static void syncd_bind_cap(struct syncd *d, bool on)
{
	uint64_t b = 1ULL << CAP_NET_BIND_SERVICE;

	if (d->caps_dropped && (d->caps & b))
		syncd_caps(NULL, d->caps, on ? b : 0, true);
}

static int syncd_dirname_mkdir(const char *path)
{
	char p[4096];
	char *slash;

	snprintf(p, sizeof(p), "%s", path);
	slash = strrchr(p, '/');
	if (!slash || slash == p)
		return 0;
	*slash = 0;
	return mkpath_p(p, 0755);
}


/* Take the lock file path for what ("run_dir /run/tapless"); msg names
 * the holder's pid and configuration when another instance has it. */
static int syncd_take(const struct syncd *d, struct pidfile **out,
		      const char *path, const char *what, char *msg,
		      size_t size)
{
	char note[PIDFILE_NOTE_MAX];
	struct pidfile_holder h;
	int rc;

	if (!realpath(d->cfg_path, note))
		snprintf(note, sizeof(note), "%s", d->cfg_path);
	rc = pidfile_take(out, path, note, &h);
	if (rc == -EWOULDBLOCK) {
		return errbuf_set(msg, size, -EBUSY, "%s is in use by another "
				  "tapless-syncd, pid %ld, config %s (lock %s)",
				  what, (long)h.pid, *h.note ? h.note : "unknown",
				  path);
	}
	if (rc)
		return errbuf_set(msg, size, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

/* One tapless-syncd per run_dir: the generated configurations and the
 * sockets there are this instance's only while it holds the pid file,
 * taken before anything in run_dir is written. On a reload to another
 * run_dir the new one is taken first and the old one let go after. msg
 * says why not, naming the holder's pid and configuration. */
static int syncd_lock(struct syncd *d, const char *run_dir, char *msg,
		      size_t size)
{
	char path[4200], what[4200];
	struct pidfile *p;
	int rc;

	if (d->lock && !strcmp(d->lock_dir, run_dir))
		return 0;
	rc = mkpath_p(run_dir, 0755);
	if (rc)
		return errbuf_set(msg, size, rc, "run_dir %s: %s", run_dir,
				  strerror(-rc));
	snprintf(path, sizeof(path), "%s/%s", run_dir, SYNCD_PIDFILE);
	snprintf(what, sizeof(what), "run_dir %s", run_dir);
	rc = syncd_take(d, &p, path, what, msg, size);
	if (rc)
		return rc;
	pidfile_release(d->lock);
	d->lock = p;
	snprintf(d->lock_dir, sizeof(d->lock_dir), "%s", run_dir);
	return 0;
}

/* Journal, control socket and metrics for the current configuration;
 * reopened on reload only when their settings changed. */
static int syncd_open_outputs(struct syncd *d, bool first)
{
	const struct opts *o = d->conf.opts;
	char path[4200];
	gid_t gid;
	int rc;

	if (opts_str(o, "hostname"))
		snprintf(d->host, sizeof(d->host), "%s", opts_str(o, "hostname"));
	else if (gethostname(d->host, sizeof(d->host) - 1))
		snprintf(d->host, sizeof(d->host), "localhost");
	rc = mkpath_p(opts_str(o, "journal_dir"), 0755);
	if (!rc)
		rc = mkpath_p(opts_str(o, "run_dir"), 0755);
	if (rc) {
		log_err("cannot make %s or %s: %s", opts_str(o, "journal_dir"),
			opts_str(o, "run_dir"), strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s.journal", opts_str(o, "journal_dir"),
		 d->host);
	if (!d->jw || strcmp(path, d->journal_path)) {
		char lock[4400], what[4300], msg[SYNCCONF_ERRBUF];
		struct pidfile *jl = NULL;

		/* One writer per journal: a dot file, so neither "*.journal"
		 * nor the rotated "HOST.journal.*" ever match it. */
		snprintf(lock, sizeof(lock), "%s/.%s.journal.lock",
			 opts_str(o, "journal_dir"), d->host);
		snprintf(what, sizeof(what), "journal %s", path);
		if (d->jlock && !strcmp(pidfile_path(d->jlock), lock)) {
			jl = d->jlock;
		} else if ((rc = syncd_take(d, &jl, lock, what, msg,
					    sizeof(msg)))) {
			log_err("%s%s", msg, first ? "" : "; keeping the "
				"journal it had");
			if (first)
				return rc;
			goto open_ctl;
		}
		journal_writer_close(d->jw);
		d->jw = NULL;
		if (jl != d->jlock) {
			pidfile_release(d->jlock);
			d->jlock = jl;
		}
		snprintf(d->journal_path, sizeof(d->journal_path), "%s", path);
		rc = journal_writer_open(&d->jw, path, d->host);
		if (rc) {
			log_err("%s: %s", path, strerror(-rc));
			if (first)
				return rc;
		}
	}
open_ctl:
	/* Kept when its path and group are the same: making it again would
	 * take CAP_CHOWN for a group the daemon is not in. */
	if (d->ctl && !strcmp(d->ctl_path, opts_str(o, "control_socket")) &&
	    !strcmp(d->ctl_group, opts_str(o, "control_group") ?
		    opts_str(o, "control_group") : ""))
		goto metrics;
	gid = (gid_t)-1;
	if (opts_str(o, "control_group")) {
		struct group *g = getgrnam(opts_str(o, "control_group"));

		if (!g) {
			log_err("control_group: no group '%s'",
				opts_str(o, "control_group"));
			if (first)
				return -EINVAL;
		} else {
			gid = g->gr_gid;
		}
	}
	rc = syncd_dirname_mkdir(opts_str(o, "control_socket"));
	if (!rc) {
		char lock[4200], what[4200], msg[SYNCCONF_ERRBUF];
		struct pidfile *cl = NULL;

		/* One daemon per control socket, beside it: PATH.lock. */
		snprintf(lock, sizeof(lock), "%s.lock",
			 opts_str(o, "control_socket"));
		snprintf(what, sizeof(what), "control_socket %s",
			 opts_str(o, "control_socket"));
		if (d->ctl_lock && !strcmp(pidfile_path(d->ctl_lock), lock))
			cl = d->ctl_lock;
		else if ((rc = syncd_take(d, &cl, lock, what, msg, sizeof(msg)))) {
			log_err("%s%s", msg, first ? "" : "; keeping the "
				"control socket it had");
			if (first)
				return rc;
			goto metrics;
		}
		ctl_close(d->ctl);
		d->ctl = NULL;
		if (cl != d->ctl_lock) {
			pidfile_release(d->ctl_lock);
			d->ctl_lock = cl;
		}
		rc = ctl_listen(&d->ctl, opts_str(o, "control_socket"), gid);
	}
	if (rc) {
		log_err("%s: %s%s", opts_str(o, "control_socket"), strerror(-rc),
			rc == -EADDRINUSE ? " (another tapless-syncd is running)" : "");
		if (first)
			return rc;
	} else {
		snprintf(d->ctl_path, sizeof(d->ctl_path), "%s",
			 opts_str(o, "control_socket"));
		snprintf(d->ctl_group, sizeof(d->ctl_group), "%s",
			 opts_str(o, "control_group") ?
			 opts_str(o, "control_group") : "");
	}
metrics:
	metrics_close(d->metrics);
	d->metrics = NULL;
	if (opts_int(o, "metrics_port")) {
		syncd_bind_cap(d, true);
		rc = metrics_open(&d->metrics, opts_str(o, "metrics_address"),
				  (int)opts_int(o, "metrics_port"));
		syncd_bind_cap(d, false);
		if (rc) {
			log_err("metrics_address %s metrics_port %lld: %s",
				opts_str(o, "metrics_address"),
				opts_int(o, "metrics_port"), strerror(-rc));
			if (first)
				return rc;
		}
	}
	return 0;
}

static void syncd_reload(struct syncd *d)
{
	struct syncconf c;
	struct ptpgen_plan plan;
	char err[SYNCCONF_ERRBUF];
	struct pidfile *old = d->lock;

	if (syncd_load(d, &c, &plan, err)) {
		syncd_event(d, NULL, "reload_fail", "%s; keeping the running "
			    "configuration", err);
		return;
	}
	if (strcmp(opts_str(c.opts, "run_dir"), d->lock_dir)) {
		/* Taken before the old one is let go: syncd_lock() releases
		 * it, so keep it held until the old files are removed. */
		d->lock = NULL;
		if (syncd_lock(d, opts_str(c.opts, "run_dir"), err,
			       sizeof(err))) {
			d->lock = old;
			syncd_event(d, NULL, "reload_fail", "%s; keeping the "
				    "running configuration", err);
			ptpgen_plan_free(&plan);
			syncconf_free(&c);
			return;
		}
	} else {
		old = NULL;
	}
	syncd_teardown(d);
	pidfile_release(old);
	d->conf = c;
	d->plan = plan;
	/* The plan's pointers into conf moved with the copy. */
	syncd_open_outputs(d, false);
	syncd_event(d, NULL, "reload", "%s: %u ptp4l, %u phc2sys", d->cfg_path,
		    d->plan.ninst, d->plan.nphc2sys);
	syncd_apply(d);
	syncd_rules(d);
	syncd_links_now(d);
}

static void syncd_signal(struct syncd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			syncd_reload(d);
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			d->stop = true;
	}
}

static void syncd_loop(struct syncd *d)
{
	struct pollfd fds[SYNCD_MAX_FDS];
	enum { W_SIG, W_STEP, W_WATCH, W_INST, W_AUX, W_CTL, W_METRICS };
	struct { int what; unsigned k; } tag[SYNCD_MAX_FDS];

	d->next_tick = syncd_mono() + d->interval_ns;
	while (!d->stop) {
		int n = 0, nctl, nmet, timeout;
		int64_t mono = syncd_mono();

#define ADD(fd_, ev_, what_, k_) do { fds[n] = (struct pollfd){ .fd = (fd_), \
		.events = (ev_) }; tag[n].what = (what_); tag[n].k = (k_); n++; } while (0)
		ADD(d->sfd, POLLIN, W_SIG, 0);
		ADD(d->tfd, POLLIN, W_STEP, 0);
		if (d->watch)
			ADD(iface_watch_fd(d->watch), POLLIN, W_WATCH, 0);
		for (unsigned k = 0; k < d->ninst; k++) {
			struct syncd_inst *in = &d->inst[k];

			if (child_pidfd(in->ch) >= 0)
				ADD(child_pidfd(in->ch), POLLIN, W_INST, k);
			if (child_out_fd(in->ch) >= 0)
				ADD(child_out_fd(in->ch), POLLIN, W_INST, k);
			if (in->pmc)
				ADD(pmc_fd(in->pmc), POLLIN, W_INST, k);
		}
		for (unsigned k = 0; k < d->naux; k++) {
			if (child_pidfd(d->aux[k]) >= 0)
				ADD(child_pidfd(d->aux[k]), POLLIN, W_AUX, k);
			if (child_out_fd(d->aux[k]) >= 0)
				ADD(child_out_fd(d->aux[k]), POLLIN, W_AUX, k);
		}
#undef ADD
		nctl = d->ctl ? ctl_pollfds(d->ctl, fds + n, SYNCD_MAX_FDS - n) : 0;
		for (int i = 0; i < nctl; i++)
			tag[n + i].what = W_CTL;
		n += nctl;
		nmet = d->metrics ? metrics_pollfds(d->metrics, fds + n,
						    SYNCD_MAX_FDS - n) : 0;
		if (nmet < 0)
			nmet = 0;
		for (int i = 0; i < nmet; i++)
			tag[n + i].what = W_METRICS;
		n += nmet;

		timeout = d->next_tick > mono ?
			(int)((d->next_tick - mono) / 1000000) + 1 : 0;
		if (d->metrics) {
			int mt = metrics_timeout_ms(d->metrics, mono);

			if (mt >= 0 && mt < timeout)
				timeout = mt;
		}
		if (d->ctl) {	/* a client's deadline ends the wait too */
			int ct = ctl_timeout_ms(d->ctl);

			if (ct >= 0 && ct < timeout)
				timeout = ct;
		}
		if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			log_err("poll: %m");
			break;
		}
		for (int i = 0; i < n; i++) {
			unsigned k = tag[i].k;

			if (!fds[i].revents)
				continue;
			switch (tag[i].what) {
			case W_SIG:
				syncd_signal(d);
				break;
			case W_STEP:
				syncd_step_timer(d);
				break;
			case W_WATCH:
				if (iface_watch_read(d->watch, syncd_link, d) == -ENOBUFS)
					syncd_links_now(d);
				break;
			case W_INST:
				if (k >= d->ninst)
					break;	/* reloaded meanwhile */
				if (fds[i].fd == pmc_fd(d->inst[k].pmc))
					syncd_pmc_read(d, &d->inst[k]);
				else if (fds[i].fd == child_out_fd(d->inst[k].ch))
					child_read_output(d->inst[k].ch,
							  syncd_child_line, d);
				else
					syncd_child_exited(d, d->inst[k].ch,
							   &d->inst[k]);
				break;
			case W_AUX:
				if (k >= d->naux)
					break;
				if (fds[i].fd == child_out_fd(d->aux[k]))
					child_read_output(d->aux[k],
							  syncd_child_line, d);
				else
					syncd_child_exited(d, d->aux[k], NULL);
				break;
			}
			if (d->stop)
				break;
		}
		if (d->ctl && nctl)
			ctl_handle(d->ctl, fds + n - nmet - nctl, nctl,
				   syncd_now(), syncd_ctl_answer, d);
		if (d->metrics)	/* deadlines too, so on every return */
			metrics_handle(d->metrics, fds + n - nmet, nmet,
				       syncd_mono(), syncd_metrics, d);
		/* Children without a pidfd (see child_pidfd()) are looked
		 * at on every turn: the tick bounds the delay. */
		for (unsigned k = 0; k < d->ninst; k++)
			if (child_running(d->inst[k].ch) &&
			    child_pidfd(d->inst[k].ch) < 0)
				syncd_child_exited(d, d->inst[k].ch, &d->inst[k]);
		for (unsigned k = 0; k < d->naux; k++)
			if (child_running(d->aux[k]) && child_pidfd(d->aux[k]) < 0)
				syncd_child_exited(d, d->aux[k], NULL);
		syncd_restart_due(d);
		mono = syncd_mono();
		if (mono >= d->next_tick) {
			syncd_tick(d);
			d->next_tick += d->interval_ns;
			if (d->next_tick <= mono)	/* fell behind */
				d->next_tick = mono + d->interval_ns;
		}
	}
}

static void syncd_dry_run(const struct syncd *d)
{
	for (unsigned k = 0; k < d->plan.ninst; k++) {
		const struct ptpgen_instance *in = &d->plan.inst[k];

		printf("== %s: %s\n", in->proc.name, in->cfg_path);
		printf("#");
		for (unsigned i = 0; in->proc.argv[i]; i++)
			printf(" %s", in->proc.argv[i]);
		printf("\n%s\n", in->cfg_text);
	}
	for (unsigned k = 0; k < d->plan.nphc2sys; k++) {
		const struct ptpgen_proc *pr = &d->plan.phc2sys[k].proc;

		printf("== %s\n#", pr->name);
		for (unsigned i = 0; pr->argv[i]; i++)
			printf(" %s", pr->argv[i]);
		printf("\n\n");
	}
}

/* The file is read by syncd_load, at start and on SIGHUP: PROG_CONFIG_OWN. */
static const struct prog syncd_prog = {
	.name = "tapless-syncd",
	.opts = syncconf_opts,
	.usage = "usage: tapless-syncd [OPTIONS]\n\n"
		 "Keeps the clocks on PTP time with ptp4l and phc2sys and "
		 "journals how well.\nEvery option is also a [global] key of "
		 "the configuration file, with '_' for '-'\n(--journal-dir is "
		 "journal_dir there); see tapless.conf(5).\n\noptions:\n",
	.config = PROG_CONFIG_OWN,
};

int main(int argc, char **argv)
{
	struct syncd *d = xcalloc(1, sizeof(*d));
	char err[SYNCCONF_ERRBUF];
	sigset_t mask;
	int first, rc = 1;

	d->sfd = d->tfd = -1;
	d->events = (struct journal_ring){ .ev = d->ev, .cap = SYNCD_EVENTS };
	d->cli = prog_start(&syncd_prog, argc, argv, &first);
	if (!d->cli) {
		rc = first;
		goto out;
	}
	d->cfg_path = opts_str(d->cli, "config");
	/* Everything that can be wrong with the file is found here, before
	 * anything runs: a bad file leaves no child behind. */
	if (syncd_load(d, &d->conf, &d->plan, err)) {
		fprintf(stderr, "tapless-syncd: %s\n", err);
		goto out;
	}
	if (opts_flag(d->conf.opts, "dry_run")) {
		syncd_dry_run(d);
		rc = 0;
		goto out;
	}
	/* Level and sink from the file too: after syncd_load. */
	if (prog_log(&syncd_prog, d->conf.opts))
		goto out;
	if (syncd_lock(d, opts_str(d->conf.opts, "run_dir"), err,
		       sizeof(err))) {
		fprintf(stderr, "tapless-syncd: %s\n", err);
		goto out;
	}
	syncd_drop_bounding();

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, SIGPIPE);
	d->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->sfd < 0 || d->tfd < 0 || syncd_arm_step_timer(d)) {
		log_err("signalfd/timerfd: %m");
		goto out;
	}
	if (syncd_open_outputs(d, true))
		goto out;
	if ((rc = iface_watch_open(&d->watch))) {
		log_warn("cannot watch links: %s", strerror(-rc));
		d->watch = NULL;
	}
	syncd_drop_caps(d);
	rc = 1;
	d->started_ns = syncd_mono();
	syncd_event(d, NULL, "start", "%s, %s: %u ptp4l, %u phc2sys",
		    SYNCD_VERSION, d->cfg_path, d->plan.ninst, d->plan.nphc2sys);
	syncd_apply(d);
	syncd_rules(d);
	syncd_links_now(d);
	syncd_loop(d);
	syncd_event(d, NULL, "stop", "on signal");
	rc = 0;
out:
	syncd_teardown(d);
	journal_writer_close(d->jw);
	ctl_close(d->ctl);
	metrics_close(d->metrics);
	iface_watch_close(d->watch);
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->cli)
		opts_destroy(d->cli);
	pidfile_release(d->ctl_lock);	/* last: the files above were ours */
	pidfile_release(d->jlock);
	pidfile_release(d->lock);
	free(d);
	return rc;
}
