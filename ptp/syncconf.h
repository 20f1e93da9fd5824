/* syncconf.h — tapless.conf, the one configuration file of tapless-syncd.
 *
 * INI as linuxptp writes it: "key value" lines, '#' comments. [global] holds
 * the host's settings (the daemon's options table, syncconf_opts, which also
 * drives its command line and --help); every other section names a network
 * interface and holds that port's settings (syncconf_port_opts). Documented
 * in tapless.conf(5).
 *
 * This module reads and checks the file; what it means for ptp4l and
 * phc2sys is ptpgen's business. Values a profile decides when the file is
 * silent are left at SYNCCONF_UNSET.
 */
#ifndef TAPLESS_SYNCCONF_H
#define TAPLESS_SYNCCONF_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>

#include "base/opts.h"

#define SYNCCONF_DEFAULT_FILE "/etc/tapless/tapless.conf"
#define SYNCCONF_DEFAULT_SOCKET "/run/tapless/syncd.sock"
#define SYNCCONF_MAX_PORTS 32
#define SYNCCONF_MAX_EXTRA 32
#define SYNCCONF_UNSET INT_MIN
/* Its messages include opts' (the file's keys), so the same room. */
#define SYNCCONF_ERRBUF OPTS_ERRBUF

struct opts;

enum syncconf_role { SYNCCONF_AUTO, SYNCCONF_CLIENT, SYNCCONF_SERVER,
		     SYNCCONF_NONE };
enum syncconf_stamping { SYNCCONF_TS_AUTO, SYNCCONF_TS_HARDWARE,
			 SYNCCONF_TS_SOFTWARE };
enum syncconf_transport { SYNCCONF_UDPV4, SYNCCONF_UDPV6, SYNCCONF_L2 };
enum syncconf_delay { SYNCCONF_E2E, SYNCCONF_P2P };
enum syncconf_profile { SYNCCONF_PROFILE_DEFAULT, SYNCCONF_PROFILE_ENTERPRISE,
			SYNCCONF_PROFILE_G8275_1 };

/* One [interface] section. Enumerated and integer fields the file did not
 * set are SYNCCONF_UNSET: the profile decides them. */
struct syncconf_port {
	char name[IF_NAMESIZE];
	int line;			/* of the section header */
	enum syncconf_role role;
	enum syncconf_stamping stamping;
	int transport;			/* enum syncconf_transport or UNSET */
	int delay_mechanism;		/* enum syncconf_delay or UNSET */
	int profile;			/* enum syncconf_profile or UNSET */
	int domain;			/* 0..255 or UNSET */
	int sync_interval;		/* log2 seconds, or UNSET */
	int announce_interval;
	int announce_timeout;		/* announce intervals, or UNSET */
	int delay_req_interval;
	/* "KEY VALUE" passed to ptp4l's section of this port as given. */
	char *extra[SYNCCONF_MAX_EXTRA];
	unsigned nextra;
};

struct syncconf {
	const char *path;		/* the file read, or "" */
	struct opts *opts;		/* [global] and the command line */
	struct syncconf_port port[SYNCCONF_MAX_PORTS];
	unsigned nports;
};

/* The daemon's options table: every [global] key and the command-line-only
 * options. One table, so the file, the command line and --help agree. */
extern const struct opt_def syncconf_opts[];
/* The keys of an interface section. */
extern const struct opt_def syncconf_port_opts[];

extern const char *const syncconf_role_names[];		/* by enum */
extern const char *const syncconf_profile_names[];
extern const char *const syncconf_transport_names[];	/* as ptp4l spells */
extern const char *const syncconf_delay_names[];

/* Read path into c. o holds the command line already parsed against
 * syncconf_opts (its values win over the file's); c takes it over and
 * syncconf_free() destroys it. Returns 0, or -errno (-ENOENT: no such file)
 * or -EINVAL with err saying "PATH:LINE: why". Checks what can be checked
 * without the host: known keys, values in range, no interface twice, at
 * least one interface, names that fit, paths that fit a UNIX socket. */
int syncconf_load(struct syncconf *c, struct opts *o, const char *path,
		  char err[SYNCCONF_ERRBUF]);
void syncconf_free(struct syncconf *c);

/* The port named ifname, or NULL. */
const struct syncconf_port *syncconf_port(const struct syncconf *c,
					  const char *ifname);

/* Effective domain of p: its own, else [global] domain when given, else
 * the profile's (dflt), else [global] domain's default. */
int syncconf_domain(const struct syncconf *c, const struct syncconf_port *p,
		    int profile_domain);
/* Effective profile of p: its own, else [global] profile. */
enum syncconf_profile syncconf_profile(const struct syncconf *c,
				       const struct syncconf_port *p);

#endif
