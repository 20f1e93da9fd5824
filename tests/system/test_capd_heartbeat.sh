#!/bin/bash
# tapless-capd's heartbeats and live statistics, as a reader following the
# files needs them (tapless-pcapng(5)): with traffic, then a quiet link,
# over rotated files,
# - heartbeats keep coming while the link is quiet;
# - their stamps never go back;
# - the promise holds: no frame after a heartbeat, in its file or a later
#   one, is stamped at or before it;
# - statistics blocks come every --stats-interval, not only at a file's end;
# the same with frames of an instrumented sender going through the reorder
# buffer (--tx-socket); --heartbeat-ms 0 writes none, a value under 10 is
# refused.
set -u
. scripts/netns.sh
tl_setup capdhb 198.18.40
out=$TL_OUT
tsx=build/tools/tsx
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NAME DIR: the files of DIR, in the order capd wrote them, block by
# block. Prints "heartbeats HB quiet Q stats S periodic P files F frames N"
# into $out/NAME.sum and fails on a broken promise or a step back.
check() {
	local name=$1 dir=$2 f
	: > "$out/$name.blocks"
	for f in "$dir"/*.pcapng; do
		echo "file $f" >> "$out/$name.blocks"
		build/tools/capdump --blocks "$f" >> "$out/$name.blocks" ||
			fail "$name: $f: not whole"
	done
	awk -v name="$name" '
	$1 == "file" { files++; file = $2; prev = ""; next }
	$1 == "epb" {
		frames++
		if ($2 > maxf) maxf = $2
		if (hbs && $2 <= hb) {
			printf "%s: frame stamped %s after the heartbeat %s (%s)\n",
				name, $2, hb, file > "/dev/stderr"
			broken++
		}
		if (prev == "stats") periodic++
		prev = "epb"; next
	}
	$1 == "isb" && $6 == "tapless:" && $7 == "complete" {
		if (hbs && $2 < hb) {
			printf "%s: heartbeat %s after %s\n", name, $2, hb > "/dev/stderr"
			back++
		}
		hb = $2; hbt[hbs++] = $2
		if ($3 != 1) wrongif++
		if (prev == "stats") periodic++
		prev = "hb"; next
	}
	$1 == "isb" && $4 != "-" && $6 == "-" { stats++; prev = "stats"; next }
	END {
		for (i = 0; i < hbs; i++) if (hbt[i] > maxf) quiet++
		printf "heartbeats %d quiet %d stats %d periodic %d files %d frames %d broken %d back %d wrongif %d\n",
			hbs, quiet, stats, periodic, files, frames, broken + 0, back + 0, wrongif + 0
	}' "$out/$name.blocks" > "$out/$name.sum" 2>> "$out/$name.fail"
	[ -s "$out/$name.fail" ] && fail "$(head -3 "$out/$name.fail")"
	read -r _ hbs _ quiet _ stats _ periodic _ files _ frames _ broken _ back _ wrongif < "$out/$name.sum"
	echo "$name: $(cat "$out/$name.sum")"
	[ "$broken" -eq 0 ] || fail "$name: $broken frames after a heartbeat that had promised them"
	[ "$back" -eq 0 ] || fail "$name: heartbeats went back $back times"
	[ "$wrongif" -eq 0 ] || fail "$name: heartbeats not on the sent-frames (host-stamped) interface"
	[ "$files" -ge 2 ] || fail "$name: $files file(s), want a rotation"
	[ "$frames" -ge 100 ] || fail "$name: $frames frames captured"
	# 3 s quiet at 100 ms: about 28 after T's lag; half is plenty.
	[ "$quiet" -ge 14 ] || fail "$name: $quiet heartbeats after the last frame, want >= 14"
	[ "$periodic" -ge 2 ] || fail "$name: no statistics blocks before a file's end ($stats in all)"
}

# 1. Received frames, straight into the files.
mkdir "$out/rx"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/rx" -H hostb -G 2 \
	--heartbeat-ms 100 --stats-interval 1 udp 2> "$out/rx.log"
capd=$TL_LAST_PID
sleep 0.5
tl_bg b "$tsx" recv --proto udp --bind 198.18.40.2:9401 --count 300 \
	--out "$out/rx.rx" --idle-ms 3000 > /dev/null 2>&1
sleep 0.2
tl_exec a "$tsx" send --proto udp --to 198.18.40.2:9401 --count 300 \
	--rate 200 --max-size 200 --out "$out/rx.tx" 2>/dev/null
sleep 3
kill -TERM "$capd"
wait "$capd" || fail "rx: capd exited $?: $(cat "$out/rx.log")"
check rx "$out/rx"

# 2. Frames of an instrumented sender, through the reorder buffer: their
#    stamps come after the send, the hold sorts them in.
mkdir "$out/tx"
sock=$out/capd.sock
tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out/tx" -H hosta -G 2 \
	--heartbeat-ms 100 --stats-interval 1 --tx-socket "$sock" \
	--reorder-ms 50 udp 2> "$out/tx.log"
capd=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
tl_bg b "$tsx" recv --proto udp --bind 198.18.40.2:9402 --count 300 \
	--out "$out/tx.rx" --idle-ms 3000 > /dev/null 2>&1
sleep 0.2
tl_exec a "$tsx" send --proto udp --to 198.18.40.2:9402 --count 300 \
	--rate 200 --max-size 200 -i "$TL_IF_A" --tx-socket "$sock" \
	2> "$out/tx.send.log" || fail "tx sender: $(cat "$out/tx.send.log")"
grep -q "handed 300 frames" "$out/tx.send.log" || fail "tx: $(cat "$out/tx.send.log")"
sleep 3
kill -TERM "$capd"
wait "$capd" || fail "tx: capd exited $?: $(cat "$out/tx.log")"
check tx "$out/tx"
# The sender's frames are there (both copies of each datagram).
[ "$frames" -ge 600 ] || fail "tx: $frames frames, want the 300 captured and the 300 handed over"

# 3. --heartbeat-ms 0: none; under 10: refused.
mkdir "$out/off"
tl_exec b bin/tapless-capd -i "$TL_IF_B" -w "$out/off" --heartbeat-ms 0 \
	--duration 1 udp 2> "$out/off.log" || fail "off: exit $?: $(cat "$out/off.log")"
build/tools/capdump --blocks "$out"/off/*.pcapng > "$out/off.blocks"
grep -q "complete to" "$out/off.blocks" && fail "--heartbeat-ms 0 wrote heartbeats"
grep -q "^isb" "$out/off.blocks" || fail "off: no statistics at close"
tl_exec b bin/tapless-capd -i "$TL_IF_B" -w "$out/off" --heartbeat-ms 5 2> "$out/e1"
[ $? -eq 1 ] && grep -q -- "--heartbeat-ms: 5ms is out of range: 0 (none) or 10ms to 60s" "$out/e1" ||
	fail "--heartbeat-ms 5: $(cat "$out/e1")"

[ "$fails" -eq 0 ] && echo "ok: capd heartbeat"
[ "$fails" -eq 0 ]
