"""A build copy of a user's checkout in the cache, never writing to the checkout.

The mirror, ``<cache>/work/checkout-<hash of the checkout's real path>/``,
holds hard links of the checkout's tracked files (``git ls-files``; copies
when the cache is on another filesystem); patches are applied there by GNU
patch, which writes patched files anew and so breaks their links.  Its O=
folder ``_build/`` stays between builds, so each build is incremental:
untouched files keep the checkout's mtimes through the links, and a file
we own (patched, created by a patch, or copied) keeps the mtime it had at
the last build when its content is the same, so a patched header does not
rebuild everything that includes it every time.
``<cache>/work/checkout-<hash>.mirror`` records those files.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from . import series

MIRROR_FORMAT = 1


def mirror_root(checkout: Path) -> Path:
    h = hashlib.sha256(os.fsencode(os.path.realpath(checkout))).hexdigest()[:16]
    return paths.cache_dir() / "work" / f"checkout-{h}"


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class SyncStats:
    files: int = 0
    linked: int = 0        # (re)linked: new or changed in the checkout
    copied: int = 0        # copies: ours (patched) or across filesystems
    removed: int = 0       # no longer tracked
    kept: int = 0          # our files whose content did not change: old mtime back
    changed: int = 0       # our files whose content changed: new mtime
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


class Mirror:
    """A build copy of a checkout's work tree, never writing to the checkout.

    Invariants: a mirror file is either a hard link of the checkout's file
    (same inode; never written, chmod'ed or utime'd here), or *ours*: a
    file with one link (st_nlink == 1) that we wrote.  Ours are the files
    a patch touched, and once ours a path stays ours (rewritten from the
    checkout at every sync) so that its mtime can always be managed: the
    state file records each one's sha256 and mtime, and a file whose
    content is the same as at the last sync gets that mtime back.
    """

    RESERVED = ("_build",)       # top-level entries that are not the checkout's

    def __init__(self, checkout: Path, root: Path | None = None):
        self.checkout = Path(checkout)
        self.root = root or mirror_root(checkout)
        self.state_file = self.root.parent / f"{self.root.name}.mirror"
        self.fresh = False           # no usable state: _build may not match the tree
        self.state = self._load()
        self.copy_mode = False
        self.touched: set[str] = set()
        self.forced: set[str] = set()

    def _load(self) -> dict:
        try:
            st = json.loads(self.state_file.read_text())
            if st.get("format") == MIRROR_FORMAT and st.get("checkout") == str(self.checkout):
                return st
        except (OSError, ValueError):
            pass
        self.fresh = True
        return {"format": MIRROR_FORMAT, "checkout": str(self.checkout), "owned": {},
                "synced_at": 0}

    def save(self) -> None:
        tmp = self.state_file.with_name(self.state_file.name + f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(self.state, indent=0, sort_keys=True) + "\n")
        tmp.rename(self.state_file)

    # -- sync ---------------------------------------------------------------
    def sync(self, tracked: list[str]) -> SyncStats:
        """Make the mirror hold exactly the checkout's tracked work-tree files.

        Also undoes whatever patches did since the last sync: a patched file
        is not the checkout's inode (relinked) or is ours (rewritten), and a
        file a patch created is not tracked (removed).
        """
        t0 = time.monotonic()
        stats = SyncStats(files=len(tracked))
        self.root.mkdir(parents=True, exist_ok=True)
        undo = self.touched          # patched since the last sync (a series that failed)
        self.touched, self.forced = set(), set()
        wanted = set(tracked)
        stats.removed = self._remove_untracked(wanted)
        owned = self.state["owned"]
        synced_at = int(self.state.get("synced_at", 0))
        made_dirs: set[str] = set()
        for rel in tracked:
            src = self.checkout / rel
            dst = self.root / rel
            try:
                s = os.lstat(src)
            except FileNotFoundError:        # deleted in the work tree, still in the index
                self._unlink(dst)
                continue
            parent = os.path.dirname(rel)
            if parent not in made_dirs:
                self._ensure_dir(parent)
                made_dirs.add(parent)
            try:
                d = os.lstat(dst)
                if stat.S_ISDIR(d.st_mode):      # a folder where the checkout has a file
                    shutil.rmtree(dst)
                    d = None
            except FileNotFoundError:
                d = None
            if stat.S_ISLNK(s.st_mode):
                target = os.readlink(src)
                if not (os.path.islink(dst) and os.readlink(dst) == target):
                    self._replace(dst, lambda tmp: os.symlink(target, tmp))
                    stats.linked += 1
                continue
            if not stat.S_ISREG(s.st_mode):    # a submodule's folder, a fifo: not ours to build
                continue
            if rel in owned:
                self._replace(dst, lambda tmp: self._copy(src, tmp, s))
                stats.copied += 1
                continue
            if d is not None and (d.st_dev, d.st_ino) == (s.st_dev, s.st_ino):
                continue
            if (d is not None and stat.S_ISREG(d.st_mode) and d.st_nlink == 1
                    and d.st_size == s.st_size and d.st_mtime_ns == s.st_mtime_ns):
                continue       # our copy (the cache is on another filesystem), up to date
            if d is not None and rel not in undo and s.st_mtime_ns <= synced_at:
                # a changed file that is not newer than our last build (cp -p, tar):
                # make would miss it through a link; ours, it gets a new mtime
                self._replace(dst, lambda tmp: self._copy(src, tmp, s))
                self.forced.add(rel)
                stats.copied += 1
                continue
            self._replace(dst, lambda tmp: self._link_or_copy(src, tmp, s))
            stats.linked += 1
        stats.seconds = time.monotonic() - t0
        return stats

    def _remove_untracked(self, wanted: set[str]) -> int:
        removed = 0
        emptied: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(self.root, topdown=True):
            rel_dir = os.path.relpath(dirpath, self.root)
            if rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d not in self.RESERVED]
                rel_dir = ""
            keep_dirs = []
            for d in dirnames:
                p = os.path.join(dirpath, d)
                if os.path.islink(p):          # a symlink to a folder: an entry like a file
                    if os.path.join(rel_dir, d) not in wanted:
                        os.unlink(p)
                        removed += 1
                        emptied.add(rel_dir)
                else:
                    keep_dirs.append(d)
            dirnames[:] = keep_dirs
            for f in filenames:
                rel = os.path.join(rel_dir, f)
                if rel not in wanted:
                    os.unlink(os.path.join(dirpath, f))
                    removed += 1
                    emptied.add(rel_dir)
        # folders that removals left empty, deepest first, and their parents
        for rel_dir in sorted(emptied, key=lambda r: -r.count("/")):
            while rel_dir:
                try:
                    os.rmdir(self.root / rel_dir)
                except OSError:
                    break
                rel_dir = os.path.dirname(rel_dir)
        return removed

    def _ensure_dir(self, rel_dir: str) -> None:
        """Create root/rel_dir, replacing files or symlinks in the way (a type change)."""
        try:
            os.makedirs(self.root / rel_dir, exist_ok=True)
            if not os.path.islink(self.root / rel_dir):
                return
        except (FileExistsError, NotADirectoryError):
            pass
        p = self.root
        for part in Path(rel_dir).parts:
            p = p / part
            if os.path.lexists(p) and (os.path.islink(p) or not os.path.isdir(p)):
                os.unlink(p)
            p.mkdir(exist_ok=True)

    @staticmethod
    def _unlink(p: Path) -> None:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(p)

    @staticmethod
    def _replace(dst: Path, make) -> None:
        """Create the new entry beside dst, then rename it over dst (never write through)."""
        tmp = dst.with_name(dst.name + ".dmaharness-tmp")
        Mirror._unlink(tmp)
        make(tmp)
        os.rename(tmp, dst)

    @staticmethod
    def _copy(src: Path, tmp: Path, s: os.stat_result) -> None:
        shutil.copyfile(src, tmp, follow_symlinks=False)
        os.chmod(tmp, s.st_mode & 0o7777 | 0o200)    # ours: writable, for patch

    def _link_or_copy(self, src: Path, tmp: Path, s: os.stat_result) -> None:
        if not self.copy_mode:
            try:
                os.link(src, tmp, follow_symlinks=False)
                return
            except OSError as e:
                if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                self.copy_mode = True
        shutil.copy2(src, tmp, follow_symlinks=False)   # keeps the mtime: quick check later

    # -- patches ------------------------------------------------------------
    def apply(self, patches) -> None:
        """Apply patches (GNU patch, no fuzz); InputError names the patch and hunk."""
        for p in patches:
            self.touched.update(p.touched_files())
            series.apply(p, self.root)

    # -- mtimes -------------------------------------------------------------
    def settle(self, stats: SyncStats | None = None) -> SyncStats:
        """Record our files; those whose content did not change get their old mtime.

        Call after the patches, before make.
        """
        stats = stats or SyncStats()
        old = self.state["owned"]
        new: dict[str, list] = {}
        for rel in sorted(set(old) | self.touched | self.forced):
            dst = self.root / rel
            try:
                d = os.lstat(dst)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(d.st_mode) or d.st_nlink != 1:
                continue        # a link of the checkout's file: never ours to touch
            try:
                s = os.lstat(self.checkout / rel)
                if (s.st_dev, s.st_ino) == (d.st_dev, d.st_ino):
                    continue
            except FileNotFoundError:
                pass
            sha = _sha(dst)
            prev = old.get(rel)
            if prev and prev[0] == sha:
                os.utime(dst, ns=(prev[1], prev[1]))
                new[rel] = prev
                stats.kept += 1
            else:
                new[rel] = [sha, d.st_mtime_ns]
                stats.changed += 1
        self.state["owned"] = new
        self.state["synced_at"] = time.time_ns()
        self.save()
        return stats


def config_inputs(rel: str) -> bool:
    """Whether a tracked file can change what tinyconfig + olddefconfig produce."""
    base = os.path.basename(rel)
    return (base.startswith("Kconfig") or rel.startswith("scripts/") or rel == "Makefile"
            or os.path.basename(os.path.dirname(rel)) == "configs")


def config_digest(mirror: Mirror, tracked: list[str], salt: str) -> str:
    """What the last configure of the mirror depended on.

    A file is identified by its inode, size and mtime when it is a link
    (git writes a changed file anew), by its content when it is ours;
    ``salt`` holds the rest (the fragments, the compiler).
    """
    h = hashlib.sha256(f"{salt}\n".encode())
    owned = mirror.state["owned"]
    for rel in tracked:
        if not config_inputs(rel):
            continue
        if rel in owned:
            h.update(f"{rel}\0{owned[rel][0]}\n".encode())
            continue
        try:
            d = os.lstat(mirror.root / rel)
        except FileNotFoundError:
            continue
        h.update(f"{rel}\0{d.st_ino}\0{d.st_size}\0{d.st_mtime_ns}\n".encode())
    for rel in sorted(owned):     # files created by patches (new Kconfig files)
        if config_inputs(rel):
            h.update(f"{rel}\0{owned[rel][0]}\n".encode())
    return h.hexdigest()
