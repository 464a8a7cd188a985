"""Fake UVC cameras attached over usbredir, and a guest that drives them.

`dmaharness run`: start one fake-device/build/fake-uvc per camera, each
listening on a unix socket in a private 0700 folder, and give QEMU one
usb-redir device per camera.  At the end the fake devices are stopped and
their counters read (harness.devices.agentresult puts them beside the agent's).
Real devices of the host (--usb-host) come last: one usbredirect each,
listening on 127.0.0.1 (harness.devices.usbhost).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths, proc
from ..errors import DeviceError, InputError
from . import usbhost

FAKE_DEVICE_DIR = paths.REPO / "fake-device"
FAKE_UVC = FAKE_DEVICE_DIR / "build" / "fake-uvc"
PATTERNS = ("control", "button", "mixed", "malformed", "random")


@dataclass(frozen=True)
class Flood:
    pattern: str = "control"
    rate: str = "max"          # "max" or packets per second

    @staticmethod
    def parse(text: str) -> "Flood":
        """`control:max`, `button:4000`, `mixed` (rate max)."""
        pattern, _, rate = text.partition(":")
        rate = rate or "max"
        if pattern not in PATTERNS:
            raise InputError(f"--flood {text!r}: unknown pattern {pattern!r} "
                             f"(one of {', '.join(PATTERNS)})")
        if rate != "max" and not (rate.isdigit() and int(rate) > 0):
            raise InputError(f"--flood {text!r}: the rate is 'max' or a positive number per second")
        return Flood(pattern, rate)


@dataclass
class CameraSpec:
    flood: Flood
    duration: float
    seed: int = 1
    hotplug: float = 0.0
    profiles: tuple[Path, ...] = ()     # devices served from profiles, after the cameras
    hosts: tuple = ()                   # usbhost.HostDevice passed through, after the profiles
    bulk_in: str = "hold"               # the profiles' bulk IN reads (fake-uvc --bulk-in)


def build_fake_device() -> Path:
    return proc.make(FAKE_DEVICE_DIR, FAKE_UVC, "the fake camera")


@dataclass
class Camera:
    index: int
    socket: Path | None                 # a fake device's unix socket
    process: subprocess.Popen
    stdout: Path
    stderr: Path
    counters: dict = field(default_factory=dict)
    exit_code: int | None = None
    port: int | None = None             # a host device's exporter on 127.0.0.1:port
    what: str = ""                      # how errors name it ("fake camera N" by default)

    @property
    def label(self) -> str:
        return self.what or f"fake camera {self.index}"

    def ready(self) -> bool:
        if self.port is not None:
            return usbhost.listening(self.port)
        return self.socket.exists()

    def qemu_args(self) -> list[str]:
        cid = f"cam{self.index}"
        where = (f"host=127.0.0.1,port={self.port}" if self.port is not None
                 else f"path={self.socket}")
        # suppress-remote-wake=off: the guest sees bmAttributes as the device
        # says (QEMU clears the remote-wakeup bit by default)
        return ["-chardev", f"socket,id={cid},{where}",
                "-device", f"usb-redir,chardev={cid},bus=xhci.0,id=redir{self.index},"
                           "suppress-remote-wake=off"]


# usb-redir devices a boot may have: the guest agent drives at most 8 cameras
# (harness/guest/options.h MAX_CAMERAS), and QEMU's xhci has 8 ports a speed
MAX_USB_DEVICES = 8


def check_count(cameras: int, profiles: int, hosts: int) -> None:
    """InputError unless the cameras, profile devices and host devices fit a boot
    (checked before any build, and again when they start)."""
    if not (0 if profiles or hosts else 1) <= cameras <= MAX_USB_DEVICES:
        raise InputError(f"--cameras {cameras}: between 1 and {MAX_USB_DEVICES} (the guest "
                         "agent's limit)")
    if cameras + profiles + hosts > MAX_USB_DEVICES:
        raise InputError(f"{cameras} camera(s), {profiles} --usb-device and {hosts} --usb-host: "
                         f"at most {MAX_USB_DEVICES} USB devices in all")


class Cameras:
    """N fake-uvc processes; a context manager that always stops them."""

    def __init__(self, n: int, spec: CameraSpec, run_dir: Path):
        check_count(n, len(spec.profiles), len(spec.hosts))
        self.n, self.spec, self.run_dir = n, spec, run_dir
        self.cams: list[Camera] = []
        self.sock_dir: Path | None = None

    def __enter__(self) -> "Cameras":
        binary = build_fake_device()
        # unix socket paths are limited to 107 bytes: keep them short, private
        self.sock_dir = Path(tempfile.mkdtemp(prefix="dmah-"))
        os.chmod(self.sock_dir, 0o700)
        try:
            for i in range(self.n + len(self.spec.profiles)):
                sock = self.sock_dir / f"cam{i}.sock"
                out = self.run_dir / f"camera{i}.json"
                err = self.run_dir / f"camera{i}.log"
                cmd = [str(binary), "--listen", str(sock), "--rate", self.spec.flood.rate,
                       "--seed", str(self.spec.seed + i), "--duration", f"{self.spec.duration:g}"]
                if i < self.n:
                    cmd += ["--pattern", self.spec.flood.pattern, "--serial", f"DMAH-{i + 1:04d}"]
                else:
                    cmd += ["--profile", str(self.spec.profiles[i - self.n]),
                            "--bulk-in", self.spec.bulk_in]
                if self.spec.hotplug:
                    cmd += ["--hotplug", f"{self.spec.hotplug:g}"]
                with open(out, "wb") as fo, open(err, "wb") as fe:
                    p = proc.spawn(cmd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe)
                self.cams.append(Camera(i, sock, p, out, err))
            for h in self.spec.hosts:
                i = len(self.cams)
                port = _free_port()
                log = self.run_dir / f"usbhost{i}.log"
                with open(log, "wb") as fe:
                    p = proc.spawn(usbhost.exporter_command(h, port), stdin=subprocess.DEVNULL,
                                   stdout=fe, stderr=subprocess.STDOUT)
                self.cams.append(Camera(i, None, p, log, log, port=port,
                                        what=f"usbredirect (exporting {h.describe()})"))
            deadline = time.monotonic() + 10
            for c in self.cams:
                while not c.ready():
                    if c.process.poll() is not None:
                        # (usbredirect exits 0 when it cannot open the device)
                        raise DeviceError(f"{c.label} exited "
                                          f"({describe_exit(c.process.returncode)}) before "
                                          f"listening: {tail(c.stderr)}", path=str(c.stderr))
                    if time.monotonic() > deadline:
                        raise DeviceError(f"{c.label} was not listening after 10 s",
                                          path=str(c.stderr))
                    time.sleep(0.02)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def qemu_args(self) -> list[str]:
        return [a for c in self.cams for a in c.qemu_args()]

    def restart(self) -> list[str]:
        """Stop the cameras and start fresh ones (a usb-redir peer serves one
        QEMU); returns the new QEMU arguments."""
        self.__exit__(None, None, None)
        self.cams, self.sock_dir = [], None
        self.__enter__()
        return self.qemu_args()

    def crashed(self) -> list[Camera]:
        """Cameras that died by a signal or with a runtime error while running."""
        return [c for c in self.cams if c.process.poll() not in (None, 0)]

    def __exit__(self, *exc) -> None:
        for c in self.cams:
            if c.process.poll() is None:
                c.process.send_signal(signal.SIGTERM)
        for c in self.cams:
            c.exit_code = proc.stop(c.process, grace=5)
            c.counters = _last_json(c.stdout)
        if self.sock_dir:
            shutil.rmtree(self.sock_dir, ignore_errors=True)


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the exporter binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(p: Path, n: int = 400) -> str:
    """The end of a camera's log, or a word that it has none."""
    try:
        text = p.read_text(errors="replace").strip()
    except OSError:
        return f"(no log: {p} is missing)"
    return text[-n:] if text else f"(its log {p} is empty)"


def describe_exit(code: int | None) -> str:
    """`exit 3`, or `killed by signal 9 (SIGKILL)` for a negative Popen code."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "?"
        return f"killed by signal {-code} ({name})"
    return f"exit {code}"


def _last_json(p: Path) -> dict:
    try:
        lines = [l for l in p.read_text(errors="replace").splitlines() if l.startswith("{")]
    except OSError:
        return {}
    for line in reversed(lines):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {}
