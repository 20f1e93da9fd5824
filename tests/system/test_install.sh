#!/bin/bash
# make install with a PREFIX other than the default, into a DESTDIR, after
# a plain "make": the installed tapless must look for its files under that
# PREFIX (it once kept /usr/local, compiled in by the first build) and
# find them there. The install runs on a copy of the tree and its build, so
# the tree's own bin/ is left as it was; the installed tree is mounted at
# its PREFIX in a private mount namespace, as a package manager would lay
# it out, and tapless report draws its plots from the installed templates.
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ "$(id -u)" -ne 0 ]; then
	echo "install: skipped: needs root for a private mount namespace"
	exit 0
fi
d=$(mktemp -d /tmp/tapless-install.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
prefix=$d/prefix
dest=$d/dest

# The tree as tracked, with its build (mtimes kept: nothing but what the
# PREFIX changes is rebuilt).
mkdir "$d/tree"
git ls-files -z | xargs -0 cp -a --parents -t "$d/tree" || { echo "FAIL: copy"; exit 1; }
cp -a bin build "$d/tree/"
rm -rf "$d/tree/build/san"
make -C "$d/tree" --no-print-directory install PREFIX="$prefix" DESTDIR="$dest" \
	> "$d/install.log" 2>&1 || { echo "FAIL: make install: $(tail -5 "$d/install.log")"; exit 1; }
# Only generated objects (the paths; the version, as the copy is no git
# checkout) may be recompiled, then the library and the links redone.
rebuilt=$(grep -- ' -c -o ' "$d/install.log" | grep -v -c -- '-o build/obj/build/gen/')
[ "$rebuilt" -eq 0 ] || fail "make install recompiled $rebuilt objects besides the generated ones"
grep -q -- '-o build/obj/build/gen/paths.o' "$d/install.log" ||
	fail "make install did not rebuild the installed paths"
for f in bin/tapless bin/tapless-capd bin/tapless-syncd bin/tapless-stamp lib/tapless/lab \
	 lib/tapless/libtapless-stamp.so share/tapless/plot/latency-rate.gp \
	 share/man/man8/tapless.8 share/man/man8/tapless-stamp.8 share/man/man7/tapless-prometheus.7 \
	 share/tapless/prometheus/tapless-rules.yml share/tapless/grafana/tapless.json; do
	[ -e "$dest$prefix/$f" ] || fail "not installed: $f"
done

# A run directory for the report, from the simulator.
R=$d/run
mkdir -p "$R/rate-1000"
bin/tapless sim --output "$d/sim" --rate 1000 -d 1 --seed 3 > /dev/null 2>&1 || fail "sim"
bin/tapless correlate --json --samples "$R/rate-1000/samples.txt" -t "$d/sim/topology" \
	venue="$d/sim/venue.pcapng" algo="$d/sim/algo.pcapng" > "$R/rate-1000/correlate.json" \
	2> "$d/corr.err" || fail "correlate: $(cat "$d/corr.err")"
printf 'id install-1\nrates 1000\nduration 1\nhosts venue,algo\n' > "$R/lab.conf"

# In the namespace /usr/local is hidden too: templates installed there by
# another build must not stand in for the ones under PREFIX.
mkdir -p "$prefix"
unset TAPLESS_PLOT_DIR TAPLESS_LAB_SCRIPT
unshare -m sh -c '{ [ ! -d /usr/local ] || mount -t tmpfs none /usr/local; } &&
	mount --bind "$1" "$2" && "$2/bin/tapless" report "$3"' sh \
	"$dest$prefix" "$prefix" "$R" > "$d/report.out" 2> "$d/report.err" ||
	fail "installed tapless report: exit $?: $(cat "$d/report.err")"
grep -q "no plot templates" "$d/report.err" &&
	fail "the installed tapless did not find its templates: $(cat "$d/report.err")"
ls "$R"/report/plots/*.png > /dev/null 2>&1 || fail "no plots drawn: $(ls "$R/report/plots" 2>&1)"
# The installed tapless-stamp preloads the installed library, not the
# build tree's.
unshare -m sh -c '{ [ ! -d /usr/local ] || mount -t tmpfs none /usr/local; } &&
	mount --bind "$1" "$2" && "$2/bin/tapless-stamp" -- sh -c "echo \$LD_PRELOAD"' sh \
	"$dest$prefix" "$prefix" > "$d/stamp.out" 2> "$d/stamp.err" ||
	fail "installed tapless-stamp: exit $?: $(cat "$d/stamp.err")"
[ "$(cat "$d/stamp.out")" = "$prefix/lib/tapless/libtapless-stamp.so" ] ||
	fail "installed tapless-stamp preloads '$(cat "$d/stamp.out")'"
# Nothing was left mounted in this namespace.
grep -q " $prefix " /proc/self/mounts && fail "$prefix still mounted"

[ "$fails" -eq 0 ] && echo "install: installed under $prefix, report drew $(ls "$R"/report/plots/*.png | wc -l) plots"
[ "$fails" -eq 0 ]
