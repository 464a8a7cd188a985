"""harness.checks.usbsweep: the USB sweep's kernel fragment, reasons, figures (issue #27)."""

import tempfile
import unittest
from pathlib import Path

from harness.boot.settings import BootSettings
from harness.checks import usbsweep
from harness.errors import InputError
from harness.pipeline import VariantSpec
from harness.devices import usbdevices, usbgen
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

    def test_every_driver_with_an_id_table_whatever_menu_it_sits_under(self):
        """CAN's USB adapters sit in a `menu ... depends on USB` whose entries never
        name USB, comedi's in an if-block: their ID tables ask for them (#41);
        the symbols other fragments set are not asked again (USB core's table)."""
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            can = root / "drivers" / "net" / "can" / "usb"
            can.mkdir(parents=True)
            (can / "Kconfig").write_text('menu "CAN USB interfaces"\n\tdepends on USB\n\n'
                                         'config CAN_GS_USB\n\ttristate "Geschwister"\n'
                                         'endmenu\n')
            (can / "Makefile").write_text("obj-$(CONFIG_CAN_GS_USB) += gs_usb.o\n")
            (can / "gs_usb.c").write_text("MODULE_DEVICE_TABLE(usb, gs_usb_table);\n")
            core = root / "drivers" / "usb" / "core"
            core.mkdir(parents=True)
            (core / "Kconfig").write_text('config USB\n\ttristate "USB"\n')
            (core / "Makefile").write_text("usbcore-y := hub.o\nobj-$(CONFIG_USB) += usbcore.o\n")
            (core / "hub.c").write_text("MODULE_DEVICE_TABLE (usb, hub_id_table);\n")
            text, n = usbsweep.fragment_text(root, frozenset({"CONFIG_USB"}))
            self.assertIn("CONFIG_CAN_GS_USB=m", text.splitlines())
            self.assertNotIn("CONFIG_USB=m", text.splitlines())
            for option, why in usbsweep.GATES:                 # the menus, with their source
                self.assertIn(option, text.splitlines())
                self.assertRegex(why, r"^(drivers|net|sound)/\S*Kconfig")

    @unittest.skipUnless(any((Path.home() / ".cache/dmaharness/src").glob("linux-7.3*")),
                         "Debian's linux-source-7.3 is not unpacked in the cache folder")
    def test_each_gate_is_a_symbol_of_7_3(self):
        tree = next((Path.home() / ".cache/dmaharness/src").glob("linux-7.3*"))
        for option, why in usbsweep.GATES:
            sym = option.split("=")[0].removeprefix("CONFIG_")
            kconfig = tree / why.split(":")[0].split(" ")[0]
            with self.subTest(option=option):
                self.assertRegex(kconfig.read_text(), rf"(?m)^(menu)?config {sym}$")


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
        # a driver's own word, when it says one
        log += ("[ 5.5] usb 1-5: new high-speed USB device number 6 using xhci_hcd\n"
                "[ 5.5] usb 1-5: Product: Fake\n"
                "[ 5.5] usb 1-5: ath9k_htc: Device endpoint numbers are not the expected ones\n"
                "[ 5.6] usbcore: registered new interface driver ath9k_htc\n")
        self.assertEqual(usbsweep.why_unbound(log, "ath9k_htc", "1-5"), "the kernel said: usb "
                         "1-5: ath9k_htc: Device endpoint numbers are not the expected ones")
        self.assertIn("no interface took", usbsweep.why_unbound(log, "xpad", "1-50"))

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


class Workloads(unittest.TestCase):
    def test_bound_drivers_whose_class_workload_ran_and_per_class(self):
        def drv(state, *tries):
            return {"state": state, "tries": list(tries)}
        f = usbsweep.workload_figures([
            drv("bound", {"bound": False, "workloads": {}},
                {"bound": True, "workloads": {"tty": 3, "net": 0}}),
            drv("bound", {"bound": True, "workloads": {"input": 2, "hidraw": 2}}),
            drv("bound", {"bound": True, "workloads": {"none": 0}}),
            drv("bound", {"bound": True}),                 # a sweep without --exercise
            drv("unbound", {"bound": False, "workloads": {"tty": 5}})])
        self.assertEqual(f, {"workload_ran": 2, "workload_no_node": 1,
                             "workload_classes": {"hidraw": 1, "input": 1, "tty": 1}})
        figs = usbsweep.figures(["bound"], 1, 0, 1.0, [drv("bound", {"bound": True,
                                                                     "workloads": {"tty": 1}})])
        self.assertEqual(figs["workload_ran"], 1)
        self.assertIn("class workload ran for 1", usbsweep.summary("k", figs))


class SiteFigures(unittest.TestCase):
    def test_real_sites_per_architecture_and_dma_owned_evidence(self):
        def site(owned, access, *corrupts):
            return {"dma_owned": owned, "dma_owned_access": access,
                    "exposure": [{"arch": a, "verdict": "corrupts" if a in corrupts else
                                  "own-lines"} for a in ("arm", "mips", "x86_64")]}
        f = usbsweep.site_figures([site(True, "write", "arm", "mips"), site(True, "read"),
                                   site(False, None, "arm"), {"key": "no exposure"}])
        self.assertEqual(f, {"sites_real": {"arm": 2, "mips": 1}, "sites_dma_owned": 2,
                             "sites_dma_owned_write": 1})


class Bound(unittest.TestCase):
    def test_a_driver_is_known_by_its_name_and_by_its_module(self):
        """hid-cherry's HID driver is named "cherry": the guest's line names its
        module, and the sweep counts the module as bound."""
        console = ("DMAHARNESS-DEVICE 0 found 1:2 046a:0023 1-1\n"
                   "DMAHARNESS-DEVICE 0 interface 0 driver usbhid module usbhid\n"
                   "DMAHARNESS-DEVICE 0 hid 0003:046A:0023.0001 driver cherry module hid_cherry\n"
                   "DMAHARNESS-DEVICE 1 interface 0 driver snd-usb-audio module snd_usb_audio\n"
                   "DMAHARNESS-DEVICE 1 interface 1 driver none module -\n"
                   "DMAHARNESS-DEVICE 2 interface 0 driver hub\n")       # an older guest line
        profs = [usbdevices.Profile(f"p{i}", Path(f"p{i}.profile"), 0x1209, 0x1000 + i, (), ())
                 for i in range(3)]
        res = [r.to_json() for r in usbdevices.parse(console, profs)]
        self.assertEqual(res[0]["modules"], {"usbhid": "usbhid", "cherry": "hid_cherry"})
        self.assertEqual(res[0]["hid"], {"0003:046A:0023.0001": "cherry"})
        self.assertIn("hid_cherry", usbsweep.drivers_of(res[0]))
        self.assertIn("cherry", usbsweep.drivers_of(res[0]))
        self.assertEqual(usbsweep.drivers_of(res[1]), {"snd_usb_audio", "none"})
        self.assertEqual((res[1]["interfaces"], res[1]["modules"]),
                         ({"0": "snd-usb-audio", "1": "none"}, {"snd-usb-audio": "snd_usb_audio"}))
        self.assertEqual(usbsweep.drivers_of(res[2]), {"hub"})


class Attribution(unittest.TestCase):
    def test_a_site_names_its_driver_by_file_else_by_boot_else_none(self):
        boots = {"try1-boot1": ["ftdi_sio", "pl2303"], "try1-boot2": ["uvcvideo", "btusb"],
                 "try1-boot3": ["xpad"], "try2-boot1": ["asix"]}
        table = {"sites": [
            {"key": "a", "location": "drivers/usb/serial/ftdi_sio.c:120",
             "devices": ["try1-boot1", "try1-boot2"]},
            {"key": "b", "location": "drivers/media/usb/uvc/uvc_status.c:300",
             "devices": ["try1-boot2"]},
            {"key": "c", "location": "drivers/usb/core/message.c:900",
             "devices": ["try1-boot1", "try1-boot2", "try1-boot3"]},
            {"key": "d", "location": None, "devices": ["try2-boot1"]}]}
        got = {s["key"]: (s["drivers"], s["drivers_from"])
               for s in usbsweep.attribute(table, boots)["sites"]}
        self.assertEqual(got["a"], (["ftdi_sio"], "source file"))
        self.assertEqual(got["b"], (["uvcvideo", "btusb"], "boots"))
        self.assertEqual(got["c"][0], [])
        self.assertIn("3 boots", got["c"][1])
        self.assertEqual(got["d"], (["asix"], "boots"))

    def test_a_frame_in_a_drivers_module_or_one_it_needs_names_it(self):
        boots = {"try1-boot1": ["rtl8192cu", "rtl8150", "xpad"]}
        excerpt = [" ? rtl_usb_start+0xa9/0x4e4 [rtl_usb]",       # a guess of the unwinder
                   " usb_control_msg+0x304/0x37c",
                   " _usbctrl_vendorreq_sync+0x9e/0x144 [rtl_usb]"]
        table = {"sites": [{"key": "s", "location": "drivers/net/wireless/realtek/rtlwifi/usb.c:40",
                            "devices": ["try1-boot1"], "evidence": {"excerpt": excerpt}},
                           {"key": "t", "location": None, "devices": ["try1-boot1"],
                            "evidence": {"excerpt": [" ? xpad_probe+0x1/0x2 [xpad]"]}}]}
        deps = {"rtl8192cu": {"rtl_usb", "rtlwifi", "mac80211"}, "rtl8150": {"mii"}}
        got = {x["key"]: (x["drivers"], x["drivers_from"])
               for x in usbsweep.attribute(table, boots, deps)["sites"]}
        self.assertEqual(got["s"], (["rtl8192cu"], "stack"))
        self.assertEqual(got["t"], (["rtl8192cu", "rtl8150", "xpad"], "boots"))

    def test_module_deps_of_a_build(self):
        with tempfile.TemporaryDirectory() as d:
            m = Path(d) / "lib" / "modules" / "7.3.4"
            m.mkdir(parents=True)
            (m / "modules.alias").write_text("alias usb:v0BDAp8176d*dc*dsc*dp*ic*isc*ip*in* rtl8192cu\n")
            (m / "modules.dep").write_text(
                "kernel/drivers/net/wireless/realtek/rtlwifi/rtl8192cu/rtl8192cu.ko: "
                "kernel/drivers/net/wireless/realtek/rtlwifi/rtl_usb.ko kernel/net/mac80211/mac80211.ko\n"
                "kernel/drivers/hid/hid-cherry.ko:\n")
            deps = usbsweep.module_deps(Path(d))
        self.assertEqual(deps, {"rtl8192cu": {"rtl_usb", "mac80211"}, "hid_cherry": set()})
        self.assertEqual(usbsweep.module_deps(Path("/nonexistent")), {})


class Layouts(unittest.TestCase):
    def test_an_unknown_layout_is_refused_before_any_build(self):
        req = usbsweep.UsbSweepRequest(VariantSpec(kernel="7.3"), BootSettings(),
                                       layouts=("multi", "none"))
        with self.assertRaisesRegex(InputError, "--layouts: none: not a layout"):
            usbsweep.usb_sweep(req, None)
