/* fuzz_txsock — libFuzzer target for the TX stamp hand-over decoder, the
 * part of tapless-capd a local sender feeds: the input is a sender's byte
 * stream, delivered in pieces as reads return it. Decoding must never read
 * past what it was given, must accept or refuse at a record boundary, and a
 * decoded frame must lie inside the stream; what it decodes then goes
 * through the frame parser, as capd's readers will. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "files/frame.h"
#include "live/txsock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, sum = 0;
	/* The first byte picks the read size, so records straddle reads. */
	size_t step = size ? (size_t)data[0] % 97 + 1 : 1, have;

	if (size)
		data++, size--;
	for (have = step < size ? step : size; off < size;) {
		struct txsock_rec r;
		struct frame_info fi;
		int k = txsock_decode(data + off, have - off, &r);

		if (k < 0)
			break;			/* capd disconnects here */
		if (k == 0) {
			if (have == size)
				break;		/* stream ended mid-record */
			have = have + step < size ? have + step : size;
			continue;
		}
		if ((size_t)k > have - off || r.frame < data + off ||
		    r.frame + r.caplen > data + off + (size_t)k ||
		    r.origlen < r.caplen)
			__builtin_trap();
		if (!frame_parse(r.frame, r.caplen, r.linktype, &fi))
			sum += fi.payload_len + fi.flow.sport;
		sum += (size_t)r.ts_ns;
		off += (size_t)k;
		if (have < off)
			__builtin_trap();
	}
	fuzz_sink = sum;
	return 0;
}
