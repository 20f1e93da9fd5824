#!/bin/bash
# TX stamps of an instrumented sender handed to tapless-capd: the sender's
# frames (bytes and software TX stamps) land in capd's file as outbound
# frames on interfaces of their own, with the addresses, ports and real TCP
# sequence numbers of the frames the packet socket saw leave, and the whole
# file in time order. A stream of garbage is refused with the byte offset,
# and capd carries on; a user who may not hand over stamps is refused.
set -u
. scripts/netns.sh
tl_setup capdtx 198.18.6
out=$TL_OUT
tsx=build/tools/tsx
sock=$out/capd.sock
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir "$out/cap"
tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out/cap" -H hosta -l info \
	--tx-socket "$sock" --reorder-ms 50 --stats-interval 1 "udp port 9311 or tcp port 9312 or udp port 9315 or tcp port 9316" \
	2> "$out/capd.log"
capd=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "no socket at $sock: $(cat "$out/capd.log")"
[ "$(stat -c %a "$sock")" = 660 ] || fail "socket mode $(stat -c %a "$sock"), want 660"

# A second daemon on the same socket is refused, naming the first (its
# lock, tapless-capd(8)); the first keeps the socket.
tl_exec a bin/tapless-capd -i "$TL_IF_A" -w "$out" --tx-socket "$sock" 2> "$out/e1"
[ $? -eq 2 ] && grep -q "tx-socket is in use by another tapless-capd, pid $capd" "$out/e1" ||
	fail "second daemon: $(cat "$out/e1")"

# send PROTO PORT COUNT: tsx from a (handing over) to b.
send() {
	tl_bg b "$tsx" recv --proto "$1" --bind "198.18.6.2:$2" --count "$3" \
		--out "$out/$1.rx" > "$out/$1.ready" 2>/dev/null
	local r=$TL_LAST_PID
	for _ in $(seq 100); do grep -q ready "$out/$1.ready" && break; sleep 0.05; done
	tl_exec a "$tsx" send --proto "$1" --to "198.18.6.2:$2" --count "$3" \
		--rate 5000 --max-size 1000 -i "$TL_IF_A" --tx-socket "$sock" \
		2> "$out/$1.send.log" || fail "$1 sender: $(cat "$out/$1.send.log")"
	wait "$r"
}
send udp 9311 300
send tcp 9312 300
grep -q "handed 300 frames" "$out/udp.send.log" || fail "udp: $(cat "$out/udp.send.log")"
grep -q "handed 300 frames" "$out/tcp.send.log" || fail "tcp: $(cat "$out/tcp.send.log")"
grep -q "relative TCP" "$out/tcp.send.log" && fail "root sender used relative TCP sequence numbers"

# Keyed records (version 2, as tapless-stamp sends them): capd finds each
# named frame among those it saw leave and writes it again with the
# sender's stamp; a key that names no frame is counted, not written.
# keyed SOCK NAME UDPPORT TCPPORT: 100 keyed sends each way to b's sinks,
# the senders' output in $out/NAME.udp and .tcp.
keyed() {
	tl_bg b socat -u "TCP-LISTEN:$4,reuseaddr" /dev/null
	tl_bg b socat -u "UDP-RECV:$3" /dev/null
	sleep 0.2
	for p in "udp:$3" "tcp:$4"; do
		tl_exec a python3 tests/system/lib/keyed_send.py "${p%:*}" 198.18.6.2 "${p#*:}" \
			100 "$1" > "$out/$2.${p%:*}" 2>&1 ||
			fail "$2: keyed ${p%:*} sender: $(cat "$out/$2.${p%:*}")"
	done
}
keyed "$sock" keyed 9315 9316

# Garbage on the socket: refused at byte 0, capd carries on.
printf 'GET / HTTP/1.0\r\n\r\n' | tl_exec a build/tools/unixsend "$sock" > "$out/junk" 2>&1
grep -q closed "$out/junk" || fail "garbage: capd kept the connection: $(cat "$out/junk")"
# A valid-looking header with a frame length over the limit.
printf 'TLTX\001\000\050\000\377\377\377\000' | tl_exec a build/tools/unixsend "$sock" > "$out/junk2" 2>&1
grep -q closed "$out/junk2" || fail "oversized record: capd kept the connection"
# Someone who is neither root nor capd's user nor in --tx-group.
tl_bg b "$tsx" recv --proto udp --bind 198.18.6.2:9313 --count 5 \
	--out "$out/nobody.rx" > /dev/null 2>&1
sleep 0.2
tl_exec a setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$tsx" send --proto udp --to 198.18.6.2:9313 --count 5 --rate 1000 \
	--tx-socket "$sock" 2> "$out/nobody.log"
grep -q "handed 0 frames.*5 dropped" "$out/nobody.log" || fail "nobody: $(cat "$out/nobody.log")"
kill -0 "$capd" 2>/dev/null || fail "capd died"
# The stamps lost (the two keys that name no frame) and the senders cut
# off (the two garbage streams) are in the periodic line while capd runs,
# not only in the exit account.
for _ in $(seq 60); do
	grep -q "tx stamps: .* 2 lost (2 found no frame, .* 2 senders cut off" "$out/capd.log" && break
	sleep 0.1
done
kill -0 "$capd" 2>/dev/null &&
	grep -q "tx stamps: .* 2 lost (2 found no frame, .* 2 senders cut off" "$out/capd.log" ||
	fail "no periodic line with the lost stamps while capd runs: $(grep 'tx stamps' "$out/capd.log" | tail -1)"
sleep 0.2
kill -TERM "$capd"
wait "$capd" || fail "capd exited $?: $(cat "$out/capd.log")"
[ -e "$sock" ] && fail "socket left behind"

grep -q "malformed record at byte 0" "$out/capd.log" || fail "garbage not reported: $(cat "$out/capd.log")"
grep -q "tx socket: 800 frames handed over, 0 matched no interface; 0 written out of order" "$out/capd.log" ||
	fail "capd's count: $(grep 'tx socket' "$out/capd.log")"
grep -q "keyed stamps: 202 taken, 200 joined to their frame, 2 found none" "$out/capd.log" ||
	fail "capd's keyed count: $(grep 'keyed' "$out/capd.log")"

f=$(ls "$out/cap"/*.pcapng)
build/tools/capdump "$f" > "$out/dump" || fail "capdump: $(tail -1 "$out/dump")"
# The last periodic line (logged again at exit) agrees with the exit
# account; its lost figure is in the file as the drop counter of the
# sender-stamped interface (iface 2: in, out, sender-stamped), the last
# one written equal to it.
per=$(grep 'tx stamps: ' "$out/capd.log" | tail -1)
echo "$per" | grep -q "tx stamps: 800 written, 2 lost (2 found no frame, 0 too many waiting, 0 for no captured interface, 0 ring buffer full, 0 bad BPF records, 0 dropped by the senders); 0 written out of order; 2 senders cut off" ||
	fail "last periodic TX stamp line: $per"
isb=$(build/tools/capdump --blocks "$f" | awk '$1 == "isb" && $3 == 2 { n++; d = $5 } END { print n + 0, d }')
[ "$isb" = "$(echo "$isb" | cut -d' ' -f1) 2" ] && [ "${isb%% *}" -ge 2 ] ||
	fail "file: statistics of the sender-stamped interface (blocks, last drop): $isb, want >= 2 blocks and 2"
# Interfaces: in, out (packet socket), tx-sw (handed over); no tx-hw on veth.
ntx=$(tshark -r "$f" -Y 'frame.interface_description contains "sending program"' 2>/dev/null | wc -l)
[ "$ntx" -eq 800 ] || fail "$ntx handed-over frames in the file, want 800"
fields() {	# FILTER FIELDS...: sorted field values of matching frames
	local flt=$1
	shift
	tshark -r "$f" -Y "$flt" -T fields $(printf -- '-e %s ' "$@") 2>/dev/null | sort
}
tx='frame.interface_description contains "sending program"'
cap='!(frame.interface_description contains "sending program") && frame.packet_flags_direction == 2'
fields "$tx && frame.packet_flags_direction == 2 && udp.dstport == 9311" ip.src udp.srcport data.len > "$out/u.tx"
fields "$cap && udp.dstport == 9311" ip.src udp.srcport data.len > "$out/u.cap"
[ "$(wc -l < "$out/u.tx")" -eq 300 ] && cmp -s "$out/u.tx" "$out/u.cap" ||
	fail "UDP frames handed over differ from those captured: $(diff "$out/u.tx" "$out/u.cap" | head -5)"
fields "$tx && tcp.dstport == 9312" tcp.srcport tcp.seq_raw tcp.ack_raw tcp.len > "$out/t.tx"
fields "$cap && tcp.dstport == 9312 && tcp.len > 0" tcp.srcport tcp.seq_raw tcp.ack_raw tcp.len > "$out/t.cap"
[ "$(wc -l < "$out/t.tx")" -eq 300 ] && cmp -s "$out/t.tx" "$out/t.cap" ||
	fail "TCP frames handed over differ from those captured (ports, raw seq/ack, length): $(diff "$out/t.tx" "$out/t.cap" | head -5)"
tshark -r "$f" -Y "$tx" -T fields -e tcp.checksum.status -e udp.checksum.status \
	-o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE 2>/dev/null | grep -q -i bad &&
	fail "handed-over frames carry bad checksums"
# The keyed pairs are the very frames captured: same ports, raw sequence
# numbers, lengths and bytes.
for p in "udp.dstport == 9315:udp.srcport data.data" "tcp.dstport == 9316 && tcp.len > 0:tcp.srcport tcp.seq_raw tcp.len tcp.payload"; do
	# shellcheck disable=SC2086
	fields "$tx && ${p%%:*}" ${p#*:} > "$out/k.tx"
	# shellcheck disable=SC2086
	fields "$cap && ${p%%:*}" ${p#*:} > "$out/k.cap"
	[ "$(wc -l < "$out/k.tx")" -eq 100 ] && cmp -s "$out/k.tx" "$out/k.cap" ||
		fail "keyed pairs ($p) differ from the frames captured: $(wc -l < "$out/k.tx") $(diff "$out/k.tx" "$out/k.cap" | head -3)"
done
# Time order: every stamp here is host time, one group: never decreasing.
grep -v '^iface' "$out/dump" | awk 'p && $1 < p { bad++ } { p = $1 } END { exit bad > 0 }' ||
	{ cp "$out/dump" /tmp/capdtx.dump; fail "frames not in time order"; }
# A handed-over frame's TX stamp (taken in the driver) comes after the
# packet socket saw the same datagram leave (taken before the driver).
fields "$tx && udp.dstport == 9311" data.data frame.time_epoch > "$out/s.tx"
fields "$cap && udp.dstport == 9311" data.data frame.time_epoch > "$out/s.cap"
join "$out/s.tx" "$out/s.cap" | tr -d . |
	awk '{ n++ } length($2) == length($3) && $2 >= $3 { ok++ } END { exit !(n == 300 && ok == n) }' ||
	fail "TX stamps not after the packet socket's: $(join "$out/s.tx" "$out/s.cap" | head -3)"

# --sender-copy-only: a frame paired with its keyed sender stamp is in the
# file once, as the sender-stamped copy (above, without it: twice, which
# Wireshark shows as a TCP retransmission); the captured copies left out
# are counted at exit. (That correlate then takes the sender's stamps, with
# nothing to skip, test_quickfix.sh shows with real FIX and real stamps:
# this sender's stand-in stamps come after the peer's ACK.)
mkdir "$out/so"
tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out/so" -H hosta -l info \
	--tx-socket "$out/so.sock" --sender-copy-only --reorder-ms 50ms \
	"udp port 9317 or tcp port 9318" 2> "$out/so.log"
so=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$out/so.sock" ] && break; sleep 0.05; done
keyed "$out/so.sock" so 9317 9318
sleep 0.2
kill -TERM "$so"
wait "$so" || fail "sender-copy-only: capd exited $?: $(cat "$out/so.log")"
grep -q "keyed stamps: 202 taken, 200 joined to their frame" "$out/so.log" ||
	fail "sender-copy-only: keyed count: $(grep 'keyed' "$out/so.log")"
grep -q -- "--sender-copy-only: 200 captured copies of sender-stamped frames left out, 0 written anyway" "$out/so.log" ||
	fail "sender-copy-only: account: $(grep -- '--sender-copy-only' "$out/so.log" | tail -1)"
g=$(ls "$out/so"/*.pcapng)
for p in "udp.dstport == 9317" "tcp.dstport == 9318 && tcp.len > 0"; do
	ntx=$(tshark -r "$g" -Y "$tx && $p" 2>/dev/null | wc -l)
	ncap=$(tshark -r "$g" -Y "$cap && $p" 2>/dev/null | wc -l)
	[ "$ntx" -eq 100 ] && [ "$ncap" -eq 0 ] ||
		fail "sender-copy-only ($p): $ntx sender-stamped and $ncap captured copies, want 100 and 0"
done
# Once against twice, by TCP sequence number: the stream sent without
# the option (port 9316, above) has each data segment twice, which
# Wireshark shows as a retransmission; with it, once.
for x in "$f:9316:2" "$g:9318:1"; do
	IFS=: read -r file port times <<< "$x"
	segs=$(tshark -r "$file" -Y "tcp.dstport == $port && tcp.len > 0" -T fields \
		-e tcp.seq_raw 2>/dev/null | sort | uniq -c | awk '{ print $1 }' | sort -u | tr '\n' ' ')
	[ "$segs" = "$times " ] || fail "port $port: each data segment in the file (times): '$segs', want $times"
done
# Without sender stamps the option has nothing to do: a usage error.
tl_exec a bin/tapless-capd -i "$TL_IF_A" -w "$out/so" --sender-copy-only 2> "$out/so.e"
[ $? -eq 1 ] && grep -q "needs sender stamps" "$out/so.e" || fail "--sender-copy-only alone: $(cat "$out/so.e")"

# valgrind-clean with senders connecting, handing over and leaving.
mkdir "$out/vg"
tl_bg a valgrind -q --error-exitcode=9 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect bin/tapless-capd \
	-i "$TL_IF_A" -w "$out/vg" --duration 4 --tx-socket "$out/vg.sock" \
	udp 2> "$out/vg.log"
vg=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$out/vg.sock" ] && break; sleep 0.05; done
sock=$out/vg.sock
send udp 9314 100
printf 'TLTX\002\000' | tl_exec a build/tools/unixsend "$sock" > /dev/null 2>&1
wait "$vg"
rc=$?
[ "$rc" -eq 0 ] || fail "valgrind: exit $rc: $(grep -v '^tapless-capd' "$out/vg.log" | head -20)"

[ "$fails" -eq 0 ] && echo "ok: capd tx socket"
[ "$fails" -eq 0 ]
