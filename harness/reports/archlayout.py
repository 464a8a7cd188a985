"""A DMA buffer's structure as each architecture's own compiler lays it out.

harness.reports.layout finds the structure and the member a detector
report's buffer is, from the x86_64 build's DWARF.  On 32-bit arm, mips
and powerpc a pointer and a long are 4 bytes, so the same member sits
elsewhere, next to other fields.  This module takes the same structure
and member path (:attr:`Layout.path`, by member name) in the structures
that the architecture's compiler gives for the same driver file
(harness.kernel.crossbuild compiles it, ``pahole -I`` reads it,
harness.reports.structs parses it), and says where the buffer is there:
:class:`ArchLayout`.  harness.reports.exposure judges each architecture
with its own layout when there is one, and says which compiler gave it.

pahole's output is kept under ``<cache>/scratch/cross/layouts/<key>.pahole``,
the key naming the tree, the architecture, its compiler, the
configuration and the driver file's content (crossbuild.result_key).

Which architectures: all of harness.kernel.crossbuild.CROSSES but x86_64,
or those ``$DMAHARNESS_ARCH_LAYOUTS`` lists (``arm,mips``; ``none``: no
cross layouts, every verdict on x86_64's layout).  An architecture
without its compiler gets a reason instead of a layout.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .. import paths
from ..kernel import crossbuild
from ..progress import Progress
from . import layout
from .structs import LayoutError, Member, Struct, _array_len, _expand, pahole_text, parse_pahole

ENV = "DMAHARNESS_ARCH_LAYOUTS"


def selected(env: Optional[Mapping[str, str]] = None) -> list[str]:
    """The architectures whose layouts are computed ($DMAHARNESS_ARCH_LAYOUTS)."""
    spec = (os.environ if env is None else env).get(ENV, "").strip()
    known = [c.arch for c in crossbuild.CROSSES if c.arch != "x86_64"]
    if spec in ("", "all"):
        return known
    if spec in ("none", "0", "no"):
        return []
    return [a for a in (x.strip() for x in spec.split(",")) if a in known]


@dataclass
class ArchLayout:
    """Where the buffer is in its structure on one architecture."""

    arch: str
    compiler: str               # "arm-linux-gnueabihf-gcc 12.2.0"
    struct: str
    size: int                   # the structure's size there
    offset: int                 # the buffer's offset in the object there
    length: int
    flexible: bool              # a flexible array ends it: more data follows
    buffer: str                 # "events[5] of events[8]", "status[16]"
    note: str = ""              # an assumption made in mapping it
    cand: Optional[layout.Candidate] = field(default=None, repr=False)
    structs: Mapping[str, Struct] = field(default_factory=dict, repr=False)

    @property
    def end(self) -> int:
        return self.offset + self.length

    def facts(self, f: layout.DmaFacts, line: int) -> layout.DmaFacts:
        """The report's facts as that architecture would give them, lines of
        `line` bytes starting at the object's start: the bytes of the
        object in the buffer's first and last lines, before and after it
        (past the structure's end only for a flexible array's data, which
        are counted to the line's end since their length is unknown)."""
        first = self.offset - self.offset % line
        last = -(-self.end // line) * line
        data_end = last if self.flexible else self.size
        before = self.offset - first
        after = max(0, min(last, data_end) - self.end)
        kmalloc = "kmalloc" in f.cache
        bucket = next((s for s in layout.KMALLOC_SIZES if self.size <= s), self.size)
        return layout.DmaFacts(f.rule, self.offset, self.length,
                               bucket if kmalloc else self.size,
                               _kmalloc_name(bucket) if kmalloc else f.cache, line,
                               before, after, f.direction, line_size_given=True)

    def neighbours(self, f: layout.DmaFacts) -> list[str]:
        """The members that share the buffer's lines under `f` (facts())."""
        if self.cand is None:
            return []
        lay = layout.build_layout(f, self.cand, self.structs)
        return [layout._short(r) for r in lay.sharing]

    def where(self) -> str:
        rng = f"{self.offset}" if self.length == 1 else f"{self.offset}..{self.end - 1}"
        return f"{self.buffer} at {rng} of {self.struct} ({self.size})"

    def to_json(self) -> dict:
        return {"arch": self.arch, "compiler": self.compiler, "struct": self.struct,
                "size": self.size, "offset": self.offset, "length": self.length,
                "flexible": self.flexible, "buffer": self.buffer, "note": self.note or None}


def _kmalloc_name(size: int) -> str:
    """The kernel's name of a kmalloc cache: kmalloc-192, kmalloc-2k."""
    return f"kmalloc-{size // 1024}k" if size >= 1024 and size % 1024 == 0 else f"kmalloc-{size}"


# --------------------------------------------------------------------------
# The same member in another architecture's structures

_ANON = re.compile(r"<(.+)#(\d+)>")


def _step(members: Sequence[Member], prev: Optional[Member], name: str) -> Optional[Member]:
    m = _ANON.fullmatch(name)
    if m:
        anon = [x for x in members if not x.name and x.type == m.group(1)]
        k = int(m.group(2))
        return anon[k] if k < len(anon) else None
    hit = next((x for x in members if x.name == name), None)
    if hit is not None:
        return hit
    me = re.fullmatch(r"(\w+)\[(\d+)\]", name)
    n = _array_len(prev.name) if prev is not None else None
    if me and prev is not None and n and prev.name.split("[")[0] == me.group(1) \
            and prev.size % n == 0:
        i, size = int(me.group(2)), prev.size // n
        if i < n:           # one record of an array of records
            return Member(prev.offset + i * size, size, prev.type, name, index=i)
    return None


def _whole(name: str, structs: Mapping[str, Struct]) -> tuple[Optional[Struct], bool, str]:
    """(the structure named as layout names it, whether data follows it, why not)."""
    if "+" in name:
        c_name, s_name = name.split("+", 1)
        c, s = structs.get(c_name), structs.get(s_name)
        if c is None or s is None:
            return None, False, f"struct {c_name if c is None else s_name} is not in the object"
        if not c.flexible:
            return None, False, f"struct {c_name} has no trailing flexible array there"
        return layout.container(c, s), s.flexible, ""
    s = structs.get(name)
    if s is None:
        return None, False, f"struct {name} is not in the object"
    return s, s.flexible, ""


def map_layout(lay: layout.Layout, structs: Mapping[str, Struct], arch: str,
               compiler: str) -> ArchLayout | str:
    """The buffer of `lay` (an x86_64 layout) in `structs` (another
    architecture's), or why it cannot be placed there."""
    if not lay.found or not lay.struct or not lay.path:
        return "no structure member holds the buffer on x86_64"
    whole, flexible, why = _whole(lay.struct, structs)
    if whole is None:
        return why
    members: Sequence[Member] = whole.members
    prev: Optional[Member] = None
    path: list[Member] = []
    for name in lay.path:
        m = _step(members, prev, name)
        if m is None:
            return f"no member {name} in struct {lay.struct} there"
        path.append(m)
        prev = m
        members = [] if m.index is not None else _expand(m, structs)
    inner = path[-1]
    f = lay.facts
    note = ""
    if lay.element is not None:
        n = _array_len(inner.name)
        if not n or inner.size % n:
            return f"{inner.name} is no array of records there"
        size = inner.size // n
        offset, length = inner.offset + lay.element * size, size
        buffer = f"{inner.name.split('[')[0]}[{lay.element}] of {inner.name}"
    elif lay.path_offset is not None and lay.buffer != lay.path[-1]:
        # part of a member: the same bytes of it (a byte array's do not move)
        offset, length = inner.offset + (f.offset - lay.path_offset), f.length
        buffer = f"{length} bytes of {inner.name}"
        note = "part of a member: the same bytes of it assumed"
    else:
        offset, length = inner.offset, inner.size
        buffer = inner.name
    if offset + length > whole.size and not flexible:
        return f"{buffer} runs past struct {lay.struct} there"
    cand = layout.Candidate(whole, "exact", path, True, 2, lay.element)
    return ArchLayout(arch, compiler, whole.name, whole.size, offset, length, flexible,
                      buffer, note, cand, structs)


# --------------------------------------------------------------------------
# Computing them

_MEMO: dict[str, dict[str, Struct]] = {}


def _store() -> Path:
    p = paths.sub("scratch") / "cross" / "layouts"
    p.mkdir(parents=True, exist_ok=True)
    return p


def arch_structs(req: crossbuild.Request, progress: Optional[Progress] = None
                 ) -> tuple[dict[str, Struct], str]:
    """(the structures of the request's object, its compiler as "name version"),
    from the cache when the same tree, architecture, compiler,
    configuration and file were read before."""
    comp = crossbuild.compiler_name(crossbuild.compiler(req.arch))
    key = crossbuild.result_key(req)
    if key not in _MEMO:
        cached = _store() / f"{key}.pahole"
        if cached.is_file():
            text = cached.read_text(errors="replace")
        else:
            text = pahole_text(crossbuild.compile_debug(req, progress))
            tmp = cached.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(text)
            os.replace(tmp, cached)
        _MEMO[key] = _tree_relative(parse_pahole(text), req.tree)
    return _MEMO[key], comp


def _tree_relative(structs: dict[str, Struct], tree: Path) -> dict[str, Struct]:
    """Declaration files made tree-relative: an O= folder outside the tree
    makes kbuild name the tree's files by absolute path."""
    prefixes = sorted({str(Path(tree)) + "/", str(Path(tree).resolve()) + "/"}, key=len,
                      reverse=True)
    for s in structs.values():
        for p in prefixes:
            if s.decl_file.startswith(p.lstrip("/")) or s.decl_file.startswith(p):
                s.decl_file = s.decl_file.split(p.lstrip("/"), 1)[1]
                break
    return structs


def for_layout(lay: layout.Layout, tree: Optional[Path], base_config: str = "", *,
               arches: Optional[Sequence[str]] = None,
               progress: Optional[Progress] = None) -> dict[str, ArchLayout | str]:
    """arch -> the buffer of `lay` in that architecture's layout, or why
    there is none; {} when `lay` names no structure (nothing moves)."""
    if not lay.found or not lay.source:
        return {}
    out: dict[str, ArchLayout | str] = {}
    for arch in (selected() if arches is None else arches):
        if tree is None or not (tree / lay.source).is_file():
            out[arch] = "the kernel tree is gone (dmaharness cache prune)"
            continue
        if not crossbuild.available(arch):
            out[arch] = f"{crossbuild.cross(arch).package} is not installed"
            continue
        req = crossbuild.Request(tree, arch, lay.source, base_config)
        try:
            structs, comp = arch_structs(req, progress)
        except (crossbuild.CrossError, LayoutError, OSError, subprocess.TimeoutExpired) as e:
            out[arch] = str(e)[:300]
            continue
        out[arch] = map_layout(lay, structs, arch, comp)
    return out
