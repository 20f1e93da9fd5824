/* bpfstamp.c — loading stamp.bpf.c, attaching it to cgroups and turning its
 * ring buffer records into keyed TX stamp records; see bpfstamp.h.
 */
#include "bpf/bpfstamp.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stamp.skel.h>

#include "base/errbuf.h"
#include "base/nstime.h"
#include "bpf/stamp_ev.h"
#include "live/txsock.h"
#include "stamp/tsinfo.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

_Static_assert((int)STAMP_STAGE_SND == (int)TXSOCK_STAGE_SND &&
	       (int)STAMP_STAGE_SCHED == (int)TXSOCK_STAGE_SCHED &&
	       (int)STAMP_STAGE_ACK == (int)TXSOCK_STAGE_ACK,
	       "stamp_ev.h stages are txsock.h's");
_Static_assert(BPFSTAMP_MAX_CGROUPS == STAMP_MAX_CGROUPS,
	       "one cgroup limit on both sides");

#define BPFSTAMP_RING_DEFAULT (4u << 20)
#define BPFSTAMP_PHC_CACHE 8
#define BPFSTAMP_PHC_REFRESH_NS (10 * 1000000000LL)

struct bpfstamp {
	struct stamp *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[BPFSTAMP_MAX_CGROUPS];
	unsigned n_links;
	bpfstamp_fn on_stamp;
	void *arg;
	uint64_t taken, bad;
	int64_t tai_ns;		/* CLOCK_TAI - CLOCK_REALTIME, whole seconds */
	/* Hardware stamps: the PHC of their device, looked up now and then
	 * (a driver reset renumbers it). */
	struct {
		unsigned ifindex;
		int phc;
		int64_t at_ns;
	} phc[BPFSTAMP_PHC_CACHE];
	unsigned phc_next;
	bool port_filter;
	/* Why the kernel refused the iterator; quoted by
	 * bpfstamp_arm_existing() cut at 255 bytes, as it always was. */
	char no_iter[BPFSTAMP_ERRBUF];
};

/* libbpf's last complaint, for the error message: the library never
 * prints (HACKING.md), so its warnings are kept rather than shown. */
static char bpfstamp_libbpf_msg[512];

static int bpfstamp_print(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	char line[sizeof(bpfstamp_libbpf_msg)];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	/* The verifier's log comes line by line; its last line names the
	 * refusal, and the "-- END PROG LOAD LOG --" marker is no reason. */
	if (n && !strstr(line, "END PROG LOAD LOG"))
		memcpy(bpfstamp_libbpf_msg, line, n + 1);
	return 0;
}

static const char *bpfstamp_why(void)
{
	return bpfstamp_libbpf_msg[0] ? bpfstamp_libbpf_msg : "no detail";
}

/* CLOCK_TAI is CLOCK_REALTIME plus the kernel's TAI offset, a whole number
 * of seconds that only changes when someone sets it (ptp4l, chronyd, a
 * leap second): taking it back out is exact, with no sampling error. */
static int64_t bpfstamp_tai_offset(void)
{
	struct timex tx = { .modes = 0 };

	if (adjtimex(&tx) < 0)
		return 0;
	return (int64_t)tx.tai * 1000000000LL;
}

static int bpfstamp_phc(struct bpfstamp *b, unsigned ifindex)
{
	char name[IF_NAMESIZE];
	int64_t now = nstime_now(CLOCK_MONOTONIC);
	struct tsinfo ti;
	unsigned i;

	for (i = 0; i < BPFSTAMP_PHC_CACHE; i++)
		if (b->phc[i].ifindex == ifindex &&
		    now - b->phc[i].at_ns < BPFSTAMP_PHC_REFRESH_NS)
			return b->phc[i].phc;
	i = b->phc_next++ % BPFSTAMP_PHC_CACHE;
	b->phc[i].ifindex = ifindex;
	b->phc[i].at_ns = now;
	b->phc[i].phc = -1;
	if (if_indextoname(ifindex, name) && !tsinfo_get(name, &ti))
		b->phc[i].phc = ti.phc_index;
	return b->phc[i].phc;
}

/* IPv4 mapped in IPv6 (a dual-stack socket) is IPv4 on the wire. */
static void bpfstamp_flow(struct frame_flow *f, unsigned family,
			  const uint8_t src[16], const uint8_t dst[16],
			  uint16_t sport, uint16_t dport)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(f, 0, sizeof(*f));
	f->proto = IPPROTO_TCP;
	f->sport = sport;
	f->dport = dport;
	if (family == AF_INET6 && !memcmp(src, v4mapped, 12) &&
	    !memcmp(dst, v4mapped, 12)) {
		f->family = AF_INET;
		memcpy(f->src, src + 12, 4);
		memcpy(f->dst, dst + 12, 4);
		return;
	}
	f->family = family == AF_INET6 ? AF_INET6 : AF_INET;
	memcpy(f->src, src, f->family == AF_INET6 ? 16 : 4);
	memcpy(f->dst, dst, f->family == AF_INET6 ? 16 : 4);
}

static void bpfstamp_flow_text(const struct frame_flow *f, char *buf,
			       size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	bool v6 = f->family == AF_INET6;

	inet_ntop(f->family, f->src, s, sizeof(s));
	inet_ntop(f->family, f->dst, d, sizeof(d));
	snprintf(buf, len, "%s%s%s:%u > %s%s%s:%u", v6 ? "[" : "", s,
		 v6 ? "]" : "", f->sport, v6 ? "[" : "", d, v6 ? "]" : "",
		 f->dport);
}

static int bpfstamp_record(void *ctx, void *data, size_t len)
{
	struct bpfstamp *b = ctx;
	const struct stamp_ev *e = data;
	struct txsock_rec r;

	if (len < sizeof(*e) || e->stage > TXSOCK_STAGE_MAX ||
	    (e->family != AF_INET && e->family != AF_INET6)) {
		b->bad++;
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.flags = TXSOCK_F_KEYED;
	r.ifindex = e->ifindex;
	r.phc = -1;
	if (e->flags & STAMP_EV_HW) {
		r.flags |= TXSOCK_F_HW;
		r.ts_ns = (int64_t)e->ts;
		r.phc = bpfstamp_phc(b, e->ifindex);
	} else {
		r.ts_ns = (int64_t)e->ts - b->tai_ns;
	}
	bpfstamp_flow(&r.key.flow, e->family, e->src, e->dst, e->sport,
		      e->dport);
	r.key.stage = e->stage;
	r.key.seq = e->seq;
	b->taken++;
	b->on_stamp(b->arg, &r);
	return 0;
}

/* Open and load the object, with or without the iterator. */
static int bpfstamp_load(struct bpfstamp *b, size_t ring, bool iter,
			 char err[BPFSTAMP_ERRBUF])
{
	int rc;

	stamp__destroy(b->skel);
	bpfstamp_libbpf_msg[0] = '\0';
	b->skel = stamp__open();
	if (!b->skel) {
		rc = -errno;
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "opening the BPF program: %s",
				  strerror(-rc));
	}
	b->skel->rodata->port_filter = b->port_filter;
	b->skel->rodata->wake_bytes = ring / 4;
	rc = bpf_map__set_max_entries(b->skel->maps.ring, (uint32_t)ring);
	if (rc)
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "sizing the ring buffer: %s",
				  strerror(-rc));
	bpf_program__set_autoload(b->skel->progs.stamp_arm_existing, iter);
	rc = stamp__load(b->skel);
	if (rc)
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "loading the BPF %s: %s (%s)",
				  iter ? "programs" : "program", strerror(-rc),
				  bpfstamp_why());
	return 0;
}

int bpfstamp_open(struct bpfstamp **out, const struct bpfstamp_config *cfg,
		  char err[BPFSTAMP_ERRBUF])
{
	size_t ring = cfg->ring_bytes ? cfg->ring_bytes : BPFSTAMP_RING_DEFAULT;
	long page = sysconf(_SC_PAGESIZE);
	struct bpfstamp *b;
	int rc;

	*out = NULL;
	if (!cfg->on_stamp)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -EINVAL,
				  "no stamp callback");
	if (ring < (size_t)page || (ring & (ring - 1)) || ring > (1u << 30))
		return errbuf_set(err, BPFSTAMP_ERRBUF, -EINVAL,
				  "ring buffer of %zu bytes: a power of two "
				  "from %ld bytes to 1 GiB", ring, page);
	b = calloc(1, sizeof(*b));
	if (!b)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOMEM,
				  "out of memory");
	b->on_stamp = cfg->on_stamp;
	b->arg = cfg->arg;
	b->port_filter = cfg->n_ports > 0;
	libbpf_set_print(bpfstamp_print);

	/* With the iterator first; a kernel that refuses it can still stamp
	 * every connection made from now on, so then without it. */
	rc = bpfstamp_load(b, ring, true, b->no_iter);
	if (rc)
		rc = bpfstamp_load(b, ring, false, err);
	else
		b->no_iter[0] = '\0';
	if (rc)
		goto fail;
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		uint32_t port = cfg->ports[i];
		uint8_t on = 1;

		if (bpf_map__update_elem(b->skel->maps.ports, &port,
					 sizeof(port), &on, sizeof(on), 0)) {
			rc = -errno;
			errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				   "port %u: %s", port,
				   strerror(-rc));
			goto fail;
		}
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.ring),
				 bpfstamp_record, b, NULL);
	if (!b->rb) {
		rc = -errno;
		errbuf_set(err, BPFSTAMP_ERRBUF, rc,
			   "ring buffer: %s", strerror(-rc));
		goto fail;
	}
	b->tai_ns = bpfstamp_tai_offset();
	*out = b;
	return 0;
fail:
	bpfstamp_close(b);
	return rc < 0 ? rc : -EINVAL;
}

int bpfstamp_attach(struct bpfstamp *b, const char *path,
		    char err[BPFSTAMP_ERRBUF])
{
	struct bpf_link *link;
	struct statfs sfs;
	struct stat st;
	uint64_t id;
	uint8_t on = 1;
	int fd, rc;

	if (b->n_links == BPFSTAMP_MAX_CGROUPS)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -E2BIG,
				  "%s: more than %d "
				  "cgroups", path, BPFSTAMP_MAX_CGROUPS);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -errno, "%s: %s", path,
				  strerror(errno));
	if (fstatfs(fd, &sfs) || fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc, "%s: %s", path,
				  strerror(-rc));
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP,
				  "%s: not a cgroup v2 "
				  "directory (BPF programs attach to cgroup "
				  "v2 only)", path);
	}
	bpfstamp_libbpf_msg[0] = '\0';
	link = bpf_program__attach_cgroup(b->skel->progs.stamp_sockops, fd);
	rc = link ? 0 : -errno;
	/* The link holds the cgroup; our descriptor is not needed. */
	close(fd);
	if (!link)
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "%s: attaching: %s (%s)",
				  path, strerror(-rc), bpfstamp_why());
	/* The cgroup's id is its directory's inode number (kernfs). */
	id = (uint64_t)st.st_ino;
	if (bpf_map__update_elem(b->skel->maps.cgroups, &id, sizeof(id), &on,
				 sizeof(on), 0)) {
		rc = -errno;
		bpf_link__destroy(link);
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc, "%s: %s", path,
				  strerror(-rc));
	}
	b->links[b->n_links++] = link;
	return 0;
}

int bpfstamp_arm_existing(struct bpfstamp *b, bpfstamp_conn_fn on_conn,
			  void *arg, char err[BPFSTAMP_ERRBUF])
{
	struct bpf_link *link;
	struct stamp_conn c;
	int fd = -1, rc, armed = 0;
	size_t have = 0;
	ssize_t n;

	if (b->no_iter[0])
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP, "the kernel "
				  "refused the TCP iterator: %.255s",
				  b->no_iter);
	bpfstamp_libbpf_msg[0] = '\0';
	link = bpf_program__attach_iter(b->skel->progs.stamp_arm_existing,
					NULL);
	if (!link) {
		rc = -errno;
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "TCP iterator: %s (%s)",
				  strerror(-rc), bpfstamp_why());
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		rc = -errno;
		errbuf_set(err, BPFSTAMP_ERRBUF, rc,
			   "TCP iterator: %s", strerror(-rc));
		goto out;
	}
	for (;;) {
		n = read(fd, (char *)&c + have, sizeof(c) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			errbuf_set(err, BPFSTAMP_ERRBUF, rc, "TCP iterator: %s",
				   strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have < sizeof(c))
			continue;
		have = 0;
		if (on_conn) {
			struct bpfstamp_conn bc = {
				.state = c.state, .err = c.err,
			};

			bpfstamp_flow(&bc.flow, c.family, c.src, c.dst,
				      c.sport, c.dport);
			bpfstamp_flow_text(&bc.flow, bc.text, sizeof(bc.text));
			on_conn(arg, &bc);
		}
		armed += c.err == 0;
	}
	rc = armed;
out:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return rc;
}

int bpfstamp_fd(const struct bpfstamp *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int bpfstamp_consume(struct bpfstamp *b)
{
	int n;

	/* Read once per batch: the offset moves in whole seconds, rarely. */
	b->tai_ns = bpfstamp_tai_offset();
	n = ring_buffer__consume(b->rb);
	return n;
}

int bpfstamp_stats(const struct bpfstamp *b, struct bpfstamp_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum[STAMP_ST_MAX] = { 0 };
	uint64_t *v;

	memset(st, 0, sizeof(*st));
	st->taken = b->taken;
	st->bad = b->bad;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < STAMP_ST_MAX; k++) {
		if (bpf_map__lookup_elem(b->skel->maps.stats, &k, sizeof(k), v,
					 (size_t)ncpu * sizeof(*v), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[k] += v[c];
	}
	free(v);
	st->armed = sum[STAMP_ST_ARMED];
	st->arm_failed = sum[STAMP_ST_ARM_FAILED];
	st->sends = sum[STAMP_ST_SENDS];
	st->send_failed = sum[STAMP_ST_SEND_FAILED];
	st->stamps = sum[STAMP_ST_STAMPS];
	st->ring_full = sum[STAMP_ST_RING_FULL];
	return 0;
}

void bpfstamp_close(struct bpfstamp *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->n_links; i++)
		bpf_link__destroy(b->links[i]);
	ring_buffer__free(b->rb);
	stamp__destroy(b->skel);
	free(b);
}
