"""On which real machines a DMA buffer that shares a cache line corrupts memory.

The detector models one non-coherent machine with 128-byte lines.  Real
machines differ in three ways, all read from the kernel's own source
(linux-source-7.3 unless a row says otherwise):

- whether DMA is coherent at all: x86 and 64-bit PowerPC servers snoop the
  caches, so a shared line never corrupts there;
- the CPU's cache line, the unit that an invalidate before the device's
  write throws away and a writeback after it puts back: a buffer can share
  a 128-byte model line and still own its 32-byte lines;
- whether the kernel bounces the mapping: since 6.5, arm64 (and RISC-V
  with SWIOTLB) stop padding kmalloc() to ARCH_DMA_MINALIGN and instead
  bounce a streaming mapping through swiotlb when the device is not
  coherent, the direction is not DMA_TO_DEVICE and the mapping is small:
  ``dma_kmalloc_needs_bounce()`` in include/linux/dma-map-ops.h, size below
  2 x ARCH_DMA_MINALIGN and ``kmalloc_size_roundup(size)`` not a multiple
  of ``dma_get_cache_alignment()``.  The device then writes the bounce
  buffer and unmapping copies only the buffer's bytes back: the sharing is
  masked, at the cost of a copy (and the CPU must still keep away from the
  buffer itself while it is mapped).

"Corrupts" means the sharing is there on that machine: a CPU access to
the other bytes while the device owns the line loses data (the site's
dma-owned column says whether one was seen; a sharing-only site corrupts
nothing until something touches those bytes during a transfer).

A mapping of DMA_TO_DEVICE never corrupts a neighbour (cleaning a line
before the device reads is not destructive), on any machine.

Every verdict assumes a device that is not cache-coherent on that machine:
a device tree's dma-coherent, an ACPI _CCA of 1, or a virtio device that a
hypervisor emulates (its memory is the CPU's, and without
VIRTIO_F_ACCESS_PLATFORM virtio does not even use the DMA API) make the
same site harmless there.  A virtio site matters on such a machine for
virtio in hardware (vDPA, DPUs) that is not coherent.

Where the buffer's bytes come from can take a site off a machine: a
coherent allocation, a member of a DMA group, devm_kmalloc() data or a
buffer that is its kmalloc object alone own their lines where x86's
layout shares them (harness.reports.allocrules: the rules' table, each row
with its source; they need the site's layout or allocation stack).

``ARCHES`` is the table; ``assess(facts, version)`` gives one verdict per
row for a site; ``summary()`` says it in one line and ``status()`` in two
words: "real on {arches}" or "x86 layout only".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

from . import allocrules, archlayout, layout
from ..kernel.series import version_key   # "6.12" -> (6, 12)


@dataclass(frozen=True)
class Arch:
    name: str
    noncoherent: str            # which machines of the architecture do non-coherent DMA
    line: int = 0               # the CPU cache line that matters (0: DMA always coherent)
    lines_seen: str = ""        # the range of line sizes among its CPUs
    dma_minalign: int = 0       # ARCH_DMA_MINALIGN (0: not defined)
    bounce_since: Optional[str] = None   # kernel version that bounces small mappings
    bounce_note: str = ""
    source: str = ""            # where in the kernel tree this comes from


ARCHES: tuple[Arch, ...] = (
    Arch("x86_64", "none: DMA snoops the caches", source="arch/x86 (no arch_sync_dma_*)"),
    Arch("arm64", "devices without dma-coherent in the device tree (most embedded SoCs)",
         line=64, lines_seen="64 (CTR_EL0.CWG; 128 on a few)", dma_minalign=128,
         bounce_since="6.5",
         bounce_note="select DMA_BOUNCE_UNALIGNED_KMALLOC (arch/arm64/Kconfig)",
         source="arch/arm64/include/asm/cache.h: L1_CACHE_SHIFT 6, ARCH_DMA_MINALIGN 128"),
    Arch("riscv", "SoCs without coherent DMA (Zicbom cache maintenance)",
         line=64, lines_seen="64", dma_minalign=64, bounce_since="6.12",
         bounce_note="select DMA_BOUNCE_UNALIGNED_KMALLOC if SWIOTLB (in 6.12 and 7.3)",
         source="arch/riscv/include/asm/cache.h: L1_CACHE_SHIFT 6, "
                "ARCH_DMA_MINALIGN L1_CACHE_BYTES"),
    Arch("arm", "32-bit SoCs (no coherent interconnect on most)",
         line=64, lines_seen="32 or 64 (ARM_L1_CACHE_SHIFT; 64 on ARMv7)", dma_minalign=64,
         source="arch/arm/include/asm/cache.h: ARCH_DMA_MINALIGN L1_CACHE_BYTES"),
    Arch("mips", "CONFIG_DMA_NONCOHERENT platforms (most embedded MIPS)",
         line=32, lines_seen="16 to 128 (MIPS_L1_CACHE_SHIFT; 32 on most MIPS32)",
         dma_minalign=128,
         source="arch/mips/include/asm/mach-generic/kmalloc.h: ARCH_DMA_MINALIGN 128"),
    Arch("powerpc32", "CONFIG_NOT_COHERENT_CACHE: 44x, 8xx, MPC512x (64-bit is coherent)",
         line=32, lines_seen="16 (8xx) or 32", dma_minalign=32,
         source="arch/powerpc/include/asm/cache.h: L1_CACHE_SHIFT 5 (4 on 8xx), "
                "ARCH_DMA_MINALIGN L1_CACHE_BYTES with NOT_COHERENT_CACHE"),
)

# kmalloc's caches where the smallest kmalloc alignment is 8 (arm64, riscv
# since their bouncing): kmalloc_size_roundup() goes to the next of these
_KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256)

CORRUPTS = "corrupts"
BOUNCED = "bounced"
OWN_LINES = "own-lines"
COHERENT = "coherent"
TO_DEVICE = "to-device"
COHERENT_ALLOC = "coherent-alloc"
VERDICTS = (CORRUPTS, BOUNCED, OWN_LINES, COHERENT, TO_DEVICE, COHERENT_ALLOC)


@dataclass(frozen=True)
class Verdict:
    arch: str
    verdict: str        # CORRUPTS, BOUNCED, OWN_LINES, COHERENT, TO_DEVICE, COHERENT_ALLOC
    line: int
    why: str
    rule: Optional[str] = None      # the allocrules row that decided it

    def to_json(self) -> dict:
        return {"arch": self.arch, "verdict": self.verdict, "line": self.line, "why": self.why,
                "rule": self.rule}


def kmalloc_size_roundup(size: int) -> int:
    """kmalloc_size_roundup() with 8-byte kmalloc alignment, up to a page."""
    for s in _KMALLOC_SIZES:
        if size <= s:
            return s
    p = 512
    while p < size:
        p *= 2
    return p


def _bouncing(arch: Arch, version: Optional[str]) -> bool:
    return arch.bounce_since is not None and (
        version is None or version_key(version) >= version_key(arch.bounce_since))


def kmalloc_minalign(arch: Arch, version: Optional[str]) -> int:
    """ARCH_KMALLOC_MINALIGN: 8 where small kmalloc() is bounced instead of
    padded (arch/arm64/include/asm/cache.h and arch/riscv/include/asm/cache.h:
    ARCH_KMALLOC_MINALIGN (8)), ARCH_DMA_MINALIGN elsewhere
    (include/linux/slab.h: ARCH_KMALLOC_MINALIGN ARCH_DMA_MINALIGN when above 8)."""
    return 8 if _bouncing(arch, version) else max(arch.dma_minalign, 8)


def bounced(arch: Arch, length: int, version: Optional[str]) -> bool:
    """Does dma_kmalloc_needs_bounce() send this mapping through swiotlb?"""
    if arch.bounce_since is None:
        return False
    if version is not None and version_key(version) < version_key(arch.bounce_since):
        return False
    return length < 2 * arch.dma_minalign and kmalloc_size_roundup(length) % arch.line != 0


def shared_bytes(f: layout.DmaFacts, line: int) -> tuple[int, int]:
    """Bytes of the buffer's object in the buffer's first and last `line`-byte
    lines, before and after it.  The lines start where the detector's model
    lines do (a model line of 128 bytes holds whole lines of any size that
    divides it).  Only the bytes the detector counted as the object's data
    can be shared: its ``before``/``after`` (the model line's shared bytes,
    which stop at a kmalloc object's requested end); the object's size
    when the report does not give them."""
    phase = layout.line_phase(f) % line
    first = f.offset - ((f.offset - phase) % line)
    end = f.end
    last = end + ((phase - end) % line)
    lo = max(first, 0, f.offset - f.before) if f.before is not None else max(first, 0)
    hi = min(last, f.object_size, end + f.after) if f.after is not None else \
        min(last, f.object_size)
    return f.offset - lo, max(hi - end, 0)


def assess(f: layout.DmaFacts, version: Optional[str] = None, *,
           lay: Optional[layout.Layout] = None,
           alloc_stack: Sequence[str] = ()) -> list[Verdict]:
    """One verdict per row of ARCHES for a site's buffer (a sharing or an
    overflow report's facts), on kernel `version` (None: the current one);
    `lay` (its layout) and `alloc_stack` (a dma-owned report's allocation
    stack) tell where its bytes come from (harness.reports.allocrules)."""
    out = []
    direction = (f.direction or "").upper()
    place = allocrules.placement(f, lay, alloc_stack, version)
    for a in ARCHES:
        if not a.line:
            out.append(Verdict(a.name, COHERENT, 0, "DMA is cache-coherent"))
            continue
        if direction == "DMA_TO_DEVICE":
            out.append(Verdict(a.name, TO_DEVICE, a.line,
                               "to the device only: cleaning a line is not destructive"))
            continue
        fa, source = arch_facts(f, lay, a, version)
        out.append(_sourced(_judge(a, fa, place, version), source))
    return out


def arch_facts(f: layout.DmaFacts, lay: Optional[layout.Layout], a: Arch,
               version: Optional[str]) -> tuple[layout.DmaFacts, str]:
    """The facts to judge `a` on, and where its layout comes from in words:
    the architecture's own layout (harness.reports.archlayout) when it was
    computed, else x86_64's and why; "" when no structure holds the buffer
    (a plain buffer is the same on every machine)."""
    if lay is None or not lay.found:
        return f, ""
    al = lay.arch_layouts.get(a.name)
    if isinstance(al, archlayout.ArchLayout) and f.rule != "overflow":
        fa = al.facts(f, a.line)
        near = al.neighbours(fa)
        more = f", next to {', '.join(near[:4])}" + (" ..." if len(near) > 4 else "") \
            if near else ""
        align = allocrules.object_align(_target(a, version), fa)
        phase = (f"; lines assumed to start at the object's start ({align}-byte aligned)"
                 if align < a.line else "")
        note = f"; {al.note}" if al.note else ""
        return fa, f"layout from {al.compiler}: {al.where()}{more}{phase}{note}"
    if f.rule == "overflow":
        return f, "x86_64 layout assumed: a mapping past its object"
    why = al if isinstance(al, str) and al else f"no {a.name} layout computed"
    return f, f"x86_64 layout assumed: {why}"


def _target(a: Arch, version: Optional[str]) -> allocrules.Target:
    return allocrules.Target(a.name, a.line, a.dma_minalign, kmalloc_minalign(a, version))


def _sourced(v: Verdict, source: str) -> Verdict:
    return replace(v, why=f"{v.why} ({source})") if source else v


def _judge(a: Arch, f: layout.DmaFacts, place: allocrules.Placement,
           version: Optional[str]) -> Verdict:
    """The verdict on one non-coherent architecture for a mapping the device may write."""
    if f.rule != "overflow":
        hit = allocrules.apply(_target(a, version), place, f)
        if hit is not None and not (hit[0].name != "coherent"
                                    and bounced(a, f.length, version)):
            return Verdict(a.name, hit[0].verdict, a.line, hit[1], hit[0].name)
    if bounced(a, f.length, version):
        return Verdict(a.name, BOUNCED, a.line,
                       f"a {f.length}-byte mapping (kmalloc size "
                       f"{kmalloc_size_roundup(f.length)}, not a multiple of "
                       f"{a.line}) is bounced through swiotlb since "
                       f"{a.bounce_since}: masked")
    before, after = shared_bytes(f, a.line)
    devres = place.kind == "devres" and a.dma_minalign >= a.line
    if devres:
        before = 0      # struct devres's header: lines of its own (allocrules, devres)
    if f.rule == "overflow" or before or after:
        what = ("maps past its object" if f.rule == "overflow" else
                f"{before} bytes before and {after} after it share its {a.line}-byte lines"
                + (" (devres data: its header has lines of its own)" if devres else ""))
        return Verdict(a.name, CORRUPTS, a.line, what)
    return Verdict(a.name, OWN_LINES, a.line, f"the buffer fills its {a.line}-byte lines alone")


def summary(verdicts: list[Verdict]) -> str:
    """'corrupts on arm, mips, powerpc32; bounced on arm64, riscv; never on x86_64'."""
    groups: dict[str, list[str]] = {}
    for v in verdicts:
        groups.setdefault(v.verdict, []).append(v.arch)
    words = {CORRUPTS: "corrupts on", BOUNCED: "bounced (masked) on",
             OWN_LINES: "own lines on", TO_DEVICE: "to-device, safe on",
             COHERENT_ALLOC: "coherent allocation on", COHERENT: "coherent on"}
    return "; ".join(f"{words[k]} {', '.join(groups[k])}"
                     for k in (CORRUPTS, BOUNCED, OWN_LINES, TO_DEVICE, COHERENT_ALLOC, COHERENT)
                     if k in groups)


def corrupting(verdicts: Sequence[Verdict]) -> list[str]:
    """The architectures where the site corrupts."""
    return [v.arch for v in verdicts if v.verdict == CORRUPTS]


def status(verdicts: Sequence[Verdict]) -> str:
    """'real on arm, mips, powerpc32', or 'x86 layout only' when no real
    machine's layout shares the buffer's lines."""
    bad = corrupting(verdicts)
    return f"real on {', '.join(bad)}" if bad else "x86 layout only"


def table_text() -> str:
    """The architecture table, for --help and docs/sweep.md."""
    rows = [f"{'arch':10} {'line':>5} {'DMA_MINALIGN':>12}  bounce  non-coherent DMA"]
    for a in ARCHES:
        rows.append(f"{a.name:10} {a.line or '-':>5} {a.dma_minalign or '-':>12}  "
                    f"{a.bounce_since or '-':6}  {a.noncoherent}")
    return "\n".join(rows)
