/* test_reorder.c — frames that arrive out of stamp order (by less than the
 * hold time) come out in order per group, with their bytes intact, never
 * before their hold is up; a full buffer gives way without losing frames. */
#include <errno.h>
#include <sys/resource.h>

#include "live/reorder.h"
#include "unit.h"

#define MS 1000000LL

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Frame bytes derived from its stamp, so corruption is detectable. */
static void fill(uint8_t *b, uint32_t len, int64_t ts)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(ts * 31 + i);
}

static void check_bytes(const struct reorder_entry *e)
{
	for (uint32_t i = 0; i < e->caplen; i++)
		ck_assert_uint_eq(e->data[i], (uint8_t)(e->ts_ns * 31 + i));
}

/* Frames in two groups, arriving up to 8 ms late, held 10 ms. With a big
 * enough buffer nothing is forced out and order holds; with a small one
 * frames are forced out and only their bytes and number are checked. */
static void run_stream(size_t arena, size_t entries, bool expect_forced)
{
	struct reorder *r;
	struct reorder_entry e;
	uint8_t buf[300];
	int64_t last[2] = { INT64_MIN, INT64_MIN };
	int64_t now = 0;
	unsigned out = 0, pushed = 0, forced = 0;

	ck_assert_int_eq(reorder_create(&r, arena, entries, 2, 10 * MS), 0);
	for (int i = 0; i < 5000; i++) {
		now += MS / 4;
		/* Group 0 stamps run 37 s ahead (a TAI PHC), group 1 is UTC;
		 * frames arrive up to 8 ms after their stamp. */
		unsigned g = rnd() % 2;
		int64_t ts = now - (int64_t)(rnd() % (8 * MS)) + (g ? 0 : 37000 * MS);
		struct reorder_entry in = { .ts_ns = ts, .arrival_ns = now,
					    .id = g + 10, .caplen = rnd() % 300,
					    .group = g, .data = buf };

		in.origlen = in.caplen + 4;
		fill(buf, in.caplen, ts);
		while (!reorder_room(r, in.caplen)) {
			ck_assert_int_eq(reorder_pop_oldest(r, &e), 1);
			/* forced: order may break, bytes may not */
			check_bytes(&e);
			last[e.group] = e.ts_ns;
			out++;
			forced++;
		}
		ck_assert_int_eq(reorder_push(r, &in), 0);
		pushed++;
		while (reorder_pop(r, now, &e)) {
			ck_assert_int_ge(now - e.arrival_ns, 10 * MS);
			if (!forced)
				ck_assert_int_ge(e.ts_ns, last[e.group]);
			ck_assert_uint_eq(e.id, e.group + 10);
			ck_assert_uint_eq(e.origlen, e.caplen + 4);
			check_bytes(&e);
			last[e.group] = e.ts_ns;
			out++;
		}
	}
	while (reorder_pop_oldest(r, &e)) {
		if (!forced)
			ck_assert_int_ge(e.ts_ns, last[e.group]);
		check_bytes(&e);
		last[e.group] = e.ts_ns;
		out++;
	}
	ck_assert_uint_eq(out, pushed);
	ck_assert_uint_eq(reorder_count(r), 0);
	ck_assert(expect_forced ? forced > 0 : forced == 0);
	reorder_destroy(r);
}

/* The arena (16 KiB) wraps about 45 times; 128 entries cover the ~80
 * held at once. */
START_TEST(late_frames_in_order)
{
	run_stream(16384, 128, false);
}
END_TEST

START_TEST(full_buffer_gives_way)
{
	run_stream(2048, 16, true);
}
END_TEST

START_TEST(hold_and_ties)
{
	struct reorder *r;
	struct reorder_entry e;
	uint8_t b = 0;

	ck_assert_int_eq(reorder_create(&r, 1024, 8, 1, 100 * MS), 0);
	for (uint32_t k = 0; k < 3; k++) {
		struct reorder_entry in = { .ts_ns = 5, .arrival_ns = 0, .id = k,
					    .caplen = 1, .data = &b };
		ck_assert_int_eq(reorder_push(r, &in), 0);
	}
	ck_assert_int_eq(reorder_pop(r, 100 * MS - 1, &e), 0);
	/* Equal stamps leave in arrival order. */
	for (uint32_t k = 0; k < 3; k++) {
		ck_assert_int_eq(reorder_pop(r, 100 * MS, &e), 1);
		ck_assert_uint_eq(e.id, k);
	}
	ck_assert_int_eq(reorder_pop(r, INT64_MAX, &e), 0);
	/* Full by entry count, then by bytes; an out-of-range group. */
	for (int k = 0; k < 8; k++) {
		struct reorder_entry in = { .ts_ns = k, .caplen = 1, .data = &b };
		ck_assert_int_eq(reorder_push(r, &in), 0);
	}
	struct reorder_entry in = { .ts_ns = 9, .caplen = 1, .data = &b };
	ck_assert(!reorder_room(r, 1));
	ck_assert_int_eq(reorder_push(r, &in), -ENOBUFS);
	while (reorder_pop_oldest(r, &e))
		;
	ck_assert(reorder_room(r, 1024));
	ck_assert(!reorder_fits_ever(r, 1025));
	in.group = 1;
	ck_assert_int_eq(reorder_push(r, &in), -EINVAL);
	reorder_destroy(r);
	ck_assert_int_eq(reorder_create(&r, 1024, 8, REORDER_MAX_GROUPS + 1, 0), -EINVAL);
	ck_assert_int_eq(reorder_create(&r, 0, 8, 1, 0), -EINVAL);
}
END_TEST

/* A frame taken back while held never comes out, and its room comes back;
 * a stale handle, or one naming other bytes, drops nothing. */
START_TEST(drop_while_held)
{
	struct reorder *r;
	struct reorder_entry e;
	uint8_t a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 };
	uint64_t sa, sb;

	ck_assert_int_eq(reorder_create(&r, 8, 4, 1, 10 * MS), 0);
	sa = reorder_next_seq(r);
	ck_assert_int_eq(reorder_push(r, &(struct reorder_entry){
		.ts_ns = 1, .id = 1, .caplen = 4, .data = a }), 0);
	sb = reorder_next_seq(r);
	ck_assert_uint_eq(sb, sa + 1);
	ck_assert_int_eq(reorder_push(r, &(struct reorder_entry){
		.ts_ns = 2, .id = 2, .caplen = 4, .data = b }), 0);
	ck_assert(!reorder_room(r, 4));		/* the arena is full */
	/* Wrong bytes, wrong length, a handle not pushed yet: kept. */
	ck_assert(!reorder_drop(r, sa, b, 4));
	ck_assert(!reorder_drop(r, sa, a, 3));
	ck_assert(!reorder_drop(r, sb + 1, b, 4));
	ck_assert(reorder_drop(r, sa, a, 4));
	ck_assert(!reorder_drop(r, sa, a, 4));	/* once */
	ck_assert_uint_eq(reorder_count(r), 1);
	/* Only the other comes out, and the dropped one's room is back. */
	ck_assert_int_eq(reorder_pop(r, 10 * MS, &e), 1);
	ck_assert_uint_eq(e.id, 2);
	ck_assert_int_eq(reorder_pop(r, INT64_MAX, &e), 0);
	ck_assert(reorder_room(r, 8));
	/* Released already: a late drop is refused. */
	ck_assert(!reorder_drop(r, sb, b, 4));
	/* A dropped frame at the top of a pop_oldest is skipped too. */
	sa = reorder_next_seq(r);
	ck_assert_int_eq(reorder_push(r, &(struct reorder_entry){
		.ts_ns = 3, .id = 3, .caplen = 4, .data = a }), 0);
	ck_assert_int_eq(reorder_push(r, &(struct reorder_entry){
		.ts_ns = 4, .id = 4, .caplen = 4, .data = b }), 0);
	ck_assert(reorder_drop(r, sa, a, 4));
	ck_assert_int_eq(reorder_pop_oldest(r, &e), 1);
	ck_assert_uint_eq(e.id, 4);
	ck_assert_int_eq(reorder_pop_oldest(r, &e), 0);
	ck_assert_uint_eq(reorder_count(r), 0);
	reorder_destroy(r);
}
END_TEST

/* In-order runs with late frames among them, drops, and pops between
 * pushes: whatever path a frame took (the run of frames that came in
 * order, or the heap of the late ones), a group's frames come out in
 * (stamp, arrival) order and every frame not dropped comes out once. */
START_TEST(run_and_heap_agree)
{
	struct reorder *r;
	struct reorder_entry e;
	uint8_t buf[64];
	int64_t ts = 1000, last_ts = INT64_MIN;
	uint64_t last_seq = 0, pushed = 0, popped = 0, dropped = 0;
	bool any = false;

	ck_assert_int_eq(reorder_create(&r, 1 << 20, 4096, 1, 0), 0);
	for (int i = 0; i < 20000; i++) {
		int64_t t = rnd() % 8 ? (ts += rnd() % 3) : ts - (int64_t)(rnd() % 50);
		uint64_t seq = reorder_next_seq(r);

		fill(buf, 16, t);
		e = (struct reorder_entry){ .ts_ns = t, .caplen = 16, .origlen = 16,
					    .data = buf, .arrival_ns = i };
		if (!reorder_room(r, 16))
			break;
		ck_assert_int_eq(reorder_push(r, &e), 0);
		pushed++;
		if (rnd() % 50 == 0 && reorder_drop(r, seq, buf, 16))
			dropped++;
		/* Pop only what no later push can precede: frames 50 below
		 * the newest in-order stamp. */
		while (reorder_count(r) > 64) {
			ck_assert_int_eq(reorder_pop_oldest(r, &e), 1);
			check_bytes(&e);
			popped++;
			if (e.ts_ns < ts - 50) {
				ck_assert(!any || e.ts_ns >= last_ts);
				last_ts = e.ts_ns;
				any = true;
			} else {
				break;
			}
		}
	}
	while (reorder_pop_oldest(r, &e) == 1) {
		check_bytes(&e);
		popped++;
	}
	(void)last_seq;
	ck_assert_uint_eq(popped + dropped, pushed);
	ck_assert_uint_eq(reorder_count(r), 0);
	reorder_destroy(r);
}
END_TEST

/* The arena and the entry ring have their pages from the start: frames
 * pushed through them take no page fault. 8 MiB of frames through an 8 MiB
 * arena would take over 2000 with 4 KiB pages touched as they come; what
 * is left under the sanitizers is their shadow (an eighth of the bytes). */
START_TEST(no_page_faults)
{
	struct reorder *r;
	struct reorder_entry e;
	static uint8_t buf[1500];
	struct rusage before, after;
	int64_t ts = 0;

	ck_assert_int_eq(reorder_create(&r, 8u << 20, 8192, 1, 0), 0);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
	for (int i = 0; i < 6000; i++) {
		struct reorder_entry in = { .ts_ns = ++ts, .caplen = sizeof(buf),
					    .origlen = sizeof(buf), .data = buf };

		while (!reorder_room(r, in.caplen))
			ck_assert_int_eq(reorder_pop_oldest(r, &e), 1);
		ck_assert_int_eq(reorder_push(r, &in), 0);
	}
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);
	ck_assert_int_lt(after.ru_minflt - before.ru_minflt, 1000);
	reorder_destroy(r);
}
END_TEST

static Suite *reorder_suite(void)
{
	Suite *s = suite_create("reorder");
	TCase *tc = tcase_create("reorder");

	tcase_add_test(tc, late_frames_in_order);
	tcase_add_test(tc, full_buffer_gives_way);
	tcase_add_test(tc, hold_and_ties);
	tcase_add_test(tc, drop_while_held);
	tcase_add_test(tc, run_and_heap_agree);
	tcase_add_test(tc, no_page_faults);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(reorder_suite)
