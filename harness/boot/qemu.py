"""Booting a kernel under QEMU and watching its console.

The guest's serial console goes to a file that QEMU writes itself (so the
log is complete even if the harness dies); the harness polls it.  The
guest leaves through isa-debug-exit, so QEMU's exit code carries the
guest's status: (status << 1) | 1.  A panic reboots (panic=-1) and
-no-reboot turns that into QEMU exiting with 0.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import paths, proc
from ..errors import EnvError, GuestError
from .bootlog import ConsoleWatch

QEMU = "qemu-system-x86_64"
DEBUG_EXIT_PORT = 0xF4
_PROBE_CODE = 0x2A


@dataclass
class BootRequest:
    kernel: Path
    initrd: Path
    console: Path                     # console log, written by QEMU
    append: str = ""                  # extra kernel command line
    memory_mb: int = 1024
    smp: int = 2
    accel: str = "auto"               # auto | tcg | kvm
    timeout: float = 300.0            # wall clock, whole boot
    silence: float = 60.0             # no console output for this long = hung
    extra_args: list[str] = field(default_factory=list)   # devices (usb-redir ...)
    qemu_opts: list[str] = field(default_factory=list)    # the user's own (--qemu-opts), last
    data_log: Path | None = None      # the guest's ttyS1 (results away from printk)


@dataclass
class BootResult:
    outcome: str            # one of OUTCOMES' keys (see describe())
    accel: str
    wall: float
    qemu_exit: int | None
    guest_status: int | None
    watch: ConsoleWatch
    console: Path
    command: list[str]
    stderr: str = ""
    accel_note: str = ""
    stop_reason: str = ""   # outcome "stopped": why the harness stopped the guest

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def describe(self) -> str:
        w = self.watch
        return {
            "ok": "guest finished with status 0",
            "guest-error": f"guest finished with status {self.guest_status}",
            "panic": f"kernel panic: {w.panic_line}",
            "timeout": "guest did not finish within the time limit",
            "silent": "guest went silent" + (" after an oops (oops-then-halt)" if w.oops_lines else ""),
            "no-marker": f"QEMU exited (code {self.qemu_exit}) without the guest's end marker",
            "kvm-silent": "nothing printed under KVM",
            "qemu-error": f"QEMU failed (exit {self.qemu_exit}): {self.stderr.strip()[-300:]}",
            "stopped": f"stopped by the harness: {self.stop_reason}",
        }[self.outcome]

    def to_json(self) -> dict:
        return {
            "outcome": self.outcome,
            "message": self.describe(),
            "accel": self.accel,
            "accel_note": self.accel_note,
            "wall_seconds": round(self.wall, 3),
            "qemu_exit": self.qemu_exit,
            "guest_status": self.guest_status,
            "console": str(self.console),
            "facts": self.watch.facts,
            "dma_api_counters": self.watch.dma_api_counters,
            "oops_lines": self.watch.oops_lines[:20],
            "end_line": self.watch.end_line,
            "qemu_command": self.command,
        }

    def raise_for_outcome(self) -> None:
        if not self.ok:
            tail = "\n".join("  | " + l for l in self.watch.tail(25))
            raise GuestError(f"{self.describe()}; console {self.console}; last lines:\n{tail}",
                             path=str(self.console))


def qemu_binary() -> str:
    path = shutil.which(QEMU)
    if not path:
        raise EnvError(f"{QEMU} is not installed; run `make deps` (package qemu-system-x86)")
    return path


def _probe_bios(folder: Path) -> Path:
    """A 64 KiB BIOS whose reset vector writes a code to isa-debug-exit."""
    p = folder / "kvm-probe.bin"
    if not p.is_file():
        img = bytearray(b"\xf4" * 65536)            # hlt everywhere
        # at the reset vector (0xffff0): mov al, CODE; out 0xf4, al; hlt
        img[0xFFF0:0xFFF5] = bytes([0xB0, _PROBE_CODE, 0xE6, DEBUG_EXIT_PORT, 0xF4])
        tmp = p.with_suffix(".tmp")
        tmp.write_bytes(bytes(img))
        tmp.rename(p)
    return p


def probe_kvm(folder: Path, timeout: float = 5.0) -> tuple[bool, str]:
    """Does KVM really run guest code here?  (open, create a VM, run a vCPU)"""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return False, f"/dev/kvm: {e.strerror}"
    try:
        if fcntl.ioctl(fd, 0xAE00, 0) != 12:           # KVM_GET_API_VERSION
            return False, "unexpected KVM API version"
        vm = fcntl.ioctl(fd, 0xAE01, 0)                 # KVM_CREATE_VM
        os.close(vm)
    except OSError as e:
        return False, f"KVM_CREATE_VM: {e.strerror}"
    finally:
        os.close(fd)
    # the machine and CPU model of real boots: on some hosts KVM runs the
    # default CPU but QEMU aborts setting the MSRs of `-cpu max`
    cmd = [qemu_binary(), "-accel", "kvm", "-machine", MACHINE, "-cpu", cpu_model("kvm"),
           "-nodefaults", "-display", "none", "-no-user-config", "-m", "16",
           "-bios", str(_probe_bios(folder)),
           "-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "a KVM guest did not run its first instruction in time"
    if r.returncode != (_PROBE_CODE << 1) | 1:
        return False, f"KVM probe guest exited {r.returncode}: {r.stderr.strip()[-200:]}"
    return True, "KVM ran the probe guest"


def _verdict_file(folder: Path) -> Path:
    return folder / "kvm-verdict.json"


def _host_id() -> str:
    u = os.uname()
    try:
        q = subprocess.run([qemu_binary(), "--version"], capture_output=True, text=True).stdout
    except OSError:
        q = ""
    return f"{u.release} {u.version} | {q.splitlines()[0] if q else '?'}"


def record_kvm_broken(folder: Path, why: str) -> None:
    """Remember that a real kernel did not run under KVM on this host."""
    _verdict_file(folder).write_text(json.dumps({"host": _host_id(), "works": False, "why": why}) + "\n")


def choose_accel(requested: str, folder: Path) -> tuple[str, str]:
    if requested == "tcg":
        return "tcg", "requested"
    vf = _verdict_file(folder)
    if vf.is_file():
        try:
            v = json.loads(vf.read_text())
        except ValueError:
            v = {}
        if v.get("host") == _host_id() and not v.get("works", True):
            if requested == "kvm":
                raise EnvError(f"--accel kvm was requested but KVM does not work here: {v.get('why')} "
                               f"(remembered in {vf}; delete it to try again)")
            return "tcg", f"KVM does not work on this host: {v.get('why')} ({vf})"
    ok, why = probe_kvm(folder)
    if requested == "kvm" and not ok:
        raise EnvError(f"--accel kvm was requested but KVM does not work here: {why}")
    return ("kvm", why) if ok else ("tcg", why)


MACHINE = "q35"


def cpu_model(accel: str) -> str:
    return "max" if accel == "kvm" else "qemu64"


# A hung task is reported after HUNG_TASK_TIMEOUT s, found by a scan every
# HUNG_TASK_CHECK s: at most 40 s after it blocked, well inside the silence
# limit (BootSettings.silence, 60 s), so a hang ends with the blocked tasks'
# stacks on the console and a report, not only "guest went silent".  (The
# kernel's default, 120 s, is longer than the silence limit.)
HUNG_TASK_TIMEOUT = 30
HUNG_TASK_CHECK = 10
BASE_APPEND = ("console=ttyS0,115200 earlyprintk=serial,ttyS0,115200 panic=-1 "
               "nokaslr printk.time=1 rdinit=/init loglevel=7 no_hash_pointers "
               f"sysctl.kernel.hung_task_timeout_secs={HUNG_TASK_TIMEOUT} "
               f"sysctl.kernel.hung_task_check_interval_secs={HUNG_TASK_CHECK}")


def command_line(req: BootRequest, accel: str) -> list[str]:
    """The full QEMU command line for a boot."""
    cmd = [
        qemu_binary(),
        "-accel", accel,
        "-machine", MACHINE,
        "-cpu", cpu_model(accel),
        "-m", str(req.memory_mb),
        "-smp", str(req.smp),
        "-nodefaults", "-no-user-config",
        "-display", "none",
        "-monitor", "none",
        "-no-reboot",
        "-nic", "none",
        "-serial", f"file:{req.console}",
        "-serial", f"file:{req.data_log}" if req.data_log else "null",
        # 8 USB 2 and 8 USB 3 ports: up to 8 usb-redir devices each on a
        # root port of its own speed (the default 4 + 4 makes QEMU add a
        # full-speed hub for the fifth, behind which high and super speed
        # devices cannot work)
        "-device", "qemu-xhci,id=xhci,p2=8,p3=8",
        "-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04",
        "-kernel", str(req.kernel),
        "-initrd", str(req.initrd),
        "-append", (BASE_APPEND + " " + req.append).strip(),
    ]
    return cmd + list(req.extra_args) + list(req.qemu_opts)


def classify(watch: ConsoleWatch, qemu_exit: int | None, stopped_for: str | None) -> tuple[str, int | None]:
    """Outcome of a boot from what was seen (pure; tested on fixtures)."""
    if stopped_for in ("timeout", "silent", "stopped"):
        if watch.panicked:
            return "panic", None
        return stopped_for, None
    if watch.panicked:
        return "panic", None
    if watch.ended:
        status = watch.end_status
        if qemu_exit is not None and qemu_exit & 1 and qemu_exit > 1:
            status = qemu_exit >> 1
        return ("ok" if status == 0 else "guest-error"), status
    if qemu_exit is not None and qemu_exit != 0 and watch.lines == 0:
        return "qemu-error", None
    return "no-marker", None


KVM_GRACE = 10.0   # a KVM guest that prints nothing this long: KVM is broken here


def boot(req: BootRequest, *, on_output=None, poll: float = 0.05,
         on_retry=None, stop_when=None) -> BootResult:
    """Boot and watch until the end marker, a panic, silence or the time limit.

    With --accel auto, a KVM boot that prints nothing within KVM_GRACE
    seconds is stopped, the host is remembered as KVM-broken, and the boot
    runs again under TCG.  Devices behind the extra arguments may have
    been used up by the first QEMU (a usb-redir peer accepts one
    connection): ``on_retry()``, when given, is called before the second
    boot and returns the extra arguments to use instead.

    ``stop_when()``, when given, is asked at every poll; a reason it returns
    stops the guest at once (outcome "stopped"): a device the guest needs
    died, so waiting for the rest of the run would only waste time.
    """
    req.console.parent.mkdir(parents=True, exist_ok=True)
    folder = paths.sub("qemu")
    accel, why = choose_accel(req.accel, folder)
    res = _boot_once(req, accel, on_output, poll, kvm_grace=KVM_GRACE if req.accel == "auto" else None,
                     stop_when=stop_when)
    note = kvm_failure(req, res)
    if note:
        record_kvm_broken(folder, note)
        if on_retry is not None:
            req = replace(req, extra_args=list(on_retry()))
        res = _boot_once(req, "tcg", on_output, poll, kvm_grace=None, stop_when=stop_when)
        res.accel_note = note + "; fell back to TCG"
    else:
        res.accel_note = why
    return res


def kvm_failure(req: BootRequest, res: BootResult) -> str | None:
    """Why this boot says KVM is unusable here, or None (pure).

    Under --accel auto: a kernel that printed nothing in KVM_GRACE seconds,
    or a QEMU that died under KVM before the guest printed anything (seen:
    QEMU's assertion in kvm_buf_set_msrs on a host whose KVM refuses an
    MSR of `-cpu max`)."""
    if req.accel != "auto" or res.accel != "kvm":
        return None
    if res.outcome == "kvm-silent":
        return f"a kernel printed nothing in {KVM_GRACE:.0f}s under KVM"
    if res.outcome == "qemu-error" and res.watch.lines == 0:
        tail = (res.stderr or "").strip().splitlines()
        return f"QEMU exited {res.qemu_exit} under KVM before the guest printed anything" + \
            (f" ({tail[-1][:200]})" if tail else "")
    return None


def _boot_once(req: BootRequest, accel: str, on_output, poll: float,
               kvm_grace: float | None, stop_when=None) -> BootResult:
    cmd = command_line(req, accel)
    req.console.write_bytes(b"")
    stderr_path = req.console.with_name(req.console.stem + ".qemu-stderr.log")
    watch = ConsoleWatch()
    t0 = time.monotonic()
    watch.last_output = t0
    stopped_for = None
    stop_reason = ""
    with open(stderr_path, "wb") as errf:
        p = proc.spawn(cmd, stdin=subprocess.DEVNULL, stdout=errf, stderr=errf)
        try:
            with open(req.console, "rb") as con:
                panic_at = end_at = None
                while True:
                    exited = p.poll() is not None
                    data = con.read()
                    now = time.monotonic()
                    if data:
                        text = data.decode("utf-8", errors="replace")
                        watch.feed(text, now)
                        if on_output:
                            on_output(text)
                    if exited:
                        break
                    if watch.panicked and panic_at is None:
                        panic_at = now
                    if watch.ended and end_at is None:
                        end_at = now
                    # a panicking kernel reboots by itself; give it time to print
                    if panic_at is not None and now - panic_at > 3:
                        break
                    if end_at is not None and now - end_at > 10:
                        break       # the guest said it ended but QEMU lingers
                    if kvm_grace and accel == "kvm" and watch.lines == 0 and not watch._partial \
                            and now - t0 > kvm_grace:
                        stopped_for = "kvm-silent"
                        break
                    if now - t0 > req.timeout:
                        stopped_for = "timeout"
                        break
                    if now - watch.last_output > req.silence:
                        stopped_for = "silent"
                        break
                    stop_reason = stop_when() if stop_when else ""
                    if stop_reason:
                        stopped_for = "stopped"
                        break
                    if not data:
                        time.sleep(poll)
                code = proc.stop(p, grace=2) if p.poll() is None else p.returncode
                rest = con.read()
                if rest:
                    watch.feed(rest.decode("utf-8", errors="replace"), time.monotonic())
                watch.finish()
        finally:
            if p.poll() is None:
                proc.stop(p)
    wall = time.monotonic() - t0
    if stopped_for == "kvm-silent":
        return BootResult("kvm-silent", accel, wall, code, None, watch, req.console, cmd)
    outcome, status = classify(watch, code if stopped_for is None else None, stopped_for)
    return BootResult(outcome, accel, wall, code, status, watch, req.console, cmd,
                      stderr_path.read_text(errors="replace"), stop_reason=stop_reason)
