"""The HTML pages open in a real browser (issue #14): headless Chromium loads
the sweep's triage page (harness.output.sweephtml) and a case report
(harness.output.htmlreport), and the DOM it builds holds what the pages say.

Nothing boots: the sweep page comes from a hand-made sweep payload
(tests/unit/output/test_sweephtml.py), the case report from the golden console
logs of tests/fixtures/diff.  The browser is Debian's `chromium`, which
`make deps` installs; without it the test fails (it is never skipped, so CI
always opens the pages).  `--dump-dom` prints the DOM after the page
loaded: the same elements as the file's tags (plus the <tbody> a parser
adds) means the browser read the markup as it was written, the text shows
what a reader sees.
"""

import os
import shutil
import subprocess
import tempfile
import time
import unittest
from collections import Counter
from pathlib import Path

from harness.checks import diff
from harness.output import htmlreport, sweephtml
from harness.checks.caserun import RunTrace
from harness.checks.case import load_case
from harness.reports.engine import parse
from tests.unit.output.test_htmlreport import check
from tests.unit.output.test_sweephtml import EVIL, payload, uvc_layout

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "diff"
BROWSER = "chromium"            # Debian's package (harness/deps.sh)
TIMEOUT = 60
# elements whose number must be the same in the file and in the browser's DOM
COUNTED = ("table", "tr", "td", "th", "details", "summary", "pre", "h1", "h2", "h3", "a",
           "code", "span", "ul", "li", "svg", "polyline", "line", "rect", "text")


def case_report() -> str:
    """The report of tests/fixtures/diff/case: the sharing report fixed."""
    case = load_case(FIX / "case")
    before = [parse((FIX / n).read_text()) for n in ("before-1.log", "before-2.log")]
    after = [parse((FIX / n).read_text()) for n in ("after-1.log", "after-2.log")]
    outcome = diff.compare_case(case, before, {"fix": after})
    outcome.comparisons[0].diff.rows[0].layout = uvc_layout()
    runs = [RunTrace("bug #1", before[0], [900, 1000, 1010, 990], 29.0),
            RunTrace("bug #2", before[1], [880, 1005], 29.5),
            RunTrace("fix #1", after[0], [1000, 1000, 1000], 28.0),
            RunTrace("fix #2", after[1], [990, 1000], 28.0)]
    return htmlreport.render(outcome, runs, title="dmaharness: diff-fixture")


class Browser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = shutil.which(BROWSER)
        cls.tmp = tempfile.TemporaryDirectory(prefix="dmaharness-browser-")
        cls.dir = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def dump_dom(self, page: Path) -> str:
        """The DOM Chromium builds from `page`, serialized."""
        if self.binary is None:
            self.fail(f"{BROWSER} is not installed: run `make deps` (harness/deps.sh installs "
                      "Debian's chromium; the browser check is never skipped)")
        profile = self.dir / f"profile-{page.stem}"
        env = {**os.environ, "HOME": str(self.dir), "XDG_CONFIG_HOME": str(self.dir / "config"),
               "XDG_CACHE_HOME": str(self.dir / "cache")}
        # --no-sandbox: as root (CI, the build machine) Chromium refuses to start without it;
        # the pages are ours and have no script.
        cmd = [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu",
               "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
               f"--user-data-dir={profile}", "--dump-dom", page.as_uri()]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            self.fail(f"{BROWSER} did not dump {page.name} within {TIMEOUT} s: {' '.join(cmd)}")
        took = time.monotonic() - t0
        if r.returncode != 0 or "<body" not in r.stdout:
            tail = "\n".join(r.stderr.strip().splitlines()[-15:])
            self.fail(f"{' '.join(cmd)} exited {r.returncode} after {took:.1f} s "
                      f"({len(r.stdout)} bytes of DOM):\n{tail}")
        return r.stdout

    def open_page(self, name: str, html: str):
        """(the file's tags and text, the DOM's) after Chromium loaded it."""
        page = self.dir / name
        page.write_text(html, encoding="utf-8")
        src, dom = check(html), check(self.dump_dom(page))
        return src, dom

    def same_elements(self, src, dom):
        count = lambda c: Counter(t for t, _ in c.tags if t in COUNTED)   # noqa: E731
        self.assertEqual(count(dom), count(src), "the browser built other elements than "
                         "the page's tags: the markup is not what it seems")
        ids = lambda c: sorted(a["id"] for _, a in c.tags if "id" in a)    # noqa: E731
        self.assertEqual(ids(dom), ids(src))
        self.assertNotIn("script", [t for t, _ in dom.tags])
        self.assertEqual(dom.errors, [])

    def test_the_check_can_fail(self):
        # a <code> left open across paragraphs: the browser reopens it in the next one
        src, dom = self.open_page("broken.html", "<!DOCTYPE html><html><head><title>x</title>"
                                  "</head><body><p><code>a</p><p>b</p></body></html>")
        with self.assertRaises(AssertionError):
            self.same_elements(src, dom)

    def test_sweep_page(self):
        p = payload()
        src, dom = self.open_page("sweep.html", sweephtml.render(p))
        self.same_elements(src, dom)
        text = "".join(dom.text)
        for s in p["sites"]:
            self.assertIn(s["function"], text)
        self.assertIn(EVIL, text)                 # the title with <script> is text, not a tag
        self.assertIn("u8 status[16];  <== buffer (DMA_FROM_DEVICE)", text)
        self.assertIn("this QEMU has no ES1370", text)
        self.assertIn("1 new, 1 gone, 1 unchanged", text)
        # the dma-owned row is the first of the triage table, in the DOM too
        start = next(i for i, (t, a) in enumerate(dom.tags) if a.get("id") == "sites")
        rows = [a for t, a in dom.tags[start:] if t == "tr"]
        self.assertEqual(rows[1].get("class"), "owned")     # rows[0]: the header

    def test_case_report(self):
        src, dom = self.open_page("report.html", case_report())
        self.same_elements(src, dom)
        text = "".join(dom.text)
        self.assertIn("Outcome: matches the expectation.", text)
        self.assertIn("Case: diff-fixture", text)
        self.assertIn("DMA-API: mapping shares a cache line with CPU-owned data in "
                      "uvc_status_start", text)
        self.assertIn("struct uvc_device: 1144 bytes", text)
        self.assertIn("seconds since boot", text)     # the inline SVG's axis
        self.assertEqual([t for t, _ in dom.tags].count("polyline"), 4)


if __name__ == "__main__":
    unittest.main()
