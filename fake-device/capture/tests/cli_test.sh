#!/bin/sh
# dmaharness-capture's command line, run as built (static), on a machine
# without USB devices: usage errors, device choice against a fake sysfs,
# the error messages and exit codes, --json.  Ends "N passed, N failed".
#   cli_test.sh path/to/dmaharness-capture
BIN=${1:-build/dmaharness-capture}
p=0
f=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run ARGS...: sets $rc, $out (stdout) and $err (stderr)
run() {
	"$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
# check NAME WANT_RC PATTERN_IN_STDERR
check() {
	if [ "$rc" -ne "$2" ]; then
		f=$((f + 1))
		echo "not ok - $1: exit $rc, expected $2; stderr: $err"
	elif [ -n "$3" ] && ! printf '%s' "$err" | grep -q -- "$3"; then
		f=$((f + 1))
		echo "not ok - $1: stderr does not say \"$3\": $err"
	else
		p=$((p + 1))
		echo "ok - $1"
	fi
}
expect() {      # NAME CONDITION...
	name=$1
	shift
	if "$@"; then
		p=$((p + 1))
		echo "ok - $name"
	else
		f=$((f + 1))
		echo "not ok - $name"
	fi
}

run --help
check "--help exits 0" 0 ""
expect "--help documents the exit codes" grep -q "^  3  the profile was written" "$tmp/out"
expect "--help names every option" sh -c 'for o in --device --bus --address --node -o \
	--name --description --source --speed --detach --request-timeout --timeout --json -v; do
	grep -q -- "$o" "$1" || exit 1; done' sh "$tmp/out"

run
check "no device: usage error" 2 "no device chosen"
run --device 046d:0825 --frobnicate
check "unknown option: usage error" 2 "unknown option --frobnicate"
run --device 046d
check "bad VID:PID: usage error" 2 "expected VID:PID"
run --bus 1
check "--bus alone: usage error" 2 "go together"
run --device 1:2 --name "Not A Name"
check "bad --name: usage error" 2 "a name is"

# a fake sysfs: two identical cameras, a keyboard, a root hub
sys=$tmp/sys
dev() {         # SYSNAME VID PID BUS ADDR SPEED PRODUCT
	d=$sys/bus/usb/devices/$1
	mkdir -p "$d"
	echo "$2" >"$d/idVendor"
	echo "$3" >"$d/idProduct"
	echo "$4" >"$d/busnum"
	echo "$5" >"$d/devnum"
	echo "$6" >"$d/speed"
	echo "$7" >"$d/product"
}
dev usb1 1d6b 0002 1 1 480 "xHCI Host Controller"
dev 1-1 046d 0825 1 107 480 "C270 HD WEBCAM"
dev 1-2 046d 0825 1 108 480 "C270 HD WEBCAM"
dev 1-3 046d c31c 1 109 1.5 "USB Keyboard"
mkdir -p "$sys/bus/usb/devices/1-1:1.0"
export DMAHARNESS_SYSFS_ROOT=$sys

run --device 1234:5678 -o "$tmp/x.profile"
check "no such device: exit 1" 1 "no USB device 1234:5678 is plugged in"
check "no such device: lists what is there" 1 "046d:c31c (bus 1 address 109, USB Keyboard)"
expect "no such device: no output file" test ! -e "$tmp/x.profile"

run --device 046d:0825 -o "$tmp/x.profile"
check "several match: exit 1" 1 "2 devices are 046d:0825"
check "several match: asks for --bus/--address" 1 "choose one with --bus N --address N"
check "several match: lists them" 1 "046d:0825 (bus 1 address 108, C270 HD WEBCAM)"

# the keyboard is found, but this machine has no /dev/bus/usb/001/109
run --device 046d:c31c -o "$tmp/x.profile" --source fixed
check "found in sysfs, no node: exit 1" 1 "no USB device at bus 1 address 109"
check "found in sysfs, no node: names the node" 1 "/dev/bus/usb/001/109"
expect "found, not opened: no output file" test ! -e "$tmp/x.profile"
expect "no temporary file left" sh -c '! ls "$1"/x.profile.tmp-* >/dev/null 2>&1' sh "$tmp"

run --bus 1 --address 99
check "--bus/--address: nothing there" 1 "no USB device at bus 1 address 99; present:"

run --node /dev/null -o "$tmp/x.profile"
check "--node /dev/null: not usbfs" 1 "/dev/null is not a usbfs device node"
run --node "$tmp/nonexistent"
check "--node missing: exit 1" 1 "No such file or directory"

# --json: one object, on stdout when the profile goes to a file ...
run --node /dev/null --json -o "$tmp/x.profile"
check "--json -o: exit 1" 1 ""
expect "--json -o: the object is on stdout" sh -c \
	'printf "%s" "$1" | grep -q "^{\"version\":1,\"command\":\"capture\",\"ok\":false,\"result\":\"error\",\"exit\":1,\"error\":\"/dev/null is not a usbfs"' \
	sh "$out"
expect "--json -o: stderr is empty" test -z "$err"
# ... and on stderr when the profile goes to stdout
run --node /dev/null --json
expect "--json to stdout: the object is on stderr" sh -c \
	'printf "%s" "$1" | grep -q "^{\"version\":1,\"command\":\"capture\",\"ok\":false,\"result\":\"error\""' sh "$err"
expect "--json to stdout: stdout is empty" test -z "$out"

# no sysfs at all: --device cannot work, and says to use --node
DMAHARNESS_SYSFS_ROOT=$tmp/none run --device 046d:0825
check "no sysfs: exit 1, use --node" 1 "use --node"

# a usbfs node with no device behind it (needs mknod: root)
if mknod "$tmp/node" c 189 126 2>/dev/null; then
	run --node "$tmp/node" -o "$tmp/x.profile"
	check "usbfs node without a device: exit 1" 1 "bus 1 address 127"
	expect "usbfs node without a device: no output" test ! -e "$tmp/x.profile"
else
	echo "ok - usbfs node without a device # SKIP mknod needs root"
	p=$((p + 1))
fi

echo "$p passed, $f failed"
[ "$f" -eq 0 ]
