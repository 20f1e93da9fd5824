#!/bin/sh
# tapless report on a run directory laid out as tapless lab run writes it,
# from tapless sim captures correlated here (two rates, each with a
# back-to-back twin) and switch emulator truth from build/tools/swgen with a
# known residence: the tables, data, plots and index exist and are what they
# should be, the figures equal those computed with awk from the samples
# files, the truth is the generated one, and bad input gives the messages
# and exit status tapless-report(1) promises: implausible truth (a bit
# flipped in an emulator stamp) and impossible samples (a negative
# transaction, a one-way below zero beyond its bound) are named and
# handled as it says. Then the per-sample measurement error: truth made
# (swgen --from) for the very frames the sim's venue sent, each with a
# residence its own stamp gives, so that awk works out every sample's error
# from its line alone; the report's error, its count and how many samples
# lie inside their bound must be exactly awk's.
set -u
d=$(mktemp -d /tmp/tapless-report.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}
SWGEN=build/tools/swgen
R=$d/run

mkdir -p "$R/journals"
for rate in 1000 5000; do
	$T sim --output "$d/sw/$rate" --rate $rate -d 2 --seed 21 > /dev/null 2>&1 &&
	$T sim --output "$d/b2b/$rate" --rate $rate -d 2 --seed 21 --switch none > /dev/null 2>&1 ||
		{ fail "sim $rate"; continue; }
	mkdir -p "$R/rate-$rate"
	s=$d/sw/$rate; b=$d/b2b/$rate
	# Stamps calibrated at 1000/s only (offset 0: the samples are the
	# same, the bounds gain a stamp term of 30 + 50 ns); 5000/s has none.
	cal=
	if [ $rate = 1000 ]; then
		for h in venue:30:20 algo:40:50; do
			n=${h%%:*}; tx=${h#*:}; rx=${tx#*:}; tx=${tx%:*}
			printf '# by hand\nhost %s\nmeasured by hand for the test\n' "$n" > "$R/rate-$rate/$n.cal"
			for src in hw sw; do
				printf 'stamp tx %s offset 0 spread %d samples 7\nstamp rx %s offset 0 spread %d\n' \
					$src "$tx" $src "$rx" >> "$R/rate-$rate/$n.cal"
			done
		done
		cal="-k venue=$R/rate-$rate/venue.cal -k algo=$R/rate-$rate/algo.cal"
	fi
	# shellcheck disable=SC2086
	$T correlate --json --samples "$R/rate-$rate/samples.txt" -t "$s/topology" $cal \
		-s venue="$s/venue.journal" -s algo="$s/algo.journal" \
		--baseline venue="$b/venue.pcapng" --baseline algo="$b/algo.pcapng" \
		venue="$s/venue.pcapng" algo="$s/algo.pcapng" > "$R/rate-$rate/correlate.json" 2> "$d/corr.err" ||
		fail "correlate $rate: $(cat "$d/corr.err")"
done
cp "$d/sw/1000/venue.journal" "$d/sw/1000/algo.journal" "$R/journals/"
# Truth at 1000/s only: 5000/s shows how a rate without it is reported.
mkdir -p "$R/rate-1000/switch/swemu"
$SWGEN "$R/rate-1000/switch/swemu" 500 350 10 198.18.1.1:9001 > /dev/null || fail "swgen"
cat > "$R/lab.conf" <<EOF
# written by hand, as a user would
id replay-1
date 2025-11-23T14:00:00Z
rates 1000,5000
duration 2
stamps software
switch arista-7124sx
switch_mode cut-through
switch_speed 10G
md_source 198.18.1.1:9001   # the venue's feed
hosts venue,algo
EOF

$T report "$R" > "$d/out.txt" 2> "$d/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "report exit $rc: $(cat "$d/err.txt")"
O=$R/report
for f in index.md tables.txt tables.md report.json data/rates.dat; do
	[ -s "$O/$f" ] || fail "$f missing or empty"
done
grep -q "^report: $O/index.md" "$d/out.txt" || fail "stdout does not name index.md: $(head -2 "$d/out.txt")"
# The headline: no per-sample error without the venue's capture, the
# emulator named as such with what it achieved; 5k has no truth at all.
grep -q "rate   1000/s: no per-sample error (the samples' stamps cannot be tied to frames without the venue's capture" "$d/out.txt" &&
	grep -q "^ *switch: swemu, modelled on arista-7124sx; achieved residence p50 350 ns, p99 370 ns" "$d/out.txt" &&
	grep -q "rate     5k/s: no truth (no emulator captures" "$d/out.txt" ||
	fail "no headline for 1000/s and 5k/s: $(cat "$d/out.txt")"
for p in latency-rate histograms cdf latency-time ptp-offset switch-truth; do
	[ -s "$O/plots/$p.gp" ] || fail "plots/$p.gp missing"
	[ "$(head -c 8 "$O/plots/$p.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "plots/$p.png is not a PNG"
	grep -q "<svg" "$O/plots/$p.svg" 2>/dev/null || fail "plots/$p.svg has no svg element"
	grep -q "](plots/$p.png)" "$O/index.md" || fail "index.md does not show $p"
done
# The scripts rerun as they are, from the report directory.
(cd "$O" && rm plots/cdf.png && gnuplot plots/cdf.gp 2> /dev/null) && [ -s "$O/plots/cdf.png" ] ||
	fail "plots/cdf.gp does not rerun from $O"

# The figures against awk on the samples: BUY, SELL, switch (topology),
# baseline difference, per rate, to 0.01 ns.
for rate in 1000 5000; do
	awk '!/^#/ && $7 != "out" {
		if ($1 == "main" && $2 == "tick_to_trade" && $3 == "algo") { nb++; sb += $6 }
		if ($1 == "main" && $2 == "fill_to_sell" && $3 == "algo") { ns++; ss += $6 }
		if ($1 == "main" && $2 == "switch" && $3 == "venue" && $4 == "algo") { nw++; sw += $6 }
		if ($1 == "main" && $2 == "hop" && $3 == "venue" && $4 == "algo") { nh++; sh += $6 }
		if ($1 == "baseline" && $2 == "hop" && $3 == "venue" && $4 == "algo") { nk++; sk += $6 } }
		END { printf "%d %.4f %d %.4f %d %.4f %.4f\n", nb, sb / nb, ns, ss / ns, nw, sw / nw, sh / nh - sk / nk }' \
		"$R/rate-$rate/samples.txt" > "$d/awk.$rate"
	jq -r --argjson r $rate '.rates[] | select(.rate == $r) |
		"\(.buy.latency_ns.count) \(.buy.latency_ns.mean) \(.sell.latency_ns.count) \(.sell.latency_ns.mean) \(.switch.latency_ns.count) \(.switch.latency_ns.mean) \(.switch_latency.baseline_mean_ns)"' \
		"$O/report.json" > "$d/json.$rate"
	awk 'NR == FNR { for (i = 1; i <= NF; i++) a[i] = $i; next }
		{ for (i = 1; i <= NF; i++) { x = a[i] - $i; if (x < 0) x = -x
			if ((i % 2 && i < 7 && a[i] != $i) || x > 0.01) { print "field " i ": awk " a[i] ", report " $i; bad = 1 } } }
		END { exit bad }' "$d/awk.$rate" "$d/json.$rate" ||
		fail "rate $rate: figures differ from awk: $(cat "$d/awk.$rate") vs $(cat "$d/json.$rate")"
done
# In the tables as written: BUY mean in µs to 3 places.
buy=$(awk '{ printf "%.3f", $2 / 1000 }' "$d/awk.1000")
grep -q "^BUY .* $buy *\$" "$O/tables.txt" || grep -q "^BUY .* $buy " "$O/tables.txt" ||
	fail "tables.txt lacks the BUY mean $buy: $(grep '^BUY' "$O/tables.txt")"

# Truth: swgen's residence 350 ± 10 ns pattern, mean exactly 350 over the
# 500 market data frames; the order, pure ACK, UDP and id-less frames are
# left out.
jq -e '.rates[] | select(.rate == 1000) | .switch_latency.truth |
	.available and .frames == 500 and .residence_ns.mean == 350 and .topology_ns.mean == 350 and .unpaired == 0 and .without_packet_id > 0' \
	"$O/report.json" > /dev/null || fail "truth at 1000/s is not 500 frames of mean 350: $(jq -c '.rates[0].switch_latency.truth' "$O/report.json")"
sw=$(jq '.rates[] | select(.rate == 1000) | .switch.latency_ns.mean' "$O/report.json")
want=$(awk -v m="$sw" 'BEGIN { printf "%+.3f", m - 350 }')
grep -q "^Topology - truth (means) .* -  *$want\$" "$O/tables.txt" ||
	fail "tables.txt does not state the difference $want: $(grep 'truth (means)' "$O/tables.txt")"
grep -q "^- \*\*5k messages/s\*\*: no truth (no emulator captures" "$O/index.md" || fail "index.md does not say 5k has no truth"
jq -e '.rates[] | select(.rate == 5000) | .switch_latency.truth.available == false' "$O/report.json" > /dev/null ||
	fail "5000/s claims a truth"
grep -q "^Achieved residence p50 .* -  *350\$" "$O/tables.txt" || fail "tables.txt has no truth rows: $(cat "$O/tables.txt")"
# The stamp calibrations: read back at 1000/s, null at 5000/s (no .cal).
jq -e '.rates[] | select(.rate == 5000) | .calibration == null' "$O/report.json" > /dev/null ||
	fail "5000/s: calibration is not null without .cal files: $(jq -c '.rates[] | select(.rate == 5000) | .calibration' "$O/report.json")"
jq -e --arg p "$R/rate-1000/venue.cal" '.rates[] | select(.rate == 1000) | .calibration |
	.venue.path == $p and .venue.host == "venue" and .venue.measured == "by hand for the test" and
	(.venue.stamps | length == 4) and
	(.venue.stamps[] | select(.direction == "tx" and .source == "sw") | .offset_ns == 0 and .spread_ns == 30 and .samples == 7) and
	(.algo.stamps[] | select(.direction == "rx" and .source == "hw") | .spread_ns == 50 and .samples == 0)' \
	"$O/report.json" > /dev/null ||
	fail "1000/s: calibration not read back: $(jq -c '.rates[] | select(.rate == 1000) | .calibration' "$O/report.json")"
grep -q "^  Stamps calibrated (offset stamp − wire ± spread): venue tx hw +0 ns ±30 ns, tx sw +0 ns ±30 ns, rx hw +0 ns ±20 ns, rx sw +0 ns ±20 ns; algo tx hw" "$O/index.md" &&
	grep -q "^  Stamps not calibrated (no rate-5000/venue.cal, algo.cal)" "$O/index.md" ||
	fail "index.md does not say the calibrations: $(grep -i 'calibrated' "$O/index.md")"
grep -q "^Table 5. The error bound, term by term" "$O/tables.txt" || fail "tables.txt has no table 5"
grep -q "^Model " "$O/tables.txt" && fail "tables.txt shows a model lab.conf does not give"
grep -q "measurement-error.*Not drawn\|### measurement-error" "$O/index.md" &&
	grep -A2 "^### measurement-error" "$O/index.md" | grep -q "Not drawn: the samples' stamps cannot be tied" ||
	fail "index.md does not say why there is no error plot: $(grep -A2 'measurement-error' "$O/index.md")"

# Store and forward: the topology method's truth is the residence minus
# serialisation of the frame (swgen prints its length) at switch_speed.
S=$d/sf
mkdir -p "$S/rate-1000/switch/swemu"
cp "$R/rate-1000/samples.txt" "$S/rate-1000/"
len=$($SWGEN "$S/rate-1000/switch/swemu" 500 500 0 198.18.1.1:9001 150)
printf 'rates 1000\nswitch_mode store-and-forward\nswitch_speed 10G\nmd_source 198.18.1.1:9001\n' > "$S/lab.conf"
$T report --no-plots "$S" > /dev/null 2> "$d/sf.err" || fail "sf: exit $?: $(cat "$d/sf.err")"
want=$(awk -v l="$len" 'BEGIN { s = (l + 4) * 8 / 10; r = int(s + 0.5); print 500 - r }')
jq -e --argjson w "$want" '.rates[0].switch_latency.truth | .residence_ns.mean == 500 and .topology_ns.mean == $w' \
	"$S/report/report.json" > /dev/null || fail "sf: topology truth is not 500 - serialisation = $want: $(jq -c '.rates[0].switch_latency.truth.topology_ns' "$S/report/report.json")"
grep -q "^Truth mean - serialisation" "$S/report/tables.txt" || fail "sf: no serialisation row"
grep -q "switch_mode | unknown\|id | unknown" "$S/report/index.md" || fail "sf: keys not in lab.conf are not 'unknown'"

# -o elsewhere, --json on stdout.
$T report --json --no-plots -o "$d/elsewhere" "$R" > "$d/stdout.json" 2> /dev/null || fail "-o: exit $?"
jq -e '.rates | length == 2' "$d/stdout.json" > /dev/null || fail "--json: stdout is not the report"
[ -s "$d/elsewhere/index.md" ] && [ -s "$d/elsewhere/tables.md" ] || fail "-o: nothing in $d/elsewhere"

# No gnuplot: tables and data still written, a clear error, exit 2.
rm -rf "$d/nognu"
PATH=/nonexistent $T report -o "$d/nognu" "$R" > /dev/null 2> "$d/nognu.err"
rc=$?
[ $rc -eq 2 ] || fail "no gnuplot: exit $rc, not 2"
grep -q "gnuplot not found" "$d/nognu.err" || fail "no gnuplot: no clear message: $(cat "$d/nognu.err")"
[ -s "$d/nognu/tables.txt" ] && [ -s "$d/nognu/data/rates.dat" ] || fail "no gnuplot: tables or data not written"

# Bad input.
$T report "$d/nothing" > /dev/null 2> "$d/e1"
[ $? -eq 1 ] && grep -q "$d/nothing: No such file" "$d/e1" || fail "missing dir: $(cat "$d/e1")"
mkdir -p "$d/noconf"
$T report "$d/noconf" > /dev/null 2> "$d/e2"
[ $? -eq 1 ] && grep -q "noconf: no lab.conf: not a run directory of tapless lab" "$d/e2" || fail "no lab.conf: $(cat "$d/e2")"
mkdir -p "$d/badconf"
printf 'rates 1000\nstamps maybe\n' > "$d/badconf/lab.conf"
$T report "$d/badconf" > /dev/null 2> "$d/e3"
[ $? -eq 1 ] && grep -q "badconf/lab.conf:2: stamps" "$d/e3" || fail "bad lab.conf line: $(cat "$d/e3")"
printf 'id x\n' > "$d/badconf/lab.conf"
$T report "$d/badconf" > /dev/null 2> "$d/e4"
[ $? -eq 1 ] && grep -q "no rates" "$d/e4" || fail "lab.conf without rates: $(cat "$d/e4")"
# A bad samples line: skipped, named path:line, the rest reported.
B=$d/badline
mkdir -p "$B/rate-1000"
printf 'rates 1000\n' > "$B/lab.conf"
{ sed -n 1,40p "$R/rate-1000/samples.txt"; echo "main hop venue algo notanumber 5 in -1 0 -"
  sed -n '41,$p' "$R/rate-1000/samples.txt"; echo "garbage"; } > "$B/rate-1000/samples.txt"
$T report --no-plots "$B" > /dev/null 2> "$d/e5"
rc=$?
[ $rc -eq 0 ] || fail "bad samples line: exit $rc"
grep -q "warning: $B/rate-1000/samples.txt:41: not a samples line (2 such lines skipped)" "$d/e5" ||
	fail "bad samples line not named path:line: $(cat "$d/e5")"
jq -e '.rates[0].bad_lines == 2' "$B/report/report.json" > /dev/null || fail "bad lines not counted"
# No samples at all: nothing to report.
E=$d/empty
mkdir -p "$E/rate-1000"
printf 'rates 1000\n' > "$E/lab.conf"
head -1 "$R/rate-1000/samples.txt" > "$E/rate-1000/samples.txt"
$T report "$E" > /dev/null 2> "$d/e6"
[ $? -eq 1 ] && grep -q "nothing to report" "$d/e6" || fail "no samples: $(cat "$d/e6")"
# A rate of lab.conf without its directory: named, the others reported, exit 1.
M=$d/missing
mkdir -p "$M/rate-1000"
cp "$R/rate-1000/samples.txt" "$M/rate-1000/"
printf 'rates 1000,2000\n' > "$M/lab.conf"
$T report --no-plots "$M" > /dev/null 2> "$d/e7"
[ $? -eq 1 ] && grep -q "$M/rate-2000/samples.txt: No such file" "$d/e7" && [ -s "$M/report/index.md" ] ||
	fail "missing rate: $(cat "$d/e7")"
# Implausible input (issue 17 item 11). A one-bit flip in the emulator's
# egress stamp of one market data frame (bit 39 of the nanosecond stamp:
# 549.76 s): that frame is dropped from the truth with a warning naming
# the files and packets; the other 499 give the truth.
I=$d/implausible
mkdir -p "$I/rate-1000/switch/swemu"
cp "$R/rate-1000/samples.txt" "$I/rate-1000/"
cp "$R/rate-1000/switch/swemu/"*.pcapng "$I/rate-1000/switch/swemu/"
cp "$R/lab.conf" "$I/"
sed -i 's/^rates .*/rates 1000/' "$I/lab.conf"
P2=$I/rate-1000/switch/swemu/port2.pcapng
# The packet number of the first market data egress (out, the md frame's
# length) in the algo's port file, then that EPB's byte offset, walking
# the blocks as 32-bit words (pcapng blocks are 4-byte aligned; this file
# is little-endian).
mdlen=$(build/tools/capdump "$P2" | awk '$3 == "out" { print $4; exit }')
pk=$(build/tools/capdump "$P2" | awk -v l="$mdlen" '/^[0-9]/ { n++; if ($3 == "out" && $4 == l) { print n; exit } }')
off=$(od -An -v -tu4 -w4 "$P2" | awk -v want="$pk" '{ w[NR - 1] = $1 } END {
	i = 0; n = 0
	while (i in w) { if (w[i] == 6 && ++n == want) { print (i + 3) * 4; exit } i += w[i + 1] / 4 } }')
if [ -n "$off" ] && [ -n "$pk" ]; then
	b=$(od -An -tu1 -j "$off" -N 1 "$P2" | tr -d ' ')
	printf "\\$(printf '%03o' $((b ^ 128)))" | dd of="$P2" bs=1 seek="$off" conv=notrunc 2> /dev/null
	$T report --no-plots "$I" > /dev/null 2> "$d/impl.err" || fail "implausible truth: exit $?: $(cat "$d/impl.err")"
	grep -q "warning: rate 1000: truth: market data frame packet id [0-9]* (ingress $I/rate-1000/switch/swemu/port1.pcapng packet [0-9]*, egress $P2 packet $pk): residence -\{0,1\}5497558[0-9]* ns (-\{0,1\}549.7[0-9]* s) is implausible (below 0 or over 1 s): dropped from the truth (1 such frames dropped)" "$d/impl.err" ||
		fail "implausible truth: no warning naming the frame: $(cat "$d/impl.err")"
	grep -q "truth: market data frame packet id .* is implausible" "$I/report/index.md" || fail "implausible truth: not in index.md"
	jq -e '.rates[0].switch_latency.truth | .frames == 499 and .implausible == 1 and .residence_ns.count == 499
		and .residence_ns.max <= 370 and .residence_ns.min >= 330' "$I/report/report.json" > /dev/null ||
		fail "implausible truth: the flipped frame is in the truth: $(jq -c '.rates[0].switch_latency.truth' "$I/report/report.json")"
else
	fail "implausible truth: no market data egress found in $P2 (packet '$pk', offset '$off')"
fi
# Negative samples: a tick_to_trade (one host's clock) cannot be below
# zero: dropped, path:line named. A one-way sample below zero by more than
# its error bound: kept, counted, path:line named. One within its bound:
# nothing said.
N=$d/negative
mkdir -p "$N/rate-1000"
printf 'rates 1000\n' > "$N/lab.conf"
awk '!/^#/ && !t && $1 == "main" && $2 == "tick_to_trade" && $3 == "algo" { $6 = -$6; t = NR }
	!/^#/ && !h && $1 == "main" && $2 == "hop" && $3 == "venue" && $7 == "in" && $8 >= 0 { $6 = -($8 + 1000); h = NR }
	!/^#/ && !w && h && NR > h && $1 == "main" && $2 == "hop" && $3 == "venue" && $7 == "in" && $8 > 0 { $6 = -$8; w = NR }
	{ print } END { print t, h > "/dev/stderr" }' "$R/rate-1000/samples.txt" > "$N/rate-1000/samples.txt" 2> "$d/neg.lines"
read -r tl hl < "$d/neg.lines"
bound=$(awk -v h="$hl" 'NR == h { print $8 }' "$R/rate-1000/samples.txt")
nbuy=$(awk '$1 == "main" && $2 == "tick_to_trade" && $3 == "algo"' "$R/rate-1000/samples.txt" | wc -l)
$T report --no-plots "$N" > /dev/null 2> "$d/neg.err" || fail "negative samples: exit $?: $(cat "$d/neg.err")"
grep -q "warning: $N/rate-1000/samples.txt:$tl: negative tick_to_trade at algo (-[0-9]* ns): one host's later stamp minus its earlier cannot be; sample dropped (1 such samples dropped)" "$d/neg.err" ||
	fail "negative tick_to_trade: no warning naming line $tl: $(cat "$d/neg.err")"
grep -q "warning: $N/rate-1000/samples.txt:$hl: one-way sample -$((bound + 1000)) ns is below zero by more than its error bound ($bound ns): kept, counted as beyond its bound (1 such samples)" "$d/neg.err" ||
	fail "negative hop: no warning naming line $hl: $(cat "$d/neg.err")"
jq -e --argjson n "$nbuy" '.rates[0] | .negative_dropped == 1 and .beyond_bound == 1 and .buy.latency_ns.count == $n - 1 and .buy.latency_ns.min >= 0' \
	"$N/report/report.json" > /dev/null ||
	fail "negative samples: counts: $(jq -c '.rates[0] | [.negative_dropped, .beyond_bound, .buy.latency_ns.count, .buy.latency_ns.min]' "$N/report/report.json"), want 1 1 $((nbuy - 1)) >= 0"

# Garbage everywhere: no crash (ASan builds would abort), a status of 0-2.
G=$d/garbage
mkdir -p "$G/rate-7/switch/swemu" "$G/journals"
printf 'rates 7\nmd_source 198.18.1.1:9001\n' > "$G/lab.conf"
head -c 3000 /dev/urandom > "$G/rate-7/samples.txt"
head -c 3000 /dev/urandom > "$G/rate-7/switch/swemu/p.pcapng"
head -c 3000 /dev/urandom > "$G/journals/x.journal"
$T report --no-plots "$G" > /dev/null 2>&1
rc=$?
[ $rc -le 2 ] || fail "garbage: exit $rc"

# Store-and-forward truth without switch_speed: no topology figures to set
# beside the truth, so the switch-truth plot is not drawn, with the reason,
# and the report succeeds (gnuplot once failed on data/hist-switch-.dat).
F=$d/sf
mkdir -p "$F/rate-1000/switch"
cp "$R/rate-1000/samples.txt" "$F/rate-1000/"
cp -r "$R/rate-1000/switch/swemu" "$F/rate-1000/switch/"
printf 'rates 1000\nswitch_mode store-and-forward\nmd_source 198.18.1.1:9001\n' > "$F/lab.conf"
$T report "$F" > "$d/sf.out" 2> "$d/sf.err" || fail "store-and-forward without speed: exit $?: $(cat "$d/sf.err")"
grep -A2 "^### switch-truth" "$F/report/index.md" | grep -q "Not drawn: store-and-forward without switch_speed" ||
	fail "store-and-forward without speed: switch-truth not said why: $(grep -A2 'switch-truth' "$F/report/index.md")"


# The per-sample error. The truth of every market data frame the sim's
# venue sent at 1000/s (swgen --from its capture): in at its venue stamp +
# 1 us, out 560 ns + (stamp mod 10^6 mod 7) * 5 ns later. The samples'
# time_ns is that stamp (on UTC, the capture on TAI: the same mod 10^6), so
# awk knows each sample's truth: switch error = latency - residence, hop
# error = latency - (residence + the topology's cables, 2 x 2 m = 19.6 ns,
# rounded to 20).
E=$d/err
mkdir -p "$E/rate-1000/switch/swemu" "$E/rate-1000/switch/venue"
cp "$R/rate-1000/samples.txt" "$E/rate-1000/"
cp "$d/sw/1000/topology" "$E/rate-1000/topology"
cp "$d/sw/1000/venue.pcapng" "$E/rate-1000/switch/venue/"
cp "$R/journals/"* "$E/" 2> /dev/null
cp "$R/rate-1000/venue.cal" "$R/rate-1000/algo.cal" "$E/rate-1000/"
nf=$($SWGEN --from "$d/sw/1000/venue.pcapng" "$E/rate-1000/switch/swemu" 1000 560 5 198.18.0.2) || fail "swgen --from"
printf 'id err\nrates 1000\nstamps software\nswitch arista-7124sx\nswitch_mode cut-through\nswitch_latency_ns 576.9\nswitch_jitter_ns 8.9\nmd_source 198.18.0.2:*\n' > "$E/lab.conf"
$T report "$E" > "$d/err.out" 2> "$d/err.err" || fail "error: exit $?: $(cat "$d/err.err")"
want_err() {	# KIND EXTRA: count, mean, bounded, inside of awk's errors
	awk -v k="$1" -v x="$2" '!/^#/ && $1 == "main" && $2 == k && $3 == "venue" && $4 == "algo" && $7 != "out" {
		t = $5; r = 560 + (substr(t, length(t) - 5) + 0) % 7 * 5 + x; e = $6 - r
		n++; s += e
		if ($7 == "in" && $8 >= 0) { b++; if (e <= $8 && e >= -$8) in_++ } }
		END { printf "%d %.4f %d %d\n", n, s / n, b, in_ }' "$E/rate-1000/samples.txt"
}
for k in switch hop; do
	x=0; [ $k = hop ] && x=20
	want_err $k $x > "$d/err.awk.$k"
	jq -r --arg k $k '.rates[0].error[$k] | "\(.paired) \(.error_ns.mean) \(.bounded) \(.inside_bound)"' \
		"$E/report/report.json" > "$d/err.json.$k"
	awk 'NR == FNR { for (i = 1; i <= NF; i++) a[i] = $i; next }
		{ for (i = 1; i <= NF; i++) { x = a[i] - $i; if (x < 0) x = -x
			if (x > 0.01) { print "field " i ": awk " a[i] ", report " $i; bad = 1 } } }
		END { exit bad }' "$d/err.awk.$k" "$d/err.json.$k" ||
		fail "$k error differs from awk (count mean bounded inside): $(cat "$d/err.awk.$k") vs $(cat "$d/err.json.$k")"
done
[ "$(cut -d' ' -f1 "$d/err.awk.switch")" -gt 900 ] || fail "error: only $(cut -d' ' -f1 "$d/err.awk.switch") samples to compare"
jq -e --argjson n "$nf" '.rates[0] | .error.available and .error.no_venue_frame == 0 and .error.no_truth_frame == 0
	and .error.ambiguous == 0 and .switch_latency.truth.frames == $n' "$E/report/report.json" > /dev/null ||
	fail "error: not every sample paired: $(jq -c '.rates[0].error | [.samples, .no_venue_frame, .no_truth_frame, .ambiguous]' "$E/report/report.json")"
cov=$(awk '{ printf "%.1f", 100 * $4 / $3 }' "$d/err.awk.switch")
grep -q "rate   1000/s: measured - truth p50 [-+][0-9]* ns after calibration (p1 [-+][0-9]* ns, p99 [-+][0-9]* ns); bound [0-9.]* [nu]s holds $cov % of switch samples" "$d/err.out" &&
	grep -q "switch: swemu, modelled on arista-7124sx (576.9 ns); achieved residence p50 5[6-9][0-9] ns, p99 59[05] ns" "$d/err.out" ||
	fail "error: headline: $(cat "$d/err.out")"
grep -q "^Inside bound, switch  *$cov %" "$E/report/tables.txt" || fail "error: table 3: $(grep Inside "$E/report/tables.txt")"
# The bound term by term: each term's mean over the bounded switch
# samples, as awk has it from the samples' last four fields; every sample
# had a stamp term (30 + 50 ns: the venue's TX, the algo's RX spread), so
# the four add up to the bound's mean.
awk '!/^#/ && $1 == "main" && $2 == "switch" && $3 == "venue" && $4 == "algo" && ($7 == "in" || $7 == "holdover") && $8 >= 0 {
	n++; b += $8; for (i = 11; i <= 14; i++) t[i] += $i }
	END { printf "%d %.4f %.4f %.4f %.4f %.4f\n", n, b / n, t[11] / n, t[12] / n, t[13] / n, t[14] / n }' \
	"$E/rate-1000/samples.txt" > "$d/terms.awk"
jq -r '.rates[0].error.switch | .bound_terms_mean_ns as $t |
	"\($t.samples) \(.bound_ns.mean) \($t.clock) \($t.holdover) \($t.stamp) \($t.resolution)"' \
	"$E/report/report.json" > "$d/terms.json"
awk 'NR == FNR { for (i = 1; i <= NF; i++) a[i] = $i; next }
	{ for (i = 1; i <= NF; i++) { x = a[i] - $i; if (x < 0) x = -x
		if (x > 0.01) { print "field " i ": awk " a[i] ", report " $i; bad = 1 } } }
	END { exit bad }' "$d/terms.awk" "$d/terms.json" ||
	fail "error: terms differ from awk (count bound clock holdover stamp resolution): $(cat "$d/terms.awk") vs $(cat "$d/terms.json")"
jq -e '.rates[0].error.switch | .bound_terms_mean_ns as $t | $t.stamp == 80 and $t.without_stamp_term == 0 and
	(($t.clock + $t.holdover + $t.stamp + $t.resolution) - .bound_ns.mean | fabs) < 0.01 and
	(.bound_dominant_term | IN("clock", "holdover", "stamp", "resolution")) and
	(.bound_terms_mean_ns | keys == ["clock", "holdover", "resolution", "samples", "stamp", "without_stamp_term"])' \
	"$E/report/report.json" > /dev/null ||
	fail "error: the terms do not add up to the bound: $(jq -c '.rates[0].error.switch | [.bound_ns.mean, .bound_terms_mean_ns, .bound_dominant_term]' "$E/report/report.json")"
jq -e '.rates[0].error.hop.bound_terms_mean_ns.stamp == 80' "$E/report/report.json" > /dev/null ||
	fail "error: hop terms: $(jq -c '.rates[0].error.hop.bound_terms_mean_ns' "$E/report/report.json")"
dom=$(jq -r '.rates[0].error.switch.bound_dominant_term' "$E/report/report.json")
p50=$(jq -r '.rates[0].error.switch.error_quantiles_ns.p50' "$E/report/report.json")
grep -q "^Stamp term (mean)  *80\$" "$E/report/tables.txt" && grep -q "^Dominant term  *$dom\$" "$E/report/tables.txt" &&
	grep -q "^Bias (error p50)  *$(printf '%+d' "$p50")\$" "$E/report/tables.txt" &&
	grep -q "^Stamps calibrated  *yes\$" "$E/report/tables.txt" && grep -q "^Inside bound, switch  *$cov %\$" "$E/report/tables.txt" ||
	fail "error: table 5: $(sed -n '/^Table 5/,$p' "$E/report/tables.txt")"
grep -q "after calibration" "$E/report/index.md" || fail "error: index.md headline does not say after calibration"
[ "$(head -c 8 "$E/report/plots/measurement-error.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "error: plots/measurement-error.png is not a PNG"
grep -q "rate,buy_p1\|^rate buy_p1 buy_p25 buy_p50" "$E/report/data/rates.dat" || fail "error: rates.dat has no column names"
# A sample whose stamp is no frame's: counted, left out. A residence over
# 1 s cannot be; the venue's capture gone: no error, and why.
awk '!/^#/ && !done && $1 == "main" && $2 == "switch" && $3 == "venue" && $7 != "out" {
	t = $5; $5 = substr(t, 1, length(t) - 1) ((substr(t, length(t)) + 1) % 10); done = 1 } { print }' \
	"$R/rate-1000/samples.txt" > "$E/rate-1000/samples.txt"
# And without the calibrations, capped (the venue published half of what
# was offered): said in the headline and in table 5.
rm "$E/rate-1000/venue.cal" "$E/rate-1000/algo.cal"
printf 'switch_md_offered 2000\nswitch_md_published 1000\nswitch_md_rate 500\n' > "$E/rate-1000/run.conf"
$T report --no-plots "$E" > "$d/err1.out" 2>&1 || fail "error, one sample moved: exit $?"
grep -q "rate   1000/s: measured - truth p50 [-+][0-9]* ns (p1 [-+][0-9]* ns, p99 [-+][0-9]* ns; stamps not calibrated); bound" "$d/err1.out" ||
	fail "error: uncalibrated headline: $(cat "$d/err1.out")"
jq -e '.rates[0] | .calibration == null and .workload.capped and .error.switch.bound_terms_mean_ns.stamp == 80' "$E/report/report.json" > /dev/null ||
	fail "error: uncalibrated: $(jq -c '.rates[0] | [.calibration, .workload.capped]' "$E/report/report.json")"
grep -q "^ *1000 (capped)\$" "$E/report/tables.txt" && grep -q "^Workload  *capped\$" "$E/report/tables.txt" &&
	grep -q "^Stamps calibrated  *no\$" "$E/report/tables.txt" ||
	fail "error: table 5 does not name the capped rate: $(sed -n '/^Table 5/,$p' "$E/report/tables.txt")"
jq -e --argjson n "$(cut -d' ' -f1 "$d/err.awk.switch")" '.rates[0].error | .no_venue_frame == 1 and .switch.paired == $n - 1' \
	"$E/report/report.json" > /dev/null || fail "error: a sample with no frame: $(jq -c '.rates[0].error | [.no_venue_frame, .switch.paired]' "$E/report/report.json")"
rm -r "$E/rate-1000/switch/venue"
$T report --no-plots "$E" > "$d/err2.out" 2>&1 || fail "error, no venue capture: exit $?"
jq -e '.rates[0].error | .available == false and (.why_not | test("venue.s capture"))' "$E/report/report.json" > /dev/null ||
	fail "error: no venue capture: $(jq -c '.rates[0].error | [.available, .why_not]' "$E/report/report.json")"

[ $fails -eq 0 ] && echo "report: ok" || echo "report: $fails failed"
[ $fails -eq 0 ]
