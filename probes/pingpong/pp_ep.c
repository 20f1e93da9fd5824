/* pp_ep.c — one end of tapless-pingpong's conversation (struct pp_ep,
 * the client's or the server's): its stamps, its sockcap and --write file,
 * sending, receiving whole messages, the TX records handed back to the
 * role. See pp_private.h for the other files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/opts.h"
#include "base/print.h"
#include "base/prog.h"
#include "base/xalloc.h"
#include "files/pcapng.h"
#include "live/sockcap.h"
#include "probes/pingpong/pp_private.h"
#include "stamp/ts.h"

#define PP_VERSION prog_version()	/* "tapless-pingpong VERSION" */

int64_t pp_stamp(const struct ts_stamp *st, int n, enum ts_stage stage)
{
	for (int i = 0; i < n; i++)
		if (st[i].stage == stage)
			return st[i].ns;
	return 0;
}

void pp_ep_init(struct pp_ep *ep, int fd, bool tcp, size_t max)
{
	memset(ep, 0, sizeof(*ep));
	ep->fd = fd;
	ep->tcp = tcp;
	ep->max = max;
	ep->rbuf = xmalloc(PP_RBUF);
}

void pp_ep_free(struct pp_ep *ep)
{
	pp_cap_close(ep);
	sockcap_destroy(ep->sc);
	ts_sock_destroy(ep->ts);
	free(ep->sent);
	free(ep->rbuf);
	if (ep->fd >= 0)
		close(ep->fd);
}

/* Stamps on ep->fd. 0 or -errno. */
int pp_ep_stamps(struct pp_ep *ep, const struct opts *o)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };
	struct ts_config cfg;
	struct ts_info info;
	char note[96];
	int err;

	ts_config_init(&cfg);
	cfg.mode = modes[opts_enum(o, "mode")];
	cfg.ifname = ep->ifname[0] ? ep->ifname : NULL;
	cfg.tx_stages = 1u << TS_STAGE_SCHED;
	cfg.both = true;	/* hardware: software stamps too, for stages */
	cfg.tx_window = PP_SENT;
	cfg.tx_timeout_ns = ep->tx_timeout_ns = opts_ns(o, "tx_timeout");
	err = ts_sock_create(&ep->ts, ep->fd, &cfg);
	if (err)
		return err;
	ts_sock_info(ep->ts, &info);
	if (ts_hw_set_text(&info, note, sizeof(note)))
		log_info("%s: %s", ep->ifname, note);
	ep->hw = info.source == TS_SOURCE_HW;
	ep->sent = xcalloc(PP_SENT, sizeof(*ep->sent));
	return 0;
}

enum ts_stage pp_rx_stage(const struct pp_ep *ep)
{
	return ep->hw ? TS_STAGE_HW_RX : TS_STAGE_SW_RX;
}

/* ---- sockcap and --write ------------------------------------------------- */

/* A TX record from sockcap: to the role's callback with its send. */
static void pp_record(void *arg, const struct ts_tx_record *rec)
{
	struct pp_ep *ep = arg;
	const struct pp_sent *s = &ep->sent[rec->cookie % PP_SENT];

	if (s->cookie != rec->cookie)
		return;		/* cannot happen: window == PP_SENT */
	if (ep->on_record)
		ep->on_record(ep->arg, rec, s);
}

/* Once ep is connected and stamped: its sockcap, and with path its file.
 * 0 or -errno. */
int pp_cap_open(struct pp_ep *ep, const char *path)
{
	struct sockcap_config scc = {
		.on_record = pp_record, .arg = ep,
		.ack_sent = true,	/* each message is answered */
		.rx_later = true,
	};
	struct pcapng_section sec = { .userappl = PP_VERSION };
	const char *ifname = ep->ifname[0] ? ep->ifname : NULL;
	struct pcapng_iface ifc;
	char host[256] = "";
	int err;

	if (path) {
		gethostname(host, sizeof(host) - 1);
		sec.hostname = host;
		err = pcapng_open(&ep->w, path, &sec);
		if (err)
			return err;
		sockcap_iface(ep->ts, ifname, true, &ifc);
		err = pcapng_add_iface(ep->w, &ifc, &scc.id_tx);
		if (!err) {
			sockcap_iface(ep->ts, ifname, false, &ifc);
			err = pcapng_add_iface(ep->w, &ifc, &scc.id_rx);
		}
		if (err)
			goto fail;
		scc.w = ep->w;
	}
	err = sockcap_create(&ep->sc, ep->ts, ep->fd, &scc);
	if (err)
		goto fail;
	ep->wpath = path;
	return 0;
fail:
	if (ep->w)
		pcapng_close(ep->w, true);
	ep->w = NULL;
	return err;
}

/* Write the frames of the receives so far. */
static void pp_cap_flush(struct pp_ep *ep)
{
	if (!ep->w)
		return;
	if (ep->records_first)
		pp_records(ep, ts_now_mono());
	sockcap_flush_rx(ep->sc);
}

/* Close the file (whole, under its name, also after an error: what was
 * captured is worth keeping). The counters stay for the report. */
int pp_cap_close(struct pp_ep *ep)
{
	int err;

	if (!ep->w)
		return 0;
	pp_cap_flush(ep);
	err = pcapng_close(ep->w, false);
	ep->w = NULL;
	return err;
}

/* The counters of --write for either role's report, the first line's
 * format in fmt. */
void pp_cap_print(struct printer *p, const struct pp_ep *ep,
		  const char *fmt)
{
	struct sockcap_stats st;

	if (!ep->wpath)
		return;
	sockcap_stats(ep->sc, &st);
	print_object_begin(p, "capture");
	print_str(p, "file", fmt, ep->wpath);
	print_uint(p, "tx_frames", ", %llu frames sent", st.tx_frames);
	print_uint(p, "rx_frames", ", %llu received", st.rx_frames);
	print_uint(p, "tx_unstamped", ", %llu sent",
		   st.tx_unstamped + st.ring_full);
	print_uint(p, "rx_unstamped", " and %llu received without a stamp",
		   st.rx_unstamped);
	print_bool(p, "relative_tcp_seq", NULL, sockcap_relative(ep->sc));
	print_uint(p, "write_errors", ", %llu write errors\n", st.write_errors);
	print_object_end(p);
}

/* ---- sending, receiving, TX records -------------------------------------- */

/* Hand finished sends to the record callback (and --write). now_ns < 0:
 * everything, stamped or not. */
void pp_records(struct pp_ep *ep, int64_t now_ns)
{
	if (ep->sc)
		sockcap_poll(ep->sc, now_ns);
}

/* Wait for the TX stamps of every send (up to --tx-timeout and
 * PP_DRAIN_NS), then hand out all records, the missing stamps marked
 * lost. */
void pp_drain(struct pp_ep *ep)
{
	int64_t end = ts_now_mono() + ep->tx_timeout_ns + PP_DRAIN_NS;

	if (!ep->sc)
		return;
	while (ts_tx_pending(ep->ts) && ts_now_mono() < end) {
		ts_tx_wait(ep->ts, 5);
		pp_records(ep, ts_now_mono());
	}
	pp_records(ep, -1);
}

/* Send all of buf as message seq of kind. 0 or -errno. */
int pp_send(struct pp_ep *ep, const uint8_t *buf, size_t len,
	    uint32_t seq, uint8_t kind)
{
	size_t done = 0;

	while (done < len) {
		uint64_t cookie = 0;
		ssize_t n;

		if (ep->sc) {
			cookie = sockcap_next_cookie(ep->sc);
			n = sockcap_send(ep->sc, buf + done, len - done,
					 MSG_NOSIGNAL);
		} else {
			n = send(ep->fd, buf + done, len - done, MSG_NOSIGNAL);
			if (n < 0)
				n = -errno;
		}
		if (n == -EINTR)
			continue;
		if (n == -ENOBUFS && ep->sc) {
			/* The window of sends awaiting stamps is full. */
			ts_tx_wait(ep->ts, 1);
			pp_records(ep, ts_now_mono());
			continue;
		}
		if (n < 0)
			return (int)n;
		if (ep->sc) {
			struct pp_sent *s = &ep->sent[cookie % PP_SENT];

			s->cookie = cookie;
			s->seq = seq;
			s->kind = kind;
		}
		done += (size_t)n;
	}
	return 0;
}

/* One whole message into ep->rbuf[0..ep->mlen), decoded into *m. Its stamps
 * are those of the recv that completed it (the kernel's rule for a stream:
 * the last segment read). Returns 0, -ETIMEDOUT (SO_RCVTIMEO ran out),
 * -EINTR (a signal), -EPIPE (TCP: closed between messages), -EBADMSG with
 * *why (a stream cannot be followed after that), or another -errno. */
int pp_recv(struct pp_ep *ep, struct pp_msg *m, const char **why)
{
	for (;;) {
		ssize_t n;
		int err;

		if (ep->tcp && ep->rhave) {
			err = pp_decode(ep->rbuf, ep->rhave, true, ep->max, m, why);
			if (!err) {
				ep->mlen = m->len;
				return 0;
			}
			if (err != -EAGAIN)
				return err;
		}
		if (ep->sc) {
			/* --write: the frame waits in sockcap, its bytes here,
			 * until pp_cap_flush(). */
			n = sockcap_recv(ep->sc, ep->rbuf + ep->rhave,
					 PP_RBUF - ep->rhave, 0, ep->st, &ep->nst);
		} else {
			n = recv(ep->fd, ep->rbuf + ep->rhave, PP_RBUF - ep->rhave, 0);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return -ETIMEDOUT;
		if (n < 0)
			return (int)n;
		ep->recv_mono = ts_now_mono();
		ep->recv_real = ts_now_real();
		if (n == 0 && ep->tcp) {
			if (!ep->rhave)
				return -EPIPE;
			*why = "connection closed in the middle of a message";
			return -EBADMSG;
		}
		ep->rx_off += (uint64_t)n;
		if (!ep->tcp) {
			ep->rhave = 0;
			ep->mlen = 0;
			err = pp_decode(ep->rbuf, (size_t)n, false, ep->max, m, why);
			if (!err)
				ep->mlen = (size_t)n;
			else
				pp_cap_flush(ep);	/* the next recv reuses rbuf */
			return err;
		}
		ep->rhave += (size_t)n;
	}
}

/* Done with the message pp_recv() returned. */
void pp_consume(struct pp_ep *ep)
{
	pp_cap_flush(ep);
	if (ep->tcp && ep->mlen <= ep->rhave) {
		memmove(ep->rbuf, ep->rbuf + ep->mlen, ep->rhave - ep->mlen);
		ep->rhave -= ep->mlen;
	}
	ep->mlen = 0;
}

void pp_timeout(int fd, long long ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}
