#!/bin/bash
# tapless-hwsim: Debian's ptp4l and phc2sys, unmodified, in hardware mode
# on simulated NIC clocks (issue 33, "linuxptp in hardware mode"). A
# grandmaster and two slaves on a bridge, each a namespace and a simulated
# host; the slaves' PHCs start 50 ms and +-50 ppm away. Asserts:
#   - the simulated NICs report hardware stamping (tapless ifinfo, read
#     through the ioctl the library answers), and the PHCs start where
#     they were put;
#   - both slaves' ptp4l -H reach SLAVE, and after lock the true offset of
#     each slave's PHC from the grandmaster's (tapless-hwsim --truth)
#     stays within 20 us; ptp4l's own offset RMS is printed beside the
#     true one;
#   - phc2sys keeps each slave's simulated system clock on its PHC, and
#     the machine's clock is not touched (its frequency as before);
#   - s1's TX stamps late by up to 50 ms (tx-late): its ptp4l gets each
#     within tx_timestamp_timeout and stays SLAVE; up to 500 ms: it times
#     out, as on such a NIC;
#   - tapless-syncd in hardware mode (time_stamping hardware, steering)
#     on two fresh simulated hosts: status and metrics show the PHC as a
#     hardware clock in sync, and its journal's bound holds the true
#     offset (from the simulator's truth journals) in >= 99 % of samples,
#     through three faults with named outcomes: the grandmaster gone for
#     6 s (holdover samples counted, a bound that only grows, never in
#     sync; ptp4l relocks when it returns), a 1 ms step of the PHC (a step event,
#     samples across it out of sync) and a 20 ppm jump of its oscillator
#     (back in sync);
#   - tapless-capd on a simulated NIC captures with hardware stamps: the
#     pcapng marks the interface source=hw, and each received frame's
#     stamp is the PHC's (50 ms ahead of true time), not the system
#     clock's; under rx-filter=ptp (the X710 trap) capd warns that the NIC
#     stamps only some frames, the file says so, ifinfo shows the filter,
#     and the frames carry the system clock's time;
#   - tapless-stamp --mode hw under a program of a simulated host: the
#     sender-stamped copies capd writes are hardware (source=hw) and on
#     the PHC's time (50 ms ahead of the true send), every stamp joined;
#   - tapless validate on a simulated host with two cabled ports (a veth
#     pair in one namespace): its PHC checks run on both simulated PHCs,
#     and its loopback takes hardware TX and RX stamps, none missing;
#   - tapless-pingpong --mode hw between two simulated hosts whose PHCs
#     both run on true time: hardware stamps at both ends, none lost, and
#     the one-way from them is the veth's true transit (under 20 us).
#   - under tx-loss=5 plus tx-late=20,500ms (TX stamps up to 500 ms late,
#     a ConnectX's), pingpong does not hang, joins the late stamps within
#     its 200 ms wait and counts those past it lost (all joined with
#     --tx-timeout 600ms); under tx-late=50,500ms tapless-stamp's late
#     stamps all reach capd (--reorder-ms 1000), on the PHC's time.
set -u
. scripts/netns.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "hwsim: skipped: needs root for network namespaces"
	exit 0
fi
for p in ptp4l phc2sys phc_ctl; do
	command -v $p >/dev/null || { echo "FAIL: hwsim: $p missing (scripts/install-deps)"; exit 1; }
done
tl_init
TL_OUT=$(mktemp -d /tmp/tapless-hwsim.XXXXXX)
if [ "${TL_KEEP:-0}" = 1 ]; then
	trap 'tl_cleanup; echo "hwsim: kept $TL_OUT"' EXIT
else
	trap 'tl_cleanup; rm -rf "$TL_OUT"' EXIT
fi
out=$TL_OUT
fails=0
fail() { echo "FAIL: hwsim: $*"; fails=$((fails + 1)); }
tl_bridge sw 198.18.11 gm s1 s2 || { echo "FAIL: hwsim: could not build the namespaces"; exit 1; }
sim() { local h=$1; shift; tl_exec "$h" bin/tapless-hwsim --dir "$out/hosts" --host "$h" "$@"; }
# The offset (ns) of HOST's clock NAME (phc0 or sys) from true time.
truth() { sim "$1" --truth --json | jq -r ".clocks[] | select(.clock | startswith(\"$2\")) | .offset_ns"; }
real_freq() { phc_ctl CLOCK_REALTIME freq 2>&1 | sed -n 's/.*frequency offset is \([-0-9.]*\)ppb.*/\1/p'; }

freq0=$(real_freq)
cat > "$out/ptp4l.cfg" <<EOC
[global]
logSyncInterval -3
logAnnounceInterval -2
logMinDelayReqInterval -3
# software stamps underneath: the TX stamp may take a while on a busy box
tx_timestamp_timeout 100
summary_interval 0
EOC

# The hosts, their PHCs made by the first question about the interface.
sim gm --phc-offset 0 --phc-ppm 0 -- bin/tapless ifinfo --json "${TL_IF[gm]}" > "$out/gm.ifinfo" 2>&1 ||
	fail "ifinfo under hwsim: $(cat "$out/gm.ifinfo")"
jq -e '.interfaces[0].phc_index == 0 and (.interfaces[0].capabilities | index("hardware-raw-clock"))' \
	"$out/gm.ifinfo" >/dev/null 2>&1 || fail "ifinfo: no simulated PHC: $(head -c 600 "$out/gm.ifinfo")"
sim s1 --phc-offset 50ms --phc-ppm 50 -- phc_ctl "${TL_IF[s1]}" get > /dev/null 2>&1
sim s2 --phc-offset -50ms --phc-ppm -50 -- phc_ctl "${TL_IF[s2]}" get > /dev/null 2>&1
o1=$(truth s1 phc0)
o2=$(truth s2 phc0)
[ -n "$o1" ] && [ "$o1" -gt 49000000 ] && [ "$o1" -lt 51000000 ] &&
	[ -n "$o2" ] && [ "$o2" -lt -49000000 ] && [ "$o2" -gt -51000000 ] ||
	fail "PHCs did not start 50 ms away: s1 $o1 ns, s2 $o2 ns"

# Each ptp4l its own management socket: /var/run is shared by the
# namespaces.
tl_bg gm bin/tapless-hwsim --dir "$out/hosts" --host gm -- \
	ptp4l -f "$out/ptp4l.cfg" --uds_address "$out/gm.uds" \
	-i "${TL_IF[gm]}" -H -m -q > "$out/gm.log" 2>&1
for h in s1 s2; do
	tl_bg $h bin/tapless-hwsim --dir "$out/hosts" --host $h -- \
		ptp4l -f "$out/ptp4l.cfg" --uds_address "$out/$h.uds" \
		-i "${TL_IF[$h]}" -H -s -m -q > "$out/$h.log" 2>&1
done
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
	grep -q "to SLAVE" "$out/s1.log" && grep -q "to SLAVE" "$out/s2.log" && break
	sleep 0.5
done
for h in s1 s2; do
	grep -q "UNCALIBRATED to SLAVE" "$out/$h.log" || fail "$h: ptp4l -H never reached SLAVE: $(tail -5 "$out/$h.log")"
done
# Settled: ptp4l's last summary under 20 us rms on both (at most 15 s).
settled() {	# FILE PATTERN: the last PATTERN figure of FILE under 20000
	local v
	v=$(sed -n "s/$2/\\1/p" "$1" | tail -1 | tr -d -)
	[ -n "$v" ] && [ "$v" -lt 20000 ]
}
end=$((SECONDS + 15))
until { settled "$out/s1.log" '.* rms *\([0-9]*\) max .*' &&
	settled "$out/s2.log" '.* rms *\([0-9]*\) max .*'; } || [ $SECONDS -ge $end ]; do
	sleep 0.5
done
# phc2sys once ptp4l has stepped the PHC (as phc2sys -w would wait): it
# steps the simulated system clock onto the PHC, then steers it.
for h in s1 s2; do
	tl_bg $h bin/tapless-hwsim --dir "$out/hosts" --host $h -- \
		phc2sys -s "${TL_IF[$h]}" -c CLOCK_REALTIME -O 0 -R 8 -m -q > "$out/$h.phc2sys" 2>&1
done
end=$((SECONDS + 15))
until { settled "$out/s1.phc2sys" '.*phc offset *\(-\?[0-9]*\) s2 .*' &&
	settled "$out/s2.phc2sys" '.*phc offset *\(-\?[0-9]*\) s2 .*'; } || [ $SECONDS -ge $end ]; do
	sleep 0.5
done
sleep 1
for h in s1 s2; do wc -l < "$out/$h.log" > "$out/$h.mark"; done
for i in $(seq 12); do
	g=$(truth gm phc0)
	for h in s1 s2; do
		echo "$(( $(truth $h phc0) - g )) $(( $(truth $h sys) - $(truth $h phc0) ))" >> "$out/$h.truth"
	done
	sleep 0.25
done
for h in s1 s2; do
	tail -n +"$(cat "$out/$h.mark")" "$out/$h.log" |
		sed -n 's/.* rms *\([0-9]*\) max .*/\1/p' > "$out/$h.ptp4l"
	read -r n rms max <<< "$(awk '{ s += $1 * $1; a = $1 < 0 ? -$1 : $1; if (a > m) m = a; n++ }
		END { printf "%d %.0f %d", n, n ? sqrt(s / n) : -1, m }' "$out/$h.ptp4l")"
	read -r tn trms tmax smax <<< "$(awk '{ s += $1 * $1; a = $1 < 0 ? -$1 : $1; if (a > m) m = a;
		b = $2 < 0 ? -$2 : $2; if (b > sm) sm = b; n++ }
		END { printf "%d %.0f %d %d", n, n ? sqrt(s / n) : -1, m, sm }' "$out/$h.truth")"
	echo "hwsim: $h: ptp4l offset rms $rms ns (max of its 1 s rms $max, $n s); true offset from the grandmaster rms $trms ns (max $tmax, $tn samples); sys - phc max $smax ns"
	[ "$n" -ge 2 ] || fail "$h: ptp4l reported $n summaries in 3 s"
	# Software stamps underneath: microseconds of jitter, five orders
	# below the 50 ms the slaves started from.
	[ "$tn" -eq 12 ] && [ "$tmax" -lt 100000 ] || fail "$h: true offset up to $tmax ns after lock"
	[ "$smax" -lt 50000 ] || fail "$h: phc2sys left the system clock $smax ns from the PHC"
	grep -q "CLOCK_REALTIME phc offset" "$out/$h.phc2sys" || fail "$h: phc2sys did not run: $(tail -3 "$out/$h.phc2sys")"
done
# TX stamps late on s1's NIC: by up to 50 ms ptp4l still gets each
# within its tx_timestamp_timeout (100 ms; its poll woken when the stamp
# comes due, with the POLLPRI SO_SELECT_ERR_QUEUE asks for): no port
# fault. (Its clockcheck may trip: ptp4l handles no Sync while it waits
# for a TX stamp, so the next one looks late on its monotonic clock; it
# goes back to SLAVE at once.) By up to 500 ms it times out on one and
# faults, as on such a NIC.
mk=$(wc -l < "$out/s1.log")
bin/tapless-hwsim --dir "$out/hosts" --host s1 --fault tx-late=100,50ms || fail "--fault tx-late=100,50ms"
sleep 3
late=$(bin/tapless-hwsim --dir "$out/hosts" --host s1 --truth --json | jq '[.clocks[] | select(.clock | startswith("phc")) | .tx_late] | add')
tail -n +"$((mk + 1))" "$out/s1.log" > "$out/s1.late"
sums=$(grep -c " rms " "$out/s1.late")
cc=$(grep -c "clockcheck" "$out/s1.late")
! grep -q "timed out\|FAULTY\|failed" "$out/s1.late" && [ "$sums" -ge 2 ] && [ "$late" -ge 10 ] ||
	fail "s1: ptp4l under tx-late=100,50ms ($late stamps late): $(grep -v ' rms ' "$out/s1.late" | head -3)"
mk=$(wc -l < "$out/s1.log")
bin/tapless-hwsim --dir "$out/hosts" --host s1 --fault tx-late=100,500ms || fail "--fault tx-late=100,500ms"
end=$((SECONDS + 5))
until tail -n +"$((mk + 1))" "$out/s1.log" | grep -q "timed out while polling for tx timestamp" ||
	[ $SECONDS -ge $end ]; do sleep 0.2; done
tail -n +"$((mk + 1))" "$out/s1.log" | grep -q "timed out while polling for tx timestamp" ||
	fail "s1: ptp4l did not time out on a TX stamp 500 ms late: $(tail -n +"$((mk + 1))" "$out/s1.log" | grep -v ' rms ' | head -3)"
echo "hwsim: s1: ptp4l under tx-late=100,50ms: $late TX stamps late, $sums summaries, no port fault ($cc clockcheck trips); under tx-late=100,500ms: $(tail -n +"$((mk + 1))" "$out/s1.log" | grep -m1 -o 'timed out while polling for tx timestamp')"
bin/tapless-hwsim --dir "$out/hosts" --host s1 --fault tx-late=0 || fail "--fault tx-late=0"
for p in "${TL_PIDS[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
TL_PIDS=()

# tapless-syncd in hardware mode: hosts sgm (grandmaster) and sc (client,
# its PHC 50 ms and -50 ppm away) in the gm and s2 namespaces.
. tests/system/lib/syncd_hosts.sh
TL_IF[sgm]=${TL_IF[gm]}
TL_IF[sc]=${TL_IF[s2]}
# Software stamps underneath: a TX stamp can take over ptp4l's 1 ms.
syncd_conf sgm server "ptp4l_option tx_timestamp_timeout 100"
# The default hardware drift (100 ppb) presumes hardware-grade stamps: the
# servo here steers on software stamps' jitter, and its frequency was
# measured up to 45 ppm off when the master went (a 10 ppm limit held in
# 65 to 88 % of holdover samples): 100 ppm, with a threshold that lets
# 10 s of holdover stay holdover.
syncd_conf sc client "metrics_port 19274" "ptp4l_option tx_timestamp_timeout 100" \
	"holdover_drift 100000"
for h in sgm sc; do
	sed -i 's/^free_running 1/# steering: the clocks are simulated/;
		s/^sync_threshold .*/sync_threshold 2000000/;
		s/^role \(.*\)/role \1\ntime_stamping hardware/' "$out/$h/tapless.conf"
done
ip netns exec "$(tl_ns gm)" bin/tapless-hwsim --dir "$out/hosts" --host sgm \
	--phc-offset 0 --phc-ppm 0 -- bin/tapless-syncd -f "$out/sgm/tapless.conf" \
	2> "$out/sgm.log" &
TL_PIDS+=("$!")
ip netns exec "$(tl_ns s2)" bin/tapless-hwsim --dir "$out/hosts" --host sc \
	--phc-offset 50ms --phc-ppm -50 -- bin/tapless-syncd -f "$out/sc/tapless.conf" \
	2> "$out/sc.log" &
sc_pid=$!
TL_PIDS+=("$sc_pid")
st_sc() { tl_exec s2 bin/tapless status --json --socket "$out/sc/syncd.sock" 2>/dev/null; }
end=$((SECONDS + 30)); ok=0
while [ $SECONDS -lt $end ]; do
	st_sc > "$out/sc.status"
	jq -e '.clocks[] | select(.clock == "phc0") | .in_sync and .hardware and .state == "SLAVE"' \
		"$out/sc.status" >/dev/null 2>&1 && { ok=1; break; }
	sleep 0.5
done
[ $ok = 1 ] || fail "syncd: phc0 not a hardware clock in sync within 30 s: $(jq -c '[.clocks[] | {clock, state, in_sync, hardware}], .alarms' "$out/sc.status" 2>/dev/null)"
sleep 2
end=$((SECONDS + 10)); ok=0
while [ $SECONDS -lt $end ]; do
	tl_exec s2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/19274;
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3; cat <&3' > "$out/sc.metrics" 2>&1
	grep -q '^tapless_clock_in_sync{clock="phc0"} 1' "$out/sc.metrics" && { ok=1; break; }
	sleep 0.5
done
[ $ok = 1 ] || fail "syncd metrics: $(grep tapless_clock_in_sync "$out/sc.metrics")"
# On sc's own (simulated) system clock, the journal's timescale.
mark() { echo "$1 $(bin/tapless-hwsim --dir "$out/hosts" --host sc -- date +%s%N)" >> "$out/marks"; }
fault() { bin/tapless-hwsim --dir "$out/hosts" --host sc --fault "$1" || fail "--fault $1"; }
back_in_sync() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		st_sc | jq -e '.clocks[] | select(.clock == "phc0") | .in_sync' >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}
# Holdover grows from a sample in sync: start from one.
back_in_sync 20 || fail "syncd: phc0 not in sync before the grandmaster went"
mark gone; fault gm-gone=on; sleep 6
mark back; fault gm-gone=off
back_in_sync 40 || fail "syncd: phc0 not back in sync 40 s after the grandmaster returned"
mark step; fault step=1ms; sleep 3
back_in_sync 40 || fail "syncd: phc0 not back in sync 40 s after the step"
mark jump; fault freq-jump=20; sleep 3
back_in_sync 40 || fail "syncd: phc0 not back in sync 40 s after the frequency jump"
# The X710 trap under syncd: its alarm names the narrowed filter.
fault rx-filter=ptp
end=$((SECONDS + 10)); ok=0
while [ $SECONDS -lt $end ]; do
	st_sc | jq -e '.alarms | map(test("narrowed to rx ptpv2-event")) | any' >/dev/null 2>&1 && { ok=1; break; }
	sleep 0.5
done
[ $ok = 1 ] || fail "syncd: no alarm for the narrowed rx filter: $(st_sc | jq -c .alarms)"
# The bound must hold in >= 99 % of the samples judged, faults and all;
# the faults give about 60, on which one miss is 98.3 %: 12 s more of the
# clock as it runs (the filter leaves PTP event packets stamped) give
# another 48, so that one miss in all is allowed, not two.
sleep 12
kill -TERM "$sc_pid"; wait "$sc_pid" 2>/dev/null
python3 - "$out/sc/journal/sc.journal" "$out/marks" <<'PY' || fail "syncd under faults"
import sys
marks = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2]))
samples, steps = [], []
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) in (12, 13) and w[1] == 'sample' and w[2] == 'phc0':
        samples.append((int(w[0]), w[10], None if w[11] == '-' else int(w[11])))
    elif len(w) > 3 and w[1] == 'event' and w[2] == 'phc0' and w[3] == 'step':
        steps.append(int(w[0]))
bad = []
gone = [s for s in samples if marks['gone'] + 750e6 <= s[0] <= marks['back']]
held = [s for s in gone if s[1] == 'h']
if len(held) < 8:
    bad.append('%d holdover samples while the grandmaster was gone' % len(held))
if any(s[1] == '1' for s in gone):
    bad.append('in sync while the grandmaster was gone')
b = [s[2] for s in gone if s[2] is not None]
if any(y < x for x, y in zip(b, b[1:])):
    bad.append('holdover bound shrank: %s' % b)
hb = [s[2] for s in held]
if len(hb) >= 2 and hb[-1] - hb[0] < 10000:
    bad.append('holdover bound grew only %d ns in 6 s at 100 ppm' % (hb[-1] - hb[0]))
if not any(marks['step'] <= t <= marks['step'] + 2e9 for t in steps):
    bad.append('no step event within 2 s of the 1 ms step')
# The step starts settling over: the samples right after its event are
# flagged (out of sync), whatever their bound.
te = [t for t in steps if marks['step'] <= t <= marks['step'] + 2e9]
after = [s for s in samples if te and s[0] > te[0]][:2]
if any(s[1] == '1' for s in after):
    bad.append('in sync right after the 1 ms step: %s' % after)
print('hwsim: faults: %d holdover samples while the grandmaster was gone, bound %s -> %s ns; step events %d'
      % (len(held), b[0] if b else '-', b[-1] if b else '-', len(steps)))
for x in bad:
    print('FAIL: hwsim: ' + x)
sys.exit(1 if bad else 0)
PY
# A sample within 500 ms (two sample intervals) of the step or the
# frequency jump may rest on a reading from before it: not judged.
blind=$(awk '$1 == "step" || $1 == "jump" { printf "%s%s", s, $2; s = "," }' "$out/marks")
python3 tests/system/lib/hwsim_truth.py bound "$out/hosts" sc sgm \
	"$out/sc/journal/sc.journal" phc0 --blind "$blind" --blind-ms 500 ||
	fail "syncd: the journal's bound did not hold the true offset"

# send10 DST PREFIX...: 10 datagrams "frameNN\n" to DST:9999 from one
# sender (PREFIX... python3), the true time noted right before each send,
# one a line on stdout.
send10() {
	local dst=$1
	shift
	"$@" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    print(time.time_ns(), flush=True)
    s.sendto(b"frame%02d\n" % i, (sys.argv[1], 9999))
    time.sleep(0.1)' "$dst"
}

# tapless-capd with hardware RX stamps: host cap (in s1's namespace) has
# its PHC 50 ms ahead; frames come from s2, each sent at a true time
# noted just before.
capd_run() {	# NAME: capture 3 s into $out/NAME, sending 10 frames
	mkdir -p "$out/$1"
	ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" --host cap \
		--phc-offset 50ms --phc-ppm 0 --sys-offset 0 --sys-ppm 0 -- \
		bin/tapless-capd -i "${TL_IF[s1]}" \
		-m hw -w "$out/$1" --duration 2.5 -H cap 2> "$out/$1.log" &
	local cpid=$!
	sleep 1
	send10 198.18.11.2 tl_exec s2 > "$out/$1.sent"
	wait "$cpid"
}
capd_check() {	# NAME LOW HIGH: each frame's stamp - its true send time, ns
	build/tools/capdump "$out/$1"/*.pcapng > "$out/$1.dump" 2>&1
	grep -q "^iface 0 name=${TL_IF[s1]} .*source=hw" "$out/$1.dump" ||
		fail "capd $1: interface not marked hardware: $(grep ^iface "$out/$1.dump")"
	# 50 bytes: Ethernet, IPv4, UDP and "frameNN\n" (PTP frames are larger)
	awk '$3 == "in" && $4 == 50 { print $1 }' "$out/$1.dump" > "$out/$1.in"
	paste "$out/$1.sent" "$out/$1.in" | awk -v lo="$2" -v hi="$3" -v name="$1" '
		NF == 2 { d = $2 - $1; n++; if (d < lo || d > hi) bad++; if (!n1 || d < mn) mn = d; if (d > mx) mx = d; n1 = 1 }
		END { printf "hwsim: capd %s: %d frames, stamp - true send %d..%d ns\n", name, n, mn, mx;
		      exit !(n == 10 && !bad) }' ||
		fail "capd $1: stamps not within $2..$3 ns of the true send"
}
capd_run capd
capd_check capd 50000000 55000000
grep -q "stamps only some received frames" "$out/capd.log" && fail "capd: narrowed filter reported on a full one"
# The X710 trap: only PTP event packets stamped.
bin/tapless-hwsim --dir "$out/hosts" --host cap --fault rx-filter=ptp || fail "--fault rx-filter=ptp"
capd_run capd_ptp
grep -q "stamps only some received frames" "$out/capd_ptp.log" ||
	fail "capd did not warn of the narrowed filter: $(cat "$out/capd_ptp.log")"
capd_check capd_ptp 0 5000000
grep -q "NIC rx filter narrowed" "$out/capd_ptp.dump" "$out"/capd_ptp/*.pcapng ||
	fail "capd: the file does not say the filter was narrowed"
ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" --host cap -- \
	bin/tapless ifinfo "${TL_IF[s1]}" > "$out/cap.ifinfo" 2>&1
grep -q "hwtstamp config.*ptpv2-event\|hwtstamp config.*PTP" "$out/cap.ifinfo" ||
	fail "ifinfo does not show the narrowed filter: $(grep hwtstamp "$out/cap.ifinfo")"

# tapless-stamp in hardware mode: the sender's own NIC stamps, through
# both preload libraries, joined by capd to their frames.
mkdir -p "$out/shim"
ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" --host cap -- \
	bin/tapless-capd -i "${TL_IF[s1]}" -m hw -w "$out/shim" --duration 3 -H cap \
	--tx-socket "$out/shim/tx.sock" -l info 2> "$out/shim.log" &
cpid=$!
for _ in $(seq 50); do [ -S "$out/shim/tx.sock" ] && break; sleep 0.1; done
send10 198.18.11.3 ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" \
	--host cap -- bin/tapless-stamp --mode hw --tx-socket "$out/shim/tx.sock" \
	--log-file "$out/shim-stamp.log" -- > "$out/shim.sent"
wait "$cpid"
grep -q "keyed stamps: 10 taken, 10 joined" "$out/shim.log" ||
	fail "shim: capd did not join the 10 stamps: $(grep 'keyed stamps' "$out/shim.log")"
build/tools/capdump "$out/shim"/*.pcapng > "$out/shim.dump" 2>&1
hwif=$(awk '/^iface .*source=hw/ { print $2 }' "$out/shim.dump" | tr '\n' ' ')
awk -v ifs=" $hwif" '$3 == "out" && $4 == 50 && index(ifs, " " $2 " ") { print $1 }' \
	"$out/shim.dump" > "$out/shim.hw"
paste "$out/shim.sent" "$out/shim.hw" | awk 'NF == 2 { d = $2 - $1; n++;
	if (d < 50000000 || d > 55000000) bad++; if (!n1 || d < mn) mn = d; if (d > mx) mx = d; n1 = 1 }
	END { printf "hwsim: shim: %d hardware TX stamps, stamp - true send %d..%d ns\n", n, mn, mx;
	      exit !(n == 10 && !bad) }' ||
	fail "shim: sender-stamped copies not hardware stamps on the PHC's time"
# Half the sender's TX stamps late, by up to 500 ms: tapless-stamp's
# reads and its reaper's waits go through the simulated NIC; capd joins
# a keyed stamp to its frame within --reorder-ms (default 100 ms), so
# 1000 here takes every late one, with room for a busy machine's delays
# on top of the 500 ms (600 left 2 of 40 unjoined once, under a full
# make check); the copies still carry the PHC's time of the send. The
# shim reads stamps on the program's socket calls and at its exit, so the
# last late ones come at exit: the sender stays 0.6 s after its last send,
# past the 500 ms, and well inside the 1 s hold (1 s left the last two
# just past it once).
bin/tapless-hwsim --dir "$out/hosts" --host cap --fault tx-late=50,500ms || fail "--fault tx-late=50,500ms"
late0=$(bin/tapless-hwsim --dir "$out/hosts" --host cap --truth --json | jq '[.clocks[] | select(.clock | startswith("phc")) | .tx_late] | add')
mkdir -p "$out/shimlate"
ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" --host cap -- \
	bin/tapless-capd -i "${TL_IF[s1]}" -m hw -w "$out/shimlate" --duration 5 -H cap \
	--reorder-ms 1000 --tx-socket "$out/shimlate/tx.sock" -l info 2> "$out/shimlate.log" &
cpid=$!
for _ in $(seq 50); do [ -S "$out/shimlate/tx.sock" ] && break; sleep 0.1; done
timeout 30 ip netns exec "$(tl_ns s1)" bin/tapless-hwsim --dir "$out/hosts" \
	--host cap -- bin/tapless-stamp --mode hw --tx-socket "$out/shimlate/tx.sock" \
	--log-file "$out/shimlate-stamp.log" -- python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(40):
    print(time.time_ns(), flush=True)
    s.sendto(b"frame%02d\n" % i, (sys.argv[1], 9999))
    time.sleep(0.05)
time.sleep(0.6)' 198.18.11.3 > "$out/shimlate.sent" || fail "shim under tx-late: the sender failed or hung"
wait "$cpid"
late=$(bin/tapless-hwsim --dir "$out/hosts" --host cap --truth --json | jq "[.clocks[] | select(.clock | startswith(\"phc\")) | .tx_late] | add - $late0")
grep -q "keyed stamps: 40 taken, 40 joined" "$out/shimlate.log" && [ "$late" -ge 8 ] ||
	fail "shim under tx-late: $late stamps held; capd: $(grep 'keyed stamps' "$out/shimlate.log")"
build/tools/capdump "$out/shimlate"/*.pcapng > "$out/shimlate.dump" 2>&1
hwif=$(awk '/^iface .*source=hw/ { print $2 }' "$out/shimlate.dump" | tr '\n' ' ')
awk -v ifs=" $hwif" '$3 == "out" && $4 == 50 && index(ifs, " " $2 " ") { print $1 }' \
	"$out/shimlate.dump" > "$out/shimlate.hw"
paste "$out/shimlate.sent" "$out/shimlate.hw" | awk -v late="$late" 'NF == 2 { d = $2 - $1; n++;
	if (d < 50000000 || d > 55000000) bad++; if (!n1 || d < mn) mn = d; if (d > mx) mx = d; n1 = 1 }
	END { printf "hwsim: shim with tx-late=50,500ms: %d stamps held late, %d hardware TX stamps joined by capd (--reorder-ms 1000), stamp - true send %d..%d ns\n", late, n, mn, mx;
	      exit !(n == 40 && !bad) }' ||
	fail "shim under tx-late: sender-stamped copies not all there on the PHC's time"
bin/tapless-hwsim --dir "$out/hosts" --host cap --fault tx-late=0 || fail "--fault tx-late=0"

# tapless validate: PHC checks and a hardware-stamped loopback.
vns=$(tl_ns v)
ip netns add "$vns" && TL_NS+=("$vns") &&
	ip -n "$vns" link add "tl${TL_ID}va" type veth peer name "tl${TL_ID}vb" &&
	ip -n "$vns" link set "tl${TL_ID}va" up && ip -n "$vns" link set "tl${TL_ID}vb" up ||
	fail "cannot make the validate namespace"
ip netns exec "$vns" bin/tapless-hwsim --dir "$out/hosts" --host val --phc-offset 0 \
	--phc-ppm 0 -- bin/tapless validate --json --loopback "tl${TL_ID}va:tl${TL_ID}vb" \
	--stamps hw -n 200 --rate 1000 -d 1s > "$out/validate.json" 2> "$out/validate.err"
head -1 "$out/validate.json" | jq -e '
	([.phc[].device] | sort) == ["/dev/ptp0", "/dev/ptp1"] and
	([.checks[] | select(.check == "phc") | .verdict] | length == 2 and all(. == "pass" or . == "warn")) and
	(.loopback.directions | length == 2 and
	 all(.source == "hw" and .sent == 200 and .received == 200 and .tx_missing == 0 and
	     .rx_unstamped == 0 and .hw_missing == 0 and .oneway_ns.p50 < 10000))' > /dev/null ||
	fail "validate on simulated PHCs: $(head -c 800 "$out/validate.json") $(head -3 "$out/validate.err")"
# The X710 trap: validate names the narrowed filter.
bin/tapless-hwsim --dir "$out/hosts" --host val --fault rx-filter=ptp || fail "--fault rx-filter=ptp"
ip netns exec "$vns" bin/tapless-hwsim --dir "$out/hosts" --host val -- \
	bin/tapless validate --json --no-phc --loopback "tl${TL_ID}va:tl${TL_ID}vb" \
	--stamps hw -n 50 --rate 1000 > "$out/validate-ptp.json" 2>&1
grep -v "^tapless validate:" "$out/validate-ptp.json" | head -1 | jq -e '
	[.checks[] | select(.check == "loopback") | .why | test("rx ptpv2-event where on and all were asked")] == [true]' > /dev/null ||
	fail "validate did not name the narrowed filter: $(head -c 1500 "$out/validate-ptp.json")"
echo "hwsim: validate: one-way p50 $(head -1 "$out/validate.json" | jq -c '[.loopback.directions[].oneway_ns.p50]') ns, PHC checks $(head -1 "$out/validate.json" | jq -c '[.checks[] | select(.check == "phc") | .verdict]')"

# tapless-pingpong with hardware TX and RX stamps, PHCs on true time.
tl_bg gm bin/tapless-hwsim --dir "$out/hosts" --host ppa --phc-offset 0 --phc-ppm 0 -- \
	bin/tapless-pingpong --server --bind 198.18.11.1:9000 --mode hw --idle-ms 5s \
	> "$out/pp-server.out" 2>&1
sleep 0.5
tl_exec s2 bin/tapless-hwsim --dir "$out/hosts" --host ppb --phc-offset 0 --phc-ppm 0 -- \
	bin/tapless-pingpong --to 198.18.11.1:9000 --mode hw -n 300 -j > "$out/pp.json" 2> "$out/pp.err"
jq -e '.stamps.client == "hw" and .stamps.server == "hw" and .stamps.oneway == "hw" and
	.lost_stamps.client_hw_tx == 0 and .lost_stamps.client_hw_rx == 0 and
	.lost_stamps.server_hw_rx == 0 and .latency_ns.client_to_server.p50 >= 0 and
	.latency_ns.client_to_server.p50 < 20000 and .latency_ns.server_to_client.p50 < 20000' \
	"$out/pp.json" > /dev/null || fail "pingpong on simulated NICs: $(head -c 600 "$out/pp.json") $(tail -2 "$out/pp.err")"
# 5 % of the client NIC's TX stamps lost (igc has 4 slots): counted, no
# hang, the rest joined.
bin/tapless-hwsim --dir "$out/hosts" --host ppb --fault tx-loss=5 || fail "--fault tx-loss=5"
tl_bg gm bin/tapless-hwsim --dir "$out/hosts" --host ppa -- \
	bin/tapless-pingpong --server --bind 198.18.11.1:9001 --mode hw --idle-ms 5s \
	> "$out/pp2-server.out" 2>&1
sleep 0.5
timeout 60 ip netns exec "$(tl_ns s2)" bin/tapless-hwsim --dir "$out/hosts" --host ppb -- \
	bin/tapless-pingpong --to 198.18.11.1:9001 --mode hw -n 2000 -j > "$out/pp2.json" 2> "$out/pp2.err"
rc=$?
[ $rc -ne 124 ] || fail "pingpong hung with 5 % of TX stamps lost"
jq -e '.lost_stamps.client_hw_tx >= 40 and .lost_stamps.client_hw_tx <= 200 and
	.latency_ns.client_to_server.count >= 1700' "$out/pp2.json" > /dev/null ||
	fail "pingpong with 5 % TX stamps lost: $(jq -c '{lost_stamps, n: .latency_ns.client_to_server.count}' "$out/pp2.json" 2>&1 | head -c 400)"
echo "hwsim: pingpong with tx-loss=5: $(jq -c '{client_hw_tx_lost: .lost_stamps.client_hw_tx, one_ways: .latency_ns.client_to_server.count}' "$out/pp2.json")"
# And 20 % of them late, each by up to 500 ms (a ConnectX's can be): no
# hang; pingpong joins a late stamp that comes within its wait for it
# (--tx-timeout, 200 ms), out of order, and counts one past it lost and
# joins it to nothing; with a 600 ms wait every late stamp is joined. 500
# pings a second, so that the 20 % held some 250 ms fit the library's
# ring of 64 a socket.
bin/tapless-hwsim --dir "$out/hosts" --host ppb --fault tx-late=20,500ms || fail "--fault tx-late=20,500ms"
pp_late() {	# NAME PORT ARGS...: a server and 2000 pings under the faults
	local name=$1 port=$2 rc
	shift 2
	tl_bg gm bin/tapless-hwsim --dir "$out/hosts" --host ppa -- \
		bin/tapless-pingpong --server --bind 198.18.11.1:"$port" --mode hw --idle-ms 5s \
		> "$out/$name-server.out" 2>&1
	sleep 0.5
	timeout 60 ip netns exec "$(tl_ns s2)" bin/tapless-hwsim --dir "$out/hosts" --host ppb -- \
		bin/tapless-pingpong --to 198.18.11.1:"$port" --mode hw -n 2000 --rate 500 "$@" -j \
		> "$out/$name.json" 2> "$out/$name.err"
	rc=$?
	[ $rc -ne 124 ] || fail "$name: pingpong hung with TX stamps late"
	[ $rc -eq 0 ] || fail "$name: pingpong exited $rc: $(tail -2 "$out/$name.err")"
}
late0=$(bin/tapless-hwsim --dir "$out/hosts" --host ppb --truth --json | jq '[.clocks[] | select(.clock | startswith("phc")) | .tx_late] | add')
pp_late pp4 9003
jq -e '.lost_stamps.client_hw_tx >= 180 and .lost_stamps.client_hw_tx <= 520 and
	.tx_stamps_late.joined >= 60 and .tx_stamps_late.joined <= 280 and
	.tx_stamps_late.past_timeout >= 120 and .tx_stamps_late.past_timeout <= 400 and
	.latency_ns.client_to_server.count >= 1450 and
	.latency_ns.client_to_server.p50 < 20000' "$out/pp4.json" > /dev/null ||
	fail "pingpong with 20 % TX stamps late: $(jq -c '{lost_stamps, tx_stamps_late, n: .latency_ns.client_to_server.count, p50: .latency_ns.client_to_server.p50}' "$out/pp4.json" 2>&1 | head -c 600)"
bin/tapless-hwsim --dir "$out/hosts" --host ppb --truth --json > "$out/ppb.truth"
late=$(jq "[.clocks[] | select(.clock | startswith(\"phc\")) | .tx_late] | add - $late0" "$out/ppb.truth")
forced=$(jq '[.clocks[] | select(.clock | startswith("phc")) | .tx_late_forced] | add' "$out/ppb.truth")
jq -e '[.clocks[] | select(.clock | startswith("phc"))] | all(.tx_late_pct == 20 and .tx_late_max_ns == 500000000)' \
	"$out/ppb.truth" > /dev/null || fail "--truth does not show tx-late=20,500ms: $(jq -c '.clocks[1]' "$out/ppb.truth")"
[ "$late" -ge 250 ] && [ "$late" -le 560 ] && [ "$forced" -le 20 ] ||
	fail "tx-late=20: $late TX stamps held of some 2000, $forced handed over early"
echo "hwsim: pingpong with tx-loss=5 tx-late=20,500ms: $(jq -c '{client_hw_tx_lost: .lost_stamps.client_hw_tx, late_joined: .tx_stamps_late.joined, late_past_wait: .tx_stamps_late.past_timeout, one_ways: .latency_ns.client_to_server.count, c2s_p50_ns: .latency_ns.client_to_server.p50}' "$out/pp4.json"); $late held by the NIC, $forced early (ring full)"
pp_late pp5 9004 --tx-timeout 600ms
jq -e '.tx_stamps_late.past_timeout == 0 and .tx_stamps_late.joined >= 250 and
	.lost_stamps.client_hw_tx <= 200 and .latency_ns.client_to_server.count >= 1800' \
	"$out/pp5.json" > /dev/null ||
	fail "pingpong --tx-timeout 600ms did not join every late stamp: $(jq -c '{lost_stamps, tx_stamps_late, n: .latency_ns.client_to_server.count}' "$out/pp5.json" 2>&1 | head -c 600)"
echo "hwsim: pingpong with tx-late=20,500ms and --tx-timeout 600ms: $(jq -c '{client_hw_tx_lost: .lost_stamps.client_hw_tx, late_joined: .tx_stamps_late.joined, late_past_wait: .tx_stamps_late.past_timeout, one_ways: .latency_ns.client_to_server.count}' "$out/pp5.json")"
# Faults off for what follows.
bin/tapless-hwsim --dir "$out/hosts" --host ppb --fault tx-loss=0 --fault tx-late=0 || fail "--fault tx-late=0"
# The X710 trap under a probe: the stamping error names the filter.
bin/tapless-hwsim --dir "$out/hosts" --host ppb --fault rx-filter=ptp || fail "--fault rx-filter=ptp"
tl_exec s2 bin/tapless-hwsim --dir "$out/hosts" --host ppb -- bin/tapless-pingpong \
	--to 198.18.11.1:9002 --mode hw -n 10 > /dev/null 2> "$out/pp3.err" &&
	fail "pingpong --mode hw ran on a NIC stamping PTP only"
grep -q "rx ptpv2-event where on and all were asked" "$out/pp3.err" ||
	fail "pingpong did not name the narrowed filter: $(tail -2 "$out/pp3.err")"
echo "hwsim: pingpong: one-way from hardware stamps p50 $(jq -c '[.latency_ns.client_to_server.p50, .latency_ns.server_to_client.p50]' "$out/pp.json") ns"

freq1=$(real_freq)
[ "$freq0" = "$freq1" ] || fail "the machine's clock frequency changed: $freq0 -> $freq1 ppb"

[ $fails -eq 0 ] && echo "hwsim: all checks passed"
[ $fails -eq 0 ]
