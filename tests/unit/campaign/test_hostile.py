"""A campaign is something a stranger mailed you: its job list runs nothing
but its jobs, whatever their arguments hold, and a hand-broken campaign
folder is an input error (exit 4), never a traceback read as a verdict."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import errors
from harness.campaign import campaign
from tests.unit.cli.test_main import run

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "patches" / "6.1" / "cases" / "uvc-status-buffer"
EVIL = "x'\ntouch pwned #\t\"$(touch pwned2)\" \\\n`touch pwned3`"


class JobList(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmaharness-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dir = self.tmp / "camp"

    def test_any_argument_travels_byte_for_byte_and_runs_nothing_else(self):
        code, out, err = run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "1",
                              "--json", "--", "--append", EVIL])
        self.assertEqual(code, 0, err)
        c = campaign.load(self.dir)
        lines = (self.dir / "jobs.txt").read_text().splitlines()
        self.assertEqual(len(lines), len(c.jobs))                    # 4 jobs, 4 lines
        for j in c.jobs:
            self.assertEqual(campaign.job_argv(self.dir, j.id)[-2:], ("--append", EVIL))

    @unittest.skipUnless(shutil.which("parallel"), "GNU parallel (make deps)")
    def test_gnu_parallel_runs_each_job_once_and_nothing_else(self):
        """The local engine's own command line over jobs.txt, with a dmaharness
        that only records the arguments it was given."""
        run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "1", "--", "--append", EVIL])
        bin_ = self.tmp / "bin"
        bin_.mkdir()
        fake = bin_ / "dmaharness"
        fake.write_text("#!/bin/sh\nprintf '%s\\n' \"$*\" >> ran\n")
        fake.chmod(0o755)
        env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
        subprocess.run(campaign.parallel_command(2), cwd=self.dir, env=env, check=True,
                       capture_output=True, timeout=120)
        ran = sorted((self.dir / "ran").read_text().splitlines())
        self.assertEqual(ran, sorted(f"job {j.id}" for j in campaign.load(self.dir).jobs))
        self.assertEqual([p.name for p in self.dir.glob("pwned*")], [])

    def test_the_job_command_names_a_job_of_the_campaign_here(self):
        run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "1"])
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            self.assertEqual(run(["job", "no-such-job"])[0], errors.EXIT_INPUT)
            self.assertEqual(run(["job", "../x"])[0], errors.EXIT_INPUT)
            self.assertEqual(run(["job"])[0], errors.EXIT_USAGE)
            self.assertEqual(run(["job", "a", "b"])[0], errors.EXIT_USAGE)
        finally:
            os.chdir(cwd)

    def test_the_case_copy_holds_the_case_and_its_patches_only(self):
        """A case folder with a link to a secret and files of its own: the
        campaign (which may travel over ssh) gets case.toml, the named
        patches and the README, no link and nothing else."""
        own = self.tmp / "my-case"
        shutil.copytree(CASE, own)
        (own / "secret").symlink_to("/etc/passwd")
        (own / "notes.txt").write_text("private\n")
        code, _, err = run(["plan", "case", str(own), "-o", str(self.dir), "--runs", "1"])
        self.assertEqual(code, 0, err)
        copied = sorted(str(p.relative_to(self.dir / "case")) for p in (self.dir / "case").rglob("*")
                        if not p.is_dir())
        self.assertNotIn("secret", copied)
        self.assertNotIn("notes.txt", copied)
        self.assertIn("case.toml", copied)
        self.assertFalse(any(p.is_symlink() for p in (self.dir / "case").rglob("*")))
        expect = sorted(str(p.relative_to(CASE)) for p in CASE.rglob("*") if p.is_file())
        self.assertEqual(copied, expect)

    def test_an_older_joblog_line_is_not_attributed_to_a_job(self):
        run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "1"])
        (self.dir / "joblog").write_text(
            "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
            "1\t:\t1.0\t1.0\t0\t0\t0\t0\ttouch pwned #\n")
        st = campaign.states(campaign.load(self.dir))
        self.assertIsNone(st[0].attempt)
        self.assertEqual(st[0].why, "never run")
        # the same job's line as GNU parallel logs it over ssh: its attempt
        (self.dir / "joblog").write_text(
            "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
            "1\tbox\t1.0\t1.0\t0\t0\t-1\t9\tPATH=/r:\"$PATH\" sh -c 'dmaharness job before-1'\n")
        st = campaign.states(campaign.load(self.dir))
        self.assertEqual(st[0].why, "exit -1, signal 9 on box, no result came back")


class BrokenCampaigns(unittest.TestCase):
    """collect on campaign folders broken by hand: exit 4 with the file and
    the key named, or 8 (a job's result is unusable: listed as failed)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmaharness-broken-"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dir = self.tmp / "camp"
        code, _, err = run(["plan", "case", str(CASE), "-o", str(self.dir), "--runs", "1"])
        self.assertEqual(code, 0, err)
        self.good = json.loads((self.dir / "campaign.json").read_text())

    def collect(self):
        code, out, err = run(["collect", str(self.dir), "--json"])
        self.assertNotIn("Traceback", err)
        obj = json.loads(out)                          # one object, whatever happened
        self.assertIs(obj["ok"], False)
        return code, obj

    def with_campaign(self, data):
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        (self.dir / "campaign.json").write_bytes(raw)
        return self.collect()

    def test_broken_campaign_json_is_an_input_error(self):
        job0 = self.good["jobs"][0]
        broken = [[], {}, "x", 1, None, {"version": 1}, {**self.good, "jobs": {}},
                  {**self.good, "jobs": [1]}, {**self.good, "variants": "before"},
                  {**self.good, "variants": ["../../x"]}, {**self.good, "case_folder": "/etc"},
                  {**self.good, "runs": "1"}, {**self.good, "kind": "sweep"},
                  {**self.good, "jobs": [{**job0, "id": "../../x"}]},
                  {**self.good, "jobs": [{**job0, "id": ""}]},
                  {**self.good, "jobs": [{**job0, "result": "/etc/passwd"}]},
                  {**self.good, "jobs": [{**job0, "result": "results/../../x.json"}]},
                  {**self.good, "jobs": [{**job0, "argv": ["touch", "pwned"]}]},
                  {**self.good, "jobs": [{**job0, "argv": "run"}]},
                  {**self.good, "jobs": [{**job0, "argv": ["run", 1]}]},
                  {**self.good, "jobs": [job0, job0]},
                  b"\xff\xfe\x00garbage", b"[" * 100000, b""]
        for data in broken:
            with self.subTest(data=str(data)[:80]):
                code, obj = self.with_campaign(data)
                self.assertEqual(code, errors.EXIT_INPUT, obj)
                self.assertIn("campaign.json", obj["error"]["message"])

    def test_campaign_json_that_is_a_folder_or_missing(self):
        (self.dir / "campaign.json").unlink()
        (self.dir / "campaign.json").mkdir()
        self.assertEqual(self.collect()[0], errors.EXIT_INPUT)
        shutil.rmtree(self.dir)
        self.dir.write_text("a file where a folder is expected")
        self.assertEqual(self.collect()[0], errors.EXIT_INPUT)

    def test_broken_results_are_failed_jobs_not_crashes(self):
        ids = [j["id"] for j in self.good["jobs"]]
        bad = [b"{", b"[]", b"null", json.dumps({"ok": True}).encode(),
               json.dumps({"ok": True, "job": {"variant": "before", "run": 1},
                           "signatures": [{"title": 1}]}).encode(),
               json.dumps({"ok": True, "job": {"variant": "nope", "run": 1},
                           "signatures": []}).encode(),
               json.dumps({"ok": "yes", "failure": ["x"]}).encode()]
        for data in bad:
            with self.subTest(data=data[:60]):
                for i in ids:
                    (self.dir / "results" / f"{i}.json").write_bytes(data)
                code, obj = self.collect()
                self.assertEqual(code, errors.EXIT_INCOMPLETE, obj)
                self.assertEqual({j["status"] for j in obj["jobs"]}, {"failed"})


if __name__ == "__main__":
    unittest.main()
