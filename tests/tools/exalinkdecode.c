/* exalinkdecode — run the ExaLINK stamp decoder (tapfmt_exalink_ops) over
 * the Ethernet frames of a capture file, for the replay tests: one line
 * per stamped frame on stdout,
 *   TS_NS PS CAPLEN_AFTER_CUT
 * then on stderr
 *   exalinkdecode: stamped N consumed N not-mine N bad N
 * and, when there were any, the first not-mine and bad frames' reasons.
 * Exit 0, or 1 when the file cannot be read whole. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "files/capfile.h"
#include "files/frame.h"
#include "files/tapfmt.h"

int main(int argc, char **argv)
{
	const struct tapfmt_ops *ops = &tapfmt_exalink_ops;
	char err[CAP_ERRBUF], why[256], first_nm[300] = "", first_bad[300] = "";
	uint64_t stamped = 0, consumed = 0, not_mine = 0, bad = 0, n = 0;
	struct cap_reader *r;
	struct cap_packet pkt;
	void *state;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: exalinkdecode FILE\n");
		return 1;
	}
	if (cap_open(&r, argv[1], err) < 0) {
		fprintf(stderr, "exalinkdecode: %s\n", err);
		return 1;
	}
	state = calloc(1, ops->state_size ? ops->state_size : 1);
	if (!state) {
		perror("exalinkdecode");
		return 1;
	}
	while ((rc = cap_next(r, &pkt)) > 0) {
		struct tapfmt_frame f = {
			.data = pkt.data, .caplen = pkt.caplen,
			.origlen = pkt.origlen, .trailer_off = pkt.caplen,
			.record_ns = pkt.ts_ns,
		};
		struct tapfmt_stamp s;

		n++;
		if (cap_iface(r, pkt.iface)->linktype != FRAME_LINK_ETHERNET)
			continue;
		why[0] = 0;
		rc = ops->decode(state, &f, &s, why, sizeof(why));
		if (rc == TAPFMT_STAMPED) {
			stamped++;
			printf("%" PRId64 " %u %" PRIu32 "\n", s.ts_ns, s.ps,
			       pkt.caplen - s.tail_len - s.head_len);
		} else if (rc == TAPFMT_CONSUMED) {
			consumed++;
		} else if (rc == TAPFMT_NOT_MINE) {
			if (!not_mine++)
				snprintf(first_nm, sizeof(first_nm),
					 "record %" PRIu64 ": %s", n, why);
		} else {
			if (!bad++)
				snprintf(first_bad, sizeof(first_bad),
					 "record %" PRIu64 ": %s", n, why);
		}
	}
	fprintf(stderr, "exalinkdecode: stamped %" PRIu64 " consumed %" PRIu64
		" not-mine %" PRIu64 " bad %" PRIu64 "\n", stamped, consumed,
		not_mine, bad);
	if (first_nm[0])
		fprintf(stderr, "exalinkdecode: first not-mine: %s\n", first_nm);
	if (first_bad[0])
		fprintf(stderr, "exalinkdecode: first bad: %s\n", first_bad);
	if (rc < 0)
		fprintf(stderr, "exalinkdecode: %s\n", cap_error(r));
	free(state);
	cap_close(r);
	return rc < 0 ? 1 : 0;
}
