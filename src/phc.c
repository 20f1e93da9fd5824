/* phc.c — see phc.h. */
#include "phc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "xalloc.h"

/* The dynamic clock id of an open PHC character device (kernel ABI). */
#define PHC_FD_TO_CLOCKID(fd) ((clockid_t)((~(unsigned int)(fd) << 3) | 3))

struct phc {
	int fd;
	int index;
	clockid_t clockid;
	int method;		/* -1 until one worked */
};

static int64_t phc_ns(const struct ptp_clock_time *t)
{
	return t->sec * 1000000000LL + t->nsec;
}

int phc_open(struct phc **out, int index)
{
	char path[32];
	struct phc *p;
	int fd;

	snprintf(path, sizeof(path), "/dev/ptp%d", index);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	p->index = index;
	p->clockid = PHC_FD_TO_CLOCKID(fd);
	p->method = -1;
	*out = p;
	return 0;
}

void phc_close(struct phc *phc)
{
	if (!phc)
		return;
	close(phc->fd);
	free(phc);
}

int phc_index(const struct phc *phc)
{
	return phc->index;
}

clockid_t phc_clockid(const struct phc *phc)
{
	return phc->clockid;
}

int phc_gettime(const struct phc *phc, int64_t *ns)
{
	struct timespec t;

	if (clock_gettime(phc->clockid, &t))
		return -errno;
	*ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	return 0;
}

const char *phc_method_name(enum phc_method m)
{
	switch (m) {
	case PHC_METHOD_PRECISE:
		return "precise";
	case PHC_METHOD_EXTENDED:
		return "extended";
	case PHC_METHOD_BASIC:
		return "basic";
	}
	return "?";
}

/* Keep the sample with the narrowest sys bracket: the one least disturbed
 * by interrupts or preemption between the three reads. */
static void phc_pick(int64_t before, int64_t phc, int64_t after,
		     struct phc_offset *best, bool first)
{
	int64_t window = after - before;

	if (!first && window >= best->window_ns)
		return;
	best->window_ns = window;
	best->sys_ns = before + window / 2;
	best->phc_ns = phc;
	best->offset_ns = phc - best->sys_ns;
}

int phc_pick_extended(const struct ptp_sys_offset_extended *x,
		      struct phc_offset *out)
{
	if (x->n_samples < 1 || x->n_samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	for (unsigned i = 0; i < x->n_samples; i++)
		phc_pick(phc_ns(&x->ts[i][0]), phc_ns(&x->ts[i][1]),
			 phc_ns(&x->ts[i][2]), out, i == 0);
	out->method = PHC_METHOD_EXTENDED;
	return 0;
}

int phc_pick_basic(const struct ptp_sys_offset *x, struct phc_offset *out)
{
	if (x->n_samples < 1 || x->n_samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	/* ts[] holds sys, phc, sys, phc, ..., sys: 2n + 1 readings. */
	for (unsigned i = 0; i < x->n_samples; i++)
		phc_pick(phc_ns(&x->ts[2 * i]), phc_ns(&x->ts[2 * i + 1]),
			 phc_ns(&x->ts[2 * i + 2]), out, i == 0);
	out->method = PHC_METHOD_BASIC;
	return 0;
}

static bool phc_unsupported(int err)
{
	return err == EOPNOTSUPP || err == ENOTTY || err == EINVAL;
}

int phc_sys_offset(struct phc *phc, int samples, struct phc_offset *out)
{
	if (samples < 1 || samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	memset(out, 0, sizeof(*out));

	if (phc->method < 0 || phc->method == PHC_METHOD_PRECISE) {
		struct ptp_sys_offset_precise p;

		memset(&p, 0, sizeof(p));
		if (!ioctl(phc->fd, PTP_SYS_OFFSET_PRECISE, &p)) {
			out->phc_ns = phc_ns(&p.device);
			out->sys_ns = phc_ns(&p.sys_realtime);
			out->offset_ns = out->phc_ns - out->sys_ns;
			out->window_ns = 0;
			out->method = PHC_METHOD_PRECISE;
			phc->method = PHC_METHOD_PRECISE;
			return 0;
		}
		if (!phc_unsupported(errno))
			return -errno;
	}
	if (phc->method < 0 || phc->method == PHC_METHOD_EXTENDED) {
		struct ptp_sys_offset_extended x;

		memset(&x, 0, sizeof(x));
		x.n_samples = (unsigned)samples;
		if (!ioctl(phc->fd, PTP_SYS_OFFSET_EXTENDED, &x)) {
			phc->method = PHC_METHOD_EXTENDED;
			return phc_pick_extended(&x, out);
		}
		if (!phc_unsupported(errno))
			return -errno;
	}
	{
		struct ptp_sys_offset b;

		memset(&b, 0, sizeof(b));
		b.n_samples = (unsigned)samples;
		if (ioctl(phc->fd, PTP_SYS_OFFSET, &b))
			return -errno;
		phc->method = PHC_METHOD_BASIC;
		return phc_pick_basic(&b, out);
	}
}
