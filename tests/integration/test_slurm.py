"""Integration: campaigns under a real Slurm, a private one-node cluster.

harness.campaign.slurm submits a fake campaign (small shell lines, no kernel) as an
array job to the cluster slurmcluster.OneNodeSlurm starts; the results and
the attempt files come back, a failing line's attempt says how it failed.
Interrupting `wait` cancels the array and nothing is left running.  The
cluster itself leaves nothing running either, even when the test's body
raises or its startup fails half-way.

Root and Debian's slurmctld slurmd slurm-client munge; skipped otherwise.
"""

import os
import secrets
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).parent))
from slurmcluster import OneNodeSlurm, SlurmClusterError, _alive  # noqa: E402

from harness.campaign import slurm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """A harness.progress.Progress stand-in that keeps what it is told."""

    quiet = True

    def __init__(self, on_update=None):
        self.updates, self.notes = [], []
        self.on_update = on_update

    def update(self, message, *, force=False):
        self.updates.append(message)
        if self.on_update:
            self.on_update(message)

    def note(self, message):
        self.notes.append(message)

    def end_line(self):
        pass


def pgrep(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout
    return [int(p) for p in out.split() if int(p) != os.getpid() and _alive(int(p))]


class SlurmCampaign(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dmah-slurm-"))
        cls.cluster = OneNodeSlurm(cls.tmp / "cluster", cpus=2)
        cls.cluster.__enter__()
        cls.addClassCleanup(cls.cluster.__exit__, None, None, None)

    def setUp(self):
        env = mock.patch.dict(os.environ, self.cluster.env)
        env.start()
        self.addCleanup(env.stop)

    def campaign(self, name: str, lines: list[str]) -> Path:
        folder = self.tmp / name
        (folder / "results").mkdir(parents=True)
        (folder / "jobs.txt").write_text("".join(ln + "\n" for ln in lines))
        return folder

    def squeue(self, job_id: str) -> str:
        r = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%i %T"],
                           capture_output=True, text=True)
        return r.stdout + r.stderr

    def test_array_job_brings_results_and_attempts_back(self):
        lines = ["""sleep 1; echo '{"ok": true}' > results/a-1.json""",
                 """sleep 1; echo '{"ok": true}' > results/a-2.json""",
                 "echo this one breaks >&2; exit 3",
                 """echo '{"ok": true}' > results/b-1.json""",
                 "command -v dmaharness > results/which.txt"]
        folder = self.campaign("c1", lines)
        t0 = time.monotonic()
        jid = slurm.submit(folder, [1, 2, 3, 5], self.cluster.partition, ROOT)
        p = Recorder()
        slurm.wait(jid, p, poll=0.5, total=4)
        took = time.monotonic() - t0
        self.assertIn("no task left", p.updates[-1])
        self.assertFalse(p.notes, p.notes)                  # never cancelled
        res = folder / "results"
        for n in ("a-1", "a-2"):
            self.assertEqual((res / f"{n}.json").read_text(), '{"ok": true}\n')
        self.assertFalse((res / "b-1.json").exists())      # line 4 was not submitted
        self.assertEqual((res / "which.txt").read_text().strip(), str(ROOT / "dmaharness"))
        att = slurm.attempts(folder)
        self.assertEqual(sorted(att), [1, 2, 3, 5])
        self.assertEqual({s: (a["exit"], a["signal"]) for s, a in att.items()},
                         {1: ("0", "0"), 2: ("0", "0"), 3: ("3", "0"), 5: ("0", "0")})
        self.assertEqual(att[3]["command"], lines[2])
        self.assertEqual(att[1]["host"], os.uname().nodename)
        self.assertGreaterEqual(float(att[1]["runtime"]), 0.9)
        self.assertIn("this one breaks", (folder / "slurm" / f"{jid}_3.out").read_text())
        # nothing of the array is pending or running any more
        self.assertFalse([ln for ln in self.squeue(jid).splitlines()
                          if ln.split()[-1] not in slurm.DONE_STATES], self.squeue(jid))
        print(f"\n  (slurm: 4 array tasks submitted and waited for in {took:.1f}s)",
              file=sys.stderr)

    def test_an_interrupted_wait_cancels_the_array(self):
        mark = f"3{secrets.randbelow(10**6):06d}.5"              # a sleep of its own
        folder = self.campaign("c2", [f"sleep {mark}", f"sleep {mark}", f"sleep {mark}"])
        jid = slurm.submit(folder, [1, 2, 3], self.cluster.partition, ROOT)

        t0 = time.monotonic()

        def interrupt(message):
            if "2 running" in message and len(pgrep(f"^sleep {mark}$")) >= 2:
                raise KeyboardInterrupt                         # Ctrl-C while they run
            if time.monotonic() - t0 > 300:     # fail, not hang, if they never both run
                raise AssertionError(f"two tasks never ran at once in 300 s: {message}")
        p = Recorder(interrupt)
        with self.assertRaises(KeyboardInterrupt):
            slurm.wait(jid, p, poll=0.5)
        self.assertLess(time.monotonic() - t0, 120)
        self.assertIn(f"cancelling job {jid}", p.notes[0])
        # no task pending or running, and no sleep left
        self.assertFalse([ln for ln in self.squeue(jid).splitlines()
                          if ln.split()[-1] not in slurm.DONE_STATES], self.squeue(jid))
        self.assertEqual(pgrep(f"^sleep {mark}$"), [])
        # the tasks that ran say they were stopped by SIGTERM; the pending one never ran
        att = slurm.attempts(folder)
        self.assertEqual(len(att), 2, att)
        for a in att.values():
            self.assertEqual((a["exit"], a["signal"]), ("143", "15"))
        self.assertEqual(list((folder / "results").iterdir()), [])


class ClusterCleanup(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmah-slurm-"))

    def test_daemons_and_jobs_stop_when_the_body_raises(self):
        cluster = OneNodeSlurm(self.tmp / "cluster", cpus=1)
        mark = f"4{secrets.randbelow(10**6):06d}.5"
        with self.assertRaises(ZeroDivisionError):
            with cluster:
                pids = dict(cluster.pids)
                self.assertEqual(sorted(pids), ["munged", "slurmctld", "slurmd"])
                r = cluster.run("sbatch", "--parsable", "-p", cluster.partition,
                                "-o", "/dev/null", "--wrap", f"sleep {mark}")
                deadline = time.monotonic() + 60
                while not pgrep(f"^sleep {mark}$") and time.monotonic() < deadline:
                    time.sleep(0.2)
                self.assertTrue(pgrep(f"^sleep {mark}$"), f"job {r.stdout} never ran")
                1 / 0
        for name, pid in pids.items():
            self.assertFalse(_alive(pid), f"{name} (pid {pid}) is still running")
        self.assertEqual(pgrep(f"^sleep {mark}$"), [])
        self.assertEqual(cluster._leftovers(), [])

    def test_a_startup_that_fails_half_way_stops_what_it_started(self):
        class NeverIdle(OneNodeSlurm):
            def _node_idle(self):
                return False, "dmah1 down (this test's)"
        cluster = NeverIdle(self.tmp / "cluster", timeout=3)
        with self.assertRaises(SlurmClusterError) as cm:
            with cluster:
                self.fail("the body ran")
        msg = str(cm.exception)
        self.assertIn("timed out after 3s waiting for node dmah1 to be idle", msg)
        self.assertIn("dmah1 down (this test's)", msg)
        self.assertIn("slurmd (", msg)                          # the daemons' log tails
        self.assertIn("slurmctld (", msg)
        self.assertEqual(sorted(cluster.pids), ["munged", "slurmctld", "slurmd"])
        for name, pid in cluster.pids.items():
            self.assertFalse(_alive(pid), f"{name} (pid {pid}) is still running")
        self.assertEqual(cluster._leftovers(), [])


if __name__ == "__main__":
    unittest.main()
