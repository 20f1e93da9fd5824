#!/bin/bash
# capd-rate — sustained capture of small frames (60 bytes) into pcapng on a
# veth pair: tapless-capd in one namespace, a sender in the other, 3 s per
# rate. Prints, per offered rate, the rate the sender reached (on 2 cores the
# sender's core also runs the veth receive path, which caps it), the frames
# the kernel passed to the capture and dropped, and what reached the file.
# The sender writes whole frames on a packet socket past the qdisc, to an
# Ethernet address that is not the receiver's, so neither end spends its
# time in the UDP stack (CAPD_RATE_SENDER=udp: through a UDP socket
# instead, which tops out far lower on this machine). Figures only.
# Its peer, tcpdump writing nanosecond pcap (-w, -B of the same size, the
# same filter, on the same core), takes the same offered rate right after
# each capd run: its CPU per frame beside capd's, and their ratio.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup capd-rate 198.18.6
out=$TL_OUT
secs=${CAPD_RATE_SECONDS:-3}
# CAPD_RATE_OPTS adds capd options, e.g. "--tx-socket $dir/s" to measure the
# reorder buffer's cost.
# CPU time per frame charged to capd while the sender runs (user + system,
# from /proc, from when it says it is capturing; with the
# receive path steered to capd's core, the softirq work of receiving and
# copying into the rings is charged there too) gives the rate one core
# would sustain when the sender is what limits the run.
# With two cores or more: the sender alone on core 0; the receive path (RPS)
# and capd on core 1, as a capture host's NIC queue and daemon would be.
if [ "$(nproc)" -ge 2 ] && [ -z "${CAPD_RATE_SAME_CORE:-}" ]; then
	tl_exec b sh -c "echo 2 > /sys/class/net/$TL_IF_B/queues/rx-0/rps_cpus" ||
		echo "capd-rate: cannot steer receive to core 1: numbers include it on core 0"
	pin_tx="taskset -c 0" pin_cap="taskset -c 1"
else
	pin_tx="" pin_cap=""
fi
# link_dropped: frames the veth pair dropped before any capture could see
# them (the receive backlog, net.core.netdev_max_backlog, overflowed).
linkdrops() {
	echo $(( $(tl_exec a cat /sys/class/net/$TL_IF_A/statistics/tx_dropped) +
		 $(tl_exec b cat /sys/class/net/$TL_IF_B/statistics/rx_dropped) ))
}
# blast_run RATE: the sender at RATE for $secs s; prints the rate reached.
blast_run() {
	if [ "${CAPD_RATE_SENDER:-raw}" = raw ]; then
		tl_exec a $pin_tx build/tools/blast -i "$TL_IF_A" 198.18.6.2 9999 "$1" "$secs" | awk '{print $NF}'
	else
		tl_exec a $pin_tx build/tools/blast 198.18.6.2 9999 "$1" "$secs" | awk '{print $NF}'
	fi
}
# ready FILE TEXT: wait (5 s at most) until the capture says it is on.
ready() {
	for _ in $(seq 50); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done
	echo "capd-rate: no '$2' in $1 after 5 s" >&2
}
# cpuns PID: CPU time so far, ns, over all its threads (the scheduler's
# own count: /proc/PID/stat's ticks are 10 ms, coarser than a run's total
# at the lower rates).
cpuns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }
# ns_per_frame CPU_NS FRAMES
ns_per_frame() {
	awk -v c="$1" -v n="$2" 'BEGIN { printf "%.0f", n ? c / n : 0 }'
}
# tcpdump_run RATE: tcpdump under the same traffic; "SENT FRAMES DROPPED
# IN_FILE NS_PER_FRAME" (frames: received by its filter; in the file:
# what it says it captured).
tcpdump_run() {
	local pid sent cpu tfr tdrop tin
	rm -f "$out/td.pcap"
	tl_bg b $pin_cap tcpdump -i "$TL_IF_B" -w "$out/td.pcap" -B 262144 -n -q \
		--time-stamp-precision nano udp port 9999 2> "$out/td.log"
	pid=$TL_LAST_PID
	ready "$out/td.log" "listening on"
	cpu=$(cpuns "$pid")
	sent=$(blast_run "$1")
	sleep 0.3
	cpu=$(( $(cpuns "$pid") - cpu ))
	kill -TERM "$pid"; wait "$pid"
	tin=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$out/td.log")
	tfr=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter.*/\1/p' "$out/td.log")
	tdrop=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel.*/\1/p' "$out/td.log")
	echo "$sent ${tfr:-0} ${tdrop:-0} ${tin:-0} $(ns_per_frame "$cpu" "${tin:-0}")"
}
printf '%10s %14s %12s %12s %10s %10s %12s %14s | %14s %10s %10s %15s %10s\n' offered sender_reached link_dropped kernel_frames dropped in_file capd_ns/frame capd_core_max/s \
	tcpdump_reached td_dropped td_in_file tcpdump_ns/frame capd/td
for rate in ${CAPD_RATE_RATES:-100000 250000 500000 750000 1000000}; do
	rm -f "$out"/*.pcapng
	tl_bg b $pin_cap bin/tapless-capd -i "$TL_IF_B" -w "$out" -H bench -B 262144 \
		--log-level info --stats-interval 3600 ${CAPD_RATE_OPTS:-} udp port 9999 2> "$out/log"
	capd=$TL_LAST_PID
	ready "$out/log" "capturing on"
	ld=$(linkdrops)
	cpu=$(cpuns "$capd")
	sent=$(blast_run "$rate")
	sleep 0.3
	cpu=$(( $(cpuns "$capd") - cpu ))
	kill -TERM "$capd"; wait "$capd"
	line=$(grep "frames" "$out/log" | grep -v "stopped\|tx socket" | tail -1)
	frames=$(echo "$line" | sed -n 's/.*: \([0-9]*\) frames.*/\1/p')
	drops=$(echo "$line" | sed -n 's/.*frames, \([0-9]*\) dropped.*/\1/p')
	infile=$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$out/log")
	nspf=$(ns_per_frame "$cpu" "$infile")
	ldiff=$(( $(linkdrops) - ld ))
	read -r tsent _tfr tdrop tin tnspf <<< "$(tcpdump_run "$rate")"
	printf '%10s %14s %12s %12s %10s %10s %12s %14s | %14s %10s %10s %15s %10s\n' "$rate" "$sent" "$ldiff" "$frames" "${drops:-0}" \
		"$infile" "$nspf" "$(awk -v x="$nspf" 'BEGIN { printf "%.0f", x ? 1e9 / x : 0 }')" \
		"$tsent" "$tdrop" "$tin" "$tnspf" "$(awk -v a="$nspf" -v b="$tnspf" 'BEGIN { printf b ? "%.2f" : "-", a / b }')"
done
