#!/bin/bash
# The fault suite: each tests/system/faults/NAME.sh reproduces one fault or
# hostile input that once broke tapless (issue 17) and asserts that it no
# longer does. A case is run from the top of the tree with bash; it exits 0
# (fixed), 77 (skipped: it says why on its last line of output) or anything
# else (broken), and may write one line of figures to the file named by
# $FAULT_SUMMARY, shown in the table. Cases make their own namespaces with
# scripts/netns.sh and clean up on every exit path.
#
# FAULTS="a b" runs only those cases; FAULTS_VERBOSE=1 shows every case's
# output even when it passed.
#
# A case that mostly waits (capd-iface-deleted: a 3 s CPU sample, then
# its 6 s --iface-grace) runs in the background beside the others, never
# beside fttc-100k, which takes both cores and waits for it; the table
# keeps the cases' order.
set -u
shopt -s nullglob
cd "$(dirname "$0")/../.." || exit 2
if [ "$(id -u)" -ne 0 ]; then
	echo "test_faults: skipped: needs root for network namespaces"
	exit 0
fi
tmp=$(mktemp -d /tmp/tapless-faults.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cases=()
if [ -n "${FAULTS:-}" ]; then
	for c in $FAULTS; do cases+=("tests/system/faults/$c.sh"); done
else
	cases=(tests/system/faults/*.sh)
fi
rows=()
fails=0
beside=" capd-iface-deleted "
alone=" fttc-100k "
# A case run without root says so through tl_setup (scripts/netns.sh)
# and exits 77, "skipped", not 0.
export TL_SKIP_STATUS=77
# run_case CASE: its output in $tmp/NAME.log, "STATUS SECONDS" in
# $tmp/NAME.rc.
run_case() {
	local name start rc
	name=$(basename "$1" .sh)
	: > "$tmp/$name.summary"
	start=$(date +%s)
	FAULT_SUMMARY=$tmp/$name.summary bash "$1" > "$tmp/$name.log" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - start))" > "$tmp/$name.rc"
}
bg=()
for c in "${cases[@]}"; do
	[ -f "$c" ] || continue
	case $beside in *" $(basename "$c" .sh) "*) run_case "$c" & bg+=($!) ;; esac
done
for c in "${cases[@]}"; do
	[ -f "$c" ] || { echo "FAIL: no fault case $c"; fails=$((fails + 1)); continue; }
	name=$(basename "$c" .sh)
	case $beside in *" $name "*) continue ;; esac
	case $alone in *" $name "*) [ ${#bg[@]} -eq 0 ] || wait "${bg[@]}"; bg=() ;; esac
	run_case "$c"
done
[ ${#bg[@]} -eq 0 ] || wait "${bg[@]}"
for c in "${cases[@]}"; do
	[ -f "$c" ] || continue
	name=$(basename "$c" .sh)
	log=$tmp/$name.log
	read -r rc secs < "$tmp/$name.rc"
	case $rc in
	0) verdict=fixed ;;
	77) verdict=skipped; : > "$tmp/$name.summary"; tail -n 1 "$log" > "$tmp/$name.summary" ;;
	*) verdict="BROKEN($rc)"; fails=$((fails + 1)) ;;
	esac
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] || [ "${FAULTS_VERBOSE:-0}" = 1 ]; then
		sed "s/^/  $name: /" "$log"
	fi
	rows+=("$(printf '%-28s %-10s %4s s  %s' "$name" "$verdict" "$secs" "$(head -n 1 "$tmp/$name.summary")")")
done
echo
printf '%-28s %-10s %6s  %s\n' case verdict time figures
for r in "${rows[@]}"; do echo "$r"; done
echo
echo "test_faults: ${#cases[@]} cases, $fails broken"
[ "$fails" -eq 0 ]
