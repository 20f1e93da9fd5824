/* refcheck.h — a host's packet stamps against a reference capture of the
 * same traffic (an optical tap and a capture card: the FTTC report's Endace
 * DAG), matched packet by packet, offline, for tapless validate.
 *
 * error = host stamp − reference stamp, per packet, split by direction as
 * the host saw it (tx: the host sent it; rx: it received it), with mean,
 * SD, percentiles, and a least-squares line through error against time: the
 * constant offset and the rate of the host's clock against the reference's.
 *
 * Matching. A packet is known by what the wire carries from the IP header
 * on, so captures with different link layers (Ethernet, Linux cooked) and
 * frames a sender rebuilt for its own TX stamp (frame.h) still match: the
 * addresses, protocol and ports, the IP payload length, the TCP sequence
 * number (and for segments without data the acknowledgement and flags),
 * and the first 16 bytes of the TCP or UDP payload. Frames that are not IP
 * are known by their first 64 bytes. A packet whose capture was cut before
 * these bytes cannot be matched (counted "unkeyed"). Packets sent more than
 * once (retransmissions) match the reference copy nearest in time, once the
 * constant offset between the files has been estimated from the packets
 * that occur once in the reference (the median of their differences).
 *
 * Tap stamps: a reference whose frames carry a tap's or switch's own
 * stamp (files/tapfmt.h: MetaWatch, Arista 7280, Exablaze, ExaLINK, Ixia)
 * is read with that stamp and the frame as it was on the wire; the format
 * is detected unless named. Stamps the device flagged degraded are
 * counted, matched ones too.
 *
 * Timescales: host stamps marked TAI (tapless files record it; raw PHC time
 * counts as TAI, as under ptp4l) are moved to the reference's timescale by
 * the TAI−UTC offset; a reference is taken as UTC unless its file says or
 * the caller sets otherwise. Host files from tapless-capd that carry the
 * senders' own TX stamps: an outgoing packet is taken from the sender's
 * interface, and the packet socket's copy of it is skipped, as correlate
 * does.
 *
 * Memory: the reference's packets are held as 24-byte entries, each matched
 * error twice as 8 bytes (its direction's and all); nothing per packet is
 * allocated otherwise (bench/validate-ref.sh: 2.2 million packets, 107 MB).
 */
#ifndef TAPLESS_REFCHECK_H
#define TAPLESS_REFCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/linfit.h"
#include "base/summary.h"

struct printer;
struct verdict_check;
struct verdict_limits;

#define REFCHECK_ERRBUF 600

struct refcheck_config {
	const char *host_path, *ref_path;
	int ref_timescale;	/* enum ts_timescale: TS_SCALE_UTC (default)
				 * or TS_SCALE_TAI, unless the file says */
	int64_t tai_utc_ns;	/* TAI − UTC; default 37 s */
	int64_t window_ns;	/* largest |error − estimated offset| that
				 * still matches; default 10 ms */
	int ref_format;		/* enum tapfmt_kind of the reference's stamps
				 * (files/tapfmt.h): TAPFMT_AUTO (default)
				 * detects a tap's trailer or header */
};

enum refcheck_dir { REFCHECK_TX, REFCHECK_RX, REFCHECK_ALL, REFCHECK_NDIR };

struct refcheck_dist {
	struct summary err;		/* error_ns */
	int64_t p1;			/* 1st percentile */
	struct linfit_result fit;	/* error against reference time */
	int64_t *v;			/* the samples, sorted; err.n of them */
};

struct refcheck_result {
	uint64_t host_packets, ref_packets;
	uint64_t host_unkeyed, ref_unkeyed;	/* cut too short to match */
	uint64_t host_tap_tx_skipped;	/* packet-socket copies of sent frames */
	uint64_t matched;
	uint64_t host_unmatched;	/* in the reference's span, not in it */
	uint64_t host_outside;		/* outside the reference's span */
	uint64_t dir_unknown;		/* matched with no direction known */
	uint64_t dir_conflicts;		/* host and reference directions differ */
	uint64_t dir_compared;		/* matches with both directions known */
	int64_t offset_estimate_ns;	/* median used to pick among repeats */
	int64_t timescale_adjust_ns;	/* added to host stamps (−TAI−UTC...) */
	int64_t tai_utc_ns;		/* as configured, for the judge's hints */
	int64_t host_res_ns, ref_res_ns;	/* declared by the files (if_tsresol) */
	int64_t host_step_ns, ref_step_ns;	/* greatest common step delivered */
	char host_source[8];		/* "hw", "sw", "mixed", "unknown" */
	/* The reference's tap stamps: the format read (tapfmt.h, "none":
	 * the records' own), frames it stamped, the device's own frames,
	 * frames left out without a stamp or with a bad one, stamps
	 * flagged degraded (and among them matched), and the first frame
	 * left out, said. */
	char ref_format[16];
	uint64_t ref_tap_stamped, ref_tap_device_frames;
	uint64_t ref_tap_missing, ref_tap_bad, ref_tap_degraded;
	uint64_t matched_degraded;
	char ref_tap_warning[REFCHECK_ERRBUF];
	struct refcheck_dist dir[REFCHECK_NDIR];
};

void refcheck_config_init(struct refcheck_config *cfg);

/* Read both files and match. Returns 0 (also when nothing matched: the
 * judge says so), or -errno / -EBADMSG with err naming the file and the
 * byte offset of bad input. The result owns its sample arrays. */
int refcheck_run(const struct refcheck_config *cfg, struct refcheck_result *res,
		 char err[REFCHECK_ERRBUF]);
void refcheck_result_free(struct refcheck_result *res);

/* Items for the ref.* limits, per direction with samples. */
void refcheck_judge(const struct refcheck_result *res,
		    const struct verdict_limits *lim, struct verdict_check *c);

/* One object of figures under key. */
void refcheck_print(struct printer *p, const char *key,
		    const struct refcheck_result *res);

const char *refcheck_dir_name(enum refcheck_dir d);	/* "tx", "rx", "all" */

#endif
