#!/bin/bash
# The FTTC workload: tapless-venue and tapless-algo over loopback and between
# namespaces. Counts must add up (a BUY per .000 bid, two reports per order,
# a SELL per BUY fill, no gaps, no stamp lost), and the pcapng files each
# probe writes hold every message, decoded as FIX by tshark with the same
# counts. A connection whose first message is bad (each kind of bad input)
# is told why in a Logout and closed, and does not count as a session: the
# venue logs it and goes on waiting for the algo (exit 2 at
# --accept-timeout, since none comes).
set -u
. scripts/netns.sh
tl_setup fttc 198.18.11
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
base=$((20000 + $$ % 20000))

# jq -e on a summary: FILE FILTER MESSAGE
want() { jq -e "$2" "$1" > /dev/null || fail "$3: $(jq -c . "$1" 2>&1 | head -c 600)"; }

# fix_count FILE TYPE: messages of MsgType TYPE tshark decodes in FILE
# (one tshark pass per file, kept in FILE.types).
fix_count() {
	[ -f "$1.types" ] || tshark -r "$1" -Y fix -T fields -e fix.MsgType \
		2>/dev/null | tr ',' '\n' > "$1.types"
	grep -cx "$2" "$1.types"
}

# check NAME RATE SECS: the summaries and files of one run.
check() {
	local v=$out/$1.venue.json a=$out/$1.algo.json n=$(($2 * $3))
	want "$v" ".md_published == $n" "$1: venue published"
	want "$a" ".md_received == $n" "$1: algo received every market data message"
	want "$a" ".bids_000 == ($n / 1000 | floor)" "$1: .000 bids seen"
	want "$a" ".buys == .bids_000" "$1: a BUY per .000 bid"
	want "$a" ".fills_buy == .buys and .sells == .fills_buy and .fills_sell == .sells" "$1: a SELL per BUY fill, every SELL filled"
	want "$a" ".reports == 2 * (.buys + .sells) and .new == .buys + .sells and .rejects == 0" "$1: two reports per order"
	want "$v" ".orders_received == .fills and .rejects == 0" "$1: venue filled every order"
	jq -s -e '.[0].orders_received == (.[1].buys + .[1].sells)' "$v" "$a" > /dev/null || fail "$1: orders sent != orders received"
	for f in "$v" "$a"; do
		want "$f" ".stamps_lost == 0" "$1: stamps lost"
		want "$f" "[.md, .orders][] | .sequence_gaps == 0" "$1: sequence gaps"
		want "$f" "[.md, .orders][] | .relative_tcp_seq == false" "$1: relative TCP sequence numbers as root"
	done
	# Every message in each file, as tshark decodes it.
	local vx vd v8 ax ad a8 orders reports
	orders=$(jq '.orders_received' "$v")
	reports=$(jq '.reports' "$a")
	vx=$(fix_count "$out/$1.venue.pcapng" X)
	vd=$(fix_count "$out/$1.venue.pcapng" D)
	v8=$(fix_count "$out/$1.venue.pcapng" 8)
	ax=$(fix_count "$out/$1.algo.pcapng" X)
	ad=$(fix_count "$out/$1.algo.pcapng" D)
	a8=$(fix_count "$out/$1.algo.pcapng" 8)
	[ "$vx" -eq "$n" ] && [ "$ax" -eq "$n" ] || fail "$1: tshark: X $vx (venue) $ax (algo), want $n"
	[ "$vd" -eq "$orders" ] && [ "$ad" -eq "$orders" ] || fail "$1: tshark: D $vd/$ad, want $orders"
	[ "$v8" -eq "$reports" ] && [ "$a8" -eq "$reports" ] || fail "$1: tshark: 8 $v8/$a8, want $reports"
	# Outbound frames are marked so, and every frame has a stamp after
	# the run started (none zero).
	tshark -r "$out/$1.venue.pcapng" -Y 'fix.MsgType == "X" && frame.packet_flags_direction != 2' 2>/dev/null | grep -q . &&
		fail "$1: market data in the venue's file not marked outbound"
	build/tools/capdump "$out/$1.venue.pcapng" | awk -v t0="$T0" '$1 !~ /iface/ && $1 < t0 { bad++ } END { exit bad > 0 }' ||
		fail "$1: frames stamped before the run"
	# The correlator on the two files: a tick-to-trade per BUY, a
	# fill-to-sell per SELL, every market data message matched one way.
	local c=$out/$1.correlate.json
	bin/tapless correlate --json venue="$out/$1.venue.pcapng" \
		algo="$out/$1.algo.pcapng" > "$c" 2> "$out/$1.correlate.log" ||
		fail "$1: correlate exit $?: $(cat "$out/$1.correlate.log")"
	jq -s -e '(.[0].transactions[] | select(.name == "tick_to_trade" and .host == "algo") | .count) == .[1].buys' "$c" "$a" > /dev/null ||
		fail "$1: correlate: tick_to_trade count is not the number of BUYs"
	jq -s -e '(.[0].transactions[] | select(.name == "fill_to_sell" and .host == "algo") | .count) == .[1].sells' "$c" "$a" > /dev/null ||
		fail "$1: correlate: fill_to_sell count is not the number of SELLs"
	jq -s -e '(.[0].transactions[] | select(.name == "order_to_fill") | .count) == (.[1].buys + .[1].sells)' "$c" "$a" > /dev/null ||
		fail "$1: correlate: order_to_fill count is not the number of orders"
	want "$c" "(.hops[] | select(.from == \"venue\" and .to == \"algo\" and .flow == \"all\") | .messages) >= $n" "$1: correlate: market data matched venue -> algo"
	want "$c" ".unmatched.seen_at_one_host == 0 and .unmatched.duplicates == 0" "$1: correlate: unmatched messages"
	want "$c" "[.hops[] | .latency_ns.min] | all(. > 0)" "$1: correlate: one-way latency not positive on one clock"
}

# 1. Loopback.
T0=$(date +%s%N)
md=127.0.0.1:$base ord=127.0.0.1:$((base + 1))
bin/tapless-venue --md $md --ord $ord --rate 5000 --duration 2 --json \
	-w "$out/lo.venue.pcapng" > "$out/lo.venue.json" 2> "$out/lo.venue.log" &
vp=$!
bin/tapless-algo --md $md --ord $ord --json -w "$out/lo.algo.pcapng" \
	> "$out/lo.algo.json" 2> "$out/lo.algo.log" || fail "loopback: algo exit $?: $(cat "$out/lo.algo.log")"
wait $vp || fail "loopback: venue exit $?: $(cat "$out/lo.venue.log")"
check lo 5000 2

# 2. Between namespaces, on the veth pair, the venue in b.
T0=$(date +%s%N)
tl_bg b bin/tapless-venue --md 198.18.11.2:9001 --ord 198.18.11.2:9002 \
	--rate 10000 --duration 2 --json -i "$TL_IF_B" -w "$out/ns.venue.pcapng" \
	> "$out/ns.venue.json" 2> "$out/ns.venue.log"
vp=$TL_LAST_PID
tl_exec a bin/tapless-algo --md 198.18.11.2:9001 --ord 198.18.11.2:9002 \
	--time-unit ns \
	--json -i "$TL_IF_A" -w "$out/ns.algo.pcapng" > "$out/ns.algo.json" \
	2> "$out/ns.algo.log" || fail "namespaces: algo exit $?: $(cat "$out/ns.algo.log")"
wait $vp || fail "namespaces: venue exit $?: $(cat "$out/ns.venue.log")"
check ns 10000 2
# App to wire of the algo's orders, whose SendingTime it wrote to the ns
# (--time-unit ns) from the clock its stamps are on: one clock, so the
# bound is the resolutions alone, and the figure is a real delay (> 0).
want "$out/ns.correlate.json" "[.app_to_wire[] | select(.host == \"algo\" and .msg_type == \"D\")] |
	length > 0 and (map(.messages) | add) == $(jq '.buys + .sells' "$out/ns.algo.json") and
	all(.tag == 52 and .resolution_ns == 1 and .latency_ns.min > 0 and
	    .sync_error_bound_ns != null and .sync_error_bound_ns < 1000)" \
	"namespaces: app to wire of the algo's orders (ns)"
want "$out/lo.correlate.json" "[.app_to_wire[] | select(.host == \"algo\" and .msg_type == \"D\")] |
	length > 0 and all(.resolution_ns == 1000000 and .sync_error_bound_ns >= 1000000)" \
	"loopback: app to wire of the algo's orders (ms, the default)"
echo "fttc: app to wire of the algo's orders: $(jq -c '[.app_to_wire[] | select(.host == "algo" and .msg_type == "D") | {resolution_ns, n: .latency_ns.count, p50: .latency_ns.p50, max: .latency_ns.max, bound: .sync_error_bound_ns}]' "$out/ns.correlate.json")"
tshark -r "$out/ns.algo.pcapng" -Y 'fix.MsgType == "D"' -T fields -e ip.src -e ip.dst -e tcp.dstport 2>/dev/null |
	sort -u | grep -qx "198.18.11.1	198.18.11.2	9002" || fail "namespaces: orders not from 198.18.11.1 to 198.18.11.2:9002"

# 3. Bad peers: each gets a Logout saying why and is closed; the venue
# waits on for the algo, and exits 2 when --accept-timeout passes.
# fixmsg BODY: a FIX 4.4 message around BODY ('|' for SOH), with correct
# BodyLength and CheckSum.
fixmsg() {
	local body len head sum
	body=$(printf '%s' "$1" | tr '|' '\001')
	len=$(printf '%s' "$body" | wc -c)
	head=$(printf '8=FIX.4.4\0019=%d\001%s' "$len" "$body")
	sum=$(printf '%s' "$head" | od -An -v -tu1 | tr -s ' ' '\n' | awk '{ s += $1 } END { print s % 256 }')
	printf '%s10=%03d\001' "$head" "$sum"
}
logon='35=A|49=ALGO|56=VENUE|34=1|52=20261123-00:00:00.000|98=0|108=30|'
bad=(
	"garbage|does not start with 8=|$(printf 'GET / HTTP/1.1\r\n\r\n')"
	"checksum|bad CheckSum|$(fixmsg "$logon" | sed 's/10=...\x01$/10=000\x01/')"
	"bodylength|bad BodyLength|$(fixmsg "$logon" | sed 's/\x019=[0-9]*\x01/\x019=60\x01/')$(fixmsg "$logon")"
	"toolong|over the size limit|$(fixmsg "$logon" | sed 's/\x019=[0-9]*\x01/\x019=900000\x01/')"
	"compid|SenderCompID (49) 'EVIL'|$(fixmsg "${logon/49=ALGO/49=EVIL}")"
	"notlogon|first message is not a Logon|$(fixmsg '35=D|49=ALGO|56=VENUE|34=1|52=20261123-00:00:00.000|11=1|')"
)
port=$((base + 10))
for b in "${bad[@]}"; do
	name=${b%%|*} rest=${b#*|}
	why=${rest%%|*} bytes=${rest#*|}
	bin/tapless-venue --md 127.0.0.1:$port --ord 127.0.0.1:$((port + 1)) \
		--accept-timeout 2 --max-msg 4096 --duration 1 2> "$out/bad-$name.log" > /dev/null &
	vp=$!
	for _ in $(seq 100); do grep -qs listening "$out/bad-$name.log" && break; sleep 0.05; done
	if exec 3<>/dev/tcp/127.0.0.1/$port; then
		printf '%s' "$bytes" >&3
		timeout 3 cat <&3 | tr '\001' '|' > "$out/bad-$name.reply"
		exec 3<&-
	fi
	wait $vp
	rc=$?
	[ "$rc" -eq 2 ] || fail "bad peer $name: venue exit $rc, want 2: $(cat "$out/bad-$name.log")"
	grep -q "md: connection from 127.0.0.1:[0-9]* closed: .*$why" "$out/bad-$name.log" ||
		fail "bad peer $name: log does not say '$why': $(cat "$out/bad-$name.log")"
	grep -q "did not connect and log on" "$out/bad-$name.log" ||
		fail "bad peer $name: the venue did not wait on for the algo: $(cat "$out/bad-$name.log")"
	grep -q "35=5|.*58=.*$why" "$out/bad-$name.reply" ||
		fail "bad peer $name: no Logout saying why: $(cat "$out/bad-$name.reply")"
	port=$((port + 2))
done

# Frames for a capd that is not there are dropped on the way, and said:
# tx_socket.dropped counts them and stamps_lost includes them.
tl_bg a bin/tapless-venue --md "127.0.0.1:$port" --ord "127.0.0.1:$((port + 1))" \
	--rate 1000 --duration 1 --json --tx-socket "$out/nocapd.sock" \
	> "$out/nocapd.venue.json" 2> "$out/nocapd.venue.log"
vp=$TL_LAST_PID
sleep 0.3
tl_exec a bin/tapless-algo --md "127.0.0.1:$port" --ord "127.0.0.1:$((port + 1))" \
	--json --tx-socket "$out/nocapd.sock" > "$out/nocapd.algo.json" 2>/dev/null ||
	fail "no capd: algo failed"
wait $vp || fail "no capd: venue exit $?: $(tail -2 "$out/nocapd.venue.log")"
want "$out/nocapd.venue.json" ".tx_socket.sent == 0 and .tx_socket.dropped >= 1000 and .stamps_lost >= .tx_socket.dropped" \
	"no capd: dropped frames not counted as lost"

[ "$fails" -eq 0 ] && echo "ok: fttc"
[ "$fails" -eq 0 ]
