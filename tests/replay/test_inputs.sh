#!/bin/sh
# What correlate makes of its inputs before any figure: a host named by
# its files when the operand does not name it (two hosts' .../eth1), a
# real name collision told how to fix, a sync journal of another time
# than the capture warned about with both ranges, and output without
# journals or switches saying why once, not leaving blanks on every line;
# and times in text output (status, --follow) as dates, not epoch ns.
set -u
d=$(mktemp -d /tmp/tapless-inputs.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}

# --out: the old name of --output, still taken (deprecated); this line
# proves it, every other uses --output.
$T sim --out "$d/s" > "$d/sim.log" 2>&1 || { echo "FAIL: sim: $(cat "$d/sim.log")"; exit 1; }
# The names the files record (the section's comment "host NAME"), read
# with Wireshark's capinfos where it is installed, not by tapless.
if command -v capinfos > /dev/null 2>&1; then
	for h in algo venue; do
		rec=$(capinfos -k "$d/s/$h.pcapng" 2>/dev/null | sed -n 's/^Capture comment: *host //p')
		[ "$rec" = "$h" ] || fail "sim's $h.pcapng records host '$rec', not $h"
	done
fi

# 1. Two hosts' capture directories, both called eth1: named from the
# files, as tapless-capd -H wrote them, and correlated.
mkdir -p "$d/a/eth1" "$d/b/eth1" "$d/c/eth1"
cp "$d/s/algo.pcapng" "$d/a/eth1/" && cp "$d/s/venue.pcapng" "$d/b/eth1/" &&
	cp "$d/s/algo.pcapng" "$d/c/eth1/" || fail "could not copy the captures"
$T correlate --json "$d/a/eth1" "$d/b/eth1/" > "$d/eth1.json" 2> "$d/eth1.err" ||
	fail "eth1: exit $?: $(cat "$d/eth1.err")"
jq -e '[.inputs[].host] | sort == ["algo", "venue"]' "$d/eth1.json" > /dev/null ||
	fail "eth1: hosts are not the files' algo and venue: $(jq -c '[.inputs[]?.host]' "$d/eth1.json" 2>&1)"
jq -e '[.hops[] | select(.flow == "all")] | length == 2' "$d/eth1.json" > /dev/null ||
	fail "eth1: not both hops measured"
# A name given still wins over the files'.
$T correlate --json x="$d/a/eth1" "$d/b/eth1" > "$d/named.json" 2> "$d/named.err" ||
	fail "named: exit $?: $(cat "$d/named.err")"
jq -e '[.inputs[].host] | sort == ["venue", "x"]' "$d/named.json" > /dev/null ||
	fail "named: NAME= did not win: $(jq -c '[.inputs[]?.host]' "$d/named.json" 2>&1)"
# Files that record no name (classic pcap): the directory's, as before.
$T sim --output "$d/p" --format algo=pcap > "$d/simp.log" 2>&1 || fail "sim pcap: $(cat "$d/simp.log")"
mkdir -p "$d/q/hostq" && cp "$d/p/algo.pcap" "$d/q/hostq/" || fail "no classic pcap from sim"
$T correlate --json "$d/q/hostq" "$d/b/eth1" > "$d/fallback.json" 2> "$d/fallback.err"
jq -e '[.inputs[].host] | sort == ["hostq", "venue"]' "$d/fallback.json" > /dev/null ||
	fail "fallback: hosts are not hostq and venue: $(cat "$d/fallback.err")"
# A real collision (both record algo): refused, and told how to fix it.
$T correlate "$d/a/eth1" "$d/c/eth1" > /dev/null 2> "$d/twice.err"
rc=$?
[ "$rc" -eq 1 ] || fail "collision: exit $rc, not 1"
grep -q "NAME=DIR" "$d/twice.err" || fail "collision: no NAME=DIR hint: $(cat "$d/twice.err")"
grep -q "'algo' given twice" "$d/twice.err" || fail "collision: not named: $(cat "$d/twice.err")"

# 2. Journals an hour later than the captures: one warning per host with
# both ranges, in JSON and on stderr with the text output.
for h in algo venue; do
	awk '/^[0-9]/ { $1 = (substr($1, 1, 10) + 3600) substr($1, 11) } { print }' \
		"$d/s/$h.journal" > "$d/$h.late.journal"
done
$T correlate --json --sync algo="$d/algo.late.journal" --sync venue="$d/venue.late.journal" \
	"$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/late.json" 2> "$d/late.err" ||
	fail "late: exit $?: $(cat "$d/late.err")"
# The ranges as date(1) writes them from the journal's own first and last
# sample lines, and from the capture's first and last packet (capinfos).
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S; }
for h in algo venue; do
	jf=$(awk '$2 == "sample" { print substr($1, 1, 10); exit }' "$d/$h.late.journal")
	jl=$(awk '$2 == "sample" { s = substr($1, 1, 10) } END { print s }' "$d/$h.late.journal")
	n=$(jq --arg h "$h" '[.warnings[] | select(startswith($h + ": sync journal"))] | length' "$d/late.json")
	[ "$n" = 1 ] || fail "late: $n warnings about $h's journal, not 1: $(cat "$d/late.err")"
	w=$(jq -r --arg h "$h" '.warnings[] | select(startswith($h + ": sync journal"))' "$d/late.json")
	case $w in *"$(iso "$jf")"*"$(iso "$jl")"*) ;;
	*) fail "late: $h's warning lacks the journal's range $(iso "$jf") to $(iso "$jl"): $w" ;; esac
	if command -v capinfos > /dev/null 2>&1; then
		cf=$(capinfos -a -T -r -S "$d/s/$h.pcapng" 2>/dev/null | awk -F'\t' '{ print $2 }' | cut -d. -f1)
		case $cf in ''|*[!0-9]*) ;; *)
			# Stamps are TAI, the journal UTC: 37 s apart.
			case $w in *"$(iso $((cf - 37)))"*) ;;
			*) fail "late: $h's warning lacks the capture's start $(iso $((cf - 37))): $w" ;; esac ;;
		esac
	fi
	[ "$(grep -c "$h: sync journal" "$d/late.err")" = 1 ] ||
		fail "late: stderr has not one warning about $h's journal: $(cat "$d/late.err")"
done
# The journals that do cover the capture: no such warning.
$T correlate --json --sync algo="$d/s/algo.journal" --sync venue="$d/s/venue.journal" \
	"$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/ok.json" 2> "$d/ok.err" || fail "ok: exit $?"
grep -q "sync journal .* covers" "$d/ok.err" && fail "ok: warned about journals that cover the capture: $(cat "$d/ok.err")"

# 3. No journals: said once, and no per-hop "bound -"; the switch heading
# says why it is empty.
$T correlate "$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/nojournal.txt" 2> "$d/nojournal.err" ||
	fail "nojournal: exit $?"
[ "$(grep -c "no journals given: no error bound" "$d/nojournal.txt")" = 1 ] ||
	fail "nojournal: the no-journal line is not there once: $(head -12 "$d/nojournal.txt")"
grep -q "bound -" "$d/nojournal.txt" && fail "nojournal: 'bound -' still printed per hop"
grep -q "out of sync: 0" "$d/nojournal.txt" && fail "nojournal: 'out of sync: 0' still printed per hop"
sed -n '/^switch latency/,/^$/p' "$d/nojournal.txt" | grep -q "none: no topology given" ||
	fail "nojournal: empty switch section gives no reason: $(sed -n '/^switch latency/,/^$/p' "$d/nojournal.txt")"
# With journals, the bound is there and the line is not.
$T correlate --sync algo="$d/s/algo.journal" --sync venue="$d/s/venue.journal" \
	"$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/journal.txt" 2>&1 || fail "journal: exit $?"
grep -q "no journals given" "$d/journal.txt" && fail "journal: says no journals given"
grep -q "bound [0-9]* ns" "$d/journal.txt" || fail "journal: no bound printed"
# A topology without a switch between the hosts; one with it and no traffic through.
grep -v "switch\|link" "$d/s/topology" > "$d/noswitch.topo"
echo "link algo venue 2m" >> "$d/noswitch.topo"
$T correlate --topology "$d/noswitch.topo" "$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/noswitch.txt" 2>&1
sed -n '/^switch latency/,/^$/p' "$d/noswitch.txt" | grep -q "none: no switch in the topology" ||
	fail "noswitch: no reason given: $(sed -n '/^switch latency/,/^$/p' "$d/noswitch.txt")"
jq -e '.switches_none | test("no switch")' "$(
	$T correlate --json --topology "$d/noswitch.topo" "$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/noswitch.json" 2>/dev/null
	echo "$d/noswitch.json")" > /dev/null || fail "noswitch: JSON switches_none missing"
$T correlate --json --topology "$d/s/topology" "$d/s/algo.pcapng" "$d/s/venue.pcapng" > "$d/sw.json" 2>/dev/null
jq -e '(.switches | length > 0) and .switches_none == null' "$d/sw.json" > /dev/null ||
	fail "sw: switch rows missing, or a reason given beside them"

# 4. Times in text are ISO 8601 UTC with nanoseconds, in JSON integers.
first=$(awk '$2 == "sample" { print $1; exit }' "$d/s/algo.journal")
$T status "$d/s/algo.journal" > "$d/status.txt" 2>&1 || fail "status: exit $?"
want_iso="$(date -u -d "@${first%?????????}" +%Y-%m-%dT%H:%M:%S).${first#??????????}Z"
grep -q "from $want_iso to " "$d/status.txt" ||
	fail "status: no 'from $want_iso': $(grep from "$d/status.txt")"
grep -Eq '(^|[^0-9])[0-9]{19}([^0-9]|$)' "$d/status.txt" &&
	fail "status: raw epoch nanoseconds in text: $(grep -E '[0-9]{19}' "$d/status.txt" | head -2)"
$T status --json "$d/s/algo.journal" > "$d/status.json" 2>&1 || fail "status --json: exit $?"
jq -e --argjson f "$first" '.journals[0].clocks[0].first_ns == $f' "$d/status.json" > /dev/null ||
	fail "status --json: first_ns is not the integer $first"
# --follow text: every interval line and event says when, as a date.
mkdir -p "$d/fa" "$d/fv" && cp "$d/s/algo.pcapng" "$d/fa/" && cp "$d/s/venue.pcapng" "$d/fv/"
$T correlate --follow --from-oldest --interval 0.5 --stall 1 algo="$d/fa" venue="$d/fv" \
	> "$d/follow.txt" 2> "$d/follow.err" &
fp=$!
sleep 4
kill "$fp"
wait "$fp" || fail "follow: exit $?: $(cat "$d/follow.err")"
lines=$(grep -c '^hop ' "$d/follow.txt")
[ "$lines" -gt 0 ] || fail "follow: no hop lines: $(head -3 "$d/follow.txt")"
[ "$(grep -Ec '^hop [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z ' "$d/follow.txt")" = "$lines" ] ||
	fail "follow: hop lines without their interval's time: $(grep '^hop' "$d/follow.txt" | head -2)"
grep -Eq '(^|[^0-9])[0-9]{19}([^0-9]|$)' "$d/follow.txt" &&
	fail "follow: raw epoch nanoseconds in text: $(grep -E '[0-9]{19}' "$d/follow.txt" | head -2)"

# A capture with no IP in it (802.11, link type 105): said so, not "no FIX".
python3 -c "
import struct, sys
f = open(sys.argv[1], 'wb')
f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 105))
pkt = b'\x08\x02' + b'\x00' * 30
f.write(struct.pack('<IIII', 1700000000, 0, len(pkt), len(pkt)) + pkt)
" "$d/wifi.pcap"
$T correlate wifi="$d/wifi.pcap" > /dev/null 2> "$d/wifi.err"
grep -q "wifi: none of its 1 packets is IP (link type 105" "$d/wifi.err" ||
	fail "non-IP capture: $(cat "$d/wifi.err")"

[ "$fails" -eq 0 ] && echo "inputs: all checks passed"
[ "$fails" -eq 0 ]
