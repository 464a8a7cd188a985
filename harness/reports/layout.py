"""The structure around a DMA buffer: which fields share its cache lines.

A detector report names a slab object, the buffer's offset and size in it,
and the model's line size::

    DMA-API: xhci_hcd 0000:00:01.0: device driver maps a buffer that shares
    a cache line with other data of its object [object offset=977]
    [object size=2048] [cache=kmalloc-2k] [buffer size=16]
    [shared bytes before=81 after=31] [line size=128] [DMA_FROM_DEVICE]

``[object size=]`` is the cache's object size (``s->object_size``: 2048 for
any kmalloc-2k object), not the size the driver asked for.  This module
finds the C structure the object is, and prints the part of its layout
that lies in the lines the buffer touches, the way pahole prints it::

    struct uvc_device: 1144 bytes in a kmalloc-2k object (2048), 128-byte model lines
    status[16] at 977..992 shares line 896..1023 with flush_status (976), ...

How:

1. **Debug info, cheaply.**  The variants are built without debug info, so
   the source file that defines the report's guilty function is compiled
   again with ``-g`` by :mod:`harness.kernel.recompile` (kbuild's own command,
   the object under ``<cache>/scratch/layout/``; nothing in the build
   folder is written).
2. **Structures.**  ``pahole`` (dwarves) prints every structure of the
   object; without it, ``gdb`` gives the sizes (``sizeof``) of every struct
   ``info types`` lists, then ``ptype /o`` of those whose size fits.  Both
   outputs are parsed into :class:`Struct` trees.  pahole inlines only
   anonymous structs and unions (their offsets are absolute); a named
   struct member holding the buffer is expanded from its own definition,
   so the buffer is always shown at the deepest member that holds it.
3. **Choice** (:func:`choose`).  A structure is a candidate when one of its
   members, at any depth, holds ``[offset, offset + buffer size)`` (or the
   buffer spans whole members exactly) and its size fits the object:
   ``exact`` (the size is the cache's object size, or the size requested
   from kmalloc when the report gives it away: a kmalloc object's unused
   tail is poisoned by KASAN, so ``after`` stops at the requested end),
   ``bucket`` (a kmalloc cache: larger than the next smaller kmalloc size,
   no larger than this one) or ``flex`` (the struct ends in a flexible
   array; not when the requested size is known).  A plain buffer fits
   many structures: when several fit equally and none has a member that is
   exactly the buffer, no layout is guessed and the buffer is called a
   plain buffer (the structures that merely fit are not named: they are no
   evidence); when several have such a member and none is declared next to
   the code, the candidates are listed.
   One element of an array member (``evts[3]`` of ``evts[64]``) counts as
   exactly the buffer.  The best class wins; within it, a structure
   declared in the source file itself, then one declared in its directory
   (the driver's own, as pahole's ``-I`` tells), wins over one from a
   header elsewhere, which every object of the kernel includes; a
   remaining tie is reported as ambiguous with the candidates.  When no
   structure has a member that is exactly the buffer, the object may be a
   container with the driver's structure in its trailing flexible array
   (``shost_priv()``, ``netdev_priv()``): the source file's structures are
   tried there, shown as ``Scsi_Host+virtio_scsi``.
4. **Lines.**  Power-of-two kmalloc caches are naturally aligned, so lines
   start at multiples of the line size in object offsets.  For other caches
   the report's ``shared bytes before`` gives the first line's start
   (``offset - before``), else lines are assumed to start at offset 0 (said
   in the note).

Reports understood: the detector's sharing report, its overflow report
("maps memory past the end of its object") and its ownership report ("the
device owns this byte", also inside KASAN ``dma-owned`` reports, whose
``access offset`` is marked).

``python3 -m harness.reports.layoutcli --artifacts DIR --console LOG`` prints the
layout of each detector report of a console log.  File:line and the layout
of a report together come from :mod:`harness.checks.enrich`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Mapping, Optional, Sequence

from ..jsonout import JSON_VERSION
from ..kernel.recompile import RecompileError, build_dir, compile_with_debug, locate_function
from .frames import dma_site_frame
from .structs import (LayoutError, Member, Struct, _array_len, _element, _expand, _path_to,
                      _spans_members, _tree_path, structs_gdb, structs_pahole)

DEFAULT_LINE = 128

# kmalloc bucket sizes (x86-64, SLUB): the size a kmalloc-N object was
# asked for is larger than the next smaller bucket.
KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)

# --------------------------------------------------------------------------
# The report's numbers

_FIELD_RE = re.compile(r"\[([a-z][a-z ]*?)=([^\]]*)\]")
_SHARES_RE = re.compile(r"shares a (\d+)-byte cache line")


@dataclass(frozen=True)
class DmaFacts:
    """What a detector report says about the buffer and its object."""

    rule: str                  # "sharing", "overflow" or "owned"
    offset: int                # buffer's offset in the object
    length: int                # buffer (mapping) size
    object_size: int           # the cache's object size
    cache: str
    line_size: int
    before: Optional[int] = None
    after: Optional[int] = None
    direction: Optional[str] = None
    access_offset: Optional[int] = None    # "owned": the CPU access
    access_size: Optional[int] = None
    line_size_given: bool = True
    access: Optional[str] = None           # "owned": "read" or "write" (KASAN's line)

    @property
    def end(self) -> int:
        return self.offset + self.length

    def to_json(self) -> dict:
        return {"rule": self.rule, "offset": self.offset, "length": self.length,
                "object_size": self.object_size, "cache": self.cache,
                "line_size": self.line_size, "before": self.before, "after": self.after,
                "direction": self.direction, "access_offset": self.access_offset,
                "access_size": self.access_size, "access": self.access}


_ACCESS_RE = re.compile(r"(Read|Write) of size (\d+) at addr")


def parse_facts(text: str | Sequence[str]) -> Optional[DmaFacts]:
    """The first detector line of a report (message or raw lines) -> DmaFacts."""
    lines = [text] if isinstance(text, str) else list(text)
    access_size = access = None
    for ln in lines:
        m = _ACCESS_RE.search(ln)
        if m and access_size is None:
            access, access_size = m.group(1).lower(), int(m.group(2))
    for ln in lines:
        if "[object offset=" not in ln:
            continue
        f = {k.strip(): v.strip() for k, v in _FIELD_RE.findall(ln)}
        direction = next((d for d in re.findall(r"\[(DMA_[A-Z_]+)\]", ln)), None)

        def num(key: str) -> Optional[int]:
            v = f.get(key, "").split()[0] if f.get(key) else ""
            return int(v, 0) if re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)", v) else None

        off, osize = num("object offset"), num("object size")
        if off is None or osize is None:
            continue
        cache = f.get("cache", "?")
        line = num("line size")
        m = _SHARES_RE.search(ln)
        if line is None and m:
            line = int(m.group(1))
        given = line is not None
        line = line or DEFAULT_LINE
        if "past the end of its object" in ln:
            length = num("mapping size")
            if length is None:
                continue
            return DmaFacts("overflow", off, length, osize, cache, line,
                            direction=direction, line_size_given=given)
        length = num("buffer size")
        if length is None:
            continue
        if num("access offset") is not None:
            return DmaFacts("owned", off, length, osize, cache, line, direction=direction,
                            access_offset=num("access offset"), access_size=access_size,
                            line_size_given=given, access=access)
        before = after = None
        sb = f.get("shared bytes before")
        if sb is not None:
            mm = re.fullmatch(r"(\d+)\s+after=(\d+)", sb)
            if mm:
                before, after = int(mm.group(1)), int(mm.group(2))
        return DmaFacts("sharing", off, length, osize, cache, line, before, after,
                        direction, line_size_given=given)
    return None


def report_facts(report) -> Optional[DmaFacts]:
    """DmaFacts of a harness.reports.engine.Report (detector or KASAN dma-owned)."""
    lines = ([report.message] if report.message else []) + list(report.raw)
    return parse_facts(lines)


# --------------------------------------------------------------------------
# Which structure the buffer is in


@dataclass
class Candidate:
    struct: Struct
    fit: str                   # "exact", "bucket" or "flex"
    path: list[Member]         # outermost..innermost member holding the buffer
    exact_member: bool         # the innermost member (or one element of it) is the buffer
    local: int = 0             # declared in the source file (2), its directory (1)
    element: Optional[int] = None   # the buffer is this element of the innermost array

    @property
    def rank(self) -> tuple[int, int, int]:
        return ({"exact": 0, "bucket": 1, "flex": 2}[self.fit], 0 if self.exact_member else 1,
                -self.local)


def _local(s: Struct, source: Optional[str]) -> int:
    """2: declared in the source file itself, 1: in its directory, 0: elsewhere
    or unknown."""
    if not source or not s.decl_file:
        return 0
    src = _tree_path(source)
    if s.decl_file == src:
        return 2
    return 1 if os.path.dirname(s.decl_file) == os.path.dirname(src) else 0


def _pow2_kmalloc(cache: str) -> bool:
    return bool(re.search(r"kmalloc-", cache)) and not re.search(r"-(96|192)$", cache)


def requested_size(f: DmaFacts, phase: int = 0) -> Optional[int]:
    """The size asked from kmalloc, when the report's ``after`` shows it.

    KASAN poisons a kmalloc object past the requested size; the detector
    counts only unpoisoned bytes.  When ``after`` stops short of both the
    line's end and the object's end, the requested size is ``end + after``.
    """
    if f.after is None or "kmalloc" not in f.cache:
        return None
    L = f.line_size
    end = min(f.end, f.object_size)
    line_end = phase + -(-(end - phase) // L) * L
    stop = min(line_end, f.object_size)
    if end + f.after < stop:
        return end + f.after
    return None


def candidates(structs: Mapping[str, Struct], f: DmaFacts,
               source: Optional[str] = None) -> list[Candidate]:
    """Structures the object may be, best first (see the module docstring)."""
    start = f.offset
    end = f.end if f.rule != "overflow" else f.offset + 1
    req = requested_size(f, line_phase(f))
    kmalloc = "kmalloc" in f.cache
    lower = max((s for s in KMALLOC_SIZES if s < f.object_size), default=0)
    out = []
    for s in structs.values():
        if s.size <= 0 or s.size > f.object_size or end > s.size:
            continue
        if req is not None:          # kmalloc, and the report shows the requested size
            fit = "exact" if s.size == req else ""
        elif kmalloc:
            fit = "bucket" if lower < s.size else "flex" if s.flexible else ""
        elif s.size == f.object_size:
            fit = "exact"
        else:
            fit = "flex" if s.flexible else ""
        if not fit:
            continue
        path = _path_to(s.members, start, end, structs)
        if path is None:
            if not _spans_members(s.members, start, end):
                continue
            path = []
            exact = False
            element = None
        else:
            inner = path[-1]
            exact = inner.offset == start and inner.end == end
            element = None if exact else _element(inner, start, end)
            exact = exact or element is not None
        out.append(Candidate(s, fit, path, exact, _local(s, source), element))
    out.sort(key=lambda c: (c.rank, c.struct.name))
    return out


# flexible array members that hold a driver's private structure
# (shost_priv, netdev_priv, skcipher_request_ctx, hcd->hcd_priv, ...)
PRIVATE_AREAS = ("hostdata", "priv", "__ctx", "hcd_priv", "drv_priv", "private")


def _private_candidates(structs: Mapping[str, Struct], f: DmaFacts,
                        source: Optional[str], text: Optional[str] = None) -> list[Candidate]:
    """Objects made of a container that ends in a flexible array and the
    driver's own structure in that array (``shost_priv()``,
    ``netdev_priv()``): the driver's structures (declared in the source
    file's directory) placed at the flexible array's offset, when one of
    their members is exactly the buffer.  The structure of the result is
    named ``Container+Driver``; its private member holds the driver's.
    Containers are those whose flexible array is a private area
    (PRIVATE_AREAS) and, when the source's text is known, that it names
    (``struct Scsi_Host``): struct pid's numbers[] holds no driver's data."""
    end = f.end if f.rule != "overflow" else f.offset + 1
    own = [s for s in structs.values() if _local(s, source) and s.size > 0]
    if any(_local(s, source) == 2 for s in own):
        own = [s for s in own if _local(s, source) == 2]   # the file's own first
    out = []
    for c in structs.values():
        if not c.flexible or _local(c, source):
            continue
        flex = c.members[-1]
        if flex.name.split("[")[0] not in PRIVATE_AREAS or (
                text is not None and not re.search(rf"\bstruct\s+{re.escape(c.name)}\b", text)):
            continue
        at = flex.offset
        if f.offset < at or at + 1 > f.object_size:
            continue
        for s in own:
            if at + s.size > f.object_size or end > at + s.size:
                continue
            whole = container(c, s)
            path = _path_to(whole.members, f.offset, end, structs)
            if not path or len(path) < 2:
                continue
            inner = path[-1]
            exact = inner.offset == f.offset and inner.end == end
            element = None if exact else _element(inner, f.offset, end)
            if exact or element is not None:
                out.append(Candidate(whole, "flex", path, True, _local(s, source), element))
    out.sort(key=lambda c: c.struct.name)
    return out


def container(c: Struct, s: Struct) -> Struct:
    """``c+s``: the container `c` with the driver's structure `s` in its
    trailing flexible array (a private area), as one structure."""
    flex = c.members[-1]
    at = flex.offset
    priv = Member(at, s.size, f"{s.kind} {s.name}", flex.name.replace("[]", ""),
                  children=[m.shifted(at) for m in s.members])
    return Struct(c.kind, f"{c.name}+{s.name}", at + s.size,
                  list(c.members[:-1]) + [priv], s.decl_file)


def path_names(s: Struct, path: Sequence[Member], structs: Mapping[str, Struct]) -> list[str]:
    """The members of `path` (outermost first) by name, so that the same
    member can be found in the structure another compiler laid out
    (harness.reports.archlayout): an anonymous struct or union as
    ``<union#1>`` (the second anonymous union among its siblings), one
    element of an array of records as ``name[3]``."""
    out: list[str] = []
    siblings: Sequence[Member] = s.members
    for m in path:
        if m.name:
            out.append(m.name)
        else:
            anon = [x for x in siblings if not x.name and x.type == m.type]
            k = next((i for i, x in enumerate(anon) if x is m or (x.offset, x.size) ==
                      (m.offset, m.size)), 0)
            out.append(f"<{m.type}#{k}>")
        siblings = [m] if m.index is not None else _expand(m, structs)
    return out


def choose(structs: Mapping[str, Struct], f: DmaFacts, source: Optional[str] = None,
           text: Optional[str] = None) -> tuple[Optional[Candidate], list[Candidate]]:
    """(chosen candidate or None, every candidate of the best rank); `source`
    is the file the structures come from (its directory's own win ties)."""
    cands = candidates(structs, f, source)
    if not cands or not cands[0].exact_member:
        # a container's private area: struct Scsi_Host's hostdata[] holding
        # the driver's struct virtio_scsi, struct net_device's priv[] ...
        priv = _private_candidates(structs, f, source, text)
        if priv:
            return priv[0], priv
    if not cands:
        return None, []
    tied = [c for c in cands if c.rank[:2] == cands[0].rank[:2]]
    if len(tied) > 1 and not tied[0].exact_member:
        return None, tied        # a plain buffer fits many structures: no guess
    best = [c for c in tied if c.rank == cands[0].rank]     # the driver's own first
    c = best[0]
    if source and any(s.decl_file for s in structs.values()) and (
            (c.fit != "exact" and not (c.exact_member and c.local))
            or (not c.local and not c.exact_member)):
        # only a header's structure matches by a member (struct _ddebug's
        # modname is 8 bytes too), a member merely holds the buffer (1522
        # bytes of an 1784-byte array), or a header's structure of the
        # object's size spans it (compat_ipc64_perm for a SCSI command's
        # 12 bytes): a plain buffer, not a guess
        return None, tied
    return c, best


# --------------------------------------------------------------------------
# Lines


def line_phase(f: DmaFacts) -> int:
    """Object offset (mod line size) where model lines start."""
    L = f.line_size
    if _pow2_kmalloc(f.cache):
        return 0
    if f.before is not None and f.offset - f.before > 0:
        return (f.offset - f.before) % L
    return 0


def touched_lines(f: DmaFacts, limit: int) -> list[tuple[int, int]]:
    """[(first byte, last byte)] of each model line the buffer touches,
    clipped to [0, limit)."""
    L = f.line_size
    ph = line_phase(f)
    end = min(f.end, limit) if f.rule == "overflow" else f.end
    if f.rule == "owned" and f.access_offset is not None:
        lo = min(f.offset, f.access_offset)
        end = max(end, f.access_offset + (f.access_size or 1))
    else:
        lo = f.offset
    first = ph + ((lo - ph) // L) * L
    out = []
    a = first
    while a < end:
        out.append((max(a, 0), min(a + L, limit) - 1))
        a += L
    return [x for x in out if x[0] <= x[1]]


# --------------------------------------------------------------------------
# The view


@dataclass
class Row:
    offset: int
    size: int
    decl: str                  # "u8 status[16]", "(7 bytes hole)"
    marker: str                # "buffer", "shares line", "accessed", "hole", ""
    depth: int = 0             # nesting (members of the struct holding the buffer)
    name: str = ""
    element: bool = False      # elements of an array member ("evts[1..15]")

    def to_json(self) -> dict:
        return {"offset": self.offset, "size": self.size, "decl": self.decl,
                "name": self.name, "marker": self.marker, "depth": self.depth}


@dataclass
class Layout:
    """The structure around one detector report's buffer (or why not)."""

    facts: DmaFacts
    struct: Optional[str] = None
    kind: str = "struct"
    size: Optional[int] = None
    source: Optional[str] = None          # file compiled with -g (tree-relative)
    tool: Optional[str] = None            # "pahole" or "gdb"
    fit: Optional[str] = None
    lines: list[tuple[int, int]] = field(default_factory=list)
    rows: list[list[Row]] = field(default_factory=list)   # one list per line
    buffer: Optional[str] = None          # "status[16]"
    sharing: list[Row] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)  # when ambiguous
    note: Optional[str] = None            # why there is no layout, or caveats
    # on which real machines the sharing corrupts: harness.reports.exposure's
    # verdicts as JSON and its one-line summary, set by enrichment
    exposure: list[dict] = field(default_factory=list)
    exposure_summary: Optional[str] = None
    # the __dma_from_device_group_begin(GROUP) .. _end(GROUP) markers (7.x,
    # include/linux/dma-mapping.h) around the buffer's member: GROUP
    group: Optional[str] = None
    # the buffer's member by name, outermost first (path_names), and the
    # element of the innermost array that is the buffer
    path: list[str] = field(default_factory=list)
    element: Optional[int] = None
    path_offset: Optional[int] = None     # the innermost member's offset
    # per architecture, the same member in the layout that architecture's
    # compiler gives (harness.reports.archlayout.ArchLayout), or why there
    # is none (a str); set by enrichment, read by harness.reports.exposure
    arch_layouts: dict = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.struct is not None

    @property
    def plain(self) -> bool:
        """No structure has a member that is the buffer (the finder's "a plain
        buffer" notes), as opposed to no layout at all or an ambiguous one."""
        return not self.found and not self.candidates and "plain buffer" in (self.note or "")

    def summary(self) -> str:
        f = self.facts
        if not self.found:
            return f"no structure layout: {self.note or 'unknown'}"
        buf = self.buffer or f"buffer[{f.length}]"
        lines = ", ".join(f"{a}..{b}" for a, b in self.lines)
        word = "line" if len(self.lines) == 1 else "lines"
        rng = f"{f.offset}" if f.length == 1 else f"{f.offset}..{f.end - 1}"
        if not self.sharing:
            return f"{buf} at {rng} shares {word} {lines} with no other member"
        near = self.sharing
        if len(near) > 6:
            def gap(r: Row) -> int:
                return max(f.offset - (r.offset + r.size), r.offset - f.end, 0)
            near = sorted(sorted(near, key=gap)[:6], key=lambda r: r.offset)
        names = [_short(r) for r in near]
        if len(near) < len(self.sharing):
            names.append(f"and {len(self.sharing) - len(near)} more")
        return f"{buf} at {rng} shares {word} {lines} with " + ", ".join(names)

    def to_json(self) -> dict:
        return {"version": JSON_VERSION, "found": self.found, "struct": self.struct,
                "kind": self.kind, "size": self.size, "source": self.source,
                "tool": self.tool, "fit": self.fit, "buffer": self.buffer,
                "facts": self.facts.to_json(),
                "lines": [{"start": a, "end": b,
                           "members": [r.to_json() for r in rows]}
                          for (a, b), rows in zip(self.lines, self.rows)],
                "sharing": [r.to_json() for r in self.sharing],
                "candidates": list(self.candidates), "summary": self.summary(),
                "note": self.note, "exposure": list(self.exposure),
                "exposure_summary": self.exposure_summary, "group": self.group,
                "path": list(self.path), "element": self.element,
                "arch_layouts": {a: (v.to_json() if hasattr(v, "to_json") else
                                     {"arch": a, "unavailable": str(v)})
                                 for a, v in self.arch_layouts.items()}}

    def format_text(self, indent: str = "") -> str:
        f = self.facts
        expo = [f"exposure: {self.exposure_summary}"] if self.exposure_summary else []
        if not self.found:
            return "".join(f"{indent}{x}\n" for x in [self.summary()] + expo)
        head = (f"{self.kind} {self.struct}: {self.size} bytes in a {f.cache} object "
                f"({f.object_size}), {f.line_size}-byte model lines")
        if self.source:
            head += f"; from {self.source}" + (f" ({self.tool})" if self.tool else "")
        out = [head, self.summary()] + expo
        if self.candidates:
            out.append("ambiguous: also " + ", ".join(self.candidates))
        if self.note:
            out.append(f"note: {self.note}")
        for (a, b), rows in zip(self.lines, self.rows):
            out.append(f"  /* --- line {a}..{b} --- */")
            for r in rows:
                pad = "    " * r.depth
                mark = {"buffer": "<== buffer" + (f" ({f.direction})" if f.direction else ""),
                        "shares line": "<-- shares the line",
                        "accessed": "<-- CPU access"}.get(r.marker, "")
                if r.marker == "hole":
                    text = f"  {pad}/* XXX {r.size} bytes hole */"
                    out.append(f"  {r.offset:>6}  {r.size:>5}  {text.strip()}")
                    continue
                out.append(f"  {r.offset:>6}  {r.size:>5}  {pad}{r.decl};"
                           + (f"  {mark}" if mark else ""))
        return "".join(f"{indent}{x}\n" for x in out)

    def format_html(self) -> str:
        """A fragment: the summary, then the layout as a <pre>."""
        expo = (f'<p class="small">exposure: {escape(self.exposure_summary)}</p>'
                if self.exposure_summary else "")
        if not self.found:
            return f'<p class="muted layout">{escape(self.summary())}</p>' + expo
        body = []
        for line in self.format_text().splitlines()[1:]:
            if expo and line.startswith("exposure: "):
                continue                # a paragraph of its own, above
            cls = ""
            if "<== buffer" in line:
                cls = "buf"
            elif "<-- shares the line" in line or "<-- CPU access" in line:
                cls = "share"
            elif "/* --- line" in line:
                cls = "muted"
            e = escape(line)
            body.append(f'<span class="{cls}">{e}</span>' if cls else e)
        head = self.format_text().splitlines()[0]
        return (f'<div class="layout"><p><b>{escape(head)}</b></p>{expo}'
                f'<pre class="layout">' + "\n".join(body) + "</pre></div>")


def _short(r: Row) -> str:
    name = r.name if r.element else r.name.split("[", 1)[0] if r.name else r.decl
    return f"{name} ({r.offset})" if r.size <= 1 else f"{name} ({r.offset}..{r.offset + r.size - 1})"


def _overlaps(a: int, b: int, lo: int, hi: int) -> bool:
    """[a, b) overlaps [lo, hi]."""
    return a <= hi and b > lo


def _sibling_rows(arr: Member, index: int, lines: Sequence[tuple[int, int]], depth: int,
                  access: Optional[tuple[int, int]]) -> list[Row]:
    """The other elements of the array `arr` in the touched lines: one row
    for those before the buffer's element, one for those after."""
    n = _array_len(arr.name) or 1
    size = arr.size // n
    base = arr.name.split("[")[0]
    typ = arr.type
    inside = [i for i in range(n) if i != index and any(
        _overlaps(arr.offset + i * size, arr.offset + (i + 1) * size, a, b) for a, b in lines)]
    rows = []
    for part in ([i for i in inside if i < index], [i for i in inside if i > index]):
        if not part:
            continue
        lo, hi = part[0], part[-1]
        name = f"{base}[{lo}]" if lo == hi else f"{base}[{lo}..{hi}]"
        off = arr.offset + lo * size
        ln = (hi - lo + 1) * size
        marker = "accessed" if access and _overlaps(off, off + ln, access[0], access[1] - 1) \
            else "shares line"
        rows.append(Row(off, ln, f"{typ} {name}", marker, depth, name, True))
    return rows


def build_layout(f: DmaFacts, cand: Candidate, structs: Mapping[str, Struct], *,
                 source: Optional[str] = None, tool: Optional[str] = None,
                 others: Sequence[Candidate] = ()) -> Layout:
    """The Layout of a chosen candidate."""
    s = cand.struct
    lines = touched_lines(f, s.size)
    start, end = f.offset, min(f.end, s.size)
    keys = [(m.offset, m.size, m.name) for m in cand.path]
    access = None
    if f.access_offset is not None:
        access = (f.access_offset, f.access_offset + (f.access_size or 1))

    def marker_of(m: Member, depth: int) -> str:
        k = (m.offset, m.size, m.name)
        if keys and depth == len(keys) - 1 and k == keys[-1]:
            return "buffer"
        if not keys and depth == 0 and start <= m.offset and m.end <= end:
            return "buffer"
        if access and _overlaps(m.offset, max(m.end, m.offset + 1), access[0], access[1] - 1):
            return "accessed"
        return "shares line" if m.size else ""

    def rows_for(members: Sequence[Member], lo: int, hi: int, depth: int,
                 parent_end: int) -> list[Row]:
        rows: list[Row] = []
        prev_end: Optional[int] = None
        for m in members:
            if prev_end is not None and m.offset > prev_end \
                    and _overlaps(prev_end, m.offset, lo, hi):
                rows.append(Row(prev_end, m.offset - prev_end, "", "hole", depth))
            prev_end = max(prev_end or 0, m.end)
            if not _overlaps(m.offset, max(m.end, m.offset + 1), lo, hi):
                continue
            if depth < len(keys) - 1 and (m.offset, m.size, m.name) == keys[depth]:
                rows.append(Row(m.offset, m.size, m.decl, "", depth, m.name))
                el = cand.path[depth + 1]
                if el.index is not None:
                    # an array of records: the buffer's record, then the others in the line
                    rows.append(Row(el.offset, el.size, el.decl, "", depth + 1, el.name, True))
                    rows += rows_for(_expand(el, structs), lo, hi, depth + 2, el.end)
                    rows += _sibling_rows(m, el.index, [(lo, hi)], depth + 1, access)
                    continue
                rows += rows_for(_expand(m, structs), lo, hi, depth + 1, m.end)
                continue
            rows.append(Row(m.offset, m.size, m.decl, marker_of(m, depth), depth, m.name))
        if prev_end is not None and prev_end < parent_end \
                and _overlaps(prev_end, parent_end, lo, hi):
            rows.append(Row(prev_end, parent_end - prev_end, "", "hole", depth))
        return rows

    per_line = [rows_for(s.members, a, b, 0, s.size) for a, b in lines]
    buf = cand.path[-1].name if cand.path else f"[{start}..{end - 1}]"
    if cand.element is not None:
        buf = f"{cand.path[-1].name.split('[')[0]}[{cand.element}] of {cand.path[-1].name}"
    elif cand.path and (cand.path[-1].offset != start or cand.path[-1].end != end):
        buf = f"{len(range(start, end))} bytes of {cand.path[-1].name}"
    seen, sharing = set(), []
    for rows in per_line:
        for r in rows:
            if r.marker in ("shares line", "accessed") and (r.offset, r.name) not in seen:
                seen.add((r.offset, r.name))
                sharing.append(r)
    if cand.element is not None:
        arr = cand.path[-1]
        size = arr.size // (_array_len(arr.name) or 1)
        name = f"{arr.name.split('[')[0]}[{cand.element}]"
        mine = Row(start, size, f"{arr.type} {name}", "buffer", len(cand.path), name, True)
        siblings = _sibling_rows(arr, cand.element, lines, len(cand.path), access)
        sharing = sorted(sharing + siblings, key=lambda r: r.offset)
        for (a, b), rows in zip(lines, per_line):
            # the array's row holds its elements in this line, the buffer's marked
            for i, r in enumerate(rows):
                if r.marker == "buffer" and (r.offset, r.size) == (arr.offset, arr.size):
                    r.marker = ""
                    kids = [x for x in siblings + [mine]
                            if _overlaps(x.offset, x.offset + x.size, a, b)]
                    rows[i + 1:i + 1] = sorted(kids, key=lambda x: x.offset)
                    break
    notes = []
    if not _pow2_kmalloc(f.cache) and not (f.before is not None and f.offset - f.before > 0):
        notes.append("line boundaries assumed at multiples of the line size from the "
                     "object's start")
    if f.rule == "overflow":
        notes.append(f"the mapping runs {f.end - f.object_size} bytes past the object")
    cands = [f"{c.struct.kind} {c.struct.name} ({c.struct.size})" for c in others
             if c is not cand]
    if cands:
        notes.append(f"{len(cands) + 1} structures fit equally; showing the first")
    return Layout(f, s.name, s.kind, s.size, source, tool, cand.fit, lines, per_line,
                  buf, sharing, cands, "; ".join(notes) or None,
                  group=_marker_group(s, cand, structs),
                  path=path_names(s, cand.path, structs), element=cand.element,
                  path_offset=cand.path[-1].offset if cand.path else None)


_GROUP_BEGIN, _GROUP_END = "__cacheline_group_begin__", "__cacheline_group_end__"


def _marker_group(s: Struct, cand: Candidate, structs: Mapping[str, Struct]) -> Optional[str]:
    """GROUP when the buffer's member lies between the zero-length members
    ``__cacheline_group_begin__GROUP`` and ``__cacheline_group_end__GROUP``
    (include/linux/cache.h) that __dma_from_device_group_begin/_end put
    in its structure, at any depth of its path."""
    siblings: Sequence[Member] = s.members
    for m in cand.path:
        names = {x.name.split("[")[0]: x for x in siblings}
        for n, b in names.items():
            e = names.get(_GROUP_END + n[len(_GROUP_BEGIN):]) if n.startswith(_GROUP_BEGIN) \
                else None
            if e is not None and b.offset <= m.offset and m.end <= e.offset:
                return n[len(_GROUP_BEGIN):] or "(unnamed)"
        siblings = _expand(m, structs)
    return None


# --------------------------------------------------------------------------
# Putting it together




class LayoutFinder:
    """Layouts for the reports of one built variant; caches compiles and parses."""

    def __init__(self, artifacts: Path | str, *, scratch: Optional[Path] = None,
                 tool: Optional[str] = None):
        self.artifacts = Path(artifacts)
        self.scratch = scratch
        self.tool = tool      # force "pahole" or "gdb"; None: pahole when installed
        self._structs: dict[str, tuple[Optional[dict[str, Struct]], str]] = {}
        self._located: dict[tuple[str, Optional[str]], Optional[str]] = {}

    def _tool(self) -> Optional[str]:
        if self.tool:
            return self.tool if shutil.which(self.tool) else None
        for t in ("pahole", "gdb"):
            if shutil.which(t):
                return t
        return None

    def structs_of(self, source: str, f: DmaFacts) -> tuple[Optional[dict[str, Struct]], str]:
        """(structs, tool) of a source file, or (None, reason)."""
        tool = self._tool()
        if tool is None:
            return None, "neither pahole (dwarves) nor gdb is installed"
        key = f"{source}|{tool}" + ("" if tool == "pahole" else f"|{f.object_size}|{f.cache}")
        if key not in self._structs:
            try:
                obj = compile_with_debug(self.artifacts, source, scratch=self.scratch)
                if tool == "pahole":
                    st = structs_pahole(obj)
                else:
                    st = structs_gdb(obj, lambda n: 0 < n <= f.object_size)
                self._structs[key] = (st, tool)
            except (RecompileError, LayoutError, OSError, subprocess.TimeoutExpired) as e:
                self._structs[key] = (None, str(e))
        return self._structs[key]

    def source_text(self, source: str) -> Optional[str]:
        """The source file's text (None when the tree is gone)."""
        try:
            build = build_dir(self.artifacts)
            return (build.parent / source).read_text(errors="replace") if build else None
        except OSError:
            return None

    def locate(self, func: str, module: Optional[str]) -> Optional[str]:
        k = (func, module)
        if k not in self._located:
            self._located[k] = locate_function(self.artifacts, func, module)
        return self._located[k]

    def layout(self, facts: DmaFacts, func: Optional[str], module: Optional[str] = None,
               source: Optional[str] = None) -> Layout:
        """The layout of one report's buffer: the struct is looked for in
        `source`, else in the file defining `func`."""
        if source is None:
            if not func:
                return Layout(facts, note="the report names no guilty function")
            source = self.locate(func, module)
            if source is None:
                where = f"module {module}" if module else "the built-in objects"
                return Layout(facts, note=f"{func} not found in {where} of {self.artifacts}")
        structs, tool = self.structs_of(source, facts)
        if structs is None:
            return Layout(facts, source=source, note=tool)
        cand, best = choose(structs, facts, source, self.source_text(source))
        # a member of a scalar's size (up to a pointer or a u64) at the
        # buffer's offset is in almost any structure: evidence only when the
        # driver declares it (airspy's 1-byte control buffer once came with
        # struct acpi_ibft_nic and struct fs_disk_quota, and hub.c's 8-byte
        # read of a device descriptor into kmalloc(64) with struct kobject,
        # whose first member is a pointer, from headers they include)
        weak = facts.length <= 8
        if cand is None and best and not any(c.exact_member and (c.local or not weak)
                                             for c in best):
            # structures that merely have the object's size (struct
            # _ymmh_state, struct maple_node for usb_string()'s kmalloc
            # buffer) are no evidence: naming them would mislead
            return Layout(facts, source=source, tool=tool,
                          note=(f"a plain buffer: no structure in {source} has a member "
                                f"that is exactly the buffer ({len(best)} merely fit a "
                                f"{facts.cache} object)"))
        if cand is None and best:
            names = [f"{c.struct.kind} {c.struct.name} ({c.struct.size})" for c in best]
            more = f" and {len(names) - 8} more" if len(names) > 8 else ""
            return Layout(facts, source=source, tool=tool, candidates=names,
                          note=(f"{len(best)} structures in {source} could hold the buffer "
                                f"({', '.join(names[:8])}{more}); none declared next to it "
                                f"has a member that is exactly the buffer (a plain buffer?)"))
        if cand is None:
            return Layout(facts, source=source, tool=tool,
                          note=(f"no structure in {source} has a member at "
                                f"{facts.offset}..{facts.end - 1} and a size that fits a "
                                f"{facts.cache} object (a plain buffer?)"))
        return build_layout(facts, cand, structs, source=source, tool=tool, others=best)


_FINDERS: dict[str, LayoutFinder] = {}


def finder(artifacts: Path | str, **kw) -> LayoutFinder:
    """The process-wide LayoutFinder of an artifacts folder."""
    key = str(Path(artifacts).resolve())
    if key not in _FINDERS:
        _FINDERS[key] = LayoutFinder(artifacts, **kw)
    return _FINDERS[key]


def _guilty_module(report, g: Optional[str] = None) -> Optional[str]:
    """The module of the function `g` (default: the guilty frame) as printed
    in the report's stacks (``f+0x1/0x2 [uvcvideo]``)."""
    g = g or report.guilty_frame
    if not g:
        return None
    texts = list(report.stack_lines) + list(report.raw)    # raw: the aux stacks' lines
    for t in texts:
        m = re.search(r"([\w.$]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[([\w-]+)\])?", t)
        if m and m.group(1).split(".")[0] == g:
            return m.group(2)
    return None


def report_layout(report, artifacts: Path | str, **kw) -> Optional[Layout]:
    """Layout of a harness.reports.engine.Report, None when it is not a detector
    report with object offsets."""
    facts = report_facts(report)
    if facts is None:
        return None
    func = report.guilty_frame
    if facts.rule == "owned":
        # the CPU access may be anywhere (a wait, a list walk): the structure
        # is the one of the driver that mapped the buffer
        stack = next((s for k, s in report.aux_stacks.items()
                      if k.lower().endswith("mapped at")), [])
        func = dma_site_frame(stack) or func
    return finder(artifacts, **kw).layout(facts, func, _guilty_module(report, func))

