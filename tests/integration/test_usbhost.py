"""Integration: `run --usb-host` (issue #15), through the real CLI.

The error paths run everywhere (no boot: the device is checked before the
build): no USB device of that id on this machine, and no permission on the
device's node, the latter as user nobody since root opens anything.

The whole path (sysfs descriptors -> drivers in the initramfs -> the
exporter on 127.0.0.1 -> QEMU's usb-redir as a TCP client -> the guest's
driver) needs a real device on the host; CI machines have no USB at all.
The deep test stands a fake device in for the hardware: a sysfs tree made
from a shipped profile, and fake_usbredirect.py, which takes usbredirect's
command line and relays QEMU's connection to fake-uvc serving that profile.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_boot import CLI, run  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.unit.devices.test_usbhost import fake_host  # noqa: E402

DEEP = os.environ.get("DMAHARNESS_DEEP_TESTS") == "1"
EXIT_INPUT = 4


class UsbHostErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dmah-usbhost-")
        os.chmod(self.tmp, 0o755)
        self.sysfs, self.devfs = fake_host(Path(self.tmp), [("1-1", 1, 2, "logitech-k120")])
        self.env = dict(os.environ, DMAHARNESS_USB_SYSFS=str(self.sysfs),
                        DMAHARNESS_USB_DEVFS=str(self.devfs))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_no_such_device_on_this_machine(self):
        # this machine's own sysfs: no USB at all on CI, or no such device
        r = run("run", "--usb-host", "ffff:fffe", "--duration", "3", timeout=120)
        self.assertEqual(r.returncode, EXIT_INPUT, r.stderr)
        self.assertRegex(r.stderr, r"--usb-host ffff:fffe: (this machine has no USB|no such USB "
                                   r"device on this host)")
        self.assertNotIn("[build", r.stderr)
        # a host with devices: the error lists them
        r = run("run", "--usb-host", "ffff:fffe", "--duration", "3", timeout=120, env=self.env)
        self.assertEqual(r.returncode, EXIT_INPUT, r.stderr)
        self.assertIn("no such USB device on this host (this host has: ", r.stderr)
        self.assertIn("1-2 046d:c31c 'logitech-k120'", r.stderr)
        self.assertIn("1-1 1d6b:0002 'xHCI Host Controller'", r.stderr)
        self.assertNotIn("[build", r.stderr)

    def test_no_permission_on_the_node(self):
        node = self.devfs / "001" / "002"
        os.chmod(node, 0o600)
        args = ["run", "--usb-host", "046d:c31c", "--duration", "3"]
        cmd = CLI + args
        if os.geteuid() == 0:
            # root opens any file: ask as nobody, with a home of its own and
            # Debian's python3 (root's own may live where nobody cannot read)
            home = Path(self.tmp) / "home"
            home.mkdir()
            os.chown(home, 65534, 65534)
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                   "env", f"HOME={home}", "/usr/bin/python3"] + CLI[1:] + args
        else:
            os.chmod(node, 0)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=self.env)
        self.assertEqual(r.returncode, EXIT_INPUT, r.stderr)
        self.assertIn(f"no permission to open {node} read-write", r.stderr)
        self.assertIn('SUBSYSTEM=="usb", ATTR{idVendor}=="046d", ATTR{idProduct}=="c31c"', r.stderr)
        self.assertNotIn("[build", r.stderr)

    def test_bad_id(self):
        r = run("run", "--usb-host", "keyboard", timeout=120)
        self.assertEqual(r.returncode, EXIT_INPUT, r.stderr)
        self.assertIn("give VID:PID in hex", r.stderr)


@unittest.skipUnless(DEEP, "DMAHARNESS_DEEP_TESTS=1 (make test-deep): builds 6.1 usb-profiles")
class UsbHostPassthrough(unittest.TestCase):
    def test_host_device_reaches_its_driver_in_the_guest(self):
        tmp = Path(tempfile.mkdtemp(prefix="dmah-usbhost-"))
        try:
            sysfs, devfs = fake_host(tmp, [("1-1", 1, 2, "logitech-k120")])
            env = dict(os.environ, DMAHARNESS_USB_SYSFS=str(sysfs), DMAHARNESS_USB_DEVFS=str(devfs),
                       DMAHARNESS_USBREDIRECT=str(Path(__file__).parent / "fake_usbredirect.py"),
                       FAKE_USBREDIRECT_PROFILE=str(REPO / "fake-device" / "profiles"
                                                    / "logitech-k120.profile"))
            r = run("run", "--kernel", "6.1", "--usb-host", "1-2", "--duration", "8", "--json",
                    timeout=5400, env=env)
            try:
                out = json.loads(r.stdout)
            except json.JSONDecodeError:
                self.fail(f"run printed no JSON (exit {r.returncode}):\n{r.stderr[-3000:]}")
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            [d] = out["devices"]
            self.assertEqual((d["name"], d["id"], d["passthrough"]), ("host-1-1", "046d:c31c", True))
            self.assertTrue(d["bound"], d)
            self.assertEqual(set(d["interfaces"].values()), {"usbhid"})
            # both interrupt IN endpoints, found in the sysfs descriptors,
            # completed URBs in the guest
            self.assertEqual(set(d["interrupt_completions"]), {"0x81", "0x82"})
            for ep, n in d["interrupt_completions"].items():
                self.assertGreater(n, 0, (ep, d))
            self.assertTrue(any(o.startswith("/dev/input/event") for o in d["opened"]), d)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
