#!/bin/bash
# Issue 17 item 12: a user's own tcpdump captures gave nothing, with no
# hint why. The FTTC workload (tapless-venue in namespace b, tapless-algo
# in a) runs over a veth pair while tcpdump captures each end as a user
# would (tcpdump -j host --time-stamp-precision nano -w: classic pcap, no
# direction, no addresses). tapless correlate on the two files:
#  - with plain NAME=FILE, exit 1 and a message that says the direction is
#    unknown, with the count (the JSON's unmatched.direction_unknown_pairs)
#    and the fix (NAME@ADDR[,ADDR]=FILE or --topology FILE);
#  - with NAME@ADDR=FILE, messages matched in both directions, as many as
#    a topology file naming the same addresses gives.
set -u
. scripts/netns.sh
command -v tcpdump > /dev/null || { echo "skipped: tcpdump is not installed (scripts/install-deps)"; exit 77; }
[ -x bin/tapless ] && [ -x bin/tapless-venue ] && [ -x bin/tapless-algo ] ||
	{ echo "skipped: bin/ not built (make)"; exit 77; }
tl_setup correlate-tcpdump 198.18.17
out=$TL_OUT
T=${TAPLESS:-bin/tapless}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# On veth the only stamp type is the host's; say so if that ever changes.
tl_exec a tcpdump -J -i "$TL_IF_A" 2>&1 | grep -q '^ *host' ||
	{ echo "skipped: tcpdump -J offers no host stamps on veth"; exit 77; }

# cap NS IF FILE: tcpdump in namespace NS on IF into FILE, until killed;
# returns once it is listening.
cap() {
	tl_bg "$1" tcpdump -i "$2" -j host --time-stamp-precision nano -U -n --immediate-mode \
		-w "$3" tcp > "$3.log" 2>&1
	for _ in $(seq 100); do
		grep -q "listening on" "$3.log" && return 0
		sleep 0.05
	done
	fail "tcpdump on $2 did not start: $(cat "$3.log")"
}
cap a "$TL_IF_A" "$out/algo.pcap"; tpa=$TL_LAST_PID
cap b "$TL_IF_B" "$out/venue.pcap"; tpb=$TL_LAST_PID

tl_bg b bin/tapless-venue --md 198.18.17.2:9001 --ord 198.18.17.2:9002 \
	--rate 500 --duration 2 > "$out/venue.log" 2>&1
vp=$TL_LAST_PID
tl_exec a bin/tapless-algo --md 198.18.17.2:9001 --ord 198.18.17.2:9002 \
	> "$out/algo.log" 2>&1 || fail "algo exit $?: $(tail -3 "$out/algo.log")"
wait "$vp" || fail "venue exit $?: $(tail -3 "$out/venue.log")"
sleep 0.5	# the last segments and ACKs into the files
kill -INT "$tpa" "$tpb" 2>/dev/null
wait "$tpa" "$tpb" 2>/dev/null
for h in algo venue; do
	[ "$(head -c 4 "$out/$h.pcap" | od -An -tx1 | tr -d ' \n')" = 4d3cb2a1 ] ||
		fail "$h.pcap is not nanosecond classic pcap: $(head -c 4 "$out/$h.pcap" | od -An -tx1)"
done

# 1. As the user ran it: nothing measured, and why.
$T correlate --json algo="$out/algo.pcap" venue="$out/venue.pcap" > "$out/plain.json" 2> "$out/plain.err"
rc=$?
n=$(jq '.unmatched.direction_unknown_pairs' "$out/plain.json" 2>/dev/null)
[ "$rc" -eq 1 ] || fail "plain NAME=FILE: exit $rc, want 1"
[ "${n:-0}" -gt 0 ] 2>/dev/null || fail "plain NAME=FILE: no pair of unknown direction counted ($n)"
grep -q "nothing could be measured: $n messages were seen at two hosts but the direction is unknown .*name each host's addresses with NAME@ADDR\[,ADDR...\]=FILE or --topology FILE" "$out/plain.err" ||
	fail "plain NAME=FILE: the message does not say why with the count $n: $(cat "$out/plain.err")"

# 2. The addresses on the command line; 3. the same in a topology file.
hops() { jq -c '[.hops[] | select(.flow == "all") | [.from, .to, .messages]]' "$1"; }
$T correlate --json algo@198.18.17.1="$out/algo.pcap" venue@198.18.17.2="$out/venue.pcap" \
	> "$out/addr.json" 2> "$out/addr.err" || fail "NAME@ADDR=FILE: exit $?: $(cat "$out/addr.err")"
printf 'host algo 198.18.17.1\nhost venue 198.18.17.2\n' > "$out/topology"
$T correlate --json --topology "$out/topology" algo="$out/algo.pcap" venue="$out/venue.pcap" \
	> "$out/topo.json" 2> "$out/topo.err" || fail "--topology: exit $?: $(cat "$out/topo.err")"
av=$(jq '.hops[] | select(.from == "algo" and .to == "venue" and .flow == "all") | .messages' "$out/addr.json")
va=$(jq '.hops[] | select(.from == "venue" and .to == "algo" and .flow == "all") | .messages' "$out/addr.json")
[ "${av:-0}" -gt 0 ] 2>/dev/null && [ "${va:-0}" -gt 0 ] 2>/dev/null ||
	fail "NAME@ADDR=FILE: not matched both ways: $(hops "$out/addr.json")"
[ "$(hops "$out/addr.json")" = "$(hops "$out/topo.json")" ] ||
	fail "NAME@ADDR=FILE gives $(hops "$out/addr.json"), the topology file $(hops "$out/topo.json")"
jq -e '.unmatched.direction_unknown_pairs == 0' "$out/addr.json" > /dev/null ||
	fail "NAME@ADDR=FILE: pairs of unknown direction left"
# Every pair that had no direction is measured now (tcpdump in immediate
# mode writes every frame before it stops).
[ "$((${av:-0} + ${va:-0}))" = "$n" ] ||
	fail "NAME@ADDR=FILE: $av + $va messages measured, $n seen at both hosts"

echo "tcpdump pcap: $n pairs without direction; with addresses algo>venue ${av:-?}, venue>algo ${va:-?} (= topology file)" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
