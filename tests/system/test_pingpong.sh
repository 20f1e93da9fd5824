#!/bin/bash
# tapless-pingpong between two namespaces over a veth pair, UDP and TCP,
# 2000 messages each with both sides writing pcapng: every message answered,
# no stamp lost (software stamps), one-way latencies positive and under
# 1 ms at p99, the half round trip at least each one-way minimum, the stages
# adding up to the round trip the application clock saw, --json with its
# fields; each side's file holds a frame per message each way with its
# direction, and the one-way latencies read back from the two files are the
# ones reported. Then --no-stamps, malformed peers and bad options.
set -u
. scripts/netns.sh
tl_setup pingpong 198.18.9
out=$TL_OUT
pp=bin/tapless-pingpong
n=2000
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# server NAME PROTO PORT [OPTS...]: start a server in b, wait until it listens.
server() {
	local name=$1 proto=$2 port=$3
	shift 3
	tl_bg b "$pp" --server --bind "198.18.9.2:$port" --proto "$proto" --idle-ms 5000 \
		--json "$@" > "$out/$name.server.json" 2> "$out/$name.server.log"
	spid=$TL_LAST_PID
	for _ in $(seq 100); do
		grep -q listening "$out/$name.server.log" && return
		sleep 0.05
	done
	fail "$name: server did not start: $(cat "$out/$name.server.log")"
}

# check JSON-FILE JQ-EXPR MESSAGE
check() {
	jq -e "$2" "$1" > /dev/null 2>&1 || fail "$3: $(jq -c "${4:-.}" "$1" 2>&1 | head -c 1500)"
}

# frames FILE DIRECTION KIND: "seq epoch" of the frames of that direction
# (1 in, 2 out) whose message is of that kind (1 ping, 2 pong).
frames() {
	tshark -r "$1" -Y "frame.packet_flags_direction == $2" -T fields \
		-e frame.time_epoch -e udp.payload -e tcp.payload 2>/dev/null |
		awk -v k="$(printf %02x "$3")" '
			function hex(s,  i, v) {
				for (i = 1; i <= length(s); i++)
					v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v
			}
			{ p = $2 }
			substr(p, 1, 8) == "544c5050" && substr(p, 13, 2) == k {
				printf "%d %s\n", hex(substr(p, 17, 8)), $1 }' |
		sort -n
}

# pingpong PROTO PORT: a run with both files, and every check on it.
pingpong() {
	local proto=$1 port=$2 j=$out/$1.json
	local cf=$out/$1.client.pcapng sf=$out/$1.server.pcapng

	server "$proto" "$proto" "$port" -w "$sf"
	tl_exec a "$pp" --to "198.18.9.2:$port" --proto "$proto" -n $n --warmup 0 \
		--size 200 -w "$cf" --json > "$j" 2> "$out/$proto.client.log" ||
		fail "$proto: client exited $?: $(cat "$out/$proto.client.log")"
	wait "$spid" || fail "$proto: server exited $?: $(cat "$out/$proto.server.log")"
	jq -e . "$j" > /dev/null 2>&1 || { fail "$proto: client JSON does not parse: $(head -c 500 "$j")"; return; }
	jq -e . "$out/$proto.server.json" > /dev/null 2>&1 ||
		{ fail "$proto: server JSON does not parse"; return; }

	check "$j" ".role == \"client\" and .proto == \"$proto\" and .size == 200 and
		.messages == $n and .answered == $n and .unanswered == 0 and .late == 0 and
		.malformed == 0" "$proto: counts"
	check "$j" '.stamps == {client: "sw", server: "sw", interface: .stamps.interface, oneway: "sw"}
		and (.stamps.interface | startswith("tl"))' "$proto: stamp sources" .stamps
	check "$j" '[.lost_stamps[]] | length == 6 and all(. == 0)' \
		"$proto: stamps lost (software stamps lose none)" .lost_stamps
	check "$j" "[.latency_ns[], .stages_ns[] | .count] | length == 12 and all(. == $n)" \
		"$proto: a sample of every quantity for every message" '[.latency_ns[], .stages_ns[] | .count]'
	check "$j" '[.latency_ns, .stages_ns | .[] | has("min", "mean", "p50", "p99", "p999", "max", "sd")] | all' \
		"$proto: summaries lack fields"
	check "$j" '.latency_ns | .client_to_server.min > 0 and .server_to_client.min > 0 and
		.client_to_server.p99 < 1000000 and .server_to_client.p99 < 1000000' \
		"$proto: one-way not positive or over 1 ms at p99" .latency_ns
	check "$j" '.latency_ns | .half_rtt.min >= .client_to_server.min and
		.half_rtt.min >= .server_to_client.min' "$proto: half RTT below a one-way minimum" .latency_ns
	check "$j" '[.stages_ns[] | .min >= 0] | all' "$proto: a stage went backwards" .stages_ns
	# The stages and the one-ways tile the round trip on the client's
	# system clock; the half RTT is from CLOCK_MONOTONIC: they agree to
	# the cost of a clock read, on average (with room for the odd
	# preemption between a pair of clock reads on a busy machine).
	check "$j" '(2 * .latency_ns.half_rtt.mean) as $rtt |
		(.stages_ns | .client_send_to_sw_tx.mean + .server_sw_rx_to_recv.mean +
		.server_recv_to_send.mean + .server_send_to_sw_tx.mean + .client_sw_rx_to_recv.mean) +
		(.latency_ns | .client_to_server.mean + .server_to_client.mean) - $rtt |
		fabs < 1000 + $rtt / 10' "$proto: stages do not add up to the round trip"
	check "$j" ".capture.tx_frames == $n + 1 and .capture.rx_frames >= $n + 1 and
		.capture.tx_unstamped == 0 and .capture.rx_unstamped == 0 and .capture.write_errors == 0 and
		.capture.relative_tcp_seq == false" "$proto: client capture counters" .capture
	check "$out/$proto.server.json" ".echoed == $n and .fin == 1 and .malformed == 0 and
		([.lost_stamps[]] | all(. == 0)) and .reports_dropped == 0 and
		.capture.rx_frames == $n + 1 and .capture.tx_frames >= $n + 1" "$proto: server counts"

	# The files: a frame per message each way on each side, by direction.
	frames "$cf" 2 1 > "$out/c.out"
	frames "$cf" 1 2 > "$out/c.in"
	frames "$sf" 1 1 > "$out/s.in"
	frames "$sf" 2 2 > "$out/s.out"
	for f in c.out c.in s.in s.out; do
		[ "$(wc -l < "$out/$f")" -eq $n ] && [ "$(cut -d' ' -f1 "$out/$f" | uniq | wc -l)" -eq $n ] ||
			fail "$proto: $f: $(wc -l < "$out/$f") messages in the file, want $n"
	done
	# One-way client -> server from the two files: the reported figures.
	join "$out/c.out" "$out/s.in" | awk '{
		split($2, t, "."); split($3, r, ".");
		print (r[1] - t[1]) * 1000000000 + (r[2] - t[2]) }' | sort -n > "$out/c2s"
	local p50 max
	p50=$(awk -v n=$n 'NR == int((n + 1) / 2) { print }' "$out/c2s")
	max=$(tail -1 "$out/c2s")
	check "$j" ".latency_ns.client_to_server | .p50 == ${p50:-0} and .max == ${max:-0}" \
		"$proto: one-way from the files (p50 ${p50:-none}, max ${max:-none}) is not the reported one" \
		.latency_ns.client_to_server
	if [ "$proto" = tcp ]; then
		# Sequence numbers are the real ones, the same on both sides.
		tshark -r "$cf" -Y 'frame.packet_flags_direction == 2' -T fields -e tcp.seq_raw \
			-e tcp.ack_raw -e tcp.len 2>/dev/null > "$out/cs"
		tshark -r "$sf" -Y 'frame.packet_flags_direction == 1' -T fields -e tcp.seq_raw \
			-e tcp.ack_raw -e tcp.len 2>/dev/null > "$out/ss"
		[ -s "$out/cs" ] && cmp -s "$out/cs" "$out/ss" ||
			fail "tcp: sequence numbers differ between the two files"
	fi
	echo "$proto: half RTT p50 $(jq .latency_ns.half_rtt.p50 "$j") ns," \
		"one-way p50 $(jq .latency_ns.client_to_server.p50 "$j") / $(jq .latency_ns.server_to_client.p50 "$j") ns"
}

pingpong udp 9401
pingpong tcp 9402

# --no-stamps on both sides: plain send and recv, the half round trip only.
server nostamps tcp 9403 --no-stamps
tl_exec a "$pp" --to 198.18.9.2:9403 --proto tcp -n 500 --no-stamps --json > "$out/ns.json" 2>&1 ||
	fail "--no-stamps: client exited $?: $(cat "$out/ns.json")"
wait "$spid" || fail "--no-stamps: server exited $?"
check "$out/ns.json" '.answered == 500 and .stamps.client == "off" and .stamps.server == "off" and
	.stamps.oneway == null and (.latency_ns | keys) == ["half_rtt"] and .stages_ns == {} and
	.latency_ns.half_rtt.count == 500' "--no-stamps"

# UDP: junk is counted and ignored, the client after it is served.
server junk udp 9404
tl_exec a bash -c 'printf "not a ping" > /dev/udp/198.18.9.2/9404;
	head -c 64 /dev/zero > /dev/udp/198.18.9.2/9404'
tl_exec a "$pp" --to 198.18.9.2:9404 -n 100 --json > "$out/junk.json" 2>&1 ||
	fail "udp after junk: client exited $?"
wait "$spid" || fail "udp junk: server exited $?"
check "$out/junk.json" '.answered == 100' "udp after junk: client not served"
check "$out/junk.server.json" '.malformed == 2 and .echoed == 200' "udp junk: server counts"
grep -q "ignoring a malformed datagram: shorter than the 64-byte header" "$out/junk.server.log" ||
	fail "udp junk: not reported: $(cat "$out/junk.server.log")"

# TCP: a stream that is not ours ends the session with exit 1 and says why.
server junk tcp 9405
tl_exec a bash -c 'exec 3<>/dev/tcp/198.18.9.2/9405; printf "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n" >&3;
	printf "%0100d" 0 >&3; sleep 0.2'
wait "$spid"
rc=$?
[ $rc -eq 1 ] && grep -q "malformed message after 0 bytes: bad magic" "$out/junk.server.log" ||
	fail "tcp junk: server exited $rc: $(cat "$out/junk.server.log")"

# Bad options: exit 1 with a message.
for args in "" "--server" "--to 198.18.9.2" "--to 198.18.9.2:1 --size 1500" \
	"--to 198.18.9.2:1 --proto tcp --size 4096" "--to 198.18.9.2:1 -n 5 -d 1" \
	"--to 198.18.9.2:1 --mode magic" "--server --bind 198.18.9.2:1 --rate 10" \
	"--to 198.18.9.2:1 --idle-ms 10" "--to 198.18.9.2:1 --no-stamps -w x.pcapng" \
	"--to 198.18.9.2:1 --bogus" "--to 198.18.9.2:1 operand" "--to 198.18.9.2:1 --cpu 1023"; do
	# shellcheck disable=SC2086
	tl_exec a "$pp" $args > /dev/null 2> "$out/opt.err"
	rc=$?
	[ $rc -eq 1 ] && [ -s "$out/opt.err" ] || fail "'$args': exit $rc, want 1 with a message"
done
# Nobody there: a system error, exit 2.
tl_exec a "$pp" --to 198.18.9.2:9406 --proto tcp -n 1 > /dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "no server: exit $rc, want 2"

[ "$fails" -eq 0 ] && echo "ok: pingpong"
[ "$fails" -eq 0 ]
