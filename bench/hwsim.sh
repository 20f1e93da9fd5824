#!/bin/bash
# hwsim — what libtapless-hwsim.so adds to each stamped packet. The same
# program (build/tools/stampcost) reads COUNT datagrams with their receive
# stamps and their transmit stamps off the error queue, bare (the kernel's
# software stamps) and under tapless-hwsim (the same stamps made hardware
# ones of a simulated PHC), side by side in one run; the time of the
# recvmsg() calls alone is compared. Target: at most 1 us added per stamp.
# Figures only: a benchmark never fails on a number.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
if [ "$(id -u)" -ne 0 ]; then echo "hwsim: skipped: needs root"; exit 0; fi
tl_init
TL_OUT=$(mktemp -d /tmp/tapless-bench-hwsim.XXXXXX)
trap 'tl_cleanup; rm -rf "$TL_OUT"' EXIT
n=${HWSIM_BENCH_COUNT:-20000}
tl_pair a b 198.18.25 || exit 1
run() { "$@" build/tools/stampcost "/run/netns/$(tl_ns a)" 198.18.25.1 "$TL_IF_A" \
	"/run/netns/$(tl_ns b)" 198.18.25.2 "$TL_IF_B" $((9000 + RANDOM % 1000)) "$n"; }
bare=$(run)
sim=$(run bin/tapless-hwsim --dir "$TL_OUT" --host bench --)
[ -n "$bare" ] && [ -n "$sim" ] || { echo "hwsim: stampcost did not run"; exit 1; }
read -r _ e0 em0 _ r0 rm0 _ h0 <<< "$bare"
read -r _ e1 em1 _ r1 rm1 _ h1 <<< "$sim"
echo "hwsim: $n datagrams, recvmsg time per stamped message (ns): p50 mean"
printf '  %-22s %s\n' "bare kernel" "$bare" "under tapless-hwsim" "$sim"
awk -v e0="$e0" -v e1="$e1" -v em0="$em0" -v em1="$em1" -v r0="$r0" -v r1="$r1" \
	-v rm0="$rm0" -v rm1="$rm1" -v h0="$h0" -v h1="$h1" 'BEGIN {
	printf "  added per TX stamp: p50 %+d ns, mean %+d ns (ratio of means %.2f)\n", e1 - e0, em1 - em0, (em0 > 0 ? em1 / em0 : 0)
	printf "  added per RX stamp: p50 %+d ns, mean %+d ns (ratio of means %.2f)\n", r1 - r0, rm1 - rm0, (rm0 > 0 ? rm1 / rm0 : 0)
	printf "  hardware stamps delivered: bare %d, under hwsim %d (target: at most 1000 ns added)\n", h0, h1 }'
