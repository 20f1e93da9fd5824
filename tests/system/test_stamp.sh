#!/bin/bash
# tapless-stamp under real programs nobody here wrote, unmodified, across
# a veth pair, capd capturing in a with --tx-socket: their TX stamps reach
# it keyed to the very frames on the wire, and the programs see nothing.
# - keys: every TCP key the library hands over names a byte of a segment
#   the capture saw leave (anchored from looped packets, no privilege),
#   and capd joins every stamp, TCP and UDP (one UDP socket, four threads;
#   the datagram ids ours, and counted by the kernel as before 6.13);
# - asyncio (epoll) client and server exchanging 2000 messages echoed
#   back, with stamps queued while they wait: no EPOLLERR reaches them
#   (they take one for a dead connection), no byte lost; the server's
#   stamps have no capd to go to (b runs none): dropped, counted;
# - socat (select) relaying both ways, the reverse direction idle while
#   the forward one runs: a spurious readable socket would block it for
#   good; byte-exact.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
tl_setup stamp 198.18.60
out=$TL_OUT
# The interpreter itself, not a version manager's wrapper script (its
# helper processes would each load the library too).
py=$(python3 -c 'import sys; print(sys.executable)')
apps=tests/system/lib/stamp_apps.py
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
srv=198.18.60.2

# stamped NAME NS CMD...: CMD under tapless-stamp in NS, handing stamps
# to capd, its log in $out/NAME.log, its output in $out/NAME.out, .err.
stamped() {
	local name=$1 ns=$2
	shift 2
	tl_exec "$ns" env ${ENVS:-} bin/tapless-stamp --tx-socket "$out/tx.sock" \
		--log-file "$out/$name.log" --log-level "${LEVEL:-info}" -- "$@" \
		> "$out/$name.out" 2> "$out/$name.err"
}
# summary NAME FIELD: a count of the library's summary line(s) in NAME's
# log ("handed", "POLLERR hidden", ...), summed over its processes.
summary() {
	grep -h 'summary' "$out/$1.log" 2>/dev/null | grep -o "[0-9]* $2" |
		awk '{ n += $1 } END { print n + 0 }'
}
wait_line() {	# FILE TEXT
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

tl_bg a bin/tapless-capd -i "$TL_IF_A" -w "$out" -H a -l info --tx-socket "$out/tx.sock" \
	--reorder-ms 500 "portrange 9300-9303" 2> "$out/capd.log"
capd=$TL_LAST_PID
for _ in $(seq 100); do [ -S "$out/tx.sock" ] && break; sleep 0.05; done
[ -S "$out/tx.sock" ] || { fail "capd did not start: $(cat "$out/capd.log")"; exit 1; }
tl_bg b "$py" $apps sink 9300 > "$out/sink.out" 2>&1
tl_bg b socat -u UDP-RECV:9301 OPEN:/dev/null
wait_line "$out/sink.out" listening || fail "sink did not start"

# -- keys: 400 TCP messages of 700 bytes; UDP from four threads on one
# socket, 500 datagrams each.
LEVEL=debug stamped keys a "$py" $apps send $srv 9300 400 700 ||
	fail "send: $(cat "$out/keys.err")"
stamped udp a "$py" $apps udp-threads $srv 9301 4 500 ||
	fail "udp-threads: $(cat "$out/udp.err")"
grep -q "udp-threads ok 2000" "$out/udp.out" || fail "udp: $(cat "$out/udp.out" "$out/udp.err")"
[ "$(summary udp handed)" -eq 2000 ] || fail "udp: $(grep summary "$out/udp.log")"
# The same with the ids counted by the kernel (as before Linux 6.13).
ENVS=TAPLESS_STAMP_UDP_IDS=kernel stamped udpk a "$py" $apps udp-threads $srv 9301 4 250 ||
	fail "udp-threads, kernel ids: $(cat "$out/udpk.err")"
[ "$(summary udpk handed)" -eq 1000 ] || fail "udp, kernel ids: $(grep summary "$out/udpk.log")"

# -- asyncio on epoll, both ends stamped.
tl_bg b bin/tapless-stamp --log-file "$out/aio-srv.log" -- \
	"$py" tests/system/lib/stamp_asyncio.py server 9302 2000 > "$out/aio-srv.out" 2>&1
asrv=$TL_LAST_PID
wait_line "$out/aio-srv.out" listening || fail "asyncio server did not start"
stamped aio a "$py" tests/system/lib/stamp_asyncio.py client $srv 9302 2000 7 ||
	fail "asyncio client exited $?: $(cat "$out/aio.out" "$out/aio.err")"
wait "$asrv" || fail "asyncio server exited $?: $(cat "$out/aio-srv.out")"
c=$(sed -n 's/^client ok 2000 \([0-9]* [0-9a-f]*\)$/\1/p' "$out/aio.out")
s=$(sed -n 's/^server ok 2000 \([0-9]* [0-9a-f]*\)$/\1/p' "$out/aio-srv.out")
[ -n "$c" ] && [ "$c" = "$s" ] || fail "asyncio: client '$c', server '$s'"
[ "$(summary aio handed)" -gt 0 ] || fail "asyncio client: nothing handed: $(grep summary "$out/aio.log")"
[ "$(summary aio-srv dropped)" -gt 0 ] || fail "asyncio server: no drop counted: $(cat "$out/aio-srv.log")"
hidden=$(( $(summary aio 'POLLERR hidden') + $(summary aio-srv 'POLLERR hidden') ))
[ "$hidden" -gt 0 ] || fail "asyncio: no EPOLLERR was hidden: the run did not test it"
[ "$(( $(summary aio 'passed on') + $(summary aio-srv 'passed on') ))" -eq 0 ] ||
	fail "asyncio: an EPOLLERR was passed on as real"

# -- socat, select(): both directions, the reverse one idle while the
# forward one runs.
head -c 20000000 /dev/urandom > "$out/send.bin"
tl_bg b bin/tapless-stamp --log-file "$out/socat-srv.log" -- socat -t 30 -b 65536 \
	TCP-LISTEN:9303,reuseaddr SYSTEM:"cat > $out/mid.bin; cat $out/mid.bin" 2> "$out/socat-srv.err"
ssrv=$TL_LAST_PID
sleep 0.3
timeout 60 ip netns exec "$(tl_ns a)" bin/tapless-stamp --tx-socket "$out/tx.sock" \
	--log-file "$out/socat.log" -- socat -t 30 -b 65536 \
	"OPEN:$out/send.bin!!OPEN:$out/recv.bin,creat,trunc" TCP:$srv:9303 2> "$out/socat.err" ||
	fail "socat client exited $? (124: stuck): $(cat "$out/socat.err")"
wait "$ssrv" || fail "socat server exited $?: $(cat "$out/socat-srv.err")"
cmp -s "$out/send.bin" "$out/recv.bin" || fail "socat: bytes differ"
if [ -s "$out/socat.err" ] || [ -s "$out/socat-srv.err" ]; then
	fail "socat complained: $(cat "$out/socat.err" "$out/socat-srv.err")"
fi
shidden=$(( $(summary socat 'POLLERR hidden') + $(summary socat-srv 'POLLERR hidden') ))
[ "$shidden" -gt 0 ] || fail "socat: no POLLERR was hidden: the run did not test it"

sleep 0.6
kill -TERM "$capd"
wait "$capd" || fail "capd exited $?: $(tail -3 "$out/capd.log")"

# Every TCP key inside an outbound segment as captured (first and last
# payload byte), and nearly all at its last byte.
f=$(ls "$out"/*.pcapng)
tshark -r "$f" -Y "tcp.dstport == 9300 && tcp.len > 0 && frame.packet_flags_direction == 2 && \
	!(frame.interface_description contains \"sending program\")" \
	-T fields -e tcp.seq_raw -e tcp.len 2>/dev/null |
	awk '{ printf "%s %.0f\n", $1, ($1 + $2 - 1) % 4294967296 }' > "$out/segments"
sed -n 's/.* key tcp .* seq \([0-9]*\) .*/\1/p' "$out/keys.log" > "$out/tcpkeys"
nk=$(wc -l < "$out/tcpkeys")
[ "$nk" -ge 300 ] || fail "only $nk TCP keys for 400 sends: $(grep -v ' key ' "$out/keys.log")"
awk 'NR == FNR { lo[NR] = $1; hi[NR] = $2; n = NR; next }
	{ k = $1; inside = 0; last = 0
	  for (i = 1; i <= n; i++) {
		if ((lo[i] <= hi[i] && k >= lo[i] && k <= hi[i]) ||
		    (lo[i] > hi[i] && (k >= lo[i] || k <= hi[i]))) inside = 1
		if (k == hi[i]) last = 1
	  }
	  if (!inside) bad++; if (last) ends++ }
	END { printf "%d %d\n", bad + 0, ends + 0 }' "$out/segments" "$out/tcpkeys" > "$out/keycheck"
read -r bad ends < "$out/keycheck"
[ "$bad" -eq 0 ] || fail "$bad of $nk TCP keys name no byte of a captured segment"
[ "$ends" -ge $((nk * 9 / 10)) ] || fail "only $ends of $nk TCP keys are a segment's last byte"
grep -q "anchored" "$out/keys.log" || fail "TCP keys never anchored: $(grep -v ' key ' "$out/keys.log")"
[ "$(summary keys 'anchor mismatches')" -eq 0 ] || fail "anchor mismatches: $(grep summary "$out/keys.log")"
handed=0
for n in keys udp udpk aio socat; do handed=$((handed + $(summary $n handed))); done
taken=$(sed -n 's/.*keyed stamps: \([0-9]*\) taken.*/\1/p' "$out/capd.log")
joined=$(sed -n 's/.*taken, \([0-9]*\) joined.*/\1/p' "$out/capd.log")
dups=$(sed -n 's/.* \([0-9]*\) duplicates.*/\1/p' "$out/capd.log")
[ "${taken:-0}" -eq "$handed" ] || fail "capd took ${taken:-0} keyed stamps, the library handed $handed"
[ "$(( ${joined:-0} + ${dups:-0} ))" -eq "${taken:-0}" ] ||
	fail "capd joined ${joined:-0} of ${taken:-0}: $(grep 'keyed stamps' "$out/capd.log")"
ntx=$(tshark -r "$f" -Y 'frame.interface_description contains "sending program"' 2>/dev/null | wc -l)
[ "$ntx" -eq "${joined:-0}" ] || fail "$ntx sender-stamped frames in the file, capd joined ${joined:-0}"
for n in keys udp udpk aio socat; do
	[ -s "$out/$n.err" ] && fail "$n wrote to stderr: $(cat "$out/$n.err")"
done

[ "$fails" -eq 0 ] && echo "stamp: $nk TCP keys inside captured segments ($ends at their last byte);" \
	"capd joined $joined of $taken stamps ($dups duplicates); asyncio and socat exact," \
	"$hidden EPOLLERR and $shidden POLLERR hidden"
[ "$fails" -eq 0 ]
