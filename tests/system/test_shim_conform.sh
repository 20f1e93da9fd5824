#!/bin/bash
# The shim changes nothing a program sees (issue 29). Each case runs one
# small program (build/tools/shimcheck MODE) bare and under tapless-stamp
# in a namespace, and requires the same output and exit status: what the
# program printed is what it observed (descriptors, errno, bytes, poll and
# select results). Each case is a defect that once reached programs:
#   errno       a successful first write/send left errno ENOTSOCK
#   fdleak      a descriptor lost each time capd dropped the connection
#   sig         a signal handler that sends deadlocked the process
#   rcvbuf      unread stamps filled the receive buffer (zero window)
#   closefrom   closefrom() closed the library's descriptors under it: its
#               log went into the program's next file
#   stderr-sock the log went to fd 2 after the program reused it
#   aside       stamps still in flight when the library stepped aside
#               raised POLLERR for good
#   select      only 64 stamped sockets corrected; none above FD_SETSIZE
#   epdup       two sockets sharing an epoll data value
#   closerace   close() and send() on one number in two threads
#   uring       a client doing all its I/O through io_uring (liburing's
#               shared library): its stamps are read by the reaper
#   sockperf    TCP and UDP ping-pong, sockperf unmodified: every message
#               answered, none dropped, duplicated or out of order
#   unconnected an unconnected UDP socket was stamped whatever --ports
#               said (flags, a 72 KiB ring, every stamp "not wanted")
#   forkexec    a child forked to exec read its parent's stamp queues
#   pktinfo     (kernels before 6.9, forced) RX stamps our flags report
#               pushed IP_PKTINFO out of a program's control buffer
# The stamps themselves must still reach capd (counted below), so passing
# is never bought by stamping nothing. The cases that run for seconds
# (fdleak, sig, closerace, sockperf over UDP) run bare and under the
# library at the same time (TOGETHER=1): the two share nothing but the
# peers.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
tl_setup shimconf 198.18.62
out=$TL_OUT
sc=build/tools/shimcheck
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -x "$sc" ] || { echo "FAIL: $sc is not built"; exit 1; }

# run NAME CMD...: CMD bare, then under the library handing stamps to
# $SOCK with $OPTS (with TOGETHER=1, both at once); what each printed
# (through $FILTER) and its exit code compared.
run_bare() {
	local name=$1
	shift
	timeout -k 2 30 ip netns exec "$(tl_ns a)" "$@" 2>&1 | ${FILTER:-cat} > "$out/$name.bare"
	echo "exit ${PIPESTATUS[0]}" >> "$out/$name.bare"
}
run() {
	local name=$1 bare=
	shift
	if [ "${TOGETHER:-0}" = 1 ]; then
		run_bare "$name" "$@" &
		bare=$!
	else
		run_bare "$name" "$@"
	fi
	# shellcheck disable=SC2086
	timeout -k 2 30 ip netns exec "$(tl_ns a)" bin/tapless-stamp --tx-socket "$SOCK" \
		$OPTS -- "$@" 2> "$out/$name.err" | ${FILTER:-cat} > "$out/$name.shim"
	echo "exit ${PIPESTATUS[0]}" >> "$out/$name.shim"
	grep -v '^tapless-stamp\[' "$out/$name.err" | ${FILTER:-cat} >> "$out/$name.shim"
	[ -z "$bare" ] || wait "$bare"
	if cmp -s "$out/$name.bare" "$out/$name.shim"; then
		echo "$name: same: $(head -c 300 "$out/$name.bare" | tr '\n' ';')"
	else
		fail "$name: bare and under the library differ:"
		diff "$out/$name.bare" "$out/$name.shim" | head -20
	fi
}
# check NAME SOCK SHIMOPTS -- MODE ARGS...: run shimcheck MODE.
check() {
	local name=$1
	SOCK=$2 OPTS=$3
	shift 4
	run "$name" "$sc" "$@"
}
# sockperf's report, reduced to what must not change: every message sent
# in the measured span answered, none dropped, duplicated or reordered.
sockperf_seen() {
	awk '/\[Valid Duration\]/ { s = $0; sub(/.*SentMessages=/, "", s); sub(/;.*/, "", s)
		r = $0; sub(/.*ReceivedMessages=/, "", r)
		print "answered all:", (s == r && s > 0) ? "yes" : "no (" s " sent, " r " received)" }
	/# dropped messages/ { sub(/^sockperf: /, ""); print }
	/ERROR|error/ { print }'
}
# handed LOG: stamps the library handed to capd, from its summary line.
handed() {
	grep -h 'summary' "$1" 2>/dev/null | grep -o '[0-9]* handed' |
		awk '{ n += $1 } END { print n + 0 }'
}
wait_line() {	# FILE TEXT
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# Peers, bare: a real capd on lo, a UNIX listener that closes every
# connection, UDP sinks, a TCP peer that answers "G" with bulk data.
mkdir -p "$out/cap"
tl_bg a bin/tapless-capd -i lo -w "$out/cap" -H a -l info --tx-socket "$out/tx.sock" \
	"portrange 9400-9420" 2> "$out/capd.log"
capd=$TL_LAST_PID
tl_bg a "$sc" peer-closer "$out/closer.sock" > "$out/closer.out" 2>&1
tl_bg a "$sc" peer-udp 9401 > "$out/udp.out" 2>&1
tl_bg a "$sc" peer-bulk 9402 78192 > "$out/bulk.out" 2>&1
for _ in $(seq 100); do [ -S "$out/tx.sock" ] && break; sleep 0.05; done
[ -S "$out/tx.sock" ] || fail "capd did not start: $(cat "$out/capd.log")"
wait_line "$out/closer.out" listening && wait_line "$out/udp.out" listening &&
	wait_line "$out/bulk.out" listening || fail "peers did not start"

L="--log-level info --log-file"
check errno "$out/tx.sock" "$L $out/errno.log" -- errno
TOGETHER=1 check fdleak "$out/closer.sock" "$L $out/fdleak.log" -- fdleak 9401 5
TOGETHER=1 check sig "$out/tx.sock" "$L $out/sig.log" -- sig 9401 4
check rcvbuf "$out/tx.sock" "$L $out/rcvbuf.log" -- rcvbuf 9402 3000
check closefrom "$out/tx.sock" "--log-level debug --log-file $out/closefrom.log" -- \
	closefrom 9401 "$out/journal"
check stderr-sock "$out/tx.sock" "--log-level debug" -- stderr-sock
check select "$out/tx.sock" "$L $out/select.log" -- select 100 9401
check select-high "$out/tx.sock" "$L $out/selhigh.log" -- select 100 9401 high
check epdup "$out/tx.sock" "$L $out/epdup.log" -- epdup 9401
TOGETHER=1 check closerace "$out/tx.sock" "$L $out/closerace.log" -- closerace 9401 3
SOCK=$out/tx.sock
# --ports on unconnected UDP: a socket is stamped from its first datagram
# to a port in the list, and one that never sends to one is never stamped
# (no flags, no ring).
OPTS="$L $out/unconn.log --ports 9405" run unconnected "$sc" unconnected 9401 9405
grep -q '1 stamped sockets (0 TCP, 1 UDP' "$out/unconn.log" &&
	grep -q ' 10 handed to capd' "$out/unconn.log" &&
	grep -q ' 0 not wanted' "$out/unconn.log" ||
	fail "unconnected: want 1 UDP socket stamped, 10 handed, 0 not wanted: $(grep summary "$out/unconn.log")"
# A child forked only to execute a program sent nothing: it must leave
# the queues it shares with its parent to the parent (before, it read
# them before exec and handed the parent's stamps over itself).
OPTS="$L $out/forkexec.log" run forkexec "$sc" forkexec 9401
grep '(before exec)' "$out/forkexec.log" | grep -q ' [1-9][0-9]* stamps read' &&
	fail "forkexec: a child read stamps before exec: $(grep 'before exec' "$out/forkexec.log")"
grep -q ' 20 stamps read' "$out/forkexec.log" ||
	fail "forkexec: the parent did not read its 20 stamps: $(grep summary "$out/forkexec.log")"
# As before Linux 6.9 (no SOF_TIMESTAMPING_OPT_RX_FILTER, forced): RX
# stamps turned on host-wide must not reach the program's control
# messages, nor push out its IP_PKTINFO.
OPTS="$L $out/pktinfo.log" run pktinfo env TAPLESS_STAMP_RX_FILTER=off "$sc" pktinfo
if [ -x build/tools/uring_rcv ]; then
	OPTS="$L $out/uring.log" run uring build/tools/uring_rcv 9402 3000
	grep -q 'io_uring set-ups [1-9]' "$out/uring.log" ||
		fail "uring: the library did not see the ring: $(grep summary "$out/uring.log")"
else
	echo "uring: skipped: build/tools/uring_rcv not built (no liburing)"
fi
tl_bg a sockperf server --tcp -i 127.0.0.1 -p 9403 > /dev/null 2>&1
tl_bg a sockperf server -i 127.0.0.1 -p 9404 > /dev/null 2>&1
sleep 0.5
# (sockperf's TCP server answers one client at a time: one after the
# other.)
FILTER=sockperf_seen OPTS="$L $out/sockperf-tcp.log" run sockperf-tcp \
	sockperf ping-pong --tcp -i 127.0.0.1 -p 9403 -t 2 -m 64
TOGETHER=1 FILTER=sockperf_seen OPTS="$L $out/sockperf-udp.log" run sockperf-udp \
	sockperf ping-pong -i 127.0.0.1 -p 9404 -t 2 -m 64
# Shaped: 1 Mbit/s, so datagrams wait in the qdisc and their stamps come
# after the library has stepped aside.
tl_exec a tc qdisc add dev lo root tbf rate 1mbit burst 2000 latency 2s ||
	fail "tbf on lo"
check aside "$out/tx.sock" "$L $out/aside.log" -- aside 9401
tl_exec a tc qdisc del dev lo root
grep -q ' [1-9][0-9]* late stamps read after' "$out/aside.log" ||
	fail "aside: no late stamp read: the case did not test what it names: $(grep summary "$out/aside.log")"

# Losses at the sender reach capd's accounts while it runs: a sender that
# starts before its capd drops its first stamps (no capd), then each
# record it hands over says how many it dropped; capd's periodic line
# counts them, and at exit equals the sender's own summary.
tl_exec a bin/tapless-stamp --tx-socket "$out/tx2.sock" --log-level info \
	--log-file "$out/late.log" -- "$sc" fdleak 9401 4 > "$out/late.out" 2>&1 &
late=$!
sleep 1.5
mkdir -p "$out/cap2"
tl_bg a bin/tapless-capd -i lo -w "$out/cap2" -H a -l info --tx-socket "$out/tx2.sock" \
	--stats-interval 1 "portrange 9400-9420" 2> "$out/capd2.log"
capd2=$TL_LAST_PID
wait "$late"
grep -q ' [1-9][0-9]* dropped by the senders' "$out/capd2.log" ||
	fail "late capd: no sender drops counted while running: $(grep 'tx stamps' "$out/capd2.log" | tail -2)"
kill -TERM "$capd2"
wait "$capd2" 2>/dev/null
told=$(grep 'tx stamps' "$out/capd2.log" | tail -1 | sed -n 's/.* \([0-9]*\) dropped by the senders.*/\1/p')
[ -n "$told" ] && [ "$told" -eq "$(grep -h summary "$out/late.log" | grep -o '[0-9]* dropped' | awk '{print $1}')" ] ||
	fail "late capd: counted ${told:-nothing} dropped by the senders, the sender's summary: $(grep -o '[0-9]* dropped' "$out/late.log")"

# The library was not idle: each case's stamps reached capd.
for n in sig rcvbuf closefrom closerace uring sockperf-tcp sockperf-udp; do
	[ "$n" = uring ] && [ ! -x build/tools/uring_rcv ] && continue
	[ "$(handed "$out/$n.log")" -gt 0 ] || fail "$n: no stamp handed to capd: $(grep summary "$out/$n.log")"
done
# select's and epdup's sends go around the library (raw system calls):
# their UDP stamps are read, and cannot be keyed.
for n in select selhigh epdup; do
	grep -q ' [1-9][0-9]* stamps read' "$out/$n.log" ||
		fail "$n: no stamp read: $(grep summary "$out/$n.log")"
done
kill -TERM "$capd"
wait "$capd" 2>/dev/null
grep -q 'keyed stamps:' "$out/capd.log" || fail "capd: no keyed stamps line: $(tail -3 "$out/capd.log")"
[ "$fails" -eq 0 ] && echo "shim conformance: every program saw the same bare and stamped; a late capd was told of ${told:-?} stamps its sender dropped"
[ "$fails" -eq 0 ]
