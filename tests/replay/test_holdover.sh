#!/bin/sh
# Holdover through the correlator and what reads its outputs. A tapless sim
# pair, its venue journal edited (holdover.py journal) as tapless-syncd
# writes an outage: a rules event (drift_ppb), then from 2 s after the
# journal's first sample no fresh measurement: samples in holdover (sync h)
# whose bound is the last fresh one grown by drift_ppb for the time since,
# until that grown bound passes the threshold and the journal says out of
# sync (sync 0), in sync again 1.5 s after the outage began.
#  (a) correlate --samples: every hop sample's sync word and bound are the
#      ones the edited journals give at its two stamps (holdover.py check,
#      its own reading of tapless-correlate(8)); samples are in holdover
#      and out of sync both; every holdover bound is above every in-sync
#      one, and grows with the venue's stamp; none in holdover at a stamp
#      the journal says out of sync for;
#  (b) the JSON's per-hop holdover and out-of-sync counts are the samples
#      file's, text says "holdover: N", and the inputs count the journal's
#      holdover samples;
#  (c) tapless status JOURNAL counts the holdover samples apart from those
#      in sync;
#  (d) correlate --follow: a holdover event for the venue, intervals
#      flagged holdover, and hop lines' holdover counts adding up to the
#      offline count.
set -u
. tests/replay/lib.sh
replay_setup holdover
R=tests/replay
DRIFT=20000
THRESHOLD=20000

$T sim --output "$d/sim" --seed 31 --rate 2000 --duration 4 --journal-interval 0.1 \
	> "$d/sim.log" 2>&1 || { echo "FAIL: sim exit $?: $(cat "$d/sim.log")"; exit 1; }
S=$d/sim
python3 $R/holdover.py journal --drift $DRIFT --threshold $THRESHOLD \
	--from 2 --to 3.5 "$S/venue.journal" > "$d/venue.journal" ||
	{ echo "FAIL: holdover.py journal"; exit 1; }
hlines=$(awk '$2 == "sample" && $11 == "h"' "$d/venue.journal" | wc -l)
olines=$(awk '$2 == "sample" && $11 == "0"' "$d/venue.journal" | wc -l)
ilines=$(awk '$2 == "sample" && $11 == "1"' "$d/venue.journal" | wc -l)
[ "$hlines" -gt 5 ] && [ "$olines" -gt 0 ] ||
	{ echo "FAIL: the edited journal has $hlines holdover and $olines out-of-sync samples"; exit 1; }

J="-s algo=$S/algo.journal -s venue=$d/venue.journal -t $S/topology"
F="algo=$S/algo.pcapng venue=$S/venue.pcapng"

# (a), (b)
# shellcheck disable=SC2086
$T correlate --json --samples "$d/samples" $J $F > "$d/c.json" 2> "$d/c.err" ||
	fail "correlate exit $?: $(cat "$d/c.err")"
python3 $R/holdover.py check "$S/algo.journal" "$d/venue.journal" \
	"$d/c.json" "$d/samples" > "$d/check" 2>&1 ||
	fail "samples file against the journals:
$(head -20 "$d/check")"
# shellcheck disable=SC2086
$T correlate $J $F > "$d/c.txt" 2>&1 || fail "text output exit $?"
n=$(jq '.hops[] | select(.from == "venue" and .to == "algo" and .flow == "all" and .rate == null) | .holdover' "$d/c.json")
[ "${n:-0}" -gt 0 ] || fail "no venue->algo sample in holdover: $n"
grep -q "holdover: $n" "$d/c.txt" || fail "text output lacks 'holdover: $n': $(grep -m3 'out of sync' "$d/c.txt")"
jq -e --argjson h "$hlines" '.inputs[] | select(.host == "venue") | .journal.holdover_samples == $h' \
	"$d/c.json" > /dev/null || fail "inputs: venue's journal holdover_samples is not $hlines"
jq -e '.inputs[] | select(.host == "algo") | .journal.holdover_samples == 0' \
	"$d/c.json" > /dev/null || fail "inputs: algo's journal has holdover samples"

# (c)
$T status --json "$d/venue.journal" > "$d/status.json" 2> "$d/status.err" ||
	fail "status exit $?: $(cat "$d/status.err")"
jq -e --argjson h "$hlines" --argjson i "$ilines" \
	'.journals[0].clocks[0].windows.all | .holdover == $h and .in_sync == $i and .samples == $h + $i + '"$olines" \
	"$d/status.json" > /dev/null ||
	fail "status: want $ilines in sync, $hlines in holdover: $(jq -c '.journals[0].clocks[0].windows.all | {samples, in_sync, holdover}' "$d/status.json")"
$T status "$d/venue.journal" 2>&1 | grep -q ", $hlines in holdover" ||
	fail "status text lacks ', $hlines in holdover'"

# (d) Following the files as capd writes them, in pieces: the journal's
# word is taken at the watermark as the data comes.
mkdir -p "$d/f/algo" "$d/f/venue"
# shellcheck disable=SC2086
$T correlate --follow --json --from-oldest --stall 30 --interval 0.1 $J \
	algo="$d/f/algo" venue="$d/f/venue" > "$d/f.jsonl" 2> "$d/f.err" &
fp=$!
pids="$pids $fp"
python3 $L/follow_feed.py --seed 1 --piece 32768 --pause 0.05 \
	"$S/algo.pcapng" "$d/f/algo" algo > "$d/f.algo.feed" &
a=$!
python3 $L/follow_feed.py --seed 2 --piece 32768 --pause 0.05 \
	"$S/venue.pcapng" "$d/f/venue" venue > "$d/f.venue.feed" &
v=$!
pids="$pids $a $v"
wait $a || fail "follow: feeding the algo's files failed"
wait $v || fail "follow: feeding the venue's files failed"
want=$(jq '[.hops[] | select(.flow == "all" and .rate == null) | .latency_ns.count] | add' "$d/c.json")
i=0
while [ $i -lt 50 ]; do
	got=$(jq -s '[.[] | select(.type == "hop") | .latency_ns.count] | add // 0' "$d/f.jsonl" 2>/dev/null)
	[ "${got:-0}" -ge "$want" ] && break
	sleep 0.1
	i=$((i + 1))
done
kill -TERM $fp
wait $fp || fail "follow: exit $? on SIGTERM: $(tail -3 "$d/f.err")"
pids=""
jq -e -s 'any(.[]; .type == "event" and .event == "holdover" and .host == "venue")' \
	"$d/f.jsonl" > /dev/null || fail "follow: no holdover event for venue"
jq -e -s 'any(.[]; .type == "event" and .event == "in_sync" and .host == "venue")' \
	"$d/f.jsonl" > /dev/null || fail "follow: no in_sync event for venue"
jq -e -s 'any(.[]; .type == "hop" and (.flags | index("holdover")))' \
	"$d/f.jsonl" > /dev/null || fail "follow: no hop interval flagged holdover"
off=$(jq '[.hops[] | select(.flow == "all" and .rate == null) | .holdover] | add' "$d/c.json")
live=$(jq -s '[.[] | select(.type == "hop") | .holdover] | add' "$d/f.jsonl")
[ "$live" = "$off" ] || fail "follow: hop intervals count $live in holdover, offline $off"

[ "$fails" -eq 0 ] || exit 1
echo "holdover: ok ($hlines holdover, $olines out-of-sync journal samples; $n venue->algo samples in holdover)"
