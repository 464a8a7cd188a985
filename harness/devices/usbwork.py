"""Class workloads: each attached USB device used as its users use it (issue #41).

Binding a driver and holding its nodes open keeps its interrupt IN
endpoints polled, but the seed's bug needs more: a CPU write beside a
buffer the device owns, which happens when the driver is *used*.  With
``exercise`` (`run --exercise`, a case's ``run.exercise``, the USB sweep
and `check`'s USB workload), the guest script (harness.devices.usbdevices)
starts one busybox loop per device for the flood's window, over every
node the device's drivers made (found in /sys/class/*/* by the device
link, named by the node's uevent DEVNAME):

  tty         termios changes (speed, flow control; raw, no echo), writes
  net         an address, a ping through the link (ARP and ICMP out, the
              flood's packets in), promiscuous and all-multicast on and
              off, a multicast address added and dropped, the counters read
  input       LED events written (num, caps, scroll lock on and off), the
              HID output reports usbhid sends for them
  hidraw      a report read, an output report written
  sound       MIDI bytes written to a rawmidi node and read back
  lirc        a pulse written (transmit), the receive side read
  block       its first 64 KiB read (SCSI READs over the storage transport)
  usbmisc, dvb, other
              opened, read (up to 64 bytes, 1 s), one byte written

The nodes are found below the device's own sysfs folder (each "dev" file,
classified by its uevent DEVNAME; each "ifindex", a network link).  Nodes
that would stop the guest are left alone: watchdogs (a write starts them),
usbfs's own nodes, and video, radio and media nodes (the agent's domain
for the camera; held open as before).  Every command runs under `timeout`, so a device that never
answers a write costs one second, not the run.  At the end of the window
each node says how many rounds ran and how many of its commands failed::

    DMAHARNESS-DEVICE <i> workload <class> <devname> <rounds> <failed>

(`failed`: rounds whose commands did not all succeed) which become the
device result's ``workloads`` (class -> node -> counts).  A device whose
drivers made no node says ``workload none - 0 0``.
"""

from __future__ import annotations

# what each class does once a round ($n: /dev node, $k: the device index,
# $if: a network interface); each command bounded by `timeout`
_ROUND = r"""
work_round() {
  local cls=$1 n=$2 k=$3 bad=0
  case $cls in
    tty)
      timeout 2 sh -c "stty -F /dev/$n raw -echo 9600 crtscts && printf 'AT\r' > /dev/$n &&
        stty -F /dev/$n raw -echo 115200 -crtscts && printf 'dmaharness\r\n' > /dev/$n" \
        2>/dev/null || bad=1 ;;
    net)
      ping -c 1 -W 1 -I $n 10.77.$k.2 >/dev/null 2>&1 &
      { ip link set $n promisc on && ip link set $n allmulticast on &&
        ip maddr add 01:00:5e:01:02:03 dev $n && ip maddr del 01:00:5e:01:02:03 dev $n &&
        ip link set $n allmulticast off && ip link set $n promisc off; } 2>/dev/null || bad=1
      cat /sys/class/net/$n/statistics/* > /dev/null 2>&1 || bad=$((bad + 1)) ;;
    input)
      # LED events (_LED_EVENTS below): one write
      timeout 1 sh -c "printf '@LED_EVENTS@' > /dev/$n" 2>/dev/null || bad=1 ;;
    hidraw)
      timeout 1 sh -c "head -c 64 /dev/$n > /dev/null & printf '\000\001' > /dev/$n; wait" \
        2>/dev/null || bad=1 ;;
    sound)
      case $n in
        snd/midi*)
          timeout 1 sh -c "printf '\220\074\100\200\074\000' > /dev/$n" 2>/dev/null || bad=1
          timeout 1 head -c 16 /dev/$n > /dev/null 2>&1 ;;
        *) timeout 1 head -c 64 /dev/$n > /dev/null 2>&1 ;;
      esac ;;
    lirc)
      timeout 1 sh -c "printf '\350\003\000\000' > /dev/$n" 2>/dev/null || bad=1
      timeout 1 head -c 16 /dev/$n > /dev/null 2>&1 ;;
    block)
      timeout 5 dd if=/dev/$n of=/dev/null bs=4096 count=16 2>/dev/null || bad=1 ;;
    *)
      timeout 1 sh -c "head -c 64 /dev/$n > /dev/null & printf '\000' > /dev/$n; wait" \
        2>/dev/null || bad=1 ;;
  esac
  return $bad
}
"""

# the nodes of device $1 (a /sys/bus/usb/devices path), one "class devname"
# a line: every "dev" file below the device's own sysfs folder is a node
# (its uevent names it), every "ifindex" a network link: one find each,
# not a walk of /sys/class (hundreds of forks under TCG outlast the window)
_NODES = r"""
work_nodes() {
  local d=$(readlink -f $1) f dir dn
  for f in $(find $d -name dev -type f 2>/dev/null); do
    dir=${f%/dev}
    dn=$(sed -n 's/^DEVNAME=//p' $dir/uevent 2>/dev/null)
    [ -n "$dn" ] && [ -c /dev/$dn -o -b /dev/$dn ] || continue
    case $dn in
      bus/usb/*|watchdog*|video*|v4l-*|media*|vbi*|radio*|swradio*) ;;
      input/event*) echo "input $dn" ;;
      input/*) ;;
      tty*) echo "tty $dn" ;;
      hidraw*) echo "hidraw $dn" ;;
      snd/*) echo "sound $dn" ;;
      lirc*) echo "lirc $dn" ;;
      dvb/*) echo "dvb $dn" ;;
      usb/*) echo "usbmisc $dn" ;;
      *) [ -b /dev/$dn ] && echo "block $dn" || echo "other $dn" ;;
    esac
  done
  for f in $(find $d -name ifindex -type f 2>/dev/null); do
    dir=${f%/ifindex}
    echo "net ${dir##*/}"
  done
}
"""

# one device's loop: its nodes, rounds until the end time, then the counts
_LOOP = r"""
work_device() {
  local k=$1 d=$2 end=$3 nodes i=0 r=0 f
  nodes=$(work_nodes $d)
  [ -n "$nodes" ] || { say $k workload none - 0 0; return 0; }
  echo "$nodes" | while read -r cls n; do
    [ $cls = net ] && { ip addr add 10.77.$k.1/24 dev $n 2>/dev/null; ip link set $n up; }
  done
  while [ $(date +%s) -lt $end ]; do
    r=$((r + 1)); i=0
    echo "$nodes" > /tmp/work.$k.nodes
    while read -r cls n; do
      i=$((i + 1))
      work_round $cls $n $k
      f=$?
      eval "fail_$i=\$((\${fail_$i:-0} + f))"
    done < /tmp/work.$k.nodes
    sleep 0.2
  done
  i=0
  while read -r cls n; do
    i=$((i + 1))
    eval "f=\${fail_$i:-0}"
    say $k workload $cls $n $r $f
  done < /tmp/work.$k.nodes
}
"""


def _event(type_: int, code: int, value: int) -> str:
    """struct input_event on x86_64 (a 16-byte time, u16 type, u16 code,
    s32 value) as printf's octal escapes."""
    data = bytes(16) + type_.to_bytes(2, "little") + code.to_bytes(2, "little") \
        + value.to_bytes(4, "little", signed=True)
    return "".join(f"\\{b:03o}" for b in data)


EV_SYN, EV_LED = 0x00, 0x11
# num, caps and scroll lock on, a report, the same off, a report
_LED_EVENTS = "".join("".join(_event(EV_LED, led, on) for led in (0, 1, 2))
                      + _event(EV_SYN, 0, 0) for on in (1, 0))


def functions() -> list[str]:
    """The shell functions the guest script defines when it exercises."""
    return (_ROUND.replace("@LED_EVENTS@", _LED_EVENTS) + _NODES + _LOOP
            ).strip("\n").splitlines()


def start(duration: float) -> list[str]:
    """Start every device's loop (/tmp/devpaths: "index sysfs-path" lines)
    for the flood's window; `finish()` waits for them."""
    return ["end=$(( $(date +%s) + " + str(max(1, int(duration) - 1)) + " ))",
            "works=",
            "while read -r k p; do work_device $k $p $end & works=\"$works $!\"; "
            "done < /tmp/devpaths"]


def finish() -> list[str]:
    """Wait for the loops (each ends at the window's end, its last round
    bounded by its commands' timeouts)."""
    return ["for w in $works; do wait $w; done"]


def parse(words: list[str]) -> tuple[str, str, int, int] | None:
    """A `workload` line's words after the index: (class, node, rounds, failed)."""
    if len(words) == 5 and words[0] == "workload" and words[3].isdigit() \
            and words[4].isdigit():
        return words[1], words[2], int(words[3]), int(words[4])
    return None
