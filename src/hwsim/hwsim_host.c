/* hwsim_host.c — see hwsim_host.h. */
#include "hwsim/hwsim_host.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/net_tstamp.h>

#include "base/errbuf.h"

#define HWSIM_MAGIC 0x6d697377684c5454ULL	/* "TTLhwsim" */
#define HWSIM_VERSION 2	/* 2: tx-late, counts */

struct hwsim_slot {
	bool used;
	char ifname[16];
	struct hwsim_clock clk;
	int64_t quantum_ns, noise_ns;
	int tx_type, rx_filter;
	struct hwsim_faults faults;
	struct hwsim_counts counts;
};

/* The file's layout: fixed size, no pointers. */
struct hwsim_shared {
	uint64_t magic;
	uint32_t version, size;
	atomic_flag lock;
	atomic_int tx_late_nics;	/* NICs under tx-late */
	char host[HWSIM_NAME_MAX];
	struct hwsim_params params;
	struct hwsim_clock sys;
	struct hwsim_slot phc[HWSIM_MAX_PHC];
};

struct hwsim_host {
	struct hwsim_shared *s;
	uint64_t rng;		/* this process's noise */
	int truth;		/* DIR/HOST.truth, O_APPEND; -1: none */
};

int64_t hwsim_true_now(void)
{
	struct timespec ts;

	/* The system call, not clock_gettime(): under the preload library
	 * that is the simulated system clock. */
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One line of the truth journal (hwsim_host.h): what clock n is from
 * now on. Written with the lock held, so lines come in the order of the
 * changes; one write(2) each, so programs' lines never mix. */
static void hwsim_truth_line(struct hwsim_host *h, const char *name,
			     const struct hwsim_clock *c)
{
	char line[160];
	int n;

	if (h->truth < 0)
		return;
	n = snprintf(line, sizeof(line), "%lld %s %lld %.3f %.3f\n",
		     (long long)c->ref_true, name, (long long)c->ref_val,
		     c->native_ppb, c->adj_ppb);
	if (n > 0 && n < (int)sizeof(line) && write(h->truth, line, (size_t)n) < 0)
		h->truth = -1;		/* no truth rather than a torn one */
}

static void hwsim_lock(struct hwsim_host *h)
{
	while (atomic_flag_test_and_set_explicit(&h->s->lock,
						 memory_order_acquire))
		;
}

static void hwsim_unlock(struct hwsim_host *h)
{
	atomic_flag_clear_explicit(&h->s->lock, memory_order_release);
}

static void hwsim_init_shared(struct hwsim_shared *s, const char *host,
			      const struct hwsim_params *p)
{
	int64_t off, now = hwsim_true_now();
	double ppb;

	memset(s, 0, sizeof(*s));
	s->magic = HWSIM_MAGIC;
	s->version = HWSIM_VERSION;
	s->size = sizeof(*s);
	atomic_flag_clear(&s->lock);
	snprintf(s->host, sizeof(s->host), "%s", host);
	if (p) {
		s->params = *p;
	} else {
		s->params = (struct hwsim_params){
			.phc_offset_ns = HWSIM_NONE, .phc_ppm = NAN,
			.sys_offset_ns = HWSIM_NONE, .sys_ppm = NAN,
		};
	}
	hwsim_seed(host, "sys", &off, &ppb);
	if (s->params.sys_offset_ns != HWSIM_NONE)
		off = s->params.sys_offset_ns;
	if (!isnan(s->params.sys_ppm))
		ppb = s->params.sys_ppm * 1000;
	hwsim_clock_init(&s->sys, now, off, ppb);
}

int hwsim_host_open(struct hwsim_host **out, const char *dir, const char *host,
		    bool create, const struct hwsim_params *p,
		    char err[HWSIM_HOST_ERRBUF])
{
	char path[4096], tmp[4200];
	struct hwsim_shared *s;
	struct stat st;
	int fd, rc;

	*out = NULL;
	if (!*host || strchr(host, '/') || strlen(host) >= HWSIM_NAME_MAX) {
		errbuf_set(err, HWSIM_HOST_ERRBUF, -EINVAL,
			   "host '%s': a name of 1 to %d characters "
			   "without '/'", host, HWSIM_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%s.hwsim", dir, host);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		/* Made whole under another name, then linked into place:
		 * a program of the host never maps a half-made file, and of
		 * two makers at once one wins, the other uses its file. */
		struct hwsim_shared init;

		snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, host, (long)getpid());
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			rc = -errno;
			errbuf_set(err, HWSIM_HOST_ERRBUF, rc,
				   "%s: %s", tmp, strerror(-rc));
			return rc;
		}
		hwsim_init_shared(&init, host, p);
		if (write(fd, &init, sizeof(init)) != (ssize_t)sizeof(init) ||
		    (link(tmp, path) < 0 && errno != EEXIST)) {
			rc = -errno;
			errbuf_set(err, HWSIM_HOST_ERRBUF, rc,
				   "%s: %s", path, strerror(-rc));
			close(fd);
			unlink(tmp);
			return rc;
		}
		close(fd);
		unlink(tmp);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		errbuf_set(err, HWSIM_HOST_ERRBUF, rc,
			   "%s: %s%s", path, strerror(-rc),
			   rc == -ENOENT ? " (no such simulated host)" : "");
		return rc;
	}
	if (fstat(fd, &st) < 0 || st.st_size != (off_t)sizeof(*s)) {
		errbuf_set(err, HWSIM_HOST_ERRBUF, -EINVAL,
			   "%s: not a host file of this tapless-hwsim "
			   "(size %lld, want %zu): another version's, or not one; "
			   "remove it to start the host anew", path,
			   (long long)st.st_size, sizeof(*s));
		close(fd);
		return -EINVAL;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED) {
		rc = -errno;
		errbuf_set(err, HWSIM_HOST_ERRBUF, rc,
			   "%s: mmap: %s", path, strerror(-rc));
		return rc;
	}
	if (s->magic != HWSIM_MAGIC || s->version != HWSIM_VERSION ||
	    s->size != sizeof(*s)) {
		errbuf_set(err, HWSIM_HOST_ERRBUF, -EINVAL,
			   "%s: not a tapless-hwsim host file of "
			   "version %d", path, HWSIM_VERSION);
		munmap(s, sizeof(*s));
		return -EINVAL;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		munmap(s, sizeof(*s));
		errbuf_set(err, HWSIM_HOST_ERRBUF, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	(*out)->s = s;
	(*out)->rng = (uint64_t)hwsim_true_now() ^ ((uint64_t)getpid() << 32);
	snprintf(path, sizeof(path), "%s/%s.truth", dir, host);
	(*out)->truth = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if ((*out)->truth >= 0) {
		struct stat ts;

		hwsim_lock(*out);
		/* The first program of the host starts the file with the
		 * system clock as made. */
		if (!fstat((*out)->truth, &ts) && !ts.st_size) {
			char hdr[128];
			int n = snprintf(hdr, sizeof(hdr), "# tapless-hwsim truth 1 host %s\n"
					 "# true_ns clock value_ns native_ppb adj_ppb\n",
					 host);

			if (write((*out)->truth, hdr, (size_t)n) < 0)
				(*out)->truth = -1;
			hwsim_truth_line(*out, "sys", &s->sys);
		}
		hwsim_unlock(*out);
	}
	return 0;
}

void hwsim_host_close(struct hwsim_host *h)
{
	if (!h)
		return;
	if (h->truth >= 0)
		close(h->truth);
	munmap(h->s, sizeof(*h->s));
	free(h);
}

const char *hwsim_host_name(const struct hwsim_host *h)
{
	return h->s->host;
}

void hwsim_host_params(struct hwsim_host *h, struct hwsim_params *p)
{
	hwsim_lock(h);
	*p = h->s->params;
	hwsim_unlock(h);
}

int hwsim_phc_find(struct hwsim_host *h, const char *ifname, bool create)
{
	struct hwsim_shared *s = h->s;
	int free_slot = -1, rc = -ENOENT;

	hwsim_lock(h);
	for (int i = 0; i < HWSIM_MAX_PHC; i++) {
		if (s->phc[i].used && !strncmp(s->phc[i].ifname, ifname,
					       sizeof(s->phc[i].ifname))) {
			rc = i;
			goto out;
		}
		if (!s->phc[i].used && free_slot < 0)
			free_slot = i;
	}
	if (!create)
		goto out;
	if (free_slot < 0) {
		rc = -ENOSPC;
		goto out;
	}
	{
		struct hwsim_slot *p = &s->phc[free_slot];
		int64_t off;
		double ppb;

		hwsim_seed(s->host, ifname, &off, &ppb);
		if (s->params.phc_offset_ns != HWSIM_NONE)
			off = s->params.phc_offset_ns;
		if (!isnan(s->params.phc_ppm))
			ppb = s->params.phc_ppm * 1000;
		memset(p, 0, sizeof(*p));
		snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
		hwsim_clock_init(&p->clk, hwsim_true_now(), off, ppb);
		p->quantum_ns = s->params.quantum_ns;
		p->noise_ns = s->params.noise_ns;
		p->used = true;
		rc = free_slot;
		{
			char name[16];

			snprintf(name, sizeof(name), "phc%d", free_slot);
			hwsim_truth_line(h, name, &p->clk);
		}
	}
out:
	hwsim_unlock(h);
	return rc;
}

unsigned hwsim_phc_count(struct hwsim_host *h)
{
	unsigned n = 0;

	hwsim_lock(h);
	for (int i = 0; i < HWSIM_MAX_PHC; i++)
		if (h->s->phc[i].used)
			n = (unsigned)i + 1;
	hwsim_unlock(h);
	return n;
}

int hwsim_phc_get(struct hwsim_host *h, unsigned n, struct hwsim_phc_info *out)
{
	int rc = -ENOENT;

	if (n >= HWSIM_MAX_PHC)
		return rc;
	hwsim_lock(h);
	if (h->s->phc[n].used) {
		const struct hwsim_slot *p = &h->s->phc[n];

		memcpy(out->ifname, p->ifname, sizeof(out->ifname));
		out->clk = p->clk;
		out->quantum_ns = p->quantum_ns;
		out->noise_ns = p->noise_ns;
		out->tx_type = p->tx_type;
		out->rx_filter = p->rx_filter;
		out->faults = p->faults;
		out->counts = p->counts;
		rc = 0;
	}
	hwsim_unlock(h);
	return rc;
}

/* A change of clock n, with the lock held, into the truth journal. */
static void hwsim_changed(struct hwsim_host *h, int n,
			  const struct hwsim_clock *c)
{
	char name[16];

	if (n < 0)
		snprintf(name, sizeof(name), "sys");
	else
		snprintf(name, sizeof(name), "phc%d", n);
	hwsim_truth_line(h, name, c);
}

/* The clock n names, with the lock held: NULL for an unused slot. */
static struct hwsim_clock *hwsim_clk(struct hwsim_host *h, int n)
{
	if (n < 0)
		return &h->s->sys;
	if (n >= HWSIM_MAX_PHC || !h->s->phc[n].used)
		return NULL;
	return &h->s->phc[n].clk;
}

void hwsim_sys_get(struct hwsim_host *h, struct hwsim_clock *out)
{
	hwsim_lock(h);
	*out = h->s->sys;
	hwsim_unlock(h);
}

int64_t hwsim_read(struct hwsim_host *h, int n, int64_t t_true)
{
	struct hwsim_clock *c, copy;

	hwsim_lock(h);
	c = hwsim_clk(h, n);
	if (c)
		copy = *c;
	hwsim_unlock(h);
	return c ? hwsim_clock_at(&copy, t_true) : t_true;
}

double hwsim_get_freq(struct hwsim_host *h, int n)
{
	struct hwsim_clock *c;
	double f = 0;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n)))
		f = c->adj_ppb;
	hwsim_unlock(h);
	return f;
}

double hwsim_get_tick(struct hwsim_host *h, int n)
{
	struct hwsim_clock *c;
	double f = 0;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n)))
		f = c->tick_ppb;
	hwsim_unlock(h);
	return f;
}

/* adj_ppb is the frequency's part, without the tick's. */
void hwsim_set_freq(struct hwsim_host *h, int n, double adj_ppb)
{
	struct hwsim_clock *c;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n))) {
		hwsim_clock_set_freq(c, hwsim_true_now(), adj_ppb + c->tick_ppb);
		hwsim_changed(h, n, c);
	}
	hwsim_unlock(h);
}

void hwsim_set_tick(struct hwsim_host *h, int n, double tick_ppb)
{
	struct hwsim_clock *c;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n))) {
		hwsim_clock_set_freq(c, hwsim_true_now(),
				     c->adj_ppb - c->tick_ppb + tick_ppb);
		c->tick_ppb = tick_ppb;
		hwsim_changed(h, n, c);
	}
	hwsim_unlock(h);
}

void hwsim_step(struct hwsim_host *h, int n, int64_t delta_ns)
{
	struct hwsim_clock *c;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n))) {
		hwsim_clock_step(c, hwsim_true_now(), delta_ns);
		hwsim_changed(h, n, c);
	}
	hwsim_unlock(h);
}

void hwsim_set(struct hwsim_host *h, int n, int64_t value)
{
	struct hwsim_clock *c;

	hwsim_lock(h);
	if ((c = hwsim_clk(h, n))) {
		hwsim_clock_set(c, hwsim_true_now(), value);
		hwsim_changed(h, n, c);
	}
	hwsim_unlock(h);
}

/* A standard normal draw (Box-Muller on xorshift64*). */
static double hwsim_gauss(struct hwsim_host *h)
{
	double u1, u2;

	do {
		h->rng ^= h->rng >> 12;
		h->rng ^= h->rng << 25;
		h->rng ^= h->rng >> 27;
		u1 = (double)((h->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
	} while (u1 <= 0);
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	u2 = (double)((h->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

int64_t hwsim_stamp(struct hwsim_host *h, int n, int64_t t_true)
{
	struct hwsim_phc_info p;
	int64_t v;

	if (n < 0 || hwsim_phc_get(h, (unsigned)n, &p))
		return hwsim_read(h, -1, t_true);
	v = hwsim_clock_at(&p.clk, t_true);
	if (p.noise_ns > 0)
		v += (int64_t)llround(hwsim_gauss(h) * (double)p.noise_ns);
	if (p.quantum_ns > 1)
		v -= ((v % p.quantum_ns) + p.quantum_ns) % p.quantum_ns;
	return v;
}

void hwsim_set_hwtstamp(struct hwsim_host *h, int n, int tx_type, int rx_filter)
{
	if (n < 0 || n >= HWSIM_MAX_PHC)
		return;
	hwsim_lock(h);
	if (h->s->phc[n].used) {
		h->s->phc[n].tx_type = tx_type;
		h->s->phc[n].rx_filter = rx_filter;
	}
	hwsim_unlock(h);
}

int hwsim_fault(struct hwsim_host *h, int n, const struct hwsim_fault *f)
{
	struct hwsim_slot *p;
	char name[16];

	if (n < 0 || n >= HWSIM_MAX_PHC)
		return -ENOENT;
	hwsim_lock(h);
	p = &h->s->phc[n];
	if (!p->used) {
		hwsim_unlock(h);
		return -ENOENT;
	}
	snprintf(name, sizeof(name), "phc%d", n);
	switch (f->kind) {
	case HWSIM_FAULT_STEP:
		hwsim_clock_step(&p->clk, hwsim_true_now(), f->value);
		hwsim_truth_line(h, name, &p->clk);
		break;
	case HWSIM_FAULT_FREQ_JUMP:
		/* The oscillator itself: the rate moves, the adjustment a
		 * servo made stays. */
		hwsim_clock_set_freq(&p->clk, hwsim_true_now(), p->clk.adj_ppb);
		p->clk.native_ppb += (double)f->value;
		hwsim_truth_line(h, name, &p->clk);
		break;
	case HWSIM_FAULT_GM_GONE:
		p->faults.gm_gone = f->value != 0;
		break;
	case HWSIM_FAULT_TX_LOSS:
		p->faults.tx_loss_pct = (int)f->value;
		break;
	case HWSIM_FAULT_RX_PTP_ONLY:
		p->faults.rx_ptp_only = f->value != 0;
		if (p->faults.rx_ptp_only &&
		    p->rx_filter != HWTSTAMP_FILTER_NONE)
			p->rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
		break;
	case HWSIM_FAULT_TX_LATE: {
		int k = 0;

		p->faults.tx_late_pct = (int)f->value;
		p->faults.tx_late_max_ns = f->value ? f->max_ns : 0;
		for (int i = 0; i < HWSIM_MAX_PHC; i++)
			if (h->s->phc[i].used && h->s->phc[i].faults.tx_late_pct)
				k++;
		atomic_store_explicit(&h->s->tx_late_nics, k, memory_order_relaxed);
		break;
	}
	}
	hwsim_unlock(h);
	return 0;
}

bool hwsim_tx_late_any(struct hwsim_host *h)
{
	return atomic_load_explicit(&h->s->tx_late_nics, memory_order_relaxed) > 0;
}

void hwsim_count(struct hwsim_host *h, int n, uint64_t tx_lost,
		 uint64_t tx_late, uint64_t tx_late_forced)
{
	if (n < 0 || n >= HWSIM_MAX_PHC)
		return;
	hwsim_lock(h);
	if (h->s->phc[n].used) {
		h->s->phc[n].counts.tx_lost += tx_lost;
		h->s->phc[n].counts.tx_late += tx_late;
		h->s->phc[n].counts.tx_late_forced += tx_late_forced;
	}
	hwsim_unlock(h);
}

int64_t hwsim_draw_below(struct hwsim_host *h, int64_t max)
{
	if (max <= 0)
		return 0;
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return (int64_t)(((h->rng * 2685821657736338717ULL) >> 11) % (uint64_t)max);
}

bool hwsim_draw_pct(struct hwsim_host *h, int pct)
{
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return (int)((h->rng * 2685821657736338717ULL) >> 33) % 100 < pct;
}
