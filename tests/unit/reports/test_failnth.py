"""Unit tests for harness.reports.failnth (fail-nth steps and kmemleak in a console)."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

from harness.reports import failnth
from harness.cli import logcli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "failnth"
LOG_61 = FIXTURES / "6.1-uvcvideo-probe-disconnect.log"
LOG_612 = FIXTURES / "6.12-caller-tags-capped.log"


def text(p: Path) -> str:
    return p.read_text(encoding="utf-8")


def without(t: str, needle: str) -> str:
    """The console without the lines holding needle."""
    return "\n".join(ln for ln in t.split("\n") if needle not in ln)


def step(res: failnth.Result, path: str, n: int) -> failnth.Step:
    for s in res.paths[path].steps:
        if s.n == n:
            return s
    raise AssertionError(f"no step {path} n={n}")


class Linux61(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = text(LOG_61)
        cls.lines = cls.text.split("\n")
        cls.res = failnth.parse(cls.text)

    def test_result_line(self):
        r = self.res
        self.assertTrue(r.ran and r.result_line)
        self.assertIsNone(r.result_problem)
        self.assertEqual(r.driver, "uvcvideo")
        self.assertEqual(r.interfaces, ["1-1:1.0", "1-1:1.1"])
        self.assertIsNone(r.error)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(list(r.paths), ["probe", "disconnect"])

    def test_paths(self):
        probe, disc = self.res.paths["probe"], self.res.paths["disconnect"]
        self.assertEqual([s.n for s in probe.steps], [1, 2, 3, 4, 5, 6])
        self.assertEqual([s.pid for s in probe.steps], [93, 95, 97, 100, 102, 104])
        self.assertTrue(probe.completed)
        self.assertFalse(probe.capped)
        self.assertEqual(probe.calls, 5)
        self.assertEqual(probe.bound_at_end, ["1-1:1.0", "1-1:1.1"])
        self.assertEqual([s.n for s in disc.steps], [1, 2, 3])
        self.assertEqual(disc.calls, 2)

    def test_failed_calls(self):
        got = [(s.path, s.n, s.failed_call, s.fault.allocator if s.fault else None,
                s.fault.attr if s.fault else None) for s in self.res.steps()]
        self.assertEqual(got, [
            ("probe", 1, "kernfs_fop_write_iter", "__kmalloc", "failslab"),
            ("probe", 2, "uvc_probe", "kmalloc_trace", "failslab"),
            ("probe", 3, "uvc_parse_control", "__kmalloc", "failslab"),
            ("probe", 4, "uvc_ctrl_init_device", "__kmalloc", "fail_page_alloc"),
            ("probe", 5, None, None, None),          # __GFP_NOWARN: no dump
            ("probe", 6, None, None, None),          # not reached
            ("disconnect", 1, "kernfs_fop_write_iter", "__kmalloc", "failslab"),
            ("disconnect", 2, "kobject_uevent_env", "kmem_cache_alloc", "failslab"),
            ("disconnect", 3, None, None, None),
        ])
        f = step(self.res, "probe", 2).fault
        self.assertEqual((f.pid, f.comm), (95, "dmaharness-fail"))
        # the questionable "? kernfs_fop_write_iter" frame is left out
        self.assertEqual(step(self.res, "probe", 1).fault.stack[:5],
                         ["dump_stack_lvl", "should_fail_ex", "should_failslab",
                          "__kmem_cache_alloc_node", "__kmalloc"])
        self.assertIn("FAULT_INJECTION", self.lines[f.line - 1])

    def test_outcomes(self):
        got = {(s.path, s.n): s.outcome for s in self.res.steps()}
        self.assertEqual(got, {
            ("probe", 1): "clean", ("probe", 2): "clean", ("probe", 3): "left-bound",
            ("probe", 4): "tolerated", ("probe", 5): "tolerated", ("probe", 6): "not-reached",
            ("disconnect", 1): "clean", ("disconnect", 2): "clean", ("disconnect", 3): "not-reached",
        })
        self.assertEqual([(s.path, s.n) for s in self.res.steps() if s.suspicious], [("probe", 3)])

    def test_reports_between_markers(self):
        s3 = step(self.res, "probe", 3)
        self.assertEqual([r.title for r in s3.reports], ["WARNING in uvc_status_cleanup"])
        # lines of the console, not of the step's segment
        r = s3.reports[0]
        self.assertIn("cut here", self.lines[r.first_line - 1])
        self.assertIn("end trace", self.lines[r.last_line - 1])
        self.assertTrue(s3.first_line < r.first_line < r.last_line < s3.last_line)
        self.assertEqual([s.reports for s in self.res.steps() if s.n != 3 or s.path != "probe"],
                         [[]] * 8)

    def test_leaks_are_attributed_by_pid(self):
        k = self.res.kmemleak
        self.assertTrue(k.complete)
        self.assertEqual(k.count, 3)
        self.assertIsNone(k.error)
        self.assertEqual([(lk.title, lk.size, lk.comm, lk.pid) for lk in k.leaks], [
            ("memory leak in uvc_parse_streaming", 512, "dmaharness-fail", 97),
            ("memory leak in uvc_parse_streaming", 64, "dmaharness-fail", 97),
            ("memory leak in hub_event", 32, "kworker/0:2", 41),
        ])
        self.assertEqual([(lk.step.path, lk.step.n) if lk.step else None for lk in k.leaks],
                         [("probe", 3), ("probe", 3), None])
        self.assertEqual(k.leaks[0].address, "0xffff888006d3e200")
        self.assertEqual(k.leaks[0].stack[:2], ["kmalloc_trace", "uvc_parse_streaming"])
        self.assertTrue(self.lines[k.leaks[2].line - 1].startswith("unreferenced object 0xffff888005b0c880"))
        self.assertEqual(len(step(self.res, "probe", 3).leaks), 2)

    def test_json(self):
        j = json.loads(json.dumps(self.res.to_json()))
        self.assertEqual(j["version"], 1)
        self.assertEqual(j["suspicious"], [{"path": "probe", "n": 3}])
        s3 = j["paths"]["probe"]["steps"][2]
        self.assertEqual((s3["n"], s3["pid"], s3["injected"], s3["errno"], s3["bound_after"]),
                         (3, 97, True, 12, ["1-1:1.1"]))
        self.assertEqual(s3["failed_call"], "uvc_parse_control")
        self.assertEqual(s3["reports"][0]["title"], "WARNING in uvc_status_cleanup")
        self.assertEqual(s3["leaks"], ["memory leak in uvc_parse_streaming"] * 2)
        self.assertEqual(j["paths"]["probe"]["calls"], 5)
        self.assertEqual(j["kmemleak"]["outside_steps"], 1)
        self.assertEqual(j["kmemleak"]["leaks"][0]["step"], {"path": "probe", "n": 3})

    def test_text(self):
        t = self.res.format_text()
        self.assertIn("fail-nth on uvcvideo (1-1:1.0, 1-1:1.1)", t)
        self.assertIn("probe: 6 steps, completed: 5 injectable calls", t)
        rows = {tuple(ln.split()[:2]): ln for ln in t.split("\n") if ln.startswith(("  probe ", "  disconnect "))}
        self.assertIn("uvc_parse_control <- __kmalloc", rows[("probe", "3")])
        self.assertIn("left-bound (errno 12)", rows[("probe", "3")])
        self.assertIn("WARNING in uvc_status_cleanup", rows[("probe", "3")])
        self.assertIn("memory leak in uvc_parse_streaming", rows[("probe", "3")])
        self.assertIn("(no dump)", rows[("probe", "5")])
        self.assertIn("not-reached", rows[("disconnect", "3")])
        self.assertIn("1 step(s) worth a look", t)
        self.assertIn("kmemleak: 3 leak(s), 2 in fail-nth steps, 1 outside any step", t)
        self.assertIn("memory leak in hub_event  [32 bytes, kworker/0:2 pid 41] -> outside any step", t)


class Linux612(unittest.TestCase):
    def test_caller_tags_noprof_and_crc_backtraces(self):
        res = failnth.parse(text(LOG_612))
        pr = res.paths["probe"]
        self.assertEqual([s.n for s in pr.steps], [1, 2, 3])
        self.assertTrue(pr.capped)
        self.assertFalse(pr.completed)
        self.assertIsNone(pr.calls)
        self.assertEqual([s.failed_call for s in pr.steps],
                         ["kernfs_fop_write_iter", "uvc_status_init", "uvc_parse_control"])
        self.assertEqual(pr.steps[1].fault.allocator, "usb_alloc_urb")
        self.assertEqual(pr.steps[1].fault.pid, 121)
        self.assertEqual([r.title for r in pr.steps[1].reports],
                         ["KASAN: slab-use-after-free Read in uvc_status_cleanup"])
        self.assertEqual([s.outcome for s in pr.steps], ["clean"] * 3)
        self.assertEqual([s.suspicious for s in pr.steps], [False, True, False])
        k = res.kmemleak
        self.assertEqual([(lk.title, lk.pid, lk.size) for lk in k.leaks],
                         [("memory leak in uvc_status_init", 121, 16)])
        self.assertIs(k.leaks[0].step, pr.steps[1])
        self.assertIn("probe: 3 steps, stopped at the cap", res.format_text())


class Damaged(unittest.TestCase):
    """Consoles where part of fail-nth's output is missing or cut."""

    def test_no_result_line(self):
        res = failnth.parse(without(text(LOG_61), "DMAHARNESS-FAILNTH {"))
        self.assertTrue(res.ran)
        self.assertFalse(res.result_line)
        self.assertEqual(res.interfaces, [])
        pr = res.paths["probe"]
        self.assertEqual([s.n for s in pr.steps], [1, 2, 3, 4, 5, 6])
        self.assertTrue(pr.completed)       # from the last step's marker
        self.assertIsNone(pr.capped)
        s3 = pr.steps[2]
        self.assertEqual((s3.pid, s3.injected, s3.errno, s3.bound_after), (97, True, 12, ["1-1:1.1"]))
        self.assertEqual(s3.outcome, "left-bound")
        self.assertEqual(len(s3.leaks), 2)

    def test_result_line_cut(self):
        t = text(LOG_61)
        k = t.index('"disconnect":{"steps"')
        res = failnth.parse(t[:k] + "\n[   40.000000] usb 1-1: reset high-speed USB device\n" + t[k:])
        self.assertFalse(res.result_line)
        self.assertIn("not JSON", res.result_problem)
        self.assertEqual(len(res.paths["disconnect"].steps), 3)
        self.assertIn("not JSON", res.format_text())

    def test_log_ends_inside_a_step(self):
        t = text(LOG_61)
        res = failnth.parse(t[:t.index("uvc_delete+0x4e/0x3a0")])
        pr = res.paths["probe"]
        self.assertEqual([s.n for s in pr.steps], [1, 2, 3])
        s3 = pr.steps[2]
        self.assertFalse(s3.complete)
        self.assertEqual(s3.outcome, "unknown")
        self.assertTrue(s3.suspicious)
        self.assertEqual(s3.failed_call, "uvc_parse_control")
        self.assertEqual([r.truncated for r in s3.reports], [True])
        self.assertIsNone(pr.completed)
        self.assertIsNone(res.kmemleak)
        self.assertNotIn("disconnect", res.paths)

    def test_task_died(self):
        t = text(LOG_612).replace(
            "pid=123 end injected=1 errno=12 bound=-",
            "pid=123 end injected=? errno=0 bound=- died=timeout")
        t = without(t, "DMAHARNESS-FAILNTH {")
        s = failnth.parse(t).paths["probe"].steps[2]
        self.assertEqual((s.injected, s.died, s.outcome), (None, "timeout", "died"))
        self.assertTrue(s.suspicious)

    def test_setup_error_only(self):
        line = ('DMAHARNESS-FAILNTH {"version":1,"driver":"uvcvideo","interfaces":[],"max":500,'
                '"settle_ms":200,"paths":{},"error":"/sys/kernel/debug/failslab/ignore-gfp-wait: '
                'No such file or directory (the kernel needs CONFIG_FAILSLAB and '
                'CONFIG_FAULT_INJECTION_DEBUG_FS, debugfs mounted)","exit_code":5}')
        res = failnth.parse("DMAHARNESS-INIT kmemleak cleared\n" + line + "\n")
        self.assertTrue(res.ran and res.result_line)
        self.assertEqual(res.exit_code, 5)
        self.assertEqual(res.paths, {})
        self.assertIn("failslab/ignore-gfp-wait", res.error)
        self.assertIn("error: /sys/kernel/debug/failslab/ignore-gfp-wait", res.format_text())


class KmemleakOnly(unittest.TestCase):
    def test_a_run_without_fail_nth(self):
        t = text(LOG_612)
        t = "\n".join(ln for ln in t.split("\n") if "DMAHARNESS-FAILNTH" not in ln)
        res = failnth.parse(t)
        self.assertFalse(res.ran)
        self.assertEqual([lk.step for lk in res.kmemleak.leaks], [None])
        out = res.format_text()
        self.assertNotIn("fail-nth on", out)
        self.assertIn("kmemleak: 1 leak(s), 0 in fail-nth steps, 1 outside any step", out)

    def test_empty_block_and_errors(self):
        k = failnth.parse_kmemleak("DMAHARNESS-KMEMLEAK begin\nDMAHARNESS-KMEMLEAK end leaks=0 error=scan-failed\n")
        self.assertEqual((k.leaks, k.count, k.error, k.complete), ([], 0, "scan-failed", True))
        k = failnth.parse_kmemleak(text(LOG_61).split("DMAHARNESS-KMEMLEAK end")[0])
        self.assertFalse(k.complete)
        self.assertIsNone(k.count)
        self.assertEqual(len(k.leaks), 3)
        self.assertIsNone(failnth.parse_kmemleak("nothing here\n"))

    def test_nothing(self):
        res = failnth.parse("[    0.000000] Linux version 6.1.0\nDMAHARNESS-END status=0\n")
        self.assertFalse(res.ran)
        self.assertIsNone(res.kmemleak)
        self.assertEqual(res.format_text(), "no fail-nth steps and no kmemleak block\n")


class Pieces(unittest.TestCase):
    def test_machinery(self):
        for f in ("should_failslab", "__should_failslab", "should_fail_ex", "kmalloc_trace",
                  "__kmalloc_cache_noprof", "kmem_cache_alloc_lru", "__alloc_pages_noprof",
                  "alloc_pages_mpol_noprof", "kzalloc", "devm_kmalloc", "usb_alloc_urb",
                  "kstrdup_const", "kvmalloc_node_noprof", "dump_stack_lvl"):
            self.assertTrue(failnth.is_alloc_machinery(f), f)
        for f in ("uvc_probe", "uvc_parse_control", "kernfs_fop_write_iter", "kobject_uevent_env",
                  "usb_probe_interface", "v4l2_ctrl_new"):
            self.assertFalse(failnth.is_alloc_machinery(f), f)

    def test_dump_without_task_markers_and_of_another_task(self):
        lines = [
            "[    9.1] FAULT_INJECTION: forcing a failure.",
            "[    9.1] name failslab, interval 1, probability 0, space 0, times 1",
            "[    9.1] CPU: 1 PID: 12 Comm: kworker/1:0 Not tainted 5.10.0 #1",
            "[    9.1] Call Trace:",
            "[    9.1]  dump_stack+0x8b/0xa8",
            "[    9.1]  should_fail.cold+0x5/0xa",
            "[    9.1]  __kmalloc_track_caller+0x6b/0x2d0",
            "[    9.1]  ? hub_event+0x10/0x2120",
            "[    9.1]  hub_event+0x8f1/0x2120",
            "[    9.1] usb 1-1: some message after the stack",
            "[    9.1]  unrelated_frame+0x1/0x2",
        ]
        (d,) = failnth.fault_dumps(lines, first_lineno=10)
        self.assertEqual(d.stack, ["dump_stack", "should_fail", "__kmalloc_track_caller", "hub_event"])
        self.assertEqual((d.call, d.allocator, d.pid, d.comm, d.line), ("hub_event", "__kmalloc_track_caller",
                                                                         12, "kworker/1:0", 10))

    def test_a_dump_of_another_task_is_not_the_steps(self):
        t = text(LOG_61).replace("CPU: 0 PID: 95 Comm: dmaharness-fail", "CPU: 0 PID: 41 Comm: kworker/0:2")
        self.assertIsNone(step(failnth.parse(t), "probe", 2).fault)

    def test_outcome_table(self):
        def s(injected, errno, bound, died=None, complete=True):
            return failnth.Step(path="x", n=1, pid=1, injected=injected, errno=errno, bound_after=bound,
                                died=died, complete=complete, first_line=1, last_line=2)
        ifs = ["1-1:1.0", "1-1:1.1"]
        cases = [
            ("probe", s(True, 12, []), "clean"),
            ("probe", s(True, 12, ["1-1:1.1"]), "left-bound"),
            ("probe", s(True, 0, ifs), "tolerated"),
            ("probe", s(True, 0, ["1-1:1.1"]), "lost"),
            ("probe", s(False, 0, ifs), "not-reached"),
            ("disconnect", s(True, 12, ifs), "clean"),
            ("disconnect", s(True, 12, ["1-1:1.0"]), "partial"),
            ("disconnect", s(True, 0, []), "clean"),
            ("disconnect", s(True, 0, ["1-1:1.1"]), "left-bound"),
            ("disconnect", s(None, 0, []), "unknown"),
            ("disconnect", s(True, 0, [], complete=False), "unknown"),
            ("probe", s(None, 0, [], died="signal-9"), "died"),
        ]
        for path, st, want in cases:
            with self.subTest(path=path, st=(st.injected, st.errno, st.bound_after, st.died)):
                self.assertEqual(failnth.outcome(path, st, ifs), want)
                self.assertIn(want, failnth.OUTCOMES)


class Command(unittest.TestCase):
    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = logcli.failnth_main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_exit_codes(self):
        code, out, _ = self.run_main([str(LOG_61), "--json"])
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out)["paths"]["disconnect"]["calls"], 2)
        code, out, _ = self.run_main([str(LOG_612)])
        self.assertEqual(code, 0)
        self.assertIn("KASAN: slab-use-after-free Read in uvc_status_cleanup", out)
        with tempfile.TemporaryDirectory() as d:
            code, _, err = self.run_main([str(Path(d) / "missing.log")])
        self.assertEqual(code, 4)
        self.assertIn("no such file", err)
        code, _, _ = self.run_main(["--bogus"])
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
