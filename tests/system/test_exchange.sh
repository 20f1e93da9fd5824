#!/bin/bash
# Stamped one-way exchanges between two namespaces over a veth pair: UDP and
# TCP, 10,000 messages of mixed sizes at 10,000/s. Every message must have a
# TX stamp matched to it by OPT_ID key (datagram counter, byte offset) and an
# RX stamp, none lost, one-way latency positive and under a sanity bound of
# 1 s, and the source must be software (veth has no PHC). The bound is loose
# on purpose: this tests that stamps are matched to their messages, not how
# fast a busy machine is (CI saw a p99.9 of 3 ms for corked TCP with two
# cores shared; a segment the kernel drops is resent a retransmission timer
# later, and that message really did take that long; the sender reports how
# many retransmissions there were). Latency figures belong in bench/
# (bench/ts-rate.sh, bench/pingpong.sh). A TCP run with writes merged
# under TCP_CORK checks that merged writes still map to their bytes.
set -u
. scripts/netns.sh
tl_setup exchange 198.18.0
out=$TL_OUT
tsx=build/tools/tsx
fails=0

# exchange NAME PROTO COUNT RATE MIN MAX [SEND_OPTS] [-- JOIN_OPTS]
exchange() {
	local name=$1 proto=$2 count=$3 rate=$4 min=$5 max=$6
	shift 6
	local sopts=() jopts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sopts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift && jopts=("$@")
	local port=$((9000 + RANDOM % 1000))

	tl_bg b "$tsx" recv --proto "$proto" --bind "198.18.0.2:$port" \
		--count "$count" --out "$out/$name.rx" --interface "$TL_IF_B" \
		> "$out/$name.ready"
	local rpid=$TL_LAST_PID
	for _ in $(seq 100); do
		grep -q ready "$out/$name.ready" && break
		sleep 0.05
	done
	if ! tl_exec a "$tsx" send --proto "$proto" --to "198.18.0.2:$port" \
		--count "$count" --rate "$rate" --min-size "$min" --max-size "$max" \
		--out "$out/$name.tx" --interface "$TL_IF_A" "${sopts[@]}"; then
		echo "FAIL: $name: sender failed"; fails=$((fails + 1)); return
	fi
	if ! wait "$rpid"; then
		echo "FAIL: $name: receiver did not get every message"
		fails=$((fails + 1)); return
	fi
	if ! "$tsx" join --tx "$out/$name.tx" --rx "$out/$name.rx" \
		--count "$count" --max-ns 1000000000 --label "$name" "${jopts[@]}"; then
		echo "FAIL: $name: checks failed"; fails=$((fails + 1)); return
	fi
	# The stamps must say what they are: software, on veth. The same
	# 1 s sanity bound as above: with the default 1 ms a loaded machine's
	# outlier made .ok false and this check fail on the wrong question.
	if ! "$tsx" join --tx "$out/$name.tx" --rx "$out/$name.rx" \
		--count "$count" --max-ns 1000000000 --json "${jopts[@]}" |
		jq -e '.source == "sw" and .ok' >/dev/null; then
		echo "FAIL: $name: source not reported as software"
		fails=$((fails + 1)); return
	fi
	echo "ok: $name"
}

exchange udp udp 10000 10000 16 1472
# Up to 4000 bytes: messages split over several segments (MSS 1448).
exchange tcp tcp 10000 10000 16 4000
# Four writes at a time under TCP_CORK: the kernel merges them into one skb
# with one stamp; the earlier three must be mapped to it, marked shared.
exchange tcp-merged tcp 2000 10000 16 200 --cork 4 -- --shared yes

[ "$fails" -eq 0 ]
