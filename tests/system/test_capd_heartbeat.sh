#!/bin/bash
# tapless-capd's heartbeats and live statistics (tapless-pcapng(5)): with
# --heartbeat-ms, heartbeats keep coming while the link is quiet, never go
# back, and keep their promise (no frame after one is stamped at or before
# it), across rotated files and with the reorder buffer in use
# (--tx-socket); statistics blocks with drop counters come every
# --stats-interval; --heartbeat-ms 0 writes none.
set -u
. scripts/netns.sh
tl_setup capd_heartbeat 198.18.6
out=$TL_OUT
tsx=build/tools/tsx
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME CAPD-OPTS...: capd on b, 3000 UDP datagrams a to b, then 2.5 s
# of quiet, then SIGTERM. Files in $out/NAME.
run() {
	local name=$1 capd r
	shift
	mkdir "$out/$name"
	tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/$name" -H hostb \
		--tx-socket "$out/$name.sock" "$@" 2> "$out/$name.log"
	capd=$TL_LAST_PID
	for _ in $(seq 100); do [ -S "$out/$name.sock" ] && break; sleep 0.05; done
	tl_bg b "$tsx" recv --proto udp --bind 198.18.6.2:9311 --count 3000 \
		--out /dev/null > "$out/$name.ready" 2>/dev/null
	r=$TL_LAST_PID
	for _ in $(seq 100); do grep -q ready "$out/$name.ready" && break; sleep 0.05; done
	tl_exec a "$tsx" send --proto udp --to 198.18.6.2:9311 --count 3000 \
		--rate 2000 --max-size 200 --out /dev/null 2>/dev/null
	wait "$r"
	sleep 2.5
	kill -TERM "$capd"
	wait "$capd" || fail "$name: capd exited $?: $(tail -3 "$out/$name.log")"
}

run hb --heartbeat-ms 100 --stats-interval 1 -G 1
files=$(ls "$out/hb"/*.pcapng 2>/dev/null)
[ "$(echo "$files" | wc -w)" -ge 3 ] || fail "expected rotated files, got: $(ls "$out/hb")"
# shellcheck disable=SC2086
res=$(python3 tests/system/lib/pcapng_isb.py $files) || fail "heartbeat promise: $res"
echo "heartbeats: $res"
read -r hb quiet stats drops <<< "$(echo "$res" |
	sed 's/.*heartbeats \([0-9]*\) (quiet \([0-9]*\)) statistics \([0-9]*\) (with drops \([0-9]*\)).*/\1 \2 \3 \4/')"
# About 4 s at 100 ms: 40; half is plenty for a busy machine, and a
# quiet stretch of 2.5 s must have some of its own.
[ "${hb:-0}" -ge 20 ] || fail "$hb heartbeats in ~4 s at --heartbeat-ms 100"
[ "${quiet:-0}" -ge 10 ] || fail "$quiet heartbeats while the link was quiet"
[ "${stats:-0}" -ge 4 ] && [ "${drops:-0}" -ge 4 ] ||
	fail "$stats statistics blocks ($drops with drops) with --stats-interval 1"

run none --heartbeat-ms 0
res=$(python3 tests/system/lib/pcapng_isb.py "$out/none"/*.pcapng)
echo "--heartbeat-ms 0: $res"
echo "$res" | grep -q "heartbeats 0 " || fail "--heartbeat-ms 0 wrote heartbeats: $res"

[ "$fails" -eq 0 ] && echo "ok: capd_heartbeat"
[ "$fails" -eq 0 ]
