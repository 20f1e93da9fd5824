/* expstate.h — where an export of one host's captures stands: how many of
 * its records (and transactions) the database has taken, and where in the
 * captures the last of them came from. A small text file per input and
 * destination, replaced whole (written aside, synced, renamed) after every
 * batch the database acknowledged, so that a rerun, or a restart after a
 * crash or a server outage, goes on after the last row known to be in.
 *
 * The file (tapless-export(8), FILES):
 *   # tapless export state
 *   version 1
 *   host NAME
 *   input PATH
 *   destination URL TABLE
 *   records N
 *   transactions N
 *   at FILE OFFSET INDEX
 */
#ifndef TAPLESS_EXPSTATE_H
#define TAPLESS_EXPSTATE_H

#include <stdbool.h>
#include <stdint.h>

#define EXPSTATE_ERRBUF 512
#define EXPSTATE_PATH 4096

struct expstate {
	uint64_t records, txns;	/* taken by the database */
	/* The packet the last taken record came out at (the reader's
	 * position then), and how many records before it came out there. */
	bool have_at;
	char at_file[EXPSTATE_PATH];
	uint64_t at_offset, at_index;
};

/* Read path into st. Returns 0, -ENOENT when there is none (st zeroed),
 * or -EINVAL when it is not a state file, or belongs to another host,
 * input or destination than these (err names the file and line). */
int expstate_load(const char *path, const char *host, const char *input,
		  const char *dest, struct expstate *st,
		  char err[EXPSTATE_ERRBUF]);

/* Replace path with st. Returns 0 or -errno, with err. */
int expstate_save(const char *path, const char *host, const char *input,
		  const char *dest, const struct expstate *st,
		  char err[EXPSTATE_ERRBUF]);

#endif
