/* test_sim.c — tapless sim: deterministic files, the FTTC workload found
 * back in the captures, time order and quanta, honest journals, faults
 * counted, the topology with and without a switch, frames dropped from
 * one capture only, and bad input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/capfile.h"
#include "fix/fix.h"
#include "files/frame.h"
#include "ptp/journal.h"
#include "sim/sim.h"
#include "unit.h"

#define RATE 1000
#define SECONDS 2
#define MESSAGES (RATE * SECONDS)
#define TRADES (MESSAGES / 1000)

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "sim");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static const char *path_in(const char *sub, const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s/%s", dir, sub, name);
	return p[k];
}

static void config(struct sim_config *c, const char *sub)
{
	static char out[8][160];
	static int k;

	k = (k + 1) % 8;
	snprintf(out[k], sizeof(out[k]), "%s/%s", dir, sub);
	sim_config_init(c);
	c->out_dir = out[k];
	c->rates[0] = RATE;
	c->duration_s = SECONDS;
}

static void run(const struct sim_config *c, struct sim_result *r)
{
	char err[SIM_ERRBUF] = "";
	int rc = sim_run(c, r, err);

	ck_assert_msg(rc == 0, "sim_run: %d %s", rc, err);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	ck_assert_msg(f != NULL, "%s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

static bool same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = slurp(a, &la), *y = slurp(b, &lb);
	bool same = la == lb && !memcmp(x, y, la);

	free(x);
	free(y);
	return same;
}

/* The number after "key": in a JSON text (the first occurrence). */
static long long json_number(const char *text, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(text, k);
	ck_assert_msg(p != NULL, "no %s in truth.json", key);
	return strtoll(p + strlen(k), NULL, 10);
}

static const char *files[] = {
	"algo.pcapng", "venue.pcapng", "algo.journal", "venue.journal",
	"topology", "truth.json",
};

START_TEST(same_seed_same_bytes)
{
	struct sim_config a, b, c;
	struct sim_result r;

	config(&a, "a");
	a.seed = 7;
	a.retransmit = 0.01;
	a.reorder = 0.01;
	a.noise = 0.01;
	run(&a, &r);
	b = a;
	config(&b, "b");
	b.seed = 7;
	b.retransmit = b.reorder = b.noise = 0.01;
	run(&b, &r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(same_file(path_in("a", files[i]), path_in("b", files[i])),
			      "%s differs with the same seed", files[i]);
	c = a;
	config(&c, "c");
	c.seed = 8;
	c.retransmit = c.reorder = c.noise = 0.01;
	run(&c, &r);
	ck_assert_msg(!same_file(path_in("a", "algo.pcapng"), path_in("c", "algo.pcapng")),
		      "another seed gave the same algo capture");
	ck_assert_msg(!same_file(path_in("a", "venue.pcapng"), path_in("c", "venue.pcapng")),
		      "another seed gave the same venue capture");
	ck_assert_msg(!same_file(path_in("a", "truth.json"), path_in("c", "truth.json")),
		      "another seed gave the same truth");
}
END_TEST

struct counts {
	unsigned long x_in, buy_out, sell_out, exec_in, logon, frames;
	unsigned long out, in;
};

/* Read a capture: every stamp a multiple of quantum, in time order; FIX
 * messages counted by type and direction as the host saw them. */
static void read_capture(const char *path, const char *self_ip, int64_t quantum,
			 bool whole, struct counts *k)
{
	static struct fix_msg m;
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pk;
	int64_t last = INT64_MIN;
	int rc;

	memset(k, 0, sizeof(*k));
	ck_assert_msg(cap_open(&r, path, err) == 0, "%s", err);
	while ((rc = cap_next(r, &pk)) == 1) {
		struct frame_info fi;
		const char *p;
		size_t left;
		bool out;
		char src[16];

		k->frames++;
		ck_assert_msg(pk.ts_ns % quantum == 0, "%s: stamp %lld not a multiple of %lld",
			      path, (long long)pk.ts_ns, (long long)quantum);
		ck_assert_msg(pk.ts_ns >= last, "%s: packet %lu before the one before it",
			      path, k->frames);
		last = pk.ts_ns;
		if (frame_parse(pk.data, pk.caplen, FRAME_LINK_ETHERNET, &fi))
			continue;
		snprintf(src, sizeof(src), "%u.%u.%u.%u", fi.flow.src[0], fi.flow.src[1],
			 fi.flow.src[2], fi.flow.src[3]);
		out = !strcmp(src, self_ip);
		if (cap_format(r) == CAP_PCAPNG)
			ck_assert_int_eq(pk.dir, out ? PCAPNG_DIR_OUT : PCAPNG_DIR_IN);
		if (out)
			k->out++;
		else
			k->in++;
		if (!whole || fi.flow.proto != 6 || !fi.payload_len ||
		    (fi.flow.sport != 9001 && fi.flow.sport != 9002 &&
		     fi.flow.dport != 9001 && fi.flow.dport != 9002))
			continue;
		/* With the default MSS every message is whole in its frame. */
		p = (const char *)fi.payload;
		left = fi.payload_len;
		while (left) {
			enum fix_error why;
			size_t skip;
			int n = fix_frame(p, left, 8192, &skip, &why);

			ck_assert_msg(n > 0, "%s: frame %lu: not whole FIX messages", path,
				      k->frames);
			ck_assert_int_eq(fix_parse(&m, p, (size_t)n, &why), 0);
			if (fix_is(&m, 35, "X") && !out)
				k->x_in++;
			else if (fix_is(&m, 35, "D") && out && fix_is(&m, 54, "1"))
				k->buy_out++;
			else if (fix_is(&m, 35, "D") && out && fix_is(&m, 54, "2"))
				k->sell_out++;
			else if (fix_is(&m, 35, "8") && !out)
				k->exec_in++;
			else if (fix_is(&m, 35, "A"))
				k->logon++;
			p += n;
			left -= (size_t)n;
		}
	}
	ck_assert_msg(rc == 0, "%s: %s", path, cap_error(r));
	cap_close(r);
}

START_TEST(workload_in_the_captures)
{
	struct sim_config c;
	struct sim_result r;
	struct counts a, v;

	config(&c, "w");
	c.coalesce = 0.5;
	run(&c, &r);
	ck_assert_uint_eq(r.md_messages, MESSAGES);
	ck_assert_uint_eq(r.trades, TRADES);
	read_capture(path_in("w", "algo.pcapng"), "198.18.0.1", 8, true, &a);
	ck_assert_uint_eq(a.x_in, MESSAGES);
	ck_assert_uint_eq(a.buy_out, TRADES);
	ck_assert_uint_eq(a.sell_out, TRADES);
	ck_assert_uint_eq(a.exec_in, 4 * TRADES);
	ck_assert_uint_eq(a.logon, 4);
	ck_assert_uint_eq(a.frames, r.packets[SIM_ALGO]);
	read_capture(path_in("w", "venue.pcapng"), "198.18.0.2", 8, true, &v);
	/* Every frame is seen at both ends: one's sends are the other's
	 * receives. */
	ck_assert_uint_eq(v.frames, a.frames);
	ck_assert_uint_eq(v.out, a.in);
	ck_assert_uint_eq(v.in, a.out);
	/* The truth has every message and transaction. */
	{
		static const struct { const char *name; long long n; } tr[] = {
			{ "tick_to_trade", TRADES }, { "fill_to_sell", TRADES },
			{ "order_to_ack", 2 * TRADES }, { "order_to_fill", 2 * TRADES },
		};
		size_t len;
		char *truth = slurp(path_in("w", "truth.json"), &len), key[64];
		const char *p;

		ck_assert_int_eq(json_number(truth, "messages"), MESSAGES);
		p = strstr(truth, "\"from\": \"venue\"");
		ck_assert_ptr_nonnull(p);
		/* Market data, 2 Logons, 4 reports a trade. */
		ck_assert_int_eq(json_number(p, "messages"), MESSAGES + 2 + 4 * TRADES);
		for (size_t i = 0; i < sizeof(tr) / sizeof(tr[0]); i++) {
			snprintf(key, sizeof(key), "\"name\": \"%s\"", tr[i].name);
			p = strstr(truth, key);
			ck_assert_ptr_nonnull(p);
			ck_assert_int_eq(json_number(p, "count"), tr[i].n);
		}
		free(truth);
	}
}
END_TEST

/* Faults, a fast rate, a clock jumping out of sync and back, stack delays:
 * frames are not written in the order they happen, yet each file is in
 * stamp order. */
START_TEST(time_order_under_faults)
{
	struct sim_config c;
	struct sim_result r;
	struct counts a, v;
	char err[SIM_ERRBUF];

	config(&c, "o");
	c.rates[0] = 500000;
	c.duration_s = 0.02;
	c.retransmit = 0.05;
	c.reorder = 0.05;
	c.mss = 64;
	c.stack_delay_ns = 100;
	c.stack_jitter_ns = 50;
	ck_assert_int_eq(sim_parse_unsync(&c, "algo=0.005-0.01", err), 0);
	ck_assert_int_eq(sim_parse_start_late(&c, "venue=0.003", err), 0);
	run(&c, &r);
	read_capture(path_in("o", "algo.pcapng"), "198.18.0.1", 8, false, &a);
	read_capture(path_in("o", "venue.pcapng"), "198.18.0.2", 8, false, &v);
	ck_assert_uint_eq(a.frames, r.packets[SIM_ALGO]);
	ck_assert_uint_eq(v.frames, r.packets[SIM_VENUE]);
	ck_assert_uint_lt(v.frames, a.frames);	/* the venue started late */
}
END_TEST

START_TEST(pcap_microseconds)
{
	struct sim_config c;
	struct sim_result r;
	struct counts a, v;
	struct stat st;
	char err[SIM_ERRBUF];

	config(&c, "p");
	ck_assert_int_eq(sim_parse_format(&c, "algo=pcap-us", err), 0);
	ck_assert_int_eq(sim_parse_format(&c, "venue=pcap", err), 0);
	ck_assert_int_eq(sim_parse_clock(&c, "venue:quantum=4", err), 0);
	run(&c, &r);
	ck_assert_str_eq(r.file[SIM_ALGO], "algo.pcap");
	ck_assert_int_ne(stat(path_in("p", "algo.pcapng"), &st), 0);
	read_capture(path_in("p", "algo.pcap"), "198.18.0.1", 1000, true, &a);
	ck_assert_uint_eq(a.x_in, MESSAGES);
	read_capture(path_in("p", "venue.pcap"), "198.18.0.2", 4, true, &v);
	ck_assert_uint_eq(v.buy_out + v.sell_out, 0);	/* the venue only gets orders */
	ck_assert_uint_eq(v.frames, a.frames);
}
END_TEST

static void check_journal(const char *path, bool tai, unsigned *unsynced)
{
	char err[JOURNAL_ERRBUF];
	struct journal_reader *r;
	struct journal_record rec;
	unsigned samples = 0, events = 0;
	int rc;

	*unsynced = 0;
	ck_assert_msg(journal_open(&r, path, err) == 0, "%s", err);
	while ((rc = journal_next(r, &rec)) != 0) {
		ck_assert_msg(rc == 1, "%s", journal_error(r));
		if (rec.type == JOURNAL_EVENT) {
			ck_assert_str_eq(rec.event.name, "utc_offset");
			ck_assert_str_eq(rec.event.text, "37");
			events++;
			continue;
		}
		samples++;
		ck_assert_str_eq(rec.sample.clock, tai ? "phc0" : "sys");
		ck_assert_str_eq(rec.sample.state, "SLAVE");
		if (!rec.sample.in_sync) {
			ck_assert(rec.sample.bound_ns == JOURNAL_NONE);
			(*unsynced)++;
			continue;
		}
		ck_assert(rec.sample.bound_ns != JOURNAL_NONE);
		ck_assert_msg(rec.sample.bound_ns >= llabs(rec.sample.offset_ns),
			      "%s: bound %lld below offset %lld", path,
			      (long long)rec.sample.bound_ns,
			      (long long)rec.sample.offset_ns);
	}
	ck_assert_uint_eq(journal_bad_lines(r), 0);
	ck_assert_str_eq(journal_host(r), strstr(path, "algo") ? "algo" : "venue");
	/* One interval before the first packet to one after the last. */
	ck_assert_uint_ge(samples, SECONDS + 2);
	ck_assert_uint_eq(events, tai ? 1 : 0);
	journal_close(r);
}

START_TEST(journals_honest)
{
	struct sim_config c;
	struct sim_result r;
	char err[SIM_ERRBUF], *truth;
	unsigned ua, uv;
	size_t len;

	config(&c, "j");
	ck_assert_int_eq(sim_parse_timescale(&c, "algo=utc", err), 0);
	ck_assert_int_eq(sim_parse_unsync(&c, "venue=1-1.5", err), 0);
	/* A wander large enough that a bound from the offset alone would
	 * be dishonest. */
	ck_assert_int_eq(sim_parse_clock(&c, "venue:offset=-40,wander=300,period=1.3", err), 0);
	run(&c, &r);
	check_journal(path_in("j", "algo.journal"), false, &ua);
	check_journal(path_in("j", "venue.journal"), true, &uv);
	ck_assert_uint_eq(ua, 0);
	ck_assert_uint_eq(uv, 1);
	truth = slurp(path_in("j", "truth.json"), &len);
	ck_assert(strstr(truth, "\"timescale\": \"utc\""));
	/* The second hop (venue to algo) has messages out of sync. */
	{
		const char *hop2 = strstr(strstr(truth, "\"from\": \"venue\""), "\"out_of_sync\"");

		ck_assert_ptr_nonnull(hop2);
		ck_assert_int_gt(json_number(hop2, "messages"), 0);
	}
	free(truth);
}
END_TEST

/* --clock rate= and fractional quantum=, the tap's clock, --tap; each bad
 * value rejected with a message naming its key, leaving the clock as it
 * was. */
START_TEST(clock_rate_quantum_tap)
{
	struct sim_config c;
	char err[SIM_ERRBUF];

	sim_config_init(&c);
	ck_assert(c.tap_clock.quantum_ps == 7500);
	ck_assert(c.tap_clock.offset_ns == 0 && c.tap_clock.noise_ns == 0 &&
		  c.tap_clock.rate_ppb == 0 && c.tap_clock.wander_ns == 0);
	ck_assert(c.host[SIM_ALGO].clock.quantum_ps == 8000);
	ck_assert(!c.tap[SIM_ALGO] && !c.tap[SIM_VENUE]);

	ck_assert_int_eq(sim_parse_clock(&c, "algo:rate=300,quantum=7.5", err), 0);
	ck_assert(c.host[SIM_ALGO].clock.rate_ppb == 300);
	ck_assert(c.host[SIM_ALGO].clock.quantum_ps == 7500);
	ck_assert(c.host[SIM_ALGO].clock.offset_ns == 20);	/* kept */
	ck_assert_int_eq(sim_parse_clock(&c, "venue:rate=-1e6,quantum=0.125", err), 0);
	ck_assert(c.host[SIM_VENUE].clock.rate_ppb == -1e6);
	ck_assert(c.host[SIM_VENUE].clock.quantum_ps == 125);
	ck_assert_int_eq(sim_parse_clock(&c, "venue:quantum=12.345", err), 0);
	ck_assert(c.host[SIM_VENUE].clock.quantum_ps == 12345);
	ck_assert_int_eq(sim_parse_clock(&c, "tap:noise=1.5,quantum=4,rate=-7", err), 0);
	ck_assert(c.tap_clock.noise_ns == 1.5 && c.tap_clock.quantum_ps == 4000 &&
		  c.tap_clock.rate_ppb == -7);
	ck_assert(c.host[SIM_ALGO].clock.noise_ns == 2);	/* not the hosts' */

	static const struct {
		const char *text, *key;
	} bad[] = {
		{ "algo:rate=1000001", "rate" },
		{ "algo:rate=-2e6", "rate" },
		{ "algo:rate=fast", "rate=fast" },
		{ "algo:quantum=7.5001", "quantum" },
		{ "algo:quantum=0.0001", "quantum" },
		{ "algo:quantum=0", "quantum" },
		{ "algo:quantum=-8", "quantum" },
		{ "tap:quantum=2e6", "quantum" },
		{ "tap:noise=-1", "noise" },
		{ "tap:period=0", "period" },
		{ "tap:skew=3", "skew" },
		{ "dag:offset=1", "tap" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sim_clock before = c.host[SIM_ALGO].clock, tap = c.tap_clock;

		err[0] = 0;
		ck_assert_msg(sim_parse_clock(&c, bad[i].text, err) == -EINVAL,
			      "%s accepted", bad[i].text);
		ck_assert_msg(strstr(err, bad[i].key) && strstr(err, "--clock"),
			      "%s: message '%s' does not name %s", bad[i].text, err,
			      bad[i].key);
		ck_assert(!memcmp(&before, &c.host[SIM_ALGO].clock, sizeof(before)));
		ck_assert(!memcmp(&tap, &c.tap_clock, sizeof(tap)));
	}

	ck_assert_int_eq(sim_parse_tap(&c, "venue", err), 0);
	ck_assert(c.tap[SIM_VENUE] && !c.tap[SIM_ALGO]);
	ck_assert_int_eq(sim_parse_tap(&c, "algo", err), 0);
	ck_assert(c.tap[SIM_ALGO]);
	ck_assert_int_eq(sim_parse_tap(&c, "tap", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--tap"));
}
END_TEST

/* Taps of both hosts under faults, clocks gaining and losing fast and a
 * fractional host quantum: every file in stamp order; the tap of a late
 * capture has more frames than it; the hosts' files the same without the
 * taps. */
START_TEST(taps_in_order)
{
	struct sim_config c, d;
	struct sim_result r, rd;
	struct counts a, v, ta, tv;
	char err[SIM_ERRBUF], *truth;
	const char *out;
	size_t len;

	config(&c, "t");
	c.rates[0] = 200000;
	c.duration_s = 0.05;
	c.retransmit = 0.05;
	c.reorder = 0.05;
	c.mss = 64;
	c.stack_delay_ns = 100;
	c.stack_jitter_ns = 50;
	ck_assert_int_eq(sim_parse_clock(&c, "algo:rate=-1000000,noise=30", err), 0);
	ck_assert_int_eq(sim_parse_clock(&c, "venue:rate=1000000,quantum=2.5", err), 0);
	ck_assert_int_eq(sim_parse_clock(&c, "tap:noise=3,offset=-5", err), 0);
	ck_assert_int_eq(sim_parse_start_late(&c, "venue=0.01", err), 0);
	ck_assert_int_eq(sim_parse_unsync(&c, "algo=0.02-0.03", err), 0);
	config(&d, "u");
	out = d.out_dir;
	d = c;
	d.out_dir = out;
	ck_assert_int_eq(sim_parse_tap(&c, "algo", err), 0);
	ck_assert_int_eq(sim_parse_tap(&c, "venue", err), 0);
	run(&c, &r);
	run(&d, &rd);
	ck_assert_str_eq(r.tap_file[SIM_ALGO], "tap-algo.pcapng");
	ck_assert_str_eq(rd.tap_file[SIM_ALGO], "");
	read_capture(path_in("t", "algo.pcapng"), "198.18.0.1", 8, false, &a);
	read_capture(path_in("t", "venue.pcapng"), "198.18.0.2", 1, false, &v);
	read_capture(path_in("t", "tap-algo.pcapng"), "198.18.0.1", 1, false, &ta);
	read_capture(path_in("t", "tap-venue.pcapng"), "198.18.0.2", 1, false, &tv);
	ck_assert_uint_eq(ta.frames, r.tap_packets[SIM_ALGO]);
	ck_assert_uint_eq(ta.frames, a.frames);
	ck_assert_uint_eq(ta.out, a.out);
	ck_assert_uint_eq(tv.frames, r.tap_packets[SIM_VENUE]);
	ck_assert_uint_gt(tv.frames, v.frames);
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(same_file(path_in("t", files[i]), path_in("u", files[i])),
			      "%s differs with taps", files[i]);
	truth = slurp(path_in("t", "truth.json"), &len);
	ck_assert_ptr_nonnull(strstr(truth, "\"reference\""));
	ck_assert_int_eq(json_number(strstr(truth, "\"reference\""), "frames"),
			 (long long)ta.frames);
	free(truth);
}
END_TEST

START_TEST(faults_counted)
{
	struct sim_config c;
	struct sim_result r;
	char *truth;
	size_t len;

	config(&c, "f");
	c.retransmit = 0.05;
	c.reorder = 0.05;
	c.noise = 0.05;
	c.mss = 100;
	run(&c, &r);
	truth = slurp(path_in("f", "truth.json"), &len);
	ck_assert_int_gt(json_number(truth, "retransmitted_segments"), 0);
	ck_assert_int_gt(json_number(truth, "lost_then_retransmitted"), 0);
	ck_assert_int_gt(json_number(truth, "reordered"), 0);
	ck_assert_int_gt(json_number(truth, "split_messages"), 0);
	ck_assert_int_gt(json_number(truth, "non_fix_packets"), 0);
	ck_assert_int_gt(json_number(truth, "pure_acks"), 0);
	free(truth);

	config(&c, "f0");
	run(&c, &r);
	truth = slurp(path_in("f0", "truth.json"), &len);
	ck_assert_int_eq(json_number(truth, "retransmitted_segments"), 0);
	ck_assert_int_eq(json_number(truth, "reordered"), 0);
	ck_assert_int_eq(json_number(truth, "split_messages"), 0);
	free(truth);
}
END_TEST

START_TEST(topology_and_switch)
{
	struct sim_config c;
	struct sim_result r;
	char *topo, *truth;
	size_t len;

	config(&c, "s");
	run(&c, &r);
	topo = slurp(path_in("s", "topology"), &len);
	ck_assert_str_eq(topo, "# tapless topology\n"
			 "host algo 198.18.0.1\n"
			 "host venue 198.18.0.2\n"
			 "switch sw1 cut-through 10G\n"
			 "link algo sw1 2m\n"
			 "link sw1 venue 2m\n");
	free(topo);
	truth = slurp(path_in("s", "truth.json"), &len);
	ck_assert_ptr_nonnull(strstr(truth, "\"model\": \"arista-7124sx\""));
	free(truth);

	config(&c, "n");
	c.sw = SIM_SWITCH_NONE;
	c.cable_m = 3.5;
	run(&c, &r);
	topo = slurp(path_in("n", "topology"), &len);
	ck_assert_ptr_null(strstr(topo, "switch"));
	ck_assert_ptr_nonnull(strstr(topo, "link algo venue 3.5m\n"));
	free(topo);
	truth = slurp(path_in("n", "truth.json"), &len);
	ck_assert_ptr_nonnull(strstr(truth, "\"switches\": []"));
	ck_assert_ptr_null(strstr(truth, "sw1"));
	free(truth);
}
END_TEST

START_TEST(bad_input)
{
	struct sim_config c;
	struct sim_result r;
	char err[SIM_ERRBUF];
	int64_t bps;

	config(&c, "x");
	c.mss = 8;
	ck_assert_int_eq(sim_run(&c, &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--mss"));
	config(&c, "x");
	c.symbols = "AAPL,,MSFT";
	ck_assert_int_eq(sim_run(&c, &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--symbols"));
	config(&c, "x");
	c.out_dir = "/proc/tapless-sim-cannot-be-here";
	ck_assert_int_lt(sim_run(&c, &r, err), 0);
	ck_assert_ptr_nonnull(strstr(err, "/proc/tapless-sim-cannot-be-here"));

	ck_assert_int_eq(sim_parse_clock(&c, "venue:offset=-100,quantum=4", err), 0);
	ck_assert(c.host[SIM_VENUE].clock.offset_ns == -100);
	ck_assert(c.host[SIM_VENUE].clock.quantum_ps == 4000);
	ck_assert(c.host[SIM_VENUE].clock.wander_ns == 10);
	ck_assert_int_eq(sim_parse_clock(&c, "venue:skew=3", err), -EINVAL);
	ck_assert_int_eq(sim_parse_clock(&c, "broker:offset=3", err), -EINVAL);
	ck_assert_int_eq(sim_parse_clock(&c, "algo:quantum=0", err), -EINVAL);
	ck_assert_int_eq(sim_parse_unsync(&c, "algo=3-2", err), -EINVAL);
	ck_assert_int_eq(sim_parse_timescale(&c, "algo=gps", err), -EINVAL);
	ck_assert_int_eq(sim_parse_format(&c, "venue=erf", err), -EINVAL);
	ck_assert_int_eq(sim_parse_start_late(&c, "venue=-1", err), -EINVAL);
	ck_assert_int_eq(sim_parse_rates(&c, "500,1000,x", err), -EINVAL);
	ck_assert_int_eq(sim_parse_rates(&c, "500,1000", err), 0);
	ck_assert_uint_eq(c.nrates, 2);
	ck_assert_int_eq(sim_parse_rates(&c, "5k,10M", err), 0);
	ck_assert_uint_eq(c.nrates, 2);
	ck_assert(c.rates[0] == 5000 && c.rates[1] == 10000000);
	ck_assert_int_eq(sim_parse_rates(&c, "11M", err), -EINVAL);
	ck_assert_int_eq(sim_parse_rates(&c, "2.5", err), -EINVAL);
	ck_assert_int_eq(sim_parse_rates(&c, "500,500", err), -EINVAL);
	ck_assert_int_eq(sim_parse_speed("25G", &bps), 0);
	ck_assert(bps == 25000000000LL);
	ck_assert_int_eq(sim_parse_speed("100M", &bps), 0);
	ck_assert(bps == 100000000LL);
	ck_assert_int_eq(sim_parse_speed("10X", &bps), -EINVAL);
	ck_assert_int_eq(sim_switch_from_name("gnodal-gs7200"), SIM_SWITCH_GNODAL_GS7200);
	ck_assert_int_eq(sim_switch_from_name("cisco"), -1);
}
END_TEST

/* The frames of a capture, in order: stamp, length and bytes. */
struct frames {
	size_t n;
	int64_t *ts;
	char **data;
	uint32_t *len;
};

static void read_frames(const char *path, struct frames *f)
{
	char err[CAP_ERRBUF];
	struct cap_reader *r;
	struct cap_packet pk;
	size_t cap = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	ck_assert_msg(cap_open(&r, path, err) == 0, "%s", err);
	while ((rc = cap_next(r, &pk)) == 1) {
		if (f->n == cap) {
			cap = cap ? cap * 2 : 1024;
			f->ts = realloc(f->ts, cap * sizeof(*f->ts));
			f->data = realloc(f->data, cap * sizeof(*f->data));
			f->len = realloc(f->len, cap * sizeof(*f->len));
			ck_assert(f->ts && f->data && f->len);
		}
		f->ts[f->n] = pk.ts_ns;
		f->len[f->n] = pk.caplen;
		f->data[f->n] = malloc(pk.caplen ? pk.caplen : 1);
		ck_assert_ptr_nonnull(f->data[f->n]);
		memcpy(f->data[f->n], pk.data, pk.caplen);
		f->n++;
	}
	ck_assert_msg(rc == 0, "%s: %s", path, cap_error(r));
	cap_close(r);
}

static void free_frames(struct frames *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->data[i]);
	free(f->ts);
	free(f->data);
	free(f->len);
}

/* Whether every frame of sub is in all, in the same order, with the same
 * stamp and bytes: sub is all less some frames. */
static bool subsequence(const struct frames *sub, const struct frames *all)
{
	size_t j = 0;

	for (size_t i = 0; i < all->n && j < sub->n; i++)
		if (all->ts[i] == sub->ts[j] && all->len[i] == sub->len[j] &&
		    !memcmp(all->data[i], sub->data[j], all->len[i]))
			j++;
	return j == sub->n;
}

/* Positions in all of the frames sub lacks (sub a subsequence of all),
 * into out[0..n), allocated. */
static size_t missing(const struct frames *sub, const struct frames *all,
		      size_t **out)
{
	size_t j = 0, n = 0;

	*out = malloc((all->n + 1) * sizeof(**out));
	ck_assert_ptr_nonnull(*out);
	for (size_t i = 0; i < all->n; i++) {
		if (j < sub->n && all->ts[i] == sub->ts[j] && all->len[i] == sub->len[j] &&
		    !memcmp(all->data[i], sub->data[j], all->len[i]))
			j++;
		else
			(*out)[n++] = i;
	}
	return n;
}

/* truth.json's "capture_dropped" count of host. */
static long long truth_dropped(const char *sub, const char *host)
{
	size_t n;
	char *t = slurp(path_in(sub, "truth.json"), &n), *p;
	long long v;

	p = strstr(t, "\"capture_dropped\": {");
	ck_assert_msg(p != NULL, "%s: no capture_dropped in truth.json", sub);
	v = json_number(p, host);
	free(t);
	return v;
}

static const char *drop_files[] = {
	"algo.pcapng", "venue.pcapng", "algo.journal", "venue.journal",
	"topology", "tap-algo.pcapng", "tap-venue.pcapng",
};

START_TEST(capture_drop)
{
	struct sim_config a, b, c, d, e;
	struct sim_result ra, rb, rc, rd, re;
	struct frames fa, fc;
	size_t *gone[SIM_HOSTS], ngone[SIM_HOSTS];

	/* a: no drops; b: --capture-drop 0 for both hosts. Taps on both. */
	config(&a, "a");
	a.seed = 11;
	a.tap[SIM_ALGO] = a.tap[SIM_VENUE] = true;
	run(&a, &ra);
	b = a;
	config(&b, "b");
	b.seed = 11;
	b.tap[SIM_ALGO] = b.tap[SIM_VENUE] = true;
	ck_assert_int_eq(sim_parse_capture_drop(&b, "algo=0", NULL), 0);
	ck_assert_int_eq(sim_parse_capture_drop(&b, "venue=0%", NULL), 0);
	run(&b, &rb);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(same_file(path_in("a", files[i]), path_in("b", files[i])),
			      "%s differs with --capture-drop 0", files[i]);
	ck_assert_uint_eq(rb.capture_dropped[SIM_ALGO] + rb.capture_dropped[SIM_VENUE], 0);

	/* c: 2% of the algo's frames. Only its capture differs, by exactly
	 * the frames reported, and what is left is the same frames. */
	c = b;
	config(&c, "c");
	c.seed = 11;
	c.tap[SIM_ALGO] = c.tap[SIM_VENUE] = true;
	c.host[SIM_ALGO].capture_drop = 0.02;
	run(&c, &rc);
	ck_assert_uint_gt(rc.capture_dropped[SIM_ALGO], 0);
	ck_assert_uint_eq(rc.capture_dropped[SIM_VENUE], 0);
	ck_assert_int_eq(truth_dropped("c", "algo"), (long long)rc.capture_dropped[SIM_ALGO]);
	ck_assert_int_eq(truth_dropped("c", "venue"), 0);
	for (size_t i = 1; i < sizeof(drop_files) / sizeof(drop_files[0]); i++)
		ck_assert_msg(same_file(path_in("a", drop_files[i]), path_in("c", drop_files[i])),
			      "%s differs with drops at the algo only", drop_files[i]);
	ck_assert_msg(!same_file(path_in("a", "algo.pcapng"), path_in("c", "algo.pcapng")),
		      "the algo's capture is whole with drops");
	read_frames(path_in("a", "algo.pcapng"), &fa);
	read_frames(path_in("c", "algo.pcapng"), &fc);
	ck_assert_uint_eq(fa.n, ra.packets[SIM_ALGO]);
	ck_assert_uint_eq(fc.n, rc.packets[SIM_ALGO]);
	ck_assert_uint_eq(fc.n, fa.n - rc.capture_dropped[SIM_ALGO]);
	ck_assert_msg(subsequence(&fc, &fa), "a frame of the capture with drops "
		      "is not one of the whole capture's, in order");
	ngone[SIM_ALGO] = missing(&fc, &fa, &gone[SIM_ALGO]);
	free_frames(&fa);
	free_frames(&fc);

	/* d: the same again, the same drops. */
	d = c;
	config(&d, "d");
	d.seed = 11;
	d.tap[SIM_ALGO] = d.tap[SIM_VENUE] = true;
	d.host[SIM_ALGO].capture_drop = 0.02;
	run(&d, &rd);
	ck_assert_msg(same_file(path_in("c", "algo.pcapng"), path_in("d", "algo.pcapng")),
		      "the same seed dropped other frames");
	ck_assert_msg(same_file(path_in("c", "truth.json"), path_in("d", "truth.json")),
		      "the same seed gave another truth");

	/* e: the venue dropping too changes nothing at the algo; the venue's
	 * drops are its own, not the algo's pattern. */
	e = d;
	config(&e, "e");
	e.seed = 11;
	e.tap[SIM_ALGO] = e.tap[SIM_VENUE] = true;
	e.host[SIM_ALGO].capture_drop = 0.02;
	e.host[SIM_VENUE].capture_drop = 0.02;
	run(&e, &re);
	ck_assert_msg(same_file(path_in("c", "algo.pcapng"), path_in("e", "algo.pcapng")),
		      "the venue's drops changed the algo's");
	ck_assert_uint_eq(re.capture_dropped[SIM_ALGO], rc.capture_dropped[SIM_ALGO]);
	ck_assert_uint_gt(re.capture_dropped[SIM_VENUE], 0);
	read_frames(path_in("a", "venue.pcapng"), &fa);
	read_frames(path_in("e", "venue.pcapng"), &fc);
	ck_assert_uint_eq(fc.n, fa.n - re.capture_dropped[SIM_VENUE]);
	ck_assert(subsequence(&fc, &fa));
	ngone[SIM_VENUE] = missing(&fc, &fa, &gone[SIM_VENUE]);
	free_frames(&fa);
	free_frames(&fc);
	/* The two hosts see nearly the same frames in nearly the same order:
	 * drawn from one stream, they would lose the same positions. */
	ck_assert_msg(ngone[SIM_ALGO] != ngone[SIM_VENUE] ||
		      memcmp(gone[SIM_ALGO], gone[SIM_VENUE],
			     ngone[SIM_ALGO] * sizeof(size_t)),
		      "the hosts lost their frames at the same positions");
	free(gone[SIM_ALGO]);
	free(gone[SIM_VENUE]);
	ck_assert_msg(same_file(path_in("a", "tap-venue.pcapng"), path_in("e", "tap-venue.pcapng")),
		      "drops changed a tap");
}
END_TEST

START_TEST(capture_drop_options)
{
	struct sim_config c;
	struct sim_result r;
	char err[SIM_ERRBUF];

	config(&c, "x");
	ck_assert_int_eq(sim_parse_capture_drop(&c, "algo=0.1%", err), 0);
	ck_assert(c.host[SIM_ALGO].capture_drop > 0.000999 &&
		  c.host[SIM_ALGO].capture_drop < 0.001001);
	ck_assert_int_eq(sim_parse_capture_drop(&c, "algo=0.2", err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--capture-drop"));
	ck_assert_ptr_nonnull(strstr(err, "twice"));
	ck_assert_int_eq(sim_parse_capture_drop(&c, "venue=0.5", err), 0);
	ck_assert(c.host[SIM_VENUE].capture_drop == 0.5);
	{
		static const char *const bad[] = {
			"venue=1", "algo=1.5", "algo=-0.1", "algo=100%", "algo=x",
			"algo=", "algo", "broker=0.1", "algo=0.1%%",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct sim_config f;

			sim_config_init(&f);
			err[0] = 0;
			ck_assert_msg(sim_parse_capture_drop(&f, bad[i], err) == -EINVAL,
				      "'%s' accepted", bad[i]);
			ck_assert_msg(strstr(err, "--capture-drop") && strstr(err, bad[i]),
				      "'%s': message '%s' names not the option and value",
				      bad[i], err);
		}
	}
	config(&c, "x");
	c.host[SIM_VENUE].capture_drop = 1;
	ck_assert_int_eq(sim_run(&c, &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--capture-drop"));
}
END_TEST

static Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *t = tcase_create("sim");

	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, same_seed_same_bytes);
	tcase_add_test(t, workload_in_the_captures);
	tcase_add_test(t, time_order_under_faults);
	tcase_add_test(t, pcap_microseconds);
	tcase_add_test(t, journals_honest);
	tcase_add_test(t, faults_counted);
	tcase_add_test(t, topology_and_switch);
	tcase_add_test(t, bad_input);
	tcase_add_test(t, clock_rate_quantum_tap);
	tcase_add_test(t, taps_in_order);
	tcase_add_test(t, capture_drop);
	tcase_add_test(t, capture_drop_options);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(sim_suite)
