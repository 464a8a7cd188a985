#!/bin/sh
# Install, with apt-get, the Debian packages one dmaharness command needs.
#
#   harness/deps.sh [run|test|all]       install what is missing of that set
#   harness/deps.sh --list [run|test|all]   print the set's package names
#   harness/deps.sh --why [run|test|all]    print each package, its set and
#                                         the feature that needs it
#
# Sets nest: `run` is what `make run` (the main job: build, boot, a case)
# needs; `test` adds what `make test` needs (C unit tests, the fuzz target,
# the browser, the campaign engines and their daemons, the second 6.x
# source); `all` (`make deps`) adds optional features' tools.  Checks first
# and installs only what is missing; when not root it prints the exact
# apt-get line and exits 3.  KERNEL=X.Y (make run's) adds linux-source-X.Y
# when it is one of the table's.
set -eu

# package                set   feature that needs it
TABLE="
linux-source-6.1         run   the default kernel's source (6.1; 7.3 comes from the archive through a private apt configuration)
gcc                      run   kernel builds, the fake device, the guest agent
make                     run   kernel builds, the C tools
flex                     run   kernel builds (kconfig)
bison                    run   kernel builds (kconfig)
bc                       run   kernel builds
libelf-dev               run   kernel builds (objtool)
libssl-dev               run   kernel builds (certificates)
cpio                     run   the guest's initramfs
xz-utils                 run   unpacking linux-source tarballs
lz4                      run   kernel builds (compressed images)
patch                    run   applying the detector and case series
perl                     run   kernel builds; checkpatch.pl
kmod                     run   kernel builds (modules_install, depmod)
ccache                   run   incremental and seeded kernel builds
busybox-static           run   the guest's initramfs
qemu-system-x86          run   booting the kernel (TCG)
libusbredirparser-dev    run   the fake UVC camera (usbredir)
pkg-config               run   the fake UVC camera's build
python3                  run   the orchestration (dmaharness)
dwarves                  run   structure layouts beside findings (pahole)
linux-source-6.12        test  make test's checkpatch of the 6.12 series; --kernel 6.12; make test-deep
libcmocka-dev            test  the C unit tests
clang                    test  the fake device's fuzz target (libFuzzer)
libusb-1.0-0-dev         test  the capture tool (dmaharness capture; make capture)
gdb                      test  the layout finder's fallback without pahole (tested both ways)
chromium                 test  the HTML pages' browser tests
parallel                 test  campaigns on GNU parallel (and its tests)
rsync                    test  campaigns over ssh (and their tests)
openssh-server           test  the ssh campaign tests' own sshd on 127.0.0.1
python3-junitparser      test  the JUnit XML check of campaign results
slurmctld                test  the Slurm campaign tests' own controller
slurmd                   test  the Slurm campaign tests' own node daemon
slurm-client             test  campaigns on Slurm (sbatch, squeue) and their tests
munge                    test  the Slurm campaign tests' authentication
redis-server             test  the shared ccache tests' own redis (--ccache-remote)
gcc-arm-linux-gnueabihf  test  sweep verdicts on 32-bit arm from arm's own struct layouts (harness/kernel/crossbuild.py) and their integration test
usbredirect              all   --usb-host: exporting a real USB device to the guest
curl                     all   bench/insnprof: fetching QEMU's plugin header
gcc-aarch64-linux-gnu    all   sweep verdicts on arm64 from its own struct layouts (crossbuild; without it x86_64's layout is assumed)
gcc-mips-linux-gnu       all   sweep verdicts on 32-bit mips from its own struct layouts (crossbuild; as above)
gcc-powerpc-linux-gnu    all   sweep verdicts on powerpc32 from its own struct layouts (crossbuild; as above)
gcc-riscv64-linux-gnu    all   sweep verdicts on riscv from its own struct layouts (crossbuild; as above)
"

usage() {
	echo "usage: harness/deps.sh [--list|--why] [run|test|all]" >&2
	exit 2
}

mode=install
case "${1:-}" in
--list) mode=list; shift;;
--why) mode=why; shift;;
--help|-h) sed -n '2,14p' "$0"; exit 0;;
esac
set_name=${1:-all}
case "$set_name" in
run) sets="run";;
test) sets="run test";;
all) sets="run test all";;
*) usage;;
esac
[ $# -le 1 ] || usage

# the set's rows, "package<TAB>set<TAB>feature"
rows=$(echo "$TABLE" | awk -v sets=" $sets " \
	'NF >= 3 && index(sets, " " $2 " ") { f = $3; for (i = 4; i <= NF; i++) f = f " " $i; print $1 "\t" $2 "\t" f }')
# `make run KERNEL=6.12` needs that kernel's source package too (7.x comes
# from the archive through the harness's own apt configuration)
if [ -n "${KERNEL:-}" ] && ! echo "$rows" | grep -q "^linux-source-$KERNEL	"; then
	extra=$(echo "$TABLE" | awk -v p="linux-source-$KERNEL" \
		'$1 == p { print $1 "\t" "run" "\t" "make run KERNEL='"$KERNEL"'" }')
	[ -z "$extra" ] || rows=$(printf '%s\n%s' "$rows" "$extra")
fi
PACKAGES=$(echo "$rows" | cut -f1)

case $mode in
list) echo $PACKAGES; exit 0;;
why) echo "$rows" | awk -F '\t' '{ printf "%-22s %-5s %s\n", $1, $2, $3 }'; exit 0;;
esac

missing=""
for p in $PACKAGES; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = "installed" ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
	echo "deps: all $(echo $PACKAGES | wc -w) packages of the '$set_name' set are installed"
	exit 0
fi

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages of the '$set_name' set:$missing" >&2
	echo "deps: run as root:  apt-get update && $line" >&2
	exit 3
fi
echo "deps: installing for '$set_name':"
for p in $missing; do
	echo "$rows" | awk -F '\t' -v p="$p" '$1 == p { printf "deps:   %-22s %s\n", $1, $3 }'
done
export DEBIAN_FRONTEND=noninteractive
# a fresh machine has no package lists yet; update only when needed
if ! apt-get install -y --no-install-recommends $missing; then
	apt-get update
	apt-get install -y --no-install-recommends $missing
fi

# The campaign tests start daemons of their own (sshd, munged, slurmctld,
# slurmd, redis-server) on 127.0.0.1 with their own configuration: only the
# programs are needed.  A service that one of these packages, newly
# installed here, enabled and started is stopped and disabled again, so
# the machine runs nothing it did not run before.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	for pair in openssh-server:ssh munge:munge slurmctld:slurmctld slurmd:slurmd \
	    redis-server:redis-server; do
		pkg=${pair%%:*} svc=${pair#*:}
		case " $missing " in
		*" $pkg "*)
			if systemctl is-enabled --quiet "$svc" 2>/dev/null ||
			    systemctl is-active --quiet "$svc" 2>/dev/null; then
				echo "deps: $pkg was just installed for the tests: disabling the $svc service it started"
				systemctl disable --now "$svc" >/dev/null 2>&1 || true
			fi;;
		esac
	done
fi
