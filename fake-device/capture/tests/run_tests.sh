#!/bin/sh
# Run the unit tests, the static-link checks and the command-line checks;
# end with one combined "N passed, N failed" line.
#   run_tests.sh BUILD LIBUSB_A
BUILD=${1:-build}
LIBUSB_A=${2:-/usr/lib/x86_64-linux-gnu/libusb-1.0.a}
HERE=$(dirname "$0")
CAPTURE_PROFILES_DIR=${CAPTURE_PROFILES_DIR:-$HERE/../../profiles}
CAPTURE_TESTS_DIR=${CAPTURE_TESTS_DIR:-$HERE}
export CAPTURE_TESTS_DIR
export CAPTURE_PROFILES_DIR
p=0
f=0
for cmd in "$BUILD/tests" "$HERE/static_check.sh $BUILD $LIBUSB_A" \
	   "$HERE/cli_test.sh $BUILD/dmaharness-capture" \
	   "$HERE/fake_test.sh $BUILD/capture-fake"; do
	out=$($cmd 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
	if [ -z "$line" ]; then
		echo "# $cmd: no summary (exit $rc)"
		f=$((f + 1))
		continue
	fi
	p=$((p + ${line%% passed*}))
	n=${line#*passed, }
	f=$((f + ${n%% failed}))
	[ $rc -ne 0 ] && [ "${n%% failed}" -eq 0 ] && f=$((f + 1))
done
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
