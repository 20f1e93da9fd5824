#!/bin/bash
# swemu — forwarding capacity of tapless-swemu: host a floods small UDP
# frames (64-byte datagrams, to an unknown Ethernet address, so swemu floods
# them to p2 and host b's stack drops them at once) through the switch
# namespace for a few seconds, at latency 0 and with the arista-7124sx
# preset, writing the truth as in the lab. Prints frames offered, forwarded
# and lost (kernel receive buffer, queue), forwarded packets/s, and the
# achieved residence. Figures only: a benchmark never fails on a number.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup swemu-bench 198.18.43
out=$TL_OUT
secs=${SWEMU_BENCH_SECONDS:-2}

# The switch lab: hosts ha, hb on veths to namespace s (p1, p2).
for n in ha hb s; do
	ip netns add "$(tl_ns $n)" && TL_NS+=("$(tl_ns $n)") || exit 1
	ip -n "$(tl_ns $n)" link set lo up
done
HA=tl${TL_ID}x; HB=tl${TL_ID}y
ip link add "$HA" netns "$(tl_ns ha)" type veth peer name p1 netns "$(tl_ns s)" &&
ip link add "$HB" netns "$(tl_ns hb)" type veth peer name p2 netns "$(tl_ns s)" || exit 1
ip -n "$(tl_ns ha)" addr add 198.18.44.1/24 dev "$HA" &&
ip -n "$(tl_ns hb)" addr add 198.18.44.2/24 dev "$HB" &&
ip -n "$(tl_ns ha)" link set "$HA" up && ip -n "$(tl_ns hb)" link set "$HB" up &&
ip -n "$(tl_ns s)" link set p1 up && ip -n "$(tl_ns s)" link set p2 up || exit 1

printf '%-14s %8s %9s %9s %8s %7s %10s %11s %10s\n' model rate offered forwarded kdrops qfull fwd_pps res_mean_ns res_p99_ns
for model in "--latency 0" "--preset arista-7124sx"; do
	for rate in ${SWEMU_BENCH_RATES:-100000 300000 1000000}; do
		mkdir -p "$out/w"
		tl_bg s bin/tapless-swemu -i p1 -i p2 -w "$out/w" $model --json \
			> "$out/j" 2> "$out/log"
		sw=$TL_LAST_PID
		for _ in $(seq 100); do grep -q switching "$out/log" && break; sleep 0.05; done
		sleep 0.2
		sent=$(tl_exec ha build/tools/blast -i "$HA" 198.18.44.2 9 "$rate" "$secs" 64 2>&1 |
			sed -n 's/.*sent \([0-9]*\) datagrams.*/\1/p')
		sleep 0.5
		kill -TERM "$sw"
		wait "$sw"
		# Forwarding rate over the time swemu was forwarding: first
		# ingress on p1 to last egress on p2 (a backlog is drained after
		# the sender stops).
		span=$( { build/tools/capdump "$out/w/p1.pcapng" | awk '$3 == "in" { print $1; exit }'
			  build/tools/capdump "$out/w/p2.pcapng" | awk '$3 == "out" { t = $1 } END { print t }'; } |
			awk 'NR == 1 { a = $1 } NR == 2 { printf "%.6f", ($1 - a) / 1e9 }')
		jq -r --arg m "$(echo "$model" | sed 's/--preset //; s/--latency /latency /')" \
			--arg rate "$rate" --arg sent "${sent:-?}" --arg span "${span:-0}" '
			(.ports[] | select(.name == "p2")) as $p2 |
			(.ports[] | select(.name == "p1")) as $p1 |
			[$m, $rate, $sent, $p2.tx, $p1.kernel_drops, $p2.queue_overflow,
			 (if ($span | tonumber) > 0 then $p2.tx / ($span | tonumber) | floor else "-" end),
			 (.pairs[0].residence_ns.mean // 0 | floor), (.pairs[0].residence_ns.p99 // 0)] | @tsv' "$out/j" |
			awk -F'\t' '{ printf "%-14s %8s %9s %9s %8s %7s %10s %11s %10s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9 }'
		rm -rf "$out/w"
	done
done
