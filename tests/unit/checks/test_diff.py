"""harness.checks.diff: statuses, table, JSON, evaluation, the diff command."""

import contextlib
import dataclasses
import io
import json
import re
import unittest
from pathlib import Path

from harness.checks import diff
from harness.cli import logcli
from harness.checks.case import CaseVariant, load_case
from harness.reports.engine import Report, fold

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "diff"
SHARE = "DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start"
STOP = "KASAN: dma-owned Write in uvc_status_stop"
STOCK = "WARNING in do_one_initcall"   # the fixtures' stock WARNING, as syzkaller titles it
NEW = "KASAN: slab-out-of-bounds Read in uvc_status_complete"


def rep(title: str, kind: str = "KASAN", corrupted: bool = False) -> Report:
    return Report(kind=kind, title=title, guilty_frame=title.rsplit(" ", 1)[-1],
                  stack=[], raw=[title], first_line=1, corrupted=corrupted,
                  corrupted_reason="extracted no frames" if corrupted else "")


def run(*titles: str) -> list[Report]:
    return [rep(t) for t in titles]


def rx(*pats: str) -> list[re.Pattern]:
    return [re.compile(p) for p in pats]


class StatusTest(unittest.TestCase):
    def test_four_statuses(self):
        d = diff.diff_runs([run("A", "A", "B", "F"), run("A", "B")],
                           [run("B", "C"), run("B", "C", "F")])
        st = {r.title: r.status for r in d.rows}
        self.assertEqual(st, {"A": "fixed", "B": "unchanged", "C": "new", "F": "flaky"})
        a = next(r for r in d.rows if r.title == "A")
        self.assertEqual(a.before_counts, [2, 1])
        self.assertEqual(a.after_counts, [0, 0])
        f = next(r for r in d.rows if r.title == "F")
        self.assertEqual(f.flaky_side, "both")
        self.assertEqual(d.summary(), {"new": 1, "fixed": 1, "flaky": 1, "unchanged": 1})
        # Table order: new, fixed, flaky, unchanged.
        self.assertEqual([r.title for r in d.rows], ["C", "A", "F", "B"])

    def test_flaky_sides(self):
        d = diff.diff_runs([run("X"), run()], [run("Y"), run()])
        by = {r.title: r for r in d.rows}
        self.assertEqual(by["X"].status, "flaky")
        self.assertEqual(by["X"].flaky_side, "before")
        self.assertFalse(by["X"].after_only)
        self.assertEqual(by["Y"].flaky_side, "after")
        self.assertTrue(by["Y"].after_only)

    def test_unequal_run_counts_and_signatures(self):
        sigs = fold(run("A", "A", "A"))
        d = diff.diff_runs([sigs], [run(), run(), run()])
        self.assertEqual(d.rows[0].before_counts, [3])
        self.assertEqual(d.rows[0].after_counts, [0, 0, 0])
        self.assertEqual(d.rows[0].status, "fixed")
        self.assertEqual((d.runs_before, d.runs_after), (1, 3))

    def test_one_run(self):
        d = diff.diff_runs([run("A")], [run("A")])
        self.assertEqual(d.rows[0].status, "unchanged")

    def test_no_runs(self):
        with self.assertRaises(ValueError):
            diff.diff_runs([], [run()])


class EvaluateTest(unittest.TestCase):
    def setUp(self):
        self.before = [run(SHARE, STOP, STOCK), run(SHARE, STOP, STOCK)]

    def test_match(self):
        d = diff.diff_runs(self.before, [run(STOCK), run(STOCK)])
        v = diff.evaluate(d, rx(r"^DMA-API: .* in uvc_status_start$", "dma-owned"))
        self.assertTrue(v.matches, v.reasons)
        self.assertEqual(v.reasons, [])
        self.assertEqual(diff.exit_code(v.matches), 0)
        self.assertEqual(diff.exit_code(None), 2)

    def test_expected_not_fixed(self):
        d = diff.diff_runs(self.before, [run(SHARE, STOCK), run(SHARE, STOCK)])
        v = diff.evaluate(d, rx("in uvc_status_start$"))
        self.assertFalse(v.matches)
        self.assertIn("unchanged", v.reasons[0])
        self.assertEqual(diff.exit_code(v.matches), 1)

    def test_expected_absent(self):
        d = diff.diff_runs([run(STOCK)], [run(STOCK)])
        v = diff.evaluate(d, rx("uvc_status_start"))
        self.assertFalse(v.matches)
        self.assertIn("no such report", v.reasons[0])

    def test_flaky_before_is_not_fixed(self):
        d = diff.diff_runs([run(SHARE), run()], [run(), run()])
        v = diff.evaluate(d, rx("uvc_status_start"))
        self.assertFalse(v.matches)
        self.assertIn("flaky", v.reasons[0])

    def test_a_regex_is_fixed_as_a_class_of_titles(self):
        # KASAN reports only a boot's first bad access: the race shows under a
        # different title in each run; each row is flaky, the class is fixed
        read = "KASAN: dma-owned Read in str_to_user"
        stop = "KASAN: dma-owned Read in uvc_status_stop"
        d = diff.diff_runs([run(SHARE, read), run(SHARE, stop)], [run(), run()])
        self.assertEqual({r.status for r in d.rows if "KASAN" in r.title}, {"flaky"})
        v = diff.evaluate(d, rx("^KASAN: dma-owned (Read|Write) in "))
        self.assertTrue(v.matches, v.reasons)
        self.assertIn(read, v.notes[0])
        # missing from one before run: not fixed
        d = diff.diff_runs([run(SHARE, read), run(SHARE)], [run(), run()])
        v = diff.evaluate(d, rx("^KASAN: dma-owned (Read|Write) in "))
        self.assertFalse(v.matches)
        self.assertIn("1/2 before runs and 0/2 after runs", v.reasons[0])
        # any title of the class in an after run: not fixed
        d = diff.diff_runs([run(read), run(stop)], [run(), run(stop)])
        v = diff.evaluate(d, rx("^KASAN: dma-owned (Read|Write) in "))
        self.assertFalse(v.matches)
        self.assertIn("1/2 after runs", v.reasons[0])

    def test_new_fails_unless_allowed(self):
        d = diff.diff_runs(self.before, [run(STOCK, NEW), run(STOCK, NEW)])
        v = diff.evaluate(d, rx("uvc_status_start"))
        self.assertFalse(v.matches)
        self.assertTrue(any(NEW in r for r in v.reasons))
        v = diff.evaluate(d, rx("uvc_status_start"), rx("slab-out-of-bounds"))
        self.assertTrue(v.matches, v.reasons)
        self.assertTrue(any("allowed" in n for n in v.notes))

    def test_new_in_one_after_run_still_fails(self):
        d = diff.diff_runs(self.before, [run(STOCK, NEW), run(STOCK)])
        v = diff.evaluate(d, rx("uvc_status_start"))
        self.assertFalse(v.matches)
        self.assertIn("1/2", v.reasons[0])

    def test_corrupted_reports_are_no_new_signature(self):
        # syzkaller files no bug for a corrupted report: noted, not counted.
        cut = "INFO: rcu detected stall in corrupted"
        d = diff.diff_runs(self.before, [[rep(STOCK), rep(cut, "RCU", corrupted=True)], run(STOCK)])
        row = next(r for r in d.rows if r.title == cut)
        self.assertTrue(row.corrupted)
        self.assertTrue(row.to_json()["corrupted"])
        v = diff.evaluate(d, rx("uvc_status_start"))
        self.assertTrue(v.matches, v.reasons)
        self.assertIn(f"flaky but corrupted, not a signature (in 1/2 after runs): {cut}",
                      v.notes)
        # One sound report under the same title makes it a signature again.
        d = diff.diff_runs(self.before, [[rep(STOCK), rep(cut, corrupted=True)], [rep(STOCK), rep(cut)]])
        self.assertFalse(diff.evaluate(d, rx("uvc_status_start")).matches)
        # Folded signatures carry it too.
        d = diff.diff_runs(self.before, [fold([rep(STOCK), rep(cut, corrupted=True), rep(cut, corrupted=True)])])
        self.assertTrue(diff.evaluate(d, rx("uvc_status_start")).matches)

    def test_flaky_on_both_sides_is_not_new(self):
        d = diff.diff_runs([run("W"), run()], [run(), run("W")])
        self.assertTrue(diff.evaluate(d).matches)

    def test_compare_case_each_after_variant(self):
        case = load_case(FIX / "case")
        Two = dataclasses.replace(case, variants=case.variants + (CaseVariant("fix-2", "after", ()),))

        o = diff.compare_case(Two, self.before, {"fix": [run(STOCK), run(STOCK)],
                                                 "fix-2": [run(STOCK, SHARE), run(STOCK, SHARE)]})
        self.assertEqual([c.diff.after_label for c in o.comparisons], ["fix", "fix-2"])
        self.assertEqual([c.verdict.matches for c in o.comparisons], [True, False])
        self.assertFalse(o.matches)
        j = o.to_json()
        self.assertEqual(j["version"], 1)
        self.assertEqual(j["exit_code"], 1)
        self.assertIn("mismatch: fix-2", diff.format_outcome(o))
        with self.assertRaises(ValueError):
            diff.compare_case(Two, self.before, {"fix": [run()]})


class OutputTest(unittest.TestCase):
    def test_table_aligned(self):
        d = diff.diff_runs([run(SHARE, SHARE, STOCK), run(SHARE, STOCK)],
                           [run(STOCK), run(STOCK, NEW)])
        text = diff.format_table(d)
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("status"))
        # The title column starts at the same place on every row.
        starts = {ln.index(t) for ln in lines[1:4] for t in (SHARE, STOCK, NEW) if t in ln}
        self.assertEqual(len(starts), 1)
        self.assertIn("2,1", text)
        self.assertIn("flaky*", text)
        self.assertIn("1 fixed", lines[-1])

    def test_long_title_kept(self):
        d = diff.diff_runs([run("x" * 300)], [run()])
        self.assertIn("x" * 300, diff.format_table(d))

    def test_json(self):
        c = diff.compare([run(SHARE)], [run(NEW)], None)
        j = diff.Outcome([c]).to_json()
        json.dumps(j)
        self.assertEqual(j["version"], 1)
        sig = {s["title"]: s for s in j["comparisons"][0]["signatures"]}
        self.assertEqual(sig[SHARE]["status"], "fixed")
        self.assertEqual(sig[NEW]["after_counts"], [1])
        self.assertFalse(j["matches"])


class MainTest(unittest.TestCase):
    def call(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = logcli.diff_main([str(a) for a in args])
        return code, out.getvalue(), err.getvalue()

    def test_match_with_case(self):
        code, out, _ = self.call(FIX / "before-1.log", FIX / "before-2.log", "--",
                                 FIX / "after-1.log", FIX / "after-2.log", "--case", FIX / "case")
        self.assertEqual(code, 0, out)
        self.assertIn("matches", out)
        self.assertRegex(out, r"fixed\s+2,1\s+0,0\s+" + re.escape(SHARE))
        self.assertRegex(out, r"flaky\*\s+1,0\s+0,0\s+" + re.escape(STOP))

    def test_mismatch_json(self):
        code, out, _ = self.call("--json", "--case", FIX / "case" / "case.toml",
                                 FIX / "before-1.log", FIX / "before-2.log", "--",
                                 FIX / "after-1.log", FIX / "after-new.log")
        self.assertEqual(code, 1)
        j = json.loads(out)
        self.assertEqual(j["version"], 1)
        self.assertEqual(j["case"], "diff-fixture")
        self.assertFalse(j["matches"])
        self.assertTrue(any(NEW in r for r in j["comparisons"][0]["verdict"]["reasons"]))

    def test_no_case_means_nothing_new(self):
        code, _, _ = self.call(FIX / "before-1.log", "--", FIX / "after-1.log")
        self.assertEqual(code, 0)
        code, _, _ = self.call(FIX / "before-1.log", "--", FIX / "after-new.log")
        self.assertEqual(code, 1)

    def test_one_word_for_a_flaky_title(self):
        """#44: the summary counted a title seen in 1 of 2 after runs as flaky
        while the reason below it called it new: the table, the summary and
        the reason now say the same word."""
        code, out, _ = self.call(FIX / "before-1.log", FIX / "before-2.log", "--",
                                 FIX / "after-1.log", FIX / "after-new.log")
        self.assertEqual(code, 1)                     # after only, if only once: it counts
        self.assertRegex(out, r"flaky\*\s+0,0\s+0,1\s+" + re.escape(NEW))
        self.assertIn("0 new, 1 fixed, 2 flaky, 1 unchanged", out)
        self.assertIn(f"  - flaky (in 1/2 after runs): {NEW}\n", out)
        self.assertNotIn("new (in", out)
        # in every after run it is new, in the table and in the reason alike
        code, out, _ = self.call(FIX / "before-1.log", "--", FIX / "after-new.log")
        self.assertEqual(code, 1)
        self.assertRegex(out, r"\nnew\s+0\s+1\s+" + re.escape(NEW))
        self.assertIn("1 new, ", out)
        self.assertIn(f"  - new (in 1/1 after runs): {NEW}\n", out)

    def test_errors(self):
        code, _, err = self.call(FIX / "before-1.log", FIX / "after-1.log")
        self.assertEqual(code, 2)
        self.assertIn("--", err)
        # bad input is 4, as for `run --case`; 2 stays for usage errors
        code, _, err = self.call(FIX / "before-1.log", "--", FIX / "missing.log")
        self.assertEqual(code, 4)
        self.assertIn("missing.log", err)
        code, _, err = self.call(FIX / "before-1.log", "--", FIX / "after-1.log",
                                 "--case", FIX / "nocase")
        self.assertEqual(code, 4)
        code, out, _ = self.call("--json", FIX / "before-1.log", "--")
        self.assertEqual(code, 2)
        self.assertFalse(json.loads(out)["ok"])


class SiteExpectation(unittest.TestCase):
    """expect.sites (issue #26): a sweep site key in every before run, in no after run."""

    RNG = Path(__file__).resolve().parents[2] / "fixtures" / "sweep" / "real-6.12-sweep-virtio-rng.log"
    KEY = "request_entropy sharing kmalloc-512+272:64 DMA_FROM_DEVICE"

    def setUp(self):
        from harness.reports import engine
        self.reps = engine.parse(self.RNG.read_text())
        self.expect = type("E", (), {"fixed": (), "new_allowed": (), "sites": (self.KEY,)})()

    def test_run_keys_of_reports_and_signatures(self):
        from harness.checks import sitekeys
        self.assertEqual(sitekeys.run_keys(self.reps), {self.KEY: True})   # dma-owned seen
        self.assertEqual(sitekeys.run_keys(fold(self.reps)), {self.KEY: True})
        self.assertEqual(sitekeys.run_keys(run(STOP, NEW)), {})

    def test_site_gone_matches(self):
        c = diff.compare([self.reps, self.reps], [run()], self.expect)
        self.assertTrue(c.verdict.matches, c.verdict.reasons)
        self.assertTrue(any(self.KEY in n and "2/2 before" in n for n in c.verdict.notes))

    def test_a_star_matches_an_offset(self):
        e = type("E", (), {"fixed": (), "new_allowed": (),
                           "sites": ("request_entropy sharing kmalloc-512+*:64 DMA_FROM_DEVICE",)})()
        self.assertTrue(diff.compare([self.reps], [run()], e).verdict.matches)
        e.sites = ("request_entropy sharing kmalloc-512+*:32 DMA_FROM_DEVICE",)
        self.assertFalse(diff.compare([self.reps], [run()], e).verdict.matches)
        from harness.checks import sitekeys
        self.assertEqual(sitekeys.matching("f sharing k[1]+*:1 X", ["f sharing k[1]+8:1 X",
                                                                  "f sharing k1+8:1 X"]),
                         ["f sharing k[1]+8:1 X"])

    def test_site_still_there_or_never_seen_does_not_match(self):
        c = diff.compare([self.reps], [self.reps], self.expect)
        self.assertFalse(c.verdict.matches)
        self.assertIn("1/1 after runs", " ".join(c.verdict.reasons))
        c = diff.compare([run(STOCK), self.reps], [run()], self.expect)
        self.assertFalse(c.verdict.matches)
        self.assertIn("in 1/2 before runs", " ".join(c.verdict.reasons))


if __name__ == "__main__":
    unittest.main()


class LayoutOutput(unittest.TestCase):
    """A row's structure layout (harness.reports.layout) in text and JSON."""

    def test_text_and_json(self):
        from harness.reports import layout
        from tests.unit.reports.test_layout import SHARING, pahole_structs
        rep = Report("DETECTOR", "DMA-API: x in uvc_v4l2_open", "uvc_v4l2_open", [], [SHARING], 1)
        d = diff.diff_runs([[rep]], [[]])
        f = layout.parse_facts(SHARING)
        cand, best = layout.choose(pahole_structs(), f)
        d.rows[0].layout = layout.build_layout(f, cand, pahole_structs(), others=best)
        text = diff.format_table(d) + diff.format_layouts(d)
        self.assertIn("layout for: DMA-API: x in uvc_v4l2_open", text)
        self.assertIn("status[16] at 977..992 shares line 896..1023", text)
        j = d.rows[0].to_json()
        self.assertEqual(j["layout"]["struct"], "uvc_device")
        self.assertNotIn("layout", diff.diff_runs([[rep]], [[]]).rows[0].to_json())
