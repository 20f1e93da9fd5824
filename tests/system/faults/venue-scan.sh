#!/bin/bash
# venue-scan (issue 17 item 3): the venue used to take the first TCP
# connection on each port for the algo, so a port scan's connect-and-close
# (or a load balancer's health check) ended the run, and connections held
# open before the algo's locked it out until --accept-timeout. Here, before
# the algo: connect-and-close on both ports, garbage, a Logon with the
# wrong CompIDs, and 200 idle connections held open; during the run, more
# connect-and-close. The run must complete with exit 0 on both sides and
# the algo's sessions be the ones that count.
set -u
. scripts/netns.sh
tl_setup fault-scan 198.18.23
out=$TL_OUT
summary=${FAULT_SUMMARY:-/dev/null}
command -v python3 > /dev/null || { echo "venue-scan: skipped: needs python3"; exit 77; }
ip=198.18.23.2
addr="--md $ip:9001 --ord $ip:9002"
cat > "$out/scan.py" <<'PY'
import socket, sys, time
ip, mode = sys.argv[1], sys.argv[2]
ports = (9001, 9002)
def fix(body):
    b = "8=FIX.4.4\x019=%d\x01%s" % (len(body), body)
    return (b + "10=%03d\x01" % (sum(b.encode()) % 256)).encode()
def conn(port):
    s = socket.socket()
    s.connect((ip, port))
    return s
if mode == "scan":		# connect-and-close, garbage, wrong CompIDs
    for i in range(int(sys.argv[3])):
        for p in ports:
            conn(p).close()
    for p in ports:
        s = conn(p); s.sendall(b"GET / HTTP/1.1\r\n\r\n"); time.sleep(0.05); s.close()
        s = conn(p)
        s.sendall(fix("35=A\x0149=EVIL\x0156=VENUE\x0134=1\x0152=20260101-00:00:00.000\x0198=0\x01108=30\x01"))
        time.sleep(0.05); s.close()
elif mode == "hold":		# idle connections held open until killed
    held = [conn(ports[i % 2]) for i in range(int(sys.argv[3]))]
    print("holding %d" % len(held), flush=True)
    time.sleep(3600)
PY
tl_bg b bin/tapless-venue $addr --rate 1000 --duration 4 --accept-timeout 20 \
	--json > "$out/v.json" 2> "$out/v.log"
vp=$TL_LAST_PID
sleep 0.3
tl_exec a python3 "$out/scan.py" $ip scan 20 || echo "scan could not connect"
tl_bg a python3 "$out/scan.py" $ip hold 200 > "$out/hold.log" 2>&1
hp=$TL_LAST_PID
for _ in $(seq 50); do grep -q holding "$out/hold.log" && break; sleep 0.1; done
cat "$out/hold.log"
tl_bg a bin/tapless-algo $addr --json --connect-timeout 10 > "$out/a.json" 2> "$out/a.log"
ap=$TL_LAST_PID
sleep 1.5
tl_exec a python3 "$out/scan.py" $ip scan 5 || echo "scan during the run could not connect"
wait "$ap"
arc=$?
wait "$vp"
vrc=$?
kill "$hp" 2> /dev/null
echo "venue exit $vrc, algo exit $arc"
sed 's/^/venue: /' "$out/v.log" | tail -8
sed 's/^/algo: /' "$out/a.log" | tail -5
line=$(jq -r --slurpfile a "$out/a.json" '"published \(.md_published), algo received \($a[0].md_received), closed \(.refused // "?") others"' \
	"$out/v.json" 2>/dev/null)
echo "exit venue $vrc algo $arc, ${line:-no summary}" > "$summary"
bad=0
[ "$vrc" -eq 0 ] && [ "$arc" -eq 0 ] || { echo "FAIL: exit venue $vrc algo $arc"; bad=1; }
jq -e --slurpfile a "$out/a.json" '.md_published == 4000 and $a[0].md_received == 4000' \
	"$out/v.json" > /dev/null 2>&1 || { echo "FAIL: the algo's sessions did not carry the run"; bad=1; }
exit $bad
