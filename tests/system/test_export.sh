#!/bin/bash
# tapless export into a ClickHouse server of the test's own
# (tests/system/lib/clickhouse.sh: free ports, data under the test's
# temporary directory, stopped and removed on every exit), against
# tapless correlate on the same files.
#   1. sim captures (one plain with the venue out of sync for half a
#      second; one with every fault the generator has, a microsecond pcap
#      without directions, a UTC host and the algo out of sync): the
#      records through scripts/clickhouse/hops.sql give, per hop, the
#      correlator's messages and out_of_sync counts and in-sync count
#      exactly, its mean within 1 ns, its p50 and p99 within one stamp
#      quantum plus its histogram_error_ns; each host's rows (FINAL) are
#      its fix_messages, each host's transactions of each kind the
#      correlator's count.
#   2. a lab run (tapless lab run, its own lab, 1 rate, 2 s): the same
#      comparison on capd's files with sender stamps and real journals.
#      (The lab runs in the background while 6 and 7 run; it is
#      compared after 7.)
#   3. the server SIGKILLed mid-export (small batches): the exporter says
#      it waits and keeps running, the server restarted on the same
#      directory and port, the exporter exits 0; rows (FINAL) and a hash of
#      every column summed over them equal those of the same export to a
#      TSV file loaded into a scratch table; transactions likewise; the
#      state files say each host's full count. Again, but the exporter
#      sent SIGTERM while it waits: exit 2, its state no further than the
#      table; the server back, the next run skips what the state says and
#      completes the table to the TSV's rows. And an answer lost (a proxy
#      passes an insert to the server and drops its answer): the batch is
#      sent again, raw count() one batch over, FINAL and hops.sql exact.
#      And two exporters on one state: the second refuses (exit 1, the
#      state file and the first's pid named) while the first runs, which
#      completes the table to the TSV's rows, none twice, and its state
#      files to the TSV's counts.
#   4. a rerun: exit 0, everything already in, raw count() unchanged;
#      --fresh: count() FINAL unchanged, hops.sql (no FINAL) still
#      correlate's, and raw count() unchanged once OPTIMIZE ... FINAL has
#      merged.
#   5. a capture cut mid-block, one with bytes garbled, one with a block
#      length that cannot be: export exits as correlate does, its "inputs"
#      counters (packets, fix_messages, bad_frames, bad_checksum,
#      bad_framing, error) are correlate's, each host's rows its
#      fix_messages; one that is no capture at all: exit 1 as correlate,
#      the file and offset 0 named, no row in.
#   6. refusals: a wrong password (exit 1, the refusal named, nothing
#      in), a missing table (exit 1, schema.sql named), a table with a
#      column of another type or name (exit 1, the column named), no
#      server and --retry-for 2 (exit 2); the right password, from a file
#      or in the URL, works and never appears in the output; -u and
#      --password-file win over the URL's credentials; a password over
#      http:// gets one warning line naming the URL without it, an export
#      without a password none.
#   7. --follow over a directory fed as tapless-capd writes it: rows come
#      while it is fed; after SIGTERM the table holds what a whole-file
#      export of the directory gives (rows and checksum, no row twice);
#      restarted on the same state it adds nothing until new files come
#      (while the server is down: it waits, and sends them once the server
#      is back), then adds them once: again the whole-file export's rows.
# No timing assertion: every wait polls with a generous limit.
set -u
cd "$(dirname "$0")/../.." || exit 2
name=export
. tests/system/lib/clickhouse.sh
ch_available > /dev/null || { echo "$name: $(ch_available)"; exit 0; }
for t in jq python3; do
	command -v $t > /dev/null || { echo "$name: FAIL: $t not found (scripts/install-deps)"; exit 1; }
done

d=$(mktemp -d /tmp/tapless-export.XXXXXX)
export TAPLESS_LAB_STATE=$d/labstate
pids=()
labs=()
finish() {
	local p id
	for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
	for id in "${labs[@]}"; do bin/tapless lab down --id "$id" > /dev/null 2>&1; done
	ch_cleanup
	if [ "${TL_KEEP:-0}" = 1 ]; then echo "$name: kept $d"; else rm -rf "$d"; fi
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
stage() { echo "== $* (at ${SECONDS} s)"; }
T=bin/tapless
L=tests/system/lib
SCHEMA=scripts/clickhouse/schema.sql
HOPS=scripts/clickhouse/hops.sql
for f in $SCHEMA $HOPS; do
	[ -s "$f" ] || { echo "$name: FAIL: $f missing"; exit 1; }
done

CH_DIR=$d/ch
CH_NO_TRAP=1
ch_start || { echo "$name: FAIL: no ClickHouse server"; exit 1; }
ch_load_schema || { echo "$name: FAIL: $SCHEMA does not load"; exit 1; }
echo "$name: clickhouse-server $(ch_query 'SELECT version()') on $CH_URL, data in $CH_DIR"

# q SQL: one value (or rows, tab-separated).
q() { ch_query "$1" 2>&1; }
# Tables emptied by dropping them: 18.16's TRUNCATE leaves the parts on
# disk until they age out, and a server killed and restarted (case 3)
# loads them again.
reset_tables() {
	q "DROP TABLE IF EXISTS tapless.records" > /dev/null
	q "DROP TABLE IF EXISTS tapless.transactions" > /dev/null
	ch_load_schema || fail "$SCHEMA does not load"
}
# Every column of tapless.records, for a checksum of whole rows.
COLS=$(q "SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns
	WHERE database = 'tapless' AND table = 'records'")
rowsum() { q "SELECT count(), sum(cityHash64($COLS)) FROM $1"; }
# load_check TABLE FILE: TABLE (tapless.check or tapless.check_txn) made
# anew with the columns of records or transactions, FILE (TSV with names)
# loaded into it.
load_check() {
	local like=tapless.records
	[ "$1" = tapless.check_txn ] && like=tapless.transactions
	q "DROP TABLE IF EXISTS $1" > /dev/null
	q "CREATE TABLE $1 AS $like ENGINE = Memory" > /dev/null
	ch_query "INSERT INTO $1 FORMAT TSVWithNames" < "$2" ||
		fail "$2 does not load into ClickHouse"
}

# sim NAME ARGS...: generate into $d/NAME.
sim() {
	local n=$1
	shift
	$T sim --output "$d/$n" "$@" > "$d/$n.sim.log" 2>&1 ||
		{ fail "$n: sim exit $?: $(cat "$d/$n.sim.log")"; return 1; }
}

# inputs NAME: the options and operands correlate and export share, in
# ARGS: both hosts of sim NAME with their journals and topology.
inputs() {
	ARGS=(-s algo="$d/$1/algo.journal" -s venue="$d/$1/venue.journal"
	      -t "$d/$1/topology" "${@:2}"
	      algo="$(ls "$d/$1"/algo.pcap* | head -1)"
	      venue="$(ls "$d/$1"/venue.pcap* | head -1)")
}

# export_ch NAME [OPTIONS]: tapless export of ARGS into the server, state
# in $d/state-NAME, JSON summary in $d/NAME.exp.json, stderr in
# $d/NAME.exp.err; its exit status in RC.
export_ch() {
	local n=$1
	shift
	$T export -j --clickhouse "$CH_URL" --state "$d/state-$n" "$@" "${ARGS[@]}" \
		> "$d/$n.exp.json" 2> "$d/$n.exp.err"
	RC=$?
}

# correlate_json NAME: tapless correlate --json of ARGS into
# $d/NAME.corr.json; its exit status in RC.
correlate_json() {
	$T correlate --json "${ARGS[@]}" > "$d/$1.corr.json" 2> "$d/$1.corr.err"
	RC=$?
}

# per_host NAME: each host's rows (FINAL) against its fix_messages, its
# transactions of each kind against the correlator's count, and the
# exporter's summary against both.
per_host() {
	local n=$1 h want got
	for h in $(jq -r '.inputs[].host' "$d/$n.corr.json"); do
		want=$(jq --arg h "$h" '.inputs[] | select(.host == $h) | .fix_messages' "$d/$n.corr.json")
		got=$(q "SELECT count() FROM tapless.records FINAL WHERE host = '$h'")
		[ "$got" = "$want" ] || fail "$n: $h: $got rows in tapless.records, correlate saw $want FIX messages"
		jq -e --arg h "$h" --argjson w "$want" '.export[] | select(.host == $h)
			| .records + .records_already_in == $w' "$d/$n.exp.json" > /dev/null ||
			fail "$n: $h: the export summary does not add up to $want: $(jq -c .export "$d/$n.exp.json")"
	done
	q "SELECT host, toString(kind), count() FROM tapless.transactions FINAL
		GROUP BY host, kind ORDER BY host, kind FORMAT JSONEachRow" > "$d/$n.txn.jsonl"
	jq -n -e --slurpfile s "$d/$n.txn.jsonl" --slurpfile c "$d/$n.corr.json" '
		($s | map({key: (.host + "/" + .["toString(kind)"]), value: (.["count()"] | tonumber)}) | from_entries) as $sql
		| ($c[0].transactions | map(select(.count > 0) | {key: (.host + "/" + .name), value: .count}) | from_entries) as $cor
		| $sql == $cor' > /dev/null ||
		fail "$n: transactions in the table $(jq -s -c . "$d/$n.txn.jsonl") are not correlate's $(jq -c '[.transactions[] | {host, name, count}]' "$d/$n.corr.json")"
}

# agree NAME: scripts/clickhouse/hops.sql on the table against
# $d/NAME.corr.json, per hop (flow "all", no rate bucket): messages,
# out_of_sync and count exactly, mean within 1 ns, p50 and p99 within a
# stamp quantum (the coarsest input's resolution_ns) plus the correlator's
# histogram_error_ns.
agree() {
	local n=$1
	ch_query_file "$HOPS" --format=JSONEachRow > "$d/$n.hops.jsonl" 2> "$d/$n.hops.err" ||
		{ fail "$n: hops.sql: $(cat "$d/$n.hops.err")"; return; }
	jq -n -r --slurpfile s "$d/$n.hops.jsonl" --slurpfile c "$d/$n.corr.json" -f /dev/stdin \
		> "$d/$n.agree" 2>&1 << 'EOF'
def num: if type == "string" then tonumber else . end;
def norm: with_entries(.value |= (if type == "string" and test("^-?[0-9.]+(e[-+]?[0-9]+)?$") then tonumber else . end));
($c[0].inputs | map(.resolution_ns) | max) as $q
| ($c[0].histogram_error_ns // 0) as $he
| [$c[0].hops[] | select(.flow == "all" and (has("rate") | not))] as $ch
| ($s | map(norm)) as $sq
| (["hops: correlate \($ch | length), hops.sql \($sq | length); quantum \($q) ns, histogram error \($he) ns"]
   + [$ch[] | . as $h
      | ($sq | map(select(.from_host == $h.from and .to_host == $h.to))) as $m
      | ($h.latency_ns // {count: 0}) as $l
      | "\($h.from) -> \($h.to): correlate messages \($h.messages) out_of_sync \($h.out_of_sync.messages) count \($l.count) mean \($l.mean) p50 \($l.p50) p99 \($l.p99)",
        (if ($m | length) != 1 then "MISMATCH \($h.from) -> \($h.to): \($m | length) rows in hops.sql"
         else $m[0] as $r
         | "\($h.from) -> \($h.to): hops.sql  messages \($r.messages) out_of_sync \($r.out_of_sync) count \($r.count) mean \($r.mean) p50 \($r.p50) p99 \($r.p99)",
           (if $r.messages != $h.messages then "MISMATCH messages" else empty end),
           (if $r.out_of_sync != $h.out_of_sync.messages then "MISMATCH out_of_sync" else empty end),
           (if $r.count != $l.count then "MISMATCH count" else empty end),
           (if $l.count > 0 then
              (if (($r.mean - $l.mean) | fabs) > 1 then "MISMATCH mean" else empty end),
              (if (($r.p50 - $l.p50) | fabs) > $q + $he then "MISMATCH p50" else empty end),
              (if (($r.p99 - $l.p99) | fabs) > $q + $he then "MISMATCH p99" else empty end)
            else empty end)
         end)]
   + [$sq[] | . as $r | select([$ch[] | select(.from == $r.from_host and .to == $r.to_host)] | length == 0)
      | "MISMATCH hops.sql has \($r.from_host) -> \($r.to_host), correlate has not"])
| .[]
EOF
	sed "s/^/$n: /" "$d/$n.agree"
	if [ ! -s "$d/$n.agree" ] || grep -q "^MISMATCH\|^jq: " "$d/$n.agree"; then
		fail "$n: hops.sql disagrees with tapless correlate (above)"
	fi
	jq -e '[.hops[] | select(.flow == "all")] | length >= 2' "$d/$n.corr.json" > /dev/null ||
		fail "$n: correlate found fewer than two hops"
}

# compare NAME: a whole comparison of sim/lab NAME (ARGS set): export into
# emptied tables, correlate, per_host, agree.
compare() {
	local n=$1
	reset_tables
	export_ch "$n"
	[ "$RC" -eq 0 ] || { fail "$n: export exit $RC: $(head -5 "$d/$n.exp.err")"; return 1; }
	correlate_json "$n"
	[ "$RC" -eq 0 ] || { fail "$n: correlate exit $RC: $(head -5 "$d/$n.corr.err")"; return 1; }
	per_host "$n"
	agree "$n"
}

# ---- 1. sim captures ----
stage "1. sim captures"
sim s1 --seed 11 --rate 2000 --duration 3 --unsync venue=1-1.5 && inputs s1 && compare s1
jq -e '[.hops[] | select(.flow == "all") | .out_of_sync.messages] | add > 0' "$d/s1.corr.json" > /dev/null ||
	fail "s1: no sample out of sync"
jq -e '[.hops[] | select(.flow == "all") | .messages] | min > 0 and add >= 5000' "$d/s1.corr.json" > /dev/null ||
	fail "s1: want both hops and thousands of messages: $(jq -c '[.hops[] | select(.flow == "all") | {from, to, messages}]' "$d/s1.corr.json")"
s1_rows=$(q "SELECT count() FROM tapless.records")
s1_sum=$(rowsum "tapless.records FINAL")

# ---- 4. reruns (on s1, still in the tables) ----
stage "4. reruns (on s1, still in the tables)"
export_ch s1
[ "$RC" -eq 0 ] || fail "rerun: exit $RC: $(head -3 "$d/s1.exp.err")"
jq -e '.export | length == 2 and all(.records == 0 and .records_already_in > 0 and .transactions == 0)' \
	"$d/s1.exp.json" > /dev/null || fail "rerun: not everything already in: $(jq -c .export "$d/s1.exp.json")"
[ "$(q "SELECT count() FROM tapless.records")" = "$s1_rows" ] ||
	fail "rerun: raw count() $(q "SELECT count() FROM tapless.records"), was $s1_rows"
per_host s1
export_ch s1 --fresh
[ "$RC" -eq 0 ] || fail "rerun --fresh: exit $RC: $(head -3 "$d/s1.exp.err")"
jq -e '.export | all(.records > 0 and .records_already_in == 0)' "$d/s1.exp.json" > /dev/null ||
	fail "rerun --fresh: nothing sent again: $(jq -c .export "$d/s1.exp.json")"
raw=$(q "SELECT count() FROM tapless.records")
# hops.sql reads without FINAL: rows in twice count once.
cp "$d/s1.corr.json" "$d/s1-twice.corr.json"
agree s1-twice
[ "$(rowsum "tapless.records FINAL")" = "$s1_sum" ] ||
	fail "rerun --fresh: FINAL rows and checksum $(rowsum "tapless.records FINAL"), were $s1_sum"
q "OPTIMIZE TABLE tapless.records FINAL" > /dev/null
q "OPTIMIZE TABLE tapless.transactions FINAL" > /dev/null
echo "rerun --fresh: raw count() $raw before OPTIMIZE FINAL, $(q "SELECT count() FROM tapless.records") after (was $s1_rows)"
[ "$(q "SELECT count() FROM tapless.records")" = "$s1_rows" ] ||
	fail "rerun --fresh: raw count() after OPTIMIZE FINAL $(q "SELECT count() FROM tapless.records"), was $s1_rows"
per_host s1

sim s2 --seed 12 --rate 5000 --duration 1.5 --retransmit 0.02 --reorder 0.02 --mss 80 \
	--coalesce 0.5 --start-late venue=0.3 --noise 0.02 --pure-acks 0.3 \
	--unsync algo=0.6-0.8 --format algo=pcap-us --timescale venue=utc &&
	inputs s2 --timescale algo=tai && compare s2
jq -e '[.inputs[] | .resolution_ns] | max == 1000' "$d/s2.corr.json" > /dev/null ||
	fail "s2: the microsecond capture was not noticed"
jq -e '[.hops[] | select(.flow == "all") | .out_of_sync.messages] | add > 0' "$d/s2.corr.json" > /dev/null ||
	fail "s2: no sample out of sync"

# ---- 3. the server killed mid-export ----
stage "3. the server killed mid-export"
sim big --seed 13 --rate 20000 -n 150000 && inputs big
$T export -o "$d/big.tsv" --txn-output "$d/big.txn.tsv" "${ARGS[@]}" > "$d/big.file.out" 2>&1 ||
	fail "big: export to a file exit $?: $(tail -3 "$d/big.file.out")"
want_rows=$(( $(wc -l < "$d/big.tsv") - 1 ))
[ "$want_rows" -gt 250000 ] || fail "big: only $want_rows rows in the TSV"

# kill_mid NAME: into emptied tables, tapless export of the big capture in
# small batches (state in $d/state-NAME, pid in EP); once 20000 rows are
# in, the server killed; returns once the exporter says it waits (1 if it
# ended first or never said so).
kill_mid() {
	local n=0
	reset_tables
	$T export -j --clickhouse "$CH_URL" --state "$d/state-$1" --batch 1000 "${ARGS[@]}" \
		> "$d/$1.exp.json" 2> "$d/$1.exp.err" &
	EP=$!
	pids+=("$EP")
	for _ in $(seq 1200); do
		n=$(q "SELECT count() FROM tapless.records")
		[ "$n" -ge 20000 ] 2> /dev/null && break
		kill -0 "$EP" 2> /dev/null || break
		sleep 0.05
	done
	if ! kill -0 "$EP" 2> /dev/null; then
		fail "$1: the export ended ($n rows in) before the server could be killed: want a bigger capture"
		return 1
	fi
	ch_kill
	echo "$1: server killed with $n rows in"
	for _ in $(seq 600); do
		grep -q "waiting for it, retrying" "$d/$1.exp.err" && return 0
		kill -0 "$EP" 2> /dev/null || break
		sleep 0.05
	done
	fail "$1: the exporter does not say it waits: $(head -3 "$d/$1.exp.err")"
	return 1
}

# load_tsv NAME: the file export's rows loaded into tapless.check and
# tapless.check_txn (again after each restart: Memory tables do not
# outlive one); their checksum in want_sum.
load_tsv() {
	load_check tapless.check "$d/big.tsv"
	load_check tapless.check_txn "$d/big.txn.tsv"
	want_sum=$(rowsum tapless.check)
	[ "${want_sum%%	*}" = "$want_rows" ] || fail "$1: $want_rows rows in the TSV, $want_sum loaded"
}

# like_tsv NAME: the tables (FINAL) hold the TSV's rows, checksums equal.
like_tsv() {
	local got want
	got=$(rowsum "tapless.records FINAL")
	[ "$got" = "$want_sum" ] || fail "$1: FINAL rows and checksum $got, the TSV's $want_sum"
	got=$(q "SELECT count(), sum(cityHash64(host, kind, ts, latency_ns)) FROM tapless.transactions FINAL")
	want=$(q "SELECT count(), sum(cityHash64(host, kind, ts, latency_ns)) FROM tapless.check_txn")
	[ "$got" = "$want" ] && [ "${want%%	*}" -gt 0 ] ||
		fail "$1: transactions (FINAL) and checksum $got, the TSV's $want"
}

if kill_mid big; then
	sleep 3
	kill -0 "$EP" 2> /dev/null || fail "big: the exporter did not wait for the server"
	ch_restart || fail "big: the server did not restart"
	for _ in $(seq 1200); do
		kill -0 "$EP" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$EP" 2> /dev/null && { fail "big: the exporter still runs 2 min after the restart"; kill -KILL "$EP"; }
	wait "$EP"
	rc=$?
	[ "$rc" -eq 0 ] || fail "big: exit $rc after the restart: $(tail -3 "$d/big.exp.err")"
	grep "waiting for it\|answers again" "$d/big.exp.err" | sed 's/^/big: /'
	grep -q "answers again" "$d/big.exp.err" || fail "big: the exporter does not say the server is back"
	echo "big: $(jq -c .batches "$d/big.exp.json"); raw count() $(q "SELECT count() FROM tapless.records"), FINAL $(q "SELECT count() FROM tapless.records FINAL"), TSV $want_rows"
	load_tsv big
	like_tsv big
	for h in algo venue; do
		want=$(q "SELECT count() FROM tapless.check WHERE host = '$h'")
		got=$(sed -n 's/^records //p' "$d/state-big/$h"-*.state)
		[ "$got" = "$want" ] || fail "big: $h's state file says $got records, the TSV has $want"
	done
fi

# SIGTERM while the server is down: exit 2, the state files say no more
# than the table holds; the next run, the server back, completes it.
if kill_mid term; then
	kill -TERM "$EP"
	wait "$EP"
	rc=$?
	echo "term: exit $rc: $(grep -m1 "stopped while waiting" "$d/term.exp.err")"
	[ "$rc" -eq 2 ] && grep -q "stopped while waiting for ClickHouse" "$d/term.exp.err" ||
		fail "term: exit $rc after SIGTERM while waiting: $(tail -3 "$d/term.exp.err")"
	ch_restart || fail "term: the server did not restart"
	load_tsv term
	declare -A took
	for h in algo venue; do
		took[$h]=$(sed -n 's/^records //p' "$d/state-term/$h"-*.state 2> /dev/null)
		in=$(q "SELECT count() FROM tapless.records FINAL WHERE host = '$h'")
		echo "term: $h: the state says ${took[$h]:-none} records taken, the table has $in"
		[ "${took[$h]:-0}" -le "$in" ] 2> /dev/null || fail "term: $h: the state says ${took[$h]} records, the table has $in"
	done
	export_ch term --batch 1000
	[ "$RC" -eq 0 ] || fail "term: the next run: exit $RC: $(tail -3 "$d/term.exp.err")"
	for h in algo venue; do
		want=$(q "SELECT count() FROM tapless.check WHERE host = '$h'")
		jq -e --arg h "$h" --argjson took "${took[$h]:-0}" --argjson w "$want" '.export[] | select(.host == $h)
			| .records_already_in == $took and .records + .records_already_in == $w' "$d/term.exp.json" > /dev/null ||
			fail "term: $h: the next run did not go on after the ${took[$h]:-0} records taken: $(jq -c .export "$d/term.exp.json")"
	done
	like_tsv term
fi

# Two exporters on one state: the first, in small batches, is sending
# when the second starts on the same captures and state directory. The
# second refuses before the first ends; the first completes the table.
reset_tables
$T export -j --clickhouse "$CH_URL" --state "$d/state-lock" --batch 1000 "${ARGS[@]}" \
	> "$d/lock1.exp.json" 2> "$d/lock1.exp.err" &
EP=$!
pids+=("$EP")
n=0
for _ in $(seq 1200); do
	n=$(q "SELECT count() FROM tapless.records")
	[ "$n" -ge 20000 ] 2> /dev/null && break
	kill -0 "$EP" 2> /dev/null || break
	sleep 0.05
done
if ! kill -0 "$EP" 2> /dev/null; then
	fail "lock: the first export ended ($n rows in) before the second could start"
else
	$T export -j --clickhouse "$CH_URL" --state "$d/state-lock" --batch 1000 "${ARGS[@]}" \
		> "$d/lock2.exp.json" 2> "$d/lock2.exp.err"
	rc=$?
	kill -0 "$EP" 2> /dev/null && first=running || first=ended
	echo "lock: the second exporter, $n rows in: exit $rc, the first $first: $(head -1 "$d/lock2.exp.err")"
	[ "$rc" -eq 1 ] || fail "lock: the second exporter on the same state: exit $rc, want 1: $(tail -3 "$d/lock2.exp.err")"
	[ "$first" = running ] || fail "lock: the second exporter returned only after the first ended"
	grep -q "state-lock/[a-z]*-[0-9a-f]*\.state: another tapless export (pid $EP)" "$d/lock2.exp.err" ||
		fail "lock: the refusal names neither the state file nor pid $EP: $(head -3 "$d/lock2.exp.err")"
	wait "$EP"
	rc=$?
	[ "$rc" -eq 0 ] || fail "lock: the first exporter: exit $rc: $(tail -3 "$d/lock1.exp.err")"
	load_tsv lock
	like_tsv lock
	fin=$(q "SELECT count() FROM tapless.records FINAL")
	raw=$(q "SELECT count() FROM tapless.records")
	[ "$raw" = "$fin" ] || fail "lock: raw count() $raw, FINAL $fin: rows sent twice"
	for h in algo venue; do
		want=$(q "SELECT count() FROM tapless.check WHERE host = '$h'")
		got=$(sed -n 's/^records //p' "$d/state-lock/$h"-*.state)
		[ "$got" = "$want" ] || fail "lock: $h's state file says $got records, the TSV has $want"
	done
	ls "$d/state-lock"/*.lock > /dev/null 2>&1 && fail "lock: lock files left after the exporter ended: $(ls "$d/state-lock")"
fi

# An answer lost: a proxy between the exporter and the server passes the
# third insert of records to the server, takes its answer and closes the
# connection without passing it on. The exporter sends that batch again;
# merges stopped, the raw count() is one batch over, FINAL is s1's rows,
# hops.sql (no FINAL) correlate's.
inputs s1
reset_tables
python3 - "$CH_HTTP_PORT" 3 > "$d/proxy.out" 2> "$d/proxy.err" << 'EOF' &
import socket, sys, threading
up_port, lose = int(sys.argv[1]), int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
print(ls.getsockname()[1], flush=True)
inserts = 0
lock = threading.Lock()

def recv_request(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None
        buf += d
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    n = 0
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(body) < n:
        d = c.recv(65536)
        if not d:
            return None
        body += d
    lines = [l for l in lines if not l.lower().startswith(b"connection:")]
    return lines, body

def serve(c):
    global inserts
    with c:
        while True:
            r = recv_request(c)
            if r is None:
                return
            lines, body = r
            u = socket.create_connection(("127.0.0.1", up_port))
            u.sendall(b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n" + body)
            resp = b""
            while True:
                d = u.recv(65536)
                if not d:
                    break
                resp += d
            u.close()
            drop = False
            if b"INSERT%20INTO%20tapless.records" in lines[0]:
                with lock:
                    inserts += 1
                    drop = inserts == lose
            if drop:
                print("lost the answer to insert %d: %s" % (inserts, resp.split(b"\r\n")[0].decode()), flush=True)
                return
            c.sendall(resp)
            return

while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
pp=$!
pids+=("$pp")
for _ in $(seq 100); do [ -s "$d/proxy.out" ] && break; sleep 0.05; done
q "SYSTEM STOP MERGES" > /dev/null
$T export -j --clickhouse "http://127.0.0.1:$(head -1 "$d/proxy.out")/" --state "$d/state-lost" --batch 1000 \
	"${ARGS[@]}" > "$d/lost.exp.json" 2> "$d/lost.exp.err"
rc=$?
raw=$(q "SELECT count() FROM tapless.records")
fin=$(rowsum "tapless.records FINAL")
q "SYSTEM START MERGES" > /dev/null
kill "$pp" 2> /dev/null
echo "lost: exit $rc, $(sed -n 2p "$d/proxy.out"); $(jq -c .batches "$d/lost.exp.json"); raw count() $raw, FINAL ${fin%%	*}"
[ "$rc" -eq 0 ] || fail "lost: exit $rc: $(tail -3 "$d/lost.exp.err")"
grep -q "^lost the answer to insert 3" "$d/proxy.out" || fail "lost: the proxy lost no answer: $(cat "$d/proxy.out" "$d/proxy.err")"
[ "$fin" = "$s1_sum" ] || fail "lost: FINAL rows and checksum $fin, s1's $s1_sum"
[ "$raw" = $((${fin%%	*} + 1000)) ] || fail "lost: raw count() $raw, want FINAL's ${fin%%	*} + the 1000 rows sent again"
cp "$d/s1.corr.json" "$d/lost.corr.json"
agree lost

# ---- 5. corrupt captures ----
stage "5. corrupt captures"
# corrupt MODE IN OUT: OUT is IN cut in the middle of its middle block
# (cut), with 8 runs of 3 bytes overwritten, seeded (garble), its first
# block's type overwritten (head), or its 100th block's length made 7
# (badlen).
corrupt() {
	python3 - "$@" << 'EOF'
import random, struct, sys
mode, src, dst = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
if mode == "cut":
    off, blocks = 0, []
    while off + 12 <= len(data):
        blen = struct.unpack_from("<I", data, off + 4)[0]
        blocks.append((off, blen))
        off += blen
    o, n = blocks[len(blocks) // 2]
    data = data[:o + n // 2]
    print("cut at byte %d, inside the block at %d (%d bytes)" % (len(data), o, n))
elif mode == "head":
    data[0:4] = b"XXXX"
    print("the first block's type overwritten")
elif mode == "badlen":
    off = 0
    for _ in range(100):
        off += struct.unpack_from("<I", data, off + 4)[0]
    struct.pack_into("<I", data, off + 4, 7)
    print("block 100, at byte %d, says its length is 7" % off)
else:
    rng = random.Random(5)
    for _ in range(8):
        at = rng.randrange(len(data) // 10, len(data) - 16)
        data[at:at + 3] = bytes(rng.randrange(256) for _ in range(3))
    print("8 runs of 3 bytes garbled")
open(dst, "wb").write(data)
EOF
}
mkdir -p "$d/bad"
for mode in cut garble badlen head; do
	corrupt $mode "$d/s1/venue.pcapng" "$d/bad/venue-$mode.pcapng" | sed "s/^/$mode: /"
	ARGS=(-s algo="$d/s1/algo.journal" -s venue="$d/s1/venue.journal" -t "$d/s1/topology"
	      algo="$d/s1/algo.pcapng" venue="$d/bad/venue-$mode.pcapng")
	reset_tables
	export_ch $mode
	erc=$RC
	correlate_json $mode
	echo "$mode: export exit $erc, correlate exit $RC; venue: $(jq 2> /dev/null -c '.inputs[] | select(.host == "venue") | {packets, fix_messages, bad_frames, bad_checksum: .streams.bad_checksum, bad_framing: .streams.bad_framing, error}' "$d/$mode.corr.json")"
	[ "$erc" -eq "$RC" ] || fail "$mode: export exit $erc, correlate $RC: $(head -3 "$d/$mode.exp.err")"
	if [ "$mode" = head ]; then
		echo "head: $(head -1 "$d/$mode.exp.err")"
		grep -q "venue-head.pcapng: offset 0: not a pcap or pcapng file" "$d/$mode.exp.err" ||
			fail "head: the error does not name the file and offset: $(head -3 "$d/$mode.exp.err")"
		[ "$erc" -eq 1 ] && [ "$(q "SELECT count() FROM tapless.records")" = 0 ] ||
			fail "head: exit $erc, $(q "SELECT count() FROM tapless.records") rows inserted"
		continue
	fi
	jq -n -e --slurpfile e "$d/$mode.exp.json" --slurpfile c "$d/$mode.corr.json" '
		def pick: [.[] | {host, packets, fix_messages, bad_frames, bad_checksum: .streams.bad_checksum,
			bad_framing: .streams.bad_framing, error}] | sort_by(.host);
		($e[0].inputs | pick) == ($c[0].inputs | pick)' > /dev/null ||
		fail "$mode: export's inputs $(jq -c '[.inputs[] | {host, packets, fix_messages, bad_frames, streams, error}]' "$d/$mode.exp.json") are not correlate's $(jq -c '[.inputs[] | {host, packets, fix_messages, bad_frames, streams, error}]' "$d/$mode.corr.json")"
	per_host $mode
done
for mode in cut badlen; do
	jq -e '.inputs[] | select(.host == "venue") | .error != null' "$d/$mode.corr.json" > /dev/null ||
		fail "$mode: the reader did not notice the damage"
done
jq -e '[.inputs[] | select(.host == "venue") | .bad_frames, .streams.bad_checksum, .streams.bad_framing,
	(.error // empty | 1)] | add > 0' "$d/garble.corr.json" > /dev/null || fail "garble: the reader noticed nothing"

# The lab run of case 2 needs no server: started here, in the
# background, it runs while cases 6 and 7 do (mostly waits), and is
# compared after 7.
if [ "$(id -u)" -eq 0 ]; then
	$T lab run --output "$d/lab" --rates 2000 --duration 2 --cal-duration 0 --no-report --clocks system \
		> "$d/lab.out" 2> "$d/lab.log" &
	lp=$!
	pids+=("$lp")
fi

# ---- 6. refusals ----
stage "6. refusals"
inputs s1
reset_tables
echo wrong > "$d/pw.bad"
echo "$CH_WRITER_PASSWORD" > "$d/pw.good"
export_ch pw -u writer --password-file "$d/pw.bad"
echo "wrong password: exit $RC: $(grep -v "in clear" "$d/pw.exp.err" | head -1)"
[ "$RC" -eq 1 ] && grep -q "ClickHouse refused us" "$d/pw.exp.err" ||
	fail "wrong password: exit $RC: $(head -3 "$d/pw.exp.err")"
[ "$(q "SELECT count() FROM tapless.records")" = 0 ] || fail "wrong password: rows inserted"
export_ch pw -u writer --password-file "$d/pw.good"
[ "$RC" -eq 0 ] && [ "$(q "SELECT count() FROM tapless.records")" -gt 0 ] ||
	fail "right password: exit $RC: $(head -3 "$d/pw.exp.err")"
reset_tables
$T export -j --clickhouse "http://writer:$CH_WRITER_PASSWORD@127.0.0.1:$CH_HTTP_PORT/" --state "$d/state-url" \
	"${ARGS[@]}" > "$d/url.exp.json" 2> "$d/url.exp.err" ||
	fail "password in the URL: exit $?: $(head -3 "$d/url.exp.err")"
[ "$(q "SELECT count() FROM tapless.records")" -gt 0 ] || fail "password in the URL: nothing inserted"
# The options' credentials win over the URL's.
reset_tables
$T export -j --clickhouse "http://writer:wrong@127.0.0.1:$CH_HTTP_PORT/" -u writer --password-file "$d/pw.good" \
	--state "$d/state-both" "${ARGS[@]}" > "$d/both.exp.json" 2> "$d/both.exp.err" ||
	fail "a wrong password in the URL, the right one in --password-file: exit $?: $(head -3 "$d/both.exp.err")"
[ "$(q "SELECT count() FROM tapless.records")" -gt 0 ] || fail "--password-file over the URL's: nothing inserted"
# A password over http:// is warned of, once, with the URL and without
# the password (the grep below); none without a password (s1's runs).
n=$(grep -c "tapless export: the password goes to http://127.0.0.1:$CH_HTTP_PORT/ in clear" "$d/url.exp.err")
echo "password over http://: $n warning: $(grep -m1 "in clear" "$d/url.exp.err")"
[ "$n" = 1 ] || fail "password in the URL over http://: $n warnings, want 1: $(head -3 "$d/url.exp.err")"
grep -q "in clear" "$d/s1.exp.err" && fail "no password, yet a warning: $(grep "in clear" "$d/s1.exp.err")"
grep -rqF "$CH_WRITER_PASSWORD" "$d/url.exp.json" "$d/url.exp.err" "$d/state-url" "$d/pw.exp.json" "$d/pw.exp.err" "$d/state-pw" &&
	fail "the password is in the summary, a message or a state file"
reset_tables
export_ch nt --table tapless.nothere
echo "missing table: exit $RC: $(head -1 "$d/nt.exp.err")"
[ "$RC" -eq 1 ] && grep -q "tapless.nothere.*create it with scripts/clickhouse/schema.sql" "$d/nt.exp.err" ||
	fail "missing table: exit $RC: $(head -3 "$d/nt.exp.err")"
q "CREATE TABLE tapless.badtype AS tapless.records" > /dev/null
q "ALTER TABLE tapless.badtype MODIFY COLUMN wire UInt16" > /dev/null
export_ch bt --table tapless.badtype
echo "column of another type: exit $RC: $(head -1 "$d/bt.exp.err")"
[ "$RC" -eq 1 ] && grep -q "tapless.badtype.*'wire UInt16'" "$d/bt.exp.err" ||
	fail "a column of another type: exit $RC: $(head -3 "$d/bt.exp.err")"
q "CREATE TABLE tapless.badname AS tapless.records" > /dev/null
q "ALTER TABLE tapless.badname DROP COLUMN ord_status" > /dev/null
q "ALTER TABLE tapless.badname ADD COLUMN ord_state String AFTER side" > /dev/null
export_ch bn --table tapless.badname
echo "column of another name: exit $RC: $(head -1 "$d/bn.exp.err")"
[ "$RC" -eq 1 ] && grep -q "tapless.badname.*'ord_state String'.*'ord_status String'" "$d/bn.exp.err" ||
	fail "a column of another name: exit $RC: $(head -3 "$d/bn.exp.err")"
[ "$(q "SELECT count() FROM tapless.records") $(q "SELECT count() FROM tapless.badtype") $(q "SELECT count() FROM tapless.badname")" = "0 0 0" ] ||
	fail "refused exports inserted rows"
port=$(ch_free_ports | cut -d' ' -f1)
t0=$SECONDS
timeout 120 $T export --clickhouse "http://127.0.0.1:$port/" --state "$d/state-down" --retry-for 2 "${ARGS[@]}" \
	> "$d/down.out" 2> "$d/down.err"
rc=$?
echo "no server: exit $rc after $((SECONDS - t0)) s: $(tail -1 "$d/down.err")"
[ "$rc" -eq 2 ] && grep -q "gave up after" "$d/down.err" ||
	fail "no server, --retry-for 2: exit $rc: $(tail -3 "$d/down.err")"

# ---- 7. --follow ----
stage "7. --follow"
# split IN A B: A holds the first half of IN's packets, B the rest, each
# with IN's header blocks.
split() {
	python3 - "$@" << 'EOF'
import struct, sys
src, a, b = sys.argv[1:4]
data = open(src, "rb").read()
off, blocks = 0, []
while off + 12 <= len(data):
    btype, blen = struct.unpack_from("<II", data, off)
    blocks.append((btype, off, blen))
    off += blen
first = next(i for i, x in enumerate(blocks) if x[0] == 6)
head = data[:blocks[first][1]]
body = blocks[first:]
half = len(body) // 2
for path, part in ((a, body[:half]), (b, body[half:])):
    open(path, "wb").write(head + data[part[0][1]:part[-1][1] + part[-1][2]])
EOF
}
# The capture is stamped a year behind the clock, as files copied in late
# or replayed are: once every host has shown nothing for 2 s the follower
# dates its progress by the clock, and its journals must still keep the
# samples the files that come later need (their rows would otherwise come
# out of sync, and differ from the whole-file export's).
sim fs --seed 14 --rate 2000 --duration 3 --unsync venue=1-1.5
F=$d/follow
mkdir -p "$F/algo" "$F/venue"
for h in algo venue; do
	split "$d/fs/$h.pcapng" "$F/$h-1.pcapng" "$F/$h-2.pcapng" ||
		fail "follow: cannot split $h's capture"
done
# feed PART STAMP: both hosts' half PART into their directories, as capd
# writes (3 files each, .part while written), in the background; pids in
# FEED.
feed() {
	local h k=0
	FEED=()
	for h in algo venue; do
		k=$((k + 1))
		python3 $L/follow_feed.py --files 3 --piece 32768 --pause 0.1 --stamp "$2" \
			--seed "$1$k" "$F/$h-$1.pcapng" "$F/$h" "$h" > "$F/feed-$h-$1" &
		FEED+=($!)
		pids+=($!)
	done
}
# follower N: tapless export --follow of both directories, state in
# $d/state-follow; pid in FP.
follower() {
	$T export -j --clickhouse "$CH_URL" --state "$d/state-follow" --follow --flush 0.2 \
		-s algo="$d/fs/algo.journal" -s venue="$d/fs/venue.journal" -t "$d/fs/topology" \
		algo="$F/algo" venue="$F/venue" > "$d/follow$1.exp.json" 2> "$d/follow$1.exp.err" &
	FP=$!
	pids+=("$FP")
}
# stop_follower N: SIGTERM, exit 0 wanted.
stop_follower() {
	kill -TERM "$FP"
	wait "$FP"
	local rc=$?
	[ "$rc" -eq 0 ] || fail "follow $1: exit $rc after SIGTERM: $(tail -3 "$d/follow$1.exp.err")"
}
# settle: wait until the raw count() has not moved for 2 s (60 s at most).
settle() {
	local last=-1 same=0 n
	for _ in $(seq 240); do
		n=$(q "SELECT count() FROM tapless.records")
		if [ "$n" = "$last" ]; then
			same=$((same + 1))
			[ "$same" -ge 8 ] && return 0
		else
			same=0
			last=$n
		fi
		sleep 0.25
	done
}
# whole N: a whole-file export of the directories as they are into
# $d/followN.tsv; rows in WHOLE.
whole() {
	$T export -o "$d/follow$1.tsv" \
		-s algo="$d/fs/algo.journal" -s venue="$d/fs/venue.journal" -t "$d/fs/topology" \
		algo="$F/algo" venue="$F/venue" > "$d/follow$1.whole.out" 2>&1 ||
		fail "follow $1: whole-file export exit $?: $(tail -3 "$d/follow$1.whole.out")"
	load_check tapless.check "$d/follow$1.tsv"
	WHOLE=$(rowsum tapless.check)
}
reset_tables
follower 1
feed 1 20251123T000000Z
during=0
while kill -0 "${FEED[0]}" 2> /dev/null || kill -0 "${FEED[1]}" 2> /dev/null; do
	n=$(q "SELECT count() FROM tapless.records")
	[ "$n" -gt "$during" ] 2> /dev/null && during=$n
	sleep 0.2
done
wait "${FEED[@]}" || fail "follow: feeding failed"
settle
stop_follower 1
whole 1
got=$(rowsum "tapless.records FINAL")
raw=$(q "SELECT count() FROM tapless.records")
echo "follow 1: $during rows in while the files were written; $raw at the end (raw), FINAL $got, whole-file $WHOLE"
[ "$during" -gt 0 ] || fail "follow 1: no row in while the files were written"
[ "$got" = "$WHOLE" ] || fail "follow 1: FINAL rows and checksum $got, the whole-file export's $WHOLE"
[ "$raw" = "${got%%	*}" ] || fail "follow 1: $raw rows, $got FINAL: rows sent twice"
follower 2
settle
sleep 1
raw2=$(q "SELECT count() FROM tapless.records")
[ "$raw2" = "$raw" ] || fail "follow 2: restarted on its state, it added $((raw2 - raw)) rows before new files came"
# The new files come while the server is down: the follower waits, then
# sends them once it is back.
ch_kill
feed 2 20251123T000100Z
wait "${FEED[@]}" || fail "follow: feeding failed"
for _ in $(seq 600); do
	grep -q "waiting for it, retrying" "$d/follow2.exp.err" && break
	sleep 0.05
done
grep -q "waiting for it, retrying" "$d/follow2.exp.err" ||
	fail "follow 2: the follower does not say it waits for the server: $(tail -3 "$d/follow2.exp.err")"
ch_restart || fail "follow 2: the server did not restart"
# Its next try may be up to 5 s away (its backoff): settle (2 s without
# a new row) could end before it; wait for it to say so first.
for _ in $(seq 600); do
	grep -q "answers again" "$d/follow2.exp.err" && break
	sleep 0.05
done
settle
grep -q "answers again" "$d/follow2.exp.err" || fail "follow 2: the follower does not say the server is back"
stop_follower 2
whole 2
got=$(rowsum "tapless.records FINAL")
raw=$(q "SELECT count() FROM tapless.records")
echo "follow 2: $raw2 rows before the new files, $raw after (raw), FINAL $got, whole-file $WHOLE; $(jq -c '[.export[] | {host, records, records_already_in}]' "$d/follow2.exp.json")"
[ "$got" = "$WHOLE" ] || fail "follow 2: FINAL rows and checksum $got, the whole-file export's $WHOLE"
[ "$raw" = "${got%%	*}" ] || fail "follow 2: $raw rows, $got FINAL: rows sent twice"
[ "$raw" -gt "$raw2" ] || fail "follow 2: no rows from the new files"

# ---- 2. the lab run (started before 6) ----
stage "2. a lab run"
if [ "$(id -u)" -ne 0 ]; then
	echo "lab: skipped: needs root for network namespaces"
else
	wait "$lp"
	rc=$?
	id=$(sed -n 's/^tapless lab: lab \([0-9a-zA-Z]*\): building$/\1/p' "$d/lab.log" | head -1)
	[ -n "$id" ] && labs+=("$id")
	if [ "$rc" -ne 0 ]; then
		fail "lab: run exit $rc: $(tail -5 "$d/lab.log")"
	else
		r=$d/lab/rate-2000
		ARGS=(-t "$r/topology" -s venue="$d/lab/journals/venue.journal"
		      -s algo="$d/lab/journals/algo.journal" venue="$r/switch/venue" algo="$r/switch/algo")
		compare lab
		jq -e '[.inputs[] | .sender_stamped] | add > 0' "$d/lab.corr.json" > /dev/null ||
			fail "lab: no sender stamps"
		# sender_stamped counts frames, a frame holds 0 to n messages.
		n=$(q "SELECT count() FROM tapless.records FINAL WHERE stamped_by = 'sender' AND dir = 'out'")
		echo "lab: $n rows stamped by their sender; correlate: $(jq '[.inputs[] | .sender_stamped] | add' "$d/lab.corr.json") frames"
		[ "$n" -gt 0 ] 2> /dev/null || fail "lab: no row stamped by its sender: $n"
	fi
fi

echo "$name: $fails failures, ${SECONDS} s"
[ "$fails" -eq 0 ]
