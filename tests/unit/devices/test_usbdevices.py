"""harness.devices.usbdevices: profiles attached by `run --device`, the guest script, its lines."""

import subprocess
import tempfile
import unittest
from pathlib import Path

from harness.devices import camera, usbdevices
from harness.boot import settings
from harness.reports import dmesg
from harness.errors import InputError

ROOT = Path(__file__).resolve().parents[3]


def fake_uvc() -> Path:
    return camera.build_fake_device()


class Load(unittest.TestCase):
    def test_builtin_camera(self):
        p = usbdevices.load("builtin-uvc", fake_uvc())
        self.assertEqual((p.vid, p.pid), (0x1209, 0x0001))
        self.assertEqual(p.id, "1209:0001")
        self.assertEqual(p.modules, ("uvcvideo",))
        self.assertEqual(p.interrupt_in, (0x83,))          # the status endpoint only
        self.assertEqual(p.name, "builtin-uvc")

    def test_a_file_works_as_well_as_a_name(self):
        p = usbdevices.load(str(usbdevices.PROFILES_DIR / "builtin-uvc.profile"), fake_uvc())
        self.assertEqual(p.name, "builtin-uvc")

    def test_a_broken_profile_names_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "bad.profile"
            text = (usbdevices.PROFILES_DIR / "builtin-uvc.profile").read_text()
            f.write_text(text.replace("speed high", "speed warp"))
            line = text.splitlines().index("speed high") + 1
            with self.assertRaises(InputError) as cm:
                usbdevices.load(str(f), fake_uvc())
            self.assertIn(f"bad.profile:{line}:", cm.exception.message)
            self.assertIn("--usb-device", cm.exception.message)

    def test_unknown_name_lists_the_shipped_ones(self):
        with self.assertRaises(InputError) as cm:
            usbdevices.resolve("no-such-device")
        self.assertIn("builtin-uvc", cm.exception.message)

    def test_class_and_vendor_modules(self):
        # a CDC ACM interface and a vendor device known by VID:PID
        cfg = bytes([9, 2, 0, 0, 1, 1, 0, 0x80, 50,
                     9, 4, 0, 0, 1, 0x02, 0x02, 0x01, 0,
                     7, 5, 0x82, 3, 8, 0, 16])
        cfg = cfg[:2] + bytes([len(cfg), 0]) + cfg[4:]
        text = ("dmaharness-usb-profile 1\nname acm\nspeed full\n"
                "device 12 01 00 02 02 00 00 40 7b 06 03 23 00 03 00 00 00 01\n"
                "config " + " ".join(f"{b:02x}" for b in cfg) + "\n")
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "acm.profile"
            f.write_text(text)
            p = usbdevices.load(str(f), fake_uvc())
        self.assertEqual(p.modules, ("cdc_acm", "pl2303"))    # 067b:2303 is a PL2303 too
        self.assertEqual(p.interrupt_in, (0x82,))

    def test_bulk_in_endpoints_are_counted_apart(self):
        p = usbdevices.load("pl2303", fake_uvc())
        self.assertEqual((p.interrupt_in, p.bulk_in), ((0x81,), (0x83,)))
        script = usbdevices.guest_script([p], 10)
        self.assertIn('say 0 endpoint 0x83 bulk $(grep -c " C Bi:$bus:$(printf %03d $dev):3 0"',
                      script)
        r = usbdevices.parse("DMAHARNESS-DEVICE 0 endpoint 0x81 completions 5\n"
                             "DMAHARNESS-DEVICE 0 endpoint 0x83 bulk 77\n", [p])[0]
        self.assertEqual((r.completions, r.bulk_completions), ({"0x81": 5}, {"0x83": 77}))
        self.assertEqual(r.to_json()["bulk_completions"], {"0x83": 77})


class Script(unittest.TestCase):
    def profiles(self):
        p = usbdevices.load("builtin-uvc", fake_uvc())
        return [p, p]

    def test_busybox_parses_it(self):
        script = usbdevices.guest_script(self.profiles(), 10)
        r = subprocess.run(["busybox", "sh", "-n"], input=script, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_two_of_one_kind_are_told_apart(self):
        script = usbdevices.guest_script(self.profiles(), 10)
        self.assertIn("find_dev 1209 0001 1)", script)
        self.assertIn("find_dev 1209 0001 2)", script)
        self.assertIn(" C Ii:$bus:$(printf %03d $dev):3 ", script)   # endpoint 0x83
        self.assertIn("sleep 610 < $node &", script)
        self.assertIn("node=/dev/input/$(basename $n)", script)   # evdev nodes live in /dev/input

    def test_it_runs_where_no_device_appears(self):
        # busybox sh on this machine: no /sys/bus/usb device 1209:0001, so each
        # device is reported missing quickly enough when find_dev gives up
        script = usbdevices.guest_script(self.profiles()[:1], 1)
        script = script.replace("while [ $i -lt 40 ]", "while [ $i -lt 1 ]").replace(
            "sleep 2\n", "")
        r = subprocess.run(["busybox", "sh", "-c", script], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("DMAHARNESS-DEVICE 0 missing", r.stdout)


class Parse(unittest.TestCase):
    def test_lines(self):
        p = usbdevices.load("builtin-uvc", fake_uvc())
        console = "\n".join([
            "[    5.1] usb 1-1: new high-speed USB device",
            "DMAHARNESS-DEVICE 0 found 1:2 1209:0001",
            "DMAHARNESS-DEVICE 0 interface 0 driver uvcvideo",
            "DMAHARNESS-DEVICE 0 interface 1 driver uvcvideo",
            "DMAHARNESS-DEVICE 0 open /dev/video0",
            "DMAHARNESS-DEVICE 0 endpoint 0x83 completions 4711",
            "DMAHARNESS-DEVICE 1 missing",
            "DMAHARNESS-DEVICE 7 found 1:3 ffff:ffff",      # no such device: ignored
        ])
        r = usbdevices.parse(console, [p, p])
        self.assertEqual(r[0].found, "1:2")
        self.assertEqual(r[0].interfaces, {0: "uvcvideo", 1: "uvcvideo"})
        self.assertTrue(r[0].bound)
        self.assertEqual(r[0].completions, {"0x83": 4711})
        self.assertEqual(r[0].opened, ["/dev/video0"])
        self.assertIsNone(r[1].found)
        self.assertFalse(r[1].bound)
        j = r[0].to_json()
        self.assertEqual(j["interfaces"], {"0": "uvcvideo", "1": "uvcvideo"})

    def test_the_data_log_wins_over_a_console_cut_by_printk(self):
        p = usbdevices.load("builtin-uvc", fake_uvc())
        console = "DMAHARNESS-DEVICE 0 endpoint 0x83 compl[    6.5] hid: too short\netions 12\n"
        log = "DMAHARNESS-DEVICE 0 endpoint 0x83 completions 12\n"
        self.assertEqual(usbdevices.parse(console, [p])[0].completions, {})
        self.assertEqual(usbdevices.parse(console, [p], log)[0].completions, {"0x83": 12})

    def test_interfaces_without_a_driver_in_the_kernel_do_not_count(self):
        # the C922's microphone (audio, interfaces 2-3) and the SunplusIT's
        # DFU interface have no driver in the usb-profiles kernel
        c922 = usbdevices.load("logitech-c922", fake_uvc())
        self.assertEqual(c922.driven, (0, 1))
        self.assertEqual(usbdevices.load("sunplusit-hd-uvc15", fake_uvc()).driven, (0, 1))
        # CDC data interfaces are claimed by their comm interface's driver
        self.assertEqual(usbdevices.load("stm32-cdc-acm", fake_uvc()).driven, (0, 1))
        # a vendor driver takes every interface of its configuration
        self.assertEqual(usbdevices.load("pl2303", fake_uvc()).driven, ())
        lines = "".join(f"DMAHARNESS-DEVICE 0 interface {n} driver {d}\n" for n, d in
                        ((0, "uvcvideo"), (1, "uvcvideo"), (2, "none"), (3, "none")))
        self.assertTrue(usbdevices.parse(lines, [c922])[0].bound)
        self.assertFalse(usbdevices.parse(lines.replace("1 driver uvcvideo", "1 driver none"),
                                          [c922])[0].bound)
        # an interface the driver should take but that never showed up
        self.assertFalse(usbdevices.parse("DMAHARNESS-DEVICE 0 interface 0 driver uvcvideo\n",
                                          [c922])[0].bound)

    def test_an_unbound_interface_is_not_bound(self):
        p = usbdevices.load("builtin-uvc", fake_uvc())
        r = usbdevices.parse("DMAHARNESS-DEVICE 0 interface 0 driver uvcvideo\n"
                             "DMAHARNESS-DEVICE 0 interface 1 driver none\n", [p])
        self.assertFalse(r[0].bound)


SHARING_REPORT = """\
[    1.851619] DMA-API: xhci_hcd 0000:00:01.0: device driver maps a buffer that shares a cache line with other data of its object [object offset=0] [object size=256] [cache=kmalloc-256] [buffer size=255] [shared bytes before=0 after=1] [line size=128] [DMA_FROM_DEVICE]
[    1.852745] WARNING: CPU: 0 PID: 8 at kernel/dma/debug_cacheline.c:160 cl_report+0x106/0x117
[    1.853747] Modules linked in: uvcvideo(+)
[    1.853800] Call Trace:
[    1.853810]  <TASK>
[    1.853820]  usb_string+0x10/0x20
[    1.853830]  usb_new_device+0x10/0x20
[    1.853840]  </TASK>
[    1.853850] ---[ end trace 0000000000000000 ]---
"""


class Dmesg(unittest.TestCase):
    """The clean-dmesg rule: no report but sharing findings, no complaint about a device."""

    def results(self, console):
        k = usbdevices.Profile("k", Path("k"), 0x046d, 0xc31c, (), ())
        a = usbdevices.Profile("a", Path("a"), 0x0483, 0x5740, (), ())
        lines = ("DMAHARNESS-DEVICE 0 found 1:2 046d:c31c 1-1\n"
                 "DMAHARNESS-DEVICE 1 found 1:3 0483:5740 1-2\n")
        return usbdevices.parse(lines + console, [k, a])

    def test_sharing_findings_alone_are_clean(self):
        console = SHARING_REPORT + "[    2.0] usb 1-1: new high-speed USB device number 2\n"
        r = self.results(console)
        self.assertEqual(r[0].sysname, "1-1")
        v = dmesg.dmesg_check(console, r)
        self.assertTrue(v["clean"], v)
        self.assertEqual(v["reports"], [])
        self.assertEqual(len(v["sharing_findings"]), 1)
        self.assertIn("usb_string", v["sharing_findings"][0])

    def test_complaints_are_told_per_device(self):
        console = SHARING_REPORT + "\n".join([
            "[   20.7] hid-generic 0003:046D:C31C.0003: Event data for report 0 was too short (8 vs 5)",
            "[   21.0] cdc_acm 1-2:1.0: failed to set dtr/rts",
            "[   21.1] usb 1-12: device descriptor read/64, error -71",     # another device
            "[   21.2] usb 1-1.4: device not accepting address 5, error -71",  # behind a hub on 1-1
            "[   21.3] usb 1-1: new high-speed USB device number 2 using xhci_hcd",
        ]) + "\n"
        r = self.results(console)
        v = dmesg.dmesg_check(console, r)
        self.assertFalse(v["clean"])
        self.assertEqual(r[0].dmesg, ["hid-generic 0003:046D:C31C.0003: Event data for report 0 "
                                      "was too short (8 vs 5)"])
        self.assertEqual(r[1].dmesg, ["cdc_acm 1-2:1.0: failed to set dtr/rts"])
        self.assertEqual(r[0].to_json()["dmesg"], r[0].dmesg)

    def test_any_other_report_is_not_clean(self):
        console = SHARING_REPORT + "\n".join([
            "[    3.0] ------------[ cut here ]------------",
            "[    3.0] WARNING: CPU: 0 PID: 1 at drivers/usb/core/urb.c:503 usb_submit_urb+0x1/0x2",
            "[    3.0] Modules linked in:",
            "[    3.0] RIP: 0010:usb_submit_urb+0x1/0x2",
            "[    3.0] Call Trace:",
            "[    3.0]  <TASK>",
            "[    3.0]  acm_port_activate+0x1/0x2",
            "[    3.0]  </TASK>",
            "[    3.0] ---[ end trace 0000000000000000 ]---",
        ]) + "\n"
        v = dmesg.dmesg_check(console, self.results(console))
        self.assertFalse(v["clean"])
        self.assertEqual(len(v["reports"]), 1)
        self.assertIn("usb_submit_urb", v["reports"][0])


class Setting(unittest.TestCase):
    def test_devices_setting(self):
        s = settings.SETTINGS["devices"]
        self.assertEqual(s.parse("builtin-uvc"), ("builtin-uvc",))
        self.assertEqual(s.parse(["a", "b"]), ("a", "b"))
        with self.assertRaises(InputError):
            s.parse([""])
        _, f = settings.resolve({"devices": ("a", "b")})
        self.assertEqual(f.devices, ("a", "b"))


if __name__ == "__main__":
    unittest.main()
