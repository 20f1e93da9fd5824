/* capdump — print what the capture readers see in a file, one line per
 * packet ("TS_NS IFACE DIR CAPLEN ORIGLEN"), then the interfaces. Exit 1 with
 * the reader's message (file and offset) when the file is damaged, after
 * printing every packet before the damage. For the replay tests. */
#include <inttypes.h>
#include <stdio.h>

#include "files/capfile.h"

int main(int argc, char **argv)
{
	static const char *const dirs[] = { "-", "in", "out", "?" };
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pkt;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: capdump FILE\n");
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
