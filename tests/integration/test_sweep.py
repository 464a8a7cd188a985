"""Integration: a short sweep of real device models on 7.3 (issue #14).

One virtio device (with the DMA API forced), one PCI storage controller and
one USB device behind xHCI, each in its own boot of the stock 7.3 kernel (the current one)
with the detector, plus the boot without a device.  The catalogue is the
CI one (tests/fixtures/sweep/ci/: the shipped entries of the three, with
only the subsystems they need, so that CI builds a small kernel).  Then the same sweep
again against the first one's JSON: the same sites (exit 0), as the issue
asks of two sweeps in a row.
"""

import html.parser
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import run  # noqa: E402

VERSION = "7.3"
DEVICES = ("virtio-blk", "nvme", "usb-storage")
# the shipped entries of these three, with a smaller subsystems fragment
# (tests/unit/checks/test_sweep.py checks the entries are the shipped ones)
CATALOGUE = Path(__file__).resolve().parents[1] / "fixtures" / "sweep" / "ci" / "catalogue.toml"


class ShortSweep(unittest.TestCase):
    def sweep(self, *args):
        r = run("sweep", "--kernel", VERSION, "--catalogue", str(CATALOGUE), "--devices",
                ",".join(DEVICES), "--json", *args, timeout=5400)
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            self.fail(f"sweep printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")
        return r.returncode, out

    def test_short_sweep_twice(self):
        code, out = self.sweep()
        devices = {d["device"]: d for d in out["devices"]}
        self.assertEqual(code, 0, json.dumps(out["devices"], indent=1)[-3000:])
        self.assertEqual(set(devices), set(DEVICES) | {"(boot)"})
        for name in DEVICES:
            d = devices[name]
            self.assertEqual((d["state"], d["workload_status"]), ("ran", 0), d)
            console = Path(d["console"]).read_text(errors="replace")
            self.assertIn(f"DMAHARNESS-SWEEP end {name} status=0", console)
        # the virtio disk went through the DMA API: its workload checks that
        # VIRTIO_F_ACCESS_PLATFORM was negotiated, and the detector saw its maps
        blk = Path(devices["virtio-blk"]["console"]).read_text(errors="replace")
        self.assertRegex(blk, r"virtio_blk virtio\d+: .*\[vda\]")
        # USB enumeration of the stick reads the first 8 bytes of its device
        # descriptor into a 64-byte buffer (hub.c's get_bMaxPacketSize0): a
        # site that the boot without a device never has.  usb_string()'s 255
        # bytes of a kmalloc(256) buffer are that buffer mapped in part, not
        # sharing (7.3's detector, patch 0010): no site
        sites = out["sites"]
        self.assertFalse([s for s in sites if s["function"] == "usb_string"])
        usb = [s for s in sites if s["function"] == "get_bMaxPacketSize0"]
        self.assertTrue(usb, [s["key"] for s in sites])
        self.assertIn("usb-storage", usb[0]["devices"])
        self.assertNotIn("(boot)", usb[0]["devices"])
        self.assertEqual((usb[0]["cache"], usb[0]["offset"], usb[0]["length"]),
                         ("kmalloc-64", 0, 8))
        self.assertTrue(usb[0]["evidence"]["excerpt"] and usb[0]["evidence"]["stack"])
        self.assertIsNotNone(usb[0]["layout"])
        keys = [s["key"] for s in sites]
        self.assertEqual(len(keys), len(set(keys)))
        # no site is named after a transport layer
        self.assertFalse([s for s in sites if s["function"].startswith(("vring_", "virtqueue_",
                                                                        "usb_hcd_", "scsi_"))])
        page = Path(out["html"]).read_text()
        html.parser.HTMLParser().feed(page)
        self.assertIn("get_bMaxPacketSize0", page)

        # the same sweep as a campaign (issue #16): a job per boot, through GNU
        # parallel; collect folds the jobs' consoles into the same sites
        with tempfile.TemporaryDirectory(prefix="dmah-sweep-campaign-") as d:
            camp = Path(d) / "c"
            r = run("plan", "sweep", "-o", str(camp), "--catalogue", str(CATALOGUE),
                    "--devices", ",".join(DEVICES), "--", "--kernel", VERSION, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run("campaign", str(camp), "--jobs", "2", "--json", timeout=3600)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            col = json.loads(r.stdout)
            self.assertTrue(col["complete"])
            self.assertEqual(sorted(j["id"] for j in col["jobs"]), sorted(("boot",) + DEVICES))
            sw = col["sweep"]
            self.assertTrue(sw["layout"])           # the sweep kernel was built here
            self.assertEqual(sorted(s["key"] for s in sw["sites"]), sorted(keys))
            self.assertEqual({x["device"]: x["state"] for x in sw["devices"]},
                             {n: "ran" for n in ("(boot)",) + DEVICES})
            usb2 = [x for x in sw["sites"] if x["function"] == "get_bMaxPacketSize0"]
            self.assertEqual(usb2[0]["devices"], usb[0]["devices"])
            self.assertIsNotNone(usb2[0]["layout"])
            html.parser.HTMLParser().feed(Path(col["html"]).read_text())

        first = Path(out["run_dir"]) / "sweep.json"
        code2, again = self.sweep("--baseline", str(first))
        self.assertEqual(code2, 0, again.get("baseline"))
        self.assertEqual(sorted(s["key"] for s in again["baseline"]["unchanged"]), sorted(keys))
        self.assertEqual((again["baseline"]["new"], again["baseline"]["gone"]), ([], []))

    def test_unknown_device_is_refused_before_building(self):
        r = run("sweep", "--kernel", VERSION, "--devices", "no-such-model", timeout=120)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("no device 'no-such-model'", r.stderr)


if __name__ == "__main__":
    unittest.main()
