"""Where things live: the repository, and the cache folder outside it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
from pathlib import Path
from typing import Iterator

from .errors import EnvError, InputError

REPO = Path(__file__).resolve().parent.parent
PATCHES = REPO / "patches"
FRAGMENTS = REPO / "kconfig-fragments"
GUEST = REPO / "harness" / "guest"


def in_checkout(path: Path) -> Path:
    """A path as given, else relative to the checkout's root: a campaign's
    job names an in-tree case or series (patches/6.1/cases/NAME) so, and
    runs from the campaign folder, on any machine with the checkout."""
    p = Path(path)
    if not p.exists() and not p.is_absolute() and (REPO / p).exists():
        return REPO / p
    return p


# the one rule for a name that becomes part of a path: a case's or a variant's
# name, a key read back from a state file, a campaign's job id
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_safe_name(name: object) -> bool:
    """Letters, digits, '.', '_' and '-', starting with a letter or a digit, at
    most 128 characters: never '', '..', a '/' or a NUL, so never a path of its own."""
    return isinstance(name, str) and _SAFE_NAME.fullmatch(name) is not None


def safe_name(name: object, what: str, *, path: str | None = None) -> str:
    """``name`` when it may become part of a path; else InputError naming ``what``."""
    if not is_safe_name(name):
        raise InputError(f"{what}: {name!r} is not a name that can go into a path (letters, "
                         "digits, '.', '_' and '-', starting with a letter or a digit, at most "
                         "128 characters)", path=path)
    return name  # type: ignore[return-value]


def inside(path: Path, folder: Path, what: str = "path") -> Path:
    """``path``, proved to lie strictly inside ``folder`` (symbolic links
    resolved) before anything writes or removes it; else InputError."""
    p, f = Path(path), Path(folder)
    real_f = f.resolve()
    real_p = (p.parent.resolve() / p.name) if p.name not in ("", ".", "..") else p.resolve()
    if real_p == real_f or real_f not in real_p.parents:
        raise InputError(f"{what} {p} is not inside {f}", path=str(p))
    return p


def cache_dir() -> Path:
    """The cache folder: $DMAHARNESS_CACHE, else ~/.cache/dmaharness."""
    env = os.environ.get("DMAHARNESS_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "dmaharness"
    base = base.expanduser().resolve()
    if base == REPO or REPO in base.parents:
        raise InputError(f"cache folder {base} is inside the repository; "
                         "set DMAHARNESS_CACHE to a folder outside it")
    if os.path.lexists(base) and not base.is_dir():
        raise EnvError(f"cache folder {base} exists and is not a folder; set "
                       "DMAHARNESS_CACHE to a folder (or remove that file)", path=str(base))
    if base.is_dir() and not os.access(base, os.R_OK | os.X_OK):
        raise EnvError(f"cache folder {base} cannot be read (permissions); set "
                       "DMAHARNESS_CACHE to a folder of yours", path=str(base))
    return base


def sub(name: str) -> Path:
    """A subfolder of the cache folder, created on demand; EnvError naming
    the folder when it cannot be made or written (a read-only cache, a file
    in its place, a full disk)."""
    p = cache_dir() / name
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise EnvError(f"cache folder {p}: cannot make it ({e.strerror or e}); set "
                       "DMAHARNESS_CACHE to a folder you may write", path=str(p)) from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise EnvError(f"cache folder {p} is not writable; set DMAHARNESS_CACHE to a folder "
                       "you may write", path=str(p))
    return p


@contextlib.contextmanager
def locked(name: str, *, shared: bool = False, wait_message: str | None = None) -> Iterator[None]:
    """Hold an flock on cache/locks/<name>.lock for the duration.

    Locks die with the process, so a crash or Ctrl-C never leaves one
    behind.  When the lock is busy, `wait_message` is printed once.
    """
    path = sub("locks") / f"{name}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise EnvError(f"cache lock {path}: cannot open it ({e.strerror or e})",
                       path=str(path)) from None
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait_message:
                print(wait_message, file=sys.stderr, flush=True)
            fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # closing releases the lock


# --- run folders in use ----------------------------------------------------------

IN_USE = ".in-use"
_held: list[int] = []      # this process's shared locks on its run folders, until it exits


def mark_in_use(folder: Path) -> None:
    """Hold a shared lock on ``folder/.in-use`` for as long as this process
    lives: `cache prune` never removes a run folder a process still uses."""
    fd = os.open(Path(folder) / IN_USE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _held.append(fd)


def in_use(folder: Path) -> bool:
    """Whether a live process holds ``folder``'s in-use lock."""
    try:
        fd = os.open(Path(folder) / IN_USE, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
