"""`dmaharness cache`: what the cache folder holds, and pruning what can be rebuilt.

A variant's work tree (``work/<key>/``, about 1 GB with its ``_build/``
folder) is only needed to rebuild that variant incrementally or to seed
another variant's build; its artifacts (``artifacts/<key>/``, ~30 MB) are
what boots use, and stay.  ``prune`` removes the work trees of all but the
most recently used variants of each kernel version (kept: ``--keep`` per
version, so that the next variant still builds incrementally from a seed),
and optionally run folders older than some days.

Pruning takes each variant's build locks without waiting and leaves a
variant that another process is building or seeding from alone.  It
first removes the tree's state file (so no new build picks it as a seed),
then renames the tree out of the way and deletes it: an interruption
leaves at most a ``work/.pruning-*`` folder, removed by the next prune.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .. import files, paths
from ..errors import EnvError, InputError

PARTS = ("src", "work", "artifacts", "runs", "ccache", "initramfs", "scratch")


def disk_usage(path: Path, seen: set | None = None) -> int:
    """Bytes allocated under ``path``, each inode counted once (across calls sharing ``seen``)."""
    seen = set() if seen is None else seen
    total = 0
    for dirpath, dirs, files in os.walk(path):
        for name in files + dirs:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            ident = (st.st_dev, st.st_ino)
            if ident in seen:
                continue
            seen.add(ident)
            total += st.st_blocks * 512
    return total


@dataclass
class Tree:
    """A variant's work tree."""
    key: str
    path: Path
    version: str
    patches: int
    built: bool
    last_used: float          # seconds since the epoch
    size: int                 # its _build folder's bytes (the rest is mostly hard links)

    def to_json(self) -> dict:
        return {"key": self.key, "path": str(self.path), "version": self.version,
                "patches": self.patches, "built": self.built, "size_bytes": self.size,
                "last_used": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.last_used))}


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def trees() -> list[Tree]:
    """Variant work trees that have a state file, most recently used first.

    Last use: the newer of the state file (written by every build of the
    variant) and its artifacts' meta.json (touched by every cache hit).
    """
    root = paths.cache_dir() / "work"
    out = []
    for state_file in sorted(root.glob("*.json")) if root.is_dir() else []:
        try:            # the one file door: a FIFO or a device there is refused, not read
            st = files.read_json(state_file, "cache state file")
            key, version = st["key"], st["version"]
        except (InputError, KeyError, TypeError):
            continue
        if (not paths.is_safe_name(key) or key != state_file.stem or not isinstance(version, str)
                or not isinstance(st.get("patches", []), list)):
            continue            # not a state file a build wrote: never a path to remove
        tree = root / key
        if tree.is_symlink() or not tree.is_dir():
            continue
        used = max(_mtime(state_file), _mtime(paths.cache_dir() / "artifacts" / key / "meta.json"))
        out.append(Tree(key, tree, version, len(st.get("patches", [])), bool(st.get("built")), used,
                        disk_usage(tree / "_build")))
    return sorted(out, key=lambda t: -t.last_used)


def usage() -> dict[str, int]:
    """Bytes by part of the cache folder; hard links shared with src/ count under src/."""
    base = paths.cache_dir()
    seen: set = set()
    out = {}
    for part in PARTS:
        out[part] = disk_usage(base / part, seen) if (base / part).exists() else 0
    return out


@contextlib.contextmanager
def _try_locks(names: list[str]) -> Iterator[bool]:
    """Take these cache locks exclusively without waiting; yield whether all were free."""
    fds = []
    try:
        for name in names:
            lock = paths.sub("locks") / f"{name}.lock"
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise EnvError(f"cache lock {lock}: cannot open it ({e.strerror or e})",
                               path=str(lock)) from None
            fds.append(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True
    finally:
        for fd in fds:
            os.close(fd)


def _remove_tree(t: Tree, dry_run: bool = False) -> bool:
    """Remove a variant's work tree unless a build holds it; True when removed (or it would be)."""
    with _try_locks([f"variant-{t.key}", f"variant-{t.key}-build"]) as free:
        if not free or dry_run:
            return free
        (t.path.parent / f"{t.key}.json").unlink(missing_ok=True)
        doomed = paths.inside(t.path.parent / f".pruning-{t.key}-{os.getpid()}",
                              paths.cache_dir() / "work", "a pruned tree")
        paths.inside(t.path, paths.cache_dir() / "work", "a work tree").rename(doomed)
    shutil.rmtree(doomed, ignore_errors=True)
    return True


def plan(keep: int, runs_older_than_days: float | None, now: float | None = None) -> dict:
    """What prune would remove: work trees beyond ``keep`` per version, old run folders."""
    now = time.time() if now is None else now
    kept: dict[str, int] = {}
    doomed_trees = []
    for t in trees():
        if t.built and kept.get(t.version, 0) < keep:
            kept[t.version] = kept.get(t.version, 0) + 1
            continue
        doomed_trees.append(t)
    doomed_runs = []
    runs = paths.cache_dir() / "runs"
    if runs_older_than_days is not None and runs.is_dir():
        limit = now - runs_older_than_days * 86400
        doomed_runs = sorted(p for p in runs.iterdir()
                             if p.is_dir() and not p.is_symlink() and _mtime(p) < limit)
    leftovers = sorted((paths.cache_dir() / "work").glob(".pruning-*"))
    return {"trees": doomed_trees, "runs": doomed_runs, "leftovers": leftovers}


def prune(keep: int, runs_older_than_days: float | None, *, dry_run: bool = False,
          progress=None) -> dict:
    """Carry out plan(); returns what was removed, skipped (in use) and the bytes freed."""
    p = plan(keep, runs_older_than_days)
    removed, busy, freed = [], [], 0
    for t in p["trees"]:
        if _remove_tree(t, dry_run):
            removed.append(t)
            freed += t.size
            if progress:
                progress.note(f"[cache] {'would remove' if dry_run else 'removed'} {t.path} "
                              f"({t.size / 2**20:.0f} MiB)")
        else:
            busy.append(t)
            if progress:
                progress.note(f"[cache] {t.path} is in use by a build: kept")
    runs_freed, runs_removed, runs_busy = 0, [], []
    for r in p["runs"]:
        if paths.in_use(r):             # a run still going (or its process still alive)
            runs_busy.append(str(r))
            continue
        runs_freed += disk_usage(r)
        runs_removed.append(str(r))
        if not dry_run:
            shutil.rmtree(paths.inside(r, paths.cache_dir() / "runs", "a run folder"),
                          ignore_errors=True)
    for d in p["leftovers"]:
        if not dry_run:
            shutil.rmtree(d, ignore_errors=True)
    return {"removed": [t.to_json() for t in removed], "in_use": [t.to_json() for t in busy],
            "runs_removed": runs_removed, "runs_in_use": runs_busy, "leftovers_removed": [str(d) for d in p["leftovers"]],
            "freed_bytes": freed + runs_freed, "dry_run": dry_run}
