/* tstep.h — the step a clock's readings or stamps come in: the greatest
 * common divisor of the differences between consecutive values (8 ns for a
 * NIC counting at 125 MHz, 1000 for microsecond pcap). Streamed, so a
 * capture is not held to find it. A clock with a step that is not a whole
 * number of ns (7.5 ns, written as whole ns) shows as 1.
 */
#ifndef TAPLESS_TSTEP_H
#define TAPLESS_TSTEP_H

#include <stdbool.h>
#include <stdint.h>

struct tstep {
	int64_t last;
	uint64_t g;
	bool any;
};

void tstep_init(struct tstep *s);
void tstep_add(struct tstep *s, int64_t v);

/* The step so far: 0 while no two values differed. */
int64_t tstep_get(const struct tstep *s);

#endif
