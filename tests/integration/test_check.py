"""Integration: `dmaharness check` short form (issue #42), on CI's 7.3 kernels.

Two patches, no case written and no device named:

- a USB driver patch (tests/fixtures/check/cdc-acm-ctrl-buffer-in-struct.patch):
  cdc-acm's notification buffer moved from its own coherent allocation into
  struct acm, the seed's bug class brought back.  check finds the module
  from the Makefile, reaches it by its ID table with the shipped stm32
  profile, floods it, and must say "new" with a cdc-acm function in the
  title, and that the device bound the driver.  Its before kernel is the
  one test_usbsweep builds (7.3 with the device profiles' fragment); the
  after kernel is an incremental build of one module.
- a catalogue driver patch: the virtio-scsi case's own fix mail, checked
  with CI's small catalogue, whose kernels test_devicecase builds: the
  report the case expects fixed must be "fixed", and nothing new.

One run a side (the sharing of the first is reported at every submit of
the interrupt URB; the second's report is in every before boot so far,
see test_devicecase).
"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import ROOT, run  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "check" / "cdc-acm-ctrl-buffer-in-struct.patch"
SCSI_FIX = (ROOT / "patches" / "7.3" / "cases" / "virtio-scsi-kick-event" / "fix"
            / "0001-scsi-virtio_scsi-Allocate-event-buffers-outside-host.patch")
CATALOGUE = ROOT / "tests" / "fixtures" / "sweep" / "ci" / "catalogue.toml"


def signatures(out: dict) -> dict[str, str]:
    (comp,) = out["outcome"]["comparisons"]
    return {s["title"]: s["status"] for s in comp["signatures"]}


class Check(unittest.TestCase):
    def check(self, *args):
        r = run("check", "--kernel", "7.3", "--runs", "1", "--json", *map(str, args),
                timeout=3600)
        try:
            return r.returncode, json.loads(r.stdout), r.stderr
        except json.JSONDecodeError:
            self.fail(f"check printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")

    def test_a_usb_driver_patch_that_brings_the_bug_class_back_is_new(self):
        code, out, err = self.check(FIXTURE)
        self.assertEqual(out["workload"], "usb", err[-2000:])
        self.assertEqual([(d["module"], d["profile"]) for d in out["usb_devices"]],
                         [("cdc-acm", "stm32-cdc-acm")])
        self.assertEqual({t["module"] for t in out["touched"]}, {"cdc-acm"})  # the header too
        self.assertEqual(out["unbound"], [])
        sig = signatures(out)
        new = [t for t, s in sig.items() if s == "new"]
        self.assertTrue(any(t.startswith("DMA-API: ") and " in acm_" in t for t in new),
                        json.dumps(sig, indent=1))
        self.assertEqual(code, 1, err[-3000:])
        reply = Path(out["reply"]).read_text()
        self.assertIn("cdc-acm-ctrl-buffer-in-struct.patch", reply)

    def test_a_catalogue_drivers_fix_takes_its_report_out(self):
        code, out, err = self.check("--catalogue", CATALOGUE, SCSI_FIX)
        self.assertEqual((out["workload"], out["devices"]), ("catalogue", ["virtio-scsi"]),
                         err[-2000:])
        sig = signatures(out)
        self.assertEqual(sig.get("KASAN: dma-owned Write in virtscsi_kick_event"), "fixed",
                         json.dumps(sig, indent=1))
        self.assertEqual([t for t, s in sig.items() if s == "new"], [])
        self.assertEqual(code, 0, err[-3000:])


if __name__ == "__main__":
    unittest.main()
