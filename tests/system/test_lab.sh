#!/bin/bash
# tapless lab: a short run of the FTTC benchmark in namespaces (two rates, a
# few seconds), then the ways a lab ends.
#   1. run (its own lab), 5k and 20k msg/s: the report's tables and plots
#      exist and are not empty; the workload's counts add up at both hosts
#      on both paths and agree with the correlator's; the switch latency
#      measured from the hosts' stamps agrees with tapless-swemu's truth
#      within 1 us (5k); every switch and hop sample is paired with its
#      frame's truth, and at least 95 % lie inside their own error bound
#      (5k); the report names the switch as the emulator, with what it
#      achieved beside its model; the emulator's residence p50 is within
#      3 us of its model at 20k msg/s (issue 21's target, nothing
#      tighter); the lab says whether the emulator busy-polls, and why;
#      nothing is left behind. On simulated NIC clocks, the default
#      (--clocks hw): every capture interface and every sender's stamp is
#      hardware, the algo's ptp4l stepped its PHC (started 1.15 ms away),
#      and the report sets each clock's true offset (tapless-hwsim's
#      truth) beside what its journal said: the algo's PTP clock is
#      judged in every rate, its true offset within microseconds of PTP
#      time (the 37 s of TAI and the start offsets taken out, not left
#      in), and its bound holds it in >= 95 % of samples. Each rate's
#      calibration run through the switch calibrates the hosts' stamps
#      against the emulator's port stamps (and, on the machine's clock,
#      in 4, leaves |measured - truth p50| <= 200 ns).
#   2. a host's program killed mid-run: the run fails, says so, and
#      removes its lab (on the machine's clock: --clocks system).
#   3. SIGTERM mid-run: the same, exit 143.
#   4. two labs up at once: distinct, listed (with their clocks), a run in
#      one, each removed by its own down; the second with its switch on
#      CPU 1, busy-polling, and the hosts' programs off that CPU, on
#      simulated clocks, which a run in it keeps (another --clocks is
#      refused); the first on the machine's clock, its run software
#      stamped. A CPU the lab may not use is refused before anything is
#      built. The run in the second has its grandmaster gone for 1 s
#      (--gm-gone): the algo's samples in holdover carry a holdover term,
#      the bound still holds >= 99 %, and PTP is back after the run.
set -u
if [ "$(id -u)" -ne 0 ]; then
	echo "lab: skipped: needs root for network namespaces"
	exit 0
fi
out=$(mktemp -d /tmp/tapless-lab.XXXXXX)
export TAPLESS_LAB_STATE=$out/state
labs=()
finish() {
	local id
	for id in "${labs[@]}"; do bin/tapless lab down --id "$id" > /dev/null 2>&1; done
	if [ "${TL_KEEP:-0}" = 1 ]; then echo "lab: kept $out"; else rm -rf "$out"; fi
}
trap finish EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
want() { jq -e "$2" "$1" > /dev/null 2>&1 || fail "$3: $(jq -c . "$1" 2>&1 | head -c 400)"; }

# gone ID: nothing of lab ID is left: namespaces, processes, state.
gone() {
	local left
	left=$(ip netns list | grep -c "^tapless-lab-$1-")
	[ "$left" -eq 0 ] || fail "lab $1: $left namespaces left: $(ip netns list | grep "tapless-lab-$1-")"
	pgrep -af "tapless-lab-$1-|$TAPLESS_LAB_STATE/$1/" > "$out/procs-$1" &&
		fail "lab $1: processes left: $(cat "$out/procs-$1")"
	[ ! -e "$TAPLESS_LAB_STATE/$1" ] || fail "lab $1: state left in $TAPLESS_LAB_STATE/$1"
}

# lab_id LOG: the id a run announced.
lab_id() { sed -n 's/^tapless lab: lab \([0-9a-zA-Z]*\): building$/\1/p' "$1" | head -1; }

# counts DIR RATE SECS: the workload's own summaries add up.
counts() {
	local v=$1/venue.json a=$1/algo.json n=$(($2 * $3))
	want "$v" ".md_published == $n" "$1: venue published"
	want "$a" ".md_received == $n" "$1: algo received every market data message"
	want "$a" ".buys == .bids_000 and .buys == ($n / 1000 | floor)" "$1: a BUY per .000 bid"
	want "$a" ".sells == .fills_buy and .fills_sell == .sells" "$1: a SELL per BUY fill"
	want "$a" ".reports == 2 * (.buys + .sells) and .rejects == 0" "$1: two reports per order"
	want "$v" ".orders_received == .fills and .rejects == 0" "$1: venue filled every order"
	jq -s -e '.[0].orders_received == (.[1].buys + .[1].sells)' "$v" "$a" > /dev/null ||
		fail "$1: orders sent != orders received"
	want "$v" ".stamps_lost == 0" "$1: venue lost stamps"
	want "$a" ".stamps_lost == 0" "$1: algo lost stamps"
}

# 1. A whole run.
r=$out/run
bin/tapless lab run --output "$r" --rates 5000,20000 --duration 3 --cal-duration 1 > "$out/run.out" 2> "$out/run.log"
rc=$?
id=$(lab_id "$out/run.log")
[ -n "$id" ] && labs+=("$id")
[ $rc -eq 0 ] || fail "run: exit $rc: $(tail -5 "$out/run.log")"
for rate in 5000 20000; do
	for p in b2b switch; do counts "$r/rate-$rate/$p" $rate 3; done
done
d=$r/rate-5000
c=$d/correlate.json
jq -s -e '(.[0].transactions[] | select(.name == "tick_to_trade" and .host == "algo") | .count) == .[1].buys' \
	"$c" "$d/switch/algo.json" > /dev/null || fail "correlate: tick_to_trade count is not the number of BUYs"
jq -s -e '(.[0].transactions[] | select(.name == "fill_to_sell" and .host == "algo") | .count) == .[1].sells' \
	"$c" "$d/switch/algo.json" > /dev/null || fail "correlate: fill_to_sell count is not the number of SELLs"
want "$c" '(.hops[] | select(.from == "venue" and .to == "algo" and .flow == "all") | .messages) >= 15000' \
	"correlate: market data matched venue -> algo"
want "$c" '[.inputs[] | .tap_tx_skipped > 0 and .sender_stamped > 0] | all' "correlate: the senders' stamps were not used"
want "$c" '.unmatched.seen_at_one_host == 0' "correlate: messages seen at one host only"
# --threads on the lab's files (hardware clocks kept by phc2sys, senders'
# stamps beside the packet sockets', calibrations, a baseline): the one
# thread's output, samples and warnings, byte for byte (issue 36).
for k in 1 2 3; do
	bin/tapless correlate --threads $k --json -t "$d/topology" \
		-s venue="$r/journals/venue.journal" -s algo="$r/journals/algo.journal" \
		-k venue="$d/venue.cal" -k algo="$d/algo.cal" --samples "$out/thr-$k.samples" \
		--baseline venue="$d/b2b/venue" --baseline algo="$d/b2b/algo" \
		venue="$d/switch/venue" algo="$d/switch/algo" > "$out/thr-$k.json" 2> "$out/thr-$k.err" ||
		fail "correlate --threads $k: exit $?: $(tail -3 "$out/thr-$k.err")"
done
want "$out/thr-1.json" '[.switches[] | select(.method == "topology")] | length == 2' \
	"correlate --threads 1: no switch figures on the lab's files"
for k in 2 3; do
	for x in json err samples; do
		cmp -s "$out/thr-1.$x" "$out/thr-$k.$x" ||
			fail "correlate --threads $k: its $x differs from one thread's: $(diff "$out/thr-1.$x" "$out/thr-$k.$x" | head -4)"
	done
done
# The report: tables, index, plots (PNG and SVG, not empty, really images).
for f in tables.txt tables.md index.md report.json; do
	[ -s "$r/report/$f" ] || fail "report: $f missing or empty"
done
npng=0
for f in "$r"/report/plots/*.png; do
	[ -s "$f" ] && [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || { fail "report: $f is not a PNG"; continue; }
	npng=$((npng + 1))
	grep -q "<svg" "${f%.png}.svg" 2> /dev/null || fail "report: no SVG beside $f"
done
[ $npng -ge 7 ] || fail "report: $npng PNG plots, want 7"
grep -q " 5k" "$r/report/tables.txt" || fail "report: the rate (5k) is not in the tables"
j=$r/report/report.json
R5='.rates[] | select(.rate == 5000)'
R20='.rates[] | select(.rate == 20000)'
# Switch latency from the hosts' stamps against the emulator's truth: both
# methods, within 1 us (the bound of issue 7), as the report states them;
# or, where the samples claim a wider bound (p50), within that: on the
# simulated clocks the algo's PTP clock is truly off by up to a microsecond
# or two for seconds at a time (Table 4), which its bound covers and no
# calibration may take out.
want "$j" "$R5"' | .switch_latency.truth.available and .switch_latency.truth.frames >= 15000 and .switch_latency.truth.unpaired == 0' \
	"truth: the emulator's files do not cover the market data"
for m in topology baseline; do
	jq -e "$R5 | (.switch_latency.difference_${m}_ns | fabs) < ([1000, .error.switch.bound_ns.p50] | max)" "$j" > /dev/null ||
		fail "$m method: measured - truth = $(jq "$R5 | .switch_latency.difference_${m}_ns" "$j") ns, over 1 us and over the bound p50 $(jq "$R5 | .error.switch.bound_ns.p50" "$j") ns"
done
grep -q "^Topology - truth (means)" "$r/report/tables.txt" || fail "report: the difference to the truth is not stated"
# The report's topology figure is the correlator's own switch result.
jq -s -e '(.[0].switches[] | select(.method == "topology" and .from == "venue" and .to == "algo") | .latency_ns.mean)
	- (.[1].rates[] | select(.rate == 5000) | .switch_latency.topology_mean_ns) | fabs < 0.01' "$c" "$j" > /dev/null ||
	fail "report: topology mean differs from tapless correlate's"
# Every switch and hop sample beside its own frame's truth (issue 21), and
# the bound, with its stamp term from the back-to-back calibration, holds
# at least 99 % of them at both rates (issue 34).
for rate in 5000 20000; do
	want "$j" ".rates[] | select(.rate == $rate) | .error | .available and .no_venue_frame == 0 and .no_truth_frame == 0
		and .switch.paired >= 0.99 * .samples / 2 and .hop.paired == .switch.paired" \
		"error at $rate: samples not paired with their frame's truth: $(jq -c ".rates[] | select(.rate == $rate) | .error | {samples, no_venue_frame, no_truth_frame, ambiguous, p: .switch.paired, h: .hop.paired}" "$j")"
done
for rate in 5000 20000; do
	for k in switch hop; do
		jq -e ".rates[] | select(.rate == $rate) | .error.$k | .bounded >= 14000 and .coverage >= 0.99" "$j" > /dev/null ||
			fail "error bound at $rate holds $(jq ".rates[] | select(.rate == $rate) | .error.$k.coverage" "$j") of the $k samples ($(jq ".rates[] | select(.rate == $rate) | .error.$k.bounded" "$j") with a bound), want >= 0.99"
	done
	for h in venue algo; do
		grep -Eq "^stamp tx hw offset -?[0-9]+ spread [0-9]+ samples [1-9]" "$r/rate-$rate/$h.cal" &&
			grep -Eq "^stamp rx hw offset -?[0-9]+ spread [0-9]+ samples [1-9]" "$r/rate-$rate/$h.cal" ||
			fail "calibration at $rate: $h.cal: $(cat "$r/rate-$rate/$h.cal" 2>&1)"
	done
done
want "$c" '[.switches[] | select(.method == "topology") | .bound_terms_mean_ns | .stamp > 0 and .clock > 0] | all and length > 0' \
	"correlate: the switch bound has no stamp term: $(jq -c '[.switches[] | .bound_terms_mean_ns]' "$c")"
want "$c" '[.inputs[] | .calibration.stamps | length == 2] | all' "correlate: the hosts' calibrations were not applied"
# App to wire on two clocks (issue 38): the algo's orders and the venue's
# market data are stamped on (simulated) PHCs, their SendingTime written
# from the system clock to the ms. The bound holds the ms, the stamp's
# calibration and a clock term: the PHC's bound and the system clock's,
# from the journal's "sys" (phc2sys keeps it on the PHC).
want "$c" '[.app_to_wire[] | select((.host == "algo" and .msg_type == "D") or (.host == "venue" and .msg_type == "X"))] |
	length >= 2 and all(.tag == 52 and .resolution_ns == 1000000 and
	.sync_error_bound_ns > 1000000 and .bound_terms_mean_ns.clock > 0 and .bound_terms_mean_ns.stamp > 0)' \
	"correlate: app to wire on two clocks: $(jq -c '[.app_to_wire[] | {host, msg_type, tag, messages, bound: .sync_error_bound_ns, terms: .bound_terms_mean_ns}]' "$c")"
echo "lab: app to wire at 5k: $(jq -c '[.app_to_wire[] | select(.msg_type == "D" or .msg_type == "X") | {host, msg_type, n: .messages, p50: .latency_ns.p50, bound: .sync_error_bound_ns, clock_term: .bound_terms_mean_ns.clock}]' "$c")"
# Every frame stamped on arrival, as a NIC would: the hosts' TCP frames
# carry no departure time across the veth (edt_clear), so the emulator's
# truth has none copy-stamped late.
grep -q "^edt_cleared 1$" "$r/lab.conf" || fail "lab.conf: TCP departure times not cleared: $(grep edt "$r/lab.conf")"
for rate in 5000 20000; do
	jq -e '[.ports[].rx_copy_stamped] | length == 2 and add == 0' "$r/rate-$rate/switch/swemu.json" > /dev/null 2>&1 ||
		fail "swemu at $rate: frames stamped as copied, not on arrival: $(grep -o '"rx_copy_stamped":[0-9]*' "$r/rate-$rate/switch/swemu.json" | tr '\n' ' ')"
done
# The traffic check does not cry wolf on clocks that are where their
# journals say (issue 34): no window flagged at either rate.
for rate in 5000 20000; do
	want "$r/rate-$rate/correlate.json" '[.traffic.pairs[] | .windows > 0 and .flagged == 0] | all and length == 1' \
		"traffic check at $rate: flagged windows on a clean run"
done
# The switch is named as what it is, its achieved residence beside the
# model, and the headline is the measurement error.
grep -q "swemu, modelled on arista-7124sx (576.9 ns)" "$r/report/tables.txt" ||
	fail "report: the switch is not named as the emulator: $(grep -m1 -A1 '^Model' "$r/report/tables.txt")"
grep -q "^ *switch: swemu, modelled on arista-7124sx (576.9 ns); achieved residence p50 .*, p99 " "$out/run.out" &&
	grep -q "^rate     5k/s: measured - truth p50 .*; bound .* holds [0-9.]* % of switch samples" "$out/run.out" ||
	fail "report: headline: $(cat "$out/run.out")"
# The emulator's residence at 20k msg/s: p50 within 3 us of its model.
res=$(jq "$R20 | .switch_latency.truth.residence_quantiles_ns.p50" "$j")
jq -e "$R20 | .switch_latency.truth.residence_quantiles_ns.p50 <= 576.9 + 3000" "$j" > /dev/null ||
	fail "emulator residence p50 at 20k msg/s: $res ns, want <= 576.9 + 3000 ns"
# The emulator's CPU: decided from the CPUs and said.
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then poll=busy; else poll=sleep; fi
grep -q "^switch_poll $poll\$" "$r/lab.conf" && grep -q "^switch_poll_why .*$ncpu CPUs" "$r/lab.conf" ||
	fail "lab.conf: switch_poll not $poll with $ncpu CPUs: $(grep switch_poll "$r/lab.conf")"
grep -q "^tapless lab: switch emulator: .*$ncpu CPUs" "$out/run.log" || fail "the lab does not say how the emulator runs"
grep -q "^The emulator: " "$r/report/index.md" || fail "report: index.md does not say how the emulator ran"
# Simulated NIC clocks: hardware stamps throughout, the clocks against
# the truth.
grep -q "^stamps hardware$" "$r/lab.conf" && grep -q "^clocks hwsim$" "$r/lab.conf" ||
	fail "lab.conf: not on simulated clocks: $(grep -E '^(stamps|clocks)' "$r/lab.conf")"
for h in venue algo; do
	build/tools/capdump "$r"/rate-5000/switch/$h/*.pcapng > "$out/$h.dump" 2>&1
	# Received frames on a hardware interface; sent ones with their
	# sender's hardware stamp (the packet socket's own copies of them
	# are software: a NIC stamps only its sockets' sends).
	hwif=" $(awk '/^iface .*source=hw/ { printf "%s ", $2 }' "$out/$h.dump")"
	awk -v hw="$hwif" '$1 != "iface" && index(hw, " " $2 " ") { n[$3]++ }
		END { exit !(n["in"] > 0 && n["out"] > 0) }' "$out/$h.dump" ||
		fail "$h: no hardware-stamped frames both ways: $(grep ^iface "$out/$h.dump")"
done
grep -q "event phc[0-9]* step" "$r/journals/algo.journal" ||
	fail "algo: its ptp4l never stepped its PHC (started 1.15 ms away)"
grep -q "^Table 4. The clocks against the truth" "$r/report/tables.txt" ||
	fail "report: no table of the clocks against the truth"
ptp=$(sed -n 's/^phcs_algo .*b2b0:\(phc[0-9]*\).*/\1/p' "$r/lab.conf")
for rate in 5000 20000; do
	jq -e ".rates[] | select(.rate == $rate) | .clocks_truth[] | select(.host == \"algo\" and .clock == \"$ptp\") |
		.judged >= 8 and (.true_offset_mean_ns | fabs) < 50000 and .true_offset_max_abs_ns < 200000 and
		(.journal_offset_mean_ns | fabs) < 50000 and .coverage >= 0.95" "$j" > /dev/null ||
		fail "clocks at $rate: algo $ptp against the truth: $(jq -c ".rates[] | select(.rate == $rate) | .clocks_truth" "$j")"
done
jq -e '.ptp_reference.known and (.ptp_reference.true_offset_ns - 37000350000 | fabs) < 5000000' "$j" > /dev/null ||
	fail "report: PTP time's own offset: $(jq -c .ptp_reference "$j")"
echo "lab: clocks: $(jq -c "[$R5 | .clocks_truth[] | {host, clock, journal: .journal_offset_mean_ns, true: .true_offset_mean_ns, held: .coverage}]" "$j")"
echo "lab: 5k: measured - truth p50 $(jq "$R5 | .error.switch.error_quantiles_ns.p50" "$j") ns, bound p50 $(jq "$R5 | .error.switch.bound_ns.p50" "$j") ns holds $(jq "$R5 | .error.switch.coverage * 1000 | round / 10" "$j") %; 20k: $(jq "$R20 | .error.switch.coverage * 1000 | round / 10" "$j") %; residence p50 at 20k $res ns"
gone "$id"

# 1b. A fault with known truth (issue 34): the algo's ptp4l told of a path
# asymmetry of -40 us that is not there sets its clock about 40 us behind
# PTP time, and its journal, which sees only ptp4l's offsets, says in sync.
# The traffic check flags the pair: the market data's one-ways would be
# negative with the clocks as close as the journals claim.
a=$out/asym
bin/tapless lab run --output "$a" --rates 1000 --duration 2 --cal-duration 0 --no-report --ptp-asymmetry -40000 \
	> /dev/null 2> "$out/asym.log"
rc=$?
id=$(lab_id "$out/asym.log")
[ -n "$id" ] && labs+=("$id")
[ $rc -eq 0 ] || fail "asymmetry: exit $rc: $(tail -5 "$out/asym.log")"
grep -q "^fault_ptp_asymmetry_ns -40000$" "$a/lab.conf" || fail "asymmetry: lab.conf does not record the fault"
want "$a/rate-1000/correlate.json" '.traffic.pairs[0] | .flagged > 0 and .flagged_windows[0].hi_ns < -20000 and .flagged_windows[0].miss_ns > 10000' \
	"asymmetry: the traffic check did not flag a clock 40 us off"
grep -q "rate 1000: the traffic check flagged [1-9][0-9]* window(s)" "$out/asym.log" ||
	fail "asymmetry: the lab did not say the traffic check flagged the clocks: $(tail -3 "$out/asym.log")"
echo "lab: asymmetry fault: $(jq -c '.traffic.pairs[0] | {windows, flagged, first: .flagged_windows[0] | {lo_ns, hi_ns, claim_ns, miss_ns}}' "$a/rate-1000/correlate.json")"
gone "$id"

# 2. A host's program dies mid-run: the run fails and cleans up.
bin/tapless lab run --output "$out/killed" --rates 2000 --duration 30 --clocks system \
	> /dev/null 2> "$out/killed.log" &
lp=$!
for _ in $(seq 300); do
	id=$(lab_id "$out/killed.log")
	[ -n "$id" ] && ip netns pids "tapless-lab-$id-algo" 2> /dev/null |
		xargs -r ps -o comm= -p 2> /dev/null | grep -q tapless-algo && break
	sleep 0.1
done
[ -n "$id" ] && labs+=("$id")
ap=$(ip netns pids "tapless-lab-$id-algo" 2> /dev/null | while read -r p; do
	[ "$(cat /proc/"$p"/comm 2> /dev/null)" = tapless-algo ] && echo "$p"; done)
[ -n "$ap" ] || fail "killed: the algo never ran: $(cat "$out/killed.log")"
kill -KILL $ap 2> /dev/null
wait $lp
rc=$?
[ $rc -eq 1 ] || fail "killed: exit $rc, want 1"
grep -q "rate 2000 through b2b failed" "$out/killed.log" || fail "killed: failure not reported: $(tail -3 "$out/killed.log")"
gone "$id"

# 3. SIGTERM mid-run.
bin/tapless lab run --output "$out/term" --rates 2000 --duration 30 --clocks system \
	> /dev/null 2> "$out/term.log" &
lp=$!
for _ in $(seq 300); do grep -q "through b2b" "$out/term.log" && break; sleep 0.1; done
id=$(lab_id "$out/term.log")
[ -n "$id" ] && labs+=("$id")
sleep 1
kill -TERM $lp
wait $lp
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, want 143: $(tail -3 "$out/term.log")"
gone "$id"

# 4. Two labs at once; a run in one of them; each removed by its own down.
id1=$(bin/tapless lab up --switch-cpu none --clocks system 2> "$out/up1.log") || fail "up 1: $(cat "$out/up1.log")"
id2=$(bin/tapless lab up --switch gnodal-gs7200 --switch-cpu 1 2> "$out/up2.log") || fail "up 2: $(cat "$out/up2.log")"
labs+=("$id1" "$id2")
[ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] || fail "two labs: ids '$id1' and '$id2'"
bin/tapless lab list > "$out/list"
grep -q "^$id1 switch arista-7124sx clocks system$" "$out/list" &&
	grep -q "^$id2 switch gnodal-gs7200 clocks hw$" "$out/list" ||
	fail "list: $(cat "$out/list")"
# Lab 2's switch busy-polls on CPU 1; its hosts' programs keep off it.
sw=$(awk '$1 == "swemu" { print $2 }' "$TAPLESS_LAB_STATE/$id2/pids" 2> /dev/null | tail -1)
tr '\0' ' ' < "/proc/$sw/cmdline" 2> /dev/null | grep -q -- "--busy-poll --cpu 1" ||
	fail "lab $id2: switch not busy-polling on CPU 1: $(tr '\0' ' ' < "/proc/$sw/cmdline" 2>&1)"
grep -q "switch emulator: busy-polls on CPU 1" "$out/up2.log" || fail "up 2 does not say the switch has CPU 1: $(cat "$out/up2.log")"
sy=$(awk '$1 == "syncd" { print $2 }' "$TAPLESS_LAB_STATE/$id2/pids" | head -1)
aff=$(taskset -pc "$sy" 2> /dev/null | sed 's/.*: //')
[ -n "$aff" ] && [ "$aff" != "${aff/1/}" ] && fail "lab $id2: syncd may run on the switch's CPU 1 (affinity $aff)"
bin/tapless lab run --id "$id2" --output "$out/in2" --rates 2000 --duration 2 --cal-duration 0 --gm-gone 1 \
	> /dev/null 2> "$out/in2.log" || fail "run in lab $id2: $(tail -3 "$out/in2.log")"
# A host in holdover (issue 34), a fault with known truth: the algo's
# NICs took no PTP message for 1 s of the run (--gm-gone). Its samples
# then carry a holdover term, and the bound, grown, still holds them.
grep -q "^fault_gm_gone_s 1$" "$out/in2/lab.conf" || fail "run in lab $id2: lab.conf does not record the fault"
jq -e '.rates[0].error.switch | .holdover >= 500 and .bound_terms_mean_ns.holdover > 0 and .coverage >= 0.99' \
	"$out/in2/report/report.json" > /dev/null ||
	fail "run in lab $id2, grandmaster gone 1 s: $(jq -c '.rates[0].error.switch | {holdover, bounded, coverage, t: .bound_terms_mean_ns}' "$out/in2/report/report.json" 2>&1)"
jq -e '[.switches[] | select(.method == "topology") | .holdover > 0] | any' "$out/in2/rate-2000/correlate.json" > /dev/null ||
	fail "run in lab $id2: correlate counts no switch sample in holdover"
bin/tapless-hwsim --dir "$TAPLESS_LAB_STATE/$id2/hwsim" --host algo --truth --json > "$out/in2.truth" 2>&1 &&
	jq -e '[.. | objects | select(has("gm_gone")) | .gm_gone] | length > 0 and (any | not)' "$out/in2.truth" > /dev/null ||
	fail "run in lab $id2: the algo's grandmaster is still cut off after the run: $(head -c 300 "$out/in2.truth")"
echo "lab: grandmaster gone 1 s: $(jq -c '.rates[0].error.switch | {holdover, coverage, holdover_term_mean: .bound_terms_mean_ns.holdover}' "$out/in2/report/report.json")"
counts "$out/in2/rate-2000/switch" 2000 2
grep -q "^switch_mode store-and-forward" "$out/in2/lab.conf" || fail "run in lab $id2: not the lab's own switch"
grep -q "^switch_cpu 1\$" "$out/in2/lab.conf" || fail "run in lab $id2: not the lab's switch CPU: $(grep switch_ "$out/in2/lab.conf")"
grep -q "^clocks hwsim$" "$out/in2/lab.conf" || fail "run in lab $id2: not on its simulated clocks"
bin/tapless lab run --id "$id2" --output "$out/in2b" --rates 2000 --duration 2 --clocks system \
	> /dev/null 2> "$out/in2b.log" && fail "run --clocks system in a lab up on hw succeeded"
grep -q "runs on --clocks hw" "$out/in2b.log" || fail "run --clocks system in lab $id2: $(tail -2 "$out/in2b.log")"
bin/tapless lab run --id "$id1" --output "$out/in1" --rates 2000 --duration 2 --cal-duration 2 \
	> /dev/null 2> "$out/in1.log" || fail "run in lab $id1: $(tail -3 "$out/in1.log")"
grep -q "^stamps software$" "$out/in1/lab.conf" && grep -q "^clocks system$" "$out/in1/lab.conf" ||
	fail "run in lab $id1: not on the machine's clock"
# On the machine's clock, shared, the stamps calibrated against the
# switch's port stamps on the calibration run leave no bias worth the name
# (issue 34: |p50| <= 100 ns in the lab's runs; here, on one short run on
# a busy machine, 200). Calibrated only on the back-to-back run, with the
# UDP cables, this rate gave +300 to +500 ns.
r1=$out/in1/rate-2000
grep -q "; the cables to the switch, calibration run, [1-9][0-9]* and [1-9]" "$r1/venue.cal" &&
	grep -q "^link venue swemu 0m$" "$r1/topology" ||
	fail "run in lab $id1: not calibrated against the switch's ports: $(cat "$r1/venue.cal" "$r1/topology" 2>&1)"
jq -e '.rates[0].error.switch | .coverage >= 0.99 and (.error_quantiles_ns.p50 | fabs) <= 200' \
	"$out/in1/report/report.json" > /dev/null ||
	fail "run in lab $id1: error p50 / coverage after calibration: $(jq -c '.rates[0].error.switch | [.error_quantiles_ns.p50, .coverage]' "$out/in1/report/report.json" 2>&1)"
echo "lab: on the machine's clock, 2k: measured - truth p50 $(jq '.rates[0].error.switch.error_quantiles_ns.p50' "$out/in1/report/report.json") ns after calibration against the switch's ports"
bin/tapless lab down --id "$id1" || fail "down $id1"
gone "$id1"
[ "$(ip netns list | grep -c "^tapless-lab-$id2-")" -eq 3 ] || fail "down $id1 touched lab $id2"
# The lab that ran is whole: its switch forwards again.
ip netns exec "tapless-lab-$id2-venue" timeout 3 bash -c "exec 3<>/dev/tcp/198.18.1.2/9" 2> /dev/null
[ $? -ne 124 ] || fail "lab $id2: no path through the switch after a run"
bin/tapless lab down --id "$id2" || fail "down $id2"
gone "$id2"
bin/tapless lab down --id "$id2" 2> "$out/down.err" && fail "down of a lab that is gone succeeded"
grep -q "no lab $id2" "$out/down.err" || fail "down of a lab that is gone: $(cat "$out/down.err")"
labs=()
# A CPU this process may not use: refused, nothing built.
nl=$(ip netns list | grep -c "^tapless-lab-")
bin/tapless lab up --switch-cpu 99 > /dev/null 2> "$out/cpu.err" && fail "up --switch-cpu 99 succeeded"
grep -q "switch-cpu 99: not a CPU this process may use" "$out/cpu.err" || fail "up --switch-cpu 99: $(cat "$out/cpu.err")"
[ "$(ip netns list | grep -c "^tapless-lab-")" -eq "$nl" ] || fail "up --switch-cpu 99 left namespaces"

[ $fails -eq 0 ] && echo "lab: all checks passed"
[ $fails -eq 0 ]
