#!/bin/sh
# tapless sim --capture-drop: frames missing from one host's capture file
# only. The truth must stay what the correlator can measure from the files:
# checked here against the captures themselves, read by tshark (not by sim's
# code): a hop counts a message only when both ends' files have it; every
# BUY and SELL in the algo's file is either a sample (trigger captured) or
# counted as trigger_lost; each listed sample is an order in the file, and
# without drops the list is, sample for sample, the correlator's --samples.
# The correlator's hop figures under drops must equal the truth's. Its
# transaction figures under drops are not checked here (issue 30, elsewhere).
set -u
d=$(mktemp -d /tmp/tapless-capdrop.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=${TAPLESS:-bin/tapless}
command -v tshark > /dev/null || { echo "SKIP: no tshark"; exit 0; }
A=198.18.0.1
V=198.18.0.2

# sim NAME ARGS...: generate into $d/NAME (10000 messages, 10 trades)
sim() {
	n=$1; shift
	$T sim --output "$d/$n" --seed 30 --rate 20000 --duration 0.5 "$@" \
		> "$d/$n.log" 2>&1 || { fail "$n: sim exit $?: $(cat "$d/$n.log")"; return 1; }
}

# corr NAME [OPTIONS]: tapless correlate --json into $d/NAME.json
corr() {
	n=$1; shift
	$T correlate --json --sync algo="$d/$n/algo.journal" --sync venue="$d/$n/venue.journal" \
		--topology "$d/$n/topology" "$@" algo="$d/$n/algo.pcapng" \
		venue="$d/$n/venue.pcapng" > "$d/$n.json" 2> "$d/$n.err" ||
		fail "$n: correlate exit $?: $(head -3 "$d/$n.err")"
}

# fixmsgs FILE: one line per FIX message in the capture, "src sport seq type
# side stamp_ns", each frame on its own (a frame after a missing one is
# still read); the stamp as text (it exceeds a double).
fixmsgs() {
	tshark -r "$1" -o tcp.desegment_tcp_streams:FALSE -Y fix -T fields \
		-E separator=' ' -e ip.src -e tcp.srcport -e fix.MsgSeqNum \
		-e fix.MsgType -e fix.Side -e frame.time_epoch 2> /dev/null |
	awk '{ n = split($3, q, ","); split($4, t, ","); split($5, s, ","); sub("[.]", "", $6)
	       for (i = 1; i <= n; i++) print $1, $2, q[i], t[i], (s[i] == "" ? "-" : s[i]), $6 }'
}

# msgs NAME HOST: fixmsgs of that capture, read once into $d/NAME.HOST.msgs
msgs() {
	[ -f "$d/$1.$2.msgs" ] || fixmsgs "$d/$1/$2.pcapng" > "$d/$1.$2.msgs"
	echo "$d/$1.$2.msgs"
}

# both NAME SRC: messages sent by SRC that are in both hosts' files
both() {
	awk -v s="$2" '$1 == s { print $1, $2, $3 }' "$(msgs $1 algo)" | sort -u > "$d/$1.a.$2"
	awk -v s="$2" '$1 == s { print $1, $2, $3 }' "$(msgs $1 venue)" | sort -u > "$d/$1.v.$2"
	comm -12 "$d/$1.a.$2" "$d/$1.v.$2" | wc -l
}

# hopmsgs NAME FROM: the truth's messages from FROM
hopmsgs() { jq ".hops[] | select(.from == \"$2\") | .messages" "$d/$1/truth.json"; }

# samples NAME KIND: the truth's sample list of KIND as text, "ts ts_utc
# latency_ns trigger_captured" (the stamps exceed a double: not through jq)
samples() {
	awk -v k="\"$2\"," '$1 == "\"name\":" { on = ($2 == k) }
		on && $1 == "\"ts\":" { ts = $2; sub(",", "", ts) }
		on && $1 == "\"ts_utc\":" { u = $2; sub(",", "", u) }
		on && $1 == "\"latency_ns\":" { l = $2; sub(",", "", l) }
		on && $1 == "\"trigger_captured\":" { print ts, u, l, $2 }' "$d/$1/truth.json"
}

sim nodrop && sim drop --capture-drop algo=0.01 &&
	sim heavy --capture-drop algo=0.2 --capture-drop venue=1% || exit 1

for n in drop heavy; do
	for h in algo venue; do
		# The summary line's count is the truth's.
		c=$(jq ".capture_dropped.$h" "$d/$n/truth.json")
		grep -q "dropped from the captures:.* $c $h" "$d/$n.log" ||
			fail "$n: summary line does not say $c $h frames dropped: $(cat "$d/$n.log")"
	done
	[ "$(jq .capture_dropped.algo "$d/$n/truth.json")" -gt 0 ] || fail "$n: no algo frame dropped"

	# Hops: the no-drop counts less the messages whose frame is missing
	# at either end, both taken from the files by tshark.
	for from in algo venue; do
		src=$A; [ $from = venue ] && src=$V
		b0=$(both nodrop $src)
		b=$(both $n $src)
		t0=$(hopmsgs nodrop $from)
		t=$(hopmsgs $n $from)
		[ "$t0" -eq "$b0" ] || fail "nodrop: truth has $t0 messages from $from, the files $b0"
		[ "$t" -eq $((t0 - (b0 - b))) ] ||
			fail "$n: truth has $t messages from $from, want $t0 - $((b0 - b)) missing at either end"
	done
	[ "$(hopmsgs $n algo)$(hopmsgs $n venue)" != "$(hopmsgs nodrop algo)$(hopmsgs nodrop venue)" ] ||
		fail "$n: no hop lost a message"

	# Transactions: every order in the algo's file is a sample with its
	# trigger captured or counted as trigger_lost.
	for k in tick_to_trade:1 fill_to_sell:2; do
		kind=${k%:*} side=${k#*:}
		orders=$(awk -v s=$A -v side=$side '$1 == s && $4 == "D" && $5 == side' "$(msgs $n algo)" | wc -l)
		jq -e --argjson o "$orders" ".transactions[] | select(.name == \"$kind\")
			| ([.samples[] | select(.trigger_captured)] | length) + .trigger_lost == \$o
			and ([.samples[] | select(.trigger_captured)] | length) == .count" \
			"$d/$n/truth.json" > /dev/null ||
			fail "$n: $kind: samples with trigger captured + trigger_lost != $orders orders in the file, or != count"
	done
	# Each listed sample's ts is an order's stamp in the algo's file.
	awk -v s=$A '$1 == s && $4 == "D" { print $6 }' "$(msgs $n algo)" | sort -u > "$d/$n.orders"
	for kind in tick_to_trade fill_to_sell order_to_ack order_to_fill; do
		samples $n $kind | awk '{ print $1 }' | sort -u > "$d/$n.$kind.ts"
		[ -s "$d/$n.$kind.ts" ] || fail "$n: no $kind sample listed"
		[ -z "$(comm -23 "$d/$n.$kind.ts" "$d/$n.orders")" ] ||
			fail "$n: $kind samples whose ts is no order in the algo's file: $(comm -23 "$d/$n.$kind.ts" "$d/$n.orders" | head -3)"
	done

	# The correlator's hop figures are the truth's, drops and all.
	corr $n
	jq -r --slurpfile t "$d/$n/truth.json" '
		.hops[] | select(.flow == "all" and .rate == null) | . as $c
		| ($t[0].hops[] | select(.from == $c.from and .to == $c.to)) as $h
		| select($c.messages != $h.messages
			or $c.out_of_sync.messages != $h.out_of_sync.messages
			or ([("count", "min", "p50", "p90", "p99", "p999", "max") as $k
			     | $c.latency_ns[$k] == $h.in_sync.stamped_ns[$k]] | all | not)
			or (($c.latency_ns.mean - $h.in_sync.stamped_ns.mean) | if . < 0 then -. else . end) > 0.01)
		| "\($c.from)->\($c.to): correlate \($c.messages) messages \($c.latency_ns | tojson), truth \($h.messages) \($h.in_sync.stamped_ns | tojson)"' \
		"$d/$n.json" > "$d/$n.hopdiff" || fail "$n: jq on the hops"
	[ -s "$d/$n.hopdiff" ] && fail "$n: correlator hops differ from the truth: $(cat "$d/$n.hopdiff")"
done

# The heavy run loses triggers: some orders are listed as such.
jq -e '[.transactions[] | .trigger_lost // 0] | add > 0' "$d/heavy/truth.json" > /dev/null ||
	fail "heavy: no trigger lost at 20% drops"
[ "$(samples heavy tick_to_trade | awk '$4 == "false"' | wc -l)" -eq \
  "$(jq '.transactions[] | select(.name == "tick_to_trade") | .trigger_lost' "$d/heavy/truth.json")" ] ||
	fail "heavy: tick_to_trade samples with trigger_captured false are not trigger_lost"

# Without drops, the list is the correlator's --samples, one by one.
corr nodrop --samples "$d/nodrop.samples"
for kind in tick_to_trade fill_to_sell order_to_ack order_to_fill; do
	awk -v k=$kind '$2 == k { print $5, $6 }' "$d/nodrop.samples" | sort > "$d/nodrop.$kind.c"
	samples nodrop $kind | awk '$4 == "true" { print $2, $3 }' | sort > "$d/nodrop.$kind.t"
	[ -s "$d/nodrop.$kind.t" ] && cmp -s "$d/nodrop.$kind.c" "$d/nodrop.$kind.t" ||
		fail "nodrop: $kind: truth samples (ts_utc latency) are not the correlator's: $(diff "$d/nodrop.$kind.t" "$d/nodrop.$kind.c" | head -4)"
done

[ $fails -eq 0 ] && echo "ok" || echo "$fails failed"
[ $fails -eq 0 ]
