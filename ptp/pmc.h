/* pmc.h — a management client for ptp4l's UNIX datagram socket
 * (uds_address, /var/run/ptp4l by default), speaking mgmt.h's messages.
 *
 * tapless-syncd asks ptp4l for its state (TIME_STATUS_NP, PORT_DATA_SET, ...)
 * and subscribes to its notifications through this, never through pmc(8)'s
 * text. Non-blocking throughout: the daemon polls pmc_fd() in its main loop.
 *
 * The client binds its own path (ptp4l answers to the sender's address, so
 * an unbound socket would get no reply) and sends with sendto() every time
 * rather than connect(): ptp4l recreates its socket when it restarts, and a
 * connected socket would keep pointing at the old one. Only datagrams from
 * the server path are taken; others are dropped unread.
 *
 * Each client has its own source port identity: clock identity
 * 74:6c:00:ff:fe and the low 24 bits of the pid ("746c00.fffe.xxxxxx"),
 * port number counting up from 1 for each pmc_open() in the process. ptp4l
 * keys subscriptions by that identity, so two clients never share one.
 *
 * Requests go to every port (target all ones, port 0xffff) with boundary
 * hops 0, as pmc -b 0 sends them: ptp4l answers clock-wide IDs
 * (TIME_STATUS_NP, CURRENT_DATA_SET, PARENT_DATA_SET, SUBSCRIBE_EVENTS_NP)
 * once, from port 0 of its clock identity, and port IDs (PORT_DATA_SET,
 * PORT_PROPERTIES_NP, PORT_STATS_NP) once from each port, with the
 * request's sequence id. An ID ptp4l does not know gets a
 * MANAGEMENT_ERROR_STATUS (NO_SUCH_ID) from each port.
 *
 * What ptp4l 3.1.1 does with a subscription (seen live with two ptp4l in
 * namespaces, software stamping, the client free_running):
 * - The SET SUBSCRIBE_EVENTS_NP is answered with a RESPONSE echoing the
 *   duration and the mask; GET SUBSCRIBE_EVENTS_NP gives the seconds left
 *   and the mask (0 and empty once expired). A SET from the same source
 *   port identity replaces the subscription (mask, reply address,
 *   expiry); an empty mask cancels it.
 * - NOTIFY_PORT_STATE: on each change of a port's state, a RESPONSE
 *   carrying that port's PORT_DATA_SET, from the port's identity. Nothing
 *   is sent at subscription time: GET PORT_DATA_SET once after subscribing
 *   for the state to start from.
 * - NOTIFY_TIME_SYNC: nothing. 3.1.1 stores and echoes the bit but has no
 *   such event (its pmc knows only NOTIFY_PORT_STATE; TIME_STATUS_NP
 *   pushes came in a later linuxptp), and none arrived in 8 s of Syncs
 *   at 8/s. Poll TIME_STATUS_NP and CURRENT_DATA_SET instead.
 * - Notifications carry the subscriber's own sequence counter (0, 1, ...
 *   per notification sent to it), unrelated to the requests' ids, with
 *   target the subscriber's identity and boundary hops 1.
 * - The subscription ends duration seconds after the last SET, counted in
 *   whole CLOCK_MONOTONIC seconds inside ptp4l, so it may end up to a
 *   second early; ptp4l then drops it silently (it logs "subscriber ...
 *   timed out"). Renew every duration / 2 or so.
 * - A stopped ptp4l removes its socket (sends fail with -ENOENT); a
 *   restarted one answers the same client at once but has no
 *   subscribers: subscribe again after ptp4l comes back.
 */
#ifndef TAPLESS_PMC_H
#define TAPLESS_PMC_H

#include <stdint.h>

struct pmc;
struct mgmt_msg;

/* Bind a SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC socket at client_path
 * (mode 0660, as linuxptp's own clients; a stale socket there is removed
 * first, anything else there is -EEXIST) for talking to the ptp4l socket
 * at server_path in domain. ptp4l need not be running yet. Returns 0 or
 * -errno: -ENAMETOOLONG for a path that does not fit a sockaddr_un,
 * -EINVAL for an empty one. */
int pmc_open(struct pmc **out, const char *server_path,
	     const char *client_path, uint8_t domain);

/* The socket, to poll for POLLIN. */
int pmc_fd(const struct pmc *p);

/* Send GET id to all ports. Returns the sequence id used (0..65535), or
 * -errno: -ENOENT (no socket at server_path) and -ECONNREFUSED (a socket
 * file nobody reads) mean ptp4l is not running; -EAGAIN its queue is
 * full. */
int pmc_get(struct pmc *p, uint16_t id);

/* SET SUBSCRIBE_EVENTS_NP: events (MGMT_EVENT(MGMT_NOTIFY_*) bits) for
 * duration_s seconds. Returns the sequence id or -errno as pmc_get(). */
int pmc_subscribe(struct pmc *p, uint16_t duration_s, uint64_t events);

/* Take one waiting message: 1 with *msg decoded, 0 when nothing is
 * waiting, -EBADMSG for a datagram that is not a well-formed management
 * message (pmc_error() says "byte N: why"; the datagram is consumed), or
 * another -errno from recvfrom(). */
int pmc_recv(struct pmc *p, struct mgmt_msg *msg);

/* The last -EBADMSG's "byte N: why", kept in a buffer of PMC_ERRBUF
 * bytes. */
#define PMC_ERRBUF 96
const char *pmc_error(const struct pmc *p);

/* Close the socket and remove client_path. NULL is allowed. */
void pmc_close(struct pmc *p);

#endif
