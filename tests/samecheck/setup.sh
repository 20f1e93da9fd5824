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
# A simulated host, for lines that must find one (its file holds times).
"$B/tapless-hwsim" --host x --dir h true >/dev/null 2>&1
