#!/bin/sh
# tapless correlate's speed and memory on generated FTTC captures (tapless
# sim: two hosts, every message stamped at both), beside tshark extracting
# FIX fields from the same kind of files.
#
# Prints, per capture length: FIX messages, wall and CPU seconds, messages
# per CPU second (each message is read twice: once per host's file), and
# peak RSS — shown at two lengths to see that memory does not grow with the
# capture. tshark runs on a shorter capture (it is slow); the ratio is of
# rates, messages per CPU second.
#
# CORRELATE_BENCH_MESSAGES (default 10000000) sets the long run; the short
# one is a quarter of it and tshark gets a twentieth.
set -u
cd "$(dirname "$0")/.." || exit 2
N=${CORRELATE_BENCH_MESSAGES:-10000000}
d=$(mktemp -d /tmp/tapless-bench-correlate.XXXXXX)
trap 'rm -rf "$d"' EXIT

gen() {	# NAME MESSAGES
	bin/tapless sim --out "$d/$1" --rate 1000000 --messages "$2" \
		--no-truth-stats --seed 1 > "$d/$1.log" 2>&1 ||
		{ echo "bench correlate: sim failed: $(cat "$d/$1.log")"; exit 1; }
}

# run NAME: correlate, with time and peak RSS
run() {
	/usr/bin/time -f '%e %U %S %M' -o "$d/$1.time" bin/tapless correlate --json \
		algo="$d/$1/algo.pcapng" venue="$d/$1/venue.pcapng" > "$d/$1.json" 2> "$d/$1.err" ||
		{ echo "bench correlate: correlate failed: $(cat "$d/$1.err")"; exit 1; }
	msgs=$(jq '[.inputs[].fix_messages] | add / 2 | floor' "$d/$1.json")
	read -r wall user sys rss < "$d/$1.time"
	cpu=$(echo "$user + $sys" | bc -l)
	bytes=$(du -cb "$d/$1"/*.pcapng | tail -1 | cut -f1)
	printf "%-8s %10s messages  %6.1f MB  wall %6.2f s  cpu %6.2f s  %9.0f messages/s/core  peak RSS %6.1f MB\n" \
		"$1" "$msgs" "$(echo "$bytes / 1000000" | bc -l)" "$wall" "$cpu" \
		"$(echo "$msgs / $cpu" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
	echo "$msgs / $cpu" | bc -l > "$d/$1.rate"
}

echo "== tapless correlate: generated FTTC captures, two hosts ($(nproc) cores)"
gen long "$N"
gen short $((N / 4))
gen tshark $((N / 20))
run long
run short

if command -v tshark > /dev/null; then
	/usr/bin/time -f '%e %U %S %M' -o "$d/ts.time" sh -c "
		tshark -r '$d/tshark/algo.pcapng' -T fields -e fix.MsgType -e fix.MsgSeqNum -e fix.SenderCompID > '$d/ts.a' 2>/dev/null &&
		tshark -r '$d/tshark/venue.pcapng' -T fields -e fix.MsgType -e fix.MsgSeqNum -e fix.SenderCompID > '$d/ts.v' 2>/dev/null"
	read -r wall user sys rss < "$d/ts.time"
	msgs=$(cat "$d/ts.a" | tr ',' '\n' | grep -c .)
	cpu=$(echo "$user + $sys" | bc -l)
	trate=$(echo "$msgs / $cpu" | bc -l)
	printf "%-8s %10s messages  wall %6.2f s  cpu %6.2f s  %9.0f messages/s/core  peak RSS %6.1f MB\n" \
		tshark "$msgs" "$wall" "$cpu" "$trate" "$(echo "$rss / 1024" | bc -l)"
	run tshark > /dev/null
	printf "ratio: correlate (full matching, both files) / tshark (field extraction) = %.0fx at the same length; %.0fx against the long run\n" \
		"$(echo "$(cat "$d/tshark.rate") / $trate" | bc -l)" "$(echo "$(cat "$d/long.rate") / $trate" | bc -l)"
else
	echo "tshark: not installed, no ratio"
fi
