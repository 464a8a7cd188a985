"""Integration: USB devices from profiles in a real guest (issue #15).

On 6.1 and on 6.12, `run --device ...` with every shipped profile: each
device appears in the guest, its Linux driver binds every interface with
a clean dmesg (no kernel report but the detector's sharing findings, no
kernel line complaining about the device), the interrupt IN endpoints the
driver polls complete URBs in the guest (usbmon) while the fake device
floods them, and a capture in the guest gives the profile back.

It builds the usb-profiles variant of each version (10 to 15 minutes from
a warm tree), so it runs with DMAHARNESS_DEEP_TESTS=1 (make test-deep).
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
# shipped profile -> the driver of its interfaces
DRIVERS = {"builtin-uvc": "uvcvideo", "logitech-c922": "uvcvideo", "sunplusit-hd-uvc15": "uvcvideo",
           "sonix-0c45-6353": "uvcvideo", "lifecam-nx6000": "uvcvideo", "logitech-k120": "usbhid",
           "stm32-cdc-acm": "cdc_acm", "pl2303": "pl2303", "rtl8153": "r8153_ecm"}


class DevicesOn:
    """The tests, for the kernel version VERSION."""
    VERSION = ""

    def test_profiles_bind_cleanly_and_their_interrupt_endpoints_complete(self):
        shipped = sorted(p.stem for p in PROFILES.glob("*.profile"))
        self.assertEqual(sorted(DRIVERS), shipped)
        for batch in (shipped[:5], shipped[5:]):        # at most 8 devices a run
            self.flood(batch)

    def flood(self, batch):
        args = [a for d in batch for a in ("--device", d)]
        r = run("run", "--kernel", self.VERSION, *args, "--duration", "10", "--json",
                timeout=5400)
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            self.fail(f"run printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        devices = {d["name"]: d for d in out["devices"]}
        self.assertEqual(sorted(devices), batch)
        # clean: no report but the detector's sharing findings, no complaint
        self.assertEqual(out["dmesg"]["reports"], [], out["console"])
        for (name, d), cam in zip(devices.items(), out["cameras"]):
            self.assertTrue(d["found"], d)
            self.assertTrue(d["bound"], d)
            self.assertIn(DRIVERS[name], d["interfaces"].values(), d)
            self.assertEqual(d["dmesg"], [], name)
            self.assertEqual(cam.get("profile"), name)
            sent = {e["endpoint"]: e["sent"] for e in cam["endpoints"]}
            # every interrupt IN endpoint the driver keeps polled: URBs
            # completed with the flood's packets (the LifeCam's bInterval
            # is 4 s: it may complete none in 10 s)
            self.assertTrue(d["interrupt_completions"], d)
            for ep, n in d["interrupt_completions"].items():
                if name != "lifecam-nx6000":
                    self.assertGreater(n, 0, (name, ep, d))
                    self.assertGreater(sent.get(int(ep, 16), 0), 0, (name, ep, cam))
        self.assertTrue(out["dmesg"]["clean"], out["dmesg"])
        if "builtin-uvc" in devices:
            # the camera's status endpoint reached uvcvideo, as in the seed case
            self.assertIn("0x83", devices["builtin-uvc"]["interrupt_completions"])
            self.assertTrue(any(n.startswith("/dev/video")
                                for n in devices["builtin-uvc"]["opened"]))

    def test_capture_of_every_replayed_profile_gives_it_back(self):
        # capture(replay(P)) == P in a real guest: dmaharness-capture (static,
        # real libusb on usbfs) reads each shipped profile's replay back
        shipped = sorted(p.stem for p in PROFILES.glob("*.profile"))
        self.assertGreaterEqual(len(shipped), 9)
        seen = []
        for batch in (shipped[:5], shipped[5:]):        # at most 8 devices a run
            args = [a for d in batch for a in ("--device", d)]
            r = run("run", "--kernel", self.VERSION, *args, "--capture", "--duration", "3",
                    "--json", timeout=5400)
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


@unittest.skipUnless(DEEP, "DMAHARNESS_DEEP_TESTS=1 (make test-deep): builds 6.12 usb-profiles")
class Devices612(DevicesOn, unittest.TestCase):
    VERSION = "6.12"


@unittest.skipUnless(DEEP, "DMAHARNESS_DEEP_TESTS=1 (make test-deep): builds 6.1 usb-profiles")
class Devices61(DevicesOn, unittest.TestCase):
    VERSION = "6.1"


if __name__ == "__main__":
    unittest.main()
