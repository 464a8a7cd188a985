"""harness.checks.pointing: where a bisected signature points, on a fake bisect
result whose runs hold a console with the seed case's detector report."""

import json
import shutil
import tempfile
import unittest
from pathlib import Path

from harness.checks import bisect, pointing
from harness.kernel import kbuild, series
from tests.unit.checks.test_enrich import CONSOLE, FakeSymbolizer, FixtureFinder, registered

ROOT = Path(__file__).resolve().parents[3]
SERIES = ROOT / "tests" / "fixtures" / "bisect" / "6.1" / "series"
FLOOD_LOG = ROOT / "tests" / "fixtures" / "logs" / "real-6.1-detector-stock-camera-flood.log"
SIGNATURE = "shares a cache line with other data of its object in uvc_status_start"
WHERE = {"uvc_status_start": "drivers/media/usb/uvc/uvc_status.c:210",
         "uvc_v4l2_open": "drivers/media/usb/uvc/uvc_v4l2.c:620"}


class PointAtCode(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.art = self.root / "art"
        self.art.mkdir()
        self.user = series.parse_series(SERIES)      # patch 11 is the seed case's bug
        self.names = [p.name for p in self.user]
        self.matcher = bisect.Matcher(SIGNATURE)
        self.asked: list[int] = []

    def tearDown(self):
        self.tmp.cleanup()

    def run_dir(self, name: str, console: Path | None = CONSOLE) -> str:
        d = self.root / name
        d.mkdir(exist_ok=True)
        if console is not None:
            shutil.copy(console, d / "console.log")
        return str(d)

    def result(self, culprit=11) -> bisect.Result:
        R = bisect.RunOutcome
        steps = [
            bisect.Step(0, bisect.GOOD, "", [R(bisect.CLEAN, [], self.run_dir("p0-1"))],
                        endpoint=True),
            # a bad step that is not the culprit comes first: the culprit's report wins
            bisect.Step(16, bisect.BAD, "", [R(bisect.HIT, [SIGNATURE], self.run_dir("p16-1"))],
                        endpoint=True),
            bisect.Step(8, bisect.GOOD, "", [R(bisect.CLEAN, [], self.run_dir("p8-1"))]),
            bisect.Step(11, bisect.BAD, "", [
                R(bisect.FAILED, [], "the guest hung"),
                R(bisect.HIT, [SIGNATURE], self.run_dir("p11-2", console=None)),   # no log
                R(bisect.HIT, [SIGNATURE], self.run_dir("p11-3"))]),
            bisect.Step(10, bisect.GOOD, "", [R(bisect.CLEAN, [], self.run_dir("p10-1"))]),
        ]
        return bisect.Result("cause", 0, 16, steps, culprit=culprit)

    def tree_for(self, prefix: int):
        self.asked.append(prefix)
        return kbuild.BuildResult(kbuild.Artifacts(f"6.1-p{prefix}", self.art), True, 0.0)

    def point(self, res=None, *, finder=None, tree_for=None):
        res = res or self.result()
        with registered(self.art, finder=finder or FixtureFinder(self.art),
                        sym=FakeSymbolizer(WHERE)):
            return pointing.point_at_code(res, self.user, self.matcher,
                                          tree_for or self.tree_for)

    def test_where_it_points(self):
        pt = self.point()
        self.assertEqual(self.asked, [11])
        self.assertEqual(pt["console"], str(self.root / "p11-3" / "console.log"))
        self.assertTrue(pt["report"].endswith(SIGNATURE), pt["report"])
        self.assertEqual(pt["guilty_frame"], "uvc_status_start")
        self.assertEqual(pt["location"], WHERE["uvc_status_start"])
        self.assertEqual([(f["function"], f["location"], f["patches"]) for f in pt["frames"]],
                         [("uvc_status_start", WHERE["uvc_status_start"], [12]),
                          ("uvc_v4l2_open", WHERE["uvc_v4l2_open"], [2]),
                          ("v4l2_open", None, []),
                          ("chrdev_open", None, [])])
        self.assertEqual((pt["structure"]["struct"], pt["structure"]["buffer"]),
                         ("uvc_device", "status[16]"))
        self.assertIn("<== buffer", pt["structure_text"])
        self.assertEqual(pt["patches_touching_structure"], [11])
        self.assertNotIn("structure_error", pt)
        self.assertEqual(pt["culprit_changes"], {
            "files": ["drivers/media/usb/uvc/uvc_status.c", "drivers/media/usb/uvc/uvcvideo.h"],
            "functions": ["uvc_status_cleanup", "uvc_status_init"],
            "structs": ["struct uvc_device"]})
        self.assertEqual(json.loads(json.dumps(pt)), pt)       # result.json's "where"

    def test_text(self):
        text = pointing.format_pointing(self.point(), self.names, 11)
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("where: DMA-API:"), lines[0])
        self.assertRegex(text, r"uvc_status_start\s+drivers/media/usb/uvc/uvc_status.c:210\s+"
                               r"patches touching it: 12\n")
        self.assertRegex(text, r"chrdev_open\s+patches touching it: none\n")
        self.assertIn("  patches touching the structure: 11*\n", text)
        self.assertIn("  the culprit changes: uvc_status_cleanup, uvc_status_init, "
                      "struct uvc_device in drivers/media/usb/uvc/uvc_status.c, "
                      "drivers/media/usb/uvc/uvcvideo.h", text)
        self.assertEqual(lines[-1], "  (* the culprit)")
        self.assertEqual(text.count("<== buffer"), 1)

    def test_no_tree(self):
        pt = self.point(tree_for=lambda prefix: None)
        self.assertIsNone(pt["location"])
        self.assertEqual([f["location"] for f in pt["frames"]], [None] * 4)
        self.assertEqual([f["patches"] for f in pt["frames"]], [[12], [2], [], []])
        self.assertIsNone(pt["structure"])
        self.assertNotIn("structure_text", pt)
        self.assertIn("culprit_changes", pt)

    def test_layout_failure_is_reported_not_raised(self):
        pt = self.point(finder=FixtureFinder(self.art, fail="pahole crashed"))
        self.assertEqual(pt["structure_error"], "pahole crashed")
        self.assertIsNone(pt["structure"])
        self.assertEqual(pt["location"], WHERE["uvc_status_start"])

    def test_no_culprit(self):
        pt = self.point(self.result(culprit=None))
        self.assertEqual(self.asked, [16])
        self.assertNotIn("culprit_changes", pt)
        text = pointing.format_pointing(pt, self.names, None)
        self.assertNotRegex(text, r"\d\*")
        self.assertNotIn("the culprit", text)

    def test_nothing_to_point_at(self):
        res = self.result()
        for s in res.steps:
            s.runs = [r for r in s.runs if r.status != bisect.HIT]
        self.assertIsNone(self.point(res))
        other = bisect.Matcher("KASAN: use-after-free")
        self.assertIsNone(pointing.point_at_code(self.result(), self.user, other, self.tree_for))
        self.assertEqual(self.asked, [])

    def test_real_console_plain_buffer(self):
        # the stock kernel's reports: __uvc_query_ctrl maps a plain kmalloc buffer
        res = self.result()
        res.steps[3].runs[2].detail = self.run_dir("p11-real", console=FLOOD_LOG)
        self.matcher = bisect.Matcher("in __uvc_query_ctrl")
        pt = self.point(res)
        self.assertEqual(pt["guilty_frame"], "__uvc_query_ctrl")
        self.assertEqual(pt["frames"][0]["function"], "__uvc_query_ctrl")
        self.assertIsNone(pt["structure"])          # no struct of the fixture fits
        self.assertEqual(pt["patches_touching_structure"], [])

    def test_culprit_changes_of_a_docs_patch(self):
        self.assertEqual(pointing.culprit_changes(self.user[0]), {
            "files": ["Documentation/userspace-api/media/v4l/pixfmt-meta-uvc.rst"],
            "functions": [], "structs": []})


if __name__ == "__main__":
    unittest.main()
