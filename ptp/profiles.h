/* profiles.h — the profile templates of ptp/profiles/, built into the
 * program (build/gen/profiles.c is generated from them by the Makefile) so
 * the daemon never depends on where data files were installed. */
#ifndef TAPLESS_PROFILES_H
#define TAPLESS_PROFILES_H

struct profiles_entry {
	const char *name;	/* file name without .cfg */
	const char *text;
};

/* Terminated by an entry with a NULL name. */
extern const struct profiles_entry profiles_table[];

#endif
