#!/bin/bash
# Deployed as documented, it works: make install, then each installed
# unit's own ExecStart run the way systemd would run it, with the
# installed example configuration, in a namespace pair.
#   - the units' commands are read from the installed files, not written
#     here: %i, %H, Environment= and the EnvironmentFile expanded as
#     systemd does, under setpriv with the unit's CapabilityBoundingSet,
#     AmbientCapabilities, User and NoNewPrivileges;
#   - the installed tree is mounted at its PREFIX (/usr/local) and a
#     temporary directory at /run/tapless, in private mount namespaces:
#     the socket paths stay exactly the units' and tapless-stamp's
#     defaults. /etc/tapless and /var/lib/tapless are rewritten into the
#     temporary root (the state directories systemd would create);
#     --syslog is dropped (its lines are what systemd takes from stderr);
#   - tapless-syncd with the example tapless.conf (the interface renamed,
#     free_running 1: nothing touches the machine's clock) journals at the
#     path the follow unit's example reads;
#   - tapless-capd@IFACE captures (a pcapng appears), and tapless-stamp
#     with NO options reaches it: its default socket is, by string, the
#     unit's, and capd joins its keyed stamps;
#   - with the example drop-in, capd --stamp-cgroup attaches under the
#     unit's bounding set; without it, it is refused (exit 2);
#   - make install keeps a tapless.conf already in /etc/tapless;
#   - systemd-analyze verify accepts the installed units.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/netns.sh
tl_setup deploy 198.18.32
out=$TL_OUT
fails=0
fail() { echo "FAIL: deploy: $*"; fails=$((fails + 1)); }
for c in setpriv nsenter unshare ptp4l socat; do
	command -v $c > /dev/null || { echo "FAIL: deploy: $c missing"; exit 1; }
done

# make install, as test_install.sh does it: on a copy of the tree and its
# build (the tree's own bin/ left alone), into a DESTDIR.
prefix=/usr/local
dest=$out/dest
mkdir "$out/tree"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -a --parents -t "$out/tree" ||
	{ echo "FAIL: deploy: copy"; exit 1; }
cp -a bin build "$out/tree/"
rm -rf "$out/tree/build/san"
make -C "$out/tree" --no-print-directory install PREFIX=$prefix DESTDIR="$dest" \
	> "$out/install.log" 2>&1 || { echo "FAIL: deploy: make install: $(tail -5 "$out/install.log")"; exit 1; }
units=$dest$prefix/lib/systemd/system
ex=$dest$prefix/share/tapless/examples
for f in "$units/tapless-capd@.service" "$units/tapless-syncd.service" \
	 "$ex/tapless.conf" "$ex/capd-IFACE.env" "$ex/capd-stamp-cgroup.conf" \
	 "$ex/follow.env" "$ex/export.env" "$dest/etc/tapless/tapless.conf"; do
	[ -f "$f" ] || { echo "FAIL: deploy: not installed: ${f#$dest}"; exit 1; }
done
# A second install keeps the user's configuration.
echo "# the user's" >> "$dest/etc/tapless/tapless.conf"
make -C "$out/tree" --no-print-directory install PREFIX=$prefix DESTDIR="$dest" \
	> "$out/install2.log" 2>&1 || fail "second make install: $(tail -3 "$out/install2.log")"
grep -q "^# the user's" "$dest/etc/tapless/tapless.conf" ||
	fail "make install overwrote /etc/tapless/tapless.conf"

# Where /run/tapless is, in our mount namespaces. If the machine has none,
# a mount point is made and removed at exit.
root=$out/root
mkdir -p "$root/run/tapless" "$root/etc/tapless" "$root/var/lib/tapless"
made_run=0
if [ ! -d /run/tapless ]; then
	mkdir /run/tapless && made_run=1
fi
trap 'tl_cleanup; [ $made_run = 1 ] && rmdir /run/tapless
	if [ "${TL_KEEP:-0}" = 1 ]; then echo "deploy: kept $out"; else rm -rf "$out"; fi' EXIT

# inst [-x] NS CMD...: CMD in namespace NS (nsenter, not ip netns exec,
# which mounts a fresh /sys and so hides the cgroup hierarchy), the
# installed tree at its PREFIX and ours at /run/tapless. -x: exec it (in
# a background subshell, so that its pid is the command's).
inst() {
	local x=
	[ "$1" = -x ] && { x=exec; shift; }
	$x unshare -m --propagation private sh -c 'mount --bind "$1" "$2" &&
		mount --bind "$3" /run/tapless && shift 3 &&
		exec nsenter --net="/run/netns/$0" "$@"' \
		"$(tl_ns "$1")" "$dest$prefix" "$prefix" "$root/run/tapless" "${@:2}"
}

# key UNIT-FILE... KEY: the values of KEY in the files, space-joined
# (systemd adds up CapabilityBoundingSet= and AmbientCapabilities= lines).
key() {
	local k=${*: -1}
	sed -n "s/^$k=//p" "${@:1:$#-1}" | tr '\n' ' ' | sed 's/ *$//'
}
# caps "CAP_A CAP_B": setpriv's form, -all,+a,+b.
caps() {
	local s=-all c
	for c in $1; do s="$s,+$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"; done
	echo "$s"
}
# cmdline UNIT-FILE... INSTANCE ENVFILE: the unit's ExecStart as argv,
# one a line, expanded as systemd does: %i, %H, ${VAR} as one word and
# $VAR split at blanks, from Environment= and then the EnvironmentFile
# (which wins); its paths moved into the temporary root; --syslog off.
cmdline() {
	local envf=${*: -1} inst=${*: -2:1} files=("${@:1:$#-2}")
	(
		set -f
		for a in $(key "${files[@]}" Environment); do export "${a?}"; done
		# KEY=VALUE lines, the value as it stands (blanks and all).
		if [ -f "$envf" ]; then
			while IFS= read -r l; do
				case $l in ''|\#*) ;; *=*) export "${l%%=*}=${l#*=}" ;; esac
			done < "$envf"
		fi
		for w in $(key "${files[@]}" ExecStart); do
			w=${w//%i/$inst}
			w=${w//%H/hosta}
			w=${w//\/etc\/tapless/$root/etc/tapless}
			w=${w//\/var\/lib\/tapless/$root/var/lib/tapless}
			case $w in
			--syslog) ;;
			\$\{*\}) v=${w:2:-1}; echo "${!v-}" ;;
			\$*) v=${w:1}; for x in ${!v-}; do echo "$x"; done ;;
			*) echo "$w" ;;
			esac
		done
	)
}
# unit NS LOG UNIT-FILE... INSTANCE ENVFILE: run the unit's command in the
# background under its privileges; pid in TL_LAST_PID.
unit() {
	local ns=$1 log=$2 files=("${@:3:$#-4}") argv user sp
	mapfile -t argv < <(cmdline "${@:3}")
	sp=(setpriv --bounding-set "$(caps "$(key "${files[@]}" CapabilityBoundingSet)")"
	    --inh-caps "$(caps "$(key "${files[@]}" AmbientCapabilities)")"
	    --ambient-caps "$(caps "$(key "${files[@]}" AmbientCapabilities)")")
	user=$(key "${files[@]}" User)
	[ -n "$user" ] && sp+=(--reuid "$user" --regid "$user" --init-groups)
	[ "$(key "${files[@]}" NoNewPrivileges)" = yes ] && sp+=(--no-new-privs)
	echo "${sp[*]} -- ${argv[*]}" >> "$out/commands"
	inst -x "$ns" "${sp[@]}" -- "${argv[@]}" 2> "$log" &
	TL_LAST_PID=$!
	TL_PIDS+=("$TL_LAST_PID")
}

# 1. The socket: tapless-stamp's default is the capd unit's, by string.
capd_unit=$units/tapless-capd@.service
sock=$(cmdline "$capd_unit" "$TL_IF_A" /nonexistent | sed -n '/^--tx-socket$/{n;p}')
shim_default=$(inst a "$prefix/bin/tapless-stamp" -- sh -c 'echo "$TAPLESS_STAMP_TX_SOCKET"')
[ -n "$sock" ] && [ "$sock" = "$shim_default" ] ||
	fail "capd unit listens on '$sock', tapless-stamp's default is '$shim_default'"

# 2. The journal: where syncd writes it by default is where the follow
# example reads it.
jdir=$(inst a "$prefix/bin/tapless-syncd" --help | sed -n 's/.*--journal-dir DIR.*\[default: \(.*\)\]/\1/p')
fj=$(sed -n 's/.*-s algo=\([^ ]*\).*/\1/p' "$ex/follow.env")
[ "$fj" = "$jdir/algo.journal" ] ||
	fail "follow.env reads the journal at '$fj', syncd writes $jdir/algo.journal"
grep -q "/var/lib/tapless/journal/" "$units"/*.service "$ex"/* README.md &&
	fail "a unit, example or the README still names /var/lib/tapless/journal/"

# 3. syncd: the example configuration, renamed interface, never steering
# the clock; a server in b so a's client has someone to follow.
for h in a b; do
	if [ $h = a ]; then ifn=$TL_IF_A; role=client; else ifn=$TL_IF_B; role=server; fi
	mkdir -p "$root/$h"
	sed -e "s/^\[eth1\]/[$ifn]/" -e "s/^role client/role $role/" \
	    -e 's/^#free_running 1/free_running 1/' \
	    -e "s|^#journal_dir .*|journal_dir $root/var/lib/tapless|" \
	    -e "s/^#hostname .*/hostname host$h/" "$ex/tapless.conf" > "$root/$h/tapless.conf"
	# software stamps on veth: microseconds, not nanoseconds
	sed -i "/^\[global\]/a sync_threshold 200000\nsample_interval 250" "$root/$h/tapless.conf"
done
grep -q "^free_running 1" "$root/a/tapless.conf" || { echo "FAIL: deploy: free_running not set"; exit 1; }
# b: another host, so its own sockets and journal (not through the unit,
# whose paths a takes).
sed -i -e "/^\[global\]/a control_socket $root/b/syncd.sock\nrun_dir $root/b/run" \
	-e "s|^journal_dir .*|journal_dir $root/b|" "$root/b/tapless.conf"
tl_bg b bin/tapless-syncd -f "$root/b/tapless.conf" 2> "$out/syncd-b.log"
cp "$root/a/tapless.conf" "$root/etc/tapless/tapless.conf"
unit a "$out/syncd.log" "$units/tapless-syncd.service" - /nonexistent
syncd=$TL_LAST_PID

# 4. capd@IFACE: the example env file, the filter our traffic's.
sed "s/^CAPD_OPTS=.*/CAPD_OPTS=tcp port 9001/" "$ex/capd-IFACE.env" > "$root/etc/tapless/capd-$TL_IF_A.env"
mkdir -p "$root/var/lib/tapless/capture/$TL_IF_A"	# StateDirectory=
envf=$root/etc/tapless/capd-$TL_IF_A.env
unit a "$out/capd.log" "$capd_unit" "$TL_IF_A" "$envf"
capd=$TL_LAST_PID
for _ in $(seq 50); do [ -S "$root/run/tapless/${sock#/run/tapless/}" ] && break; sleep 0.1; done
[ -S "$root/run/tapless/${sock#/run/tapless/}" ] || fail "capd: no socket at $sock: $(cat "$out/capd.log")"

# A stamped sender with no tapless-stamp options: 20 sends to b.
tl_bg b socat -u TCP-LISTEN:9001,reuseaddr OPEN:/dev/null,wronly
srv=$TL_LAST_PID
sleep 0.3
inst a sh -c 'for i in $(seq 20); do echo "8=FIX.4.4|35=D|11=$i|"; sleep 0.02; done |
	"$0"/bin/tapless-stamp -- socat -u - TCP:198.18.32.2:9001' "$prefix" \
	> /dev/null 2> "$out/stamp.log" || fail "stamped sender: $(cat "$out/stamp.log")"
sleep 0.5
grep -q "no stamp reached\|no tapless-capd" "$out/stamp.log" &&
	fail "tapless-stamp found no capd: $(cat "$out/stamp.log")"
kill -TERM "$capd"
wait "$capd" || fail "capd exited $?: $(tail -3 "$out/capd.log")"
kill "$srv" 2> /dev/null
ls "$root/var/lib/tapless/capture/$TL_IF_A"/*.pcapng > /dev/null 2>&1 ||
	fail "capd wrote no pcapng: $(ls "$root/var/lib/tapless/capture/$TL_IF_A")"
joined=$(sed -n 's/.*keyed stamps: [0-9]* taken, \([0-9]*\) joined.*/\1/p' "$out/capd.log")
[ "${joined:-0}" -gt 0 ] ||
	fail "capd joined no stamp of tapless-stamp's: $(grep -i 'keyed\|tx socket' "$out/capd.log") / $(tail -2 "$out/stamp.log")"

# 5. --stamp-cgroup: refused under the unit's own bounding set, attached
# with the example drop-in.
why=$(bin/tapless ifinfo -j lo 2>/dev/null | jq -r '.kernel | if .cgroup_stamping then "" else .cgroup_stamping_why end')
if [ -n "$why" ]; then
	echo "deploy: --stamp-cgroup not checked: this host cannot stamp cgroups: $why"
elif ! tl_cgroup engine; then
	fail "cannot create a cgroup"
else
	echo "CAPD_OPTS=--stamp-cgroup $TL_CGROUP tcp port 9001" >> "$envf"
	unit a "$out/cg-no.log" "$capd_unit" "$TL_IF_A" "$envf"
	wait "$TL_LAST_PID"
	rc=$?
	[ $rc -eq 2 ] && grep -q "lacks CAP_BPF" "$out/cg-no.log" ||
		fail "--stamp-cgroup without the drop-in: exit $rc: $(cat "$out/cg-no.log")"
	dropin=$out/dropin/tapless-capd@$TL_IF_A.service.d
	mkdir -p "$dropin"
	cp "$ex/capd-stamp-cgroup.conf" "$dropin/stamp-cgroup.conf"
	unit a "$out/cg.log" "$capd_unit" "$dropin/stamp-cgroup.conf" "$TL_IF_A" "$envf"
	cgcapd=$TL_LAST_PID
	for _ in $(seq 50); do grep -q "stamping the TCP sends of cgroup" "$out/cg.log" && break; sleep 0.1; done
	grep -q "stamping the TCP sends of cgroup $TL_CGROUP" "$out/cg.log" ||
		fail "--stamp-cgroup with the drop-in: $(cat "$out/cg.log")"
	kill -TERM "$cgcapd" 2> /dev/null
	wait "$cgcapd" || fail "cgroup capd exited $?: $(tail -3 "$out/cg.log")"
fi

# 6. syncd journalled (it has run all along).
j=$root/var/lib/tapless/hosta.journal
for _ in $(seq 50); do [ -n "$(grep -v '^#' "$j" 2>/dev/null)" ] && break; sleep 0.2; done
[ -n "$(grep -v '^#' "$j" 2>/dev/null)" ] ||
	fail "syncd journalled nothing at $j: $(ls "$root/var/lib/tapless") $(tail -3 "$out/syncd.log")"
kill -TERM "$syncd"
wait "$syncd" || fail "syncd exited $?: $(tail -3 "$out/syncd.log")"

# 7. systemd-analyze verify, on an instance of the template (the drop-in
# beside it), with the installed tree at its PREFIX.
verified="units verified"
if command -v systemd-analyze > /dev/null; then
	v=$out/verify
	mkdir -p "$v"
	cp "$units"/*.service "$v/"
	cp "$units/tapless-capd@.service" "$v/tapless-capd@$TL_IF_A.service"
	rm "$v/tapless-capd@.service"
	mkdir -p "$v/tapless-capd@$TL_IF_A.service.d"
	cp "$ex/capd-stamp-cgroup.conf" "$v/tapless-capd@$TL_IF_A.service.d/"
	inst a sh -c 'cd "$0" && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no ./*.service' "$v" \
		> "$out/verify.log" 2>&1 || fail "systemd-analyze verify: $(cat "$out/verify.log")"
	# A key it does not know, or a value it cannot parse, is a warning
	# (exit 0) that leaves the unit running without it.
	grep -i "unknown\|ignoring\|failed to parse\|invalid" "$out/verify.log" &&
		fail "systemd-analyze verify warns: $(cat "$out/verify.log")"
else
	echo "deploy: systemd-analyze verify skipped: no systemd-analyze"
	verified="units not verified"
fi

[ "$fails" -eq 0 ] && echo "deploy: units run as installed: syncd journals, capd captures and" \
	"joined $joined stamps from tapless-stamp at its default $sock, --stamp-cgroup" \
	"${why:+not checked}${why:-attached with the drop-in}; $verified"
[ "$fails" -eq 0 ]
