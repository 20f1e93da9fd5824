/* probe.h — what the FIX probes (tapless-venue, tapless-algo) share: TCP
 * addresses, a FIX session on a stamped and recorded socket, the probe's own
 * capture file, CPU pinning and the per-session part of the summary.
 *
 * A probe_conn is one TCP connection carrying one FIX session. Every message
 * sent and received goes through sockcap (sockcap.h), so it is stamped by the
 * timestamping core and written, with the socket's real addresses, ports and
 * TCP sequence numbers, to the probe's pcapng file and/or handed to
 * tapless-capd.
 */
#ifndef TAPLESS_PROBE_H
#define TAPLESS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fix/fixsess.h"	/* fixsess_app_fn */

struct opts;
struct pcapng_writer;
struct printer;
struct sockcap;
struct ts_sock;
struct txsock_client;

/* A probe_*() message: an address, a path or an option and why. */
#define PROBE_ERRBUF 256

/* Option rows every FIX probe has, for its opt_def table (opts.h), after
 * its own: the sessions' addresses, recording, stamping and output, and
 * the standard ones (PROG_OPT_*: include base/prog.h). */
#define PROBE_OPTS(md_default, ord_default) \
	{ "md", 0, OPT_STRING, md_default, 0, 0, NULL, "ADDR:PORT", "market data session (session 1)", 0 }, \
	{ "ord", 0, OPT_STRING, ord_default, 0, 0, NULL, "ADDR:PORT", "order session (session 2)", 0 }, \
	{ "heartbeat", 0, OPT_INT, "30", 1, 3600, NULL, "SECONDS", "FIX HeartBtInt", 0 }, \
	{ "max_msg", 0, OPT_INT, "8192", 256, 1048576, NULL, "BYTES", "largest FIX message taken from the peer", 0 }, \
	{ "write", 'w', OPT_STRING, NULL, 0, 0, NULL, "FILE", "write every message sent and received, stamped, to FILE (pcapng)", 0 }, \
	{ "tx_socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH", "hand sent frames and their TX stamps to tapless-capd at PATH", 0 }, \
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, probe_modes, "MODE", "stamps: auto, hw or sw", 0 }, \
	{ "interface", 'i', OPT_STRING, NULL, 0, 0, NULL, "IFACE", "interface the sessions use (hardware stamps, file)", 0 }, \
	{ "cpu", 0, OPT_INT, "-1", -1, 4095, NULL, "N", "pin to CPU N", 0 }, \
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the summary as JSON", 0 }, \
	PROG_OPT_LOG_LEVEL, PROG_OPT_VERSION, PROG_OPT_HELP

extern const char *const probe_modes[];

/* What every connection of one probe shares. */
struct probe_ctx {
	int mode;			/* enum ts_mode */
	const char *ifname;		/* for hardware stamps and IDB names */
	struct pcapng_writer *w;	/* the --write file, or NULL */
	struct txsock_client *txc;	/* --tx-socket, or NULL */
};

struct probe_conn {
	const char *name;	/* "md", "orders": for logs and summaries */
	int fd;
	struct ts_sock *ts;
	struct sockcap *sc;
	struct fixsess *fs;
};

/* A listening TCP socket at spec with software RX stamping switched on
 * (ts_listen_enable). Returns the fd or -errno; err says what failed. */
int probe_listen(const char *spec, char err[PROBE_ERRBUF]);

/* Connect to spec, retrying for up to wait_ms while nobody listens yet (the
 * venue may start after the algo). Returns the fd or -errno. */
int probe_connect(const char *spec, int wait_ms, char err[PROBE_ERRBUF]);

/* Stamp, record and run a FIX session on the connected fd (taken over: it
 * is closed by probe_conn_close). Returns 0 or -errno with err set. */
int probe_conn_open(struct probe_conn *c, const char *name, int fd,
		    const struct probe_ctx *x, const struct fixsess_config *fc,
		    char err[PROBE_ERRBUF]);
void probe_conn_close(struct probe_conn *c);

/* fixsess_read() on c, logging why the session ended when it did (a
 * protocol error, the peer leaving without Logout, an I/O error). Same
 * returns. */
int probe_conn_read(struct probe_conn *c, int64_t now_ns, fixsess_app_fn fn,
		    void *arg);

/* What poll(2) reported for c (revents): POLLERR first goes through
 * sockcap_pollerr() (TX stamps raise it; only a real socket error counts),
 * then data is read as probe_conn_read(). Returns 0, probe_conn_read()'s
 * error, or the socket's -errno (logged) unless the peer's Logout ended
 * the session first. */
int probe_conn_event(struct probe_conn *c, short revents, int64_t now_ns,
		     fixsess_app_fn fn, void *arg);

/* End a run: Logout with text on every session of c[0..n) still logged on,
 * then keep reading (application messages to fn[i]) until each Logout is
 * answered or 2 s pass. */
void probe_end(struct probe_conn *const *c, const fixsess_app_fn *fn, int n,
	       void *arg, const char *text);

/* Reap TX stamps and write finished sends (now_ns < 0: all, at exit). */
void probe_conn_stamps(struct probe_conn *c, int64_t now_ns);

/* The session's counters and stamps, under key name. Returns the stamps
 * lost (TX and RX) so the caller can total them. */
uint64_t probe_conn_print(struct printer *p, const struct probe_conn *c);

/* With --tx-socket: what was handed to tapless-capd (after waiting up to
 * a second for it to take what is queued), under key tx_socket. Returns
 * the records dropped (the queue full, or no capd), which are stamps lost
 * to the file as much as unstamped sends; 0 without --tx-socket. */
uint64_t probe_tx_print(struct printer *p, struct probe_ctx *x);

/* From the PROBE_OPTS options: stamp mode and interface, --cpu pinning,
 * the --write file (appl in its section header) and the --tx-socket
 * client. Returns 0 or -errno with err set. */
int probe_start(struct probe_ctx *x, const struct opts *o, const char *appl,
		char err[PROBE_ERRBUF]);

/* Close the file under its final name and hand capd what is queued.
 * Returns 0 or -errno (the file could not be completed). */
int probe_finish(struct probe_ctx *x);

/* Pin the calling thread to cpu (>= 0). Returns 0 or -errno. */
int probe_pin(int cpu);

#endif
