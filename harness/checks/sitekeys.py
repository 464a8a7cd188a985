"""A site's key: what names one place where a driver maps a buffer.

The key is ``FUNCTION RULE CACHE+OFFSET:LENGTH DIRECTION``: the driver
function that mapped the buffer (transport layers skipped), the
detector's rule (``sharing``, ``overflow``) and the buffer's place in its
object.  It is stable across boots and kernels as long as the layout is,
which is what a sweep's ``--baseline`` and a case's ``expect.sites``
compare (a case's key may hold ``*``, which matches any text: an offset
that moves with the kernel's configuration).  A ``KASAN: dma-owned`` report names the mapping of the buffer
it hit: it counts for the ``sharing`` site of that mapping.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from math import gcd
from typing import Iterable, Optional, Sequence

from ..reports import engine, frames, layout


def site_key(frame: str, rule: str, f: layout.DmaFacts) -> str:
    """Stable across boots and kernels: function, buffer place, direction."""
    return f"{frame} {rule} {f.cache}+{f.offset}:{f.length} {f.direction or '?'}"


def family(frame: str, rule: str, f: layout.DmaFacts, member: Optional[str] = None) -> tuple:
    """What the rows of one buffer share: the mapping function, the rule,
    the cache, the direction and (when the layout names it) the member
    without its index."""
    return (frame, rule, f.cache, f.object_size, f.direction,
            member.split("[")[0] if member else None)


def stride(offsets: Sequence[int], lengths: Sequence[int]) -> Optional[int]:
    """The slot size of a ring of buffers: three or more offsets a multiple
    of one stride apart, each mapping within one slot (rtl_usb's
    ``usb_data[]`` of u32 slots mapped 1, 2 or 4 bytes at a time); None
    when the offsets are not such a ring."""
    offs = sorted(set(offsets))
    if len(offs) < 3:
        return None
    g = 0
    for a, b in zip(offs, offs[1:]):
        g = gcd(g, b - a)
    return g if g and max(lengths) <= g else None


def folded_key(frame: str, rule: str, f: layout.DmaFacts, lengths: Sequence[int],
               step: Optional[int]) -> str:
    """The key of the rows of one buffer folded into a site: the offset as
    ``{stride}n+{residue}`` for a ring, ``*`` for a buffer whose offset
    moves with the configuration; the length ``*`` when the rows' differ."""
    if step:
        r = f.offset % step
        where = f"{step}n" + (f"+{r}" if r else "")
    else:
        where = "*"
    ln = str(lengths[0]) if len(set(lengths)) == 1 else "*"
    return f"{frame} {rule} {f.cache}+{where}:{ln} {f.direction or '?'}"


def map_frame(r: engine.Report, facts: layout.DmaFacts) -> tuple[Optional[str], list[str]]:
    """(driver function that mapped the buffer, the mapping stack)."""
    if facts.rule == "owned":
        # "DMA-API: The buffer was mapped at:" (the detector's), "Mapped at:" (dma-debug's)
        stack = next((s for k, s in r.aux_stacks.items() if k.lower().endswith("mapped at")), [])
        return frames.dma_site_frame(stack), list(stack)
    return r.guilty_frame or frames.dma_site_frame(r.stack), list(r.stack)


def place(frame: str, f: layout.DmaFacts) -> tuple:
    """A buffer's mapping place: what a dma-owned report and a sharing report share."""
    return (frame, f.cache, f.offset, f.length, f.direction)


def report_key(r: engine.Report) -> Optional[tuple[str, bool]]:
    """(the site key a report counts for, whether it is a dma-owned access),
    or None for a report that names no site."""
    facts = layout.report_facts(r)
    if facts is None:
        return None
    frame, _ = map_frame(r, facts)
    if frame is None:
        return None
    owned = facts.rule == "owned"
    return site_key(frame, "sharing" if owned else facts.rule, facts), owned


def run_keys(run: Iterable) -> dict[str, bool]:
    """The sites of one boot's reports (harness.reports.engine.Report, or
    Signature, whose first report stands for its title): key -> whether a
    dma-owned access to the site's buffer was seen."""
    out: dict[str, bool] = {}
    for item in run:
        r = item.first if isinstance(item, engine.Signature) else item
        if r is None:
            continue
        k = report_key(r)
        if k is not None:
            out[k[0]] = out.get(k[0], False) or k[1]
    return out


def matching(pattern: str, keys: Iterable[str]) -> list[str]:
    """The keys that a case's site key names (``*`` matches any text, no
    other character is special)."""
    if "*" not in pattern:
        return [pattern] if pattern in keys else []
    glob = pattern.replace("[", "[[]").replace("?", "[?]")
    return [k for k in keys if fnmatchcase(k, glob)]
