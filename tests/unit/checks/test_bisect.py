"""harness.checks.bisect: search, verdicts, flakiness, skips, endpoint checks, the log."""

import json
import random
import tempfile
import types
import unittest
from pathlib import Path

from harness.checks import bisect
from harness.checks import bisectjob
from harness.checks.bisect import BAD, CLEAN, FAILED, GOOD, HIT, INFRA, SKIP, Policy, RunOutcome
from harness.errors import InputError


class FakeRunner:
    """Prefix k shows the signature with chance present(k); no QEMU involved."""

    def __init__(self, present, *, build_fails=(), boot_fails=(), infra=(), seed=7):
        self.present = present
        self.build_fails, self.boot_fails, self.infra = set(build_fails), set(boot_fails), set(infra)
        self.rng = random.Random(seed)
        self.built: list[int] = []
        self.boots: dict[int, int] = {}

    def key(self, prefix):
        return f"key-{prefix}"

    def build(self, prefix):
        self.built.append(prefix)
        return "make failed (exit 2)" if prefix in self.build_fails else None

    def run(self, prefix, first, count):
        self.boots[prefix] = self.boots.get(prefix, 0) + count
        out = []
        for i in range(count):
            if prefix in self.boot_fails:
                out.append(RunOutcome(FAILED, [], "panic"))
            elif prefix in self.infra:
                out.append(RunOutcome(INFRA, [], "fake camera crashed"))
            elif self.rng.random() < self.present(prefix):
                out.append(RunOutcome(HIT, ["DMA-API: x in f"], f"p{prefix}-{first + i + 1}"))
            else:
                out.append(RunOutcome(CLEAN, [], f"p{prefix}-{first + i + 1}"))
        return out


def cause_at(n, p=1.0):
    return lambda k: p if k >= n else 0.0


def search_steps(res):
    return [s for s in res.steps if not s.endpoint]


class SearchTest(unittest.TestCase):
    def test_deterministic_cause_in_at_most_five_steps(self):
        for culprit in range(1, 17):
            with self.subTest(culprit=culprit):
                r = FakeRunner(cause_at(culprit))
                res = bisect.bisect(r, 16, 0, 16, Policy())
                self.assertEqual(res.culprit, culprit)
                self.assertEqual(res.mode, "cause")
                self.assertLessEqual(len(search_steps(res)), 5)
                self.assertEqual([s.prefix for s in res.steps[:2]], [0, 16])
                self.assertTrue(all(s.endpoint for s in res.steps[:2]))

    def test_good_steps_need_two_clean_runs_when_deterministic(self):
        r = FakeRunner(cause_at(11))
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertAlmostEqual(res.p, 0.8)
        for s in search_steps(res):
            self.assertEqual(len(s.runs), 2, s.to_json())   # one batch either way
        self.assertLess(res.confidence, 1.0)
        self.assertGreater(res.confidence, 0.9)

    def test_fix_bisection_when_good_is_above_bad(self):
        r = FakeRunner(lambda k: 1.0 if k < 5 else 0.0)
        res = bisect.bisect(r, 16, 16, 0, Policy())
        self.assertEqual(res.mode, "fix")
        self.assertEqual(res.culprit, 5)

    def test_flaky_signature_runs_more_and_still_finds_it(self):
        found = 0
        for seed in range(20):
            r = FakeRunner(cause_at(9, p=0.5), seed=seed)
            res = bisect.bisect(r, 16, 0, 16, Policy(max_runs=8, endpoint_runs=6))
            if res.error:
                continue
            found += res.culprit == 9
            endpoint = res.steps[1]
            if all(r.status == HIT for r in endpoint.runs):
                continue     # the bad end looked deterministic: 2 runs were enough then
            goods = [s for s in search_steps(res) if s.verdict == GOOD]
            self.assertTrue(all(len(s.runs) > 2 for s in goods), [s.to_json() for s in goods])
            self.assertLess(res.confidence, 0.99)
        self.assertGreaterEqual(found, 16)

    def test_min_hits_two_needs_two_hits(self):
        runs = [RunOutcome(HIT), RunOutcome(CLEAN)]
        self.assertIsNone(bisect.decide(runs, Policy(min_hits=2), 0.5)[0])
        self.assertEqual(bisect.decide(runs + [RunOutcome(HIT)], Policy(min_hits=2), 0.5)[0], BAD)

    def test_run_cap_gives_good_with_lower_confidence(self):
        runs = [RunOutcome(CLEAN)] * 4
        verdict, reason = bisect.decide(runs, Policy(max_runs=4), 0.2)
        self.assertEqual(verdict, GOOD)
        self.assertIn("cap", reason)
        self.assertIsNone(bisect.decide(runs[:2], Policy(max_runs=4), 0.2)[0])

    def test_confidence_runs(self):
        self.assertEqual(bisect.confidence_runs(0.8, 0.05), 2)
        self.assertEqual(bisect.confidence_runs(0.4, 0.05), 6)
        self.assertEqual(bisect.confidence_runs(1.0, 0.05), 1)

    def test_next_prefix(self):
        self.assertEqual(bisect.next_prefix(0, 16, set()), 8)
        self.assertEqual(bisect.next_prefix(0, 16, {8}), 7)
        self.assertEqual(bisect.next_prefix(0, 16, {7, 8}), 9)
        self.assertIsNone(bisect.next_prefix(3, 4, set()))
        self.assertIsNone(bisect.next_prefix(3, 5, {4}))


class SkipTest(unittest.TestCase):
    def test_build_failure_is_skipped_never_bad(self):
        r = FakeRunner(cause_at(11), build_fails={8})
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertEqual(res.culprit, 11)
        s8 = [s for s in res.steps if s.prefix == 8]
        self.assertEqual(s8[0].verdict, SKIP)
        self.assertIn("build", s8[0].reason)
        self.assertNotIn(8, r.boots)

    def test_boot_failures_skip_after_one_batch(self):
        r = FakeRunner(cause_at(11), boot_fails={8})
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertEqual(res.culprit, 11)
        self.assertEqual(r.boots[8], 2)
        self.assertEqual([s.verdict for s in res.steps if s.prefix == 8], [SKIP])

    def test_infra_errors_are_skips(self):
        r = FakeRunner(cause_at(11), infra={12})
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertEqual(res.culprit, 11)
        self.assertEqual([s.verdict for s in res.steps if s.prefix == 12], [SKIP])

    def test_skip_next_to_culprit_leaves_a_range(self):
        r = FakeRunner(cause_at(11), build_fails={10})
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertIsNone(res.culprit)
        self.assertEqual(res.range, (10, 11))
        text = bisect.format_result(res, [f"p{i}.patch" for i in range(1, 17)], "sig")
        self.assertIn("one of patches 10..11", text)
        self.assertIn("p10.patch", text)


class EndpointTest(unittest.TestCase):
    def test_good_end_showing_the_signature(self):
        r = FakeRunner(lambda k: 1.0)
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertFalse(res.found)
        self.assertIn("--good end (prefix 0) shows the signature", res.error)
        self.assertEqual(len(res.steps), 1)

    def test_bad_end_without_the_signature(self):
        r = FakeRunner(lambda k: 0.0)
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertIn("--bad end (prefix 16) does not show the signature", res.error)
        self.assertEqual(len(res.steps[1].runs), Policy().endpoint_runs)

    def test_bad_end_that_does_not_build(self):
        r = FakeRunner(cause_at(3), build_fails={16})
        res = bisect.bisect(r, 16, 0, 16, Policy())
        self.assertIn("could not be tested: build", res.error)

    def test_endpoints_run_all_their_runs(self):
        r = FakeRunner(cause_at(11))
        bisect.bisect(r, 16, 0, 16, Policy(endpoint_runs=6))
        self.assertEqual((r.boots[0], r.boots[16]), (6, 6))

    def test_bad_input(self):
        r = FakeRunner(cause_at(1))
        with self.assertRaises(InputError):
            bisect.bisect(r, 16, 3, 3, Policy())
        with self.assertRaises(InputError):
            bisect.bisect(r, 16, 0, 17, Policy())
        with self.assertRaises(InputError):
            bisect.bisect(r, 16, 0, 16, Policy(max_miss=1.5))


class LogTest(unittest.TestCase):
    def test_resume_reuses_finished_steps(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bisect.jsonl"
            first = bisect.bisect(FakeRunner(cause_at(6)), 16, 0, 16, Policy(),
                                  log=bisect.Log(path))
            self.assertEqual(len(path.read_text().splitlines()), len(first.steps))
            r = FakeRunner(lambda k: 1 / 0)      # any real step would raise
            again = bisect.bisect(r, 16, 0, 16, Policy(), log=bisect.Log(path))
            self.assertEqual(again.culprit, 6)
            self.assertEqual(r.built, [])
            self.assertTrue(all(s.resumed for s in again.steps))

    def test_interrupted_log_redoes_the_cut_step(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bisect.jsonl"
            bisect.bisect(FakeRunner(cause_at(6)), 16, 0, 16, Policy(), log=bisect.Log(path))
            lines = path.read_text().splitlines()
            path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])   # cut mid-line
            r = FakeRunner(cause_at(6))
            res = bisect.bisect(r, 16, 0, 16, Policy(), log=bisect.Log(path))
            self.assertEqual(res.culprit, 6)
            redone = json.loads(lines[3])["prefix"]
            self.assertEqual(r.built[0], redone)

    def test_changed_variant_key_is_not_reused(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bisect.jsonl"
            bisect.bisect(FakeRunner(cause_at(6)), 16, 0, 16, Policy(), log=bisect.Log(path))
            r = FakeRunner(cause_at(6))
            r.key = lambda k: f"other-{k}"
            bisect.bisect(r, 16, 0, 16, Policy(), log=bisect.Log(path))
            self.assertIn(0, r.built)

    def test_json_has_steps_evidence_and_confidence(self):
        res = bisect.bisect(FakeRunner(cause_at(4)), 16, 0, 16, Policy())
        j = res.to_json()
        self.assertEqual(j["culprit"], 4)
        self.assertEqual(j["search_steps"], len(search_steps(res)))
        s = j["steps"][2]
        for k in ("prefix", "verdict", "runs", "hits", "clean", "evidence", "confidence"):
            self.assertIn(k, s)
        self.assertEqual(s["runs"], len(s["evidence"]))


class MatcherTest(unittest.TestCase):
    def test_exact_title_and_regex(self):
        m = bisect.Matcher("KASAN: dma-owned Read in str_to_user")
        self.assertTrue(m.matches("KASAN: dma-owned Read in str_to_user"))
        self.assertFalse(m.matches("KASAN: dma-owned Write in uvc_status_stop"))
        m = bisect.Matcher("^KASAN: dma-owned (Read|Write) in ")
        self.assertEqual(m.matching(["KASAN: dma-owned Write in f", "WARNING in g",
                                     "KASAN: dma-owned Write in f"]),
                         ["KASAN: dma-owned Write in f"])

    def test_invalid_regex_matches_exactly(self):
        m = bisect.Matcher("WARNING in f (")
        self.assertTrue(m.matches("WARNING in f ("))
        self.assertFalse(m.matches("WARNING in f"))
        with self.assertRaises(InputError):
            bisect.Matcher("  ")


class ClassifyTest(unittest.TestCase):
    LOG = ("[    1.0] ------------[ cut here ]------------\n"
           "[    1.0] WARNING: CPU: 0 PID: 1 at mm/x.c:10 foo_bar+0x1/0x2\n"
           "[    1.0] Call Trace:\n[    1.0]  <TASK>\n[    1.0]  foo_bar+0x1/0x2\n"
           "[    1.0]  baz+0x1/0x2\n[    1.0]  </TASK>\n[    1.0] ---[ end trace 0 ]---\n")

    def fr(self, d, text, outcome="ok", agent=True, crashed=()):
        console = Path(d) / "console.log"
        console.write_text(text)
        result = types.SimpleNamespace(console=console, outcome=outcome, ok=outcome == "ok",
                                       describe=lambda: f"guest {outcome}")
        return types.SimpleNamespace(result=result, agent={"x": 1} if agent else None,
                                     crashed=list(crashed), run_dir=Path(d))

    def test_hit_clean_failed_infra(self):
        with tempfile.TemporaryDirectory() as d:
            m = bisect.Matcher("WARNING in foo_bar")
            self.assertEqual(bisectjob.classify_run(self.fr(d, self.LOG), m).status, HIT)
            self.assertEqual(bisectjob.classify_run(self.fr(d, self.LOG, "panic", False), m).status, HIT)
            other = bisect.Matcher("WARNING in other")
            self.assertEqual(bisectjob.classify_run(self.fr(d, self.LOG), other).status, CLEAN)
            self.assertEqual(bisectjob.classify_run(self.fr(d, "", "panic"), other).status, FAILED)
            self.assertEqual(bisectjob.classify_run(self.fr(d, "", "ok", False), other).status, FAILED)
            self.assertEqual(bisectjob.classify_run(self.fr(d, "", crashed=[1]), other).status, INFRA)


if __name__ == "__main__":
    unittest.main()
