/* hwsim_clock.c — see hwsim_clock.h. */
#include "hwsim/hwsim_clock.h"

#include <math.h>

static void hwsim_rebase(struct hwsim_clock *c, int64_t t_true)
{
	c->ref_val = hwsim_clock_at(c, t_true);
	c->ref_true = t_true;
}

void hwsim_clock_init(struct hwsim_clock *c, int64_t t_true, int64_t offset_ns,
		      double native_ppb)
{
	c->ref_true = t_true;
	c->ref_val = t_true + offset_ns;
	c->native_ppb = native_ppb;
	c->adj_ppb = c->tick_ppb = 0;
}

int64_t hwsim_clock_at(const struct hwsim_clock *c, int64_t t_true)
{
	int64_t e = t_true - c->ref_true;

	return c->ref_val + e +
		(int64_t)llround((double)e * (c->native_ppb + c->adj_ppb) / 1e9);
}

void hwsim_clock_set_freq(struct hwsim_clock *c, int64_t t_true, double adj_ppb)
{
	hwsim_rebase(c, t_true);
	c->adj_ppb = adj_ppb;
}

void hwsim_clock_step(struct hwsim_clock *c, int64_t t_true, int64_t delta_ns)
{
	hwsim_rebase(c, t_true);
	c->ref_val += delta_ns;
}

void hwsim_clock_set(struct hwsim_clock *c, int64_t t_true, int64_t value)
{
	c->ref_true = t_true;
	c->ref_val = value;
}

static uint64_t hwsim_fnv(const char *a, const char *b)
{
	uint64_t h = 14695981039346656037ULL;

	for (const char *p = a; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (const char *p = b; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

void hwsim_seed(const char *host, const char *name, int64_t *offset_ns,
		double *native_ppb)
{
	uint64_t h = hwsim_fnv(host, name);

	/* Two independent draws from the hash's halves. */
	*offset_ns = (int64_t)((h & 0xffffffff) % 2000001) - 1000000;
	*native_ppb = (double)((int64_t)((h >> 32) % 100001) - 50000);
}
