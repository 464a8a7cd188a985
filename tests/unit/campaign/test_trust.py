"""Issue #40: a case or a campaign from someone else cannot touch the host.

A campaign folder is data: its jobs carry only the options the planner
writes (outputs inside the folder), links, FIFOs and devices inside it are
refused, and what collect prints or computes from it is checked first.
Each test here failed on 2576d41."""

import io
import json
import os
import shutil
import signal
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors
from harness.campaign import campaign, folder as cfolder
from harness.cli import jobcheck
from harness.progress import Progress
from tests.unit.cli.test_main import run

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "patches" / "6.1" / "cases" / "uvc-status-buffer"


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmaharness-trust-"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dir = self.tmp / "camp"
        self.outside = self.tmp / "outside"
        self.outside.mkdir()
        signal.signal(signal.SIGALRM, self._hung)
        signal.alarm(20)                        # a FIFO opened for reading blocks forever
        self.addCleanup(signal.alarm, 0)

    @staticmethod
    def _hung(*_):
        raise AssertionError("hung (a FIFO read?)")

    def plan(self, *extra, runs="1"):
        code, out, err = run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", runs,
                              "--json"] + (["--", *extra] if extra else []))
        self.assertEqual(code, 0, err)
        return json.loads(out)

    def edit_jobs(self, change):
        f = self.dir / "campaign.json"
        data = json.loads(f.read_text())
        change(data["jobs"])
        f.write_text(json.dumps(data))

    def job(self, jid):
        """`dmaharness job ID`'s check (main.run_job's exit code for its error);
        never the job itself: on a regression it would build and boot."""
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            jobcheck.job_args([jid])
            return 0, "", ""
        except errors.HarnessError as e:
            return e.exit_code, "", e.message
        finally:
            os.chdir(cwd)

    def outside_untouched(self):
        self.assertEqual(sorted(p.name for p in self.outside.iterdir()), ["keep"])
        self.assertEqual((self.outside / "keep").read_text(), "mine\n")

    def keep(self) -> Path:
        (self.outside / "keep").write_text("mine\n")
        return self.outside / "keep"


class JobArguments(Base):
    """1: every job's argv is the planner's, its RUN-ARGS run's own options."""

    def test_a_job_with_a_host_output_or_an_unplanned_option_is_refused_by_job(self):
        self.plan("--duration", "5s")
        x = str(self.outside / "x")
        for extra in [["--json-out", x], ["--json-o", x], [f"--json-out={x}"], ["--run-dir", x],
                      ["--qemu-opts", f"-D {x}"], ["--usb-host", "1d6b:0002"],
                      ["--ccache-remote", f"file:{x}"], ["--case", "/etc"],
                      ["--case-run", "7"], ["--junit", x], ["--kcidb", x], ["stray"],
                      ["--help"]]:
            with self.subTest(extra=extra):
                self.edit_jobs(lambda jobs: jobs[0]["argv"].extend(extra))
                jid = json.loads((self.dir / "campaign.json").read_text())["jobs"][0]["id"]
                code, _, err = self.job(jid)
                self.assertEqual(code, errors.EXIT_INPUT, err)
                self.assertIn(f"job {jid}", err)
                self.edit_jobs(lambda jobs: jobs[0]["argv"].__delitem__(
                    slice(len(jobs[0]["argv"]) - len(extra), None)))
        self.assertEqual(list(self.outside.iterdir()), [])

    def test_the_planned_part_of_a_job_cannot_change(self):
        self.plan()
        for i, val in ((2, "/etc"), (8, "/tmp/x.json"), (8, "results/fix-1.json"),
                       (6, "2"), (4, "fix")):
            with self.subTest(i=i, val=val):
                good = json.loads((self.dir / "campaign.json").read_text())
                self.edit_jobs(lambda jobs: jobs[0]["argv"].__setitem__(i, val))
                code, _, err = self.job("before-1")
                self.assertEqual(code, errors.EXIT_INPUT, err)
                self.assertIn("job before-1", err)
                (self.dir / "campaign.json").write_text(json.dumps(good))
        self.assertEqual(sorted(p.name for p in self.outside.iterdir()), [])

    def test_a_good_job_passes_the_check(self):
        self.plan("--duration", "5s", "--append", "x'\n$(touch pwned)",
                  "--qemu-opts", "-icount shift=0,sleep=off")
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            argv = jobcheck.job_args(["fix-1"])
        finally:
            os.chdir(cwd)
        self.assertEqual(argv[:9], ["run", "--case", "patches/6.1/cases/uvc-status-buffer",
                                    "--case-variant", "fix", "--case-run", "1", "--json-out",
                                    "results/fix-1.json"])

    def test_campaign_refuses_a_hostile_job_before_running_anything(self):
        self.plan()
        self.edit_jobs(lambda jobs: jobs[1]["argv"].extend(["--json-out", str(self.tmp / "x")]))
        with mock.patch.object(campaign, "run_local") as ran:
            code, out, err = run(["campaign", str(self.dir), "--parallel", "1", "--json"])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        self.assertIn("--json-out", json.loads(out)["error"]["message"])
        ran.assert_not_called()

    def test_a_bisection_whose_next_steps_would_write_the_host_is_refused(self):
        code, _, err = run(["plan", "bisect", "--series",
                            str(ROOT / "tests/fixtures/bisect/6.1/series"),
                            "--signature", "x", "-o", str(self.dir)])
        self.assertEqual(code, 0, err)
        f = self.dir / "campaign.json"
        data = json.loads(f.read_text())
        data["extra"] = ["--run-dir", str(self.tmp / "x")]
        f.write_text(json.dumps(data))
        with mock.patch.object(campaign, "run_local") as ran:
            code, _, err = run(["campaign", str(self.dir), "--parallel", "1"])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        ran.assert_not_called()


class PlanArguments(Base):
    """2 and 3: RUN-ARGS checked before anything is written; a plan whole or not at all."""

    def test_run_args_the_planner_sets_or_that_write_the_host_are_refused(self):
        for what, extra in (("case", ["--json-out", str(self.tmp / "elsewhere.json")]),
                            ("case", ["--case-variant", "fix"]),
                            ("case", ["--run-dir", str(self.tmp / "r")]),
                            ("case", ["not-an-option"]),
                            ("sweep", ["--batch", "5/9"]), ("sweep", ["--job", "x"])):
            with self.subTest(what=what, extra=extra):
                argv = (["plan", "case", str(CASE)] if what == "case" else
                        ["plan", "sweep", "--usb-drivers", "--shares", "2"])
                code, _, err = run(argv + ["-o", str(self.dir), "--", *extra])
                self.assertIn(code, (errors.EXIT_USAGE, errors.EXIT_INPUT), err)
                self.assertIn(extra[0].split("=")[0] if extra[0].startswith("-") else extra[0],
                              err)
                self.assertFalse(self.dir.exists())
                self.assertEqual([p.name for p in self.tmp.iterdir()], ["outside"])

    def test_runs_are_bounded_and_the_count_printed_is_the_count_planned(self):
        for runs in ("0", "-1", "100000000"):
            with self.subTest(runs=runs):
                code, _, err = run(["plan", "case", str(CASE), "-o", str(self.dir),
                                    "--runs", runs])
                self.assertIn(code, (errors.EXIT_USAGE, errors.EXIT_INPUT), err)
                self.assertFalse(self.dir.exists())
        code, out, _ = run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "3"])
        self.assertEqual(code, 0)
        self.assertIn("x 3 runs", out)
        self.assertEqual(len(campaign.load(self.dir).jobs), 4 * 3)

    def test_an_interrupted_plan_leaves_nothing_and_a_rerun_works(self):
        for exc in (KeyboardInterrupt(), OSError(28, "No space left on device")):
            with self.subTest(exc=type(exc).__name__), \
                    mock.patch.object(campaign, "_save", side_effect=exc):
                code, _, _ = run(["plan", "case", str(CASE), "-o", str(self.dir)])
                self.assertNotEqual(code, 0)
                self.assertEqual([p.name for p in self.tmp.iterdir()], ["outside"])
        self.plan()                                 # the rerun is not refused
        self.assertTrue((self.dir / "results").is_dir())


class Links(Base):
    """4: links, FIFOs and devices inside the folder are never followed or read."""

    def test_a_linked_results_folder_or_result_is_refused(self):
        self.plan()
        shutil.rmtree(self.dir / "results")
        (self.dir / "results").symlink_to(self.outside)
        self.keep()
        self.assertEqual(self.job("before-1")[0], errors.EXIT_INPUT)
        with self.assertRaises(errors.InputError):
            campaign.pending(campaign.load(self.dir))
        self.assertEqual(run(["collect", str(self.dir)])[0], errors.EXIT_INPUT)
        (self.dir / "results").unlink()
        (self.dir / "results").mkdir()
        (self.dir / "results" / "before-1.json").symlink_to(self.outside / "keep")
        self.assertEqual(self.job("before-1")[0], errors.EXIT_INPUT)
        self.outside_untouched()

    def test_a_linked_joblog_is_refused_before_gnu_parallel_runs(self):
        self.plan()
        (self.dir / "joblog").symlink_to(self.keep())
        with mock.patch.object(campaign, "_parallel") as par:
            with self.assertRaises(errors.InputError):
                campaign.run_local(campaign.load(self.dir), 1, Progress(quiet=True))
        par.assert_not_called()
        with self.assertRaises(errors.InputError):
            campaign.tidy_joblog(self.dir)
        self.outside_untouched()

    def test_collect_never_writes_through_a_linked_consoles_folder(self):
        c = campaign.plan_sweep(campaign.SweepPlan(self.dir, ("usb-kbd",)))
        for j in c.jobs:
            dev = "(boot)" if j.id == "boot" else j.id
            (self.dir / j.result).write_text(json.dumps(
                {"ok": True, "job": dev, "build": {"key": "6.12-0123"},
                 "device": {"device": dev, "class": "usb", "state": "ran", "reports": []},
                 "console_text": "hello\n"}))
        self.keep()
        (self.dir / "consoles").symlink_to(self.outside)
        code, _, err = run(["collect", str(self.dir)])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        (self.dir / "consoles").unlink()
        (self.dir / "consoles").mkdir()
        (self.dir / "consoles" / "boot.log").symlink_to(self.outside / "keep")
        (self.dir / "sweep.html").symlink_to(self.outside / "keep")
        code, _, err = run(["collect", str(self.dir)])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        self.outside_untouched()

    def test_fifos_where_collect_reads_do_not_hang(self):
        self.plan()
        os.mkfifo(self.dir / "results" / "before-1.json")
        code, out, err = run(["collect", str(self.dir), "--json"])
        self.assertEqual(code, errors.EXIT_INCOMPLETE, err)
        job = [j for j in json.loads(out)["jobs"] if j["id"] == "before-1"][0]
        self.assertEqual(job["status"], "failed")
        self.assertIn("FIFO", job["why"])
        for rel in ("joblog", "slurm/attempt-1", "campaign.json"):
            with self.subTest(rel=rel):
                (self.dir / "slurm").mkdir(exist_ok=True)
                if (self.dir / rel).exists():
                    (self.dir / rel).unlink()
                os.mkfifo(self.dir / rel)
                code, _, err = run(["collect", str(self.dir)])
                self.assertEqual(code, errors.EXIT_INPUT, err)
                (self.dir / rel).unlink()
                if rel == "campaign.json":
                    break
                (self.dir / rel).write_text("")

    def test_the_folder_door_refuses_links_fifos_and_escapes(self):
        self.dir.mkdir()
        (self.dir / "d").symlink_to(self.outside)
        self.keep()
        for rel in ("d/keep", "../outside/keep", "/etc/passwd", "a/./b", ""):
            with self.subTest(rel=rel), self.assertRaises(errors.InputError):
                cfolder.write_text(self.dir, rel, "x")
            with self.subTest(rel=rel), self.assertRaises(errors.InputError):
                cfolder.read_bytes(self.dir, rel)
        (self.dir / "big").write_bytes(b"x" * 2000)
        with self.assertRaises(errors.InputError):
            cfolder.read_bytes(self.dir, "big", limit=1000)
        self.outside_untouched()


class Results(Base):
    """5, 6, 7: what collect computes with or prints is checked first."""

    def write_results(self, change):
        c = campaign.load(self.dir)
        for j in c.jobs:
            variant, r = j.id.rsplit("-", 1)
            res = {"ok": True, "job": {"variant": variant, "run": int(r)},
                   "signatures": [{"title": "KASAN: x", "kind": "KASAN", "count": 1,
                                   "first": {"kind": "KASAN", "title": "KASAN: x"}}]}
            change(res)
            (self.dir / j.result).write_text(json.dumps(res) if isinstance(res, dict) else res)

    def collect(self, *more):
        code, out, err = run(["collect", str(self.dir), *more])
        self.assertNotEqual(code, errors.EXIT_INTERNAL, err)
        self.assertNotIn("Traceback", err)
        return code, out, err

    def test_numbers_no_float_holds_are_failed_jobs_not_bugs(self):
        self.plan()
        for raw in ('"count": 1e400', '"count": -1e400', '"count": 1e999999'):
            with self.subTest(raw=raw):
                c = campaign.load(self.dir)
                for j in c.jobs:
                    v, r = j.id.rsplit("-", 1)
                    (self.dir / j.result).write_text(
                        '{"ok": true, "job": {"variant": "%s", "run": %s}, "signatures": '
                        '[{"title": "t", "kind": "k", %s, "first": {"kind": "k", "title": "t", '
                        '"first_line": 1e400}}]}' % (v, r, raw))
                code, _, _ = self.collect()
                self.assertEqual(code, errors.EXIT_INCOMPLETE)

    def test_joblog_times_no_float_holds_and_garbage_lines(self):
        self.plan()
        (self.dir / "joblog").write_text(
            "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
            "1\tbox\t1e400\t1e400\t0\t0\t1\t0\tdmaharness job before-1\n"
            "\u00b2\tx\t1\t1\t0\t0\t0\t0\tdmaharness job fix-1\n"
            + "9" * 5000 + "\tx\n" + "2\t" + "h" * 200000 + "\t1\t1\t0\t0\t0\t0\tx\n"
            "\x00\x1b[2J\n")
        self.write_results(lambda res: None)
        (self.dir / "results" / "before-1.json").unlink()
        junit = self.tmp / "j.xml"
        code, out, _ = self.collect("--json", "--junit", str(junit),
                                    "--kcidb", str(self.tmp / "k.json"))
        self.assertEqual(code, errors.EXIT_INCOMPLETE)
        job = json.loads(out)["jobs"][0]
        self.assertEqual(job["seconds"], 0.0)
        self.assertIn("exit 1 on box", job["why"])

    def test_a_failed_jobs_garbage_is_no_bug_of_the_kcidb_export(self):
        self.plan()
        self.write_results(lambda res: res.update(ok=False, signatures=[1], error="x",
                                                  build=5, kernel=[1], outcome={"a": 1}))
        code, _, err = self.collect("--kcidb", str(self.tmp / "k.json"),
                                    "--junit", str(self.tmp / "j.xml"))
        self.assertIn(code, (errors.EXIT_INPUT, errors.EXIT_INCOMPLETE), err)

    def test_escape_sequences_never_reach_the_terminal(self):
        self.plan()
        self.write_results(lambda res: res["signatures"][0].update(title="KASAN: \x1b]0;pwn\x07x"))
        code, out, err = self.collect()
        self.assertEqual(code, errors.EXIT_INCOMPLETE)
        self.assertNotIn("\x1b", out + err)
        self.write_results(lambda res: res.update(ok=False, failure="boom \x1b[2J\x9b31m"))
        self.edit_jobs(lambda jobs: jobs[0]["argv"].extend(["--append", "\x1b[2J"]))
        code, out, err = self.collect()
        self.assertEqual(code, errors.EXIT_INCOMPLETE)
        self.assertNotIn("\x1b", out + err)
        self.assertNotIn("\x9b", out + err)
        self.assertIn("boom", out)


if __name__ == "__main__":
    unittest.main()
