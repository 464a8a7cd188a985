"""Where a bisected signature points in the code, and which patches touch it.

After a bisection, one report of the signature (from a run of the culprit
step, else of another bad step) is enriched against the build that printed
it (:func:`harness.checks.enrich.enrich`): its guilty frame's file:line, its first
driver frames with the patches of the series that change them, and, for a
detector report, the structure around the buffer with the patches that
change that structure; and what the culprit patch itself changes
(:func:`culprit_changes`).  The result is bisect's ``result.json`` ``"where"``;
:func:`format_pointing` is its text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..kernel import kbuild, series
from ..reports import engine, frames
from . import bisect
from .enrich import enrich

FRAMES = 4          # the report's first frames outside the machinery shown


def signature_report(res: bisect.Result, matcher: bisect.Matcher
                     ) -> Optional[tuple[int, Path, engine.Report]]:
    """(prefix, console log, report) of the first report of the signature
    in a hit run of a bad step, the culprit's steps first."""
    bad = [s for s in res.steps if s.verdict == bisect.BAD]
    bad.sort(key=lambda s: s.prefix != res.culprit)
    for step in bad:
        for run in step.runs:
            console = Path(run.detail) / "console.log"
            if run.status != bisect.HIT or not console.is_file():
                continue
            rep = next((r for r in engine.parse(console.read_text(errors="replace"))
                        if matcher.matches(r.title)), None)
            if rep is not None:
                return step.prefix, console, rep
    return None


def point_at_code(res: bisect.Result, user: list[series.Patch], matcher: bisect.Matcher,
                  tree_for: Callable[[int], Optional[kbuild.BuildResult]]) -> Optional[dict]:
    """For the signature: the guilty frame, the driver frames of its stack and
    the patches of the series that touch them (and, for a detector report,
    the structure around the buffer), and what the culprit patch changes
    (``culprit_changes``, when there is a culprit).  None when no run kept a
    report of the signature.

    `tree_for(prefix)` gives the build of a prefix with its work tree
    present (file:line and the layout recompile its files), or None.
    """
    found = signature_report(res, matcher)
    if found is None:
        return None
    prefix, console, rep = found
    build = tree_for(prefix)
    en = enrich(rep, build.artifacts.dir) if build is not None else None
    where = en.where() if en is not None else {}
    out: dict = {"report": rep.title, "console": str(console), "guilty_frame": rep.guilty_frame,
                 "location": en.location if en is not None else None,
                 "frames": [], "structure": None, "patches_touching_structure": []}
    for fn in [f for f in rep.stack if not frames.is_machinery(f)][:FRAMES]:
        out["frames"].append({"function": fn, "location": where.get(fn),
                              "patches": _touching(user, lambda p: series.touches_function(p, fn))})
    if en is not None and en.layout_error is not None:
        out["structure_error"] = en.layout_error
    lay = en.layout if en is not None else None
    if lay is not None and lay.found:
        out["structure"] = lay.to_json()
        out["structure_text"] = lay.format_text()
        name = (lay.struct or "").split()[-1]
        if name:
            out["patches_touching_structure"] = _touching(
                user, lambda p: series.touches_struct(p, name))
    if res.culprit is not None:
        out["culprit_changes"] = culprit_changes(user[res.culprit - 1])
    return out


def _touching(user: Sequence[series.Patch], test: Callable[[series.Patch], bool]) -> list[int]:
    """1-based numbers of the patches for which `test` holds."""
    return [i + 1 for i, p in enumerate(user) if test(p)]


_STRUCT_HEAD = re.compile(r"\bstruct \w+(?= \{)")


def culprit_changes(patch: series.Patch) -> dict:
    """What a patch changes: files, functions and the structs whose
    definition a hunk is in (``result.json``'s ``where.culprit_changes``)."""
    hs = series.hunks(patch)
    return {"files": sorted({h.file for h in hs}),
            "functions": sorted({f for h in hs for f in h.functions}),
            "structs": sorted({m.group(0) for h in hs
                               for m in [_STRUCT_HEAD.search(h.context)] if m})}


def format_pointing(pt: dict, names: list[str], culprit: Optional[int]) -> str:
    """The text of point_at_code's result (`names`: the series' patches)."""
    mark = lambda n: f"{n}*" if n == culprit else str(n)   # noqa: E731
    lines = [f"where: {pt['report']}"]
    for f in pt["frames"]:
        pl = ", ".join(mark(n) for n in f["patches"]) or "none"
        lines.append(f"  {f['function']:32} {f['location'] or '':40} patches touching it: {pl}")
    if pt.get("structure_text"):
        lines.append("  " + pt["structure_text"].rstrip().replace("\n", "\n  "))
        pl = ", ".join(mark(n) for n in pt["patches_touching_structure"]) or "none"
        lines.append(f"  patches touching the structure: {pl}")
    if culprit:
        changed = pt.get("culprit_changes") or {}
        if changed:
            what = changed.get("functions", []) + changed.get("structs", [])
            lines.append(f"  the culprit changes: {', '.join(what) or '-'}"
                         f" in {', '.join(changed.get('files', []))}")
        lines.append("  (* the culprit)")
    return "\n".join(lines)
