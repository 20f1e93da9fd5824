#!/bin/bash
# tapless-swemu between two hosts: namespaces a and b, each joined by a veth
# to the switch namespace s (ports p1 and p2), swemu switching p1 <-> p2.
# Stamped UDP both ways arrives; swemu's counts match what was sent; the
# truth files read in tshark, every egress has its ingress (same packet id,
# other port, earlier stamp), the writer thread wrote every record; all of
# it through the receive ring, through recvmsg (--io socket), busy-polling
# on a pinned CPU and with --poll-us; a 200 us latency is honoured (never
# less, mean not absurdly more); store-and-forward at 100M adds the
# serialisation; the preset shows in --json; bad input fails with a clear
# message; a short run is valgrind-clean, in both receive modes. Timing
# figures are sanity bounds, not goals.
set -u
. scripts/netns.sh
tl_setup swemu 198.18.90	# tl_setup's pair is unused: the switch lab below
out=$TL_OUT
tsx=build/tools/tsx
swemu=bin/tapless-swemu
net=198.18.91
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Hosts a and b, each on a veth to the switch namespace (p1, p2), IPv6 off
# and static neighbours, so the frames crossing the switch are exactly the
# test's.
lab() {
	local n ns ma mb
	for n in ha hb s; do
		ns=$(tl_ns "$n")
		ip netns add "$ns" && TL_NS+=("$ns") || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 || return 1
		ip -n "$ns" link set lo up || return 1
	done
	HA=tl${TL_ID}x; HB=tl${TL_ID}y
	ip link add "$HA" netns "$(tl_ns ha)" type veth peer name p1 netns "$(tl_ns s)" &&
	ip link add "$HB" netns "$(tl_ns hb)" type veth peer name p2 netns "$(tl_ns s)" || return 1
	ip -n "$(tl_ns ha)" addr add "$net.1/24" dev "$HA" &&
	ip -n "$(tl_ns hb)" addr add "$net.2/24" dev "$HB" &&
	ip -n "$(tl_ns ha)" link set "$HA" up && ip -n "$(tl_ns hb)" link set "$HB" up &&
	ip -n "$(tl_ns s)" link set p1 up && ip -n "$(tl_ns s)" link set p2 up || return 1
	ma=$(ip -n "$(tl_ns ha)" -j link show "$HA" | jq -r '.[0].address')
	mb=$(ip -n "$(tl_ns hb)" -j link show "$HB" | jq -r '.[0].address')
	ip -n "$(tl_ns ha)" neigh replace "$net.2" lladdr "$mb" dev "$HA" nud permanent &&
	ip -n "$(tl_ns hb)" neigh replace "$net.1" lladdr "$ma" dev "$HB" nud permanent
}
lab || { echo "FAIL: swemu: could not build the switch lab"; exit 1; }

# start NAME ARGS...: swemu in s, writing into $out/NAME; waits until it runs.
start() {
	local name=$1
	shift
	mkdir -p "$out/$name"
	tl_bg s "$swemu" -i p1 -i p2 -w "$out/$name" --json "$@" \
		> "$out/$name.json" 2> "$out/$name.log"
	SW=$TL_LAST_PID
	for _ in $(seq 100); do grep -q switching "$out/$name.log" && break; sleep 0.05; done
	sleep 0.2	# the kernel's RX stamping switch (ts.h)
}
stop() {
	kill -TERM "$SW"
	wait "$SW" || fail "$1: swemu exited $? after SIGTERM: $(cat "$out/$1.log")"
}
# send FROM TO_ADDR PORT COUNT SIZE NAME: stamped UDP (TCP with PROTO=tcp)
# through the switch.
send() {
	tl_bg "$2" "$tsx" recv --proto "${PROTO:-udp}" --bind "$3:$4" --count "$5" \
		--out "$out/$7.rx" > "$out/$7.ready" 2>/dev/null
	local r=$TL_LAST_PID
	for _ in $(seq 100); do grep -q ready "$out/$7.ready" && break; sleep 0.05; done
	tl_exec "$1" "$tsx" send --proto "${PROTO:-udp}" --to "$3:$4" --count "$5" --rate 2000 \
		--min-size "$6" --max-size "$6" --out "$out/$7.tx" 2>/dev/null
	wait "$r" || fail "$7: the receiver did not get all $5 messages"
	"$tsx" join --tx "$out/$7.tx" --rx "$out/$7.rx" --count "$5" \
		--max-ns 1000000000 > /dev/null 2>&1 || fail "$7: messages lost or unstamped"
}
# truth DIR: "ID DIR NS" lines of both ports' files, from tshark.
truth() {
	for p in p1 p2; do
		tshark -r "$1/$p.pcapng" -T fields -e frame.packet_id \
			-e frame.packet_flags_direction -e frame.time_epoch 2>/dev/null |
			awk -v p="$p" '{ split($3, t, "."); printf "%s %s %s %s%s\n", $1, p,
				($2 == "0x00000001" ? "in" : "out"), t[1], t[2] }'
	done
}
# residences FILE: per egress, "NS" (egress - ingress of the same id on the
# other port); counts violations (no ingress, same port, not earlier) in
# $out/bad. Stamps are split as seconds and nanoseconds, so exact.
residences() {
	awk -v bad="$out/bad" '
	$3 == "in" { port[$1] = $2; s[$1] = substr($4, 1, length($4) - 9);
		     ns[$1] = substr($4, length($4) - 8) }
	$3 == "out" { o[++n] = $0 }
	END {
		b = 0
		for (i = 1; i <= n; i++) {
			split(o[i], f, " ")
			if (!(f[1] in port) || port[f[1]] == f[2]) { b++; continue }
			d = (substr(f[4], 1, length(f[4]) - 9) - s[f[1]]) * 1e9 + (substr(f[4], length(f[4]) - 8) - ns[f[1]])
			if (d <= 0) { b++; continue }
			print d
		}
		print b > bad
	}' "$1"
}

# both NAME ARGS...: a run with ARGS, 500 frames a -> b and 300 b -> a at
# latency 0, checked: counts, no loss, truth files whole, read by tshark,
# every egress with its earlier ingress on the other port, the summary's
# residence the files'.
both() {
	local name=$1 j fmean jmean
	shift
	start "$name" --latency 0 "$@"
	send ha hb "$net.2" 9411 500 200 "$name-ab"
	send hb ha "$net.1" 9412 300 200 "$name-ba"
	stop "$name"
	j=$out/$name.json
	jq -e . "$j" > /dev/null 2>&1 || fail "$name: the summary is not JSON: $(cat "$j")"
	[ "$(jq '.ports[] | select(.name == "p1") | .rx' "$j")" = 500 ] || fail "$name: p1 rx is not 500: $(jq -c .ports "$j")"
	[ "$(jq '.ports[] | select(.name == "p2") | .tx' "$j")" = 500 ] || fail "$name: p2 tx is not 500"
	[ "$(jq '.ports[] | select(.name == "p2") | .rx' "$j")" = 300 ] || fail "$name: p2 rx is not 300"
	[ "$(jq '.ports[] | select(.name == "p1") | .tx' "$j")" = 300 ] || fail "$name: p1 tx is not 300"
	[ "$(jq '[.ports[] | .tx_stamps_lost + .dropped + .queue_overflow + .rx_unstamped] | add' "$j")" = 0 ] ||
		fail "$name: frames dropped or stamps lost: $(jq -c .ports "$j")"
	[ "$(jq '.pairs[] | select(.in == "p1" and .out == "p2") | .residence_ns.count' "$j")" = 500 ] ||
		fail "$name: p1->p2 residence count is not 500"
	# The writer thread wrote every record it was given: 800 in, 800 out.
	[ "$(jq '.truth.records' "$j")" = 1600 ] && [ "$(jq '.truth.failed' "$j")" = 0 ] ||
		fail "$name: truth records $(jq -c .truth "$j"), want 1600 written"
	ls "$out/$name"/*.part > /dev/null 2>&1 && fail "$name: a .part file was left behind"
	for p in p1 p2; do
		build/tools/capdump "$out/$name/$p.pcapng" > "$out/$p.dump" 2>&1 || fail "$name: $p.pcapng not whole"
		grep -q "name=$p .*source=sw" "$out/$p.dump" || fail "$name: $p.pcapng: interface not $p with host stamps"
		# Inbound blocks are written as frames arrive: in time order.
		awk '$3 == "in" { if ($1 < last) bad++; last = $1 } END { exit bad > 0 }' "$out/$p.dump" ||
			fail "$name: $p.pcapng: inbound blocks out of time order"
	done
	truth "$out/$name" > "$out/$name.truth"
	[ "$(grep -c ' p1 in ' "$out/$name.truth")" = 500 ] || fail "$name: tshark: p1 ingress EPBs are not 500"
	[ "$(grep -c ' p2 out ' "$out/$name.truth")" = 500 ] || fail "$name: tshark: p2 egress EPBs are not 500"
	[ "$(grep -c ' p1 out ' "$out/$name.truth")" = 300 ] || fail "$name: tshark: p1 egress EPBs are not 300"
	residences "$out/$name.truth" > "$out/$name.res"
	[ "$(cat "$out/bad")" = 0 ] || fail "$name: $(cat "$out/bad") egress EPBs without an earlier ingress on the other port"
	[ "$(wc -l < "$out/$name.res")" = 800 ] || fail "$name: $(wc -l < "$out/$name.res") residences, want 800"
	# The files and the summary say the same.
	fmean=$(awk '{ s += $1 } END { printf "%.0f", s / NR }' "$out/$name.res")
	jmean=$(jq '[.pairs[] | .residence_ns.mean * .residence_ns.count] | add / 800 | round' "$j")
	[ "${fmean:-x}" = "$jmean" ] || fail "$name: mean residence $fmean ns in the files, $jmean ns in the summary"
	echo "swemu: $name ($*): residence mean $jmean ns, p50 $(jq '.pairs[0].residence_ns.p50' "$j") ns, p99 $(jq '.pairs[0].residence_ns.p99' "$j") ns"
}

# 0. A config file's keys in either spelling (HACKING.md, "Naming"): '_' as
# documented, '-' as files written for older releases have them.
for k in jitter_dist jitter-dist; do
	printf '%s uniform\nlatency 5us\n' "$k" > "$out/$k.conf"
	$swemu -f "$out/$k.conf" --show-model > "$out/$k.model" 2>&1 &&
		grep -qx 'switch_jitter_dist uniform' "$out/$k.model" ||
		fail "config key $k: $(cat "$out/$k.model")"
done
printf 'jitter-dist gaussian\n' > "$out/badkey.conf"
$swemu -f "$out/badkey.conf" --show-model 2> "$out/badkey.err"
[ $? -eq 1 ] && grep -q "badkey.conf:1: jitter-dist: 'gaussian' is not one of" "$out/badkey.err" ||
	fail "bad config value: exit and message naming the key as written: $(cat "$out/badkey.err")"

# 1. UDP at latency 0: both ways, counts, truth files; through the receive ring
# (the default), through recvmsg, busy-polling on the last CPU, polling a
# while after each frame.
both zero
jq -e '.io == "ring" and .busy_poll == false and .cpu == -1' "$out/zero.json" > /dev/null ||
	fail "zero: io, busy_poll, cpu not the defaults: $(jq -c '{io, busy_poll, cpu}' "$out/zero.json")"
both sock --io socket
jq -e '.io == "socket"' "$out/sock.json" > /dev/null || fail "sock: io is not socket"
lastcpu=$(( $(nproc) - 1 ))
both busy --busy-poll --cpu "$lastcpu"
jq -e --argjson c "$lastcpu" '.io == "ring" and .busy_poll == true and .cpu == $c' "$out/busy.json" > /dev/null ||
	fail "busy: io, busy_poll, cpu: $(jq -c '{io, busy_poll, cpu}' "$out/busy.json")"
both poll --poll-us 500
j=$out/zero.json

# 1b. TCP: a local TCP sender's frames cross the veth with its departure
# time (EDT) where the arrival stamp would be, so the ring stamps them as
# the kernel hands them over; none is left unstamped, each egress has its
# earlier ingress, in both receive modes.
for io in ring socket; do
	start "tcp-$io" --latency 0 --io "$io"
	PROTO=tcp send ha hb "$net.2" 9417 300 200 "tcp-$io"
	stop "tcp-$io"
	jt=$out/tcp-$io.json
	[ "$(jq '[.ports[] | .rx_unstamped + .tx_stamps_lost + .dropped] | add' "$jt")" = 0 ] ||
		fail "tcp-$io: frames unstamped, dropped or without TX stamp: $(jq -c .ports "$jt")"
	if [ "$io" = ring ]; then
		[ "$(jq '.ports[] | select(.name == "p1") | .rx_copy_stamped' "$jt")" -gt 0 ] ||
			fail "tcp-ring: no TCP frame counted as stamped on delivery: $(jq -c .ports "$jt")"
	fi
	truth "$out/tcp-$io" > "$out/tcp-$io.truth"
	residences "$out/tcp-$io.truth" > "$out/tcp-$io.res"
	[ "$(cat "$out/bad")" = 0 ] || fail "tcp-$io: $(cat "$out/bad") egress EPBs without an earlier ingress on the other port"
	[ "$(wc -l < "$out/tcp-$io.res")" = "$(jq '[.ports[] | .tx] | add' "$jt")" ] ||
		fail "tcp-$io: $(wc -l < "$out/tcp-$io.res") residences, $(jq '[.ports[] | .tx] | add' "$jt") frames sent"
done

# 2. 200 us constant: never less, mean not absurdly more.
start lat --latency 200000 --jitter 0
send ha hb "$net.2" 9413 300 200 lat
stop lat
truth "$out/lat" > "$out/lat.truth"
residences "$out/lat.truth" > "$out/lat.res"
[ "$(wc -l < "$out/lat.res")" = 300 ] || fail "lat: $(wc -l < "$out/lat.res") residences, want 300"
awk '$1 < 200000 { b++ } END { exit b > 0 }' "$out/lat.res" || fail "lat: residences below 200 us: $(sort -n "$out/lat.res" | head -3 | tr '\n' ' ')"
mean=$(jq '.pairs[0].residence_ns.mean | round' "$out/lat.json")
[ "$(jq '.pairs[0].target_ns.min' "$out/lat.json")" = 200000 ] || fail "lat: the model target is not 200000 ns"
[ "${mean:-0}" -ge 200000 ] && [ "$mean" -lt 2200000 ] || fail "lat: mean residence $mean ns, want 200 us .. 2.2 ms"

# 3. Store-and-forward at 100M, 1400-byte frames: >= latency + (len + 4) * 8 / 100M.
start sf --mode store-and-forward --speed 100M --latency 50000
send ha hb "$net.2" 9414 200 1358 sf	# 1358 + 8 + 20 + 14 = 1400-byte frames
stop sf
truth "$out/sf" > "$out/sf.truth"
residences "$out/sf.truth" > "$out/sf.res"
[ "$(wc -l < "$out/sf.res")" = 200 ] || fail "sf: $(wc -l < "$out/sf.res") residences, want 200"
ser=$(( (1400 + 4) * 8 * 10 ))	# ns at 100 Mb/s
awk -v m=$((50000 + ser)) '$1 < m { b++ } END { exit b > 0 }' "$out/sf.res" ||
	fail "sf: residences below latency + serialisation ($((50000 + ser)) ns)"
[ "$(jq '.pairs[0].target_ns.min' "$out/sf.json")" = $((50000 + ser)) ] ||
	fail "sf: model target $(jq '.pairs[0].target_ns.min' "$out/sf.json"), want $((50000 + ser))"

# 4. A preset, with its figures, in --json; an explicit option wins over it.
start pre --preset gnodal-gs7200 --jitter 0
send ha hb "$net.2" 9415 50 200 pre
stop pre
jq -e '.model.preset == "gnodal-gs7200" and .model.mode == "store-and-forward" and
	.model.latency_ns == 487.5 and .model.jitter_ns == 0 and .model.speed_bps == 1e10' \
	"$out/pre.json" > /dev/null || fail "pre: preset not in --json: $(jq -c .model "$out/pre.json")"
[ "$(jq '.pairs[0].residence_ns.count' "$out/pre.json")" = 50 ] || fail "pre: not 50 frames"

# 5. Bad input: non-zero with a message naming it.
bad() {
	local want=$1
	shift
	tl_exec s "$swemu" "$@" > "$out/bad.out" 2>&1 && fail "'$*' exited 0"
	grep -qi -- "$want" "$out/bad.out" || fail "'$*': no '$want' in: $(cat "$out/bad.out")"
}
bad "no model 'cisco-9k'" -i p1 -i p2 --preset cisco-9k
bad "give 2 to" -i p1
bad "tl-none: no such interface" -i p1 -i tl-none
bad "speed" -i p1 -i p2 --speed 7Q
bad "jitter-dist" -i p1 -i p2 --jitter-dist cauchy
bad "io" -i p1 -i p2 --io xdp
bad "cpu" -i p1 -i p2 --cpu 4095
bad "unknown\|unrecognized\|invalid" -i p1 -i p2 --no-such-option
bad "write $out/none: no such directory" -i p1 -i p2 -w "$out/none"
touch "$out/plain"
bad "write $out/plain: not a directory" -i p1 -i p2 -w "$out/plain"
bad "latency: '5parsecs' is not a duration" -i p1 -i p2 --latency 5parsecs

# 6. Valgrind: a short run with traffic, no leak, no error (the writer
# thread included), in both receive modes.
if command -v valgrind > /dev/null; then
	for io in ring socket; do
		mkdir -p "$out/vg-$io"
		tl_bg s valgrind -q --leak-check=full --error-exitcode=99 "$swemu" -i p1 -i p2 \
			-w "$out/vg-$io" --io "$io" --latency 1000 --duration 3 > /dev/null 2> "$out/vg.log"
		vg=$TL_LAST_PID
		sleep 1.5
		send ha hb "$net.2" 9416 100 200 "vg-$io"
		wait "$vg"
		rc=$?
		[ "$rc" = 0 ] || fail "valgrind --io $io: exit $rc: $(head -20 "$out/vg.log")"
		[ "$(build/tools/capdump "$out/vg-$io/p2.pcapng" | grep -c ' out ')" = 100 ] ||
			fail "valgrind --io $io: p2.pcapng does not hold 100 egress blocks"
	done
fi

[ "$fails" -eq 0 ] || exit 1
echo "swemu: ok"
