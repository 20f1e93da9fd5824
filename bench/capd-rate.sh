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
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup capd-rate 198.18.6
out=$TL_OUT
secs=${CAPD_RATE_SECONDS:-3}
# CAPD_RATE_OPTS adds capd options, e.g. "--tx-socket $dir/s" to measure the
# reorder buffer's cost.
# CPU time per frame charged to capd (user + system, from /proc; with the
# receive path steered to capd's core, the softirq work of receiving and
# copying into the rings is charged there too) gives the rate one core
# would sustain when the sender is what limits the run.
tck=$(getconf CLK_TCK)
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
printf '%10s %14s %12s %12s %10s %10s %12s %14s\n' offered sender_reached link_dropped kernel_frames dropped in_file capd_ns/frame capd_core_max/s
for rate in ${CAPD_RATE_RATES:-100000 250000 500000 750000 1000000}; do
	rm -f "$out"/*.pcapng
	tl_bg b $pin_cap bin/tapless-capd -i "$TL_IF_B" -w "$out" -H bench -B 262144 \
		--log-level info --stats-interval 3600 ${CAPD_RATE_OPTS:-} udp port 9999 2> "$out/log"
	capd=$TL_LAST_PID
	sleep 0.5
	ld=$(linkdrops)
	if [ "${CAPD_RATE_SENDER:-raw}" = raw ]; then
		sent=$(tl_exec a $pin_tx build/tools/blast -i "$TL_IF_A" 198.18.6.2 9999 "$rate" "$secs" | awk '{print $NF}')
	else
		sent=$(tl_exec a $pin_tx build/tools/blast 198.18.6.2 9999 "$rate" "$secs" | awk '{print $NF}')
	fi
	sleep 0.3
	cpu=$(awk '{ print $14 + $15 }' "/proc/$capd/stat")
	kill -TERM "$capd"; wait "$capd"
	line=$(grep "frames" "$out/log" | grep -v "stopped\|tx socket" | tail -1)
	frames=$(echo "$line" | sed -n 's/.*: \([0-9]*\) frames.*/\1/p')
	drops=$(echo "$line" | sed -n 's/.*frames, \([0-9]*\) dropped.*/\1/p')
	infile=$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$out/log")
	nspf=$(awk -v c="$cpu" -v t="$tck" -v n="$infile" 'BEGIN { printf "%.0f", n ? c / t * 1e9 / n : 0 }')
	printf '%10s %14s %12s %12s %10s %10s %12s %14s\n' "$rate" "$sent" "$(( $(linkdrops) - ld ))" "$frames" "${drops:-0}" \
		"$infile" "$nspf" "$(awk -v x="$nspf" 'BEGIN { printf "%.0f", x ? 1e9 / x : 0 }')"
done
