/* fuzz_tapfmt — libFuzzer target for the tap and switch stamp formats
 * (files/tapfmt.h) on their own, each format named, so that every
 * decoder sees every input (in a capture, detection would leave most of
 * them out): the input is a run of frames, each a 2-byte length then its
 * bytes, fed in order to one state per format (ExaLINK's keyframes carry
 * over). Any frame ends in a result of the contract and a cut that stays
 * inside the frame, never a crash or a read outside it; a why is one
 * printable line. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "files/tapfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_why(const char *why, size_t len)
{
	if (!memchr(why, 0, len))
		__builtin_trap();
	for (const char *p = why; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *state[TAPFMT_COUNT] = { 0 };
	struct tapfmt_detect *d = tapfmt_detect_new();

	for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++)
		if (tapfmt_ops(k)->state_size)
			state[k] = calloc(1, tapfmt_ops(k)->state_size);
	while (size >= 2) {
		size_t n = (size_t)data[0] << 8 | data[1];
		/* Copied: a decoder reading past caplen trips ASan. */
		uint8_t *frame;
		struct tapfmt_frame f;

		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		frame = malloc(n ? n : 1);
		memcpy(frame, data, n);
		f.data = frame;
		f.caplen = (uint32_t)n;
		f.origlen = (uint32_t)n + (n & 3);
		f.trailer_off = tapfmt_trailer_off(frame, f.caplen);
		if (f.trailer_off > f.caplen)
			__builtin_trap();
		/* Near the stamps a tap would carry, and far from them. */
		f.record_ns = n & 1 ? 1795900000000000000LL : (int64_t)n << 40;
		for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++) {
			struct tapfmt_stamp s;
			char why[TAPFMT_WHYBUF];
			int rc;

			memset(&s, 0, sizeof(s));
			memset(why, 'x', sizeof(why));
			why[0] = '\0';
			rc = tapfmt_ops(k)->decode(state[k], &f, &s, why);
			if (rc != TAPFMT_NOT_MINE && rc != TAPFMT_STAMPED &&
			    rc != TAPFMT_CONSUMED && rc != -EBADMSG)
				__builtin_trap();
			fuzz_why(why, sizeof(why));
			if (rc == TAPFMT_STAMPED &&
			    (s.ps > 999 || s.tail_len > f.caplen ||
			     s.head_off + (uint64_t)s.head_len > f.caplen - s.tail_len))
				__builtin_trap();
		}
		tapfmt_detect_feed(d, &f);
		free(frame);
		data += n;
		size -= n;
	}
	(void)tapfmt_detect_result(d);
	tapfmt_detect_free(d);
	for (int k = 0; k < TAPFMT_COUNT; k++)
		free(state[k]);
	return 0;
}
