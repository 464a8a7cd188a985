"""The sweep's triage table: one row per site, deduped across devices and boots.

A *site* is a place where a driver maps a buffer that shares a cache line
with other data of its object (the detector's sharing report) or maps past
its object (its overflow report): the driver function that handed the
buffer over (transport layers skipped, harness.reports.frames.TRANSPORT_FRAMES),
and the buffer's place in its object (cache, offset, length) and
direction.  The same site reached by several devices or boots is one row
that lists them.  A ``KASAN: dma-owned`` report whose buffer was mapped at
a site marks the row: the CPU touched the device's bytes while mapped,
so on a non-coherent machine corruption is a matter of timing; a row
without one is sharing only (harmless unless something touches those
bytes during a transfer).

Rows carry their evidence: the first report's console excerpt and stack,
and the structure layout around the buffer (harness.reports.layout, through
harness.checks.enrich).  ``diff(old, new)`` compares two sweeps by site key.

Rows of one buffer fold into one site (:func:`fold_buffers`): a ring of
slots mapped at a fixed stride (rtl_usb's register ring, one row per slot
offset), or one buffer whose offset moved with the configuration (never
two of its offsets in one boot); the site lists the rows it folded.

Each site is judged on the machines where it would corrupt
(harness.reports.exposure, with its layout and a dma-owned report's
allocation stack for harness.reports.allocrules): "real on {arches}" or
"x86 layout only".  Sites are ranked: real ones first, then those with a
CPU access to device-owned bytes (a write before a read: a read only
matters where no cache maintenance follows the transfer), then the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from .. import files
from ..errors import InputError
from ..jsonout import JSON_VERSION
from ..reports import allocrules, exposure, layout, engine, frames
from . import enrich
from .sitekeys import family, folded_key, map_frame, place, site_key, stride

EXCERPT_LINES = 40


@dataclass
class Site:
    key: str
    rule: str                          # sharing | overflow
    frame: str                         # the driver function that mapped the buffer
    caller: Optional[str]              # the frame that called it
    title: str
    facts: layout.DmaFacts
    devices: list[str] = field(default_factory=list)
    boots: int = 0                     # boots that reported it
    owned: list[str] = field(default_factory=list)      # dma-owned titles of its buffer
    owned_boots: int = 0
    console: Optional[str] = None      # where the first report is
    first_line: int = 0
    excerpt: list[str] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    layout: Optional[layout.Layout] = None
    location: Optional[str] = None     # file:line of the frame
    version: Optional[str] = None      # the kernel's X.Y, for the exposure rules
    owned_access: list[str] = field(default_factory=list)   # "write", "read" (KASAN's)
    alloc_stack: list[str] = field(default_factory=list)    # a dma-owned report's
    folded: list["Site"] = field(default_factory=list)      # rows of one buffer, folded
    boot_ids: set = field(default_factory=set, repr=False)

    def _verdicts(self) -> list[exposure.Verdict]:
        return exposure.assess(self.facts, self.version, lay=self.layout,
                               alloc_stack=self.alloc_stack)

    def exposure(self) -> list[exposure.Verdict]:
        """On which real machines the sharing corrupts (harness.reports.exposure);
        a folded site's: per machine, its first row that corrupts there."""
        mine = self._verdicts()
        if not self.folded:
            return mine
        rows = [r._verdicts() for r in self.folded]
        return [next((vs[i] for vs in rows if vs[i].verdict == exposure.CORRUPTS), v)
                for i, v in enumerate(mine)]

    def status(self) -> str:
        return exposure.status(self.exposure())

    @property
    def access(self) -> Optional[str]:
        """The dma-owned evidence: "write" over "read", "access" when unsaid."""
        if not self.owned:
            return None
        return next((a for a in ("write", "read") if a in self.owned_access), "access")

    def rank(self) -> tuple:
        """Real sites first, then dma-owned writes, accesses, reads, then the rest."""
        real = 0 if exposure.corrupting(self.exposure()) else 1
        return (real, {"write": 0, "access": 1, "read": 2, None: 3}[self.access],
                self.frame, self.key)

    @property
    def struct(self) -> Optional[str]:
        return self.layout.struct if self.layout and self.layout.found else None

    @property
    def member(self) -> Optional[str]:
        return self.layout.buffer if self.layout and self.layout.found else None

    def neighbours(self) -> list[str]:
        if not self.layout or not self.layout.found:
            return []
        return [r.name or r.decl for r in self.layout.sharing]

    def where(self) -> str:
        f = self.facts
        return f"{f.cache}+{f.offset}:{f.length}"

    def to_json(self) -> dict:
        f = self.facts
        return {"key": self.key, "rule": self.rule, "function": self.frame,
                "caller": self.caller, "title": self.title, "location": self.location,
                "direction": f.direction, "cache": f.cache, "object_size": f.object_size,
                "offset": f.offset, "length": f.length, "struct": self.struct,
                "member": self.member, "neighbours": self.neighbours(),
                "layout_summary": self.layout.summary() if self.layout else None,
                "layout": self.layout.to_json() if self.layout else None,
                "devices": list(self.devices), "boots": self.boots,
                "dma_owned": bool(self.owned), "dma_owned_titles": list(self.owned),
                "dma_owned_boots": self.owned_boots, "dma_owned_access": self.access,
                **_exposure_json(self.exposure()),
                "placement": allocrules.placement(
                    f, self.layout, self.alloc_stack, self.version).to_json(),
                "folded": ({"rows": len(self.folded),
                            "offsets": sorted({r.facts.offset for r in self.folded}),
                            "lengths": sorted({r.facts.length for r in self.folded}),
                            "keys": [r.key for r in self.folded]} if self.folded else None),
                "evidence": {"console": self.console, "first_line": self.first_line,
                             "excerpt": list(self.excerpt), "stack": list(self.stack)}}


def _exposure_json(verdicts: list[exposure.Verdict]) -> dict:
    return {"exposure": [v.to_json() for v in verdicts],
            "exposure_summary": exposure.summary(verdicts), "status": exposure.status(verdicts)}


@dataclass
class Table:
    sites: list[Site]
    other: dict[str, list[str]]          # title -> devices, for reports that are not sites

    def to_json(self) -> dict:
        return {"sites": [s.to_json() for s in self.sites],
                "other_reports": [{"title": t, "devices": d} for t, d in self.other.items()]}


def _caller(stack: Sequence[str], frame: str) -> Optional[str]:
    try:
        i = list(stack).index(frame)
    except ValueError:
        return None
    return frames.dma_site_frame(stack[i + 1:])


def fold(runs: Iterable, artifacts_dir: Optional[Path] = None, *,
         with_layout: bool = True, version: Optional[str] = None) -> Table:
    """Sites of the runs' consoles (harness.checks.sweep.DeviceRun: device, console),
    in order of first appearance; with `artifacts_dir`, each site's layout
    and file:line from its first report; `version`, the kernel's X.Y, for
    each site's exposure per architecture (None: the current rules)."""
    sites: dict[str, Site] = {}
    owned_pending: list[tuple[tuple, engine.Report, layout.DmaFacts, object, list[str]]] = []
    other: dict[str, list[str]] = {}
    firsts: dict[str, engine.Report] = {}
    for boot, run in enumerate(runs):
        if not getattr(run, "console", None) or not Path(run.console).is_file():
            continue
        text = Path(run.console).read_text(errors="replace")
        seen_here: set[str] = set()
        for r in engine.parse(text):
            facts = layout.report_facts(r)
            frame, stack = map_frame(r, facts) if facts else (None, [])
            if facts is None or frame is None:
                devs = other.setdefault(r.title, [])
                if run.device not in devs:
                    devs.append(run.device)
                continue
            if facts.rule == "owned":
                owned_pending.append((place(frame, facts), r, facts, run, stack, boot))
                continue
            key = site_key(frame, facts.rule, facts)
            s = sites.get(key)
            if s is None:
                s = sites[key] = Site(key, facts.rule, frame, _caller(stack, frame), r.title,
                                      facts, console=str(run.console),
                                      first_line=r.first_line, excerpt=r.raw[:EXCERPT_LINES],
                                      stack=stack, version=version)
                firsts[key] = r
            if run.device not in s.devices:
                s.devices.append(run.device)
            s.boot_ids.add(boot)
            if key not in seen_here:
                seen_here.add(key)
                s.boots += 1
    # dma-owned reports mark the site whose mapping they name
    by_place = {place(s.frame, s.facts): s for s in sites.values() if s.rule == "sharing"}
    counted: set[tuple[tuple, str]] = set()
    from_owned: set[str] = set()
    for k, r, facts, run, stack, boot in owned_pending:
        title, device = r.title, run.device
        s = by_place.get(k)
        if s is None:
            # an owned access at a site with no sharing report: missed, or not
            # made (a mapping with DMA_ATTR_DEBUGGING_IGNORE_CACHELINES); the
            # owned report is the evidence: its mapping stack, its layout
            key = site_key(k[0], "sharing", facts)
            s = sites.get(key)
            if s is None:
                s = sites[key] = Site(key, "sharing", k[0], _caller(stack, k[0]), title, facts,
                                      console=str(run.console), first_line=r.first_line,
                                      excerpt=r.raw[:EXCERPT_LINES], stack=stack,
                                      version=version)
                firsts[key] = r
                from_owned.add(key)
            by_place[k] = s
        if title not in s.owned:
            s.owned.append(title)
        if facts.access and facts.access not in s.owned_access:
            s.owned_access.append(facts.access)
        alloc = next((v for h, v in r.aux_stacks.items() if h.startswith("Allocated by")), [])
        if alloc and not s.alloc_stack:
            s.alloc_stack = list(alloc)
        s.boot_ids.add(boot)
        if device not in s.devices:
            s.devices.append(device)
        if (k, device) not in counted:
            counted.add((k, device))
            s.owned_boots += 1
            if s.key in from_owned:         # its only reports: they count its boots
                s.boots += 1
    if artifacts_dir is not None:
        for key, r in firsts.items():
            e = enrich.enrich(r, artifacts_dir, with_layout=with_layout)
            sites[key].layout = e.layout
            sites[key].location = e.location
    folded = fold_buffers(list(sites.values()))
    for s in folded:
        if s.layout is not None:         # the layout says what the site says
            verdicts = s.exposure()
            s.layout.exposure = [v.to_json() for v in verdicts]
            s.layout.exposure_summary = exposure.summary(verdicts)
    return Table(rank(folded), other)


def rank(sites: Iterable[Site]) -> list[Site]:
    """Real sites first, then dma-owned writes before reads, then the rest."""
    return sorted(sites, key=Site.rank)


def fold_buffers(sites: Sequence[Site]) -> list[Site]:
    """Rows of one buffer as one site, in order of first appearance: a
    family (function, rule, cache, direction, member) of three or more
    rows at a fixed stride each within a slot (sitekeys.stride), or of
    rows of one length never two in one boot (an offset that moves with
    the configuration).  Other families stay row by row."""
    groups: dict[tuple, list[Site]] = {}
    for s in sites:
        groups.setdefault(family(s.frame, s.rule, s.facts, s.member), []).append(s)
    out = []
    for rows in groups.values():
        lengths = [r.facts.length for r in rows]
        step = stride([r.facts.offset for r in rows], lengths)
        moved = len(rows) > 1 and len(set(lengths)) == 1 and \
            sum(len(r.boot_ids) for r in rows) == len(set().union(*(r.boot_ids for r in rows)))
        if len(rows) < 2 or not (step or moved):
            out.extend(rows)
            continue
        out.append(_merge(rows, folded_key(rows[0].frame, rows[0].rule, rows[0].facts,
                                           lengths, step)))
    return out


def _merge(rows: Sequence[Site], key: str) -> Site:
    first = rows[0]
    s = Site(key, first.rule, first.frame, first.caller, first.title, first.facts,
             console=first.console, first_line=first.first_line, excerpt=list(first.excerpt),
             stack=list(first.stack), layout=first.layout, location=first.location,
             version=first.version, folded=list(rows))
    for r in rows:
        s.devices += [d for d in r.devices if d not in s.devices]
        s.owned += [t for t in r.owned if t not in s.owned]
        s.owned_access += [a for a in r.owned_access if a not in s.owned_access]
        s.alloc_stack = s.alloc_stack or list(r.alloc_stack)
        s.boot_ids |= r.boot_ids
        s.owned_boots += r.owned_boots
    s.boots = max(len(s.boot_ids), max(r.boots for r in rows))
    s.owned_boots = min(s.owned_boots, s.boots)
    return s


# --- text ---------------------------------------------------------------------------

def format_text(table: Table, runs: Sequence = (), *, details: bool = True) -> str:
    out = []
    if runs:
        ran = [r for r in runs if r.state == "ran"]
        failed = [r for r in runs if r.state == "failed"]
        skipped = [r for r in runs if r.state == "skipped"]
        out.append(f"{len(ran)} boot(s) ran, {len(failed)} failed, {len(skipped)} device(s) "
                   f"skipped; {len(table.sites)} site(s)")
        for r in failed:
            out.append(f"  failed   {r.device}: {r.reason}")
        for r in skipped:
            out.append(f"  skipped  {r.device}: {r.reason}")
        out.append("")
    if not table.sites:
        out.append("no sharing sites")
    for i, s in enumerate(table.sites, 1):
        what = f"{s.struct}.{s.member}" if s.struct else f"{s.facts.length} bytes"
        owned = (f"DMA-OWNED {s.access.upper()}" if s.owned else
                 "maps past its object" if s.rule == "overflow" else "sharing only")
        where = s.where() if not s.folded else s.key.split()[2]
        out.append(f"#{i} {s.frame}" + (f" <- {s.caller}" if s.caller else "")
                   + f"  {what} at {where} {s.facts.direction or ''}  [{owned}]  {s.status()}")
        out.append(f"   devices: {', '.join(s.devices)}; boots {s.boots}"
                   + (f"; dma-owned in {s.owned_boots}: {'; '.join(s.owned)}" if s.owned else ""))
        if s.folded:
            offs = sorted({r.facts.offset for r in s.folded})
            out.append(f"   {len(s.folded)} rows of one buffer folded: offsets "
                       + ", ".join(map(str, offs[:12])) + (" ..." if len(offs) > 12 else ""))
        if s.location:
            out.append(f"   at {s.location}")
        if not (details and s.layout is not None and s.layout.exposure_summary):
            # (a layout from enrichment prints the same line itself)
            out.append(f"   exposure: {exposure.summary(s.exposure())}")
        if details and s.layout is not None:
            out.append(s.layout.format_text("   ").rstrip("\n"))
        if details and s.console:
            out.append(f"   evidence: {s.console}:{s.first_line}")
    if table.other:
        out.append("")
        out.append("other reports:")
        for t, d in table.other.items():
            out.append(f"  {t}  ({', '.join(d)})")
    return "\n".join(out) + "\n"


# --- baseline -----------------------------------------------------------------------

@dataclass(frozen=True)
class SiteDiff:
    new: list[dict]
    gone: list[dict]
    unchanged: list[dict]

    @property
    def differs(self) -> bool:
        return bool(self.new or self.gone)

    def to_json(self) -> dict:
        return {"new": self.new, "gone": self.gone, "unchanged": self.unchanged}

    def format_text(self) -> str:
        out = []
        for word, rows in (("new", self.new), ("gone", self.gone), ("unchanged", self.unchanged)):
            for s in rows:
                out.append(f"{word:<9} {s['key']}" + ("  [dma-owned]" if s.get("dma_owned") else ""))
        out.append(f"{len(self.new)} new, {len(self.gone)} gone, {len(self.unchanged)} unchanged")
        return "\n".join(out) + "\n"


def load_sites(path: Path) -> list[dict]:
    """The sites of an earlier sweep's JSON (sweep.json or --json output)."""
    data = files.read_json(path, "the baseline")
    if not isinstance(data, dict) or data.get("command") != "sweep" or \
            not isinstance(data.get("sites"), list):
        raise InputError(f"{path}: not the JSON of a sweep (no \"command\": \"sweep\" with sites)",
                         path=str(path))
    if data.get("version") != JSON_VERSION:
        raise InputError(f"{path}: JSON version {data.get('version')}, this harness reads "
                         f"{JSON_VERSION}", path=str(path))
    return data["sites"]


def diff(old: Sequence[dict], new: Sequence[dict]) -> SiteDiff:
    old_keys = {s["key"]: s for s in old}
    new_keys = {s["key"]: s for s in new}
    return SiteDiff([s for k, s in new_keys.items() if k not in old_keys],
                    [s for k, s in old_keys.items() if k not in new_keys],
                    [s for k, s in new_keys.items() if k in old_keys])
