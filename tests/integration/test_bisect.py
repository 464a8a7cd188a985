"""dmaharness bisect on the 16-patch fixture, for real: builds, boots, floods.

Patch 11 of tests/fixtures/bisect/6.1/series is the seed case's bug patch;
the others change comments and documentation.  The signature is the
detector's sharing report on the status URB at open, which every run of a
kernel with the bug shows.
"""

import atexit
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERIES = ROOT / "tests/fixtures/bisect/6.1/series"
SIGNATURE = ("^DMA-API: device driver maps a buffer that shares a cache line with other "
             "data of its object in (uvc_status_start|uvc_v4l2_open)$")


def dmaharness(*args, timeout=1800):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def local_result_path() -> Path:
    """Where this test process keeps the fixture's local bisection (`bisect
    --kernel 6.1 --series SERIES --signature SIGNATURE --duration 4s`), so
    that test_campaign_bisect compares its campaign with it instead of
    booting the same bisection a second time (CI's minutes)."""
    return Path(tempfile.gettempdir()) / f"dmah-bisect-local-{os.getpid()}.json"


def _forget_local_result():
    local_result_path().unlink(missing_ok=True)


atexit.register(_forget_local_result)


def runs_root() -> Path:
    """Where every boot leaves its console (the cache's runs/)."""
    cache = os.environ.get("DMAHARNESS_CACHE") or str(Path.home() / ".cache" / "dmaharness")
    return Path(cache) / "runs"


class BisectFixture(unittest.TestCase):
    def test_finds_the_bug_patch_then_resumes_from_its_log(self):
        with tempfile.TemporaryDirectory(prefix="dmaharness-bisect-") as d:
            args = ["bisect", "--kernel", "6.1", "--series", str(SERIES), "--signature",
                    SIGNATURE, "--duration", "4s", "--json", "--run-dir", d]
            p = dmaharness(*args, "--fresh")
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            out = json.loads(p.stdout)
            self.assertEqual(out["culprit"]["number"], 11, json.dumps(out, indent=1)[:3000])
            self.assertTrue(out["culprit"]["patch"].endswith(
                "0001-media-uvcvideo-Embed-the-status-URB-buffer-in-struct.patch"))
            self.assertIn("Embed the status URB buffer", out["culprit"]["subject"])
            self.assertLessEqual(out["search_steps"], 5)
            local_result_path().write_text(p.stdout)
            ends = [s for s in out["steps"] if s["endpoint"]]
            self.assertEqual([(s["prefix"], s["verdict"]) for s in ends], [(0, "good"), (16, "bad")])
            for s in out["steps"]:
                if s["verdict"] == "bad":
                    self.assertGreaterEqual(s["hits"], 1)
                    hit = [e for e in s["evidence"] if e["status"] == "hit"][0]
                    self.assertTrue(os.path.isfile(os.path.join(hit["detail"], "console.log")))
                else:
                    self.assertEqual(s["verdict"], "good")
                    self.assertEqual(s["hits"], 0)
            # pointing at the code: the structure around the buffer, and the culprit touches it
            where = out["where"]
            self.assertEqual(where["guilty_frame"], "uvc_v4l2_open")
            self.assertIn("uvc_device", where["structure"]["struct"])
            self.assertIn(11, where["patches_touching_structure"])
            self.assertIn("flush_status", where["structure_text"])
            self.assertIn("struct uvc_device", where["culprit_changes"]["structs"])
            # the same command again: everything comes from the log, nothing boots
            # (no console is written: not in its --run-dir, not in the cache)
            def consoles():
                return set(Path(d).rglob("console.log")) | set(runs_root().rglob("console.log"))
            before = consoles()
            self.assertTrue(before)          # the first bisection's boots left theirs
            p = dmaharness(*args)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            out2 = json.loads(p.stdout)
            self.assertEqual(out2["culprit"]["number"], 11)
            self.assertTrue(all(s["resumed"] for s in out2["steps"]))
            self.assertEqual(consoles() - before, set())
