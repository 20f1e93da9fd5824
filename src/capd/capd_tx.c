/* capd_tx.c — tapless-capd's sender stamps: the TX socket's clients
 * (frame records and keyed stamps) and the stamps BPF takes of a cgroup's
 * sends (--stamp-cgroup). See capd_private.h for the other files.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/opts.h"
#include "base/xalloc.h"
#include "bpf/bpfstamp.h"
#include "capd/capd_private.h"
#include "live/reorder.h"
#include "live/txmatch.h"
#include "live/txsock.h"

/* A client's read buffer holds at least one whole record. */
#define CAPD_CLIENT_BUF (2 * TXSOCK_MAX_RECORD)

/* ---- TX stamps handed over by instrumented senders ---- */

/* A keyed stamp found its frame, captured on interface i: the frame goes
 * into the file again, on the sender-stamped interface, with the sender's
 * stamp — exactly as a frame record would. */
void capd_tx_pair(void *arg, unsigned i, uint64_t tag,
		  const uint8_t *frame, uint32_t caplen, uint32_t origlen,
		  const struct txsock_rec *r)
{
	struct capd *d = arg;
	bool hw = r->flags & TXSOCK_F_HW;

	if (hw && (d->ifc[i].phc < 0 || d->ifc[i].phc != r->phc)) {
		d->tx_unmatched++;
		log_warn_rl("keyed TX stamp: a hardware stamp of PHC %d for a frame "
			    "that left by %s (PHC %d); dropped", r->phc,
			    d->ifc[i].name, d->ifc[i].phc);
		return;
	}
	d->tx_records++;
	/* The captured copy: not taken yet (capd_packet leaves it out), or
	 * held (taken back by its handle and bytes), or written already
	 * when the stamp came later than the hold, or forced out. */
	if (d->sender_only) {
		if (d->in_packet && tag == d->pkt_tag)
			d->pkt_paired = true;
		else if (reorder_drop(d->ro, tag, frame, caplen))
			d->copies_dropped++;
		else
			d->copies_both++;
	}
	capd_take(d, capd_group(i, hw), d->ifc[i].id_tx[hw], r->ts_ns, frame,
		  caplen, origlen, true, d->now);
}

static void capd_tx_record(struct capd *d, struct capd_client *c,
			   const struct txsock_rec *r, int64_t now)
{
	bool hw = r->flags & TXSOCK_F_HW;
	unsigned i;

	if (r->flags & TXSOCK_F_KEYED) {
		txmatch_stamp(d->tm, r, now);
		return;
	}

	for (i = 0; i < d->n; i++)
		if (d->ifc[i].ifindex == r->ifindex ||
		    (r->ifindex == 0 && d->n == 1))
			break;
	if (i == d->n || d->ifc[i].linktype != r->linktype ||
	    (hw && d->ifc[i].phc < 0)) {
		d->tx_unmatched++;
		log_warn_rl("tx socket: pid %d: frame for interface index %u "
			    "(link type %u, %s stamp) matches no captured "
			    "interface; dropped", (int)c->pid, r->ifindex,
			    r->linktype, hw ? "hardware" : "host");
		return;
	}
	d->tx_records++;
	capd_take(d, capd_group(i, hw), d->ifc[i].id_tx[hw], r->ts_ns,
		  r->frame, r->caplen, r->origlen, true, now);
}

void capd_accept(struct capd *d)
{
	for (;;) {
		struct capd_client *c;
		pid_t pid = 0;
		uid_t uid = 0;
		int fd = txsock_accept(d->lfd, d->tx_gid, &pid, &uid);

		if (fd == -EAGAIN || fd == -EWOULDBLOCK || fd == -EINTR)
			return;
		if (fd == -EACCES) {
			log_warn("tx socket: refused pid %d (uid %u): not root, "
				 "not this daemon's user and not in --tx-group",
				 (int)pid, (unsigned)uid);
			continue;
		}
		if (fd < 0) {
			log_warn_rl("tx socket: accept: %s", strerror(-fd));
			return;
		}
		if (d->ncl == CAPD_MAX_CLIENTS) {
			log_warn("tx socket: refused pid %d: %d senders already",
				 (int)pid, CAPD_MAX_CLIENTS);
			close(fd);
			continue;
		}
		c = &d->cl[d->ncl++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->pid = pid;
		/* Back after a disconnection: its count goes on from there. */
		for (unsigned i = 0; i < d->sdrop.ngone; i++)
			if (d->sdrop.gone[i].pid == pid) {
				c->dropped = d->sdrop.gone[i].dropped;
				d->sdrop.gone[i] = d->sdrop.gone[--d->sdrop.ngone];
				break;
			}
		c->uid = uid;
		c->buf = xmalloc(CAPD_CLIENT_BUF);
		log_info("tx socket: pid %d (uid %u) connected", (int)pid,
			 (unsigned)uid);
	}
}

/* Read what a sender wrote and take its records. Returns false when the
 * client is gone or broke the protocol: the caller drops it. */
static bool capd_client_read(struct capd *d, struct capd_client *c, int64_t now)
{
	for (int round = 0; round < 8; round++) {
		struct txsock_rec r;
		size_t off = 0;
		ssize_t n;
		int k;

		n = read(c->fd, c->buf + c->have, CAPD_CLIENT_BUF - c->have);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return true;
			log_warn("tx socket: pid %d: %m; disconnecting", (int)c->pid);
			return false;
		}
		if (n == 0) {
			if (c->have)
				log_warn("tx socket: pid %d: closed inside a record "
					 "at byte %llu (%zu bytes of it lost)",
					 (int)c->pid, (unsigned long long)c->offset,
					 c->have);
			log_info("tx socket: pid %d disconnected after %llu records",
				 (int)c->pid, (unsigned long long)c->records);
			return false;
		}
		c->have += (size_t)n;
		while ((k = txsock_decode(c->buf + off, c->have - off, &r)) > 0) {
			if (r.dropped > c->dropped)
				c->dropped = r.dropped;
			capd_tx_record(d, c, &r, now);
			off += (size_t)k;
			c->offset += (uint64_t)k;
			c->records++;
		}
		if (k < 0) {
			d->tx_refused++;
			log_err("tx socket: pid %d: %s at byte %llu of its stream; "
				"disconnecting", (int)c->pid,
				k == -EPROTONOSUPPORT ? "unsupported record version" :
				"malformed record", (unsigned long long)c->offset);
			return false;
		}
		memmove(c->buf, c->buf + off, c->have - off);
		c->have -= off;
	}
	return true;
}

void capd_client_drop(struct capd *d, unsigned k)
{
	struct capd_senders_dropped *g = &d->sdrop;

	if (d->cl[k].dropped) {
		if (g->ngone == CAPD_GONE) {
			g->retired += g->gone[0].dropped;
			g->gone[0] = g->gone[--g->ngone];
		}
		g->gone[g->ngone].pid = d->cl[k].pid;
		g->gone[g->ngone++].dropped = d->cl[k].dropped;
	}
	close(d->cl[k].fd);
	free(d->cl[k].buf);
	d->cl[k] = d->cl[--d->ncl];
}

/* Read every sender with something waiting (ready[k] from poll, or all
 * when ready is NULL). */
static void capd_clients(struct capd *d, const struct pollfd *ready, int64_t now)
{
	bool drop[CAPD_MAX_CLIENTS] = { false };
	unsigned n = d->ncl;

	for (unsigned k = 0; k < n; k++)
		if (!ready || ready[k].revents)
			drop[k] = !capd_client_read(d, &d->cl[k], now);
	for (unsigned k = n; k-- > 0;)
		if (drop[k])
			capd_client_drop(d, k);
}

/* ---- TX stamps of a cgroup's sends, taken by the kernel for BPF ---- */

/* Sender stamps waiting: what tx socket clients wrote (ready[k] from
 * poll, or all of them when ready is NULL) and what the BPF program put in
 * its ring. */
void capd_senders(struct capd *d, const struct pollfd *ready)
{
	if (d->lfd >= 0)
		capd_clients(d, ready, d->now);
	if (d->bs)
		bpfstamp_consume(d->bs);
}

static void capd_bpf_stamp(void *arg, const struct txsock_rec *r)
{
	struct capd *d = arg;

	txmatch_stamp(d->tm, r, d->now);
}

/* A connection that was up before the program was attached. */
static void capd_bpf_conn(void *arg, const struct bpfstamp_conn *c)
{
	(void)arg;
	if (c->err)
		log_warn("--stamp-cgroup: %s, up before the program was "
			 "attached, is left unstamped: the kernel refused to "
			 "arm it (%s)", c->text, strerror(-c->err));
	else
		log_info("--stamp-cgroup: armed %s, up before the program was "
			 "attached", c->text);
}

/* --stamp-cgroup: the program on every cgroup given, and the connections
 * already up armed. Asked for and impossible is an error: exit 2 (1 for a
 * bad port list). */
int capd_stamp_cgroups(struct capd *d, struct opts *o)
{
	const char *const *cgs;
	size_t ncg = opts_list(o, "stamp_cgroup", &cgs);
	struct bpfstamp_config bc = { .on_stamp = capd_bpf_stamp, .arg = d };
	uint16_t *ports = NULL;
	char err[BPFSTAMP_ERRBUF];
	int rc = 2, n;

	if (bpfstamp_check(err)) {
		fprintf(stderr, "tapless-capd: --stamp-cgroup: %s\n", err);
		return rc;
	}
	if (opts_str(o, "stamp_ports")) {
		ports = xcalloc(65536, sizeof(*ports));
		if (bpfstamp_parse_ports(opts_str(o, "stamp_ports"), ports,
					 &bc.n_ports, err)) {
			fprintf(stderr, "tapless-capd: --stamp-ports: %s\n", err);
			rc = 1;
			goto out;
		}
		bc.ports = ports;
	}
	if (bpfstamp_open(&d->bs, &bc, err)) {
		fprintf(stderr, "tapless-capd: --stamp-cgroup: %s\n", err);
		goto out;
	}
	for (size_t i = 0; i < ncg; i++)
		if (bpfstamp_attach(d->bs, cgs[i], err)) {
			fprintf(stderr, "tapless-capd: --stamp-cgroup %s\n", err);
			goto out;
		}
	n = bpfstamp_arm_existing(d->bs, capd_bpf_conn, d, err);
	if (n < 0)
		log_warn("--stamp-cgroup: connections up before now are left "
			 "unstamped: %s", err);
	for (size_t i = 0; i < ncg; i++)
		log_notice("stamping the TCP sends of cgroup %s%s%s", cgs[i],
			   bc.n_ports ? ", ports " : "",
			   bc.n_ports ? opts_str(o, "stamp_ports") : "");
	if (n > 0)
		log_notice("--stamp-cgroup: armed %d connections that were up "
			   "already", n);
	rc = 0;
out:
	free(ports);
	return rc;
}
