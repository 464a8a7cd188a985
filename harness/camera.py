"""Fake UVC cameras attached over usbredir, and a guest that drives them.

`dmaharness run`: start one fake-device/build/fake-uvc per camera, each
listening on a unix socket in a private 0700 folder; boot the variant with
one usb-redir device per camera; the guest init loads uvcvideo and runs
the agent, which opens the cameras, counts V4L2 control events and key
events, reads the input device's phys string and cycles close/open.  At the
end the fake devices are stopped and their counters, the agent's counters
and the delivered rate over time are reported.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import paths, proc
from .errors import DeviceError, InputError

FAKE_DEVICE_DIR = paths.REPO / "fake-device"
FAKE_UVC = FAKE_DEVICE_DIR / "build" / "fake-uvc"
PATTERNS = ("control", "button", "mixed", "malformed", "random")
AGENT_LINE = re.compile(r"DMAHARNESS-AGENT (\{.*\})\s*$")
CEILING_PER_CAMERA = 8000     # one status transfer per 125 us microframe


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


def parse_duration(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", text.strip())
    if not m:
        raise InputError(f"{text!r} is not a duration (20, 20s, 500ms, 2m)")
    v = float(m.group(1))
    return {"ms": v / 1000, "m": v * 60}.get(m.group(2) or "s", v)


@dataclass
class CameraSpec:
    flood: Flood
    duration: float
    seed: int = 1
    hotplug: float = 0.0


def build_fake_device() -> Path:
    return proc.make(FAKE_DEVICE_DIR, FAKE_UVC, "the fake camera")


@dataclass
class Camera:
    index: int
    socket: Path
    process: subprocess.Popen
    stdout: Path
    stderr: Path
    counters: dict = field(default_factory=dict)
    exit_code: int | None = None

    def qemu_args(self) -> list[str]:
        cid = f"cam{self.index}"
        return ["-chardev", f"socket,id={cid},path={self.socket}",
                "-device", f"usb-redir,chardev={cid},bus=xhci.0,id=redir{self.index}"]


class Cameras:
    """N fake-uvc processes; a context manager that always stops them."""

    def __init__(self, n: int, spec: CameraSpec, run_dir: Path):
        if not 1 <= n <= 8:
            raise InputError(f"--cameras {n}: between 1 and 8 (the guest agent's limit)")
        self.n, self.spec, self.run_dir = n, spec, run_dir
        self.cams: list[Camera] = []
        self.sock_dir: Path | None = None

    def __enter__(self) -> "Cameras":
        binary = build_fake_device()
        # unix socket paths are limited to 107 bytes: keep them short, private
        self.sock_dir = Path(tempfile.mkdtemp(prefix="dmah-"))
        os.chmod(self.sock_dir, 0o700)
        try:
            for i in range(self.n):
                sock = self.sock_dir / f"cam{i}.sock"
                out = self.run_dir / f"camera{i}.json"
                err = self.run_dir / f"camera{i}.log"
                cmd = [str(binary), "--listen", str(sock), "--pattern", self.spec.flood.pattern,
                       "--rate", self.spec.flood.rate, "--seed", str(self.spec.seed + i),
                       "--duration", f"{self.spec.duration:g}", "--serial", f"DMAH-{i + 1:04d}"]
                if self.spec.hotplug:
                    cmd += ["--hotplug", f"{self.spec.hotplug:g}"]
                with open(out, "wb") as fo, open(err, "wb") as fe:
                    p = proc.spawn(cmd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe)
                self.cams.append(Camera(i, sock, p, out, err))
            deadline = time.monotonic() + 10
            for c in self.cams:
                while not c.socket.exists():
                    if c.process.poll() is not None:
                        raise DeviceError(f"fake camera {c.index} exited ({c.process.returncode}) "
                                          f"before listening: {_tail(c.stderr)}", path=str(c.stderr))
                    if time.monotonic() > deadline:
                        raise DeviceError(f"fake camera {c.index} did not create {c.socket} in 10 s",
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


def _tail(p: Path, n: int = 400) -> str:
    try:
        return p.read_text(errors="replace").strip()[-n:]
    except OSError:
        return ""


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


def agent_result(console_text: str) -> dict | None:
    """The agent's `DMAHARNESS-AGENT {json}` line from the console."""
    found = None
    for line in console_text.splitlines():
        i = line.find("DMAHARNESS-AGENT {")
        if i < 0:
            continue
        m = AGENT_LINE.search(line[i:])
        if m:
            try:
                found = json.loads(m.group(1))
            except ValueError:
                continue
    return found


def summarize(agent: dict | None, cams: list[Camera], duration: float) -> dict:
    """Sent vs counted, rates, and the per-second series."""
    sent = sum(int(c.counters.get("sent", 0)) for c in cams)
    totals = (agent or {}).get("totals", {}) or {}
    emitted = int(totals.get("events_emitted", 0) or 0)
    dequeued = int(totals.get("events_dequeued", 0) or 0)
    keys = int(totals.get("key_events", 0) or 0)
    counted = emitted + keys
    secs = float((agent or {}).get("run_elapsed_s") or duration or 1)
    series = (agent or {}).get("series") or []
    out = {
        "cameras": len(cams),
        "sent": sent,
        "sent_by_camera": [int(c.counters.get("sent", 0)) for c in cams],
        "guest_events_emitted": emitted,
        "guest_events_dequeued": dequeued,
        "guest_key_events": keys,
        "guest_counted": counted,
        "guest_seconds": round(secs, 3),
        "guest_rate_per_s": round(counted / secs, 1) if secs else 0.0,
        "ceiling_per_s": CEILING_PER_CAMERA * len(cams),
        "phys_reads": int(totals.get("phys_reads", 0) or 0),
        "cycles": int(totals.get("cycles", 0) or 0),
        "series": series,
    }
    out["ratio_to_ceiling"] = (round(out["guest_rate_per_s"] / out["ceiling_per_s"], 3)
                               if out["ceiling_per_s"] else 0.0)
    fd_cpu = sum(float(c.counters.get("cpu_user_s", 0)) + float(c.counters.get("cpu_sys_s", 0))
                 for c in cams)
    out["fake_device_cpu_s"] = round(fd_cpu, 3)
    return out
