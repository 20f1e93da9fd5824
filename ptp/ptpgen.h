/* ptpgen.h — from tapless.conf to the linuxptp processes that carry it out:
 * which ptp4l instances, with which generated configuration, and which
 * phc2sys processes keep the other clocks aligned.
 *
 * One ptp4l per clock: the ports whose stamps come from the same PHC (or,
 * with software stamps, from CLOCK_REALTIME) share one instance, because a
 * clock can follow only one servo. A clock's ports must therefore agree on
 * domain and profile. Every instance gets a private uds_address and
 * hwts_filter full, so a capture on the same NIC keeps hardware stamps on
 * every packet rather than only on PTP's.
 *
 * phc2sys: in automatic mode (-a) on the first hardware instance with a
 * port that can follow a master, with -r when CLOCK_REALTIME is to follow
 * (sync_system_clock, and no software-stamped ptp4l steers it already),
 * and one "-s PORT -c IFACE" per role none interface whose PHC is not
 * already a ptp4l clock. None when free_running.
 *
 * Pure: the host's facts (which PHC each port has) come in as arguments,
 * so tests plan for hardware this machine does not have.
 */
#ifndef TAPLESS_PTPGEN_H
#define TAPLESS_PTPGEN_H

#include <stdbool.h>
#include <sys/un.h>

#include "ptp/syncconf.h"

#define PTPGEN_MAX_ARGS 24
#define PTPGEN_ERRBUF SYNCCONF_ERRBUF	/* syncd keeps one buffer for both */

/* What the host says about one configured port, in syncconf order. */
struct ptpgen_port_info {
	int phc;	/* PHC index, -1: none */
	bool hw;	/* the NIC can stamp in hardware */
};

/* A process to run: name for logs and status, argv NULL-terminated. */
struct ptpgen_proc {
	char name[32];
	char *argv[PTPGEN_MAX_ARGS];
};

struct ptpgen_instance {
	char clock[16];		/* "phc0", or "sys" for software stamps */
	int phc;		/* -1 for sys */
	bool hw;
	int domain;
	enum syncconf_profile profile;
	unsigned port[SYNCCONF_MAX_PORTS];	/* indexes into syncconf */
	unsigned nports;
	bool follows;		/* has a client or auto port */
	char cfg_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char uds_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char pmc_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *cfg_text;		/* the generated ptp4l configuration */
	struct ptpgen_proc proc;
};

/* A phc2sys and the clock it steers onto the reference instance's PHC. */
struct ptpgen_phc2sys {
	struct ptpgen_proc proc;
	char clock[16];		/* "sys", or "phcN" */
	int phc;		/* -1 for CLOCK_REALTIME */
};

struct ptpgen_plan {
	struct ptpgen_instance inst[SYNCCONF_MAX_PORTS];
	unsigned ninst;
	struct ptpgen_phc2sys phc2sys[SYNCCONF_MAX_PORTS];
	unsigned nphc2sys;
	int phc2sys_ref;	/* the instance phc2sys follows, -1: none */
	bool phc2sys_sys;	/* and it steers CLOCK_REALTIME (-r) */
};

/* Plan for c on a host described by info[c->nports]. Returns 0, or
 * -EINVAL with err naming the file and line of the conflict (ports of one
 * clock in two domains or profiles, hardware asked of a NIC without). */
int ptpgen_plan(struct ptpgen_plan *plan, const struct syncconf *c,
		const struct ptpgen_port_info *info, char err[PTPGEN_ERRBUF]);
void ptpgen_plan_free(struct ptpgen_plan *plan);

/* Write each instance's cfg_text to its cfg_path, whole or not at all
 * (temporary file, fsync, rename). Returns 0 or -errno with err naming the
 * path. */
int ptpgen_write(const struct ptpgen_plan *plan, char err[PTPGEN_ERRBUF]);

/* The profile template's text (ptp/profiles/NAME.cfg, built in), and the
 * domain it sets (-1 if none). */
const char *ptpgen_profile_text(enum syncconf_profile p);
int ptpgen_profile_domain(enum syncconf_profile p);

/* The instance whose ptp4l runs the port ifname, or NULL. */
const struct ptpgen_instance *ptpgen_instance_of(const struct ptpgen_plan *plan,
						 const struct syncconf *c,
						 const char *ifname);

#endif
