"""Stack frames to file:line, from a built variant's vmlinux and modules.

A frame as the kernel prints it, ``uvc_status_start+0x4f/0x70 [uvcvideo]``,
names a function, an offset into it, the function's size and, for module
code, the module.  With an artifacts folder (``<artifacts>/vmlinux``,
``<artifacts>/modules/**/<module>.ko``, ``meta.json``) and binutils'
``addr2line``:

* built-in code: the function's address comes from vmlinux's symbol table
  (the kernels boot with ``nokaslr``, so it is the run-time address), and
  ``addr2line -e vmlinux -a -f -i ADDR...`` turns address + offset into
  file:line;
* module code: the ``.ko`` is a relocatable object whose functions sit at
  offsets inside their sections, so the function's section and value come
  from the ``.ko``'s symbol table and ``addr2line -e X.ko -j SECTION``
  reads section-relative addresses.

When several functions share a name (static functions), the one whose size
matches the printed size is used.  All frames needing one object file (and
section) go to a single addr2line process; results are cached in the
:class:`Symbolizer`, and :func:`symbolizer` keeps one per artifacts folder.

Return addresses: every call-trace frame but the faulting one is the
address *after* a call, which can belong to the next source line, so the
look-up uses offset - 1 for them (the printed offset is kept).  The
``RIP`` frame is exact; :meth:`Symbolizer.symbolize_report` knows which is
which.

Without debug info (``CONFIG_DEBUG_INFO_NONE=y``, the default of the
tinyconfig-based builds) the guilty frame and the module (driver) frames
of a report are still resolved: the function's source file is found from
the build folder's objects (harness.kernel.recompile.locate_function) and compiled
again, alone, with -g by kbuild's own command line, into the cache's
scratch folder (harness.kernel.recompile.compile_with_debug; reused afterwards).
GCC's code does not depend on -g, and a frame is only looked up when the
function's size in that object is the printed size.  At most 16 files
per artifacts folder are compiled; ``DMAHARNESS_NO_RECOMPILE=1`` turns it
off, and then frames come back as printed with ``file`` None and a note
is given once per artifacts folder.  A config fragment with
``CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y`` (``CONFIG_DEBUG_INFO_REDUCED``
is enough for file:line but loses inlined frames) makes it work.  File
names are shown relative to the kernel tree (meta.json's ``tree``).

A report's frames, guilty location and structure layout together come
from :mod:`harness.checks.enrich`.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional, Sequence

from . import recompile

DEBUG_CONFIG = "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y"

_FRAME_RE = re.compile(
    r"(?:^|[\s:])(?:\? )?(?:\[<[0-9a-fA-F]+>\] )?"
    r"([A-Za-z_$][\w.$]*)\+0x([0-9a-fA-F]+)/0x([0-9a-fA-F]+)"
    r"(?: \[([\w-]+)(?:\]| [^\]]*\]))?")


@dataclass(frozen=True)
class Location:
    function: str
    file: Optional[str]
    line: Optional[int]

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "??")
        return f"{self.function} {where}"


@dataclass(frozen=True)
class Frame:
    """One frame; file/line are None when it could not be symbolized."""

    text: str                       # as printed (stripped)
    function: Optional[str] = None
    offset: Optional[int] = None
    size: Optional[int] = None
    module: Optional[str] = None
    file: Optional[str] = None      # innermost location, tree-relative
    line: Optional[int] = None
    inlined: tuple[Location, ...] = ()   # innermost first, then the callers
                                         # it was inlined into (addr2line -i)

    @property
    def where(self) -> Optional[str]:
        if self.file is None:
            return None
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_json(self) -> dict:
        return {"text": self.text, "function": self.function, "offset": self.offset,
                "size": self.size, "module": self.module, "file": self.file,
                "line": self.line, "inlined": [[l.function, l.file, l.line] for l in self.inlined]}


def parse_frame(text: str) -> Frame:
    """``[? ][[<addr>] ]func+0xoff/0xsize[ [module]]`` -> Frame (unresolved)."""
    t = text.strip()
    m = _FRAME_RE.search(t)
    if m is None:
        return Frame(t)
    return Frame(t, m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4))


def format_frame(f: Frame) -> str:
    """``text file:line``, plus ``(inlined into g at file:line)`` notes."""
    if f.where is None:
        return f.text
    s = f"{f.text}  {f.where}"
    if len(f.inlined) > 1:
        inner = f.inlined[0]
        s += f" [{inner.function} inlined]" if inner.function != f.function else ""
        for loc in f.inlined[1:]:
            s += f"\n    (inlined into {loc})"
    return s


# --------------------------------------------------------------------------
# ELF: sections and function symbols, read with struct


@dataclass
class _Sym:
    value: int
    size: int
    section: str


@dataclass
class _Elf:
    path: Path
    kind: str                       # "exec", "dyn" or "rel"
    sections: dict[str, tuple[int, int, int, int]]   # name -> (addr, offset, size, type)
    syms: dict[str, list[_Sym]] = field(default_factory=dict)

    @property
    def has_debug_info(self) -> bool:
        return ".debug_info" in self.sections or ".zdebug_info" in self.sections


class ElfError(Exception):
    pass


def read_elf(path: Path, *, symbols: bool) -> _Elf:
    with open(path, "rb") as f:
        ident = f.read(64)
        if len(ident) < 52 or ident[:4] != b"\x7fELF":
            raise ElfError(f"{path} is not an ELF file")
        is64 = ident[4] == 2
        end = "<" if ident[5] == 1 else ">"
        if is64:
            e_type, = struct.unpack_from(end + "H", ident, 16)
            shoff, = struct.unpack_from(end + "Q", ident, 40)
            shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", ident, 58)
            shfmt = end + "IIQQQQIIQQ"
        else:
            e_type, = struct.unpack_from(end + "H", ident, 16)
            shoff, = struct.unpack_from(end + "I", ident, 32)
            shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", ident, 46)
            shfmt = end + "IIIIIIIIII"
        if shoff == 0:
            raise ElfError(f"{path}: no section headers")
        f.seek(shoff)
        first = struct.unpack_from(shfmt, f.read(shentsize))
        if shnum == 0:          # extended numbering: the count is in header 0
            shnum = first[5]
        if shstrndx == 0xFFFF:
            shstrndx = first[6]
        f.seek(shoff)
        raw = f.read(shentsize * shnum)
        if shnum == 0 or len(raw) < shentsize * shnum:
            raise ElfError(f"{path}: truncated section headers")
        # (name, type, flags, addr, offset, size, link, info, align, entsize)
        hdrs = [struct.unpack_from(shfmt, raw, i * shentsize) for i in range(shnum)]
        st = hdrs[shstrndx]
        f.seek(st[4])
        strtab = f.read(st[5])

        def name_at(tab: bytes, off: int) -> str:
            e = tab.find(b"\0", off)
            return tab[off:e if e >= 0 else None].decode("utf-8", "replace")

        names = [name_at(strtab, h[0]) for h in hdrs]
        sections = {}
        for n, h in zip(names, hdrs):
            sections.setdefault(n, (h[3], h[4], h[5], h[1]))
        kind = {2: "exec", 3: "dyn", 1: "rel"}.get(e_type, "other")
        elf = _Elf(path, kind, sections)
        if not symbols:
            return elf
        sym_i = next((i for i, h in enumerate(hdrs) if h[1] == 2), None)   # SHT_SYMTAB
        if sym_i is None:
            return elf
        sh = hdrs[sym_i]
        f.seek(sh[4])
        data = f.read(sh[5])
        link = hdrs[sh[6]]
        f.seek(link[4])
        names_tab = f.read(link[5])
    if is64:
        fmt, size = end + "IBBHQQ", 24
    else:
        fmt, size = end + "IIIBBH", 16
    syms: dict[str, list[_Sym]] = {}
    for ent in struct.iter_unpack(fmt, data[:len(data) - len(data) % size]):
        if is64:
            st_name, info, _, shndx, value, sz = ent
        else:
            st_name, value, sz, info, _, shndx = ent
        typ = info & 0xF
        if typ not in (0, 2) or shndx == 0 or shndx >= 0xFF00 or st_name == 0:
            continue   # functions (and untyped asm labels) in a real section
        h = hdrs[shndx]
        if not h[2] & 0x4:   # SHF_EXECINSTR
            continue
        nm = name_at(names_tab, st_name)
        syms.setdefault(nm, []).append(_Sym(value, sz, names[shndx]))
    elf.syms = syms
    return elf


def module_files(artifacts: Path) -> dict[str, Path]:
    """A variant's .ko files by module name (dashes as underscores, as the kernel names them)."""
    mods: dict[str, Path] = {}
    for dirpath, _, files in os.walk(Path(artifacts) / "modules"):
        for fn in files:
            if fn.endswith(".ko"):
                mods.setdefault(fn[:-3].replace("-", "_"), Path(dirpath) / fn)
    return mods


# --------------------------------------------------------------------------
# addr2line


def _parse_addr2line(out: str) -> dict[int, tuple[Location, ...]]:
    """Output of ``addr2line -a -f -i`` -> address -> locations."""
    res: dict[int, list[Location]] = {}
    cur: Optional[list[Location]] = None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        if ln.startswith("0x") and all(c in "0123456789abcdefABCDEF" for c in ln[2:]):
            cur = res.setdefault(int(ln, 16), [])
            i += 1
            continue
        if cur is None or i + 1 >= len(lines):
            i += 1
            continue
        func, where = ln, lines[i + 1].strip()
        i += 2
        where = where.split(" (discriminator", 1)[0]
        file, _, num = where.rpartition(":")
        lineno = int(num) if num.isdigit() and int(num) > 0 else None
        if not file or file.startswith("??"):
            file = None
        cur.append(Location(func, file, lineno))
    return {a: tuple(l for l in locs if l.file is not None or l.function != "??")
            for a, locs in res.items()}


class Symbolizer:
    """Symbolizes frames against one artifacts folder; caches everything."""

    def __init__(self, artifacts: Path | str, *, addr2line: str = "addr2line",
                 warn: Optional[Callable[[str], None]] = None, recompile: int = 16):
        self.artifacts = Path(artifacts)
        self.addr2line = addr2line
        self._warn = warn if warn is not None else (lambda m: print(m, file=sys.stderr))
        self._warned = False
        self._elves: dict[Path, Optional[_Elf]] = {}
        self._modules: Optional[dict[str, Path]] = None
        self._cache: dict[tuple[Path, str, int], tuple[Location, ...]] = {}
        self.tree = self._tree()
        self.reason = self._unavailable()
        # Without debug info: recompile the source file of a wanted frame
        # with -g (at most `recompile` files; kept in the cache's scratch)
        self._recompile = recompile if self._can_recompile() else 0
        if self.reason and "debug info" in self.reason and self.tree and not self._tree_built():
            self.reason += (f"; nor can its source files be recompiled with -g: its work tree "
                            f"{self.tree} is gone (`dmaharness cache prune`; `run --case` and "
                            "`bisect` build it again)")
        self._g_objs: dict[tuple[str, Optional[str]], Optional[Path]] = {}

    # -- setup

    def _tree(self) -> Optional[str]:
        tree = recompile.work_tree(self.artifacts)
        return str(tree) if tree else None

    def _unavailable(self) -> Optional[str]:
        config = self.artifacts / "config"
        try:
            if "\nCONFIG_DEBUG_INFO_NONE=y" in "\n" + config.read_text():
                return (f"{self.artifacts} was built without debug info "
                        f"(CONFIG_DEBUG_INFO_NONE=y); {DEBUG_CONFIG} in a config "
                        "fragment gives file:line")
        except OSError:
            pass
        vml = self.artifacts / "vmlinux"
        if not vml.is_file():
            return f"{vml} does not exist"
        try:
            if not read_elf(vml, symbols=False).has_debug_info:
                return (f"{vml} has no debug info; {DEBUG_CONFIG} in a config fragment "
                        "gives file:line")
        except (OSError, ElfError) as e:
            return f"cannot read {vml}: {e}"
        if shutil.which(self.addr2line) is None:
            return f"{self.addr2line} is not installed (binutils)"
        return None

    @property
    def available(self) -> bool:
        return self.reason is None

    def _can_recompile(self) -> bool:
        if self.reason is None or "debug info" not in self.reason or recompile_disabled():
            return False
        if shutil.which(self.addr2line) is None or not self.tree:
            return False
        return self._tree_built()

    def _tree_built(self) -> bool:
        """The variant's work tree, configured and built (`cache prune` removes it)."""
        return recompile.tree_built(self.artifacts)

    def _target_g(self, f: Frame, exact: bool) -> Optional[tuple[Path, str, int]]:
        """Like _target, from the frame's source file recompiled with -g.

        GCC's code does not depend on -g, and the function's size must be
        the printed one, so offsets into the function carry over.
        """
        if f.function is None or f.offset is None:
            return None
        key = (f.function.split(".")[0], f.module)
        if key not in self._g_objs:
            if self._recompile <= 0:
                return None
            self._recompile -= 1
            try:
                src = recompile.locate_function(self.artifacts, f.function, f.module)
                self._g_objs[key] = recompile.compile_with_debug(self.artifacts, src) if src else None
            except Exception:           # a view: never fail the caller over it
                self._g_objs[key] = None
        obj = self._g_objs[key]
        elf = self._elf(obj) if obj else None
        if elf is None:
            return None
        sym = next((s for s in elf.syms.get(f.function, []) if s.size == f.size), None)
        if sym is None:
            return None
        off = f.offset - 1 if not exact and f.offset > 0 else f.offset
        return obj, sym.section, sym.value + off

    def _note_once(self) -> None:
        if not self._warned and self.reason:
            self._warned = True
            self._warn(f"symbolize: frames left as printed: {self.reason}")

    def _elf(self, path: Path) -> Optional[_Elf]:
        if path not in self._elves:
            try:
                e = read_elf(path, symbols=True)
                self._elves[path] = e if e.has_debug_info else None
            except (OSError, ElfError):
                self._elves[path] = None
        return self._elves[path]

    def _module(self, name: str) -> Optional[Path]:
        if self._modules is None:
            self._modules = module_files(self.artifacts)
        return self._modules.get(name.replace("-", "_"))

    # -- look-ups

    def _target(self, f: Frame, exact: bool) -> Optional[tuple[Path, str, int]]:
        """(object, section for -j or "", address) of a parsed frame."""
        if f.function is None or f.offset is None:
            return None
        obj = self._module(f.module) if f.module else self.artifacts / "vmlinux"
        if obj is None:
            return None
        elf = self._elf(obj)
        if elf is None:
            return None
        cands = elf.syms.get(f.function, [])
        if not cands:
            return None
        sym = next((s for s in cands if s.size == f.size), cands[0])
        off = f.offset - 1 if not exact and f.offset > 0 else f.offset
        section = sym.section if elf.kind == "rel" else ""
        return obj, section, sym.value + off

    def _run(self, obj: Path, section: str, addrs: list[int]) -> None:
        for i in range(0, len(addrs), 500):
            chunk = addrs[i:i + 500]
            cmd = [self.addr2line, "-e", str(obj), "-a", "-f", "-i"]
            if section:
                cmd += ["-j", section]
            cmd += [hex(a) for a in chunk]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                got = _parse_addr2line(r.stdout) if r.returncode == 0 else {}
            except (OSError, subprocess.TimeoutExpired):
                got = {}
            for a in chunk:
                self._cache[(obj, section, a)] = got.get(a, ())

    def _relative(self, file: str) -> str:
        if not os.path.isabs(file) and self.tree:     # from an object compiled in _build
            file = os.path.join(self.tree, "_build", file)
        p = os.path.normpath(file)
        for root in filter(None, [self.tree and os.path.join(self.tree, "_build"), self.tree]):
            root = os.path.normpath(root)
            if p.startswith(root + os.sep):
                return p[len(root) + 1:]
        return p

    def symbolize(self, lines: Sequence[str], *, exact_first: bool = False,
                  want: Optional[set[str]] = None) -> list[Frame]:
        """Frames as printed -> Frames with file/line where possible.

        `exact_first`: the first line is a faulting address (a RIP), not a
        return address.  Without debug info only the functions in `want`
        are looked up, by recompiling their files with -g.
        """
        frames = [parse_frame(t) for t in lines]
        if not self.available and not self._recompile and not self._g_objs:
            self._note_once()
            return frames
        if self.available:
            targets = [self._target(f, exact_first and i == 0) for i, f in enumerate(frames)]
        else:
            targets = [self._target_g(f, exact_first and i == 0)
                       if f.function and f.function.split(".")[0] in (want or ()) else None
                       for i, f in enumerate(frames)]
        todo: dict[tuple[Path, str], list[int]] = {}
        for t in targets:
            if t is not None and t not in self._cache:
                todo.setdefault((t[0], t[1]), [])
                if t[2] not in todo[(t[0], t[1])]:
                    todo[(t[0], t[1])].append(t[2])
        for (obj, section), addrs in todo.items():
            self._run(obj, section, addrs)
        out = []
        for f, t in zip(frames, targets):
            locs = self._cache.get(t, ()) if t is not None else ()
            locs = tuple(Location(l.function, self._relative(l.file) if l.file else None, l.line)
                         for l in locs)
            if locs and locs[0].file is not None:
                f = replace(f, file=locs[0].file, line=locs[0].line, inlined=locs)
            out.append(f)
        return out

    def symbolize_report(self, report) -> list[Frame]:
        """A harness.reports.engine.Report's stack_lines, its RIP frame exact."""
        lines = list(report.stack_lines)
        exact = False
        if lines:
            first = parse_frame(lines[0])
            exact = first.function is not None and any(
                r.lstrip().startswith(("RIP:", "EIP:", "pc :", "PC is at"))
                and f"{first.function}+0x" in r for r in report.raw)
        # without debug info: the guilty frame and driver (module) frames
        want = {report.guilty_frame} if report.guilty_frame else set()
        want |= {f.function.split(".")[0] for f in map(parse_frame, lines)
                 if f.module and f.function}
        return self.symbolize(lines, exact_first=exact, want=want)

    def format_report(self, report) -> list[str]:
        """The report's stack as display lines (format_frame of each)."""
        return [format_frame(f) for f in self.symbolize_report(report)]


_SYMBOLIZERS: dict[str, Symbolizer] = {}


def recompile_disabled() -> bool:
    """DMAHARNESS_NO_RECOMPILE=1: never recompile files with -g for file:line."""
    return os.environ.get("DMAHARNESS_NO_RECOMPILE", "") not in ("", "0")


def symbolizer(artifacts: Path | str, **kw) -> Symbolizer:
    """The process-wide Symbolizer of an artifacts folder (one note, one cache)."""
    key = str(Path(artifacts).resolve())
    s = _SYMBOLIZERS.get(key)
    if s is None:
        s = _SYMBOLIZERS[key] = Symbolizer(artifacts, **kw)
    return s


def guilty_location(frames: Sequence[Frame], guilty: Optional[str]) -> Optional[str]:
    """file:line of the first symbolized frame of function `guilty`."""
    if not guilty:
        return None
    for f in frames:
        if f.function and f.where and (f.function == guilty
                                       or f.function.split(".")[0] == guilty):
            return f.where
    return None
