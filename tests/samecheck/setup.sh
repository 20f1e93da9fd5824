# setup.sh — the inputs every samecheck list reads, made once with $B.
# Runs in the work folder; everything it writes is copied for each line.
set -e
"$B/tapless" sim --seed 3 --rate 2000 --duration 1 -o s1 >/dev/null 2>&1
"$B/tapless" sim --seed 4 --rate 3000 --duration 1 --switch none \
	--format venue=pcap --capture-drop algo=0.01 --retransmit 0.01 \
	--reorder 0.01 --noise 0.05 --tap algo --unsync venue=0.3-0.6 \
	-o s2 >/dev/null 2>&1
"$B/tapless" sim --seed 5 --rates 1000,5000 --duration 1 \
	--clock algo:offset=300,rate=2 -o s3 >/dev/null 2>&1
printf 'host algo 198.18.0.1\nhost venue\n' >bad.topology
printf 'garbage\n' >bad.pcapng
# Folders to follow (tapless correlate --follow reads a host's folder).
mkdir -p f1/algo f1/venue
cp s1/algo.pcapng f1/algo/ && cp s1/venue.pcapng f1/venue/
# A run directory for tapless report, laid out as tests/replay/test_report.sh
# lays one out: two rates correlated with a back-to-back baseline, stamp
# calibrations and the emulator's truth of the venue's own frames (swgen
# --from, so that the per-sample error tables have figures) at 1000/s.
swgen=$B/../build/tools/swgen
for rate in 1000 5000; do
	"$B/tapless" sim --out sw$rate --rate $rate -d 1 --seed 21 >/dev/null 2>&1
	"$B/tapless" sim --out b2b$rate --rate $rate -d 1 --seed 21 --switch none >/dev/null 2>&1
	mkdir -p run/rate-$rate
	"$B/tapless" correlate --json --samples run/rate-$rate/samples.txt \
		-t sw$rate/topology -s venue=sw$rate/venue.journal -s algo=sw$rate/algo.journal \
		--baseline venue=b2b$rate/venue.pcapng --baseline algo=b2b$rate/algo.pcapng \
		venue=sw$rate/venue.pcapng algo=sw$rate/algo.pcapng >run/rate-$rate/correlate.json 2>/dev/null
done
mkdir -p run/journals run/rate-1000/switch/swemu run/rate-1000/switch/venue
cp sw1000/venue.journal sw1000/algo.journal run/journals/
cp sw1000/topology run/rate-1000/topology
cp sw1000/venue.pcapng run/rate-1000/switch/venue/
for h in venue algo; do
	printf 'host %s\nmeasured by hand\nstamp tx sw offset 0 spread 30 samples 7\nstamp rx sw offset 0 spread 20\n' \
		$h >run/rate-1000/$h.cal
done
"$swgen" --from sw1000/venue.pcapng run/rate-1000/switch/swemu 1000 560 5 198.18.0.2 >/dev/null
printf 'id same\nrates 1000,5000\nstamps software\nswitch arista-7124sx\nswitch_mode cut-through\nswitch_latency_ns 576.9\nswitch_jitter_ns 8.9\nmd_source 198.18.0.2:*\nhosts venue,algo\n' >run/lab.conf
# A journal with more events than tapless status keeps (10): the ring of
# the last ones wraps.
{ cat s1/algo.journal
  for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15; do
	echo "17639000${i}000000000 event phc0 port_state port 1: SLAVE -> UNCALIBRATED ($i)"
  done
  echo "1763900016000000000 event - link_down eth0"; } >events.journal
# A simulated host, for lines that must find one (its file holds times).
"$B/tapless-hwsim" --host x --dir h true >/dev/null 2>&1
