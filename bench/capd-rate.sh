#!/bin/bash
# capd-rate — sustained capture of small frames (60 bytes) into pcapng on a
# veth pair: tapless-capd in one namespace, a sender in the other, 3 s per
# rate. Prints, per offered rate, the rate the sender reached (on 2 cores the
# sender's core also runs the veth receive path, which caps it), the frames
# the kernel passed to the capture and dropped, and what reached the file.
# Figures only.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup capd-rate 198.18.6
out=$TL_OUT
secs=${CAPD_RATE_SECONDS:-3}
printf '%10s %14s %12s %10s %10s\n' offered sender_reached kernel_frames dropped in_file
for rate in ${CAPD_RATE_RATES:-100000 250000 500000 750000 1000000}; do
	rm -f "$out"/*.pcapng
	tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out" -H bench -B 262144 \
		--log-level info --stats-interval 3600 udp port 9999 2> "$out/log"
	capd=$TL_LAST_PID
	sleep 0.5
	sent=$(tl_exec a build/tools/blast 198.18.6.2 9999 "$rate" "$secs" | awk '{print $NF}')
	sleep 0.3
	kill -TERM "$capd"; wait "$capd"
	line=$(grep "frames" "$out/log" | grep -v stopped | tail -1)
	frames=$(echo "$line" | sed -n 's/.*: \([0-9]*\) frames.*/\1/p')
	drops=$(echo "$line" | sed -n 's/.*frames, \([0-9]*\) dropped.*/\1/p')
	infile=$(sed -n 's/.*stopped after \([0-9]*\) frames.*/\1/p' "$out/log")
	printf '%10s %14s %12s %10s %10s\n' "$rate" "$sent" "$frames" "${drops:-0}" "$infile"
done
