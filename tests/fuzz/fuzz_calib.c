/* fuzz_calib — libFuzzer target for the stamp calibration file,
 * tapless-calibration(5) (calib_parse(), which calib_read() reads a file
 * through): any bytes are read or refused with "NAME:LINE: why" in one
 * printable line; what is read holds only terms in range, and written
 * with calib_write() reads back the same. The file sets the offset taken
 * off every stamp of a host: a damaged one must never become a figure. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files/calib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[CALIB_ERRBUF];
	struct calib c, r;
	int rc;

	err[0] = '\0';
	rc = calib_parse(&c, (const char *)data, size, "fuzz", err);
	if (rc) {
		if (rc != -EINVAL || strncmp(err, "fuzz:", 5))
			__builtin_trap();
		for (const char *p = err; *p; p++)
			if (*p < 0x20 || *p >= 0x7f)
				__builtin_trap();
		return 0;
	}
	if (!memchr(c.host, 0, sizeof(c.host)) ||
	    !memchr(c.measured, 0, sizeof(c.measured)))
		__builtin_trap();
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int s = 0; s < CALIB_SRCS; s++) {
			const struct calib_term *t = &c.t[d][s];

			if (!t->set) {
				if (t->offset_ns || t->spread_ns || t->samples)
					__builtin_trap();
				continue;
			}
			if (t->offset_ns < -CALIB_MAX_NS ||
			    t->offset_ns > CALIB_MAX_NS || t->spread_ns < 0 ||
			    t->spread_ns > CALIB_MAX_NS)
				__builtin_trap();
		}
	snprintf(path, sizeof(path), "/tmp/fuzz-calib.%d", (int)getpid());
	if (calib_write(&c, path, err) || calib_read(&r, path, err) ||
	    strcmp(c.host, r.host) || strcmp(c.measured, r.measured))
		__builtin_trap();
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int s = 0; s < CALIB_SRCS; s++)
			if (c.t[d][s].set != r.t[d][s].set ||
			    c.t[d][s].offset_ns != r.t[d][s].offset_ns ||
			    c.t[d][s].spread_ns != r.t[d][s].spread_ns ||
			    c.t[d][s].samples != r.t[d][s].samples)
				__builtin_trap();
	unlink(path);
	return 0;
}
