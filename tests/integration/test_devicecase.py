"""Integration: a fix case for a device of the sweep catalogue (issue #26).

`patches/7.3/cases/virtio-scsi-kick-event` on CI's small sweep kernel
(tests/fixtures/sweep/ci/catalogue.toml, the kernel test_sweep.py builds
too): the before variant is stock 7.3 with the detector, the after variant
adds the fix mail; each boots with a virtio-scsi disk and runs the
catalogue entry's workload (1 MiB written and read back each way).  The
verdict: the site (`virtscsi_kick_event`, the events[] buffer in the line
of event_vq's lock) in the before run, gone after, nothing new, and the
disk's workload passes on both kernels.  Then the same case as a
campaign: `plan case`, `campaign --jobs 2`, `collect`, the same verdict.

Signal: the CPU writes the lock right after queueing each event buffer at
probe, in the same function, so every boot shows the dma-owned report (12
of 12 boots so far: 6 before runs of this case and the sweeps'); run_case
still retries a before run that misses it (tests/integration/chance.py),
at most 3 attempts, so a false failure needs three misses in a row.
"""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import ROOT, run  # noqa: E402
from tests.integration import chance  # noqa: E402

CASE = ROOT / "patches" / "7.3" / "cases" / "virtio-scsi-kick-event"
CATALOGUE = ROOT / "tests" / "fixtures" / "sweep" / "ci" / "catalogue.toml"
OWNED = "KASAN: dma-owned Write in virtscsi_kick_event"


class VirtioScsiFixCase(unittest.TestCase):
    def test_site_fixed_nothing_new_workload_passes(self):
        r, out, attempts, missed = chance.run_case(
            ["run", "--case", str(CASE), "--catalogue", str(CATALOGUE), "--runs", "1"],
            attempts=3, timeout=5400)
        self.assertIsNotNone(out, f"no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")
        self.assertEqual(r.returncode, 0, json.dumps(out.get("outcome"), indent=1)[-3000:])
        comp = out["outcome"]["comparisons"][0]
        rows = {s["title"]: s for s in comp["signatures"]}
        self.assertEqual(rows[OWNED]["status"], "fixed", rows.get(OWNED))
        self.assertFalse([t for t, s in rows.items() if s["status"] == "new"])
        self.assertTrue([n for n in comp["verdict"]["notes"]
                         if n.startswith("expected fixed site virtscsi_kick_event sharing "
                                         "kmalloc-4k+*:16 DMA_FROM_DEVICE: in 1/1 before")],
                        comp["verdict"]["notes"])
        # the disk worked on both kernels: the workload's own end marker
        folder = Path(out["run_dir"])
        for variant in ("before", "fix"):
            console = (folder / f"{variant}-1" / "console.log").read_text(errors="replace")
            self.assertIn("DMAHARNESS-SWEEP end virtio-scsi status=0", console)
            self.assertRegex(console, r"sd[a-z]: 1024 KiB written and read back equal")
        # the layout says where the buffer is and who writes its line
        layout = rows[OWNED]["layout"]
        self.assertEqual(layout["struct"], "Scsi_Host+virtio_scsi")
        self.assertIn("arm", layout["exposure_summary"])

        # the same case as a campaign: one job per variant, the same verdict
        with tempfile.TemporaryDirectory(prefix="dmah-devcase-") as d:
            camp = Path(d) / "c"
            r = run("plan", "case", str(CASE), "-o", str(camp), "--runs", "1", "--json", "--",
                    "--catalogue", str(CATALOGUE), timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual([j["id"] for j in json.loads(r.stdout)["jobs"]],
                             ["before-1", "fix-1"])
            r = run("campaign", str(camp), "--jobs", "2", "--json", timeout=3600)
            col = json.loads(r.stdout)
            for _ in range(2):      # a before job that missed the report: again (as above)
                if col["outcome"]["matches"] or not chance.chance_miss(
                        [c["verdict"] for c in col["outcome"]["comparisons"]]):
                    break
                (camp / "results" / "before-1.json").unlink()
                r = run("campaign", str(camp), "--jobs", "2", "--json", timeout=3600)
                col = json.loads(r.stdout)
            self.assertEqual(r.returncode, 0, json.dumps(col.get("outcome"), indent=1)[-3000:])
            self.assertTrue(col["complete"])
            notes = col["outcome"]["comparisons"][0]["verdict"]["notes"]
            self.assertTrue([n for n in notes if n.startswith("expected fixed site ")], notes)

    def test_camera_flags_are_refused_before_building(self):
        r = run("run", "--case", str(CASE), "--cycle-hz", "2", timeout=120)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("not the cameras", r.stderr)


if __name__ == "__main__":
    unittest.main()
