"""The run report: one self-contained HTML file.

No external assets: CSS inline, the plot hand-made inline SVG, no script,
no ``src=`` and no links except ``#`` anchors inside the page.  Every piece
of text from a log or a case is escaped.

Content, top to bottom:

* the verdict of each before-vs-after comparison and its diff table
  (:mod:`harness.checks.diff`), with the reasons of a mismatch, and for each
  detector report the structure layout around its buffer when
  :func:`harness.checks.enrich.annotate_outcome` found one;
* a timeline: the guest agent's status events per second, one line per
  run, on a time axis in seconds since boot (each run's series starts at
  its own boot-time offset, :attr:`RunTrace.series_start`), with a
  vertical mark where each report fired (:attr:`Report.timestamp`);
* per run, each signature's first report: its stack (symbolized when a
  symbolizer is given and the kernel has debug info) in a collapsible
  block, with the raw report text inside.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Sequence

from .. import jsonout
from ..reports.engine import Report, fold
from ..checks.caserun import CaseResult, RunTrace
from ..checks.diff import Outcome

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
MAX_RAW_LINES = 300

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0}
td,th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}
td.n{text-align:right;font-family:monospace}
.new{color:#b00;font-weight:bold}.fixed{color:#070;font-weight:bold}
.flaky{color:#a60}.unchanged{color:#666}
.ok{color:#070}.bad{color:#b00}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:12px;margin:.3em 0}
details{margin:.2em 0}summary{cursor:pointer}
.where{color:#555}.muted{color:#777}
pre.layout .buf{background:#fdd;font-weight:bold}pre.layout .share{background:#ffe8b0}
svg text{font:11px sans-serif}
"""


def _e(s: object) -> str:
    return escape(str(s), quote=True)


# --------------------------------------------------------------------------
# Plot


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values inside [lo, hi] (steps of 1, 2 or 5 x 10^k)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0]
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(1, target)
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10)), key=lambda st: abs(math.log(st / raw)))
    first = math.floor(lo / step) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        if v >= lo - step * 1e-9:
            ticks.append(round(v, 10))
        v += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def timeline_svg(runs: Sequence[RunTrace], *, width: int = 960, height: int = 320) -> str:
    """Inline SVG: status events per second per run, report marks."""
    ml, mr, mt = 60, 20, 16
    # Legend entries flow in rows under the x axis label.
    legend: list[tuple[float, int]] = []
    lx, row = float(ml), 0
    for r in runs:
        w = 24 + 7 * len(r.label)
        if lx + w > width - mr and lx > ml:
            lx, row = float(ml), row + 1
        legend.append((lx, row))
        lx += w
    mb = 48 + 16 * (row + 1)
    height += 16 * row
    pw, ph = width - ml - mr, height - mt - mb
    xs: list[float] = []
    ymax = 0
    for r in runs:
        if r.per_second:
            xs += [r.series_start, r.series_start + len(r.per_second) - 1]
            ymax = max(ymax, max(r.per_second))
        xs += [p.timestamp for p in r.reports if p.timestamp is not None]
    if not xs:
        return ('<p class="muted">No timeline: no per-second series and no report '
                'timestamps.</p>')
    x0, x1 = min(xs), max(xs)
    if x1 - x0 < 1:
        x1 = x0 + 1
    xt = nice_ticks(x0, x1)
    x0, x1 = min(x0, xt[0]), max(x1, xt[-1])
    yt = nice_ticks(0, max(ymax, 1), 5)
    if yt[-1] < ymax and len(yt) > 1:    # the top tick is above every point
        yt.append(round(yt[-1] + yt[1] - yt[0], 10))
    y1 = max(yt[-1], ymax, 1)

    def X(t: float) -> float:
        return ml + (t - x0) / (x1 - x0) * pw

    def Y(v: float) -> float:
        return mt + ph - v / y1 * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="status events per second">']
    out.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>')
    for v in yt:
        y = Y(v)
        out.append(f'<line x1="{ml - 4}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(_fmt(v))}</text>')
    for t in xt:
        x = X(t)
        out.append(f'<line x1="{x:.1f}" y1="{mt + ph}" x2="{x:.1f}" y2="{mt + ph + 4}" stroke="#999"/>')
        out.append(f'<text x="{x:.1f}" y="{mt + ph + 16}" text-anchor="middle">{_e(_fmt(t))}</text>')
    out.append(f'<text x="{ml + pw / 2:.1f}" y="{mt + ph + 32}" text-anchor="middle">'
               'seconds since boot</text>')
    out.append(f'<text transform="translate(14 {mt + ph / 2:.1f}) rotate(-90)" '
               'text-anchor="middle">status events / s</text>')
    for i, r in enumerate(runs):
        color = PALETTE[i % len(PALETTE)]
        if r.per_second:
            pts = " ".join(f"{X(r.series_start + k):.1f},{Y(v):.1f}"
                           for k, v in enumerate(r.per_second))
            out.append(f'<polyline class="series" fill="none" stroke="{color}" stroke-width="1.5" '
                       f'points="{pts}"><title>{_e(r.label)}</title></polyline>')
        seen = set()
        for p in r.reports:
            if p.timestamp is None:
                continue
            key = (round(p.timestamp, 1), p.title)
            if key in seen:
                continue
            seen.add(key)
            x = X(p.timestamp)
            out.append(f'<line class="mark" x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}" '
                       f'stroke="{color}" stroke-dasharray="3,3" stroke-width="1">'
                       f'<title>{_e(f"{r.label}: {p.timestamp:.3f}s {p.title}")}</title></line>')
        lx, row = legend[i]
        ly = mt + ph + 52 + 16 * row
        out.append(f'<rect x="{lx:.0f}" y="{ly - 9}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{lx + 14:.0f}" y="{ly}">{_e(r.label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Page


def _diff_section(outcome: Outcome) -> str:
    out = []
    shown_open = False
    for c in outcome.comparisons:
        d, v = c.diff, c.verdict
        state = ('<span class="ok">matches the expectation</span>' if v.matches
                 else '<span class="bad">does not match the expectation</span>')
        out.append(f"<h2>{_e(d.before_label)} vs {_e(d.after_label)}: {state}</h2>")
        if v.reasons:
            out.append("<ul>" + "".join(f"<li>{_e(r)}</li>" for r in v.reasons) + "</ul>")
        out.append(f'<table><tr><th>status</th><th>{_e(d.before_label)} '
                   f'({d.runs_before} runs)</th><th>{_e(d.after_label)} ({d.runs_after} runs)'
                   '</th><th>title</th><th>guilty frame</th></tr>')
        for r in d.rows:
            status = r.status + (f" ({r.flaky_side})" if r.status == "flaky" else "")
            out.append(f'<tr><td class="{_e(r.status)}">{_e(status)}</td>'
                       f'<td class="n">{_e(",".join(map(str, r.before_counts)))}</td>'
                       f'<td class="n">{_e(",".join(map(str, r.after_counts)))}</td>'
                       f"<td>{_e(r.title)}</td><td>{_e(r.guilty_frame or '')}"
                       + (f' <span class="where">{_e(r.location)}</span>' if r.location else "")
                       + "</td></tr>")
        if not d.rows:
            out.append('<tr><td colspan="5" class="muted">no kernel reports on either side</td></tr>')
        out.append("</table>")
        lays = [r for r in d.rows if getattr(r, "layout", None) is not None]
        for r in lays:
            # the first layout of the page is open; the rest (often the same
            # structure again) one click away
            first = r.layout.found and not shown_open
            shown_open = shown_open or first
            out.append(f'<details class="layout"{" open" if first else ""}>'
                       f"<summary>structure around the buffer: {_e(r.title)}</summary>"
                       + ("" if r.layout.found else f"<p>{_e(r.layout.summary())}</p>")
                       + f"{r.layout.format_html()}</details>")
        if v.notes:
            out.append('<details><summary class="muted">notes</summary><ul>'
                       + "".join(f"<li>{_e(n)}</li>" for n in v.notes) + "</ul></details>")
    return "\n".join(out)


def _stack_lines(run: RunTrace, rep: Report) -> list[str]:
    if run.frames is not None:
        try:
            return list(run.frames(rep))
        except Exception as e:  # a symbolizer failure must not lose the report
            return [*rep.stack_lines, f"(symbolization failed: {e})"]
    return list(rep.stack_lines)


def _reports_section(runs: Sequence[RunTrace]) -> str:
    out = ["<h2>Reports</h2>"]
    for i, run in enumerate(runs):
        sigs = fold(run.reports)
        src = f' <span class="muted">{_e(run.source)}</span>' if run.source else ""
        out.append(f'<h3 id="run-{i + 1}">{_e(run.label)}: {len(run.reports)} report(s), '
                   f"{len(sigs)} signature(s){src}</h3>")
        if not sigs:
            out.append('<p class="muted">no kernel reports</p>')
        for s in sigs:
            r = s.first
            when = f" at {r.timestamp:.3f}s" if r.timestamp is not None else ""
            trunc = " (truncated)" if r.truncated else ""
            stack = _stack_lines(run, r) or ["(no stack)"]
            raw = r.raw[:MAX_RAW_LINES]
            more = (f"\n... {len(r.raw) - MAX_RAW_LINES} more lines"
                    if len(r.raw) > MAX_RAW_LINES else "")
            out.append(f"<details><summary>{_e(s.title)} &times;{s.count}"
                       f'<span class="muted">{_e(when)}, log line {r.first_line}{_e(trunc)}'
                       f"</span></summary>"
                       f'<pre class="stack">{_e(chr(10).join(stack))}</pre>'
                       f'<details><summary class="muted">raw report</summary>'
                       f"<pre>{_e(chr(10).join(raw) + more)}</pre></details></details>")
    return "\n".join(out)


def render(outcome: Outcome, runs: Sequence[RunTrace], *, title: str = "dmaharness report",
           notes: Sequence[str] = ()) -> str:
    """The whole page as a string."""
    verdict = ('<p class="ok">Outcome: matches the expectation.</p>' if outcome.matches
               else '<p class="bad">Outcome: does NOT match the expectation.</p>')
    case = f"<p>Case: <b>{_e(outcome.case)}</b></p>" if outcome.case else ""
    extra = "".join(f'<p class="muted">{_e(n)}</p>' for n in notes)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>", case, verdict, extra,
        _diff_section(outcome),
        "<h2>Status events per second</h2>",
        timeline_svg(runs),
        _reports_section(runs),
        "</body></html>", ""])


def write(path: Path | str, outcome: Outcome, runs: Sequence[RunTrace], **kw) -> Path:
    """Render and write atomically; returns the path."""
    path = Path(path)
    jsonout.write_text(path, render(outcome, runs, **kw))
    return path


def write_case(res: CaseResult) -> Path:
    """A case run's page (`run --case`), where its result says it is."""
    return write(res.html, res.outcome, res.traces, title=res.title)
