#!/bin/bash
# stamp-cgroup — what capd --stamp-cgroup costs the programs it stamps:
# sockperf ping-pong (TCP, 64-byte messages) from a client inside a cgroup
# in namespace a to a server in b, over veth, with and without the BPF
# program attached to the client's cgroup, and with the client under the
# preload shim instead (tapless-stamp, handing to capd --tx-socket), in
# rotating rounds of one run. Both sides run a tapless-capd in a with the same capture (lo, a
# filter nothing passes), so the difference is the program's and the
# stamps' (the client's sends, their SCHED/SND/ACK callbacks, capd taking
# the ring buffer), not the capture's.
#
# Prints per round sockperf's half round trip p50/p99/p99.9 (µs), then
# the median of the rounds per side and what BPF and the shim each add,
# side by side; and, from the
# kernel's BPF run-time statistics (enabled through a descriptor for the
# "on" rounds only, off again when it closes), the program's own cost per
# callback and per stamped send. Figures only; never fails.
#
# STAMP_BENCH_ROUNDS (default 4) rounds of STAMP_BENCH_SECONDS (default 5).
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup stamp-cgroup 198.18.83
out=$TL_OUT
rounds=${STAMP_BENCH_ROUNDS:-4}
secs=${STAMP_BENCH_SECONDS:-5}

why=$(bin/tapless ifinfo -j lo 2>/dev/null | jq -r '.kernel | if .cgroup_stamping then "" else .cgroup_stamping_why end')
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$why" ] || [ -z "$cgroot" ] || ! command -v sockperf > /dev/null; then
	echo "bench stamp-cgroup: skipped: ${why:-no cgroup v2 or no sockperf}"
	exit 0
fi
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
cg=$cgroot/tapless-$TL_ID
cg_cleanup() {
	[ -d "$cg" ] || return 0
	echo 1 > "$cg/cgroup.kill" 2>/dev/null
	for _ in $(seq 100); do grep -q . "$cg/cgroup.procs" || break; sleep 0.05; done
	rmdir "$cg" 2>/dev/null
}
trap 'cg_cleanup; tl_cleanup; rm -rf "$out"' EXIT
mkdir "$cg" || exit 0

# Client and server on one core, capd on the other: where the two ends
# land otherwise changes from round to round, and with it p50 by 20 µs
# on this VM, drowning what is measured.
if [ "$(nproc)" -ge 2 ]; then
	pin="taskset -c 0" pin_capd="taskset -c 1"
else
	pin="" pin_capd=""
fi
tl_bg b $pin sockperf server --tcp -i 198.18.83.2 -p 11111 > /dev/null 2>&1
sleep 0.5

# The kernel's BPF run-time statistics, while this descriptor is open
# (BPF_ENABLE_STATS): nothing to undo if the bench dies.
stats_on() {
	python3 -c '
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(16)	# union bpf_attr: enable_stats.type = 0 (run time)
fd = libc.syscall(321, 32, attr, 16)	# bpf(BPF_ENABLE_STATS)
print(fd, flush=True)
signal.pause()' > "$out/stats.fd" 2>/dev/null &
	statsp=$!
	TL_PIDS+=("$statsp")
}
stats_off() { kill "$statsp" 2>/dev/null; wait "$statsp" 2>/dev/null; }

# round MODE: capd in a (stamping the cgroup or not), sockperf client in
# the cgroup; prints "p50 p99 avg" in µs.
# round off|on|shim: no stamping; capd --stamp-cgroup; the client under
# tapless-stamp handing to capd --tx-socket (the preload shim's cost, in
# the same run, for comparison).
round() {
	local opts=() wrap=() cpid
	case $1 in
	on) opts=(--stamp-cgroup "$cg") ;;
	shim)
		opts=(--tx-socket "$out/tx.sock")
		wrap=(bin/tapless-stamp --tx-socket "$out/tx.sock" --) ;;
	esac
	mkdir -p "$out/cap"
	nsenter --net="/run/netns/$(tl_ns a)" $pin_capd bin/tapless-capd -i lo -w "$out/cap" \
		-H bench --stats-interval 3600 "${opts[@]}" udp port 9 2> "$out/capd.$1.log" &
	cpid=$!
	TL_PIDS+=("$cpid")
	for _ in $(seq 200); do grep -q "capturing on" "$out/capd.$1.log" && break; sleep 0.05; done
	if [ "$1" = on ]; then
		stats_on
		sleep 0.2
	fi
	bash -c 'echo $$ > "$0/cgroup.procs" && exec ip netns exec "$1" "${@:2}"' \
		"$cg" "$(tl_ns a)" $pin "${wrap[@]}" sockperf ping-pong --tcp -i 198.18.83.2 -p 11111 \
		-m 64 -t "$secs" > "$out/sp.$1" 2>&1
	if [ "$1" = on ]; then
		id=$("$bpftool" cgroup show "$cg" 2>/dev/null | awk '/sock_ops/ { print $1; exit }')
		"$bpftool" prog show id "$id" 2>/dev/null |
			sed -n 's/.*run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2/p' >> "$out/runtime"
		stats_off
	fi
	kill -TERM "$cpid"
	wait "$cpid" 2>/dev/null
	rm -rf "$out/cap"
	sed 's/\x1b\[[0-9;]*m//g' "$out/sp.$1" | awk '
		/percentile 50.000/ { p50 = $NF } /percentile 99.000/ { p99 = $NF }
		/percentile 99.900/ { p999 = $NF }
		/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); avg = $0 }
		END { print p50 + 0, p99 + 0, avg + 0, p999 + 0 }'
}

echo "== capd --stamp-cgroup: sockperf ping-pong, TCP, 64 B, veth, $(nproc) cores; half round trip, µs"
printf '%-6s %-4s %9s %9s %9s %9s\n' round mode p50 p99 avg p99.9
: > "$out/off"
: > "$out/on"
: > "$out/shim"
for r in $(seq "$rounds"); do
	# Rotate which mode goes first: drift on a shared machine hits all
	# of them alike.
	case $((r % 3)) in
	1) order="off on shim" ;; 2) order="on shim off" ;; *) order="shim off on" ;;
	esac
	for m in $order; do
		read -r p50 p99 avg p999 < <(round "$m")
		printf '%-6s %-4s %9.3f %9.3f %9.3f %9.3f\n' "$r" "$m" "$p50" "$p99" "$avg" "$p999"
		echo "$p50 $p99 $avg $p999" >> "$out/$m"
	done
done
med() {	# FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# Per side p50, p99, p99.9 (medians of the rounds), then what BPF and the
# shim add to the bare program, side by side.
off50=$(med "$out/off" 1); off99=$(med "$out/off" 2); off999=$(med "$out/off" 4)
on50=$(med "$out/on" 1); on99=$(med "$out/on" 2); on999=$(med "$out/on" 4)
shim50=$(med "$out/shim" 1); shim99=$(med "$out/shim" 2); shim999=$(med "$out/shim" 4)
printf '%-16s %9s %9s %9s   (µs, medians of %d rounds of %d s)\n' "" p50 p99 p99.9 "$rounds" "$secs"
printf '%-16s %9.3f %9.3f %9.3f\n' "bare" "$off50" "$off99" "$off999"
printf '%-16s %9.3f %9.3f %9.3f\n' "BPF (cgroup)" "$on50" "$on99" "$on999"
printf '%-16s %9.3f %9.3f %9.3f\n' "shim" "$shim50" "$shim99" "$shim999"
printf '%-16s %+9.3f %+9.3f %+9.3f   (targets: p50 <= +1, p99 <= +2)\n' "added by BPF" \
	"$(echo "$on50 - $off50" | bc -l)" "$(echo "$on99 - $off99" | bc -l)" "$(echo "$on999 - $off999" | bc -l)"
printf '%-16s %+9.3f %+9.3f %+9.3f\n' "added by shim" \
	"$(echo "$shim50 - $off50" | bc -l)" "$(echo "$shim99 - $off99" | bc -l)" "$(echo "$shim999 - $off999" | bc -l)"
printf '%-16s %8.2fx %8.2fx %8.2fx   (BPF / bare)\n' "ratio BPF" \
	"$(echo "$on50 / $off50" | bc -l)" "$(echo "$on99 / $off99" | bc -l)" "$(echo "$on999 / $off999" | bc -l)"
printf '%-16s %8.2fx %8.2fx %8.2fx   (shim / bare)\n' "ratio shim" \
	"$(echo "$shim50 / $off50" | bc -l)" "$(echo "$shim99 / $off99" | bc -l)" "$(echo "$shim999 / $off999" | bc -l)"
grep "sends stamped" "$out/capd.on.log" | sed 's/^tapless-capd: /last "on" round: capd: /'
if [ -s "$out/runtime" ]; then
	# Callbacks: per send SENDMSG, SCHED, SND, ACK (4), plus establishment.
	awk '{ t += $1; n += $2 } END {
		if (n) printf "BPF program: %d callbacks, %.0f ns each on average (%.2f µs per stamped send, 4 callbacks)\n", n, t / n, 4 * t / n / 1000 }' "$out/runtime"
fi
exit 0
