#!/bin/bash
# swemu — how close tapless-swemu holds frames to its model: the achieved
# residence (egress TX stamp - ingress RX stamp of each frame, read back
# from the truth files the run wrote, paired by packet id) against the
# model's latency, before and after the fast path.
#
# Host a sends single 64-byte UDP frames, evenly paced (blast --paced: one
# frame per period, no burst, so the figure is the switch's and not a queue
# the sender made), to an unknown Ethernet address: swemu floods them to p2
# and host b's stack drops them at once. The switch model is the
# arista-7124sx preset (576.9 ns, SD 8.9 ns), as in the lab.
#
# Designs, side by side in one run:
#   before  the emulator before the fast path, built from git
#           (SWEMU_BENCH_BEFORE, a commit; skipped if it does not build)
#   socket  this emulator, --io socket: a recvmsg per frame
#   ring    this emulator, --io ring (the default): the receive ring
# each in the ways of waiting of SWEMU_BENCH_WAITS (default all three):
#   sleep   the default: ppoll between frames, nothing pinned (the lab on
#           a machine without a core to spare)
#   poll    --poll-us 200: keep polling 200 us after each frame, then
#           sleep; nothing pinned (not in before, which has no such option)
#   busy    --busy-poll --cpu 1, the sender pinned to CPU 0
# at SWEMU_BENCH_RATES frames/s (default 20000 100000) for
# SWEMU_BENCH_SECONDS each (default 2), SWEMU_BENCH_REPEAT times (default
# 1; the medians over repeats are printed after the runs).
#
# Prints per run: frames offered (sent by a), forwarded (egress records),
# lost (kernel drops, queue overflow), residence p50 and p99 in ns and how
# far each is over the model's latency; then the ratio before/ring of p50
# and p99 per way of waiting and rate. Figures only: a benchmark never
# fails on a number. The machine's load (uptime) is printed first: on a
# shared machine the figures move with it.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/netns.sh
tl_setup swemu-bench 198.18.92
out=$TL_OUT
net=198.18.93
secs=${SWEMU_BENCH_SECONDS:-2}
rates=${SWEMU_BENCH_RATES:-20000 100000}
repeat=${SWEMU_BENCH_REPEAT:-1}
waits=${SWEMU_BENCH_WAITS:-sleep poll busy}
before_rev=${SWEMU_BENCH_BEFORE:-f651b83c9b7c6800f1f08e8103b8abd0c9d7346b}
preset=arista-7124sx
new=bin/tapless-swemu
model=$($new --preset $preset --show-model | awk '$1 == "switch_latency_ns" { print $2 }')

# The emulator before the fast path, built against today's library.
old=$out/tapless-swemu-before
pkgs="libnl-3.0 libnl-genl-3.0 libnl-route-3.0 libpcap"
if git show "$before_rev:probes/swemu.c" > "$out/swemu-before.c" 2> /dev/null &&
	${CC:-gcc} -std=c11 -D_GNU_SOURCE -O2 -Isrc -I. $(pkg-config --cflags $pkgs) \
		-o "$old" "$out/swemu-before.c" build/obj/probes/probe.o \
		build/libtapless.a $(pkg-config --libs $pkgs) -lm 2> "$out/before.err"; then
	designs="before socket ring"
else
	echo "swemu: before ($before_rev) does not build here: $(head -2 "$out/before.err" 2>/dev/null)"
	designs="socket ring"
fi

# The switch lab: hosts ha, hb on veths to namespace s (p1, p2).
for n in ha hb s; do
	ip netns add "$(tl_ns $n)" && TL_NS+=("$(tl_ns $n)") || exit 1
	ip -n "$(tl_ns $n)" link set lo up
	# No IPv6: the frames through the switch are the sender's alone.
	ip netns exec "$(tl_ns $n)" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
done
HA=tl${TL_ID}x; HB=tl${TL_ID}y
ip link add "$HA" netns "$(tl_ns ha)" type veth peer name p1 netns "$(tl_ns s)" &&
ip link add "$HB" netns "$(tl_ns hb)" type veth peer name p2 netns "$(tl_ns s)" || exit 1
ip -n "$(tl_ns ha)" addr add $net.1/24 dev "$HA" &&
ip -n "$(tl_ns hb)" addr add $net.2/24 dev "$HB" &&
ip -n "$(tl_ns ha)" link set "$HA" up && ip -n "$(tl_ns hb)" link set "$HB" up &&
ip -n "$(tl_ns s)" link set p1 up && ip -n "$(tl_ns s)" link set p2 up || exit 1

# residences DIR: "NS" per frame forwarded p1 -> p2, from the truth files.
residences() {
	for p in p1 p2; do
		tshark -r "$1/$p.pcapng" -T fields -e frame.packet_id \
			-e frame.packet_flags_direction -e frame.time_epoch 2>/dev/null |
			awk -v p="$p" '{ split($3, t, "."); printf "%s %s %s %s\n", $1, p,
				($2 == "0x00000001" ? "in" : "out"), t[1] substr(t[2] "000000000", 1, 9) }'
	done | awk '
	$2 == "p1" && $3 == "in" { s[$1] = substr($4, 1, length($4) - 9); ns[$1] = substr($4, length($4) - 8) }
	$2 == "p2" && $3 == "out" && ($1 in s) {
		print (substr($4, 1, length($4) - 9) - s[$1]) * 1e9 + (substr($4, length($4) - 8) - ns[$1])
	}'
}

# pct FILE P: the P-th percentile (nearest rank) of FILE's numbers.
pct() {
	sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		k = int(p / 100 * NR + 0.999999); if (k < 1) k = 1; print v[k] }'
}

fmt='%-7s %-6s %7s %4s %9s %9s %6s %9s %9s %9s %9s\n'
echo "swemu: $(nproc) CPUs, load$(uptime | sed 's/.*load average//'); model $preset, $model ns"
printf "$fmt" design wait rate run offered forwarded lost p50_ns p99_ns p50-model p99-model
: > "$out/results"
for r in $(seq "$repeat"); do
	for rate in $rates; do
		for wait in $waits; do
			for design in $designs; do
				[ "$design/$wait" = before/poll ] && continue
				bin=$new
				args=(--preset $preset)
				[ "$design" = before ] && bin=$old
				[ "$design" = socket ] && args+=(--io socket)
				[ "$design" = ring ] && args+=(--io ring)
				pin=()
				[ "$wait" = poll ] && args+=(--poll-us 200)
				if [ "$wait" = busy ]; then
					args+=(--busy-poll --cpu 1)
					pin=(taskset -c 0)
				fi
				rm -rf "$out/w" && mkdir -p "$out/w"
				tl_bg s "$bin" -i p1 -i p2 -w "$out/w" "${args[@]}" --json \
					> "$out/j" 2> "$out/log"
				sw=$TL_LAST_PID
				for _ in $(seq 100); do grep -q switching "$out/log" && break; sleep 0.05; done
				sleep 0.3	# the kernel's RX stamping switch (ts.h)
				sent=$(tl_exec ha "${pin[@]}" build/tools/blast -i "$HA" --paced \
					$net.2 9 "$rate" "$secs" 64 2>&1 |
					sed -n 's/.*sent \([0-9]*\) datagrams.*/\1/p')
				sleep 0.3
				kill -TERM "$sw"
				wait "$sw"
				residences "$out/w" > "$out/res"
				lost=$(jq '[.ports[] | .kernel_drops + .queue_overflow + .dropped] | add' "$out/j" 2>/dev/null)
				p50=$(pct "$out/res" 50)
				p99=$(pct "$out/res" 99)
				row=$(printf "$fmt" "$design" "$wait" "$rate" "$r" "${sent:-?}" \
					"$(wc -l < "$out/res")" "${lost:-?}" "$p50" "$p99" \
					"$(awk -v v="$p50" -v m="$model" 'BEGIN { if (v == "-") print "-"; else printf "%.0f", v - m }')" \
					"$(awk -v v="$p99" -v m="$model" 'BEGIN { if (v == "-") print "-"; else printf "%.0f", v - m }')")
				echo "$row"
				echo "$row" >> "$out/results"
			done
		done
	done
done

# Medians over the repeats, and the least disturbed run's (the lowest
# figure: other work on the machine only ever adds to a residence); then
# the ratios before / ring of the medians.
if [ "$repeat" -gt 1 ]; then
	mfmt='%-7s %-6s %7s %4s %9s %9s %9s %9s %9s %9s\n'
	echo "swemu: medians of $repeat runs, and the lowest of them (min_)"
	printf "$mfmt" design wait rate runs p50_ns p99_ns p50-model p99-model min_p50 min_p99
	awk -v m="$model" -v fmt="$mfmt" '
	function sorted(list, a,   n, i, j, t) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n
	}
	function median(list,   a, n) { n = sorted(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function least(list,   a) { sorted(list, a); return a[1] }
	$8 != "-" { k = $1 " " $2 " " $3; if (!(k in n)) order[++nk] = k; n[k]++; p50[k] = p50[k] " " $8; p99[k] = p99[k] " " $9 }
	END { for (i = 1; i <= nk; i++) { k = order[i]; split(k, f, " ")
		a = sprintf("%.0f", median(p50[k])); b = sprintf("%.0f", median(p99[k]))
		printf fmt, f[1], f[2], f[3], n[k], a, b, sprintf("%.0f", a - m), sprintf("%.0f", b - m),
			least(p50[k]), least(p99[k]) } }' "$out/results" > "$out/medians"
	cat "$out/medians"
	src=$out/medians
else
	src=$out/results
fi
case " $designs " in *" before "*)
	echo "swemu: before -> ring; in brackets the ratio of their excess over the model, how many times closer to it the ring holds frames"
	# p50 and p99: columns 8 and 9 of a run's row, 5 and 6 of a median's.
	awk -v m="$model" -v med="$([ "$repeat" -gt 1 ] && echo 1 || echo 0)" '{ k = $2 " " $3
		p50 = med ? $5 : $8; p99 = med ? $6 : $9
		if ($1 == "before") { b50[k] = p50; b99[k] = p99 }
		if ($1 == "ring") { r50[k] = p50; r99[k] = p99; o[++n] = k } }
	function x(b, r) { return r - m > 0 ? sprintf("%.1fx", (b - m) / (r - m)) : "-" }
	END { for (i = 1; i <= n; i++) { k = o[i]; if (!(k in b50) || b50[k] == "-" || r50[k] == "-") continue
		split(k, f, " ")
		printf "  %-5s %7s frames/s: p50 %.0f -> %.0f ns (%s), p99 %.0f -> %.0f ns (%s)\n",
			f[1], f[2], b50[k], r50[k], x(b50[k], r50[k]), b99[k], r99[k], x(b99[k], r99[k]) } }' "$src"
	;;
esac
echo "swemu: load at the end$(uptime | sed 's/.*load average//')"
