"""USB device profiles attached to a run: `dmaharness run --usb-device NAME|FILE`.

A profile (fake-device/profiles/FORMAT.md) is served by one fake-uvc
--profile per device over usb-redir.  The guest's workload (a busybox
script, below) waits for each device, records which driver bound each of
its interfaces, holds the nodes those drivers create open for the run
(video and input nodes, ttys, network links up), so that every driver
keeps its interrupt IN endpoints polled, and counts the completions of
each interrupt IN endpoint with usbmon.  Its lines::

    DMAHARNESS-DEVICE <i> found <bus>:<dev> <vid>:<pid> <sysfs name, 1-2.3>
    DMAHARNESS-DEVICE <i> interface <n> driver <name>|none module <module>|-
    DMAHARNESS-DEVICE <i> hid <0003:VVVV:PPPP.NNNN> driver <name>|none module <module>|-
    DMAHARNESS-DEVICE <i> open <node>
    DMAHARNESS-DEVICE <i> endpoint 0x81 completions <n>
    DMAHARNESS-DEVICE <i> endpoint 0x82 bulk <n>   (bulk IN completions with status 0)
    DMAHARNESS-DEVICE <i> missing
    DMAHARNESS-DEVICE <i> workload <class> <node> <rounds> <failed>   (exercise)

become the result's "devices" list.

Whether a device's dmesg is clean is harness.reports.dmesg's to say.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import files, paths, proc
from . import usbwork
from ..errors import InputError

PROFILES_DIR = paths.REPO / "fake-device" / "profiles"
FRAGMENT = paths.REPO / "kconfig-fragments" / "usb" / "usb-profiles.config"

# the driver module of an interface: by (class, subclass), or by VID:PID
# for vendor-class devices; what the init loads before the workload
# (usbhid binds the interface; hid-generic makes its input devices)
CLASS_MODULES = {(0x0e, None): ("uvcvideo",), (0x03, None): ("usbhid", "hid_generic"),
                 (0x02, 0x02): ("cdc_acm",), (0x02, 0x06): ("cdc_ether",),
                 (0x02, 0x0d): ("cdc_ncm",)}
# (the RTL8153's profile targets its CDC ECM configuration: r8153_ecm, which
# cdc_ether leaves it to)
VENDOR_MODULES = {(0x067b, 0x2303): "pl2303", (0x1a86, 0x7523): "ch341",
                  (0x0bda, 0x8153): "r8153_ecm"}


@dataclass(frozen=True)
class Profile:
    """What the run needs of a device: a profile's, or a host device's (--usb-host)."""
    name: str
    path: Path | None                    # None: a real device passed through (no profile)
    vid: int
    pid: int
    modules: tuple[str, ...]
    interrupt_in: tuple[int, ...]        # bEndpointAddress of every interrupt IN endpoint
    description: str | None = None
    # the interfaces a loaded module is for (the rest, a camera's microphone
    # or a DFU interface, have no driver in the usb-profiles kernel); ()
    # means every interface (a device with a vendor driver)
    driven: tuple[int, ...] = ()
    bulk_in: tuple[int, ...] = ()        # bEndpointAddress of every bulk IN endpoint

    @property
    def id(self) -> str:
        return f"{self.vid:04x}:{self.pid:04x}"


def _statement_bytes(text: str, keyword: str) -> list[bytes]:
    """The hex bytes of every `keyword` statement (continuation lines too)."""
    out, cur = [], None
    for line in text.splitlines():
        body = line.split("#", 1)[0]
        if line[:1] in (" ", "\t") and cur is not None:
            cur += body.split()
            continue
        if cur is not None:
            out.append(bytes(int(x, 16) for x in cur))
            cur = None
        words = body.split()
        if words and words[0] == keyword:
            cur = words[1:]
    if cur is not None:
        out.append(bytes(int(x, 16) for x in cur))
    return out


def _descriptors(config: bytes):
    i = 0
    while i + 2 <= len(config) and config[i] >= 2:
        yield config[i:i + config[i]]
        i += config[i]


def resolve(spec: str) -> Path:
    """A shipped profile's name (fake-device/profiles/NAME.profile) or a file."""
    if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,100}", spec) and \
            os.path.isfile(PROFILES_DIR / f"{spec}.profile"):
        return PROFILES_DIR / f"{spec}.profile"
    p = Path(spec)
    if os.path.exists(p):
        return files.resolve(files.check_file(p, f"--usb-device {spec}: profile"), "--usb-device")
    shipped = sorted(x.stem for x in PROFILES_DIR.glob("*.profile"))
    raise InputError(f"--usb-device {spec}: neither a shipped profile ({', '.join(shipped)}) "
                     "nor a profile file")


def load(spec: str, fake_uvc: Path) -> Profile:
    """Resolve and check a profile with the fake device's own parser
    (`fake-uvc --check-profile`: the same code that will serve it)."""
    path = resolve(spec)
    r = subprocess.run([str(fake_uvc), "--check-profile", str(path)], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        msg = r.stderr.strip().removeprefix("fake-uvc: ") or f"exit {r.returncode}"
        raise InputError(f"--usb-device {spec}: {msg}", path=str(path))
    text = files.read_text(path, f"--usb-device {spec}", strict=False)
    name = next((ln.split()[1] for ln in text.splitlines()
                 if ln.startswith("name ") and len(ln.split()) > 1), path.stem)
    desc = next((_unquote(ln[len("description "):].strip()) for ln in text.splitlines()
                 if ln.startswith("description ")), None)
    dev = _statement_bytes(text, "device")[0]
    configs = _statement_bytes(text, "config")
    return summarize(name, path, dev[8] | dev[9] << 8, dev[10] | dev[11] << 8,
                     configs[0] if configs else b"", desc)


def shipped_for(module: str) -> str | None:
    """The shipped profile whose device the driver `module` binds (its
    interface classes or its VID:PID name the module: CLASS_MODULES,
    VENDOR_MODULES), read without the fake device; None when none does."""
    want = module.replace("-", "_")
    for path in sorted(PROFILES_DIR.glob("*.profile")):
        text = path.read_text(errors="replace")
        try:
            dev = _statement_bytes(text, "device")
            configs = _statement_bytes(text, "config")
        except ValueError:
            continue
        if not dev or len(dev[0]) < 12:
            continue
        p = summarize(path.stem, path, dev[0][8] | dev[0][9] << 8, dev[0][10] | dev[0][11] << 8,
                      configs[0] if configs else b"", None)
        if want in {m.replace("-", "_") for m in p.modules}:
            return path.stem
    return None


def from_host(h) -> Profile:
    """A real device (harness.devices.usbhost.HostDevice) seen as a profile: its
    active configuration's interface classes give the modules to load."""
    return summarize(h.name, None, h.vid, h.pid, h.active_config(), h.product)


def summarize(name: str, path: Path | None, vid: int, pid: int, config: bytes,
              desc: str | None) -> Profile:
    """The modules, interrupt IN endpoints and driven interfaces of a device
    and its configuration."""
    modules, eps, driven, data, bulk = [], [], [], [], []
    vendor = VENDOR_MODULES.get((vid, pid))
    for d in _descriptors(config):
        if d[1] == 0x04 and len(d) >= 9:
            mods = CLASS_MODULES.get((d[5], d[6])) or CLASS_MODULES.get((d[5], None)) or ()
            for m in mods:
                if m not in modules:
                    modules.append(m)
            if (mods or vendor) and d[2] not in driven:
                driven.append(d[2])
            elif d[5] == 0x0a and d[2] not in data:
                data.append(d[2])       # CDC data: claimed by its comm interface's driver
        elif d[1] == 0x05 and len(d) >= 7 and d[2] & 0x80 and (d[3] & 3) == 3 \
                and d[2] not in eps:
            eps.append(d[2])
        elif d[1] == 0x05 and len(d) >= 7 and d[2] & 0x80 and (d[3] & 3) == 2 \
                and d[2] not in bulk:
            bulk.append(d[2])
    if any(m in ("cdc_acm", "cdc_ether", "cdc_ncm") for m in modules):
        driven += [n for n in data if n not in driven]
    if vendor:
        # its own driver takes every interface (of whichever configuration
        # it selects: the RTL8153's is not the first): () means all
        driven = []
        if vendor not in modules:
            modules.append(vendor)
    return Profile(name, path, vid, pid, tuple(modules), tuple(eps), desc, tuple(sorted(driven)),
                   tuple(bulk))


def _unquote(s: str) -> str | None:
    """A FORMAT.md string ("...", with \\" \\\\ \\xNN) as text."""
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        return None
    out, i, body = bytearray(), 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            if body[i + 1] == "x" and i + 3 < len(body) + 0:
                out.append(int(body[i + 2:i + 4], 16))
                i += 4
                continue
            out += body[i + 1].encode()
            i += 2
            continue
        out += c.encode()
        i += 1
    return out.decode(errors="replace")


CAPTURE_DIR = paths.REPO / "fake-device" / "capture"
CAPTURE = CAPTURE_DIR / "build" / "dmaharness-capture"


def build_capture() -> Path:
    """The static capture tool (fake-device/capture/), built on first use."""
    return proc.make(CAPTURE_DIR, CAPTURE, "dmaharness-capture")


def _capture_lines(i: int, p: Profile) -> list[str]:
    """Read the device back through usbfs (its drivers detached, then
    re-attached) and put the profile on ttyS1 between markers."""
    desc = f" --description {shlex.quote(p.description)}" if p.description is not None else ""
    return [
        "  node=/dev/bus/usb/$(printf %03d $bus)/$(printf %03d $dev)",
        "  nb=$(ls -d $d/$(basename $d):*/driver 2>/dev/null | wc -l)",
        f"  dmaharness-capture --node $node --detach --source capture --name {p.name}{desc} "
        f"-o /tmp/cap.{i} 2>/tmp/cap.{i}.err; rc=$?",
        f"  {{ echo \"DMAHARNESS-CAPTURE {i} begin rc=$rc\"; cat /tmp/cap.{i} 2>/dev/null; "
        f"echo \"DMAHARNESS-CAPTURE {i} end\"; }} > /dev/ttyS1",
        f"  cat /tmp/cap.{i}.err >&2",
        # the drivers bind again (the capture re-attached them): wait until
        # as many interfaces have one as before, up to 20 s, then for their
        # nodes to settle
        "  k=0; while [ $k -lt 40 ]; do",
        "    [ $(ls -d $d/$(basename $d):*/driver 2>/dev/null | wc -l) -ge $nb ] && break",
        "    k=$((k + 1)); sleep 0.5",
        "  done",
        "  sleep 1",
    ]


def captures(data_log: str, profiles: list[Profile], run_dir: Path, fake_uvc: Path
             ) -> list[dict | None]:
    """Each device's capture from the data log, written next to the run and
    compared with its profile (fake-uvc --compare-capture)."""
    out: list[dict | None] = [None] * len(profiles)
    cur, rc, lines = None, None, []
    for ln in data_log.splitlines():
        m = re.match(r"DMAHARNESS-CAPTURE (\d+) begin rc=(\d+)", ln)
        if m:
            cur, rc, lines = int(m.group(1)), int(m.group(2)), []
            continue
        if cur is not None and ln.startswith(f"DMAHARNESS-CAPTURE {cur} end"):
            if cur < len(profiles) and profiles[cur].path:
                p = profiles[cur]
                f = run_dir / f"capture-{cur}-{p.name}.profile"
                f.write_text("\n".join(lines) + ("\n" if lines else ""))
                r = subprocess.run([str(fake_uvc), "--compare-capture", str(p.path), str(f)],
                                   capture_output=True, text=True, timeout=60)
                out[cur] = {"exit": rc, "file": str(f), "same": r.returncode == 0,
                            "compare": (r.stdout + r.stderr).strip().splitlines()[:40]}
            cur = None
            continue
        if cur is not None:
            lines.append(ln.rstrip("\r"))
    return out


def guest_script(profiles: list[Profile], duration: float, capture: bool = False,
                 exercise: bool = False) -> str:
    """The busybox sh workload (see the module docstring); `exercise`: each
    device also used as its class's users use it (harness.devices.usbwork)."""
    lines = [
        # each line also to ttyS1, which printk never interleaves (the run's
        # agent.log): the console's copy can be cut by a kernel message
        "say() { echo \"DMAHARNESS-DEVICE $*\"; echo \"DMAHARNESS-DEVICE $*\" > /dev/ttyS1; }",
        *(usbwork.functions() if exercise else ()),
        "[ -d /sys/kernel/debug/usb ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null",
        # find VID:PID's Nth instance in /sys/bus/usb/devices, waiting up to 20 s
        "find_dev() {",
        "  local vid=$1 pid=$2 nth=$3 i=0 n d",
        "  while [ $i -lt 40 ]; do",
        "    n=0",
        "    for d in /sys/bus/usb/devices/*; do",
        "      [ -f $d/idVendor ] || continue",
        "      [ \"$(cat $d/idVendor):$(cat $d/idProduct)\" = \"$vid:$pid\" ] || continue",
        "      n=$((n + 1)); [ $n = $nth ] && { echo $d; return 0; }",
        "    done",
        "    i=$((i + 1)); sleep 0.5",
        "  done",
        "  return 1",
        "}",
        "sleep 2",       # let the drivers bind
        "pids=",
    ]
    seen: dict[str, int] = {}
    for i, p in enumerate(profiles):
        seen[p.id] = seen.get(p.id, 0) + 1
        v, d = f"{p.vid:04x}", f"{p.pid:04x}"
        lines += [
            f"if d=$(find_dev {v} {d} {seen[p.id]}); then",
            "  bus=$(cat $d/busnum); dev=$(cat $d/devnum)",
            f"  say {i} found $bus:$dev {v}:{d} $(basename $d)",
            f"  echo \"{i} $bus $dev\" >> /tmp/devices",
            f"  echo \"{i} $d\" >> /tmp/devpaths",
            "  for f in $d/$(basename $d):*; do",
            "    [ -d $f ] || continue",
            "    drv=none; mod=-; if [ -L $f/driver ]; then drv=$(basename $(readlink $f/driver));",
            "      [ -L $f/driver/module ] && mod=$(basename $(readlink $f/driver/module)); fi",
            f"    say {i} interface $(cat $f/bInterfaceNumber) driver $drv module $mod",
            "  done",
            # HID devices under it: the driver HID core gave each (usbhid binds the
            # interface; the driver whose table names the IDs binds the HID device)
            "  for h in /sys/bus/hid/devices/*; do",
            "    [ -e $h ] || continue",
            "    case $(readlink -f $h) in $(readlink -f $d)/*) ;; *) continue ;; esac",
            "    drv=none; mod=-; if [ -L $h/driver ]; then drv=$(basename $(readlink $h/driver));",
            "      [ -L $h/driver/module ] && mod=$(basename $(readlink $h/driver/module)); fi",
            f"    say {i} hid $(basename $h) driver $drv module $mod",
            "  done",
        ] + (_capture_lines(i, p) if capture and p.path else []) + [
            # every node under the device: hold it open for the run
            "  for c in video4linux/video input/event tty/ttyACM tty/ttyUSB; do",
            "    for n in /sys/class/${c}*; do",
            "      [ -e $n ] || continue",
            "      case $(readlink -f $n/device) in $(readlink -f $d)/*) ;; *) continue ;; esac",
            "      node=/dev/$(basename $n); [ $c = input/event ] && node=/dev/input/$(basename $n)",
            f"      [ -c $node ] || {{ say {i} no-node $node; continue; }}",
            # held until the end (killed there): the usbmon window starts
            # once every device is set up.  A tty is read (raw, no echo):
            # nobody reading it, usb-serial throttles its bulk IN reads once
            # the tty's buffer is full, and the flood stops before the window
            "      case $c in",
            "        tty/*) ( stty raw -echo 2>/dev/null; exec cat > /dev/null ) < $node & ;;",
            f"        *) sleep {duration + 600:g} < $node & ;;",
            "      esac",
            f"      pids=\"$pids $!\"; say {i} open $node",
            "    done",
            "  done",
            "  for n in /sys/class/net/*; do",
            "    case $(readlink -f $n/device) in $(readlink -f $d)/*) ;; *) continue ;; esac",
            f"    ip link set $(basename $n) up && say {i} open net $(basename $n)",
            "  done",
            "else",
            f"  say {i} missing",
            "fi",
        ]
    lines += [
        "[ -f /tmp/devices ] || exit 0",
        # usbmon: every completion of every URB of each bus, for the run
        "for b in $(cut -d' ' -f2 /tmp/devices | sort -u); do",
        "  cat /sys/kernel/debug/usb/usbmon/${b}u > /tmp/usbmon.$b &",
        "  mons=\"$mons $!\"",
        "done",
        *(usbwork.start(duration) if exercise else ()),
        f"sleep {duration:g}",
        *(usbwork.finish() if exercise else ()),
        "kill $mons $pids 2>/dev/null",
        "wait 2>/dev/null",
        "while read -r i bus dev; do",
    ]
    for i, p in enumerate(profiles):
        for ep in p.interrupt_in:
            lines += [
                f"  [ $i = {i} ] && say {i} endpoint 0x{ep:02x} completions "
                f"$(grep -c \" C Ii:$bus:$(printf %03d $dev):{ep & 0x0f} \" /tmp/usbmon.$bus)",
            ]
        for ep in p.bulk_in:          # answered when the device floods them (--bulk-in)
            lines += [
                f"  [ $i = {i} ] && say {i} endpoint 0x{ep:02x} bulk "
                f"$(grep -c \" C Bi:$bus:$(printf %03d $dev):{ep & 0x0f} 0\" /tmp/usbmon.$bus)",
            ]
    lines += ["done < /tmp/devices", "exit 0"]
    return "\n".join(lines) + "\n"


@dataclass
class DeviceResult:
    index: int
    name: str
    id: str
    found: str | None = None                   # "bus:dev"
    interfaces: dict[int, str] = field(default_factory=dict)
    hid: dict[str, str] = field(default_factory=dict)           # HID device -> its driver
    modules: dict[str, str] = field(default_factory=dict)       # driver -> its module
    opened: list[str] = field(default_factory=list)
    completions: dict[str, int] = field(default_factory=dict)   # "0x81" -> n
    bulk_completions: dict[str, int] = field(default_factory=dict)   # "0x82" -> n (status 0)
    passthrough: bool = False                  # a real device of the host (--usb-host)
    driven: tuple[int, ...] = ()               # interfaces a loaded module is for
    sysname: str | None = None                 # the guest's sysfs name: "1-2"
    dmesg: list[str] = field(default_factory=list)   # kernel lines about it that complain
    # its class workload (usbwork): class -> node -> {"rounds", "failed"}
    workloads: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def bound(self) -> bool:
        """Every interface a loaded module is for has a driver (all of them
        when the profile gave none: a result parsed without one)."""
        want = self.driven or tuple(self.interfaces)
        return bool(self.interfaces) and all(self.interfaces.get(n, "none") != "none"
                                             for n in want)

    def to_json(self) -> dict:
        return {"index": self.index, "name": self.name, "id": self.id, "found": self.found,
                "interfaces": {str(k): v for k, v in sorted(self.interfaces.items())},
                "hid": dict(self.hid), "modules": dict(self.modules),
                "bound": self.bound, "driven": list(self.driven), "opened": self.opened,
                "interrupt_completions": self.completions,
                "bulk_completions": self.bulk_completions, "passthrough": self.passthrough,
                "sysname": self.sysname, "dmesg": self.dmesg, "workloads": self.workloads}


_LINE = re.compile(r"DMAHARNESS-DEVICE (\d+) (.*)$")


def _module(r: DeviceResult, words: list[str]) -> None:
    """`... driver NAME module MOD`: the module a driver lives in, when its
    name is another (hid-cherry's driver is "cherry", snd-usb-audio's
    module snd_usb_audio); "-" for a built-in driver."""
    if len(words) == 6 and words[4] == "module" and words[5] != "-" and words[3] != "none":
        r.modules[words[3]] = words[5]


def parse(console: str, profiles: list[Profile], data_log: str = "") -> list[DeviceResult]:
    """The script's lines, from the data log (ttyS1) when it has them,
    else from the console."""
    out = [DeviceResult(i, p.name, p.id, passthrough=p.path is None, driven=p.driven)
           for i, p in enumerate(profiles)]
    text = data_log if "DMAHARNESS-DEVICE" in data_log else console
    for ln in text.splitlines():
        m = _LINE.search(ln)
        if not m or int(m.group(1)) >= len(out):
            continue
        r, words = out[int(m.group(1))], m.group(2).split()
        if words[:1] == ["found"] and len(words) >= 2:
            r.found = words[1]
            r.sysname = words[3] if len(words) >= 4 else None
        elif words[:1] == ["interface"] and len(words) in (4, 6) and words[1].isdigit():
            r.interfaces[int(words[1])] = words[3]
            _module(r, words)
        elif words[:1] == ["hid"] and len(words) in (4, 6) and words[2] == "driver":
            r.hid[words[1]] = words[3]
            _module(r, words)
        elif (w := usbwork.parse(words)) is not None:
            r.workloads.setdefault(w[0], {})[w[1]] = {"rounds": w[2], "failed": w[3]}
        elif words[:1] == ["open"]:
            r.opened.append(" ".join(words[1:]))
        elif words[:1] == ["endpoint"] and len(words) == 4 and words[3].isdigit():
            (r.bulk_completions if words[2] == "bulk" else r.completions)[words[1]] = \
                int(words[3])
    return out
