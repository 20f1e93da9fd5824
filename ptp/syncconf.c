/* syncconf.c — tapless.conf: read, check, resolve. See syncconf.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "base/metrics.h"
#include "base/opts.h"
#include "base/prog.h"
#include "ptp/syncconf.h"
#include "base/xalloc.h"

const char *const syncconf_role_names[] = { "auto", "client", "server",
					    "none", NULL };
const char *const syncconf_profile_names[] = { "default", "enterprise",
					       "g8275.1", NULL };
static const char *const syncconf_stamping_names[] = { "auto", "hardware",
						       "software", NULL };
const char *const syncconf_transport_names[] = { "UDPv4", "UDPv6", "L2", NULL };
const char *const syncconf_delay_names[] = { "E2E", "P2P", NULL };
static const char *const syncconf_system_names[] = { "auto", "yes", "no",
						     NULL };

/* Keys follow linuxptp's habit (underscores) so an operator's reflexes
 * carry over; on the command line they are hyphenated like every other
 * tapless option (opts.h): journal_dir is --journal-dir. */
const struct opt_def syncconf_opts[] = {
	{ "domain", 0, OPT_INT, "0", 0, 255, NULL, "N", "PTP domain (the profile's when not given)", 0 },
	{ "profile", 0, OPT_ENUM, "default", 0, 0, syncconf_profile_names, "NAME", "PTP profile: default, enterprise or g8275.1", 0 },
	{ "journal_dir", 0, OPT_STRING, "/var/lib/tapless", 0, 0, NULL, "DIR", "where the sync journal is written", 0 },
	{ "control_socket", 0, OPT_STRING, SYNCCONF_DEFAULT_SOCKET, 0, 0, NULL, "PATH", "UNIX socket tapless status asks", 0 },
	{ "control_group", 0, OPT_STRING, NULL, 0, 0, NULL, "GROUP", "group that may ask on the control socket (mode 0660; default: the daemon's group)", 0 },
	{ "run_dir", 0, OPT_STRING, "/run/tapless", 0, 0, NULL, "DIR", "generated ptp4l/phc2sys configs and their sockets", 0 },
	{ "hostname", 0, OPT_STRING, NULL, 0, 0, NULL, "NAME", "host name in the journal (default: this host's)", 0 },
	{ "free_running", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "measure only: never adjust a clock", 0 },
	{ "sync_system_clock", 0, OPT_ENUM, "auto", 0, 0, syncconf_system_names, "WHEN", "phc2sys keeps CLOCK_REALTIME on the PTP clock: auto, yes or no", 0 },
	{ "priority1", 0, OPT_INT, "128", 0, 255, NULL, "N", "priority1 of this clock as a grandmaster candidate", 0 },
	{ "priority2", 0, OPT_INT, "128", 0, 255, NULL, "N", "priority2 of this clock as a grandmaster candidate", 0 },
	{ "sync_threshold", 0, OPT_INT, "1000", 1, 1e9, NULL, "NS", "in sync while the error bound is at most NS", 0 },
	{ "asymmetry_allowance", 0, OPT_INT, "0", 0, 1e9, NULL, "NS", "path asymmetry allowed for in every bound", 0 },
	{ "asymmetry_fraction", 0, OPT_DOUBLE, "0.1", 0, 1, NULL, "F", "and F times the mean path delay on top", 0 },
	{ "holdover_drift", 0, OPT_INT, NULL, 0, 1000000, NULL, "PPB", "drift limit in holdover: the bound grows PPB ns a second while nothing is measured (default by clock: 100 hardware, 1000 software, 100000 free running)", 0 },
	{ "sample_interval", 0, OPT_DURATION, "1000", 100, 60000, NULL, "TIME", "one journal sample per clock this often", OPT_MS },
	{ "journal_rotate_size", 0, OPT_INT, "64", 0, 100000, NULL, "MB", "start a new journal past MB million bytes (0: never)", 0 },
	{ "journal_keep", 0, OPT_INT, "10", 0, 100000, NULL, "N", "rotated journals kept (0: all)", 0 },
	{ "metrics_port", 0, OPT_INT, "0", 0, 65535, NULL, "PORT", "OpenMetrics on PORT (0: off)", 0 },
	{ "metrics_address", 0, OPT_STRING, "localhost", 0, 0, NULL, "ADDR", "metrics on ADDR: localhost (127.0.0.1 and ::1) or one numeric address", 0 },
	{ "ptp4l", 0, OPT_STRING, "ptp4l", 0, 0, NULL, "PATH", "the ptp4l program", 0 },
	{ "phc2sys", 0, OPT_STRING, "phc2sys", 0, 0, NULL, "PATH", "the phc2sys program", 0 },
	{ "ptp4l_option", 0, OPT_LIST, NULL, 0, 0, NULL, "'KEY VALUE'", "extra ptp4l [global] setting, as given", 0 },
	{ "config", 'f', OPT_STRING, SYNCCONF_DEFAULT_FILE, 0, 0, NULL, "FILE", "read the configuration from FILE", OPT_CLI_ONLY },
	{ "dry_run", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "check the configuration, print what ptp4l and phc2sys would get, exit", OPT_CLI_ONLY | OPT_OLD_LETTER('n') },
	PROG_OPT_SYSLOG,
	PROG_OPT_LOG_LEVEL,
	PROG_OPT_VERSION,
	PROG_OPT_HELP,
	OPT_END
};

/* No defaults here: an unset key falls to the profile (syncconf.h). */
const struct opt_def syncconf_port_opts[] = {
	{ "role", 0, OPT_ENUM, "auto", 0, 0, syncconf_role_names, "ROLE", "client, server (grandmaster candidate), auto (BMCA) or none (no PTP; its PHC is kept aligned)", 0 },
	{ "time_stamping", 0, OPT_ENUM, "auto", 0, 0, syncconf_stamping_names, "HOW", "auto (hardware when the NIC has a PHC), hardware or software", 0 },
	{ "transport", 0, OPT_ENUM, NULL, 0, 0, syncconf_transport_names, "T", "UDPv4, UDPv6 or L2", 0 },
	{ "delay_mechanism", 0, OPT_ENUM, NULL, 0, 0, syncconf_delay_names, "M", "E2E or P2P", 0 },
	{ "profile", 0, OPT_ENUM, NULL, 0, 0, syncconf_profile_names, "NAME", "this port's profile", 0 },
	{ "domain", 0, OPT_INT, NULL, 0, 255, NULL, "N", "this port's domain", 0 },
	{ "sync_interval", 0, OPT_INT, NULL, -7, 4, NULL, "LOG2S", "log2 of the Sync interval in seconds", 0 },
	{ "announce_interval", 0, OPT_INT, NULL, -3, 4, NULL, "LOG2S", "log2 of the Announce interval", 0 },
	{ "announce_timeout", 0, OPT_INT, NULL, 2, 255, NULL, "N", "Announce intervals before the master is given up", 0 },
	{ "delay_req_interval", 0, OPT_INT, NULL, -7, 6, NULL, "LOG2S", "log2 of the minimum Delay_Req interval", 0 },
	{ "ptp4l_option", 0, OPT_LIST, NULL, 0, 0, NULL, "'KEY VALUE'", "extra ptp4l setting for this port, as given", 0 },
	OPT_END
};

struct syncconf_parse {
	struct syncconf *c;
	struct opts *po[SYNCCONF_MAX_PORTS];	/* per port, while parsing */
};

static int syncconf_fail(char err[SYNCCONF_ERRBUF], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int syncconf_fail(char err[SYNCCONF_ERRBUF], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, SYNCCONF_ERRBUF, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool syncconf_ifname_ok(const char *s)
{
	size_t n = strlen(s);

	/* What the kernel accepts for a link name (dev_valid_name()). */
	if (!n || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strcspn(s, "/: \t") == n;
}

static int syncconf_extra_ok(const char *s, const char *where,
			     char err[SYNCCONF_ERRBUF]);

static int syncconf_section(void *arg, const char *section, const char *key,
			    const char *value, const char *path, int line,
			    char err[SYNCCONF_ERRBUF])
{
	struct syncconf_parse *sp = arg;
	struct syncconf *c = sp->c;
	struct syncconf_port *p;
	char e[OPTS_ERRBUF];
	unsigned i;

	if (!key) {		/* the section header */
		for (i = 0; i < c->nports; i++)
			if (!strcmp(c->port[i].name, section))
				return syncconf_fail(err, "%s:%d: [%s] given twice "
						     "(first at line %d)", path,
						     line, section,
						     c->port[i].line);
		if (!syncconf_ifname_ok(section))
			return syncconf_fail(err, "%s:%d: [%s] is not an "
					     "interface name", path, line,
					     section);
		if (c->nports == SYNCCONF_MAX_PORTS)
			return syncconf_fail(err, "%s:%d: more than %d interfaces",
					     path, line, SYNCCONF_MAX_PORTS);
		p = &c->port[c->nports];
		sp->po[c->nports++] = opts_create(syncconf_port_opts);
		snprintf(p->name, sizeof(p->name), "%s", section);
		p->line = line;
		return 0;
	}
	/* Keys follow their header: the port is the last one opened. */
	i = c->nports - 1;
	if (!*value)
		return syncconf_fail(err, "%s:%d: %s needs a value", path, line, key);
	if (opts_name_eq(key, "ptp4l_option")) {
		const char *const *items;
		char where[PATH_MAX + 64];
		int rc;

		snprintf(where, sizeof(where), "%s:%d: [%s]", path, line, section);
		rc = syncconf_extra_ok(value, where, err);
		if (rc)
			return rc;
		if (opts_list(sp->po[i], "ptp4l_option", &items) == SYNCCONF_MAX_EXTRA)
			return syncconf_fail(err, "%s: more than %d ptp4l_option",
					     where, SYNCCONF_MAX_EXTRA);
	}
	if (opts_set_value(sp->po[i], key, value, false, e)) {
		if (!strncmp(e, "unknown option", 14))
			return syncconf_fail(err, "%s:%d: unknown key '%s' in [%s]",
					     path, line, key, section);
		return syncconf_fail(err, "%s:%d: [%s] %s", path, line, section,
				     e);
	}
	return 0;
}

static int syncconf_enum_or_unset(const struct opts *o, const char *name)
{
	return opts_given(o, name) ? opts_enum(o, name) : SYNCCONF_UNSET;
}

static int syncconf_int_or_unset(const struct opts *o, const char *name)
{
	return opts_given(o, name) ? (int)opts_int(o, name) : SYNCCONF_UNSET;
}

/* What the daemon relies on: its management socket, stamps on every
 * packet, the stamping it chose, and never steering when told not to. */
static const char *const syncconf_owned[] = {
	"uds_address", "uds_ro_address", "hwts_filter", "time_stamping",
	"free_running", NULL,
};

/* One ptp4l_option item, where it was given ("PATH:LINE: [eth1]"). */
static int syncconf_extra_ok(const char *s, const char *where,
			     char err[SYNCCONF_ERRBUF])
{
	/* One setting per item: a newline would let a value smuggle in a
	 * section header of ptp4l's file. */
	if (strchr(s, '\n') || strchr(s, '[') || !strchr(s, ' '))
		return syncconf_fail(err, "%s: ptp4l_option '%s' is not "
				     "'KEY VALUE'", where, s);
	/* ptp4l refuses a key it does not know by exiting, which would be
	 * a restart loop here: a name that cannot be one (quotes copied
	 * from the command line's 'KEY VALUE') is refused now. */
	size_t name = strcspn(s, " \t");

	for (size_t k = 0; k < name; k++)
		if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
		      (s[k] >= '0' && s[k] <= '9') || s[k] == '_'))
			return syncconf_fail(err, "%s: ptp4l_option '%s': '%.*s' "
					     "is not a ptp4l setting name (letters, "
					     "digits and '_'; in a file, no quotes)",
					     where, s, (int)name, s);
	for (size_t w = 0; syncconf_owned[w]; w++) {
		size_t kl = strlen(syncconf_owned[w]);

		if (!strncmp(s, syncconf_owned[w], kl) &&
		    (s[kl] == ' ' || s[kl] == '\t'))
			return syncconf_fail(err, "%s: ptp4l_option %s: "
					     "tapless-syncd sets it itself",
					     where, syncconf_owned[w]);
	}
	return 0;
}

/* Where [global]'s key (its item-th item, for a list) was set:
 * "PATH:LINE", or "command line --key" (as the command line spells it). */
static void syncconf_global_where(char *dst, size_t size, const struct opts *o,
				  const char *path, const char *key, size_t item)
{
	int line = opts_line(o, key, item);
	char name[OPTS_NAME_MAX];

	if (line) {
		snprintf(dst, size, "%s:%d", path, line);
		return;
	}
	opts_cli_name(name, sizeof(name), key);
	snprintf(dst, size, "command line --%s", name);
}

/* Copy o's ptp4l_option items into dst, checked. where: the port's
 * "PATH:LINE: [eth1]", or NULL for [global], whose items name their own
 * line (opts_line). */
static int syncconf_extra(char **dst, unsigned *n, const struct opts *o,
			  const char *path, const char *where,
			  char err[SYNCCONF_ERRBUF])
{
	const char *const *items;
	size_t k = opts_list(o, "ptp4l_option", &items);
	char at[PATH_MAX + 64];

	for (size_t j = 0; j < k; j++) {
		const char *s = items[j];
		int rc;

		if (!where)
			syncconf_global_where(at, sizeof(at), o, path,
					      "ptp4l_option", j);
		else
			snprintf(at, sizeof(at), "%s", where);
		rc = syncconf_extra_ok(s, at, err);
		if (rc)
			return rc;
		if (*n == SYNCCONF_MAX_EXTRA)
			return syncconf_fail(err, "%s: more than %d ptp4l_option",
					     at, SYNCCONF_MAX_EXTRA);
		dst[(*n)++] = xstrdup(s);
	}
	return 0;
}

static void syncconf_port_take(struct syncconf_port *p, const struct opts *o)
{
	p->role = opts_enum(o, "role");
	p->stamping = opts_enum(o, "time_stamping");
	p->transport = syncconf_enum_or_unset(o, "transport");
	p->delay_mechanism = syncconf_enum_or_unset(o, "delay_mechanism");
	p->profile = syncconf_enum_or_unset(o, "profile");
	p->domain = syncconf_int_or_unset(o, "domain");
	p->sync_interval = syncconf_int_or_unset(o, "sync_interval");
	p->announce_interval = syncconf_int_or_unset(o, "announce_interval");
	p->announce_timeout = syncconf_int_or_unset(o, "announce_timeout");
	p->delay_req_interval = syncconf_int_or_unset(o, "delay_req_interval");
}

static int syncconf_check_path(const struct syncconf *c, const char *key,
			       size_t room, char err[SYNCCONF_ERRBUF])
{
	const char *v = opts_str(c->opts, key);
	char at[PATH_MAX + 64];

	syncconf_global_where(at, sizeof(at), c->opts, c->path, key, 0);
	if (!v || !*v)
		return syncconf_fail(err, "%s: %s is empty", at, key);
	if (v[0] != '/')
		return syncconf_fail(err, "%s: %s '%s' is not an absolute path",
				     at, key, v);
	if (strlen(v) + room >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return syncconf_fail(err, "%s: %s '%s' is too long for a UNIX "
				     "socket path", at, key, v);
	return 0;
}

int syncconf_load(struct syncconf *c, struct opts *o, const char *path,
		  char err[SYNCCONF_ERRBUF])
{
	struct syncconf_parse sp = { .c = c };
	int rc;

	memset(c, 0, sizeof(*c));
	c->opts = o;
	c->path = path;
	rc = opts_parse_file(o, path, syncconf_section, &sp, err);
	for (unsigned i = 0; !rc && i < c->nports; i++) {
		char where[PATH_MAX + 64];

		/* Each item was checked at its own line while parsing. */
		syncconf_port_take(&c->port[i], sp.po[i]);
		snprintf(where, sizeof(where), "%s:%d: [%s]", path,
			 c->port[i].line, c->port[i].name);
		rc = syncconf_extra(c->port[i].extra, &c->port[i].nextra,
				    sp.po[i], path, where, err);
	}
	for (unsigned i = 0; i < c->nports; i++)
		opts_destroy(sp.po[i]);
	if (!rc) {
		/* Checked like the ports' (and dropped: ptpgen reads them
		 * from the options). */
		char *g[SYNCCONF_MAX_EXTRA];
		unsigned ng = 0;

		rc = syncconf_extra(g, &ng, o, path, NULL, err);
		while (ng)
			free(g[--ng]);
	}
	if (!rc && !c->nports)
		rc = syncconf_fail(err, "%s: no interface section; add one, "
				   "e.g. [eth1] with 'role client'", path);
	/* The longest names made under run_dir: "/ptp4l-phc123.sock". */
	if (!rc)
		rc = syncconf_check_path(c, "control_socket", 0, err);
	if (!rc)
		rc = syncconf_check_path(c, "run_dir", 24, err);
	if (!rc)
		rc = syncconf_check_path(c, "journal_dir", 0, err);
	if (!rc && metrics_check_addr(opts_str(o, "metrics_address"))) {
		char at[PATH_MAX + 64];

		syncconf_global_where(at, sizeof(at), o, path,
				      "metrics_address", 0);
		rc = syncconf_fail(err, "%s: metrics_address '%s' is neither "
				   "localhost nor a numeric IPv4 or IPv6 address",
				   at, opts_str(o, "metrics_address"));
	}
	if (rc) {
		c->opts = NULL;		/* the caller still owns o */
		syncconf_free(c);
	}
	return rc;
}

void syncconf_free(struct syncconf *c)
{
	for (unsigned i = 0; i < c->nports; i++)
		for (unsigned j = 0; j < c->port[i].nextra; j++)
			free(c->port[i].extra[j]);
	if (c->opts)
		opts_destroy(c->opts);
	memset(c, 0, sizeof(*c));
}

const struct syncconf_port *syncconf_port(const struct syncconf *c,
					  const char *ifname)
{
	for (unsigned i = 0; i < c->nports; i++)
		if (!strcmp(c->port[i].name, ifname))
			return &c->port[i];
	return NULL;
}

int syncconf_domain(const struct syncconf *c, const struct syncconf_port *p,
		    int profile_domain)
{
	if (p->domain != SYNCCONF_UNSET)
		return p->domain;
	if (opts_given(c->opts, "domain") || profile_domain < 0)
		return (int)opts_int(c->opts, "domain");
	return profile_domain;
}

enum syncconf_profile syncconf_profile(const struct syncconf *c,
				       const struct syncconf_port *p)
{
	if (p->profile != SYNCCONF_UNSET)
		return p->profile;
	return opts_enum(c->opts, "profile");
}
