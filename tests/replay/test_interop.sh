#!/bin/sh
# Our pcapng files in the field's tools, and theirs in ours: tshark must see
# our nanosecond times, interfaces and directions; files rewritten by editcap
# (pcapng, and classic pcap in ns and µs) must read back the same; a cut file
# must give every whole packet and an error naming the offset.
set -u
d=$(mktemp -d /tmp/tapless-replay.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
n=1000

build/tools/capgen "$d/a.pcapng" $n || { echo "FAIL: capgen"; exit 1; }
build/tools/capdump "$d/a.pcapng" > "$d/ours" || fail "capdump of our own file"

# tshark: count, exact first and last times, interfaces, directions.
tshark -r "$d/a.pcapng" -T fields -E separator=' ' -e frame.time_epoch \
	-e frame.interface_id -e frame.packet_flags_direction 2>/dev/null > "$d/ts" ||
	fail "tshark could not read our file"
[ "$(wc -l < "$d/ts")" -eq $n ] || fail "tshark saw $(wc -l < "$d/ts") packets, want $n"
[ "$(sed -n 1p "$d/ts")" = "1763800000.123456789 0 0x00000001" ] ||
	fail "tshark frame 1: '$(sed -n 1p "$d/ts")'"
[ "$(sed -n 2p "$d/ts")" = "1763800000.124456792 1 0x00000002" ] ||
	fail "tshark frame 2: '$(sed -n 2p "$d/ts")'"
[ "$(sed -n ${n}p "$d/ts" | cut -d' ' -f1)" = "1763800001.122459786" ] ||
	fail "tshark last frame time: '$(sed -n ${n}p "$d/ts")'"
# Same times through our reader and tshark, packet by packet.
awk '/^[0-9]/ { printf "%s.%s\n", substr($1, 1, 10), substr($1, 11) }' "$d/ours" > "$d/ours.t"
cut -d' ' -f1 "$d/ts" > "$d/ts.t"
cmp -s "$d/ours.t" "$d/ts.t" || fail "our reader and tshark disagree on times"
tshark -r "$d/a.pcapng" -T fields -e frame.interface_description 2>/dev/null | sort -u > "$d/desc"
grep -q "tapless: source=hw phc=0 timescale=tai" "$d/desc" || fail "hw interface description lost: $(cat "$d/desc")"
capinfos -M "$d/a.pcapng" 2>/dev/null | grep -q "nanoseconds" || fail "capinfos: not nanosecond precision"

# editcap rewrites: pcapng, classic pcap ns and µs, read back by us.
editcap -F pcapng "$d/a.pcapng" "$d/b.pcapng" 2>/dev/null || fail "editcap pcapng"
build/tools/capdump "$d/b.pcapng" | grep -v '^iface' | cut -d' ' -f1,3,4 > "$d/b"
grep -v '^iface' "$d/ours" | cut -d' ' -f1,3,4 > "$d/a"
cmp -s "$d/a" "$d/b" || fail "editcap's pcapng reads differently"
editcap -F nsecpcap "$d/a.pcapng" "$d/c.pcap" 2>/dev/null || fail "editcap nsecpcap"
build/tools/capdump "$d/c.pcap" > "$d/c" || fail "capdump of an ns pcap"
[ "$(grep -c '^[0-9]' "$d/c")" -eq $n ] || fail "ns pcap: packet count"
cut -d' ' -f1 "$d/c" | head -n $n > "$d/c.t"
grep -v '^iface' "$d/ours" | cut -d' ' -f1 > "$d/a.t"
cmp -s "$d/a.t" "$d/c.t" || fail "ns pcap: times differ"
grep -q "resolution_ns=1 " "$d/c" || fail "ns pcap: resolution not 1 ns"
editcap -F pcap "$d/a.pcapng" "$d/u.pcap" 2>/dev/null || fail "editcap pcap"
build/tools/capdump "$d/u.pcap" > "$d/u" || fail "capdump of a µs pcap"
head -1 "$d/u" | grep -q '^1763800000123456000 ' || fail "µs pcap: first time $(head -1 "$d/u")"
grep -q "resolution_ns=1000 " "$d/u" || fail "µs pcap: resolution not 1000 ns"

# A cut file: whole packets before the cut, then an error with the offset.
size=$(stat -c %s "$d/a.pcapng")
head -c $((size / 2 + 3)) "$d/a.pcapng" > "$d/cut.pcapng"
build/tools/capdump "$d/cut.pcapng" > "$d/cut" 2> "$d/cut.err"
[ $? -eq 1 ] || fail "cut file: exit status not 1"
grep -q "cut.pcapng: offset [0-9]*: file ends inside a block" "$d/cut.err" ||
	fail "cut file: message '$(cat "$d/cut.err")'"
k=$(grep -c '^[0-9]' "$d/cut")
[ "$k" -gt 0 ] && [ "$k" -lt $n ] || fail "cut file: $k packets"
grep '^[0-9]' "$d/cut" > "$d/cut.p"
head -n "$k" "$d/ours" | cmp -s - "$d/cut.p" || fail "cut file: packets before the cut differ"

[ "$fails" -eq 0 ] && echo "ok: interop ($n packets; tshark, capinfos, editcap)"
[ "$fails" -eq 0 ]
