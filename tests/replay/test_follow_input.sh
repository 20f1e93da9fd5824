#!/bin/sh
# tapless correlate --follow over bad input mid-stream. A tapless sim capture
# pair is written into one directory per host as tapless-capd writes (files
# under .part, renamed when done), slowly, in pieces cut anywhere
# (tests/system/lib/follow_feed.py), while the follower reads them:
#  (a) every piece leaves the last block cut short until the next: no
#      "damaged" event, and the intervals add up exactly to the offline
#      correlate of the finished files (follow_check.py: counts exact,
#      means within 1 ns); the venue's files start a second after the
#      algo's, and the journals are in sync throughout: no out_of_sync;
#  (b) one block in the middle of the venue's first and third files says
#      another length at its end than at its start, and newer files follow:
#      one "damaged" event per file naming it and the byte offset, and the
#      same counts and the same warning (the first damage) as the offline
#      correlate of the same damaged files.
# The follower is stopped with SIGTERM each time and must exit 0.
set -u
. tests/replay/lib.sh
replay_setup follow-input

$T sim --output "$d/sim" --seed 22 --rate 2000 --duration 3 > "$d/sim.log" 2>&1 ||
	{ echo "FAIL: sim exit $?: $(cat "$d/sim.log")"; exit 1; }
S=$d/sim

# run NAME [FEED OPTIONS FOR THE VENUE]: follow $d/NAME/{algo,venue} while
# they are fed, stop, correlate them offline; $d/NAME.{jsonl,err,off.json,
# off.err,check,venue.feed}.
run() {
	n=$1
	shift
	mkdir -p "$d/$n/algo" "$d/$n/venue"
	$T correlate --follow --json --from-oldest --stall 30 --interval 0.1 \
		-s algo="$S/algo.journal" -s venue="$S/venue.journal" -t "$S/topology" \
		algo="$d/$n/algo" venue="$d/$n/venue" > "$d/$n.jsonl" 2> "$d/$n.err" &
	fp=$!
	pids="$pids $fp"
	python3 $L/follow_feed.py --seed 1 --piece 32768 --pause 0.12 \
		"$S/algo.pcapng" "$d/$n/algo" algo > "$d/$n.algo.feed" &
	a=$!
	sleep 1
	python3 $L/follow_feed.py --seed 2 --piece 32768 --pause 0.12 "$@" \
		"$S/venue.pcapng" "$d/$n/venue" venue > "$d/$n.venue.feed" &
	v=$!
	pids="$pids $a $v"
	wait $a || fail "$n: feeding the algo's files failed"
	wait $v || fail "$n: feeding the venue's files failed"
	# It followed: most interval lines came before the stop.
	before=$(grep -c '"type":"host"' "$d/$n.jsonl")
	kill -TERM $fp
	wait $fp
	rc=$?
	[ "$rc" -eq 0 ] || fail "$n: follower exit $rc after SIGTERM: $(head -5 "$d/$n.err")"
	after=$(grep -c '"type":"host"' "$d/$n.jsonl")
	echo "$n: $before of $after host lines written before SIGTERM"
	[ "$before" -gt $((after / 2)) ] || fail "$n: the follower wrote only $before of $after host lines while the files were written"
	$T correlate --json -s algo="$S/algo.journal" -s venue="$S/venue.journal" \
		-t "$S/topology" algo="$d/$n/algo" venue="$d/$n/venue" \
		> "$d/$n.off.json" 2> "$d/$n.off.err" || fail "$n: offline correlate exit $?: $(cat "$d/$n.off.err")"
	python3 $L/follow_check.py "$d/$n.off.json" "$d/$n.jsonl" > "$d/$n.check" ||
		fail "$n: the intervals do not add up to the offline figures"
	cat "$d/$n.check"
	# Per host: packets read and messages seen by no other host.
	jq -s -c '[.[] | select(.type == "host")] | group_by(.host)
		| map({host: .[0].host, packets: (map(.packets) | add), unmatched: (map(.unmatched) | add)})' \
		"$d/$n.jsonl" > "$d/$n.hosts"
	jq -c '[.inputs[] | {host, packets, unmatched: .seen_only_here}] | sort_by(.host)' \
		"$d/$n.off.json" > "$d/$n.off.hosts"
	echo "$n: hosts follow $(cat "$d/$n.hosts") offline $(cat "$d/$n.off.hosts")"
	cmp -s "$d/$n.hosts" "$d/$n.off.hosts" || fail "$n: per-host packets or unmatched differ"
	grep '"type":"event"' "$d/$n.jsonl" | grep -v '"event":"session"' | sed "s|^|$n: |"
	for e in stalled files_missed restart; do
		grep -q "\"event\":\"$e\"" "$d/$n.jsonl" && fail "$n: a \"$e\" event"
	done
	return 0
}

# (a) Blocks cut short that complete later.
run cut
grep -q '"event":"damaged"' "$d/cut.jsonl" && fail "cut: a \"damaged\" event"
grep -q 'offset' "$d/cut.err" && fail "cut: a warning about damage: $(cat "$d/cut.err")"
jq -e '.inputs | all(.error == null)' "$d/cut.off.json" > /dev/null || fail "cut: the offline reader found damage"
# The journals say in sync from before the first packet to after the last:
# nothing is out of sync, whichever host's files come first.
grep -q '"event":"out_of_sync"' "$d/cut.jsonl" &&
	fail "cut: an out_of_sync event with in-sync journals: $(grep -m1 '"event":"out_of_sync"' "$d/cut.jsonl")"
grep '"type":"hop"' "$d/cut.jsonl" | grep -q '"flags":\[[^]]*out_of_sync' &&
	fail "cut: hop intervals flagged out_of_sync with in-sync journals: $(grep '"type":"hop"' "$d/cut.jsonl" | grep -m1 '"flags":\[[^]]*out_of_sync' | cut -c1-300)"

# (b) A corrupt block mid-file, newer files after it; twice.
run corrupt --corrupt 0 --corrupt 2
grep '^corrupt ' "$d/corrupt.venue.feed" > "$d/corrupt.want"
[ "$(grep -c . "$d/corrupt.want")" -eq 2 ] || fail "corrupt: the feeder did not say what it corrupted"
grep '"event":"damaged"' "$d/corrupt.jsonl" > "$d/corrupt.damaged"
[ "$(grep -c . "$d/corrupt.damaged")" -eq 2 ] ||
	fail "corrupt: want two \"damaged\" events: $(cat "$d/corrupt.damaged")"
k=0
while read -r _ file off; do
	k=$((k + 1))
	echo "corrupt: $file, its length at the end wrong, at byte $off"
	ev=$(sed -n "${k}p" "$d/corrupt.damaged")
	printf '%s\n' "$ev" | jq -e --arg f "$file" --arg o "offset $off:" \
		'.host == "venue" and .count == 1 and (.detail | contains($f) and contains($o))' > /dev/null ||
		fail "corrupt: \"damaged\" event $k does not name venue, $file and offset $off: $ev"
done < "$d/corrupt.want"
# The offline reader's message about the first damage, word for word (the
# follower opened the file under .part: that suffix aside).
read -r _ file off < "$d/corrupt.want"
w=$(grep "venue: .*offset $off" "$d/corrupt.err" | sed 's/\.part: offset/: offset/')
wo=$(grep "venue: .*offset $off" "$d/corrupt.off.err")
echo "corrupt: follow:  $w"
echo "corrupt: offline: $wo"
[ -n "$wo" ] && [ "$w" = "$wo" ] || fail "corrupt: the follower's warning is not the offline one"
jq -e --arg o "offset $off:" '.inputs[] | select(.host == "venue") | .error | contains($o)' \
	"$d/corrupt.off.json" > /dev/null || fail "corrupt: the offline reader does not report the damage"

[ "$fails" -eq 0 ]
