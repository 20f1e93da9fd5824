#!/bin/bash
# capd --stamp-cgroup: the kernel stamps every TCP send of the programs in a
# cgroup for a BPF sock_ops program, and capd writes the stamps beside the
# frames they belong to; the programs are unmodified and not restarted.
#
# Namespace a holds the senders (in a fresh cgroup) and a capd that stamps
# the cgroup; namespace b the receivers and a plain capd. Checked:
# - a Python sender, a static io_uring sender (build/tools/uring_send) and
#   a sendfile(2) sender: the capture holds a sender stamp for >= 99.9 % of
#   the data segments captured leaving a (each joined to its very frame:
#   same port and raw sequence number), every stamp after the packet
#   socket's stamp of the same frame, and within a second of it (the stamps
#   are converted from CLOCK_TAI: a wrong conversion is off by seconds),
#   and the file in time order;
# - a connection up before capd started is armed (logged) and stamped;
# - a port outside --stamp-ports, and a program outside the cgroup, get no
#   stamp at all;
# - tapless correlate uses the stamps (sender_stamped, tap_tx_skipped);
# - capd stopped by SIGTERM, and by SIGKILL: nothing of ours is left
#   attached (bpftool cgroup tree), and the sender keeps sending;
# - bad --stamp-ports and a path that is not a cgroup: exit 1 and 2 with
#   the reason.
# On a host that cannot stamp cgroups (tapless ifinfo says why) the test
# says "skipped" with the reason and exits 0.
set -u
. scripts/netns.sh
tl_setup stampcg 198.18.81
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

why=$(bin/tapless ifinfo -j lo 2>/dev/null | jq -r '.kernel | if .cgroup_stamping then "" else .cgroup_stamping_why end')
if [ -n "$why" ]; then
	echo "stampcg: skipped: this host cannot stamp cgroups: $why"
	exit 0
fi
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
if ! grep -q " cgroup2 " /proc/mounts; then
	echo "stampcg: skipped: no cgroup v2 hierarchy mounted"
	exit 0
fi
# Our cgroup: tl_cleanup kills what runs in it and removes it.
tl_cgroup senders || { echo "FAIL: stampcg: cannot create a cgroup"; exit 1; }
cg=$TL_CGROUP

# in_cg NS CMD...: run CMD in namespace NS, inside our cgroup.
in_cg() {
	local ns
	ns=$(tl_ns "$1")
	shift
	bash -c 'echo $$ > "$0/cgroup.procs" && exec ip netns exec "$1" "${@:2}"' \
		"$cg" "$ns" "$@"
}
# capd in namespace a: through nsenter, not ip netns exec, which mounts a
# fresh /sys and so hides the cgroup v2 hierarchy below /sys/fs/cgroup.
capd_a() {
	nsenter --net="/run/netns/$(tl_ns a)" bin/tapless-capd -i "$TL_IF_A" \
		-H hosta -l info --reorder-ms 200 "$@" &
	TL_LAST_PID=$!
	TL_PIDS+=("$TL_LAST_PID")
}
wait_log() {	# FILE TEXT: up to 10 s
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
attached() { "$bpftool" cgroup tree 2>/dev/null | grep -q "tapless-$TL_ID-"; }
send_py=tests/system/lib/stamp_send.py
peer=198.18.81.2

# Bad input: a port list wrong at byte 6; a directory that is no cgroup.
capd_a -w "$out" --stamp-cgroup "$cg" --stamp-ports 9001,x 2> "$out/e1"
wait "$TL_LAST_PID"
rc=$?
[ "$rc" -eq 1 ] && grep -q "byte 6" "$out/e1" || fail "bad --stamp-ports: exit $rc: $(cat "$out/e1")"
capd_a -w "$out" --stamp-cgroup "$out" 2> "$out/e2"
wait "$TL_LAST_PID"
rc=$?
[ "$rc" -eq 2 ] && grep -q "not a cgroup v2 directory" "$out/e2" ||
	fail "--stamp-cgroup on a plain directory: exit $rc: $(cat "$out/e2")"
attached && fail "a failed start left a program attached"

# Receivers in b: one connection each; 9006 keeps what it gets.
for p in 9001 9002 9003 9004 9005; do
	tl_bg b socat -u "TCP-LISTEN:$p,reuseaddr" OPEN:/dev/null
done
tl_bg b socat -u TCP-LISTEN:9006,reuseaddr "OPEN:$out/rx9006,creat"
sleep 0.3

# A session that is up before capd starts (and runs to the end).
in_cg a python3 "$send_py" tcp "$peer" 9006 100000 200 > /dev/null 2> "$out/long.err" &
long=$!
TL_PIDS+=("$long")
sleep 0.3

mkdir "$out/a" "$out/b"
capd_a -w "$out/a" --stamp-cgroup "$cg" --stamp-ports 9001-9003,9005,9006 --stats-interval 1 \
	2> "$out/capd_a.log"
ca=$TL_LAST_PID
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/b" -H hostb 2> "$out/capd_b.log"
cb=$TL_LAST_PID
wait_log "$out/capd_a.log" "capturing on" || fail "capd a did not start: $(cat "$out/capd_a.log")"
wait_log "$out/capd_b.log" "capturing on" || fail "capd b did not start: $(cat "$out/capd_b.log")"
grep -q "armed 1 connections that were up already" "$out/capd_a.log" ||
	fail "the session up before capd was not armed: $(grep stamp-cgroup "$out/capd_a.log")"
attached || fail "bpftool cgroup tree shows no program on $cg"

in_cg a python3 "$send_py" tcp "$peer" 9001 1000 1000 2> "$out/s1.err" || fail "python sender: $(cat "$out/s1.err")"
in_cg a build/tools/uring_send "$peer" 9002 1000 200 1000 > "$out/s2.out" 2>&1 ||
	fail "io_uring sender: $(cat "$out/s2.out")"
in_cg a python3 "$send_py" sendfile "$peer" 9003 500 1000 2> "$out/s3.err" || fail "sendfile sender: $(cat "$out/s3.err")"
# Not stamped: a port not chosen, a program outside the cgroup.
in_cg a python3 "$send_py" tcp "$peer" 9004 200 1000 2> "$out/s4.err" || fail "sender 9004: $(cat "$out/s4.err")"
tl_exec a python3 "$send_py" tcp "$peer" 9005 200 1000 2> "$out/s5.err" || fail "sender 9005: $(cat "$out/s5.err")"
sleep 0.5
# The TX stamp counters, ring buffer losses among them, come while capd
# runs (every --stats-interval), not only at exit.
wait_log "$out/capd_a.log" "tx stamps: .* ring buffer full" && kill -0 "$ca" 2>/dev/null ||
	fail "capd a: no periodic TX stamp line while it runs: $(tail -3 "$out/capd_a.log")"

kill -TERM "$ca" "$cb"
wait "$ca" || fail "capd a exited $?: $(tail -5 "$out/capd_a.log")"
wait "$cb" || fail "capd b exited $?"
attached && fail "SIGTERM: a program is still attached: $("$bpftool" cgroup tree | grep -A3 "tapless-$TL_ID-")"
kill -0 "$long" 2>/dev/null || fail "the sender died with capd (SIGTERM): $(cat "$out/long.err")"
grep -q "lost (ring buffer full)" "$out/capd_a.log" || fail "capd a: no BPF stamp account"
grep -q " 0 lost (ring buffer full)" "$out/capd_a.log" || fail "capd a lost stamps: $(grep 'lost (ring' "$out/capd_a.log")"
# The last periodic line (logged again at exit) says what the exit
# account says.
ring_exit=$(sed -n 's/.* \([0-9]*\) lost (ring buffer full).*/\1/p' "$out/capd_a.log")
ring_per=$(grep 'tx stamps: ' "$out/capd_a.log" | tail -1 | sed -n 's/.* \([0-9]*\) ring buffer full.*/\1/p')
[ -n "$ring_per" ] && [ "$ring_per" = "$ring_exit" ] ||
	fail "capd a: periodic line says '$ring_per' lost to a full ring, the exit account '$ring_exit'"

fa=$(ls "$out"/a/*.pcapng)
fb=$(ls "$out"/b/*.pcapng)
tx='frame.interface_description contains "sending program"'
cap='!(frame.interface_description contains "sending program") && frame.packet_flags_direction == 2'
fields() {	# FILTER FIELDS...: sorted unique field values of matching frames
	local flt=$1
	shift
	tshark -r "$fa" -Y "$flt" -T fields $(printf -- '-e %s ' "$@") 2>/dev/null | sort -u
}
# coverage PORT: how many data segments were captured leaving for PORT,
# and how many of them have a sender stamp (same port and raw sequence
# number). Only frames from the first stamped one on count: a session up
# before capd had frames before it was armed.
coverage() {
	local q='{ print $1 ":" $2, $3 }'
	tshark -r "$fa" -Y "$tx && tcp.dstport == $1" -T fields -e tcp.srcport \
		-e tcp.seq_raw -e frame.time_epoch 2>/dev/null | awk "$q" | sort > "$out/tx.$1"
	tshark -r "$fa" -Y "$cap && tcp.dstport == $1 && tcp.len > 0" -T fields \
		-e tcp.srcport -e tcp.seq_raw -e frame.time_epoch 2>/dev/null |
		awk "$q" | sort > "$out/cap.$1"
	awk -v txf="$out/tx.$1" 'FILENAME == txf { if (first == "" || $2 < t) { first = $1; t = $2 }; tx[$1] = 1; next }
	     { if (!($1 in t0) || $2 < t0[$1]) t0[$1] = $2; k[$1] = 1 }
	     END { start = first == "" ? 0 : t0[first]
		   for (x in k) if (t0[x] >= start) { n++; if (x in tx) m++ }
		   print n + 0, m + 0 }' "$out/tx.$1" "$out/cap.$1"
}
for p in 9001 9002 9003 9006; do
	read -r n k < <(coverage "$p")
	echo "stampcg: port $p: $k of $n data segments stamped by the kernel for BPF"
	[ "$n" -ge 100 ] || fail "port $p: only $n data segments captured"
	[ $((k * 1000)) -ge $((n * 999)) ] || fail "port $p: $k of $n data segments stamped (< 99.9 %)"
done
for p in 9004 9005; do
	read -r n k < <(coverage "$p")
	[ "$n" -ge 100 ] || fail "port $p: only $n data segments captured"
	[ "$(wc -l < "$out/tx.$p")" -eq 0 ] || fail "port $p: $(wc -l < "$out/tx.$p") stamps, want none"
done
# Each stamp after the packet socket's stamp of its frame (taken before
# the driver), and less than a second after: the stamps are converted
# from CLOCK_TAI to CLOCK_REALTIME, and a wrong conversion is seconds off.
fields "$tx && tcp.dstport == 9001" tcp.seq_raw frame.time_epoch > "$out/t.tx"
fields "$cap && tcp.dstport == 9001 && tcp.len > 0" tcp.seq_raw frame.time_epoch > "$out/t.cap"
join "$out/t.tx" "$out/t.cap" | tr -d . |
	awk '{ n++ } length($2) == length($3) && $2 >= $3 && $2 - $3 < 1e9 { ok++ }
	     END { exit !(n >= 100 && ok == n) }' ||
	fail "stamps not just after the packet socket's: $(join "$out/t.tx" "$out/t.cap" | head -3)"

# The file in time order (every stamp here is host time): the kernel's
# stamps reach capd within its loop, well inside --reorder-ms.
build/tools/capdump "$fa" > "$out/dump" || fail "capdump: $(tail -1 "$out/dump")"
grep -v '^iface' "$out/dump" | awk 'p && $1 < p { bad++ } { p = $1 } END { exit bad > 0 }' ||
	fail "capture a: frames not in time order"

# tapless correlate takes the sender's stamps.
bin/tapless correlate -j "hosta@198.18.81.1=$fa" "hostb@198.18.81.2=$fb" > "$out/corr.json" 2> "$out/corr.err" ||
	fail "correlate: $(cat "$out/corr.err")"
jq -e '.inputs[] | select(.host == "hosta") | .sender_stamped > 0 and .tap_tx_skipped > 0' "$out/corr.json" > /dev/null ||
	fail "correlate did not use the sender stamps: $(jq -c '.inputs[] | {host, sender_stamped, tap_tx_skipped}' "$out/corr.json" 2>&1)"

# SIGKILL: the links die with capd's descriptors; the sender goes on.
mkdir "$out/k"
capd_a -w "$out/k" --stamp-cgroup "$cg" 2> "$out/capd_k.log"
ck=$TL_LAST_PID
wait_log "$out/capd_k.log" "capturing on" || fail "capd (for SIGKILL) did not start: $(cat "$out/capd_k.log")"
attached || fail "SIGKILL run: nothing attached before the kill"
kill -KILL "$ck"
wait "$ck" 2>/dev/null
attached && fail "SIGKILL: a program is still attached: $("$bpftool" cgroup tree | grep -A3 "tapless-$TL_ID-")"
before=$(stat -c %s "$out/rx9006")
sleep 0.5
kill -0 "$long" 2>/dev/null && [ "$(stat -c %s "$out/rx9006")" -gt "$before" ] ||
	fail "the sender stopped after capd's SIGKILL: $(cat "$out/long.err")"

[ "$fails" -eq 0 ] && echo "ok: stamp cgroup"
[ "$fails" -eq 0 ]
