#!/bin/bash
# pingpong — tapless-pingpong on a veth pair between two namespaces:
# (1) the cost of the instrumentation: the half round trip with stamps on
#     (TX_SCHED, software TX and RX on both ends) and with --no-stamps, same
#     link, same 64-byte messages, UDP and TCP, PINGPONG_COUNT messages an
#     arm in PINGPONG_ROUNDS rounds, the arms alternating in ABBA order (on
#     off, off on, ...): the cost is the median of the rounds' differences,
#     which the machine's shifts of level between rounds do not move;
# (2) side by side with sockperf ping-pong on the same link (it reports the
#     half round trip), PINGPONG_SOCKPERF_SECONDS each, UDP and TCP.
# Client on CPU 0, server on CPU 1 when there are two. On a shared virtual
# machine the level moves by a microsecond or more between runs: compare
# figures within a round. Figures only: a benchmark never fails on a number.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup pingpong-bench 198.18.10
out=$TL_OUT
pp=bin/tapless-pingpong
count=${PINGPONG_COUNT:-200000}
rounds=${PINGPONG_ROUNDS:-10}
per=$(( (count + rounds - 1) / rounds ))
secs=${PINGPONG_SOCKPERF_SECONDS:-5}
size=64
srv=198.18.10.2
ccpu=0 scpu=0
[ "$(nproc)" -ge 2 ] && scpu=1
port=9500

# pp NAME PROTO [OPTS...]: one ping-pong run, JSON in $out/NAME.json.
pp() {
	local name=$1 proto=$2 s=()
	shift 2
	port=$((port + 1))
	[ "${1:-}" = --no-stamps ] && s=(--no-stamps)
	tl_bg b "$pp" --server --bind "$srv:$port" -p "$proto" --cpu "$scpu" \
		--idle-ms 10000 "${s[@]}" > /dev/null 2> "$out/$name.server.log"
	local spid=$TL_LAST_PID
	for _ in $(seq 100); do grep -q listening "$out/$name.server.log" && break; sleep 0.05; done
	tl_exec a "$pp" --to "$srv:$port" -p "$proto" -s $size --cpu "$ccpu" \
		--warmup 1000 --json "$@" > "$out/$name.json" 2> "$out/$name.log" ||
		echo "pingpong: $name: client failed: $(cat "$out/$name.log")"
	wait "$spid"
}

# q NAME JQ: a figure of run NAME, or "-".
q() { jq -r "$2 // \"-\"" "$out/$1.json" 2>/dev/null || echo -; }

# sp NAME PROTO: a sockperf ping-pong run; "p50 p99 mean messages" (ns) in $out/NAME.sp.
sp() {
	local name=$1 tcp=()
	port=$((port + 1))
	[ "$2" = tcp ] && tcp=(--tcp)
	tl_bg b taskset -c "$scpu" sockperf server -i "$srv" -p "$port" "${tcp[@]}" \
		> "$out/$name.server.log" 2>&1
	local spid=$TL_LAST_PID
	sleep 0.5
	tl_exec a taskset -c "$ccpu" sockperf ping-pong -i "$srv" -p "$port" "${tcp[@]}" \
		-m $size -t "$secs" > "$out/$name.log" 2>&1
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	sed 's/\x1b\[[0-9;]*m//g' "$out/$name.log" | awk '
		/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); mean = $0 * 1000 }
		/percentile 50.000 =/ { p50 = $NF * 1000 }
		/percentile 99.000 =/ { p99 = $NF * 1000 }
		/Valid Duration/ { for (i = 1; i <= NF; i++) if ($i ~ /^ReceivedMessages=/) { sub(/.*=/, "", $i); n = $i } }
		END { if (p50 == "") print "- - - -"; else printf "%.0f %.0f %.0f %s\n", p50, p99, mean, n }' \
		> "$out/$name.sp"
}

echo "pingpong: veth between namespaces, $size-byte messages, client on CPU $ccpu," \
	"server on CPU $scpu; nanoseconds"
echo
# median: of the numbers on standard input.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

echo "(1) instrumentation cost: half round trip, $count messages an arm in $rounds rounds" \
	"of $per (each after 1000 warm-up)"
printf '%-5s %-6s %9s %9s %9s   %s\n' proto stamps p50 p99 mean "(medians of the rounds)"
for proto in udp tcp; do
	: > "$out/$proto.rounds"
	for r in $(seq "$rounds"); do
		arms="on off"
		[ $((r % 2)) -eq 0 ] && arms="off on"
		for arm in $arms; do
			if [ $arm = on ]; then
				pp "$proto-$r-$arm" "$proto" -n "$per"
			else
				pp "$proto-$r-$arm" "$proto" -n "$per" --no-stamps
			fi
		done
		# p50 p99 mean of on, then of off, one line a round
		for arm in on off; do
			q "$proto-$r-$arm" '"\(.latency_ns.half_rtt.p50) \(.latency_ns.half_rtt.p99) \(.latency_ns.half_rtt.mean | floor)"'
		done | paste -d' ' - - | grep -v -- - >> "$out/$proto.rounds"
	done
	for arm in on off; do
		o=0; [ $arm = off ] && o=3
		printf '%-5s %-6s %9s %9s %9s\n' "$proto" "$arm" \
			"$(awk -v c=$((o + 1)) '{ print $c }' "$out/$proto.rounds" | median)" \
			"$(awk -v c=$((o + 2)) '{ print $c }' "$out/$proto.rounds" | median)" \
			"$(awk -v c=$((o + 3)) '{ print $c }' "$out/$proto.rounds" | median)"
	done
	printf '%-5s %-6s %+9d %+9d %+9d   p50 cost by round: %s\n' "$proto" cost \
		"$(awk '{ print $1 - $4 }' "$out/$proto.rounds" | median)" \
		"$(awk '{ print $2 - $5 }' "$out/$proto.rounds" | median)" \
		"$(awk '{ print $3 - $6 }' "$out/$proto.rounds" | median)" \
		"$(awk '{ printf "%s%+d", (NR > 1 ? " " : ""), $1 - $4 }' "$out/$proto.rounds")"
	lost=0 msgs=0
	for r in $(seq "$rounds"); do
		lost=$((lost + $(q "$proto-$r-on" '[.lost_stamps[]] | add // 0')))
		msgs=$((msgs + $(q "$proto-$r-on" '.messages // 0')))
	done
	c2s=$(for r in $(seq "$rounds"); do q "$proto-$r-on" .latency_ns.client_to_server.p50; done | median)
	s2c=$(for r in $(seq "$rounds"); do q "$proto-$r-on" .latency_ns.server_to_client.p50; done | median)
	printf '%-5s %-6s one-way p50 client->server %s, server->client %s; %s stamps lost in %s messages\n' \
		"$proto" on "$c2s" "$s2c" "$lost" "$msgs"
done

echo
echo "(2) side by side with $(sockperf --version 2>&1 | head -1 | sed 's/, version / /'):" \
	"half round trip; sockperf ping-pong -m $size -t $secs"
printf '%-5s %-30s %9s %9s %9s %10s\n' proto tool p50 p99 mean messages
for proto in udp tcp; do
	sp "$proto-sockperf" "$proto"
	pp "$proto-pp-time" "$proto" -d "$secs"
	pp "$proto-pp-time-off" "$proto" -d "$secs" --no-stamps
	read -r s50 s99 smean sn < "$out/$proto-sockperf.sp"
	for arm in pp-time pp-time-off; do
		printf '%-5s %-30s %9s %9s %9.0f %10s\n' "$proto" \
			"tapless-pingpong$([ $arm = pp-time-off ] && echo ' --no-stamps')" \
			"$(q "$proto-$arm" .latency_ns.half_rtt.p50)" \
			"$(q "$proto-$arm" .latency_ns.half_rtt.p99)" \
			"$(q "$proto-$arm" .latency_ns.half_rtt.mean)" \
			"$(q "$proto-$arm" .messages)"
	done
	printf '%-5s %-30s %9s %9s %9s %10s\n' "$proto" sockperf "$s50" "$s99" "$smean" "$sn"
done
