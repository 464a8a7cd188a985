"""Seeding a variant's build folder from the nearest one already built
(harness.kernel.kbuild): which one, and how its copy is made to look to
make as if it had been built in place, so that only what differs is
rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import paths


def freshen(path: Path) -> None:
    """Give a file a new inode and a new mtime (never touch a hard-linked one)."""
    data = path.read_bytes()
    mode = path.stat().st_mode
    tmp = path.with_name(path.name + ".dmaharness-tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    tmp.rename(path)


def relocate(build: Path, seed_tree: Path, tree: Path) -> int:
    """Point a copied build folder's tools/ records at their new place.

    Kbuild itself records relative paths (the build folder is a child of
    the tree), but tools/objtool is built with absolute ones; left as they
    are, objtool is rebuilt, and every object that depends on the objtool
    binary with it.  Rewrites the seed's path in tools/ .cmd and .d files,
    keeping their mtimes.  Returns how many files changed.
    """
    old, new = str(seed_tree).encode(), str(tree).encode()
    n = 0
    for dirpath, _, files in os.walk(build / "tools"):
        for f in files:
            if not (f.endswith(".cmd") or f.endswith(".d")):
                continue
            p = os.path.join(dirpath, f)
            data = open(p, "rb").read()
            if old in data:
                st = os.stat(p)
                with open(p, "wb") as fh:
                    fh.write(data.replace(old, new))
                os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
                n += 1
    return n


def align_timestamps(seed_tree: Path, tree: Path, variant) -> list[str]:
    """Make make's view of our tree match the seed's build folder.

    Every file a patch of either variant touched is compared with the
    seed's copy.  Same content: ours takes the seed's mtime (patch gave it
    a fresh one, which would rebuild everything that includes, say, a
    patched header).  Different content: ours gets a new inode and mtime
    now, so whatever depends on it is rebuilt.  Untouched files are hard
    links of the pristine tree in both, with the same mtime.  Returns the
    files that differ.
    """
    touched: set[str] = set()
    for p in variant.patches:
        touched.update(p.touched_files())
    state = json.loads((seed_tree.parent / f"{seed_tree.name}.json").read_text())
    for files in state.get("touched", []):
        touched.update(files)
    differ = []
    for rel in sorted(touched):
        a, b = seed_tree / rel, tree / rel
        if not b.is_file():
            if a.is_file():
                differ.append(rel)
            continue
        if a.is_file() and a.read_bytes() == b.read_bytes():
            st = a.stat()
            if b.stat().st_nlink == 1:        # patched here: our own inode
                os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns))
        else:
            differ.append(rel)
            freshen(b)
    return differ


def asked(frags) -> set[str]:
    """Every option the fragments ask for, best-effort ones too, as OPT=VALUE
    (a later fragment's value wins, as in merge_config.sh)."""
    out: dict[str, str] = {}
    for f in frags:
        out.update(f.options)
    return {f"{o}={v}" for o, v in out.items()}


def pick_seed(variant, deb_version: str, cc: str, key: str) -> tuple[Path, dict] | None:
    """The already-built work folder nearest to `variant` (a kbuild.Variant)
    of Debian source `deb_version`, built by compiler `cc`: the same
    fragments first, then the longest common patch prefix, then the fewest
    options asked differently."""
    work = paths.cache_dir() / "work"
    ours = variant.patch_ids()
    ours_f = {(f.name, f.digest()) for f in variant.fragments}
    ours_o = asked(variant.fragments)
    best = None
    for state_file in work.glob("*.json"):
        try:
            st = json.loads(state_file.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if (not isinstance(st, dict) or not paths.is_safe_name(st.get("key"))
                or not isinstance(st.get("patches", []), list)
                or not isinstance(st.get("touched", []), list)
                or not all(isinstance(t, list) for t in st.get("touched", []))):
            continue            # a corrupt state file: never a seed
        if (not st.get("built") or st.get("key") == key or st.get("version") != variant.version
                or st.get("deb_version") != deb_version or st.get("cc") != cc):
            continue
        tree = work / st["key"]
        if not (tree / "_build" / "vmlinux").is_file():
            continue
        theirs = st.get("patches", [])
        common = 0
        while common < min(len(ours), len(theirs)) and ours[common] == theirs[common]:
            common += 1
        distance = (len(ours) - common) + (len(theirs) - common)
        # then the fewest options asked differently: a kernel with a few
        # options more (a sweep's subsystems) recompiles less from its own
        # base than from another that has many more (the USB sweep's every
        # driver); a state of an older harness has fragments only
        theirs_o = st.get("options")
        if isinstance(theirs_o, list):
            near = -len(ours_o ^ {str(x) for x in theirs_o})
        else:
            theirs_f = {tuple(f) for f in st.get("fragments", []) if isinstance(f, list)}
            near = -1000 * len(ours_f ^ theirs_f)
        score = (st.get("fragments_digest") == variant.fragments_digest(), -distance, near)
        if best is None or score > best[0]:
            best = (score, tree, st)
    return (best[1], best[2]) if best else None
