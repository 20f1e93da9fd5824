#!/bin/sh
# The ExaLINK Fusion decoder end to end: tapless sim's tap file (true wire
# times) rewritten by exalinkwrite as an ExaLINK mirror port captured by
# a server 7 ms off, read back through the capture reader as validate and
# correlate read it (capdump --tap exalink: tapfmt_exalink_ops applied):
# every frame after the first keyframe within 3 ns of its true time (the
# counter's tick is 2.86 ns) and its length as before, those before it
# counted, keyframes consumed; the record times visibly 7 ms off; and
# Wireshark reads the file, keyframes and all.
set -u
. tests/replay/lib.sh
replay_setup exalink
START=1763900000
W=build/tools/exalinkwrite
D="build/tools/capdump --tap exalink"

$T sim --output "$d/s" --start $START --tap algo --duration 4 \
	--clock tap:noise=0 > "$d/sim.log" 2>&1 || { echo "FAIL: sim: $(cat "$d/sim.log")"; exit 1; }
build/tools/capdump "$d/s/tap-algo.pcapng" | grep -v '^iface' > "$d/orig" ||
	{ echo "FAIL: capdump"; exit 1; }
n=$(wc -l < "$d/orig")

# field FILE KEY: the number after KEY in FILE's summary line.
field() { tr ' ' '\n' < "$1" | awk -v k="$2" 'p { print; exit } $0 == k { p = 1 }'; }

# errs ORIG DEC: "MIN MAX LENGTH_MISMATCHES" of DEC's stamps (TS_NS PS
# CAPLEN) against ORIG's (TS_NS IFACE DIR CAPLEN ORIGLEN), line by line,
# in ps. The last 12 digits only: awk's doubles are exact to 2^53.
errs() {
	paste -d' ' "$1" "$2" | awk 'function low(s) { return substr(s, length(s) - 11) + 0 }
		{ e = (low($6) - low($1)) * 1000 + $7
		  if (e > 5e14) e -= 1e15; if (e < -5e14) e += 1e15
		  if (NR == 1 || e < min) min = e; if (NR == 1 || e > max) max = e
		  if ($4 != $8) bad++ }
		END { printf "%.0f %.0f %d\n", min, max, bad }'
}

# run NAME ARGS...: write with ARGS, decode; check the counts.
run() {
	name=$1; shift
	$W "$@" "$d/s/tap-algo.pcapng" "$d/$name.pcap" 2> "$d/$name.w" ||
		{ fail "$name: exalinkwrite: $(cat "$d/$name.w")"; return 1; }
	# shellcheck disable=SC2086
	$D "$d/$name.pcap" > "$d/$name.dec" 2> "$d/$name.d" ||
		{ fail "$name: capdump --tap exalink: $(cat "$d/$name.d")"; return 1; }
	before=$(field "$d/$name.w" before-keyframe)
	keys=$(field "$d/$name.w" keyframes)
	[ "$(field "$d/$name.w" frames)" = "$n" ] || fail "$name: wrote $(cat "$d/$name.w"), not $n frames"
	[ "$before" -gt 0 ] || fail "$name: no frame before the first keyframe"
	[ "$(field "$d/$name.d" stamped)" = $((n - before)) ] ||
		fail "$name: stamped not $n - $before: $(cat "$d/$name.d")"
	[ "$(field "$d/$name.d" missing)" = "$before" ] ||
		fail "$name: left out is not the $before frames before the first keyframe: $(cat "$d/$name.d")"
	[ "$(field "$d/$name.d" consumed)" = "$keys" ] ||
		fail "$name: consumed is not the $keys keyframes: $(cat "$d/$name.d")"
	[ "$(field "$d/$name.d" bad)" = 0 ] || fail "$name: bad keyframes: $(cat "$d/$name.d")"
	grep -q "warning: $d/$name.pcap: record 1 (offset 24): exalink: no keyframe yet: its counter cannot be placed in time" \
		"$d/$name.d" || fail "$name: the first left out, said: $(cat "$d/$name.d")"
	tail -n +$((before + 1)) "$d/orig" > "$d/$name.orig"
}

# 1. fcs mode, keyframes every 250 ms carrying the counter's true rate
# (2.2 ppm off 350 MHz), the counter wrapping 2^32 0.5 s after the first
# keyframe (exalinkwrite's default): every stamp within 3 ns (a tick of
# the stamp's counter and one of the keyframes'), lengths as the tap's.
if run fcs --freq 350000777 --keyframe-every-ms 250 --record-offset-ms 7; then
	set -- $(errs "$d/fcs.orig" "$d/fcs.dec")
	[ "$1" -ge -3000 ] && [ "$2" -le 3000 ] ||
		fail "fcs: stamp errors $1 to $2 ps, not within 3 ns"
	[ "$3" = 0 ] || fail "fcs: $3 frames not of their length after the cut"
	fcs_range="$1 to $2 ps"
	# The record stamps: the server's clock, 7 ms late.
	first=$(head -n 1 "$d/orig" | cut -d' ' -f1)
	rec=$(tshark -r "$d/fcs.pcap" -Y 'eth.type != 0x88b5' -c 1 -T fields \
		-e frame.time_epoch 2>/dev/null)
	awk -v r="$rec" -v t="$first" -v s=$START 'BEGIN {
		split(r, a, "."); e = ((a[1] - s) * 1e9 + a[2]) - (t - s * 1e9)
		exit !(e == 7000000) }' ||
		fail "fcs: record time $rec is not 7 ms after the first frame's $first"
	# Wireshark reads it: every frame, the keyframes as 0x88b5.
	all=$(tshark -r "$d/fcs.pcap" 2>/dev/null | wc -l)
	kf=$(tshark -r "$d/fcs.pcap" -Y 'eth.type == 0x88b5' 2>/dev/null | wc -l)
	[ "$all" -eq $((n + keys)) ] || fail "fcs: tshark reads $all frames, not $n + $keys"
	[ "$kf" -eq "$keys" ] || fail "fcs: tshark shows $kf EtherType 0x88b5 frames, not $keys"
fi

# 2. As the device does: keyframes each second saying 350 MHz while the
# counter runs 2.2 ppm off it. From the second keyframe on, the rate
# between keyframes: within 3 ns; between the first two, freq alone,
# up to 2.2 us off.
if run nominal --freq 350000777 --keyframe-freq 350000000; then
	k2=$(field "$d/nominal.w" first-keyframe-ns)
	k2=$((k2 + 1000000000))
	awk -v k="$k2" '$1 < k' "$d/nominal.orig" > "$d/nominal.o1"
	n1=$(wc -l < "$d/nominal.o1")
	tail -n +$((n1 + 1)) "$d/nominal.orig" > "$d/nominal.o2"
	head -n "$n1" "$d/nominal.dec" > "$d/nominal.d1"
	tail -n +$((n1 + 1)) "$d/nominal.dec" > "$d/nominal.d2"
	set -- $(errs "$d/nominal.o2" "$d/nominal.d2")
	[ "$1" -ge -3000 ] && [ "$2" -le 3000 ] && [ "$3" = 0 ] ||
		fail "nominal: after the second keyframe, errors $1 to $2 ps, $3 lengths"
	set -- $(errs "$d/nominal.o1" "$d/nominal.d1")
	[ "$2" -gt 1000000 ] && [ "$2" -le 2230000 ] ||
		fail "nominal: before the second keyframe, errors $1 to $2 ps (freq alone: to 2.2 us)"
fi

# 3. append-compat: compat keyframes (IPv4, protocol 253, no freq), the
# 31-bit counter, then a recomputed FCS; both cut (8 bytes).
if run ac --mode append-compat --freq 350000000 --keyframe-every-ms 500; then
	set -- $(errs "$d/ac.orig" "$d/ac.dec")
	[ "$1" -ge -3000 ] && [ "$2" -le 3000 ] && [ "$3" = 0 ] ||
		fail "append-compat: errors $1 to $2 ps, $3 lengths"
	kf=$(tshark -r "$d/ac.pcap" -Y 'ip.proto == 253' 2>/dev/null | wc -l)
	[ "$kf" -eq "$keys" ] || fail "append-compat: tshark shows $kf protocol 253 keyframes, not $keys"
fi

# 4. Detection finds no keyframe among the first 64 frames here (the
# first comes after ~290): named, the format is read (above), and "auto"
# leaves the records alone.
if [ -f "$d/fcs.pcap" ]; then
	build/tools/capdump --tap auto "$d/fcs.pcap" > /dev/null 2> "$d/fcs.auto"
	grep -q "tap none:" "$d/fcs.auto" || fail "auto found a format in a file whose first keyframe comes late: $(cat "$d/fcs.auto")"
	# validate and correlate: against the tap's pcapng less the frames
	# before the first keyframe (which the ExaLINK file cannot place),
	# the same matches, the mean error within 1 ns (the counter's ticks
	# are 2.86 ns), the same FIX messages.
	before=$(field "$d/fcs.w" before-keyframe)
	editcap -r "$d/s/tap-algo.pcapng" "$d/sub.pcapng" "$((before + 1))-$n" 2> /dev/null ||
		fail "editcap could not cut the tap's capture"
	vm() {
		ref=$1
		shift
		$T validate --no-phc --json --reference "$ref" --capture "$d/s/algo.pcapng" "$@" \
			2> /dev/null | jq -r '.reference.all.error_ns | "\(.count) \(.mean)"'
	}
	a=$(vm "$d/sub.pcapng")
	b=$(vm "$d/fcs.pcap" --reference-format exalink)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		exit !(x[1] == y[1] && x[1] > 0 && x[2] - y[2] < 1 && y[2] - x[2] < 1) }' ||
		fail "validate: the pcapng less its first $before frames $a, the ExaLINK file $b"
	m() { $T correlate --json --tap-format "tap=$2" "tap=$1" 2> /dev/null | jq '.inputs[0].fix_messages'; }
	[ "$(m "$d/sub.pcapng" auto)" = "$(m "$d/fcs.pcap" exalink)" ] && [ "$(m "$d/sub.pcapng" auto)" -gt 0 ] ||
		fail "correlate: $(m "$d/sub.pcapng" auto) FIX messages in the pcapng, $(m "$d/fcs.pcap" exalink) in the ExaLINK file"
	echo "exalink: validate $b (count, mean) as the pcapng's $a; $(m "$d/fcs.pcap" exalink) FIX messages in both"
fi

[ "$fails" -eq 0 ] && echo "ok: exalink ($n frames; fcs stamps $fcs_range off the tap's; tshark)"
[ "$fails" -eq 0 ]
