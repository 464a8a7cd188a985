"""Child processes that never outlive the harness.

Every long-running child (make, QEMU, the fake camera) runs in its own
process group with PR_SET_PDEATHSIG, so that Ctrl-C, an exception or the
harness being killed takes the whole group down with it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

from .errors import BuildError, EnvError

_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    """In the child, after setsid(): die with the parent; keep the parent's CPU priority."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except OSError:
        pass
    keep_priority()


def keep_priority() -> None:
    """A new session is a new autogroup of the scheduler (sched(7)), whose
    nice value starts at 0 and weighs against other groups' whatever its
    processes' own nice values: a niced harness (`build --background`,
    `nice dmaharness ...`) would build at full priority.  Give the session's
    autogroup this process's nice value (raising it needs no privilege)."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice > 0:
        try:
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(nice))
        except OSError:         # no autogroups (a kernel without them, or switched off)
            pass


_live: set[subprocess.Popen] = set()
_live_lock = threading.Lock()


def spawn(cmd: Sequence[str], **kw) -> subprocess.Popen:
    """Popen in a new session (own process group), dying with its parent."""
    p = subprocess.Popen(list(cmd), start_new_session=True, preexec_fn=_child_setup, **kw)
    with _live_lock:
        _live.add(p)
    return p


def stop_all(grace: float = 2.0) -> None:
    """Stop every child spawned here that still runs (Ctrl-C with worker threads)."""
    with _live_lock:
        procs = list(_live)
    for p in procs:
        stop(p, grace=grace)


def stop(p: subprocess.Popen, *, sig: int = signal.SIGTERM, grace: float = 5.0) -> int | None:
    """Signal the child's whole group, wait `grace` seconds, then SIGKILL it."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    try:
        # the group may hold grandchildren even after the leader exited
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        return p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return None
    finally:
        with _live_lock:
            _live.discard(p)


def session_members(sid: int) -> list[int]:
    """Pids of the processes in session `sid` (from /proc), but not this one."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...; comm may hold spaces and parens
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(d.name))
    return out


def stop_session(p: subprocess.Popen, *, grace: float = 5.0) -> None:
    """stop() for a child that puts its own children in process groups of
    their own (GNU parallel does, one per job): signal the leader's group,
    then every process left in its session, SIGKILL after `grace`."""
    stop(p, grace=grace)
    left = session_members(p.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 5)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = session_members(p.pid)
        if not left:
            return


def make(folder: Path, product: Path, what: str) -> Path:
    """``make -s -C folder`` for one of the project's C tools; ``product`` must exist after.

    A failure is a BuildError naming the tool, the folder and make's last
    words; no make to run, an EnvError.
    """
    try:
        r = subprocess.run(["make", "-s", "-C", str(folder)], capture_output=True, text=True)
    except OSError as e:            # no make on PATH: the environment's (make deps)
        raise EnvError(f"{what} cannot be built: make cannot run ({e.strerror or e}; "
                       "make deps installs it)", path=str(folder)) from None
    if r.returncode != 0 or not product.is_file():
        raise BuildError(f"{what} failed to build (make -C {folder}): "
                         + (r.stderr or r.stdout).strip()[-800:], path=str(folder))
    return product
