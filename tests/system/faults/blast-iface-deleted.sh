#!/bin/bash
# blast-iface-deleted (issue 17, item 6): the interface blast sends on (-i,
# packet socket) is deleted under it. blast used to retry forever at 100 %
# CPU; it must give up within a few seconds, non-zero, saying why.
set -u
. scripts/netns.sh
tl_setup blast-iface-deleted 198.18.44
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
hz=$(getconf CLK_TCK)

# 60 s at 2000/s: far longer than the test waits.
tl_bg a build/tools/blast -i "$TL_IF_A" 198.18.44.2 9330 2000 60 \
	> "$out/blast.out" 2> "$out/blast.err"
b=$TL_LAST_PID
sleep 0.5
ip -n "$(tl_ns a)" link del "$TL_IF_A"
start=$(date +%s%N)
t0=$(ticks "$b")
t1=$t0
for _ in $(seq 100); do
	v=$(ticks "$b")
	[ -n "$v" ] && t1=$v
	kill -0 "$b" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$b" 2>/dev/null; then
	fail "blast still sending 10 s after its interface was deleted"
	kill "$b"
fi
wait "$b"
rc=$?
secs=$(( ($(date +%s%N) - start) / 1000000 ))
cpu=$(( (${t1:-0} - ${t0:-0}) * 100000 / (hz * (secs > 0 ? secs : 1)) ))
[ "$rc" -ne 0 ] || fail "blast exited 0 although it could not send"
grep -q "giving up" "$out/blast.err" || fail "no message: $(cat "$out/blast.err")"
[ "$cpu" -lt 20 ] || fail "blast used $cpu % of a CPU while failing"
cat "$out/blast.err"
echo "blast: gave up after $secs ms, exit $rc, $cpu % CPU while failing" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
