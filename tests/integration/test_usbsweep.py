"""Integration: the USB driver sweep (issue #27), short, on CI's 7.3 kernel.

`sweep --usb-drivers --as-configured` sweeps the USB and HID drivers the
kernel already builds (the dma profile and kconfig-fragments/usb/): no
generated fragment, so in CI its kernel is the 7.3 configuration the other
tests built (tests/fixtures/kernel/ci-7.3.config) and seeds from it.  Three
drivers of three kinds, each bound by a device made from its own ID table
(modules.alias): a usb-serial driver (pl2303, an endpoint layout), a
net/usb class driver (cdc_ether, the CDC ECM template) and a HID driver
under usbhid (hid-cherry, whose driver is named "cherry": bound is judged by
the module too).  Each device's interrupt IN endpoint is flooded, and its
bulk IN reads answered with random bytes (usbmon counts the completions in
the guest), and each device is used as its class's users use it (a
tty written, a link pinged, LED events sent); every boot's console goes
into the sites table.
"""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import run  # noqa: E402

VERSION = "7.3"
DRIVERS = ("pl2303", "cdc_ether", "hid_cherry")


class UsbDriverSweep(unittest.TestCase):
    def sweep(self, *args):
        r = run("sweep", "--usb-drivers", "--as-configured", "--kernel", VERSION, "--json",
                *args, timeout=5400)
        try:
            return r.returncode, json.loads(r.stdout), r.stderr
        except json.JSONDecodeError:
            self.fail(f"sweep printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")

    def test_three_kinds_bind_and_are_flooded(self):
        code, out, err = self.sweep("--drivers", ",".join(DRIVERS))
        self.assertEqual(code, 0, err[-3000:])
        self.assertEqual(out["not_built"], [])        # no generated fragment
        runs = {d["module"]: d for d in out["drivers"]}
        self.assertEqual(set(runs), set(DRIVERS))
        for name in DRIVERS:
            d = runs[name]
            self.assertEqual(d["state"], "bound", json.dumps(d, indent=1))
            last = d["tries"][-1]
            self.assertTrue(last["bound"])
            self.assertGreater(last["completions"], 0, f"{name}: its interrupt endpoint was "
                               f"not flooded: {json.dumps(d, indent=1)}")
        # the tty pl2303 made was held open: its bulk IN reads were answered
        self.assertGreater(runs["pl2303"]["tries"][-1]["bulk_completions"], 0)
        self.assertTrue(runs["cdc_ether"]["bound_with"].startswith("tpl:"), runs["cdc_ether"])
        self.assertIn("cherry", runs["hid_cherry"]["tries"][-1]["drivers"])
        f = out["figures"]
        self.assertEqual((f["drivers"], f["bound"], f["boots"]), (3, 3, 1))
        self.assertEqual(f["bound_share_of_tried_without_firmware"], 1.0)
        # each device used as its class's users use it (harness.devices.usbwork):
        # pl2303's tty written with termios changes, cdc_ether's link
        # addressed and pinged, hid-cherry's event node sent LED events
        self.assertEqual(f["workload_ran"], 3, json.dumps(f))
        self.assertEqual(set(f["workload_classes"]), {"tty", "net", "input"})
        self.assertGreater(runs["pl2303"]["tries"][-1]["workloads"]["tty"], 0)
        self.assertIn("sites", out)
        self.assertTrue(Path(out["run_dir"], "usb-sweep.json").is_file())

    def test_the_same_as_a_campaign_of_two_shares(self):
        """plan sweep --usb-drivers, two jobs through GNU parallel, collect: the
        drivers of both shares put together, bound as in the local sweep."""
        with tempfile.TemporaryDirectory(prefix="dmah-usb-campaign-") as d:
            camp = Path(d) / "c"
            r = run("plan", "sweep", "--usb-drivers", "--shares", "2", "-o", str(camp), "--",
                    "--as-configured", "--kernel", VERSION, "--drivers", ",".join(DRIVERS),
                    timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run("campaign", str(camp), "--jobs", "2", "--json", timeout=3600)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            r = run("collect", str(camp), "--json", timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            out = json.loads(r.stdout)["sweep"]
            self.assertEqual({d["module"]: d["state"] for d in out["drivers"]},
                             {m: "bound" for m in DRIVERS})
            self.assertEqual(out["figures"]["bound"], 3)
            boots = [b["device"] for b in out["devices"]]
            self.assertEqual(sorted(b.split("-")[0] for b in boots), ["b1", "b2"])
            self.assertTrue((camp / "sweep.html").is_file())

    def test_a_driver_the_kernel_lacks_is_refused_before_booting(self):
        code, out, err = self.sweep("--drivers", "pl2303,no_such_driver")
        self.assertEqual(code, 4, err[-2000:])
        self.assertFalse(out["ok"])
        self.assertIn("no_such_driver", out["error"]["message"])


if __name__ == "__main__":
    unittest.main()
