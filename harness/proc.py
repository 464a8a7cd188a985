"""Child processes that never outlive the harness.

Every long-running child (make, QEMU, the fake camera) runs in its own
process group with PR_SET_PDEATHSIG, so that Ctrl-C, an exception or the
harness being killed takes the whole group down with it.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

from . import paths
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


def build_dir(folder: Path) -> Path:
    """Where ``make -C folder`` puts what it builds: ``folder/build`` in a
    checkout one may write (each C tool's Makefile default), else a folder
    of the cache, one per copy of dmaharness (an installed copy under
    /usr is read-only for its users; its sources are never written)."""
    own = folder / "build"
    if os.access(folder, os.W_OK | os.X_OK) and (
            not os.path.lexists(own) or os.access(own, os.W_OK | os.X_OK)):
        return own
    try:
        rel = folder.resolve().relative_to(paths.REPO)
    except ValueError:
        rel = Path(folder.name)
    copy = hashlib.sha256(str(paths.REPO).encode()).hexdigest()[:12]
    return paths.sub("tools") / copy / rel / "build"


def make(folder: Path, product: Path, what: str) -> Path:
    """``make -s -C folder`` for one of the project's C tools; ``product``
    (a file under ``folder/build``) must exist after.  Its path is returned:
    under build_dir(folder), the cache's when the folder is not writable
    (the Makefiles take BUILD=DIR).

    A failure is a BuildError naming the tool, the folder and make's last
    words; no make to run, an EnvError.
    """
    out = build_dir(folder)
    cmd = ["make", "-s", "-C", str(folder)]
    if out != folder / "build":
        product = out / product.relative_to(folder / "build")
        cmd.append(f"BUILD={out}")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:            # no make on PATH: the environment's (make deps)
        raise EnvError(f"{what} cannot be built: make cannot run ({e.strerror or e}; "
                       "make deps installs it)", path=str(folder)) from None
    if r.returncode != 0 or not product.is_file():
        raise BuildError(f"{what} failed to build (make -C {folder}"
                         + (f" BUILD={out}" if out != folder / "build" else "") + "): "
                         + (r.stderr or r.stdout).strip()[-800:], path=str(folder))
    return product
