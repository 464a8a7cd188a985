"""One enrichment step: a kernel report with its file:line and its structure.

A parsed report (:class:`harness.reports.engine.Report`) names functions; the
variant that printed it (its artifacts folder, whose ``meta.json`` names
the work tree) knows where they are.  :func:`enrich` gives:

* the report's stack as :class:`harness.kernel.symbolize.Frame` objects, with
  file:line where they can be found (:mod:`harness.kernel.symbolize`, which
  recompiles a file with ``-g`` when the build has no debug info);
* the guilty frame's file:line;
* for a detector report or a ``KASAN: dma-owned`` report (any report whose
  lines carry the detector's ``[object offset=...]`` numbers), the layout
  of the structure around the DMA buffer (:mod:`harness.reports.layout`), or a
  Layout whose note says why there is none.

Enrichment is a view: it never raises over a missing tool, a pruned work
tree or a compiler failure.  What went wrong is in the result.

Case diffs use :func:`annotate_outcome` (every row with an example report);
bisect uses :func:`enrich` on the culprit's report (:mod:`harness.checks.pointing`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from ..kernel import recompile, symbolize
from ..progress import Progress
from ..reports import archlayout, exposure, layout
from ..reports.engine import Report
from .diff import Outcome, example_rows


@dataclass(frozen=True)
class Enrichment:
    """What a built variant adds to one of its reports."""

    frames: tuple[symbolize.Frame, ...]    # the report's stack; file/line where found
    location: Optional[str] = None         # file:line of the guilty frame
    layout: Optional[layout.Layout] = None   # detector / dma-owned reports only; a
                                             # Layout with a note when none was found
    layout_error: Optional[str] = None     # the layout's computation failed (why)
    frames_error: Optional[str] = None     # symbolization failed (why); frames as printed

    def where(self) -> dict[str, str]:
        """function -> file:line of the symbolized frames (the last frame of a
        function that appears twice wins)."""
        return {f.function: f.where for f in self.frames if f.function and f.where}


def enrich(report: Report, artifacts_dir: Path | str, *, with_layout: bool = True
           ) -> Enrichment:
    """File:line, the guilty location and (`with_layout`) the structure
    layout of `report`, against the variant built in `artifacts_dir`.

    The symbolizer and the layout finder are the process-wide ones of the
    folder (:func:`harness.kernel.symbolize.symbolizer`,
    :func:`harness.reports.layout.finder`), so their caches serve every report of
    the variant.
    """
    frames_error = None
    try:
        frames = tuple(symbolize.symbolizer(artifacts_dir).symbolize_report(report))
    except Exception as e:  # a view: never fail the caller over it
        frames = tuple(symbolize.parse_frame(t) for t in report.stack_lines)
        frames_error = f"symbolization failed: {e}"
    lay, error = (_layout(report, artifacts_dir) if with_layout else (None, None))
    return Enrichment(frames, symbolize.guilty_location(frames, report.guilty_frame),
                      lay, error, frames_error)


def _layout(report: Report, artifacts_dir: Path | str
            ) -> tuple[Optional[layout.Layout], Optional[str]]:
    """(Layout or None when the report has no detector numbers, error); a
    sharing, overflow or dma-owned report's layout says on which machines it corrupts."""
    try:
        lay, error = layout.report_layout(report, artifacts_dir), None
    except Exception as e:  # a view: never fail the caller over it
        facts = layout.report_facts(report)
        lay, error = (layout.Layout(facts, note=f"layout failed: {e}") if facts else None), str(e)
    if lay is not None and lay.facts.rule in ("sharing", "overflow", "owned"):
        if lay.found and not lay.arch_layouts:
            lay.arch_layouts = arch_layouts(lay, artifacts_dir)
        alloc = next((v for h, v in report.aux_stacks.items() if h.startswith("Allocated by")),
                     [])
        verdicts = exposure.assess(lay.facts, _version(artifacts_dir), lay=lay,
                                   alloc_stack=alloc)
        lay.exposure = [v.to_json() for v in verdicts]
        lay.exposure_summary = exposure.summary(verdicts)
    return lay, error


def arch_layouts(lay: layout.Layout, artifacts_dir: Path | str) -> dict:
    """The layout's buffer as each architecture's compiler lays it out
    (harness.reports.archlayout), from the variant's work tree and its
    x86_64 .config (the same options on every side); arch -> why not when
    that fails."""
    art = Path(artifacts_dir)
    try:
        base = (art / "config").read_text(errors="replace")
    except OSError:
        base = ""
    try:
        return archlayout.for_layout(lay, recompile.work_tree(art), base, progress=Progress())
    except Exception as e:  # a view: never fail the caller over it
        return {a: f"cross layout failed: {e}"[:300] for a in archlayout.selected()}


def _version(artifacts_dir: Path | str) -> Optional[str]:
    """The X.Y of the kernel built in `artifacts_dir` (its meta.json), or None."""
    try:
        v = json.loads((Path(artifacts_dir) / "meta.json").read_text()).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return v if isinstance(v, str) and re.fullmatch(r"\d+\.\d+", v) else None


def annotate_outcome(outcome: Outcome,
                     artifacts_by_label: Mapping[str, Path | str | None]) -> None:
    """Give every row of a case outcome that has an example report its
    symbolized stack (``row.frames``), its guilty location
    (``row.location``) and, for detector reports, its layout
    (``row.layout``).

    `artifacts_by_label` maps a side's label (the variant names the diff
    was made with) to that variant's artifacts folder; rows whose example
    comes from a side without one are left alone.  A report shared by
    several comparisons (the before side of a case with several after
    variants) is enriched once.
    """
    done: dict[tuple[int, str], Enrichment] = {}
    for row, label in example_rows(outcome):
        art = artifacts_by_label.get(label)
        if art is None:
            continue
        key = (id(row.example), str(art))
        if key not in done:
            done[key] = enrich(row.example, art)
        e = done[key]
        row.frames = list(e.frames)
        row.location = e.location
        row.layout = e.layout
