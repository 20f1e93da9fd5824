#!/bin/bash
# syncd-two-instances (issue 17 item 4): a second tapless-syncd given the
# run_dir of a running one (its own control socket and journal) must refuse
# to start, naming the running one's pid and configuration, and must leave
# the first one's generated ptp4l configuration and sockets alone. Before
# the fix it overwrote them: the first instance lost its ptp4l's management
# socket and, when the second stopped, its configuration file. An instance
# with a run_dir of its own runs side by side (here in the peer namespace,
# as the lab does).
set -u
. scripts/netns.sh
command -v ptp4l >/dev/null || { echo "syncd-two-instances: skipped: no ptp4l"; exit 77; }
command -v jq >/dev/null || { echo "syncd-two-instances: skipped: no jq"; exit 77; }
tl_setup syncd-two-instances 198.18.41
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# conf NAME IFACE ROLE RUN_DIR [JOURNAL_OF [SOCKET_OF]]: the journal
# (directory and host name) and control socket are NAME's unless given.
conf() {
	local j=${5:-$1} k=${6:-$1}
	mkdir -p "$out/$1"
	cat > "$out/$1/tapless.conf" <<CONF
[global]
journal_dir $out/$j/journal
control_socket $out/$k/syncd.sock
run_dir $4
hostname $j
free_running 1
sample_interval 250
sync_threshold 200000
[$2]
role $3
sync_interval -3
announce_interval -2
delay_req_interval -3
CONF
}
st() { tl_exec "$1" bin/tapless status --json --socket "$out/$2/syncd.sock" 2>/dev/null; }
wait_for() {	# NS NAME SECONDS JQ
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		st "$1" "$2" > "$out/$2.status"
		[ "$(jq -r "$4" "$out/$2.status" 2>/dev/null)" = true ] && return 0
		sleep 0.2
	done
	return 1
}

conf A "$TL_IF_A" server "$out/run"
conf B "$TL_IF_A" server "$out/run"
conf C "$TL_IF_B" client "$out/run-c"
conf D "$TL_IF_A" server "$out/run-d" A	# A's journal
conf E "$TL_IF_A" server "$out/run-e" E A	# A's control socket

tl_bg a bin/tapless-syncd -f "$out/A/tapless.conf" -l info 2> "$out/A.log"
a_pid=$TL_LAST_PID
wait_for a A 20 '.clocks[0].state == "MASTER" and .clocks[0].in_sync' ||
	fail "A: not master within 20 s: $(cat "$out/A.status")"
a_ptp4l=$(jq '.clocks[0].ptp4l.pid' "$out/A.status")
cfg_sum=$(md5sum < "$out/run/ptp4l-sys.cfg")

# B on A's run_dir: refused at once, naming A.
start=$(date +%s%N)
timeout 10 ip netns exec "$(tl_ns a)" bin/tapless-syncd -f "$out/B/tapless.conf" \
	> "$out/B.out" 2> "$out/B.log"
b_rc=$?
b_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $b_rc -ne 0 ] && [ $b_rc -ne 124 ] || fail "B: exit $b_rc, want a refusal (non-zero, not a timeout)"
grep -q "pid $a_pid\b" "$out/B.log" && grep -q "$out/A/tapless.conf" "$out/B.log" ||
	fail "B: message does not name A's pid $a_pid and config: $(cat "$out/B.log")"
echo "B said: $(cat "$out/B.log")"

# A untouched: same ptp4l, same configuration file, still answering and
# in sync a few samples later.
[ -f "$out/run/ptp4l-sys.cfg" ] && [ "$(md5sum < "$out/run/ptp4l-sys.cfg")" = "$cfg_sum" ] ||
	fail "A: its ptp4l configuration was changed or removed"
[ -S "$out/run/ptp4l-sys.sock" ] || fail "A: ptp4l's socket is gone"
sleep 1.5
wait_for a A 5 ".clocks[0].ptp4l.pid == $a_ptp4l and .clocks[0].in_sync and
	.clocks[0].state == \"MASTER\" and (.alarms | length) == 0" ||
	fail "A: disturbed by B: $(cat "$out/A.status")"
grep -q " event - start " "$out/B/journal/B.journal" 2>/dev/null &&
	fail "B: journalled a start"

# D (A's journal) and E (A's control socket), run_dirs of their own:
# refused too, naming A; A's journal has no line of theirs.
for x in D E; do
	timeout 10 ip netns exec "$(tl_ns a)" bin/tapless-syncd -f "$out/$x/tapless.conf" \
		> "$out/$x.out" 2> "$out/$x.log"
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$x: exit $rc, want a refusal"
	grep -q "pid $a_pid\b" "$out/$x.log" && grep -q "$out/A/tapless.conf" "$out/$x.log" ||
		fail "$x: message does not name A: $(cat "$out/$x.log")"
	echo "$x said: $(cat "$out/$x.log")"
done
grep -q "/[DE]/tapless.conf" "$out/A/journal/A.journal" && fail "A's journal has D's or E's lines"
[ -S "$out/A/syncd.sock" ] || fail "A's control socket is gone"

# C with a run_dir of its own runs beside A.
tl_bg b bin/tapless-syncd -f "$out/C/tapless.conf" -l info 2> "$out/C.log"
c_pid=$TL_LAST_PID
wait_for b C 30 '.clocks[0].ptp4l.running and .clocks[0].gm != null' ||
	fail "C: not running beside A: $(cat "$out/C.status")"
wait_for a A 5 ".clocks[0].ptp4l.pid == $a_ptp4l and .clocks[0].in_sync" ||
	fail "A: disturbed by C: $(cat "$out/A.status")"
[ "$(sed -n 1p "$out/run/tapless-syncd.pid")" = "$a_pid" ] ||
	fail "A's pid file: $(cat "$out/run/tapless-syncd.pid" 2>&1)"
# A SIGHUP moving A into C's run_dir is refused, A keeps running as it
# was; one moving it to a free run_dir moves it, and the old one is left
# empty.
p0=$(jq '.clocks[0].ptp4l.pid' "$out/A.status")
sed -i "s|^run_dir .*|run_dir $out/run-c|" "$out/A/tapless.conf"
kill -HUP "$a_pid"
sleep 1
grep -q " event - reload_fail .*run_dir $out/run-c is in use by another tapless-syncd, pid $c_pid" \
	"$out/A/journal/A.journal" || fail "A: reload into C's run_dir not refused"
wait_for a A 5 ".clocks[0].ptp4l.pid == $p0" || fail "A: refused reload restarted ptp4l"
sed -i "s|^run_dir .*|run_dir $out/run2|" "$out/A/tapless.conf"
kill -HUP "$a_pid"
wait_for a A 20 ".clocks[0].ptp4l.running and .clocks[0].ptp4l.pid != $p0" ||
	fail "A: not moved to run2: $(cat "$out/A.status")"
[ "$(sed -n 1p "$out/run2/tapless-syncd.pid" 2>/dev/null)" = "$a_pid" ] && [ -f "$out/run2/ptp4l-sys.cfg" ] ||
	fail "A: run2 lacks its pid file or config: $(ls "$out/run2" 2>&1)"
[ -z "$(ls -A "$out/run")" ] || fail "A: old run_dir not emptied: $(ls "$out/run")"
kill -TERM "$c_pid"
wait "$c_pid"
[ -f "$out/run2/ptp4l-sys.cfg" ] || fail "C's stop removed A's configuration"
[ ! -e "$out/run-c/ptp4l-sys.cfg" ] && [ ! -e "$out/run-c/tapless-syncd.pid" ] ||
	fail "C left its files behind: $(ls "$out/run-c")"
kill -TERM "$a_pid"
wait "$a_pid"
a_rc=$?
[ $a_rc -eq 0 ] || fail "A: exit $a_rc"
[ ! -e "$out/run2/tapless-syncd.pid" ] && [ ! -e "$out/A/journal/.A.journal.lock" ] &&
	[ ! -e "$out/A/syncd.sock.lock" ] || fail "A left a lock file"

echo "second syncd on one run_dir: exit $b_rc after $b_ms ms, A's ptp4l and config kept; on A's journal or control socket: refused; other run_dir side by side: ok" \
	> "${FAULT_SUMMARY:-/dev/null}"
[ $fails -eq 0 ] && echo "syncd-two-instances: ok" && exit 0
exit 1
