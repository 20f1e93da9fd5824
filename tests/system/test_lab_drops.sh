#!/bin/bash
# tapless lab with a capture host that drops frames (issue 30): the algo's
# tapless-capd runs with the smallest ring (--algo-capd-buffer 1024) and is
# stopped for half a second in the middle of the run through the switch,
# as a busy capture host stalls; the kernel drops what its ring cannot
# hold, while the hosts go on trading.
#   - correlate says what the capture lost: the algo's capture_drops > 0
#     (a run without drops says "dropped none": the test fails then, the
#     case not having run);
#   - every tick_to_trade sample stays within what the switch emulator saw
#     on the algo's link for the same BUY (lab_t2t_check.py): no order is
#     paired with a bid from before a hole in the capture;
#   - orders that could not be measured are counted (trigger_lost) and
#     their flows named (capture_losses), or none was affected.
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ "$(id -u)" -ne 0 ]; then
	echo "lab_drops: skipped: needs root for network namespaces"
	exit 0
fi
out=$(mktemp -d /tmp/tapless-labdrops.XXXXXX)
export TAPLESS_LAB_STATE=$out/state
lab=""
finish() {
	[ -n "$lab" ] && kill "$lab" 2>/dev/null && wait "$lab" 2>/dev/null
	bin/tapless lab down --all > /dev/null 2>&1
	if [ "${TL_KEEP:-0}" = 1 ]; then echo "lab_drops: kept $out"; else rm -rf "$out"; fi
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
r=$out/run
RATE=20000

bin/tapless lab run --output "$r" --rates $RATE --duration 4 --cal-duration 0 --no-report --clocks system \
	--algo-capd-buffer 1024 > "$out/run.out" 2> "$out/run.log" &
lab=$!
# The run through the switch: stall the algo's capd a second into it.
for _ in $(seq 600); do
	grep -q "through switch" "$out/run.log" && break
	kill -0 "$lab" 2>/dev/null || break
	sleep 0.1
done
sleep 1.2
capd=$(pgrep -f "tapless-capd -i sw0 .*-H algo" | head -1)
if [ -n "$capd" ]; then
	kill -STOP "$capd"
	sleep 0.5
	kill -CONT "$capd"
else
	fail "the algo's capd of the switch run was not found: $(tail -3 "$out/run.log")"
fi
wait "$lab"
rc=$?
lab=""
[ "$rc" -eq 0 ] || { fail "lab run exit $rc: $(tail -5 "$out/run.log")"; exit 1; }
d=$r/rate-$RATE
j=$d/correlate.json
drops=$(jq '.inputs[] | select(.host == "algo") | .capture_drops' "$j")
echo "lab_drops: the algo's capture dropped ${drops:-?} frames (correlate's inputs)"
[ "${drops:-null}" != null ] && [ "$drops" -gt 0 ] ||
	fail "no capture drops at the algo (capture_drops ${drops:-?}): the case did not run"
python3 tests/system/lib/lab_t2t_check.py "$d/switch/swemu/algo.pcapng" \
	"$(ls "$d"/switch/algo/*.pcapng | head -1)" "$d/samples.txt" 198.18.1.2 ||
	fail "tick_to_trade outside what the switch saw"
jq -r '.unmatched.hosts[] | select(.host == "algo") |
	"lab_drops: trigger_lost \(.trigger_lost), capture_losses \([.capture_losses[] | {flow, holes, samples_affected}])"' "$j"
jq -e '.unmatched.hosts[] | select(.host == "algo") |
	([.capture_losses[].samples_affected] | add // 0) + .trigger_lost_waiting ==
	.trigger_lost.tick_to_trade + .trigger_lost.fill_to_sell' "$j" > /dev/null ||
	fail "trigger_lost not accounted for by capture_losses"
[ "$fails" -eq 0 ] && echo "lab_drops: ok"
[ "$fails" -eq 0 ]
