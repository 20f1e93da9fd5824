#!/bin/sh
# Transactions right when a capture drops frames (issue 30). tapless sim
# --capture-drop leaves frames out of the algo's capture only, the hosts
# having acted on them; the truth lists every order with its latency and
# whether the capture has its trigger. At 0.1 %, 1 % and 5 %:
#  - every tick_to_trade, fill_to_sell, order_to_ack and order_to_fill
#    sample correlate gives is the truth's for that order, exactly, and
#    one whose trigger the capture has; measured + trigger_lost = the
#    truth's orders; order_to_ack/fill exactly the truth's
#    (tests/system/lib/txn_truth_check.py, order by order);
#  - tapless export --txn-output writes the same transactions;
#  - correlate --follow over the same files adds up to the offline run
#    (follow_check.py: counts exact, means within 1 ns);
#  - capture_losses name the algo's flows that lost bytes, and the orders
#    they left unmeasured add up to trigger_lost.
# Before stamp-order matching, 0.1 % of frames dropped put tick_to_trade's
# median at tens of milliseconds (a BUY met a bid from before a hole).
set -u
. tests/replay/lib.sh
replay_setup txndrops

for p in 0.001 0.01 0.05; do
	s=$d/$p
	$T sim --output "$s" --seed 5 --rate 50000 --messages 50000 \
		--capture-drop algo=$p > "$d/$p.sim" 2>&1 ||
		{ fail "$p: sim exit $?: $(cat "$d/$p.sim")"; continue; }
	J="-s algo=$s/algo.journal -s venue=$s/venue.journal"
	# shellcheck disable=SC2086
	$T correlate --json --samples "$d/$p.samples" $J -t "$s/topology" \
		algo="$s/algo.pcapng" venue="$s/venue.pcapng" > "$d/$p.json" 2> "$d/$p.err" ||
		{ fail "$p: correlate exit $?: $(head -3 "$d/$p.err")"; continue; }
	# shellcheck disable=SC2086
	$T export -o /dev/null --txn-output "$d/$p.txn" $J \
		algo="$s/algo.pcapng" venue="$s/venue.pcapng" > /dev/null 2> "$d/$p.xerr" ||
		fail "$p: export exit $?: $(head -3 "$d/$p.xerr")"
	python3 $L/txn_truth_check.py "$s/truth.json" "$d/$p.json" "$d/$p.samples" \
		"$d/$p.txn" > "$d/$p.check" 2>&1 ||
		fail "$p: $(grep -v '^ *[a-z_]* *truth' "$d/$p.check")"
	sed "s/^/$p: /" "$d/$p.check"
	# The losses are named, and account for every order not measured.
	jq -e '[.unmatched.hosts[] | select(.host == "algo")][0] as $h
		| ($h.capture_losses | length) > 0
		and ([$h.capture_losses[].samples_affected] | add) + $h.trigger_lost_waiting ==
		    ($h.trigger_lost.tick_to_trade + $h.trigger_lost.fill_to_sell)
		and ([$h.capture_losses[].hole_bytes] | add) > 0' "$d/$p.json" > /dev/null ||
		fail "$p: capture_losses: $(jq -c '.unmatched.hosts[] | select(.host == "algo") | {trigger_lost, capture_losses}' "$d/$p.json")"
done
grep -q '^tick_to_trade .* [1-9][0-9]* trigger_lost' "$d/0.05.check" ||
	fail "0.05: no trigger lost at 5 %: the case tests nothing: $(cat "$d/0.05.check")"

# Following the 1 % files as they are: the same answer.
s=$d/0.01
mkdir -p "$d/fol/algo" "$d/fol/venue"
cp "$s/algo.pcapng" "$d/fol/algo/" && cp "$s/venue.pcapng" "$d/fol/venue/"
$T correlate --follow --json --from-oldest --stall 30 --interval 0.1 \
	-s algo="$s/algo.journal" -s venue="$s/venue.journal" -t "$s/topology" \
	algo="$d/fol/algo" venue="$d/fol/venue" > "$d/fol.jsonl" 2> "$d/fol.err" &
fp=$!
pids="$pids $fp"
# Until it has read both files whole (every FIX message of the offline run).
want=$(jq '[.inputs[].fix_messages] | add' "$d/0.01.json")
for _ in $(seq 300); do
	have=$(jq -s '[.[] | select(.type == "host") | .messages] | add // 0' "$d/fol.jsonl" 2>/dev/null)
	[ "${have:-0}" -ge "$want" ] && break
	sleep 0.1
done
kill -TERM $fp
wait $fp || fail "follow: exit $?: $(tail -3 "$d/fol.err")"
python3 $L/follow_check.py "$d/0.01.json" "$d/fol.jsonl" > "$d/fol.check" 2>&1 ||
	fail "follow: $(grep -v ' ok$' "$d/fol.check")"
grep '^txn tick_to_trade' "$d/fol.check"

[ "$fails" -eq 0 ] && echo "test_txn_drops: ok"
[ "$fails" -eq 0 ]
