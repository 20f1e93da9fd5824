#!/bin/sh
# Endace ERF (a DAG card's capture) read by our reader and by Wireshark's:
# tapless sim's optical tap converted to ERF by build/tools/erfwrite, whole
# frames (records padded to 8 bytes, as the cards write them) and frames
# snapped short (unpadded), must give tshark's stamps to the ns and its
# lengths, frame by frame, and the stamps and lengths of the pcapng it came
# from. tapless validate against the ERF reference must give the error it
# gives against the pcapng one, and that error less the offset when the ERF
# is written late. A cut ERF file: every whole frame, then an error naming
# the file, the offset and the record.
set -u
. tests/replay/lib.sh
replay_setup erf
ERFW=build/tools/erfwrite
DUMP=build/tools/capdump
[ -x "$ERFW" ] && [ -x "$DUMP" ] || { echo "FAIL: $ERFW or $DUMP not built (make all)"; exit 1; }
if ! command -v tshark > /dev/null 2>&1; then
	echo "skip: erf (no tshark to check against)"
	exit 0
fi

S=$d/sim
$T sim --output "$S" --rate 2000 -d 1 --seed 7 --tap algo \
	--clock algo:offset=250,rate=300,noise=20 > "$d/sim.log" 2>&1 ||
	{ echo "FAIL: sim: $(cat "$d/sim.log")"; exit 1; }
TAP=$S/tap-algo.pcapng

# capdump FILE as "SECONDS.NANOSECONDS ORIGLEN CAPLEN", tshark's fields:
# the ns kept as text (19 digits are more than awk's doubles hold).
ours() {
	$DUMP "$1" | awk '/^[0-9]/ { n = length($1)
		printf "%s.%s %s %s\n", substr($1, 1, n - 9), substr($1, n - 8), $5, $4 }'
}
theirs() {
	tshark -r "$1" -T fields -E separator=' ' -e frame.time_epoch \
		-e frame.len -e frame.cap_len 2>/dev/null
}

# agree WHAT A B: files A and B (capdump's, and tshark's or capdump's of
# another file) line by line; prints how many agree, and the first that
# does not.
agree() {
	[ -s "$2" ] || { fail "$1: nothing read from $(basename "$2")"; return; }
	[ -s "$3" ] || { fail "$1: nothing read from $(basename "$3")"; return; }
	paste -d '|' "$2" "$3" | awk -F '|' -v what="$1" '
		$1 == $2 { ok++; next }
		!bad++ { printf "FAIL: %s: frame %d: \"%s\" vs \"%s\"\n", what, NR, $1, $2 }
		END { printf "%s: %d frames agree, %d differ\n", what, ok, bad; exit bad > 0 }' ||
		fails=$((fails + 1))
}

# 1. Whole frames, padded records: ours and tshark's reader of the ERF,
# and the pcapng the frames came from.
$ERFW "$TAP" "$d/tap.erf" > /dev/null 2> "$d/w.err" || fail "erfwrite: $(cat "$d/w.err")"
ours "$d/tap.erf" > "$d/erf.ours"
theirs "$d/tap.erf" > "$d/erf.tshark"
ours "$TAP" > "$d/pcapng.ours"
n=$(wc -l < "$d/pcapng.ours")
[ "$n" -gt 1000 ] || fail "only $n frames in the tap"
agree "erf, ours vs tshark" "$d/erf.ours" "$d/erf.tshark"
agree "erf vs its pcapng" "$d/erf.ours" "$d/pcapng.ours"
# The records are padded: some frame's length is not a multiple of 8 less
# the 18 bytes of header, or the pad was not tried.
awk '($2 + 18) % 8 { found = 1 } END { exit !found }' "$d/erf.ours" ||
	fail "no frame needed a pad: the test proves nothing about it"
$DUMP "$d/tap.erf" | grep -q '^iface 1 name=erf[01] linktype=1 resolution_ns=0 source=unknown$' ||
	fail "interfaces: $($DUMP "$d/tap.erf" | grep '^iface')"

# 2. Frames snapped to 50 bytes (editcap), written unpadded.
editcap -s 50 "$TAP" "$d/snap.pcapng" 2>/dev/null || fail "editcap -s 50"
$ERFW "$d/snap.pcapng" "$d/snap.erf" > /dev/null 2> "$d/w.err" || fail "erfwrite snapped: $(cat "$d/w.err")"
ours "$d/snap.erf" > "$d/snap.ours"
theirs "$d/snap.erf" > "$d/snap.tshark"
agree "snapped erf, ours vs tshark" "$d/snap.ours" "$d/snap.tshark"
awk '$3 != 50 || $2 <= 50 { bad = 1 } END { exit bad }' "$d/snap.ours" ||
	fail "snapped: a frame not cut to 50 bytes, or no longer than 50"

# 3. validate: the ERF reference gives the pcapng's error; written 1 us
# late, the error (host - reference) is 1 us less.
$ERFW --offset-ns 1000 "$TAP" "$d/late.erf" > /dev/null 2> "$d/w.err" ||
	fail "erfwrite --offset-ns 1000: $(cat "$d/w.err")"
for ref in "$TAP" "$d/tap.erf" "$d/late.erf"; do
	b=$(basename "$ref")
	$T validate --no-phc --json --reference "$ref" --capture "$S/algo.pcapng" \
		> "$d/$b.json" 2> "$d/$b.err"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "validate --reference $b: exit $rc: $(cat "$d/$b.err")"
done
for dir in tx rx all; do
	want=$(jq -c ".reference.$dir.error_ns | [.count, .mean, .sd]" "$d/tap-algo.pcapng.json" 2>&1)
	got=$(jq -c ".reference.$dir.error_ns | [.count, .mean, .sd]" "$d/tap.erf.json" 2>&1)
	[ "$got" = "$want" ] || fail "validate $dir: ERF reference $got, pcapng $want"
	jq -n -e --slurpfile a "$d/tap-algo.pcapng.json" --slurpfile b "$d/late.erf.json" --arg d "$dir" '
		($a[0].reference[$d].error_ns) as $x | ($b[0].reference[$d].error_ns) as $y |
		$x.count == $y.count and ((($x.mean - 1000) - $y.mean) | fabs) < 1e-6 and
		(($x.sd - $y.sd) | fabs) < 1e-6' > /dev/null 2>&1 ||
		fail "validate $dir, reference 1 us late: $(jq -c ".reference.$dir.error_ns | {count, mean, sd}" "$d/late.erf.json" 2>&1)"
done
mean=$(jq '.reference.all.error_ns.mean' "$d/tap.erf.json" 2>/dev/null)
matched=$(jq '.reference.matched' "$d/tap.erf.json" 2>/dev/null)
echo "validate: mean error $mean ns over $matched packets, against the pcapng and the ERF"
# correlate reads the ERF's frames (their FCS kept) to the same FIX
# messages as the pcapng's.
msgs() { $T correlate --json "tap=$1" 2> /dev/null | jq '.inputs[0].fix_messages'; }
[ "$(msgs "$d/tap.erf")" = "$(msgs "$TAP")" ] && [ "$(msgs "$TAP")" -gt 0 ] ||
	fail "correlate: $(msgs "$d/tap.erf") FIX messages in the ERF, $(msgs "$TAP") in the pcapng"

# 4. A cut ERF: the whole records before the cut, then the error.
size=$(stat -c %s "$d/tap.erf")
head -c $((size / 2 + 5)) "$d/tap.erf" > "$d/cut.erf"
$DUMP "$d/cut.erf" > "$d/cut" 2> "$d/cut.err"
[ $? -eq 1 ] || fail "cut: capdump exit status not 1"
k=$(grep -c '^[0-9]' "$d/cut")
grep -q "cut.erf: offset [0-9]*: ERF record $((k + 1)): file ends inside" "$d/cut.err" ||
	fail "cut: message '$(cat "$d/cut.err")' after $k frames"
$DUMP "$d/tap.erf" | grep '^[0-9]' | head -n "$k" > "$d/whole.k"
grep '^[0-9]' "$d/cut" | cmp -s - "$d/whole.k" || fail "cut: the $k frames before the cut differ"
[ "$k" -gt 0 ] && [ "$k" -lt "$n" ] || fail "cut: $k frames of $n"

[ "$fails" -eq 0 ] && echo "ok: erf ($n frames; tshark, editcap, validate)"
[ "$fails" -eq 0 ]
