"""Unit: campaign --ssh (harness/campaign/remote.py): sshlogins, the hosts' layout,
the GNU parallel command, the checkout's file list; proc.stop_session."""

import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from harness.campaign import campaign, remote
from harness import paths, proc
from harness.errors import InputError


class SshLogins(unittest.TestCase):
    def test_forms_of_gnu_parallel_sshlogins(self):
        h = remote.parse_host("build1")
        self.assertEqual((h.ssh, h.target, h.slots), (("ssh",), "build1", None))
        h = remote.parse_host("me@build2")
        self.assertEqual(h.target, "me@build2")
        h = remote.parse_host("4/me@build3")
        self.assertEqual((h.target, h.slots), ("me@build3", 4))
        h = remote.parse_host("@big/2/ssh -p 2222 -i /k/id me@b4")
        self.assertEqual((h.ssh, h.target, h.slots),
                         (("ssh", "-p", "2222", "-i", "/k/id"), "me@b4", 2))
        self.assertEqual(h.login, "@big/2/ssh -p 2222 -i /k/id me@b4")
        self.assertEqual(h.argv("true"),
                         ["ssh", "-p", "2222", "-i", "/k/id", "-o", "BatchMode=yes", "me@b4", "true"])

    def test_refused_logins(self):
        for bad in (":", "..", "-", "", "user:secret@host"):
            with self.subTest(bad=bad), self.assertRaises(InputError):
                remote.parse_host(bad)

    def test_host_list_and_file(self):
        self.assertEqual([h.target for h in remote.parse_hosts("a, b,2/c")], ["a", "b", "c"])
        with self.assertRaisesRegex(InputError, "named twice"):
            remote.parse_hosts("a,a")
        with tempfile.TemporaryDirectory() as t:
            f = Path(t) / "hosts"
            f.write_text("# the lab\nbox1\n\n8/ssh -p 2200 box2\n")
            self.assertEqual([h.target for h in remote.parse_hosts(str(f))], ["box1", "box2"])
            f.write_text("# nothing\n")
            with self.assertRaisesRegex(InputError, "names no host"):
                remote.parse_hosts(str(f))


class HostLayout(unittest.TestCase):
    def test_folders_per_checkout_and_campaign(self):
        lay = remote.Layout.of("~/.cache/dmaharness/remote/", Path("/tmp/c1"), "2026-12-05")
        self.assertTrue(lay.checkout.startswith(".cache/dmaharness/remote/checkout-"))
        self.assertTrue(lay.campaign.startswith(".cache/dmaharness/remote/campaigns/c1-"))
        again = remote.Layout.of(".cache/dmaharness/remote", Path("/tmp/c1"), "2026-12-05")
        self.assertEqual(lay, again)                    # stable: reruns find the same folders
        other = remote.Layout.of(".cache/dmaharness/remote", Path("/tmp/c1"), "2026-12-06")
        self.assertNotEqual(lay.campaign, other.campaign)
        self.assertEqual(remote._in_home("/abs/x"), "/abs/x")
        self.assertEqual(remote._in_home("rel dir/x"), "\"$HOME\"/'rel dir/x'")


class ParallelCommand(unittest.TestCase):
    def test_columns_return_and_workdir(self):
        with tempfile.TemporaryDirectory() as t:
            folder = Path(t)
            jobs = [campaign.Job("before-1", ("run", "--case", "case", "--json-out",
                                              "results/before-1.json"), "results/before-1.json"),
                    campaign.Job("fix-1", ("run", "--case", "case"), "results/fix-1.json")]
            hosts = remote.parse_hosts("a,ssh -p 2222 b")
            lay = remote.Layout.of("/srv/dmah", folder, "x")
            cmd = remote.parallel_command(folder, hosts, lay, jobs, 2)
            opt = {cmd[i]: cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i].startswith("--")}
            self.assertEqual(opt["--workdir"], lay.campaign)
            self.assertEqual(opt["--return"], "results/{1}.json")
            self.assertEqual(opt["--colsep"], "\t")
            self.assertEqual(opt["--joblog"], "joblog")
            self.assertEqual(opt["--jobs"], "2")
            self.assertIn("--resume-failed", cmd)
            self.assertEqual(opt["--termseq"], campaign.TERMSEQ)
            self.assertEqual((folder / "ssh/sshloginfile").read_text(), "a\nssh -p 2222 b\n")
            rows = [ln.split("\t") for ln in (folder / "ssh/jobs.tsv").read_text().splitlines()]
            self.assertEqual([r[0] for r in rows], ["before-1", "fix-1"])   # Seq = jobs.txt line
            self.assertEqual(rows[0][1], jobs[0].line())
            self.assertTrue(cmd[-1].startswith(f"PATH={lay.checkout}/"[:-1]))
            self.assertTrue(cmd[-1].endswith("sh -c {2}"))
            # per host slots left to GNU parallel (one per core of each host)
            self.assertNotIn("--jobs", remote.parallel_command(folder, hosts, lay, jobs, None))

    def test_a_job_with_a_tab_or_a_newline_still_makes_one_row(self):
        """The row names the job; its arguments travel in campaign.json, byte for byte."""
        with tempfile.TemporaryDirectory() as t:
            f = remote.job_table(Path(t), [campaign.Job("x", ("run", "a\tb\nc'd"), "results/x.json")])
            self.assertEqual(f.read_text(), "x\tdmaharness job x\n")


class Joblog(unittest.TestCase):
    def test_gnu_parallel_resumes_from_a_tidied_joblog(self):
        with tempfile.TemporaryDirectory() as t:
            folder = Path(t)
            head = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
            (folder / "jobs.txt").write_text("echo one >> ran\necho two >> ran\n")
            (folder / "joblog").write_text(
                head + "1\tssh -p 2222 -i /k me@box\t1.0\t1.0\t0\t0\t0\t0\techo one >> ran\n"
                "2\tssh -p 2222 -i /k me@box\t1.0\t1.0\t0\t0\t137\t0\techo two >> ran\n")
            cmd = ["parallel", "--will-cite", "--joblog", "joblog", "--resume-failed",
                   "-a", "jobs.txt"]
            # as GNU parallel wrote it, it refuses to read it back
            r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("Format of 'joblog' is wrong", r.stderr)
            campaign.tidy_joblog(folder)
            self.assertEqual(campaign.joblog(folder)[2]["host"], "me@box")
            r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual((folder / "ran").read_text(), "two\n")   # the failed one only


class CheckoutFiles(unittest.TestCase):
    def test_what_git_knows_travels(self):
        names = remote._checkout_files().split(b"\0")
        self.assertIn(b"harness/campaign/remote.py", names)
        self.assertIn(b"Makefile", names)
        self.assertFalse([n for n in names if n.startswith(b".git/")])
        # build products are ignored by .gitignore: the host builds its own
        built = [n for n in names if n.startswith(b"fake-device/build/")]
        self.assertEqual(built, [])
        for n in names:
            if n:
                self.assertTrue((paths.REPO / os.fsdecode(n)).exists(), n)


class StopSession(unittest.TestCase):
    def test_children_in_their_own_groups_are_stopped(self):
        # a leader that starts a child in a process group of its own (as GNU
        # parallel does for every job), then lingers
        code = ("import os,subprocess,time\n"
                "subprocess.Popen(['sleep','300'], preexec_fn=os.setpgrp)\n"
                "time.sleep(300)\n")
        p = proc.spawn([sys.executable, "-c", code])
        deadline = time.monotonic() + 10
        while len(proc.session_members(p.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        members = proc.session_members(p.pid)
        self.assertEqual(len(members), 2, members)
        proc.stop_session(p, grace=2)
        self.assertEqual(proc.session_members(p.pid), [])
        for pid in members:
            self.assertFalse(Path(f"/proc/{pid}").exists() and
                             Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z")


if __name__ == "__main__":
    unittest.main()


class WorkerDeps(unittest.TestCase):
    """A worker gets make run's packages (and each job kernel's source), never
    the test suite's; a version that is not X.Y never reaches the shell."""

    def test_run_set_and_the_jobs_kernels(self):
        r = remote
        self.assertEqual(r.deps_command(), "make -s deps-run && make -s fake-device agent")
        self.assertEqual(r.deps_command(["7.3", "6.12", "7.3"]),
                         "make -s deps-run KERNEL=6.12 && make -s deps-run KERNEL=7.3 && "
                         "make -s fake-device agent")
        self.assertEqual(r.deps_command(["6.1; touch /tmp/x", "$(id)"]),
                         "make -s deps-run && make -s fake-device agent")
        self.assertNotIn("make -s deps ", r.deps_command(["6.1"]) + " ")
