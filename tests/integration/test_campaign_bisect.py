"""Integration: a bisection as a campaign (issue #16), for real.

The 16-patch fixture of test_bisect (patch 11 is the seed case's bug
patch) is bisected twice: by `dmaharness bisect` and by `plan bisect` +
`campaign --jobs 2`, whose steps' runs are jobs run through GNU parallel
with real builds and boots.  Both must name patch 11, by the same steps.
The local bisection is test_bisect's when it ran in this process (the
same command: kernel, series, signature, --duration 4s), else run here.
"""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_bisect import SERIES, SIGNATURE, dmaharness, local_result_path  # noqa: E402


class BisectCampaign(unittest.TestCase):
    def test_same_culprit_and_steps_as_the_local_bisection(self):
        with tempfile.TemporaryDirectory(prefix="dmah-bisect-campaign-") as d:
            run_args = ["--duration", "4s"]
            if local_result_path().is_file():
                local = json.loads(local_result_path().read_text())
            else:
                p = dmaharness("bisect", "--kernel", "6.1", "--series", str(SERIES),
                               "--signature", SIGNATURE, "--json", "--fresh",
                               "--run-dir", f"{d}/local", *run_args)
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                local = json.loads(p.stdout)

            camp = Path(d) / "c"
            p = dmaharness("plan", "bisect", "--series", str(SERIES), "--signature", SIGNATURE,
                           "-o", str(camp), "--", *run_args)
            self.assertEqual(p.returncode, 0, p.stderr)
            junit = Path(d) / "junit.xml"
            p = dmaharness("campaign", str(camp), "--jobs", "2", "--json", "--junit", str(junit))
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            out = json.loads(p.stdout)
            self.assertTrue(out["complete"])
            self.assertEqual(out["culprit"]["number"], local["culprit"]["number"])
            self.assertEqual(out["culprit"]["number"], 11)
            self.assertEqual(out["culprit"]["patch"], local["culprit"]["patch"])
            steps = [(s["prefix"], s["verdict"]) for s in out["bisection"]["steps"]]
            self.assertEqual(steps, [(s["prefix"], s["verdict"]) for s in local["steps"]])
            # every job a run the search asked for, each with its classification
            for j in out["jobs"]:
                res = json.loads((camp / j["result"]).read_text())
                self.assertIn(res["bisect_run"]["status"], ("hit", "clean"), j["id"])
                prefix = int(j["id"][1:].split("-")[0])
                self.assertEqual(res["bisect_run"]["status"] == "hit", prefix >= 11, j["id"])
            self.assertIn('name="culprit 11"', junit.read_text())
            # collect alone, later, gives the same
            p = dmaharness("collect", str(camp), "--json")
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertEqual(json.loads(p.stdout)["culprit"]["number"], 11)


if __name__ == "__main__":
    unittest.main()
