#!/bin/bash
# tapless-capd in a namespace: captures a stamped UDP and TCP exchange with
# the right directions and stamp sources (host stamps on veth), reads back in
# tshark; rotation by size gives several whole files that read as one
# time-ordered stream; SIGTERM in the middle of traffic leaves only whole
# files under final names; bad options fail with a clear message.
set -u
. scripts/netns.sh
tl_setup capd 198.18.5
out=$TL_OUT
tsx=build/tools/tsx
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# exchange PROTO PORT COUNT: tsx from a to b, waits for the receiver.
exchange() {
	tl_bg b "$tsx" recv --proto "$1" --bind "198.18.5.2:$2" --count "$3" \
		--out "$out/$1.rx" > "$out/$1.ready" 2>/dev/null
	local r=$TL_LAST_PID
	for _ in $(seq 100); do grep -q ready "$out/$1.ready" && break; sleep 0.05; done
	tl_exec a "$tsx" send --proto "$1" --to "198.18.5.2:$2" --count "$3" \
		--rate 5000 --max-size 1000 --out "$out/$1.tx" 2>/dev/null
	wait "$r"
}

# 1. UDP and TCP captured on the receiving host.
mkdir "$out/one"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/one" -H hostb \
	"udp port 9301 or tcp port 9302" 2> "$out/one.log"
capd=$TL_LAST_PID
sleep 0.5
exchange udp 9301 500
exchange tcp 9302 500
sleep 0.3
kill -TERM "$capd"
wait "$capd" || fail "capd exited $? after SIGTERM"
f=$(ls "$out/one"/*.pcapng 2>/dev/null)
[ "$(echo "$f" | wc -w)" -eq 1 ] || fail "expected one file, got: $(ls "$out/one")"
ls "$out/one"/*.part >/dev/null 2>&1 && fail "a .part file was left behind"
build/tools/capdump "$f" > "$out/one.dump" || fail "capdump: $(cat "$out/one.dump")"
grep -q "source=sw" "$out/one.dump" || fail "interfaces not marked as host stamps"
udp_in=$(tshark -r "$f" -Y "udp.dstport == 9301 && frame.packet_flags_direction == 1" 2>/dev/null | wc -l)
[ "$udp_in" -eq 500 ] || fail "UDP: $udp_in inbound datagrams captured, want 500"
tcp_in=$(tshark -r "$f" -Y "tcp.dstport == 9302 && tcp.len > 0 && frame.packet_flags_direction == 1" 2>/dev/null | wc -l)
[ "$tcp_in" -ge 1 ] || fail "TCP: no inbound data segments"
acks_out=$(tshark -r "$f" -Y "tcp.srcport == 9302 && frame.packet_flags_direction == 2" 2>/dev/null | wc -l)
[ "$acks_out" -ge 1 ] || fail "TCP: no outbound segments (ACKs) marked outbound"
tshark -r "$f" -T fields -e frame.interface_description 2>/dev/null | sort -u | grep -q "source=sw" ||
	fail "tshark: interface description lost"
grep -q "host stamps (no PHC)" "$out/one.log" || fail "capd did not say it uses host stamps: $(cat "$out/one.log")"
# Every stamp on the capture is between the sender's TX and the receiver's RX
# view of the first UDP message: same clock (namespaces share it).
first_cap=$(tshark -r "$f" -Y "udp.dstport == 9301" -T fields -e frame.time_epoch -c 1 2>/dev/null | tr -d .)
first_tx=$(awk '$1 == 0 { print $5 }' "$out/udp.tx")
[ -n "$first_cap" ] && [ "$first_cap" -gt "$first_tx" ] ||
	fail "capture stamp $first_cap not after TX stamp $first_tx"
# The kernel hands each direction's handle only its own frames (capture.c):
# each direction's ring counts about what the file holds of it, not every
# frame of both (frames that came between activation and the filter, a
# few at most, count too).
build/tools/capdump --blocks "$f" > "$out/one.blocks" || fail "capdump --blocks failed"
dircount() {	# IFACE: "EPBS RECV" (RECV of the last statistics block)
	awk -v i="$1" '$1 == "epb" && $3 == i { n++ }
		$1 == "isb" && $3 == i && $4 != "-" { r = $4 }
		END { print n + 0, r + 0 }' "$out/one.blocks"
}
read -r in_epb in_recv <<< "$(dircount 0)"
read -r out_epb out_recv <<< "$(dircount 1)"
[ "$in_epb" -ge 500 ] && [ "$out_epb" -ge 1 ] &&
	[ "$in_recv" -ge "$in_epb" ] && [ "$in_recv" -le $((in_epb + 10)) ] &&
	[ "$out_recv" -ge "$out_epb" ] && [ "$out_recv" -le $((out_epb + 10)) ] ||
	fail "per-direction ring counts: in $in_recv for $in_epb frames, out $out_recv for $out_epb"

# 2. Rotation by size, then SIGTERM mid-traffic: whole files only, read as
#    one time-ordered stream.
mkdir "$out/rot"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/rot" -C 1 -H hostb udp 2> "$out/rot.log"
capd=$TL_LAST_PID
sleep 0.5
tl_bg b "$tsx" recv --proto udp --bind 198.18.5.2:9303 --count 4000 \
	--out "$out/r.rx" > /dev/null 2>&1
sleep 0.2
tl_bg a "$tsx" send --proto udp --to 198.18.5.2:9303 --count 4000 \
	--rate 4000 --min-size 1000 --max-size 1000 --out "$out/r.tx"
sleep 0.6	# mid-traffic
kill -TERM "$capd"
wait "$capd" || fail "rotating capd exited $? after SIGTERM"
n=$(ls "$out/rot"/*.pcapng | wc -l)
[ "$n" -ge 2 ] || fail "rotation: $n file(s), want several of 1 MB"
ls "$out/rot"/*.part >/dev/null 2>&1 && fail "rotation: a .part file was left behind"
for g in "$out/rot"/*.pcapng; do
	build/tools/capdump "$g" > /dev/null 2>&1 || fail "rotation: $g is not whole"
done
prev=0 bad=0
for g in "$out/rot"/*.pcapng; do
	first=$(build/tools/capdump "$g" | head -1 | cut -d' ' -f1)
	[ "$first" -ge "$prev" ] || bad=1
	prev=$(build/tools/capdump "$g" | grep -v iface | tail -1 | cut -d' ' -f1)
done
[ "$bad" -eq 0 ] || fail "rotation: files overlap in time"

# 3. Bad input: no interface, unknown interface, bad filter, missing dir.
bin/tapless-capd -w "$out" 2>"$out/e1"; [ $? -eq 1 ] && grep -q "interfaces with -i" "$out/e1" || fail "no -i: $(cat "$out/e1")"
tl_exec b bin/tapless-capd -i tapless-nosuch0 -w "$out" 2>"$out/e2"; [ $? -ne 0 ] && grep -q "tapless-nosuch0" "$out/e2" || fail "unknown interface: $(cat "$out/e2")"
tl_exec b bin/tapless-capd -i "$TL_IF_B" -w "$out" "port port" 2>"$out/e3"; [ $? -eq 1 ] && grep -q "filter 'port port'" "$out/e3" || fail "bad filter: $(cat "$out/e3")"
bin/tapless-capd -i lo -w /nonexistent 2>"$out/e4"; [ $? -eq 1 ] && grep -q "/nonexistent: no such directory" "$out/e4" || fail "bad dir: $(cat "$out/e4")"
bin/tapless-capd -i lo -w "$out" --tx-socket /nonexistent/tx.sock 2>"$out/e4b"; [ $? -eq 1 ] &&
	grep -q -- "--tx-socket /nonexistent/tx.sock: /nonexistent: no such directory" "$out/e4b" ||
	fail "--tx-socket in a missing directory: exit and message: $(cat "$out/e4b")"
for k in write_dir write-dir; do	# either spelling of a key (HACKING.md)
	printf '%s %s/nodir\n' "$k" "$out" > "$out/$k.conf"
	bin/tapless-capd -f "$out/$k.conf" -i lo 2>"$out/e4$k"; [ $? -eq 1 ] && grep -q -- "-w $out/nodir: no such directory" "$out/e4$k" || fail "config key $k: $(cat "$out/e4$k")"
done
printf 'snaplen 10\n' > "$out/bad.conf"
bin/tapless-capd -f "$out/bad.conf" -i lo 2>"$out/e5"; [ $? -eq 1 ] && grep -q "bad.conf:1: snaplen: 10 is out of range" "$out/e5" || fail "bad config: $(cat "$out/e5")"

# 4. valgrind-clean: memcheck over a run with traffic and a rotation.
mkdir "$out/vg"
tl_bg b valgrind -q --error-exitcode=9 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect \
	bin/tapless-capd -i "$TL_IF_B" -w "$out/vg" -G 1 --duration 3 udp 2> "$out/vg.log"
vg=$TL_LAST_PID
sleep 1.5
exchange udp 9304 200
wait "$vg"
rc=$?
[ "$rc" -eq 0 ] || fail "valgrind: exit $rc: $(grep -v '^tapless-capd' "$out/vg.log" | head -20)"

# 5. A full disk: capd keeps running, leaves nothing under a final name that
#    is not whole, keeps what it wrote in .part, and exits 2 at the end.
mnt=$out/full
mkdir "$mnt"
unshare -m sh -c "mount -t tmpfs -o size=300k tmpfs '$mnt' &&
	ip netns exec $(tl_ns b) bin/tapless-capd -i $TL_IF_B -w '$mnt' --duration 3 udp 2> '$out/full.log';
	echo \$? > '$out/full.rc';
	for f in '$mnt'/*; do [ -e \"\$f\" ] && build/tools/capdump \"\$f\" > /dev/null 2>&1; echo \"\$? \$(stat -c %s \"\$f\") \$f\"; done > '$out/full.ls'" &
full=$!
sleep 0.7
tl_bg b "$tsx" recv --proto udp --bind 198.18.5.2:9305 --count 2000 \
	--out "$out/f.rx" --idle-ms 1000 > /dev/null 2>&1
sleep 0.2
tl_exec a "$tsx" send --proto udp --to 198.18.5.2:9305 --count 2000 \
	--rate 2000 --min-size 1000 --max-size 1000 --out "$out/f.tx" 2>/dev/null
wait "$full"
[ "$(cat "$out/full.rc")" = 2 ] || fail "full disk: exit $(cat "$out/full.rc"), want 2"
grep -q "No space left on device" "$out/full.log" || fail "full disk: not reported: $(cat "$out/full.log")"
grep -q "stopped after" "$out/full.log" || fail "full disk: capd did not run to the end"
# Final names must be whole (capdump 0); .part files may end mid-block, but
# none may be empty (the tmpfs lives only in that mount namespace: sizes were
# taken there).
while read -r rc size f; do
	case $f in
	*.part) [ "$size" -gt 0 ] || fail "full disk: empty $f left behind" ;;
	*) [ "$rc" -eq 0 ] || fail "full disk: $f under its final name is not whole" ;;
	esac
done < "$out/full.ls"
grep -q '\.part$' "$out/full.ls" || fail "full disk: nothing kept: $(cat "$out/full.ls")"

# 6. -c N stops after exactly N frames, as tcpdump does.
mkdir "$out/cnt"
tl_bg b bin/tapless-capd -i "$TL_IF_B" -w "$out/cnt" -n 100 udp 2>/dev/null
c=$TL_LAST_PID
sleep 0.5
tl_exec a build/tools/blast 198.18.5.2 9999 10000 0.1 > /dev/null
wait "$c" || fail "-c 100: exit $?"
k=$(build/tools/capdump "$out"/cnt/*.pcapng | grep -vc '^iface')
[ "$k" -eq 100 ] || fail "-c 100: $k frames in the file"

[ "$fails" -eq 0 ] && echo "ok: capd"
[ "$fails" -eq 0 ]
