"""harness.devices.usbgen: a device per USB/HID driver, from modules.alias (issue #27)."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.devices import usbdevices, usbgen
from harness.errors import InputError
from tests.unit.devices.test_usbdevices import fake_uvc

ROOT = Path(__file__).resolve().parents[3]

# lines as depmod writes them (7.3's modules.alias), and lines of other buses
ALIASES = """\
# Aliases extracted from modules themselves.
alias usb:v0403pE510d*dc*dsc*dp*ic*isc*ip*in* ftdi_sio
alias usb:v12D1p14ACd*dc*dsc*dp*ic*isc*ip*in01* option
alias usb:v0BDAp8153d3[0-1]*dc*dsc*dp*ic02isc06ip00in* r8153_ecm
alias usb:v*p*d*dc09dsc*dp*ic*isc*ip*in* hub
alias usb:v0870p0001d*dc*dsc*dp*ic*isc*ip*in* cdc_acm
alias usb:v*p*d*dc*dsc*dp*ic02isc02ip01in* cdc_acm
alias usb:v*p*d*dc*dsc*dp*ic0Eisc01ip01in* uvcvideo
alias usb:v*p*d*dc*dsc*dp*ic03isc*ip*in* usbhid
alias hid:b*g*v*p* hid_generic
alias hid:b0003g0101v0000056Ap* wacom
alias hid:b*g0004v*p* hid_multitouch
alias hid:b*g0003v*p* hid_sensor_hub
alias hid:b0003g*v000005ACp00008102 hid_apple
alias hid:b0003g*v000005ACp00000250 hid_apple
alias hid:b0003g*v000005ACp00008102 hid_appletb_bl
alias hid:b0005g*v0000046Dp0000B30B hid_logitech
alias pci:v00008086d00001237sv*sd*bc*sc*i* intel_agp
alias virtio:d00000002v* virtio_blk
"""


class Aliases(unittest.TestCase):
    def test_usb_and_hid_entries(self):
        d = usbgen.parse_aliases(ALIASES)
        self.assertEqual(sorted(d), ["cdc_acm", "ftdi_sio", "hid_apple", "hid_appletb_bl",
                                     "hid_generic", "hid_multitouch", "hid_sensor_hub", "hub",
                                     "option", "r8153_ecm", "usbhid", "uvcvideo", "wacom"])   # no other bus, no BT HID
        ftdi = d["ftdi_sio"][0]
        self.assertEqual((ftdi.vid, ftdi.pid, ftdi.if_class, ftdi.if_number), (0x0403, 0xe510,
                                                                              None, None))
        self.assertEqual(d["option"][0].if_number, 1)          # in01 and the closing '*'
        r = d["r8153_ecm"][0]
        self.assertEqual((r.bcd, r.if_class, r.if_subclass, r.if_protocol), (0x3000, 2, 6, 0))
        self.assertEqual((d["hub"][0].dev_class, d["hub"][0].if_class), (9, None))
        w = d["wacom"][0]
        self.assertEqual((w.bus, w.vid, w.pid, w.hid_group, w.if_class), ("hid", 0x056a, None,
                                                                         0x0101, 3))
        self.assertTrue(d["hid_generic"][0].catch_all)
        self.assertFalse(d["usbhid"][0].catch_all)
        self.assertFalse(d["hub"][0].catch_all)

    def test_lowest_bcd(self):
        for pattern, want in (("*", None), ("", None), ("0100", 0x0100), ("0[0-2]*", 0),
                              ("3[0-1]*", 0x3000), ("01[5-9A-F]", 0x0150), ("2*", 0x2000)):
            self.assertEqual(usbgen.lowest_bcd(pattern), want, pattern)

    def test_a_bad_line_names_the_file_and_line(self):
        with self.assertRaises(InputError) as cm:
            usbgen.parse_aliases("alias usb:v0403p* ftdi_sio\n", "x/modules.alias")
        self.assertIn("x/modules.alias:1:", cm.exception.message)
        with self.assertRaises(InputError):
            usbgen.parse_aliases("alias usb:v*p*d*dc*dsc*dp*ic*isc*ip*in* ../../x\n")


def _descs(blob: bytes):
    i = 0
    while i + 2 <= len(blob) and blob[i] >= 2:
        yield blob[i:i + blob[i]]
        i += blob[i]


class Devices(unittest.TestCase):
    def setUp(self):
        self.d = usbgen.parse_aliases(ALIASES)

    def test_ids_and_classes_at_the_level_the_entry_asks(self):
        p = usbgen.profile(self.d["r8153_ecm"][0], "int-bulk")
        dev = p.device
        self.assertEqual((dev[8:10], dev[10:12], dev[12:14]), (b"\xda\x0b", b"\x53\x81",
                                                               b"\x00\x30"))
        ifs = [x for x in _descs(p.configs[0]) if x[1] == 4]
        self.assertEqual([(x[5], x[6], x[7]) for x in ifs], [(2, 6, 0)])
        eps = [x for x in _descs(p.configs[0]) if x[1] == 5]
        self.assertEqual([(x[2], x[3] & 3) for x in eps], [(0x81, 3), (0x82, 2), (0x03, 2)])
        hub = usbgen.profile(self.d["hub"][0], "int")
        self.assertEqual(hub.device[4], 9)                       # at the device
        self.assertEqual([x[5] for x in _descs(hub.configs[0]) if x[1] == 4], [9])
        self.assertEqual(hub.device[8:12], b"\x09\x12\x01\x00")  # 1209:0001: open IDs

    def test_the_interface_number_the_entry_names(self):
        p = usbgen.profile(self.d["option"][0], "bulk")
        ifs = [x for x in _descs(p.configs[0]) if x[1] == 4]
        self.assertEqual([x[2] for x in ifs], [0, 1])
        self.assertEqual(p.configs[0][4], 2)                     # bNumInterfaces

    def test_hid_gets_a_report_descriptor_and_the_hid_pattern(self):
        p = usbgen.profile(self.d["wacom"][0], "int")
        self.assertEqual(p.device[8:10], b"\x6a\x05")
        self.assertTrue([x for x in _descs(p.configs[0]) if x[1] == 0x21])
        self.assertEqual([(g.type, g.req, g.value) for g in p.gets], [(0x81, 6, 0x2200)])
        self.assertEqual(p.interrupts, [(0x81, "hid")])

    def test_every_layout_of_every_entry_is_a_profile_the_fake_device_serves(self):
        exe = fake_uvc()
        with tempfile.TemporaryDirectory() as d:
            for plan in usbgen.plan(self.d):
                for attempt in plan.tries:
                    f = Path(d) / "p.profile"
                    f.write_text(usbgen.device_text(plan, attempt, usbdevices.PROFILES_DIR))
                    r = subprocess.run([str(exe), "--check-profile", str(f)],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, (plan.module, attempt, r.stderr))

    def test_plan_order_and_catch_alls(self):
        plans = {p.module: p for p in usbgen.plan(self.d)}
        self.assertEqual(plans["uvcvideo"].tries[0], "tpl:sunplusit-hd-uvc15")
        self.assertEqual(plans["r8153_ecm"].tries[0], "tpl:rtl8153")
        self.assertEqual(plans["ftdi_sio"].tries, tuple(usbgen.LAYOUTS))
        # cdc_acm's first entry is a vendor quirk without the class: its
        # devices are that entry's, and its class entry gives the template
        acm = plans["cdc_acm"]
        self.assertEqual((acm.match.vid, acm.tries[0], acm.tries[1:]),
                         (0x0870, "tpl:stm32-cdc-acm", tuple(usbgen.LAYOUTS)))
        text = usbgen.device_text(acm, acm.tries[0], usbdevices.PROFILES_DIR, open_pid=0x1001)
        dev = usbdevices._statement_bytes(text, "device")[0]
        self.assertEqual((dev[8:10], dev[10:12]), (b"\x09\x12", b"\x01\x10"))   # pid.codes
        self.assertIsNone(plans["ftdi_sio"].tpl_match)
        self.assertEqual(plans["wacom"].tries, usbgen.HID_LAYOUTS)
        # an entry another driver's table has too is the last choice
        self.assertEqual(plans["hid_apple"].match.pid, 0x0250)
        self.assertEqual(plans["hid_appletb_bl"].match.pid, 0x8102)
        self.assertEqual(plans["hid_generic"].tries, ())
        self.assertIn("catch-all", plans["hid_generic"].reason)

    def test_the_vendor_layout_answers_every_vendor_request(self):
        m = self.d["ftdi_sio"][0]
        plain, vendor = usbgen.profile(m, "int-bulk"), usbgen.profile(m, "vendor")
        self.assertEqual(plain.configs, vendor.configs)          # the same endpoints
        reads = {(g.type, g.req) for g in vendor.gets if g.value is None and g.index is None}
        self.assertEqual(reads, {(t, r) for t in (0xc0, 0xc1) for r in range(256)})
        self.assertTrue(all(g.data == bytes(usbgen.VENDOR_ZEROS) for g in vendor.gets))
        writes = {(x.type, x.req) for x in vendor.sets if x.hand}
        self.assertEqual(writes, {(t, r) for t in (0x40, 0x41) for r in range(256)})
        self.assertFalse([g for g in plain.gets if g.type & 0x60 == 0x40])

    def test_a_hid_group_gets_a_report_descriptor_that_hid_core_files_under_it(self):
        for module, marker in (("hid_multitouch", b"\x09\x51"), ("hid_sensor_hub", b"\x05\x20")):
            p = usbgen.profile(self.d[module][0], "int-bulk")
            report = p.gets[0].data
            self.assertIn(marker, report)            # contact identifier, sensor page
            self.assertEqual(p.interrupts, [(0x81, "hid")])

    def test_a_template_takes_the_entry_ids(self):
        m = self.d["r8153_ecm"][0]
        text = usbgen.from_template(m, "rtl8153",
                                    (usbdevices.PROFILES_DIR / "rtl8153.profile").read_text())
        dev = usbdevices._statement_bytes(text, "device")[0]
        self.assertEqual((dev[8:10], dev[10:12], dev[12:14]), (b"\xda\x0b", b"\x53\x81",
                                                               b"\x00\x30"))
        self.assertIn("name r8153-ecm-0-tpl\n", text)


class Command(unittest.TestCase):
    def test_usb_drivers_lists_and_writes(self):
        with tempfile.TemporaryDirectory() as d:
            alias = Path(d) / "modules" / "modules.alias"
            alias.parent.mkdir()
            alias.write_text(ALIASES)
            out = Path(d) / "out"
            r = subprocess.run([sys.executable, "-m", "harness", "usb-drivers", str(alias.parent),
                                "-o", str(out), "--json"], capture_output=True, text=True,
                               cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual((j["drivers"], j["with_device"]), (13, 12))
            uvc = next(p for p in j["plans"] if p["module"] == "uvcvideo")
            self.assertEqual(Path(uvc["profiles"][0]).name, "1-tpl-sunplusit-hd-uvc15.profile")
            self.assertTrue(all(Path(f).is_file() for f in uvc["profiles"]))
            self.assertFalse((out / "hid_generic").exists())
            r = subprocess.run([sys.executable, "-m", "harness", "usb-drivers", str(d) + "/no"],
                               capture_output=True, text=True, cwd=ROOT)
            self.assertEqual(r.returncode, 4, r.stderr)


if __name__ == "__main__":
    unittest.main()
