#!/bin/sh
# CLI checks for fake-uvc: usage errors, --help, and a real unix socket
# session with a minimal peer (python3) for hello, SIGUSR1, SIGTERM and
# peer close.  Prints "N passed, N failed" like the C tests.
BIN=${1:?usage: cli_test.sh path/to/fake-uvc}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

dir=$(mktemp -d)
chmod 700 "$dir"
trap 'rm -rf "$dir"' EXIT

"$BIN" --help >"$dir/help" 2>&1
check "--help exits 0" "[ $? -eq 0 ]"
check "--help documents --listen and --pattern" \
	"grep -q -- --listen '$dir/help' && grep -q -- --pattern '$dir/help'"
"$BIN" >/dev/null 2>"$dir/err"
check "no transport is a usage error (2)" "[ $? -eq 2 ] && grep -q 'exactly one' '$dir/err'"
"$BIN" --listen "$dir/s" --pattern nope >/dev/null 2>"$dir/err"
check "bad pattern is a usage error (2)" "[ $? -eq 2 ] && grep -q 'unknown pattern' '$dir/err'"
"$BIN" --listen "$dir/s" --rate -5 >/dev/null 2>&1
check "bad rate is a usage error (2)" "[ $? -eq 2 ]"
"$BIN" --listen "$dir/s" --serial "" >/dev/null 2>&1
check "empty serial is a usage error (2)" "[ $? -eq 2 ]"
"$BIN" --listen "$dir/s" --duration 5x >/dev/null 2>&1
check "bad duration is a usage error (2)" "[ $? -eq 2 ]"
: >"$dir/exists"
"$BIN" --listen "$dir/exists" >/dev/null 2>"$dir/err"
check "existing path is refused (1)" "[ $? -eq 1 ] && grep -q 'already exists' '$dir/err'"
if command -v python3 >/dev/null 2>&1; then
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$dir/busy.sock"
	"$BIN" --listen "$dir/busy.sock" >/dev/null 2>&1
	check "someone else's socket is refused and left alone" \
		"[ $? -eq 1 ] && [ -S '$dir/busy.sock' ]"
fi
"$BIN" --connect "$dir/none" --connect-timeout 0.2 >/dev/null 2>"$dir/err"
check "connect failure is a runtime error (1)" "[ $? -eq 1 ] && grep -q 'cannot connect' '$dir/err'"

# Profiles: --check-profile, --dump-profile, --profile.
prof=$(dirname "$0")/../profiles/builtin-uvc.profile
"$BIN" --check-profile "$prof" >"$dir/out" 2>"$dir/err"
check "--check-profile accepts profiles/builtin-uvc.profile (0)" \
	"[ $? -eq 0 ] && [ ! -s '$dir/err' ] && [ ! -s '$dir/out' ]"
# wTotalLength one short on the config line
sed 's/^config 09 02 f8 01/config 09 02 f7 01/' "$prof" >"$dir/broken.profile"
line=$(grep -n '^config' "$dir/broken.profile" | cut -d: -f1)
"$BIN" --check-profile "$dir/broken.profile" >/dev/null 2>"$dir/err"
check "--check-profile rejects a broken profile naming FILE:LINE (2)" \
	"[ $? -eq 2 ] && [ -n '$line' ] && grep -q '$dir/broken.profile:$line: config: wTotalLength' '$dir/err'"
# --compare-capture: a capture equal to its profile, and one that is not
"$BIN" --compare-capture "$prof" "$prof" >"$dir/out" 2>"$dir/err"
check "--compare-capture of a profile with itself: same (0)" \
	"[ $? -eq 0 ] && grep -q '^same' '$dir/out'"
sed 's/^get 0xa1 0x82 0x0200 0x0100 = 01$/get 0xa1 0x82 0x0200 0x0100 = 02/' "$prof" >"$dir/cap.profile"
"$BIN" --compare-capture "$prof" "$dir/cap.profile" >"$dir/out" 2>"$dir/err"
check "--compare-capture names the statement that differs (1)" \
	"[ $? -eq 1 ] && grep -q '^+ get 0xa1 0x82 0x0200 0x0100 = 02' '$dir/out'"
sed 's/^source .*/source "elsewhere"/' "$prof" >"$dir/src.profile"
"$BIN" --compare-capture "$prof" "$dir/src.profile" >/dev/null 2>&1
check "--compare-capture leaves source out (0)" "[ $? -eq 0 ]"
# GET_CUR is what SET_CUR stores: the driver's state, left out
sed 's/^get 0xa1 0x81 0x0200 0x0100 = 08$/get 0xa1 0x81 0x0200 0x0100 = 09/' "$prof" >"$dir/cur.profile"
"$BIN" --compare-capture "$prof" "$dir/cur.profile" >/dev/null 2>&1
check "--compare-capture leaves stored answers out (0)" "[ $? -eq 0 ]"
"$BIN" --compare-capture "$prof" >/dev/null 2>"$dir/err"
check "--compare-capture needs two files (2)" "[ $? -eq 2 ]"
printf 'dmaharness-usb-profile 2\n' >"$dir/v2.profile"
"$BIN" --check-profile "$dir/v2.profile" >/dev/null 2>"$dir/err"
check "--check-profile refuses a later format version (2)" \
	"[ $? -eq 2 ] && grep -q '$dir/v2.profile:1:' '$dir/err'"
"$BIN" --dump-profile >"$dir/dump.profile" 2>"$dir/err"
check "--dump-profile exits 0, quietly" "[ $? -eq 0 ] && [ ! -s '$dir/err' ]"
"$BIN" --check-profile "$dir/dump.profile" >/dev/null 2>&1
check "--dump-profile output passes --check-profile" "[ $? -eq 0 ]"
if cmp -s "$dir/dump.profile" "$prof"; then
	ok "--dump-profile writes profiles/builtin-uvc.profile byte for byte"
else
	ko "--dump-profile writes profiles/builtin-uvc.profile byte for byte"
	echo "# regenerate it: cd fake-device && build/fake-uvc --dump-profile > profiles/builtin-uvc.profile"
fi
"$BIN" --dump-profile --serial CAM-7 >"$dir/dump7.profile" 2>/dev/null
check "--dump-profile --serial sets iSerialNumber" \
	"grep -q '^string 0x0409 3 \"CAM-7\"\$' '$dir/dump7.profile'"
"$BIN" --listen "$dir/p.sock" --profile "$dir/missing.profile" >/dev/null 2>"$dir/err"
check "--profile with a missing file is a usage error naming it (2)" \
	"[ $? -eq 2 ] && grep -q '$dir/missing.profile' '$dir/err' && grep -q 'No such file' '$dir/err' && [ ! -e '$dir/p.sock' ]"
"$BIN" --listen "$dir/p.sock" --profile "$dir/broken.profile" >/dev/null 2>"$dir/err"
check "--profile with a broken file is a usage error naming FILE:LINE (2)" \
	"[ $? -eq 2 ] && grep -q '$dir/broken.profile:$line:' '$dir/err'"

if command -v python3 >/dev/null 2>&1; then
	# Peer: read the hello, then either wait to be killed or close.
	cat >"$dir/peer.py" <<'PY'
import socket, struct, sys, time
path, mode = sys.argv[1], sys.argv[2]
for _ in range(200):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); break
    except OSError:
        time.sleep(0.02)
hdr = s.recv(16)
typ, length = struct.unpack("<II", hdr[:8])
print("hello" if typ == 0 else "type%d" % typ, flush=True)
if mode == "hold":
    time.sleep(5)
s.close()
PY
	"$BIN" --listen "$dir/a.sock" -q >"$dir/out1" 2>"$dir/err1" &
	pid=$!
	python3 "$dir/peer.py" "$dir/a.sock" close >"$dir/peer1"
	wait $pid
	rc=$?
	check "peer close exits 0" "[ $rc -eq 0 ]"
	check "usb-host sends hello first" "grep -q '^hello$' '$dir/peer1'"
	check "one JSON line with reason peer-closed" \
		"[ \$(wc -l <'$dir/out1') -eq 1 ] && grep -q '\"reason\":\"peer-closed\"' '$dir/out1' && grep -q '\"version\":1' '$dir/out1'"
	check "socket removed at exit, no temporary left" \
		"[ ! -e '$dir/a.sock' ] && [ -z \"\$(ls '$dir' | grep '^a.sock')\" ]"

	"$BIN" --listen "$dir/b.sock" -q >"$dir/out2" 2>"$dir/err2" &
	pid=$!
	python3 "$dir/peer.py" "$dir/b.sock" hold >"$dir/peer2" &
	ppid=$!
	for _ in $(seq 100); do
		grep -q hello "$dir/peer2" 2>/dev/null && break
		sleep 0.05
	done
	kill -USR1 $pid
	sleep 0.2
	kill -TERM $pid
	wait $pid
	rc=$?
	kill $ppid 2>/dev/null
	wait $ppid 2>/dev/null
	check "SIGTERM exits 0" "[ $rc -eq 0 ]"
	check "SIGUSR1 then exit: two JSON lines" \
		"[ \$(wc -l <'$dir/out2') -eq 2 ] && head -1 '$dir/out2' | grep -q '\"reason\":\"sigusr1\"' && tail -1 '$dir/out2' | grep -q '\"reason\":\"sigterm\"'"

	"$BIN" --listen "$dir/d.sock" --profile "$prof" -q >"$dir/out4" 2>"$dir/err4" &
	pid=$!
	python3 "$dir/peer.py" "$dir/d.sock" close >"$dir/peer4"
	wait $pid
	rc=$?
	check "--profile: serves the profile, one JSON line naming it" \
		"[ $rc -eq 0 ] && grep -q '^hello$' '$dir/peer4' && [ \$(wc -l <'$dir/out4') -eq 1 ] && grep -q '\"profile\":\"builtin-uvc\"' '$dir/out4' && grep -q '\"endpoints\":\[{\"endpoint\":131,\"pattern\":\"uvc-control\"' '$dir/out4'"

	"$BIN" --listen "$dir/c.sock" -q >"$dir/out3" 2>&1 &
	pid=$!
	sleep 0.3
	kill -INT $pid
	wait $pid
	check "SIGINT before any peer exits 0" "[ $? -eq 0 ] && [ ! -e '$dir/c.sock' ]"
else
	echo "# python3 not found: socket checks skipped"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
