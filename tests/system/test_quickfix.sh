#!/bin/bash
# A real FIX engine, unmodified, stamped by tapless (issues 19 and 20): a
# QuickFIX FIX 4.4 initiator (build/tools/qf-initiator, the trader, in
# namespace a) and acceptor (qf-acceptor, the venue, in b), tests/qf, each
# host captured by its own tapless-capd (-i IFACE -w DIR --tx-socket PATH).
# The trader sends QF_ORDERS BUYs at QF_RATE a second, a SELL on each fill;
# the venue answers every order with New and Filled ExecutionReports.
#
# Each way of running the engines is a MODE of run_engines:
#   bare    the engines alone: the baseline. Their summaries say every
#           order went out and was filled, no reject (35=3, 35=j) either
#           way, a clean Logout; both FileLogs hold the same messages; and
#           tapless correlate over the two captures matches every FIX
#           message between the hosts (samples per hop = messages sent that
#           way, as the FileLogs count them), finds a fill_to_sell per
#           SELL and an order_to_fill per order, and no sender stamp.
#   shim    each engine under bin/tapless-stamp --tx-socket (its host's
#           capd): everything the baseline asserts, the same messages of
#           each type as the baseline, and in each host's capture a sender
#           TX stamp (a frame on a sender-stamped interface) for >= 99.9 %
#           of that host's outbound FIX data segments, which correlate uses
#           (sender_stamped; tap_tx_skipped, the packet socket's copies it
#           left out). The figures are printed. Skipped, saying so, while
#           tapless-stamp is not built.
#   shim-only  shim with each capd's --sender-copy-only (issue 32): the
#           same assertions as shim, but a segment with a sender TX stamp
#           is in the file once, as the sender's copy (no packet-socket
#           copy of it is left, capd's account of those left out agrees),
#           and correlate has no packet-socket copy to skip yet matches
#           every message and transaction as in the other runs.
#   cgroup  each engine in a cgroup of its own (tl_cgroup), connecting
#           after its host's capd attached with --stamp-cgroup (issue 20):
#           the same assertions as shim, each capd armed the one session
#           and lost no stamp, and once the capds stopped nothing of ours
#           is attached (bpftool cgroup tree). Skipped, saying why, where
#           the host cannot stamp cgroups (tapless ifinfo).
# Also: the data dictionary is in force (a NewOrderSingle without OrdType
# is rejected, 35=3 371=40, and the acceptor's exit says so), and a venue
# killed mid-run makes the trader fail (no clean Logout, exit 1).
set -u
. scripts/netns.sh
tl_setup quickfix 198.18.70
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
N=${QF_ORDERS:-3000}
RATE=${QF_RATE:-1000}
PORT=9441
A=198.18.70.1 B=198.18.70.2
init=build/tools/qf-initiator acc=build/tools/qf-acceptor
dict=$PWD/tests/qf/FIX44.xml
# Frames tapless-capd wrote as their sender handed them over: the note
# on their interface (PCAPNG_NOTE_SENDER, src/files/pcapng.h).
SENDER='frame.interface_description contains "sending program"'

for p in "$init" "$acc" bin/tapless-capd bin/tapless; do
	[ -x "$p" ] || { echo "FAIL: quickfix: $p is not built (make)"; exit 1; }
done

SESSION_DAY=$(printf '%02d:00:00' $(( (10#$(date -u +%H) + 12) % 24 )))

# settings ROLE FILE: the QuickFIX settings of the trader (initiator) or
# the venue (acceptor). Validation against the dictionary, Nagle off.
settings() {
	{
		echo "[DEFAULT]"
		echo "ConnectionType=$1"
		echo "BeginString=FIX.4.4"
		# A 24-hour session day whose end is 12 hours away: one that
		# ended at 00:00 UTC logged both engines out mid-run whenever
		# the test ran across midnight (this QuickFIX has no
		# NonStopSession).
		echo "StartTime=$SESSION_DAY"
		echo "EndTime=$SESSION_DAY"
		echo "HeartBtInt=60"
		echo "ResetOnLogon=Y"
		echo "SocketNodelay=Y"
		echo "UseDataDictionary=Y"
		echo "DataDictionary=$dict"
		if [ "$1" = initiator ]; then
			echo "SocketConnectHost=$B"
			echo "SocketConnectPort=$PORT"
			echo "ReconnectInterval=1"
			echo "[SESSION]"
			echo "SenderCompID=TRADER"
			echo "TargetCompID=VENUE"
		else
			echo "SocketAcceptPort=$PORT"
			echo "SocketReuseAddress=Y"
			echo "[SESSION]"
			echo "SenderCompID=VENUE"
			echo "TargetCompID=TRADER"
		fi
	} > "$2"
}
settings initiator "$out/trader.cfg"
settings acceptor "$out/venue.cfg"

# ---- The ways of running the engines ----

# mode_unavailable MODE: why MODE cannot run here (nothing when it can).
mode_unavailable() {
	case $1 in
	bare) ;;
	shim|shim-only) [ -x bin/tapless-stamp ] || echo "bin/tapless-stamp is not built" ;;
	cgroup)
		bin/tapless ifinfo -j lo 2>/dev/null | jq -r \
			'.kernel | if .cgroup_stamping then empty else .cgroup_stamping_why end'
		grep -q " cgroup2 " /proc/mounts || echo "no cgroup v2 hierarchy mounted" ;;
	esac
}

# mode_capd MODE HOST: capd's options beyond capturing HOST's interface,
# in CAPD_ARGS.
# cgroup: HOST's engine gets a cgroup here. capd and the engine run under
# ip netns exec, whose fresh /sys hides the cgroup v2 mount below
# /sys/fs/cgroup: they reach the cgroup through this script's root,
# /proc/$$/root.
mode_capd() {
	case $1 in
	cgroup)
		tl_cgroup "qf-$2" || fail "cgroup: cannot create a cgroup for $2"
		CG[$2]=/proc/$$/root$TL_CGROUP
		CAPD_ARGS=(--stamp-cgroup "${CG[$2]}" --stamp-ports "$PORT") ;;
	shim-only) CAPD_ARGS=(--tx-socket "$out/$1/$2.sock" --sender-copy-only) ;;
	*) CAPD_ARGS=(--tx-socket "$out/$1/$2.sock") ;;
	esac
}
declare -A CG

# mode_bg MODE HOST capd|engine CMD...: start CMD in HOST's namespace the
# MODE's way, in the background; its pid in TL_LAST_PID.
mode_bg() {
	local m=$1 h=$2
	case $m/$3 in
	shim/engine|shim-only/engine)
		shift 3
		tl_bg "$h" bin/tapless-stamp --tx-socket "$out/$m/$h.sock" -- "$@" ;;
	cgroup/engine)
		shift 3
		tl_bg "$h" bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' \
			"${CG[$h]}" "$@" ;;
	*)
		shift 3
		tl_bg "$h" "$@" ;;
	esac
}

# wait_for FILE TEXT: up to 10 s for TEXT in FILE.
wait_for() {
	for _ in $(seq 200); do
		grep -qs "$2" "$1" && return 0
		sleep 0.05
	done
	return 1
}

# capd_start MODE HOST IFACE: HOST's capd into $out/MODE/HOST.cap.
declare -A CAPD
capd_start() {
	mkdir -p "$out/$1/$2.cap"
	mode_capd "$1" "$2"
	mode_bg "$1" "$2" capd bin/tapless-capd -i "$3" -w "$out/$1/$2.cap" \
		-H "$2" "${CAPD_ARGS[@]}" "tcp port $PORT" 2> "$out/$1/$2.capd.log"
	CAPD[$2]=$TL_LAST_PID
	wait_for "$out/$1/$2.capd.log" "capturing on" ||
		fail "$1: capd on $2 did not start: $(cat "$out/$1/$2.capd.log")"
}

# capd_stop MODE HOST
capd_stop() {
	kill -TERM "${CAPD[$2]}"
	wait "${CAPD[$2]}" || fail "$1: capd on $2 exit $?: $(tail -5 "$out/$1/$2.capd.log")"
}

# acceptor_start MODE: the venue in b, up to its listening line.
acceptor_start() {
	local d=$out/$1
	mkdir -p "$d/venue"
	mode_bg "$1" b engine "$acc" --settings "$out/venue.cfg" \
		--log-dir "$d/venue" --orders "$N" --timeout 120 \
		> "$d/venue.out" 2> "$d/venue.err"
	VENUE=$TL_LAST_PID
	wait_for "$d/venue.err" "qf-acceptor: listening" ||
		fail "$1: the acceptor did not start: $(cat "$d/venue.err")"
}

# run_engines MODE: capd on each host, the venue, then the trader to the
# end of its session; the exit statuses in $out/MODE/*.rc.
run_engines() {
	local d=$out/$1
	mkdir -p "$d/trader"
	capd_start "$1" a "$TL_IF_A"
	capd_start "$1" b "$TL_IF_B"
	acceptor_start "$1"
	mode_bg "$1" a engine "$init" --settings "$out/trader.cfg" \
		--log-dir "$d/trader" --orders "$N" --rate "$RATE" --timeout 120 \
		> "$d/trader.out" 2> "$d/trader.err"
	wait "$TL_LAST_PID"
	echo $? > "$d/trader.rc"
	wait "$VENUE"
	echo $? > "$d/venue.rc"
	# Let the last frames (the Logouts, the FINs) reach the files.
	sleep 0.3
	capd_stop "$1" a
	capd_stop "$1" b
}

# ---- What every run must show ----

# summary MODE ROLE KEY: a value of an engine's summary line.
summary() {
	sed -n "s/.* $3=\([^ ]*\).*/\1/p" "$out/$1/$2.out"
}

# msgtypes MODE ROLE: "SENDER MSGTYPE COUNT" of every message in the
# engine's FileLog, both ways.
msgtypes() {
	awk -F'\001' '{ s = t = ""
		for (i = 1; i <= NF; i++)
			if ($i ~ /^35=/) t = substr($i, 4)
			else if ($i ~ /^49=/) s = substr($i, 4)
		if (t != "") print s, t }' "$out/$1/$2"/FIX.4.4-*.messages.current.log |
		sort | uniq -c | awk '{ print $2, $3, $1 }'
}

# sent MODE SENDER: messages SENDER sent, by the trader's FileLog.
sent() {
	awk -v s="$2" '$1 == s { n += $3 } END { print n + 0 }' "$out/$1/types"
}

check_run() {
	local d=$out/$1 m=$1 c
	# A failed engine's own account, and the last of its QuickFIX event
	# log (a socket error, a Logout's reason).
	for r in trader venue; do
		[ "$(cat "$d/$r.rc")" = 0 ] ||
			fail "$m: $r exit $(cat "$d/$r.rc"): $(cat "$d/$r.out" "$d/$r.err")" \
				"$(tail -n 3 "$d/$r"/FIX.4.4-*.event.current.log 2>/dev/null)"
	done
	[ "$(summary "$m" trader orders_sent)" = $((2 * N)) ] &&
		[ "$(summary "$m" trader new)" = $((2 * N)) ] &&
		[ "$(summary "$m" trader filled)" = $((2 * N)) ] ||
		fail "$m: trader: want $((2 * N)) orders, as many New and Filled: $(cat "$d/trader.out")"
	[ "$(summary "$m" venue orders_received)" = $((2 * N)) ] &&
		[ "$(summary "$m" venue exec_reports_sent)" = $((4 * N)) ] ||
		fail "$m: venue: want $((2 * N)) orders and $((4 * N)) reports: $(cat "$d/venue.out")"
	for r in trader venue; do
		[ "$(summary "$m" $r rejects_in)/$(summary "$m" $r rejects_out)" = 0/0 ] ||
			fail "$m: $r saw rejects: $(cat "$d/$r.out")"
		[ "$(summary "$m" $r logout_clean)" = yes ] ||
			fail "$m: $r: Logout not clean: $(cat "$d/$r.out")"
	done
	# The two FileLogs agree, and hold what the workload sends.
	msgtypes "$m" trader > "$d/types"
	msgtypes "$m" venue > "$d/types.venue"
	cmp -s "$d/types" "$d/types.venue" ||
		fail "$m: the engines' logs differ: $(diff "$d/types" "$d/types.venue" | head -6 | tr '\n' ' ')"
	grep -qx "TRADER D $((2 * N))" "$d/types" && grep -qx "VENUE 8 $((4 * N))" "$d/types" &&
		! grep -q "^[A-Z]* [3j] " "$d/types" ||
		fail "$m: FileLog message counts: $(tr '\n' ' ' < "$d/types")"
	echo "$m: messages (sender type count): $(tr '\n' ' ' < "$d/types")"
	# The correlator matches every message between the two hosts.
	c=$d/correlate.json
	bin/tapless correlate --json "a@$A=$d/a.cap" "b@$B=$d/b.cap" > "$c" \
		2> "$d/correlate.err" || fail "$m: correlate exit $?: $(cat "$d/correlate.err")"
	local ab ba
	ab=$(jq '[.hops[] | select(.from == "a" and .to == "b" and .flow == "all") | .latency_ns.count] | add // 0' "$c")
	ba=$(jq '[.hops[] | select(.from == "b" and .to == "a" and .flow == "all") | .latency_ns.count] | add // 0' "$c")
	[ "$ab" = "$(sent "$m" TRADER)" ] && [ "$ba" = "$(sent "$m" VENUE)" ] ||
		fail "$m: correlate samples a->b $ab, b->a $ba; sent $(sent "$m" TRADER), $(sent "$m" VENUE)"
	jq -e '.unmatched.seen_at_one_host == 0' "$c" > /dev/null ||
		fail "$m: correlate: messages seen at one host: $(jq -c .unmatched "$c")"
	jq -e --argjson n "$N" '[.transactions[] | select(.host == "a") | {(.name): .count}] | add |
		.fill_to_sell == $n and .order_to_fill == 2 * $n' "$c" > /dev/null ||
		fail "$m: correlate transactions at a: $(jq -c '[.transactions[] | {name, host, count}]' "$c")"
	# App to wire of an unmodified engine: QuickFIX writes SendingTime
	# (52) to the ms, its default, and the trader's orders carry a
	# TransactTime (60) to the us: the finer is taken, so every order
	# is there from 60 with a 1 us resolution in its bound, the Logon
	# from 52 with 1 ms. One clock for the engine and the stamps: the
	# delay, cut times and all, is not negative.
	jq -e --argjson n "$N" '[.app_to_wire[] | select(.host == "a" and .msg_type == "D")] |
		length > 0 and (map(.messages) | add) == 2 * $n and
		all(.tag == 60 and .resolution_ns == 1000 and .latency_ns.min >= 0 and
		    .sync_error_bound_ns >= 1000)' "$c" > /dev/null &&
	jq -e '[.app_to_wire[] | select(.host == "a" and .msg_type == "A")] |
		length == 1 and all(.tag == 52 and .resolution_ns == 1000000 and
		.latency_ns.min >= 0 and .sync_error_bound_ns >= 1000000)' "$c" > /dev/null ||
		fail "$m: correlate: app to wire of QuickFIX's orders: $(jq -c '[.app_to_wire[] | select(.host == "a")]' "$c")"
	echo "$m: app to wire of QuickFIX's orders: $(jq -c '[.app_to_wire[] | select(.host == "a" and .msg_type == "D") | {tag, resolution_ns, n: .latency_ns.count, p50: .latency_ns.p50, max: .latency_ns.max, bound: .sync_error_bound_ns}]' "$c")"
	echo "$m: correlate: a->b $ab samples, b->a $ba;" \
		"$(jq -r '[.inputs[] | "\(.host): sender_stamped \(.sender_stamped), tap_tx_skipped \(.tap_tx_skipped)"] | join("; ")' "$c")"
	# Bare engines hand over nothing: every stamp is the packet socket's.
	[ "$m" != bare ] || jq -e '[.inputs[] | .sender_stamped == 0 and .tap_tx_skipped == 0] | all' "$c" > /dev/null ||
		fail "$m: correlate found sender stamps: $(jq -c '[.inputs[] | {host, sender_stamped, tap_tx_skipped}]' "$c")"
}

# coverage MODE HOST: HOST's outbound FIX data segments (the
# packet socket's, by port, sequence and length) and how many of them have
# a copy stamped by the sender. Prints "TOTAL STAMPED".
coverage() {
	local f
	for f in "$out/$1/$2.cap"/*.pcapng; do
		tshark -r "$f" -Y "tcp.len > 0 && frame.packet_flags_direction == 2 && !($SENDER)" \
			-T fields -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.len 2>/dev/null
	done | sort -u > "$out/$1/$2.out.keys"
	for f in "$out/$1/$2.cap"/*.pcapng; do
		tshark -r "$f" -Y "tcp.len > 0 && $SENDER" \
			-T fields -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.len 2>/dev/null
	done | sort -u > "$out/$1/$2.sender.keys"
	echo "$(wc -l < "$out/$1/$2.out.keys")" \
		"$(comm -12 "$out/$1/$2.out.keys" "$out/$1/$2.sender.keys" | wc -l)"
}

# check_stamped MODE: the engines' TX stamps reached the captures and the
# correlator, and the engines did exactly what they did bare.
check_stamped() {
	local m=$1 d=$out/$1 h total stamped sstamped skipped want
	cmp -s "$out/bare/types" "$d/types" ||
		fail "$m: messages differ from the bare run: $(diff "$out/bare/types" "$d/types" | tr '\n' ' ')"
	for h in a b; do
		read -r total stamped < <(coverage "$m" $h)
		read -r sstamped skipped < <(jq -r --arg h $h '.inputs[] | select(.host == $h) |
			"\(.sender_stamped) \(.tap_tx_skipped)"' "$d/correlate.json")
		echo "$m: $h: $stamped of $total outbound FIX data segments have a sender TX stamp" \
			"($(awk -v s="$stamped" -v t="$total" 'BEGIN { printf "%.3f", t ? 100 * s / t : 0 }') %);" \
			"correlate: sender_stamped $sstamped, tap_tx_skipped $skipped"
		[ "$total" -gt 0 ] && [ $((stamped * 1000)) -ge $((total * 999)) ] ||
			fail "$m: $h: sender TX stamps for $stamped of $total outbound segments, want >= 99.9 %"
		# correlate takes every sender-stamped frame, and from a flow's
		# first one on leaves the packet socket's copies out: all those
		# of the stamped frames but the first.
		[ "$sstamped" -ge "$stamped" ] ||
			fail "$m: $h: correlate sender_stamped $sstamped, want >= $stamped"
		want=$((stamped > 1 ? stamped - 1 : 1))
		[ "$skipped" -ge "$want" ] ||
			fail "$m: $h: correlate tap_tx_skipped $skipped, want >= $want"
	done
	grep -h "tapless-stamp" "$d/trader.err" "$d/venue.err" | sed "s/^/$m: /"
}

# check_sender_only: with --sender-copy-only, no outbound FIX data segment
# is in a host's file twice; capd counted the packet-socket copies it left
# out (every keyed stamp it joined) and wrote none anyway; correlate used
# the sender's stamps with nothing to skip.
check_sender_only() {
	local m=shim-only d=$out/shim-only h total both sstamped skipped joined left
	cmp -s "$out/bare/types" "$d/types" ||
		fail "$m: messages differ from the bare run: $(diff "$out/bare/types" "$d/types" | tr '\n' ' ')"
	for h in a b; do
		read -r total both < <(coverage "$m" $h)
		sstamped=$(jq -r --arg h $h '.inputs[] | select(.host == $h) | .sender_stamped' "$d/correlate.json")
		skipped=$(jq -r --arg h $h '.inputs[] | select(.host == $h) | .tap_tx_skipped' "$d/correlate.json")
		joined=$(sed -n 's/.*keyed stamps: [0-9]* taken, \([0-9]*\) joined.*/\1/p' "$d/$h.capd.log")
		left=$(sed -n 's/.*--sender-copy-only: \([0-9]*\) captured copies .*, \([0-9]*\) written anyway.*/\1 \2/p' "$d/$h.capd.log" | tail -1)
		echo "$m: $h: $(wc -l < "$d/$h.sender.keys") sender-stamped FIX data segments," \
			"$total with only the packet socket's copy, $both with both;" \
			"capd joined ${joined:-?}, left out/wrote anyway: ${left:-?};" \
			"correlate: sender_stamped $sstamped, tap_tx_skipped $skipped"
		[ "$both" -eq 0 ] || fail "$m: $h: $both segments in the file twice"
		[ "$(wc -l < "$d/$h.sender.keys")" -gt 0 ] || fail "$m: $h: no sender-stamped segment"
		[ -n "$joined" ] && [ "$joined" -gt 0 ] && [ "$left" = "$joined 0" ] ||
			fail "$m: $h: capd joined '${joined:-}', left out and wrote anyway '${left:-}'"
		[ "$sstamped" -ge "$(wc -l < "$d/$h.sender.keys")" ] && [ "$skipped" -eq 0 ] ||
			fail "$m: $h: correlate sender_stamped $sstamped, tap_tx_skipped $skipped"
	done
}

# check_cgroup: each capd armed its host's one session and lost no stamp;
# stopped, they left nothing attached.
check_cgroup() {
	local h
	for h in a b; do
		grep -q -- "--stamp-cgroup: 1 connections armed (0 refused), .* 0 lost" \
			"$out/cgroup/$h.capd.log" ||
			fail "cgroup: capd on $h: $(grep -- '--stamp-cgroup' "$out/cgroup/$h.capd.log")"
	done
	/usr/sbin/bpftool cgroup tree 2>/dev/null | grep -q "tapless-$TL_ID-" &&
		fail "cgroup: a program is still attached after capd stopped"
}

# ---- The runs ----

# The dictionary is in force: an order without OrdType (40) is rejected
# by the acceptor's QuickFIX, which then fails its run.
mkdir -p "$out/dict"
acceptor_start dict
tl_exec a python3 - "$B" "$PORT" > "$out/dict/client" 2>&1 <<'EOF'
import datetime, socket, sys, time
def fix(body):
    body = body.replace('|', '\x01')
    head = '8=FIX.4.4\x019=%d\x01%s' % (len(body), body)
    return (head + '10=%03d\x01' % (sum(head.encode()) % 256)).encode()
t = datetime.datetime.utcnow().strftime('%Y%m%d-%H:%M:%S.000')
hdr = '|49=TRADER|52=%s|56=VENUE|' % t
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(fix('35=A|34=1' + hdr + '98=0|108=60|141=Y|'))
s.sendall(fix('35=D|34=2' + hdr + '11=X1|54=1|55=TLA|60=%s|38=100|' % t))
time.sleep(0.3)
s.sendall(fix('35=5|34=3' + hdr))
got = b''
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
print(got.replace(b'\x01', b'|').decode())
EOF
wait "$VENUE"
rc=$?
grep -q "|35=3|.*|371=40|372=D|" "$out/dict/client" ||
	fail "dictionary: no Reject of the order without OrdType: $(cat "$out/dict/client")"
[ "$rc" = 1 ] && grep -q "rejects_out=1 .*result=FAIL" "$out/dict/venue.out" ||
	fail "dictionary: acceptor exit $rc: $(cat "$out/dict/venue.out" "$out/dict/venue.err")"

# A venue killed mid-run: the trader says so and fails.
mkdir -p "$out/kill/trader"
acceptor_start kill
tl_bg a "$init" --settings "$out/trader.cfg" --log-dir "$out/kill/trader" \
	--orders "$N" --rate "$RATE" --timeout 60 > "$out/kill/trader.out" 2> "$out/kill/trader.err"
trader=$TL_LAST_PID
wait_for "$out/kill/venue/FIX.4.4-VENUE-TRADER.messages.current.log" "35=D"
kill -KILL "$VENUE"
wait "$VENUE" 2> /dev/null
wait "$trader"
rc=$?
[ "$rc" = 1 ] && grep -q "logout_clean=no .*result=FAIL" "$out/kill/trader.out" ||
	fail "venue killed: trader exit $rc: $(cat "$out/kill/trader.out" "$out/kill/trader.err")"

skipped=""
for mode in bare shim shim-only cgroup; do
	why=$(mode_unavailable $mode)
	if [ -n "$why" ]; then
		echo "quickfix: $mode: skipped: $why"
		skipped="$skipped, $mode skipped"
		continue
	fi
	run_engines $mode
	check_run $mode
	case $mode in
	bare) ;;
	shim-only) check_sender_only ;;
	*) check_stamped $mode ;;
	esac
	[ $mode = cgroup ] && check_cgroup
done

[ "$fails" -eq 0 ] && echo "ok: quickfix ($N orders at $RATE/s$skipped)"
[ "$fails" -eq 0 ]
