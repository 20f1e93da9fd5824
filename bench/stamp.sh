#!/bin/bash
# stamp — what tapless-stamp costs an unmodified program:
# (1) latency: sockperf ping-pong, 64-byte messages, UDP and TCP, client
#     in namespace a and server in b across a veth pair, each arm run
#     STAMP_ROUNDS times for STAMP_SECONDS, the arms of a round in ABBA
#     order (bare shim, shim bare, ...) so the machine's drifts between
#     rounds fall on both alike. The scheduler places the two ends
#     (STAMP_PIN=1: client on CPU 0, server on CPU 1);
# (2) sending cost: sockperf throughput (UDP, 64 bytes) for
#     STAMP_SECONDS, messages a second bare and stamped, and the time
#     the shim adds to each send.
# tapless-capd captures on a's interface in every arm; under the shim
# both ends hand their stamps to it (its socket is a path, reachable
# from both namespaces). Figures: sockperf's latency (half the round
# trip), p50, p99 and p99.9 per arm (medians of the rounds), and the shim's
# added latency: the median of the rounds' differences. Target: +1 us
# at p50, +2 us at p99. Figures only: a benchmark never fails on a
# number; sockperf's own errors and the shim's summaries are printed.
#
# To compare another way of stamping (e.g. capd --stamp-cgroup), add
# its name to ARMS and its set-up to arm_pre (the command prefix of both
# ends) and, if it needs one, arm_start/arm_stop.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup stamp-bench 198.18.66
[ "${STAMP_KEEP:-0}" = 1 ] && trap "tl_cleanup; echo kept $TL_OUT" EXIT
out=$TL_OUT
rounds=${STAMP_ROUNDS:-8}
secs=${STAMP_SECONDS:-3}
size=64
srv=198.18.66.2
ARMS=(bare shim)
pin_c=() pin_s=()
if [ "${STAMP_PIN:-0}" = 1 ]; then
	pin_c=(taskset -c 0) pin_s=(taskset -c 0)
	[ "$(nproc)" -ge 2 ] && pin_s=(taskset -c 1)
fi
port=9600

# arm_pre ARM SIDE: the command prefix of one end in arm ARM.
arm_pre() {
	case $1 in
	shim) echo bin/tapless-stamp --tx-socket "$out/tx.sock" --log-file "$out/shim-$2.log" -- ;;
	*) ;;
	esac
}

tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out" -H a -l info --tx-socket "$out/tx.sock" \
	--reorder-ms 200 "portrange 9600-9699" 2> "$out/capd.log"
capd=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$out/tx.sock" ] && break; sleep 0.05; done
[ -S "$out/tx.sock" ] || { echo "stamp: capd did not start: $(cat "$out/capd.log")"; exit 1; }

# run ARM PROTO NAME: one sockperf ping-pong; "p50 p99 mean" (ns) in
# $out/NAME.sp, sockperf's complaints in $out/errors.
run() {
	local arm=$1 proto=$2 name=$3 tcp=()
	port=$((port + 1))
	[ "$proto" = tcp ] && tcp=(--tcp)
	# shellcheck disable=SC2046
	tl_bg b "${pin_s[@]}" $(arm_pre "$arm" server) sockperf server -i "$srv" \
		-p "$port" "${tcp[@]}" > "$out/$name.server.log" 2>&1
	local spid=$TL_LAST_PID
	sleep 0.5
	# shellcheck disable=SC2046
	tl_exec a "${pin_c[@]}" $(arm_pre "$arm" client) sockperf ping-pong -i "$srv" \
		-p "$port" "${tcp[@]}" -m $size -t "$secs" > "$out/$name.log" 2>&1
	# SIGINT: sockperf's own way out (exit(), so the shim's summary is
	# logged); SIGTERM would end it by the default action.
	kill -INT "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	grep -i -h "error\|fail" "$out/$name.log" "$out/$name.server.log" |
		sed "s/^/$name: /" >> "$out/errors"
	sed 's/\x1b\[[0-9;]*m//g' "$out/$name.log" | awk '
		/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); mean = $0 * 1000 }
		/percentile 50.000 =/ { p50 = $NF * 1000 }
		/percentile 99.000 =/ { p99 = $NF * 1000 }
		/percentile 99.900 =/ { p999 = $NF * 1000 }
		END { if (p50 == "") print "- - - -"; else printf "%.0f %.0f %.0f %.0f\n", p50, p99, p999, mean }' \
		> "$out/$name.sp"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

echo "stamp: (1) sockperf ping-pong under tapless-stamp, veth between namespaces, $size-byte" \
	"messages, $rounds rounds of ${secs} s an arm, $([ ${#pin_c[@]} -gt 0 ] &&
	echo "client on CPU 0, server on CPU ${pin_s[2]}" || echo "placed by the scheduler");" \
	"half round trip, nanoseconds"
printf '%-5s %-6s %9s %9s %9s %9s\n' proto arm p50 p99 p99.9 mean
: > "$out/errors"
for proto in udp tcp; do
	for r in $(seq "$rounds"); do
		order=("${ARMS[@]}")
		[ $((r % 2)) -eq 0 ] && order=($(printf '%s\n' "${ARMS[@]}" | tac))
		for arm in "${order[@]}"; do
			run "$arm" "$proto" "$proto-$r-$arm"
		done
	done
	for arm in "${ARMS[@]}"; do
		for c in 1 2 3 4; do
			for r in $(seq "$rounds"); do awk -v c=$c '{ print $c }' "$out/$proto-$r-$arm.sp"; done |
				grep -v -- - | median > "$out/$proto-$arm.$c"
		done
		printf '%-5s %-6s %9s %9s %9s %9s\n' "$proto" "$arm" "$(cat "$out/$proto-$arm.1")" \
			"$(cat "$out/$proto-$arm.2")" "$(cat "$out/$proto-$arm.3")" "$(cat "$out/$proto-$arm.4")"
	done
	for arm in "${ARMS[@]:1}"; do
		for c in 1 2 3; do
			for r in $(seq "$rounds"); do
				paste "$out/$proto-$r-$arm.sp" "$out/$proto-$r-${ARMS[0]}.sp" |
					awk -v c=$c '$1 != "-" && $5 != "-" { print $c - $(c + 4) }'
			done | median > "$out/$proto-$arm.d$c"
		done
		printf '%-5s %-6s %+9d %+9d %+9d   added: median of the rounds'"'"' differences (p50 by round: %s)\n' \
			"$proto" "+$arm" "$(cat "$out/$proto-$arm.d1")" "$(cat "$out/$proto-$arm.d2")" \
			"$(cat "$out/$proto-$arm.d3")" \
			"$(for r in $(seq "$rounds"); do paste "$out/$proto-$r-$arm.sp" "$out/$proto-$r-${ARMS[0]}.sp" |
				awk '$1 != "-" && $5 != "-" { printf "%+d ", $1 - $5 }'; done)"
		printf '%-5s %-6s %8.2fx %8.2fx %8.2fx   ratio to %s (of the medians above)\n' \
			"$proto" "/$arm" \
			"$(echo "$(cat "$out/$proto-$arm.1") / $(cat "$out/$proto-${ARMS[0]}.1")" | bc -l)" \
			"$(echo "$(cat "$out/$proto-$arm.2") / $(cat "$out/$proto-${ARMS[0]}.2")" | bc -l)" \
			"$(echo "$(cat "$out/$proto-$arm.3") / $(cat "$out/$proto-${ARMS[0]}.3")" | bc -l)" \
			"${ARMS[0]}"
	done
done
echo
echo "(2) sending cost: sockperf throughput, UDP, $size bytes, ${secs} s an arm, stamps to capd"
printf '%-6s %12s %12s\n' arm msg/s ns/msg
for arm in "${ARMS[@]}"; do
	port=$((port + 1))
	# shellcheck disable=SC2046
	tl_bg b sockperf server -i "$srv" -p "$port" > /dev/null 2>&1
	spid=$TL_LAST_PID
	sleep 0.5
	# shellcheck disable=SC2046
	tl_exec a $(arm_pre "$arm" tp) sockperf throughput -i "$srv" -p "$port" -m $size \
		-t "$secs" > "$out/tp-$arm.log" 2>&1
	kill -INT "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	grep -i -h "error\|fail" "$out/tp-$arm.log" | sed "s/^/tp-$arm: /" >> "$out/errors"
	rate=$(sed 's/\x1b\[[0-9;]*m//g' "$out/tp-$arm.log" | sed -n 's/.*Message Rate is \([0-9]*\).*/\1/p')
	echo "${rate:-0}" > "$out/tp-$arm.rate"
	printf '%-6s %12s %12s\n' "$arm" "${rate:--}" \
		"$([ -n "$rate" ] && [ "$rate" -gt 0 ] && echo $((1000000000 / rate)) || echo -)"
done
b=$(cat "$out/tp-${ARMS[0]}.rate")
for arm in "${ARMS[@]:1}"; do
	r=$(cat "$out/tp-$arm.rate")
	[ "$b" -gt 0 ] && [ "$r" -gt 0 ] &&
		printf '%-6s %12s %+12d   added to each send\n' "+$arm" "" $((1000000000 / r - 1000000000 / b))
done
kill -TERM "$capd"
wait "$capd"
echo
echo "shim summaries (all rounds, both ends):"
for side in client server tp; do
	grep -h summary "$out/shim-$side.log" 2>/dev/null | awk -v side=$side '
		{ for (i = 1; i <= NF; i++) {
			if ($(i+1) == "sends") s += $i
			if ($(i+1) == "handed") h += $i
			if ($(i+1) == "dropped") d += $i
			if ($(i+1) == "POLLERR") p += $i } }
		END { printf "  %s: %d sends, %d stamps handed to capd, %d dropped, %d POLLERR hidden\n", side, s, h, d, p }'
done
# The server's stamps name frames that a's capture sees coming in, not
# going out: capd finds no frame for them (counted, not written).
grep -h "keyed stamps:" "$out/capd.log" | sed 's/^/  /'
if [ -s "$out/errors" ]; then
	echo "sockperf reported errors:"
	sed 's/^/  /' "$out/errors"
else
	echo "sockperf reported no error"
fi
