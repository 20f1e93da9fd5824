/* fuzz_fix — libFuzzer target for the FIX framer and parser: the input is a
 * byte stream as a peer (or a reassembled capture) delivers it. Framing,
 * resynchronising after garbage, parsing and field access must never read
 * out of bounds or loop forever. Every SendingTime (52) and TransactTime
 * (60) met goes through fix_utc_parse(): one that parses writes back, at
 * 3, 6 or 9 digits, to a text that parses to no later a time, within
 * that many digits' resolution. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fix/fix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fuzz_sink;

static void fuzz_utc(const char *v, size_t len)
{
	struct fix_utc_cache c;
	char out[FIX_UTC_LEN];
	int64_t ns, back;
	unsigned digits, d2;

	if (fix_utc_parse(v, len, &ns, &digits))
		return;
	if (digits > 9)
		__builtin_trap();
	fix_utc_cache_init(&c);
	for (unsigned d = 3; d <= 9; d += 3) {
		int64_t res = d == 3 ? 1000000 : d == 6 ? 1000 : 1;

		fix_utc_time_digits(&c, ns, d, out);
		if (fix_utc_parse(out, strlen(out), &back, &d2) || d2 != d ||
		    back > ns || ns - back >= res)
			__builtin_trap();
	}
}

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
			for (int tag = 52; tag <= 60; tag += 8) {
				pos = -1;
				if ((v = fix_next(&m, (uint32_t)tag, &pos, &len)))
					fuzz_utc(v, len);
			}
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
