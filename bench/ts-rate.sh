#!/bin/bash
# ts-rate — can a sender stamp every message at high rates? For UDP and TCP
# over a veth pair between two namespaces, at 10k to 200k messages/s for
# 2 s each, print how many TX stamps were lost or shared, how many messages
# had no RX stamp, and the one-way latency p50/p99/max (software stamps).
# Figures only: a benchmark never fails on a number.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup ts-rate 198.18.2
out=$TL_OUT
tsx=build/tools/tsx
secs=${TS_RATE_SECONDS:-2}

printf '%-5s %8s %9s %6s %6s %7s %9s %9s %9s\n' proto rate messages lostTX sharedTX noRX p50_ns p99_ns max_ns
for proto in udp tcp; do
	for rate in ${TS_RATE_RATES:-10000 50000 100000 200000}; do
		n=$((rate * secs)) port=$((9000 + RANDOM % 1000))
		tl_bg b "$tsx" recv --proto "$proto" --bind "198.18.2.2:$port" \
			--count "$n" --out "$out/rx" > "$out/ready" 2>/dev/null
		rpid=$TL_LAST_PID
		for _ in $(seq 100); do grep -q ready "$out/ready" && break; sleep 0.05; done
		tl_exec a "$tsx" send --proto "$proto" --to "198.18.2.2:$port" \
			--count "$n" --rate "$rate" --min-size 64 --max-size 256 \
			--out "$out/tx" 2>/dev/null
		wait "$rpid"
		"$tsx" join --tx "$out/tx" --rx "$out/rx" --count "$n" \
			--max-ns 1000000000000 --shared any --json > "$out/j" 2>/dev/null
		jq -r --arg p "$proto" --arg r "$rate" '[$p, $r, .messages, .lost_tx_stamp,
			.shared_tx_stamp, .missing_rx, .latency_ns.p50, .latency_ns.p99,
			.latency_ns.max] | @tsv' "$out/j" |
			awk -F'\t' '{ printf "%-5s %8s %9s %6s %6s %7s %9s %9s %9s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9 }'
	done
done
