/* ts_private.h — inside struct ts_sock, shared by ts.c and the stamp sources
 * (ts_sw.c, ts_hw.c). Not for other modules. */
#ifndef TAPLESS_TS_PRIVATE_H
#define TAPLESS_TS_PRIVATE_H

#include <net/if.h>

#include "stamp/ts.h"

struct ts_sock;

/* A stamp source: how to prepare the device and which SO_TIMESTAMPING flags
 * to ask for. Picked once by ts_sock_create(); everything after that is
 * common code reading whichever slots of scm_timestamping were filled. */
struct ts_source_ops {
	const char *name;
	enum ts_source source;
	enum ts_stage tx_stage;		/* TS_STAGE_SW_TX or TS_STAGE_HW_TX */
	/* Prepare (HW: configure the NIC) and return the source's flags
	 * for the wanted directions. Sets ts->phc. 0 or -errno. */
	int (*setup)(struct ts_sock *ts, unsigned *so_flags);
};

extern const struct ts_source_ops ts_sw_ops;
extern const struct ts_source_ops ts_hw_ops;

/* One send awaiting its TX stamps. */
struct ts_pending {
	uint64_t cookie;
	uint64_t first;
	uint32_t key;		/* OPT_ID key the kernel will report */
	uint32_t len;
	int64_t app_ns;
	int64_t mono_ns;	/* when recorded, for the timeout */
	int64_t ns[TS_STAGE_COUNT];
	uint16_t got;		/* stages in */
	uint16_t shared;
	int16_t phc;
};

struct ts_sock {
	int fd;
	const struct ts_source_ops *ops;
	struct ts_config cfg;
	char ifname[IF_NAMESIZE];
	int phc;
	int hw_set_tx, hw_set_rx;	/* ts_info's */
	enum ts_timescale hw_scale;
	bool stream;
	bool opt_id_tcp;
	unsigned so_flags;
	unsigned tx_expect;

	/* Ring of sends awaiting stamps: [head, tail) in send order. */
	struct ts_pending *ring;
	uint32_t mask;
	uint64_t head, tail;
	uint64_t offset;	/* TCP bytes / UDP datagrams recorded so far */
	/* Per stage: every send before this index has that stage's stamp,
	 * so inferring shared stamps never rescans the window. */
	uint64_t stamped_to[TS_STAGE_COUNT];
	/* Per stage: one past the latest send stamped, to see a stamp
	 * that comes after a later send's (reordered). */
	uint64_t top[TS_STAGE_COUNT];

	struct ts_stats stats;
};

#endif
