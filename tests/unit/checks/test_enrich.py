"""harness.checks.enrich: one report's file:line and structure layout, and a case
outcome's rows annotated with them (printed once)."""

import contextlib
import dataclasses
import tempfile
import unittest
from pathlib import Path

from harness.checks import diff, enrich
from harness.reports import layout
from harness.kernel import symbolize
from harness.reports.engine import Report, parse
from tests.unit.reports.test_layout import pahole_structs
from tests.unit.kernel.test_symbolize import HAVE_TOOLS, SECOND, _sizes, build_artifacts

ROOT = Path(__file__).resolve().parents[3]
CONSOLE = ROOT / "tests" / "fixtures" / "layout" / "console-seed-6.1-uvc_device.log"
KASAN_LOG = ROOT / "tests" / "fixtures" / "logs" / "kasan-uaf-timestamps.log"
SOURCE = "drivers/media/usb/uvc/uvc_v4l2.c"


def detector_report() -> Report:
    reps = parse(CONSOLE.read_text())
    assert len(reps) == 1
    return reps[0]


class FixtureFinder(layout.LayoutFinder):
    """A LayoutFinder whose -g object is the pahole fixture (no compiler)."""

    def __init__(self, artifacts, fail: str = ""):
        super().__init__(artifacts)
        self.fail = fail
        self.calls: list[tuple] = []

    def locate(self, func, module):
        self.calls.append((func, module))
        if self.fail:
            raise RuntimeError(self.fail)
        return SOURCE

    def structs_of(self, source, f):
        return pahole_structs(), "pahole"


class FakeSymbolizer:
    """Resolves the frames of the given functions to made-up lines."""

    def __init__(self, where: dict[str, str], fail: str = ""):
        self.where, self.fail = where, fail
        self.calls = 0

    def symbolize_report(self, report):
        self.calls += 1
        if self.fail:
            raise RuntimeError(self.fail)
        out = []
        for t in report.stack_lines:
            f = symbolize.parse_frame(t)
            w = self.where.get(f.function or "")
            if w:
                file, line = w.rsplit(":", 1)
                f = dataclasses.replace(f, file=file, line=int(line))
            out.append(f)
        return out


@contextlib.contextmanager
def registered(art: Path, *, finder=None, sym=None):
    """Put a finder / symbolizer in the process-wide caches for `art`."""
    key = str(Path(art).resolve())
    old_f, old_s = dict(layout._FINDERS), dict(symbolize._SYMBOLIZERS)
    try:
        if finder is not None:
            layout._FINDERS[key] = finder
        if sym is not None:
            symbolize._SYMBOLIZERS[key] = sym
        yield
    finally:
        layout._FINDERS.clear()
        layout._FINDERS.update(old_f)
        symbolize._SYMBOLIZERS.clear()
        symbolize._SYMBOLIZERS.update(old_s)


class Enrich(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.art = Path(self.tmp.name) / "art"
        self.art.mkdir()
        self.rep = detector_report()

    def tearDown(self):
        self.tmp.cleanup()

    def test_detector_report(self):
        fnd = FixtureFinder(self.art)
        sym = FakeSymbolizer({"uvc_status_start": "drivers/media/usb/uvc/uvc_status.c:210",
                              "uvc_v4l2_open": "drivers/media/usb/uvc/uvc_v4l2.c:620"})
        with registered(self.art, finder=fnd, sym=sym):
            e = enrich.enrich(self.rep, self.art)
        self.assertEqual(fnd.calls, [("uvc_status_start", "uvcvideo")])
        self.assertEqual(len(e.frames), len(self.rep.stack_lines))
        self.assertEqual(e.location, "drivers/media/usb/uvc/uvc_status.c:210")
        self.assertEqual(e.where()["uvc_v4l2_open"], "drivers/media/usb/uvc/uvc_v4l2.c:620")
        self.assertNotIn("usb_submit_urb", e.where())
        self.assertTrue(e.layout.found, e.layout.note)
        self.assertEqual((e.layout.struct, e.layout.buffer, e.layout.source),
                         ("uvc_device", "status[16]", SOURCE))
        self.assertIsNone(e.layout_error)
        self.assertIsNone(e.frames_error)
        with self.assertRaises(dataclasses.FrozenInstanceError):
            e.location = "x"

    def test_sharing_layout_says_where_it_corrupts_on_the_variants_kernel(self):
        for version, arm64 in (("6.1", "corrupts"), ("7.3", "bounced")):
            (self.art / "meta.json").write_text(f'{{"version": "{version}"}}')
            with registered(self.art, finder=FixtureFinder(self.art), sym=FakeSymbolizer({})):
                e = enrich.enrich(self.rep, self.art)
            verdicts = {v["arch"]: v["verdict"] for v in e.layout.exposure}
            self.assertEqual(verdicts["arm64"], arm64, version)
            self.assertEqual(verdicts["x86_64"], "coherent")
            self.assertIn("corrupts on", e.layout.exposure_summary)
            self.assertIn("exposure: " + e.layout.exposure_summary, e.layout.format_text())
            self.assertEqual(e.layout.to_json()["exposure"], e.layout.exposure)
            self.assertEqual(e.layout.format_html().count("exposure: "), 1)

    def test_not_a_detector_report(self):
        rep = parse(KASAN_LOG.read_text())[0]
        fnd = FixtureFinder(self.art)
        with registered(self.art, finder=fnd, sym=FakeSymbolizer({})):
            e = enrich.enrich(rep, self.art)
        self.assertIsNone(e.layout)
        self.assertEqual(fnd.calls, [])
        self.assertEqual([f.text for f in e.frames], [t.strip() for t in rep.stack_lines])

    def test_without_layout(self):
        fnd = FixtureFinder(self.art)
        with registered(self.art, finder=fnd, sym=FakeSymbolizer({})):
            e = enrich.enrich(self.rep, self.art, with_layout=False)
        self.assertIsNone(e.layout)
        self.assertEqual(fnd.calls, [])

    def test_failures_are_in_the_result(self):
        with registered(self.art, finder=FixtureFinder(self.art, fail="boom"),
                        sym=FakeSymbolizer({}, fail="no addr2line")):
            e = enrich.enrich(self.rep, self.art)
        self.assertEqual(e.layout_error, "boom")
        self.assertFalse(e.layout.found)
        self.assertEqual(e.layout.note, "layout failed: boom")
        self.assertEqual(e.frames_error, "symbolization failed: no addr2line")
        self.assertEqual(e.frames[0].text, "cl_report+0x2c6/0x2d7")   # as printed (the RIP)
        self.assertIsNone(e.location)

    def test_no_build_at_all(self):
        # the real symbolizer and finder of a folder without vmlinux or work tree
        notes = []
        with registered(self.art, sym=symbolize.Symbolizer(self.art, warn=notes.append)):
            e = enrich.enrich(self.rep, self.art)
        self.assertIsNone(e.location)
        self.assertIsNone(e.layout_error)
        self.assertFalse(e.layout.found)
        self.assertIn("uvc_status_start not found in module uvcvideo", e.layout.note)
        self.assertEqual(len(notes), 1)


class AnnotateOutcome(unittest.TestCase):
    """A case with two after variants: the before side's report is in both."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.art = Path(self.tmp.name) / "art"
        self.art.mkdir()
        self.rep = detector_report()
        comps = [diff.compare([[self.rep]], [[]], None, before_label="bug", after_label=a)
                 for a in ("fix-a", "fix-b")]
        self.outcome = diff.Outcome(comps, "uvc-status-buffer")
        self.finder = FixtureFinder(self.art)
        self.sym = FakeSymbolizer({"uvc_status_start": "drivers/media/usb/uvc/uvc_status.c:210"})

    def tearDown(self):
        self.tmp.cleanup()

    def annotate(self, arts):
        with registered(self.art, finder=self.finder, sym=self.sym):
            enrich.annotate_outcome(self.outcome, arts)

    def test_rows_get_frames_location_and_layout_once(self):
        self.annotate({"bug": self.art, "fix-a": None})
        rows = [c.diff.rows[0] for c in self.outcome.comparisons]
        for row in rows:
            self.assertEqual(row.status, "fixed")
            self.assertEqual(row.location, "drivers/media/usb/uvc/uvc_status.c:210")
            self.assertEqual(len(row.frames), len(self.rep.stack_lines))
            self.assertEqual(row.layout.struct, "uvc_device")
        self.assertEqual((self.sym.calls, len(self.finder.calls)), (1, 1))   # enriched once
        j = self.outcome.to_json()["comparisons"][1]["signatures"][0]
        self.assertEqual(j["layout"]["buffer"], "status[16]")
        self.assertEqual(j["location"], "drivers/media/usb/uvc/uvc_status.c:210")

    def test_sides_without_artifacts_are_left_alone(self):
        self.annotate({"fix-a": self.art})
        row = self.outcome.comparisons[0].diff.rows[0]
        self.assertEqual((row.frames, row.location, row.layout), (None, None, None))
        self.assertEqual(self.sym.calls, 0)

    def test_layout_printed_once(self):
        self.annotate({"bug": self.art})
        text = diff.format_outcome(self.outcome)
        self.assertEqual(text.count("/* --- line 896..1023 --- */"), 1, text)
        self.assertEqual(text.count("<== buffer"), 1, text)
        func = self.rep.title.rpartition(" in ")[2]
        self.assertIn(f"layouts as above for: {func}\n", text)
        # each comparison still says what it found
        self.assertEqual(text.count("outcome: matches the expectation"), 2)
        # a comparison printed alone shows its layout in full
        alone = diff.format_comparison(self.outcome.comparisons[1])
        self.assertIn("<== buffer", alone)

    def test_same_layout_under_another_title(self):
        self.annotate({"bug": self.art})
        d = self.outcome.comparisons[0].diff
        other = dataclasses.replace(d.rows[0], title="DMA-API: other title")
        d.rows.append(other)
        text = diff.format_layouts(d)
        self.assertEqual(text.count("<== buffer"), 1, text)
        self.assertIn("layouts as above for: DMA-API: other title\n", text)

    def test_reasons_are_said_once_too(self):
        self.finder.fail = "no pahole"
        self.annotate({"bug": self.art})
        text = diff.format_outcome(self.outcome)
        self.assertEqual(text.count("layout failed: no pahole"), 1, text)
        self.assertEqual(text.count("layouts as above for: "), 1, text)


@unittest.skipUnless(HAVE_TOOLS, "gcc and addr2line needed")
class RealSymbols(unittest.TestCase):
    """file:line through the real symbolizer, against small ELF files built here."""

    def test_case_rows_symbolized(self):
        with tempfile.TemporaryDirectory() as tmp:
            art = build_artifacts(Path(tmp))
            sz = _sizes(art / "vmlinux")

            def rep(func):
                return Report(kind="KASAN", title=f"KASAN: x in {func}", guilty_frame=func,
                              stack=["kasan_report", func], raw=[], first_line=1,
                              stack_lines=["kasan_report+0x1/0x2", f"{func}+0x4/{sz[func]:#x}"])

            o = diff.Outcome([diff.compare([[rep("second")]], [[rep("first")]], None,
                                           before_label="bug", after_label="fix")])
            nowhere, notes = Path(tmp) / "nowhere", []
            with registered(art), registered(nowhere, sym=symbolize.Symbolizer(
                    nowhere, warn=notes.append)):
                enrich.annotate_outcome(o, {"bug": art, "fix": nowhere})
            rows = {r.title: r for r in o.comparisons[0].diff.rows}
            fixed, new = rows["KASAN: x in second"], rows["KASAN: x in first"]
            self.assertEqual(new.example_side, "after")
            self.assertRegex(fixed.location or "", r"^t\.c:\d+$")
            self.assertIn(int(fixed.location.split(":")[1]), SECOND)
            self.assertIsNone(new.location)           # the fix side has no build
            self.assertEqual(len(notes), 1)
            self.assertIsNone(fixed.layout)           # not a detector report
            self.assertIn(f"({fixed.location})", diff.format_table(o.comparisons[0].diff))
            j = o.to_json()["comparisons"][0]["signatures"]
            js = next(x for x in j if x["title"] == fixed.title)
            self.assertEqual(js["location"], fixed.location)
            self.assertEqual(js["stack"][1]["file"], "t.c")
            self.assertIsNone(js["stack"][0]["file"])  # kasan_report is not in this ELF


if __name__ == "__main__":
    unittest.main()
