"""One driver source file compiled with ``-g`` by another architecture's compiler.

A DMA buffer's place in its structure moves with the architecture: on
32-bit arm, mips and powerpc a pointer and a long are 4 bytes, so every
member after one moves, and a buffer that shares a cache line on x86_64
may own its lines on arm, or the reverse.  The layout that decides it is
the one that architecture's compiler gives (harness.reports.archlayout
reads it with pahole); this module produces the object:

1. **A build folder per tree, architecture and configuration**
   (``<cache>/scratch/cross/<tree>/<arch>-<config>/``): ``make -C TREE
   O=FOLDER ARCH=... CROSS_COMPILE=... allnoconfig`` with
   ``KCONFIG_ALLCONFIG`` holding, in this order, the base configuration
   (the x86_64 variant's own ``.config``, so that the same options that
   shape structures, lock debugging, media controller, are set on both
   sides; symbols the architecture lacks are ignored by kconfig), the
   architecture's own machine (``CROSSES``: an SMP ARMv7, a 32-bit
   MIPS32r2, a 44x PowerPC, ...) and the driver's Kconfig symbols
   (harness.kernel.kmodules) when the base does not set them, with their
   plain ``depends on`` symbols, or a symbol that selects a hidden one,
   when the first try leaves them unset.  Then ``make prepare`` only
   (generated headers, asm-offsets; no modules_prepare, no vmlinux): a few
   seconds and a few MB.  The source tree is never written (kbuild's
   ``O=`` keeps everything in the folder; a tree with a ``.config`` of its
   own is refused by kbuild).
2. **One object**: ``make ... KCFLAGS=-g -fno-eliminate-unused-debug-types
   drivers/.../file.o`` in that folder.

:func:`result_key` names what decides the layout (the tree, the
architecture and compiler version, the configuration, the source file's
content and that of the headers of its folder): harness.reports.archlayout
keeps pahole's output under it, so a second look compiles nothing.

A missing compiler is a :class:`CrossError` naming the Debian package
(``make deps`` installs them: harness/deps.sh).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import paths
from ..progress import Progress, fmt_duration
from . import fragments, kmodules

# bump when what lands in a folder or a result changes
FORMAT = 1
KCFLAGS = "-g -fno-eliminate-unused-debug-types"


class CrossError(Exception):
    """No compiler for the architecture, or the tree would not configure or compile."""


@dataclass(frozen=True)
class Cross:
    """How to build for one of harness.reports.exposure.ARCHES."""

    arch: str                       # exposure's name: "arm", "powerpc32"
    karch: str                      # kbuild's ARCH=
    prefix: str                     # CROSS_COMPILE= ("" for the host's gcc)
    package: str                    # the Debian package with the compiler
    options: tuple[str, ...] = ()   # the machine, on top of the base configuration
    machine: str = ""               # the machine in words

    @property
    def gcc(self) -> str:
        return f"{self.prefix}gcc"


# Each machine is one of the architecture's that does non-coherent DMA
# (harness.reports.exposure.ARCHES says which); allnoconfig alone would give
# an ARMv5 without SMP (spinlocks of 0 bytes) or a RISC-V without an MMU.
CROSSES: tuple[Cross, ...] = (
    Cross("x86_64", "x86_64", "", "gcc", (), "the host's x86_64"),
    Cross("arm", "arm", "arm-linux-gnueabihf-", "gcc-arm-linux-gnueabihf",
          ("# CONFIG_ARCH_MULTI_V4 is not set", "# CONFIG_ARCH_MULTI_V5 is not set",
           "CONFIG_ARCH_MULTI_V7=y", "CONFIG_ARCH_VIRT=y", "CONFIG_SMP=y"),
          "an SMP ARMv7 (multi_v7, the virt machine)"),
    Cross("arm64", "arm64", "aarch64-linux-gnu-", "gcc-aarch64-linux-gnu",
          ("CONFIG_SMP=y",), "arm64 with 4K pages"),
    Cross("mips", "mips", "mips-linux-gnu-", "gcc-mips-linux-gnu",
          ("CONFIG_MIPS_MALTA=y", "CONFIG_CPU_MIPS32_R2=y", "CONFIG_32BIT=y",
           "CONFIG_SMP=y", "CONFIG_MIPS_MT_SMP=y"),
          "a 32-bit MIPS32r2 Malta"),
    Cross("powerpc32", "powerpc", "powerpc-linux-gnu-", "gcc-powerpc-linux-gnu",
          ("# CONFIG_PPC64 is not set", "CONFIG_PPC32=y", "CONFIG_44x=y"),
          "a 32-bit 44x (CONFIG_NOT_COHERENT_CACHE)"),
    Cross("riscv", "riscv", "riscv64-linux-gnu-", "gcc-riscv64-linux-gnu",
          ("CONFIG_MMU=y", "CONFIG_SMP=y", "CONFIG_64BIT=y"),
          "a 64-bit RISC-V with an MMU"),
)


def cross(arch: str) -> Cross:
    for c in CROSSES:
        if c.arch == arch:
            return c
    raise CrossError(f"no cross build known for {arch!r} (known: "
                     f"{', '.join(c.arch for c in CROSSES)})")


@functools.lru_cache(maxsize=None)
def _version_line(gcc: str) -> Optional[str]:
    try:
        r = subprocess.run([gcc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.splitlines()[0].strip() if r.returncode == 0 and r.stdout else None


def compiler(arch: str) -> str:
    """The first line of the architecture's gcc --version; CrossError naming
    the package when it is not installed."""
    c = cross(arch)
    if shutil.which(c.gcc) is None or _version_line(c.gcc) is None:
        raise CrossError(f"no {arch} compiler: {c.gcc} is not installed (Debian package "
                         f"{c.package}; `make deps` installs it)")
    return _version_line(c.gcc) or c.gcc


def compiler_name(version_line: str) -> str:
    """``arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0`` ->
    ``arm-linux-gnueabihf-gcc 12.2.0``."""
    words = version_line.split()
    return f"{words[0]} {words[-1]}" if len(words) > 1 else version_line


def available(arch: str) -> bool:
    try:
        compiler(arch)
        return True
    except CrossError:
        return False


@dataclass(frozen=True)
class Request:
    tree: Path                      # a linux source tree (never written)
    arch: str                       # exposure's name
    source: str                     # tree-relative .c file
    base_config: str = ""           # CONFIG_ lines (a .config) set before the machine's


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()


def tree_id(tree: Path) -> str:
    """The tree's folder name and a digest of its real path (a name for a folder)."""
    real = str(Path(tree).resolve())
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(real).name)[:60] or "tree"
    return f"{name}-{_digest(real)[:8]}"


def config_digest(req: Request) -> str:
    return _digest(str(FORMAT), req.base_config, "\n".join(cross(req.arch).options))[:12]


def folder(req: Request) -> Path:
    """The build folder of the request's tree, architecture and configuration."""
    return paths.sub("scratch") / "cross" / tree_id(req.tree) / f"{req.arch}-{config_digest(req)}"


def _source_digest(tree: Path, source: str) -> str:
    """The source file's content and that of the headers of its folder."""
    try:
        parts: list[bytes] = [(tree / source).read_bytes()]
    except OSError as e:
        raise CrossError(f"{tree / source}: cannot read it ({e.strerror or e})") from None
    d = (tree / source).parent
    for h in sorted(d.glob("*.h")):
        try:
            parts += [h.name.encode(), h.read_bytes()]
        except OSError:
            continue
    return _digest(*parts)


def result_key(req: Request) -> str:
    """What decides the layouts of the request's object, as a name."""
    return _digest(str(FORMAT), tree_id(req.tree), req.arch, compiler(req.arch),
                   config_digest(req), req.source, _source_digest(req.tree, req.source))[:24]


# --------------------------------------------------------------------------
# The build folder


def _make(req: Request, out: Path, *args: str, timeout: float = 1800) -> None:
    c = cross(req.arch)
    cmd = ["make", "-s", "-C", str(req.tree), f"O={out}", f"ARCH={c.karch}",
           f"CROSS_COMPILE={c.prefix}", f"KCFLAGS={KCFLAGS}", *args]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CrossError(f"make {' '.join(args)} for {req.arch} failed: {e}") from None
    if r.returncode != 0:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-4:])
        raise CrossError(f"make {' '.join(args)} for {req.arch} in {out} failed: {tail[-600:]}")


def _jobs() -> str:
    return f"-j{os.cpu_count() or 1}"


def driver_symbols(tree: Path, source: str) -> list[str]:
    """The Kconfig symbols (with CONFIG_) that build `source` (kmodules)."""
    out: list[str] = []
    for u in kmodules.units(tree, [source]):
        for s in (u.symbol, u.part_symbol):
            if s and s not in out:
                out.append(s if s.startswith("CONFIG_") else f"CONFIG_{s}")
    return out


def _is_set(config: dict[str, str], sym: str) -> bool:
    return config.get(sym) in ("y", "m")


def _plain_depends(entries) -> list[str]:
    """The symbols of ``depends on A && B`` lines and ``if`` blocks (no ``||``, no ``!``)."""
    out: list[str] = []
    for e in entries:
        for expr in e.depends:
            if "||" in expr or "!" in expr:
                continue
            for w in re.findall(r"\b[A-Z][A-Z0-9_]+\b", expr):
                if w not in out:
                    out.append(w)
    return out


def _common(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def _dependencies(tree: Path, symbols: list[str], config: Optional[dict[str, str]] = None,
                  rounds: int = 3) -> list[str]:
    """Symbols to set so that `symbols` can be: the plain ``depends on``
    symbols (and ``if`` blocks) not set in `config`; a hidden one through
    the prompted symbols of its own Kconfig file that select it (VIRTIO
    through VIRTIO_PCI and VIRTIO_MMIO: one of them fits the machine),
    else the one with the longest common prefix; then theirs, for a few
    rounds.  Cheap,
    not a solver: what stays unset is reported by the caller."""
    config = config or {}
    todo = [s[len("CONFIG_"):] for s in symbols]
    seen = set(todo)
    out: list[str] = []
    for _ in range(rounds):
        deps = [d for d in _plain_depends(e for es in fragments.find_entries(
            tree, set(todo)).values() for e in es)
            if d not in seen and not _is_set(config, f"CONFIG_{d}")]
        if not deps:
            break
        seen |= set(deps)
        found = fragments.find_entries(tree, set(deps))
        chosen: list[str] = []
        hidden: dict[str, list[str]] = {}
        for d in deps:
            es = found.get(d, [])
            if any(e.has_prompt for e in es):
                chosen.append(d)
            else:
                hidden[d] = sorted({b for e in es for b in e.selected_by})
        if hidden:
            sel = fragments.find_entries(tree, {b for bs in hidden.values() for b in bs})
            for d, bs in hidden.items():
                files = {e.file for e in found.get(d, [])}
                prompted = [b for b in bs if any(e.has_prompt for e in sel.get(b, []))]
                own = [b for b in prompted if any(e.file in files for e in sel[b])]
                if own:         # every transport of VIRTIO: the machine has one of them
                    chosen += own
                elif prompted:
                    chosen.append(max(prompted, key=lambda b: (_common(b, d), -len(b))))
        chosen = [c for c in chosen if c not in out]
        out += chosen
        seen |= set(chosen)
        todo = chosen
    return [f"CONFIG_{d}" for d in out]


def _configure(req: Request, out: Path, extra: list[str]) -> dict[str, str]:
    allconfig = out / "dmaharness.allconfig"
    lines = [req.base_config.rstrip("\n"), *cross(req.arch).options,
             *(f"{s}=y" for s in extra)]
    allconfig.write_text("\n".join(x for x in lines if x) + "\n")
    _make(req, out, f"KCONFIG_ALLCONFIG={allconfig}", "allnoconfig", timeout=600)
    return fragments.read_config((out / ".config").read_text(errors="replace"))


def prepare(req: Request, progress: Optional[Progress] = None) -> Path:
    """The request's build folder, configured with the driver's symbols and
    prepared (kept for the next file of the same tree and architecture)."""
    progress = progress or Progress(quiet=True)
    compiler(req.arch)
    if not (req.tree / "Makefile").is_file() or not (req.tree / "Kconfig").is_file():
        raise CrossError(f"{req.tree} is not a linux source tree")
    out = folder(req)
    with paths.locked(f"cross-{tree_id(req.tree)}-{req.arch}",
                      wait_message=f"waiting for another run preparing {out}"):
        out.mkdir(parents=True, exist_ok=True)
        mark = out / ".dmaharness-prepared"
        symbols = driver_symbols(req.tree, req.source)
        base = fragments.read_config(req.base_config)
        try:
            done = json.loads(mark.read_text())
        except (OSError, ValueError):
            done = {}
        have = fragments.read_config((out / ".config").read_text(errors="replace")) \
            if done else {}
        if done and all(_is_set(have, s) for s in symbols):
            return out
        extra = sorted(set(done.get("extra", [])) | {s for s in symbols if not _is_set(base, s)})
        t0 = time.monotonic()
        progress.note(f"[cross] {req.arch}: configuring {out} ({cross(req.arch).machine})")
        config = _configure(req, out, extra)
        missing = [s for s in symbols if not _is_set(config, s)]
        if missing:
            deps = [d for d in _dependencies(req.tree, missing, config) if d not in extra]
            if deps:
                extra = sorted(set(extra) | set(deps))
                config = _configure(req, out, extra)
                missing = [s for s in symbols if not _is_set(config, s)]
        if missing:
            mark.unlink(missing_ok=True)
            raise CrossError(f"{req.source}: {', '.join(missing)} stays unset on {req.arch} "
                             f"(its dependencies are not met there; see {out}/.config)")
        progress.note(f"[cross] {req.arch}: make prepare")
        _make(req, out, _jobs(), "prepare")
        mark.write_text(json.dumps({"format": FORMAT, "extra": extra,
                                    "compiler": compiler(req.arch)}) + "\n")
        progress.note(f"[cross] {req.arch}: prepared in {fmt_duration(time.monotonic() - t0)}")
    return out


def compile_debug(req: Request, progress: Optional[Progress] = None) -> Path:
    """The request's source compiled with -g in its build folder (the object's path)."""
    progress = progress or Progress(quiet=True)
    if not req.source.endswith(".c"):
        raise CrossError(f"{req.source}: not a C source file")
    out = prepare(req, progress)
    obj = req.source[:-2] + ".o"
    progress.note(f"[cross] {req.arch}: compiling {req.source} with -g")
    with paths.locked(f"cross-{tree_id(req.tree)}-{req.arch}"):
        _make(req, out, obj, timeout=900)
    path = out / obj
    if not path.is_file():
        raise CrossError(f"compiling {req.source} for {req.arch} left no {path}")
    return path
