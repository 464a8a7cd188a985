"""harness.output.htmlreport: a self-contained, well-formed, escaped page."""

import unittest
from html.parser import HTMLParser
from pathlib import Path

from harness.checks import diff
from harness.output import htmlreport
from harness.checks.caserun import RunTrace
from harness.devices import agentresult
from harness.reports.engine import parse

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "diff"
VOID = {"meta", "br", "hr", "img", "input", "link", "rect", "line", "polyline", "path",
        "circle"}


class _Checker(HTMLParser):
    """Collects tags, attributes and text; checks that tags nest."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID and (not self.stack or self.stack[-1] != tag):
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check(page: str) -> _Checker:
    c = _Checker()
    c.feed(page)
    c.close()
    return c


def log_runs(*names):
    return [parse((FIX / n).read_text()) for n in names]


class HtmlTest(unittest.TestCase):
    def setUp(self):
        before = log_runs("before-1.log", "before-2.log")
        after = log_runs("after-1.log", "after-new.log")
        self.outcome = diff.Outcome([diff.compare(before, after, None, before_label="bug",
                                                  after_label="fix")], "uvc-status-buffer")
        self.runs = [
            RunTrace("bug #1", before[0], [900, 1000, 1010, 990], 29.0,
                                source="/runs/a/console.log"),
            RunTrace("bug #2", before[1], [880, 1005], 29.5),
            RunTrace("fix #1", after[0], [1000, 1000, 1000], 28.0),
            RunTrace("fix #2", after[1], [], 0.0,
                                frames=lambda r: [f"{ln}  drivers/x.c:1" for ln in r.stack_lines]),
        ]

    def test_page(self):
        self.outcome.comparisons[0].diff.rows[0].location = "drivers/media/usb/uvc/uvc_status.c:312"
        page = htmlreport.render(self.outcome, self.runs, title="uvc <case>")
        c = check(page)
        self.assertEqual(c.errors, [])
        self.assertEqual(c.stack, [])          # every element closed
        text = "".join(c.text)
        for t in ("DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start",
                  "KASAN: dma-owned Write in uvc_status_stop",
                  "KASAN: slab-out-of-bounds Read in uvc_status_complete",
                  "WARNING in do_one_initcall"):      # device_add* frames are skipped, as syzkaller does
            self.assertIn(t, text)
        self.assertIn("uvc <case>", text)      # the title, unescaped by the parser
        self.assertNotIn("<case>", page)       # ... but escaped in the page
        self.assertIn("does NOT match", text)
        self.assertIn("uvc_status_start+0x4f/0x70 [uvcvideo]", text)   # a stack
        self.assertIn("drivers/x.c:1", text)   # the symbolized one
        self.assertIn("uvc_status.c:312", text)  # a guilty frame's location
        tags = [t for t, _ in c.tags]
        self.assertIn("svg", tags)
        self.assertIn("details", tags)
        self.assertNotIn("script", tags)
        for tag, attrs in c.tags:
            self.assertNotIn("src", attrs, tag)
            if "href" in attrs:
                self.assertTrue(attrs["href"].startswith("#"), attrs)
            if tag == "link":
                self.fail("external stylesheet")
        self.assertNotIn("src=", page)
        self.assertNotIn("href=", page)

    def test_layout_section(self):
        from harness.reports import layout
        from tests.unit.reports.test_layout import SHARING, pahole_structs
        f = layout.parse_facts(SHARING)
        cand, best = layout.choose(pahole_structs(), f)
        rows = self.outcome.comparisons[0].diff.rows
        rows[0].layout = layout.build_layout(f, cand, pahole_structs(), source="drivers/x.c",
                                             tool="pahole", others=best)
        rows[1].layout = layout.Layout(f, note="no <struct> here")
        page = htmlreport.render(self.outcome, self.runs)
        c = check(page)
        self.assertEqual((c.errors, c.stack), ([], []))
        text = "".join(c.text)
        self.assertIn("struct uvc_device: 1144 bytes", text)
        self.assertIn("u8 status[16];  <== buffer", text)
        self.assertIn("bool flush_status;  <-- shares the line", text)
        self.assertIn("no <struct> here", text)
        self.assertNotIn("no <struct>", page)

    def test_plot(self):
        svg = htmlreport.timeline_svg(self.runs)
        c = check(svg)
        self.assertEqual(c.errors, [])
        lines = [a for t, a in c.tags if t == "polyline"]
        self.assertEqual(len(lines), 3)        # fix #2 has no series
        self.assertEqual(len(lines[0]["points"].split()), 4)
        marks = [a for t, a in c.tags if t == "line" and a.get("class") == "mark"]
        # bug #1: stock WARNING at 2.0, sharing at 30.1 (twice: one mark),
        # KASAN at 34.5; bug #2: 2.0, 30.1; fix #1: 2.0; fix #2: 2.0, 40.2.
        self.assertEqual(len(marks), 8)
        # Marks sit at their timestamps on the same axis as the series.
        x = {round(float(m["x1"]), 1) for m in marks}
        self.assertEqual(len(x), 4)
        pts = [float(p.split(",")[0]) for p in lines[0]["points"].split()]   # t = 29..32
        x2, x30, x34, x40 = sorted(x)
        self.assertLess(x2, pts[0])
        self.assertTrue(pts[1] < x30 < pts[2])
        self.assertGreater(x34, pts[-1])
        # Equal seconds are equal distances apart.
        self.assertAlmostEqual(pts[1] - pts[0], pts[3] - pts[2], places=1)
        self.assertAlmostEqual((x40 - x34) / (pts[1] - pts[0]), 40.2 - 34.5, places=1)
        self.assertIn("seconds since boot", "".join(c.text))

    def test_points_inside_the_frame(self):
        runs = [RunTrace("a", [], [0, 1234, 17, 600], 3.0)]
        c = check(htmlreport.timeline_svg(runs, height=320))
        frame = next(a for t, a in c.tags if t == "rect")
        top, bottom = float(frame["y"]), float(frame["y"]) + float(frame["height"])
        ys = [float(p.split(",")[1]) for a in (a for t, a in c.tags if t == "polyline")
              for p in a["points"].split()]
        self.assertEqual(len(ys), 4)
        self.assertTrue(all(top <= y <= bottom for y in ys), (top, bottom, ys))
        self.assertEqual(max(ys), bottom)      # 0 on the axis
        labels = [t for t in c.text if t.strip().isdigit()]
        self.assertIn("1400", labels)          # a tick above the maximum

    def test_legend_wraps(self):
        runs = [RunTrace(f"fix-coherent-variant #{i}", [], [i, i + 1], 1.0)
                for i in range(8)]
        c = check(htmlreport.timeline_svg(runs, width=600, height=300))
        svg = next(a for t, a in c.tags if t == "svg")
        self.assertGreater(int(svg["height"]), 300)
        swatches = [a for t, a in c.tags if t == "rect" and a.get("width") == "10"]
        self.assertEqual(len(swatches), 8)
        self.assertTrue(all(float(a["x"]) + 24 <= 600 for a in swatches))
        self.assertGreater(len({a["y"] for a in swatches}), 1)
        self.assertTrue(all(float(a["y"]) + 10 <= int(svg["height"]) for a in swatches))

    def test_escaping_of_log_text(self):
        runs = parse("[   1.000000] ------------[ cut here ]------------\n"
                     "[   1.000010] WARNING: CPU: 0 PID: 1 at a.c:1 evil<script>+0x1/0x2\n"
                     "[   1.000020] Call Trace:\n[   1.000030]  <TASK>\n"
                     "[   1.000040]  f_<b>x+0x1/0x2\n[   1.000050]  </TASK>\n"
                     "[   1.000060] ---[ end trace 0000000000000000 ]---\n")
        o = diff.Outcome([diff.compare([runs], [[]], None)])
        page = htmlreport.render(o, [RunTrace('x"><script>', runs, [1, 2], 0.5)])
        c = check(page)
        self.assertEqual(c.errors, [])
        self.assertNotIn("script", [t for t, _ in c.tags])
        self.assertNotIn("b", [t for t, _ in c.tags])
        self.assertIn('x"><script>', "".join(c.text))

    def test_empty(self):
        o = diff.Outcome([diff.compare([[]], [[]], None)])
        page = htmlreport.render(o, [RunTrace("r", [])])
        c = check(page)
        self.assertEqual(c.errors, [])
        self.assertIn("No timeline", "".join(c.text))
        self.assertIn("no kernel reports", "".join(c.text))

    def test_ticks(self):
        self.assertEqual(htmlreport.nice_ticks(0, 10, 5), [0, 2, 4, 6, 8, 10])
        t = htmlreport.nice_ticks(28.0, 40.2)
        self.assertEqual(t, [28, 30, 32, 34, 36, 38, 40])
        self.assertTrue(all(b > a for a, b in zip(t, t[1:])))
        self.assertTrue(3 <= len(t) <= 10)
        self.assertEqual(htmlreport.nice_ticks(5, 5), htmlreport.nice_ticks(5, 6))

    def test_agent_series(self):
        agent = {"run_start_s": 12.5, "series": {"interval_s": 1, "events_dequeued": [3, 4, 5],
                                                  "cycles": [1, 1, 0]}}
        self.assertEqual(agentresult.agent_series(agent), ([3, 4, 5], 12.5))
        self.assertEqual(agentresult.agent_series(agent, "cycles"), ([1, 1, 0], 12.5))
        self.assertEqual(agentresult.agent_series({"series": {"events_dequeued": [1]}}), ([1], None))
        self.assertEqual(agentresult.agent_series(None), ([], None))
        self.assertEqual(agentresult.agent_series({"series": {}}), ([], None))

    def test_write(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = htmlreport.write(Path(d) / "report.html", self.outcome, self.runs)
            self.assertTrue(p.read_text().startswith("<!DOCTYPE html>"))
            self.assertEqual(sorted(x.name for x in Path(d).iterdir()), ["report.html"])


if __name__ == "__main__":
    unittest.main()
