"""A collected campaign as JUnit XML, for CI systems that read it.

One test case per job (a run: its report titles as output, a failure
when the job failed or never came back) and one per expected outcome (a
failure carries the verdict's reasons and the titles).  Takes what
harness.campaign.campaign.collect gives.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .campaign import Collected


def junit(col: Collected) -> str:
    """JUnit XML: one test case per job (a run), one per expected outcome."""
    name = col.campaign.about.get("case") or (
        "sweep" if col.campaign.kind == "sweep" else
        "bisect-" + Path(col.campaign.about.get("series", "series")).parent.name)
    cases = []
    for s in col.jobs:
        res = s.result or {}
        t = s.seconds
        body = ""
        if s.status != "done":
            body = (f"<failure message={quoteattr(s.status + ': ' + s.why)} type={quoteattr(s.status)}>"
                    f"{escape(s.job.command())}</failure>")
        elif "device" in res and res.get("command") == "sweep":
            d = res["device"]
            body = (f"<system-out>{escape(d['state'] + chr(10) + chr(10).join(d['reports']))}"
                    "</system-out>")
        elif "bisect_run" in res:
            o = res["bisect_run"]
            body = f"<system-out>{escape(o['status'] + ' ' + ' '.join(o['titles']))}</system-out>"
        else:
            titles = [x["title"] for x in res.get("signatures", [])]
            body = f"<system-out>{escape(chr(10).join(titles))}</system-out>"
        cases.append(f'  <testcase classname={quoteattr(name + ".runs")} name={quoteattr(s.job.id)} '
                     f'time="{t:.3f}">{body}</testcase>')
    if col.campaign.kind == "bisect":
        r = col.bisection
        body = ""
        if r is None or not r.found:
            why = "the campaign is incomplete" if r is None else (r.error or "no single culprit")
            body = f'<failure message={quoteattr(why)} type="bisect"/>'
        label = f"culprit {r.culprit}" if r and r.found else "culprit"
        cases.append(f'  <testcase classname={quoteattr(name + ".bisect")} '
                     f'name={quoteattr(label)} time="0">{body}</testcase>')
    elif col.campaign.kind == "sweep":
        sw = col.sweep
        body = ""
        if sw is None:
            body = '<failure message="the campaign is incomplete" type="incomplete"/>'
        elif not sw.ok:
            bad = [f"{r.device}: {r.reason}" for r in sw.runs if r.state == "failed"]
            body = (f'<failure message={quoteattr("; ".join(bad))} type="boot">'
                    f"{escape(chr(10).join(bad))}</failure>")
        sites = "" if sw is None else escape("\n".join(x.title for x in sw.table.sites))
        cases.append(f'  <testcase classname={quoteattr(name + ".sweep")} name="sites" '
                     f'time="0">{body}<system-out>{sites}</system-out></testcase>')
    elif col.outcome is not None:
        for comp in col.outcome.comparisons:
            label = f"{comp.diff.before_label} vs {comp.diff.after_label}"
            body = ""
            if not comp.verdict.matches:
                titles = [r.title for r in comp.diff.rows if r.status in ("new", "unchanged", "flaky")]
                body = (f"<failure message={quoteattr('; '.join(comp.verdict.reasons))} "
                        f'type="verdict">{escape(chr(10).join(titles))}</failure>')
            cases.append(f'  <testcase classname={quoteattr(name + ".expect")} '
                         f'name={quoteattr(label)} time="0">{body}</testcase>')
    else:
        cases.append(f'  <testcase classname={quoteattr(name + ".expect")} name="outcome" time="0">'
                     f'<failure message="the campaign is incomplete" type="incomplete"/></testcase>')
    fails = sum(1 for c in cases if "<failure" in c)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites><testsuite name={quoteattr("dmaharness." + name)} tests="{len(cases)}" '
            f'failures="{fails}" errors="0">\n' + "\n".join(cases) + "\n</testsuite></testsuites>\n")
