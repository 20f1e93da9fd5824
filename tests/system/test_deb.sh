#!/bin/bash
# The Debian packages (debian/, make deb) on this machine: make deb builds
# tapless and libtapless-stamp from what make built; lintian finds no
# error; dpkg -i installs the files, the user and group tapless, the state
# directory and the units, none enabled; the installed programs run and
# find their files under /usr; dpkg -r keeps the data, the configuration
# and the user; dpkg --purge leaves nothing of either package.
# Root only; it installs packages on the machine, so it refuses to run
# where anything of theirs (a package, the user, /etc/tapless,
# /var/lib/tapless) is there already, and purges both on every exit.
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ "$(id -u)" -ne 0 ]; then
	echo "deb: skipped: needs root to install packages"
	exit 0
fi
for c in dpkg-buildpackage dh lintian fakeroot; do
	if ! command -v "$c" > /dev/null; then
		echo "deb: skipped: no $c (scripts/install-deps installs it)"
		exit 0
	fi
done
PKGS="tapless libtapless-stamp"
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
	if [ -n "$st" ] && [ "$st" != not-installed ]; then
		echo "deb: skipped: package $p is on this machine ($st); the test would purge it"
		exit 0
	fi
done
if getent passwd tapless > /dev/null || getent group tapless > /dev/null ||
	[ -e /etc/tapless ] || [ -e /var/lib/tapless ]; then
	echo "deb: skipped: a tapless user, group, /etc/tapless or /var/lib/tapless" \
		"is there already; the purge would remove it"
	exit 0
fi

d=$(mktemp -d /tmp/tapless-deb.XXXXXX)
installed=0
# shellcheck disable=SC2086
trap '[ $installed = 1 ] && dpkg --purge $PKGS > "$d/trap.log" 2>&1; rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t0=$(date +%s)
make --no-print-directory deb > "$d/make.log" 2>&1 || { echo "FAIL: make deb: $(tail -20 "$d/make.log")"; exit 1; }
# Only the installed paths (PREFIX=/usr) may be compiled again, nothing else.
rebuilt=$(grep -- ' -c -o ' build/deb/build.log | grep -v -c -- '-o build/obj/build/gen/')
[ "$rebuilt" -eq 0 ] || fail "make deb recompiled $rebuilt objects besides the generated ones"
debs=$(ls build/deb/tapless_*.deb build/deb/libtapless-stamp_*.deb 2>/dev/null)
[ "$(echo "$debs" | wc -w)" -eq 2 ] || { echo "FAIL: make deb made: $(ls build/deb)"; exit 1; }
ls ../tapless_* ../libtapless-stamp_* > /dev/null 2>&1 && fail "make deb wrote into ..: $(ls -d ../*tapless*)"
t1=$(date +%s)

# shellcheck disable=SC2086
lintian $debs > "$d/lintian.log" 2>&1
grep '^E:' "$d/lintian.log" && fail "lintian found errors"
t2=$(date +%s)

# The version: make's (git describe), in Debian's spelling in the package.
v=$(bin/tapless --version | awk '{print $NF}')
dv=$(echo "$v" | sed 's/^v//; s/-/+/g')
[ "$(dpkg-deb -f build/deb/tapless_*.deb Version)" = "$dv" ] ||
	fail "package version $(dpkg-deb -f build/deb/tapless_*.deb Version), want $dv"

installed=1
# shellcheck disable=SC2086
dpkg -i $debs > "$d/install.log" 2>&1 || { echo "FAIL: dpkg -i: $(tail -10 "$d/install.log")"; exit 1; }
for p in $PKGS; do dpkg -L "$p"; done | sort -u > "$d/files"

for f in /usr/bin/tapless /usr/bin/tapless-capd /usr/bin/tapless-syncd /usr/bin/tapless-stamp \
	/usr/lib/tapless/libtapless-stamp.so /usr/lib/tapless/libtapless-hwsim.so \
	/usr/lib/tapless/lab /usr/share/man/man8/tapless.8.gz /usr/share/man/man8/tapless-stamp.8.gz \
	/usr/share/man/man5/tapless.conf.5.gz /usr/share/man/man1/tapless-report.1.gz \
	/lib/systemd/system/tapless-syncd.service /lib/systemd/system/tapless-capd@.service \
	/lib/systemd/system/tapless-follow.service /lib/systemd/system/tapless-export.service \
	/usr/share/tapless/clickhouse/schema.sql /usr/share/tapless/clickhouse/hops.sql \
	/usr/share/tapless/plot/cdf.gp /usr/share/tapless/examples/capd-IFACE.env \
	/usr/lib/tmpfiles.d/tapless.conf /etc/tapless/tapless.conf; do
	[ -e "$f" ] || fail "not installed: $f"
done
[ "$(dpkg -S /usr/bin/tapless-stamp 2>/dev/null | cut -d: -f1)" = libtapless-stamp ] ||
	fail "tapless-stamp is not libtapless-stamp's: $(dpkg -S /usr/bin/tapless-stamp 2>&1)"
dpkg-query -W -f='${Conffiles}\n' tapless | grep -q ' /etc/tapless/tapless.conf ' ||
	fail "/etc/tapless/tapless.conf is no conffile"
grep -q '^control_group tapless$' /etc/tapless/tapless.conf ||
	fail "tapless.conf does not give the control socket to group tapless"
grep -q '^ExecStart=/usr/bin/tapless-syncd ' /lib/systemd/system/tapless-syncd.service ||
	fail "the syncd unit runs $(grep ExecStart= /lib/systemd/system/tapless-syncd.service)"
uid=$(getent passwd tapless | cut -d: -f3)
[ -n "$uid" ] && [ "$uid" -lt 1000 ] || fail "no system user tapless: '$uid'"
getent group tapless > /dev/null || fail "no group tapless"
[ "$(stat -c %U:%a /var/lib/tapless 2>&1)" = root:755 ] ||
	fail "/var/lib/tapless: $(stat -c %U:%a /var/lib/tapless 2>&1)"

# Installed, not enabled, not started.
ls /etc/systemd/system/*.wants/tapless* > /dev/null 2>&1 &&
	fail "units enabled: $(ls /etc/systemd/system/*.wants/tapless*)"
for u in tapless-syncd tapless-follow tapless-export; do
	st=$(systemctl is-enabled "$u.service" 2>/dev/null)
	[ "$st" = disabled ] || fail "$u.service is '$st', want disabled"
done
if systemd-analyze verify /lib/systemd/system/tapless-syncd.service > "$d/verify.log" 2>&1; then
	for u in tapless-syncd.service tapless-follow.service tapless-export.service \
		tapless-capd@eth0.service; do
		systemd-analyze verify "/lib/systemd/system/$u" > "$d/verify.log" 2>&1 ||
			fail "systemd-analyze verify $u: $(cat "$d/verify.log")"
	done
else
	echo "deb: systemd-analyze verify cannot run here, not checked: $(head -1 "$d/verify.log")"
fi

# The installed programs run, are the tree's version, and look under /usr.
out=$(/usr/bin/tapless --version 2>&1) || fail "tapless --version: $out"
[ "$out" = "tapless $v" ] || fail "tapless --version says '$out', want 'tapless $v'"
pre=$(env -u TAPLESS_STAMP_LIB /usr/bin/tapless-stamp -- sh -c 'echo $LD_PRELOAD' 2>&1)
[ "$pre" = /usr/lib/tapless/libtapless-stamp.so ] || fail "installed tapless-stamp preloads '$pre'"

# Remove: the programs go; the data, the configuration and the user stay.
echo kept > /var/lib/tapless/deb-test
# shellcheck disable=SC2086
dpkg -r $PKGS > "$d/remove.log" 2>&1 || fail "dpkg -r: $(tail -5 "$d/remove.log")"
for f in /usr/bin/tapless /usr/bin/tapless-stamp /usr/lib/tapless/libtapless-stamp.so \
	/lib/systemd/system/tapless-syncd.service; do
	[ -e "$f" ] && fail "dpkg -r left $f"
done
[ "$(cat /var/lib/tapless/deb-test 2>&1)" = kept ] || fail "dpkg -r removed /var/lib/tapless"
[ -e /etc/tapless/tapless.conf ] || fail "dpkg -r removed the conffile"
getent passwd tapless > /dev/null || fail "dpkg -r removed the user"

# Purge: nothing left.
# shellcheck disable=SC2086
dpkg --purge $PKGS > "$d/purge.log" 2>&1 || fail "dpkg --purge: $(tail -5 "$d/purge.log")"
installed=0
for p in $PKGS; do
	dpkg -L "$p" > /dev/null 2>&1 && fail "dpkg still knows $p"
done
getent passwd tapless > /dev/null && fail "purge left the user tapless"
getent group tapless > /dev/null && fail "purge left the group tapless"
for f in /var/lib/tapless /etc/tapless /usr/lib/tapless /usr/share/tapless \
	/usr/share/doc/tapless /usr/share/doc/libtapless-stamp; do
	[ -e "$f" ] && fail "purge left $f"
done
while read -r f; do
	[ -d "$f" ] && continue
	[ -e "$f" ] && fail "purge left $f"
done < "$d/files"
t3=$(date +%s)

[ "$fails" -eq 0 ] && echo "deb: $(echo "$debs" | xargs -n1 basename | tr '\n' ' ')built" \
	"in $((t1 - t0)) s, lintian $((t2 - t1)) s ($(grep -c '^W:' "$d/lintian.log") warnings)," \
	"install, remove, purge $((t3 - t2)) s; $(wc -l < "$d/files") paths"
[ "$fails" -eq 0 ]
