/* phc.c — see phc.h. */
#include "stamp/phc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/xalloc.h"

/* The dynamic clock id of an open PHC character device (kernel ABI:
 * ((~fd) << 3) | CLOCKFD). Shifted as unsigned: ~fd is negative as an int,
 * and shifting a negative int left is undefined in C. */
#define PHC_CLOCKFD 3
#define PHC_FD_TO_CLOCKID(fd) \
	((clockid_t)((~(unsigned int)(fd) << 3) | PHC_CLOCKFD))

struct phc {
	int fd;
	int index;
	clockid_t clockid;
	bool known;		/* method below worked before */
	enum phc_method method;
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

	/* "/dev/ptp-1" would only fail later as ENOENT; say what is wrong. */
	if (index < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/dev/ptp%d", index);
	/* Reading the clock and the offset ioctls need no write access. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	p->index = index;
	p->clockid = PHC_FD_TO_CLOCKID(fd);
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

int phc_caps(const struct phc *phc, struct ptp_clock_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	if (ioctl(phc->fd, PTP_CLOCK_GETCAPS, caps))
		return -errno;
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
 * by interrupts or preemption between the three reads. A bracket that ends
 * before it starts means CLOCK_REALTIME was stepped between the two sys
 * reads: it would win as "narrowest" and carry the step into the offset, so
 * it is skipped. The midpoint is before + window / 2 in integer ns (never
 * (before + after) / 2, which could overflow). */
static void phc_consider(int64_t before, int64_t phc, int64_t after,
			 struct phc_offset *best, bool *have)
{
	int64_t window = after - before;

	if (window < 0 || (*have && window >= best->window_ns))
		return;
	best->window_ns = window;
	best->sys_ns = before + window / 2;
	best->phc_ns = phc;
	best->offset_ns = phc - best->sys_ns;
	*have = true;
}

int phc_pick_extended(const struct ptp_sys_offset_extended *x,
		      struct phc_offset *out)
{
	struct phc_offset best = { .method = PHC_METHOD_EXTENDED };
	bool have = false;

	if (x->n_samples < 1 || x->n_samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	for (unsigned i = 0; i < x->n_samples; i++)
		phc_consider(phc_ns(&x->ts[i][0]), phc_ns(&x->ts[i][1]),
			     phc_ns(&x->ts[i][2]), &best, &have);
	if (!have)
		return -EAGAIN;
	*out = best;
	return 0;
}

int phc_pick_basic(const struct ptp_sys_offset *x, struct phc_offset *out)
{
	struct phc_offset best = { .method = PHC_METHOD_BASIC };
	bool have = false;

	if (x->n_samples < 1 || x->n_samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	/* ts[] holds sys, phc, sys, phc, ..., sys: 2n + 1 readings, each sys
	 * reading closing one bracket and opening the next. */
	for (unsigned i = 0; i < x->n_samples; i++)
		phc_consider(phc_ns(&x->ts[2 * i]), phc_ns(&x->ts[2 * i + 1]),
			     phc_ns(&x->ts[2 * i + 2]), &best, &have);
	if (!have)
		return -EAGAIN;
	*out = best;
	return 0;
}

/* What a driver or kernel without a method answers: EOPNOTSUPP (no
 * cross-timestamp in the driver), ENOTTY (ioctl unknown to the kernel),
 * EINVAL (some drivers, and kernels checking fields they do not know). */
static bool phc_unsupported(int err)
{
	return err == -EOPNOTSUPP || err == -ENOTTY || err == -EINVAL;
}

/* One reading with method m. Remembers m as soon as the device accepts
 * the ioctl, whatever the samples turn out to be. */
static int phc_read(struct phc *phc, enum phc_method m, int samples,
		    struct phc_offset *out)
{
	struct ptp_sys_offset_precise p;
	struct ptp_sys_offset_extended x;
	struct ptp_sys_offset b;

	switch (m) {
	case PHC_METHOD_PRECISE:
		/* Reserved fields zero: newer kernels may give them meaning. */
		memset(&p, 0, sizeof(p));
		if (ioctl(phc->fd, PTP_SYS_OFFSET_PRECISE, &p))
			return -errno;
		phc->known = true;
		phc->method = m;
		out->phc_ns = phc_ns(&p.device);
		out->sys_ns = phc_ns(&p.sys_realtime);
		out->offset_ns = out->phc_ns - out->sys_ns;
		/* The device latched both clocks at once: no bracket. */
		out->window_ns = 0;
		out->method = m;
		return 0;
	case PHC_METHOD_EXTENDED:
		/* Zero also selects CLOCK_REALTIME in kernels (6.12+) that
		 * turned rsv[0] into a clockid. */
		memset(&x, 0, sizeof(x));
		x.n_samples = (unsigned)samples;
		if (ioctl(phc->fd, PTP_SYS_OFFSET_EXTENDED, &x))
			return -errno;
		phc->known = true;
		phc->method = m;
		return phc_pick_extended(&x, out);
	case PHC_METHOD_BASIC:
		memset(&b, 0, sizeof(b));
		b.n_samples = (unsigned)samples;
		if (ioctl(phc->fd, PTP_SYS_OFFSET, &b))
			return -errno;
		phc->known = true;
		phc->method = m;
		return phc_pick_basic(&b, out);
	}
	return -EINVAL;
}

int phc_sys_offset(struct phc *phc, int samples, struct phc_offset *out)
{
	enum phc_method m;
	int err;

	if (samples < 1 || samples > PTP_MAX_SAMPLES)
		return -EINVAL;
	/* Best first; from the remembered method on, so a device that
	 * refused the better ones is not asked again on every reading. */
	m = phc->known ? phc->method : PHC_METHOD_PRECISE;
	for (;;) {
		err = phc_read(phc, m, samples, out);
		if (!phc_unsupported(err) || m == PHC_METHOD_BASIC)
			return err;
		m++;
	}
}
