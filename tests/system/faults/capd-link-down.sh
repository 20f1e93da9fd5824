#!/bin/bash
# capd-link-down (issue 17, item 6): the captured link goes down for 2 s.
# capd logs it once each way and writes both events into the file (ISBs
# with a "tapless: link down/up" comment, tapless-pcapng(5)), so tapless
# correlate reports the gap as a link event, not a quiet market; tshark
# still reads the file.
set -u
. scripts/netns.sh
tl_setup capd-link-down 198.18.45
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# ready LOG: wait (5 s at most) for capd to log "capturing on" (its
# interface open, its filter set: what it receives now is captured).
ready() {
	for _ in $(seq 50); do grep -q "capturing on" "$1" && return 0; sleep 0.1; done
	return 1
}

mkdir "$out/cap"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/cap" udp port 9340 2> "$out/capd.log"
capd=$TL_LAST_PID
ready "$out/capd.log" || fail "capd did not start: $(cat "$out/capd.log")"
tl_exec a build/tools/blast 198.18.45.2 9340 1000 0.2 > /dev/null
ip -n "$(tl_ns b)" link set "$TL_IF_B" down
sleep 2
ip -n "$(tl_ns b)" link set "$TL_IF_B" up
sleep 0.5
tl_exec a build/tools/blast 198.18.45.2 9340 1000 0.2 > /dev/null
sleep 0.3
kill -TERM "$capd"
wait "$capd" || fail "capd exited $? after SIGTERM"
cat "$out/capd.log"
down=$(grep -c "link down" "$out/capd.log")
up=$(grep -c "link up" "$out/capd.log")
[ "$down" -eq 1 ] || fail "link down logged $down times, want 1"
[ "$up" -eq 1 ] || fail "link up logged $up times, want 1"
f=$(ls "$out"/cap/*.pcapng 2>/dev/null | head -1)
[ -n "$f" ] || { fail "no file"; f=/dev/null; }
n=$(tshark -r "$f" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "tshark reads no frame"
bin/tapless correlate "b=$f" > "$out/corr.out" 2>&1
cat "$out/corr.out"
grep -q "link down 1 times, up 1 times" "$out/corr.out" ||
	fail "tapless correlate does not report the link event"
echo "link down 2 s: logged $down/$up times, $n frames, correlate: $(grep -o 'link down [0-9]* times, up [0-9]* times' "$out/corr.out")" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
