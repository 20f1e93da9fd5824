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
# A case run without root says so through tl_setup (scripts/netns.sh)
# and exits 77, "skipped", not 0.
export TL_SKIP_STATUS=77
for c in "${cases[@]}"; do
	[ -f "$c" ] || { echo "FAIL: no fault case $c"; fails=$((fails + 1)); continue; }
	name=$(basename "$c" .sh)
	log=$tmp/$name.log
	: > "$tmp/$name.summary"
	start=$(date +%s)
	FAULT_SUMMARY=$tmp/$name.summary bash "$c" > "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
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
