/* loopcheck.h — stamp accuracy from frames looped between two ports of this
 * host, for tapless validate: out of port A, in at port B (over a cable, or
 * a switch), and back the other way. Each frame is an Ethernet frame of the
 * IEEE 802 local experimental EtherType 0x88B5, sent and received on packet
 * sockets, so no IP stack or routing is involved and the two ports may sit
 * on one NIC or two.
 *
 * Per direction: TX stamp at A against RX stamp at B gives the one-way
 * (its SD is the stamps' noise, its mean against the expected cable delay
 * their bias), TX stamps missing or late, frames lost. With hardware stamps
 * the software ones are asked for too, and each frame's software stamp
 * minus its hardware stamp (the PHC read against CLOCK_REALTIME around the
 * run) shows the host stack's share per direction, and how often the
 * hardware stamp did not come.
 *
 * The stamp source is chosen as ts.h does (TS_MODE_AUTO: hardware when both
 * ports have it). Two ports on different PHCs give a one-way that includes
 * the offset between the PHCs: the result says so.
 */
#ifndef TAPLESS_LOOPCHECK_H
#define TAPLESS_LOOPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "base/summary.h"
#include "stamp/ts.h"

struct calib;
struct printer;
struct verdict_check;
struct verdict_limits;

/* A loopcheck_run() or loopcheck_calibrate() message: the port, the call
 * and why. */
#define LOOPCHECK_ERRBUF 512

#define LOOPCHECK_ETHERTYPE 0x88B5

/* A frame: Ethernet header (dst: the receiving port, src: the sender),
 * "TPLV", direction (0: A -> B, 1: B -> A), a version byte, two zero bytes,
 * sequence number and run nonce (big-endian), then zeros up to frame_len. */
#define LOOPCHECK_HDR_LEN 34
#define LOOPCHECK_MIN_FRAME 60	/* the Ethernet minimum less FCS */

struct loopcheck_config {
	const char *port[2];	/* A and B */
	enum ts_mode mode;	/* AUTO, HW or SW */
	unsigned count;		/* frames per direction; default 1000,
				 * at most 1 << 24 */
	double rate_pps;	/* per direction; default 1000 */
	unsigned frame_len;	/* bytes on the wire less FCS; default 64;
				 * LOOPCHECK_MIN_FRAME to the MTU + 14 */
	int64_t expect_ns;	/* expected one-way, or -1 when not known */
	int64_t tx_timeout_ns;	/* a TX stamp later than this is late;
				 * default 100 ms */
	bool one_way;		/* only A -> B */
};

struct loopcheck_dir {
	char from[IF_NAMESIZE], to[IF_NAMESIZE];
	enum ts_source source;	/* stamps the one-way is taken from */
	int phc_tx, phc_rx;	/* PHC indexes of hardware stamps, else -1 */
	uint64_t sent;
	uint64_t received;	/* frames of ours seen at B */
	uint64_t rx_unstamped;	/* received with no stamp of the source */
	uint64_t tx_missing;	/* sends whose TX stamp never came */
	uint64_t tx_late;	/* TX stamps that came after the timeout
				 * (their sends count in tx_missing too:
				 * the stamp was missing when judged) */
	struct summary oneway_ns;	/* RX - TX */
	int64_t *oneway;	/* the samples, oneway_ns.n of them (sorted) */
	/* With hardware stamps: software - hardware, per end. */
	bool have_hwsw;
	uint64_t hw_missing;	/* frames (either end) with sw but no hw */
	struct summary tx_sw_hw_ns, rx_sw_hw_ns;
	int64_t *tx_sw_hw, *rx_sw_hw;	/* their samples */
	int64_t phc_sys_ns[2];	/* PHC - REALTIME used for the sending
				 * and the receiving end (hw only): the
				 * mean of a reading before the run and
				 * one after */
};

struct loopcheck_result {
	struct loopcheck_dir dir[2];
	unsigned ndir;
	int64_t expect_ns;	/* as configured, or -1 */
	bool same_phc;		/* hardware stamps of both ends from one PHC */
	char sw_why[96];	/* software stamps: why ("eth1 has no hardware
				 * timestamping"); "" with hardware */
	int rx_filter[2];	/* hardware: each end's NIC receive filter
				 * once set up (HWTSTAMP_FILTER_*) */
	bool rx_filter_known[2];
};

void loopcheck_config_init(struct loopcheck_config *cfg);

/* Send and receive. Needs CAP_NET_RAW. Returns 0, or -errno with err naming
 * the port and the call (-ENODEV: no such port; -ENODEV too when HW was
 * asked for and a port has none; -ENETDOWN: a port is down; -EMSGSIZE:
 * frame_len above a port's MTU + 14; -EINVAL: a configuration value out of
 * range). The result owns its sample arrays; on error it holds none, and
 * loopcheck_result_free() is safe either way. Takes about count / rate_pps
 * seconds plus tx_timeout_ns. */
int loopcheck_run(const struct loopcheck_config *cfg,
		  struct loopcheck_result *res, char err[LOOPCHECK_ERRBUF]);
void loopcheck_result_free(struct loopcheck_result *res);

/* The loopback check (loop.* limits) and the hardware-vs-software check
 * (hwsw.*; skipped, with the reason, when there were no hardware stamps).
 * Initialises both checks (names "loopback" and "hwsw", subject "A->B" or
 * "A<->B"). */
void loopcheck_judge(const struct loopcheck_result *res,
		     const struct verdict_limits *lim, struct verdict_check *loop,
		     struct verdict_check *hwsw);

/* An array of directions under the key "directions", each an object of
 * figures (CSV: one row per direction); call it inside an object. */
void loopcheck_print(struct printer *p, const struct loopcheck_result *res);

/* This host's stamp calibration (tapless-calibration(5)) from a run whose
 * true one-way is known (res->expect_ns >= 0): the one-way samples of
 * every direction pooled (both are this host's TX and RX), excess =
 * one-way - expect_ns. The one-way cannot split TX from RX, so each end
 * gets half: tx offset floor(median / 2), rx offset the rest; spread_sum
 * the larger of median - p0.5 and p99.5 - median (nearest rank), each
 * end's spread ceil(spread_sum / 2); samples the pooled count. Terms of
 * the one-way's stamp source; with hardware stamps and software ones too,
 * the software terms per end as well: the hardware term plus that end's
 * pooled software - hardware (offset + median, spread + the larger of
 * median - p0.5 and p99.5 - median), samples the fewer of the two counts.
 * Sets c's terms only (host and measured are cleared). Returns 0, or
 * -EINVAL with err saying why none is written: no expected one-way,
 * fewer than LOOPCHECK_CALIB_MIN samples, directions of different stamp
 * sources, hardware stamps of two PHCs (their offset is in the one-way),
 * a term beyond CALIB_MAX_NS. */
#define LOOPCHECK_CALIB_MIN 100
int loopcheck_calibrate(const struct loopcheck_result *res, struct calib *c,
			char err[LOOPCHECK_ERRBUF]);

/* For tests, and for anyone matching these frames elsewhere: build the frame
 * of (dir, seq, nonce) into buf, len bytes (LOOPCHECK_MIN_FRAME or more);
 * returns len or -EINVAL. Parse one: 0, or -EBADMSG when it is short, of
 * another EtherType, lacks the magic or is of another version. */
struct loopcheck_frame {
	uint8_t dir;
	uint32_t seq;
	uint64_t nonce;
};

int loopcheck_frame_build(uint8_t *buf, size_t len, const uint8_t dst[6],
			  const uint8_t src[6], const struct loopcheck_frame *f);
int loopcheck_frame_parse(const uint8_t *buf, size_t len,
			  struct loopcheck_frame *f);

#endif
