#!/bin/sh
# A tap's capture as an input of tapless correlate (issue 35): an
# observation point on a link of the topology (NAME@A-B=FILE), its hops
# beside the hosts', agreeing with tapless sim's truth of the tap against
# the host; the hosts' own figures unchanged by it; and bad placements
# refused with a clear message.
set -u
d=$(mktemp -d /tmp/tapless-tapin.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: tap_input: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}

# The algo's fibres tapped; the hosts on TAI, the tap on UTC.
$T sim --output "$d/s" --tap algo --duration 2 > "$d/sim.log" 2>&1 ||
	{ echo "FAIL: tap_input: sim: $(cat "$d/sim.log")"; exit 1; }
s=$d/s
hosts="venue=$s/venue.pcapng algo=$s/algo.pcapng"
# shellcheck disable=SC2086
$T correlate --json -t "$s/topology" --utc-offset 37 $hosts > "$d/hosts.json" 2> "$d/hosts.err" ||
	fail "hosts alone: exit $?: $(cat "$d/hosts.err")"
# shellcheck disable=SC2086
$T correlate --json -t "$s/topology" --utc-offset 37 --timescale tap=utc $hosts \
	"tap@algo-sw1=$s/tap-algo.pcapng" > "$d/tap.json" 2> "$d/tap.err" ||
	fail "with the tap: exit $?: $(cat "$d/tap.err")"

# The observation point, said.
jq -e '.inputs[] | select(.host == "tap" or .name == "tap") |
	.observes == {"a": "algo", "b": "sw1"} and .tap_format == "none"' \
	"$d/tap.json" > /dev/null || fail "inputs: tap not shown observing algo - sw1: $(jq -c '.inputs[2]' "$d/tap.json")"

# hop FILE FROM TO: "N MEAN" of the hop's all-flows figures.
hop() {
	jq -r --arg f "$2" --arg t "$3" '.hops[] | select(.from == $f and .to == $t and .flow == "all") |
		"\(.messages) \(.latency_ns.mean)"' "$1"
}
[ "$(hop "$d/hosts.json" venue algo)" = "$(hop "$d/tap.json" venue algo)" ] ||
	fail "venue -> algo changed by the tap: $(hop "$d/hosts.json" venue algo) / $(hop "$d/tap.json" venue algo)"
set -- $(hop "$d/tap.json" venue algo) $(hop "$d/tap.json" venue tap)
[ $# -eq 4 ] || fail "no venue -> tap hop beside venue -> algo: $*"
if [ $# -eq 4 ]; then
	[ "$1" = "$3" ] || fail "venue -> tap has $3 messages, venue -> algo $1"
	# venue -> algo less venue -> tap is the algo's RX stamp less the
	# tap's, message by message: what the truth says of the algo's
	# received frames against the tap (its mean over every frame).
	want=$(jq .reference.algo.rx.mean "$s/truth.json")
	awk -v a="$2" -v t="$4" -v w="$want" 'BEGIN {
		got = a - t; printf "tap_input: venue->algo - venue->tap %.3f ns, truth algo rx - tap %.3f ns\n", got, w
		exit (got - w > 1 || w - got > 1) }' || fail "the tap's hop disagrees with the truth"
fi
# The switch figures come from the hosts, not the tap.
[ "$(jq -c '.switches' "$d/hosts.json")" = "$(jq -c '.switches' "$d/tap.json")" ] ||
	fail "switch figures changed by the tap"

# The same tap as a MetaWatch hands it over: a classic pcap (no
# directions: the algo's addresses give them), the stamps in trailers,
# the records 7 ms late. The tap's hops as with the pcapng, to 1 ns.
build/tools/tapwrite --format metawatch --record-offset-ms 7 --degraded-every 5 "$s/tap-algo.pcapng" \
	"$d/mw.pcap" 2> "$d/tapwrite.err" || fail "tapwrite: $(cat "$d/tapwrite.err")"
# shellcheck disable=SC2086
$T correlate --json -t "$s/topology" --utc-offset 37 --timescale mw=utc $hosts \
	"mw@algo-sw1=$d/mw.pcap" > "$d/mw.json" 2> "$d/mw.err" ||
	fail "with the MetaWatch tap: exit $?: $(cat "$d/mw.err")"
# Every 5th stamp flagged degraded: counted, and the messages whose first
# frame it stamped claim no bound.
jq -e '.inputs[2] | .tap_format == "metawatch" and .tap.stamped > 2000 and
	.tap.missing == 0 and .direction == "addresses" and
	.tap.degraded == (.tap.stamped / 5 | floor) and
	.tap.degraded_messages > 0 and .tap.degraded_messages <= .tap.degraded' "$d/mw.json" > /dev/null ||
	fail "the MetaWatch input: $(jq -c '.inputs[2] | {tap_format, tap, direction}' "$d/mw.json")"
for pair in "venue tap mw" "tap venue mw"; do
	set -- $pair
	a=$(hop "$d/tap.json" "$1" "$2")
	if [ "$1" = tap ]; then b=$(hop "$d/mw.json" mw "$2"); else b=$(hop "$d/mw.json" "$1" mw); fi
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		exit !(x[1] == y[1] && x[1] > 0 && x[2] - y[2] < 1 && y[2] - x[2] < 1) }' ||
		fail "$1 -> $2: pcapng tap $a, MetaWatch tap $b"
done
echo "tap_input: the MetaWatch tap's hops as the pcapng tap's: $(hop "$d/mw.json" venue mw) / $(hop "$d/tap.json" venue tap)"
# Two observation points make no hop between them: each marks a frame as
# its own link sees it, which need not be the frame's way (a switch's two
# port captures mark it in at one and out at the other; such a pair gave
# a "hop" of minus the residence). Here the pcapng tap (its frames marked
# as the algo sees them) beside the MetaWatch capture placed on the
# venue's link (its frames' way from the venue's addresses): opposite
# roles for every frame, and still no hop between the two; each keeps its
# hops with the hosts.
# shellcheck disable=SC2086
$T correlate --json -t "$s/topology" --utc-offset 37 --timescale tap=utc --timescale mwv=utc $hosts \
	"tap@algo-sw1=$s/tap-algo.pcapng" "mwv@venue-sw1=$d/mw.pcap" > "$d/two.json" 2> "$d/two.err" ||
	fail "with two taps: exit $?: $(cat "$d/two.err")"
jq -e '[.hops[] | select((.from == "tap" or .from == "mwv") and (.to == "tap" or .to == "mwv"))] | length == 0' \
	"$d/two.json" > /dev/null || fail "a hop between two taps: $(jq -c '[.hops[] | select(.flow == "all") | {from, to, messages}]' "$d/two.json")"
[ "$(hop "$d/two.json" venue tap)" = "$(hop "$d/tap.json" venue tap)" ] && [ -n "$(hop "$d/two.json" mwv algo)" ] ||
	fail "two taps: their hops with the hosts: $(jq -c '[.hops[] | select(.flow == "all") | {from, to, messages}]' "$d/two.json")"
# An Arista 7280's headers say TAI: believed without --timescale.
build/tools/tapwrite --format arista --record-offset-ms 7 "$s/tap-algo.pcapng" \
	"$d/ar.pcap" 2> "$d/tapwrite.err" || fail "tapwrite: $(cat "$d/tapwrite.err")"
# shellcheck disable=SC2086
$T correlate --json -t "$s/topology" --utc-offset 37 $hosts "ar@algo-sw1=$d/ar.pcap" \
	> "$d/ar.json" 2> "$d/ar.err" || fail "with the Arista tap: exit $?: $(cat "$d/ar.err")"
grep -q "does not say which timescale" "$d/ar.err" &&
	fail "the Arista tap's timescale was assumed: $(cat "$d/ar.err")"
jq -e '.inputs[2].timescale == "tai"' "$d/ar.json" > /dev/null ||
	fail "the Arista tap's timescale: $(jq -c '.inputs[2].timescale' "$d/ar.json")"
[ "$(hop "$d/ar.json" venue ar)" = "$(hop "$d/tap.json" venue tap)" ] ||
	fail "venue -> the Arista tap $(hop "$d/ar.json" venue ar), the pcapng tap $(hop "$d/tap.json" venue tap)"

# With a journal for the tap (the algo's: its clock is the one the sim
# kept on PTP time beside it), its hops have a bound, unless stamps of
# theirs were flagged degraded: those samples claim none, so neither
# does the hop.
build/tools/tapwrite --format metawatch --record-offset-ms 7 "$s/tap-algo.pcapng" \
	"$d/mw0.pcap" 2> "$d/tapwrite.err" || fail "tapwrite: $(cat "$d/tapwrite.err")"
for f in mw0 mw; do
	# shellcheck disable=SC2086
	$T correlate --json -t "$s/topology" --utc-offset 37 --timescale mw=utc \
		-s venue="$s/venue.journal" -s algo="$s/algo.journal" -s mw="$s/algo.journal" \
		$hosts "mw@algo-sw1=$d/$f.pcap" > "$d/$f-j.json" 2> "$d/$f-j.err" ||
		fail "$f with journals: exit $?: $(cat "$d/$f-j.err")"
done
bound() {
	jq -r --arg f "$2" --arg t "$3" '.hops[] | select(.from == $f and .to == $t and .flow == "all") |
		.sync_error_bound_ns' "$1"
}
b=$(bound "$d/mw0-j.json" venue algo)
[ "$b" != null ] && [ "$(bound "$d/mw0-j.json" venue mw)" = "$b" ] ||
	fail "venue -> mw bound $(bound "$d/mw0-j.json" venue mw), venue -> algo $b"
[ "$(bound "$d/mw-j.json" venue mw)" = null ] && [ "$(bound "$d/mw-j.json" venue algo)" = "$b" ] ||
	fail "with degraded stamps: venue -> mw bound $(bound "$d/mw-j.json" venue mw), want none"

# Bad placements and formats: a clear message, exit 1.
bad() {
	want=$1; shift
	# shellcheck disable=SC2086
	$T correlate -t "$s/topology" --utc-offset 37 $hosts "$@" > /dev/null 2> "$d/bad.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "$want" "$d/bad.err" ||
		fail "$*: exit $rc, want 1 and '$want': $(cat "$d/bad.err")"
}
bad "no link between algo and venue" "tap@algo-venue=$s/tap-algo.pcapng"
bad "not A-B" "tap@algo=$s/tap-algo.pcapng"
bad "unknown tap stamp format 'dag'" --tap-format tap=dag "tap=$s/tap-algo.pcapng"
bad "not an input host" --tap-format mw=metawatch "tap=$s/tap-algo.pcapng"

[ $fails -eq 0 ] && echo "ok: tap input ($(jq '.inputs[2].packets' "$d/tap.json") tap frames)"
[ $fails -eq 0 ]
