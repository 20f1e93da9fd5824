#!/bin/sh
# tapless validate --reference: packets matched per CPU second and peak
# RSS, on a tapless sim run with a tap on the algo's link (every frame the
# algo sent or received, in both files), at two lengths to see memory grow
# with the reference (24 bytes a packet, by design) and the matched errors
# (8 bytes each).
#
# VALIDATE_BENCH_MESSAGES (default 2000000) sets the long run; the short one
# is a quarter of it.
set -u
cd "$(dirname "$0")/.." || exit 2
N=${VALIDATE_BENCH_MESSAGES:-2000000}
d=$(mktemp -d /tmp/tapless-bench-validate.XXXXXX)
trap 'rm -rf "$d"' EXIT

run() {	# NAME MESSAGES
	bin/tapless sim --output "$d/$1" --rate 1000000 --messages "$2" --tap algo \
		--clock algo:offset=60,rate=50,noise=15 --no-truth-stats --seed 1 \
		> "$d/$1.log" 2>&1 || { echo "bench validate: sim failed: $(cat "$d/$1.log")"; exit 1; }
	/usr/bin/time -f '%e %U %S %M' -o "$d/$1.time" bin/tapless validate --no-phc --json \
		--reference "$d/$1/tap-algo.pcapng" --capture "$d/$1/algo.pcapng" \
		> "$d/$1.json" 2> "$d/$1.err"
	rc=$?
	[ $rc -le 4 ] && [ $rc -ne 1 ] && [ $rc -ne 2 ] ||
		{ echo "bench validate: exit $rc: $(cat "$d/$1.err")"; exit 1; }
	pk=$(jq .reference.matched "$d/$1.json")
	# The last line: time puts "Command exited with non-zero status" first
	# when validate warns (the clock here is off on purpose).
	tail -n 1 "$d/$1.time" > "$d/$1.t1"
	read -r wall user sys rss < "$d/$1.t1"
	cpu=$(echo "$user + $sys" | bc -l)
	printf "%-6s %10s packets matched  wall %6.2f s  cpu %6.2f s  %9.0f packets/s/core  peak RSS %6.1f MB\n" \
		"$1" "$pk" "$wall" "$cpu" "$(echo "$pk / $cpu" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
}

echo "bench validate --reference (tapless sim, tap on the algo's link):"
run short $((N / 4))
run long "$N"
