#!/bin/sh
# The whole capture, end to end: capture.c and the real (static) libusb,
# over a fake usbfs node (tests/fake_usbfs.c) that replays a profile and
# keeps kernel drivers and claims as the kernel does.  Ends "N passed, N
# failed".
#   fake_test.sh path/to/capture-fake
BIN=${1:-build/capture-fake}
HERE=$(dirname "$0")
PROFILES=${CAPTURE_PROFILES_DIR:-$HERE/../../profiles}
UVC=$PROFILES/builtin-uvc.profile
COMBO=$HERE/combo.profile
p=0
f=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

NODE=/dev/bus/usb/001/002
export FAKE_USBFS_NODE=$NODE
export FAKE_USBFS_LOG=$tmp/log
export DMAHARNESS_SYSFS_ROOT=$tmp/nosys

ok() { p=$((p + 1)); echo "ok - $1"; }
ko() { f=$((f + 1)); echo "not ok - $1"; }
expect() {      # NAME CONDITION...
	name=$1
	shift
	if "$@"; then ok "$name"; else ko "$name"; fi
}
# cap PROFILE ARGS...: run against PROFILE; $rc, $out, $err; fresh log
cap() {
	prof=$1
	shift
	rm -f "$tmp/log"
	FAKE_USBFS_PROFILE=$prof timeout 120 "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
says() { printf '%s\n' "$err" | grep -q -- "$1"; }
logs() { grep -q -- "$1" "$tmp/log"; }
# only reads reached the device: IN, not vendor, standard only
# GET_DESCRIPTOR but for libusb's one GET_CONFIGURATION when it opens
reads_only() {
	# OUT (type 0x00-0x7f), vendor (0xc0-0xdf) or reserved (0xe0-0xff) types
	! grep -q "^setup [0-7cdef]" "$tmp/log" &&
	# standard, not GET_DESCRIPTOR, but for one "80 08" (GET_CONFIGURATION)
	[ "$(grep -c "^setup [89]. " "$tmp/log")" -eq \
	  "$(($(grep -c "^setup [89]. 06 " "$tmp/log") + 1))" ] &&
	[ "$(grep -c "^setup 80 08 " "$tmp/log")" -eq 1 ]
}

DESC=$(sed -n 's/^description "\(.*\)"$/\1/p' "$UVC")
SRC=$(sed -n 's/^source "\(.*\)"$/\1/p' "$UVC")

# 1. the built-in camera: the round trip is exact
cap "$UVC" --node $NODE --name builtin-uvc --description "$DESC" --source "$SRC" \
	-o "$tmp/uvc.profile"
expect "builtin-uvc: exit 0" [ "$rc" -eq 0 ]
expect "builtin-uvc: capture(replay(P)) is P, byte for byte" cmp -s "$UVC" "$tmp/uvc.profile"
expect "builtin-uvc: only reads reached the device" reads_only
expect "builtin-uvc: summary" says "180 requests asked, 180 answered, 0 stalled, 0 failed"
expect "builtin-uvc: interfaces claimed and released" sh -c \
	'grep -q "^claim 0" "$1" && grep -q "^release 0" "$1" && grep -q "^release 1" "$1"' sh "$tmp/log"

# 2. uvcvideo holds both interfaces, no --detach: left alone
FAKE_USBFS_DRIVERS=0:uvcvideo,1:uvcvideo cap "$UVC" --node $NODE --source fixed \
	-o "$tmp/held.profile"
expect "driver, no --detach: exit 3" [ "$rc" -eq 3 ]
expect "driver, no --detach: says why" says \
	"interface 0 is bound to kernel driver uvcvideo: use --detach"
expect "driver, no --detach: per interface" says \
	"requests to interface 1 not sent: interface 1 is bound to kernel driver uvcvideo"
expect "driver, no --detach: the profile is written" grep -q "^device 12 01" "$tmp/held.profile"
expect "driver, no --detach: nothing sent to the interfaces" sh -c \
	'! grep -q "^setup a1" "$1"' sh "$tmp/log"
expect "driver, no --detach: no detach, no claim" sh -c \
	'! grep -q "^disconnect\|^claim\|^autoclaim" "$1"' sh "$tmp/log"
expect "driver, no --detach: drivers still bound" sh -c \
	'grep -q "^final 0 uvcvideo$" "$1" && grep -q "^final 1 uvcvideo$" "$1"' sh "$tmp/log"

# 3. --detach: detached, claimed, released, re-attached
FAKE_USBFS_DRIVERS=0:uvcvideo,1:uvcvideo cap "$UVC" --node $NODE --name builtin-uvc \
	--description "$DESC" --source "$SRC" --detach -o "$tmp/detach.profile"
expect "--detach: exit 0" [ "$rc" -eq 0 ]
expect "--detach: same profile" cmp -s "$UVC" "$tmp/detach.profile"
expect "--detach: detach, claim, release, attach in order" sh -c \
	'grep -v "^setup" "$1" | grep "0 uvcvideo\|[a-z] 0$" | tr "\n" " " |
	 grep -q "^disconnect 0 uvcvideo claim 0 release 0 connect 0 uvcvideo final 0 uvcvideo"' \
	sh "$tmp/log"
expect "--detach: drivers bound again" sh -c \
	'grep -q "^final 0 uvcvideo$" "$1" && grep -q "^final 1 uvcvideo$" "$1"' sh "$tmp/log"
expect "--detach: only reads" reads_only

# 4. --json: on stdout with -o, on stderr with the profile on stdout
cap "$UVC" --node $NODE --source fixed --json -o "$tmp/j.profile"
expect "--json -o: one object on stdout" sh -c \
	'printf "%s" "$1" | grep -q "^{\"version\":1,\"command\":\"capture\",\"ok\":true,\"result\":\"captured\",\"exit\":0,.*\"asked\":180,\"answered\":180,\"stalled\":0,\"failed\":0,\"failures\":\[\]"' \
	sh "$out"
expect "--json -o: stderr empty" [ -z "$err" ]
cap "$UVC" --node $NODE --source fixed --json
expect "--json, profile on stdout" sh -c \
	'printf "%s" "$1" | head -1 | grep -q "^dmaharness-usb-profile 1$"' sh "$out"
expect "--json, the object on stderr" sh -c \
	'printf "%s" "$1" | grep -q "^{\"version\":1,\"command\":\"capture\",\"ok\":true,\"result\":\"captured\""' sh "$err"

# 5. defaults: name from the product string, description, dated source
cap "$UVC" --node $NODE -o "$tmp/d.profile"
expect "default name" grep -q "^name fake-uvc-camera$" "$tmp/d.profile"
expect "default description" grep -q '^description "dmaharness Fake UVC Camera (1209:0001)"$' \
	"$tmp/d.profile"
expect "default source" grep -q '^source "capture of 1209:0001 on 20[0-9][0-9]-[01][0-9]-[0-3][0-9]"$' \
	"$tmp/d.profile"

# 6. a request that never completes: timed out, reported, the rest written
FAKE_USBFS_HANG=a1:81:0100 cap "$UVC" --node $NODE --source fixed --request-timeout 100 \
	-o "$tmp/hang.profile"
expect "timeout: exit 3" [ "$rc" -eq 3 ]
expect "timeout: says so" says "probe control (0xa1 0x81 0x0100 0x0001, 34 bytes): timed out after 100 ms"
expect "timeout: written" [ -s "$tmp/hang.profile" ]

# 7. the device goes away
echo old >"$tmp/keep.profile"
FAKE_USBFS_GONE=1 cap "$UVC" --node $NODE --source fixed -o "$tmp/keep.profile"
expect "gone at once: exit 1" [ "$rc" -eq 1 ]
expect "gone at once: says why" says "cannot read the device descriptor"
expect "gone at once: the old file is untouched" [ "$(cat "$tmp/keep.profile")" = old ]
expect "gone at once: no temporary file" sh -c '! ls "$1"/keep.profile.tmp-* 2>/dev/null' sh "$tmp"
FAKE_USBFS_GONE=60 cap "$UVC" --node $NODE --source fixed -o "$tmp/gone.profile"
expect "gone midway: exit 3" [ "$rc" -eq 3 ]
expect "gone midway: says so" says "the device is gone"
expect "gone midway: nothing sent after" sh -c \
	'[ "$(grep -c "^setup" "$1")" -eq 61 ]' sh "$tmp/log"

# 8. HID + CDC ACM: usbhid and cdc_acm hold them
FAKE_USBFS_DRIVERS=0:usbhid,1:cdc_acm cap "$COMBO" --node $NODE --source fixed \
	-o "$tmp/combo1.profile"
expect "combo, no --detach: exit 3" [ "$rc" -eq 3 ]
expect "combo, no --detach: usbhid named" says \
	"HID report descriptor (0x81 0x06 0x2200 0x0000, 23 bytes): interface 0 is bound to kernel driver usbhid: use --detach"
expect "combo, no --detach: cdc_acm named" says "interface 1 is bound to kernel driver cdc_acm"
FAKE_USBFS_DRIVERS=0:usbhid,1:cdc_acm cap "$COMBO" --node $NODE --source fixed --detach \
	-o "$tmp/combo2.profile"
expect "combo, --detach: exit 0" [ "$rc" -eq 0 ]
expect "combo, --detach: what the profile holds, less what capture cannot read" sh -c '
	grep -v "^#\|^source\|^name\|^description\|^get 0xc0\|^interrupt 0x81" "$1" |
		sed "s/ *#.*//" >"$3/a"
	grep -v "^#\|^source\|^name\|^description\|^interrupt 0x81\|^$" "$2" >"$3/b"
	diff "$3/a" "$3/b"' sh "$COMBO" "$tmp/combo2.profile" "$tmp"
expect "combo, --detach: drivers back" sh -c \
	'grep -q "^final 0 usbhid$" "$1" && grep -q "^final 1 cdc_acm$" "$1"' sh "$tmp/log"
expect "combo, --detach: the data interface is left alone" sh -c \
	'! grep -q "claim 2\|release 2" "$1"' sh "$tmp/log"
expect "combo: only reads" reads_only

# 9. --device VID:PID through a (fake) sysfs
d=$tmp/sys/bus/usb/devices/1-1
mkdir -p "$d"
echo 1209 >"$d/idVendor"
echo 0001 >"$d/idProduct"
echo 1 >"$d/busnum"
echo 2 >"$d/devnum"
echo 480 >"$d/speed"
DMAHARNESS_SYSFS_ROOT=$tmp/sys cap "$UVC" --device 1209:0001 --name builtin-uvc \
	--description "$DESC" --source "$SRC" -o "$tmp/dev.profile"
expect "--device: exit 0" [ "$rc" -eq 0 ]
expect "--device: same profile" cmp -s "$UVC" "$tmp/dev.profile"
# sysfs says full speed: that is what is recorded (no qualifier asked)
echo 12 >"$d/speed"
DMAHARNESS_SYSFS_ROOT=$tmp/sys cap "$UVC" --bus 1 --address 2 --source fixed -o "$tmp/fs.profile"
expect "speed from sysfs" grep -q "^speed full$" "$tmp/fs.profile"
expect "--speed overrides" sh -c '
	DMAHARNESS_SYSFS_ROOT=$1/sys FAKE_USBFS_PROFILE=$2 "$3" --bus 1 --address 2 --speed high \
		--source fixed -o "$1/hs.profile" 2>/dev/null && grep -q "^speed high$" "$1/hs.profile"' \
	sh "$tmp" "$UVC" "$BIN"

# 10. -v shows each request
cap "$UVC" --node $NODE --source fixed -v -o "$tmp/v.profile"
expect "-v: one line per request" sh -c \
	'[ "$(printf "%s\n" "$1" | grep -c "^[0-9a-f][0-9a-f] [0-9a-f][0-9a-f] [0-9a-f]\{4\} [0-9a-f]\{4\} ")" -eq 180 ]' \
	sh "$err"

echo "$p passed, $f failed"
[ "$f" -eq 0 ]
