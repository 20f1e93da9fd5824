#!/bin/bash
# tapless-venue with its two sessions in two separate clients (issue 29):
# one program logs on to market data only, another to orders only
# (tests/system/lib/venue_client.py), between namespaces. A Logout ends
# its own session only:
#   1. the orders client logs out early: the md client still gets market
#      data to the end of --duration (every message the venue published,
#      no gap, and the venue published the offer less at most what its
#      250 ms grace after the deadline can leave: rate / 4), and the
#      venue's summary says which session ended how;
#   2. the md client logs out early: the orders client still gets both
#      ExecutionReports of every order it sends after that (exact counts);
#   3. both log out early: the run ends then (the venue exits and closes
#      the connections long before its --duration).
# In every case nothing (no market data, no report, no Heartbeat) follows
# a Logout the venue sent on a session: each client records what came after
# it, and the client whose messages cross the venue's Logout (a TestRequest,
# an order) is neither answered nor filled; the venue counts that order
# (orders_late).
set -u
. scripts/netns.sh
tl_setup venue-sessions 198.18.71
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
B=198.18.71.2
client="python3 tests/system/lib/venue_client.py"

# want FILE FILTER MESSAGE: jq -e on a JSON file.
want() { jq -e "$2" "$1" > /dev/null 2>&1 || fail "$3: $(jq -c . "$1" 2>&1 | head -c 700)"; }

# wait_for FILE TEXT: up to 10 s for TEXT in FILE.
wait_for() {
	for _ in $(seq 200); do
		grep -qs "$2" "$1" && return 0
		sleep 0.05
	done
	return 1
}

# venue NAME PORT ARGS...: the venue in b on PORT (md) and PORT+1 (orders).
venue() {
	local name=$1 port=$2
	shift 2
	tl_bg b bin/tapless-venue --md $B:$port --ord $B:$((port + 1)) --json \
		--log-level info "$@" > "$out/$name.venue.json" 2> "$out/$name.venue.log"
	VENUE=$TL_LAST_PID
}

# client NAME ROLE PORT ARGS...: a client in a, in the background; its
# JSON in $out/NAME.ROLE.json, its pid in CLIENT[ROLE].
declare -A CLIENT
client() {
	local name=$1 role=$2 port=$3
	shift 3
	tl_bg a $client --connect $B:$port --role "$role" "$@" \
		> "$out/$name.$role.json" 2> "$out/$name.$role.err"
	CLIENT[$role]=$TL_LAST_PID
}

# finish NAME: wait for the clients and the venue; the venue must exit 0.
finish() {
	wait "${CLIENT[md]}" || fail "$1: md client exit $?: $(cat "$out/$1.md.err")"
	wait "${CLIENT[orders]}" || fail "$1: orders client exit $?: $(cat "$out/$1.orders.err")"
	wait "$VENUE" || fail "$1: venue exit $?: $(tail -5 "$out/$1.venue.log")"
	echo "$1: venue: $(jq -c '{md_published, md_offered, md_end, orders_received, fills, orders_late, orders_end}' "$out/$1.venue.json")"
	for r in md orders; do
		echo "$1: $r client: $(jq -c '{md, orders_sent, orders_filled, reports_total, late_sent, venue_logout, after_venue_logout, eof}' "$out/$1.$r.json")"
		# Nothing after the venue's Logout, on any session, in any case.
		want "$out/$1.$r.json" '.venue_logout != null and .after_venue_logout == [] and .error == null and .seq_gaps == 0' \
			"$1: $r client: a message after the venue's Logout (or none, or a gap)"
	done
}

# 1. The orders client logs out 0.5 s in; market data goes on to the end.
rate=2000 secs=3
venue orders-leave 9001 --rate $rate --duration $secs
client orders-leave md 9001 --cross-logout
wait_for "$out/orders-leave.venue.log" "md session: Logon" ||
	fail "orders-leave: md client did not log on: $(cat "$out/orders-leave.venue.log")"
client orders-leave orders 9002 --orders 20 --order-rate 100 --order-delay 0.1 \
	--logout-after 0.5
finish orders-leave
v=$out/orders-leave.venue.json
# The venue publishes late for at most 250 ms past the end of --duration;
# a venue still behind then leaves the rest unsent. Allow that much (rate/4
# = 500 of 6000); the old venue stopped at the orders Logout, 5/6 short.
want "$v" "(.md_end == \"done\" or .md_end == \"deadline\") and .md_published >= .md_offered - $rate / 4 and .md_offered == $((rate * secs))" \
	"orders-leave: market data stopped before the end of --duration"
jq -s -e '.[0].md == .[1].md_published' "$out/orders-leave.md.json" "$v" > /dev/null ||
	fail "orders-leave: md client got $(jq .md "$out/orders-leave.md.json") of $(jq .md_published "$v") published"
want "$out/orders-leave.md.json" '.venue_logout == "initiated" and .venue_logout_text == "end of the run" and .eof' \
	"orders-leave: md session not ended by the venue at the end of the run"
want "$out/orders-leave.orders.json" '.orders_sent == 20 and .orders_filled == 20 and .reports_total == 40 and .venue_logout == "reply"' \
	"orders-leave: orders client: every order New and Filled, then its Logout answered"
want "$v" '.orders_received == 20 and .fills == 20 and .rejects == 0 and .orders_late == 0 and .orders_end == "peer_logout"' \
	"orders-leave: venue's order counts and end"
want "$v" '.md.sent.logout == 1 and .orders.sent.logout == 1 and .md.sent.heartbeat == 0' \
	"orders-leave: venue sent one Logout per session and no Heartbeat"

# 2. The md client logs out 0.5 s in; every order is filled to the end.
rate=1000 secs=3 n=200
venue md-leave 9011 --rate $rate --duration $secs
client md-leave orders 9012 --orders $n --order-rate 100 --order-delay 0.1 --cross-logout
wait_for "$out/md-leave.venue.log" "orders session: Logon" ||
	fail "md-leave: orders client did not log on: $(cat "$out/md-leave.venue.log")"
client md-leave md 9011 --logout-after 0.5
finish md-leave
v=$out/md-leave.venue.json
want "$out/md-leave.orders.json" ".orders_sent == $n and .orders_filled == $n and .reports_total == 2 * $n and .late_sent == 1" \
	"md-leave: orders client: want $n orders, each New and Filled, and one order after the venue's Logout"
want "$out/md-leave.orders.json" '.venue_logout == "initiated" and .venue_logout_text == "end of the run" and .eof' \
	"md-leave: order session not ended by the venue at the end of the run"
want "$v" ".orders_received == $n + 1 and .fills == $n and .rejects == 0 and .orders_late == 1 and .orders_end == \"done\"" \
	"md-leave: venue's order counts (the late one unanswered) and end"
want "$v" '.md_end == "peer_logout" and .md_published < .md_offered' \
	"md-leave: venue's market data end"
jq -s -e '.[0].md == .[1].md_published' "$out/md-leave.md.json" "$v" > /dev/null ||
	fail "md-leave: md client got $(jq .md "$out/md-leave.md.json") of $(jq .md_published "$v") published"
want "$out/md-leave.md.json" '.venue_logout == "reply"' "md-leave: md client's Logout not answered"
want "$v" '.orders.sent.execution_report == 2 * .fills and .orders.sent.heartbeat == 0' \
	"md-leave: venue sent a report (or a Heartbeat) it should not have"

# 3. Both log out early: the run ends then, though --duration is 60 s (the
# clients wait 10 s at most for the venue to close their connections).
venue both-leave 9021 --rate 1000 --duration 60
client both-leave md 9021 --logout-after 0.5 --timeout 10
wait_for "$out/both-leave.venue.log" "md session: Logon"
client both-leave orders 9022 --orders 10 --logout-after 1 --timeout 10
finish both-leave
v=$out/both-leave.venue.json
want "$v" '.md_end == "peer_logout" and .orders_end == "peer_logout" and .fills == 10' \
	"both-leave: venue's end reasons"
want "$out/both-leave.md.json" '.venue_logout == "reply" and .eof' \
	"both-leave: the venue did not end the run when both sessions had logged out"
want "$out/both-leave.orders.json" '.venue_logout == "reply" and .eof and .orders_filled == 10' \
	"both-leave: the venue did not end the run when both sessions had logged out"
grep -q "every session has logged out" "$out/both-leave.venue.log" ||
	fail "both-leave: no log line: $(tail -3 "$out/both-leave.venue.log")"

[ "$fails" -eq 0 ] && echo "ok: venue sessions"
[ "$fails" -eq 0 ]
