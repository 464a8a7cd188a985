"""Campaigns: the job list, collect's merge and its listing, JUnit."""

import json
import os
import shlex
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.checks import bisect, caserun, diff, patchcheck
from harness.campaign import campaign, junit
from harness.cli import main as cli
from harness.progress import Progress
from harness.reports import engine
from harness.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "patches" / "6.1" / "cases" / "uvc-status-buffer"

DETECTOR = """\
[    1.0] DMA-API: xhci_hcd 0000:00:01.0: device driver maps a buffer that shares a cache line with other data of its object [object offset=0] [object size=256] [cache=kmalloc-256] [buffer size=255] [shared bytes before=0 after=1] [line size=128] [DMA_FROM_DEVICE]
[    1.0] WARNING: CPU: 0 PID: 8 at kernel/dma/debug_cacheline.c:160 cl_report+0x106/0x117
[    1.0] Call Trace:
[    1.0]  <TASK>
[    1.0]  {frame}+0x10/0x20
[    1.0]  usb_submit_urb+0x10/0x20
[    1.0]  </TASK>
[    1.0] ---[ end trace 0000000000000000 ]---
"""


def signatures(*frames: str) -> list[dict]:
    text = "".join(DETECTOR.replace("{frame}", f) for f in frames)
    return [s.to_json_full() for s in engine.fold(engine.parse(text))]


class Plan(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "c"

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, runs=2, extra=("--duration", "5s")):
        return campaign.plan_case(campaign.CasePlan(CASE, runs, self.dir, tuple(extra)))

    def test_jobs_are_plain_commands_dmaharness_accepts(self):
        c = self.plan()
        self.assertEqual([j.id for j in c.jobs][:3], ["before-1", "before-2", "fix-1"])
        self.assertEqual(len(c.jobs), 4 * 2)
        lines = (self.dir / "jobs.txt").read_text().splitlines()
        self.assertEqual(lines, [f"dmaharness job {j.id}" for j in c.jobs])
        for ln, j in zip(lines, c.jobs):
            argv = campaign.job_argv(self.dir, shlex.split(ln)[2])
            self.assertEqual(argv, j.argv)
            a = cli.parser().parse_args(list(argv))
            # an in-tree case is named by its path in the checkout (the
            # variant keys run --case uses), resolved there from anywhere
            self.assertEqual((a.command, str(a.case), a.case_variant),
                             ("run", "patches/6.1/cases/uvc-status-buffer",
                              j.id.rsplit("-", 1)[0]))
            cwd = os.getcwd()
            os.chdir(self.dir)                  # where a job runs
            try:
                self.assertEqual(caserun.resolve_case(a.case), CASE)
            finally:
                os.chdir(cwd)
            self.assertEqual(str(a.json_out), j.result)
            self.assertIsNone(a.kernel)
            self.assertEqual(a.duration, 5.0)
        # the case travels with the campaign, its patches too
        self.assertTrue((self.dir / "case" / "case.toml").is_file())
        self.assertTrue((self.dir / "case" / "fix").is_dir())
        self.assertEqual(campaign.load(self.dir).jobs, c.jobs)

    def test_a_case_from_elsewhere_travels_as_its_copy(self):
        import shutil
        own = Path(self.tmp.name) / "my-case"
        shutil.copytree(CASE, own)
        c = campaign.plan_case(campaign.CasePlan(own, 1, self.dir, ()))
        a = cli.parser().parse_args(list(c.jobs[0].argv))
        self.assertEqual(str(a.case), "case")
        self.assertIsNone(a.kernel)         # not under patches/<version>/: no version known

    def test_a_folder_with_something_in_it_is_refused(self):
        self.dir.mkdir()
        (self.dir / "x").write_text("")
        with self.assertRaises(InputError):
            self.plan()
        with self.assertRaises(InputError):
            campaign.load(Path(self.tmp.name))

    def test_collect_lists_missing_and_failed_jobs_and_merges_only_when_all_are_back(self):
        c = self.plan(runs=1)
        col = campaign.collect(self.dir)
        self.assertEqual([s.status for s in col.jobs], ["missing"] * 4)
        self.assertTrue(all(s.why == "never run" for s in col.jobs))
        self.assertIsNone(col.outcome)
        # GNU parallel's joblog: the fix job was killed; fix-aligned failed
        log = ["Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"]
        for k, (j, code, sig) in enumerate(zip(c.jobs, ("0", "-1", "6", "0"),
                                               ("0", "9", "0", "0"))):
            log.append(f"{k + 1}\t:\t0\t12.5\t0\t0\t{code}\t{sig}\t{j.line()}")
        (self.dir / "joblog").write_text("\n".join(log) + "\n")
        res = self.dir / "results"
        ok = {"ok": True, "job": {"variant": "before", "run": 1},
              "signatures": signatures("uvc_v4l2_open", "usb_string")}
        (res / "before-1.json").write_text(json.dumps(ok))
        (res / "fix-aligned-1.json").write_text(json.dumps(
            {"ok": False, "failure": "the guest panicked"}))
        (res / "fix-coherent-1.json").write_text("{not json")
        col = campaign.collect(self.dir)
        st = {s.job.id: (s.status, s.why) for s in col.jobs}
        self.assertEqual(st["before-1"], ("done", ""))
        self.assertEqual(st["fix-1"], ("missing", "exit -1, signal 9, no result came back"))
        self.assertEqual(st["fix-aligned-1"], ("failed", "the guest panicked"))
        self.assertEqual(st["fix-coherent-1"][0], "failed")
        self.assertIsNone(col.outcome)
        text = campaign.format_incomplete(col)
        self.assertIn("1 of 4 jobs came back; 3 missing or failed", text)
        self.assertIn(c.jobs[1].command(), text)
        self.assertEqual(col.to_json()["complete"], False)
        # all back: the merge is run --case's compare_case
        for v in ("fix", "fix-aligned", "fix-coherent"):
            (res / f"{v}-1.json").write_text(json.dumps(
                {"ok": True, "job": {"variant": v, "run": 1},
                 "signatures": signatures("usb_string")}))
        col = campaign.collect(self.dir)
        self.assertEqual(col.incomplete, [])
        self.assertEqual(len(col.outcome.comparisons), 3)
        rows = {r.title: r.status for r in col.outcome.comparisons[0].diff.rows}
        self.assertEqual(sorted(rows.values()), ["fixed", "unchanged"])
        # the case expects the status URB's reports fixed: with uvc_v4l2_open's
        # but without the resubmission's and KASAN's, the verdict is no
        self.assertFalse(col.outcome.matches)
        self.assertEqual(diff.exit_code(col.outcome.matches), 1)

        # JUnit: 4 runs + 3 expectations, each a testcase; times from the joblog
        root = ET.fromstring(junit.junit(col))
        cases = root.findall(".//testcase")
        self.assertEqual(len(cases), 7)
        self.assertEqual(cases[0].get("name"), "before-1")
        self.assertEqual(cases[0].get("time"), "12.500")
        self.assertIn("uvc_v4l2_open", cases[0].find("system-out").text)
        expect = [c for c in cases if c.get("classname").endswith(".expect")]
        self.assertEqual(len(expect), 3)
        failing = [c for c in expect if c.find("failure") is not None]
        self.assertEqual(len(failing), 3)
        for c in failing:
            self.assertIn("KASAN: dma-owned", c.find("failure").get("message"))
            self.assertIn("usb_string", c.find("failure").text)

    def test_junit_of_an_incomplete_campaign_fails(self):
        self.plan(runs=1)
        root = ET.fromstring(junit.junit(campaign.collect(self.dir)))
        self.assertEqual(root.find("testsuite").get("failures"), "5")


SERIES = ROOT / "tests" / "fixtures" / "bisect" / "6.1" / "series"
SIG = "^DMA-API: .* in uvc_v4l2_open$"


class BisectCampaign(unittest.TestCase):
    """plan bisect, driven by a fake engine that writes each needed job's
    result as a run of the real fixture would: the signature from patch 11 on."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "b"

    def tearDown(self):
        self.tmp.cleanup()

    @staticmethod
    def outcome(prefix: int, run: int) -> dict:
        if prefix >= 11:
            return {"status": "hit", "titles": ["DMA-API: ... in uvc_v4l2_open"],
                    "detail": f"p{prefix}-{run}", "wall": 4.0}
        if prefix == 5 and run == 1:        # a run that failed: never a hit
            return {"status": "failed", "titles": [], "detail": "panic", "wall": 1.0}
        return {"status": "clean", "titles": [], "detail": f"p{prefix}-{run}", "wall": 4.0}

    def engine(self, ran: list):
        def run(c, first):
            for st in campaign.states(c):
                if st.status == "done":
                    continue
                argv = list(st.job.argv)
                prefix = int(argv[argv.index("--prefix") + 1])
                self.assertEqual(argv[argv.index("--series") + 1],
                                 "tests/fixtures/bisect/6.1/series")
                self.assertEqual(argv[argv.index("--signature") + 1], SIG)
                self.assertIn("--duration", argv)
                run_n = int(st.job.id.split("-")[1])
                ran.append(st.job.id)
                (c.folder / st.job.result).write_text(json.dumps(
                    {"ok": True, "bisect_run": self.outcome(prefix, run_n)}))
        return run

    def test_the_campaign_finds_the_local_bisections_culprit_by_the_same_steps(self):
        campaign.plan_bisect(campaign.BisectPlan(SERIES, SIG, self.dir,
                                                 extra=("--duration", "4s")))
        ran: list = []
        col = campaign.drive_bisect(campaign.load(self.dir), self.engine(ran), Progress(quiet=True))
        self.assertIsNotNone(col.bisection)
        self.assertEqual(col.culprit()["number"], 11)
        self.assertTrue(col.culprit()["patch"].endswith("Embed-the-status-URB-buffer-in-struct.patch"))
        self.assertEqual(col.incomplete, [])

        # the local search over the same run outcomes: the same steps and verdicts
        class Local:
            def key(s, prefix):
                return ""

            def build(s, prefix):
                return None

            def run(s, prefix, first, count):
                return [bisect.RunOutcome.from_json(self.outcome(prefix, r))
                        for r in range(first + 1, first + count + 1)]
        local = bisect.bisect(Local(), 16, 0, 16, bisect.Policy())
        self.assertEqual([(x.prefix, x.verdict, len(x.runs)) for x in col.bisection.steps],
                         [(x.prefix, x.verdict, len(x.runs)) for x in local.steps])
        self.assertEqual(col.bisection.culprit, local.culprit)
        # jobs were only the runs the search asked for, each run once, in jobs.txt order
        lines = (self.dir / "jobs.txt").read_text().splitlines()
        self.assertEqual(len(lines), len(ran))
        self.assertEqual(len(set(ran)), len(ran))
        self.assertEqual(sum(len(x.runs) for x in local.steps), len(ran))
        # collect gives the same, and the JUnit file a passing culprit case
        again = campaign.collect(self.dir)
        self.assertEqual(again.bisection.culprit, 11)
        root = ET.fromstring(junit.junit(again))
        names = [tc.get("name") for tc in root.iter("testcase")]
        self.assertIn("culprit 11", names)
        self.assertEqual(root.find("testsuite").get("failures"), "0")

    def test_a_step_whose_runs_never_come_back_stops_with_them_listed(self):
        campaign.plan_bisect(campaign.BisectPlan(SERIES, SIG, self.dir))
        col = campaign.drive_bisect(campaign.load(self.dir), lambda c, first: None,
                                    Progress(quiet=True))
        self.assertIsNone(col.bisection)
        self.assertEqual([s.job.id for s in col.incomplete], ["p0-1", "p0-2"])
        self.assertIn("never run", campaign.format_incomplete(col))

    def test_bad_plans(self):
        with self.assertRaisesRegex(InputError, "must be in this checkout"):
            with tempfile.TemporaryDirectory() as t:
                (Path(t) / "series").write_text("x.patch\n")
                (Path(t) / "x.patch").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
                campaign.plan_bisect(campaign.BisectPlan(Path(t) / "series", SIG, self.dir))
        with self.assertRaises(InputError):
            campaign.plan_bisect(campaign.BisectPlan(SERIES, SIG, self.dir, good=3, bad=3))
        self.assertFalse(self.dir.exists())


class SweepCampaign(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "s"

    def tearDown(self):
        self.tmp.cleanup()

    def result(self, device: str, klass: str, console: str, key="6.12-0123456789abcdef",
               state="ran") -> dict:
        return {"ok": True, "job": device, "build": {"key": key},
                "device": {"device": device, "class": klass, "state": state, "reason": None,
                           "outcome": "ok", "workload_status": 0, "wall_seconds": 9.0,
                           "reports": []},
                "console_text": console}

    def test_jobs_and_the_folded_sites(self):
        c = campaign.plan_sweep(campaign.SweepPlan(self.dir, ("usb-kbd", "usb-storage"),
                                                   extra=("--kernel", "6.12")))
        self.assertEqual([j.id for j in c.jobs], ["boot", "usb-kbd", "usb-storage"])
        self.assertEqual((self.dir / "jobs.txt").read_text().splitlines()[0], "dmaharness job boot")
        self.assertEqual(campaign.job_argv(self.dir, "boot"),
                         ("sweep", "--job", "(boot)", "--json-out", "results/boot.json", "-q",
                          "--kernel", "6.12"))
        col = campaign.collect(self.dir)
        self.assertIsNone(col.sweep)                        # nothing back: nothing folded
        self.assertEqual(len(col.incomplete), 3)
        text = "".join(DETECTOR.replace("{frame}", "usb_string"))
        for jid, klass, console in (("boot", "boot", ""), ("usb-kbd", "usb", text),
                                    ("usb-storage", "usb", text)):
            dev = "(boot)" if jid == "boot" else jid
            (self.dir / "results" / f"{jid}.json").write_text(
                json.dumps(self.result(dev, klass, console)))
        col = campaign.collect(self.dir)
        self.assertTrue(col.sweep.ok)
        self.assertFalse(col.sweep.layout)                  # no such kernel built here
        sites = col.sweep.table.sites
        self.assertEqual([(x.frame, x.devices, x.boots) for x in sites],
                         [("usb_string", ["usb-kbd", "usb-storage"], 2)])
        self.assertTrue((self.dir / "consoles" / "usb-kbd.log").is_file())
        self.assertEqual(col.to_json()["sweep"]["sites"][0]["function"], "usb_string")
        root = ET.fromstring(junit.junit(col))
        self.assertEqual([tc.get("name") for tc in root.iter("testcase")],
                         ["boot", "usb-kbd", "usb-storage", "sites"])
        self.assertEqual(root.find("testsuite").get("failures"), "0")

    def test_jobs_of_two_kernels_are_not_folded_together(self):
        campaign.plan_sweep(campaign.SweepPlan(self.dir, ("usb-kbd",)))
        for jid, key in (("boot", "6.12-aaaaaaaaaaaaaaaa"), ("usb-kbd", "6.12-bbbbbbbbbbbbbbbb")):
            (self.dir / "results" / f"{jid}.json").write_text(json.dumps(
                self.result("(boot)" if jid == "boot" else jid, "usb", "", key)))
        with self.assertRaisesRegex(InputError, "different kernels"):
            campaign.collect(self.dir)

    def test_unknown_device(self):
        with self.assertRaisesRegex(InputError, "no device 'no-such'"):
            campaign.plan_sweep(campaign.SweepPlan(self.dir, ("no-such",)))
        self.assertFalse(self.dir.exists())


class UsbSweepCampaign(unittest.TestCase):
    """plan sweep --usb-drivers: the drivers in shares; collect puts them together."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "u"

    def tearDown(self):
        self.tmp.cleanup()

    def result(self, k: int, drivers: dict, boots: dict, key="7.3-0123456789abcdef") -> dict:
        return {"ok": True, "command": "sweep", "usb_drivers": True, "build": {"key": key},
                "drivers": [{"module": m, "state": st, "bound_with": None, "why": None,
                             "alias": None, "tries": []} for m, st in drivers.items()],
                "boots": [{"device": f"b{k}-{label}", "class": "usb", "state": "ran",
                           "reason": "drivers: " + ", ".join(mods), "drivers": mods,
                           "console_text": console, "outcome": "ok"}
                          for label, (mods, console) in boots.items()]}

    def test_shares_and_the_folded_drivers_and_sites(self):
        c = campaign.plan_usb_sweep(self.dir, 2, ("--kernel", "7.3"))
        self.assertEqual([j.id for j in c.jobs], ["usb1", "usb2"])
        self.assertEqual(campaign.job_argv(self.dir, "usb2"),
                         ("sweep", "--usb-drivers", "--batch", "2/2", "--parallel", "1",
                          "--json-out", "results/usb2.json", "-q", "--kernel", "7.3"))
        self.assertEqual(len(campaign.collect(self.dir).incomplete), 2)
        ftdi = DETECTOR.replace("{frame}", "ftdi_get_modem_status")
        (self.dir / "results" / "usb1.json").write_text(json.dumps(self.result(
            1, {"ftdi_sio": "bound", "asix": "unbound"},
            {"try1-boot1": (["ftdi_sio", "asix"], ftdi), "try2-boot1": (["asix"], "")})))
        (self.dir / "results" / "usb2.json").write_text(json.dumps(self.result(
            2, {"btusb": "bound", "hid_generic": "no-device"},
            {"try1-boot1": (["btusb"], "")})))
        col = campaign.collect(self.dir)
        self.assertTrue(col.verdict)
        out = col.to_json()["sweep"]
        self.assertEqual([d["module"] for d in out["drivers"]],
                         ["asix", "btusb", "ftdi_sio", "hid_generic"])
        self.assertEqual((out["figures"]["bound"], out["figures"]["boots"],
                          out["figures"]["bound_share_of_tried_without_firmware"]),
                         (2, 3, round(2 / 3, 3)))
        site = out["sites"][0]
        self.assertEqual((site["function"], site["devices"], site["drivers"]),
                         ("ftdi_get_modem_status", ["b1-try1-boot1"], ["ftdi_sio", "asix"]))
        self.assertTrue((self.dir / "consoles" / "b1-try1-boot1.log").is_file())
        ET.fromstring(junit.junit(col))

    def test_a_boot_name_that_is_not_a_jobs_is_refused(self):
        campaign.plan_usb_sweep(self.dir, 1, ())
        for bad in ("../../escape", "b1-try1-boot1/../../x", "try1-boot1"):
            (self.dir / "results" / "usb1.json").write_text(json.dumps(self.result(
                1, {"x": "bound"}, {"try1-boot1": (["x"], "")})).replace(
                    '"b1-try1-boot1"', json.dumps(bad)))
            col = campaign.collect(self.dir)
            self.assertEqual([s.status for s in col.jobs], ["failed"], bad)
            self.assertIn("not a USB sweep job's boot", col.jobs[0].why)
        self.assertFalse((self.dir / "consoles").exists() and
                         any((self.dir / "consoles").iterdir()))


if __name__ == "__main__":
    unittest.main()


class CheckCampaign(unittest.TestCase):
    """`plan check`: the check's case as a case campaign that names its
    patches; collect says what each patch brings in or takes out."""

    PATCH = "--- a/drivers/media/usb/uvc/uvc_status.c\n+++ b/drivers/media/usb/uvc/uvc_status.c\n" \
            "@@ -1 +1 @@\n-a\n+b\n"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        top = Path(self.tmp.name)
        self.dir = top / "c"
        case = top / "check-case"
        case.mkdir()
        pats = []
        for name in ("0001-media-uvcvideo-bug.patch", "0002-media-uvcvideo-fix.patch"):
            (case / name).write_text(self.PATCH)
            pats.append(case / name)
        p = patchcheck.Plan("6.1", tuple(pats), (), "camera", (), ())
        (case / "case.toml").write_text(patchcheck.case_text(p))
        self.c = campaign.plan_case(campaign.CasePlan(case, 1, self.dir, ("--kernel", "6.1"),
                                                      check=tuple(x.name for x in pats)))

    def tearDown(self):
        self.tmp.cleanup()

    def collect(self):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["collect", str(self.dir), "--json"])
        return code, json.loads(out.getvalue())

    def test_collect_names_the_patch_that_brings_a_report_in_and_the_one_that_takes_it_out(self):
        self.assertEqual([j.id for j in self.c.jobs], ["before-1", "after-1-1", "after-2-1"])
        self.assertEqual(campaign.load(self.dir).about["check_patches"],
                         ["0001-media-uvcvideo-bug.patch", "0002-media-uvcvideo-fix.patch"])
        res = self.dir / "results"
        for v, frames in (("before", ("usb_string",)), ("after-1", ("usb_string", "uvc_v4l2_open")),
                          ("after-2", ("usb_string",))):
            (res / f"{v}-1.json").write_text(json.dumps(
                {"ok": True, "job": {"variant": v, "run": 1}, "signatures": signatures(*frames)}))
        code, out = self.collect()
        self.assertEqual(code, 1)           # a patch brought a report in
        got = {(c["patch"], c["status"]) for c in out["check"]}
        self.assertEqual(got, {("0001-media-uvcvideo-bug.patch", "new"),
                               ("0002-media-uvcvideo-fix.patch", "fixed")})
        self.assertTrue(all(c["title"].endswith("in uvc_v4l2_open") for c in out["check"]))

    def test_a_campaign_whose_patch_names_are_not_names_is_refused(self):
        f = self.dir / campaign.CAMPAIGN_FILE
        data = json.loads(f.read_text())
        for bad in (["../x"], "x", [1], ["a", "b", "c"]):
            data["check_patches"] = bad
            f.write_text(json.dumps(data))
            with self.assertRaises(InputError, msg=bad) as e:
                campaign.load(self.dir)
            self.assertIn("check_patches", e.exception.message)
