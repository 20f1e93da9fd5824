#!/bin/bash
# tapless ifinfo: valid JSON for every interface, on the host and inside a
# namespace with a veth pair, where it must report software stamps and no PHC,
# the verdict with the next step, and no hwtstamp error;
# an unknown interface is an error with exit status 1.
set -u
. scripts/netns.sh
tl_init
tl_pair a b 198.18.1 || { echo "FAIL: could not build the namespaces"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

json=$(bin/tapless ifinfo --json) || fail "ifinfo --json on the host exited $?"
echo "$json" | jq -e '.interfaces | length >= 1' >/dev/null ||
	fail "host: not valid JSON or no interfaces: $json"
echo "$json" | jq -e '[.interfaces[] | has("name", "phc_index", "capabilities", "tx_types", "rx_filters", "hwtstamp", "stamps")] | all' >/dev/null ||
	fail "host: interface entries lack fields"

json=$(tl_exec a bin/tapless ifinfo --json "$TL_IF_A") || fail "ifinfo --json $TL_IF_A exited $?"
echo "$json" | jq -e --arg i "$TL_IF_A" '.interfaces[0] | .name == $i and .phc_index == null and .stamps == "software" and .kind == "veth"' >/dev/null ||
	fail "veth: expected software stamps and no PHC: $json"
echo "$json" | jq -e '.interfaces[0].capabilities | index("software-transmit") and index("software-receive")' >/dev/null ||
	fail "veth: software capabilities missing: $json"

# Sent frames: captured as sent on veth, as received on lo (where
# tapless-capd joins senders' stamps by flow instead).
json=$(tl_exec a bin/tapless ifinfo --json lo "$TL_IF_A")
echo "$json" | jq -e '[.interfaces[].sent_frames] == ["as received", "as sent"]' >/dev/null ||
	fail "sent_frames: want lo as received, veth as sent: $(echo "$json" | jq -c '[.interfaces[] | {name, sent_frames}]')"

text=$(tl_exec a bin/tapless ifinfo "$TL_IF_A")
echo "$text"
echo "$text" | grep -q "software only, no PHC" || fail "veth: text does not say 'software only, no PHC'"
# The verdict and the next step, and no error where there is simply no
# hardware stamping to configure.
echo "$text" | grep -q "verdict *usable with software stamps: expect .*s-level error; check with 'tapless validate --loopback $TL_IF_A:PEER'" ||
	fail "veth: no software-stamp verdict with the validate step"
echo "$text" | grep -q "hwtstamp config *none (the driver has no hardware stamping)" ||
	fail "veth: hwtstamp config not 'none (the driver has no hardware stamping)'"
echo "$text" | grep -q "not available" && fail "veth: a NIC without hardware stamping reported as an error"
json=$(tl_exec a bin/tapless ifinfo --json "$TL_IF_A")
echo "$json" | jq -e '.interfaces[0] | (.verdict | startswith("usable with software stamps")) and (.next_step | contains("tapless validate --loopback")) and .hwtstamp.error == null' >/dev/null ||
	fail "veth: JSON verdict, next_step or hwtstamp.error wrong: $(echo "$json" | jq -c '.interfaces[0] | {verdict, next_step, hwtstamp}')"

csv=$(tl_exec a bin/tapless ifinfo --csv)
[ "$(echo "$csv" | head -1 | cut -d, -f1)" = name ] || fail "csv: no header row: $csv"
[ "$(echo "$csv" | grep -c .)" -eq 3 ] || fail "csv: expected a header and two rows (lo, veth): $csv"

tl_exec a bin/tapless ifinfo tapless-nosuch0 2>"/tmp/tl-err.$$"
rc=$?
[ "$rc" -eq 1 ] || fail "unknown interface: exit $rc, want 1"
grep -q "tapless-nosuch0: no such interface" "/tmp/tl-err.$$" || fail "unknown interface: message was: $(cat /tmp/tl-err.$$)"
rm -f "/tmp/tl-err.$$"

bin/tapless nosuchcmd 2>/dev/null; [ $? -eq 1 ] || fail "unknown command must exit 1"
bin/tapless ifin 2>/dev/null; [ $? -eq 1 ] || fail "a prefix of a command must not run it"

[ "$fails" -eq 0 ] && echo "ok: ifinfo"
[ "$fails" -eq 0 ]
