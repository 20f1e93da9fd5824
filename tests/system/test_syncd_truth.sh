#!/bin/bash
# tapless-syncd tells the truth (issue 31): a grandmaster host and a client
# on a bridge, real ptp4l with software stamps, the client free running
# (the namespaces share the machine's clock). The test breaks things on
# purpose and tests/system/lib/syncd_truth_check.py judges the client's
# journal and its status answers against what was done:
#   - start: no sample in sync on ptp4l's placeholder 0/0;
#   - Sync dropped by the bridge while Announce flows (a tc BPF filter,
#     tests/tools/ptp_drop.bpf.c): holdover with a bound that only grows,
#     then out of sync; never in sync on the stale offset;
#   - the grandmaster's daemon stopped, then started: holdover while it is
#     gone; after relock, in sync only on fresh measurements;
#   - ptp4l killed, SIGHUP reload: only measurements after count; the
#     reload journals the rules in force;
#   - ptp4l's management socket removed: an event, an alarm, ptp4l
#     restarted, and status never claims sync beside an alarm.
# TAPLESS_SYNCD=PATH runs another tapless-syncd (the "before" figures),
# with --report-only: the table is printed, nothing fails.
set -u
. scripts/netns.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "syncd_truth: skipped: needs root for network namespaces"
	exit 0
fi
SYNCD=${TAPLESS_SYNCD:-bin/tapless-syncd}
REPORT=
[ -n "${TAPLESS_SYNCD:-}" ] && REPORT=--report-only
BPF_OBJ=build/tools/ptp_drop.bpf.o
[ -e "$BPF_OBJ" ] || { echo "FAIL: $BPF_OBJ missing (make all with clang)"; exit 1; }
command -v ptp4l >/dev/null || { echo "FAIL: ptp4l missing (scripts/install-deps)"; exit 1; }
tl_init
TL_OUT=$(mktemp -d /tmp/tapless-truth.XXXXXX)
if [ "${TL_KEEP:-0}" = 1 ]; then
	trap 'tl_cleanup; echo "syncd_truth: kept $TL_OUT"' EXIT
else
	trap 'tl_cleanup; rm -rf "$TL_OUT"' EXIT
fi
tl_bridge sw 198.18.9 gm c1 || { echo "FAIL: syncd_truth: could not build the namespaces"; exit 1; }
out=$TL_OUT
fails=0
fail() { echo "FAIL: syncd_truth: $*"; fails=$((fails + 1)); }
# The bridge's port towards c1 (tl_bridge names it after the host's index).
c1_port="tl${TL_ID}b2"

. tests/system/lib/syncd_hosts.sh
# 40 ppm: a 6 s outage passes the threshold, so both holdover and its end
# are seen. (Not for another syncd, which may not know the key.)
drift=()
[ -z "$REPORT" ] && drift=("holdover_drift 40000")
syncd_conf gm server "${drift[@]}"
syncd_conf c1 client "${drift[@]}"

mark() { echo "$1 $(date +%s%N)" >> "$out/marks"; }
: > "$out/marks"

tl_bg gm "$SYNCD" -f "$out/gm/tapless.conf" 2> "$out/gm.log"
gm_pid=$TL_LAST_PID
tl_bg c1 "$SYNCD" -f "$out/c1/tapless.conf" -l info 2> "$out/c1.log"
c1_pid=$TL_LAST_PID
wait_for c1 40 '.clocks[0].in_sync' || fail "c1 not in sync within 40 s: $(cat "$out/c1.status")"
# ptp4l may still step out of sync just after its first good samples (a
# busy machine): the drop needs a clock that has stayed in sync, or no
# holdover can follow it.
steady=0
for _ in $(seq 150); do
	st c1 > "$out/c1.status" 2>/dev/null
	if [ "$(jq -r '.clocks[0].in_sync' "$out/c1.status" 2>/dev/null)" = true ]; then
		steady=$((steady + 1))
		[ $steady -ge 10 ] && break
	else
		steady=0
	fi
	sleep 0.2
done
[ $steady -ge 10 ] || fail "c1 never stayed in sync for 2 s: $(cat "$out/c1.status")"
# Status polled all along, for the agreement check.
( while :; do st c1 | jq -c . >> "$out/status.jsonl" 2>/dev/null; sleep 0.3; done ) &
TL_PIDS+=("$!")
sleep 1

# A. Sync dropped by the bridge for 6 s.
tl_exec sw tc qdisc add dev "$c1_port" clsact &&
	tl_exec sw tc filter add dev "$c1_port" egress bpf da obj "$BPF_OBJ" sec tc ||
	fail "cannot attach the Sync filter"
mark drop_start
# The text while in holdover: it lasts as long as the bound takes to grow
# past the threshold, under a second when the last one was near it.
: > "$out/drop.text"
for _ in $(seq 15); do
	tl_exec c1 bin/tapless status --socket "$out/c1/syncd.sock" > "$out/drop.now" 2>&1
	grep -q "(holdover)" "$out/drop.now" && { cp "$out/drop.now" "$out/drop.text"; break; }
	sleep 0.1
done
sleep 2
st c1 > "$out/drop.status"
sleep 3
tl_exec sw tc filter del dev "$c1_port" egress
mark drop_end
if [ -z "$REPORT" ]; then
	jq -e '.clocks[0].in_sync == false and (.alarms | map(test("holdover|not in sync")) | any)' \
		"$out/drop.status" >/dev/null || fail "status during the drop: $(jq -c '{in_sync, alarms}' "$out/drop.status")"
	grep -q "^clock sys .*in sync no (holdover)" "$out/drop.text" &&
		grep -q "holdover for [0-9.]* s" "$out/drop.text" ||
		fail "status text during the drop never showed holdover: $(cat "$out/drop.now")"
fi
wait_for c1 30 '.clocks[0].in_sync' || fail "c1 not back in sync after the drop"

# B. The grandmaster's daemon stopped for 4 s, then started again.
mark gm_stop
kill -TERM "$gm_pid"; wait "$gm_pid" 2>/dev/null
sleep 4
tl_bg gm "$SYNCD" -f "$out/gm/tapless.conf" 2>> "$out/gm.log"
gm_pid=$TL_LAST_PID
mark gm_start
wait_for c1 40 '.clocks[0].in_sync' || fail "c1 not back in sync after the grandmaster returned"

# C. c1's ptp4l killed.
sleep 1
mark kill
kill -9 "$(jq '.clocks[0].ptp4l.pid' "$out/c1.status")"
wait_for c1 40 '.clocks[0].in_sync and .clocks[0].ptp4l.restarts >= 1' || fail "c1 not back after kill -9"

# D. SIGHUP with a changed threshold.
sleep 1
sed -i 's/^sync_threshold .*/sync_threshold 200001/' "$out/c1/tapless.conf"
mark reload
kill -HUP "$c1_pid"
sleep 1
wait_for c1 40 '.clocks[0].in_sync' || fail "c1 not back in sync after the reload"

# E. ptp4l's management socket removed.
sleep 1
mark sock_rm
rm -f "$out/c1/run/ptp4l-sys.sock"
sleep 2.5
st c1 > "$out/sock.status"
wait_for c1 40 '.clocks[0].in_sync and .clocks[0].ptp4l.restarts >= 1' ||
	[ -n "$REPORT" ] || fail "c1: ptp4l not restarted and back in sync after its socket went: $(jq -c '{alarms, events}' "$out/c1.status")"

for p in $c1_pid $gm_pid; do kill -TERM "$p"; wait "$p" 2>/dev/null; done
TL_PIDS=("${TL_PIDS[@]}")
python3 tests/system/lib/syncd_truth_check.py "$out/c1/journal/c1.journal" \
	"$out/marks" "$out/status.jsonl" $REPORT || fails=$((fails + 1))

# The journal read back: the holdover samples counted apart from in sync.
if [ -z "$REPORT" ]; then
	j=$out/c1/journal/c1.journal
	want=$(grep -Ec " sample sys .* h [0-9-]+( [0-9-]+)?$" "$j")
	got=$(tl_exec c1 bin/tapless status --json "$j" | jq '.journals[0].clocks[0].windows.all.holdover')
	[ "$want" -gt 0 ] && [ "$got" = "$want" ] ||
		fail "tapless status on the journal: holdover $got, the journal has $want"
fi

[ $fails -eq 0 ] && echo "syncd_truth: all checks passed"
[ $fails -eq 0 ]
