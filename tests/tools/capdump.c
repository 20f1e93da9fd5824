/* capdump — print what the capture readers see in a file, one line per
 * packet ("TS_NS IFACE DIR CAPLEN ORIGLEN"), then the interfaces. Exit 1 with
 * the reader's message (file and offset) when the file is damaged, after
 * printing every packet before the damage. For the replay tests.
 *
 * capdump --tap FORMAT FILE: the frames as a tap format (tapfmt.h: a name,
 * "auto" or "none") leaves them, one line each:
 *   TS_NS PS CAPLEN ORIGLEN DEGRADED DEVICE PORT RECORD_NS
 * (DEVICE, PORT "-" when the format does not name them), then on stderr
 * the format in force, its counts and its first warning.
 *
 * capdump --blocks FILE: the packet and statistics blocks of a pcapng file
 * tapless wrote (one section, this host's byte order, nanosecond stamps),
 * in file order, without the capture reader, for the tests of what
 * tapless-capd writes around the packets:
 *   epb TS_NS IFACE
 *   isb TS_NS IFACE RECV DROP COMMENT   ("-" for what the block leaves out)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/capfile.h"
#include "files/pcapng_format.h"

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int tap(const char *name, const char *path)
{
	enum tapfmt_kind kind;
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	struct cap_stats st;
	int rc;

	if (tapfmt_parse(name, &kind)) {
		fprintf(stderr, "capdump: unknown tap format %s (%s)\n", name,
			tapfmt_names());
		return 1;
	}
	if (cap_open(&r, path, err)) {
		fprintf(stderr, "capdump: %s\n", err);
		return 1;
	}
	cap_set_tapfmt(r, kind);
	while ((rc = cap_next(r, &pkt)) == 1) {
		printf("%" PRId64 " %u %u %u %d ", pkt.ts_ns, pkt.ps, pkt.caplen,
		       pkt.origlen, pkt.degraded);
		if (pkt.has_port)
			printf("%u %u", pkt.device, pkt.port);
		else
			printf("- -");
		printf(" %" PRId64 "\n", pkt.record_ns);
	}
	cap_stats(r, &st);
	fprintf(stderr, "capdump: tap %s: stamped %" PRIu64 " consumed %" PRIu64
		" missing %" PRIu64 " bad %" PRIu64 " degraded %" PRIu64 "\n",
		tapfmt_name(st.tap), st.tap_stamped, st.tap_consumed,
		st.tap_missing, st.tap_bad, st.tap_degraded);
	if (cap_warning(r)[0])
		fprintf(stderr, "capdump: warning: %s\n", cap_warning(r));
	if (rc < 0)
		fprintf(stderr, "capdump: %s\n", cap_error(r));
	cap_close(r);
	return rc < 0 ? 1 : 0;
}

static int blocks(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t n = 0, off = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	for (size_t got; (b = realloc(b, n + 65536)) &&
	     (got = fread(b + n, 1, 65536, f)) > 0;)
		n += got;
	fclose(f);
	if (!b || n < 12 || get32(b) != PCAPNG_BT_SHB ||
	    get32(b + 8) != PCAPNG_BYTE_ORDER_MAGIC) {
		fprintf(stderr, "capdump: %s: not a pcapng file of this host's "
			"byte order\n", path);
		free(b);
		return 1;
	}
	while (off + 12 <= n) {
		uint32_t type = get32(b + off), len = get32(b + off + 4);
		const unsigned char *o, *end;
		char recv[24] = "-", drop[24] = "-", comment[256] = "-";

		if (len < 12 || len % 4 || off + len > n) {
			fprintf(stderr, "capdump: %s: offset %zu: bad block "
				"length %u\n", path, off, len);
			free(b);
			return 1;
		}
		if (type == PCAPNG_BT_EPB && len >= 32)
			printf("epb %" PRIu64 " %u\n",
			       (uint64_t)get32(b + off + 12) << 32 | get32(b + off + 16),
			       get32(b + off + 8));
		if (type == PCAPNG_BT_ISB && len >= 24) {
			end = b + off + len - 4;
			for (o = b + off + 20; o + 4 <= end;) {
				uint16_t code, olen;
				uint64_t v;

				memcpy(&code, o, 2);
				memcpy(&olen, o + 2, 2);
				if (code == PCAPNG_OPT_ENDOFOPT || o + 4 + olen > end)
					break;
				if (code == PCAPNG_OPT_COMMENT)
					snprintf(comment, sizeof(comment), "%.*s",
						 (int)olen, (const char *)o + 4);
				if ((code == PCAPNG_ISB_IFRECV ||
				     code == PCAPNG_ISB_IFDROP) && olen == 8) {
					memcpy(&v, o + 4, 8);
					snprintf(code == PCAPNG_ISB_IFRECV ? recv : drop,
						 sizeof(recv), "%" PRIu64, v);
				}
				o += 4 + ((olen + 3u) & ~3u);
			}
			printf("isb %" PRIu64 " %u %s %s %s\n",
			       (uint64_t)get32(b + off + 12) << 32 | get32(b + off + 16),
			       get32(b + off + 8), recv, drop, comment);
		}
		off += len;
	}
	free(b);
	if (off != n) {
		fprintf(stderr, "capdump: %s: ends inside a block\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const dirs[] = { "-", "in", "out", "?" };
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "--blocks"))
		return blocks(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "--tap"))
		return tap(argv[2], argv[3]);
	if (argc != 2) {
		fprintf(stderr, "usage: capdump [--blocks | --tap FORMAT] FILE\n");
		return 1;
	}
	if (cap_open(&r, argv[1], err)) {
		fprintf(stderr, "capdump: %s\n", err);
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) == 1)
		printf("%" PRId64 " %u %s %u %u\n", pkt.ts_ns, pkt.iface,
		       dirs[pkt.dir & 3], pkt.caplen, pkt.origlen);
	for (uint32_t i = 0; i < cap_iface_count(r); i++) {
		const struct cap_iface *ifc = cap_iface(r, i);

		printf("iface %u name=%s linktype=%u resolution_ns=%" PRId64
		       " source=%s\n", i, ifc->name[0] ? ifc->name : "-",
		       ifc->linktype, ifc->resolution_ns, !ifc->src_known ? "unknown" :
		       ifc->src.hw ? "hw" : "sw");
	}
	if (rc < 0)
		fprintf(stderr, "capdump: %s\n", cap_error(r));
	cap_close(r);
	return rc < 0 ? 1 : 0;
}
