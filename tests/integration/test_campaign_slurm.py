"""Integration: the seed case as a campaign under Slurm (issue #16).

A private one-node Slurm (munged, slurmctld and slurmd on 127.0.0.1,
started and stopped by the test: slurmcluster.OneNodeSlurm) runs the seed
case's jobs as one array job, with real boots.  `campaign --slurm
--no-wait` submits and returns; a second submission while the array is
queued is refused; `collect` then gives the case's own verdict, and every
job's attempt names the node it ran on.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from slurmcluster import OneNodeSlurm  # noqa: E402
from test_boot import CLI, ROOT  # noqa: E402
from tests.integration import chance  # noqa: E402

CASE = ROOT / "patches" / "6.1" / "cases" / "uvc-status-buffer"
EXIT_INPUT = 4


class SlurmCaseCampaign(unittest.TestCase):
    def test_seed_case_as_an_array_job(self):
        tmp = Path(tempfile.mkdtemp(prefix="dmah-slurm-case-"))
        camp = tmp / "c"
        with OneNodeSlurm(tmp / "cluster", cpus=2) as cluster:
            env = dict(os.environ, **cluster.env)

            def cli(*args, timeout=600):
                return subprocess.run(CLI + list(args), capture_output=True, text=True,
                                      timeout=timeout, env=env)

            r = cli("plan", "case", str(CASE), "-o", str(camp), "--runs", "1", "--",
                    "--duration", "5s")
            self.assertEqual(r.returncode, 0, r.stderr)
            r = cli("campaign", str(camp), "--slurm", cluster.partition, "--no-wait", "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            sub = json.loads(r.stdout)
            self.assertEqual((sub["engine"], sub["submitted"]), ("slurm", 4))
            job = sub["slurm_job"]
            self.assertTrue(job.isdigit(), job)
            self.assertEqual((camp / "slurm" / "job").read_text().strip(), job)

            # while its tasks are queued or running, the campaign is not submitted twice
            r = cli("campaign", str(camp), "--slurm", cluster.partition)
            self.assertEqual(r.returncode, EXIT_INPUT, r.stderr)
            self.assertIn(f"Slurm job {job} of this campaign still has tasks", r.stderr)

            deadline = time.monotonic() + 1800
            while time.monotonic() < deadline:
                q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i %T"], env=env,
                                   capture_output=True, text=True).stdout
                if not [ln for ln in q.splitlines()
                        if ln.split()[-1] in ("PENDING", "RUNNING", "CONFIGURING",
                                              "COMPLETING", "SUSPENDED")]:
                    break
                time.sleep(2)
            else:
                self.fail("the array job did not finish in 30 min")

            r = cli("collect", str(camp), "--json")
            # 6.1's dma-owned report needs a read while the URB is mapped: when
            # the before task missed it (and only then), that task runs again,
            # at most twice more (tests/integration/chance.py)
            for _ in range(2):
                col = json.loads(r.stdout)
                if r.returncode == 0 or not col.get("outcome") or not chance.chance_miss(
                        [c["verdict"] for c in col["outcome"]["comparisons"]]):
                    break
                (camp / "results" / "before-1.json").unlink()
                w = cli("campaign", str(camp), "--slurm", cluster.partition, timeout=1800)
                self.assertIn(w.returncode, (0, 1), w.stderr[-3000:])
                r = cli("collect", str(camp), "--json")
            out = [f.read_text()[-1500:] for f in sorted((camp / "slurm").glob("*.out"))]
            self.assertEqual(r.returncode, 0, r.stderr + "\n".join(out))
            col = json.loads(r.stdout)
            self.assertTrue(col["complete"])
            self.assertTrue(col["outcome"]["matches"])
            for comp in col["outcome"]["comparisons"]:
                fixed = {s["title"] for s in comp["signatures"] if s["status"] == "fixed"}
                self.assertTrue(any(t.startswith("KASAN: dma-owned") for t in fixed), fixed)
            self.assertEqual({j["host"] for j in col["jobs"]}, {os.uname().nodename})
            # each task left its attempt, in GNU parallel's joblog format
            for seq in range(1, 5):
                w = (camp / "slurm" / f"attempt-{seq}").read_text().rstrip("\n").split("\t")
                self.assertEqual((w[0], w[6], w[7]), (str(seq), "0", "0"))
            # a campaign with every result back submits nothing
            r = cli("campaign", str(camp), "--slurm", cluster.partition, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(r.stdout)["submitted"], 0)


if __name__ == "__main__":
    unittest.main()
