#!/bin/sh
# Empty and degenerate sets through correlate and report: a run with no
# trades (tapless sim --rate 300 --duration 1: market data only), a single
# host, a host whose capture holds no packet, captures with no packet at
# all, and a report on a run without trades. Every printer (text, JSON,
# CSV, samples, by rate) is driven over the empty sets; under the sanitizer
# build (TAPLESS=build/san/bin/tapless, as make check runs it) an empty set
# handed to memcpy or qsort aborts. Exit status must be 0 or 1, never a
# sanitizer's report.
set -u
d=$(mktemp -d /tmp/tapless-empty.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}

# run NAME WANT CMD...: run CMD, stdout to $d/NAME.out, stderr to
# $d/NAME.err; exit status must be WANT and stderr free of sanitizer
# reports.
run() {
	n=$1; want=$2; shift 2
	"$@" > "$d/$n.out" 2> "$d/$n.err"
	rc=$?
	if grep -q "runtime error\|Sanitizer" "$d/$n.err"; then
		fail "$n: sanitizer: $(grep -m3 "runtime error\|Sanitizer\|#[0-3] " "$d/$n.err")"
	elif [ "$rc" -ne "$want" ]; then
		fail "$n: exit $rc, want $want: $(head -5 "$d/$n.err")"
	fi
}

$T sim --output "$d/e" --rate 300 --duration 1 > "$d/sim.log" 2>&1 || fail "sim: $(cat "$d/sim.log")"
grep -q " 0 trades" "$d/sim.log" || fail "sim wrote trades: $(cat "$d/sim.log")"
E=$d/e
J="--sync algo=$E/algo.journal --sync venue=$E/venue.journal"

# 1. No trades: hops measured, no transaction, exit 0, in every format.
# shellcheck disable=SC2086
run json 0 $T correlate --json $J --topology "$E/topology" algo="$E/algo.pcapng" venue="$E/venue.pcapng"
jq -e '.transactions == [] and ([.hops[] | select(.flow == "all")] | length == 2)' "$d/json.out" > /dev/null ||
	fail "no trades: want no transactions and two hops: $(head -c 300 "$d/json.out")"
# shellcheck disable=SC2086
run text 0 $T correlate $J --topology "$E/topology" algo="$E/algo.pcapng" venue="$E/venue.pcapng"
# shellcheck disable=SC2086
run csv 0 $T correlate --csv $J algo="$E/algo.pcapng" venue="$E/venue.pcapng"
# Without a topology: no switch either.
run notopo 0 $T correlate --json algo="$E/algo.pcapng" venue="$E/venue.pcapng"
jq -e '.switches == [] and .transactions == []' "$d/notopo.out" > /dev/null || fail "no topology: switches or transactions found"
# shellcheck disable=SC2086
run samples 0 $T correlate --json --by-rate --samples "$d/samples.txt" $J --topology "$E/topology" \
	--baseline algo="$E/algo.pcapng" --baseline venue="$E/venue.pcapng" \
	algo="$E/algo.pcapng" venue="$E/venue.pcapng"
[ -s "$d/samples.txt" ] || fail "no trades: no samples file"

# 2. A single host without trades: nothing measurable, exit 1, said.
run single 1 $T correlate --json --topology "$E/topology" algo="$E/algo.pcapng"
grep -q "nothing could be measured" "$d/single.err" || fail "single host: $(cat "$d/single.err")"

# 3. A host whose capture starts after the run ends: no packets there.
$T sim --output "$d/late" --rate 300 --duration 1 --start-late algo=2 > /dev/null 2>&1 || fail "sim late"
run late 1 $T correlate --json --topology "$d/late/topology" algo="$d/late/algo.pcapng" venue="$d/late/venue.pcapng"
grep -q "algo: no packets" "$d/late.err" || fail "late capture: $(cat "$d/late.err")"

# 4. Captures without a single packet.
build/tools/capgen "$d/zero.pcapng" 0 > /dev/null 2>&1 || fail "capgen 0"
run zero 1 $T correlate --json x="$d/zero.pcapng" y="$d/zero.pcapng"
run zerotext 1 $T correlate --csv x="$d/zero.pcapng"

# 5. tapless report on a run without trades: no BUY or SELL figures, no
# crash.
R=$d/run
mkdir -p "$R/rate-300"
cp "$d/samples.txt" "$R/rate-300/samples.txt"
cp "$d/samples.out" "$R/rate-300/correlate.json"
printf 'id empty-1\nrates 300\nduration 1\nhosts venue,algo\n' > "$R/lab.conf"
run report 0 $T report --no-plots "$R"
[ -s "$R/report/tables.txt" ] || fail "report: no tables"

[ "$fails" -eq 0 ] && echo "empty: all checks passed"
[ "$fails" -eq 0 ]
