#!/bin/bash
# tapless validate --loopback on a veth pair, both ends in one namespace,
# software stamps: every frame of
# both directions arrives with its TX stamp, the one-way is positive and
# under a millisecond, the stamps are reported as software ones and the
# hardware-vs-software check is skipped with its reason. One-way runs one
# direction; text output says which stamps; --calibration writes the
# host's stamp terms (and refuses without a true one-way or from too few
# samples); bad input (no such port, a port
# down, hardware stamps asked of a veth) fails naming the port; a short run
# is valgrind-clean; no namespace is left behind. Timing figures are sanity
# bounds only: the machine may be busy. The verdicts follow the limits given
# (generous ones to pass, impossible ones to fail), so they do not depend on
# how busy the machine is, and the exit status follows them.
set -u
if [ "$(id -u)" -ne 0 ]; then
	echo "validate: skipped: needs root for network namespaces"
	exit 0
fi
. scripts/netns.sh
tl_init				# TL_ID, and the trap that runs tl_cleanup
NS="tapless-lc-$$-$TL_ID"
A="lc${TL_ID}a"
B="lc${TL_ID}b"
OUT=$(mktemp -d "/tmp/tapless-validate.XXXXXX")
trap 'tl_cleanup; rm -rf "$OUT"' EXIT
lc=bin/tapless
count=500
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

command -v jq > /dev/null || { echo "FAIL: validate: jq not installed (scripts/install-deps)"; exit 1; }
[ -x "$lc" ] || { echo "FAIL: validate: $lc not built (make)"; exit 1; }

# Both ends in the namespace: the veth is made inside it, so nothing is ever
# created in the root namespace.
ip netns add "$NS" && TL_NS+=("$NS") &&
	ip -n "$NS" link add "$A" type veth peer name "$B" &&
	ip -n "$NS" link set lo up &&
	ip -n "$NS" link set "$A" up && ip -n "$NS" link set "$B" up ||
	{ echo "FAIL: validate: could not build the namespace"; exit 1; }
# validate's loopback only; limits no busy machine reaches, unless a test
# sets its own.
run() { ip netns exec "$NS" "$lc" validate --no-phc --limit loop.sw.sd_ns=1e7,1e8 "$@"; }
# Frames sent before the carrier is up are dropped: wait for it.
up() {
	for _ in $(seq 100); do
		ip -n "$NS" link show "$A" | grep -q LOWER_UP &&
			ip -n "$NS" link show "$B" | grep -q LOWER_UP && return 0
		sleep 0.05
	done
	return 1
}
up || { echo "FAIL: validate: $A and $B did not come up"; exit 1; }

# 1. Both directions, software stamps.
j=$OUT/both.json
run --stamps sw --count "$count" --rate 1000 --json --loopback "$A:$B" > "$j" 2> "$OUT/both.err" ||
	fail "both: exit $?: $(cat "$OUT/both.err")"
jq -e . "$j" > /dev/null 2>&1 || fail "both: not JSON: $(head -c 500 "$j")"
echo "validate: $(jq -r '.loopback.directions[] | "\(.from)->\(.to) one-way mean \(.oneway_ns.mean) ns, sd \(.oneway_ns.sd) ns"' "$j" 2>/dev/null | paste -sd ';')"
[ "$(jq '.loopback.directions | length' "$j")" = 2 ] || fail "both: not two directions"
for d in 0 1; do
	x=$(jq -c ".loopback.directions[$d]" "$j")
	name=$(jq -r '"\(.from)->\(.to)"' <<< "$x")
	[ "$(jq -r .source <<< "$x")" = sw ] || fail "$name: source is not sw: $x"
	[ "$(jq .sent <<< "$x")" = "$count" ] || fail "$name: sent is not $count: $x"
	[ "$(jq .received <<< "$x")" = "$count" ] || fail "$name: received is not $count: $x"
	[ "$(jq .tx_missing <<< "$x")" = 0 ] || fail "$name: TX stamps missing: $x"
	[ "$(jq .oneway_ns.count <<< "$x")" -ge $((count * 99 / 100)) ] ||
		fail "$name: fewer than 99 % of frames have a one-way: $x"
	jq -e '.oneway_ns.mean > 0 and .oneway_ns.mean < 1000000' <<< "$x" > /dev/null ||
		fail "$name: one-way mean not in (0, 1 ms): $x"
	jq -e '.phc_tx == null and .phc_rx == null and .have_hwsw == false' <<< "$x" > /dev/null ||
		fail "$name: hardware figures with software stamps: $x"
done
[ "$(jq -r '.loopback.directions[0].from' "$j")" = "$A" ] && [ "$(jq -r '.loopback.directions[1].from' "$j")" = "$B" ] ||
	fail "both: directions not A->B then B->A"
jq -e '.checks[] | select(.check == "hwsw") | .verdict == "skip" and (.why | startswith("software stamps only: "))' "$j" > /dev/null ||
	fail "both: hwsw not skipped with a reason: $(jq -c '.checks[1]' "$j")"
jq -e '.checks[] | select(.check == "loopback") | .items | map(.text) | any(startswith("software stamps: the one-way includes the host stack"))' "$j" > /dev/null ||
	fail "both: the loopback check does not say which stamps were measured"
jq -e --arg s "$A<->$B" '.checks[] | select(.check == "loopback") | .subject == $s' "$j" > /dev/null ||
	fail "both: loopback subject is not $A<->$B"

# 2. One way, with an expected delay: one direction, the cable error judged.
j=$OUT/one.json
run --stamps sw --one-way --count 100 --expect-ns 1000 --json --loopback "$A:$B" > "$j" 2> "$OUT/one.err" ||
	fail "one-way: exit $?: $(cat "$OUT/one.err")"
[ "$(jq '.loopback.directions | length' "$j")" = 1 ] || fail "one-way: not one direction: $(head -c 300 "$j")"
[ "$(jq '.loopback.directions[0].received' "$j")" = 100 ] || fail "one-way: received is not 100"
jq -e '.checks[] | select(.check == "loopback") | .items | any(.limit == "loop.sw.cable_error_ns")' "$j" > /dev/null ||
	fail "one-way: no cable error item with --expect"

# 3. Text.
run --stamps sw --count 50 --loopback "$A:$B" > "$OUT/text" 2>&1 || fail "text: exit $?: $(cat "$OUT/text")"
grep -q "^$A -> $B: sw stamps" "$OUT/text" || fail "text: no '$A -> $B: sw stamps' line: $(head -5 "$OUT/text")"
grep -q "hwsw .*: skip (software stamps only" "$OUT/text" || fail "text: hwsw skip not said"

# 4. Verdicts follow the limits, and the exit status the verdicts: the
# generous limits above passed; an SD no stamp can meet fails.
jq -e '.verdict == "pass" and ([.checks[] | select(.check == "loopback")][0].verdict == "pass")' "$OUT/both.json" > /dev/null ||
	fail "both: loopback not passed under generous limits: $(jq -c '.checks' "$OUT/both.json")"
run --stamps sw --count 50 --json --limit loop.sw.sd_ns=0,0.001 --loopback "$A:$B" > "$OUT/strict.json" 2>&1
rc=$?
[ "$rc" = 4 ] || fail "impossible SD limit: exit $rc, want 4"
jq -e '[.checks[] | select(.check == "loopback")][0].items | any(.limit == "loop.sw.sd_ns" and .verdict == "fail")' "$OUT/strict.json" > /dev/null ||
	fail "impossible SD limit: no failed loop.sw.sd_ns item"

# 4b. --calibration: this host's stamp terms written from the loopback,
# tapless-calibration(5): sw terms for both ends, samples all the one-way
# samples of both directions. Without a true one-way, or with too few
# samples, nothing is written and the run fails.
cal=$OUT/x.cal
run --stamps sw --count 200 --rate 2000 --expect-ns 0 --calibration "$cal" --json \
	--loopback "$A:$B" > "$OUT/cal.json" 2> "$OUT/cal.err" || fail "calibration: exit $?: $(cat "$OUT/cal.err")"
if [ ! -f "$cal" ]; then
	fail "calibration: $cal not written"
else
	echo "validate: calibration: $(grep '^stamp' "$cal" | paste -sd ';')"
	got=$(jq '[.loopback.directions[].oneway_ns.count] | add' "$OUT/cal.json")
	[ "$(jq '[.loopback.directions[].received] | add' "$OUT/cal.json")" = 400 ] ||
		fail "calibration: not every frame received: $(jq -c '.loopback.directions' "$OUT/cal.json")"
	for d in tx rx; do
		grep -Eq "^stamp $d sw offset -?[0-9]+ spread [0-9]+ samples $got\$" "$cal" ||
			fail "calibration: no 'stamp $d sw offset N spread N samples $got' line: $(cat "$cal")"
	done
	head -1 "$cal" | grep -qx '# tapless calibration (tapless-calibration(5))' ||
		fail "calibration: first line: $(head -1 "$cal")"
	grep -q "^measured .*tapless validate --loopback $A:$B, 200 frames each way" "$cal" ||
		fail "calibration: no measured line: $(cat "$cal")"
	! grep -q '^stamp .. hw' "$cal" || fail "calibration: hw terms from sw stamps: $(cat "$cal")"
	jq -e --arg f "$cal" '.calibration.file == $f and (.calibration.terms | length) == 2' \
		"$OUT/cal.json" > /dev/null || fail "calibration: JSON: $(jq -c .calibration "$OUT/cal.json")"
	ls "$OUT" | grep -q '\.part$' && fail "calibration: a .part left: $(ls "$OUT")"
fi
run --stamps sw --count 50 --calibration "$OUT/none.cal" --loopback "$A:$B" > /dev/null 2> "$OUT/cal.err"
rc=$?
[ "$rc" = 1 ] || fail "calibration without --expect-ns: exit $rc, want 1"
grep -qF -- "--calibration needs the loopback's true one-way: --expect-ns or --cable-m" "$OUT/cal.err" ||
	fail "calibration without --expect-ns: message was: $(cat "$OUT/cal.err")"
run --stamps sw --one-way --count 50 --rate 2000 --cable-m 1 --calibration "$OUT/none.cal" \
	--loopback "$A:$B" > /dev/null 2> "$OUT/cal.err"
rc=$?
[ "$rc" = 2 ] || fail "calibration from 50 samples: exit $rc, want 2"
grep -qF "a calibration needs at least 100" "$OUT/cal.err" ||
	fail "calibration from 50 samples: message was: $(cat "$OUT/cal.err")"
[ ! -e "$OUT/none.cal" ] || fail "calibration: written without a true one-way or from too few samples"

# 5. Bad input: each fails, with a message naming the port.
bad() {	# NAME WANT ARGS...: exit status not 0, stderr holds WANT
	local name=$1 want=$2 rc
	shift 2
	run "$@" > "$OUT/bad.out" 2> "$OUT/bad.err"
	rc=$?
	[ "$rc" -ne 0 ] || fail "$name: exit status 0"
	grep -qF "$want" "$OUT/bad.err" || fail "$name: message was: $(cat "$OUT/bad.err")"
}
bad "no such port" "tapless-nosuch0: no such interface" --stamps sw --loopback "$A:tapless-nosuch0"
bad "hardware on veth" "$A has no hardware timestamping" --stamps hw --loopback "$A:$B"
bad "same port" "two different interface names" --loopback "$A:$A"
ip -n "$NS" link set "$B" down
bad "port down" "$B: interface is down" --stamps sw --loopback "$A:$B"
ip -n "$NS" link set "$B" up && up || fail "$B did not come back up"

# 6. A short run under valgrind: no leak, no invalid access.
if command -v valgrind > /dev/null; then
	ip netns exec "$NS" valgrind -q --leak-check=full --error-exitcode=99 \
		"$lc" validate --no-phc --limit loop.sw.sd_ns=1e7,1e8 --stamps sw --count 50 \
		--json --loopback "$A:$B" > /dev/null 2> "$OUT/vg.log"
	rc=$?
	[ "$rc" = 0 ] || fail "valgrind: exit $rc: $(head -20 "$OUT/vg.log")"
fi

# 7. Nothing left behind.
tl_cleanup
if ip netns list | grep -q "^tapless-lc-$$-"; then
	fail "namespace left behind: $(ip netns list | grep "^tapless-lc-$$-")"
fi

[ "$fails" -eq 0 ] && echo "ok: validate"
[ "$fails" -eq 0 ]
