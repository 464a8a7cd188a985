#!/bin/sh
# Smoke-test fake-uvc against Debian's prebuilt (stock) kernels, without
# building one: download linux-image-*-unsigned with apt-get download,
# unpack it, build a busybox initramfs with the xhci/uvcvideo/evdev modules
# (and the guest agent when given), boot QEMU (TCG) with one usb-redir
# camera per fake-uvc, and print what the guest and the device saw.
#
# usage: tools/stock_kernel_smoke.sh [options] [-- fake-uvc options]
#   --kernel 6.1|6.12   Debian kernel series (default 6.1)
#   --agent PATH        static dmaharness-agent to run in the guest
#                       (default ../harness/guest/build/dmaharness-agent if
#                       present; without it the shell holds /dev/video0 open)
#   --duration S        agent run time / hold time (default 10)
#   --cameras N         fake-uvc instances (default 1)
#   --work DIR          cache for packages and images
#                       (default ~/.cache/dmaharness-fake-device)
# Exit status: 0 if every camera probed and the console has no kernel
# warning, 1 otherwise, 2 usage, 3 missing tool or package.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
series=6.1 dur=10 cams=1
agent=$here/../harness/guest/build/dmaharness-agent
work=${HOME}/.cache/dmaharness-fake-device
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) series=$2; shift 2 ;;
	--agent) agent=$2; shift 2 ;;
	--duration) dur=$2; shift 2 ;;
	--cameras) cams=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
fu=$here/build/fake-uvc
for t in apt-get dpkg-deb depmod modprobe busybox cpio gzip xz qemu-system-x86_64; do
	command -v $t >/dev/null 2>&1 || { echo "missing tool: $t" >&2; exit 3; }
done
[ -x "$fu" ] || { echo "build fake-uvc first: make -C fake-device" >&2; exit 3; }
case $series in
6.1) pat='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
6.12) pat='^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' ;;
*) echo "--kernel 6.1 or 6.12" >&2; exit 2 ;;
esac
pkg=$(apt-cache search --names-only "$pat" | awk '{print $1}' | sort -V | tail -1)
[ -n "$pkg" ] || { echo "no package matches $pat (apt-get update?)" >&2; exit 3; }
mkdir -p "$work/$pkg" && cd "$work/$pkg" || exit 3
if [ ! -d root ]; then
	apt-get download "$pkg" >/dev/null 2>&1 || { echo "apt-get download $pkg failed" >&2; exit 3; }
	dpkg-deb -x "$pkg"_*.deb root || exit 3
fi
kver=$(ls root/lib/modules | head -1)
kernel=$(ls root/boot/vmlinuz-* | head -1)
depmod -b root "$kver" || exit 3

run=$(mktemp -d) && chmod 700 "$run"
trap 'rm -rf "$run"' EXIT
R=$run/initrd
mkdir -p "$R/bin" "$R/lib/modules" "$R/proc" "$R/sys" "$R/dev" "$R/tmp"
cp "$(command -v busybox)" "$R/bin/busybox"
have_agent=0
[ -x "$agent" ] && { cp "$agent" "$R/bin/agent"; have_agent=1; }
for m in xhci-pci uvcvideo evdev; do
	modprobe -d root -S "$kver" --show-depends $m | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r f; do
	b=$(basename "$f"); b=${b%.xz}; b=${b%.zst}; b=${b%.ko}
	case $f in
	*.xz) xz -dc "$f" >"$R/lib/modules/$b.ko" ;;
	*.zst) zstd -dc "$f" >"$R/lib/modules/$b.ko" ;;
	*) cp "$f" "$R/lib/modules/$b.ko" ;;
	esac
	echo "$b" >>"$R/lib/modules/order"
done
cat >"$R/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in \$(cat /lib/modules/order); do insmod /lib/modules/\$m.ko || echo "SMOKE: insmod \$m failed"; done
i=0; while [ \$(ls /dev/video* 2>/dev/null | wc -l) -lt \$(( $cams * 2 )) ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done
echo "SMOKE: video nodes: \$(ls /dev/video* 2>/dev/null | tr '\n' ' ')"
echo "SMOKE: input names: \$(grep -h '^N:' /proc/bus/input/devices | tr '\n' ' ')"
if [ $have_agent = 1 ]; then /bin/agent --duration $dur --cameras $cams; echo "SMOKE: agent exit \$?";
else exec 3</dev/video0; sleep $dur; exec 3<&-; fi
echo "SMOKE: dmesg follows"; dmesg
echo "SMOKE: done"
poweroff -f
INIT
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$run/initrd.gz"

qargs=""
i=1
while [ $i -le "$cams" ]; do
	"$fu" --listen "$run/cam$i.sock" --serial "SMOKE-$i" "$@" >"$run/fu$i.json" 2>"$run/fu$i.err" &
	qargs="$qargs -chardev socket,id=cam$i,path=$run/cam$i.sock -device usb-redir,chardev=cam$i,bus=xhci.0"
	while [ ! -S "$run/cam$i.sock" ] && kill -0 $! 2>/dev/null; do sleep 0.01; done
	i=$((i + 1))
done
# shellcheck disable=SC2086
timeout $((dur + 240)) qemu-system-x86_64 -accel tcg -machine q35 -m 1024 -smp 1 \
	-nographic -no-reboot -kernel "$kernel" -initrd "$run/initrd.gz" \
	-append "console=ttyS0 panic=-1 loglevel=4" -device qemu-xhci,id=xhci $qargs \
	>"$run/console.log" 2>&1
wait

echo "kernel: $pkg ($kver)"
grep -a "SMOKE:\|Found UVC\|input: .*UVC\|DMAHARNESS-AGENT " "$run/console.log" | grep -v "SMOKE: dmesg" | cut -c1-400
i=1
while [ $i -le "$cams" ]; do
	echo "fake-uvc $i: $(cat "$run/fu$i.json")" | cut -c1-600
	i=$((i + 1))
done
probed=$(sed -n '/SMOKE: dmesg follows/,$p' "$run/console.log" | grep -a -c "Found UVC 1.10 device")
bad=$(grep -a -E "WARNING:|BUG:|Oops|Call Trace|uvcvideo.*(error|fail)|Failed to (query|resubmit)|Non-zero status|UVC non compliance" "$run/console.log")
[ -n "$bad" ] && { echo "kernel complaints:"; echo "$bad" | head -20; }
[ "$probed" -ge "$cams" ] && [ -z "$bad" ] && { echo "SMOKE OK"; exit 0; }
echo "SMOKE FAILED (probed $probed of $cams)"
exit 1
