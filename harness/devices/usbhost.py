"""Passthrough of a real USB device of this host: `dmaharness run --usb-host ID`.

ID is VID:PID (hex) or BUS-DEV (decimal, as lsusb prints them). The device
is found in sysfs, its node checked for permission (the run needs no root:
a udev rule gives the user the node), and its descriptors read from sysfs
to decide, as for a profile, which drivers the guest loads and which
interrupt IN endpoints it counts. During the run Debian's `usbredirect`
(usbredir's own tool, on libusbredirhost) exports it as a usbredir server
on 127.0.0.1, and QEMU's usb-redir connects to it: the guest's driver then
talks to the real hardware.

usbredirect claims every interface, so the host's drivers let go of the
device for the run (the kernel binds them again when usbredirect exits).

The sysfs and /dev roots can be moved for tests (DMAHARNESS_USB_SYSFS,
DMAHARNESS_USB_DEVFS), and the exporter replaced (DMAHARNESS_USBREDIRECT):
a machine without USB can then exercise the whole path with a fake device
standing in for the hardware.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

SYSFS = "/sys/bus/usb/devices"
DEVFS = "/dev/bus/usb"


def sysfs_root() -> Path:
    return Path(os.environ.get("DMAHARNESS_USB_SYSFS") or SYSFS)


def devfs_root() -> Path:
    return Path(os.environ.get("DMAHARNESS_USB_DEVFS") or DEVFS)


def exporter() -> str:
    """The usbredir exporter: Debian's usbredirect unless overridden."""
    return os.environ.get("DMAHARNESS_USBREDIRECT") or "usbredirect"


@dataclass(frozen=True)
class HostDevice:
    sysname: str            # "1-3"
    bus: int
    dev: int
    vid: int
    pid: int
    device_class: int
    product: str | None
    node: Path
    descriptors: bytes      # sysfs `descriptors`: device + every configuration
    config_value: int       # the active configuration (0: unconfigured)

    @property
    def id(self) -> str:
        return f"{self.vid:04x}:{self.pid:04x}"

    @property
    def name(self) -> str:
        """What a run calls it: `host-1-3` (sysfs's name is stable per port)."""
        return f"host-{self.sysname}"

    def active_config(self) -> bytes:
        """The active configuration's descriptors (the first one if unconfigured)."""
        configs = split_configs(self.descriptors[18:])
        for c in configs:
            if len(c) >= 6 and c[5] == self.config_value:
                return c
        return configs[0] if configs else b""

    def describe(self) -> str:
        what = f" {self.product!r}" if self.product else ""
        return f"{self.id}{what} at bus {self.bus} device {self.dev} ({self.node})"


def split_configs(raw: bytes) -> list[bytes]:
    """Configuration descriptors with their interfaces, by wTotalLength."""
    out, i = [], 0
    while i + 4 <= len(raw) and raw[i + 1] == 0x02 and raw[i] >= 9:
        total = raw[i + 2] | raw[i + 3] << 8
        if total < 9:
            break
        out.append(raw[i:i + total])
        i += total
    return out


_VIDPID = re.compile(r"([0-9a-fA-F]{1,4}):([0-9a-fA-F]{1,4})")
_BUSDEV = re.compile(r"(\d{1,3})-(\d{1,3})")


def parse_spec(spec: str) -> tuple[str, int, int]:
    """("id", vid, pid) or ("busdev", bus, dev)."""
    m = _VIDPID.fullmatch(spec)
    if m:
        return "id", int(m.group(1), 16), int(m.group(2), 16)
    m = _BUSDEV.fullmatch(spec)
    if m:
        return "busdev", int(m.group(1)), int(m.group(2))
    raise InputError(f"--usb-host {spec!r}: give VID:PID in hex (046d:085c) or BUS-DEV in "
                     "decimal (1-4), as lsusb prints them")


def _read(d: Path, name: str) -> str | None:
    try:
        return (d / name).read_text(errors="replace").strip()
    except OSError:
        return None


def scan(root: Path | None = None) -> list[HostDevice]:
    """Every USB device sysfs lists (root hubs too), in sysfs order."""
    root = root or sysfs_root()
    out = []
    for d in sorted(root.iterdir()) if root.is_dir() else ():
        if ":" in d.name:
            continue                                    # an interface
        vid, pid = _read(d, "idVendor"), _read(d, "idProduct")
        bus, dev = _read(d, "busnum"), _read(d, "devnum")
        if not (vid and pid and bus and dev):
            continue
        try:
            raw = (d / "descriptors").read_bytes()
        except OSError:
            raw = b""
        try:
            out.append(HostDevice(
                d.name, int(bus), int(dev), int(vid, 16), int(pid, 16),
                int(_read(d, "bDeviceClass") or "0", 16), _read(d, "product"),
                devfs_root() / f"{int(bus):03d}" / f"{int(dev):03d}", raw,
                int(_read(d, "bConfigurationValue") or "0")))
        except ValueError:
            continue
    return out


def _listing(devs: list[HostDevice]) -> str:
    if not devs:
        return "sysfs lists no USB device"
    return "this host has: " + "; ".join(f"{d.bus}-{d.dev} {d.id}"
                                         + (f" {d.product!r}" if d.product else "")
                                         for d in devs)


def find(spec: str) -> HostDevice:
    """The one device `spec` names, checked for passthrough; InputError
    naming the cause (no USB here, no such device, a hub, two alike, no
    permission on its node, no usbredirect) otherwise."""
    kind, a, b = parse_spec(spec)
    root = sysfs_root()
    if not root.is_dir():
        raise InputError(f"--usb-host {spec}: this machine has no USB ({root} does not exist): "
                         "passthrough needs the device plugged into the machine that runs "
                         "dmaharness", path=str(root))
    devs = scan(root)
    if kind == "id":
        hits = [d for d in devs if (d.vid, d.pid) == (a, b)]
    else:
        hits = [d for d in devs if (d.bus, d.dev) == (a, b)]
    if not hits:
        raise InputError(f"--usb-host {spec}: no such USB device on this host ({_listing(devs)})",
                         path=str(root))
    d = hits[0]
    if d.device_class == 0x09:
        raise InputError(f"--usb-host {spec}: {d.describe()} is a hub; pass through the device "
                         "behind it instead")
    # usbredirect opens the first device with the VID:PID (it turns BUS-DEV
    # into VID:PID too): a second alike device cannot be chosen
    twins = [x for x in devs if (x.vid, x.pid) == (d.vid, d.pid)]
    if len(twins) > 1:
        where = ", ".join(f"{x.bus}-{x.dev}" for x in twins)
        raise InputError(f"--usb-host {spec}: {len(twins)} devices are {d.id} ({where}); "
                         "usbredirect exports only the first it finds, so unplug the others")
    check_access(d, spec)
    tool = exporter()
    if not shutil.which(tool):
        raise InputError(f"--usb-host {spec}: {tool!r} is not installed (Debian's usbredirect "
                         "package; `make deps` installs it)")
    return d


def check_access(d: HostDevice, spec: str) -> None:
    """Open the node read-write as usbredirect will, or say why not and how to fix it."""
    try:
        fd = os.open(d.node, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"--usb-host {spec}: {d.describe()}: its node {d.node} does not exist "
                         "(is /dev/bus/usb mounted?)", path=str(d.node)) from None
    except PermissionError:
        try:
            st = os.stat(d.node)
            how = f"mode {stat.filemode(st.st_mode)}, owner {st.st_uid}:{st.st_gid}"
        except OSError:
            how = "not readable"
        raise InputError(
            f"--usb-host {spec}: no permission to open {d.node} read-write ({how}) for "
            f"{d.describe()}. dmaharness does not need root: give your user the device "
            f"with a udev rule, e.g. in /etc/udev/rules.d/70-dmaharness.rules\n"
            f'  SUBSYSTEM=="usb", ATTR{{idVendor}}=="{d.vid:04x}", '
            f'ATTR{{idProduct}}=="{d.pid:04x}", MODE="0660", GROUP="plugdev"\n'
            f"then `udevadm control --reload; udevadm trigger`, and be in group plugdev",
            path=str(d.node)) from None
    except OSError as e:
        raise InputError(f"--usb-host {spec}: cannot open {d.node}: {e.strerror}",
                         path=str(d.node)) from None
    os.close(fd)


def exporter_command(d: HostDevice, port: int) -> list[str]:
    """usbredirect as a server on 127.0.0.1:port (it binds loopback only)."""
    return [exporter(), "--device", d.id, "--as", f"127.0.0.1:{port}"]


def listening(port: int, proc_net: Path = Path("/proc/net/tcp")) -> bool:
    """Whether a socket listens on 127.0.0.1:port (read from /proc, so that
    checking takes no connection from a server that serves only one)."""
    want = f"0100007F:{port:04X}"
    try:
        lines = proc_net.read_text().splitlines()[1:]
    except OSError:
        return False
    for ln in lines:
        w = ln.split()
        if len(w) > 3 and w[1] == want and w[3] == "0A":
            return True
    return False
