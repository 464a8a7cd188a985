import shlex
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import initramfs
from harness.kernel import Artifacts


class Spec(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        mods = d / "art" / "modules"
        (mods / "kernel" / "drivers" / "media").mkdir(parents=True)
        (mods / "kernel" / "drivers" / "media" / "uvcvideo.ko").write_bytes(b"\x7fELF")
        (mods / "modules.dep").write_text("kernel/drivers/media/uvcvideo.ko:\n")
        self.art = Artifacts("6.1-x", d / "art", {"kernelrelease": "6.1.192"})
        p = mock.patch.object(initramfs, "_busybox_applets", return_value=["bin/sh", "sbin/modprobe"])
        p.start()
        self.addCleanup(p.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def test_spec_has_init_busybox_links_modules(self):
        lines = initramfs.spec(self.art, Path("/x/dmaharness-agent"))
        self.assertIn(f"file /init {initramfs.INIT} 0755 0 0", lines)
        self.assertIn("slink /bin/sh ../bin/busybox 0777 0 0", lines)
        self.assertIn("slink /sbin/modprobe ../bin/busybox 0777 0 0", lines)
        self.assertIn("nod /dev/console 0600 0 0 c 5 1", lines)
        self.assertIn("file /bin/dmaharness-agent /x/dmaharness-agent 0755 0 0", lines)
        mod = [l for l in lines if l.endswith("uvcvideo.ko 0644 0 0")]
        self.assertEqual(len(mod), 1)
        self.assertTrue(mod[0].startswith("file /lib/modules/6.1.192/kernel/drivers/media/uvcvideo.ko "))
        self.assertIn("dir /lib/modules/6.1.192/kernel/drivers 0755 0 0", lines)
        # directories come before the files inside them
        i_dir = lines.index("dir /lib/modules/6.1.192/kernel/drivers/media 0755 0 0")
        self.assertLess(i_dir, lines.index(mod[0]))

    def test_digest_follows_content(self):
        lines = initramfs.spec(self.art, None)
        a = initramfs._digest(lines)
        (self.art.modules / "modules.dep").write_text("changed\n")
        self.assertNotEqual(a, initramfs._digest(lines))

    def test_run_config_is_safe_shell(self):
        cfg = initramfs.RunConfig(modules=("uvcvideo", "evdev"), workload="shell-cmd",
                                  workload_cmd="echo 'a b' $HOME; exit 7", settle=1.5)
        text = cfg.render()
        out = subprocess.run(["sh", "-c", text + 'printf "%s|%s|%s|%s" "$MODULES" "$WORKLOAD" "$WORKLOAD_CMD" "$SETTLE"'],
                             capture_output=True, text=True).stdout
        self.assertEqual(out, "uvcvideo evdev|shell-cmd|echo 'a b' $HOME; exit 7|1.5")


if __name__ == "__main__":
    unittest.main()
