#!/bin/bash
# capd-iface-deleted (issue 17, item 6): the captured veth is deleted. capd
# closes it and says so once (no log flood), uses ~no CPU while it is gone
# (it spun at ~70-90 % of a core), captures again when a link of the same
# name comes back, and exits non-zero once no interface has come back
# within --iface-grace.
set -u
. scripts/netns.sh
tl_setup capd-iface-deleted 198.18.43
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)
# ready LOG: wait (5 s at most) for capd to log "capturing on" (its
# interface open, its filter set: what it receives now is captured).
ready() {
	for _ in $(seq 50); do grep -q "capturing on" "$1" && return 0; sleep 0.1; done
	return 1
}

mkdir "$out/cap"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/cap" --iface-grace 6 \
	udp port 9320 or udp port 9321 2> "$out/capd.log"
capd=$TL_LAST_PID
ready "$out/capd.log" || fail "capd did not start: $(cat "$out/capd.log")"
tl_exec a build/tools/blast 198.18.43.2 9320 1000 0.2 > /dev/null
sleep 0.3

# 1. Deleted: bounded CPU and log lines, still running.
ip -n "$(tl_ns b)" link del "$TL_IF_B"
sleep 0.5
t0=$(ticks "$capd")
sleep 3
t1=$(ticks "$capd")
cpu=$(( (t1 - t0) * 100 / (3 * hz) ))
lines=$(wc -l < "$out/capd.log")
kill -0 "$capd" 2>/dev/null || fail "capd exited while the grace period ran"
[ "$cpu" -lt 5 ] || fail "capd used $cpu % of a CPU while its interface was gone"
[ "$lines" -lt 20 ] || fail "$lines log lines while the interface was gone"
grep -q "interface removed" "$out/capd.log" || fail "the removal was not logged"

# 2. Back under the same name (within the grace): captured again.
ip link add "$TL_IF_B" netns "$(tl_ns b)" type veth peer name "$TL_IF_A" \
	netns "$(tl_ns a)"
ip -n "$(tl_ns a)" addr add 198.18.43.1/24 dev "$TL_IF_A"
ip -n "$(tl_ns b)" addr add 198.18.43.2/24 dev "$TL_IF_B"
ip -n "$(tl_ns a)" link set "$TL_IF_A" up
ip -n "$(tl_ns b)" link set "$TL_IF_B" up
for _ in $(seq 40); do grep -q "interface back" "$out/capd.log" && break; sleep 0.1; done
grep -q "interface back" "$out/capd.log" || fail "capd did not reopen the interface"
sleep 0.3
tl_exec a build/tools/blast 198.18.43.2 9321 1000 0.2 > "$out/blast2"
sent2=$(sed -n 's/^blast: sent \([0-9]*\) .*/\1/p' "$out/blast2")
sleep 0.3

# 3. Gone for good: capd exits non-zero within the grace, file whole.
ip -n "$(tl_ns b)" link del "$TL_IF_B"
for _ in $(seq 100); do kill -0 "$capd" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$capd" 2>/dev/null; then
	fail "capd still running 10 s after its only interface was deleted"
	kill "$capd"
fi
wait "$capd"
rc=$?
[ "$rc" -ne 0 ] || fail "capd exited 0 with no interface left"
grep -q "no interface left to capture" "$out/capd.log" || fail "no clear message at exit"
f=$(ls "$out"/cap/*.pcapng 2>/dev/null | head -1)
n1=0 n2=0
if [ -n "$f" ]; then
	n1=$(tshark -r "$f" -Y "udp.dstport == 9320" 2>/dev/null | wc -l)
	n2=$(tshark -r "$f" -Y "udp.dstport == 9321" 2>/dev/null | wc -l)
else
	fail "no whole file: $(ls "$out/cap")"
fi
[ "$n1" -gt 0 ] || fail "nothing captured before the removal"
[ "$n2" -eq "${sent2:-x}" ] || fail "after the return: $n2 of ${sent2:-?} frames captured"
cat "$out/capd.log"
echo "iface gone: capd $cpu % CPU, $lines log lines; back: $n2/${sent2:-?} frames; gone for good: exit $rc" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
