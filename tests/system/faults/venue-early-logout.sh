#!/bin/bash
# venue-early-logout (issue 17 item 2): the algo logs out before the
# venue's --duration is over. The venue used to keep publishing into the
# closed session and exit 2 on EPIPE/ECONNRESET. The algo logs out of both
# sessions, and a run whose every session has logged out ends cleanly (a
# Logout ends its own session only, issue 29: test_venue_sessions.sh): the
# venue answers both, stops publishing, exits 0 at once (not at the end of
# its duration), and its rate is over the time the session was up
# (md_elapsed_s about the algo's 2 s, md_rate about the offer).
set -u
. scripts/netns.sh
tl_setup fault-earlylogout 198.18.22
out=$TL_OUT
summary=${FAULT_SUMMARY:-/dev/null}
addr="--md 198.18.22.2:9001 --ord 198.18.22.2:9002"
t0=$(date +%s%N)
tl_bg b bin/tapless-venue $addr --rate 2000 --duration 20 --json \
	> "$out/v.json" 2> "$out/v.log"
vp=$TL_LAST_PID
tl_exec a bin/tapless-algo $addr --duration 2 --json --connect-timeout 10 \
	> "$out/a.json" 2> "$out/a.log"
arc=$?
wait "$vp"
vrc=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "venue exit $vrc after $took ms, algo exit $arc"
sed 's/^/venue: /' "$out/v.log" | tail -5
sed 's/^/algo: /' "$out/a.log" | tail -5
jq -c '{md_published, md_rate, md_elapsed_s, md_unsent, md_end}' "$out/v.json" 2>/dev/null
line=$(jq -r '"published \(.md_published) at \(.md_rate | floor)/s over \(.md_elapsed_s // "?") s, end \(.md_end // "?")"' \
	"$out/v.json" 2>/dev/null)
echo "exit venue $vrc algo $arc after ${took} ms, ${line:-no summary}" > "$summary"
bad=0
[ "$vrc" -eq 0 ] && [ "$arc" -eq 0 ] || { echo "FAIL: exit venue $vrc algo $arc"; bad=1; }
[ "$took" -lt 10000 ] || { echo "FAIL: the venue published on for ${took} ms"; bad=1; }
jq -e '.md_end == "peer_logout" and .orders_end == "peer_logout" and .md_elapsed_s > 1 and .md_elapsed_s < 5 and
	.md_rate > 1800 and .md_rate < 2200' "$out/v.json" > /dev/null 2>&1 ||
	{ echo "FAIL: the venue's summary does not report the session's time and rate"; bad=1; }
exit $bad
