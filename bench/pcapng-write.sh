#!/bin/sh
# pcapng-write — the capture file writer on its own: 5 million 64-byte
# frames to a file in /tmp, fsync at close included. Figures only.
set -u
cd "$(dirname "$0")/.." || exit 2
build/tools/capgen --bench "${PCAPNG_BENCH_PACKETS:-5000000}"
