#!/bin/bash
# tapless-stamp where programs do awkward things to their sockets; each
# case checks what the program sees itself and what reaches capd:
# - fork and exec: a child that inherits a stamped socket and keeps
#   sending is stamped; so is a program executed with it (adopted);
# - descriptor reuse: a socket closed and another opened on the same
#   number is stamped as itself (a stale state would key its stamps to
#   the old connection: capd would find no frame for them);
# - a program with no privilege (nobody, no capability) is stamped, its
#   TCP keys anchored all the same;
# - a program that stamps its socket itself (SO_TIMESTAMPING, OPT_ID) and
#   reads its own error queue gets exactly its own stamps, with its own
#   keys, TCP and UDP: the library steps aside;
# - real errors still reach the program as they come: a reset with stamps
#   queued (poll and epoll say POLLERR, recv ECONNRESET), an ICMP refusal
#   on a connected UDP socket (POLLERR, then ECONNREFUSED);
# - capd killed mid-run: the program carries on unharmed, the stamps
#   meanwhile are dropped and counted;
# - a program that sends, then goes idle (makes no call at all): the
#   stamps its sends queued for capd all reach capd's socket while it is
#   idle, within a few SHIM_HAND_MS (10 ms), not at its exit, and in the
#   order of the sends (the reaper thread writes them; shim_hand.c).
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
tl_setup stampedge 198.18.61
out=$TL_OUT
py=$(python3 -c 'import sys; print(sys.executable)')
apps=tests/system/lib/stamp_apps.py
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
srv=198.18.61.2

stamped() {	# NAME CMD...: in a, under tapless-stamp (see test_stamp.sh)
	local name=$1
	shift
	tl_exec a bin/tapless-stamp --tx-socket "$out/tx.sock" \
		--log-file "$out/$name.log" --log-level info -- "$@" \
		> "$out/$name.out" 2> "$out/$name.err"
}
summary() {	# NAME FIELD [PID]
	grep -h "${3:-}\]: summary" "$out/$1.log" 2>/dev/null | grep -o "[0-9]* $2" |
		awk '{ n += $1 } END { print n + 0 }'
}
wait_line() {	# FILE TEXT
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
capd_start() {	# LOG
	rm -f "$out/tx.sock"
	tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out/cap" -H a -l info --tx-group nogroup \
		--tx-socket "$out/tx.sock" --reorder-ms 500 "portrange 9310-9319" 2> "$1"
	capd=$TL_LAST_PID
	for _ in $(seq 100); do [ -S "$out/tx.sock" ] && break; sleep 0.05; done
	[ -S "$out/tx.sock" ] || fail "capd did not start: $(cat "$1")"
}
keyed() {	# LOG FIELD: from capd's "keyed stamps: N taken, M joined ..."
	grep 'keyed stamps:' "$1" | sed -n "s/.*[^0-9]\([0-9][0-9]*\) $2.*/\1/p"
}

mkdir -p "$out/cap"
capd_start "$out/capd.log"
tl_bg b "$py" $apps sink 9310 9311 9312 > "$out/sink.out" 2>&1
tl_bg b "$py" $apps rst-server 9313 > "$out/rst-srv.out" 2>&1
tl_bg b socat -u UDP-RECV:9314 OPEN:/dev/null
wait_line "$out/sink.out" listening && wait_line "$out/rst-srv.out" listening ||
	fail "servers did not start"

# -- fork, then exec: parent, child and executed program each send 200.
stamped fork "$py" $apps fork $srv 9310 200 || fail "fork: $(cat "$out/fork.err")"
grep -q "fork ok 600" "$out/fork.out" || fail "fork: $(cat "$out/fork.out" "$out/fork.err")"
np=$(grep -c 'summary' "$out/fork.log")
[ "$np" -eq 3 ] || fail "fork: $np summaries, want 3 (the child, the parent before exec, the program it executed)"
grep 'summary' "$out/fork.log" | while read -r line; do
	echo "$line" | grep -q " 0 handed" && echo "FAIL: fork: a process handed nothing: $line"
done | grep FAIL && fails=$((fails + 1))
# Each process hands over on its own connection (a child writing on its
# parent's could cut into the parent's records).
for p in $(sed -n 's/^tapless-stamp\[\([0-9]*\)\].*/\1/p' "$out/fork.log" | sort -u); do
	grep -q "pid $p (uid" "$out/capd.log" || fail "fork: pid $p never connected to capd"
done
[ "$(summary fork adopted)" -eq 1 ] || fail "fork: the executed program did not adopt the socket: $(cat "$out/fork.log")"
wait_line "$out/sink.out" "sink 9310 60000" || fail "fork: sink: $(grep 9310 "$out/sink.out")"

# -- reuse: 200 on a socket to 9311, closed; 200 on a new one (same
# number) to 9312.
stamped reuse "$py" $apps reuse $srv 9311 9312 200 || fail "reuse: $(cat "$out/reuse.err")"
grep -q "reuse ok" "$out/reuse.out" || fail "reuse: $(cat "$out/reuse.out")"
[ "$(summary reuse 'stamped sockets')" -eq 2 ] || fail "reuse: $(grep summary "$out/reuse.log")"

# -- the program's own stamping, TCP and UDP.
stamped own "$py" $apps own $srv 9310 50 || fail "own: $(cat "$out/own.err")"
grep -q "own ok 50" "$out/own.out" || fail "own: $(cat "$out/own.out" "$out/own.err")"
stamped ownu "$py" $apps own-udp $srv 9314 50 || fail "own-udp: $(cat "$out/ownu.err")"
grep -q "own-udp ok 50" "$out/ownu.out" || fail "own-udp: $(cat "$out/ownu.out" "$out/ownu.err")"
for n in own ownu; do
	grep -q "stepped aside from 1 sockets (own-stamps 1)" "$out/$n.log" ||
		fail "$n: did not step aside: $(grep summary "$out/$n.log")"
done

# -- no privilege at all (nobody, no capability): TCP keys still anchor
# (the looped packets come back to an unprivileged socket) and every
# stamp joins its frame.
chmod 711 "$out"
: > "$out/nobody.log"
chmod 666 "$out/nobody.log"
tl_exec a setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c \
	'grep CapEff /proc/self/status; exec "$@"' sh \
	bin/tapless-stamp --tx-socket "$out/tx.sock" --log-level debug --log-file "$out/nobody.log" -- \
	/usr/bin/python3 $apps send $srv 9310 100 300 > "$out/nobody.out" 2>&1 ||
	fail "nobody: $(cat "$out/nobody.out")"
grep -q "CapEff:.*0000000000000000" "$out/nobody.out" || fail "nobody: has capabilities: $(cat "$out/nobody.out")"
grep -q "send ok 100" "$out/nobody.out" || fail "nobody: $(cat "$out/nobody.out")"
grep -q "anchored" "$out/nobody.log" || fail "nobody: TCP keys never anchored: $(grep -v ' key ' "$out/nobody.log")"
[ "$(summary nobody handed)" -ge 90 ] && [ "$(summary nobody dropped)" -eq 0 ] ||
	fail "nobody: $(grep summary "$out/nobody.log")"

# -- --mode hw on veth (no hardware stamps): armed, nothing comes, the
# program unaffected.
tl_exec a bin/tapless-stamp --tx-socket "$out/tx.sock" --mode hw --log-level info \
	--log-file "$out/hw.log" -- "$py" $apps send $srv 9310 50 100 > "$out/hw.out" 2>&1 ||
	fail "hw: $(cat "$out/hw.out")"
grep -q "send ok 50" "$out/hw.out" || fail "hw: $(cat "$out/hw.out")"
grep -q "50 sends on 1 stamped sockets.* 0 stamps read" "$out/hw.log" || fail "hw: $(cat "$out/hw.log")"

# -- real errors.
stamped rst "$py" $apps rst $srv 9313 || fail "rst: $(cat "$out/rst.err")"
grep -q "rst ok" "$out/rst.out" || fail "rst: $(cat "$out/rst.out" "$out/rst.err")"
[ "$(summary rst 'passed on')" -gt 0 ] || fail "rst: no POLLERR passed on: $(grep summary "$out/rst.log")"
stamped refused "$py" $apps refused $srv 9319 || fail "refused: $(cat "$out/refused.err")"
grep -q "refused ok" "$out/refused.out" || fail "refused: $(cat "$out/refused.out" "$out/refused.err")"

sleep 0.6
kill -TERM "$capd"
wait "$capd" || fail "capd exited $?"
handed_all=0
for n in fork reuse own ownu nobody hw rst refused; do handed_all=$((handed_all + $(summary $n handed))); done
taken=$(keyed "$out/capd.log" taken)
joined=$(keyed "$out/capd.log" joined)
none=$(keyed "$out/capd.log" 'found none')
dups=$(keyed "$out/capd.log" duplicates)
[ "${taken:-0}" -eq "$handed_all" ] || fail "capd took ${taken:-0} stamps, the programs handed $handed_all"
[ "${none:-1}" -eq 0 ] || fail "capd found no frame for ${none:-?} stamps: $(grep keyed "$out/capd.log")"
[ "$(( ${joined:-0} + ${dups:-0} ))" -eq "${taken:-0}" ] || fail "capd: $(grep keyed "$out/capd.log")"

# -- idle: 200 sends, then 1.5 s without a call; a stand-in for capd's
# socket notes when each record comes.
tl_bg a "$py" $apps txsink "$out/idle.sock" > "$out/txsink.out" 2>&1
wait_line "$out/txsink.out" listening || fail "idle: txsink did not start: $(cat "$out/txsink.out")"
tl_exec a bin/tapless-stamp --tx-socket "$out/idle.sock" --log-file "$out/idle.log" \
	--log-level info -- "$py" $apps idle $srv 9310 200 1.5 > "$out/idle.out" 2> "$out/idle.err" ||
	fail "idle: $(cat "$out/idle.err")"
grep -q "idle ok 200" "$out/idle.out" || fail "idle: $(cat "$out/idle.out" "$out/idle.err")"
sent=$(sed -n 's/^idle sent //p' "$out/idle.out")
handed=$(summary idle handed)
# Records that came more than 0.5 s after the last send (the program
# still idle for another second), and sequence numbers that went back.
read -r nrec late back < <(awk -v sent="${sent:-0}" '$1 == "rec" {
	n++; if ($2 > sent + 0.5) late++
	if (n > 1 && ($3 - prev + 4294967296) % 4294967296 >= 2147483648) back++
	prev = $3 } END { print n + 0, late + 0, back + 0 }' "$out/txsink.out")
[ "$handed" -ge 190 ] && [ "$(summary idle dropped)" -eq 0 ] ||
	fail "idle: $(grep summary "$out/idle.log")"
[ "$nrec" -eq "$handed" ] || fail "idle: capd's socket got $nrec records, the program handed $handed"
[ "$late" -eq 0 ] || fail "idle: $late of $nrec records came only when the program ended, not while it was idle"
[ "$back" -eq 0 ] || fail "idle: $back records out of the order of the sends"

# -- capd killed mid-run (in a fresh capture).
capd_start "$out/capd2.log"
tl_exec a bin/tapless-stamp --tx-socket "$out/tx.sock" --log-file "$out/long.log" -- \
	"$py" $apps long $srv 9310 3 > "$out/long.out" 2> "$out/long.err" &
lp=$!
sleep 1.5
kill -KILL "$capd"
wait "$capd" 2>/dev/null
wait "$lp" || fail "long: exited $?: $(cat "$out/long.err")"
grep -q "long ok" "$out/long.out" || fail "long: $(cat "$out/long.out" "$out/long.err")"
[ "$(summary long handed)" -gt 0 ] || fail "long: nothing handed before capd died: $(cat "$out/long.log")"
[ "$(summary long dropped)" -gt 0 ] || fail "long: no drop counted after capd died: $(cat "$out/long.log")"
[ -s "$out/long.err" ] && fail "long: $(cat "$out/long.err")"

[ "$fails" -eq 0 ] && echo "stamp edges: fork/exec, reuse, own stamping, reset, refusal, capd killed, idle:" \
	"capd joined ${joined:-0} of $handed_all handed, found none ${none:-0};" \
	"idle program: $nrec records, none late or out of order"
[ "$fails" -eq 0 ]
