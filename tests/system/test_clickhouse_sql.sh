#!/bin/bash
# The SQL shipped in scripts/clickhouse against a real ClickHouse server
# (tests/system/lib/clickhouse.sh starts one of the test's own): schema.sql
# loads; synthetic records (tests/system/lib/records_gen.py: six hosts,
# TCP over IPv4 and IPv6, UDP multicast, captures that do not know the
# direction, a message captured twice at one host, a host that saw one
# message arrive and leave, a pair 1.2 s apart and one exactly 1 s apart, a
# TCP sequence number reused an hour later, samples out of sync and in
# holdover, hosts without a sync journal or whose journal gives a bound but
# no state, a NAT'd session, messages across midnight) give,
# through hops.sql, hops_per_minute.sql, hops_by_session.sql and
# transactions.sql, exactly what records_gen.py worked out by its own
# reading of tapless correlate's rules: counts, min, max and nearest-rank
# percentiles equal, mean and SD within 1e-6. Every batch is inserted
# twice, once after the first was merged, so a row inserted twice is
# shown to count once. A database made before sync had 'holdover' takes
# schema.sql in place. The quantilesExact levels are checked against
# nearest rank for many sample counts. Then distributed.sql over a
# cluster of two shards (a second server of the test's own): inserts
# routed by the Distributed tables reach both shards, each session on one
# only; the hop queries with distributed_group_by_no_merge = 1 (and
# hops.sql without it) and transactions.sql without it give the same
# answers through the Distributed tables. And end to end: captures from
# tapless sim exported by tapless export give, through hops.sql and
# transactions.sql, what tapless correlate finds in them.
#
# Skips (exit 0, one line) only when clickhouse-server is not installed.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/system/lib/clickhouse.sh
if ! msg=$(ch_available); then
	echo "clickhouse_sql: $msg"
	exit 0
fi
W=$(mktemp -d /tmp/tapless-chsql.XXXXXX)
CH_DIR=$W/ch
CH_WATCH_RM=$W
CH_NO_TRAP=1
SH2=
cleanup() {
	ch_cleanup
	if [ -n "$SH2" ]; then	# the second server's shell: it cleans up
		kill "$SH2" 2> /dev/null
		wait "$SH2" 2> /dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
SQL=scripts/clickhouse
LIB=tests/system/lib
fails=0
fail() { echo "FAIL: clickhouse_sql: $*"; fails=$((fails + 1)); }

ch_start || { echo "FAIL: clickhouse_sql: server did not start"; exit 1; }
ch_load_schema || { echo "FAIL: clickhouse_sql: schema.sql did not load"; exit 1; }
# Loading it again changes nothing (IF NOT EXISTS everywhere).
ch_load_schema || fail "schema.sql is not idempotent"
# A database of the version before sync had 'holdover' (the Enum8 without
# it): schema.sql brings it up in place, its rows as they were.
sed "s/, 'holdover' = 3//" $SQL/schema.sql > "$W/old.sql"
up="INSERT INTO tapless.records (day, host, ts, sync, bound_ns) VALUES"
if ch_query "DROP DATABASE tapless" && ch_query_file "$W/old.sql" &&
   ! ch_query "$up ('2026-11-26', 'old', 0, 'holdover', 90)" 2> /dev/null &&
   ch_query "$up ('2026-11-26', 'old', 1, 'out', -1)" && ch_load_schema &&
   ch_query "$up ('2026-11-26', 'old', 2, 'holdover', 90)"; then
	got=$(ch_query "SELECT groupArray(toString(sync)) FROM (SELECT sync
		FROM tapless.records WHERE host = 'old' ORDER BY ts)")
	[ "$got" = "['out','holdover']" ] || fail "upgrade: rows read back as $got"
else
	fail "upgrade: a database without 'holdover' did not take schema.sql"
fi
ch_query "DROP DATABASE tapless" && ch_load_schema ||
	{ echo "FAIL: clickhouse_sql: schema.sql after the upgrade check"; exit 1; }

python3 $LIB/records_gen.py test "$W" || { echo "FAIL: clickhouse_sql: records_gen.py"; exit 1; }
nrec=$(wc -l < "$W/records.tsv")
ntx=$(wc -l < "$W/transactions.tsv")

# As tapless export would: the writer user, TSV in the schema's column
# order (no column list).
insert() {	# TABLE FILE
	ch_writer_query "INSERT INTO $1 FORMAT TSV" < "$2" ||
		fail "insert into $1 failed"
}
# run NAME FILE [CLIENT ARGS]: the file's output as JSONEachRow in $W/NAME
run() {
	local name=$1 file=$2
	shift 2
	if ! ch_query_file "$file" --format=JSONEachRow "$@" \
		> "$W/$name.jsonl" 2> "$W/$name.err"; then
		fail "$file failed: $(head -c 600 "$W/$name.err")"
		return 1
	fi
}
check() {	# NAME TRUTH-KEY [FILTER]
	python3 $LIB/ch_check.py "$W/truth.json" "$2" "$W/$1.jsonl" ${3:-} ||
		fail "$1: results differ from records_gen.py's"
}
verify_all() {	# SUFFIX [CLIENT ARGS for the hop queries]
	local s=$1
	shift
	run hops$s $SQL/hops.sql "$@" && check hops$s hops
	run per_minute$s $SQL/hops_per_minute.sql "$@" &&
		check per_minute$s hops_per_minute
	run by_session$s $SQL/hops_by_session.sql "$@" &&
		check by_session$s hops_by_session
	if run txn$s $SQL/transactions.sql; then
		check txn$s transactions host
		check txn$s transactions minute
		check txn$s order_to_ack sql
	fi
}
insert tapless.records "$W/records.tsv"
insert tapless.transactions "$W/transactions.tsv"
ch_query "OPTIMIZE TABLE tapless.records FINAL" || fail "optimize"
ch_query "OPTIMIZE TABLE tapless.transactions FINAL" || fail "optimize"
# Each message once per observation: most take hops.sql's short path for
# two observations, the rest its general one.
verify_all _once
# The same batches again: a retry after the server had committed them.
# Every message now has its rows twice (in another part, not merged yet):
# the general path throughout, and FINAL for transactions.
insert tapless.records "$W/records.tsv"
insert tapless.transactions "$W/transactions.tsv"
n=$(ch_query "SELECT count() FROM tapless.records")
[ "$n" = $((2 * nrec)) ] || fail "records: $n rows stored, want $((2 * nrec)) before merging"
n=$(ch_query "SELECT count() FROM tapless.records FINAL")
[ "$n" = "$nrec" ] || fail "records FINAL: $n rows, want $nrec"
n=$(ch_query "SELECT uniqExact(day) FROM tapless.records")
[ "$n" = 2 ] || fail "records: $n days (partitions), want 2"
n=$(ch_query "SELECT count() FROM tapless.transactions FINAL")
[ "$n" = "$ntx" ] || fail "transactions FINAL: $n rows, want $ntx"

verify_all ""

# The truth has what it must: a result that is empty or trivial would
# make the comparisons above prove little.
python3 - "$W/truth.json" << 'EOF' || fail "the synthetic truth lacks a case"
import json, sys
t = json.load(open(sys.argv[1]))
hops = {(r["from_host"], r["to_host"]): r for r in t["hops"]}
assert ("md", "algo") in hops and hops[("md", "algo")]["bound_max_ns"] is None
assert hops[("algo", "venue")]["out_of_sync"] > 0
assert hops[("algo", "venue")]["max"] == 1000000000	# exactly 1 s: in
assert ("algo", "gw") in hops and ("gw", "venue") not in hops
assert hops[("algo", "aux")]["count"] == 5
assert hops[("algo", "aux")]["bound_max_ns"] is None
assert hops[("venue", "algo")]["min"] < 0	# unknown took the sender's role
assert len(t["hops_by_session"]) == 2
assert len({r["minute"] for r in t["hops_per_minute"]}) > 3
assert t["order_to_ack"][0]["count"] > 100
EOF

# Nearest rank from quantilesExact's levels, for every count 1..60 and some
# round ones (where floor(p * n) and ceil(p * n) - 1 differ most).
python3 - > "$W/ranks.tsv" << 'EOF'
import random
r = random.Random(5)
for n in list(range(1, 61)) + [99, 100, 101, 999, 1000, 1001, 2000, 10000]:
    for _ in range(n):
        print("%d\t%d" % (n, r.randint(-50, 5000)))
EOF
ch_query "CREATE TABLE default.ranks (n UInt32, v Int64) ENGINE = Memory" &&
	ch_query "INSERT INTO default.ranks FORMAT TSV" < "$W/ranks.tsv" &&
	ch_query "SELECT n, quantilesExact(0.499999999999999, 0.899999999999999,
		0.989999999999999, 0.998999999999999)(v) FROM default.ranks
		GROUP BY n ORDER BY n" --format=TSV > "$W/ranks.out" ||
	fail "rank query failed"
python3 - "$W/ranks.tsv" "$W/ranks.out" << 'EOF' || fail "quantilesExact levels are not nearest rank"
import math, sys
v = {}
for line in open(sys.argv[1]):
    n, x = map(int, line.split())
    v.setdefault(n, []).append(x)
bad = 0
for line in open(sys.argv[2]):
    n, q = line.split("\t")
    n = int(n)
    got = [int(x) for x in q.strip("[]\n").split(",")]
    s = sorted(v[n])
    want = [s[min(max(math.ceil(p / 100.0 * n - 1e-9), 1), n) - 1]
            for p in (50, 90, 99, 99.9)]
    if got != want:
        print("  n=%d: got %s, want %s" % (n, got, want))
        bad += 1
print("ranks: %d counts checked, %d wrong" % (len(v), bad))
sys.exit(1 if bad else 0)
EOF

# End to end: tapless sim's captures (an out-of-sync spell at venue,
# retransmitted and reordered segments, sync journals) through tapless
# export, against tapless correlate over the same files: the same hops and
# transactions (ch_vs_correlate.py says how close).
if [ -x bin/tapless ]; then
	E=$W/sim
	J="-s algo=$E/algo.journal -s venue=$E/venue.journal -t $E/topology"
	F="algo=$E/algo.pcapng venue=$E/venue.pcapng"
	echo "$CH_WRITER_PASSWORD" > "$W/password"
	# shellcheck disable=SC2086
	if bin/tapless sim --output "$E" --rate 20000 --duration 2 --seed 7 \
		--unsync venue=0.8-1.2 --retransmit 0.01 --reorder 0.01 \
		> "$W/sim.log" 2>&1 &&
	   bin/tapless correlate --json $J $F > "$W/correlate.json" 2> "$W/correlate.err" &&
	   ch_query "DROP DATABASE tapless" && ch_load_schema &&
	   bin/tapless export --clickhouse "$CH_URL" -u writer --password-file "$W/password" \
		--state "$W/state" $J $F > "$W/export.log" 2>&1; then
		run e2e_hops $SQL/hops.sql
		run e2e_txn $SQL/transactions.sql
		run e2e_session $SQL/hops_by_session.sql
		python3 $LIB/ch_vs_correlate.py "$W/correlate.json" \
			"$W/e2e_hops.jsonl" "$W/e2e_txn.jsonl" ||
			fail "hops.sql or transactions.sql differ from tapless correlate"
		[ ! -s "$W/e2e_session.jsonl" ] ||
			fail "hops_by_session.sql matched flows both hosts captured"
	else
		fail "sim, correlate or export failed: $(tail -n 3 "$W/sim.log" \
			"$W/correlate.err" "$W/export.log" 2> /dev/null)"
	fi
else
	fail "bin/tapless not built (make)"
fi

# Through Distributed tables: a cluster "tapless" of two shards, this
# server and a second one (in a shell of its own: one server per shell).
(
	CH_DIR=$W/ch2 CH_PID= CH_WATCH_PID= CH_DIR_OWNED=0 CH_NO_TRAP=0
	CH_CLUSTER_PORTS=
	ch_start > "$W/ch2.log" 2>&1 || exit 1
	echo "$CH_TCP_PORT" > "$W/ch2.port.part" && mv "$W/ch2.port.part" "$W/ch2.port"
	# Until killed, or until the test's shell is gone ($$ is its pid).
	while kill -0 $$ 2> /dev/null && sleep 1; do :; done
) > /dev/null 2>&1 &
SH2=$!
for i in $(seq 600); do
	[ -s "$W/ch2.port" ] || ! kill -0 $SH2 2> /dev/null && break
	sleep 0.1
done
port2=$(cat "$W/ch2.port" 2> /dev/null)
[ -n "$port2" ] || { echo "FAIL: clickhouse_sql: second server: $(cat "$W/ch2.log")"; exit 1; }
CH_CLUSTER_PORTS="$CH_TCP_PORT $port2"
ch_restart || { echo "FAIL: clickhouse_sql: restart with two shards"; exit 1; }
ch_query "DROP DATABASE tapless" || fail "drop database"
for p in $CH_TCP_PORT $port2; do
	CH_TCP_PORT=$p ch_load_schema &&
		CH_TCP_PORT=$p ch_query_file $SQL/distributed.sql ||
		fail "distributed.sql did not load on port $p"
done
engine=$(ch_query "SELECT engine FROM system.tables WHERE database = 'tapless' AND name = 'records'")
[ "$engine" = Distributed ] || fail "tapless.records is '$engine', want Distributed"
dist_insert() {
	ch_writer_query "INSERT INTO tapless.records FORMAT TSV" \
		--insert_distributed_sync=1 < "$W/records.tsv" ||
		fail "insert through Distributed failed"
	ch_writer_query "INSERT INTO tapless.transactions FORMAT TSV" \
		--insert_distributed_sync=1 < "$W/transactions.tsv" ||
		fail "insert through Distributed failed"
}
dist_insert
# Both shards hold records, and each session's on one shard only.
n1=$(ch_query "SELECT count() FROM tapless.records_local")
n2=$(CH_TCP_PORT=$port2 ch_query "SELECT count() FROM tapless.records_local")
{ [ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ $((n1 + n2)) = "$nrec" ]; } ||
	fail "shards hold $n1 + $n2 records, want $nrec, some on each"
ses() {
	CH_TCP_PORT=$1 ch_query "SELECT DISTINCT if(sender_comp < target_comp,
		sender_comp, target_comp) || '/' || if(sender_comp < target_comp,
		target_comp, sender_comp) FROM tapless.records_local" | LC_ALL=C sort
}
both=$(LC_ALL=C comm -12 <(ses $CH_TCP_PORT) <(ses $port2))
[ -z "$both" ] || fail "sessions on both shards: $both"
verify_all _dist_once --distributed_group_by_no_merge=1
dist_insert
verify_all _dist --distributed_group_by_no_merge=1
# And without the setting: merged on this server, the same answers.
run hops_dist_merged $SQL/hops.sql && check hops_dist_merged hops

if [ "$fails" -eq 0 ]; then
	echo "clickhouse_sql: ok ($nrec records, 4 queries, ranks, two shards)"
	exit 0
fi
echo "clickhouse_sql: $fails failures"
exit 1
