#!/bin/sh
# The stamp formats of taps and timestamping switches (src/files/tap_*.c)
# against Wireshark's own decoders: a tap capture of known packets (tapless
# sim), rewritten by build/tools/tapwrite as each device would have handed
# it over (the device's stamp in a trailer or header, the record's stamp 7
# ms late, every 5th frame degraded where the format says so), then read
# by tshark and by the capture reader (build/tools/capdump --tap FORMAT:
# what validate and correlate read), and detected by it (--tap auto).
# Frame by frame: the stamp is tshark's, and the packet's original stamp;
# picoseconds, device, port and degraded as tshark shows them; the frame
# left after the cut is the IP datagram padded to 60 bytes, as on the
# wire. Fails on any mismatch, or when tshark decodes fewer frames than
# were written.
set -u
. tests/replay/lib.sh
replay_setup tapfmt
W=build/tools
# One second before a 16-bit wrap of the seconds (26915 * 65536): the
# 48-bit Arista stamps cross it.
START=1763901439

command -v tshark > /dev/null || { echo "FAIL: tshark not found"; exit 1; }
for t in tapwrite capdump; do
	[ -x $W/$t ] || { echo "FAIL: $W/$t not built (make all)"; exit 1; }
done

$T sim --output "$d/s" --start $START --tap algo --duration 2 --rate 500 \
	--pure-acks 0.3 > "$d/sim.log" 2>&1 || { echo "FAIL: sim: $(cat "$d/sim.log")"; exit 1; }
IN=$d/s/tap-algo.pcapng
$W/capdump "$IN" | grep -v '^iface' | cut -d' ' -f1 > "$d/truth"
n=$(wc -l < "$d/truth")
[ "$n" -gt 500 ] || fail "only $n frames in the tap capture"

# ws2ns: "Mon DD, YYYY HH:MM:SS.NNNNNNNNN UTC" (tshark, TZ=UTC) in column
# c of |-separated lines, to ns since 1970, as a string (exact).
WS2NS='
function days(y, m, d,   era, yoe, doy) {
	y -= m <= 2
	era = int(y / 400)
	yoe = y - era * 400
	doy = int((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
	return era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468
}
function ws2ns(s,   a, t, m) {
	if (s == "")
		return "-"
	split(s, a, " ")
	m = (index("JanFebMarAprMayJunJulAugSepOctNovDec", a[1]) + 2) / 3
	sub(",", "", a[2])
	split(a[4], t, "[:.]")
	return sprintf("%.0f%s",
		       days(a[3], m, a[2]) * 86400 + t[1] * 3600 + t[2] * 60 + t[3], t[4])
}'

# check FMT DECODER TSHARK_ARGS...: write, decode both ways, compare.
# The tshark fields after frame.number and ip.len are the format's: the
# awk program for it (in $AWK) compares them with ours.
check() {
	fmt=$1 dec=$2
	shift 2
	$W/tapwrite --format "$fmt" --record-offset-ms 7 --degraded-every 5 \
		"$IN" "$d/$fmt.pcap" 2> "$d/$fmt.tw" || { fail "$fmt: tapwrite: $(cat "$d/$fmt.tw")"; return; }
	# TS_NS PS CAPLEN ORIGLEN DEGRADED DEVICE PORT RECORD_NS, less
	# ORIGLEN and RECORD_NS.
	$W/capdump --tap "$dec" "$d/$fmt.pcap" 2> "$d/$fmt.err" |
		awk '{ print $1, $2, $3, $5, $6, $7 }' > "$d/$fmt.ours"
	grep -q "tap $dec: stamped $n consumed 0 missing 0 bad 0 degraded" "$d/$fmt.err" ||
		fail "$fmt: capdump --tap $dec: $(head -3 "$d/$fmt.err")"
	# Detected from the first frames, without being named.
	$W/capdump --tap auto "$d/$fmt.pcap" 2>&1 > /dev/null | grep -q "tap $dec: stamped $n " ||
		fail "$fmt: not detected as $dec: $($W/capdump --tap auto "$d/$fmt.pcap" 2>&1 > /dev/null)"
	TZ=UTC tshark -r "$d/$fmt.pcap" "$@" -T fields -E 'separator=|' \
		-e frame.number -e frame.time_epoch -e ip.len $FIELDS \
		> "$d/$fmt.ws" 2> "$d/$fmt.wserr" || fail "$fmt: tshark: $(head -3 "$d/$fmt.wserr")"
	[ "$(wc -l < "$d/$fmt.ours")" -eq "$n" ] || fail "$fmt: the reader gave $(wc -l < "$d/$fmt.ours") frames of $n"
	[ "$(wc -l < "$d/$fmt.ws")" -eq "$n" ] || fail "$fmt: tshark gave $(wc -l < "$d/$fmt.ws") lines for $n frames"
	# Columns: truth | ours (6, space-separated) | tshark's.
	paste -d'|' "$d/truth" "$d/$fmt.ours" "$d/$fmt.ws" | awk -F'|' -v fmt="$fmt" -v shift="${SHIFT:-0}" \
		"$WS2NS $AWK"'
	BEGIN { bad = 0; ws = 0; agreed = 0 }
	{
		split($2, o, " ")	# TS_NS PS CAPLEN DEGRADED DEVICE PORT
		truth = $1; rec = $4; iplen = $5
		for (i = 6; i <= NF; i++) w[i - 5] = $i
		i = NR - 1		# tapwrite counts frames from 0
		why = ""
		# As strings (19 digits are past a double); a TAI device
		# (shift 37) says the UTC original 37 s later.
		orig = sprintf("%d%s", substr(truth, 1, 10) + shift, substr(truth, 11))
		if (o[1] "" != orig)
			why = why " stamp " o[1] " is not the original " orig
		# The record, 7 ms late: what a reader must not take.
		split(rec, r, ".")
		if ((r[1] - substr(truth, 1, 10)) * 1e9 + r[2] - substr(truth, 11) != 7000000)
			why = why " record " rec " is not 7 ms after " truth
		want = iplen + 14 < 60 ? 60 : iplen + 14
		if (iplen != "" && o[3] != want)
			why = why " " o[3] " bytes left after the cut, not " want
		got = compare()		# 1: tshark decoded it; why added to
		ws += got
		if (why == "" && got)
			agreed++
		else if (bad++ < 5)
			printf "%s frame %d:%s\n", fmt, NR, why
	}
	END {
		printf "%s: %d frames, tshark decoded %d, %d agreed\n", fmt, NR, ws, agreed
		exit bad != 0 || ws < NR
	}' > "$d/$fmt.cmp" || fail "$fmt: $(cat "$d/$fmt.cmp")"
	tail -n 1 "$d/$fmt.cmp"
}

# MetaWatch: the stamp, sub-ns (ps: round(v * 1000 / 2^24), at most 999),
# flags 0x10 (degraded), device, port.
FIELDS="-e metamako.time -e metamako.subns -e metamako.flags -e metamako.srcdevice -e metamako.srcport"
AWK='function compare(   ps, deg) {
	if (w[1] == "") { why = why " tshark did not decode it"; return 0 }
	if (ws2ns(w[1]) != o[1]) why = why " tshark says " ws2ns(w[1])
	ps = w[2] == "" ? 0 : int((w[2] * 1000 + 8388608) / 16777216)
	if (ps > 999) ps = 999
	if (o[2] != ps) why = why " ps " o[2] ", tshark " ps
	deg = index("13579bdf", substr(w[3], 3, 1)) > 0
	if (o[4] != deg || deg != (i % 5 == 4)) why = why " degraded " o[4] ", flags " w[3]
	if (o[5] != w[4] || o[6] != w[5]) why = why " device/port " o[5] "/" o[6] ", tshark " w[4] "/" w[5]
	return 1
}'
check metawatch metawatch --enable-heuristic metamako_eth

# Exablaze: the stamp at tshark's precision (ns, truncated), device, port.
FIELDS="-e exablaze.timestamp -e exablaze.device -e exablaze.port"
AWK='function compare() {
	if (w[1] == "") { why = why " tshark did not decode it"; return 0 }
	if (ws2ns(w[1]) != o[1]) why = why " tshark says " ws2ns(w[1])
	if (o[5] != w[2] || o[6] != w[3]) why = why " device/port " o[5] "/" o[6] ", tshark " w[2] "/" w[3]
	if (o[4] != 0) why = why " degraded"
	return 1
}'
check exablaze exablaze --enable-heuristic exablaze_eth

# Ixia: the stamp; degraded (holdover) where tapwrite put it, as tshark's
# 4.0 has no field for the source.
FIELDS="-e ixiatrailer.timestamp"
AWK='function compare() {
	if (w[1] == "") { why = why " tshark did not decode it"; return 0 }
	if (ws2ns(w[1]) != o[1]) why = why " tshark says " ws2ns(w[1])
	if (o[4] != (i % 5 == 4)) why = why " degraded " o[4]
	if (o[5] != "-") why = why " a device"
	return 1
}'
check ixia ixia

# Arista, 64 bits: seconds and ns.
FIELDS="-e avsp.64sec -e avsp.64ns"
AWK='function compare() {
	if (w[1] == "") { why = why " tshark did not decode it"; return 0 }
	if (sprintf("%.0f%09d", w[1], w[2]) != o[1]) why = why " tshark says " w[1] "." w[2]
	return 1
}'
SHIFT=37
check arista arista
SHIFT=0

# Arista, 48 bits: tshark shows the seconds' low 16 bits; ours are whole
# (and the original stamp, checked above) across the wrap.
FIELDS="-e avsp.48sec -e avsp.48ns"
AWK='function compare(   s) {
	if (w[1] == "") { why = why " tshark did not decode it"; return 0 }
	s = substr(o[1], 1, length(o[1]) - 9)
	if (s % 65536 != w[1] || substr(o[1], length(o[1]) - 8) + 0 != w[2])
		why = why " tshark says " w[1] " (low 16) ." w[2]
	return 1
}'
check arista48 arista

# validate and correlate on each file: the reference check's error as
# against the original pcapng (to within 1 ns), and the FIX messages of
# the frames as cut, as the pcapng's. Named none, the records' stamps (7
# ms late) come back: the device's stamp is what made the difference.
vmean() {
	ref=$1
	shift
	$T validate --no-phc --json --reference "$ref" --capture "$d/s/algo.pcapng" \
		"$@" 2> /dev/null | jq '.reference.all.error_ns | "\(.count) \(.mean)"' -r
	echo "- -"	# read only when validate gave nothing
}
msgs() {
	$T correlate --json "tap=$1" 2> /dev/null | jq '.inputs[0].fix_messages'
}
set -- $(vmean "$IN")
want_n=$1 want_mean=$2
[ "$want_n" = - ] && want_n=0
want_msgs=$(msgs "$IN")
[ "$want_n" -gt 500 ] && [ "$want_msgs" -gt 500 ] ||
	fail "the pcapng reference: $want_n matched, $want_msgs FIX messages"
for fmt in metawatch exablaze ixia arista arista48; do
	set -- $(vmean "$d/$fmt.pcap")
	awk -v n="$1" -v m="$2" -v wn="$want_n" -v wm="$want_mean" 'BEGIN {
		exit !(n == wn && m - wm < 1 && wm - m < 1) }' ||
		fail "$fmt: validate matched $1 with mean error $2 ns, the pcapng $want_n, $want_mean ns"
	[ "$(msgs "$d/$fmt.pcap")" = "$want_msgs" ] ||
		fail "$fmt: correlate found $(msgs "$d/$fmt.pcap") FIX messages, the pcapng $want_msgs"
done
echo "tapfmt_tshark: validate against each format: $want_n matched, mean error $want_mean ns as the pcapng's; $want_msgs FIX messages in each"
set -- $(vmean "$d/metawatch.pcap" --reference-format none)
awk -v m="$2" -v wm="$want_mean" 'BEGIN { d = wm - m; exit !(d > 6999000 && d < 7001000) }' ||
	fail "metawatch read as none: mean error $2 ns, not 7 ms off $want_mean"

# Hostile frames: each left out with a warning naming the file, the
# record and its offset, and counted; validate says so on stderr. The
# third frame of the Arista file gets an unknown version, the fourth of
# the MetaWatch file an absurd stamp (a trailer whose stamp cannot be).
# patch FILE OUT RECORD AT BYTES: OUT is FILE with BYTES (hex) at offset
# AT of record RECORD (from 1); prints the record's offset.
patch() {
	python3 - "$@" <<'PY'
import sys
src, out, rec, at, hexb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
b = bytearray(open(src, 'rb').read())
off = 24
for _ in range(rec - 1):
    off += 16 + int.from_bytes(b[off + 8:off + 12], 'little')
b[off + 16 + at:off + 16 + at + len(hexb) // 2] = bytes.fromhex(hexb)
open(out, 'wb').write(b)
print(off)
PY
}
off=$(patch "$d/arista.pcap" "$d/bad-arista.pcap" 3 16 0077)
$W/capdump --tap auto "$d/bad-arista.pcap" > /dev/null 2> "$d/bad-arista.err"
grep -q "tap arista: stamped $((n - 1)) consumed 0 missing 0 bad 1 " "$d/bad-arista.err" &&
	grep -q "warning: $d/bad-arista.pcap: record 3 (offset $off): arista: .*version 0x0077" "$d/bad-arista.err" ||
	fail "an unknown Arista version: $(cat "$d/bad-arista.err")"
# The MetaWatch trailer's seconds, 12 bytes from the frame's end, or its
# nanoseconds where a new FCS follows (odd frames, tapwrite): absurd either way.
len=$(python3 -c "import sys; b=open(sys.argv[1],'rb').read(); o=24
for _ in range(3): o += 16 + int.from_bytes(b[o+8:o+12], 'little')
print(int.from_bytes(b[o+8:o+12], 'little'))" "$d/metawatch.pcap")
off=$(patch "$d/metawatch.pcap" "$d/bad-mw.pcap" 4 $((len - 12)) ffffffff)
$T validate --no-phc --reference "$d/bad-mw.pcap" --capture "$d/s/algo.pcapng" \
	> /dev/null 2> "$d/bad-mw.err"
grep -q "warning: $d/bad-mw.pcap: 1 frames without a metawatch stamp and 0 with a bad one left out (first: $d/bad-mw.pcap: record 4 (offset $off): metawatch" "$d/bad-mw.err" ||
	fail "absurd MetaWatch seconds: $(cat "$d/bad-mw.err")"

# The 48-bit seconds' wrap was crossed.
awk -v s=$START 'END { exit !(substr($1, 1, 10) - s >= 1) }' "$d/truth" ||
	fail "the capture does not reach past the 16-bit wrap of the seconds"

[ "$fails" -eq 0 ] && echo "tapfmt_tshark: all checks passed"
[ "$fails" -eq 0 ]
