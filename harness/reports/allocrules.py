"""Where a DMA buffer's bytes come from, and what that means on each architecture.

The detector models one machine (x86_64's layouts, 128-byte lines), so a
buffer that shares a model line there may own its lines on the machine
where it would corrupt.  Four facts of the buffer's allocation decide it,
each read from the kernel's source (linux-source-7.3 unless a row says
otherwise); ``RULES`` is their table, one row per rule with its source,
and harness.reports.exposure applies them per architecture:

- ``coherent``: a coherent allocation (dma_alloc_coherent(), a dma_pool)
  is never mapped by the streaming API: no line is invalidated under the
  CPU's data;
- ``group``: a member between ``__dma_from_device_group_begin(G)`` and
  ``_end(G)`` (7.x) lies in a group that starts and ends on an
  ARCH_DMA_MINALIGN boundary where the architecture defines one: the
  group's lines hold the group's buffers only;
- ``devres``: devm_kmalloc()'s data follows ``struct devres`` whose
  ``data[]`` is ARCH_DMA_MINALIGN aligned: on x86_64 (8) the header shares
  the buffer's model line, on the non-coherent machines it has lines of its
  own;
- ``dedicated``: a buffer that is its kmalloc object alone (the layout
  finder found no structure with a member that is the buffer) starts an
  object that is ARCH_KMALLOC_MINALIGN aligned, or naturally aligned for a
  power-of-two size: the bytes after it in its lines are its own
  allocation (usb_string() maps 255 bytes of its kmalloc(256)), not other
  data.

How each fact is told (:func:`placement`): the allocation stack of a
``KASAN: dma-owned`` report ("Allocated by task"), when there is one;
else the layout found from DWARF (harness.reports.layout: a plain buffer,
a group's markers, a structure) and, for devres, the buffer's offset
(``sizeof(struct devres)`` on x86_64 for that kernel) with no structure
found there.  The evidence is named in each verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from . import layout
from ..kernel.series import version_key

# frames of an allocation stack that make the buffer's allocation what it is
DEVRES_FRAMES = ("devm_kmalloc", "devm_kzalloc", "devm_kcalloc", "devm_kmalloc_array",
                 "devm_kmemdup", "devm_krealloc", "devres_alloc_node", "__devres_alloc_node",
                 "alloc_dr")
COHERENT_FRAMES = ("dma_alloc_attrs", "dmam_alloc_attrs", "dma_alloc_coherent",
                   "dmam_alloc_coherent", "dma_pool_alloc", "dma_pool_zalloc",
                   "dma_direct_alloc")

# sizeof(struct devres) on x86_64, where devm_kmalloc()'s data starts there
# (ARCH_DMA_MINALIGN is __alignof__(unsigned long long), 8):
#   7.3: drivers/base/base.h struct devres_node {entry 16, release, free_node,
#        name, size} = 48, drivers/base/devres.c struct devres {node; release;
#        u8 __aligned(ARCH_DMA_MINALIGN) data[];} = 56
#   6.1: drivers/base/devres.c struct devres_node {entry 16, release, name,
#        size} = 40, struct devres {node; u8 __aligned(ARCH_KMALLOC_MINALIGN) data[];} = 40
# (6.12 not read: its devres sites are told by an allocation stack only)
DEVRES_DATA_X86_64 = {"6.1": 40, "7.3": 56}


@dataclass(frozen=True)
class Placement:
    """The facts of a buffer's allocation that the rules read."""

    kind: str = ""             # "kmalloc", "devres", "coherent", "" (another cache)
    dedicated: bool = False    # the buffer is its object's only data (a plain buffer)
    group: Optional[str] = None   # the DMA group (markers) its member is in
    devres_offset: int = 0     # devres: where the data starts on x86_64
    evidence: str = ""         # how it was told, for the verdicts

    def to_json(self) -> dict:
        return {"kind": self.kind, "dedicated": self.dedicated, "group": self.group,
                "evidence": self.evidence}


def _names(stack: Sequence[str]) -> list[str]:
    out = []
    for t in stack:
        m = re.search(r"([A-Za-z_][\w.]*)\+0x", t) or re.match(r"\s*([A-Za-z_]\w*)\s*$", t)
        if m:
            out.append(m.group(1).split(".")[0])
    return out


def _version(version: Optional[str]) -> str:
    return version if version else max(DEVRES_DATA_X86_64, key=version_key)


def placement(f: layout.DmaFacts, lay: Optional[layout.Layout] = None,
              alloc_stack: Sequence[str] = (), version: Optional[str] = None) -> Placement:
    """The placement of a report's buffer: `lay` its layout (None: not
    looked for), `alloc_stack` the "Allocated by task" stack of a dma-owned
    report on it (empty: none), `version` the kernel's X.Y (None: current)."""
    names = _names(alloc_stack)
    if any(n in COHERENT_FRAMES for n in names):
        return Placement("coherent", evidence="its allocation stack: "
                         + next(n for n in names if n in COHERENT_FRAMES))
    kmalloc = "kmalloc" in f.cache
    found = lay is not None and lay.found
    group = lay.group if found and "+" not in (lay.struct or "") else None
    data_at = DEVRES_DATA_X86_64.get(_version(version))
    if names:
        devres = next((n for n in names if n in DEVRES_FRAMES), None)
        why = f"its allocation stack: {devres}" if devres else ""
    else:
        devres = kmalloc and data_at is not None and f.offset == data_at and not found
        why = (f"offset {data_at}, where devm_kmalloc() data starts on x86_64 "
               f"(sizeof(struct devres)), and no structure of the driver there") if devres else ""
    if devres and kmalloc:
        return Placement("devres", group=group, devres_offset=f.offset, evidence=why)
    if not kmalloc:
        return Placement("", group=group,
                         evidence=f"the layout's group markers ({group})" if group else "")
    dedicated = f.offset == 0 and lay is not None and lay.plain
    ev = ("the layout: a plain buffer at offset 0" if dedicated else
          f"the layout's group markers ({group})" if group else "")
    return Placement("kmalloc", dedicated, group, evidence=ev)


# --- the rules ----------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What a rule needs of an architecture (harness.reports.exposure.Arch)."""

    name: str
    line: int
    dma_minalign: int
    kmalloc_minalign: int       # ARCH_KMALLOC_MINALIGN on that kernel


def object_align(t: Target, f: layout.DmaFacts) -> int:
    """The alignment of a kmalloc object on `t`: ARCH_KMALLOC_MINALIGN, or
    its size's largest power-of-two divisor (kmalloc()'s kernel-doc)."""
    size = f.object_size
    return max(t.kmalloc_minalign, size & -size if size > 0 else 0)


def _coherent(t: Target, p: Placement, f: layout.DmaFacts) -> Optional[str]:
    if p.kind != "coherent":
        return None
    return (f"a coherent allocation ({p.evidence}) is not mapped by the streaming API on "
            f"{t.name}: no cache maintenance loses data")


def _group(t: Target, p: Placement, f: layout.DmaFacts) -> Optional[str]:
    if not p.group or t.dma_minalign < t.line or object_align(t, f) < t.dma_minalign:
        return None
    return (f"the DMA group {p.group} is ARCH_DMA_MINALIGN ({t.dma_minalign}) aligned on "
            f"{t.name}: its lines hold the group's buffers only")


def _devres(t: Target, p: Placement, f: layout.DmaFacts) -> Optional[str]:
    if p.kind != "devres" or t.dma_minalign < t.line:
        return None
    if _kmalloc_size_roundup(p.devres_offset + f.length) != f.object_size:
        return None     # the data holds more than the buffer: exposure counts what follows
    return (f"devres data is ARCH_DMA_MINALIGN ({t.dma_minalign}) aligned on {t.name} and "
            f"the allocation is the buffer's size class ({p.evidence}): the buffer owns its "
            f"lines")


def _dedicated(t: Target, p: Placement, f: layout.DmaFacts) -> Optional[str]:
    if not p.dedicated or object_align(t, f) < t.line:
        return None
    return (f"a dedicated kmalloc object, {object_align(t, f)}-byte aligned on {t.name} "
            f"(ARCH_KMALLOC_MINALIGN {t.kmalloc_minalign}): the bytes after the buffer are "
            f"its own allocation")


def _kmalloc_size_roundup(size: int) -> int:
    for s in layout.KMALLOC_SIZES:
        if size <= s:
            return s
    return size


@dataclass(frozen=True)
class Rule:
    name: str
    verdict: str               # harness.reports.exposure's verdict word
    when: str                  # the facts that decide it
    source: str                # where in the kernel tree
    decide: Callable[[Target, Placement, layout.DmaFacts], Optional[str]]   # the reason


RULES: tuple[Rule, ...] = (
    Rule("coherent", "coherent-alloc",
         "the allocation stack shows dma_alloc_coherent()/dma_alloc_attrs() or dma_pool_alloc()",
         "kernel/dma/mapping.c: dma_alloc_attrs(); mm/dmapool.c: dma_pool_alloc()", _coherent),
    Rule("group", "own-lines",
         "the buffer's member lies between __dma_from_device_group_begin(G) and _end(G) of a "
         "structure that is its kmalloc object",
         "include/linux/dma-mapping.h: __dma_from_device_group_begin, "
         "____dma_from_device_aligned __aligned(ARCH_DMA_MINALIGN); include/linux/cache.h: "
         "__cacheline_group_begin", _group),
    Rule("devres", "own-lines",
         "devm_kmalloc() data (allocation stack, or offset sizeof(struct devres) on x86_64 "
         "with no structure there) whose size class is the buffer's",
         "drivers/base/devres.c: struct devres { ... u8 __aligned(ARCH_DMA_MINALIGN) data[]; }, "
         "check_dr_size() (kmalloc_size_roundup)", _devres),
    Rule("dedicated", "own-lines",
         "a plain buffer at offset 0 of a kmalloc object (no structure has a member that is "
         "the buffer)",
         "include/linux/slab.h: ARCH_KMALLOC_MINALIGN (ARCH_DMA_MINALIGN when above 8), "
         "kmalloc() kernel-doc: power-of-two sizes aligned to the size", _dedicated),
)


def apply(t: Target, p: Placement, f: layout.DmaFacts) -> Optional[tuple[Rule, str]]:
    """The first rule that keeps the buffer from corrupting on `t`, with its reason."""
    for r in RULES:
        why = r.decide(t, p, f)
        if why:
            return r, why
    return None


def table_text() -> str:
    """The rules, for docs/sweep-verdicts.md and --help."""
    return "\n".join(f"{r.name:10} {r.verdict:15} {r.when}\n{'':26} source: {r.source}"
                     for r in RULES)
