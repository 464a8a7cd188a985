"""One source file of a built kernel tree, compiled again with ``-g``.

The variants are built without debug info (tinyconfig-based builds default
to ``CONFIG_DEBUG_INFO_NONE=y``).  File:line for a frame
(:mod:`harness.kernel.symbolize`) and the structure around a DMA buffer
(:mod:`harness.reports.layout`) both need DWARF, and both get it the same way: the
one source file that matters is compiled again, alone, with ``-g``.

* **Which file** (:func:`locate_function`): the one that defines a
  function.  ``nm`` over the module's objects listed in
  ``<build>/<dir>/<module>.mod`` (found through ``modules.order``), or over
  the thin archive ``vmlinux.a`` for built-in code; static functions GCC
  renamed (``f.isra.0``, ``f.constprop.0``) count.  A function inlined
  everywhere has no symbol: then the module's sources are searched for its
  definition as plain text.
* **How** (:func:`compile_with_debug`): kbuild's exact compile command,
  read from the object's ``.<obj>.cmd`` file, run from the build folder
  with ``-g -fno-eliminate-unused-debug-types`` added, the dependency
  output dropped and the object written under
  ``<cache>/scratch/layout/<artifacts key>/`` (the artifacts key names the
  build's content, so the object is reused).  Nothing in the build folder
  is written.  GCC's code does not depend on ``-g``, so offsets into a
  function carry over to the recompiled object.

The build folder is ``<tree>/_build``, ``<tree>`` being the work tree
named by the artifacts folder's ``meta.json``; ``dmaharness cache prune``
removes work trees, and then nothing can be recompiled
(:func:`tree_built` says so).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .. import paths

# compiler wrappers kbuild's command may start with; the compiler follows
_WRAPPERS = ("ccache", "distcc", "sccache")


class RecompileError(Exception):
    """The build folder, the kbuild command or the compiler failed."""


# --------------------------------------------------------------------------
# The artifacts folder's work tree


def meta(artifacts: Path | str) -> dict:
    """The artifacts folder's meta.json ({} when missing or unreadable)."""
    try:
        return json.loads((Path(artifacts) / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def work_tree(artifacts: Path | str) -> Optional[Path]:
    """The variant's work tree as meta.json names it (it may be gone)."""
    tree = meta(artifacts).get("tree")
    return Path(tree) if tree else None


def build_dir(artifacts: Path | str) -> Optional[Path]:
    """``<tree>/_build`` of a built variant, None when it is gone."""
    tree = work_tree(artifacts)
    if tree is None:
        return None
    b = tree / "_build"
    return b if b.is_dir() else None


def tree_built(artifacts: Path | str) -> bool:
    """The work tree is there, configured and built (`cache prune` removes it)."""
    tree = work_tree(artifacts)
    return tree is not None and (tree / "_build" / "Makefile").is_file()


# --------------------------------------------------------------------------
# kbuild's records: .cmd files, modules.order, .mod files


def cmd_line(build: Path, obj: str) -> Optional[str]:
    """kbuild's command line for `obj` (build-relative), from ``.<obj>.cmd``."""
    d, base = os.path.split(obj)
    try:
        text = (build / d / f".{base}.cmd").read_text(errors="replace")
    except OSError:
        return None
    for ln in text.splitlines():
        for prefix in (f"cmd_{obj} := ", f"savedcmd_{obj} := "):
            if ln.startswith(prefix):
                return ln[len(prefix):]
    return None


def tokens(cmd: str) -> list[str]:
    """The compile command of a kbuild command line (before the first ';')."""
    try:
        toks = shlex.split(cmd)
    except ValueError:
        return []
    if ";" in toks:
        toks = toks[:toks.index(";")]
    return toks


def source_of(build: Path, obj: str) -> Optional[str]:
    """Tree-relative source file of an object, from its .cmd file."""
    cmd = cmd_line(build, obj)
    if cmd is None:
        return None
    for t in reversed(tokens(cmd)):
        if t.endswith((".c", ".S")) and not t.startswith("-"):
            return os.path.normpath(t[3:] if t.startswith("../") else t)
    return None


def module_objects(build: Path, module: str) -> list[str]:
    """Objects of a module from modules.order and its .mod file."""
    want = module.replace("-", "_")
    try:
        order = (build / "modules.order").read_text().split()
    except OSError:
        order = []
    for entry in order:
        stem = os.path.basename(entry).rsplit(".", 1)[0]
        if stem.replace("-", "_") == want:
            mod = build / (entry.rsplit(".", 1)[0] + ".mod")
            try:
                return [o for o in mod.read_text().split() if o.endswith(".o")]
            except OSError:
                return []
    return []


# --------------------------------------------------------------------------
# Which file defines a function


def nm_defines(objects: Sequence[str], cwd: Path, func: str) -> Optional[str]:
    """The first object (as nm names it) defining text symbol `func`."""
    if not objects:
        return None
    try:
        r = subprocess.run(["nm", "-A", "--defined-only", *objects], cwd=cwd,
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    rx = re.compile(r"^(.*?):\s*[0-9a-fA-F]+ [tTW] (" + re.escape(func) + r")(\.\w+(\.\d+)?)*$")
    for ln in r.stdout.splitlines():
        m = rx.match(ln)
        if m:
            obj = m.group(1)
            return obj.split(":", 1)[1] if obj.startswith("vmlinux.a:") else obj
    return None


_DEF_RE = r"^[A-Za-z_][\w \t\*]*\b{}\s*\([^;]*$"


def grep_definition(tree: Path, files: Iterable[str], func: str) -> Optional[str]:
    """The first of `files` (tree-relative) whose text defines `func`."""
    rx = re.compile(_DEF_RE.format(re.escape(func)), re.M)
    for rel in files:
        try:
            text = (tree / rel).read_text(errors="replace")
        except OSError:
            continue
        if rx.search(text):
            return rel
    return None


def locate_function(artifacts_dir: Path | str, func: str,
                    module: Optional[str] = None) -> Optional[str]:
    """Tree-relative source file defining `func` in a built variant, or None.

    `module` (``uvcvideo``) limits the search to that module's objects;
    without it, the built-in objects (``vmlinux.a``) are searched.
    """
    build = build_dir(artifacts_dir)
    if build is None or not func:
        return None
    func = func.split(".", 1)[0]
    if module:
        objs = module_objects(build, module)
        obj = nm_defines(objs, build, func)
        if obj is None:
            srcs = [s for s in (source_of(build, o) for o in objs) if s]
            return grep_definition(build.parent, srcs, func)
    else:
        obj = nm_defines(["vmlinux.a"], build, func) if (build / "vmlinux.a").exists() else None
    return source_of(build, obj) if obj else None


# --------------------------------------------------------------------------
# Compiling it with -g


def scratch_root() -> Path:
    """Where recompiled objects go (the folder name predates this module)."""
    return paths.sub("scratch") / "layout"


def debug_command(toks: Sequence[str], out: str) -> list[str]:
    """kbuild's compile command (tokens) writing `out` with -g, without
    the dependency file and without other -g flavours."""
    toks = list(toks)
    while toks and toks[0] in _WRAPPERS:
        toks = toks[1:]
    new: list[str] = []
    skip = False
    for t in toks:
        if skip:
            skip = False
            continue
        if t.startswith(("-Wp,-MMD", "-Wp,-MD")) or t in ("-MD", "-MMD"):
            continue
        if t == "-MF":
            skip = True
            continue
        if t == "-o":
            new += ["-o", out]
            skip = True
            continue
        if t.startswith("-g") and t != "-g":
            continue
        new.append(t)
    return new + ["-g", "-fno-eliminate-unused-debug-types"]


def compile_with_debug(artifacts_dir: Path | str, source: str, *,
                       scratch: Optional[Path] = None, timeout: float = 600) -> Path:
    """Compile one tree-relative source file of a built variant with -g.

    Returns the object's path under `scratch` (default
    ``<cache>/scratch/layout/<artifacts key>/``), reused when present.
    Raises RecompileError when the build folder, the .cmd file or the
    compiler fails.
    """
    artifacts = Path(artifacts_dir)
    build = build_dir(artifacts)
    if build is None:
        raise RecompileError(f"{artifacts}: no build folder (meta.json's tree/_build is gone)")
    obj = os.path.splitext(source)[0] + ".o"
    cmd = cmd_line(build, obj)
    if cmd is None:
        raise RecompileError(f"no kbuild command for {obj} in {build}")
    root = Path(scratch) if scratch else scratch_root() / (meta(artifacts).get("key")
                                                           or artifacts.name)
    out = root / (obj[:-2] + ".g.o")
    if out.is_file() and out.stat().st_size > 0:
        return out
    toks = tokens(cmd)
    if "-o" not in toks:
        raise RecompileError(f"cannot read the compile command of {obj}")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".o", dir=out.parent)
    os.close(fd)
    try:
        r = subprocess.run(debug_command(toks, tmp), cwd=build, capture_output=True,
                           text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        os.unlink(tmp)
        raise RecompileError(f"compiling {source} with -g failed: {e}") from None
    if r.returncode != 0:
        os.unlink(tmp)
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        raise RecompileError(f"compiling {source} with -g failed: {tail}")
    os.replace(tmp, out)
    return out
