#!/bin/bash
# capd-two-instances (issue 17 item 4): two tapless-capd on one output
# directory and prefix wrote files of the same names into each other; two
# started together on one --tx-socket path left by a dead daemon both
# found it stale, and the later unlinked the earlier's live socket. Each
# path now has a lock beside it (PATH.lock, DIR/PREFIX.lock): the second
# refuses to start and names the first's pid; a capd with a directory and
# socket of its own runs side by side. (Each wait is for capd to log
# "capturing on", past its locks, or to exit: 5 s at most.)
set -u
. scripts/netns.sh
tl_setup capd-two-instances 198.18.42
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
capd() { ip netns exec "$(tl_ns b)" bin/tapless-capd -i "$TL_IF_B" "$@"; }
alive() { kill -0 "$1" 2>/dev/null; }
up() { grep -q "capturing on" "$1"; }
# ready LOG PID: wait (5 s at most) until capd PID, logging to LOG, captures
# or has exited.
ready() {
	for _ in $(seq 50); do
		up "$1" && return 0
		alive "$2" || return 1
		sleep 0.1
	done
	return 1
}

# 1. One directory and prefix: the second is refused, naming the first.
mkdir -p "$out/w"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/w" -H h 2> "$out/a.log"
a=$TL_LAST_PID
ready "$out/a.log" "$a"
timeout 5 ip netns exec "$(tl_ns b)" bin/tapless-capd -i "$TL_IF_B" -w "$out/w" -H h 2> "$out/b.log"
b_rc=$?
[ $b_rc -ne 0 ] && [ $b_rc -ne 124 ] || fail "same prefix: second capd exit $b_rc, want a refusal"
grep -q "pid $a\b" "$out/b.log" || fail "same prefix: message does not name pid $a: $(cat "$out/b.log")"
echo "second capd said: $(cat "$out/b.log")"
alive "$a" || fail "the first capd died"

# 2. One --tx-socket path with a stale socket on it, two started at once,
# ten times: never both running once each captures or has given up.
both=0
for i in $(seq 10); do
	rm -f "$out/tx.sock" "$out/tx.sock.lock"
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$out/tx.sock"
	mkdir -p "$out/r$i-1" "$out/r$i-2"
	capd -w "$out/r$i-1" --tx-socket "$out/tx.sock" 2> "$out/r$i-1.log" & p1=$!
	capd -w "$out/r$i-2" --tx-socket "$out/tx.sock" 2> "$out/r$i-2.log" & p2=$!
	for _ in $(seq 50); do
		{ up "$out/r$i-1.log" || ! alive $p1; } && { up "$out/r$i-2.log" || ! alive $p2; } && break
		sleep 0.1
	done
	n=0; alive $p1 && n=$((n + 1)); alive $p2 && n=$((n + 1))
	[ $n -eq 2 ] && both=$((both + 1))
	[ $n -ge 1 ] || fail "round $i: neither capd runs: $(cat "$out/r$i-1.log" "$out/r$i-2.log")"
	kill -TERM $p1 $p2 2>/dev/null
	wait $p1 $p2 2>/dev/null
done
[ $both -eq 0 ] || fail "one --tx-socket: both capd running in $both of 10 rounds"

# 3. Side by side: directories and sockets of their own.
mkdir -p "$out/x" "$out/y"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/x" --tx-socket "$out/x.sock" 2> "$out/x.log"
x=$TL_LAST_PID
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/y" --tx-socket "$out/y.sock" 2> "$out/y.log"
y=$TL_LAST_PID
ready "$out/x.log" "$x"
ready "$out/y.log" "$y"
alive "$x" && alive "$y" || fail "side by side: $(cat "$out/x.log" "$out/y.log")"
kill -TERM "$x" "$y" "$a"
wait "$x"; x_rc=$?
wait "$y"; y_rc=$?
wait "$a"
[ $x_rc -eq 0 ] && [ $y_rc -eq 0 ] || fail "side by side: exits $x_rc $y_rc"
[ ! -e "$out/x.sock.lock" ] && [ ! -e "$out/x/$(hostname).lock" ] ||
	fail "locks left behind: $(ls "$out" "$out/x")"

echo "same prefix: second exit $b_rc naming the first; shared stale --tx-socket: both running in $both/10 rounds" \
	> "${FAULT_SUMMARY:-/dev/null}"
[ $fails -eq 0 ] && echo "capd-two-instances: ok" && exit 0
exit 1
