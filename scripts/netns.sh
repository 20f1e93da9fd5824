# netns.sh — network namespaces for tapless tests, the demo and the lab.
# Source it from bash. Everything it makes is named with a tapless prefix and
# a per-run id (TL_ID), and tl_cleanup, installed on EXIT/INT/TERM, removes it
# all and stops the processes started with tl_bg, so parallel and failed runs
# leave nothing behind.
#
#   tl_init                 choose TL_ID, install the trap
#   tl_pair A B NET         namespaces tapless-$TL_ID-A/-B joined by a veth
#                           pair, addresses NET.1/24 (A) and NET.2/24 (B);
#                           NET is three octets of 198.18.0.0/15
#   tl_bridge BR NET H...   namespace BR holding a bridge, and one namespace
#                           per host H joined to it by a veth; host i (from
#                           1) gets NET.i/24 and its interface name in
#                           TL_IF[H]
#   tl_ns NAME              the full name of namespace NAME
#   tl_exec NAME CMD...     run CMD in namespace NAME
#   tl_bg NAME CMD...       run CMD in namespace NAME in the background;
#                           its pid is in TL_LAST_PID
#   tl_cgroup NAME          a cgroup v2 tapless-$TL_ID-NAME below the
#                           cgroup2 mount, its path in TL_CGROUP (fails
#                           without cgroup v2); tl_cleanup kills what
#                           runs in it and removes it
#   tl_cleanup              remove everything (also run by the trap)
#   tl_setup NAME NET       the usual start of a script: without root say
#                           "NAME: skipped" and exit 0 (TL_SKIP_STATUS
#                           if set: the fault suite's 77); else tl_init, a
#                           temporary directory in TL_OUT (removed on exit)
#                           and tl_pair a b NET

TL_NS=()
TL_LINKS=()
TL_PIDS=()
TL_CGROUPS=()

tl_init() {
	# Short enough that "tl${TL_ID}a" fits IFNAMSIZ (15 characters).
	TL_ID=$(printf '%05x%02x' $(($$ % 1048576)) $((RANDOM % 256)))
	trap tl_cleanup EXIT
	trap 'tl_cleanup; exit 130' INT
	trap 'tl_cleanup; exit 143' TERM
}

tl_ns() { echo "tapless-$TL_ID-$1"; }

tl_exec() {
	local ns
	ns=$(tl_ns "$1")
	shift
	ip netns exec "$ns" "$@"
}

tl_bg() {
	local ns
	ns=$(tl_ns "$1")
	shift
	ip netns exec "$ns" "$@" &
	TL_LAST_PID=$!
	TL_PIDS+=("$TL_LAST_PID")
}

tl_pair() {
	local a b net la lb
	a=$(tl_ns "$1")
	b=$(tl_ns "$2")
	net=$3
	la="tl${TL_ID}${1:0:1}"
	lb="tl${TL_ID}${2:0:1}"
	[ "$la" = "$lb" ] && lb="${lb}2"
	ip netns add "$a" && TL_NS+=("$a") || return 1
	ip netns add "$b" && TL_NS+=("$b") || return 1
	ip link add "$la" type veth peer name "$lb" || return 1
	TL_LINKS+=("$la")
	ip link set "$la" netns "$a" && ip link set "$lb" netns "$b" || return 1
	ip -n "$a" addr add "$net.1/24" dev "$la" &&
	ip -n "$b" addr add "$net.2/24" dev "$lb" &&
	ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
	ip -n "$a" link set "$la" up && ip -n "$b" link set "$lb" up || return 1
	TL_IF_A=$la
	TL_IF_B=$lb
}

declare -A TL_IF

tl_bridge() {
	local br net i=0 h ns hl bl bns
	br=$1
	net=$2
	shift 2
	bns=$(tl_ns "$br")
	ip netns add "$bns" && TL_NS+=("$bns") || return 1
	ip -n "$bns" link add br0 type bridge &&
	ip -n "$bns" link set br0 up && ip -n "$bns" link set lo up || return 1
	for h in "$@"; do
		i=$((i + 1))
		ns=$(tl_ns "$h")
		hl="tl${TL_ID}h$i"
		bl="tl${TL_ID}b$i"
		ip netns add "$ns" && TL_NS+=("$ns") || return 1
		ip link add "$hl" type veth peer name "$bl" || return 1
		TL_LINKS+=("$hl")
		ip link set "$hl" netns "$ns" && ip link set "$bl" netns "$bns" &&
		ip -n "$bns" link set "$bl" master br0 &&
		ip -n "$bns" link set "$bl" up &&
		ip -n "$ns" addr add "$net.$i/24" dev "$hl" &&
		ip -n "$ns" link set lo up && ip -n "$ns" link set "$hl" up || return 1
		TL_IF[$h]=$hl
	done
}

tl_cgroup() {
	local root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] || return 1
	TL_CGROUP=$root/tapless-$TL_ID-$1
	mkdir "$TL_CGROUP" && TL_CGROUPS+=("$TL_CGROUP")
}

tl_cleanup() {
	local p n l c
	# A cgroup goes once empty: kill what runs in it, wait for it to be
	# gone (cgroup files all say size 0: read them).
	for c in "${TL_CGROUPS[@]}"; do
		echo 1 > "$c/cgroup.kill" 2>/dev/null
		for _ in $(seq 100); do grep -q . "$c/cgroup.procs" 2>/dev/null || break; sleep 0.05; done
		rmdir "$c" 2>/dev/null || echo "netns.sh: could not remove $c" >&2
	done
	TL_CGROUPS=()
	for p in "${TL_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${TL_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	TL_PIDS=()
	# Deleting a namespace deletes the veth ends inside it; a link still
	# in the root namespace (failed half-way) is deleted by name.
	for n in "${TL_NS[@]}"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	for l in "${TL_LINKS[@]}"; do
		ip link del "$l" 2>/dev/null
	done
	TL_NS=()
	TL_LINKS=()
}

tl_setup() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$1: skipped: needs root for network namespaces"
		exit "${TL_SKIP_STATUS:-0}"
	fi
	tl_init
	TL_OUT=$(mktemp -d "/tmp/tapless-$1.XXXXXX")
	# TL_KEEP=1 keeps the output directory for a post-mortem.
	if [ "${TL_KEEP:-0}" = 1 ]; then
		trap "tl_cleanup; echo '$1: kept $TL_OUT'" EXIT
	else
		trap 'tl_cleanup; rm -rf "$TL_OUT"' EXIT
	fi
	tl_pair a b "$2" || { echo "FAIL: $1: could not build the namespaces"; exit 1; }
}
