#!/bin/sh
# The static build: the binary has no dynamic section, and udev_stub.o
# defines exactly the udev_* symbols the static libusb refers to.
#   static_check.sh BUILD LIBUSB_A
BUILD=${1:-build}
LIBUSB_A=${2:-/usr/lib/x86_64-linux-gnu/libusb-1.0.a}
BIN=$BUILD/dmaharness-capture
p=0
f=0
ok() { p=$((p + 1)); echo "ok - $1"; }
ko() { f=$((f + 1)); echo "not ok - $1"; }

out=$(ldd "$BIN" 2>&1)
case $out in
*"not a dynamic executable"*) ok "ldd: not a dynamic executable" ;;
*) ko "ldd $BIN: $out" ;;
esac
if readelf -d "$BIN" 2>/dev/null | grep -q NEEDED; then
	ko "$BIN needs shared libraries"
else
	ok "no NEEDED entries"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if (cd "$tmp" && ar x "$LIBUSB_A" linux_udev.o) 2>/dev/null; then
	nm -u "$tmp/linux_udev.o" | awk '$2 ~ /^udev_/ { print $2 }' | sort >"$tmp/needed"
	nm --defined-only "$BUILD/obj/udev_stub.o" | awk '$2 == "T" && $3 ~ /^udev_/ { print $3 }' |
		sort >"$tmp/stubbed"
	if [ -s "$tmp/needed" ] && cmp -s "$tmp/needed" "$tmp/stubbed"; then
		ok "udev_stub.c defines the $(wc -l <"$tmp/needed") udev symbols linux_udev.o needs"
	else
		ko "udev symbols: needed (<) vs stubbed (>): $(diff "$tmp/needed" "$tmp/stubbed" | tr '\n' ' ')"
	fi
else
	ko "no linux_udev.o in $LIBUSB_A"
fi
# the stubs are linked in but nothing outside libusb's udev code calls them
if nm "$BIN" | grep -q ' T udev_new$'; then
	ok "the stubs are what the binary links"
else
	ko "udev_new is not the stub's in $BIN"
fi
# libusb starts and stops without discovery and never reaches a stub
out=$("$BUILD/libusb-check" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v passed
lp=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
lf=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
if [ -n "$lp" ] && [ $rc -eq 0 ]; then
	p=$((p + lp))
	f=$((f + lf))
else
	ko "libusb-check exited $rc: $out"
fi
# a stub, if reached, aborts with a message (libusb_get_device_list does)
out=$(sh -c '"$1" --list; rc=$?; exit $rc' sh "$BUILD/libusb-check" 2>&1)
rc=$?
case $rc:$out in
134:*"internal error: libusb called udev_monitor_receive_device()"*)
	ok "a udev stub reached aborts, saying so" ;;
*) ko "libusb-check --list: exit $rc: $out" ;;
esac
# ... and the tool never calls it, nor anything else that polls hot-plug
here=$(dirname "$0")/..
if ls "$here"/*.c | grep -v udev_stub.c | xargs grep -n \
	'libusb_get_device_list\|libusb_hotplug_\|libusb_open_device_with_vid_pid'; then
	ko "the capture calls a libusb function that reaches udev"
else
	ok "no libusb call that reaches udev in the capture's sources"
fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
