#!/bin/sh
# The stamp formats of taps and timestamping switches (src/files/tap_*.c)
# against Wireshark's own decoders: a tap capture of known packets (tapless
# sim), rewritten by build/tools/tapwrite as each device would have handed
# it over (the device's stamp in a trailer or header, the record's stamp 7
# ms late, every 5th frame degraded where the format says so), then read
# by tshark and by build/tools/tapdecode (the decoders called directly).
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
for t in tapwrite tapdecode capdump; do
	[ -x $W/$t ] || { echo "FAIL: $W/$t not built (make all)"; exit 1; }
done

$T sim --out "$d/s" --start $START --tap algo --duration 2 --rate 500 \
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
	$W/tapdecode --format "$dec" "$d/$fmt.pcap" > "$d/$fmt.ours" 2> "$d/$fmt.err" ||
		fail "$fmt: tapdecode: $(head -3 "$d/$fmt.err")"
	TZ=UTC tshark -r "$d/$fmt.pcap" "$@" -T fields -E 'separator=|' \
		-e frame.number -e frame.time_epoch -e ip.len $FIELDS \
		> "$d/$fmt.ws" 2> "$d/$fmt.wserr" || fail "$fmt: tshark: $(head -3 "$d/$fmt.wserr")"
	[ "$(wc -l < "$d/$fmt.ours")" -eq "$n" ] || fail "$fmt: tapdecode gave $(wc -l < "$d/$fmt.ours") lines for $n frames"
	[ "$(wc -l < "$d/$fmt.ws")" -eq "$n" ] || fail "$fmt: tshark gave $(wc -l < "$d/$fmt.ws") lines for $n frames"
	# Columns: truth | ours (6, space-separated) | tshark's.
	paste -d'|' "$d/truth" "$d/$fmt.ours" "$d/$fmt.ws" | awk -F'|' -v fmt="$fmt" \
		"$WS2NS $AWK"'
	BEGIN { bad = 0; ws = 0; agreed = 0 }
	{
		split($2, o, " ")	# TS_NS PS CAPLEN DEGRADED DEVICE PORT
		truth = $1; rec = $4; iplen = $5
		for (i = 6; i <= NF; i++) w[i - 5] = $i
		i = NR - 1		# tapwrite counts frames from 0
		why = ""
		if (o[1] "" != truth "")	# as strings: 19 digits are past a double
			why = why " stamp " o[1] " is not the original " truth
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
check arista arista

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

# The 48-bit seconds' wrap was crossed.
awk -v s=$START 'END { exit !(substr($1, 1, 10) - s >= 1) }' "$d/truth" ||
	fail "the capture does not reach past the 16-bit wrap of the seconds"

[ "$fails" -eq 0 ] && echo "tapfmt_tshark: all checks passed"
[ "$fails" -eq 0 ]
