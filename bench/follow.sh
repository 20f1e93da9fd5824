#!/bin/bash
# follow — tapless correlate --follow on the FTTC workload as it runs:
# tapless-venue in one namespace, tapless-algo in the other, joined by a veth
# pair without offloads (as in the lab), each host's tapless-capd writing
# rotating files (-G 2, TX stamps through --tx-socket) and the follower
# (--json --samples) reading both directories live, started before the
# workload and stopped with SIGTERM once it has an interval past its end.
#
# Per offered rate:
# - what the venue achieved (md_rate from its --json) and the FIX messages
#   each host's files held (the follower's own host counts), per second of
#   publishing; what each capd said it wrote;
# - the lag from a sample's stamp to the emitted_ns of the interval line it
#   was counted in (bench/lib/follow_lag.py), p50 and p99 over hop and
#   tick_to_trade samples, beside the target (interval + 200 ms): over
#   every interval but the one closed at SIGTERM, and "steady", without the
#   last interval holding traffic (without capd heartbeats it closes only
#   at the next flush after the traffic stopped, or at --stall);
# - the follower's CPU (utime + stime from /proc/PID/stat, read just before
#   the SIGTERM, so reading to the end and the last interval are not in it;
#   from a second before the workload, so its idle polling is) per message
#   each host's files hold, as % of one core per 100 k msg/s, beside the
#   offline tapless correlate of the same files (/usr/bin/time), which
#   writes --samples too as the follower must here for the lag, and their
#   ratio; the follower's RSS just before the SIGTERM.
# Figures only, never pass/fail. Clock ticks and /usr/bin/time count in
# 10 ms: the CPU figures are good to a few %.
#   FOLLOW_SECONDS   seconds the venue publishes per rate (default 12)
#   FOLLOW_RATES     offered market data rates (default "20000 100000")
#   FOLLOW_INTERVAL  the follower's --interval, seconds (default 1)
#   FOLLOW_CAPD_OPTS more tapless-capd options (e.g. "--reorder-ms 20")
#   FOLLOW_PERF=1    also perf record the follower at each rate; its top
#                    functions are printed
#   TL_KEEP=1        keep the files (netns.sh's TL_OUT) for a post-mortem
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup follow-bench 198.18.70
out=$TL_OUT
secs=${FOLLOW_SECONDS:-12}
ivl=${FOLLOW_INTERVAL:-1}
tck=$(getconf CLK_TCK)
addr="--md 198.18.70.2:9001 --ord 198.18.70.2:9002"

# cpu_ticks PID: utime + stime of PID so far, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now_ns() { date +%s%N; }

# wait_for PATH SECONDS
wait_for() {
	local i
	for i in $(seq $(($2 * 20))); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

echo "== tapless correlate --follow: FTTC on a veth pair, capd -G 2 ${FOLLOW_CAPD_OPTS:+$FOLLOW_CAPD_OPTS }per host, --interval $ivl s ($(nproc) cores, nothing pinned)"
hb=$(bin/tapless-capd --help 2>&1 | sed -n 's/.*--heartbeat-ms.*default: \([0-9]*\)].*/\1/p')
if [ -n "$hb" ]; then
	echo "capd: a heartbeat and a flush every $hb ms (--heartbeat-ms default)"
else
	echo "capd: no heartbeats (it flushes its file about once a second)"
fi
[ "${FOLLOW_PERF:-0}" = 1 ] && echo "perf record on the follower: its CPU figures include perf's cost"
# As the lab does: no offloads, a frame on the wire is a frame in the capture.
for ns in a b; do
	[ $ns = a ] && if=$TL_IF_A || if=$TL_IF_B
	tl_exec $ns ethtool -K "$if" tso off gso off gro off > /dev/null 2>&1 ||
		echo "follow: cannot turn offloads off on $if: the files hold super-frames"
done
target=$(awk -v i="$ivl" 'BEGIN { print i * 1000 + 200 }')

for rate in ${FOLLOW_RATES:-20000 100000}; do
	r=$out/$rate
	mkdir -p "$r/venue" "$r/algo"
	cap=()
	for h in venue algo; do
		if [ $h = venue ]; then ns=b if=$TL_IF_B; else ns=a if=$TL_IF_A; fi
		tl_bg $ns bin/tapless-capd -i "$if" -w "$r/$h" -H $h --prefix $h -G 2 \
			--tx-socket "$r/$h.sock" -l notice ${FOLLOW_CAPD_OPTS:-} 2> "$r/$h.capd.log"
		cap+=("$TL_LAST_PID")
	done
	for h in venue algo; do
		wait_for "$r/$h.sock" 10 || { echo "follow: $h's tapless-capd did not start: $(cat "$r/$h.capd.log")"; exit 1; }
	done
	bin/tapless correlate --follow --json --interval "$ivl" --samples "$r/samples" \
		venue="$r/venue" algo="$r/algo" > "$r/follow.jsonl" 2> "$r/follow.log" &
	fp=$!
	TL_PIDS+=("$fp")
	# Its start (the matching tables) is left out; then a second idle.
	sleep 0.5
	ci=$(cpu_ticks "$fp") ti=$(now_ns)
	sleep 1
	pp=
	if [ "${FOLLOW_PERF:-0}" = 1 ]; then
		perf record -F 999 -o "$r/perf.data" -p "$fp" > "$r/perf.log" 2>&1 &
		pp=$!
	fi
	c0=$(cpu_ticks "$fp") t0=$(now_ns)
	tl_bg b bin/tapless-venue $addr --rate "$rate" --duration "$secs" -i "$TL_IF_B" \
		--tx-socket "$r/venue.sock" --json > "$r/venue.json" 2> "$r/venue.log"
	vp=$TL_LAST_PID
	tl_exec a bin/tapless-algo $addr -i "$TL_IF_A" --tx-socket "$r/algo.sock" --json \
		--connect-timeout 10 > "$r/algo.json" 2> "$r/algo.log"
	arc=$?
	wait "$vp"
	vrc=$?
	tend=$(now_ns)
	# Until the follower is out with an interval past the workload's end
	# (without heartbeats: when both hosts have stalled), or 30 s.
	caught=no
	for _ in $(seq 300); do
		if jq -e --argjson e "$tend" 'select(.type == "host" and .end_ns > $e)' \
			"$r/follow.jsonl" 2>/dev/null | grep -q .; then caught=yes; break; fi
		sleep 0.1
	done
	# The live part ends here: CPU and memory before the SIGTERM, so that
	# reading the files to their end and the last interval are not in it.
	c1=$(cpu_ticks "$fp") t1=$(now_ns)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$fp/status")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$fp/status")
	[ -n "$pp" ] && { kill -INT "$pp"; wait "$pp"; }
	kill -TERM "$fp"
	wait "$fp"
	frc=$?
	for p in "${cap[@]}"; do kill -TERM "$p"; wait "$p"; done
	# The offline peer writes --samples too, as the follower must here for
	# the lag (a line per sample: a share of both); and once without.
	/usr/bin/time -f '%e %U %S %M' -o "$r/offline.time" bin/tapless correlate --json \
		--samples "$r/offline.samples" venue="$r/venue" algo="$r/algo" > "$r/offline.json" 2> "$r/offline.log" &&
		/usr/bin/time -f '%e %U %S %M' -o "$r/bare.time" bin/tapless correlate --json \
		venue="$r/venue" algo="$r/algo" > /dev/null 2>> "$r/offline.log"
	orc=$?
	if [ "$vrc" != 0 ] || [ "$arc" != 0 ] || [ "$frc" != 0 ] || [ "$orc" != 0 ] ||
		! jq -e . "$r/venue.json" > /dev/null 2>&1; then
		echo "rate $rate: run failed (venue $vrc, algo $arc, follower $frc, offline $orc):" \
			"$(tail -q -n 2 "$r/venue.log" "$r/algo.log" "$r/follow.log" "$r/offline.log" | tr '\n' ' ')"
		continue
	fi
	lag=$(python3 bench/lib/follow_lag.py "$r/follow.jsonl" "$r/samples" "$t1" \
		"$(awk -v i="$ivl" 'BEGIN { printf "%.0f", i * 1e9 }')") ||
		{ echo "rate $rate: follow_lag.py failed"; continue; }
	read -r _ ou os _ < "$r/offline.time"
	read -r _ bu bs _ < "$r/bare.time"
	jq -r -n --argjson v "$(cat "$r/venue.json")" --argjson l "$lag" --argjson o "$(cat "$r/offline.json")" \
		--argjson rate "$rate" --argjson target "$target" --arg caught "$caught" \
		--argjson tck "$tck" --argjson ci "$ci" --argjson c0 "$c0" --argjson c1 "$c1" \
		--argjson ti "$ti" --argjson t0 "$t0" --argjson t1 "$t1" \
		--argjson ocpu "$(awk -v u="$ou" -v s="$os" 'BEGIN { print u + s }')" \
		--argjson bcpu "$(awk -v u="$bu" -v s="$bs" 'BEGIN { print u + s }')" --argjson rss "$rss" --argjson hwm "$hwm" '
		def f1: . * 10 | round / 10 | tostring | if test("[.e]") then . else . + ".0" end;
		def f2: . * 100 | round / 100 | tostring |
			if test("[.]") then (if test("[.][0-9]$") then . + "0" else . end) else . + ".00" end;
		def ms: if . == null then "-" else f1 end;
		def met($x): if $x == null then "-" elif $x <= $target then "met" else "missed" end;
		($l.messages_live | [.[]] | add / 2) as $lm |
		(($c1 - $c0) / $tck) as $fcpu | (($t1 - $t0) / 1e9) as $fwall |
		($fcpu / $lm * 1e5 * 100) as $fper |
		([$o.inputs[].fix_messages] | add / 2) as $om |
		($ocpu / $om * 1e5 * 100) as $oper | ($bcpu / $om * 1e5 * 100) as $bper |
		"rate \($rate)/s offered: the venue achieved \($v.md_rate | floor) msg/s market data (\($v.md_published) in \($v.md_elapsed_s | f1) s, \($v.md_unsent) unsent); " +
		"the files hold \($l.messages.venue) (venue) and \($l.messages.algo) (algo) FIX messages: \($l.messages.venue / $v.md_elapsed_s | floor) and \($l.messages.algo / $v.md_elapsed_s | floor) msg/s over the publishing",
		"  lag, stamp to interval line, \($l.samples) hop + tick_to_trade samples in \($l.intervals) intervals: p50 \($l.p50_ms | ms) ms  p99 \($l.p99_ms | ms) ms  max \($l.max_ms | ms) ms  target <= \($target) ms: \(met($l.p99_ms))",
		"    steady (\($l.steady) samples in the intervals ended before the last BUY): p50 \($l.steady_p50_ms | ms) ms  p99 \($l.steady_p99_ms | ms) ms  max \($l.steady_max_ms | ms) ms: \(met($l.steady_p99_ms)); their lines came out p50 \($l.close_p50_ms | ms) ms, at most \($l.close_max_ms | ms) ms after the interval'"'"'s end",
		"    tick_to_trade alone (\($l.tick_to_trade)): p50 \($l.ttt_p50_ms | ms) ms  p99 \($l.ttt_p99_ms | ms) ms",
		"    samples made after their interval closed, counted in the next: \($l.late) (lag max \($l.late_max_ms | ms) ms); in the interval closed at SIGTERM, left out: \($l.at_stop); in the samples file \($l.in_file), counted in the lines \($l.in_lines)",
		"  cpu: follower \($fcpu | f2) s in \($fwall | f1) s live (traffic and catching up\(if $caught == "yes" then "" else ", NOT caught up in 30 s" end)) for \($lm | floor) msg/host: \($fper | f1) % of a core per 100 k msg/s, writing --samples (idle before traffic \(($c0 - $ci) / $tck / (($t0 - $ti) / 1e9) * 100 | f1) % of a core)",
		"       offline correlate of the same files, with --samples: \($ocpu | f2) s for \($om | floor) msg/host: \($oper | f1) % of a core per 100 k msg/s (without: \($bcpu | f2) s, \($bper | f1) %); follower / offline \($fper / $oper | f2)",
		"  rss: follower \($rss / 1024 | f1) MB before the stop (peak \($hwm / 1024 | f1) MB)"'
	# What each capd wrote, from its last words.
	for h in venue algo; do
		printf '  capd %s: %s frames, %s TX frames handed over, %s written out of order (reorder buffer full), %s dropped\n' $h \
			"$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$r/$h.capd.log" | tail -1)" \
			"$(sed -n 's/.*tx socket: \([0-9]*\) frames handed over.*/\1/p' "$r/$h.capd.log" | tail -1)" \
			"$(sed -n 's/.*; \([0-9]*\) written out of order.*/\1/p' "$r/$h.capd.log" | tail -1)" \
			"$(jq -s --arg h $h '[.[] | select(.type == "host" and .host == $h) | .drops] | max // 0' "$r/follow.jsonl")"
	done
	if [ -n "$pp" ]; then
		echo "  perf: the follower's top functions (self, % of its samples)"
		perf report -i "$r/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
			grep -E '^ +[0-9.]+%' | head -15 | sed 's/^ */    /'
	fi
	[ "${TL_KEEP:-0}" = 1 ] || rm -rf "$r"
done
