#!/bin/bash
# tapless-syncd in namespaces: a grandmaster host and two client hosts on a
# bridge, software stamps, every host free running (the namespaces share the
# machine's clock, which nothing here may touch).
#   - within 30 s the clients report the grandmaster's identity, their port
#     state and offsets in `tapless status --json` and in their journals;
#   - kill -9 of a client's ptp4l: restarted, the exit journalled, status
#     shows the alarm and then the recovery;
#   - SIGHUP with a changed file applies it; a broken file on SIGHUP keeps
#     the running configuration;
#   - link down/up journalled; metrics served on localhost, the clock
#     state LOCKED, grandmaster, class, port state, frequency, counters;
#   - a bad file exits 1 naming FILE:LINE and leaves no child behind;
#   - SIGTERM stops every ptp4l; the grandmaster's daemon runs under
#     valgrind and must end clean.
set -u
. scripts/netns.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "syncd: skipped: needs root for network namespaces"
	exit 0
fi
tl_init
TL_OUT=$(mktemp -d /tmp/tapless-syncd.XXXXXX)
if [ "${TL_KEEP:-0}" = 1 ]; then
	trap 'tl_cleanup; echo "syncd: kept $TL_OUT"' EXIT
else
	trap 'tl_cleanup; rm -rf "$TL_OUT"' EXIT
fi
tl_bridge sw 198.18.7 gm c1 c2 || { echo "FAIL: syncd: could not build the namespaces"; exit 1; }
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v ptp4l >/dev/null || { echo "FAIL: ptp4l missing (scripts/install-deps)"; exit 1; }

. tests/system/lib/syncd_hosts.sh
ptp4l_pids() { ip netns pids "$(tl_ns "$1")" | while read -r p; do
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = ptp4l ] && echo "$p"; done; }

syncd_conf gm server
syncd_conf c1 client
syncd_conf c2 client "metrics_port 19273"

# 0. A bad file: exit 1, FILE:LINE named, nothing started.
cp "$out/c1/tapless.conf" "$out/bad.conf"
echo "rol client" >> "$out/bad.conf"
tl_exec c1 bin/tapless-syncd -f "$out/bad.conf" 2> "$out/bad.err"
rc=$?
[ $rc -eq 1 ] || fail "bad config: exit $rc, want 1"
grep -q "bad.conf:$(wc -l < "$out/bad.conf"): unknown key 'rol'" "$out/bad.err" ||
	fail "bad config: message: $(cat "$out/bad.err")"
[ -z "$(ptp4l_pids c1)" ] || fail "bad config left a ptp4l running"
sed "s/^role client/role client\ntime_stamping hardware/" "$out/c1/tapless.conf" > "$out/hw.conf"
tl_exec c1 bin/tapless-syncd -f "$out/hw.conf" 2> "$out/hw.err"
[ $? -eq 1 ] && grep -q "hw.conf:[0-9]*: \[${TL_IF[c1]}\] time_stamping hardware" "$out/hw.err" ||
	fail "hardware on veth: $(cat "$out/hw.err")"
# --dry-run prints what ptp4l would get.
tl_exec c1 bin/tapless-syncd -f "$out/c1/tapless.conf" --dry-run > "$out/dry.txt" 2>&1 ||
	fail "dry run: $(cat "$out/dry.txt")"
grep -q "^hwts_filter  *full" "$out/dry.txt" && grep -q "^free_running  *1" "$out/dry.txt" &&
	grep -q "^uds_address  *$out/c1/run/ptp4l-sys.sock" "$out/dry.txt" ||
	fail "dry run output: $(cat "$out/dry.txt")"

# 1. Start: the grandmaster's daemon under valgrind.
tl_bg gm valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
	--error-exitcode=99 bin/tapless-syncd -f "$out/gm/tapless.conf" -l info \
	2> "$out/gm.log"
gm_pid=$TL_LAST_PID
tl_bg c1 bin/tapless-syncd -f "$out/c1/tapless.conf" -l info 2> "$out/c1.log"
c1_pid=$TL_LAST_PID
tl_bg c2 bin/tapless-syncd -f "$out/c2/tapless.conf" -l info 2> "$out/c2.log"
c2_pid=$TL_LAST_PID

wait_for gm 30 '.clocks[0].state == "MASTER" and .clocks[0].in_sync' ||
	fail "gm: not master within 30 s: $(cat "$out/gm.status")"
gm_id=$(jq -r '.clocks[0].identity' "$out/gm.status")
for h in c1 c2; do
	if wait_for $h 30 ".clocks[0].gm == \"$gm_id\" and
	    (.clocks[0].state == \"UNCALIBRATED\" or .clocks[0].state == \"SLAVE\") and
	    .clocks[0].offset_ns != null and .clocks[0].delay_ns != null and
	    .clocks[0].in_sync and .clocks[0].ports[0].state != null and
	    (.alarms | length) == 0"; then
		s=$out/$h.status
		echo "syncd: $h follows $gm_id: $(jq -c '.clocks[0] | {state, offset_ns, delay_ns, bound_ns}' "$s")"
		b=$(jq '.clocks[0].bound_ns' "$s")
		o=$(jq '.clocks[0].offset_ns | fabs' "$s")
		[ "$b" -ge "$o" ] || fail "$h: bound $b below |offset| $o"
		[ "$(jq '.clocks[0].stats["1min"].samples > 0' "$s")" = true ] ||
			fail "$h: no 1-minute statistics"
		[ "$(jq '.clocks[0] | .clock_state == "LOCKED" and
			.clock_class >= 6 and .clock_class <= 255 and
			.freq_adj_ppb != null and .clock_steps >= 0 and
			.delay_changes >= 0' "$s")" = true ] ||
			fail "$h: status PTP fields: $(jq -c '.clocks[0] | {clock_state, clock_class, freq_adj_ppb, clock_steps, delay_changes}' "$s")"
	else
		fail "$h: not following $gm_id within 30 s: $(cat "$out/$h.status")"
	fi
	j=$out/$h/journal/$h.journal
	grep -Eq "^[0-9]+ sample sys (UNCALIBRATED|SLAVE) -?[0-9]+ [0-9]+ .* $gm_id [0-9]+ s[02] 1 [0-9]+ [0-9]+$" "$j" ||
		fail "$h: no in-sync sample with the grandmaster in $j"
	grep -q " event sys port_state ${TL_IF[$h]} .*-> UNCALIBRATED" "$j" ||
		fail "$h: no port_state event in $j"
done
# The text form comes from the same printer.
# The clock's state line says what its sync line says at that moment (a
# free-running client may be out of sync for a sample): LOCKED when in
# sync, HOLDOVER in holdover, else FREERUN.
tl_exec c1 bin/tapless status --socket "$out/c1/syncd.sock" > "$out/c1.text"
want_state=FREERUN
grep -q "^clock sys .* in sync yes" "$out/c1.text" && want_state=LOCKED
grep -q "^clock sys .* (holdover)" "$out/c1.text" && want_state=HOLDOVER
grep -q "^clock sys  UNCALIBRATED\|^clock sys  SLAVE" "$out/c1.text" &&
	grep -Eq "^  $want_state  clock class [0-9]+  freq -?[0-9.]+ ppb  steps [0-9]+  path delay changes [0-9]+$" "$out/c1.text" ||
	fail "status text (want $want_state): $(cat "$out/c1.text")"

# 2. kill -9 of c1's ptp4l: alarm, restart, recovery.
old=$(jq '.clocks[0].ptp4l.pid' "$out/c1.status")
kill -9 "$old"
wait_for c1 10 '[.alarms[] | test("not running|not in sync|not answering")] | any' ||
	fail "c1: no alarm after kill -9: $(cat "$out/c1.status")"
wait_for c1 30 ".clocks[0].ptp4l.running and .clocks[0].ptp4l.pid != $old and
	.clocks[0].ptp4l.restarts == 1 and .clocks[0].in_sync and (.alarms | length) == 0" ||
	fail "c1: no recovery after kill -9: $(cat "$out/c1.status")"
j=$out/c1/journal/c1.journal
grep -q " event sys ptp4l_exit ptp4l-sys (pid $old) killed by signal 9" "$j" ||
	fail "c1: ptp4l_exit not journalled"
grep -q " event sys restart ptp4l-sys restarted" "$j" || fail "c1: restart not journalled"
[ "$(jq '[.events[] | select(.name == "ptp4l_exit")] | length' "$out/c1.status")" -ge 1 ] ||
	fail "c1: status does not list the exit event"

# 3. SIGHUP with a changed file: new ptp4l configuration and process.
old=$(jq '.clocks[0].ptp4l.pid' "$out/c2.status")
sed -i 's/^delay_req_interval -3/delay_req_interval -2/' "$out/c2/tapless.conf"
kill -HUP "$c2_pid"
wait_for c2 30 ".clocks[0].ptp4l.pid != $old and .clocks[0].in_sync" ||
	fail "c2: SIGHUP not applied: $(cat "$out/c2.status")"
grep -q "^logMinDelayReqInterval  *-2" "$out/c2/run/ptp4l-sys.cfg" ||
	fail "c2: regenerated ptp4l config lacks the change"
grep -q " event - reload " "$out/c2/journal/c2.journal" || fail "c2: reload not journalled"
# A broken file on SIGHUP: refused, the running configuration kept.
old=$(jq '.clocks[0].ptp4l.pid' "$out/c2.status")
cp "$out/c2/tapless.conf" "$out/c2/good.conf"
echo "domain 999" >> "$out/c2/tapless.conf"
kill -HUP "$c2_pid"
sleep 1
grep -q " event - reload_fail .*tapless.conf:[0-9]*: .*domain: 999" "$out/c2/journal/c2.journal" ||
	fail "c2: reload_fail not journalled"
st c2 > "$out/c2.status"
[ "$(jq ".clocks[0].ptp4l.pid == $old" "$out/c2.status")" = true ] ||
	fail "c2: a broken file restarted ptp4l"
cp "$out/c2/good.conf" "$out/c2/tapless.conf"

# 4. Metrics on localhost, in c2's namespace, once c2 is back in sync
# after the reloads above restarted its ptp4l.
wait_for c2 30 '.in_sync' || fail "c2: not back in sync after the reloads"
tl_exec c2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/19273;
	printf "GET /metrics HTTP/1.0\r\n\r\n" >&3; cat <&3' > "$out/metrics.txt" 2>&1
grep -q '^tapless_clock_in_sync{clock="sys"} 1' "$out/metrics.txt" ||
	fail "metrics: $(head -c 600 "$out/metrics.txt")"
# The PTP families: LOCKED with in_sync, the grandmaster c2 follows and
# its class, the port following (UNCALIBRATED or SLAVE: free running), a
# frequency (0 when free running), the counters.
c2_if=${TL_IF[c2]}
m() { grep -E "^$1 " "$out/metrics.txt" | awk '{ print $2 }'; }
[ "$(m 'tapless_clock_state\{clock="sys"\}')" = 1 ] ||
	fail "metrics: clock state not 1 (LOCKED): $(grep clock_state "$out/metrics.txt")"
[ "$(m "tapless_clock_gm_info\\{clock=\"sys\",gm_identity=\"$gm_id\"\\}")" = 1 ] ||
	fail "metrics: no gm_info for $gm_id: $(grep gm_info "$out/metrics.txt")"
c=$(m 'tapless_clock_class\{clock="sys"\}')
[ -n "$c" ] && [ "$c" -ge 6 ] && [ "$c" -le 255 ] ||
	fail "metrics: clock class '$c'"
p=$(m "tapless_ptp_port_state\\{clock=\"sys\",port=\"$c2_if\"\\}")
[ "$p" = 8 ] || [ "$p" = 9 ] || fail "metrics: port state '$p', want 8 or 9"
[ -n "$(m 'tapless_clock_frequency_adjustment_ppb\{clock="sys"\}')" ] ||
	fail "metrics: no frequency adjustment"
# Nothing here steps a clock, but the machine's own time service may.
m 'tapless_clock_steps_total\{clock="sys"\}' | grep -qx '[0-9][0-9]*' ||
	fail "metrics: steps: $(grep steps_total "$out/metrics.txt")"
[ -n "$(m 'tapless_clock_path_delay_changes_total\{clock="sys"\}')" ] ||
	fail "metrics: no path delay changes counter"
echo "syncd: c2 metrics: $(grep -E '^tapless_(clock_(state|class|gm_info|frequency|steps|path_delay_changes)|ptp_port)' "$out/metrics.txt" | tr '\n' ' ')"

# 5. Link down and up.
ip -n "$(tl_ns c1)" link set "${TL_IF[c1]}" down
sleep 0.5
ip -n "$(tl_ns c1)" link set "${TL_IF[c1]}" up
sleep 0.5
grep -q " event sys link_down ${TL_IF[c1]}" "$j" && grep -q " event sys link_up ${TL_IF[c1]}" "$j" ||
	fail "c1: link down/up not journalled"

# 6. The journal read back: samples, events, no bad line.
tl_exec c1 bin/tapless status --json "$j" > "$out/c1.summary" || fail "status on the journal failed"
[ "$(jq '.journals[0].bad_lines == 0 and .journals[0].clocks[0].clock == "sys" and
	.journals[0].clocks[0].windows.all.in_sync > 0 and .journals[0].events.by_name.ptp4l_exit >= 1' \
	"$out/c1.summary")" = true ] || fail "journal summary: $(head -c 800 "$out/c1.summary")"

# 7. SIGTERM: every daemon exits 0 and takes its ptp4l along; valgrind clean.
for h in gm c1 c2; do
	p=${h}_pid
	kill -TERM "${!p}"
	wait "${!p}"
	rc=$?
	[ $rc -eq 0 ] || fail "$h: exit $rc after SIGTERM: $(tail -5 "$out/$h.log")"
	[ -z "$(ptp4l_pids $h)" ] || fail "$h: ptp4l left running"
	[ -e "$out/$h/syncd.sock" ] && fail "$h: control socket left behind"
	grep -q " event - stop " "$out/$h/journal/$h.journal" || fail "$h: stop not journalled"
done
TL_PIDS=()
grep -q "ERROR SUMMARY: [1-9]\|definitely lost: [1-9]" "$out/gm.log" &&
	fail "valgrind: $(grep -A3 'ERROR SUMMARY\|definitely' "$out/gm.log" | head)"

[ $fails -eq 0 ] && echo "syncd: all checks passed"
[ $fails -eq 0 ]
