#!/bin/bash
# capd-disk-full (issue 17, item 5): the disk fills while the last buffer of
# a file is still in memory, so only the final flush fails. Every frame that
# did not reach the disk is counted, capd exits 2 (tapless-capd(8)), the
# file is kept under .part cut back to its last whole block (read to its end
# without error), nothing corrupt is under a final name, and frames in the
# files + frames counted lost = frames sent.
set -u
. scripts/netns.sh
tl_setup capd-disk-full 198.18.42
out=$TL_OUT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A 160 KiB tmpfs in a private mount namespace (gone with it); 300 frames
# of ~1 kB: more than the disk, less than capd's 1 MiB write buffer.
mnt=$out/full
mkdir "$mnt"
unshare -m --propagation private sh -c "mount -t tmpfs -o size=160k tmpfs '$mnt' &&
	ip netns exec $(tl_ns b) bin/tapless-capd -i $TL_IF_B -w '$mnt' --duration 3 \
		udp port 9310 2> '$out/capd.log';
	echo \$? > '$out/capd.rc';
	for f in '$mnt'/*; do [ -e \"\$f\" ] || continue;
		build/tools/capdump \"\$f\" > '$out/dump' 2>&1; rc=\$?;
		echo \"\$rc \$(grep -vc '^iface' '$out/dump') \$f\"; done > '$out/files'" &
full=$!
sleep 1
tl_exec a build/tools/blast 198.18.42.2 9310 1000 0.3 1000 > "$out/blast" ||
	fail "blast: $(cat "$out/blast")"
wait "$full"
sent=$(sed -n 's/^blast: sent \([0-9]*\) .*/\1/p' "$out/blast")
rc=$(cat "$out/capd.rc")
cat "$out/capd.log"
cat "$out/files"
[ "$rc" = 2 ] || fail "capd exited $rc after losing frames to a full disk, want 2"
grep -q "No space left on device" "$out/capd.log" || fail "full disk not reported"
lost=$(sed -n 's/.* \([0-9]*\) frames lost to write errors.*/\1/p' "$out/capd.log")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no frames counted lost"
inf=0
while read -r drc n f; do
	case $f in
	*.part) [ "$drc" -eq 0 ] || fail "$f does not read to its end (cut mid-block)" ;;
	*) [ "$drc" -eq 0 ] || fail "$f under its final name is not whole" ;;
	esac
	inf=$((inf + n))
done < "$out/files"
[ "$inf" -gt 0 ] || fail "nothing kept of what was written"
[ "$((inf + ${lost:-0}))" -eq "${sent:-0}" ] ||
	fail "frames in files $inf + counted lost ${lost:-?} != sent ${sent:-?}"
echo "disk full: exit $rc, $sent sent, $inf in files, ${lost:-?} counted lost" |
	tee -a "${FAULT_SUMMARY:-/dev/null}"
[ "$fails" -eq 0 ]
