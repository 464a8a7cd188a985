#!/bin/sh
# Run the C tests and the CLI checks; end with one combined
# "N passed, N failed" line.
BUILD=${1:-build}
p=0
f=0
for cmd in "$BUILD/tests" "$(dirname "$0")/cli_test.sh $BUILD/fake-uvc"; do
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
