"""Where things live: the repository, and the cache folder outside it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path
from typing import Iterator

from .errors import InputError

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


def cache_dir() -> Path:
    """The cache folder: $DMAHARNESS_CACHE, else ~/.cache/dmaharness."""
    env = os.environ.get("DMAHARNESS_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "dmaharness"
    base = base.expanduser().resolve()
    if base == REPO or REPO in base.parents:
        raise InputError(f"cache folder {base} is inside the repository; "
                         "set DMAHARNESS_CACHE to a folder outside it")
    return base


def sub(name: str) -> Path:
    """A subfolder of the cache folder, created on demand."""
    p = cache_dir() / name
    p.mkdir(parents=True, exist_ok=True)
    return p


@contextlib.contextmanager
def locked(name: str, *, shared: bool = False, wait_message: str | None = None) -> Iterator[None]:
    """Hold an flock on cache/locks/<name>.lock for the duration.

    Locks die with the process, so a crash or Ctrl-C never leaves one
    behind.  When the lock is busy, `wait_message` is printed once.
    """
    path = sub("locks") / f"{name}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
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
