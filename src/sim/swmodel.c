/* swmodel.c — switch latency models and presets; see swmodel.h. */
#include "sim/swmodel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "files/topo.h"
#include "base/xalloc.h"

/* Figures from the FTTC 10GbE report (2012), switch latency tables. */
const struct swmodel_preset swmodel_presets[SWMODEL_PRESET_COUNT] = {
	[SWMODEL_ARISTA_7124SX] = { "arista-7124sx", SWMODEL_CUT_THROUGH, 576.9, 8.9 },
	[SWMODEL_MELLANOX_SX1036] = { "mellanox-sx1036", SWMODEL_CUT_THROUGH, 394, 9 },
	[SWMODEL_GNODAL_GS7200] = { "gnodal-gs7200", SWMODEL_STORE_FORWARD, 487.5, 15 },
};

static const char *const swmodel_modes[] = { "cut-through", "store-and-forward" };
static const char *const swmodel_dists[] = { "normal", "exponential", "uniform" };

struct swmodel {
	struct swmodel_config cfg;
	struct rng rng;
};

const struct swmodel_preset *swmodel_preset_find(const char *name)
{
	for (int i = 0; i < SWMODEL_PRESET_COUNT; i++)
		if (!strcmp(name, swmodel_presets[i].name))
			return &swmodel_presets[i];
	return NULL;
}

const char *swmodel_mode_name(enum swmodel_mode mode)
{
	return (unsigned)mode < 2 ? swmodel_modes[mode] : "?";
}

int swmodel_mode_parse(const char *s)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(s, swmodel_modes[i]))
			return i;
	return -EINVAL;
}

const char *swmodel_dist_name(enum swmodel_dist dist)
{
	return (unsigned)dist < 3 ? swmodel_dists[dist] : "?";
}

int swmodel_dist_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, swmodel_dists[i]))
			return i;
	return -EINVAL;
}

void swmodel_config_preset(struct swmodel_config *cfg,
			   const struct swmodel_preset *p, uint64_t seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = p->mode;
	cfg->latency_ns = p->latency_ns;
	cfg->jitter_ns = p->jitter_ns;
	cfg->dist = SWMODEL_NORMAL;
	cfg->speed_bps = SWMODEL_PRESET_SPEED_BPS;
	cfg->seed = seed;
}

int swmodel_create(struct swmodel **out, const struct swmodel_config *cfg)
{
	struct swmodel *m;

	if (!isfinite(cfg->latency_ns) || cfg->latency_ns < 0 ||
	    !isfinite(cfg->jitter_ns) || cfg->jitter_ns < 0 ||
	    (unsigned)cfg->mode > SWMODEL_STORE_FORWARD ||
	    (unsigned)cfg->dist > SWMODEL_UNIFORM ||
	    (cfg->mode == SWMODEL_STORE_FORWARD &&
	     !(isfinite(cfg->speed_bps) && cfg->speed_bps > 0)))
		return -EINVAL;
	m = xcalloc(1, sizeof(*m));
	m->cfg = *cfg;
	rng_seed(&m->rng, cfg->seed, 0);
	*out = m;
	return 0;
}

void swmodel_destroy(struct swmodel *m)
{
	free(m);
}

double swmodel_base_ns(const struct swmodel *m, uint32_t len)
{
	double ns = m->cfg.latency_ns;

	if (m->cfg.mode == SWMODEL_STORE_FORWARD)
		ns += topo_serialisation_ns(len, m->cfg.speed_bps);
	return ns;
}

int64_t swmodel_delay(struct swmodel *m, uint32_t len)
{
	double sd = m->cfg.jitter_ns, ns = swmodel_base_ns(m, len);

	if (sd > 0) {
		switch (m->cfg.dist) {
		case SWMODEL_NORMAL:
			ns += sd * rng_gauss(&m->rng);
			break;
		case SWMODEL_EXPONENTIAL:
			ns += rng_exp(&m->rng, sd) - sd;
			break;
		case SWMODEL_UNIFORM:
			ns += sd * sqrt(3.0) * (2 * rng_unit(&m->rng) - 1);
			break;
		}
	}
	return ns > 0 ? llround(ns) : 0;
}
