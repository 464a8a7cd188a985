"""--usb-host: finding a host's USB device in sysfs, its checks, its exporter."""

import os
import socket
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.devices import camera, usbdevices, usbhost
from harness.errors import DeviceError, InputError

PROFILES = Path(__file__).resolve().parents[3] / "fake-device" / "profiles"


def profile_bytes(name: str) -> tuple[bytes, bytes]:
    text = (PROFILES / f"{name}.profile").read_text()
    return (usbdevices._statement_bytes(text, "device")[0],
            b"".join(usbdevices._statement_bytes(text, "config")))


def fake_host(root: Path, devices: list[tuple[str, int, int, str]]) -> tuple[Path, Path]:
    """A sysfs tree and a /dev/bus/usb with (sysname, bus, dev, profile) devices,
    and a root hub per bus, as Linux lays them out."""
    sysfs, devfs = root / "sys", root / "dev"
    sysfs.mkdir()
    for bus in sorted({b for _, b, _, _ in devices}):
        hub = sysfs / f"usb{bus}"
        hub.mkdir()
        for k, v in {"idVendor": "1d6b", "idProduct": "0002", "busnum": str(bus),
                     "devnum": "1", "bDeviceClass": "09", "bConfigurationValue": "1",
                     "product": "xHCI Host Controller"}.items():
            (hub / k).write_text(v + "\n")
    for sysname, bus, dev, prof in devices:
        d = sysfs / sysname
        d.mkdir()
        desc, config = profile_bytes(prof)
        vid, pid = desc[8] | desc[9] << 8, desc[10] | desc[11] << 8
        for k, v in {"idVendor": f"{vid:04x}", "idProduct": f"{pid:04x}", "busnum": str(bus),
                     "devnum": str(dev), "bDeviceClass": f"{desc[4]:02x}",
                     "bConfigurationValue": str(config[5]), "product": prof}.items():
            (d / k).write_text(v + "\n")
        (d / "descriptors").write_bytes(desc + config)
        (d / f"{sysname}:1.0").mkdir()                  # an interface: not a device
        node = devfs / f"{bus:03d}" / f"{dev:03d}"
        node.parent.mkdir(parents=True, exist_ok=True)
        node.write_bytes(b"")
    return sysfs, devfs


class UsbHost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.sysfs, self.devfs = fake_host(self.root, [("1-1", 1, 2, "logitech-k120"),
                                                       ("2-3", 2, 5, "stm32-cdc-acm")])
        env = {"DMAHARNESS_USB_SYSFS": str(self.sysfs), "DMAHARNESS_USB_DEVFS": str(self.devfs),
               "DMAHARNESS_USBREDIRECT": sys.executable}
        self.env = mock.patch.dict(os.environ, env)
        self.env.start()

    def tearDown(self):
        self.env.stop()
        self.tmp.cleanup()

    def test_spec(self):
        self.assertEqual(usbhost.parse_spec("046d:C31c"), ("id", 0x046d, 0xc31c))
        self.assertEqual(usbhost.parse_spec("1-12"), ("busdev", 1, 12))
        for bad in ("046d", "1-2-3", "xyz:1", "046d:c31c:1", ""):
            with self.assertRaises(InputError) as cm:
                usbhost.parse_spec(bad)
            self.assertIn("VID:PID", cm.exception.message)

    def test_finds_by_id_and_by_bus_dev(self):
        k = usbhost.find("046d:c31c")
        self.assertEqual((k.sysname, k.bus, k.dev, k.name), ("1-1", 1, 2, "host-1-1"))
        self.assertEqual(k.node, self.devfs / "001" / "002")
        self.assertEqual(usbhost.find("2-5").id, "0483:5740")
        # the root hubs are listed, the interfaces are not
        self.assertEqual(sorted(d.sysname for d in usbhost.scan()), ["1-1", "2-3", "usb1", "usb2"])

    def test_no_such_device_lists_what_there_is(self):
        with self.assertRaises(InputError) as cm:
            usbhost.find("dead:beef")
        msg = cm.exception.message
        self.assertIn("no such USB device", msg)
        self.assertIn("1-2 046d:c31c", msg)
        self.assertIn("2-5 0483:5740", msg)
        with self.assertRaises(InputError):
            usbhost.find("3-1")

    def test_machine_without_usb(self):
        os.environ["DMAHARNESS_USB_SYSFS"] = str(self.root / "none")
        with self.assertRaises(InputError) as cm:
            usbhost.find("046d:c31c")
        self.assertIn("this machine has no USB", cm.exception.message)

    def test_hub_refused(self):
        with self.assertRaises(InputError) as cm:
            usbhost.find("1-1")
        self.assertIn("is a hub", cm.exception.message)

    def test_two_alike_devices_refused(self):
        self.tmp2 = tempfile.TemporaryDirectory()
        sysfs, devfs = fake_host(Path(self.tmp2.name), [("1-1", 1, 2, "logitech-k120"),
                                                        ("1-2", 1, 3, "logitech-k120")])
        os.environ.update(DMAHARNESS_USB_SYSFS=str(sysfs), DMAHARNESS_USB_DEVFS=str(devfs))
        try:
            with self.assertRaises(InputError) as cm:
                usbhost.find("1-3")
            self.assertIn("2 devices are 046d:c31c (1-2, 1-3)", cm.exception.message)
        finally:
            self.tmp2.cleanup()

    def test_missing_node_and_no_permission(self):
        (self.devfs / "002" / "005").unlink()
        with self.assertRaises(InputError) as cm:
            usbhost.find("0483:5740")
        self.assertIn("does not exist", cm.exception.message)
        # (root opens any file: the refusal is simulated here; the CLI test
        # runs as nobody for a real one)
        with mock.patch("os.open", side_effect=PermissionError(13, "Permission denied")):
            with self.assertRaises(InputError) as cm:
                usbhost.find("046d:c31c")
        msg = cm.exception.message
        self.assertIn(f"no permission to open {self.devfs}/001/002", msg)
        self.assertIn('ATTR{idVendor}=="046d", ATTR{idProduct}=="c31c"', msg)
        self.assertIn("does not need root", msg)

    def test_exporter_must_be_installed(self):
        os.environ["DMAHARNESS_USBREDIRECT"] = "no-such-usbredirect"
        with self.assertRaises(InputError) as cm:
            usbhost.find("046d:c31c")
        self.assertIn("not installed", cm.exception.message)
        self.assertEqual(usbhost.exporter_command(usbhost.scan()[0], 4000)[1:],
                         ["--device", "046d:c31c", "--as", "127.0.0.1:4000"])

    def test_descriptors_give_modules_and_interrupt_endpoints(self):
        p = usbdevices.from_host(usbhost.find("046d:c31c"))
        self.assertIsNone(p.path)
        self.assertEqual((p.name, p.id), ("host-1-1", "046d:c31c"))
        self.assertEqual(p.modules, ("usbhid", "hid_generic"))
        self.assertEqual(p.interrupt_in, (0x81, 0x82))
        acm = usbdevices.from_host(usbhost.find("2-5"))
        self.assertIn("cdc_acm", acm.modules)
        self.assertEqual(acm.interrupt_in, (0x82,))
        # the same as the profile's own reading
        self.assertEqual(usbdevices.load("stm32-cdc-acm", _fake_uvc()).interrupt_in,
                         acm.interrupt_in)
        # the guest script looks for it and never captures it
        script = usbdevices.guest_script([p], 5, capture=True)
        self.assertIn("find_dev 046d c31c 1", script)
        self.assertNotIn("dmaharness-capture", script)

    def test_active_configuration_is_used(self):
        dev, config = profile_bytes("rtl8153")      # two configurations
        configs = usbhost.split_configs(config)
        self.assertEqual(len(configs), 2)
        h = usbhost.scan()[0]
        from dataclasses import replace
        two = replace(h, descriptors=dev + config, config_value=configs[1][5])
        self.assertEqual(two.active_config(), configs[1])
        self.assertEqual(replace(two, config_value=0).active_config(), configs[0])

    def test_listening_reads_proc_without_connecting(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            self.assertFalse(usbhost.listening(port))
            s.listen(1)
            self.assertTrue(usbhost.listening(port))

    def test_exporter_that_cannot_open_the_device_is_an_error(self):
        # usbredirect exits 0 with "Failed to open device!" when the device
        # went away between the check and the run
        script = self.root / "exporter.py"
        script.write_text("import sys\nprint('Failed to open device!', file=sys.stderr)\n")
        h = usbhost.find("046d:c31c")
        with mock.patch.object(usbhost, "exporter_command",
                               lambda d, port: [sys.executable, str(script)]), \
                mock.patch.object(camera, "build_fake_device", lambda: camera.FAKE_UVC):
            spec = camera.CameraSpec(camera.Flood(), 1.0, hosts=(h,))
            with self.assertRaises(DeviceError) as cm:
                with camera.Cameras(0, spec, self.root):
                    pass
        self.assertIn("usbredirect (exporting 046d:c31c", cm.exception.message)
        self.assertIn("exit 0", cm.exception.message)
        self.assertIn("Failed to open device!", cm.exception.message)

    def test_qemu_connects_to_the_exporters_port(self):
        c = camera.Camera(3, None, None, Path("x"), Path("x"), port=4711)
        args = c.qemu_args()
        self.assertIn("socket,id=cam3,host=127.0.0.1,port=4711", args)
        self.assertTrue(any(a.startswith("usb-redir,chardev=cam3,") for a in args))


def _fake_uvc() -> Path:
    return camera.build_fake_device()


if __name__ == "__main__":
    unittest.main()
