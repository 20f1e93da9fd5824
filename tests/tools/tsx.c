/* tsx — a stamped one-way exchange for the namespace tests and the demo.
 *
 *   tsx recv --proto udp|tcp --bind ADDR:PORT --count N --out FILE
 *   tsx send --proto udp|tcp --to ADDR:PORT --count N --rate R --out FILE
 *   tsx join --tx FILE --rx FILE --count N [--max-ns NS] [--json]
 *
 * The sender stamps every message on TX with the timestamping core and writes
 * one line per message; the receiver does the same with RX stamps; join
 * matches them by sequence number, checks that nothing was lost, and
 * summarises the one-way latency (RX - TX). Messages carry a 16-byte header
 * (magic, length, sequence) so the receiver can frame a TCP stream.
 *
 * Not installed: tapless-pingpong is the tool for users.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/addrport.h"
#include "base/log.h"
#include "base/opts.h"
#include "base/print.h"
#include "live/sockcap.h"
#include "base/summary.h"
#include "stamp/ts.h"
#include "live/txsock.h"
#include "base/xalloc.h"

#define TSX_MAGIC 0x54535831u	/* "TSX1" */
#define TSX_HDR 16
#define TSX_MAX 65536

static const char *const tsx_protos[] = { "udp", "tcp", NULL };
static const char *const tsx_modes[] = { "auto", "hw", "sw", NULL };
static const char *const tsx_shared[] = { "no", "yes", "any", NULL };

static const struct opt_def tsx_recv_opts[] = {
	{ "proto", 'p', OPT_ENUM, "udp", 0, 0, tsx_protos, "PROTO", "udp or tcp", 0 },
	{ "bind", 'b', OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "address to listen on", 0 },
	{ "count", 'n', OPT_INT, "10000", 1, 100000000, NULL, "N", "messages to expect", 0 },
	{ "out", 'o', OPT_STRING, NULL, 0, 0, NULL, "FILE", "write RX records to FILE", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, tsx_modes, "MODE", "stamp source: auto, hw or sw", 0 },
	{ "interface", 'i', OPT_STRING, NULL, 0, 0, NULL, "IFACE", "interface (for hardware stamps)", 0 },
	{ "idle_ms", 0, OPT_INT, "3000", 1, 600000, NULL, "MS", "give up after MS without data", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

static const struct opt_def tsx_send_opts[] = {
	{ "proto", 'p', OPT_ENUM, "udp", 0, 0, tsx_protos, "PROTO", "udp or tcp", 0 },
	{ "to", 't', OPT_STRING, NULL, 0, 0, NULL, "ADDR:PORT", "receiver", 0 },
	{ "count", 'n', OPT_INT, "10000", 1, 100000000, NULL, "N", "messages to send", 0 },
	{ "rate", 'r', OPT_INT, "10000", 1, 10000000, NULL, "N", "messages per second", 0 },
	{ "min_size", 0, OPT_INT, "16", TSX_HDR, TSX_MAX, NULL, "BYTES", "smallest message", 0 },
	{ "max_size", 0, OPT_INT, "1472", TSX_HDR, TSX_MAX, NULL, "BYTES", "largest message", 0 },
	{ "seed", 0, OPT_INT, "1", 0, 4294967295.0, NULL, "N", "size sequence seed", 0 },
	{ "cork", 0, OPT_INT, "0", 0, 1000, NULL, "N", "TCP: write N messages at a time under TCP_CORK, without MSG_EOR, so the kernel merges them", 0 },
	{ "out", 'o', OPT_STRING, NULL, 0, 0, NULL, "FILE", "write TX records to FILE", 0 },
	{ "mode", 'm', OPT_ENUM, "auto", 0, 0, tsx_modes, "MODE", "stamp source: auto, hw or sw", 0 },
	{ "interface", 'i', OPT_STRING, NULL, 0, 0, NULL, "IFACE", "interface (for hardware stamps)", 0 },
	{ "tx_socket", 0, OPT_STRING, NULL, 0, 0, NULL, "PATH", "hand each sent frame and its stamp to tapless-capd at PATH (instead of --out)", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

static const struct opt_def tsx_join_opts[] = {
	{ "tx", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE", "sender's records", 0 },
	{ "rx", 0, OPT_STRING, NULL, 0, 0, NULL, "FILE", "receiver's records", 0 },
	{ "count", 'n', OPT_INT, NULL, 1, 100000000, NULL, "N", "messages that were sent", 0 },
	{ "max_ns", 0, OPT_INT, "1000000", 1, 1e12, NULL, "NS", "largest acceptable one-way latency", 0 },
	{ "bound_pct", 0, OPT_DOUBLE, "100", 50, 100, NULL, "P", "apply --max-ns to the Pth percentile (100: every message)", 0 },
	{ "label", 0, OPT_STRING, "", 0, 0, NULL, "TEXT", "name of this exchange in the output", 0 },
	{ "shared", 0, OPT_ENUM, "no", 0, 0, tsx_shared, "WHEN", "TX stamps shared by merged writes: no (none allowed), yes (some required), any", 0 },
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "JSON output", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};

static int tsx_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char err[ADDRPORT_ERRBUF];

	if (!addrport_parse(spec, NULL, ss, len, err))
		return 0;
	fprintf(stderr, "tsx: %s\n", err);
	return -1;
}

static void tsx_config(const struct opts *o, struct ts_config *cfg)
{
	static const enum ts_mode modes[] = { TS_MODE_AUTO, TS_MODE_HW, TS_MODE_SW };

	ts_config_init(cfg);
	cfg->mode = modes[opts_enum(o, "mode")];
	cfg->ifname = opts_str(o, "interface");
}

/* Enable stamps on fd; 0, or 2 after saying why. */
static int tsx_stamps(int fd, const struct ts_config *cfg, struct ts_sock **ts)
{
	int err = ts_sock_create(ts, fd, cfg);

	if (err)
		fprintf(stderr, "tsx: enabling stamps: %s\n", strerror(-err));
	return err ? 2 : 0;
}

/* The --out file; NULL after saying why. */
static FILE *tsx_out(const struct opts *o)
{
	FILE *f = fopen(opts_str(o, "out"), "w");

	if (!f)
		fprintf(stderr, "tsx: %s: %m\n", opts_str(o, "out"));
	return f;
}

/* xorshift32: a size sequence that is the same on every run and host. */
static uint32_t tsx_rand(uint32_t *s)
{
	uint32_t x = *s ? *s : 1;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void tsx_write_tx(FILE *f, const struct ts_tx_record *r)
{
	int stage = r->ns[TS_STAGE_HW_TX] ? TS_STAGE_HW_TX : TS_STAGE_SW_TX;

	fprintf(f, "%" PRIu64 " %" PRIu64 " %u %s %" PRId64 " %u %u %" PRId64 "\n",
		r->cookie, r->first, r->len, ts_stage_name(stage), r->ns[stage],
		r->lost, r->shared, r->app_ns);
}

/* Finished sends: to the --out file, or as frames to capd (--tx-socket). */
static int tsx_drain(struct ts_sock *ts, struct sockcap *sc, FILE *out,
		     int64_t now)
{
	struct ts_tx_record r;
	int n = 0;

	if (sc)
		return sockcap_poll(sc, now);
	while (ts_tx_next(ts, &r, now) == 1) {
		tsx_write_tx(out, &r);
		n++;
	}
	return n;
}

static int tsx_send(const struct opts *o)
{
	int proto = opts_enum(o, "proto"), cork = (int)opts_int(o, "cork");
	long long count = opts_int(o, "count"), rate = opts_int(o, "rate");
	int minsz = (int)opts_int(o, "min_size"), maxsz = (int)opts_int(o, "max_size");
	uint32_t seed = (uint32_t)opts_int(o, "seed");
	struct sockaddr_storage to;
	struct ts_config cfg;
	struct ts_sock *ts = NULL;
	struct ts_stats st;
	struct ts_info info;
	struct timespec next;
	unsigned char *buf;
	socklen_t tolen;
	FILE *out = NULL;
	struct txsock_client *txc = NULL;
	struct sockcap *sc = NULL;
	int fd, err, one = 1, zero = 0;
	unsigned retrans = 0;
	char rbuf[48] = "";

	if (minsz > maxsz || (proto == 0 && maxsz > 65507)) {
		fprintf(stderr, "tsx: bad size range %d..%d\n", minsz, maxsz);
		return 1;
	}
	if (tsx_addr(opts_str(o, "to"), &to, &tolen))
		return 1;
	if (!opts_str(o, "out") == !opts_str(o, "tx_socket") ||
	    (opts_str(o, "tx_socket") && cork)) {
		fprintf(stderr, "tsx: give one of --out and --tx-socket (not "
			"with --cork)\n");
		return 1;
	}
	fd = socket(to.ss_family, proto ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, tolen)) {
		fprintf(stderr, "tsx: connect %s: %m\n", opts_str(o, "to"));
		return 2;
	}
	tsx_config(o, &cfg);
	cfg.rx = false;
	if (tsx_stamps(fd, &cfg, &ts))
		return 2;
	if (opts_str(o, "tx_socket")) {
		struct sockcap_config scc = {
			.ifindex = opts_str(o, "interface") ?
				   if_nametoindex(opts_str(o, "interface")) : 0,
		};

		err = txsock_connect(&txc, opts_str(o, "tx_socket"));
		scc.txsock = txc;
		if (!err)
			err = sockcap_create(&sc, ts, fd, &scc);
		if (err) {
			fprintf(stderr, "tsx: --tx-socket: %s\n", strerror(-err));
			return 2;
		}
	} else {
		out = tsx_out(o);
		if (!out)
			return 2;
	}
	buf = xcalloc(1, TSX_MAX);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long long i = 0; i < count; i++) {
		uint32_t len = (uint32_t)(minsz + (int)(tsx_rand(&seed) %
					  (uint32_t)(maxsz - minsz + 1)));
		uint32_t h[4] = { htonl(TSX_MAGIC), htonl(len),
				  htonl((uint32_t)((uint64_t)i >> 32)),
				  htonl((uint32_t)i) };
		size_t done = 0;

		memcpy(buf, h, sizeof(h));
		if (cork && i % cork == 0)
			setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one));
		while (done < len) {
			ssize_t n;

			if (cork) {
				/* Plain writes: the kernel may merge them. */
				int64_t app = ts_now_real();

				n = send(fd, buf + done, len - done, 0);
				if (n > 0)
					ts_tx_sent(ts, (uint64_t)i, (size_t)n, app);
				else
					n = -errno;
			} else if (sc) {
				n = sockcap_send(sc, buf + done, len - done, 0);
			} else {
				n = ts_send(ts, buf + done, len - done, 0, (uint64_t)i);
			}
			if (n == -ENOBUFS || n == -EINTR) {
				ts_tx_wait(ts, 1);
				tsx_drain(ts, sc, out, ts_now_mono());
				continue;
			}
			if (n < 0) {
				fprintf(stderr, "tsx: send: %s\n", strerror((int)-n));
				return 2;
			}
			done += (size_t)n;
		}
		if (cork && (i % cork == cork - 1 || i == count - 1))
			setsockopt(fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof(zero));
		ts_tx_reap(ts);
		tsx_drain(ts, sc, out, ts_now_mono());

		/* Paced on an absolute schedule: a late send does not push
		 * every later one back. */
		next.tv_nsec += 1000000000LL / rate;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	/* Stamps still in flight: wait for them, then count the rest lost. */
	for (int64_t end = ts_now_mono() + 1000000000LL;
	     ts_tx_pending(ts) && ts_now_mono() < end;) {
		ts_tx_wait(ts, 10);
		tsx_drain(ts, sc, out, ts_now_mono());
	}
	tsx_drain(ts, sc, out, -1);
	if (sc) {
		struct sockcap_stats ss;
		struct txsock_client_stats ts_st;

		sockcap_stats(sc, &ss);
		err = txsock_flush(txc, 2000);
		txsock_client_stats(txc, &ts_st);
		fprintf(stderr, "tsx: handed %" PRIu64 " frames to %s (%" PRIu64
			" dropped, %" PRIu64 " unstamped)%s%s\n", ts_st.sent,
			opts_str(o, "tx_socket"), ts_st.dropped, ss.tx_unstamped,
			sockcap_relative(sc) ? ", relative TCP sequence numbers" : "",
			err ? ", not all delivered" : "");
		sockcap_destroy(sc);
		txsock_close(txc);
	}
	ts_sock_info(ts, &info);
	ts_sock_stats(ts, &st);
	if (proto) {
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
			retrans = ti.tcpi_total_retrans;
		snprintf(rbuf, sizeof(rbuf), ", %u TCP retransmissions", retrans);
	}
	fprintf(stderr, "tsx: sent %llu %s messages, %s stamps%s: %" PRIu64
		" stamped, %" PRIu64 " lost, %" PRIu64 " shared, %" PRIu64
		" unmatched%s\n", count, proto ? "tcp" : "udp",
		ts_source_name(info.source),
		info.stream ? (info.opt_id_tcp ? " (OPT_ID_TCP)" : " (OPT_ID)") : "",
		st.stamps, st.lost[TS_STAGE_SW_TX] + st.lost[TS_STAGE_HW_TX],
		st.shared, st.unmatched, rbuf);
	err = out && fclose(out) ? 2 : 0;
	ts_sock_destroy(ts);
	close(fd);
	free(buf);
	return err;
}

/* Read exactly len bytes of the stream; keep the latest stamp seen. */
static int tsx_read_full(struct ts_sock *ts, unsigned char *buf, size_t len,
			 struct ts_stamp *last, int *have)
{
	size_t done = 0;

	while (done < len) {
		struct ts_stamp st[2];
		int ns;
		ssize_t n = ts_recv(ts, buf + done, len - done, MSG_WAITALL, st, &ns);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -EPIPE : (int)n;
		if (ns) {
			*last = st[0];
			*have = 1;
		}
		done += (size_t)n;
	}
	return 0;
}

static int tsx_recv(const struct opts *o)
{
	int proto = opts_enum(o, "proto");
	long long count = opts_int(o, "count"), got = 0, unstamped = 0;
	struct timeval idle = { .tv_sec = opts_int(o, "idle_ms") / 1000,
				.tv_usec = opts_int(o, "idle_ms") % 1000 * 1000 };
	struct sockaddr_storage at;
	struct ts_config cfg;
	struct ts_sock *ts = NULL;
	unsigned char *buf;
	socklen_t atlen;
	FILE *out;
	int fd, one = 1, err;

	if (tsx_addr(opts_str(o, "bind"), &at, &atlen))
		return 1;
	if (!opts_str(o, "out")) {
		fprintf(stderr, "tsx: --out is required\n");
		return 1;
	}
	fd = socket(at.ss_family, proto ? SOCK_STREAM : SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&at, atlen) ||
	    (proto && listen(fd, 1))) {
		fprintf(stderr, "tsx: bind %s: %m\n", opts_str(o, "bind"));
		return 2;
	}
	tsx_config(o, &cfg);
	cfg.tx = false;
	if (proto && (err = ts_listen_enable(fd))) {
		fprintf(stderr, "tsx: enabling stamps: %s\n", strerror(-err));
		return 2;
	}
	if (!proto && tsx_stamps(fd, &cfg, &ts))
		return 2;
	out = tsx_out(o);
	if (!out)
		return 2;
	/* Scripts wait for this line before starting the sender. */
	printf("ready\n");
	fflush(stdout);
	if (proto) {
		int c = accept(fd, NULL, NULL);

		if (c < 0) {
			fprintf(stderr, "tsx: accept: %m\n");
			return 2;
		}
		close(fd);
		fd = c;
		/* Stamping a stream must wait until it is connected. */
		if (tsx_stamps(fd, &cfg, &ts))
			return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	buf = xmalloc(TSX_MAX);
	while (got < count) {
		struct ts_stamp last;
		uint32_t h[4];
		int have = 0;
		uint32_t len;

		if (proto) {
			err = tsx_read_full(ts, buf, TSX_HDR, &last, &have);
			if (!err) {
				memcpy(h, buf, sizeof(h));
				len = ntohl(h[1]);
				if (ntohl(h[0]) != TSX_MAGIC || len < TSX_HDR || len > TSX_MAX) {
					fprintf(stderr, "tsx: stream out of step after %lld messages\n", got);
					break;
				}
				err = tsx_read_full(ts, buf + TSX_HDR, len - TSX_HDR, &last, &have);
			}
			if (err) {
				if (err != -EPIPE)
					fprintf(stderr, "tsx: recv: %s\n", strerror(-err));
				break;
			}
		} else {
			struct ts_stamp st[2];
			int ns;
			ssize_t n = ts_recv(ts, buf, TSX_MAX, 0, st, &ns);

			if (n < 0) {
				if (n != -EINTR) {
					fprintf(stderr, "tsx: recv: %s\n", strerror((int)-n));
					break;
				}
				continue;
			}
			memcpy(h, buf, sizeof(h));
			len = ntohl(h[1]);
			if (n < TSX_HDR || ntohl(h[0]) != TSX_MAGIC || len != (uint32_t)n)
				continue;	/* not ours */
			if (ns) {
				last = st[0];
				have = 1;
			}
		}
		if (!have) {
			unstamped++;
			last.ns = 0;
			last.stage = TS_STAGE_SW_RX;
		}
		fprintf(out, "%" PRIu64 " %u %s %" PRId64 "\n",
			((uint64_t)ntohl(h[2]) << 32) | ntohl(h[3]), len,
			ts_stage_name(last.stage), last.ns);
		got++;
	}
	fprintf(stderr, "tsx: received %lld of %lld messages, %lld without a stamp\n",
		got, count, unstamped);
	err = out && fclose(out) ? 2 : 0;
	ts_sock_destroy(ts);
	close(fd);
	free(buf);
	return err ? err : got == count ? 0 : 1;
}

struct tsx_row {
	int64_t ns;
	uint32_t len;
	uint8_t have, lost, shared, hw;
	uint64_t end;	/* TX: offset after the record's last byte */
};

static int tsx_load(const char *path, bool tx, struct tsx_row *rows, long long count)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (!f) {
		fprintf(stderr, "tsx: %s: %m\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t seq, first = 0;
		unsigned len, lost = 0, shared = 0;
		char stage[16];
		int64_t ns;
		int k;

		lineno++;
		if (tx)
			k = sscanf(line, "%" SCNu64 " %" SCNu64 " %u %15s %" SCNd64 " %u %u",
				   &seq, &first, &len, stage, &ns, &lost, &shared) == 7;
		else
			k = sscanf(line, "%" SCNu64 " %u %15s %" SCNd64,
				   &seq, &len, stage, &ns) == 4;
		if (!k || seq >= (uint64_t)count) {
			fprintf(stderr, "tsx: %s:%d: bad record\n", path, lineno);
			fclose(f);
			return -1;
		}
		/* A TCP message sent in parts has a record per part: the one
		 * ending furthest on carries its last byte. */
		if (rows[seq].have && tx && first + len <= rows[seq].end)
			continue;
		rows[seq] = (struct tsx_row){ ns, len, 1, lost != 0, shared != 0,
					      strncmp(stage, "hw", 2) == 0,
					      first + len };
	}
	fclose(f);
	return 0;
}

static int tsx_join(const struct opts *o)
{
	long long count = opts_int(o, "count"), max_ns = opts_int(o, "max_ns");
	double pct = opts_double(o, "bound_pct");
	long long no_tx = 0, no_rx = 0, lost = 0, shared = 0, neg = 0, over = 0, mixed = 0;
	struct tsx_row *tx, *rx;
	struct printer *p;
	struct summary s;
	int64_t *lat;
	size_t n = 0;
	bool ok;

	if (!opts_given(o, "count") || !opts_str(o, "tx") || !opts_str(o, "rx")) {
		fprintf(stderr, "tsx: join needs --tx, --rx and --count\n");
		return 1;
	}
	tx = xcalloc((size_t)count, sizeof(*tx));
	rx = xcalloc((size_t)count, sizeof(*rx));
	lat = xcalloc((size_t)count, sizeof(*lat));
	if (tsx_load(opts_str(o, "tx"), true, tx, count) ||
	    tsx_load(opts_str(o, "rx"), false, rx, count))
		return 1;
	for (long long i = 0; i < count; i++) {
		if (!tx[i].have || !tx[i].ns) {
			no_tx++;
			lost += tx[i].lost;
			continue;
		}
		shared += tx[i].shared;
		if (!rx[i].have || !rx[i].ns) {
			no_rx++;
			continue;
		}
		if (tx[i].hw != rx[i].hw) {
			mixed++;	/* PHC and system time: not comparable */
			continue;
		}
		lat[n] = rx[i].ns - tx[i].ns;
		neg += lat[n] <= 0;
		over += lat[n] > max_ns;
		n++;
	}
	summary_of(lat, n, &s);
	/* Every message must be stamped, matched and positive; the latency
	 * bound may be asked of a percentile, since a TCP segment the kernel
	 * drops and retransmits arrives a retransmission timer later. */
	ok = !no_tx && !no_rx && !neg && !mixed && n == (size_t)count &&
	     (pct >= 100 ? !over : summary_rank(lat, n, pct) <= max_ns);
	switch (opts_enum(o, "shared")) {
	case 0:
		ok = ok && !shared;
		break;
	case 1:
		ok = ok && shared;
		break;
	}

	p = print_create(stdout, opts_flag(o, "json") ? PRINT_JSON : PRINT_TEXT, 0);
	print_str(p, "exchange", "%s one-way latency (RX - TX), ns:\n  ",
		  opts_str(o, "label"));
	print_int(p, "messages", NULL, count);
	summary_print(p, "latency_ns", &s);
	print_int(p, "missing_tx_stamp", "  missing TX stamps %lld", no_tx);
	print_int(p, "lost_tx_stamp", " (lost %lld)", lost);
	print_int(p, "shared_tx_stamp", ", shared TX stamps %lld", shared);
	print_int(p, "missing_rx", ", missing RX %lld", no_rx);
	print_int(p, "not_positive", ", <= 0: %lld", neg);
	print_int(p, "over_max", ", over max: %lld", over);
	print_double(p, "bound_pct", " (bound on p%g)", pct);
	print_int(p, "mixed_sources", ", hw/sw mixed: %lld\n", mixed);
	print_str(p, "source", "  stamp source %s", n && tx[0].hw ? "hw" : "sw");
	print_bool(p, "ok", ", all checks passed: %s\n", ok);
	print_destroy(p);
	free(tx);
	free(rx);
	free(lat);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct opt_def *defs;
		int (*run)(const struct opts *o);
	} cmds[] = {
		{ "send", tsx_send_opts, tsx_send },
		{ "recv", tsx_recv_opts, tsx_recv },
		{ "join", tsx_join_opts, tsx_join },
	};
	char err[OPTS_ERRBUF];

	log_init("tsx", false, LOG_NOTICE);
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct opts *o;
		int rc;

		if (strcmp(argv[1], cmds[i].name))
			continue;
		o = opts_create(cmds[i].defs);
		rc = opts_parse_args(o, argc - 1, argv + 1, err);
		if (rc < 0 || rc != argc - 1) {
			fprintf(stderr, "tsx %s: %s\n", cmds[i].name,
				rc < 0 ? err : "unexpected operand");
			opts_destroy(o);
			return 1;
		}
		if (opts_flag(o, "help")) {
			printf("usage: tsx %s [options]\n", cmds[i].name);
			opts_usage(stdout, cmds[i].defs);
			opts_destroy(o);
			return 0;
		}
		rc = cmds[i].run(o);
		opts_destroy(o);
		return rc;
	}
	fprintf(stderr, "usage: tsx send|recv|join [options] (--help for each)\n");
	return 1;
}
