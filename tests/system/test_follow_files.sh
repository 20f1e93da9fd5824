#!/bin/bash
# tapless correlate --follow over tapless-capd's rotating files, live: two
# hosts in namespaces (algo in a, venue in b, a veth pair), the FTTC workload
# (tapless-venue, tapless-algo) at 2000 market data messages a second, one
# capd per host rotating every 2 s (-G 2), and a clean-up loop removing
# finished files older than 6 s, as an operator's cron would.
#
# 1. Half a minute of it (30 s), the follower started before capd. Every
#    finished file is hard-linked into a keep directory before the clean-up
#    removes it; afterwards the follower's intervals must add up to the
#    offline correlate of the kept files (follow_check.py: counts exact,
#    means within 1 ns: no message lost or counted twice at file
#    boundaries), with no files_missed event (it kept up with the
#    clean-up). Its RSS, sampled every 1.5 s (every 3 s when the run was a
#    minute: the same ~20 samples) and printed, must stay flat: at least 9
#    samples, and the largest sample of the last third at most 1.5 times
#    the last sample of the first third plus 2 MB.
#    (--max-pending 32768: the correlator's ring of waiting messages is
#    allocated whole but touched as it fills, so with the default 262144
#    entries, 44 MB, RSS climbs for the first 262144 messages, minutes at
#    this rate; at 32768, 5.5 MB, it is all touched within seconds, and
#    still far more than the ~4400 messages a 1 s window holds here.)
# 2. capd on the venue killed (SIGKILL) mid-run, once it has finished two
#    files and hops are correlated both ways: within the two intervals
#    after the last the follower wrote before the kill, the stream says
#    "stalled" for the venue (counted in intervals, not seconds), and
#    within 2 x --stall + 1 s its metrics say
#    tapless_host_stalled{host="venue"} 1. capd restarted: within 8 s the
#    metrics say the venue is no longer stalled; "restart" (its numbering
#    starts again) and "resumed" come, and hops are correlated again, both
#    ways, in the intervals after it. Then the workload ends (the algo is
#    stopped with SIGTERM once those hops are in, or at the venue's 30 s;
#    it logs out and both exit 0) and both links go quiet, capd running
#    on: with capd's heartbeats neither host is reported stalled over 2 x
#    --stall.
# Everything started is stopped, and the namespaces removed, on every exit.
# No timing assertion: intervals are counted, seconds only waited; every
# wait for a condition polls it every 0.1 s up to its limit.
set -u
. scripts/netns.sh
tl_setup follow-files 198.18.60
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# poll SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECONDS have passed (1).
poll() {
	local end=$(($(date +%s%N) + $1 * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.1
	done
}
T=bin/tapless
L=tests/system/lib
A=198.18.60.1 V=198.18.60.2
RATE=2000
FILTER="tcp port 9001 or tcp port 9002"

# capd NS HOST DIR: a capd on the namespace's veth end writing DIR, its pid
# in CAPD_PID; waits for its first file.
capd() {
	local ifc=$TL_IF_A
	[ "$1" = b ] && ifc=$TL_IF_B
	tl_bg "$1" bin/tapless-capd -i "$ifc" -w "$3" -G 2 -H "$2" $FILTER \
		2>> "$3.capd.log"
	CAPD_PID=$TL_LAST_PID
	for _ in $(seq 100); do
		ls "$3"/*.part > /dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "capd on $2 wrote no file: $(cat "$3.capd.log")"
}

# keeper DIR KEEP: forever, every 0.2 s, hard-link each finished file of
# DIR into KEEP, then remove what is older than 6 s (the clean-up).
keeper() {
	local f now
	while :; do
		now=$(date +%s)
		for f in "$1"/*.pcapng; do
			[ -e "$f" ] || continue
			[ -e "$2/${f##*/}" ] || ln "$f" "$2/" 2>/dev/null
			if [ $((now - $(stat -c %Y "$f" 2>/dev/null || echo "$now"))) -gt 6 ]; then
				rm -f "$f" && echo "${f##*/}" >> "$2.removed"
			fi
		done
		[ -e "$2.stop" ] && return 0
		sleep 0.2
	done
}

# follower NAME STALL ALGO_DIR VENUE_DIR [OPTIONS]: the follower, its pid
# in FPID, its metrics port in MPORT.
follower() {
	local n=$1 stall=$2 ad=$3 vd=$4
	shift 4
	$T correlate --follow --json --from-oldest --interval 1 --stall "$stall" \
		--metrics 0 "$@" algo="$ad" venue="$vd" > "$out/$n.jsonl" 2> "$out/$n.err" &
	FPID=$!
	TL_PIDS+=("$FPID")
	MPORT=
	for _ in $(seq 100); do
		MPORT=$(sed -n 's/.*metrics on .* port \([0-9]*\)$/\1/p' "$out/$n.err")
		[ -n "$MPORT" ] && return 0
		sleep 0.05
	done
	fail "$n: no metrics port: $(cat "$out/$n.err")"
}

# workload NAME SECONDS: venue in b, algo in a; pids VPID, APID.
workload() {
	tl_bg b bin/tapless-venue --md $V:9001 --ord $V:9002 --rate $RATE \
		--duration "$2" --json > "$out/$1.venue.json" 2> "$out/$1.venue.log"
	VPID=$TL_LAST_PID
	tl_bg a bin/tapless-algo --md $V:9001 --ord $V:9002 --json \
		> "$out/$1.algo.json" 2> "$out/$1.algo.log"
	APID=$TL_LAST_PID
}

# stop_follower NAME: SIGTERM, exit 0 wanted.
stop_follower() {
	kill -TERM "$FPID"
	wait "$FPID"
	local rc=$?
	[ "$rc" -eq 0 ] || fail "$1: follower exit $rc after SIGTERM: $(tail -3 "$out/$1.err")"
}

# capd_order DIR: how far from time order capd's files are (figures, for
# the reader of a failure: files read one after another and files merged
# by time differ where a file starts before the one before it ended).
capd_order() {
	local f
	for f in "$1"/*.pcapng; do
		echo "== $f"
		build/tools/capdump "$f" | grep -v iface
	done | awk 'function end_file() {
			if (n) {
				if (files && mn < pmx) { ov++; if (pmx - mn > ovmax) ovmax = pmx - mn }
				pmx = mx; files++
			}
			n = 0
		}
		/^== / { end_file(); next }
		{ if (n && $1 < prev) { back++; if (prev - $1 > bmax) bmax = prev - $1 }
		  if (!n || $1 < mn) mn = $1; if (!n || $1 > mx) mx = $1; prev = $1; n++ }
		END { end_file()
		      printf "%d files, %d start before the one before ended (by up to %d us), %d steps back in time inside files (up to %d us)\n",
		      files, ov, ovmax / 1000, back, bmax / 1000 }'
}

# events NAME: the event lines, but new sessions.
events() { grep '"type":"event"' "$out/$1.jsonl" | grep -v '"event":"session"'; }

# ---- 1. Half a minute with rotation and clean-up ----
p=$out/p1
mkdir -p "$p/algo" "$p/venue" "$p/keep/algo" "$p/keep/venue"
follower p1 10 "$p/algo" "$p/venue" --max-pending 32768
capd a algo "$p/algo"
c1a=$CAPD_PID
capd b venue "$p/venue"
c1v=$CAPD_PID
keeper "$p/algo" "$p/keep/algo" &
k1=$!
TL_PIDS+=("$k1")
keeper "$p/venue" "$p/keep/venue" &
k2=$!
TL_PIDS+=("$k2")
workload p1 30
rss=()
while kill -0 "$VPID" 2>/dev/null; do
	rss+=("$(awk '/^VmRSS:/ { print $2 }' "/proc/$FPID/status")")
	sleep 1.5
done
wait "$VPID" || fail "p1: venue exit $?: $(tail -3 "$out/p1.venue.log")"
wait "$APID" || fail "p1: algo exit $?: $(tail -3 "$out/p1.algo.log")"
sleep 1
kill -TERM "$c1a" "$c1v"
wait "$c1a" || fail "p1: capd (algo) exit $?"
wait "$c1v" || fail "p1: capd (venue) exit $?"
touch "$p/keep/algo.stop" "$p/keep/venue.stop"
wait "$k1" "$k2"
stop_follower p1
$T correlate --json algo="$p/keep/algo" venue="$p/keep/venue" > "$out/p1.off.json" \
	2> "$out/p1.off.err" || fail "p1: offline correlate exit $?: $(cat "$out/p1.off.err")"
for h in algo venue; do
	echo "p1: $h: $(ls "$p/keep/$h" | wc -l) files kept, $(cat "$p/keep/$h.removed" 2>/dev/null | wc -l) removed by the clean-up during the run"
	[ "$(cat "$p/keep/$h.removed" 2>/dev/null | wc -l)" -gt 0 ] || fail "p1: the clean-up removed no $h file"
done
jq -c '{md_published, orders_received}' "$out/p1.venue.json"
for h in algo venue; do
	echo "p1: $h: capd's file order: $(capd_order "$p/keep/$h")"
done
python3 $L/follow_check.py "$out/p1.off.json" "$out/p1.jsonl" > "$out/p1.check" ||
	fail "p1: the intervals do not add up to the offline correlate of the kept files"
cat "$out/p1.check"
jq -s -c '[.[] | select(.type == "host")] | group_by(.host)
	| map({host: .[0].host, packets: (map(.packets) | add), messages: (map(.messages) | add), intervals: length})' \
	"$out/p1.jsonl" | sed 's/^/p1: follow hosts /'
jq -c '[.inputs[] | {host, packets}]' "$out/p1.off.json" | sed 's/^/p1: offline hosts /'
events p1 | sed 's/^/p1: /'
grep -q '"event":"files_missed"' "$out/p1.jsonl" && fail "p1: files_missed: the follower fell behind the clean-up"
grep -q '"event":"damaged"' "$out/p1.jsonl" && fail "p1: a damaged file"
# RSS: flat after warming up.
n=${#rss[@]}
echo "p1: follower VmRSS (kB, every 1.5 s): ${rss[*]}"
if [ "$n" -lt 9 ]; then
	fail "p1: only $n RSS samples"
else
	t1=${rss[$((n / 3 - 1))]}
	max=0
	for v in "${rss[@]:$((n - n / 3))}"; do [ "$v" -gt "$max" ] && max=$v; done
	lim=$((t1 * 3 / 2 + 2048))
	echo "p1: RSS at the end of the first third $t1 kB, largest of the last third $max kB, limit 1.5 x $t1 + 2048 = $lim kB"
	[ "$max" -le "$lim" ] || fail "p1: RSS grew: $max kB > $lim kB"
fi

# ---- 2. capd killed on the venue, then restarted ----
p=$out/p2
STALL=2
mkdir -p "$p/algo" "$p/venue"
follower p2 $STALL "$p/algo" "$p/venue"
capd a algo "$p/algo"
c2a=$CAPD_PID
capd b venue "$p/venue"
c2v=$CAPD_PID
workload p2 30
# Mid-run: the venue's capd has finished two files, and hops are
# correlated both ways (10 s at most).
warm() {
	[ "$(ls "$p/venue"/*.pcapng 2>/dev/null | wc -l)" -ge 2 ] &&
		jq -n -R -e '[inputs | fromjson? // empty | select(.type == "hop" and .latency_ns.count > 0)
			| .from + ">" + .to] | unique | length == 2' "$out/p2.jsonl" > /dev/null
}
poll 10 warm || echo "p2: after 10 s, not both: $(ls "$p/venue" | tr '\n' ' ')"
# Killed once its newest file holds data: killed in the second before a new
# file's first flush, capd leaves an empty .part (the section header is
# still in its buffer), another case (tests/unit/test_capset.c).
for _ in $(seq 60); do
	f=$(ls -t "$p/venue"/*.part 2>/dev/null | head -1)
	[ -n "$f" ] && [ -s "$f" ] && break
	sleep 0.05
done
mark=$(grep -c . "$out/p2.jsonl")
kill -KILL "$c2v"
wait "$c2v" 2>/dev/null
echo "p2: capd on the venue killed after line $mark of the stream; left: $(ls -s "$p/venue" | tail -2 | tr '\n' ' ')"
# Stalled in the metrics and in the stream, 2 x --stall + 1 s at most.
stalled() {
	curl -s "http://127.0.0.1:$MPORT/metrics" > "$out/p2.metrics.stalled"
	grep -qx 'tapless_host_stalled{host="venue"} 1' "$out/p2.metrics.stalled" &&
		tail -n +$((mark + 1)) "$out/p2.jsonl" | grep '"event":"stalled"' | grep -q '"host":"venue"'
}
poll $((2 * STALL + 1)) stalled
grep '^tapless_host_stalled' "$out/p2.metrics.stalled" | sed 's/^/p2: while stalled: /'
grep -qx 'tapless_host_stalled{host="venue"} 1' "$out/p2.metrics.stalled" ||
	fail "p2: metrics do not say the venue stalled"
grep -qx 'tapless_host_stalled{host="algo"} 0' "$out/p2.metrics.stalled" ||
	fail "p2: metrics say the algo stalled"
# Where the stall came in the stream: intervals closed (venue host lines)
# after the last line before the kill.
tail -n +$((mark + 1)) "$out/p2.jsonl" |
	awk '/"type":"host"/ && /"host":"venue"/ { n++ }
	     /"event":"stalled"/ && /"host":"venue"/ { print n + 0; exit }' > "$out/p2.stall_at"
if [ -s "$out/p2.stall_at" ]; then
	echo "p2: \"stalled\" for the venue after $(cat "$out/p2.stall_at") interval(s) closed since the kill"
	[ "$(cat "$out/p2.stall_at")" -le 2 ] ||
		fail "p2: the stall came $(cat "$out/p2.stall_at") intervals after the kill, want at most 2"
else
	fail "p2: no \"stalled\" event for the venue after the kill"
fi
capd b venue "$p/venue"
c2v=$CAPD_PID
# No longer stalled in the metrics, 8 s at most.
resumed() {
	curl -s "http://127.0.0.1:$MPORT/metrics" > "$out/p2.metrics.resumed"
	grep -qx 'tapless_host_stalled{host="venue"} 0' "$out/p2.metrics.resumed"
}
poll 8 resumed
grep '^tapless_host_stalled\|^tapless_capture_restarts' "$out/p2.metrics.resumed" | sed 's/^/p2: after the restart: /'
grep -qx 'tapless_host_stalled{host="venue"} 0' "$out/p2.metrics.resumed" ||
	fail "p2: metrics still say the venue stalled after capd came back"
# after_resumed: hops after "resumed", per direction, into $out/p2.after;
# true once both directions have counted some.
after_resumed() {
	awk '/"event":"resumed"/ && /"host":"venue"/ { on = 1; next }
	     on && /"type":"hop"/ { print }' "$out/p2.jsonl" |
		jq -n -R -c '[inputs | fromjson? // empty] | group_by(.from + ">" + .to)
			| map({hop: (.[0].from + ">" + .[0].to), intervals: length, count: (map(.latency_ns.count) | add)})' \
		> "$out/p2.after"
	jq -e 'length == 2 and all(.count > 0)' "$out/p2.after" > /dev/null
}
# The workload ends once hops are correlated again both ways (15 s at
# most; the venue's 30 s end it otherwise): the algo, stopped, logs out
# and both exit 0.
poll 15 after_resumed
kill -TERM "$APID" 2>/dev/null
wait "$VPID" || fail "p2: venue exit $?: $(tail -3 "$out/p2.venue.log")"
wait "$APID" || fail "p2: algo exit $?: $(tail -3 "$out/p2.algo.log")"
# Quiet links, capd alive: heartbeats, no stall.
quiet=$(grep -c . "$out/p2.jsonl")
sleep $((2 * STALL + 1))
curl -s "http://127.0.0.1:$MPORT/metrics" > "$out/p2.metrics.quiet"
grep '^tapless_host_stalled\|^tapless_data_age' "$out/p2.metrics.quiet" | sed 's/^/p2: quiet: /'
tail -n +$((quiet + 1)) "$out/p2.jsonl" | grep '"event":"stalled"' &&
	fail "p2: a quiet host whose capd runs on was reported stalled"
grep -q '^tapless_host_stalled{host="venue"} 0$' "$out/p2.metrics.quiet" &&
	grep -q '^tapless_host_stalled{host="algo"} 0$' "$out/p2.metrics.quiet" ||
	fail "p2: metrics say a quiet host stalled"
kill -TERM "$c2a" "$c2v"
wait "$c2a" "$c2v"
stop_follower p2
events p2 | sed 's/^/p2: /'
for e in stalled resumed restart; do
	grep '"type":"event"' "$out/p2.jsonl" | grep "\"event\":\"$e\"" | grep -q '"host":"venue"' ||
		fail "p2: no \"$e\" event for the venue"
done
grep '"type":"event"' "$out/p2.jsonl" | grep '"host":"algo"' | grep -q '"event":"stalled"' &&
	fail "p2: the algo, whose capd ran on, was reported stalled"
# Correlation resumed: hops counted in the intervals after "resumed".
awk '/"event":"resumed"/ && /"host":"venue"/ { on = 1; next }
     on && /"type":"hop"/ { print }' "$out/p2.jsonl" |
	jq -s -c 'group_by(.from + ">" + .to) | map({hop: (.[0].from + ">" + .[0].to), intervals: length, count: (map(.latency_ns.count) | add)})' > "$out/p2.after"
echo "p2: hops after resumed: $(cat "$out/p2.after")"
jq -e 'length == 2 and all(.count > 0)' "$out/p2.after" > /dev/null ||
	fail "p2: hops not correlated both ways after the venue's capd came back"

[ "$fails" -eq 0 ]
