#!/bin/bash
# capd-sigkill (issue 17): capd is killed with SIGKILL in the middle of
# traffic. Its .part file is read by tapless correlate, by capdump (the
# capfile reader) and by tshark without a fatal error, every frame up to the
# last whole block present; the same file cut in the middle of a block (a
# kill during a write) reads up to the cut in all three. And a quiet link's
# frames are not held back in the 1 MiB write buffer: killed 1.5 s after
# them, all are in the file (capd writes its buffer out every second).
# (The quiet link's frames go to a receiver: without one, each ICMP port
# unreachable failed blast's next send, and its retries stretched the
# 100 frames over ~11 s.) capd is ready when it logs "capturing on".
set -u
. scripts/netns.sh
tl_setup capd-sigkill 198.18.47
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# ready FILE [TEXT]: wait (5 s at most) for TEXT in FILE: by default
# capd saying it captures.
ready() {
	for _ in $(seq 50); do grep -q "${2:-capturing on}" "$1" && return 0; sleep 0.1; done
	return 1
}

# 0. A quiet link: 100 frames in 1 s, the kill 1.5 s later.
mkdir "$out/quiet"
tl_bg b python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.47.2", 9361))
print("ready", flush=True)
while True:
    s.recv(2048)' > "$out/sink.out" 2>&1
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/quiet" udp port 9361 2> "$out/quiet.log"
capd=$TL_LAST_PID
ready "$out/quiet.log" || fail "capd (quiet link) did not start: $(cat "$out/quiet.log")"
ready "$out/sink.out" ready || fail "no receiver: $(cat "$out/sink.out")"
tl_exec a build/tools/blast --paced 198.18.47.2 9361 100 1 > "$out/quiet.blast"
sent=$(sed -n 's/^blast: sent \([0-9]*\) .*/\1/p' "$out/quiet.blast")
sleep 1.5
kill -KILL "$capd"
wait "$capd" 2>/dev/null
quiet=0
for f in "$out"/quiet/*; do
	quiet=$((quiet + $(build/tools/capdump "$f" 2>/dev/null | grep -vc '^iface')))
done
echo "quiet link: $quiet of ${sent:-?} frames in the file after SIGKILL"
[ "$quiet" -eq "${sent:-x}" ] || fail "quiet link: $quiet of ${sent:-?} frames reached the file 1.5 s before SIGKILL"

mkdir "$out/cap"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/cap" udp port 9360 2> "$out/capd.log"
capd=$TL_LAST_PID
ready "$out/capd.log" || fail "capd did not start: $(cat "$out/capd.log")"
# ~3 MB at 3000 frames/s: the 1 MiB write buffer is written out twice in the
# first second; the kill comes in the middle.
tl_bg a build/tools/blast 198.18.47.2 9360 3000 2 1000
sleep 1.2
kill -KILL "$capd"
wait "$capd" 2>/dev/null
part=$(ls "$out"/cap/*.part 2>/dev/null | head -1)
[ -n "$part" ] || { echo "FAIL: no .part file: $(ls "$out/cap")"; exit 1; }
size=$(stat -c %s "$part")

# read FILE: "capdump-frames capdump-rc tshark-frames tshark-rc corr-packets corr-rc"
read_all() {
	local f=$1 nd rd nt rt nc rc
	build/tools/capdump "$f" > "$out/dump" 2> "$out/dump.err"; rd=$?
	nd=$(grep -vc '^iface' "$out/dump")
	tshark -r "$f" > "$out/tshark" 2> "$out/tshark.err"; rt=$?
	nt=$(wc -l < "$out/tshark")
	bin/tapless correlate "b=$f" > "$out/corr" 2>&1; rc=$?
	nc=$(sed -n 's/^ *b *\([0-9]*\) packets.*/\1/p' "$out/corr")
	echo "$nd $rd $nt $rt ${nc:-x} $rc"
}

# 1. The .part as the kill left it: whole blocks up to its end.
set -- $(read_all "$part")
echo "killed: $size bytes: capdump $1 (rc $2), tshark $3 (rc $4), correlate $5 (rc $6)"
[ "$1" -gt 0 ] || fail "capdump reads no frame of the .part"
[ "$3" -eq "$1" ] || fail "tshark reads $3 frames, capdump $1: $(cat "$out/tshark.err")"
[ "$5" = "$1" ] || fail "correlate reads ${5} packets, capdump $1: $(cat "$out/corr")"
grep -q "Segmentation\|AddressSanitizer\|Aborted" "$out/corr" && fail "correlate crashed"
grep -q "truncated capture\|file ends inside" "$out/corr" && fail "correlate calls the .part damaged"
whole=$1

# 2. Cut 100 bytes short: the last block is incomplete.
head -c $((size - 100)) "$part" > "$out/cut.pcapng.part"
set -- $(read_all "$out/cut.pcapng.part")
echo "cut mid-block: capdump $1 (rc $2), tshark $3 (rc $4), correlate $5 (rc $6)"
[ "$1" -eq $((whole - 1)) ] || fail "capdump: $1 frames of a file cut in its last block, want $((whole - 1))"
grep -q "truncated capture\|file ends inside" "$out/dump.err" || fail "capdump does not say where the file ends"
[ "$3" -eq "$1" ] || fail "tshark reads $3 frames of the cut file, capdump $1"
[ "$5" = "$1" ] || fail "correlate reads ${5} packets of the cut file, capdump $1: $(cat "$out/corr")"
grep -q "truncated capture\|file ends inside" "$out/corr" || fail "correlate does not warn of the cut"
echo "SIGKILL: quiet link $quiet/${sent:-?} frames kept; .part of $size bytes: $whole frames read by capdump, tshark and correlate; cut mid-block: $1" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
