#!/bin/sh
# make deps: install, with apt-get, the Debian packages dmaharness needs.
# Checks first and installs only what is missing; when not root it prints
# the exact apt-get line and fails.  `harness/deps.sh --list` prints them.
set -eu

PACKAGES="
linux-source-6.1 linux-source-6.12
gcc make flex bison bc libelf-dev libssl-dev cpio xz-utils lz4 patch perl kmod
ccache busybox-static qemu-system-x86
libusbredirparser-dev libusb-1.0-0-dev libcmocka-dev pkg-config clang usbredirect
python3 dwarves gdb curl chromium parallel python3-junitparser
openssh-server rsync slurmctld slurmd slurm-client munge redis-server
"

if [ "${1:-}" = "--list" ]; then
	echo $PACKAGES
	exit 0
fi

missing=""
for p in $PACKAGES; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = "installed" ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
	echo "deps: all $(echo $PACKAGES | wc -w) packages are installed"
	exit 0
fi

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get update && $line" >&2
	exit 3
fi
echo "deps: installing$missing"
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
