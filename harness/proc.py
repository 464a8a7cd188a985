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

from .errors import BuildError

_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except OSError:
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


def make(folder: Path, product: Path, what: str) -> Path:
    """``make -s -C folder`` for one of the project's C tools; ``product`` must exist after.

    A failure is a BuildError naming the tool, the folder and make's last
    words.
    """
    r = subprocess.run(["make", "-s", "-C", str(folder)], capture_output=True, text=True)
    if r.returncode != 0 or not product.is_file():
        raise BuildError(f"{what} failed to build (make -C {folder}): "
                         + (r.stderr or r.stdout).strip()[-800:], path=str(folder))
    return product
