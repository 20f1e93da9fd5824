/* fuzz_follow — libFuzzer target for report_follow_parse(), tapless
 * report's reader of the lines tapless correlate --follow --json writes
 * (both shapes: the figures in "latency_ns", and count/p50_ns/p99_ns in
 * the line as before). Its JSON reader is our own, so any bytes must give
 * a line used (1), passed over (0) or refused with a reason (-EBADMSG)
 * that leaves nothing in the record; the names it keeps end within their
 * buffers; percentiles only with samples counted. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "report/report_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_ends(const char *s, size_t size)
{
	if (!memchr(s, 0, size))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct report_frec zero;
	struct report_frec rec;
	const char *why = NULL;
	int rc = report_follow_parse((const char *)data, size, &rec, &why);

	switch (rc) {
	case -EBADMSG:
		if (!why || !*why || memcmp(&rec, &zero, sizeof(rec)))
			__builtin_trap();
		break;
	case 0:
		break;
	case 1:
		if (rec.type != REPORT_FREC_HOP && rec.type != REPORT_FREC_TXN)
			__builtin_trap();
		fuzz_ends(rec.a, sizeof(rec.a));
		fuzz_ends(rec.b, sizeof(rec.b));
		fuzz_ends(rec.flags, sizeof(rec.flags));
		if (!rec.have_interval || rec.end_ns <= rec.start_ns ||
		    (rec.have_q && !rec.count))
			__builtin_trap();
		break;
	default:
		__builtin_trap();
	}
	return 0;
}
