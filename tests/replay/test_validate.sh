#!/bin/sh
# tapless validate on files: the reference check against tapless sim's tap
# (a 7.5 ns clock on the algo's and the venue's links) beside host clocks
# with a known offset, rate error and noise must give back the error the
# simulator wrote (truth.json): mean within 1 ns, SD within 10 %. Then the
# inputs that must not pass: another link, no packet in common, microsecond
# stamps, bad files and options. And the run with nothing named, on this
# machine: what it could and could not check.
set -u
d=$(mktemp -d /tmp/tapless-validate.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}

# jq -e on a file, with a message on failure.
check() {
	file=$1; expr=$2; what=$3
	jq -e "$expr" "$file" > /dev/null 2>&1 || fail "$what ($(jq -c "$expr" "$file" 2>&1 | head -c 300))"
}

# --- nothing named: what this host allows ---------------------------------
$T validate --json > "$d/none.json" 2> "$d/none.err"
rc=$?
[ $rc -eq 0 ] || fail "validate with nothing named: exit $rc: $(cat "$d/none.err")"
check "$d/none.json" '[.checks[] | select(.check == "reference")][0] | .verdict == "skip" and (.why | test("no reference"))' \
	"no reference: skipped, saying so"
check "$d/none.json" '[.checks[] | select(.check == "loopback")][0] | .verdict == "skip" and (.why | test("--loopback"))' \
	"no ports: loopback skipped, saying how to name them"
check "$d/none.json" '[.checks[] | select(.check == "hwsw")][0].verdict == "skip"' "hwsw skipped"
if ls /dev/ptp[0-9]* > /dev/null 2>&1; then
	check "$d/none.json" '[.checks[] | select(.check == "phc")] | all(.verdict != "skip" or (.why | length > 0))' \
		"PHCs here: each judged or skipped with a reason"
else
	check "$d/none.json" '[.checks[] | select(.check == "phc")][0] | .verdict == "skip" and (.why | test("no PHC"))' \
		"no PHC here: skipped, saying so"
	check "$d/none.json" '.checked == 0 and .verdict == "nothing could be checked"' \
		"nothing could be checked, said so"
fi

# --- known error: a tap beside two host clocks -----------------------------
S=$d/sim
$T sim --output "$S" --rate 5000 -d 2 --seed 5 --tap algo --tap venue \
	--clock algo:offset=250,rate=300,noise=20 \
	--clock venue:offset=-40,noise=6 > /dev/null 2> "$d/sim.err" ||
	fail "sim with taps: $(cat "$d/sim.err")"

# Each host against its own tap: per direction, mean within 1 ns of the
# truth the simulator computed from the stamps it wrote, SD within 10 %.
for h in algo venue; do
	$T validate --no-phc --json --reference "$S/tap-$h.pcapng" \
		--capture "$S/$h.pcapng" --plot "$d/plots-$h" > "$d/$h.json" 2> "$d/$h.err"
	echo $? > "$d/$h.rc"
	for dir in tx rx all; do
		jq -n --slurpfile v "$d/$h.json" --slurpfile t "$S/truth.json" --arg h "$h" --arg d "$dir" '
			($v[0].reference[$d].error_ns) as $m |
			($t[0].reference[$h][$d]) as $w |
			$m.count == $w.count and
			(($m.mean - $w.mean) | fabs) <= 1 and
			(($m.sd - $w.sd) | fabs) <= 0.1 * $w.sd' > /dev/null 2>&1 ||
			fail "$h $dir: validate $(jq -c ".reference.$dir.error_ns | {count, mean, sd}" "$d/$h.json" 2>&1) vs truth $(jq -c ".reference.$h.$dir | {count, mean, sd}" "$S/truth.json" 2>&1)"
	done
	# The fitted line against the clock the simulator ran: rate to 5 ppb
	# (20 ns noise over 2 s), offset at the first packet to a few ns (the
	# floors of both clocks: 0.5 ns for the host, 3.75 for the tap).
	jq -n --slurpfile v "$d/$h.json" --slurpfile t "$S/truth.json" --arg h "$h" '
		($v[0].reference.all) as $m | ($t[0].reference[$h].fit) as $f |
		(($m.fit_rate_ppb - $f.rate_ppb) | fabs) <= 5 and
		(($m.fit_offset_ns - $f.offset_ns) | fabs) <= 8' > /dev/null 2>&1 ||
		fail "$h fit: $(jq -c '.reference.all | {fit_offset_ns, fit_rate_ppb}' "$d/$h.json") vs $(jq -c ".reference.$h.fit" "$S/truth.json")"
	check "$d/$h.json" '.reference.matched > 10000 and .reference.host_unmatched == 0' "$h: every packet matched"
	[ -s "$d/plots-$h/reference-error.png" ] && [ -s "$d/plots-$h/reference-error.svg" ] &&
		[ -s "$d/plots-$h/reference-error.gp" ] || fail "$h: no histogram drawn in $d/plots-$h"
done
# algo: 250 ns off and 300 ppb fast warns (limits 100 ns, 100 ppb), no more.
[ "$(cat "$d/algo.rc")" = 3 ] || fail "algo: exit $(cat "$d/algo.rc"), want 3 (warn): $(cat "$d/algo.err")"
check "$d/algo.json" '[.checks[] | select(.check == "reference")][0].items | any(.limit == "ref.rate_ppb" and .verdict == "warn")' \
	"algo: the rate warns"
# venue: 40 ns, 6 ns noise: passes.
[ "$(cat "$d/venue.rc")" = 0 ] || fail "venue: exit $(cat "$d/venue.rc"), want 0: $(jq -c '.checks' "$d/venue.json")"
# A limit set on the command line decides.
$T validate --no-phc --json --limit ref.mean_abs_ns=10,30 --reference "$S/tap-venue.pcapng" \
	--capture "$S/venue.pcapng" > "$d/venue-tight.json" 2>&1
rc=$?
[ $rc -eq 4 ] || fail "venue with ref.mean_abs_ns=10,30: exit $rc, want 4"

# --- another link: the algo's capture against the venue's tap -------------
$T validate --no-phc --json --reference "$S/tap-venue.pcapng" --capture "$S/algo.pcapng" \
	> "$d/cross.json" 2>&1
rc=$?
[ $rc -eq 4 ] || fail "algo against the venue's tap: exit $rc, want 4 (fail)"
check "$d/cross.json" '[.checks[] | select(.check == "reference")][0].items | any(.text | test("directions disagree"))' \
	"another link: the directions disagree, said so"

# --- no packet in common: another run's tap --------------------------------
$T sim --output "$d/other" --rate 5000 -d 1 --seed 6 --tap algo > /dev/null 2>&1 || fail "sim seed 6"
$T validate --no-phc --json --reference "$d/other/tap-algo.pcapng" --capture "$S/algo.pcapng" \
	> "$d/other.json" 2>&1
rc=$?
[ $rc -eq 4 ] || fail "no packet in common: exit $rc, want 4"
check "$d/other.json" '.reference.matched == 0 and ([.checks[] | select(.check == "reference")][0].items[0].text | test("no packet in common"))' \
	"no packet in common, said so"

# --- microsecond stamps ----------------------------------------------------
$T sim --output "$d/us" --rate 2000 -d 1 --seed 5 --tap algo --format algo=pcap-us > /dev/null 2>&1 ||
	fail "sim pcap-us"
$T validate --no-phc --json --reference "$d/us/tap-algo.pcapng" --capture "$d/us/algo.pcap" \
	> "$d/us.json" 2>&1
check "$d/us.json" '.reference.host_resolution_ns == 1000' "µs pcap: resolution 1000 ns"
check "$d/us.json" '[.checks[] | select(.check == "reference")][0].items | any(.limit == "ref.resolution_ns" and .verdict == "warn")' \
	"µs pcap: resolution warns"

# --- bad input ---------------------------------------------------------------
printf 'not a capture\n' > "$d/garbage"
$T validate --no-phc --reference "$d/garbage" --capture "$S/algo.pcapng" > /dev/null 2> "$d/err"
rc=$?
[ $rc -eq 1 ] || fail "garbage reference: exit $rc, want 1"
grep -q "$d/garbage" "$d/err" || fail "garbage reference: message does not name the file: $(cat "$d/err")"
head -c 3000 "$S/algo.pcapng" > "$d/cut.pcapng"
$T validate --no-phc --reference "$S/tap-algo.pcapng" --capture "$d/cut.pcapng" > /dev/null 2> "$d/err"
rc=$?
[ $rc -eq 1 ] || fail "cut capture: exit $rc, want 1"
grep -q "cut.pcapng.*offset" "$d/err" || fail "cut capture: no file and offset: $(cat "$d/err")"
$T validate --no-phc --reference "$S/tap-algo.pcapng" > /dev/null 2> "$d/err"
[ $? -eq 1 ] && grep -q -- "--capture" "$d/err" || fail "--reference without --capture: $(cat "$d/err")"
$T validate --limit ref.nosuch=1 > /dev/null 2> "$d/err"
[ $? -eq 1 ] && grep -q "ref.nosuch" "$d/err" || fail "unknown limit: $(cat "$d/err")"
$T validate --no-phc --loopback eth0 > /dev/null 2> "$d/err"
[ $? -eq 1 ] && grep -q "A:B" "$d/err" || fail "--loopback without B: $(cat "$d/err")"
$T validate --help > "$d/help" 2>&1
grep -q "ref.mean_abs_ns" "$d/help" || fail "--help does not list the limits"

[ $fails -eq 0 ] && echo "test_validate: ok" || echo "test_validate: $fails failed"
[ $fails -eq 0 ]
