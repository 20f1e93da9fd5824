#!/bin/sh
# tapless sim's optical tap, the reference a host's capture is validated
# against: tap-HOST.pcapng read by tshark (not our reader) holds the host's
# frames, in stamp order, on the tap's 7.5 ns grid, on two interfaces by
# direction; the truth's host - tap error agrees with the clock model and
# with the two files' own stamps; a host on UTC and a late capture; the
# hosts' files unchanged by the tap.
set -u
d=$(mktemp -d /tmp/tapless-simtap.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}
START=1763900000

# sim NAME ARGS...: generate into $d/NAME
sim() {
	n=$1; shift
	$T sim --output "$d/$n" --start $START "$@" > "$d/$n.sim.log" 2>&1 ||
		{ fail "$n: sim exit $?: $(cat "$d/$n.sim.log")"; return 1; }
}

# stamps FILE: "REL_NS IFACE DIR SRC" per frame, REL_NS the stamp in ns
# after the start (from tshark's decimal seconds, so awk's doubles stay
# exact), less SHIFT seconds (37 for a host on TAI).
stamps() {
	tshark -r "$1" -T fields -E separator=' ' -e frame.time_epoch \
		-e frame.interface_name -e frame.packet_flags_direction -e ip.src \
		2>/dev/null | awk -v start=$START -v shift="${2:-0}" '{
		split($1, t, ".");
		printf "%.0f %s %s %s\n", (t[1] - start - shift) * 1e9 + t[2], $2, $3, $4 }'
}

# 1. The algo on TAI, 250 ns ahead and gaining 300 ppb, tapped.
sim a --tap algo --clock algo:offset=250,rate=300,noise=20,wander=0 --duration 2 || exit 1
[ -f "$d/a/tap-algo.pcapng" ] || fail "a: no tap-algo.pcapng"
[ -e "$d/a/tap-algo.pcapng.part" ] && fail "a: tap-algo.pcapng.part left behind"
stamps "$d/a/tap-algo.pcapng" > "$d/a.tap"
stamps "$d/a/algo.pcapng" 37 > "$d/a.host"
ntap=$(wc -l < "$d/a.tap")
nhost=$(wc -l < "$d/a.host")
[ "$ntap" -gt 1000 ] || fail "a: tshark read $ntap frames from the tap"
[ "$ntap" -eq "$nhost" ] || fail "a: tap has $ntap frames, the algo's capture $nhost"
[ "$(jq .reference.algo.frames "$d/a/truth.json")" = "$ntap" ] ||
	fail "a: truth's reference.algo.frames is not $ntap"
[ "$(jq .reference.algo.all.count "$d/a/truth.json")" = "$ntap" ] ||
	fail "a: truth's reference.algo.all.count is not $ntap"
# Stamp order, and the grid: a stamp is floor(k * 7.5) ns after the start,
# so it is 0 or 7 modulo 15.
awk 'NR > 1 && $1 < last { print "frame " NR " at " $1 " before " last; exit 1 }
	{ last = $1 }' "$d/a.tap" > "$d/a.order" || fail "a: tap not in stamp order: $(cat "$d/a.order")"
awk '{ m = $1 % 15 } m != 0 && m != 7 { print "frame " NR " at " $1 " ns"; exit 1 }' \
	"$d/a.tap" > "$d/a.grid" || fail "a: tap stamp off the 7.5 ns grid: $(cat "$d/a.grid")"
# One interface per fibre, directions relative to the host.
awk '!(($2 == "tap-algo-tx" && $3 == "0x00000002" && $4 == "198.18.0.1") ||
       ($2 == "tap-algo-rx" && $3 == "0x00000001" && $4 == "198.18.0.2")) {
	print "frame " NR ": " $0; exit 1 }' "$d/a.tap" > "$d/a.dir" ||
	fail "a: tap interface or direction wrong: $(cat "$d/a.dir")"
ntx=$(awk '$2 == "tap-algo-tx"' "$d/a.tap" | wc -l)
[ "$(jq .reference.algo.tx.count "$d/a/truth.json")" = "$ntx" ] ||
	fail "a: truth's tx count is not the $ntx frames of tap-algo-tx"
desc=$(tshark -r "$d/a/tap-algo.pcapng" -T fields -e frame.interface_description -c 1 2>/dev/null)
case $desc in
"sim tap, 7.5 ns clock") ;;
*) fail "a: interface description '$desc'" ;;
esac
# Same frames in both files, so the mean of host - tap over frames is the
# difference of the two files' mean stamps: the truth must agree with
# the files.
mh=$(awk '{ s += $1 } END { printf "%.6f", s / NR }' "$d/a.host")
mt=$(awk '{ s += $1 } END { printf "%.6f", s / NR }' "$d/a.tap")
mean=$(jq .reference.algo.all.mean "$d/a/truth.json")
awk -v mh="$mh" -v mt="$mt" -v m="$mean" 'BEGIN { d = mh - mt - m; exit !(d < 0.001 && d > -0.001) }' ||
	fail "a: truth's mean error $mean is not the files' $mh - $mt"
# And the model: error = offset + rate * elapsed + noise, stamped. The
# host's 8 ns quantum takes 0 to 8 ns off its stamp, the tap's 7.5 ns 0
# to 7.5 off the tap's, and each floor to whole ns up to 1 more: the mean
# is within [-9, +8.5] ns of offset + rate * mean elapsed; the noise
# (SD 20 ns, clamped at 4 SD, mean 0) moves the mean by 4 * 20 / sqrt(n)
# at most in practice (< 2 ns here). Tolerance: 8 + 1 + 2, each side.
awk -v m="$mean" -v mt="$mt" 'BEGIN { want = 250 + 300 * mt / 1e9; d = m - want;
	if (d < -11 || d > 11) { printf "mean %s, model %.3f\n", m, want; exit 1 } }' > "$d/a.model" ||
	fail "a: mean error against the model: $(cat "$d/a.model")"
jq -e '.reference.algo | .model.rate_ppb == 300 and .model.offset_ns == 250 and
	.model.tap_quantum_ns == 7.5 and .model.host_timescale == "tai" and .fit.rate_ppb == 300 and
	(.fit.offset_ns - 250 | fabs) < 1 and .tx.count + .rx.count == .all.count' \
	"$d/a/truth.json" > /dev/null || fail "a: truth's reference.algo model or fit"

# 2. The same run without a tap: the hosts' files are the same bytes.
sim b --clock algo:offset=250,rate=300,noise=20,wander=0 --duration 2 || exit 1
for f in algo.pcapng venue.pcapng algo.journal venue.journal; do
	cmp -s "$d/a/$f" "$d/b/$f" || fail "$f differs with --tap"
done
[ -e "$d/b/tap-algo.pcapng" ] && fail "b: a tap file without --tap"
jq -e 'has("reference") | not' "$d/b/truth.json" > /dev/null || fail "b: reference without --tap"

# 3. The venue on UTC, losing 5000 ppb, its capture 0.5 s late: the tap
# has every frame, the truth counts those in both, with no 37 s.
sim c --tap venue --timescale venue=utc --start-late venue=0.5 --duration 2 \
	--clock venue:offset=-400,rate=-5000,quantum=1,noise=0,wander=0 || exit 1
stamps "$d/c/tap-venue.pcapng" > "$d/c.tap"
stamps "$d/c/venue.pcapng" > "$d/c.host"
ntap=$(wc -l < "$d/c.tap")
nhost=$(wc -l < "$d/c.host")
[ "$ntap" -gt "$nhost" ] || fail "c: the tap ($ntap) has no more frames than the late capture ($nhost)"
[ "$(jq .reference.venue.all.count "$d/c/truth.json")" = "$nhost" ] ||
	fail "c: truth's count is not the venue capture's $nhost frames"
awk 'NR > 1 && $1 < last { exit 1 } { last = $1 }' "$d/c.tap" || fail "c: tap not in stamp order"
awk 'NR > 1 && $1 < last { exit 1 } { last = $1 }' "$d/c.host" || fail "c: venue capture not in stamp order"
# The frames after 0.5 s in the tap are those of the capture: mean over
# them, as in 1. The tap stamps with the start-late frames dropped: those
# the venue captured are the last nhost in true order; with RX at the wire
# and no stack delay the tap's order is the true order.
mh=$(awk '{ s += $1 } END { printf "%.6f", s / NR }' "$d/c.host")
mt=$(tail -n "$nhost" "$d/c.tap" | awk '{ s += $1 } END { printf "%.6f", s / NR }')
mean=$(jq .reference.venue.all.mean "$d/c/truth.json")
awk -v mh="$mh" -v mt="$mt" -v m="$mean" 'BEGIN { d = mh - mt - m; exit !(d < 0.001 && d > -0.001) }' ||
	fail "c: truth's mean error $mean is not the files' $mh - $mt"
# Quantum 1 ns and no noise: within [-1, +8.5] of the model.
awk -v m="$mean" -v mt="$mt" 'BEGIN { want = -400 - 5000 * mt / 1e9; d = m - want;
	if (d < -2 || d > 9) { printf "mean %s, model %.3f\n", m, want; exit 1 } }' > "$d/c.model" ||
	fail "c: mean error against the model: $(cat "$d/c.model")"
jq -e '.reference.venue.model.host_timescale == "utc" and .reference.venue.fit.rate_ppb == -5000' \
	"$d/c/truth.json" > /dev/null || fail "c: truth's reference.venue model"

# 4. Bad tap and clock options name what is wrong.
$T sim --output "$d/x" --tap broker > "$d/x.log" 2>&1 && fail "x: --tap broker accepted"
grep -q -- "--tap" "$d/x.log" || fail "x: message does not name --tap: $(cat "$d/x.log")"
$T sim --output "$d/x" --clock tap:quantum=7.5001 > "$d/x.log" 2>&1 && fail "x: quantum=7.5001 accepted"
grep -q "quantum" "$d/x.log" || fail "x: message does not name quantum: $(cat "$d/x.log")"
$T sim --output "$d/x" --clock algo:rate=2e6 > "$d/x.log" 2>&1 && fail "x: rate=2e6 accepted"
grep -q "rate" "$d/x.log" || fail "x: message does not name rate: $(cat "$d/x.log")"

[ "$fails" -eq 0 ] && echo "ok: sim tap ($ntap frames; tshark, jq, awk)"
[ "$fails" -eq 0 ]
