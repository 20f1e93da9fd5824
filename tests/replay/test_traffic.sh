#!/bin/sh
# The traffic as a second opinion on the clocks (tapless-correlate(8)),
# on tapless sim's captures with known truth: a clean run flags nothing
# and its interval holds the true offset; a venue 20 us off while its
# journal claims 40 ns (sim --clock-error) gets its pair flagged in every
# window, by about 19.3 us, both when every window has both directions
# and when short windows have one only (half-open, null side); with a
# third clock (the algo's optical tap, read as classic pcap so that it
# has no directions of its own, with a journal of its own) the loops of
# three close when clean and name the host whose clock is off, the venue
# or the algo.
set -u
. tests/replay/lib.sh
replay_setup traffic

# sim NAME ARGS...: generate into $d/NAME
sim() {
	n=$1; shift
	$T sim --output "$d/$n" --duration 3 "$@" > "$d/$n.sim.log" 2>&1 ||
		{ fail "$n: sim exit $?: $(cat "$d/$n.sim.log")"; return 1; }
}

# corr NAME [OPTIONS] [HOST=FILE]: correlate algo and venue of $d/NAME,
# with their journals and topology, into $d/NAME.json.
corr() {
	n=$1; shift
	$T correlate --json --sync algo="$d/$n/algo.journal" \
		--sync venue="$d/$n/venue.journal" --topology "$d/$n/topology" \
		"$@" algo="$d/$n/algo.pcapng" venue="$d/$n/venue.pcapng" \
		> "$d/$n.json" 2> "$d/$n.err" ||
		fail "$n: correlate exit $?: $(cat "$d/$n.err")"
}

# check NAME JQ WHAT: JQ on $d/NAME.json must be true
check() {
	[ "$(jq -r "$2" "$d/$1.json" 2>&1)" = true ] ||
		fail "$1: $3 ($(jq -c '.traffic' "$d/$1.json" 2>&1 | cut -c1-600))"
}

# show NAME: the figures, for the log
show() {
	jq -r '(.traffic.pairs[] | "  \(.a)-\(.b): \(.windows) windows, \(.with_both_directions) both ways, tightest [\(.interval_ns.lo // "-"), \(.interval_ns.hi // "-")] ns, median width \(.median_width_ns // "-"), flagged \(.flagged), inconsistent \(.inconsistent)\(if .flagged_windows[0] then ", first: [\(.flagged_windows[0].lo_ns // "-"), \(.flagged_windows[0].hi_ns // "-")] against +-\(.flagged_windows[0].claim_ns) missed by \(.flagged_windows[0].miss_ns)" else "" end)"),
		(.traffic.loops | "  loops: \(.checked) checked, \(.failed) failed, suspect \(.suspect // "-")")' \
		"$d/$1.json" | sed "s/^/$1:/"
}

# 1. Clean: nothing flagged, the true offset (a few tens of ns) inside.
sim clean || exit 1
corr clean
show clean
check clean '.traffic.window_ns == 1000000000' "window not 1 s"
check clean '.traffic.pairs | length == 1 and .[0].a == "algo" and .[0].b == "venue"' \
	"not one pair algo-venue"
check clean '.traffic.pairs[0] | .windows >= 3 and .with_both_directions >= 3' \
	"fewer than 3 windows both ways"
check clean '.traffic.pairs[0] | .flagged == 0 and .inconsistent == 0 and (.flagged_windows | length) == 0' \
	"a clean run flagged"
check clean '.traffic.pairs[0].interval_ns | .lo < 0 and .hi > 0 and .lo > -2000 and .hi < 2000' \
	"the interval does not hold 0 within 2 us"
check clean '.traffic.loops | .checked == 0 and .suspect == null' "loops with two hosts"

# 2. The venue 20 us ahead, its journal still claiming 40 ns: flagged in
# every window, the interval around +20 us, missed by about 19.3 us.
sim venue20 --clock-error venue=20us || exit 1
[ "$(jq '.hosts[] | select(.name == "venue") | .clock.clock_error_ns' "$d/venue20/truth.json" 2>/dev/null)" = 20000 ] ||
	fail "venue20: truth has no clock_error_ns of 20000"
corr venue20
show venue20
check venue20 '.traffic.pairs[0] | .flagged == .windows and .windows >= 3' \
	"not every window flagged"
check venue20 '.traffic.pairs[0].interval_ns | .lo > 18000 and .hi < 22000 and .lo < 20000 and .hi > 20000' \
	"the interval does not hold +20 us"
check venue20 '.traffic.pairs[0].flagged_windows | all(.reason == "journals" and .claim_ns < 200 and .miss_ns > 18000 and .miss_ns < 20000 and .end_ns - .start_ns == 1000000000)' \
	"flagged windows not as expected"
# Text says so too.
$T correlate --sync algo="$d/venue20/algo.journal" --sync venue="$d/venue20/venue.journal" \
	--topology "$d/venue20/topology" algo="$d/venue20/algo.pcapng" \
	venue="$d/venue20/venue.pcapng" > "$d/venue20.txt" 2>&1
grep -q "journals claim +-[0-9]* ns, missed by 19[0-9][0-9][0-9] ns" "$d/venue20.txt" ||
	fail "venue20: text has no flagged window: $(grep -A3 '^traffic' "$d/venue20.txt")"

# 3. Short windows: the orders (algo -> venue) are rare, most windows have
# the market data only, one way: half-open, hi null, still flagged (the
# venue's market data arrive 19 us before they left).
corr venue20 --traffic-window 10ms
show venue20
check venue20 '.traffic.window_ns == 10000000' "window not 10 ms"
check venue20 '.traffic.pairs[0] | .windows > .with_both_directions and .flagged == .windows' \
	"short windows: not all flagged, or none one way"
check venue20 '[.traffic.pairs[0].flagged_windows[] | select(.hi_ns == null)] | length > 0 and all(.lo_ns > 18000)' \
	"short windows: no half-open window flagged"
check venue20 '.traffic.pairs[0] | .flagged - (.flagged_windows | length) == .flagged_windows_not_kept and (.flagged_windows | length) <= 100' \
	"flagged windows kept beyond 100, or not counted"
$T correlate --traffic-window 10us algo="$d/venue20/algo.pcapng" > /dev/null 2> "$d/tw.err"
[ $? -eq 1 ] && grep -q "traffic-window" "$d/tw.err" || fail "--traffic-window 10us taken: $(cat "$d/tw.err")"

# 4. Three clocks: the algo's tap as a third host. Classic pcap has no
# directions, so the tap takes each message's other role from its peers:
# algo -> tap and tap -> venue, venue -> tap and tap -> algo. Its clock is
# perfect, on UTC; its journal is the algo's (40 ns). Receive stamps 1 us
# after arrival, so that the algo-tap pair has room both ways.
if ! command -v editcap > /dev/null 2>&1; then
	echo "SKIP: three hosts: no editcap (wireshark-common) to write classic pcap"
else
	# three NAME SIM-ARGS...: sim, tap as pcap, correlate the three
	three() {
		n=$1; shift
		sim "$n" --tap algo --stack-delay 1us "$@" || return 1
		editcap -F nsecpcap "$d/$n/tap-algo.pcapng" "$d/$n/tap.pcap" ||
			{ fail "$n: editcap"; return 1; }
		sed 's/host algo$/host tap/' "$d/$n/algo.journal" > "$d/$n/tap.journal"
		corr "$n" --sync tap="$d/$n/tap.journal" --timescale tap=utc \
			tap="$d/$n/tap.pcap"
		show "$n"
	}
	three clean3
	check clean3 '.traffic.pairs | length == 3' "not three pairs"
	check clean3 '.traffic.pairs | all(.flagged == 0)' "a clean run flagged"
	check clean3 '.traffic.loops | .checked >= 3 and .failed == 0 and .suspect == null' \
		"clean loops failed or named someone"
	three venue3 --clock-error venue=20us
	check venue3 '[.traffic.pairs[] | select(.a == "venue" or .b == "venue") | .flagged == .windows] | all and length == 2' \
		"the venue's pairs not all flagged"
	check venue3 '[.traffic.pairs[] | select([.a, .b] | sort == ["algo", "tap"]) | .flagged == 0] == [true]' \
		"the algo-tap pair flagged"
	check venue3 '.traffic.loops | .checked >= 3 and .failed == .checked and .open == 0 and .suspect == "venue"' \
		"the loops do not name the venue"
	three algo3 --clock-error algo=-20us
	check algo3 '.traffic.loops | .failed == .checked and .suspect == "algo"' \
		"the loops do not name the algo"
fi

[ "$fails" -eq 0 ] && echo "traffic: all checks passed"
[ "$fails" -eq 0 ]
