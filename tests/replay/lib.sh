# lib.sh — the start the replay tests share (sourced, after set -u):
#   replay_setup NAME   a temporary directory in $d (removed on exit, with
#                       the background processes whose pids are listed in
#                       $pids killed first), fail() counting into $fails,
#                       $T the tapless binary under test (TAPLESS, else
#                       bin/tapless) and $L the system tests' helpers.
replay_setup() {
	d=$(mktemp -d "/tmp/tapless-$1.XXXXXX")
	pids=""
	trap replay_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	fails=0
	T=${TAPLESS:-bin/tapless}
	L=tests/system/lib
}

replay_cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$d"
}

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
