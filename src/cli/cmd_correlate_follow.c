/* cmd_correlate_follow.c — tapless correlate --follow: the correlator run
 * live over capd's files and syncd's journals as they grow (corr.h,
 * corr_follow_step()), one line per result each interval on standard
 * output, a Prometheus endpoint (base/metrics.h, the one syncd serves),
 * alert rules (corr/alert.h) and a status socket (ptp/ctl.h, the one
 * `tapless status` asks syncd on). One poll() loop; nothing in it blocks.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/metrics.h"
#include "base/nstime.h"
#include "base/opts.h"
#include "base/prog.h"
#include "base/print.h"
#include "cli/cmd.h"
#include "corr/alert.h"
#include "corr/corr.h"
#include "ptp/ctl.h"

/* Files are looked at this often (at most): a line's lag behind its
 * interval's end is this plus the writer's heartbeat period and hold.
 * A look at files that have not grown is a few system calls a host. */
#define FOLLOW_TICK_NS (20 * NS_PER_MS)

static volatile sig_atomic_t follow_stop;

static void follow_signal(int sig)
{
	(void)sig;
	follow_stop = 1;
}

struct follow {
	struct corr *c;
	enum print_format fmt;
	struct alert_set *alerts;
	const char *alert_exec;
	FILE *samples;
	/* For the status socket and the metrics. */
	uint64_t intervals, events;
	int64_t last_start, last_end;
	int64_t started_real;
};

static void follow_event(void *arg, const struct corr_event *ev)
{
	struct follow *f = arg;
	struct printer *p = print_create(stdout, f->fmt, 0);

	f->events++;
	print_str(p, "type", "event", "event");
	print_str(p, "event", " %s", ev->name);
	print_str(p, "host", " %s", ev->host);
	print_time(p, "time_ns", " at %s", ev->time_ns);
	print_uint(p, "count", " (%llu)", ev->count);
	print_str(p, "detail", ": %s", ev->detail);
	print_text(p, "\n");
	(void)print_destroy(p);
	fflush(stdout);
}

/* An alert rule's figure: the closing interval's. */
static bool follow_value(void *arg, const char *subject, enum alert_stat stat,
			 double *v)
{
	return corr_interval_value(arg, subject, alert_stat_name(stat), v) == 0;
}

static void follow_alert(void *arg, const struct alert_event *ev)
{
	struct follow *f = arg;
	const char *rule = alert_text(f->alerts, ev->rule);
	struct printer *p = print_create(stdout, f->fmt, 0);
	pid_t pid;
	int e;

	print_str(p, "type", "alert", "alert");
	print_str(p, "rule", " %s", rule);
	print_str(p, "state", " %s", ev->firing ? "firing" : "cleared");
	print_double(p, "value", " (value %g", ev->value);
	print_double(p, "threshold", ", threshold %g)", ev->threshold);
	print_time(p, "time_ns", " at %s", ev->time_ns);
	print_text(p, "\n");
	(void)print_destroy(p);
	fprintf(stderr, "tapless correlate: alert %s: %s (value %g)\n",
		ev->firing ? "firing" : "cleared", rule, ev->value);
	if (!f->alert_exec)
		return;
	e = alert_exec(f->alerts, f->alert_exec, ev, &pid);
	if (e == -EBUSY)
		fprintf(stderr, "tapless correlate: alert command not run: %d "
			"still running\n", ALERT_EXEC_MAX);
	else if (e)
		fprintf(stderr, "tapless correlate: alert command: %s\n",
			strerror(-e));
}

static void follow_interval(void *arg, struct corr *c, int64_t start,
			    int64_t end)
{
	struct follow *f = arg;

	f->intervals++;
	f->last_start = start;
	f->last_end = end;
	corr_print_interval(c, stdout, f->fmt);
	if (f->alerts) {
		alert_reap(f->alerts, NULL, NULL);	/* room for new ones */
		alert_eval(f->alerts, end, follow_value, c, follow_alert, f);
	}
	fflush(stdout);
	if (f->samples)
		fflush(f->samples);
}

static int follow_metrics(FILE *out, enum metrics_format fmt, void *arg)
{
	struct follow *f = arg;
	int rc = corr_metrics(f->c, out, fmt);

	metrics_family(out, fmt, "tapless_alert_firing", METRICS_GAUGE,
		       "1 while the alert rule fires", NULL);
	for (unsigned i = 0; f->alerts && i < alert_count(f->alerts); i++) {
		const char *lab[] = { "rule", alert_text(f->alerts, i), NULL };

		metrics_sample(out, "tapless_alert_firing", lab,
			       alert_firing(f->alerts, i));
	}
	metrics_family(out, fmt, "tapless_follow_intervals", METRICS_COUNTER,
		       "intervals closed", NULL);
	metrics_sample(out, "tapless_follow_intervals_total", NULL,
		       (double)f->intervals);
	return rc;
}

/* `tapless status --socket PATH`: where the follower stands. */
static int follow_status(void *arg, const char *request, FILE *out)
{
	struct follow *f = arg;
	enum print_format fmt;
	struct printer *p;

	for (fmt = PRINT_TEXT; fmt <= PRINT_JSON; fmt++)
		if (!strcmp(request, ctl_status_requests[fmt]))
			break;
	if (fmt > PRINT_JSON)
		return -EINVAL;
	p = print_create(out, fmt, fmt == PRINT_JSON ? PRINT_PRETTY : 0);
	print_str(p, "daemon", "%s\n", "tapless correlate --follow");
	print_int(p, "pid", "pid %lld\n", getpid());
	print_int(p, "running_s", "running %lld s\n",
		  (nstime_now(CLOCK_REALTIME) - f->started_real) / NS_PER_S);
	print_uint(p, "intervals", "intervals %llu", f->intervals);
	print_time(p, "last_interval_end_ns", ", the last ending %s\n",
		   f->last_end);
	print_uint(p, "events", "events %llu\n", f->events);
	print_array_begin(p, "alerts");
	for (unsigned i = 0; f->alerts && i < alert_count(f->alerts); i++) {
		print_object_begin(p, NULL);
		print_str(p, "rule", "alert %s", alert_text(f->alerts, i));
		print_bool(p, "firing", ": firing %s\n",
			   alert_firing(f->alerts, i));
		print_object_end(p);
	}
	print_array_end(p);
	corr_print_hosts(f->c, p);
	if (print_destroy(p))
		return -EIO;
	return 0;
}

int cmd_correlate_follow(struct corr *c, const struct opts *o, int fmt,
			 FILE *samples)
{
	struct follow f = { .c = c, .fmt = (enum print_format)fmt,
			    .samples = samples };
	struct metrics *m = NULL;
	struct ctl *ctl = NULL;
	char err[CORR_ERRBUF];
	int64_t next;
	int rc = CMD_OK;

	prog_signals(follow_signal, NULL);
	f.started_real = nstime_now(CLOCK_REALTIME);
	f.alert_exec = opts_str(o, "alert_exec");

	const char *const *rules;
	size_t nrules = opts_list(o, "alert", &rules);
	if (nrules) {
		char aerr[ALERT_ERRBUF];

		alert_set_create(&f.alerts, (unsigned)opts_int(o, "alert_for"),
				 (unsigned)opts_int(o, "alert_clear"));
		for (size_t i = 0; i < nrules; i++)
			if (alert_add(f.alerts, rules[i], aerr)) {
				fprintf(stderr, "tapless correlate: --alert: %s\n",
					aerr);
				rc = CMD_USAGE;
				goto out;
			}
	}
	if (opts_str(o, "metrics")) {
		char addr[64];
		int port, e;

		if (metrics_parse_listen(opts_str(o, "metrics"), addr,
					 sizeof(addr), &port)) {
			fprintf(stderr, "tapless correlate: --metrics '%s': "
				"expected [ADDR:]PORT\n", opts_str(o, "metrics"));
			rc = CMD_USAGE;
			goto out;
		}
		e = metrics_open(&m, addr, port);
		if (e) {
			fprintf(stderr, "tapless correlate: --metrics %s: %s\n",
				opts_str(o, "metrics"), strerror(-e));
			rc = CMD_SYSTEM;
			goto out;
		}
		fprintf(stderr, "tapless correlate: metrics on %s port %d\n",
			addr, metrics_port(m));
	}
	if (opts_str(o, "socket")) {
		int e = ctl_listen(&ctl, opts_str(o, "socket"), (gid_t)-1);

		if (e) {
			fprintf(stderr, "tapless correlate: --socket %s: %s\n",
				opts_str(o, "socket"), strerror(-e));
			rc = CMD_SYSTEM;
			goto out;
		}
	}
	corr_follow_hooks(c, follow_interval, follow_event, &f);
	next = nstime_now(CLOCK_MONOTONIC);
	while (!follow_stop) {
		struct pollfd fds[METRICS_POLLFDS + 1 + CTL_MAX_CLIENTS];
		int n = 0, nm = 0, nc = 0, timeout, t;
		int64_t mono = nstime_now(CLOCK_MONOTONIC);

		if (mono >= next) {
			if (corr_follow_step(c, nstime_now(CLOCK_REALTIME), err)) {
				fprintf(stderr, "tapless correlate: %s\n", err);
				rc = CMD_USAGE;
				goto out;
			}
			if (f.alerts)
				alert_reap(f.alerts, NULL, NULL);
			next = mono + FOLLOW_TICK_NS;
		}
		timeout = (int)((next - mono + NS_PER_MS - 1) / NS_PER_MS);
		if (m) {
			nm = metrics_pollfds(m, fds, METRICS_POLLFDS);
			n += nm;
			t = metrics_timeout_ms(m, mono);
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		if (ctl) {
			nc = ctl_pollfds(ctl, fds + n, 1 + CTL_MAX_CLIENTS);
			n += nc;
			t = ctl_timeout_ms(ctl);
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		if (poll(fds, (nfds_t)n, timeout < 0 ? 0 : timeout) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "tapless correlate: poll: %s\n",
				strerror(errno));
			rc = CMD_SYSTEM;
			goto out;
		}
		mono = nstime_now(CLOCK_MONOTONIC);
		if (m)
			metrics_handle(m, fds, nm, mono, follow_metrics, &f);
		if (ctl)
			ctl_handle(ctl, fds + nm, nc, mono, follow_status, &f);
	}
	/* Stopped: what the files hold is read to the end, every message
	 * leaves the window, and the last interval is closed. */
	if (corr_follow_stop(c, nstime_now(CLOCK_REALTIME), err)) {
		fprintf(stderr, "tapless correlate: %s\n", err);
		rc = CMD_USAGE;
	}
out:
	fflush(stdout);
	if (f.alerts)
		alert_reap(f.alerts, NULL, NULL);
	ctl_close(ctl);
	metrics_close(m);
	alert_set_destroy(f.alerts);
	return rc;
}
