#!/bin/bash
# syncd-capabilities (issue 17 item 8): tapless-syncd kept every root
# capability (CapEff 000001fffeffffff) while only its children's bounding
# set was cut. Now, once its sockets and files are open, its permitted set
# is what ptp4l and phc2sys need (CAP_SYS_TIME, CAP_NET_RAW, CAP_NET_ADMIN,
# CAP_NET_BIND_SERVICE: 0x2003400, as tapless-syncd(8) says) and its
# effective set is empty; the children still get the kept set, a ptp4l
# killed with SIGKILL is still restarted with it, and a metrics_port below
# 1024 given on SIGHUP is still bound.
set -u
. scripts/netns.sh
for t in ptp4l jq curl; do
	command -v $t >/dev/null || { echo "syncd-capabilities: skipped: no $t"; exit 77; }
done
tl_setup syncd-capabilities 198.18.44
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
want=0000000002003400
cat > "$out/tapless.conf" <<CONF
[global]
journal_dir $out/journal
control_socket $out/syncd.sock
run_dir $out/run
hostname a
free_running 1
sample_interval 250
[$TL_IF_A]
role server
CONF
tl_bg a bin/tapless-syncd -f "$out/tapless.conf" -l info 2> "$out/syncd.log"
pid=$TL_LAST_PID
st() { tl_exec a bin/tapless status --json --socket "$out/syncd.sock" 2>/dev/null; }
wait_for() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		st > "$out/status"
		[ "$(jq -r "$2" "$out/status" 2>/dev/null)" = true ] && return 0
		sleep 0.2
	done
	return 1
}
cap() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

wait_for 20 '.clocks[0].ptp4l.running' || { fail "ptp4l not running: $(cat "$out/status" "$out/syncd.log")"; exit 1; }
eff=$(cap "$pid" CapEff); prm=$(cap "$pid" CapPrm); bnd=$(cap "$pid" CapBnd)
echo "syncd: CapEff $eff CapPrm $prm CapBnd $bnd"
[ "$eff" = 0000000000000000 ] || fail "syncd CapEff $eff, want 0000000000000000"
[ "$prm" = $want ] || fail "syncd CapPrm $prm, want $want"
[ "$bnd" = $want ] || fail "syncd CapBnd $bnd, want $want"
p1=$(jq '.clocks[0].ptp4l.pid' "$out/status")
c1=$(cap "$p1" CapEff)
echo "ptp4l $p1: CapEff $c1"
[ "$c1" = $want ] || fail "ptp4l CapEff $c1, want $want"

# Supervision survives the drop: kill -9, restart, same capabilities.
kill -9 "$p1"
wait_for 20 ".clocks[0].ptp4l.running and .clocks[0].ptp4l.pid != $p1 and
	.clocks[0].ptp4l.restarts == 1" || fail "ptp4l not restarted: $(cat "$out/status")"
p2=$(jq '.clocks[0].ptp4l.pid' "$out/status")
c2=$(cap "$p2" CapEff 2>/dev/null)
echo "restarted ptp4l $p2: CapEff $c2"
[ "$c2" = $want ] || fail "restarted ptp4l CapEff $c2, want $want"
wait_for 10 ".clocks[0].state == \"MASTER\" and .clocks[0].in_sync" ||
	fail "not back to MASTER after the restart: $(cat "$out/status")"

# A privileged metrics port given on SIGHUP is bound after the drop.
echo "metrics_port 919" > "$out/m.conf"
sed -i "/^\[global\]/r $out/m.conf" "$out/tapless.conf"
kill -HUP "$pid"
ok=0
for _ in $(seq 50); do
	tl_exec a curl -s -m 2 http://127.0.0.1:919/metrics 2>/dev/null |
		grep -q '^tapless_clock_in_sync' && { ok=1; break; }
	sleep 0.2
done
[ $ok -eq 1 ] || fail "metrics_port 919 not served after SIGHUP: $(tail -5 "$out/syncd.log")"
[ "$(cap "$pid" CapEff)" = 0000000000000000 ] || fail "CapEff after SIGHUP: $(cap "$pid" CapEff)"
wait_for 10 '.clocks[0].ptp4l.running' || fail "ptp4l not running after SIGHUP"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -eq 0 ] || fail "exit $rc after SIGTERM"

echo "syncd CapEff $eff CapPrm $prm CapBnd $bnd; ptp4l CapEff $c1, after kill -9 restart $c2" \
	> "${FAULT_SUMMARY:-/dev/null}"
[ $fails -eq 0 ] && echo "syncd-capabilities: ok" && exit 0
exit 1
