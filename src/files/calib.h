/* calib.h — a host's stamp calibration, tapless-calibration(5): where the
 * host's stamps are taken against the moment its frame is on the wire, per
 * direction and stamp source, and how far one stamp may stray from that.
 * tapless validate --loopback measures and writes it on the host;
 * tapless correlate --calibration HOST=FILE applies it.
 *
 *   # comment
 *   host NAME                     the host it was measured on (optional)
 *   measured TEXT...              how and when (optional, kept as text)
 *   stamp tx|rx hw|sw offset NS spread NS [samples N]
 *
 * offset is stamp - wire (positive: the stamp is taken after the frame
 * left or arrived), so the wire time is stamp - offset; spread is how far
 * a corrected stamp may be from the wire time, |stamp - offset - wire| <=
 * spread (>= 0). samples: how many measurements gave it (absent or 0: a
 * configured figure, not measured). At most one stamp line per direction
 * and source.
 */
#ifndef TAPLESS_CALIB_H
#define TAPLESS_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CALIB_ERRBUF 512
#define CALIB_MAX_NS 1000000000LL	/* |offset| and spread: at most 1 s */

enum calib_dir { CALIB_TX, CALIB_RX, CALIB_DIRS };
enum calib_src { CALIB_HW, CALIB_SW, CALIB_SRCS };

struct calib_term {
	bool set;
	int64_t offset_ns;	/* stamp - wire */
	int64_t spread_ns;	/* |corrected stamp - wire| <= this */
	uint64_t samples;	/* 0: configured, not measured */
};

struct calib {
	struct calib_term t[CALIB_DIRS][CALIB_SRCS];
	char host[64];		/* "" when the file names none */
	char measured[256];	/* "" when the file says nothing */
};

/* Read path into *c (zeroed first). Returns 0; -errno when it cannot be
 * read; -EINVAL for bad content, with err as "PATH:LINE: why" (an unknown
 * keyword, a direction or source not in the format, a number out of
 * range, a second line for one direction and source, a line too long).
 * A file with no stamp line is valid: it calibrates nothing. */
int calib_read(struct calib *c, const char *path, char err[CALIB_ERRBUF]);

/* As calib_read(), from buf[0..len) (any bytes: a NUL is bad content),
 * name standing for PATH in err. calib_read() reads the file through it. */
int calib_parse(struct calib *c, const char *buf, size_t len,
		const char *name, char err[CALIB_ERRBUF]);

/* Write c to path: a temporary file beside it, then renamed, so path is
 * never left half written. Returns 0 or -errno with err naming the path;
 * -EINVAL, writing nothing, for a c that would not read back the same (a
 * term out of range, a host that is not one field, a measured text with
 * a line break, a '#' or blanks at either end). */
int calib_write(const struct calib *c, const char *path,
		char err[CALIB_ERRBUF]);

/* "tx"/"rx", "hw"/"sw". */
const char *calib_dir_name(enum calib_dir d);
const char *calib_src_name(enum calib_src s);

#endif
