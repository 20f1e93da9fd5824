/* ptpgen.c — plan and write linuxptp's configuration. See ptpgen.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/opts.h"
#include "ptp/profiles.h"
#include "ptp/ptpgen.h"
#include "base/xalloc.h"

/* An ordered key/value list: a profile's settings with tapless.conf's laid
 * over them, so the generated file sets each key once, where ptp4l reads
 * it, and says where the value came from. */
#define PTPGEN_MAX_KV 96

struct ptpgen_kv {
	char key[64];
	char val[128];
	const char *why;	/* comment: "profile g8275.1", "tapless.conf" */
};

struct ptpgen_kvs {
	struct ptpgen_kv kv[PTPGEN_MAX_KV];
	unsigned n;
};

static int ptpgen_fail(char err[PTPGEN_ERRBUF], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int ptpgen_fail(char err[PTPGEN_ERRBUF], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, PTPGEN_ERRBUF, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void ptpgen_set(struct ptpgen_kvs *l, const char *key, const char *val,
		       const char *why)
{
	struct ptpgen_kv *kv = NULL;

	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->kv[i].key, key))
			kv = &l->kv[i];
	if (!kv) {
		/* The lists are ours and bounded: templates of a dozen
		 * lines and at most SYNCCONF_MAX_EXTRA extras. */
		if (l->n == PTPGEN_MAX_KV)
			abort();
		kv = &l->kv[l->n++];
		snprintf(kv->key, sizeof(kv->key), "%s", key);
	}
	snprintf(kv->val, sizeof(kv->val), "%s", val);
	kv->why = why;
}

static void ptpgen_setf(struct ptpgen_kvs *l, const char *key, const char *why,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void ptpgen_setf(struct ptpgen_kvs *l, const char *key, const char *why,
			const char *fmt, ...)
{
	char val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	ptpgen_set(l, key, val, why);
}

/* "KEY VALUE" (one setting, as a template line or a ptp4l_option). */
static void ptpgen_set_line(struct ptpgen_kvs *l, const char *line,
			    const char *why)
{
	char key[64];
	size_t k = strcspn(line, " \t");
	const char *v = line + k;

	if (!k || k >= sizeof(key))
		return;
	memcpy(key, line, k);
	key[k] = 0;
	v += strspn(v, " \t");
	ptpgen_set(l, key, v, why);
}

const char *ptpgen_profile_text(enum syncconf_profile p)
{
	for (const struct profiles_entry *e = profiles_table; e->name; e++)
		if (!strcmp(e->name, syncconf_profile_names[p]))
			return e->text;
	return "";
}

/* The [global] settings of a template, laid into l. */
static void ptpgen_template(struct ptpgen_kvs *l, enum syncconf_profile p,
			    const char *why)
{
	const char *s = ptpgen_profile_text(p);

	while (*s) {
		size_t n = strcspn(s, "\n");
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		if (line[0] && line[0] != '#' && line[0] != '[')
			ptpgen_set_line(l, line, why);
		s += n + (s[n] == '\n');
	}
}

int ptpgen_profile_domain(enum syncconf_profile p)
{
	struct ptpgen_kvs *l = xcalloc(1, sizeof(*l));
	int d = -1;

	ptpgen_template(l, p, "");
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->kv[i].key, "domainNumber"))
			d = atoi(l->kv[i].val);
	free(l);
	return d;
}

/* ptp4l takes no comment after a value: where each value came from goes
 * on a line of its own, once per run of settings from the same place. */
static void ptpgen_emit(FILE *f, const struct ptpgen_kvs *l)
{
	for (unsigned i = 0; i < l->n; i++) {
		if (!i || strcmp(l->kv[i].why, l->kv[i - 1].why))
			fprintf(f, "# %s\n", l->kv[i].why);
		fprintf(f, "%-31s %s\n", l->kv[i].key, l->kv[i].val);
	}
}

static void ptpgen_port_settings(struct ptpgen_kvs *l,
				 const struct syncconf_port *p)
{
	static const char why[] = "tapless.conf";

	if (p->transport != SYNCCONF_UNSET)
		ptpgen_set(l, "network_transport",
			   syncconf_transport_names[p->transport], why);
	if (p->delay_mechanism != SYNCCONF_UNSET)
		ptpgen_set(l, "delay_mechanism",
			   syncconf_delay_names[p->delay_mechanism], why);
	if (p->sync_interval != SYNCCONF_UNSET)
		ptpgen_setf(l, "logSyncInterval", why, "%d", p->sync_interval);
	if (p->announce_interval != SYNCCONF_UNSET)
		ptpgen_setf(l, "logAnnounceInterval", why, "%d",
			    p->announce_interval);
	if (p->announce_timeout != SYNCCONF_UNSET)
		ptpgen_setf(l, "announceReceiptTimeout", why, "%d",
			    p->announce_timeout);
	if (p->delay_req_interval != SYNCCONF_UNSET)
		ptpgen_setf(l, "logMinDelayReqInterval", why, "%d",
			    p->delay_req_interval);
	if (p->role == SYNCCONF_SERVER)
		ptpgen_set(l, "masterOnly", "1", "role server");
	for (unsigned j = 0; j < p->nextra; j++)
		ptpgen_set_line(l, p->extra[j], "ptp4l_option");
}

static char *ptpgen_cfg_text(const struct syncconf *c,
			     const struct ptpgen_instance *in)
{
	struct ptpgen_kvs *g = xcalloc(1, sizeof(*g));
	struct ptpgen_kvs *pl = xcalloc(1, sizeof(*pl));
	const struct opts *o = c->opts;
	const char *const *extra;
	size_t nextra = opts_list(o, "ptp4l_option", &extra);
	char why[64], *text = NULL;
	size_t len = 0;
	bool all_clients = true;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();	/* out of memory, as xalloc would */
	for (unsigned i = 0; i < in->nports; i++)
		if (c->port[in->port[i]].role != SYNCCONF_CLIENT)
			all_clients = false;
	snprintf(why, sizeof(why), "profile %s",
		 syncconf_profile_names[in->profile]);
	ptpgen_template(g, in->profile, why);
	ptpgen_setf(g, "domainNumber", "tapless.conf", "%d", in->domain);
	ptpgen_set(g, "time_stamping", in->hw ? "hardware" : "software",
		   in->hw ? "the NIC has a PHC" : "no PHC: software stamps");
	/* Capture on the same NIC needs every packet stamped, not just
	 * PTP's; ptp4l would otherwise narrow the NIC's rx_filter. */
	ptpgen_set(g, "hwts_filter", "full", "keep stamps on all packets");
	ptpgen_set(g, "uds_address", in->uds_path, "private to this instance");
	ptpgen_setf(g, "priority1", "tapless.conf", "%lld",
		    opts_int(o, "priority1"));
	ptpgen_setf(g, "priority2", "tapless.conf", "%lld",
		    opts_int(o, "priority2"));
	if (all_clients)
		ptpgen_set(g, "slaveOnly", "1", "every port is role client");
	if (opts_flag(o, "free_running"))
		ptpgen_set(g, "free_running", "1", "free_running: measure only");
	/* Summaries, not a line per Sync: the daemon logs ptp4l's output. */
	ptpgen_set(g, "summary_interval", "6", "one summary a minute in the log");
	for (size_t j = 0; j < nextra; j++)
		ptpgen_set_line(g, extra[j], "ptp4l_option");

	fprintf(f, "# ptp4l configuration for %s, generated by tapless-syncd from "
		"%s.\n# Do not edit: it is rewritten at every start and "
		"SIGHUP. See tapless.conf(5).\n[global]\n", in->clock,
		c->path);
	ptpgen_emit(f, g);
	for (unsigned i = 0; i < in->nports; i++) {
		const struct syncconf_port *p = &c->port[in->port[i]];

		pl->n = 0;
		ptpgen_port_settings(pl, p);
		fprintf(f, "\n[%s]\n", p->name);
		ptpgen_emit(f, pl);
	}
	fclose(f);
	free(g);
	free(pl);
	return text;
}

static void ptpgen_argv(struct ptpgen_proc *pr, const char *name, ...)
{
	va_list ap;
	const char *a;
	unsigned n = 0;

	snprintf(pr->name, sizeof(pr->name), "%s", name);
	va_start(ap, name);
	while ((a = va_arg(ap, const char *)) && n < PTPGEN_MAX_ARGS - 1)
		pr->argv[n++] = xstrdup(a);
	va_end(ap);
	pr->argv[n] = NULL;
}

static void ptpgen_proc_free(struct ptpgen_proc *pr)
{
	for (unsigned i = 0; pr->argv[i]; i++)
		free(pr->argv[i]);
	memset(pr, 0, sizeof(*pr));
}

static struct ptpgen_instance *ptpgen_find(struct ptpgen_plan *plan,
					   const char *clock)
{
	for (unsigned i = 0; i < plan->ninst; i++)
		if (!strcmp(plan->inst[i].clock, clock))
			return &plan->inst[i];
	return NULL;
}

static void ptpgen_phc2sys(struct ptpgen_plan *plan, const struct syncconf *c,
			   const struct ptpgen_port_info *info)
{
	const struct opts *o = c->opts;
	const char *prog = opts_str(o, "phc2sys");
	struct ptpgen_instance *src = NULL;
	char dom[8], name[32];
	int sys = opts_enum(o, "sync_system_clock");	/* auto, yes, no */

	if (opts_flag(o, "free_running"))
		return;
	for (unsigned i = 0; i < plan->ninst && !src; i++)
		if (plan->inst[i].hw && plan->inst[i].follows)
			src = &plan->inst[i];
	for (unsigned i = 0; i < plan->ninst && !src; i++)
		if (plan->inst[i].hw)
			src = &plan->inst[i];
	if (!src)
		return;		/* software stamps: ptp4l steers the system
				 * clock itself */
	plan->phc2sys_ref = (int)(src - plan->inst);
	/* A software-stamped ptp4l already steers CLOCK_REALTIME: a second
	 * servo on it would fight the first. */
	plan->phc2sys_sys = sys != 2 && !ptpgen_find(plan, "sys");
	snprintf(dom, sizeof(dom), "%d", src->domain);
	if (plan->phc2sys_sys) {
		struct ptpgen_phc2sys *ps = &plan->phc2sys[plan->nphc2sys++];

		ptpgen_argv(&ps->proc, "phc2sys", prog, "-a", "-r", "-z",
			    src->uds_path, "-n", dom, "-m", "-q", "-u", "60",
			    (char *)NULL);
		snprintf(ps->clock, sizeof(ps->clock), "sys");
		ps->phc = -1;
	}
	for (unsigned i = 0; i < c->nports; i++) {
		const struct syncconf_port *p = &c->port[i];
		struct ptpgen_phc2sys *ps;
		char clock[16];

		if (p->role != SYNCCONF_NONE || info[i].phc < 0 || !info[i].hw)
			continue;
		snprintf(clock, sizeof(clock), "phc%d", info[i].phc);
		if (ptpgen_find(plan, clock))
			continue;	/* already a ptp4l clock */
		ps = &plan->phc2sys[plan->nphc2sys++];
		snprintf(name, sizeof(name), "phc2sys-%s", p->name);
		/* Both clocks keep PTP's timescale: no UTC offset. -w: not
		 * before ptp4l is a master or follows one, so after the
		 * step that brings the PTP clock to PTP time; else phc2sys
		 * takes its first (and only) step before that one, and
		 * slews its clock the whole way after it (about 1 ms from
		 * a NIC's start, some 15 s on simulated clocks). */
		ptpgen_argv(&ps->proc, name, prog, "-s",
			    c->port[src->port[0]].name, "-c", p->name, "-O",
			    "0", "-w", "-z", src->uds_path, "-m", "-q", "-u",
			    "60", (char *)NULL);
		snprintf(ps->clock, sizeof(ps->clock), "%s", clock);
		ps->phc = info[i].phc;
	}
}

/* RUN/WHAT-CLOCK.EXT into a socket-sized buffer; syncconf made sure
 * run_dir leaves room for it. */
static void ptpgen_path(char dst[sizeof(((struct sockaddr_un *)0)->sun_path)],
			const char *run, const char *what, const char *clock,
			const char *ext)
{
	char buf[512], c[16];

	snprintf(c, sizeof(c), "%s", clock);
	snprintf(buf, sizeof(buf), "%s/%s-%s.%s", run, what, c, ext);
	snprintf(dst, sizeof(((struct sockaddr_un *)0)->sun_path), "%.107s", buf);
}

int ptpgen_plan(struct ptpgen_plan *plan, const struct syncconf *c,
		const struct ptpgen_port_info *info, char err[PTPGEN_ERRBUF])
{
	char run[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int rc = 0;

	/* A copy: gcc cannot tell the option's text is not in *plan. */
	snprintf(run, sizeof(run), "%s", opts_str(c->opts, "run_dir"));
	memset(plan, 0, sizeof(*plan));
	plan->phc2sys_ref = -1;
	for (unsigned i = 0; i < c->nports && !rc; i++) {
		const struct syncconf_port *p = &c->port[i];
		enum syncconf_profile prof = syncconf_profile(c, p);
		int dom = syncconf_domain(c, p, ptpgen_profile_domain(prof));
		struct ptpgen_instance *in;
		bool hw;
		char clock[16];

		if (p->stamping == SYNCCONF_TS_HARDWARE && !info[i].hw) {
			rc = ptpgen_fail(err, "%s:%d: [%s] time_stamping hardware, "
					 "but %s has no hardware stamps (see "
					 "'tapless ifinfo %s')", c->path,
					 p->line, p->name, p->name, p->name);
			break;
		}
		if (p->role == SYNCCONF_NONE)
			continue;
		hw = info[i].hw && p->stamping != SYNCCONF_TS_SOFTWARE;
		if (hw)
			snprintf(clock, sizeof(clock), "phc%d", info[i].phc);
		else
			snprintf(clock, sizeof(clock), "sys");
		in = ptpgen_find(plan, clock);
		if (!in) {
			in = &plan->inst[plan->ninst++];
			snprintf(in->clock, sizeof(in->clock), "%s", clock);
			in->phc = hw ? info[i].phc : -1;
			in->hw = hw;
			in->domain = dom;
			in->profile = prof;
		} else if (in->domain != dom || in->profile != prof) {
			const struct syncconf_port *q = &c->port[in->port[0]];

			rc = ptpgen_fail(err, "%s:%d: [%s] shares %s with [%s] "
					 "(line %d) but asks for domain %d, "
					 "profile %s there %d, %s; one ptp4l "
					 "steers a clock, in one domain and "
					 "profile", c->path, p->line, p->name,
					 clock, q->name, q->line, dom,
					 syncconf_profile_names[prof],
					 in->domain,
					 syncconf_profile_names[in->profile]);
			break;
		}
		in->port[in->nports++] = i;
		if (p->role != SYNCCONF_SERVER)
			in->follows = true;
	}
	for (unsigned k = 0; k < plan->ninst && !rc; k++) {
		struct ptpgen_instance *in = &plan->inst[k];
		char name[32];

		ptpgen_path(in->cfg_path, run, "ptp4l", in->clock, "cfg");
		ptpgen_path(in->uds_path, run, "ptp4l", in->clock, "sock");
		ptpgen_path(in->pmc_path, run, "syncd", in->clock, "sock");
		in->cfg_text = ptpgen_cfg_text(c, in);
		/* -m -q: output to us (logged under our name), not syslog. */
		snprintf(name, sizeof(name), "ptp4l-%s", in->clock);
		ptpgen_argv(&in->proc, name, opts_str(c->opts, "ptp4l"), "-f",
			    in->cfg_path, "-m", "-q", (char *)NULL);
	}
	if (!rc)
		ptpgen_phc2sys(plan, c, info);
	if (rc)
		ptpgen_plan_free(plan);
	return rc;
}

void ptpgen_plan_free(struct ptpgen_plan *plan)
{
	for (unsigned k = 0; k < plan->ninst; k++) {
		free(plan->inst[k].cfg_text);
		ptpgen_proc_free(&plan->inst[k].proc);
	}
	for (unsigned k = 0; k < plan->nphc2sys; k++)
		ptpgen_proc_free(&plan->phc2sys[k].proc);
	memset(plan, 0, sizeof(*plan));
	plan->phc2sys_ref = -1;
}

static int ptpgen_write_one(const char *path, const char *text,
			    char err[PTPGEN_ERRBUF])
{
	char tmp[sizeof(((struct ptpgen_instance *)0)->cfg_path) + 8];
	size_t len = strlen(text), off = 0;
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, PTPGEN_ERRBUF, "%s: %s", tmp, strerror(-rc));
		return rc;
	}
	while (off < len && !rc) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		snprintf(err, PTPGEN_ERRBUF, "%s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

int ptpgen_write(const struct ptpgen_plan *plan, char err[PTPGEN_ERRBUF])
{
	for (unsigned k = 0; k < plan->ninst; k++) {
		int rc = ptpgen_write_one(plan->inst[k].cfg_path,
					  plan->inst[k].cfg_text, err);

		if (rc)
			return rc;
	}
	return 0;
}

const struct ptpgen_instance *ptpgen_instance_of(const struct ptpgen_plan *plan,
						 const struct syncconf *c,
						 const char *ifname)
{
	for (unsigned k = 0; k < plan->ninst; k++)
		for (unsigned i = 0; i < plan->inst[k].nports; i++)
			if (!strcmp(c->port[plan->inst[k].port[i]].name, ifname))
				return &plan->inst[k];
	return NULL;
}
