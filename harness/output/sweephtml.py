"""The sweep's triage table as one self-contained HTML file (``sweep.html``).

The same rules as harness.output.htmlreport: CSS inline, no script, no ``src=``
and no links except ``#`` anchors inside the page; every piece of text
from the sweep (titles, stacks, console lines, paths) is escaped.

Input is the sweep's JSON (harness.checks.sweep.SweepResult.to_json(), plus
``baseline`` when the CLI compared with an earlier sweep), so a page can be
rendered again from any saved ``sweep.json``.  Content, top to bottom:

* a header: kernel, profile, build key, wall time, counts;
* the triage table, one row per site, ranked as the sweep ranks them
  (harness.checks.sweeptable.rank): sites real on some architecture first,
  then those with a ``KASAN: dma-owned`` access (writes before reads),
  marked, each linking to its details; a folded site says how many rows
  of one buffer it holds;
* per site: the structure layout around the buffer (harness.reports.layout's
  view), the mapping stack and the console excerpt;
* the diff against the baseline (new, gone, unchanged), when there is one;
* the devices: state, reason (skipped and failed ones say why), reports,
  wall time; then the reports that are not sites.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from typing import Optional

from .. import jsonout
from ..progress import fmt_duration
from ..reports import layout

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin-top:1.4em}
table{border-collapse:collapse;margin:.5em 0}
td,th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}
td.n{text-align:right;font-family:monospace;white-space:nowrap}code,.mono{font-family:monospace}
tr.owned{background:#fde8e8}tr.owned td:first-child{border-left:4px solid #b00}
.owned-yes{color:#b00;font-weight:bold}.ok{color:#070}.bad{color:#b00}
.new{color:#b00;font-weight:bold}.gone{color:#070;font-weight:bold}.unchanged{color:#666}
.skipped{color:#a60}.failed{color:#b00;font-weight:bold}.ran{color:#070}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:12px;margin:.3em 0}
details{margin:.2em 0}summary{cursor:pointer}
.muted{color:#777}.small{font-size:12px}
pre.layout .buf{background:#fdd;font-weight:bold}pre.layout .share{background:#ffe8b0}
"""


def _e(s: object) -> str:
    return escape("" if s is None else str(s), quote=True)


def _list(v: object) -> list:
    return v if isinstance(v, list) else []


# --- the layout ---------------------------------------------------------------------

def layout_from_json(j: object) -> Optional[layout.Layout]:
    """A harness.reports.layout.Layout back from its to_json(); None when `j` is not one
    (absent, or written by a harness whose fields differ)."""
    if not isinstance(j, dict):
        return None
    try:
        def rows(ms: object) -> list[layout.Row]:
            return [layout.Row(**m) for m in _list(ms)]
        lines = _list(j.get("lines"))
        return layout.Layout(
            layout.DmaFacts(**j["facts"]), j.get("struct"), j.get("kind") or "struct",
            j.get("size"), j.get("source"), j.get("tool"), j.get("fit"),
            [(int(x["start"]), int(x["end"])) for x in lines],
            [rows(x.get("members")) for x in lines], j.get("buffer"), rows(j.get("sharing")),
            [str(c) for c in _list(j.get("candidates"))], j.get("note"))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _layout_html(site: dict) -> str:
    lay = layout_from_json(site.get("layout"))
    if lay is not None:
        return lay.format_html()
    summary = site.get("layout_summary") or "no structure layout (no built kernel to read it from)"
    return f'<p class="muted">{_e(summary)}</p>'


# --- parts of the page --------------------------------------------------------------

def _what(s: dict) -> str:
    if s.get("struct"):
        return f"{s['struct']}.{s.get('member') or '?'}"
    return f"{s.get('length', '?')} bytes"


def _where(s: dict) -> str:
    return f"{s.get('cache', '?')}+{s.get('offset', '?')}:{s.get('length', '?')}"


def _neighbours(s: dict) -> str:
    return ", ".join(map(str, _list(s.get("neighbours")))) or "-"


def _anchors(sites: list[dict]) -> dict[str, str]:
    return {s.get("key", ""): f"site-{i}" for i, s in enumerate(sites, 1)}


def _header(p: dict, sites: list[dict], devices: list[dict]) -> str:
    build = p.get("build") if isinstance(p.get("build"), dict) else {}
    states = Counter(d.get("state") for d in devices)
    owned = sum(1 for s in sites if s.get("dma_owned"))
    rows = [("kernel", p.get("kernel")), ("profile", p.get("profile"))]
    if p.get("tree"):
        rows.append(("tree", f"{p['tree']} @ {p.get('commit') or '?'}"
                             + (" (dirty)" if p.get("dirty") else "")))
    rows += [("build", f"{build.get('key') or '?'}" + (" (cached)" if build.get("cached") else "")),
             ("wall time", fmt_duration(float(p.get("wall_seconds") or 0))),
             ("boots", f"{states['ran']} ran, {states['failed']} failed, "
                       f"{states['skipped']} device(s) skipped"),
             ("sites", f"{len(sites)}, {owned} with a CPU access to device-owned bytes"),
             ("run folder", p.get("run_dir"))]
    verdict = ('<p class="ok">Every boot ran.</p>' if p.get("ok", True)
               else '<p class="bad">Some boots failed (see Devices).</p>')
    nav = ['<a href="#sites">sites</a>']
    if isinstance(p.get("baseline"), dict):
        nav.append('<a href="#baseline">baseline</a>')
    nav.append('<a href="#devices">devices</a>')
    if _list(p.get("other_reports")):
        nav.append('<a href="#other">other reports</a>')
    return ("<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
            + "</table>" + verdict + "<p>" + " &middot; ".join(nav) + "</p>")


def _triage(sites: list[dict]) -> str:
    out = ['<h2 id="sites">Sites</h2>']
    if not sites:
        return out[0] + '<p class="muted">no sharing sites</p>'
    out.append('<p class="muted small">A row is a driver function mapping a buffer that shares '
               'a cache line with other data of its object (or maps past it). dma-owned: a '
               'CPU access to the device-owned bytes was seen while mapped.</p>')
    out.append("<table><tr><th>#</th><th>function &larr; caller</th><th>buffer</th>"
               "<th>cache+offset:length</th><th>direction</th><th>neighbours in the line</th>"
               "<th>devices</th><th>boots</th><th>dma-owned</th><th>corrupts on</th></tr>")
    for i, s in enumerate(sites, 1):
        caller = f' <span class="muted">&larr; {_e(s["caller"])}</span>' if s.get("caller") else ""
        if s.get("dma_owned"):
            titles = "; ".join(_list(s.get("dma_owned_titles")))
            owned = (f'<span class="owned-yes">{_e(_access(s))}</span> '
                     f'({_e(s.get("dma_owned_boots", 0))} boot(s)): {_e(titles)}')
        else:
            owned = '<span class="muted">no</span>'
        rule = "" if s.get("rule", "sharing") == "sharing" else f" ({_e(s['rule'])})"
        folded = s.get("folded") if isinstance(s.get("folded"), dict) else None
        if folded:
            rule += (f' <span class="small">({_e(folded.get("rows"))} rows of one buffer, '
                     f'offsets {_e(_offsets(folded))})</span>')
        row = ' class="owned"' if s.get("dma_owned") else ""
        out.append(f"<tr{row}>"
                   f'<td class="n"><a href="#site-{i}">{i}</a></td>'
                   f'<td><a href="#site-{i}"><code>{_e(s.get("function"))}</code></a>{caller}</td>'
                   f"<td><code>{_e(_what(s))}</code>{rule}</td><td><code>{_e(_where(s))}</code></td>"
                   f"<td>{_e(s.get('direction') or '?')}</td>"
                   f'<td class="small">{_e(_neighbours(s))}</td>'
                   f"<td>{_e(', '.join(map(str, _list(s.get('devices')))))}</td>"
                   f'<td class="n">{_e(s.get("boots", 0))}</td><td>{owned}</td>'
                   f'<td class="small">{_e(_corrupts_on(s))}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _corrupts_on(site: dict) -> str:
    """The architectures where the site corrupts, from its exposure rows."""
    rows = [r for r in _list(site.get("exposure")) if isinstance(r, dict)]
    if not rows:
        return "?"          # a sweep written before the exposure rows
    bad = [str(r.get("arch")) for r in rows if r.get("verdict") == "corrupts"]
    return ", ".join(bad) or "none: x86 layout only"


def _access(site: dict) -> str:
    """'write', 'read' or 'yes' (a sweep before the access was told)."""
    a = site.get("dma_owned_access")
    return a if a in ("write", "read") else "yes"


def _offsets(folded: dict) -> str:
    offs = [str(o) for o in _list(folded.get("offsets"))]
    return ", ".join(offs[:8]) + (" ..." if len(offs) > 8 else "")


def rank(site: dict) -> tuple[int, int]:
    """Real on some architecture first, then dma-owned writes, other
    accesses, reads, then the rest (a sweep without exposure rows: its
    dma-owned sites first, as it ranked them)."""
    real = 0 if any(isinstance(r, dict) and r.get("verdict") == "corrupts"
                    for r in _list(site.get("exposure"))) else 1
    if not site.get("dma_owned"):
        return real, 3
    return real, {"write": 0, "read": 2}.get(str(site.get("dma_owned_access")), 1)


def _exposure_html(site: dict) -> str:
    rows = [r for r in _list(site.get("exposure")) if isinstance(r, dict)]
    if not rows:
        return ""
    body = "".join(f"<tr><td><code>{_e(r.get('arch'))}</code></td><td>{_e(r.get('verdict'))}"
                   f"</td><td class=\"n\">{_e(r.get('line') or '-')}</td>"
                   f"<td class=\"small\">{_e(r.get('why'))}</td></tr>" for r in rows)
    status = f"{site['status']}: " if isinstance(site.get("status"), str) else ""
    return ("<details open><summary>exposure on real machines "
            f"<span class=\"muted\">{_e(status)}{_e(site.get('exposure_summary') or '')}"
            "</span></summary>"
            "<table><tr><th>architecture</th><th>verdict</th><th>line</th><th>why</th></tr>"
            f"{body}</table></details>")


def _details(sites: list[dict]) -> str:
    out = []
    for i, s in enumerate(sites, 1):
        ev = s.get("evidence") if isinstance(s.get("evidence"), dict) else {}
        mark = ' <span class="owned-yes">dma-owned</span>' if s.get("dma_owned") else ""
        out.append(f'<h3 id="site-{i}">#{i} <code>{_e(s.get("function"))}</code>{mark}</h3>')
        out.append(f'<p>{_e(s.get("title"))}<br><span class="muted">key <code>{_e(s.get("key"))}'
                   "</code>" + (f"; at {_e(s['location'])}" if s.get("location") else "")
                   + "</span></p>")
        if s.get("dma_owned"):
            out.append("<ul>" + "".join(f"<li>{_e(t)}</li>"
                                        for t in _list(s.get("dma_owned_titles"))) + "</ul>")
        out.append(_layout_html(s))
        out.append(_exposure_html(s))
        stack = _list(ev.get("stack"))
        out.append(f"<details><summary>mapping stack ({len(stack)} frames)</summary>"
                   f"<pre>{_e(chr(10).join(map(str, stack)) or '(no stack)')}</pre></details>")
        where = f"{ev['console']}:{ev.get('first_line', 0)}" if ev.get("console") else "no console"
        out.append(f"<details><summary>console excerpt <span class=\"muted\">{_e(where)}</span>"
                   f"</summary><pre>{_e(chr(10).join(map(str, _list(ev.get('excerpt')))))}"
                   "</pre></details>")
    return "\n".join(out)


def _baseline(b: dict, anchors: dict[str, str]) -> str:
    groups = [(w, _list(b.get(w))) for w in ("new", "gone", "unchanged")]
    out = [f'<h2 id="baseline">Against the baseline {_e(b.get("file"))}</h2>',
           "<p>" + ", ".join(f"{len(rows)} {w}" for w, rows in groups) + "</p>"]
    if not any(rows for _, rows in groups):
        return "\n".join(out)
    out.append("<table><tr><th>status</th><th>site</th><th>dma-owned</th><th>devices</th></tr>")
    for w, rows in groups:
        for s in rows:
            key = _e(s.get("key"))
            link = anchors.get(s.get("key")) if w != "gone" else None
            site = f'<a href="#{link}"><code>{key}</code></a>' if link else f"<code>{key}</code>"
            owned = '<span class="owned-yes">yes</span>' if s.get("dma_owned") else "no"
            out.append(f'<tr><td class="{w}">{w}</td><td>{site}</td><td>{owned}</td>'
                       f"<td>{_e(', '.join(map(str, _list(s.get('devices')))))}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _devices(devices: list[dict]) -> str:
    out = ['<h2 id="devices">Devices</h2>',
           "<table><tr><th>device</th><th>class</th><th>state</th><th>reason</th>"
           "<th>reports</th><th>wall</th></tr>"]
    for d in devices:
        state = str(d.get("state") or "?")
        cls = state if state in ("ran", "failed", "skipped") else ""
        titles = Counter(map(str, _list(d.get("reports"))))
        reps = "<br>".join(_e(t) + (f" &times;{n}" if n > 1 else "")
                           for t, n in titles.items()) or '<span class="muted">none</span>'
        reason = _e(d.get("reason") or "")
        if d.get("console"):
            reason += f'{"<br>" if reason else ""}<span class="muted small">{_e(d["console"])}</span>'
        wall = "" if state == "skipped" else f"{float(d.get('wall_seconds') or 0):.0f} s"
        out.append(f"<tr><td><code>{_e(d.get('device'))}</code></td><td>{_e(d.get('class'))}</td>"
                   f'<td class="{cls}">{_e(state)}</td><td>{reason}</td><td>{reps}</td>'
                   f'<td class="n">{_e(wall)}</td></tr>')
    if not devices:
        out.append('<tr><td colspan="6" class="muted">no device</td></tr>')
    out.append("</table>")
    return "\n".join(out)


# the USB sweep's figures (harness.checks.usbsweep.figures), in the page's words
_FIGURES = (("drivers", "USB/HID drivers with an ID table built"), ("bound", "bound"),
            ("unbound", "not bound"), ("firmware", "need firmware"),
            ("bound_share_of_tried_without_firmware", "bound share of those tried without "
             "firmware"), ("workload_ran", "bound, class workload ran"),
            ("workload_no_node", "bound, no node to exercise"),
            ("workload_classes", "drivers per class of node"),
            ("sites", "sites"), ("sites_real", "sites that corrupt, per architecture"),
            ("sites_dma_owned", "sites with dma-owned evidence"),
            ("sites_dma_owned_write", "of which CPU writes"), ("boots", "boots"),
            ("wall_seconds", "wall time (s)"))


def _figures(figures) -> str:
    if not isinstance(figures, dict):
        return ""
    rows = []
    for key, words in _FIGURES:
        if key not in figures:
            continue
        v = figures[key]
        if isinstance(v, dict):
            v = ", ".join(f"{k} {n}" for k, n in v.items()) or "none"
        elif key.endswith("_share_of_tried_without_firmware") and isinstance(v, (int, float)):
            v = f"{100 * v:.0f}%"
        rows.append(f"<tr><td>{_e(words)}</td><td>{_e(v)}</td></tr>")
    return ('<h2 id="figures">Figures</h2><table>' + "".join(rows) + "</table>") if rows else ""


def _other(other: list[dict]) -> str:
    if not other:
        return ""
    return ('<h2 id="other">Other reports</h2><p class="muted small">Kernel reports that are '
            "not sharing sites.</p><table><tr><th>title</th><th>devices</th></tr>"
            + "".join(f"<tr><td>{_e(o.get('title'))}</td>"
                      f"<td>{_e(', '.join(map(str, _list(o.get('devices')))))}</td></tr>"
                      for o in other if isinstance(o, dict))
            + "</table>")


# --- the page -----------------------------------------------------------------------

def render(payload: dict) -> str:
    """The whole page as a string."""
    sites = [s for s in _list(payload.get("sites")) if isinstance(s, dict)]
    sites.sort(key=rank)                  # stable: the sweep's order otherwise
    devices = [d for d in _list(payload.get("devices")) if isinstance(d, dict)]
    title = f"dmaharness sweep: {payload.get('kernel') or '?'} ({payload.get('profile') or '?'})"
    base = payload.get("baseline")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _header(payload, sites, devices),
        _figures(payload.get("figures")),
        _triage(sites),
        _details(sites),
        _baseline(base, _anchors(sites)) if isinstance(base, dict) else "",
        _devices(devices),
        _other(_list(payload.get("other_reports"))),
        "</body></html>", ""])


def write(path: Path, payload: dict) -> None:
    """Render and write atomically (a temporary file renamed into place)."""
    jsonout.write_text(Path(path), render(payload))
