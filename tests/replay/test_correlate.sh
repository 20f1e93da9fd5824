#!/bin/sh
# The correlator against tapless sim's ground truth: the figures computed
# from the stamps written must come back exactly, the true latencies within
# the error bound reported, through every fault the generator models
# (retransmissions, reordering, split and coalesced segments, a capture
# starting mid-stream, non-FIX traffic, out-of-sync stretches, TAI and UTC
# hosts, classic pcap without directions, from the topology or from
# NAME@ADDR operands, microsecond stamps), switch
# latency both ways (topology and back-to-back baseline), rate buckets, and
# bad input of every kind giving a clear message.
set -u
d=$(mktemp -d /tmp/tapless-correlate.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}

# sim NAME ARGS...: generate into $d/NAME
sim() {
	n=$1; shift
	$T sim --output "$d/$n" "$@" > "$d/$n.sim.log" 2>&1 ||
		{ fail "$n: sim exit $?: $(cat "$d/$n.sim.log")"; return 1; }
}

# corr NAME [OPTIONS]: correlate $d/NAME's two hosts with their journals
# and topology into $d/NAME.json (stderr in $d/NAME.err).
corr() {
	n=$1; shift
	a=$(ls "$d/$n"/algo.pcap* | head -1)
	v=$(ls "$d/$n"/venue.pcap* | head -1)
	$T correlate --json --sync algo="$d/$n/algo.journal" \
		--sync venue="$d/$n/venue.journal" --topology "$d/$n/topology" \
		"$@" algo="$a" venue="$v" > "$d/$n.json" 2> "$d/$n.err"
}

# truth NAME: the correlator's figures against the truth file
truth() {
	jq -r --slurpfile truth "$d/$1/truth.json" -f tests/replay/truth.jq \
		"$d/$1.json" > "$d/$1.diff" 2>&1 || fail "$1: jq: $(cat "$d/$1.diff")"
	[ -s "$d/$1.diff" ] && fail "$1: disagrees with the truth:
$(head -20 "$d/$1.diff")"
	return 0
}

# want NAME FILTER MESSAGE: jq -e on $d/NAME.json
want() { jq -e "$2" "$d/$1.json" > /dev/null || fail "$1: $3"; }

# 1. The FTTC workload through a cut-through switch, nothing unusual.
sim plain && corr plain || fail "plain: correlate exit $?: $(cat "$d/plain.err")"
truth plain
want plain '[.hops[] | select(.flow != "all")] | length == 4' "expected 4 flows (2 sessions, 2 directions)"
want plain '.unmatched.seen_at_one_host == 0' "messages left unmatched"
# The text output has the same figures, readable.
$T correlate --sync algo="$d/plain/algo.journal" --sync venue="$d/plain/venue.journal" \
	--topology "$d/plain/topology" algo="$d/plain/algo.pcapng" venue="$d/plain/venue.pcapng" \
	> "$d/plain.txt" 2>&1 || fail "plain: text output exit $?"
grep -q "tick_to_trade" "$d/plain.txt" && grep -q "arista\|sw1" "$d/plain.txt" ||
	fail "plain: text output lacks transactions or the switch: $(head -5 "$d/plain.txt")"

# CSV: a table per section, the hop figures the same as in JSON.
$T correlate --csv --sync algo="$d/plain/algo.journal" --sync venue="$d/plain/venue.journal" \
	--topology "$d/plain/topology" algo="$d/plain/algo.pcapng" venue="$d/plain/venue.pcapng" \
	> "$d/plain.csv" 2>/dev/null || fail "plain: CSV exit $?"
p50=$(jq '.hops[] | select(.from == "venue" and .to == "algo" and .flow == "all") | .latency_ns.p50' "$d/plain.json")
awk -F, -v want="$p50" '/^from,to,flow,/ { for (i = 1; i <= NF; i++) col[$i] = i; t = 1; next }
	t && $1 == "venue" && $2 == "algo" && $3 == "all" { found = ($col["latency_ns.p50"] == want) }
	END { exit !found }' "$d/plain.csv" || fail "plain: CSV hop p50 is not the JSON's $p50"

# 2. Every fault at once.
sim faults --seed 7 --rate 5000 --duration 2 --retransmit 0.02 --reorder 0.02 \
	--mss 80 --coalesce 0.5 --start-late venue=0.5 --noise 0.02 --pure-acks 0.3 &&
	corr faults || fail "faults: correlate exit $?: $(cat "$d/faults.err")"
truth faults
want faults '[.inputs[].streams.retransmits] | add > 0' "no retransmission seen"
want faults '[.inputs[].streams.midstream_bytes] | add > 0' "the late capture did not start mid-stream"
want faults '[.inputs[].streams.out_of_order] | add > 0' "no segment out of order"
# Messages split across segments: by their last byte they arrive later
# than by their first, never earlier.
corr faults --last-byte && cp "$d/faults.json" "$d/faults-last.json" && corr faults ||
	fail "faults: --last-byte exit $?"
jq -s -e '[.[0].hops[] | select(.flow == "all")] as $f | [.[1].hops[] | select(.flow == "all")] as $l
	| ($f | length) == ($l | length) and ([$f, $l] | transpose | all(.[0].messages == .[1].messages))
	and ([.[1].transactions[] | .latency_ns.max] | add) != ([.[0].transactions[] | .latency_ns.max] | add)' \
	"$d/faults.json" "$d/faults-last.json" > /dev/null || fail "faults: --last-byte gives the same transaction figures or other counts"

# 3. Store and forward: serialisation taken out per frame.
sim sf --switch gnodal-gs7200 --seed 3 && corr sf || fail "sf: correlate exit $?"
truth sf

# 4. A host out of sync for a second: its samples are set apart.
sim unsync --unsync venue=1-2 --seed 4 && corr unsync || fail "unsync: correlate exit $?"
truth unsync
want unsync '[.hops[] | select(.flow == "all") | .out_of_sync.messages] | add > 0' "no sample set apart as out of sync"

# 5. TAI and UTC hosts: the journals carry the UTC offset.
sim mixed --timescale venue=utc --seed 5 && corr mixed || fail "mixed: correlate exit $?"
truth mixed
# Without journals or --utc-offset they cannot be compared, and we say so.
$T correlate --json algo="$d/mixed/algo.pcapng" venue="$d/mixed/venue.pcapng" \
	> "$d/mixed-nooff.json" 2> "$d/mixed-nooff.err"
grep -q "no UTC offset is known" "$d/mixed-nooff.err" || fail "mixed: no warning about the UTC offset: $(cat "$d/mixed-nooff.err")"
jq -e '[.hops[] | select(.from != .to)] | length == 0' "$d/mixed-nooff.json" > /dev/null ||
	fail "mixed: TAI and UTC stamps compared without an offset"
$T correlate --json --utc-offset 37 algo="$d/mixed/algo.pcapng" venue="$d/mixed/venue.pcapng" \
	> "$d/mixed-off.json" 2> /dev/null || fail "mixed: --utc-offset 37: exit $?"
jq -e --slurpfile t "$d/mixed/truth.json" '(.hops[] | select(.from == "venue" and .to == "algo" and .flow == "all") | .latency_ns.p50) == ($t[0].hops[] | select(.from == "venue" and .to == "algo") | .in_sync.stamped_ns.p50)' \
	"$d/mixed-off.json" > /dev/null || fail "mixed: --utc-offset 37 gives other figures than the journals' offset"

# 6. Classic pcap without directions: the topology's addresses say them;
# microsecond stamps are correlated as written, the bound widened by their
# resolution.
sim pcap --format venue=pcap --format algo=pcap-us --seed 6 &&
	corr pcap --timescale algo=tai --timescale venue=tai || fail "pcap: correlate exit $?: $(cat "$d/pcap.err")"
truth pcap
# Without --timescale, we say what was assumed.
corr pcap
grep -q "does not say which timescale" "$d/pcap.err" || fail "pcap: no warning that the timescale was assumed"
corr pcap --timescale algo=tai --timescale venue=tai
want pcap '.inputs[] | select(.host == "venue") | .direction == "addresses"' "direction not taken from the topology"
want pcap '.inputs[] | select(.host == "algo") | .resolution_ns == 1000' "microsecond stamps not noticed"
# Without the topology no direction is known: nothing is measured, and the
# message says so with the count and the fix (issue 17 item 12). The
# hosts' addresses on the command line (NAME@ADDR=FILE) give what the
# topology gives.
$T correlate --json --timescale algo=tai --timescale venue=tai \
	algo="$d/pcap/algo.pcap" venue="$d/pcap/venue.pcap" > "$d/pcap-nodir.json" 2> "$d/pcap-nodir.err"
rc=$?
n=$(jq '.unmatched.direction_unknown_pairs' "$d/pcap-nodir.json")
[ "$rc" -eq 1 ] && [ "${n:-0}" -gt 0 ] &&
	grep -q "nothing could be measured: $n messages were seen at two hosts but the direction is unknown .*NAME@ADDR\[,ADDR...\]=FILE or --topology FILE" "$d/pcap-nodir.err" ||
	fail "pcap without addresses: exit $rc, $n pairs of unknown direction: $(cat "$d/pcap-nodir.err")"
$T correlate --json --timescale algo=tai --timescale venue=tai \
	algo@198.18.0.1=$d/pcap/algo.pcap venue@198.18.0.2,2001:db8::2="$d/pcap/venue.pcap" \
	> "$d/pcap-addr.json" 2> "$d/pcap-addr.err" || fail "pcap NAME@ADDR: exit $?: $(cat "$d/pcap-addr.err")"
jq -e --slurpfile t "$d/pcap.json" '[.hops[] | select(.flow == "all") | [.from, .to, .messages]] as $a
	| ($a | length) == 2 and all($a[]; .[2] > 0)
	and $a == [$t[0].hops[] | select(.flow == "all") | [.from, .to, .messages]]
	and .unmatched.direction_unknown_pairs == 0' "$d/pcap-addr.json" > /dev/null ||
	fail "pcap NAME@ADDR: hops differ from the topology's: $(jq -c '[.hops[] | select(.flow == "all") | [.from, .to, .messages]]' "$d/pcap-addr.json")"
# A bad address is named.
$T correlate algo@198.18.0.300=$d/pcap/algo.pcap venue="$d/pcap/venue.pcap" > /dev/null 2> "$d/badaddr.err"
[ $? -eq 1 ] && grep -q "'algo@198.18.0.300=.*': '198.18.0.300': not an IPv4 or IPv6 address" "$d/badaddr.err" ||
	fail "bad address: $(cat "$d/badaddr.err")"

# 7. Switch latency the FTTC way: through-switch minus back-to-back. The
# clocks are the same in both runs, so their offsets cancel; the extra
# cable of the switched path (2 m, 9.8 ns) stays in.
sim base --switch none --seed 8 || true
corr plain --baseline algo="$d/base/algo.pcapng" --baseline venue="$d/base/venue.pcapng" ||
	fail "baseline: correlate exit $?: $(cat "$d/plain.err")"
jq -e --slurpfile t "$d/plain/truth.json" '
	($t[0].switches[] | select(.from == "algo" and .to == "venue") | .true_ns.mean) as $sw
	| [.switches[] | select(.method == "baseline" and .from == "algo" and .to == "venue")] | length == 1 and
	  (((.[0].latency_ns.mean - ($sw + 9.8)) | if . < 0 then -. else . end) < 20)' "$d/plain.json" > /dev/null ||
	fail "baseline: switch latency not within 20 ns of truth + one cable: $(jq -c '.switches' "$d/plain.json")"

# 8. By rate: each run's figures in its own bucket.
sim rates --rates 500,5000 --duration 4 --seed 9 && corr rates --by-rate || fail "rates: correlate exit $?"
truth rates

# 9. The samples file holds every sample the summaries count, with the
# same figures: per kind and hop, the count and the mean agree with the
# JSON (both runs, both methods, rate buckets).
ln -s rates "$d/samples"
corr samples --by-rate --samples "$d/samples.txt" \
	--baseline algo="$d/base/algo.pcapng" --baseline venue="$d/base/venue.pcapng" ||
	fail "samples: correlate exit $?: $(cat "$d/samples.err")"
[ -f "$d/samples.txt" ] && [ ! -e "$d/samples.txt.part" ] || fail "samples: file not under its final name"
head -1 "$d/samples.txt" | grep -q '^# tapless correlate samples: run kind from to time_ns' || fail "samples: no header"
# awk: "kind from to rate count mean" per group of the main run (rate 0:
# all samples, as the JSON's results without a rate).
awk '!/^#/ && $1 == "main" { k = $2 " " $3 " " $4 " "; n[k 0]++; s[k 0] += $6
		if ($9 != 0) { n[k $9]++; s[k $9] += $6 } }
	END { for (k in n) printf "%s %d %.3f\n", k, n[k], s[k] / n[k] }' "$d/samples.txt" | sort > "$d/samples.sum"
jq -r '(.hops[] | select(.flow == "all") | "hop \(.from) \(.to) \(.rate // 0) \(.latency_ns.count + (.out_of_sync.count // 0))"),
	(.transactions[] | "\(.name) \(.host) \(.host) \(.rate // 0) \(.latency_ns.count)"),
	(.switches[] | select(.method == "topology") | "switch \(.from) \(.to) \(.rate // 0) \(.latency_ns.count)"),
	(.app_to_wire | group_by(.host)[] | "app_to_wire \(.[0].host) \(.[0].host) 0 \(map(.messages) | add)")' \
	"$d/samples.json" | sort > "$d/samples.want"
awk '{ print $1, $2, $3, $4, $5 }' "$d/samples.sum" | diff - "$d/samples.want" > "$d/samples.diff" ||
	fail "samples: counts differ from the JSON (< samples, > JSON): $(head -20 "$d/samples.diff")"
jq -r '.transactions[] | select(.rate == null) | "\(.name) \(.host) \(.latency_ns.mean)"' "$d/samples.json" |
	while read -r k h m; do
		awk -v k="$k" -v h="$h" -v m="$m" '$1 == k && $2 == h && $4 == 0 { d = $6 - m; exit !(d < 0.01 && d > -0.01) }' "$d/samples.sum" ||
			fail "samples: $k at $h: mean differs from the JSON's $m"
	done
awk '$1 == "baseline" && $2 == "hop"' "$d/samples.txt" | grep -q . || fail "samples: no baseline hop samples"
awk '!/^#/ && NF != 14' "$d/samples.txt" | grep -q . && fail "samples: a line without 14 fields"
# The bound's terms add up to it, line by line, where it is known.
awk '!/^#/ && $8 >= 0 && $8 != $11 + $12 + ($13 < 0 ? 0 : $13) + $14' "$d/samples.txt" | grep -q . &&
	fail "samples: a bound that is not the sum of its terms: $(awk '!/^#/ && $8 >= 0 && $8 != $11 + $12 + ($13 < 0 ? 0 : $13) + $14' "$d/samples.txt" | head -2)"

# 9b. Stamp calibration (tapless-calibration(5)): offset is stamp - wire,
# so a one-way gains the sender's TX offset and loses the receiver's RX
# one; both ends' spreads are the bound's stamp term. A host without one
# says so, its samples' stamp term unknown.
# The simulated stamps are hardware ones: the sw lines must not apply.
printf 'host algo\nstamp tx hw offset -300 spread 40\nstamp rx hw offset 500 spread 60\nstamp tx sw offset 99999 spread 99999\n' > "$d/algo.cal"
printf 'host venue\nstamp tx hw offset 70 spread 5\nstamp rx hw offset 1000 spread 7\nstamp rx sw offset 99999 spread 99999\n' > "$d/venue.cal"
corr plain || fail "calibration: plain run exit $?"
cp "$d/plain.json" "$d/uncal.json"
corr plain -k algo="$d/algo.cal" -k venue="$d/venue.cal" || fail "calibration: exit $?: $(cat "$d/plain.err")"
jq -e --slurpfile u "$d/uncal.json" '
	def hop($j; $f; $t): $j.hops[] | select(.from == $f and .to == $t and .flow == "all");
	(hop(.; "algo"; "venue").latency_ns.mean - hop($u[0]; "algo"; "venue").latency_ns.mean - (-300) + 1000 | fabs) < 0.01 and
	(hop(.; "venue"; "algo").latency_ns.mean - hop($u[0]; "venue"; "algo").latency_ns.mean - 70 + 500 | fabs) < 0.01 and
	hop(.; "algo"; "venue").bound_terms_mean_ns.stamp == 47 and
	hop(.; "venue"; "algo").bound_terms_mean_ns.stamp == 65 and
	(hop(.; "algo"; "venue").sync_error_bound_ns - hop($u[0]; "algo"; "venue").sync_error_bound_ns) == 47 and
	hop($u[0]; "algo"; "venue").bound_terms_mean_ns.stamp == null and
	hop($u[0]; "algo"; "venue").bound_terms_mean_ns.without_stamp_term == hop($u[0]; "algo"; "venue").messages and
	hop(.; "algo"; "venue").bound_terms_mean_ns.without_stamp_term == 0 and
	([.inputs[] | .calibration.stamps | length] == [3, 3])' "$d/plain.json" > /dev/null ||
	fail "calibration: not applied as stamp - offset, or its term not the spreads: $(jq -c '[.hops[] | select(.flow == "all") | {from, to, m: .latency_ns.mean, b: .sync_error_bound_ns, t: .bound_terms_mean_ns}]' "$d/plain.json") against $(jq -c '[.hops[] | select(.flow == "all") | {from, to, m: .latency_ns.mean, b: .sync_error_bound_ns}]' "$d/uncal.json")"
corr plain -k venue="$d/venue.cal" || fail "calibration: one host: exit $?"
jq -e '(.inputs[] | select(.host == "algo") | .calibration) == null and
	([.hops[] | select(.flow == "all") | .bound_terms_mean_ns.stamp] | all(. == null))' "$d/plain.json" > /dev/null ||
	fail "calibration: a host without one is not said, or its samples got a stamp term"
$T correlate --sync algo="$d/plain/algo.journal" -k algo="$d/algo.cal" algo="$(ls "$d"/plain/algo.pcap* | head -1)" \
	venue="$(ls "$d"/plain/venue.pcap* | head -1)" --sync venue="$d/plain/venue.journal" > "$d/cal.txt" 2>&1
grep -q "no stamp calibration" "$d/cal.txt" ||
	fail "calibration: text does not say which host has none: $(grep -n calibration "$d/cal.txt")"
printf 'stamp tx sw offset 1 spread -2\n' > "$d/bad.cal"
corr plain -k algo="$d/bad.cal" && fail "calibration: a negative spread accepted"
grep -q "bad.cal:1: " "$d/plain.err" || fail "calibration: the error does not name file and line: $(cat "$d/plain.err")"
corr plain -k nosuch="$d/algo.cal" && fail "calibration: a host that is not an input accepted"
grep -q "nosuch" "$d/plain.err" || fail "calibration: the unknown host is not named: $(cat "$d/plain.err")"
jq -e --slurpfile t "$d/rates/truth.json" '
	[$t[0].by_rate[] | {rate: .rate, n: (.transactions[] | select(.name == "tick_to_trade") | .count)}] as $want
	| [.transactions[] | select(.name == "tick_to_trade" and .rate != null) | {rate: .rate, n: .count}] | sort_by(.rate) == ($want | sort_by(.rate))' \
	"$d/rates.json" > /dev/null || fail "rates: tick_to_trade per rate bucket differs from truth: $(jq -c '[.transactions[] | select(.rate != null) | [.name, .rate, .count]]' "$d/rates.json")"

# 9. Bad input.
# A file cut short: what is whole is used, the cut is reported with its offset.
size=$(stat -c %s "$d/plain/algo.pcapng")
head -c $((size / 2 + 13)) "$d/plain/algo.pcapng" > "$d/cut.pcapng"
$T correlate --json algo="$d/cut.pcapng" venue="$d/plain/venue.pcapng" > "$d/cut.json" 2> "$d/cut.err" ||
	fail "cut file: exit $? although half the file is good"
grep -q "offset" "$d/cut.err" || fail "cut file: no byte offset in: $(cat "$d/cut.err")"
jq -e '.inputs[] | select(.host == "algo") | .error != null' "$d/cut.json" > /dev/null || fail "cut file: no error in inputs"
jq -e '.transactions[] | select(.name == "tick_to_trade") | .count > 0' "$d/cut.json" > /dev/null || fail "cut file: nothing measured from the good half"
# The same host name twice.
$T correlate algo="$d/plain/algo.pcapng" algo="$d/plain/venue.pcapng" > /dev/null 2> "$d/dup.err"
[ $? -eq 1 ] && grep -q "given twice" "$d/dup.err" || fail "duplicate name: $(cat "$d/dup.err")"
# No such file; not a capture.
$T correlate x="$d/nonexistent.pcapng" > /dev/null 2> "$d/nofile.err"
[ $? -eq 1 ] && grep -q "nonexistent" "$d/nofile.err" || fail "missing file: $(cat "$d/nofile.err")"
echo "not a capture" > "$d/junk.pcapng"
$T correlate x="$d/junk.pcapng" > /dev/null 2> "$d/junk.err"
[ $? -eq 1 ] && grep -q "junk.pcapng" "$d/junk.err" || fail "junk file: $(cat "$d/junk.err")"
# A bad topology line is named.
printf 'host algo 198.18.0.1\nlink algo\n' > "$d/bad.topo"
$T correlate --topology "$d/bad.topo" algo="$d/plain/algo.pcapng" > /dev/null 2> "$d/topo.err"
[ $? -eq 1 ] && grep -q "bad.topo:2:" "$d/topo.err" || fail "bad topology: $(cat "$d/topo.err")"
# A sync journal with a bad line and a torn tail: both reported, the rest used.
cp "$d/plain/venue.journal" "$d/bad.journal"
bad=$(grep -n ' sample ' "$d/bad.journal" | sed -n 3p | cut -d: -f1)
sed -i "${bad}s/ sample / smaple /" "$d/bad.journal"
printf '1763900009000000000 sample ph' >> "$d/bad.journal"
$T correlate --json --sync venue="$d/bad.journal" --sync algo="$d/plain/algo.journal" \
	algo="$d/plain/algo.pcapng" venue="$d/plain/venue.pcapng" > "$d/badj.json" 2> "$d/badj.err" ||
	fail "bad journal: exit $?"
grep -q "bad.journal:$bad:" "$d/badj.err" || fail "bad journal: line $bad not named: $(cat "$d/badj.err")"
jq -e '.inputs[] | select(.host == "venue") | .journal.torn_tail and .journal.bad_lines == 1' "$d/badj.json" > /dev/null ||
	fail "bad journal: torn tail or bad line not counted"
# A clock stepping back mid-file: counted and said.
n=$(capinfos -c -M "$d/plain/algo.pcapng" 2>/dev/null | awk '/Number of packets/ { print $NF }')
editcap -r "$d/plain/algo.pcapng" "$d/p1.pcapng" 1-$((n / 2)) 2>/dev/null &&
editcap -r "$d/plain/algo.pcapng" "$d/p2.pcapng" $((n / 2 + 1))-$n 2>/dev/null &&
editcap -t -10 "$d/p2.pcapng" "$d/p2s.pcapng" 2>/dev/null &&
mergecap -a -w "$d/jump.pcapng" "$d/p1.pcapng" "$d/p2s.pcapng" 2>/dev/null || fail "could not build the clock-jump file"
$T correlate --json algo="$d/jump.pcapng" venue="$d/plain/venue.pcapng" > "$d/jump.json" 2> "$d/jump.err"
jq -e '.inputs[] | select(.host == "algo") | .clock_jumps >= 1' "$d/jump.json" > /dev/null || fail "clock jump not counted"
grep -q "went back" "$d/jump.err" || fail "clock jump not reported: $(cat "$d/jump.err")"
# A host whose peer is not in the input: said, and its transactions still count.
sim other --start 1763990000 --seed 11 || true
$T correlate --json algo="$d/plain/algo.pcapng" other="$d/other/venue.pcapng" > "$d/nopeer.json" 2> "$d/nopeer.err" ||
	fail "no peer: exit $? although the algo's transactions are measurable"
grep -q "was seen by another host" "$d/nopeer.err" || fail "no peer: not reported: $(cat "$d/nopeer.err")"
# Nothing measurable: exit 1.
build/tools/capgen "$d/udp.pcapng" 100 > /dev/null 2>&1
$T correlate x="$d/udp.pcapng" > /dev/null 2> "$d/none.err"
[ $? -eq 1 ] && grep -q "nothing could be measured" "$d/none.err" || fail "nothing measurable: $(cat "$d/none.err")"

# 9. Threads (--threads): each host read and parsed on a thread of its
# own gives the one thread's output byte for byte (results, samples file
# and warnings), through every fault above, mixed timescales (interfaces
# worked out in the one thread's order), classic pcap, a cut file, a
# baseline and rate buckets.
# same NAME ARGS...: correlate with ARGS at 1, 2, 3 and 0 (all cores)
# threads: one thread, a host on its own thread and the other with the
# matching, each host on its own thread.
same() {
	n=$1; shift
	for k in 1 2 3 0; do
		$T correlate --threads $k --samples "$d/thr-$n-$k.samples" "$@" \
			> "$d/thr-$n-$k.out" 2> "$d/thr-$n-$k.err"
		echo "exit $?" >> "$d/thr-$n-$k.out"
	done
	for k in 2 3 0; do
		for x in out err samples; do
			cmp -s "$d/thr-$n-1.$x" "$d/thr-$n-$k.$x" ||
				fail "threads: $n: --threads $k's $x differs from one thread's: $(diff "$d/thr-$n-1.$x" "$d/thr-$n-$k.$x" | head -5)"
		done
	done
	grep -q "^exit 0" "$d/thr-$n-1.out" || fail "threads: $n: $(cat "$d/thr-$n-1.err")"
}
for n in plain faults sf unsync mixed rates; do
	same $n --json --sync algo="$d/$n/algo.journal" --sync venue="$d/$n/venue.journal" \
		--topology "$d/$n/topology" --by-rate algo="$d/$n/algo.pcapng" venue="$d/$n/venue.pcapng"
done
same faults-last --json --last-byte --topology "$d/faults/topology" \
	algo="$d/faults/algo.pcapng" venue="$d/faults/venue.pcapng"
same mixed-nooff --json algo="$d/mixed/algo.pcapng" venue="$d/mixed/venue.pcapng"
same pcap --json algo="$d/pcap/algo.pcap" venue="$d/pcap/venue.pcap" --topology "$d/pcap/topology"
same cut algo="$d/cut.pcapng" venue="$d/plain/venue.pcapng"
same base --json --topology "$d/plain/topology" algo="$d/plain/algo.pcapng" venue="$d/plain/venue.pcapng" \
	--baseline algo="$d/base/algo.pcapng" --baseline venue="$d/base/venue.pcapng"
same three --json --topology "$d/plain/topology" algo="$d/plain/algo.pcapng" \
	venue="$d/plain/venue.pcapng" other="$d/other/venue.pcapng"
# FIX over UDP: datagrams are matched by the hash of their bytes, which
# the host's thread takes when it has one. 2000 datagrams, the algo's
# capture lacking every tenth, venue's stamp 10 us + i ns before the
# algo's: 1800 matched, p50 10999 ns, max 11999 ns.
python3 tests/replay/udpfix.py "$d/ua.pcap" "$d/ub.pcap" 2000 || fail "udpfix.py: exit $?"
same udp --json --timescale venue=utc --timescale algo=utc \
	venue@198.18.0.1="$d/ua.pcap" algo@198.18.0.2="$d/ub.pcap"
sed '$d' "$d/thr-udp-1.out" > "$d/udp.json"
want udp '[.hops[] | select(.flow == "all")] | length == 1 and .[0].messages == 1800
	and .[0].latency_ns.p50 == 10999 and .[0].latency_ns.max == 11999' \
	"UDP datagrams not matched by their bytes: $(jq -c '.hops' "$d/udp.json")"
grep -q "threads: " "$d/thr-cut-1.err" 2>/dev/null && fail "threads: a warning names threads"
$T correlate --follow --threads 2 algo="$d/plain" > /dev/null 2> "$d/thr-follow.err"
[ $? -eq 1 ] && grep -q -- "--threads is for files read whole" "$d/thr-follow.err" ||
	fail "threads: --follow --threads: $(cat "$d/thr-follow.err")"

[ "$fails" -eq 0 ] && echo "correlate: all checks passed"
[ "$fails" -eq 0 ]
