#!/bin/sh
# tapless correlate's speed and memory on generated FTTC captures (tapless
# sim: two hosts, every message stamped at both), at 1, 2 and 3 threads
# (--threads: one; a host on its own thread; each host on its own) and at
# all cores when there are more, beside tcpdump reading the same files and
# tshark extracting FIX fields from them, all in one run.
#
# Prints, per run: FIX messages (each host's file counted: both files'
# messages), wall and CPU seconds, messages per CPU second and per wall
# second, and peak RSS. The long and short captures show that memory
# does not grow with the capture. Then the peers on the short capture
# (tshark on a shorter one: it is slow), and the ratios:
#   correlate / tcpdump   CPU seconds per message: what matching and
#                         reassembly cost beyond reading the files
#   tshark / correlate    messages per CPU second, field extraction only
#   N threads / 1         wall time on the same files
#
# CORRELATE_BENCH_MESSAGES (default 10000000) sets the long run; the short
# one is a quarter of it and tshark gets a twentieth.
set -u
cd "$(dirname "$0")/.." || exit 2
N=${CORRELATE_BENCH_MESSAGES:-10000000}
d=$(mktemp -d /tmp/tapless-bench-correlate.XXXXXX)
trap 'rm -rf "$d"' EXIT
cores=$(nproc)

gen() {	# NAME MESSAGES
	bin/tapless sim --output "$d/$1" --rate 1000000 --messages "$2" \
		--no-truth-stats --seed 1 > "$d/$1.log" 2>&1 ||
		{ echo "bench correlate: sim failed: $(cat "$d/$1.log")"; exit 1; }
}

# line LABEL MESSAGES TIMEFILE: one result line; sets cpu and wall
line() {
	read -r wall user sys rss < "$3"
	cpu=$(echo "$user + $sys" | bc -l)
	printf "%-22s %10s messages  wall %6.2f s  cpu %6.2f s  %9.0f msg/cpu-s  %9.0f msg/wall-s  peak RSS %6.1f MB\n" \
		"$1" "$2" "$wall" "$cpu" "$(echo "$2 / $cpu" | bc -l)" \
		"$(echo "$2 / $wall" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
}

# run NAME THREADS: correlate NAME's files; the figures in $d/NAME-THREADS.*
run() {
	/usr/bin/time -f '%e %U %S %M' -o "$d/$1-$2.time" bin/tapless correlate \
		--threads "$2" --json algo="$d/$1/algo.pcapng" venue="$d/$1/venue.pcapng" \
		> "$d/$1-$2.json" 2> "$d/$1-$2.err" ||
		{ echo "bench correlate: correlate failed: $(cat "$d/$1-$2.err")"; exit 1; }
	msgs=$(jq '[.inputs[].fix_messages] | add' "$d/$1-$2.json")
	echo "$msgs" > "$d/$1.msgs"
	line "correlate $1 -T $2" "$msgs" "$d/$1-$2.time"
	echo "$cpu" > "$d/$1-$2.cpu"
	echo "$wall" > "$d/$1-$2.wall"
}

ratio() { printf "%.2f" "$(echo "$1 / $2" | bc -l)"; }

echo "== tapless correlate: generated FTTC captures, two hosts ($cores cores)"
gen long "$N"
gen short $((N / 4))
gen tshark $((N / 20))
bytes=$(du -cb "$d/long"/*.pcapng | tail -1 | cut -f1)
echo "long: $(echo "$bytes / 1000000" | bc) MB in two files"
run long 1
run short 1
run short 2
run short 3
[ "$cores" -gt 3 ] && run short 0
for t in 2 3 $([ "$cores" -gt 3 ] && echo 0); do
	cmp -s "$d/short-1.json" "$d/short-$t.json" ||
		echo "bench correlate: --threads $t's output differs from one thread's"
done
msgs=$(cat "$d/short.msgs")

# tcpdump: libpcap reads each file, every record, and writes nothing.
# -Z root: as root, tcpdump would otherwise hand its output file to its
# own user, and /dev/null is the machine's.
/usr/bin/time -f '%e %U %S %M' -o "$d/td.time" sh -c "
	tcpdump -Z root -r '$d/short/algo.pcapng' -w /dev/null 2>/dev/null &&
	tcpdump -Z root -r '$d/short/venue.pcapng' -w /dev/null 2>/dev/null" ||
	echo "bench correlate: tcpdump failed"
line "tcpdump -r (both)" "$msgs" "$d/td.time"
td_cpu=$cpu

if command -v tshark > /dev/null; then
	/usr/bin/time -f '%e %U %S %M' -o "$d/ts.time" sh -c "
		tshark -r '$d/tshark/algo.pcapng' -T fields -e fix.MsgType -e fix.MsgSeqNum -e fix.SenderCompID > '$d/ts.a' 2>/dev/null &&
		tshark -r '$d/tshark/venue.pcapng' -T fields -e fix.MsgType -e fix.MsgSeqNum -e fix.SenderCompID > '$d/ts.v' 2>/dev/null"
	tmsgs=$(cat "$d/ts.a" "$d/ts.v" | tr ',' '\n' | grep -c .)
	line "tshark -T fields" "$tmsgs" "$d/ts.time"
	ts_rate=$(echo "$tmsgs / $cpu" | bc -l)
else
	echo "tshark: not installed, no ratio"
	ts_rate=
fi

echo "== ratios (short capture unless said)"
s1=$(cat "$d/short-1.cpu")
echo "correlate -T 1 / tcpdump, CPU per message: $(ratio "$s1" "$td_cpu")x"
[ -n "$ts_rate" ] &&
	echo "correlate -T 1 / tshark, messages per CPU second: $(ratio "$(echo "$msgs / $s1" | bc -l)" "$ts_rate")x"
for t in 2 3 $([ "$cores" -gt 3 ] && echo 0); do
	echo "correlate -T $t / -T 1: wall $(ratio "$(cat "$d/short-$t.wall")" "$(cat "$d/short-1.wall")")x, CPU $(ratio "$(cat "$d/short-$t.cpu")" "$s1")x"
done
