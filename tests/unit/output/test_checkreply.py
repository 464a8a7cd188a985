"""A check's answer to a patch (harness.output.checkreply, issue #42): what a
patch brings in with its console, config and report, what it takes out
with the evidence, and the command that reproduces it."""

import json
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace

from harness.checks import diff
from harness.output import checkreply


def comp(label, rows):
    return diff.Comparison(diff.Diff("before", label, 2, 2, [
        diff.Row(t, "DMA-API", st, b, a, example=SimpleNamespace(raw=[f"{t} line 1", "x"]))
        for t, st, b, a in rows]), diff.Verdict(True, []))


class Reply(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.folder = Path(self.tmp.name)
        (self.folder / "after-1-1").mkdir()
        (self.folder / "after-1-1" / "result.json").write_text(
            json.dumps({"build": {"artifacts": "/cache/artifacts/7.3-abc"}}))
        self.patches = (Path("0001-bug.patch"), Path("0002-fix.patch"))

    def test_a_patch_that_brings_a_report_in(self):
        out = diff.Outcome([comp("after-1", [("DMA-API: x in f", "new", [0, 0], [1, 1])]),
                            comp("after-2", [])])
        text = checkreply.reply("7.3", self.patches, out, self.folder,
                                ["./dmaharness", "check", "--kernel", "7.3", "a b.patch"])
        self.assertIn("patch:          0001-bug.patch", text)
        self.assertIn("title:          DMA-API: x in f", text)
        self.assertIn("seen in:        2/2 runs after, 0/2 before", text)
        self.assertIn("kernel config:  /cache/artifacts/7.3-abc/config", text)
        self.assertIn("  DMA-API: x in f line 1", text)            # the report itself
        self.assertIn("Reproduce:      ./dmaharness check --kernel 7.3 'a b.patch'", text)
        self.assertIn(checkreply.TAG, text)
        self.assertNotIn("Signed-off-by", text)

    def test_a_patch_that_takes_one_out_gives_the_evidence(self):
        out = diff.Outcome([comp("after-1", [("KASAN: dma-owned Write in g", "fixed",
                                              [3, 1], [0, 0])])])
        text = checkreply.reply("6.1", self.patches[:1], out, self.folder, ["./dmaharness"])
        self.assertIn("it takes out the following and brings nothing new in", text)
        self.assertIn("seen in:        2/2 runs before, 0/2 after", text)

    def test_nothing_changed_says_so(self):
        text = checkreply.reply("6.1", self.patches[:1], diff.Outcome([comp("after-1", [])]),
                                self.folder, ["./dmaharness"])
        self.assertIn("nothing new, nothing taken out", text)


if __name__ == "__main__":
    unittest.main()
