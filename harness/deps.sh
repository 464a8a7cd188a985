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
