#!/bin/sh
# Print the folder that holds qemu-plugin.h for the installed QEMU, fetching
# it once into the cache folder from Debian's source tarball of that very
# QEMU (the plugin API must match the binary; Debian ships no -dev package
# with the header).  Only the one header is kept.
set -eu
cache="${DMAHARNESS_CACHE:-$HOME/.cache/dmaharness}"
ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) || {
	echo "insnprof: qemu-system-x86 is not installed (make deps)" >&2
	exit 3
}
upstream=$(echo "$ver" | sed 's/^[0-9]*://; s/-[^-]*$//')
dir="$cache/qemu-plugin-api/$upstream"
if [ ! -f "$dir/qemu-plugin.h" ]; then
	url="http://deb.debian.org/debian/pool/main/q/qemu/qemu_$upstream.orig.tar.xz"
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/qemu-plugin-api.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT INT TERM
	echo "insnprof: fetching qemu-plugin.h from $url" >&2
	if ! curl -fsS -o "$tmp/src.tar.xz" "$url"; then
		echo "insnprof: cannot download $url" >&2
		exit 3
	fi
	tar -xJf "$tmp/src.tar.xz" -C "$tmp" --wildcards '*/include/qemu/qemu-plugin.h'
	mkdir -p "$dir"
	mv "$tmp"/*/include/qemu/qemu-plugin.h "$dir/qemu-plugin.h.tmp"
	mv "$dir/qemu-plugin.h.tmp" "$dir/qemu-plugin.h"
fi
echo "$dir"
