# syncd_hosts.sh — tapless-syncd hosts for the namespace tests (sourced
# after scripts/netns.sh, with $out the test's directory and TL_IF from
# tl_bridge):
#   syncd_conf HOST ROLE [LINE...]  $out/HOST/tapless.conf: journal, control
#                       socket and run_dir under $out/HOST, free running
#                       (the namespaces share the machine's clock: never
#                       steer it), samples every 250 ms, a threshold for
#                       software stamps (µs, not ns), the [global] LINEs
#                       given, and the host's port with fast PTP intervals
#   st HOST             its `tapless status --json`
#   wait_for HOST SECONDS JQ-EXPR
#                       until the expression is true on its status (the
#                       last answer left in $out/HOST.status); 1 if never
syncd_conf() {
	local h=$1 role=$2
	shift 2
	mkdir -p "$out/$h"
	{
		echo "[global]"
		echo "domain 0"
		echo "journal_dir $out/$h/journal"
		echo "control_socket $out/$h/syncd.sock"
		echo "run_dir $out/$h/run"
		echo "hostname $h"
		echo "free_running 1"
		echo "sample_interval 250"
		echo "sync_threshold 200000"
		for x in "$@"; do echo "$x"; done
		echo "[${TL_IF[$h]}]"
		echo "role $role"
		echo "sync_interval -3"
		echo "announce_interval -2"
		echo "delay_req_interval -3"
	} > "$out/$h/tapless.conf"
}

st() { tl_exec "$1" bin/tapless status --json --socket "$out/$1/syncd.sock" 2>/dev/null; }

wait_for() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		st "$1" > "$out/$1.status" 2>/dev/null
		[ "$(jq -r "$3" "$out/$1.status" 2>/dev/null)" = true ] && return 0
		sleep 0.2
	done
	return 1
}
