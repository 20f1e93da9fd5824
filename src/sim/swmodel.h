/* swmodel.h — how long a switch holds a frame: the latency models of the
 * lab's switch emulator (tapless-swemu) and the switches `tapless sim`
 * puts between its hosts, with the presets measured in the FTTC report.
 *
 * A frame of len bytes (as captured: no preamble, no FCS) is held
 *
 *   cut-through:        latency + jitter
 *   store-and-forward:  latency + jitter + topo_serialisation_ns(len, speed)
 *
 * jitter is a zero-mean draw with standard deviation jitter_ns from the
 * chosen distribution, so latency_ns is the mean of every model (before the
 * clamp: a total below 0 is taken as 0). The serialisation term is exactly
 * the one the correlator subtracts for a store-and-forward switch
 * (topo.h), so what the emulator adds and what the correlator takes off
 * agree to the nanosecond.
 *
 * Draws come from a generator seeded from swmodel_config.seed alone: the
 * same seed gives the same delays, on every machine.
 */
#ifndef TAPLESS_SWMODEL_H
#define TAPLESS_SWMODEL_H

#include <stdint.h>

enum swmodel_mode { SWMODEL_CUT_THROUGH, SWMODEL_STORE_FORWARD };

enum swmodel_dist {
	SWMODEL_NORMAL,		/* gaussian */
	SWMODEL_EXPONENTIAL,	/* exponential of mean SD, less SD: a tail */
	SWMODEL_UNIFORM,	/* uniform on [-SD*sqrt(3), +SD*sqrt(3)] */
};

/* The switches of the FTTC report (mean and SD of the switch latency
 * under the FIX workload at 10GbE), in this order. */
enum swmodel_preset_id {
	SWMODEL_ARISTA_7124SX,		/* cut-through, 576.9 ns SD 8.9 */
	SWMODEL_MELLANOX_SX1036,	/* cut-through, 394 ns SD 9 */
	SWMODEL_GNODAL_GS7200,		/* store-and-forward, 487.5 ns SD 15 */
	SWMODEL_PRESET_COUNT
};

#define SWMODEL_PRESET_SPEED_BPS 10e9	/* the report's links: 10GbE */

struct swmodel_preset {
	const char *name;		/* "arista-7124sx" */
	enum swmodel_mode mode;
	double latency_ns;		/* mean */
	double jitter_ns;		/* SD, normal */
};

/* Indexed by enum swmodel_preset_id. */
extern const struct swmodel_preset swmodel_presets[SWMODEL_PRESET_COUNT];

/* The preset called name, or NULL. */
const struct swmodel_preset *swmodel_preset_find(const char *name);

/* "cut-through", "store-and-forward" (the topology file's words); parsing
 * returns the mode or -EINVAL. */
const char *swmodel_mode_name(enum swmodel_mode mode);
int swmodel_mode_parse(const char *s);
/* "normal", "exponential", "uniform"; parsing returns it or -EINVAL. */
const char *swmodel_dist_name(enum swmodel_dist dist);
int swmodel_dist_parse(const char *s);

struct swmodel_config {
	enum swmodel_mode mode;
	double latency_ns;		/* >= 0 */
	double jitter_ns;		/* >= 0: SD of the jitter */
	enum swmodel_dist dist;
	double speed_bps;		/* > 0 for store-and-forward */
	uint64_t seed;
};

struct swmodel;

/* The config of a preset: its mode, latency and SD (normal), 10G. */
void swmodel_config_preset(struct swmodel_config *cfg,
			   const struct swmodel_preset *p, uint64_t seed);

/* Returns 0, or -EINVAL for a negative or non-finite latency or jitter, an
 * unknown mode or distribution, or store-and-forward without a speed. */
int swmodel_create(struct swmodel **out, const struct swmodel_config *cfg);
void swmodel_destroy(struct swmodel *m);

/* The delay of the next frame of len bytes, in nanoseconds, >= 0. One draw
 * from the generator per call when jitter_ns > 0; no allocation. */
int64_t swmodel_delay(struct swmodel *m, uint32_t len);

/* The delay without jitter: latency_ns, plus serialisation for
 * store-and-forward. */
double swmodel_base_ns(const struct swmodel *m, uint32_t len);

#endif
