/* fuzz_fix — libFuzzer target for the FIX framer and parser: the input is a
 * byte stream as a peer (or a reassembled capture) delivers it. Framing,
 * resynchronising after garbage, parsing and field access must never read
 * out of bounds or loop forever. */
#include <stddef.h>
#include <stdint.h>

#include "fix/fix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fix_msg m;
	const char *p = (const char *)data;
	size_t left = size, sum = 0;

	while (left) {
		enum fix_error why;
		size_t skip, len;
		int n = fix_frame(p, left, 65536, &skip, &why);

		if (n == 0)
			break;			/* needs more bytes */
		if (n < 0) {
			if (!skip || skip > left)
				__builtin_trap();	/* must make progress */
			p += skip;
			left -= skip;
			continue;
		}
		if (!fix_parse(&m, p, (size_t)n, &why)) {
			int pos = -1;
			const char *v;
			int64_t x;

			while ((v = fix_next(&m, 55, &pos, &len)))
				sum += len ? (unsigned char)v[len - 1] : 1;
			if (!fix_get_int(&m, 34, &x))
				sum += (size_t)x;
			sum += (size_t)fix_is(&m, 35, "D");
		}
		p += n;
		left -= (size_t)n;
	}
	fuzz_sink = sum;
	return 0;
}
