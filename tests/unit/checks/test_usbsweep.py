"""harness.checks.usbsweep: the USB sweep's kernel fragment, reasons, figures (issue #27)."""

import tempfile
import unittest
from pathlib import Path

from harness.checks import usbsweep
from harness.devices import usbgen
from harness.kernel import fragments


class Fragment(unittest.TestCase):
    def test_generated_fragment_is_best_effort_and_names_the_tree_drivers(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "drivers" / "net" / "usb").mkdir(parents=True)
            (root / "drivers" / "net" / "usb" / "Kconfig").write_text(
                "config USB_NET_AX8817X\n\ttristate \"ASIX\"\n\tdepends on USB_USBNET\n")
            (root / "drivers" / "watchdog").mkdir(parents=True)
            (root / "drivers" / "watchdog" / "Kconfig").write_text(
                "config USBPCWATCHDOG\n\ttristate \"pcwd\"\n\tdepends on USB\n"
                "config I6300ESB_WDT\n\ttristate \"esb\"\n\tdepends on PCI\n")
            text, n = usbsweep.fragment_text(root)
            self.assertEqual(n, 2)
            f = root / "usb.config"
            f.write_text(text)
            frag = fragments.parse_fragment(f)
            self.assertTrue(frag.best_effort)
            opts = dict(frag.options)
            self.assertEqual((opts["CONFIG_USB_NET_AX8817X"], opts["CONFIG_USBPCWATCHDOG"]),
                             ("m", "m"))
            self.assertNotIn("CONFIG_I6300ESB_WDT", opts)
            self.assertEqual(opts["CONFIG_SND_USB"], "y")            # a subsystem
            self.assertIn("CONFIG_USBPCWATCHDOG", usbsweep.not_built("CONFIG_SND_USB=y\n", f))


class Reasons(unittest.TestCase):
    def test_probe_error_firmware_or_silence(self):
        log = ("[ 3.1] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
               "[ 3.4] asix 1-1:1.0: probe with driver asix failed with error -32\n"
               "[ 3.4] ftdi_sio: probe of 1-4:1.0 failed with error -22\n"
               "[ 3.5] rtl8xxxu 1-2:1.0: Direct firmware load for rtlwifi/rtl8192eu_nic.bin "
               "failed with error -2\n"
               "[ 3.6] faux_driver regulatory: Direct firmware load for regulatory.db failed "
               "with error -2\n")
        self.assertIn("error -32", usbsweep.why_unbound(log, "asix", "1-1"))
        self.assertIn("error -22", usbsweep.why_unbound(log, "ftdi_sio", "1-4"))
        self.assertIn("firmware missing: rtlwifi/rtl8192eu_nic.bin",
                      usbsweep.why_unbound(log, "rtl8xxxu", "1-2"))
        # cfg80211's regulatory database is nobody's device: not a reason
        self.assertIn("no interface took it", usbsweep.why_unbound(log, "xpad", "1-3"))

    def test_states_and_figures(self):
        m = usbgen.parse_alias("alias usb:v0403pE510d*dc*dsc*dp*ic*isc*ip*in* ftdi_sio")
        plan = usbgen.DriverPlan("ftdi_sio", 1, m, tuple(usbgen.LAYOUTS))
        none = usbgen.DriverPlan("hid_generic", 1, None, (), "catch-all")
        tried = [{"attempt": "int-bulk"}]
        runs = [usbsweep.DriverRun("a", plan, tried, bound_with="int-bulk"),
                usbsweep.DriverRun("b", plan, tried, why="firmware missing: x.bin"),
                usbsweep.DriverRun("c", plan, tried, why="no interface took it"),
                usbsweep.DriverRun("hid_generic", none), usbsweep.DriverRun("d", plan)]
        self.assertEqual([r.state for r in runs], ["bound", "firmware", "unbound", "no-device",
                                                   "planned"])
        res = usbsweep.UsbSweepResult(None, None, None, runs, usbsweep.sweeptable.Table([], {}),
                                      [], 3, 12.0)
        f = res.figures()
        self.assertEqual((f["bound"], f["unbound"], f["firmware"], f["no-device"], f["boots"]),
                         (1, 1, 1, 1, 3))
        self.assertEqual(f["bound_share_of_tried_without_firmware"], 0.5)


if __name__ == "__main__":
    unittest.main()
