"""A user's own Linux git checkout: which commit, which version, which files.

Read only: git runs without optional locks, so nothing in the checkout (not
even its index) is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import EnvError, InputError


def git(tree: Path, *args: str) -> bytes:
    """Run git in tree without taking optional locks (never writes the index)."""
    try:
        r = subprocess.run(["git", "--no-optional-locks", "-C", str(tree), *args],
                           capture_output=True)
    except OSError as e:
        raise EnvError(f"git is not usable ({e}); install git") from e
    if r.returncode != 0:
        raise InputError(f"`git {' '.join(args)}` failed in {tree}: "
                         f"{r.stderr.decode(errors='replace').strip()[-400:]}", path=str(tree))
    return r.stdout


@dataclass(frozen=True)
class Checkout:
    path: Path           # the work tree's top level, real path
    commit: str
    dirty: str           # '' when the tracked files match HEAD, else a digest of the diff
    version: str         # "6.1", from the top Makefile

    @property
    def short(self) -> str:
        return self.commit[:12] + ("+dirty" if self.dirty else "")


def read_version(makefile_text: str) -> str:
    """VERSION.PATCHLEVEL of a kernel top Makefile ('' when it is not one)."""
    vals = {}
    for line in makefile_text.splitlines()[:20]:
        m = re.match(r"^(VERSION|PATCHLEVEL)\s*=\s*(\d+)\s*$", line)
        if m:
            vals[m.group(1)] = m.group(2)
    if "VERSION" in vals and "PATCHLEVEL" in vals:
        return f"{vals['VERSION']}.{vals['PATCHLEVEL']}"
    return ""


def open_checkout(where: Path) -> Checkout:
    top = git(Path(where), "rev-parse", "--show-toplevel").decode().strip()
    if not top:
        raise InputError(f"{where} is not inside a git work tree (a bare repository?)")
    top_path = Path(os.path.realpath(top))
    commit = git(top_path, "rev-parse", "--verify", "HEAD").decode().strip()
    status = git(top_path, "status", "--porcelain", "-z", "--untracked-files=no")
    dirty = ""
    if status.strip(b"\0"):
        diff = git(top_path, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv")
        dirty = hashlib.sha256(diff).hexdigest()[:16]
    mk = top_path / "Makefile"
    version = read_version(mk.read_text(errors="replace")) if mk.is_file() else ""
    if not version:
        raise InputError(f"{top_path} is not a Linux kernel checkout: its Makefile has no "
                         "VERSION/PATCHLEVEL", path=str(mk))
    return Checkout(top_path, commit, dirty, version)


def tracked_files(tree: Path) -> list[str]:
    out = git(tree, "ls-files", "-z")
    return [os.fsdecode(p) for p in out.split(b"\0") if p]
