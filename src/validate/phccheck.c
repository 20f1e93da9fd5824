/* phccheck.c — see phccheck.h.
 *
 * Only reads the clock: the device is opened O_RDONLY (phc_open) and
 * clock_adjtime() is called with modes 0, which the kernel treats as a
 * query. */
#include "validate/phccheck.h"

#include <dirent.h>
#include <errno.h>
#include <linux/ptp_clock.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#include "base/errbuf.h"
#include "stamp/iface.h"
#include "base/linfit.h"
#include "base/nstime.h"
#include "base/print.h"
#include "stamp/tsinfo.h"
#include "base/tstep.h"
#include "validate/verdict.h"
#include "base/xalloc.h"

/* ------------------------------------------------------------------ list */

/* "ptp<N>", N decimal without sign or leading zeros (phc_open(N) opens
 * "/dev/ptp<N>", so "ptp01" would name another device). */
static int list_parse(const char *name)
{
	const char *d = name + 3;
	long v = 0;

	if (strncmp(name, "ptp", 3) || !*d || strlen(d) > 9 ||
	    (d[0] == '0' && d[1]))
		return -1;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return -1;
		v = v * 10 + (*d - '0');
	}
	return (int)v;
}

/* Insert x into sorted a[0..*n), keeping only the lowest max. */
static void list_insert(int *a, int *n, int max, int x)
{
	int i;

	if (*n == max && (max == 0 || x >= a[max - 1]))
		return;
	if (*n < max)
		(*n)++;
	for (i = *n - 1; i > 0 && a[i - 1] > x; i--)
		a[i] = a[i - 1];
	a[i] = x;
}

int phccheck_list_dir(const char *dir, int *index, int max)
{
	struct dirent *de;
	DIR *d;
	int n = 0, v;

	if (max < 0)
		return -EINVAL;
	d = opendir(dir);
	if (!d)
		return -errno;
	errno = 0;
	while ((de = readdir(d))) {
		v = list_parse(de->d_name);
		if (v >= 0)
			list_insert(index, &n, max, v);
		errno = 0;
	}
	v = -errno;
	closedir(d);
	return v ? v : n;
}

int phccheck_list(int *index, int max)
{
	return phccheck_list_dir("/dev", index, max);
}

void phccheck_config_init(struct phccheck_config *cfg, int index)
{
	cfg->index = index;
	cfg->duration_s = 2;
	cfg->samples = 100;
	cfg->reads = 10000;
}

/* ------------------------------------------------------------ pure parts */

int64_t phccheck_gcd_step(const int64_t *v, size_t n)
{
	struct tstep st;

	tstep_init(&st);
	for (size_t i = 0; i < n; i++)
		tstep_add(&st, v[i]);
	return tstep_get(&st);
}

void phccheck_offsets(const struct phc_offset *o, size_t n,
		      struct phccheck_result *res)
{
	struct linfit_result lr;
	struct linfit f;
	int64_t *w;

	res->offsets = (unsigned)n;
	res->offset_ns = NAN;
	res->offset_drift_ppb = NAN;
	res->offset_sd_ns = NAN;
	memset(&res->window_ns, 0, sizeof(res->window_ns));
	if (!n)
		return;
	res->method = o[n - 1].method;
	res->offset_ns = (double)o[0].offset_ns;

	/* x and y relative to the first reading: sys_ns near 1.7e18 has no
	 * exact double, the differences (seconds of ns) do. */
	linfit_init(&f);
	w = xmalloc(n * sizeof(*w));
	for (size_t i = 0; i < n; i++) {
		linfit_add(&f, (double)(o[i].sys_ns - o[0].sys_ns),
			   (double)(o[i].offset_ns - o[0].offset_ns));
		w[i] = o[i].window_ns;
	}
	summary_of(w, n, &res->window_ns);
	free(w);
	linfit_result(&f, &lr);
	if (n >= 2)
		res->offset_drift_ppb = lr.b * 1e9;
	if (n >= 3)
		res->offset_sd_ns = lr.resid_sd;
}

/* ------------------------------------------------------------ measuring */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NS_PER_S + t->tv_nsec;
}

int phccheck_reads(clockid_t clk, unsigned n, struct phccheck_result *res)
{
	struct timespec m0, m1, t;
	int64_t *val, *cost;
	int err = 0;

	if (n < 2)
		return -EINVAL;
	val = xmalloc(n * sizeof(*val));
	cost = xmalloc(n * sizeof(*cost));
	/* mono, clk, mono, clk, ..., mono: each read is timed by the
	 * monotonic reads on either side, which also time the next. */
	clock_gettime(CLOCK_MONOTONIC, &m0);
	for (unsigned i = 0; i < n; i++) {
		if (clock_gettime(clk, &t)) {
			err = -errno;
			goto out;
		}
		clock_gettime(CLOCK_MONOTONIC, &m1);
		val[i] = ts_ns(&t);
		cost[i] = ts_ns(&m1) - ts_ns(&m0);
		m0 = m1;
	}
	res->reads = n;
	res->backwards = 0;
	res->max_backstep_ns = 0;
	for (unsigned i = 1; i < n; i++)
		if (val[i] < val[i - 1]) {
			res->backwards++;
			if (val[i - 1] - val[i] > res->max_backstep_ns)
				res->max_backstep_ns = val[i - 1] - val[i];
		}
	res->resolution_ns = phccheck_gcd_step(val, n);
	summary_of(cost, n, &res->read_cost_ns);
out:
	free(cost);
	free(val);
	return err;
}

/* The driver's name for clock index, from sysfs; "" when not readable. */
static void phccheck_name(int index, char *name, size_t len)
{
	char path[64];
	FILE *f;

	name[0] = 0;
	snprintf(path, sizeof(path), "/sys/class/ptp/ptp%d/clock_name", index);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(name, (int)len, f))
		name[0] = 0;
	fclose(f);
	name[strcspn(name, "\n")] = 0;
}

/* Append name to the comma-separated list in buf, always keeping room for
 * a closing ",..." when a later name does not fit. */
static void ifaces_add(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);
	const char *sep = used ? "," : "";

	if (used >= 3 && !strcmp(buf + used - 3, "..."))
		return;
	if (used + strlen(sep) + strlen(name) + 4 < len)
		snprintf(buf + used, len - used, "%s%s", sep, name);
	else
		snprintf(buf + used, len - used, "%s...", sep);
}

/* The interfaces whose stamps come from this PHC. Informative only: an
 * interface that cannot say (or a failing list) is passed over. */
static void phccheck_ifaces(struct phccheck_result *res)
{
	struct iface_entry small[64], *e = small;
	struct tsinfo ti;
	int n, cap = 64;

	res->ifaces[0] = 0;
	n = iface_list(e, cap);
	if (n > cap) {
		cap = n + 8;
		e = xcalloc((size_t)cap, sizeof(*e));
		n = iface_list(e, cap);
	}
	if (n > cap)
		n = cap;
	for (int i = 0; i < n; i++)
		if (!tsinfo_get(e[i].name, &ti) && ti.phc_index == res->index)
			ifaces_add(res->ifaces, sizeof(res->ifaces), e[i].name);
	if (e != small)
		free(e);
}

static int phccheck_config_check(const struct phccheck_config *cfg,
				 char err[PHCCHECK_ERRBUF])
{
	if (cfg->index < 0)
		return errbuf_set(err, PHCCHECK_ERRBUF, -EINVAL,
				  "PHC index %d: must be 0 or more", cfg->index);
	if (!(cfg->duration_s > 0 && cfg->duration_s <= 3600))
		return errbuf_set(err, PHCCHECK_ERRBUF, -EINVAL,
				  "/dev/ptp%d: duration %g s: must be in (0, 3600]",
				  cfg->index, cfg->duration_s);
	if (cfg->samples < 3 || cfg->samples > 1000000)
		return errbuf_set(err, PHCCHECK_ERRBUF, -EINVAL,
				  "/dev/ptp%d: %u offset samples: must be 3 to 1000000",
				  cfg->index, cfg->samples);
	if (cfg->reads < 2 || cfg->reads > 10000000)
		return errbuf_set(err, PHCCHECK_ERRBUF, -EINVAL,
				  "/dev/ptp%d: %u reads: must be 2 to 10000000",
				  cfg->index, cfg->reads);
	return 0;
}

/* The ioctl behind a method, for messages. */
static const char *method_ioctl(enum phc_method m)
{
	switch (m) {
	case PHC_METHOD_PRECISE:
		return "PTP_SYS_OFFSET_PRECISE";
	case PHC_METHOD_EXTENDED:
		return "PTP_SYS_OFFSET_EXTENDED";
	case PHC_METHOD_BASIC:
		return "PTP_SYS_OFFSET";
	}
	return "PTP_SYS_OFFSET?";
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

/* cfg->samples readings, the first now and the last duration_s later, at
 * absolute deadlines so the loop's own time does not add up. */
static int phccheck_offsets_run(struct phc *phc,
				const struct phccheck_config *cfg,
				struct phccheck_result *res,
				char err[PHCCHECK_ERRBUF])
{
	int64_t step = (int64_t)(cfg->duration_s * 1e9) / (cfg->samples - 1);
	struct phc_offset *o = xcalloc(cfg->samples, sizeof(*o));
	struct timespec start, at;
	unsigned n = 0, skipped = 0;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned i = 0; i < cfg->samples; i++) {
		int64_t t = ts_ns(&start) + (int64_t)i * step;

		at.tv_sec = t / NS_PER_S;
		at.tv_nsec = t % NS_PER_S;
		sleep_until(&at);
		rc = phc_sys_offset(phc, PHCCHECK_BURST, &o[n]);
		if (rc == -EAGAIN) {
			skipped++;
			continue;
		}
		if (rc) {
			errbuf_set(err, PHCCHECK_ERRBUF, rc,
				   "/dev/ptp%d: %s: %s", cfg->index,
				   n ? method_ioctl(o[n - 1].method) :
				   "PTP_SYS_OFFSET_PRECISE/_EXTENDED/PTP_SYS_OFFSET",
				   strerror(-rc));
			goto out;
		}
		n++;
	}
	if (!n) {
		errbuf_set(err, PHCCHECK_ERRBUF, -EAGAIN,
			   "/dev/ptp%d: PTP_SYS_OFFSET: CLOCK_REALTIME was "
			   "stepped during every one of %u readings", cfg->index,
			   cfg->samples);
		rc = -EAGAIN;
		goto out;
	}
	phccheck_offsets(o, n, res);
	res->offsets_skipped = skipped;
out:
	free(o);
	return rc;
}

int phccheck_run(const struct phccheck_config *cfg, struct phccheck_result *res,
		 char err[PHCCHECK_ERRBUF])
{
	struct ptp_clock_caps caps;
	struct phc *phc = NULL;
	struct timex tx;
	int rc;

	rc = phccheck_config_check(cfg, err);
	if (rc)
		return rc;
	memset(res, 0, sizeof(*res));
	res->index = cfg->index;
	res->offset_ns = res->offset_drift_ppb = res->offset_sd_ns = NAN;
	res->freq_ppb = NAN;

	rc = phc_open(&phc, cfg->index);
	if (rc)
		return errbuf_set(err, PHCCHECK_ERRBUF, rc,
				  "/dev/ptp%d: open: %s", cfg->index,
				  strerror(-rc));
	rc = phc_caps(phc, &caps);
	if (rc) {
		errbuf_set(err, PHCCHECK_ERRBUF, rc,
			   "/dev/ptp%d: PTP_CLOCK_GETCAPS: %s",
			   cfg->index, strerror(-rc));
		goto out;
	}
	res->max_adj_ppb = caps.max_adj;
	phccheck_name(cfg->index, res->clock_name, sizeof(res->clock_name));

	rc = phccheck_reads(phc_clockid(phc), cfg->reads, res);
	if (rc) {
		errbuf_set(err, PHCCHECK_ERRBUF, rc,
			   "/dev/ptp%d: clock_gettime: %s", cfg->index,
			   strerror(-rc));
		goto out;
	}
	rc = phccheck_offsets_run(phc, cfg, res, err);
	if (rc)
		goto out;

	/* modes 0: a query. Kernels before "ptp: Add PHC file mode checks"
	 * (2025) answer EACCES on a descriptor opened read-only. */
	memset(&tx, 0, sizeof(tx));
	if (clock_adjtime(phc_clockid(phc), &tx) < 0)
		res->freq_err = -errno;
	else
		res->freq_ppb = (double)tx.freq * 1000.0 / 65536.0;

	phccheck_ifaces(res);
out:
	phc_close(phc);
	return rc;
}

/* ---------------------------------------------------------------- judge */

static void judge_offset(const struct phccheck_result *res,
			 struct verdict_check *c)
{
	const char *scale;

	if (isnan(res->offset_ns))
		return;
	if (fabs(res->offset_ns - (double)TAI_UTC_NS) < 0.5e9)
		scale = "about " TAI_UTC_S_TEXT " s: the PHC keeps TAI, as under ptp4l";
	else if (fabs(res->offset_ns) < 0.5e9)
		scale = "the PHC keeps UTC, as CLOCK_REALTIME does";
	else
		scale = "neither UTC (0) nor TAI (about " TAI_UTC_S_TEXT " s, as under ptp4l)";
	verdict_note(c, VERDICT_PASS,
		     "PHC - CLOCK_REALTIME %+.9f s at the start, drifting "
		     "%+.1f ppb: %s", res->offset_ns / 1e9,
		     res->offset_drift_ppb, scale);
}

void phccheck_judge(const struct phccheck_result *res,
		    const struct verdict_limits *lim, struct verdict_check *c)
{
	if (res->method == PHC_METHOD_PRECISE && res->window_ns.n)
		verdict_note(c, VERDICT_PASS,
			     "read window 0 ns: the device cross-stamps PHC "
			     "and system clock (PTP_SYS_OFFSET_PRECISE)");
	else
		verdict_apply(c, lim, "phc.read_window_ns",
			      "narrowest read window",
			      res->window_ns.n ? (double)res->window_ns.min : NAN);
	verdict_apply(c, lim, "phc.offset_sd_ns", "offset SD about its line",
		      res->offset_sd_ns);
	if (res->freq_err == -EACCES || res->freq_err == -EOPNOTSUPP)
		verdict_note(c, VERDICT_SKIP,
			     "frequency adjustment not read: %s",
			     res->freq_err == -EACCES ?
			     "this kernel refuses clock_adjtime() on a PHC "
			     "opened read-only" :
			     "the driver does not report it");
	else
		verdict_apply(c, lim, "phc.freq_ppb", "|frequency adjustment|",
			      res->freq_err ? NAN : fabs(res->freq_ppb));
	verdict_apply(c, lim, "phc.backwards", "reads that went backwards",
		      (double)res->backwards);
	if (res->reads && !res->resolution_ns)
		verdict_note(c, VERDICT_FAIL,
			     "the PHC did not move over %llu back-to-back reads",
			     (unsigned long long)res->reads);
	else
		verdict_apply(c, lim, "phc.resolution_ns", "resolution",
			      res->reads ? (double)res->resolution_ns : NAN);
	judge_offset(res, c);
}

/* ---------------------------------------------------------------- print */

void phccheck_print(struct printer *p, const struct phccheck_result *res)
{
	char dev[32];

	snprintf(dev, sizeof(dev), "/dev/ptp%d", res->index);
	print_object_begin(p, NULL);
	print_int(p, "index", "ptp%lld", res->index);
	print_str(p, "device", NULL, dev);
	if (*res->clock_name)
		print_str(p, "clock_name", " (%s)", res->clock_name);
	else
		print_null(p, "clock_name", NULL);
	if (*res->ifaces)
		print_str(p, "ifaces", ", stamps of %s", res->ifaces);
	else
		print_null(p, "ifaces", NULL);
	print_int(p, "max_adj_ppb", ", max adjustment %lld ppb\n",
		  res->max_adj_ppb);

	print_uint(p, "reads", "  reads        %llu", res->reads);
	print_uint(p, "backwards", ", %llu backwards", res->backwards);
	print_int(p, "max_backstep_ns", res->backwards ? " (largest %lld ns)" : NULL,
		  res->max_backstep_ns);
	print_int(p, "resolution_ns", ", resolution %lld ns\n",
		  res->resolution_ns);
	print_text(p, "  read cost    ");
	summary_print(p, "read_cost_ns", &res->read_cost_ns);

	print_str(p, "method", "  offsets      %s", phc_method_name(res->method));
	print_uint(p, "offsets", ", %llu readings", res->offsets);
	print_uint(p, "offsets_skipped",
		   res->offsets_skipped ? " (%llu lost to clock steps)" : NULL,
		   res->offsets_skipped);
	print_double(p, "offset_ns", ", PHC - REALTIME %+.0f ns", res->offset_ns);
	print_double(p, "offset_drift_ppb", ", drift %+.1f ppb",
		     res->offset_drift_ppb);
	print_double(p, "offset_sd_ns", ", SD %.1f ns about the line\n",
		     res->offset_sd_ns);
	print_text(p, "  read window  ");
	summary_print(p, "window_ns", &res->window_ns);

	if (res->freq_err) {
		print_null(p, "freq_ppb", NULL);
		print_str(p, "freq_error", "  frequency    not read (%s)\n",
			  strerror(-res->freq_err));
	} else {
		print_double(p, "freq_ppb", "  frequency    %+.3f ppb adjustment\n",
			     res->freq_ppb);
		print_null(p, "freq_error", NULL);
	}
	print_object_end(p);
}
