"""Integration: USB devices from profiles in a real guest (issue #15).

`run --kernel 6.12 --device ...` with the built-in camera's profile and
two other classes: each device appears in the guest, its Linux driver
binds every interface, and the interrupt IN endpoints the driver polls
complete URBs in the guest (usbmon) while the fake device floods them.

It builds the usb-profiles variant of 6.12 (about 15 minutes from a warm
6.12 tree), so it runs with DMAHARNESS_DEEP_TESTS=1 (make test-deep).
"""

import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import run  # noqa: E402

DEEP = os.environ.get("DMAHARNESS_DEEP_TESTS") == "1"
PROFILES = Path(__file__).resolve().parents[2] / "fake-device" / "profiles"
# profile -> the driver of its interfaces
DEVICES = {"builtin-uvc": "uvcvideo", "logitech-k120": "usbhid", "stm32-cdc-acm": "cdc_acm"}


@unittest.skipUnless(DEEP, "DMAHARNESS_DEEP_TESTS=1 (make test-deep): builds 6.12 usb-profiles")
class Devices612(unittest.TestCase):
    def test_profiles_bind_and_their_interrupt_endpoints_complete(self):
        args = [a for d in DEVICES for a in ("--device", d)]
        r = run("run", "--kernel", "6.12", *args, "--duration", "10", "--json", timeout=5400)
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            self.fail(f"run printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        devices = {d["name"]: d for d in out["devices"]}
        self.assertEqual(set(devices), set(DEVICES))
        for (name, driver), cam in zip(DEVICES.items(), out["cameras"]):
            d = devices[name]
            self.assertTrue(d["found"], d)
            self.assertTrue(d["bound"], d)
            self.assertIn(driver, d["interfaces"].values(), d)
            self.assertEqual(cam.get("profile"), name)
            sent = {e["endpoint"]: e["sent"] for e in cam["endpoints"]}
            for ep, n in d["interrupt_completions"].items():
                # the driver polled it and URBs completed with the flood's packets
                self.assertGreater(n, 0, (name, ep, d))
                self.assertGreater(sent.get(int(ep, 16), 0), 0, (name, ep, cam))
        # the camera's status endpoint reached uvcvideo, as in the seed case
        self.assertIn("0x83", devices["builtin-uvc"]["interrupt_completions"])
        self.assertTrue(any(n.startswith("/dev/video") for n in devices["builtin-uvc"]["opened"]))

    def test_capture_of_every_replayed_profile_gives_it_back(self):
        # capture(replay(P)) == P in a real guest: dmaharness-capture (static,
        # real libusb on usbfs) reads each shipped profile's replay back
        shipped = sorted(p.stem for p in PROFILES.glob("*.profile"))
        self.assertGreaterEqual(len(shipped), 9)
        seen = []
        for batch in (shipped[:5], shipped[5:]):        # at most 8 devices a run
            args = [a for d in batch for a in ("--device", d)]
            r = run("run", "--kernel", "6.12", *args, "--capture", "--duration", "3", "--json",
                    timeout=5400)
            out = json.loads(r.stdout)
            self.assertEqual(r.returncode, 0, json.dumps(out.get("devices"), indent=1)[-4000:])
            seen += out["devices"]
        self.assertEqual(sorted(d["name"] for d in seen), shipped)
        for d in seen:
            c = d["capture"]
            self.assertIsNotNone(c, d["name"])
            self.assertEqual(c["exit"], 0, (d["name"], c))
            self.assertTrue(c["same"], (d["name"], c["compare"]))
            self.assertTrue(Path(c["file"]).is_file())


if __name__ == "__main__":
    unittest.main()
