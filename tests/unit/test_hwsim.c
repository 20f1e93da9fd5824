/* test_hwsim.c — tapless-hwsim's clocks and hosts: the clock model is
 * continuous through frequency changes and exact through steps, seeds stay
 * within 1 ms and 50 ppm, a host's state is shared through its file (two
 * opens see one clock), PHCs are found and made by interface, and stamps
 * carry the configured quantum and noise. The ring of held error-queue
 * messages (tx-late) gives them out in due order, the first put first of
 * two due at once, makes room when full by its oldest, and copies a
 * message in and out as recvmsg() would, flagging what did not fit; the
 * tx-late fault is seen by the library's one-load check and counted. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/errqueue.h>

#include "hwsim/hwsim_clock.h"
#include "hwsim/hwsim_held.h"
#include "hwsim/hwsim_host.h"
#include "unit.h"

#define S 1000000000LL

START_TEST(clock_model)
{
	struct hwsim_clock c;
	int64_t v;

	hwsim_clock_init(&c, 10 * S, 50000000, 50000);	/* +50 ms, 50 ppm */
	ck_assert_int_eq(hwsim_clock_at(&c, 10 * S), 10 * S + 50000000);
	/* 50 ppm over 2 s: 100 us. */
	ck_assert_int_eq(hwsim_clock_at(&c, 12 * S), 12 * S + 50000000 + 100000);
	/* A servo's correction: continuous at the change, then the new
	 * rate (50 ppm - 50 ppm = 0). */
	v = hwsim_clock_at(&c, 12 * S);
	hwsim_clock_set_freq(&c, 12 * S, -50000);
	ck_assert_int_eq(hwsim_clock_at(&c, 12 * S), v);
	ck_assert_int_eq(hwsim_clock_at(&c, 20 * S), v + 8 * S);
	/* A step of -50 ms at 20 s. */
	hwsim_clock_step(&c, 20 * S, -50000000);
	ck_assert_int_eq(hwsim_clock_at(&c, 20 * S), v + 8 * S - 50000000);
	/* clock_settime. */
	hwsim_clock_set(&c, 30 * S, 1000);
	ck_assert_int_eq(hwsim_clock_at(&c, 31 * S), 1000 + S);
	/* Negative rates run slow. */
	hwsim_clock_init(&c, 0, 0, -20000);
	ck_assert_int_eq(hwsim_clock_at(&c, 5 * S), 5 * S - 100000);
}
END_TEST

START_TEST(seeds)
{
	char name[32];
	int64_t off, off2;
	double ppb, ppb2;
	bool spread = false;

	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "eth%d", i);
		hwsim_seed("host", name, &off, &ppb);
		ck_assert_int_le(llabs(off), 1000000);
		ck_assert(fabs(ppb) <= 50000);
		if (i && (off != off2 || ppb != ppb2))
			spread = true;
		hwsim_seed("host", name, &off2, &ppb2);
		ck_assert_int_eq(off, off2);		/* the same every run */
		ck_assert(ppb == ppb2);
	}
	ck_assert(spread);
	hwsim_seed("a", "eth0", &off, &ppb);
	hwsim_seed("b", "eth0", &off2, &ppb2);
	ck_assert(off != off2 || ppb != ppb2);
}
END_TEST

static char dir[64];

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_hwsim.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(host_shared)
{
	struct hwsim_params p = {
		.phc_offset_ns = 50000000, .phc_ppm = 50,
		.sys_offset_ns = HWSIM_NONE, .sys_ppm = NAN,
	};
	struct hwsim_host *a, *b;
	struct hwsim_phc_info info;
	char err[HWSIM_HOST_ERRBUF], name[16];
	int64_t t;

	mkdir_tmp();
	/* Not there, not to be made. */
	ck_assert_int_eq(hwsim_host_open(&a, dir, "gm", false, NULL, err), -ENOENT);
	ck_assert(strstr(err, "no such simulated host"));
	ck_assert_int_eq(hwsim_host_open(&a, dir, "a/b", true, NULL, err), -EINVAL);
	ck_assert_int_eq(hwsim_host_open(&a, dir, "gm", true, &p, err), 0);
	/* A second program of the host: the params of the first stay. */
	ck_assert_int_eq(hwsim_host_open(&b, dir, "gm", true, NULL, err), 0);
	ck_assert_int_eq(hwsim_phc_find(a, "eth0", false), -ENOENT);
	ck_assert_int_eq(hwsim_phc_find(a, "eth0", true), 0);
	ck_assert_int_eq(hwsim_phc_find(b, "eth0", false), 0);
	ck_assert_int_eq(hwsim_phc_find(b, "eth1", true), 1);
	ck_assert_uint_eq(hwsim_phc_count(a), 2);
	ck_assert_int_eq(hwsim_phc_get(a, 1, &info), 0);
	ck_assert_str_eq(info.ifname, "eth1");
	ck_assert(info.clk.native_ppb == 50000);
	t = hwsim_true_now();
	ck_assert_int_le(llabs(hwsim_read(b, 0, t) - t - 50000000), 1000000);
	/* What one program does to a clock, the other sees. */
	hwsim_step(a, 0, 1000);
	hwsim_set_freq(a, 0, -50000);
	ck_assert(hwsim_get_freq(b, 0) == -50000);
	t = hwsim_true_now();
	ck_assert_int_eq(hwsim_read(a, 0, t), hwsim_read(b, 0, t));
	/* The system clock is its own. */
	hwsim_set_freq(b, -1, 1234);
	ck_assert(hwsim_get_freq(a, -1) == 1234);
	ck_assert(hwsim_get_freq(a, 0) == -50000);
	/* Eight PHCs at most. */
	for (int i = 2; i < HWSIM_MAX_PHC; i++) {
		snprintf(name, sizeof(name), "eth%d", i);
		ck_assert_int_eq(hwsim_phc_find(a, name, true), i);
	}
	ck_assert_int_eq(hwsim_phc_find(a, "eth99", true), -ENOSPC);
	hwsim_host_close(a);
	hwsim_host_close(b);
	/* Another file under the name: refused. */
	{
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/bad.hwsim", dir);
		f = fopen(path, "w");
		fputs("not a host\n", f);
		fclose(f);
		ck_assert_int_eq(hwsim_host_open(&a, dir, "bad", true, NULL, err), -EINVAL);
		ck_assert(strstr(err, "not a host file of this tapless-hwsim"));
	}
	rm_tmp();
}
END_TEST

START_TEST(stamps)
{
	struct hwsim_params p = {
		.phc_offset_ns = 0, .phc_ppm = 0, .sys_offset_ns = HWSIM_NONE,
		.sys_ppm = NAN, .quantum_ns = 8, .noise_ns = 20,
	};
	struct hwsim_host *h;
	char err[HWSIM_HOST_ERRBUF];
	double sum = 0, ss = 0;
	int n = 4000;

	mkdir_tmp();
	ck_assert_int_eq(hwsim_host_open(&h, dir, "nic", true, &p, err), 0);
	ck_assert_int_eq(hwsim_phc_find(h, "eth0", true), 0);
	for (int i = 0; i < n; i++) {
		int64_t t = 1000 * S + i * 997, v = hwsim_stamp(h, 0, t);
		double e;

		ck_assert_int_eq(((v % 8) + 8) % 8, 0);	/* the quantum */
		e = (double)(v - hwsim_read(h, 0, t));
		sum += e;
		ss += e * e;
	}
	/* Noise of sd 20 ns, cut down to 8 ns steps: mean about -3.5 ns
	 * (the cut), sd about 20. */
	ck_assert(fabs(sum / n + 3.5) < 2);
	ck_assert(fabs(sqrt(ss / n - (sum / n) * (sum / n)) - 20) < 2);
	hwsim_host_close(h);
	rm_tmp();
}
END_TEST

static struct hwsim_held_msg held_msg(int64_t due, uint32_t tag)
{
	struct hwsim_held_msg m;

	memset(&m, 0, sizeof(m));
	m.due_ns = due;
	m.len = m.datalen = 4;
	memcpy(m.data, &tag, 4);
	return m;
}

static uint32_t held_tag(const struct hwsim_held_msg *m)
{
	uint32_t tag;

	memcpy(&tag, m->data, 4);
	return tag;
}

START_TEST(held_due_order)
{
	static struct hwsim_held h;
	struct hwsim_held_msg m;

	hwsim_held_init(&h);
	ck_assert_int_eq(hwsim_held_next_due(&h), INT64_MAX);
	ck_assert_int_eq(hwsim_held_take_due(&h, INT64_MAX, &m), 0);
	m = held_msg(30, 1);
	ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	m = held_msg(10, 2);
	ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	m = held_msg(20, 3);
	ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	m = held_msg(10, 4);		/* due with 2, put after it */
	ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	ck_assert_uint_eq(hwsim_held_count(&h), 4);
	ck_assert_int_eq(hwsim_held_next_due(&h), 10);
	/* Nothing before its time. */
	ck_assert_int_eq(hwsim_held_take_due(&h, 9, &m), 0);
	ck_assert_int_eq(hwsim_held_take_due(&h, 25, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 2);
	ck_assert_int_eq(hwsim_held_take_due(&h, 25, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 4);
	ck_assert_int_eq(hwsim_held_take_due(&h, 25, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 3);
	ck_assert_int_eq(hwsim_held_take_due(&h, 25, &m), 0);
	ck_assert_int_eq(hwsim_held_next_due(&h), 30);
	ck_assert_int_eq(hwsim_held_take_due(&h, 30, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 1);
	ck_assert_uint_eq(hwsim_held_count(&h), 0);
	ck_assert_int_eq(hwsim_held_take_oldest(&h, &m), 0);
}
END_TEST

START_TEST(held_full)
{
	static struct hwsim_held h;
	struct hwsim_held_msg m;

	hwsim_held_init(&h);
	/* Due in reverse order of putting: the oldest is the last due. */
	for (uint32_t i = 0; i < HWSIM_HELD_SLOTS; i++) {
		m = held_msg(1000 - i, i);
		ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	}
	m = held_msg(5, 999);
	ck_assert_int_eq(hwsim_held_put(&h, &m), -ENOSPC);
	ck_assert_uint_eq(hwsim_held_count(&h), HWSIM_HELD_SLOTS);
	/* Room made by the oldest, due or not. */
	ck_assert_int_eq(hwsim_held_take_oldest(&h, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 0);
	ck_assert_int_eq(m.due_ns, 1000);
	m = held_msg(5, 999);
	ck_assert_int_eq(hwsim_held_put(&h, &m), 0);
	ck_assert_int_eq(hwsim_held_take_oldest(&h, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 1);
	ck_assert_int_eq(hwsim_held_take_due(&h, 5, &m), 1);
	ck_assert_uint_eq(held_tag(&m), 999);
	/* The rest in due order. */
	for (uint32_t i = HWSIM_HELD_SLOTS - 1; i >= 2; i--) {
		ck_assert_int_eq(hwsim_held_take_due(&h, 2000, &m), 1);
		ck_assert_uint_eq(held_tag(&m), i);
	}
	ck_assert_uint_eq(hwsim_held_count(&h), 0);
}
END_TEST

START_TEST(held_copy)
{
	static struct hwsim_held_msg m;
	unsigned char data[100], out[40], out2[200], name[16] = "abcdefghijklmno";
	unsigned char got_name[16];
	union {
		char b[CMSG_SPACE(sizeof(struct sock_extended_err)) +
		       CMSG_SPACE(48)];
		struct cmsghdr align;
	} ctl, got_ctl;
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {
		.msg_name = name, .msg_namelen = sizeof(name),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.b, .msg_controllen = sizeof(ctl.b),
		.msg_flags = MSG_ERRQUEUE,
	};
	struct iovec iov2[2] = { { out, 10 }, { out + 10, 30 } };
	struct msghdr back = {
		.msg_name = got_name, .msg_namelen = sizeof(got_name),
		.msg_iov = iov2, .msg_iovlen = 2,
		.msg_control = got_ctl.b, .msg_controllen = sizeof(got_ctl.b),
	};
	struct cmsghdr *c;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)i;
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_IP;
	c->cmsg_type = IP_RECVERR;
	c->cmsg_len = CMSG_LEN(sizeof(struct sock_extended_err));
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SO_TIMESTAMPING;
	c->cmsg_len = CMSG_LEN(48);
	memset(CMSG_DATA(c), 0x5a, 48);

	hwsim_held_from_msg(&m, &msg, 90, 77);	/* 90 of the 100 bytes */
	ck_assert_int_eq(m.due_ns, 77);
	ck_assert_uint_eq(m.len, 90);
	ck_assert_uint_eq(m.datalen, 90);
	ck_assert_uint_eq(m.ctrllen, sizeof(ctl.b));
	/* Into 40 bytes over two buffers: cut and flagged, both control
	 * messages whole, the address. */
	ck_assert_int_eq(hwsim_held_to_msg(&m, &back, MSG_ERRQUEUE), 40);
	ck_assert(back.msg_flags & MSG_TRUNC);
	ck_assert(back.msg_flags & MSG_ERRQUEUE);
	ck_assert(!(back.msg_flags & MSG_CTRUNC));
	ck_assert_int_eq(memcmp(out, data, 40), 0);
	ck_assert_uint_eq(back.msg_controllen, sizeof(ctl.b));
	ck_assert_int_eq(memcmp(got_ctl.b, ctl.b, sizeof(ctl.b)), 0);
	ck_assert_uint_eq(back.msg_namelen, sizeof(name));
	ck_assert_int_eq(memcmp(got_name, name, sizeof(name)), 0);
	/* Room for the first control message only: it alone, flagged. */
	iov2[0] = (struct iovec){ out2, sizeof(out2) };
	back.msg_iovlen = 1;
	back.msg_controllen = CMSG_SPACE(sizeof(struct sock_extended_err)) + 8;
	ck_assert_int_eq(hwsim_held_to_msg(&m, &back, MSG_ERRQUEUE), 90);
	ck_assert(!(back.msg_flags & MSG_TRUNC));
	ck_assert(back.msg_flags & MSG_CTRUNC);
	ck_assert_uint_eq(back.msg_controllen,
			  CMSG_SPACE(sizeof(struct sock_extended_err)));
	ck_assert_int_eq(memcmp(out2, data, 90), 0);
}
END_TEST

START_TEST(tx_late_fault)
{
	struct hwsim_fault f = { HWSIM_FAULT_TX_LATE, 20, 500000000 };
	struct hwsim_phc_info p;
	struct hwsim_host *h;
	char err[HWSIM_HOST_ERRBUF];
	int64_t d, lo = INT64_MAX, hi = 0;

	mkdir_tmp();
	ck_assert_int_eq(hwsim_host_open(&h, dir, "late", true, NULL, err), 0);
	ck_assert_int_eq(hwsim_phc_find(h, "eth0", true), 0);
	ck_assert_int_eq(hwsim_phc_find(h, "eth1", true), 1);
	ck_assert(!hwsim_tx_late_any(h));
	ck_assert_int_eq(hwsim_fault(h, 1, &f), 0);
	ck_assert(hwsim_tx_late_any(h));
	ck_assert_int_eq(hwsim_phc_get(h, 1, &p), 0);
	ck_assert_int_eq(p.faults.tx_late_pct, 20);
	ck_assert_int_eq(p.faults.tx_late_max_ns, 500000000);
	hwsim_count(h, 1, 1, 2, 1);
	ck_assert_int_eq(hwsim_phc_get(h, 1, &p), 0);
	ck_assert_uint_eq(p.counts.tx_lost, 1);
	ck_assert_uint_eq(p.counts.tx_late, 2);
	ck_assert_uint_eq(p.counts.tx_late_forced, 1);
	/* 0 turns it off, and its delay with it. */
	f.value = 0;
	ck_assert_int_eq(hwsim_fault(h, 1, &f), 0);
	ck_assert(!hwsim_tx_late_any(h));
	ck_assert_int_eq(hwsim_phc_get(h, 1, &p), 0);
	ck_assert_int_eq(p.faults.tx_late_max_ns, 0);
	/* Delays drawn within [0, max), spread over it. */
	for (int i = 0; i < 2000; i++) {
		d = hwsim_draw_below(h, 500000000);
		ck_assert(d >= 0 && d < 500000000);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ck_assert(lo < 10000000 && hi > 490000000);
	ck_assert_int_eq(hwsim_draw_below(h, 0), 0);
	hwsim_host_close(h);
	rm_tmp();
}
END_TEST

static Suite *hwsim_suite(void)
{
	Suite *s = suite_create("hwsim");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, clock_model);
	tcase_add_test(tc, seeds);
	tcase_add_test(tc, host_shared);
	tcase_add_test(tc, stamps);
	tcase_add_test(tc, held_due_order);
	tcase_add_test(tc, held_full);
	tcase_add_test(tc, held_copy);
	tcase_add_test(tc, tx_late_fault);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hwsim_suite)
