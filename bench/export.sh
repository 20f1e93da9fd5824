#!/bin/bash
# export — tapless export of per-message records into ClickHouse, and the
# per-hop SQL over them, beside tapless correlate on the same files.
#
# tapless sim writes two hosts' captures (every FIX message seen at both:
# about EXPORT_BENCH_MESSAGES records per host) and their sync journals;
# a ClickHouse server of the bench's own (tests/system/lib/clickhouse.sh)
# gets scripts/clickhouse/schema.sql. Then, on the same files:
# - tapless export --clickhouse --batch EXPORT_BENCH_BATCH: records/s is
#   the rows in tapless.records afterwards over the wall time around the
#   exporter; with the CPU seconds of the exporter (/usr/bin/time) and of
#   the server over the same span (/proc/PID/stat: every thread, merges
#   started by the inserts included). What the wall time holds beyond the
#   exporter's own CPU is time it waited: for the server's answer to a
#   batch, or for a core.
# - tapless export --output /dev/null: the exporter reading and encoding
#   alone, no server. It writes TabSeparated text there (RowBinary goes
#   only to ClickHouse), whose numbers cost more than RowBinary's: the
#   exporter's CPU in the run above is the RowBinary figure.
# - tapless correlate --json, the peer: FIX messages read (each host's
#   copy counted, as records are) per second, and its wall time beside the
#   SQL's.
# - scripts/clickhouse/hops.sql (the per-hop figures of correlate --json):
#   server time of its statements (clickhouse-client --time) on the parts
#   as the export left them, then after OPTIMIZE TABLE ... FINAL has
#   merged them; its per-hop message counts beside correlate's.
# - the server alone: the same rows read back as RowBinary and posted by
#   curl in one INSERT into a copy of the table (the server cuts it into
#   blocks of a million rows): what this server takes with no exporter
#   beside it on the machine's cores, a ceiling for the export's rate.
# Figures only, never pass/fail; the targets are printed beside them.
# Clock ticks and /usr/bin/time count in 10 ms.
#   EXPORT_BENCH_MESSAGES  market data messages per host (default 5000000:
#                          with the orders, about 10 M records in all)
#   EXPORT_BENCH_BATCH     --batch (default 200000)
#   EXPORT_PERF=1          perf record the exporter (both runs): its top
#                          functions are printed; its figures include perf
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/system/lib/clickhouse.sh
ch_available || exit 0
N=${EXPORT_BENCH_MESSAGES:-5000000}
batch=${EXPORT_BENCH_BATCH:-200000}
tck=$(getconf CLK_TCK)
d=$(mktemp -d /tmp/tapless-bench-export.XXXXXX) || exit 2
CH_NO_TRAP=1
trap 'ch_cleanup; rm -rf "$d"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# cpu_ticks PID: utime + stime of PID (all its threads) so far
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now_ns() { date +%s%N; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
fail() { echo "bench export: $*"; exit 1; }

# perf_top NAME: the top functions of perf record's $d/NAME.perf
perf_top() {
	echo "  perf: exporter's top functions, $1 (self, % of its samples)"
	perf report -i "$d/$1.perf" --no-children --sort symbol --stdio 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -15 | sed 's/^ */    /'
}
# timed NAME CMD...: CMD under /usr/bin/time (and perf with EXPORT_PERF=1)
timed() {
	local name=$1
	shift
	if [ "${EXPORT_PERF:-0}" = 1 ]; then
		set -- perf record -F 999 -o "$d/$name.perf" -q -- "$@"
	fi
	/usr/bin/time -f '%e %U %S %M' -o "$d/$name.time" "$@"
}

s=$d/sim
inputs=(algo="$s/algo.pcapng" venue="$s/venue.pcapng")
journals=(-s algo="$s/algo.journal" -s venue="$s/venue.journal")

echo "== tapless export into ClickHouse: generated FTTC captures, two hosts, --batch $batch ($(nproc) cores, nothing pinned)"
t0=$(now_ns)
bin/tapless sim --output "$s" --rate 1000000 --messages "$N" --no-truth-stats \
	--seed 1 > "$d/sim.log" 2>&1 || fail "sim failed: $(cat "$d/sim.log")"
t1=$(now_ns)
rm -f "$s/truth.json"
bytes=$(du -cb "$s"/*.pcapng | tail -1 | cut -f1)
echo "captures: $N market data messages per host, sim took $(calc "($t1 - $t0) / 1e9" 1) s: $(tail -1 "$d/sim.log" | sed 's/.*messages, //; s/; wrote.*//'), $(calc "$bytes / 1e6" 0) MB (free in $d's file system: $(df -h --output=avail "$d" | tail -1 | tr -d ' '))"

# The peer first: correlate, the same files, the same journals.
timed correlate bin/tapless correlate --json "${journals[@]}" "${inputs[@]}" \
	> "$d/correlate.json" 2> "$d/correlate.err" ||
	fail "correlate failed: $(cat "$d/correlate.err")"
read -r c_wall c_user c_sys c_rss < "$d/correlate.time"
c_msgs=$(jq '[.inputs[].fix_messages] | add' "$d/correlate.json")

timed tofile bin/tapless export --output /dev/null --json "${journals[@]}" "${inputs[@]}" \
	> "$d/tofile.json" 2> "$d/tofile.err" ||
	fail "export --output /dev/null failed: $(cat "$d/tofile.err")"
read -r f_wall f_user f_sys f_rss < "$d/tofile.time"
f_recs=$(jq '[.export[].records] | add' "$d/tofile.json")

ch_start || fail "no ClickHouse server"
ch_load_schema > "$d/schema.log" 2>&1 || fail "schema.sql: $(cat "$d/schema.log")"
s0=$(cpu_ticks "$CH_PID")
timed export bin/tapless export --clickhouse "$CH_URL" --batch "$batch" \
	--state "$d/state" --json "${journals[@]}" "${inputs[@]}" \
	> "$d/export.json" 2> "$d/export.err" ||
	fail "export --clickhouse failed: $(cat "$d/export.err")"
s1=$(cpu_ticks "$CH_PID")
read -r e_wall e_user e_sys e_rss < "$d/export.time"
rows=$(ch_query 'SELECT count() FROM tapless.records')
e_sent=$(jq '[.export[].records] | add' "$d/export.json")
e_txns=$(jq '[.export[].transactions] | add' "$d/export.json")
e_batches=$(jq '.batches.sent' "$d/export.json")
parts=$(ch_query "SELECT count() FROM system.parts WHERE database = 'tapless' AND table = 'records' AND active")
ch_bytes=$(ch_query "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'tapless' AND table = 'records' AND active")

e_cpu=$(calc "$e_user + $e_sys")
f_cpu=$(calc "$f_user + $f_sys")
c_cpu=$(calc "$c_user + $c_sys")
srv_cpu=$(calc "($s1 - $s0) / $tck")
e_rate=$(calc "$rows / $e_wall" 0)
f_rate=$(calc "$f_recs / $f_wall" 0)
c_rate=$(calc "$c_msgs / $c_wall" 0)

echo
echo "-- export into ClickHouse ($CH_URL, tapless.records)"
echo "  $rows rows in the table after it ($e_sent records and $e_txns transactions sent, in $e_batches batches); $parts active parts, $(calc "$ch_bytes / 1e6" 0) MB on disk ($(calc "$ch_bytes / $rows" 1) bytes a row)"
echo "  wall $e_wall s: $e_rate records/s"
echo "  cpu: exporter $e_cpu s (user $e_user, sys $e_sys; $(calc "$e_cpu / $e_wall * 100" 0) % of its wall, $(calc "$e_cpu * 1e9 / $rows" 0) ns a row), peak RSS $(calc "$e_rss / 1024" 1) MB"
echo "       server   $srv_cpu s over the same span ($(calc "$srv_cpu / $e_wall * 100" 0) % of a core on average, $(calc "$srv_cpu * 1e9 / $rows" 0) ns a row)"
echo "       wall - exporter cpu = $(calc "$e_wall - $e_cpu") s: the exporter waiting (for the server's answers, or for a core)"
echo "-- export --output /dev/null (TabSeparated, no server)"
echo "  $f_recs records, wall $f_wall s: $f_rate records/s; cpu $f_cpu s ($(calc "$f_cpu * 1e9 / $f_recs" 0) ns a row), peak RSS $(calc "$f_rss / 1024" 1) MB"
echo "-- correlate --json (the peer, same files and journals)"
echo "  $c_msgs FIX messages (both hosts' copies), wall $c_wall s: $c_rate messages/s; cpu $c_cpu s ($(calc "$c_cpu * 1e9 / $c_msgs" 0) ns a message), peak RSS $(calc "$c_rss / 1024" 1) MB"
echo "  ratios: export into ClickHouse / correlate = $(calc "$e_rate / $c_rate")  export to /dev/null / correlate = $(calc "$f_rate / $c_rate")  export into ClickHouse / to /dev/null = $(calc "$e_rate / $f_rate")"
if [ "${EXPORT_PERF:-0}" = 1 ]; then
	perf_top export
	perf_top tofile
fi

# ---- the per-hop SQL
hops=scripts/clickhouse/hops.sql
# Whether the query reads with FINAL (collapsing rows inserted twice as
# it reads) or dedups on its own.
if grep -v '^[[:space:]]*--' "$hops" | grep -qw FINAL; then
	final="reads with FINAL"
else
	final="no FINAL: it dedups on its own"
fi

# run_hops NAME FILE: FILE's statements; their server times, summed, into
# $d/NAME.secs
run_hops() {
	ch_query_file "$2" --time > "$d/$1.out" 2> "$d/$1.err" ||
		fail "$2: $(cat "$d/$1.err")"
	grep -E '^[0-9.]+$' "$d/$1.err" | awk '{ t += $1 } END { printf "%.2f", t }' > "$d/$1.secs"
}
# hop_counts FILE: "from>to messages" per hop, from hops.sql's TSV
# (from_host, to_host, messages, ...)
hop_counts() { awk -F'\t' '{ print $1 ">" $2, $3 }' "$1" | sort; }

run_hops final "$hops"
sql_final=$(cat "$d/final.secs")
t0=$(now_ns)
ch_query 'OPTIMIZE TABLE tapless.records FINAL' 2> "$d/optimize.err" ||
	fail "OPTIMIZE: $(cat "$d/optimize.err")"
t1=$(now_ns)
opt_s=$(calc "($t1 - $t0) / 1e9")
run_hops optimized "$hops"
sql_opt=$(cat "$d/optimized.secs")
parts_opt=$(ch_query "SELECT count() FROM system.parts WHERE database = 'tapless' AND table = 'records' AND active")

echo
echo "-- per-hop SQL ($hops, $final) over $rows rows"
echo "  as exported ($parts parts): $sql_final s (server time)"
echo "  after OPTIMIZE TABLE FINAL (which took $opt_s s; $parts_opt parts): $sql_opt s"
echo "  correlate --json on the files, all of it: $c_wall s wall (cpu $c_cpu s)"
echo "  ratio SQL / correlate = $(calc "$sql_final / $c_wall")  after OPTIMIZE = $(calc "$sql_opt / $c_wall")"
jq -r '.hops[] | select(.flow == "all" and .rate == null) | "\(.from)>\(.to) \(.messages)"' \
	"$d/correlate.json" | sort > "$d/hops.correlate"
hop_counts "$d/optimized.out" > "$d/hops.sql"
echo "  messages per hop, SQL / correlate:"
join -a 1 -a 2 -e - -o 0,1.2,2.2 "$d/hops.sql" "$d/hops.correlate" |
	awk '{ printf "    %-20s %10s %10s%s\n", $1, $2, $3, $2 == $3 ? "" : "  (differ)" }'

# ---- the server alone
ch_query 'CREATE TABLE tapless.records_replay AS tapless.records' ||
	fail "cannot create tapless.records_replay"
ch_query 'SELECT * FROM tapless.records FORMAT RowBinary' > "$d/rows.bin" ||
	fail "cannot read the rows back"
rb=$(stat -c %s "$d/rows.bin")
s0=$(cpu_ticks "$CH_PID") t0=$(now_ns)
curl -sS -X POST -T "$d/rows.bin" \
	"${CH_URL}?query=INSERT%20INTO%20tapless.records_replay%20FORMAT%20RowBinary" \
	> "$d/replay.out" 2>&1 || fail "curl: $(cat "$d/replay.out")"
t1=$(now_ns) s1=$(cpu_ticks "$CH_PID")
rm -f "$d/rows.bin"
r_rows=$(ch_query 'SELECT count() FROM tapless.records_replay')
r_wall=$(calc "($t1 - $t0) / 1e9")
r_cpu=$(calc "($s1 - $s0) / $tck")
r_rate=$(calc "$r_rows / $r_wall" 0)
ch_query 'DROP TABLE tapless.records_replay'
echo
echo "-- the server alone: the rows read back, $(calc "$rb / 1e6" 0) MB of RowBinary ($(calc "$rb / $rows" 1) bytes a row), posted by curl in one INSERT"
echo "  $r_rows rows, wall $r_wall s: $r_rate records/s; server cpu $r_cpu s ($(calc "$r_cpu * 1e9 / $r_rows" 0) ns a row)"
echo "  export into ClickHouse / the server alone = $(calc "$e_rate / $r_rate")"

echo
echo "== summary"
printf '  %-34s %14s\n' "records (rows in tapless.records)" "$rows" \
	"export into ClickHouse, records/s" "$e_rate" \
	"export to /dev/null, records/s" "$f_rate" \
	"the server alone (curl), records/s" "$r_rate" \
	"correlate, messages/s" "$c_rate" \
	"per-hop SQL, s" "$sql_final" \
	"per-hop SQL after OPTIMIZE, s" "$sql_opt" \
	"correlate, s" "$c_wall"
echo "  target: export >= 1 M records/s: measured $(calc "$e_rate / 1e6") M records/s"
echo "  target: per-hop SQL over 10 M < 5 s: measured $sql_final s over $(calc "$rows / 1e6" 1) M (after OPTIMIZE $sql_opt s)"
