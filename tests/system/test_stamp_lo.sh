#!/bin/bash
# tapless-stamp senders on one host, talking over 127.0.0.1, capd capturing
# lo (issue 29): every keyed stamp they hand over is joined to its frame.
#
# On lo the kernel hands a packet socket two copies of each frame (one
# PACKET_OUTGOING, one PACKET_HOST), and libpcap drops the outgoing one
# (tcpdump -Q out sees nothing there): capd gets every frame once, as
# received, and joins the keyed stamps by flow instead of by direction.
# In a fresh namespace's lo, capd with --tx-socket, and under
# tapless-stamp: a TCP sender, a UDP sender (one socket, two threads), and
# an asyncio client and echo server, both stamped, so stamps of both ends
# of one connection come in and each must be joined to its own side.
# Checked: capd's "keyed stamps: N taken, M joined ... D duplicates" has
# N equal to what the senders handed over and M + D = N (a duplicate
# found its frame, already stamped: two sends merged into one segment,
# as in test_stamp.sh); the file holds N sender-stamped
# frames, each the very frame captured (ports, raw sequence numbers,
# lengths, payload), with a stamp within a second of the capture's; and
# the TX stamp counters (tapless-capd(8), --stats-interval) are logged
# while capd runs, and the last ones equal the exit account.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
tl_setup stamplo 198.18.64
out=$TL_OUT
py=$(python3 -c 'import sys; print(sys.executable)')
apps=tests/system/lib/stamp_apps.py
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
lo=127.0.0.1

# stamped NAME CMD...: CMD under tapless-stamp in namespace a, handing its
# stamps to capd; its log in $out/NAME.log, output in $out/NAME.out, .err.
stamped() {
	local name=$1
	shift
	tl_exec a bin/tapless-stamp --tx-socket "$out/tx.sock" \
		--log-file "$out/$name.log" -- "$@" > "$out/$name.out" 2> "$out/$name.err"
}
# summary NAME FIELD: a count of the library's summary line(s) in NAME's log.
summary() {
	grep -h 'summary' "$out/$1.log" 2>/dev/null | grep -o "[0-9]* $2" |
		awk '{ n += $1 } END { print n + 0 }'
}
wait_line() {	# FILE TEXT
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

tl_bg a bin/tapless-capd -i lo -w "$out" -H lo -l info --tx-socket "$out/tx.sock" \
	--reorder-ms 500 --stats-interval 1 "portrange 9400-9402" 2> "$out/capd.log"
capd=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$out/tx.sock" ] && break; sleep 0.05; done
[ -S "$out/tx.sock" ] || { fail "capd did not start: $(cat "$out/capd.log")"; exit 1; }
tl_bg a "$py" $apps sink 9400 > "$out/sink.out" 2>&1
tl_bg a socat -u UDP-RECV:9401 OPEN:/dev/null
wait_line "$out/sink.out" listening || fail "sink did not start"

stamped tcp "$py" $apps send $lo 9400 300 700 || fail "send: $(cat "$out/tcp.err")"
stamped udp "$py" $apps udp-threads $lo 9401 2 200 || fail "udp-threads: $(cat "$out/udp.err")"
grep -q "udp-threads ok 400" "$out/udp.out" || fail "udp: $(cat "$out/udp.out" "$out/udp.err")"
# Both ends of one connection stamped: the server's echoes go back on the
# same lo, the flow reversed.
tl_bg a bin/tapless-stamp --tx-socket "$out/tx.sock" --log-file "$out/aio-srv.log" -- \
	"$py" tests/system/lib/stamp_asyncio.py server 9402 500 > "$out/aio-srv.out" 2>&1
asrv=$TL_LAST_PID
wait_line "$out/aio-srv.out" listening || fail "asyncio server did not start"
stamped aio "$py" tests/system/lib/stamp_asyncio.py client $lo 9402 500 7 ||
	fail "asyncio client exited $?: $(cat "$out/aio.out" "$out/aio.err")"
wait "$asrv" || fail "asyncio server exited $?: $(cat "$out/aio-srv.out")"

# The TX stamp counters come while capd runs (every --stats-interval).
wait_line "$out/capd.log" "tx stamps: " ||
	fail "no periodic TX stamp counters while capd runs: $(cat "$out/capd.log")"
sleep 0.7
kill -TERM "$capd"
wait "$capd" || fail "capd exited $?: $(tail -3 "$out/capd.log")"

handed=0
for n in tcp udp aio aio-srv; do
	h=$(summary $n handed)
	[ "$h" -gt 0 ] || fail "$n handed no stamp: $(grep summary "$out/$n.log")"
	handed=$((handed + h))
done
line=$(grep 'keyed stamps:' "$out/capd.log")
taken=$(echo "$line" | sed -n 's/.*keyed stamps: \([0-9]*\) taken.*/\1/p')
joined=$(echo "$line" | sed -n 's/.*taken, \([0-9]*\) joined.*/\1/p')
[ -n "$taken" ] && [ "$taken" -eq "$handed" ] ||
	fail "capd took ${taken:-no} keyed stamps, the senders handed $handed: $line"
# A duplicate found its frame too, stamped already by another stamp of it
# (sends the kernel merged into one segment): every stamp is one or the
# other, none found no frame.
dups=$(echo "$line" | sed -n 's/.* \([0-9]*\) duplicates.*/\1/p')
[ -n "$joined" ] && [ -n "$dups" ] && [ "$((joined + dups))" -eq "${taken:-0}" ] &&
	[ "$joined" -gt 0 ] ||
	fail "capd on lo joined ${joined:-none} of ${taken:-0} keyed stamps: $line"

f=$(ls "$out"/*.pcapng)
tx='frame.interface_description contains "sending program"'
cap='!(frame.interface_description contains "sending program")'
fields() {	# FILTER FIELDS...: sorted field values of matching frames
	local flt=$1
	shift
	tshark -r "$f" -Y "$flt" -T fields $(printf -- '-e %s ' "$@") 2>/dev/null | sort
}
ntx=$(tshark -r "$f" -Y "$tx" 2>/dev/null | wc -l)
[ "$ntx" -eq "${joined:-0}" ] || fail "$ntx sender-stamped frames in the file, capd joined ${joined:-0}"
# Each sender-stamped frame is one captured: TCP by ports, raw sequence
# number, length and payload; UDP by port and payload. Both directions of
# the echoed connection are there.
for p in "tcp.len > 0:tcp.srcport tcp.dstport tcp.seq_raw tcp.len tcp.payload" \
	 "udp:udp.srcport udp.dstport data.data"; do
	# shellcheck disable=SC2086
	fields "$tx && ${p%%:*}" ${p#*:} > "$out/k.tx"
	# shellcheck disable=SC2086
	fields "$cap && ${p%%:*}" ${p#*:} > "$out/k.cap"
	[ -s "$out/k.tx" ] || fail "no sender-stamped frame of ${p%%:*} in the file"
	bad=$(comm -23 "$out/k.tx" "$out/k.cap" | wc -l)
	[ "$bad" -eq 0 ] || fail "$bad sender-stamped ${p%%:*} frames were not captured: $(comm -23 "$out/k.tx" "$out/k.cap" | head -2 | cut -c1-120)"
done
for port in "tcp.dstport == 9400" "udp.dstport == 9401" "tcp.dstport == 9402" "tcp.srcport == 9402 && tcp.len > 0"; do
	[ "$(fields "$tx && $port" frame.number | wc -l)" -gt 0 ] ||
		fail "no sender-stamped frame with $port"
done
# A sender's stamp (taken in loopback_xmit) and the capture's (taken as
# the frame is received) of one frame are microseconds apart: a stamp in
# another timescale would be seconds off.
fields "$tx && udp" data.data frame.time_epoch > "$out/s.tx"
fields "$cap && udp" data.data frame.time_epoch > "$out/s.cap"
join "$out/s.tx" "$out/s.cap" | tr -d . > "$out/s.join"
awk '{ n++; d = $2 - $3; if (d < 0) d = -d } length($2) == length($3) && d < 1e9 { ok++; next }
     !bad { bad = $0 } END { printf "%d %d %s", n, ok, bad; exit !(n == 400 && ok == n) }' \
	"$out/s.join" > "$out/s.verdict" ||
	fail "UDP sender stamps not within a second of the capture's (joined, within, first not: $(cat "$out/s.verdict"); $(wc -l < "$out/s.tx") sender-stamped, $(wc -l < "$out/s.cap") captured)"

# The last periodic TX stamp line (also logged at exit) agrees with the
# exit account, and the lost figure is in the file, as the drop counter of
# the sender-stamped interface (iface 2 here: lo in, lo out, lo sender).
per=$(grep 'tx stamps: ' "$out/capd.log" | tail -1)
pw=$(echo "$per" | sed -n 's/.*tx stamps: \([0-9]*\) written.*/\1/p')
pn=$(echo "$per" | sed -n 's/.*(\([0-9]*\) found no frame.*/\1/p')
none=$(echo "$line" | sed -n 's/.* \([0-9]*\) found none.*/\1/p')
plost=$(echo "$per" | sed -n 's/.* written, \([0-9]*\) lost.*/\1/p')
[ -n "$pw" ] && [ "$pw" -eq "${joined:-0}" ] || fail "periodic line: '$pw' written, capd joined ${joined:-0}: $per"
[ -n "$pn" ] && [ "$pn" -eq "${none:-x}" ] || fail "periodic line: '$pn' found no frame, exit says '${none:-}': $per / $line"
isb=$(build/tools/capdump --blocks "$f" | awk '$1 == "isb" && $3 == 2 { d = $5 } END { print d }')
[ -n "$plost" ] && [ "$isb" = "$plost" ] ||
	fail "file: the sender-stamped interface's drop counter is '$isb', capd logged '$plost' lost"

for n in tcp udp aio; do
	[ -s "$out/$n.err" ] && fail "$n wrote to stderr: $(cat "$out/$n.err")"
done
[ "$fails" -eq 0 ] && echo "stamp on lo: capd joined $joined of $taken keyed stamps" \
	"(TCP both ways, UDP), $ntx sender-stamped frames in the file"
[ "$fails" -eq 0 ]
