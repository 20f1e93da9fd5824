#!/bin/bash
# status-slot-exhaustion (issue 17 item 7): any local user could block
# `tapless status` by holding the control socket's 8 client slots with idle
# connections (reopening any the daemon closed): the daemon closed every
# new client unserved and the client died of SIGPIPE with no output. The
# metrics port had the same slots (curl: empty reply). Now a full table
# closes its oldest idle client to serve the new one, and the client
# retries a refused or wordless connection.
#   30 `tapless status` and 30 curl of /metrics, each while 8 idle
#   connections are held on the socket or port: all must succeed. The
#   socket is mode 0660 with control_group's group.
set -u
. scripts/netns.sh
for t in ptp4l jq curl python3; do
	command -v $t >/dev/null || { echo "status-slot-exhaustion: skipped: no $t"; exit 77; }
done
tl_setup status-slot-exhaustion 198.18.43
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
port=19281
grp=$(getent group adm >/dev/null && echo adm || echo daemon)
cat > "$out/tapless.conf" <<CONF
[global]
journal_dir $out/journal
control_socket $out/syncd.sock
control_group $grp
run_dir $out/run
hostname a
free_running 1
sample_interval 250
metrics_port $port
[$TL_IF_A]
role server
CONF
tl_bg a bin/tapless-syncd -f "$out/tapless.conf" 2> "$out/syncd.log"
syncd=$TL_LAST_PID
for _ in $(seq 50); do [ -S "$out/syncd.sock" ] && break; sleep 0.1; done
[ -S "$out/syncd.sock" ] || { cat "$out/syncd.log"; fail "no control socket"; exit 1; }

# hog KIND ADDR N SECONDS: hold N idle connections, reopening closed ones.
hog() {
	python3 - "$@" <<'PY'
import select, socket, sys, time
kind, addr, n, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
conns, end, opened = [], time.time() + secs, 0
while time.time() < end:
    while len(conns) < n:
        try:
            if kind == "unix":
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(addr)
            else:
                s = socket.create_connection(("127.0.0.1", int(addr)))
        except OSError:
            time.sleep(0.01)
            break
        conns.append(s)
        opened += 1
    r, _, _ = select.select(conns, [], [], 0.02) if conns else ([], [], [])
    for s in r:
        try:
            d = s.recv(4096)
        except OSError:
            d = b""
        if not d:
            conns.remove(s)
            s.close()
print(opened, file=sys.stderr)
PY
}

# The socket's mode and group.
mode=$(stat -c '%a %G' "$out/syncd.sock")
[ "$mode" = "660 $grp" ] || fail "control socket is '$mode', want '660 $grp'"

# 1. tapless status while 8 idle connections hold the slots.
tl_exec a bash -c "$(declare -f hog); hog unix '$out/syncd.sock' 8 40" 2> "$out/hog1.n" &
h=$!
sleep 1
ok=0
for i in $(seq 30); do
	timeout 15 ip netns exec "$(tl_ns a)" bin/tapless status --socket "$out/syncd.sock" \
		> "$out/st.$i" 2> "$out/st.$i.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^clock sys" "$out/st.$i"; then
		ok=$((ok + 1))
	else
		echo "status $i: exit $rc: $(head -c 200 "$out/st.$i.err")"
	fi
done
kill $h 2>/dev/null; wait $h 2>/dev/null
echo "status: $ok/30 answered under 8 idle connections"
[ $ok -eq 30 ] || fail "status answered $ok of 30 times"

# 2. curl /metrics while 8 idle connections hold the port's slots.
tl_exec a bash -c "$(declare -f hog); hog tcp $port 8 40" 2> "$out/hog2.n" &
h=$!
sleep 1
mok=0
for i in $(seq 30); do
	if tl_exec a curl -sS -m 10 "http://127.0.0.1:$port/metrics" > "$out/m.$i" 2>&1 &&
	    grep -q '^tapless_clock_in_sync' "$out/m.$i"; then
		mok=$((mok + 1))
	else
		echo "curl $i: $(head -c 200 "$out/m.$i")"
	fi
done
kill $h 2>/dev/null; wait $h 2>/dev/null
echo "metrics: $mok/30 answered under 8 idle connections"
[ $mok -eq 30 ] || fail "metrics answered $mok of 30 times"

# 3. A daemon with no control_group: 0660, the daemon's group.
kill -TERM "$syncd"; wait "$syncd"
sed -i '/^control_group/d; /^metrics_port/d' "$out/tapless.conf"
tl_bg a bin/tapless-syncd -f "$out/tapless.conf" 2> "$out/syncd2.log"
syncd=$TL_LAST_PID
for _ in $(seq 50); do [ -S "$out/syncd.sock" ] && break; sleep 0.1; done
mode=$(stat -c '%a %G' "$out/syncd.sock" 2>&1)
[ "$mode" = "660 $(id -gn)" ] || fail "default control socket is '$mode', want '660 $(id -gn)'"
kill -TERM "$syncd"; wait "$syncd"

echo "status $ok/30, metrics $mok/30 answered while 8 idle connections were held; socket 0660 $grp" \
	> "${FAULT_SUMMARY:-/dev/null}"
[ $fails -eq 0 ] && echo "status-slot-exhaustion: ok" && exit 0
exit 1
